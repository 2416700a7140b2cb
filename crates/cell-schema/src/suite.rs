//! Wire formats of the `http` and `soak` suites: what a suite job writes and what a merge
//! keeps of it.

use std::collections::BTreeMap;
use std::fmt;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::{
    CellInfo, GithubJob, Machine, ServerName, Sha256, ShapeName, ToolName, ToolVersion, Verdict,
    WorkloadName,
};

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
///
/// The fields after `latency_ms` say what the run really was; results written before they
/// existed carry none of them.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LoadReport {
    /// `wrk`, `oha` or `ab`.
    pub tool: String,
    /// The tool's version, as it printed it.
    pub version: String,
    /// Seconds the tool measured over.
    pub duration_s: f64,
    /// Responses received (any status).
    pub requests: u64,
    /// Requests that failed, by kind: wrk's `connect`, `read`, `write`, `timeout`; ab's
    /// `connect`, `receive`, `length`, `exceptions`, `write` (and `unclassified` for the
    /// failures its breakdown leaves out); oha's own messages. Non-2xx responses are not
    /// errors here. ab's `length` are responses whose body length differed from the first
    /// response's: they are in `requests` too.
    pub errors: BTreeMap<String, u64>,
    /// Responses with a status outside 200–299.
    pub non_2xx: u64,
    /// Responses per second over `duration_s`.
    pub rps: f64,
    /// Latency percentiles.
    pub latency_ms: Latency,
    /// The command as run, program path first (lossy UTF-8).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub argv: Vec<String>,
    /// Connections the tool really held open: wrk gives each of its threads
    /// connections/threads and drops the rest, so 100 over 16 threads is 96.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connections: Option<u32>,
    /// Threads the tool really ran (wrk only: never more than its connections).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads: Option<u32>,
    /// Whether connections were reused. For wrk and oha, what was asked. For ab, what it
    /// counted: `true` only when every completed request went over a kept-alive connection;
    /// `false` when none did, and also when only some did (a server that closes some
    /// connections): `keep_alive_requests` then says how many were.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keep_alive: Option<bool>,
    /// Requests ab completed over a kept-alive connection, as it printed them (ab with `-k`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keep_alive_requests: Option<u64>,
    /// Whether ab's bound on the number of requests, not the duration, ended the run (ab
    /// only): `duration_s` is then shorter than asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_cap_hit: Option<bool>,
}

/// Latency percentiles in milliseconds.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
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
    /// Peak resident set of the server's process tree over the run, KiB: each process's RSS
    /// summed, so pages its processes share count once per process.
    pub peak_rss_kib: u64,
    /// Peak proportional set size of the tree over the run (`Pss` of `smaps_rollup` summed),
    /// KiB: a shared page counts once over the processes that share it. Sampled every 50 ms,
    /// so a child that lives a shorter time may be missed. Absent where it cannot be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_pss_kib: Option<u64>,
    /// Resident set of the tree when the measured load started, KiB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rss_start_kib: Option<u64>,
    /// Resident set of the tree when the measured load ended, KiB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rss_end_kib: Option<u64>,
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
    /// Largest peak PSS of any run that read one, KiB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_pss_kib: Option<u64>,
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
    /// Per load tool: results written before workloads existed (`GET /` under the one
    /// connection shape of their settings). New results use `workloads`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tools: BTreeMap<String, HttpToolResult>,
    /// Per workload: its check before any load and its results per shape and tool.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub workloads: BTreeMap<WorkloadName, HttpWorkloadResult>,
    /// Why it failed (build, startup, check, died mid-run), when it did.
    pub error: Option<String>,
    /// How it serves concurrent connections, as the config states it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<ConcurrencyModel>,
    /// Workloads of the session it does not serve (its `workloads` leave them out): not
    /// measured, not failed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_served: Vec<WorkloadName>,
    /// Connection shapes of the session it was not measured in, each with why (a serial
    /// server takes one connection at a time).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub shapes_left_out: BTreeMap<ShapeName, String>,
    /// The release under test that built it, when its toolchain is the subject: the asset,
    /// its SHA-256 as verified before unpacking and how the digest was established.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub release: Option<crate::Subject>,
}

/// How a server serves concurrent connections: the axis the http tables group by.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum ConcurrencyModel {
    /// One thread multiplexing every connection (epoll, libuv, asyncio).
    EventLoop,
    /// An OS thread per connection, blocking I/O.
    ThreadPerConnection,
    /// A runtime schedules the work over a pool of threads or processes (tokio, Go's
    /// scheduler, Puma's pool, node:cluster).
    RuntimeManaged,
    /// A process forked per connection, kept alive for the connection's requests.
    ProcessPerConnection,
    /// A process forked per request.
    ProcessPerRequest,
    /// One connection at a time.
    Serial,
}

impl ConcurrencyModel {
    /// Every model, in the order the tables group by.
    pub const ALL: [Self; 6] = [
        Self::EventLoop,
        Self::ThreadPerConnection,
        Self::RuntimeManaged,
        Self::ProcessPerConnection,
        Self::ProcessPerRequest,
        Self::Serial,
    ];

    /// The name as written in the config and the results.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::EventLoop => "event-loop",
            Self::ThreadPerConnection => "thread-per-connection",
            Self::RuntimeManaged => "runtime-managed",
            Self::ProcessPerConnection => "process-per-connection",
            Self::ProcessPerRequest => "process-per-request",
            Self::Serial => "serial",
        }
    }

    /// The model named `s`, if any.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|m| m.as_str() == s)
    }

    /// Why a shape of `connections` is not measured on a server of this model, when it is
    /// not: a serial server takes one connection at a time, so the others would wait behind
    /// the first until they time out.
    pub fn left_out_of(self, connections: u32) -> Option<String> {
        (self == Self::Serial && connections > 1).then(|| {
            format!(
                "{connections} connections: a serial server takes one at a time (measure it with --connections 1, or a [[http.shapes]] entry with connections = 1)"
            )
        })
    }
}

impl fmt::Display for ConcurrencyModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One workload of one server.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct HttpWorkloadResult {
    /// What the check before any load found: `ok`, or what differed.
    pub check: String,
    /// Why this workload failed while the server's others went on (a wrong answer), when
    /// it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Per connection shape, per load tool.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub shapes: BTreeMap<ShapeName, BTreeMap<String, HttpToolResult>>,
}

/// Which measured combination a result is: workload, connection shape, load tool.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Combo {
    /// The workload (`plaintext` for results written before workloads existed).
    pub workload: String,
    /// The connection shape.
    pub shape: String,
    /// The load tool.
    pub tool: String,
}

impl fmt::Display for Combo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} over {} under {}",
            self.workload, self.shape, self.tool
        )
    }
}

/// The workload results written before workloads existed are read as: `GET /`.
pub const LEGACY_WORKLOAD: &str = "plaintext";

/// Of several items, the one that stands for a server's workloads where one must (a soak's
/// load, a one-line summary, the http chart): the [`LEGACY_WORKLOAD`]'s, else the first.
pub fn lead_workload<T>(
    items: impl IntoIterator<Item = T>,
    workload: impl Fn(&T) -> &str,
) -> Option<T> {
    let mut first = None;
    for item in items {
        if workload(&item) == LEGACY_WORKLOAD {
            return Some(item);
        }
        first.get_or_insert(item);
    }
    first
}

impl HttpServerResult {
    /// Every measured combination, sorted, the older `tools` map read as the
    /// [`LEGACY_WORKLOAD`] over the settings' one shape.
    pub fn measured<'a>(&'a self, settings: &HttpSettings) -> Vec<(Combo, &'a HttpToolResult)> {
        let legacy_shape = settings.legacy_shape();
        let mut out: Vec<(Combo, &HttpToolResult)> = self
            .tools
            .iter()
            .map(|(tool, t)| {
                let c = Combo {
                    workload: LEGACY_WORKLOAD.to_owned(),
                    shape: legacy_shape.to_owned(),
                    tool: tool.clone(),
                };
                (c, t)
            })
            .collect();
        for (w, wr) in &self.workloads {
            for (shape, tools) in &wr.shapes {
                for (tool, t) in tools {
                    let c = Combo {
                        workload: w.to_string(),
                        shape: shape.to_string(),
                        tool: tool.clone(),
                    };
                    out.push((c, t));
                }
            }
        }
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out
    }

    /// The result of one combination, if measured.
    pub fn get(&self, settings: &HttpSettings, c: &Combo) -> Option<&HttpToolResult> {
        if let Some(w) = self.workloads.get(c.workload.as_str()) {
            return w.shapes.get(c.shape.as_str())?.get(&c.tool);
        }
        (c.workload == LEGACY_WORKLOAD && c.shape == settings.legacy_shape())
            .then(|| self.tools.get(&c.tool))
            .flatten()
    }
}

/// How the http suite runs its servers.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum HttpMode {
    /// A fresh server for every measured run, warmed up before it.
    #[default]
    Fresh,
    /// One server process per server for the whole session: a warm-up, then every measured
    /// run on that process.
    SameProcess,
    /// One long run per combination on a fresh server: totals, and RSS at its start and end.
    Sustained,
}

impl HttpMode {
    /// The mode as written in config and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            HttpMode::Fresh => "fresh",
            HttpMode::SameProcess => "same-process",
            HttpMode::Sustained => "sustained",
        }
    }

    /// Whether this is the default (skipped on the wire).
    pub fn is_fresh(&self) -> bool {
        *self == HttpMode::Fresh
    }
}

/// A connection shape as a session used it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct HttpShape {
    /// Its name.
    pub name: ShapeName,
    /// Connections asked of the load tool (each tool's effective count is in its runs).
    pub connections: u32,
    /// Keep-alive asked.
    pub keep_alive: bool,
    /// Load generator threads asked (wrk).
    pub threads: u32,
}

/// A workload's request as a session sent it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct HttpRequestSpec {
    /// The method.
    pub method: String,
    /// The path (and query).
    pub path: String,
    /// Extra request headers.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// The request body, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
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
    /// How servers were run (absent: `fresh`, as before modes existed).
    #[serde(default, skip_serializing_if = "HttpMode::is_fresh")]
    pub mode: HttpMode,
    /// The whole matrix (`--full`) rather than `[http.default]`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub full: bool,
    /// The connection shapes measured, in the order configured (absent in results written
    /// before shapes existed: `connections` and `keep_alive` above were the one shape).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shapes: Vec<HttpShape>,
    /// The workloads' requests, by name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub workloads: BTreeMap<WorkloadName, HttpRequestSpec>,
}

impl HttpSettings {
    /// The one shape of results written before shapes existed.
    pub fn legacy_shape(&self) -> &'static str {
        legacy_shape_name(self.keep_alive)
    }

    /// A shape of this session by name.
    pub fn shape(&self, name: &str) -> Option<&HttpShape> {
        self.shapes.iter().find(|s| s.name.as_str() == name)
    }
}

/// The name a shape gets when `[http]` declares no shapes: its `keep_alive` says which.
pub fn legacy_shape_name(keep_alive: bool) -> &'static str {
    if keep_alive {
        "keep-alive"
    } else {
        "no-keep-alive"
    }
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

/// The `http` suite: servers under the load generators of `[http] tools`.
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
    #[serde(serialize_with = "crate::write::current_version")]
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A load report as results written before `argv` and the effective counts existed.
    const OLDER: &str = r#"{"tool":"wrk","version":"wrk 4.1.0","duration_s":1.1,"requests":10,"errors":{},"non_2xx":0,"rps":9.0,"latency_ms":{"p50":0.1,"p90":0.2,"p99":0.3,"p99_9":0.4,"max":0.5}}"#;

    #[test]
    fn an_older_load_report_reads_and_writes_back_unchanged() {
        let r: LoadReport = serde_json::from_str(OLDER).expect("older report");
        assert!(r.argv.is_empty() && r.connections.is_none() && r.keep_alive.is_none());
        assert_eq!(serde_json::to_string(&r).expect("json"), OLDER);
    }

    #[test]
    fn what_ran_is_written_when_known() {
        let r = LoadReport {
            tool: "ab".into(),
            argv: vec!["/usr/bin/ab".into(), "-k".into()],
            connections: Some(4),
            keep_alive: Some(false),
            keep_alive_requests: Some(3),
            request_cap_hit: Some(false),
            ..LoadReport::default()
        };
        let json = serde_json::to_value(&r).expect("json");
        assert_eq!(json["argv"][1], "-k");
        assert_eq!(json["connections"], 4);
        assert!(json.get("threads").is_none(), "{json}");
        assert_eq!(json["keep_alive"], false);
        assert_eq!(json["keep_alive_requests"], 3);
        assert_eq!(json["request_cap_hit"], false);
        let back: LoadReport = serde_json::from_value(json).expect("back");
        assert_eq!(back, r);
    }
}
