//! The imported form: a cell of another tool's committed history, kept as that tool made its
//! numbers.
//!
//! An imported cell is a [`CellResult`](crate::CellResult) with no jobs and no rows and an
//! [`Imported`] block beside them. Its ratios are points (a ratio of medians on the wall
//! clock, no per-round pairs), never an interval: they live in their own map, so no reader of
//! `rows` can take one for a measured interval. An old soak file names no cell, so it becomes a
//! run-level record ([`ImportedSoakRun`]) beside the cells. Every figure here is one the old
//! file wrote; a field it lacks stays absent.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::{
    Clock, Phase, RowName, RunnerImage, ServerName, Sha256, Status, ToolName, ToolchainName,
};

/// What an imported cell holds besides its run and cell: where it came from, how its
/// numbers were made, and the numbers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Imported {
    /// The file it was read from.
    pub source: ImportSource,
    /// How the old tool made its numbers.
    pub method: ImportMethod,
    /// The row every ratio divides by (its own row, at ratio 1, is in `rows`).
    pub reference: RowName,
    /// The machine, as the file describes it (one for the whole cell).
    pub machine: ImportedMachine,
    /// The release under test, when the file verified one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject: Option<crate::Subject>,
    /// Versions as the tools printed them (first line), by tool.
    pub versions: BTreeMap<ToolName, String>,
    /// Pins as written.
    pub pins: BTreeMap<String, String>,
    /// The old gate's band (fraction).
    pub tolerance: f64,
    /// The old tooth.
    pub tooth: ImportedTooth,
    /// Each job of the old run.
    pub jobs: BTreeMap<ToolchainName, ImportedJob>,
    /// Every row on every phase it was timed on, the reference included.
    pub rows: BTreeMap<RowName, ImportedRow>,
    /// Rows the old run did not time, with its reason.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<ImportedSkipped>,
}

impl Imported {
    /// Every row on `phase` with its point ratio, the reference left out (1 by construction).
    pub fn points<'a>(
        &'a self,
        phase: &'a Phase,
    ) -> impl Iterator<Item = (&'a RowName, &'a ImportedRow, &'a ImportedPhase)> {
        self.rows
            .iter()
            .filter(|(name, _)| **name != self.reference)
            .filter_map(move |(name, row)| row.phases.get(phase).map(|p| (name, row, p)))
    }

    /// Every phase any row was timed on, sorted.
    pub fn phases(&self) -> std::collections::BTreeSet<&Phase> {
        self.rows.values().flat_map(|r| r.phases.keys()).collect()
    }
}

/// The tool whose history was imported.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ImportedTool {
    /// `bench/cell/cell.py` (workload) and its soak script: the Python cell.
    PythonCell,
}

/// Which of the old tool's files.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ImportedFile {
    /// A merged cell `results/<date>-<run-id>/<cell-id>/results.json`.
    Workload,
    /// A soak `soak/<date>-<run-id>/results.json`.
    Soak,
}

/// Where an imported cell came from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ImportSource {
    /// The tool that wrote it.
    pub tool: ImportedTool,
    /// Which of its files.
    pub file: ImportedFile,
    /// Its path relative to the directory imported, `/`-separated.
    pub path: String,
    /// SHA-256 of its bytes as read.
    pub sha256: Sha256,
    /// The cell id the old file wrote, when it names the architecture otherwise (`arm64` for
    /// `aarch64`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub old_cell_id: Option<String>,
}

/// How the old tool's numbers were made, from what the file itself says.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ImportMethod {
    /// One line a person reads: estimator, clock, pinning, and why there is no interval.
    pub summary: String,
    /// The clock every time was read on.
    pub clock: Clock,
    /// The old file's own words for its timing (`timing_method`), when it has them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timing_method: Option<String>,
    /// Repetitions per row and phase, the dropped ones included.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reps: Option<u32>,
    /// Leading repetitions excluded from every statistic.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dropped: Option<u32>,
    /// The CPUs the timed processes were pinned to, as the file wrote them (`taskset -c`);
    /// absent: not pinned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pinned_cpus: Option<String>,
}

/// The machine of an imported run; never a hostname.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ImportedMachine {
    /// CPU model as the OS names it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_model: Option<String>,
    /// Logical CPUs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nproc: Option<u32>,
    /// Physical memory in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_bytes: Option<u64>,
    /// `uname -srvm` (no hostname).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel: Option<String>,
    /// The hosted runner image, when the run had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runner_image: Option<RunnerImage>,
}

/// The old tooth: a slow row over a fast row on one phase, against a floor.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ImportedTooth {
    /// The floor (`regress_min`).
    pub floor: f64,
    /// The phase it was read on.
    pub phase: Phase,
    /// Whether the old gate judged it (only on the phase its floor was calibrated for).
    pub gated: bool,
    /// Its ratio of medians, when both rows were timed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ratio: Option<f64>,
}

/// One job of an imported run, as the old merge listed it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ImportedJob {
    /// Its outcome.
    pub status: Status,
    /// Why it failed, one line each.
    pub failures: Vec<String>,
    /// Its reference's median wall seconds, per phase (each job timed its own).
    pub reference_median_s: BTreeMap<Phase, f64>,
    /// Its tooth's ratio, when it timed the tooth's rows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tooth: Option<f64>,
    /// Minutes the old workflow recorded for the job.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job_minutes: Option<f64>,
}

/// One row of an imported run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ImportedRow {
    /// How the report names it.
    pub label: String,
    /// The job that timed it.
    pub toolchain: ToolchainName,
    /// Its binary (one build per row).
    pub build: ImportedBuild,
    /// Its figures per phase.
    pub phases: BTreeMap<Phase, ImportedPhase>,
}

/// The binary of an imported row.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ImportedBuild {
    /// Wall seconds of one build.
    pub compile_s: f64,
    /// Size in bytes.
    pub binary_bytes: u64,
    /// Size of its text section, when a size tool answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text_bytes: Option<u64>,
    /// Its SHA-256.
    pub sha256: Sha256,
}

/// One row on one phase of an imported run: the repetitions and the statistics the old tool
/// drew from them. The ratio is a point.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ImportedPhase {
    /// Wall seconds of every repetition, in order, the dropped ones first.
    pub run_s: Vec<f64>,
    /// Leading repetitions excluded from the statistics.
    pub dropped: u32,
    /// Median of the kept repetitions, seconds.
    pub median_s: f64,
    /// Fastest kept repetition, seconds.
    pub best_s: f64,
    /// Slowest kept repetition, seconds.
    pub max_s: f64,
    /// Largest peak RSS of the kept repetitions, bytes.
    pub rss_bytes: u64,
    /// `median(row) / median(reference)` of the same job on the wall clock: a point ratio,
    /// with no interval (there were no per-round pairs to draw one from).
    pub point_ratio: f64,
    /// Every repetition printed the expected answer.
    pub stdout_ok: bool,
}

/// A row the old run did not time.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ImportedSkipped {
    /// The row.
    pub row: RowName,
    /// The job it belonged to.
    pub toolchain: ToolchainName,
    /// The old tool's reason.
    pub reason: String,
}

/// Marks an imported soak record.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ImportedSoakKind {
    /// `"imported_soak"`
    ImportedSoak,
}

/// `results/<date>-<run-id>/imported-soak.json`: the old soak of one run, one server at a
/// time at a fixed rate, its figures as the old file wrote them. The file names no cell (it
/// records no runner label), so the record sits beside the cells, not in one; it has no
/// samples (the file keeps four RSS readings and a fitted slope), so nothing is refitted.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ImportedSoakRun {
    /// Always [`SCHEMA_VERSION`](crate::SCHEMA_VERSION) when written by this build.
    #[serde(serialize_with = "crate::write::current_version")]
    pub schema_version: u32,
    /// `"imported_soak"`.
    pub kind: ImportedSoakKind,
    /// The run: id, date, source, commit.
    pub run: crate::RunInfo,
    /// The file it was read from.
    pub source: ImportSource,
    /// How the old soak made its figures.
    pub method: ImportMethod,
    /// Every server, by name.
    pub servers: BTreeMap<ServerName, ImportedSoakServer>,
}

/// A version as one command printed it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PrintedVersion {
    /// The command, as the old file names it (`go version`).
    pub command: String,
    /// What it printed.
    pub printed: String,
}

/// What the old soak rule said of a server.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ImportedDrift {
    /// Its rule did not trip.
    Flat,
    /// Its rule tripped.
    Drifted,
}

/// One server of an imported soak.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ImportedSoakServer {
    /// When it started, as the file wrote it.
    pub started_at: String,
    /// Versions of its toolchain, as printed.
    pub versions: Vec<PrintedVersion>,
    /// The load generator's version, as printed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_tool: Option<String>,
    /// Minutes of load asked for.
    pub minutes: f64,
    /// Requests per second asked for.
    pub rate: u32,
    /// Connections.
    pub connections: u32,
    /// Keep-alive connections.
    pub keepalive: bool,
    /// Seconds between RSS samples.
    pub sample_every_s: f64,
    /// CPUs the server was pinned to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_cpus: Option<String>,
    /// CPUs the load generator was pinned to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_cpus: Option<String>,
    /// Logical CPUs of the machine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nproc: Option<u32>,
    /// The hosted runner image.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runner_image: Option<RunnerImage>,
    /// Minutes the load ran.
    pub duration_min: f64,
    /// RSS samples taken.
    pub samples: u32,
    /// Why it failed, when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The minutes of the fit's window, first and last.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_min: Option<[f64; 2]>,
    /// RSS in KiB at the minutes the file read it, by minute.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub rss_at_kib: BTreeMap<u32, f64>,
    /// Last RSS sample, KiB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rss_end_kib: Option<f64>,
    /// Largest RSS sample, KiB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rss_peak_kib: Option<f64>,
    /// Least-squares RSS slope over the window, KiB per minute.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rss_slope_kib_per_min: Option<f64>,
    /// Its R².
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rss_slope_r2: Option<f64>,
    /// Server CPU seconds over the load.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_s: Option<f64>,
    /// Responses counted.
    pub requests: u64,
    /// Responses other than 200.
    pub non_200: u64,
    /// Errors the load generator counted.
    pub errors: u64,
    /// Achieved requests per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rps: Option<f64>,
    /// Median latency, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p50_ms: Option<f64>,
    /// 99th percentile latency, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99_ms: Option<f64>,
    /// Server CPU ms per 1,000 requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_ms_per_1k_req: Option<f64>,
    /// What the old rule said, when it could say anything.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drift: Option<ImportedDrift>,
}
