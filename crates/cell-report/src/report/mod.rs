//! `cell report`: the comparison pages, generated from the committed history and never
//! copied by hand.
//!
//! The history is read once into one data model ([`Report`]); one [`Exporter`] per output
//! format turns it into files (the layout of hyperfine's `src/export/`):
//!
//! | exporter | writes |
//! |---|---|
//! | [`SvgExporter`] | `charts/<cell>/<phase>.svg`, `charts/<cell>/footprint.svg` |
//! | [`HtmlExporter`] | `index.html` (self-contained: inline CSS, no script) |
//! | [`MarkdownExporter`] | `README.md` (GitHub Markdown, the same document) |
//! | [`CsvExporter`] | `samples.csv` (every timed process, when asked for), `footprint.csv` (every row's footprint), `raw.csv` and `summary.csv` (the http and soak suites) |
//! | [`JsonExporter`] | `report.json` (the data model) |
//!
//! Two more write a dashboard's input, only when asked for (`cell report --export FORMAT
//! FILE`, [`export_files`]), to a file the user names, of the newest run that timed workload
//! jobs ([`dashboard`]):
//!
//! | exporter | writes |
//! |---|---|
//! | [`BmfExporter`] | Bencher Metric Format JSON of one cell (a Bencher testbed) |
//! | [`GithubActionBenchmarkExporter`] | github-action-benchmark's `customSmallerIsBetter` JSON |
//!
//! The model is built over a window ([`ReportOptions`]: each cell's newest runs), so what
//! grows with the history (the charts, the series, the per-run CSV records) stays bounded;
//! the exporters draw what the model holds and never choose runs themselves.
//!
//! Every link between the files is relative, so the folder works at any depth and moved.

mod bmf;
mod csv;
pub mod dashboard;
mod github_action_benchmark;
mod html;
mod json;
mod markdown;
mod model;
mod page;
mod suite_csv;
mod svg;
mod window;

use std::path::{Path, PathBuf};

use cell_schema::store::StoreError;

pub use crate::doc::{Block, Span, slug};
pub use bmf::BmfExporter;
pub use csv::CsvExporter;
pub use dashboard::{
    CELL_PLACEHOLDER, ExportError, ExportFile, ExportFormat, Measurement, Measurements,
    export_files, measurements,
};
pub use github_action_benchmark::GithubActionBenchmarkExporter;
pub use html::HtmlExporter;
pub use json::JsonExporter;
pub use markdown::MarkdownExporter;
pub use model::{
    CellReport, FootprintRecord, FootprintRow, HttpPoint, HttpSeries, ImportedPoint, JobReport,
    MachineReport, NewestRun, PhaseReport, Point, REPORT_VERSION, ReferenceMedian, Report,
    ReportKind, RunRef, Sample, Series, SoakReport, ToolchainSize,
};
pub use suite_csv::SuiteCell;
pub use svg::SvgExporter;
pub use window::{DEFAULT_LAST, LeftOut, ReportOptions, window};

/// The page for browsers.
pub const INDEX_HTML: &str = "index.html";
/// The page for GitHub.
pub const README_MD: &str = "README.md";
/// Every timed process of every run of the window, one CSV record each (written only when
/// asked for: `cell report --samples`).
pub const SAMPLES_CSV: &str = "samples.csv";
/// Every row's footprint in every run, one CSV record each.
pub const FOOTPRINT_CSV: &str = "footprint.csv";
/// Every measured run of the http and soak suites, one CSV record each.
pub const RAW_CSV: &str = "raw.csv";
/// Every server × workload × shape × tool of the http suite (and every soak), one record each.
pub const SUMMARY_CSV: &str = "summary.csv";
/// The data model.
pub const REPORT_JSON: &str = "report.json";
/// The folder of the charts.
pub const CHARTS_DIR: &str = "charts";

pub use cell_schema::store::Output;
pub(crate) use cell_schema::store::segment;

/// One output format: the files it makes of a report. Same report, same bytes.
pub trait Exporter {
    /// The files, paths relative to the report folder.
    fn export(&self, report: &Report) -> Vec<Output>;
}

/// Every exporter of the report folder, in the order their files are written (the
/// dashboards' exporters write only when asked for: [`export_files`]).
pub fn exporters() -> Vec<Box<dyn Exporter>> {
    vec![
        Box::new(SvgExporter),
        Box::new(HtmlExporter),
        Box::new(MarkdownExporter),
        Box::new(CsvExporter),
        Box::new(JsonExporter),
    ]
}

/// Where the chart of a cell's phase lives, relative to the report folder.
pub fn chart_path(cell: &str, phase: &str) -> String {
    format!("{CHARTS_DIR}/{}/{}.svg", segment(cell), segment(phase))
}

/// Where the soak chart of a cell's server lives, relative to the report folder.
pub fn soak_chart_path(cell: &str, server: &str) -> String {
    format!(
        "{CHARTS_DIR}/{}/soak-{}.svg",
        segment(cell),
        segment(server)
    )
}

/// Where the chart of every soak server's RSS of a cell lives.
pub fn soak_overlay_path(cell: &str) -> String {
    format!("{CHARTS_DIR}/{}/soak-overlay.svg", segment(cell))
}

/// Where the footprint chart of a cell lives.
pub fn footprint_chart_path(cell: &str) -> String {
    format!("{CHARTS_DIR}/{}/footprint.svg", segment(cell))
}

/// Where the chart of a cell's http req/s over the runs lives.
pub fn http_chart_path(cell: &str) -> String {
    format!("{CHARTS_DIR}/{}/http-rps.svg", segment(cell))
}

/// Every file of the report.
pub fn render(report: &Report) -> Vec<Output> {
    exporters().iter().flat_map(|e| e.export(report)).collect()
}

/// The files a report writes only sometimes (`samples.csv` when asked for, the suites' CSV
/// when the history has suites): one a previous report left is removed when this one does
/// not write it, so a folder never carries a stale one.
pub const OPTIONAL_FILES: [&str; 3] = [SAMPLES_CSV, RAW_CSV, SUMMARY_CSV];

/// Writes every file under `out` (each atomically), then removes chart SVGs and
/// [`OPTIONAL_FILES`] a previous report left that this one does not have. Returns the files
/// written, in order.
pub fn write(report: &Report, out: &Path) -> Result<Vec<PathBuf>, StoreError> {
    let files = render(report);
    cell_schema::store::write_files(out, &files)?;
    let written: Vec<PathBuf> = files
        .iter()
        .map(|f| f.path.split('/').fold(out.to_path_buf(), |p, s| p.join(s)))
        .collect();
    remove_stale_charts(&out.join(CHARTS_DIR), &written)?;
    for name in OPTIONAL_FILES {
        let p = out.join(name);
        if !written.contains(&p) && p.is_file() {
            std::fs::remove_file(&p).map_err(|error| StoreError::Io { path: p, error })?;
        }
    }
    Ok(written)
}

fn remove_stale_charts(charts: &Path, keep: &[PathBuf]) -> Result<(), StoreError> {
    let io = |path: &Path| {
        let path = path.to_owned();
        move |error| StoreError::Io { path, error }
    };
    let Ok(cells) = std::fs::read_dir(charts) else {
        return Ok(());
    };
    for cell in cells.filter_map(Result::ok) {
        let dir = cell.path();
        if !dir.is_dir() {
            continue;
        }
        let entries = std::fs::read_dir(&dir).map_err(io(&dir))?;
        for e in entries.filter_map(Result::ok) {
            let p = e.path();
            if p.extension().is_some_and(|x| x == "svg") && !keep.contains(&p) {
                std::fs::remove_file(&p).map_err(io(&p))?;
            }
        }
        // Only an emptied folder goes; anything else someone put there stays.
        if std::fs::read_dir(&dir).map_err(io(&dir))?.next().is_none() {
            std::fs::remove_dir(&dir).map_err(io(&dir))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chart_paths_are_one_safe_segment_per_id() {
        assert_eq!(
            chart_path("linux-x86_64-ubuntu-24.04", "mix"),
            "charts/linux-x86_64-ubuntu-24.04/mix.svg"
        );
        assert_eq!(chart_path("a/b c", "../x"), "charts/a_b_c/_.._x.svg");
        assert_eq!(chart_path("", "p"), "charts/_/p.svg");
    }
}
