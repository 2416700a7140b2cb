//! What a dashboard gets of a report (`cell report --export FORMAT FILE`): the figures of one
//! run, the newest that timed workload jobs — the run a CI job has just collected, so each push
//! adds one point and an older run is never sent again.
//!
//! This module is the one home of which run, which rows and which figures; each format's file
//! is an [`Exporter`] of its own ([`BmfExporter`], [`GithubActionBenchmarkExporter`]), and
//! [`export_files`] says which files one `--export` writes. Every figure is the model's
//! ([`Point`]): nothing is recomputed here.
//!
//! A row and phase is exported when the run measured it with the right answer, its ratio and
//! interval are finite, and its cell, row, phase, reference and job are safe identifiers
//! ([`is_safe_id`](cell_schema::ids::is_safe_id)), so no text but this module's own and no
//! character outside `[A-Za-z0-9._+-]` reaches a name. Everything else is one line of
//! [`Measurements::left_out`], which `cell report` prints as a notice.

use std::collections::BTreeSet;

use cell_schema::escape;
use cell_schema::ids::is_safe_id;
use cell_schema::{CellId, Phase, RowName};

use super::model::{Point, Report};
use super::{BmfExporter, Exporter, GithubActionBenchmarkExporter};

/// One row's figures on one phase of one cell, in the exported run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Measurement<'a> {
    /// The cell (a Bencher testbed).
    pub cell: &'a CellId,
    /// The row.
    pub row: &'a RowName,
    /// The phase.
    pub phase: &'a Phase,
    /// The reference its ratio divides by.
    pub reference: &'a RowName,
    /// The model's point of the exported run: ratio, interval, clock, job.
    pub point: &'a Point,
    /// The row's median seconds on its verdict clock, when recorded and finite.
    pub seconds: Option<f64>,
}

/// What a dashboard gets of a report, and what it does not.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Measurements<'a> {
    /// The exported run's directory name; `None` when no run of the history timed workload
    /// jobs.
    pub run: Option<&'a str>,
    /// Every exported row and phase: cells by id, phases in protocol order, rows by name.
    pub measured: Vec<Measurement<'a>>,
    /// One line per row, phase or cell left out (or exported without its seconds), and why.
    pub left_out: Vec<String>,
}

impl Measurements<'_> {
    /// The cells with at least one exported figure, by id.
    pub fn cells(&self) -> Vec<&CellId> {
        let cells: BTreeSet<&CellId> = self.measured.iter().map(|m| m.cell).collect();
        cells.into_iter().collect()
    }
}

/// The run a dashboard gets: the newest of the history that timed workload jobs (the run of
/// the report's opening comparison).
pub fn exported_run(report: &Report) -> Option<&str> {
    report.comparison.as_ref().map(|c| c.run.as_str())
}

/// The figures of the exported run, of `cell` only when given.
pub fn measurements<'a>(report: &'a Report, cell: Option<&CellId>) -> Measurements<'a> {
    let Some(run) = exported_run(report) else {
        return Measurements::default();
    };
    let mut out = Measurements {
        run: Some(run),
        ..Measurements::default()
    };
    for (id, c) in &report.cells {
        if cell.is_some_and(|only| only != id) {
            continue;
        }
        if !is_safe_id(id.as_str()) {
            out.left_out
                .push(format!("cell {:?}: not a safe name; left out", id.as_str()));
            continue;
        }
        if !c.runs.iter().any(|r| r == run) {
            out.left_out
                .push(format!("{id}: not in run {run}; left out"));
            continue;
        }
        for p in &c.phases {
            for (row, series) in &p.rows {
                let what = format!("{id}: {} on {}", row.as_str(), p.phase.as_str());
                let point = series.points.iter().find(|pt| pt.run == run);
                let safe = [row.as_str(), p.phase.as_str(), c.reference.as_str()]
                    .into_iter()
                    .chain(point.map(|pt| pt.job.as_str()))
                    .all(is_safe_id);
                let why = match point {
                    _ if !safe => Some(format!("{what:?}: not a safe name")),
                    None => Some(format!("{what}: not measured in run {run}")),
                    Some(pt) if !pt.answer_ok => Some(format!("{what}: wrong answer")),
                    Some(pt) if ![pt.median, pt.lo, pt.hi].iter().all(|v| v.is_finite()) => {
                        Some(format!("{what}: its ratio is not a finite number"))
                    }
                    Some(pt) => {
                        let seconds = pt.median_s.filter(|s| s.is_finite());
                        if seconds.is_none() {
                            out.left_out
                                .push(format!("{what}: no seconds recorded; the ratio only"));
                        }
                        out.measured.push(Measurement {
                            cell: id,
                            row,
                            phase: &p.phase,
                            reference: &c.reference,
                            point: pt,
                            seconds,
                        });
                        None
                    }
                };
                if let Some(why) = why {
                    out.left_out.push(format!("{why}; left out"));
                }
            }
        }
    }
    out
}

/// The formats `--export` writes: a dashboard's input, to a file the user names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExportFormat {
    /// Bencher Metric Format JSON ([`BmfExporter`]): one cell (a testbed) per file.
    Bmf,
    /// github-action-benchmark's `customSmallerIsBetter` JSON
    /// ([`GithubActionBenchmarkExporter`]).
    GithubActionBenchmark,
}

impl ExportFormat {
    /// Every format, in the order the help names them.
    pub const ALL: [Self; 2] = [Self::Bmf, Self::GithubActionBenchmark];

    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Self::Bmf => "bmf",
            Self::GithubActionBenchmark => "github-action-benchmark",
        }
    }

    /// The format of that name.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|f| f.name() == name)
    }

    /// The exporter of its file: of `cell` alone, or of every cell of the run.
    fn exporter(self, cell: Option<&CellId>, only: &CellId) -> Box<dyn Exporter> {
        match self {
            Self::Bmf => Box::new(BmfExporter::new(cell.unwrap_or(only).clone())),
            Self::GithubActionBenchmark => {
                Box::new(GithubActionBenchmarkExporter::new(cell.cloned()))
            }
        }
    }
}

/// In an export's FILE, the part replaced by each cell's id: one file per cell.
pub const CELL_PLACEHOLDER: &str = "{cell}";

/// An export that cannot be written.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// No run has a figure to export.
    #[error(
        "--export {format}: nothing to export: no row of {} has a ratio a dashboard can take (see the notices above)",
        run.as_deref().map_or_else(|| "the history (no run timed workload jobs)".to_owned(), |r| format!("run {r}"))
    )]
    Nothing {
        /// The format asked for.
        format: &'static str,
        /// The exported run, if any.
        run: Option<String>,
    },
    /// A format of one cell per file, a run of several cells, and no `{cell}` in FILE.
    #[error(
        "--export {format} {}: a {format} file is one cell (one Bencher testbed), and run {run} has {} cells ({}): put {CELL_PLACEHOLDER} in FILE for one file per cell (e.g. `bmf/{CELL_PLACEHOLDER}.json`)",
        // FILE as the user gave it: on one line (the binary strips control characters).
        escape::one_line(file),
        cells.len(),
        cells.join(", ")
    )]
    SeveralCells {
        /// The format asked for.
        format: &'static str,
        /// FILE as given.
        file: String,
        /// The exported run.
        run: String,
        /// Its cells.
        cells: Vec<String>,
    },
}

/// One file an export writes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExportFile {
    /// Where: FILE as given, its [`CELL_PLACEHOLDER`] replaced by a cell id (`-`: stdout).
    pub path: String,
    /// What.
    pub bytes: Vec<u8>,
}

/// The files of `--export FORMAT FILE`: one per cell of the exported run when FILE holds
/// [`CELL_PLACEHOLDER`], else one (for [`ExportFormat::Bmf`], only when the run has one
/// cell).
pub fn export_files(
    report: &Report,
    format: ExportFormat,
    file: &str,
) -> Result<Vec<ExportFile>, ExportError> {
    let all = measurements(report, None);
    let cells = all.cells();
    let (Some(run), Some(first)) = (all.run, cells.first()) else {
        return Err(ExportError::Nothing {
            format: format.name(),
            run: all.run.map(str::to_owned),
        });
    };
    let one = |cell: Option<&CellId>, path: String| -> ExportFile {
        let bytes = format
            .exporter(cell, first)
            .export(report)
            .into_iter()
            .next()
            .expect("an export is one file")
            .bytes;
        ExportFile { path, bytes }
    };
    if file.contains(CELL_PLACEHOLDER) {
        return Ok(cells
            .iter()
            .map(|c| one(Some(c), file.replace(CELL_PLACEHOLDER, c.as_str())))
            .collect());
    }
    if format == ExportFormat::Bmf && cells.len() > 1 {
        return Err(ExportError::SeveralCells {
            format: format.name(),
            file: file.to_owned(),
            run: run.to_owned(),
            cells: cells.iter().map(ToString::to_string).collect(),
        });
    }
    Ok(vec![one(None, file.to_owned())])
}
