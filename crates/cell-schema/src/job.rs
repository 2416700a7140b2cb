//! What `cell run` writes for one (cell, toolchain) job: its rows, its controls (the tooth,
//! contention), its verdict and its cost.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[cfg(doc)]
use crate::SCHEMA_VERSION;
use crate::{
    CellInfo, Clock, Installed, InstructionLane, Machine, Phase, Protocol, RatioCi, RowName,
    RowResult, RunId, Skipped, Subject, ToolName, ToolVersion, ToolchainName,
};

/// Marks a job result.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum JobKind {
    /// `"job"`
    Job,
}

/// The positive control: the harness must see that the slow row is slower.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Tooth {
    /// The slow row.
    pub slow: RowName,
    /// The fast row.
    pub fast: RowName,
    /// The phase it is read on.
    pub phase: Phase,
    /// The clock it is read on.
    pub clock: Clock,
    /// The floor for this architecture.
    pub floor: f64,
    /// slow/fast: median of per-round ratios with its CI (none when a row is missing).
    pub ratio: Option<RatioCi>,
    /// The ratio's median is at or above the floor.
    pub ok: bool,
}

/// How much the job's processes waited for a CPU.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Contention {
    /// Median wall/cpu over every measured run of the job.
    pub median: f64,
    /// Largest wall/cpu of a measured run.
    pub max: f64,
    /// The threshold (`CONTENTION_MAX`).
    pub threshold: f64,
    /// The median exceeded the threshold.
    pub contended: bool,
}

/// The outcome of a job or a cell.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Every answer right, the tooth seen, the control unbiased on some phase.
    Ok,
    /// The A/A control was biased (its interval missed 1.0) on every phase: every row is
    /// inconclusive.
    Noisy,
    /// A wrong answer or a tooth below its floor.
    Failed,
}

/// A status with the reasons behind it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Verdict {
    /// `ok`, `noisy` or `failed`.
    pub status: Status,
    /// One line per reason.
    pub reasons: Vec<String>,
    /// A workload job's phases whose A/A control held: their rows can be judged.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub judged: Vec<Phase>,
    /// A workload job's phases whose A/A control was biased (or not measured): their rows are
    /// inconclusive, the other phases' are not.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inconclusive: Vec<Phase>,
    /// A workload job's resolution per phase: the widest relative half-width of its rows'
    /// ratio intervals there (0.012: the job's ratios on that phase are known to ±1.2%).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub resolution: BTreeMap<Phase, f64>,
}

impl Status {
    /// `ok`, `noisy` or `failed`, as written.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ok => "ok",
            Self::Noisy => "noisy",
            Self::Failed => "failed",
        }
    }
}

impl Verdict {
    /// A verdict with no phase lists (the suites', a merged cell's).
    pub fn new(status: Status, reasons: Vec<String>) -> Self {
        Self {
            status,
            reasons,
            judged: Vec::new(),
            inconclusive: Vec::new(),
            resolution: BTreeMap::new(),
        }
    }
}

/// What a job cost, in seconds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct JobCost {
    /// Finding the tools and asking their versions.
    pub probe_s: f64,
    /// Building every row.
    pub build_s: f64,
    /// The timed rounds, warm-up included.
    pub timing_s: f64,
    /// The exact lane (cachegrind), when it ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exact_s: Option<f64>,
    /// All of `cell run`.
    pub total_s: f64,
}

/// What `cell run` writes: one (cell, toolchain) job.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct JobResult {
    /// Always [`SCHEMA_VERSION`] when written by this build.
    #[serde(serialize_with = "crate::write::current_version")]
    pub schema_version: u32,
    /// `"job"`.
    pub kind: JobKind,
    /// Where it ran: the cell id, runner label, OS and architecture.
    pub cell: CellInfo,
    /// The toolchain this job installed.
    pub toolchain: ToolchainName,
    /// The machine it ran on (CPU, memory, kernel, OS, runner image; never a hostname).
    pub machine: Machine,
    /// The `versions.env` pins of this toolchain, as written.
    pub pins: BTreeMap<String, String>,
    /// Every tool the job invoked, with its version as printed.
    pub versions: BTreeMap<ToolName, ToolVersion>,
    /// The release under test, if any.
    pub subject: Option<Subject>,
    /// The installed size of this job's toolchain and of the reference's, by toolchain.
    /// Absent in files written before it was measured.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub installed: BTreeMap<ToolchainName, Installed>,
    /// The timing protocol's parameters as run (rounds, seed, why it stopped, tolerance).
    pub protocol: Protocol,
    /// Every timed row, reference and control included.
    pub rows: BTreeMap<RowName, RowResult>,
    /// Rows not timed.
    pub skipped: Vec<Skipped>,
    /// The positive control.
    pub tooth: Option<Tooth>,
    /// Contention over the job.
    pub contention: Option<Contention>,
    /// `ok`, `noisy` or `failed`, with one line per reason.
    pub verdict: Verdict,
    /// Seconds spent probing, building and timing.
    pub cost: JobCost,
    /// When the job started, UTC, `YYYY-MM-DDTHH:MM:SSZ`.
    pub started_at: String,
    /// The GitHub Actions run this job belonged to, when it ran in one.
    pub github: Option<GithubJob>,
    /// The instruction lane, when `INSTRUCTIONS=on`: how it ran, or why it did not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<InstructionLane>,
    /// The release the baseline run recorded, when the release under test is another one: how
    /// it was installed and verified, or why it was not (its rows are `<row>.prev`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub previous: Option<PreviousRelease>,
}

/// The previous release of the subject, timed beside the new one in the same job.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PreviousRelease {
    /// The baseline run that recorded it, `<date>-<run-id>`.
    pub baseline_run: String,
    /// The commit that run tested, whose `versions.env` and `cell/cell.toml` pin it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// The release as the baseline run recorded it.
    pub recorded: Subject,
    /// The release as this job installed and verified it; absent when it was skipped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub installed: Option<Subject>,
    /// Why it was not timed (nothing of it was), when it was not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
    /// Rows of the release under test it could not build, each with why.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub not_built: BTreeMap<RowName, String>,
}

/// Where a job ran on GitHub Actions (from the runner's environment).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GithubJob {
    /// `GITHUB_REPOSITORY`.
    pub repository: String,
    /// `GITHUB_RUN_ID`.
    pub run_id: RunId,
    /// `GITHUB_RUN_ATTEMPT`.
    pub run_attempt: u32,
    /// `GITHUB_SHA`.
    pub sha: String,
}
