//! Wire formats of `cell`: what a job writes, what a merge writes, and their JSON Schema.
//!
//! Every file carries `schema_version`; [`read_results`] refuses a newer major version rather
//! than guess at fields it does not know. Maps are `BTreeMap` and struct fields are declared
//! in the order they are written, so the same value always serialises to the same bytes.
#![deny(missing_docs)]

mod calibration;
mod cell;
pub mod escape;
mod gate;
pub mod ids;
mod imported;
mod job;
mod machine;
mod metric;
mod pr;
mod protocol;
pub mod read;
mod row;
mod run_record;
mod samples;
mod stats;
pub mod store;
mod suite;
pub mod time;
mod tools;
pub mod upstream;
pub mod validate;
mod write;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use calibration::{Calibration, CalibrationKind, Noise};
pub use cell::{CellCost, CellKind, CellResult, CellRow, JobSummary, MissingJob, RunInfo};
pub use gate::{
    CodeVerdict, GateCell, GateChange, GateFamily, GateKind, GateRatio, GateReport, GateStatus,
    GateSummary, GateVerdict, SameJobVerdict,
};
pub use ids::{
    BadRunId, BadSha256, CellId, CellLabel, Phase, RowName, RunId, ServerName, Sha256, ShapeName,
    ToolName, ToolchainName, WorkloadName,
};
pub use imported::{
    ImportMethod, ImportSource, Imported, ImportedBuild, ImportedDrift, ImportedFile, ImportedJob,
    ImportedMachine, ImportedPhase, ImportedRow, ImportedSkipped, ImportedSoakKind,
    ImportedSoakRun, ImportedSoakServer, ImportedTool, ImportedTooth, PrintedVersion,
};
pub use job::{
    Contention, GithubJob, JobCost, JobKind, JobResult, PreviousRelease, Status, Tooth, Verdict,
};
pub use machine::{CellInfo, Facts, FactsKind, Machine, RunnerImage, TimingCpus};
pub use metric::{Clock, Metric, MetricInfo, UnknownMetric};
pub use pr::{
    BadBranchName, BadCommitSha, BadPrNumber, BranchName, CommitSha, MAX_PR_JSON_BYTES, PR_JSON,
    PrError, PrKind, PrNumber, PrRecord, read_pr,
};
pub use protocol::{Futility, Protocol, ProtocolMode, Stopped};
pub use row::{
    Build, CacheRecord, ExactRepeat, InstructionLane, PREVIOUS_SUFFIX, PhaseResult, Printed, Role,
    RowResult, Run, SkipReason, Skipped, UnitStop,
};
pub use run_record::{RunJob, RunKind, RunRecord};
pub use samples::{Samples, as_written};
pub use stats::{ClockStats, RatioCi, Ratios, Summary, percent, resolution};
pub use suite::{
    CellHttpServer, CellSoakServer, CellSuiteServer, Combo, ConcurrencyModel, Drift, HttpJobResult,
    HttpKind, HttpMode, HttpRequestSpec, HttpRun, HttpServerResult, HttpSettings, HttpShape,
    HttpSuite, HttpToolResult, HttpWorkloadResult, LEGACY_WORKLOAD, Latency, LoadReport, RssFit,
    ServerBuild, SoakConfig, SoakJobResult, SoakKind, SoakSample, SoakServerResult, SoakSettings,
    SoakSuite, Suite, SuiteCost, SuiteJob, TimeWait, lead_workload, legacy_shape_name,
};
pub use tools::{Installed, SizeMethod, Subject, ToolVersion, Verified};
pub use write::{round_ratio, round_time, to_json, to_record_json, write_atomic};

/// The schema version this build writes and the newest major it reads. Version 2 writes a
/// row's runs as columns ([`Samples`]); version 1 (one object per run) is still read.
pub const SCHEMA_VERSION: u32 = 2;

/// Any `results.json`: the one a job writes or the one a merge writes.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum ResultsFile {
    /// Written by `cell run`.
    Job(Box<JobResult>),
    /// Written by the merge (`cell local`, `cell collect`).
    Cell(Box<CellResult>),
    /// Written by `cell run --suite http`.
    Http(Box<HttpJobResult>),
    /// Written by `cell run --suite soak`.
    Soak(Box<SoakJobResult>),
}

/// A job's `results.json`, of any suite: what a job dir holds and a merge takes.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum AnyJob {
    /// The workload suite (one toolchain).
    Workload(Box<JobResult>),
    /// The http suite (one server).
    Http(Box<HttpJobResult>),
    /// The soak suite (one server).
    Soak(Box<SoakJobResult>),
}

impl AnyJob {
    /// The cell it ran in.
    pub fn cell(&self) -> &CellInfo {
        match self {
            Self::Workload(j) => &j.cell,
            Self::Http(j) => &j.cell,
            Self::Soak(j) => &j.cell,
        }
    }

    /// Its name within the cell: the toolchain of a workload job, `http-<server>` or
    /// `soak-<server>` of a suite job (the last word of the workflow job's name).
    pub fn name(&self) -> ToolchainName {
        match self {
            Self::Workload(j) => j.toolchain.clone(),
            Self::Http(j) => ToolchainName::from(j.job.as_str()),
            Self::Soak(j) => ToolchainName::from(j.job.as_str()),
        }
    }

    /// When it started.
    pub fn started_at(&self) -> &str {
        match self {
            Self::Workload(j) => &j.started_at,
            Self::Http(j) => &j.started_at,
            Self::Soak(j) => &j.started_at,
        }
    }

    /// The GitHub run it belonged to.
    pub fn github(&self) -> Option<&GithubJob> {
        match self {
            Self::Workload(j) => j.github.as_ref(),
            Self::Http(j) => j.github.as_ref(),
            Self::Soak(j) => j.github.as_ref(),
        }
    }

    /// Its outcome.
    pub fn verdict(&self) -> &Verdict {
        match self {
            Self::Workload(j) => &j.verdict,
            Self::Http(j) => &j.verdict,
            Self::Soak(j) => &j.verdict,
        }
    }

    /// The job result in `file`, when `file` is one (a merged cell's is not).
    pub fn from_file(file: ResultsFile) -> Option<Self> {
        match file {
            ResultsFile::Job(j) => Some(Self::Workload(j)),
            ResultsFile::Http(j) => Some(Self::Http(j)),
            ResultsFile::Soak(j) => Some(Self::Soak(j)),
            ResultsFile::Cell(_) => None,
        }
    }
}

impl From<JobResult> for AnyJob {
    fn from(j: JobResult) -> Self {
        Self::Workload(Box::new(j))
    }
}

impl From<HttpJobResult> for AnyJob {
    fn from(j: HttpJobResult) -> Self {
        Self::Http(Box::new(j))
    }
}

impl From<SoakJobResult> for AnyJob {
    fn from(j: SoakJobResult) -> Self {
        Self::Soak(Box::new(j))
    }
}

/// A results file that cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum SchemaError {
    /// Not JSON, or not shaped like any results file.
    #[error("not a cell results file: {0}")]
    Parse(#[from] serde_json::Error),
    /// Written by a newer `cell`.
    #[error(
        "written by a newer cell (schema_version {found}; this cell reads up to {SCHEMA_VERSION}): upgrade cell"
    )]
    TooNew {
        /// The version the file declares.
        found: u64,
    },
    /// No `schema_version` at all.
    #[error("no schema_version: not a cell results file")]
    Missing,
    /// An http or soak job holding values no measurement can produce.
    #[error("holds values no measurement can produce: {}", .0.iter().map(validate::Problem::message).collect::<Vec<_>>().join("; "))]
    Impossible(Vec<validate::Problem>),
    /// A `kind` this reader does not know (or none).
    #[error(
        "kind {0} is not one of \"job\", \"cell\", \"http\", \"soak\": not a cell results file"
    )]
    Kind(String),
}

/// The two fields every file leads with, read after the check that no key repeats.
fn probe(text: &str) -> Result<Option<String>, SchemaError> {
    #[derive(Deserialize)]
    struct Probe {
        schema_version: Option<u64>,
        kind: Option<String>,
    }
    let probe: Probe = read::from_str_unique(text)?;
    match probe.schema_version {
        None => Err(SchemaError::Missing),
        Some(v) if v > u64::from(SCHEMA_VERSION) => Err(SchemaError::TooNew { found: v }),
        Some(_) => Ok(probe.kind),
    }
}

/// Reads a `results.json` of any kind, refusing a newer major version. The kind is read
/// first so an error names the field of that kind that is wrong.
pub fn read_results(text: &str) -> Result<ResultsFile, SchemaError> {
    let kind = probe(text)?;
    Ok(match kind.as_deref() {
        Some("job") => ResultsFile::Job(serde_json::from_str(text)?),
        Some("cell") => ResultsFile::Cell(serde_json::from_str(text)?),
        Some("http") => suite_checked(ResultsFile::Http(serde_json::from_str(text)?))?,
        Some("soak") => suite_checked(ResultsFile::Soak(serde_json::from_str(text)?))?,
        Some(other) => return Err(SchemaError::Kind(format!("{:?}", escape::one_line(other)))),
        None => return Err(SchemaError::Kind("missing".into())),
    })
}

/// A suite job is refused where it is read when it holds impossible values: its figures are
/// recomputed from its runs and samples, which must be what a measurement can be.
fn suite_checked(file: ResultsFile) -> Result<ResultsFile, SchemaError> {
    let problems = validate::suite_job(&file);
    if problems.is_empty() {
        Ok(file)
    } else {
        Err(SchemaError::Impossible(problems))
    }
}

/// Reads a job's `results.json`, refusing a newer major version.
pub fn read_job(text: &str) -> Result<JobResult, SchemaError> {
    probe(text)?;
    Ok(serde_json::from_str(text)?)
}

/// Reads a cell's `results.json`, refusing a newer major version.
pub fn read_cell(text: &str) -> Result<CellResult, SchemaError> {
    probe(text)?;
    Ok(serde_json::from_str(text)?)
}

/// Reads an `imported-soak.json`, refusing a newer major version.
pub fn read_imported_soak(text: &str) -> Result<ImportedSoakRun, SchemaError> {
    probe(text)?;
    Ok(serde_json::from_str(text)?)
}

/// Reads a `run.json`, refusing a newer major version.
pub fn read_record(text: &str) -> Result<RunRecord, SchemaError> {
    probe(text)?;
    Ok(serde_json::from_str(text)?)
}

/// The JSON Schema every `results.json` validates against.
pub fn results_schema() -> serde_json::Value {
    let schema = schemars::schema_for!(ResultsFile);
    serde_json::to_value(schema).expect("a schema is always JSON")
}

/// The JSON Schema of `results.json` of an older `version` this build still reads, as it was
/// emitted when that version was the one written (frozen: its types are gone); `None` for a
/// version it does not read or the current one ([`results_schema`]).
pub fn results_schema_of(version: u32) -> Option<&'static str> {
    match version {
        1 => Some(include_str!("../frozen/results.v1.schema.json")),
        _ => None,
    }
}

/// The JSON Schema of `gate.json`.
pub fn gate_schema() -> serde_json::Value {
    let schema = schemars::schema_for!(GateReport);
    serde_json::to_value(schema).expect("a schema is always JSON")
}

/// The JSON Schema of `imported-soak.json`.
pub fn imported_soak_schema() -> serde_json::Value {
    let schema = schemars::schema_for!(ImportedSoakRun);
    serde_json::to_value(schema).expect("a schema is always JSON")
}

/// The JSON Schema of `pr.json`.
pub fn pr_schema() -> serde_json::Value {
    let schema = schemars::schema_for!(PrRecord);
    serde_json::to_value(schema).expect("a schema is always JSON")
}

/// The JSON Schema of `facts.json`.
pub fn facts_schema() -> serde_json::Value {
    let schema = schemars::schema_for!(Facts);
    serde_json::to_value(schema).expect("a schema is always JSON")
}
