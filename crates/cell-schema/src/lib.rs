//! Wire formats of `cell`: what a job writes, what a merge writes, and their JSON Schema.
//!
//! Every file carries `schema_version`; [`read_results`] refuses a newer major version rather
//! than guess at fields it does not know. Maps are `BTreeMap` and struct fields are declared
//! in the order they are written, so the same value always serialises to the same bytes.
#![deny(missing_docs)]

pub mod escape;
pub mod ids;
mod imported;
mod metric;
pub mod read;
mod samples;
mod stats;
pub mod store;
mod suite;
pub mod time;
pub mod upstream;
pub mod validate;
mod write;

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use ids::{
    BadRunId, BadSha256, CellId, CellLabel, Phase, RowName, RunId, ServerName, Sha256, ShapeName,
    ToolName, ToolchainName, WorkloadName,
};
pub use imported::{
    ImportMethod, ImportSource, Imported, ImportedBuild, ImportedDrift, ImportedFile, ImportedJob,
    ImportedMachine, ImportedPhase, ImportedRow, ImportedSkipped, ImportedSoakKind,
    ImportedSoakRun, ImportedSoakServer, ImportedTool, ImportedTooth, PrintedVersion,
};
pub use metric::{Clock, Metric, MetricInfo, UnknownMetric};
pub use samples::{Samples, as_written};
pub use stats::{ClockStats, RatioCi, Ratios, Summary};
pub use suite::{
    CellHttpServer, CellSoakServer, CellSuiteServer, Combo, Drift, HttpJobResult, HttpKind,
    HttpMode, HttpRequestSpec, HttpRun, HttpServerResult, HttpSettings, HttpShape, HttpSuite,
    HttpToolResult, HttpWorkloadResult, LEGACY_WORKLOAD, Latency, LoadReport, RssFit, ServerBuild,
    SoakConfig, SoakJobResult, SoakKind, SoakSample, SoakServerResult, SoakSettings, SoakSuite,
    Suite, SuiteCost, SuiteJob, TimeWait, lead_workload, legacy_shape_name,
};
pub use write::{round_ratio, round_time, to_json, to_record_json, write_atomic};

/// The schema version this build writes and the newest major it reads. Version 2 writes a
/// row's runs as columns ([`Samples`]); version 1 (one object per run) is still read.
pub const SCHEMA_VERSION: u32 = 2;

/// Marks a job result.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum JobKind {
    /// `"job"`
    Job,
}

/// Marks a cell result (the merge of one run's jobs for one cell).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CellKind {
    /// `"cell"`
    Cell,
}

/// Marks a facts file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FactsKind {
    /// `"facts"`
    Facts,
}

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

/// The cell a job ran in.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CellInfo {
    /// `<os>-<arch>-<label>`.
    pub id: CellId,
    /// The runner label.
    pub label: CellLabel,
    /// `linux`, `macos`, `windows`.
    pub os: String,
    /// `x86_64`, `aarch64`.
    pub arch: String,
}

impl CellInfo {
    /// The cell an id names (`<os>-<arch>-<label>`), for a cell known only by its id: one
    /// whose every job left no result.
    pub fn of_id(id: &CellId) -> Option<Self> {
        let mut parts = id.as_str().splitn(3, '-');
        let (os, arch, label) = (parts.next()?, parts.next()?, parts.next()?);
        if !ids::is_safe_id(label) {
            return None;
        }
        Some(Self {
            id: id.clone(),
            label: CellLabel::new(label),
            os: os.to_owned(),
            arch: arch.to_owned(),
        })
    }
}

/// Facts about the machine a job ran on; never its hostname.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Machine {
    /// CPU model as the OS names it (or implementer/part on arm64 Linux).
    pub cpu_model: String,
    /// Logical CPUs available to the job.
    pub nproc: u32,
    /// Physical memory in bytes.
    pub memory_bytes: u64,
    /// Kernel name, release, version and machine (no hostname).
    pub kernel: String,
    /// The OS release (`PRETTY_NAME` of `/etc/os-release`, or `sw_vers`).
    pub os_release: String,
    /// The hosted runner image, when the job ran on one.
    pub runner_image: Option<RunnerImage>,
    /// The CPU the timed processes were pinned to, when pinning took effect.
    pub pinned_cpu: Option<u32>,
    /// The CPUs the job timed on and how it came by them (the CPU lock); absent in files
    /// written before the lock, and where nothing was pinned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timing: Option<TimingCpus>,
}

/// The CPUs a job timed on: each one locked (`<dir>/cpu<N>.lock`) so that two `cell`
/// processes on one machine never time on the same CPU.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TimingCpus {
    /// The CPUs, in the order the engine uses them (the first is `pinned_cpu`).
    pub cpus: Vec<u32>,
    /// Seconds spent waiting for their locks.
    pub waited_s: f64,
    /// cpu0 is among them: it comes last in the order, as it takes most interrupts.
    pub last_resort: bool,
    /// At least one of them was timed on without its lock (the wait ran out, or the lock
    /// dir could not be used): another process may have timed on it too.
    pub shared: bool,
    /// Why no lock could be taken at all, when the lock dir could not be used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lock_error: Option<String>,
}

/// `ImageOS` and `ImageVersion` of a hosted runner.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RunnerImage {
    /// `ImageOS`, e.g. `ubuntu24`.
    pub os: String,
    /// `ImageVersion`, e.g. `20250105.1.0`.
    pub version: String,
}

/// A tool's version, as the exact binary that builds printed it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ToolVersion {
    /// The path the build invokes.
    pub path: String,
    /// That path with every link resolved.
    pub resolved: String,
    /// The version command.
    pub argv: Vec<String>,
    /// What it printed (stdout, else stderr), trimmed.
    pub printed: String,
    /// SHA-256 of the resolved binary: the exact program that built the rows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256: Option<Sha256>,
    /// Its size in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
}

/// How a release's digest was established before anything was unpacked.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Verified {
    /// The pin in `versions.env`.
    Pin,
    /// The release's published checksum file.
    Checksum,
    /// Both, and they agreed.
    Both,
}

impl Verified {
    /// `by the pin`, `by the published checksum`, `by the pin and the published checksum`.
    pub fn phrase(self) -> &'static str {
        match self {
            Self::Pin => "the pin",
            Self::Checksum => "the published checksum",
            Self::Both => "the pin and the published checksum",
        }
    }
}

/// The release under test, installed from its tarball and verified before unpacking.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Subject {
    /// Release tag or version.
    pub tag: String,
    /// Asset file name.
    pub asset: String,
    /// The SHA-256 verified before unpacking.
    pub sha256: Sha256,
    /// The toolchain declared the release under test.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub toolchain: Option<ToolchainName>,
    /// The version as pinned in `versions.env`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// The URL it was downloaded from (credentials removed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// How its digest was established.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verified: Option<Verified>,
    /// Its tools: the path, the version printed, and SHA-256 and size of each binary.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tools: BTreeMap<ToolName, ToolVersion>,
    /// SHA-256 of the release's binary, when an imported record has one (a job records each
    /// tool's under `tools`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub binary_sha256: Option<Sha256>,
    /// Size of the release's binary in bytes, when recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub binary_bytes: Option<u64>,
    /// The version the binary printed, when recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub printed: Option<String>,
}

impl Subject {
    /// `[<toolchain> ]<tag> <asset> sha256 <hex>`: how the gate, the step summary and the
    /// report name the release.
    pub fn summary(&self) -> String {
        let name = self
            .toolchain
            .as_ref()
            .map_or(String::new(), |t| format!("{t} "));
        format!("{name}{} {} sha256 {}", self.tag, self.asset, self.sha256)
    }
}

/// The part a row plays in a job.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// The row every ratio divides by.
    Reference,
    /// A byte-identical copy of the reference: the A/A control.
    Control,
    /// A row of the job's toolchain.
    Row,
    /// The tooth's slow row, timed on the tooth phase only.
    Tooth,
}

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

/// How one row's binary was built.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Build {
    /// The build command (absolute paths), or how the control copy was made.
    pub argv: Vec<String>,
    /// Working directory of the build.
    pub cwd: String,
    /// Wall seconds the build took: the median of `compile_runs_s` when the row was built
    /// more than once (`BUILD_REPS`).
    pub compile_s: f64,
    /// Wall seconds of every build of the row, in the order they ran. Absent in files written
    /// before builds were repeated, and for the control, which is a copy.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub compile_runs_s: Vec<f64>,
    /// The binary (absolute path): what the last build wrote.
    pub binary: String,
    /// Its size in bytes.
    pub binary_bytes: u64,
    /// Bytes of its executable code section (ELF `.text`, Mach-O `__TEXT,__text`, PE
    /// `.text`), read from its headers. Absent when the format could not be read, and in
    /// files written before it was measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text_bytes: Option<u64>,
    /// Its SHA-256.
    pub sha256: Sha256,
    /// Whether every build wrote a binary of the same SHA-256: `false` is a compiler whose
    /// output is not reproducible (the binary timed is the last one). Absent with one build.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reproducible: Option<bool>,
}

/// How an installed size was measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SizeMethod {
    /// The bytes of every regular file under one directory (a tarball or a setup action's
    /// install root), symbolic links not followed, hard links counted once.
    Tree,
    /// dpkg's `Installed-Size` of an apt package and of every installed package it depends
    /// on, recursively.
    Dpkg,
    /// Not measured; `how` says why.
    None,
}

/// The disk a toolchain's install takes, and how that was measured.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Installed {
    /// Bytes installed (dpkg's KiB times 1024); absent when not measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
    /// `tree`, `dpkg` or `none`.
    pub method: SizeMethod,
    /// One line a person reads: `files under /opt/go (3012 files)`, `dpkg Installed-Size of
    /// 23 packages`, or why nothing was measured.
    pub how: String,
    /// The directory measured (`tree`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root: Option<String>,
    /// Packages summed (`dpkg`): the package and the dependencies installed with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub packages: Option<u32>,
}

/// One timed process run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Run {
    /// Round number; round 0 (and any before `warmup_rounds`) is warm-up.
    pub round: u32,
    /// Position in the round's order.
    pub seq: u32,
    /// Excluded from statistics.
    pub warmup: bool,
    /// Wall seconds, spawn to reap.
    pub wall_s: f64,
    /// CPU seconds, user + system.
    pub cpu_s: f64,
    /// User CPU seconds (absent in files written before they were recorded apart).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_s: Option<f64>,
    /// System CPU seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sys_s: Option<f64>,
    /// Seconds the hypervisor stole from the CPUs it ran on (`/proc/stat`), where the kernel
    /// reports it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steal_s: Option<f64>,
    /// Peak resident set, KiB.
    pub maxrss_kib: u64,
    /// Its stdout equalled the expected answer and it exited 0.
    pub ok: bool,
    /// Position (`seq`) of the reference run this run's ratio pairs with.
    pub paired_with: Option<u32>,
}

/// One row on one phase.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PhaseResult {
    /// The expected stdout.
    pub expected: String,
    /// Every run printed the expected answer and exited 0.
    pub answer_ok: bool,
    /// What a wrong run printed first (or how it exited), when one did: of a long answer,
    /// only its start. Absent when every run was right (version 1 wrote `null`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wrong: Option<String>,
    /// How much that wrong run printed on stdout and its digest, when it exited 0 with a
    /// wrong answer: the whole answer is never kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub printed: Option<Printed>,
    /// Every run, warm-up included: written as columns (`samples`, one line per field),
    /// read from those or from version 1's list of run objects (`runs`).
    #[serde(rename = "samples", alias = "runs", with = "samples::runs")]
    #[schemars(with = "Samples")]
    pub runs: Vec<Run>,
    /// Statistics over the measured runs (none when no run was measured).
    pub stats: Option<ClockStats>,
    /// Ratio to the reference (none when no pair was measured).
    pub ratio: Option<Ratios>,
    /// Median wall/cpu of the measured runs.
    pub contention: Option<f64>,
    /// Instructions executed (cachegrind's `Ir`) by one run under valgrind, when the job ran
    /// the instruction lane (`INSTRUCTIONS=on`) and it counted this phase: a tripwire for a
    /// change of the generated code, never compared across toolchains.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<u64>,
}

/// The size and digest of what a run printed, kept in place of the bytes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Printed {
    /// Bytes printed.
    pub bytes: u64,
    /// SHA-256 of every byte printed.
    pub sha256: Sha256,
}

/// One row of a job.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RowResult {
    /// How the report names it (`clang -O2`).
    pub label: String,
    /// The toolchain the row belongs to.
    pub toolchain: ToolchainName,
    /// Its part in the job.
    pub role: Role,
    /// The clock its verdict reads.
    pub verdict_clock: Clock,
    /// How its binary was made.
    pub build: Build,
    /// Its runs and figures on each phase it was timed on.
    pub phases: BTreeMap<Phase, PhaseResult>,
    /// Why the instruction lane counted this row on none or only some of its phases (an
    /// instruction valgrind does not know, a wrong answer under valgrind, a timeout); absent
    /// when it counted every phase or did not run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions_skipped: Option<String>,
}

/// The instruction lane of a job (`INSTRUCTIONS=on`): every timed row but the control run once
/// per phase under valgrind's cachegrind, its instruction count recorded per phase
/// ([`PhaseResult::instructions`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct InstructionLane {
    /// The valgrind that ran (absolute path), when one was found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub valgrind: Option<String>,
    /// What `valgrind --version` printed, trimmed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// The command every count was taken with: valgrind and its options, then
    /// `<the row's argv>`, the argv its timed runs use on that phase.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub argv: Vec<String>,
    /// Seconds one run under valgrind could take before it was killed.
    pub timeout_s: f64,
    /// Wall seconds the lane took in all.
    pub seconds: f64,
    /// Why the lane did not run in this job at all (valgrind not found, not a Linux cell).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
}

/// Why a row was not timed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SkipReason {
    /// A tool it needs is not on this machine.
    NotInstalled,
    /// Its build command failed.
    BuildFailed,
}

/// A row that was not timed, and why.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Skipped {
    /// The row that was not timed.
    pub row: RowName,
    /// The toolchain it belongs to.
    pub toolchain: ToolchainName,
    /// Not installed, or its build failed.
    pub reason: SkipReason,
    /// One line a person can act on.
    pub message: String,
    /// Exit code of a failed build.
    pub exit_code: Option<i32>,
    /// The last lines the failed build printed.
    pub log_tail: Vec<String>,
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
    /// Every answer right, the tooth seen, the control quiet.
    Ok,
    /// The A/A control was off or wide on every phase: every row is inconclusive.
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
    /// A workload job's phases whose A/A control was off: their rows are inconclusive, the
    /// other phases' are not.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inconclusive: Vec<Phase>,
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

/// What a job's `facts.json` holds: the machine and the tools, nothing timed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Facts {
    /// Always [`SCHEMA_VERSION`] when written by this build.
    #[serde(serialize_with = "crate::write::current_version")]
    pub schema_version: u32,
    /// `"facts"`.
    pub kind: FactsKind,
    /// Where it ran: the cell id, runner label, OS and architecture.
    pub cell: CellInfo,
    /// The toolchain of the job.
    pub toolchain: ToolchainName,
    /// The machine it ran on (CPU, memory, kernel, OS, runner image; never a hostname).
    pub machine: Machine,
    /// Pins as written.
    pub pins: BTreeMap<String, String>,
    /// Tool versions as printed.
    pub versions: BTreeMap<ToolName, ToolVersion>,
    /// The release under test, if any.
    pub subject: Option<Subject>,
    /// Installed sizes of the toolchains the job used.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub installed: BTreeMap<ToolchainName, Installed>,
}

impl JobResult {
    /// The facts part of a job result.
    pub fn facts(&self) -> Facts {
        Facts {
            schema_version: SCHEMA_VERSION,
            kind: FactsKind::Facts,
            cell: self.cell.clone(),
            toolchain: self.toolchain.clone(),
            machine: self.machine.clone(),
            pins: self.pins.clone(),
            versions: self.versions.clone(),
            subject: self.subject.clone(),
            installed: self.installed.clone(),
        }
    }
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
    /// The new interval lies inside the tolerance band around the baseline.
    Pass,
    /// Neither inside nor wholly outside, or the job was too noisy: no call either way.
    Inconclusive,
    /// The new interval lies wholly outside the band.
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
    /// The band: `[old/(1+tolerance), old·(1+tolerance)]`.
    pub band: [f64; 2],
    /// One line a person reads.
    pub message: String,
    /// The baseline is an imported point ratio (a ratio of medians on the wall clock, with no
    /// interval): `old.lo` and `old.hi` are its median, and only the band is read.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub against_imported_point: bool,
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
    /// The exit code: 1 on any FAIL or failure, else 0.
    pub exit: u8,
    /// The commit whose versions.env and cell/ gave the thresholds, when not the work tree's
    /// (`cell gate --config-rev`; the collect job passes the run's own commit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_rev: Option<String>,
}

/// Marks a calibration file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CalibrationKind {
    /// `"calibration"`
    Calibration,
}

/// The A/A noise of one clock on one phase.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Noise {
    /// The control's ratio (median of per-round ratios) with its CI.
    pub ratio: RatioCi,
    /// Half the CI's width, as a fraction: the smallest change this machine can call.
    pub half_width: f64,
    /// MAD of the per-round ratios, as a fraction.
    pub mad: f64,
}

/// `cell/calibration/<cell-id>.json`: what `cell calibrate` measured on a machine.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Calibration {
    /// Always [`SCHEMA_VERSION`] when written by this build.
    #[serde(serialize_with = "crate::write::current_version")]
    pub schema_version: u32,
    /// `"calibration"`.
    pub kind: CalibrationKind,
    /// Where it ran: the cell id, runner label, OS and architecture.
    pub cell: CellInfo,
    /// The machine it ran on (CPU, memory, kernel, OS, runner image; never a hostname).
    pub machine: Machine,
    /// When, UTC.
    pub measured_at: String,
    /// Measured rounds of reference against control.
    pub rounds: u32,
    /// Seed of the order.
    pub seed: u64,
    /// Per phase, per clock (`cpu`, `wall`).
    pub phases: BTreeMap<Phase, BTreeMap<Clock, Noise>>,
    /// The clock with the smaller A/A noise over all phases.
    pub quieter_clock: Clock,
    /// The same A/A noise under the duet protocol, when the machine has two CPUs to time on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duet: Option<BTreeMap<Phase, BTreeMap<Clock, Noise>>>,
    /// The protocol with the smaller A/A noise on the quieter clock over all phases: what
    /// `PROTOCOL=auto` runs on this cell. Absent in older files (sequential).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quieter_protocol: Option<ProtocolMode>,
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

/// The JSON Schema of `facts.json`.
pub fn facts_schema() -> serde_json::Value {
    let schema = schemars::schema_for!(Facts);
    serde_json::to_value(schema).expect("a schema is always JSON")
}
