//! Wire formats of the `http` and `soak` suites: what a suite job writes and what a merge
//! keeps of it.

use std::collections::BTreeMap;
use std::fmt;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::{CellInfo, GithubJob, Machine, ServerName, Sha256, ToolName, ToolVersion, Verdict};

/// Marks an `http` suite job result.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum HttpKind {
    /// `"http"`
    Http,
}

/// Marks a `soak` suite job result.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SoakKind {
    /// `"soak"`
    Soak,
}

/// One load generator run, parsed from the tool's own report into one shape.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LoadReport {
    /// `wrk` or `oha`.
    pub tool: String,
    /// The tool's version, as it printed it.
    pub version: String,
    /// Seconds the tool measured over.
    pub duration_s: f64,
    /// Responses received (any status).
    pub requests: u64,
    /// Requests that got no response, by kind (`connect`, `read`, `write`, `timeout`, or the
    /// tool's own message); non-2xx responses are not errors here.
    pub errors: BTreeMap<String, u64>,
    /// Responses with a status outside 200–299.
    pub non_2xx: u64,
    /// Responses per second over `duration_s`.
    pub rps: f64,
    /// Latency percentiles.
    pub latency_ms: Latency,
}

/// Latency percentiles in milliseconds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Latency {
    /// Median.
    pub p50: f64,
    /// 90th percentile.
    pub p90: f64,
    /// 99th percentile.
    pub p99: f64,
    /// 99.9th percentile.
    pub p99_9: f64,
    /// Slowest.
    pub max: f64,
}

/// How a server was built and what it runs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ServerBuild {
    /// The build command (absolute paths); empty when the server needs no build.
    pub argv: Vec<String>,
    /// Wall seconds the build took.
    pub build_s: f64,
    /// The command that starts the server (absolute paths, port substituted).
    pub run_argv: Vec<String>,
    /// The program started (`run_argv[0]` resolved) and its SHA-256.
    pub program: String,
    /// Its size in bytes.
    pub program_bytes: u64,
    /// Its SHA-256.
    pub sha256: Sha256,
}

/// Sockets in `TIME_WAIT` on the server's port, counted before a run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TimeWait {
    /// Count when the previous server had stopped.
    pub before: u64,
    /// Count when the run started (after waiting at most the drain bound).
    pub after: u64,
    /// Seconds waited.
    pub waited_s: f64,
}

/// One measured HTTP run: a fresh server, a warm-up, then the measured load.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct HttpRun {
    /// Run number (0-based), in the interleaved order of the session.
    pub index: u32,
    /// Position in the whole session (servers and tools interleaved).
    pub seq: u32,
    /// Seconds from spawn to the first 200.
    pub startup_s: f64,
    /// `TIME_WAIT` before this run.
    pub time_wait: TimeWait,
    /// The measured load.
    pub load: LoadReport,
    /// Server process tree user+sys seconds over the measured load.
    pub server_cpu_s: f64,
    /// Server CPU milliseconds per 1,000 responses.
    pub cpu_ms_per_1k: f64,
    /// Peak resident set of the server's process tree over the run, KiB.
    pub peak_rss_kib: u64,
    /// Load generator user+sys seconds over its whole run.
    pub load_cpu_s: f64,
    /// Share of the load generator's CPU it kept busy (1.0 = one CPU flat out).
    pub load_cpu_share: f64,
    /// Share of the machine's CPU charged to neither the server nor the load generator.
    pub other_cpu_share: f64,
    /// Why this run is excluded from verdicts (empty: it counts).
    pub contaminated: Vec<String>,
}

/// One server under one load tool: every run kept, medians over the clean ones.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct HttpToolResult {
    /// Every measured run, contaminated ones included.
    pub runs: Vec<HttpRun>,
    /// Runs counted (not contaminated).
    pub clean_runs: u32,
    /// Median req/s over the clean runs (all runs when none is clean).
    pub rps: f64,
    /// Smallest and largest req/s of the counted runs.
    pub rps_range: [f64; 2],
    /// Median p99 latency, ms.
    pub p99_ms: f64,
    /// Median CPU ms per 1,000 responses.
    pub cpu_ms_per_1k: f64,
    /// Largest peak RSS of any run, KiB.
    pub peak_rss_kib: u64,
    /// Errors summed over every run.
    pub errors: u64,
    /// Non-2xx responses summed over every run.
    pub non_2xx: u64,
}

/// A server's outcome in the http suite.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct HttpServerResult {
    /// The toolchain that built it.
    pub toolchain: crate::ToolchainName,
    /// Build and binary, when it was built.
    pub build: Option<ServerBuild>,
    /// What the response check found before any load (`ok` or what differed).
    pub check: Option<String>,
    /// Per load tool.
    pub tools: BTreeMap<String, HttpToolResult>,
    /// Why it failed (build, startup, check, died mid-run), when it did.
    pub error: Option<String>,
}

/// The load every server of an http job got.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct HttpSettings {
    /// Load tools, in the order of each round.
    pub tools: Vec<String>,
    /// Open connections.
    pub connections: u32,
    /// Load generator threads (wrk).
    pub threads: u32,
    /// Seconds of each measured run.
    pub duration_s: f64,
    /// Seconds of load before each measured run, not counted.
    pub warmup_s: f64,
    /// Measured runs per server and tool.
    pub runs: u32,
    /// Keep-alive on.
    pub keep_alive: bool,
    /// CPU the server was pinned to: the first of `server_cpus` (for readers of older files).
    pub server_cpu: Option<u32>,
    /// CPU the load generator was pinned to: the first of `load_cpus`.
    pub load_cpu: Option<u32>,
    /// CPUs the server was pinned to, ascending (empty: unpinned, or an older file).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub server_cpus: Vec<u32>,
    /// CPUs the load generator was pinned to, ascending (empty: unpinned, or an older file).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub load_cpus: Vec<u32>,
    /// Seed of the interleaving order.
    pub seed: u64,
    /// Bound on the wait for the first 200, seconds.
    pub startup_timeout_s: f64,
    /// Seconds between SIGTERM and SIGKILL.
    pub stop_grace_s: f64,
    /// Bound on the wait for `TIME_WAIT` sockets before each run, seconds.
    pub drain_timeout_s: f64,
}

/// What a suite job cost, in seconds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SuiteCost {
    /// Building every server.
    pub build_s: f64,
    /// The measured runs (or the soak).
    pub measure_s: f64,
    /// All of `cell run`.
    pub total_s: f64,
}

/// One sample of a server's process tree.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SoakSample {
    /// Seconds since the load started.
    pub t_s: f64,
    /// Resident set summed over the tree, KiB.
    pub rss_kib: u64,
    /// User+sys seconds of the tree so far.
    pub cpu_s: f64,
    /// Threads summed over the tree.
    pub threads: u32,
    /// Open file descriptors summed over the tree.
    pub fds: u32,
}

/// An ordinary least squares line through RSS over time.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RssFit {
    /// Samples (or minima) the line was fitted through.
    pub points: u32,
    /// KiB per minute.
    pub slope_kib_per_min: f64,
    /// Coefficient of determination.
    pub r2: f64,
    /// The line's move over the fitted window, KiB.
    pub projected_kib: f64,
    /// Mean RSS over the window, KiB.
    pub mean_kib: f64,
    /// `projected_kib / mean_kib`.
    pub projected_share: f64,
}

/// Flat or drifted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Drift {
    /// The rule did not trip.
    Flat,
    /// Projected move ≥ the share threshold of the window mean AND R² ≥ the threshold, on
    /// both the samples and the per-window minima.
    Drifted,
    /// Too few samples in the window to fit.
    Unknown,
}

/// A server's outcome in the soak suite.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SoakServerResult {
    /// The toolchain that built it.
    pub toolchain: crate::ToolchainName,
    /// Build and binary.
    pub build: Option<ServerBuild>,
    /// Seconds from spawn to the first 200.
    pub startup_s: Option<f64>,
    /// The load as the tool reported it.
    pub load: Option<LoadReport>,
    /// Every sample of the process tree, from the start of the load.
    pub samples: Vec<SoakSample>,
    /// Fit over the samples from the window start.
    pub fit: Option<RssFit>,
    /// Fit over the minimum of each minima window, so a sawtooth allocator is not a leak.
    pub fit_minima: Option<RssFit>,
    /// The rule's outcome: `flat`, `drifted` or `unknown`.
    pub verdict: Drift,
    /// Largest RSS sample, KiB.
    pub peak_rss_kib: u64,
    /// Server CPU milliseconds per 1,000 responses over the window.
    pub cpu_ms_per_1k: Option<f64>,
    /// Why it failed (build, startup, check, died), when it did.
    pub error: Option<String>,
}

/// The soak as `[soak]` of cell/cell.toml configures it (after a command line's changes).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SoakConfig {
    /// Offered requests per second.
    pub rate: u32,
    /// Open connections.
    pub connections: u32,
    /// Seconds of load.
    pub duration_s: f64,
    /// Seconds between samples.
    pub interval_s: f64,
    /// Seconds into the load where the fit starts.
    pub window_start_s: f64,
    /// Seconds per minima window.
    pub minima_window_s: f64,
    /// Projected move over the window, as a share of its mean, that counts as drift.
    pub drift_share: f64,
    /// R² at or above which a move counts.
    pub min_r2: f64,
    /// A drift fails the gate.
    pub fail_on_drift: bool,
    /// Connections kept alive; `false`: a new connection per request (connection churn).
    /// Not written when `true`, so a file of before the option reads as what it was.
    #[serde(default = "keep_alive_default", skip_serializing_if = "is_true")]
    pub keep_alive: bool,
}

fn keep_alive_default() -> bool {
    true
}

#[expect(
    clippy::trivially_copy_pass_by_ref,
    reason = "serde's skip_serializing_if passes a reference"
)]
fn is_true(b: &bool) -> bool {
    *b
}

/// The soak every server got: the configured soak, and how many servers shared the machine.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SoakSettings {
    /// The configured soak.
    #[serde(flatten)]
    pub config: SoakConfig,
    /// Servers soaked at the same time (each with its own load generator).
    pub concurrent: u32,
    /// CPUs the servers were pinned to, ascending (empty: unpinned, or an older file).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub server_cpus: Vec<u32>,
    /// CPUs the load generators were pinned to, ascending (empty: unpinned, or an older file).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub load_cpus: Vec<u32>,
}

/// A suite of servers measured from outside: the types its job results and its part of a
/// merged cell carry. A third suite is one more marker type and one more
/// [`ResultsFile`](crate::ResultsFile) variant.
pub trait Suite {
    /// The `kind` a job result of the suite carries.
    type Kind: Clone + Copy + fmt::Debug + PartialEq + Serialize + DeserializeOwned + JsonSchema;
    /// What every server of a job got (the load, the soak).
    type Settings: Clone + fmt::Debug + PartialEq + Serialize + DeserializeOwned + JsonSchema;
    /// One server's outcome.
    type Server: Clone + fmt::Debug + PartialEq + Serialize + DeserializeOwned + JsonSchema;
    /// How the suite is named in job names (`http-<server>`) and on the command line.
    const NAME: &'static str;
}

/// The `http` suite: servers under wrk and oha.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HttpSuite;

/// The `soak` suite: servers at a fixed rate for a long window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SoakSuite;

impl Suite for HttpSuite {
    type Kind = HttpKind;
    type Settings = HttpSettings;
    type Server = HttpServerResult;
    const NAME: &'static str = "http";
}

impl Suite for SoakSuite {
    type Kind = SoakKind;
    type Settings = SoakSettings;
    type Server = SoakServerResult;
    const NAME: &'static str = "soak";
}

/// The schema names the suite's types by (`HttpJobResult`, `CellSoakServer`).
macro_rules! suite_schema_name {
    ($t:ty, $name:literal) => {
        impl JsonSchema for $t {
            fn schema_name() -> std::borrow::Cow<'static, str> {
                $name.into()
            }
            fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
                schemars::json_schema!(false)
            }
        }
    };
}
suite_schema_name!(HttpSuite, "Http");
suite_schema_name!(SoakSuite, "Soak");

/// What `cell run --suite http|soak` writes: one server's job.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(bound = "")]
#[schemars(rename = "{S}JobResult", bound = "S: Suite + JsonSchema")]
pub struct SuiteJob<S: Suite> {
    /// Always [`crate::SCHEMA_VERSION`] when written by this build.
    pub schema_version: u32,
    /// The suite: `"http"` or `"soak"`.
    pub kind: S::Kind,
    /// The job's name within its cell: `<suite>-<server>` (one server per job).
    pub job: String,
    /// The cell (runner) the job ran on, as the plan named it.
    pub cell: CellInfo,
    /// The machine's facts as probed at the start of the job (CPU, cores, memory, kernel).
    pub machine: Machine,
    /// `versions.env` pins of the server's toolchain and of the load generator, as written.
    pub pins: BTreeMap<String, String>,
    /// Every tool invoked (compilers, load generators), with its version as printed.
    pub versions: BTreeMap<ToolName, ToolVersion>,
    /// What every server got.
    pub settings: S::Settings,
    /// What each server of the job measured, by server name.
    pub servers: BTreeMap<ServerName, S::Server>,
    /// The job's own verdict (`ok`, `noisy`, `failed`) and its reasons.
    pub verdict: Verdict,
    /// What the job cost: wall seconds of building, measuring and the whole run.
    pub cost: SuiteCost,
    /// When the job started, UTC.
    pub started_at: String,
    /// The GitHub Actions run, when it ran in one.
    pub github: Option<GithubJob>,
}

/// What `cell run --suite http` writes.
pub type HttpJobResult = SuiteJob<HttpSuite>;
/// What `cell run --suite soak` writes.
pub type SoakJobResult = SuiteJob<SoakSuite>;

/// A server of a cell result's suite, with the job that measured it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(bound = "")]
#[schemars(rename = "Cell{S}Server", bound = "S: Suite + JsonSchema")]
pub struct CellSuiteServer<S: Suite> {
    /// The job that measured it.
    pub job: String,
    /// That job's machine.
    pub machine: Machine,
    /// That job's settings (its load, its soak).
    pub settings: S::Settings,
    /// That job's pins, as written.
    pub pins: BTreeMap<String, String>,
    /// That job's tool versions (the server's toolchain, the load generators), as printed.
    pub versions: BTreeMap<ToolName, ToolVersion>,
    /// The server as that job wrote it.
    #[serde(flatten)]
    pub result: S::Server,
}

/// A server of a cell result's http suite.
pub type CellHttpServer = CellSuiteServer<HttpSuite>;
/// A server of a cell result's soak suite.
pub type CellSoakServer = CellSuiteServer<SoakSuite>;
