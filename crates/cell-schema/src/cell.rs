//! What a merge writes for one cell of one run: the run, each job as it measured itself, and
//! every row from its own job.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[cfg(doc)]
use crate::SCHEMA_VERSION;
use crate::{
    CellHttpServer, CellInfo, CellSoakServer, Contention, Imported, Installed, InstructionLane,
    JobCost, Machine, Protocol, RowName, RowResult, ServerName, Skipped, Subject, ToolName,
    ToolVersion, ToolchainName, Tooth, Verdict,
};

/// Marks a cell result (the merge of one run's jobs for one cell).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CellKind {
    /// `"cell"`
    Cell,
}

/// The run a cell result belongs to.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RunInfo {
    /// GitHub run id, or `local-<stamp>`.
    pub id: String,
    /// The run's own date, `YYYY-MM-DD` (UTC).
    pub date: String,
    /// `github` or `local`.
    pub source: String,
    /// The commit the run tested, when known.
    pub head_sha: Option<String>,
    /// A local run's checkout had uncommitted changes beside `head_sha` (absent in CI runs,
    /// which test a commit as it is).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dirty: Option<bool>,
    /// The attempt collected, when known.
    pub attempt: Option<u32>,
    /// Every attempt whose artifacts were merged (a "re-run failed jobs" attempt keeps the
    /// other jobs' results of earlier attempts), ascending; empty when not known.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attempts: Vec<u32>,
    /// Some jobs are missing and the run was written anyway.
    pub partial: bool,
}

/// One job as a cell result lists it: its own reference, machine and versions, never averaged.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct JobSummary {
    /// The attempt whose artifact was merged.
    pub attempt: u32,
    /// The machine the job ran on.
    pub machine: Machine,
    /// Pins as written.
    pub pins: BTreeMap<String, String>,
    /// Versions of the tools this job installed or used.
    pub versions: BTreeMap<ToolName, ToolVersion>,
    /// The release under test, if any.
    pub subject: Option<Subject>,
    /// The installed size of the job's toolchain and of the reference's, as the job measured
    /// them.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub installed: BTreeMap<ToolchainName, Installed>,
    /// The timing protocol's parameters as run (rounds, seed, why it stopped, tolerance).
    pub protocol: Protocol,
    /// The job's reference row (absolute medians live here, per job).
    pub reference: RowResult,
    /// The job's A/A control row.
    pub control: Option<RowResult>,
    /// The rows the job timed for its tooth alone (the tooth's slow row, when it is not a row
    /// of the job's own toolchain), with their samples: the tooth and the job's contention are
    /// recomputed from them. Absent in cells merged before they were kept.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tooth_rows: BTreeMap<RowName, RowResult>,
    /// The rows the previous release built (`<row>.prev`), with their samples: the in-job
    /// verdict of the release under test is computed from them.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub previous_rows: BTreeMap<RowName, RowResult>,
    /// The previous release, when the job timed it or said why not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub previous: Option<crate::PreviousRelease>,
    /// The job's tooth.
    pub tooth: Option<Tooth>,
    /// The job's contention.
    pub contention: Option<Contention>,
    /// The job's outcome.
    pub verdict: Verdict,
    /// The job's cost.
    pub cost: JobCost,
    /// The job's instruction lane, when `INSTRUCTIONS=on`: how it ran, or why it did not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<InstructionLane>,
}

/// A row of a cell result: the row as its own job measured it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CellRow {
    /// The job (toolchain) that measured it.
    pub job: ToolchainName,
    /// The row as that job wrote it.
    #[serde(flatten)]
    pub row: RowResult,
}

/// A job of the plan that left no result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MissingJob {
    /// The toolchain of the job.
    pub toolchain: ToolchainName,
    /// What happened to it (`not installed`, a job conclusion).
    pub conclusion: String,
}

/// What a cell of a run cost: each job's own `cell run` seconds (GitHub's runner seconds,
/// installs included, are in the run's `run.json`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CellCost {
    /// Seconds per job, by job name.
    pub jobs_s: BTreeMap<ToolchainName, f64>,
    /// Sum over jobs.
    pub total_s: f64,
}

/// What a merge writes: one cell of one run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CellResult {
    /// Always [`SCHEMA_VERSION`] when written by this build.
    #[serde(serialize_with = "crate::write::current_version")]
    pub schema_version: u32,
    /// `"cell"`.
    pub kind: CellKind,
    /// The run: id, date, source, commit, attempt, partial.
    pub run: RunInfo,
    /// Where it ran: the cell id, runner label, OS and architecture.
    pub cell: CellInfo,
    /// Every job merged, by toolchain.
    pub jobs: BTreeMap<ToolchainName, JobSummary>,
    /// Every row of every job except references and controls, each from its own job.
    pub rows: BTreeMap<RowName, CellRow>,
    /// Rows skipped in any job.
    pub skipped: Vec<Skipped>,
    /// Jobs with no result.
    pub missing: Vec<MissingJob>,
    /// Every job's failure reasons, prefixed by the job.
    pub failures: Vec<String>,
    /// The worst job status, with every reason.
    pub verdict: Verdict,
    /// Seconds each job of the cell spent in `cell run` (absent in an imported cell: the old
    /// tool's job minutes are another measure, kept in `imported.jobs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<CellCost>,
    /// The http suite's servers, each from its own job.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub http: BTreeMap<ServerName, CellHttpServer>,
    /// The soak suite's servers, each from its own job.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub soak: BTreeMap<ServerName, CellSoakServer>,
    /// A cell imported from another tool's history (`cell import`): its rows, points and
    /// provenance. Its `jobs`, `rows`, `skipped` and `missing` are empty, so nothing reads an
    /// imported point ratio as a measured interval; `verdict` is the old tool's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub imported: Option<Imported>,
}

impl CellResult {
    /// Whether the cell was imported from another tool's history rather than measured.
    pub fn is_imported(&self) -> bool {
        self.imported.is_some()
    }
}
