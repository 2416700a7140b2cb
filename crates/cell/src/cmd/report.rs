//! `cell report`: the committed history → `index.html`, `README.md`, SVG charts,
//! `samples.csv` and `report.json` under one folder.

use std::path::PathBuf;

use anyhow::Context as _;
use cell_report::report::{self, Report};
use cell_schema::store::load_history;
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
}

/// Runs `cell report`.
pub fn run(args: &ReportArgs, cli: &Cli) -> anyhow::Result<Exit> {
    let runs = load_history(&args.history).context("reading the history")?;
    let cells: usize = runs.iter().map(|r| r.cells.len()).sum();
    if cells == 0 {
        let why = if args.history.exists() {
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
