//! `gate.json`: what `cell gate` decided about a run, cell by cell and row by row.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[cfg(doc)]
use crate::SCHEMA_VERSION;
use crate::{CellId, Clock, Phase, RowName};

/// Marks a gate report.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum GateKind {
    /// `"gate"`
    Gate,
}

/// The three-way verdict of one row on one phase.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum GateStatus {
    /// The change's interval (this run against the baseline) lies inside the tolerance band.
    Pass,
    /// Neither inside nor wholly outside (the runs could not resolve the change to within the
    /// band), or not judged (a biased A/A control, another protocol): no call either way.
    Inconclusive,
    /// The change's interval lies wholly outside the band.
    Fail,
}

impl GateStatus {
    /// `PASS`, `INCONCLUSIVE` or `FAIL`, as the gate's lines and tables write it.
    pub fn word(self) -> &'static str {
        match self {
            Self::Pass => "PASS",
            Self::Inconclusive => "INCONCLUSIVE",
            Self::Fail => "FAIL",
        }
    }
}

/// A ratio as the gate compares it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GateRatio {
    /// Median of per-round ratios.
    pub median: f64,
    /// Lower bound.
    pub lo: f64,
    /// Upper bound.
    pub hi: f64,
}

/// One row on one phase against its baseline.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GateVerdict {
    /// The row judged.
    pub row: RowName,
    /// The phase judged.
    pub phase: Phase,
    /// The clock compared.
    pub clock: Clock,
    /// PASS, FAIL or INCONCLUSIVE.
    pub status: GateStatus,
    /// The baseline's ratio.
    pub old: GateRatio,
    /// This run's ratio.
    pub new: GateRatio,
    /// The tolerance band in ratio terms, `[old/(1+tolerance), old·(1+tolerance)]`: where this
    /// run's ratio sits when it changed by no more than the tolerance (the verdict reads the
    /// change's interval against the same band around 1).
    pub band: [f64; 2],
    /// One line a person reads.
    pub message: String,
    /// The baseline is an imported point ratio (a ratio of medians on the wall clock, with no
    /// interval): `old.lo` and `old.hi` are its median, and only this run's noise is counted.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub against_imported_point: bool,
    /// The change between the two runs (`new / baseline`) with its interval, from both runs'
    /// per-round ratios: what the verdict reads. Absent where no change could be measured
    /// (a side without the verdict clock's ratios) and in an http suite's verdicts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub change: Option<GateChange>,
}

/// The change of one row and phase between two runs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GateChange {
    /// The estimate: 1.0 is no change, 1.05 five percent slower.
    pub median: f64,
    /// Lower bound.
    pub lo: f64,
    /// Upper bound.
    pub hi: f64,
    /// The coverage of the interval (at least the per-unit level of the gate's family when
    /// the rounds can reach it).
    pub level: f64,
    /// What the run resolved: half the interval's width, as a fraction (0.042: ±4.2%); a
    /// change smaller than this could not have been told from none.
    pub resolution: f64,
}

/// How the gate bounds its false alarms over a run: every unit it judges shares one error
/// budget, `1 − run_level`, split evenly (Bonferroni).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GateFamily {
    /// The (cell, row, phase) units the run judged with an interval.
    pub units: u32,
    /// `CI_LEVEL`: the chance that an A/A run fails nowhere is at least this.
    pub run_level: f64,
    /// The level each unit's interval is computed at: `1 − (1 − run_level) / units`.
    pub unit_level: f64,
}

/// The gate's findings for one cell.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GateCell {
    /// The cell judged.
    pub cell: CellId,
    /// The run compared against (`<date>-<run-id>`), none for a first run.
    pub baseline: Option<String>,
    /// Failures (exit 1): wrong answers, checksum failures, the tooth, missing rows.
    pub failures: Vec<String>,
    /// Notices, never failures: health, machine or image changes, contention, first run.
    pub notices: Vec<String>,
    /// Per row and phase.
    pub verdicts: Vec<GateVerdict>,
    /// The code verdicts: per row and phase, its estimated cycles as a ratio to its job's
    /// reference against the baseline's (the exact lane), beside the time verdicts, never
    /// instead of them. Absent when neither run counted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub code: Vec<CodeVerdict>,
    /// The release under test against the previous release in the same job: per row and
    /// phase, the per-round ratio of the new build's time to the old build's, beside the
    /// history verdict. Absent when no job timed a previous release.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub same_job: Vec<SameJobVerdict>,
}

/// One row on one phase: the release under test's build against the previous release's, timed
/// in the same rounds of the same job (docs/protocol.md, "The previous release in the same
/// job").
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SameJobVerdict {
    /// The row judged (the new release's build; the old one's is `<row>.prev`).
    pub row: RowName,
    /// The phase judged.
    pub phase: Phase,
    /// The clock read.
    pub clock: crate::Clock,
    /// The previous release's version (or tag).
    pub old_version: String,
    /// The release under test's version (or tag).
    pub new_version: String,
    /// FAIL when the new build is slower beyond `TOLERANCE` (the whole interval), PASS when
    /// the interval lies within it or wholly faster (a notice says faster), else INCONCLUSIVE.
    pub status: GateStatus,
    /// new / old, the median of the per-round ratios, with its interval (absent with no
    /// paired rounds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ratio: Option<crate::RatioCi>,
    /// What the run could resolve: half the interval's width (0.012: ±1.2%).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolution: Option<f64>,
    /// One line a person reads.
    pub message: String,
}

/// One row on one phase in the exact lane against its baseline: did the generated code
/// change? Read on the ratio of the row's estimated cycles to its job's reference's, which
/// cancels what both share (valgrind's version, the environment's size, the C library).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CodeVerdict {
    /// The row judged.
    pub row: RowName,
    /// The phase judged.
    pub phase: Phase,
    /// FAIL when the ratio grew beyond the tolerance, PASS otherwise (a shrink beyond it is a
    /// PASS with a notice); INCONCLUSIVE when the lane's repeated runs spread more than 2%.
    pub status: GateStatus,
    /// The baseline's estimated cycles over its reference's (its own estimated cycles when
    /// `own_counts`).
    pub old: f64,
    /// This run's.
    pub new: f64,
    /// The job's reference binary differs from the baseline's (its compiler changed), so the
    /// row's own estimated cycles are compared rather than its ratio to the reference.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub own_counts: bool,
    /// `new / old`: 1.031 is 3.1% more estimated cycles, relative to the reference.
    pub change: f64,
    /// The tolerance applied: `CYCLES_TOLERANCE` plus the spread the lane saw between
    /// repeated runs of the four counts (0 for deterministic programs).
    pub tolerance: f64,
    /// Of `tolerance`, what the repeated runs' spread added.
    pub spread: f64,
    /// The instruction counts' ratio moved the same way: `new / old` of the row's instructions
    /// over its reference's.
    pub instructions_change: f64,
    /// One line a person reads.
    pub message: String,
}

/// Counts over a gate report.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GateSummary {
    /// PASS verdicts.
    pub pass: u32,
    /// FAIL verdicts.
    pub fail: u32,
    /// INCONCLUSIVE verdicts.
    pub inconclusive: u32,
    /// Failures (wrong answers, checksums, the tooth, missing rows): each trips the gate.
    pub failures: u32,
    /// Notices, which never trip the gate.
    pub notices: u32,
    /// Code verdicts that passed (the exact lane).
    #[serde(default)]
    pub code_pass: u32,
    /// Code verdicts that failed: each trips the gate.
    #[serde(default)]
    pub code_fail: u32,
    /// Code verdicts not given because the lane's repeated runs spread too far.
    #[serde(default)]
    pub code_inconclusive: u32,
    /// Same-job verdicts (new release against the previous) that passed.
    #[serde(default)]
    pub same_job_pass: u32,
    /// Same-job verdicts that failed: each trips the gate.
    #[serde(default)]
    pub same_job_fail: u32,
    /// Same-job verdicts left inconclusive.
    #[serde(default)]
    pub same_job_inconclusive: u32,
}

/// `gate.json`: what `cell gate` decided about a run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GateReport {
    /// Always [`SCHEMA_VERSION`] when written by this build.
    #[serde(serialize_with = "crate::write::current_version")]
    pub schema_version: u32,
    /// `"gate"`.
    pub kind: GateKind,
    /// The run judged (`<date>-<run-id>`).
    pub run: String,
    /// The tolerance applied (from the checked-in config).
    pub tolerance: f64,
    /// What the gate found in each cell of the run.
    pub cells: Vec<GateCell>,
    /// Verdicts, failures and notices counted over every cell.
    pub summary: GateSummary,
    /// The exit code: 1 on any FAIL (time or code) or failure, else 0.
    pub exit: u8,
    /// How the false alarms of the run's verdicts are bounded together, when it judged any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub family: Option<GateFamily>,
    /// The commit whose versions.env and cell/ gave the thresholds, when not the work tree's
    /// (`cell gate --config-rev`; the collect job passes the run's own commit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_rev: Option<String>,
}
