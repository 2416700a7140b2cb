//! `cell report`: the committed history → `index.html`, `README.md`, SVG charts, the CSV
//! files and `report.json` under one folder; over each cell's newest runs unless told
//! otherwise, and `samples.csv` only when asked for; a dashboard's input (`--export FORMAT
//! FILE`) where the user says.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use cell_report::report::{self, ExportFile, ExportFormat, Report, ReportOptions};
use cell_schema::escape;
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
    /// How much of the history the report carries.
    #[command(flatten)]
    pub window: WindowArgs,
    /// Also write a dashboard's input, of the newest run that timed workload jobs: FORMAT
    /// `bmf` (Bencher Metric Format, one cell per file) or `github-action-benchmark` (its
    /// customSmallerIsBetter JSON). `{cell}` in FILE writes one file per cell; `-` is stdout.
    /// Repeatable.
    #[arg(
        long,
        num_args = 2,
        value_names = ["FORMAT", "FILE"],
        action = clap::ArgAction::Append
    )]
    pub export: Vec<String>,
}

/// The report's window and its samples, for `cell report` and `cell local`.
#[derive(Debug, Default, Args)]
pub struct WindowArgs {
    /// report: charts, tables and CSV files carry each cell's newest N runs [default: 100].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub last: Option<u32>,
    /// report: charts, tables and CSV files carry every run of the history.
    #[arg(long, conflicts_with = "last")]
    pub all_runs: bool,
    /// report: also write samples.csv, every timed process of the runs the report carries.
    #[arg(long)]
    pub samples: bool,
}

impl WindowArgs {
    /// The options the report is built with.
    pub fn options(&self) -> ReportOptions {
        let default = ReportOptions::default();
        ReportOptions {
            last: if self.all_runs {
                None
            } else {
                self.last
                    .and_then(|n| std::num::NonZeroUsize::new(usize::try_from(n).ok()?))
                    .or(default.last)
            },
            samples: self.samples,
        }
    }
}

/// Runs `cell report`.
pub fn run(args: &ReportArgs, cli: &Cli) -> anyhow::Result<Exit> {
    if args.window.samples && inside(&args.out, &args.history) {
        anyhow::bail!(
            "--samples: samples.csv is never written inside the history ({}), which is \
             committed: pass an --out outside it",
            shown(&args.history)
        );
    }
    let exports = parse_exports(&args.export)?;
    let to_stdout = exports.iter().any(|(_, file)| file == STDOUT);
    if to_stdout && cli.format == Format::Json {
        anyhow::bail!(
            "--export … -: stdout carries the report's JSON with --format json; name a FILE"
        );
    }
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
            shown(&args.history),
            shown(&args.history)
        );
    }
    let report = Report::build(&runs, &args.window.options());
    // Every export is made before anything is written: one that cannot be is exit 2, and
    // nothing written.
    let exports = export_files(&report, &exports)?;
    let mut written = report::write(&report, &args.out).context("writing the report")?;
    for f in &exports {
        if f.path == STDOUT {
            print!("{}", String::from_utf8_lossy(&f.bytes));
        } else {
            let path = Path::new(&f.path);
            cell_schema::write_atomic(path, &f.bytes)
                .with_context(|| format!("writing {}", shown(path)))?;
            written.push(path.to_path_buf());
        }
    }
    match cli.format {
        Format::Json => print!("{}", cell_schema::to_json(&report)),
        // Stdout is the export's alone.
        Format::Human if to_stdout => {}
        Format::Human => {
            for path in &written {
                println!("{}", escape::terminal(&shown(path)));
            }
        }
    }
    if !cli.quiet {
        eprintln!(
            "report of {} run(s), {} cell(s): {}",
            report.runs.len(),
            report.cells.len(),
            escape::terminal(&shown(&args.out.join(report::INDEX_HTML)))
        );
    }
    Ok(Exit::Ok)
}

/// FILE `-`: the export goes to stdout.
const STDOUT: &str = "-";

/// A path the user named, as a message shows it: on one line. What is printed directly also
/// goes through [`escape::terminal`]; an error gets it in `main`.
fn shown(path: &Path) -> String {
    escape::one_line(&path.display().to_string())
}

/// `--export FORMAT FILE …` as pairs, each format known.
fn parse_exports(values: &[String]) -> anyhow::Result<Vec<(ExportFormat, String)>> {
    values
        .chunks(2)
        .map(|pair| {
            let [format, file] = pair else {
                anyhow::bail!("--export takes two values, FORMAT and FILE");
            };
            let known = ExportFormat::parse(format).with_context(|| {
                let names: Vec<&str> = ExportFormat::ALL.iter().map(|f| f.name()).collect();
                format!(
                    "--export {}: unknown format; use one of {}",
                    escape::one_line(format),
                    names.join(", ")
                )
            })?;
            Ok((known, file.clone()))
        })
        .collect()
}

/// The files of every `--export`, their notices on stderr (once). Two exports of one path,
/// or two to stdout, are refused.
fn export_files(
    report: &Report,
    exports: &[(ExportFormat, String)],
) -> anyhow::Result<Vec<ExportFile>> {
    if exports.is_empty() {
        return Ok(Vec::new());
    }
    for line in report::measurements(report, None).left_out {
        eprintln!("notice: export: {}", cell_schema::escape::terminal(&line));
    }
    let mut files: Vec<ExportFile> = Vec::new();
    for (format, file) in exports {
        for f in report::export_files(report, *format, file)? {
            if files.iter().any(|g| g.path == f.path) {
                anyhow::bail!(
                    "--export: {} would be written twice; give each export its own FILE",
                    if f.path == STDOUT {
                        "stdout".to_owned()
                    } else {
                        escape::one_line(&f.path)
                    }
                );
            }
            files.push(f);
        }
    }
    Ok(files)
}

/// Whether `path` is `dir` or lies under it, read lexically (both made absolute, `..`
/// resolved; neither needs to exist).
fn inside(path: &std::path::Path, dir: &std::path::Path) -> bool {
    let lexical = |p: &std::path::Path| -> Option<PathBuf> {
        let mut out = PathBuf::new();
        for c in std::path::absolute(p).ok()?.components() {
            match c {
                std::path::Component::CurDir => {}
                std::path::Component::ParentDir => {
                    out.pop();
                }
                c => out.push(c),
            }
        }
        Some(out)
    };
    match (lexical(path), lexical(dir)) {
        (Some(p), Some(d)) => p.starts_with(d),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_out_inside_the_history_is_seen_through_dots() {
        let p = std::path::Path::new;
        assert!(inside(p("results"), p("results")));
        assert!(inside(p("results/report"), p("./results")));
        assert!(inside(p("x/../results/report"), p("results")));
        assert!(!inside(p("results/../report"), p("results")));
        assert!(!inside(p("results-report"), p("results")));
        assert!(!inside(p("report"), p("results")));
    }
}
