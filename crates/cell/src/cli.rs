//! Command-line arguments (clap derive). Usage errors exit 2, as clap does by default.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// What `cell --version` and `cell -V` print after `cell `: the version and the commit it was
/// built from, `0.1.0 (commit 1a2b3c4d5e6f, 2026-12-05)` (src/commit.rs, build.rs).
const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), " (", env!("CELL_COMMIT"), ")");

/// Reproducible cross-toolchain benchmarks: how fast is a toolchain's output against clang -O2.
#[derive(Debug, Parser)]
#[command(name = "cell", version = VERSION, about, long_about = None)]
pub struct Cli {
    /// Project root holding versions.env and cell/cell.toml.
    #[arg(long, global = true, env = "CELL_ROOT", default_value = ".")]
    pub root: PathBuf,
    /// Output format of the result on stdout.
    #[arg(long, global = true, value_enum, default_value_t = Format::Human)]
    pub format: Format,
    /// Print less (progress and notes off).
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    pub quiet: bool,
    /// Print more (every command run).
    #[arg(short, long, global = true)]
    pub verbose: bool,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Output formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Tables for people.
    Human,
    /// JSON for programs.
    Json,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run one job: build the toolchain's rows and the reference, time them, write the job dir.
    Run(RunArgs),
    /// Run every job this machine can run, merged into one run dir.
    Local(LocalArgs),
    /// Download an archive, verify its SHA-256, then unpack it.
    Fetch(crate::cmd::fetch::FetchArgs),
    /// Install a tarball toolchain for a cell: verified before unpacking, cached by digest.
    Install(crate::cmd::install::InstallArgs),
    /// Start a benchmark repository: cell/cell.toml, versions.env, a starter workload with its
    /// answers, the workflow and a README section (refuses to overwrite without --force).
    Init(crate::cmd::init::InitArgs),
    /// Print the JSON Schema of results.json (or facts.json).
    Schema(SchemaArgs),
    /// Write .github/workflows/cell.yml from versions.env and cell/cell.toml (--check: compare;
    /// --matrix: print a run's job matrix).
    Plan(crate::cmd::plan::PlanArgs),
    /// Download a run's artifacts, merge them into results/<date>-<run-id>/, commit and push.
    Collect(crate::cmd::collect::CollectArgs),
    /// Judge a pull request run's `cell-pr` artifact against the default branch's history and
    /// report it: one marked comment on the pull request and a check run `cell` on its head.
    Comment(crate::cmd::comment::CommentArgs),
    /// Write pr.json, the pull request a `pull_request` run measured (its `pr` job).
    PrJson(crate::cmd::comment::PrJsonArgs),
    /// Commit a run dir (with its gate.json) and push it, rebasing and retrying.
    Commit(crate::cmd::commit::CommitArgs),
    /// Check out the branch that keeps results/ (created when new) into a work tree.
    ResultsBranch(crate::cmd::commit::ResultsBranchArgs),
    /// Write the comparison pages from the committed history: index.html, README.md, SVG
    /// charts, CSV files and report.json (each cell's newest 100 runs unless told otherwise;
    /// samples.csv with --samples; Bencher's or github-action-benchmark's JSON with --export).
    Report(crate::cmd::report::ReportArgs),
    /// Judge a run against the committed history: PASS / FAIL / INCONCLUSIVE per row and phase.
    Gate(crate::cmd::gate::GateArgs),
    /// Measure this machine's A/A noise (reference against its copy) per phase and clock.
    Calibrate(crate::cmd::calibrate::CalibrateArgs),
    /// Import the Python cell's committed history into results/ (each cell marked imported),
    /// or print its versions.env in this tool's keys (--versions-env).
    Import(crate::cmd::import::ImportArgs),
}

/// `cell run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Cell label from cell/cell.toml, or `local`.
    #[arg(long)]
    pub cell: String,
    /// Toolchain name from cell/cell.toml (the workload suite).
    #[arg(long)]
    pub toolchain: Option<String>,
    /// Suite of this job.
    #[arg(long, value_enum, default_value_t = Suite::Workload)]
    pub suite: Suite,
    /// Server of [http.servers] (the http and soak suites).
    #[arg(long, required_if_eq_any([("suite", "http"), ("suite", "soak")]))]
    pub server: Option<String>,
    /// Changes to [http] and [soak] for this job.
    #[command(flatten)]
    pub suite_flags: SuiteFlags,
    /// Job directory to write.
    #[arg(long, default_value = "cell-job")]
    pub out: PathBuf,
    /// Measured rounds (fixed); without it the adaptive budget decides.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub reps: Option<u32>,
    /// Seed of the per-round order (default: from the clock; always recorded).
    #[arg(long)]
    pub seed: Option<u64>,
    /// The committed history whose baseline the gate will use: each row's rounds stop once
    /// its verdict against it is settled (default: results/ under --root, unless the
    /// repository keeps its results on a branch of their own).
    #[arg(long, value_name = "DIR")]
    pub history: Option<PathBuf>,
    /// Timings from this file instead of timed processes (the test suite's executor; the
    /// results are marked scripted and refused as history).
    #[arg(long, hide = true, value_name = "FILE")]
    pub scripted_timings: Option<PathBuf>,
}

/// `cell local`.
#[derive(Debug, Args)]
pub struct LocalArgs {
    /// Toolchains to run, comma-separated (default: all).
    #[arg(long, value_delimiter = ',')]
    pub toolchains: Vec<String>,
    /// Measured rounds (fixed); without it the adaptive budget decides.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub reps: Option<u32>,
    /// Where run dirs are written.
    #[arg(long, default_value = "cell-local")]
    pub out: PathBuf,
    /// Seed of the per-round order (default: from the clock; always recorded).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Suite to run.
    #[arg(long, value_enum, default_value_t = Suite::Workload)]
    pub suite: Suite,
    /// Servers of the http or soak suite, comma-separated (default: every one installable).
    #[arg(long, value_delimiter = ',')]
    pub servers: Vec<String>,
    /// Changes to [http] and [soak] for this run.
    #[command(flatten)]
    pub suite_flags: SuiteFlags,
    /// The report's window and its samples, as `cell report` takes them.
    #[command(flatten)]
    pub report: crate::cmd::report::WindowArgs,
    /// Timings from this file instead of timed processes (the test suite's executor; the
    /// results are marked scripted and refused as history).
    #[arg(long, hide = true, value_name = "FILE")]
    pub scripted_timings: Option<PathBuf>,
}

/// Suites.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Suite {
    /// The CPU workload: ratios against the reference.
    Workload,
    /// HTTP servers under load: req/s, p99, CPU ms per 1k requests, peak RSS.
    Http,
    /// A fixed request rate for a long window: RSS slope, R², flat or drifted.
    Soak,
}

/// Changes to `[http]` and `[soak]` of cell/cell.toml for one run (CI soaks for minutes,
/// tests for seconds); what ran is recorded in the results.
#[derive(Debug, Default, Args)]
pub struct SuiteFlags {
    /// http: measured runs per server and tool.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub runs: Option<u32>,
    /// http: seconds per measured run; soak: seconds of load.
    #[arg(long)]
    pub duration: Option<f64>,
    /// http: seconds of warm-up load before each measured run.
    #[arg(long)]
    pub warmup: Option<f64>,
    /// http: load generators, comma-separated (wrk, oha, ab).
    #[arg(long, value_delimiter = ',')]
    pub tools: Vec<String>,
    /// http: the whole matrix of cell/cell.toml rather than its `[http.default]`.
    #[arg(long)]
    pub full: bool,
    /// http: fresh (a fresh server per run), same-process (one server process for every
    /// run) or sustained (one long run per combination).
    #[arg(long, value_parser = parse_mode)]
    pub mode: Option<cell_schema::HttpMode>,
    /// http: workloads, comma-separated (plaintext, json, route, post-json).
    #[arg(long, value_delimiter = ',')]
    pub workloads: Vec<String>,
    /// http: connection shapes, comma-separated (keep-alive, one-conn).
    #[arg(long, value_delimiter = ',')]
    pub shapes: Vec<String>,
    /// http: connections of every keep-alive shape.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub connections: Option<u32>,
    /// http: wrk threads (the connections each thread really holds are recorded).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub threads: Option<u32>,
    /// soak: requests per second.
    #[arg(long)]
    pub rate: Option<u32>,
    /// soak: seconds into the load where the fit starts.
    #[arg(long)]
    pub window_start: Option<f64>,
    /// soak: seconds between samples.
    #[arg(long)]
    pub interval: Option<f64>,
    /// soak: seconds per window of the minima fit.
    #[arg(long)]
    pub minima_window: Option<f64>,
    /// soak: a new connection per request (connection churn) instead of kept-alive ones.
    #[arg(long)]
    pub no_keep_alive: bool,
    /// http and soak: CPUs of the servers, comma-separated (with --load-cpus; default: one).
    #[arg(long, value_delimiter = ',', value_name = "CPUS")]
    pub server_cpus: Vec<u32>,
    /// http and soak: CPUs of the load generators, comma-separated (with --server-cpus).
    #[arg(long, value_delimiter = ',', value_name = "CPUS")]
    pub load_cpus: Vec<u32>,
}

fn parse_mode(s: &str) -> Result<cell_schema::HttpMode, String> {
    cell_model::parse_mode(s)
}

/// `cell schema`.
#[derive(Debug, Args)]
pub struct SchemaArgs {
    /// Which file's schema.
    #[arg(value_enum, default_value_t = SchemaKind::Results)]
    pub kind: SchemaKind,
    /// The schema version: the one this build writes (default), or 1, which it still reads
    /// (results.json only: the other files did not change shape).
    #[arg(long, value_name = "N")]
    pub schema_version: Option<u32>,
}

/// Schema kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum SchemaKind {
    /// results.json (job or cell).
    Results,
    /// facts.json.
    Facts,
    /// gate.json.
    Gate,
    /// imported-soak.json (an imported soak of another tool's history).
    ImportedSoak,
    /// pr.json (the pull request a `pull_request` run measured).
    Pr,
}
