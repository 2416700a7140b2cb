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
    /// Why the rounds stopped early by futility: the projection that said so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub futility: Option<Futility>,
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
    /// `CI_TARGET`.
    pub target: f64,
    /// The projection had to exceed `target` times this (`FUTILITY_MARGIN`) to stop.
    pub margin: f64,
}

/// Why a job's rounds stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Stopped {
    /// The rounds were fixed (`--reps`, or `REPS_MAX` equal to `REPS`).
    Fixed,
    /// Every row's interval reached `CI_TARGET`.
    Converged,
    /// The adaptive budget reached `REPS_MAX`.
    MaxRounds,
    /// The job reached `TIME_CAP_S`.
    TimeCap,
    /// The reference hit `RUN_TIMEOUT_S`, so no ratio could be measured any more.
    ReferenceTimedOut,
    /// The rounds left to `REPS_MAX` could not bring the widest interval under `CI_TARGET`
    /// (`protocol.futility` holds the projection).
    Futile,
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
        }
    }
}

impl std::fmt::Display for Stopped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
