//! `run.json`: the record of a whole run beside its cell directories.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::RunInfo;
#[cfg(doc)]
use crate::SCHEMA_VERSION;

/// Marks a run record.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RunKind {
    /// `"run"`
    Run,
}

/// One GitHub job of a run as the collector saw it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RunJob {
    /// The job's display name.
    pub name: String,
    /// Its conclusion (`success`, `failure`, `cancelled`, …), or its status while unfinished.
    pub conclusion: String,
    /// Seconds from start to completion on its runner, installs included.
    pub seconds: Option<f64>,
    /// The runner labels the job asked for.
    pub labels: Vec<String>,
}

/// `run.json`: the run-level record beside the cell directories.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RunRecord {
    /// Always [`SCHEMA_VERSION`] when written by this build.
    #[serde(serialize_with = "crate::write::current_version")]
    pub schema_version: u32,
    /// `"run"`.
    pub kind: RunKind,
    /// The run: id, date, source, commit, attempt, partial.
    pub run: RunInfo,
    /// The run's conclusion as GitHub reports it, when collected through the API.
    pub conclusion: Option<String>,
    /// Artifacts merged, by name.
    pub artifacts: Vec<String>,
    /// Every job of the run (empty when collected from a directory).
    pub jobs: Vec<RunJob>,
    /// Sum of the jobs' runner seconds.
    pub total_s: f64,
    /// What is missing, one line each (partial runs).
    pub missing: Vec<String>,
}
