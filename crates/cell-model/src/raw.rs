//! `cell/cell.toml` as written: syntax only. Unknown keys are errors.

use std::collections::BTreeMap;

use serde::Deserialize;

/// The whole file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawConfig {
    /// Directory of the workload sources, relative to the project root.
    #[serde(default = "default_workload")]
    pub workload: String,
    /// Expected stdout per phase (without the trailing newline).
    pub expect: BTreeMap<String, String>,
    /// The positive control.
    pub tooth: RawTooth,
    /// Runner labels.
    #[serde(default)]
    pub cells: BTreeMap<String, RawCell>,
    /// What a job installs.
    pub toolchains: BTreeMap<String, RawToolchain>,
    /// `[rows.<name>]`: what is built and how it is run.
    pub rows: BTreeMap<String, RawRow>,
    /// Generated files a user may edit by hand (`"workflow"`).
    #[serde(default)]
    pub allow_dirty: Vec<String>,
    /// When the generated workflow runs.
    #[serde(default)]
    pub workflow: RawWorkflow,
    /// The http suite.
    pub http: Option<RawHttp>,
    /// The soak suite.
    pub soak: Option<RawSoak>,
}

fn default_workload() -> String {
    "bench/workload".to_owned()
}

/// `[workflow]`: the triggers of the generated `.github/workflows/cell.yml`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawWorkflow {
    /// Cron lines of the `schedule` trigger (none: no schedule).
    #[serde(default)]
    pub schedule: Vec<String>,
    /// Branches of the `push` trigger (none: every branch).
    #[serde(default)]
    pub branches: Vec<String>,
    /// Paths of the `push` trigger (none: no push trigger).
    #[serde(default)]
    pub paths: Vec<String>,
    /// `versions.env` key of the Rust that builds cell on a runner (default `RUST_VERSION`).
    pub rust: Option<String>,
    /// The branch collect commits `results/` to, instead of the checked-out one.
    pub results_branch: Option<String>,
    /// Which cell the jobs run: `"source"`, `{ version, url? }` or `{ git, rev }` (told
    /// apart, and every key checked, when resolved: the error then names the key).
    pub cell: Option<toml::Value>,
    /// Also write `.github/workflows/release.yml` (cell's own repository).
    #[serde(default)]
    pub release: bool,
    /// `[workflow.pull_requests]`: the PR workflow and its reporter.
    pub pull_requests: Option<crate::pull_requests::RawPullRequests>,
}

/// `[tooth]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawTooth {
    /// The slow row.
    pub slow: String,
    /// The fast row.
    pub fast: String,
}

/// `[cells.<label>]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawCell {
    /// `linux`, `macos`; taken from the runner table when omitted.
    pub os: Option<String>,
    /// `x86_64`, `aarch64`; taken from the runner table when omitted.
    pub arch: Option<String>,
}

/// `[toolchains.<name>]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawToolchain {
    /// How a job installs it.
    pub install: RawInstall,
    /// The programs it provides, by name.
    pub tools: BTreeMap<String, RawTool>,
    /// What to run on a machine where it is missing.
    pub hint: Option<String>,
    /// More `versions.env` keys to record as this toolchain's pins.
    #[serde(default)]
    pub pins: Vec<String>,
    /// The release under test: installed, verified and recorded by every job.
    #[serde(default)]
    pub subject: bool,
}

/// How a job installs a toolchain.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub enum RawInstall {
    /// A Debian/Ubuntu package.
    Apt {
        /// The Debian/Ubuntu package.
        package: String,
        /// `versions.env` key holding the package version, if pinned.
        version: Option<String>,
    },
    /// A setup action pinned by SHA in the workflow.
    Setup {
        /// `owner/repo`.
        action: String,
        /// The action's input that takes the version.
        input: String,
        /// `versions.env` key holding the version.
        version: String,
    },
    /// A release tarball, downloaded, verified before unpacking and unpacked by `cell`.
    Tarball {
        /// `versions.env` key of the URL, looked up per platform (`<KEY>_<OS>_<ARCH>`, then
        /// `<KEY>_<ARCH>` on Linux, then `<KEY>`).
        url: Option<String>,
        /// The URL as a template of `{version}`, `{os}` and `{arch}`, instead of a key.
        template: Option<String>,
        /// How the project spells our OS and architecture names: `{ macos = "darwin" }`.
        #[serde(default)]
        spell: BTreeMap<String, String>,
        /// `versions.env` key of the SHA-256, looked up per platform like the URL.
        sha256: Option<String>,
        /// The published checksum file's URL template (`{url}.sha256`).
        checksum: Option<String>,
        /// `versions.env` key of the version, if any.
        version: Option<String>,
        /// The release tag, a template (default: the version).
        tag: Option<String>,
        /// Leading path components to strip when unpacking.
        #[serde(default)]
        strip: u32,
        /// Mirror URL prefixes, tried in order before the URL itself; the archive's file name
        /// is appended to each, and the pinned digest is checked on whichever answers.
        #[serde(default)]
        mirrors: Vec<String>,
    },
    /// Already on the runner image.
    Preinstalled {},
}

/// `[toolchains.<name>.tools.<tool>]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawTool {
    /// The program to look up on PATH; the tool's name when omitted.
    pub program: Option<String>,
    /// Arguments that make it print its version.
    pub version: Vec<String>,
}

/// `[rows.<name>]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawRow {
    /// The toolchain that builds it.
    pub toolchain: String,
    /// A human label.
    pub label: String,
    /// Source directory, relative to `workload`.
    pub source: String,
    /// Build argv template.
    pub build: Vec<String>,
    /// Run argv template.
    pub run: Vec<String>,
    /// Verdict clock for this row (`cpu`, `wall` or `user`).
    pub clock: Option<String>,
}

/// `[http]`: servers under a load generator.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawHttp {
    /// Directory of the server sources, relative to the project root.
    #[serde(default = "default_http_source")]
    pub source: String,
    /// Load generators, in the order each round runs them (`wrk`, `oha`).
    pub tools: Option<Vec<String>>,
    /// Open connections.
    pub connections: Option<u32>,
    /// Load generator threads, for the tools that take a count (the load tool table says).
    pub threads: Option<u32>,
    /// Seconds of each measured run.
    pub duration: Option<f64>,
    /// Seconds of load before each measured run.
    pub warmup: Option<f64>,
    /// Measured runs per server and tool.
    pub runs: Option<u32>,
    /// Keep connections alive.
    pub keep_alive: Option<bool>,
    /// Seconds a server may take to answer its first 200.
    pub startup_timeout: Option<f64>,
    /// Seconds between SIGTERM and SIGKILL.
    pub stop_grace: Option<f64>,
    /// Seconds to wait at most for `TIME_WAIT` sockets on the port to drain before a run.
    pub drain_timeout: Option<f64>,
    /// `versions.env` key of the oha version a workflow installs.
    pub oha: Option<String>,
    /// The CPUs servers and load generators are pinned to (both lists or neither).
    pub cpus: Option<RawCpus>,
    /// What every server must answer to `GET /` when no `[[http.workloads]]` are written.
    pub expect: Option<RawExpect>,
    /// `fresh`, `same-process` or `sustained`.
    pub mode: Option<String>,
    /// Seconds of the one run of each combination in the sustained mode.
    pub sustained_duration: Option<f64>,
    /// `[[http.workloads]]`: the requests measured.
    pub workloads: Option<Vec<RawWorkload>>,
    /// `[[http.shapes]]`: the connection shapes measured.
    pub shapes: Option<Vec<RawShape>>,
    /// `[http.default]`: the part of the matrix a session runs without `--full`.
    pub default: Option<RawHttpSession>,
    /// `[http.servers.<name>]`: the servers under test.
    #[serde(default)]
    pub servers: BTreeMap<String, RawServer>,
}

fn default_http_source() -> String {
    "bench/http".to_owned()
}

/// `[http] cpus = { server = [2, 3], load = [0, 1] }`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawCpus {
    /// The servers' CPUs.
    pub server: Option<Vec<u32>>,
    /// The load generators' CPUs.
    pub load: Option<Vec<u32>>,
}

/// An expected response.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawExpect {
    /// Status code.
    pub status: Option<u16>,
    /// Headers that must be present with exactly this value (names case-insensitive).
    pub headers: Option<BTreeMap<String, String>>,
    /// The body, byte for byte.
    pub body: Option<String>,
    /// The body as a JSON value, compared structurally (instead of `body`).
    pub json: Option<toml::Value>,
}

/// `[[http.workloads]]`: one request and what answers it.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawWorkload {
    /// Its name (`plaintext`, `post-json`).
    pub name: String,
    /// The method (default `GET`).
    pub method: Option<String>,
    /// The path, from `/`.
    pub path: String,
    /// Request headers.
    pub headers: Option<BTreeMap<String, String>>,
    /// The request body.
    pub body: Option<String>,
    /// What a server must answer.
    pub expect: RawExpect,
}

/// `[[http.shapes]]`: how the load tool holds its connections.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawShape {
    /// Its name (`keep-alive`, `one-conn`).
    pub name: String,
    /// Connections held open at once.
    pub connections: u32,
    /// Reuse connections.
    pub keep_alive: bool,
    /// Load generator threads, for the tools that take a count (default `[http] threads`).
    pub threads: Option<u32>,
}

/// `[http.default]`: what a session without `--full` runs.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawHttpSession {
    /// Servers, by name (default: all of them).
    pub servers: Option<Vec<String>>,
    /// Load tools.
    pub tools: Option<Vec<String>>,
    /// Shapes, by name.
    pub shapes: Option<Vec<String>>,
    /// Workloads, by name.
    pub workloads: Option<Vec<String>>,
    /// Measured runs per combination.
    pub runs: Option<u32>,
    /// Seconds per measured run.
    pub duration: Option<f64>,
    /// Seconds of warm-up.
    pub warmup: Option<f64>,
}

/// `[http.servers.<name>]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawServer {
    /// The toolchain that builds or runs it.
    pub toolchain: String,
    /// A human label.
    pub label: Option<String>,
    /// Source directory, relative to `[http] source`.
    pub source: String,
    /// Build argv template (none: nothing to build).
    pub build: Option<Vec<String>>,
    /// Run argv template; must name `{port}`.
    pub run: Vec<String>,
    /// The port it listens on (loopback).
    pub port: u16,
    /// Overrides of `[http.expect]` (only without `[[http.workloads]]`).
    pub expect: Option<RawExpect>,
    /// The workloads it serves (default: all of them).
    pub workloads: Option<Vec<String>>,
    /// It keeps connections alive (default true); false for a server that closes every
    /// connection after one response whatever the client asks.
    pub keep_alive: Option<bool>,
    /// How it serves concurrent connections (`event-loop`, `thread-per-connection`, ...).
    pub model: Option<String>,
}

/// `[soak]`: a fixed request rate for a long window.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawSoak {
    /// Servers soaked (default: every http server).
    pub servers: Option<Vec<String>>,
    /// Offered requests per second.
    pub rate: Option<u32>,
    /// Open connections.
    pub connections: Option<u32>,
    /// Seconds of load.
    pub duration: Option<f64>,
    /// Seconds between samples.
    pub interval: Option<f64>,
    /// Seconds into the load where the fit starts.
    pub window_start: Option<f64>,
    /// Seconds per window of the minima fit.
    pub minima_window: Option<f64>,
    /// Projected move, as a share of the window mean, that counts as drift.
    pub drift_share: Option<f64>,
    /// R² at or above which a move counts.
    pub min_r2: Option<f64>,
    /// A drift fails the gate.
    pub fail_on_drift: Option<bool>,
    /// Keep connections alive (false: a new connection per request, connection churn).
    pub keep_alive: Option<bool>,
}
