//! `cell gate`: a run against the committed history.

use std::io::Write as _;
use std::path::PathBuf;

use anyhow::Context as _;
use cell_report::gate::{annotations, human, step_summary};
use cell_schema::GateReport;
use cell_schema::store;
use cell_verdict::GateConfig;
use clap::Args;

use crate::cli::{Cli, Format};
use crate::exit::Exit;

/// `cell gate RUN_DIR [--history DIR]`.
#[derive(Debug, Args)]
pub struct GateArgs {
    /// The run directory to judge (`results/<date>-<run-id>`).
    pub run_dir: PathBuf,
    /// The committed history (default: the run directory's parent).
    #[arg(long)]
    pub history: Option<PathBuf>,
    /// Compare against this run (`<date>-<run-id>`) instead of the newest (overrides BASELINE).
    #[arg(long)]
    pub baseline: Option<String>,
    /// Read the thresholds (versions.env, cell/) from this commit instead of the work tree:
    /// the collect job passes the run's own commit, which the branch tip may have moved past.
    /// Recorded in gate.json.
    #[arg(long, value_name = "REV")]
    pub config_rev: Option<String>,
    /// Accept runs of the scripted test executor (the test suite's; never a measurement).
    #[arg(long, hide = true)]
    pub allow_scripted: bool,
    /// Read the whole history and refuse it when any file cannot be read or holds impossible
    /// values (by default the gate reads only the runs it needs, newest first, and a bad file
    /// it reads is a notice, and an error only when it is the baseline).
    #[arg(long)]
    pub strict: bool,
}

/// Runs `cell gate`.
pub fn run(args: &GateArgs, cli: &Cli) -> anyhow::Result<Exit> {
    let scratch = tempfile::tempdir().context("creating a scratch directory")?;
    let plan = match &args.config_rev {
        Some(rev) => super::load_plan_at(cli, rev, scratch.path())?,
        None => super::load_plan(cli)?,
    };
    let run_dir = std::path::absolute(&args.run_dir).context("resolving the run directory")?;
    let run = store::load_run(&run_dir)?;
    anyhow::ensure!(
        !run.imported(),
        "{}: an imported run (cell import): another tool's history is a baseline, not a run to judge; gate a measured run against it with --baseline {}",
        run_dir.display(),
        run.name
    );
    anyhow::ensure!(
        !run.cells.is_empty(),
        "{}: no <cell-id>/results.json under it: is it a run directory?",
        run_dir.display()
    );
    let history_dir = args.history.clone().unwrap_or_else(|| {
        run_dir
            .parent()
            .map_or_else(|| PathBuf::from("."), PathBuf::from)
    });
    let mut cfg = GateConfig::from_plan(&plan, args.baseline.clone(), run.cells.keys());
    cfg.allow_scripted = args.allow_scripted;
    // The runs the verdict needs, newest first; --strict reads every file to refuse any bad
    // one.
    let history = if args.strict {
        super::load_history(&history_dir, true)?
    } else {
        super::needed_history(&history_dir, &run, &cfg)?
    };
    let mut report = cell_verdict::gate_history(&run, &history, &cfg)?;
    report.config_rev.clone_from(&args.config_rev);
    store::write_gate(&run_dir, &report).context("writing gate.json")?;
    print_report(&report, cli)?;
    // The collect job's summary also carries every row against every cell of the run.
    let cells: Vec<&cell_schema::CellResult> =
        run.cells.values().filter(|c| !c.jobs.is_empty()).collect();
    if let Some(path) = step_summary_file()
        && !cells.is_empty()
    {
        let c =
            cell_report::compare::comparison(&run.name.to_string(), &cells, run.record.as_ref());
        append(&path, &cell_report::compare::markdown(&c))?;
    }
    Ok(if report.exit == 0 {
        Exit::Ok
    } else {
        Exit::Gate
    })
}

/// The report on stdout (lines or JSON), annotations under GitHub Actions, and the step
/// summary when the runner gives one: what `cell gate` and `cell local` both print.
pub fn print_report(report: &GateReport, cli: &Cli) -> anyhow::Result<()> {
    match cli.format {
        Format::Json => print!("{}", cell_schema::to_json(report)),
        Format::Human => print!("{}", cell_schema::escape::terminal(&human(report))),
    }
    if std::env::var("GITHUB_ACTIONS").as_deref() == Ok("true") {
        print!("{}", annotations(report, 10));
    }
    match step_summary_file() {
        Some(path) => append(&path, &step_summary(report, 1 << 20)),
        None => Ok(()),
    }
}

/// The runner's step summary file, when there is one.
fn step_summary_file() -> Option<PathBuf> {
    std::env::var_os("GITHUB_STEP_SUMMARY")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
}

fn append(path: &std::path::Path, text: &str) -> anyhow::Result<()> {
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .context("opening $GITHUB_STEP_SUMMARY")?;
    f.write_all(text.as_bytes())
        .context("writing $GITHUB_STEP_SUMMARY")
}
