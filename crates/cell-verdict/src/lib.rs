//! Every judgement `cell` makes, in one crate of pure functions over the wire types: what a
//! job says about itself (`ok` / `noisy` / `failed`), the A/A control and tooth rules, the
//! three-way gate of a run against its history, and the gate of the http and soak suites.
//!
//! The thresholds come from [`GateConfig::from_plan`] alone, so `cell run`, `cell local` and
//! `cell gate` judge with the same inputs and cannot drift apart. The rules themselves are
//! in docs/protocol.md (the workload) and docs/http-and-soak.md (the suites). Where each row
//! and phase's rounds stop (settled against the baseline, converged, futile) is here too: a
//! judgement of the intervals, which the timing loop only asks for.

mod change;
mod config;
mod control;
pub mod figures;
mod futility;
mod gate;
mod job;
pub mod pr;
pub mod recompute;
pub mod rules;
mod settle;
mod suite;
pub mod suite_figures;
mod walk;

pub use change::{Change, change, change_against_point, unit_level};
pub use config::{CalibrationFile, GateConfig, ServerTerms, calibration_of};
pub use futility::{Against, FutilityRule, Projection, UnitCall};
pub use gate::{
    GateError, footprint_notices, gate, gate_history, instruction_notices, same_job_status,
    same_job_verdicts,
};
pub use job::{
    Contamination, WorkloadJob, drift, http_verdict, soak_verdict, tooth_ok, workload_verdict,
};
pub use rules::{control_biased, three_way};
pub use settle::{JobBaseline, planned_units};
pub use suite::{SuiteFindings, gate_suites};
pub use walk::needed_history;
