//! The parameters the timing protocol ran with, and why its rounds stopped.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::{Clock, Phase, RowName};

/// The parameters the timing protocol ran with.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Protocol {
    /// The reference row.
    pub reference: RowName,
    /// The A/A control row's name.
    pub control: RowName,
    /// Phases timed, in order.
    pub phases: Vec<Phase>,
    /// Warm-up rounds, recorded and excluded.
    pub warmup_rounds: u32,
    /// Measured rounds actually run.
    pub measured_rounds: u32,
    /// Measured rounds the adaptive budget starts with.
    pub min_rounds: u32,
    /// Measured rounds the adaptive budget may reach.
    pub max_rounds: u32,
    /// Rounds added per adaptive step.
    pub step_rounds: u32,
    /// Whether rounds were added while CIs were wide (false with `--reps`).
    pub adaptive: bool,
    /// Why the rounds stopped.
    pub stopped: Stopped,
    /// Seed of the per-round order.
    pub seed: u64,
    /// At most this many rows run between two reference runs in a round.
    pub rows_per_reference: u32,
    /// Gate tolerance (fraction).
    pub tolerance: f64,
    /// Target CI half-width (fraction) of the adaptive budget.
    pub ci_target: f64,
    /// Nominal confidence level of the intervals.
    pub ci_level: f64,
    /// Median wall/cpu above which a job is contended.
    pub contention_max: f64,
    /// Per-job timing cap in seconds.
    pub time_cap_s: f64,
    /// The clock verdicts use unless a row sets its own.
    pub default_clock: Clock,
    /// Why that clock, when `CLOCK` was `auto`: the calibration's quieter clock, or CPU time
    /// without a calibration or with one that is ignored (and why).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_chosen: Option<String>,
    /// How a row and its reference were timed: one after the other, or at the same time on
    /// two CPUs. Absent: sequential (so files written before the duet existed read as what
    /// they were).
    #[serde(default, skip_serializing_if = "ProtocolMode::is_sequential")]
    pub mode: ProtocolMode,
    /// What `PROTOCOL` asked for, when it was `auto` or could not be honoured (a duet on a
    /// machine with one CPU runs sequentially).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode_chosen: Option<String>,
    /// Why the rounds stopped early by futility: the widest projection of a unit that
    /// stopped so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub futility: Option<Futility>,
    /// The run (`<date>-<run-id>`) each row was judged against while it was timed: the
    /// baseline the gate will use, read from the history in the job's checkout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<String>,
    /// Why the job had no baseline to judge its rows against (each then aimed at
    /// `CI_TARGET`), when it had none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub no_baseline: Option<String>,
    /// The timings came from a file of the test suite's scripted executor, not from timed
    /// processes: never a measurement, and refused as history by `cell collect` and
    /// `cell gate`. Absent (false) in every real result.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub scripted: bool,
}

/// How a row and its paired reference run are timed.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum ProtocolMode {
    /// One after the other on one CPU, the reference interleaved between rows.
    #[default]
    Sequential,
    /// At the same time, one on each of two CPUs, swapping CPUs every pair.
    Duet,
}

impl ProtocolMode {
    /// The protocol every file written before the duet existed was timed by.
    pub fn is_sequential(&self) -> bool {
        *self == Self::Sequential
    }

    /// `sequential` or `duet`, as versions.env and every message name it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Sequential => "sequential",
            Self::Duet => "duet",
        }
    }
}

/// The projection behind an early stop by futility (docs/protocol.md, "Early stop").
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Futility {
    /// Measured rounds when it stopped.
    pub rounds: u32,
    /// `REPS_MAX`.
    pub max_rounds: u32,
    /// The row of the widest interval.
    pub row: RowName,
    /// Its phase.
    pub phase: Phase,
    /// Its clock.
    pub clock: Clock,
    /// Its relative half-width at the stop.
    pub half_width: f64,
    /// The half-width projected at `REPS_MAX` from the spread observed so far.
    pub projected: f64,
    /// What it had to reach: `CI_TARGET`, or, against `against`, the distance from its
    /// change to the nearer edge of the tolerance band.
    pub target: f64,
    /// The projection had to exceed `target` times this (`FUTILITY_MARGIN`) to stop.
    pub margin: f64,
    /// The baseline run its change was judged against, when it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub against: Option<String>,
}

/// Why a job's rounds stopped, or one row's on one phase (`stopped` of a phase result): each
/// row and phase goes on on its own while more rounds can change its verdict.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Stopped {
    /// The rounds were fixed (`--reps`, or `REPS_MAX` equal to `REPS`).
    Fixed,
    /// With no baseline to judge against: its interval reached `CI_TARGET` (a job: its last
    /// rows' did).
    Converged,
    /// The adaptive budget reached `REPS_MAX`.
    MaxRounds,
    /// The job reached `TIME_CAP_S`.
    TimeCap,
    /// The reference hit `RUN_TIMEOUT_S`, so no ratio could be measured any more.
    ReferenceTimedOut,
    /// The rounds left to `REPS_MAX` could not settle it: bring its interval under
    /// `CI_TARGET`, or its change against the baseline within or beyond the band
    /// (`protocol.futility` holds the widest projection).
    Futile,
    /// Against the baseline the gate will use, its change already passes: more rounds
    /// cannot change the verdict.
    Settled,
    /// The A/A control or a tooth's row on a phase: timed while a judged row was, and
    /// stopped with the last.
    WithRows,
    /// It hit `RUN_TIMEOUT_S` itself and was timed no more.
    TimedOut,
}

impl Stopped {
    /// The name results.json and RESULTS.md write (`max_rounds`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Fixed => "fixed",
            Self::Converged => "converged",
            Self::MaxRounds => "max_rounds",
            Self::TimeCap => "time_cap",
            Self::ReferenceTimedOut => "reference_timed_out",
            Self::Futile => "futile",
            Self::Settled => "settled",
            Self::WithRows => "with_rows",
            Self::TimedOut => "timed_out",
        }
    }
}

impl std::fmt::Display for Stopped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
