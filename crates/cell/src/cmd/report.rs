//! `cell report`: the committed history → `index.html`, `README.md`, SVG charts,
//! `samples.csv` and `report.json` under one folder.

use std::path::PathBuf;

use anyhow::Context as _;
use cell_report::report::{self, Report};
use clap::Args;

use crate::cli::{Cli, Format};
use crate::exit::Exit;

/// `cell report [--history DIR] [--out DIR]`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// The committed history: `<DIR>/<YYYY-MM-DD>-<run-id>/<cell-id>/results.json`.
    #[arg(long, value_name = "DIR", default_value = "results")]
    pub history: PathBuf,
    /// Where the report is written (created if missing; files of the same name replaced).
    #[arg(long, value_name = "DIR", default_value = "report")]
    pub out: PathBuf,
    /// Refuse a history with any file that cannot be read or holds impossible values (by
    /// default such a file is left out of the report and named in a notice).
    #[arg(long)]
    pub strict: bool,
}

/// Runs `cell report`.
pub fn run(args: &ReportArgs, cli: &Cli) -> anyhow::Result<Exit> {
    let history = super::load_history(&args.history, args.strict)?;
    let runs = history.runs;
    let cells: usize = runs.iter().map(|r| r.cells.len()).sum();
    if cells == 0 {
        let why = if !history.skipped.is_empty() {
            "holds no cell result that can be used (every one was skipped, see the notices above)"
        } else if args.history.exists() {
            "holds no run with a cell result"
        } else {
            "does not exist"
        };
        anyhow::bail!(
            "{} {why}: a report needs <DIR>/<YYYY-MM-DD>-<run-id>/<cell-id>/results.json \
             (write one with `cell collect` or `cell local --out {}`), or pass --history DIR",
            args.history.display(),
            args.history.display()
        );
    }
    let report = Report::build(&runs);
    let written = report::write(&report, &args.out).context("writing the report")?;
    match cli.format {
        Format::Json => print!("{}", cell_schema::to_json(&report)),
        Format::Human => {
            for path in &written {
                println!("{}", path.display());
            }
        }
    }
    if !cli.quiet {
        eprintln!(
            "report of {} run(s), {} cell(s): {}",
            report.runs.len(),
            report.cells.len(),
            args.out.join(report::INDEX_HTML).display()
        );
    }
    Ok(Exit::Ok)
}
