//! The JSON of github-action-benchmark's `customSmallerIsBetter` tool (`tool:
//! 'customSmallerIsBetter'`, `output-file-path: FILE`): an array of entries, each a `name`, a
//! `unit` and a `value`, with `range` and `extra` as text. The shape is
//! `crates/cell-report/schemas/github-action-benchmark.schema.json`.
//!
//! Per cell, row and phase of the exported run: `<cell>/<row>/<phase>/ratio` (the ratio to the
//! reference; `range` the half-width of its interval, `extra` the interval, its coverage, the
//! clock, the run and the job) and `<cell>/<row>/<phase>/seconds` (the row's median seconds on
//! its verdict clock, when recorded). Identifiers hold no `/`, so every name is unique, and it
//! stays the same from run to run. Entries are sorted by name. The figures are those
//! [`measurements`] selects.

use cell_schema::CellId;
use serde::Serialize;

use super::dashboard::measurements;
use super::model::Report;
use super::page::{ci, ratio};
use super::{Exporter, Output, segment};

/// The unit of a ratio entry.
pub const RATIO_UNIT: &str = "ratio";
/// The unit of a seconds entry.
pub const SECONDS_UNIT: &str = "s";

/// Writes `github-action-benchmark.json`: every cell of the exported run, or one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GithubActionBenchmarkExporter {
    cell: Option<CellId>,
}

impl GithubActionBenchmarkExporter {
    /// The exporter of `cell`'s entries, or of every cell's.
    pub fn new(cell: Option<CellId>) -> Self {
        Self { cell }
    }
}

impl Exporter for GithubActionBenchmarkExporter {
    fn export(&self, report: &Report) -> Vec<Output> {
        let path = match &self.cell {
            Some(c) => format!("github-action-benchmark-{}.json", segment(c.as_str())),
            None => "github-action-benchmark.json".to_owned(),
        };
        vec![Output::new(
            path,
            render(report, self.cell.as_ref()).into_bytes(),
        )]
    }
}

/// One entry, its keys in the order the action's README lists them.
#[derive(Clone, Debug, PartialEq, Serialize)]
struct Entry {
    name: String,
    unit: &'static str,
    value: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    range: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    extra: Option<String>,
}

/// The file: every entry of the exported run (of `cell` only, when given), sorted by name,
/// pretty JSON with a trailing newline.
pub fn render(report: &Report, cell: Option<&CellId>) -> String {
    let mut entries = Vec::new();
    for m in measurements(report, cell).measured {
        let p = m.point;
        let name = format!("{}/{}/{}", m.cell, m.row, m.phase);
        let from = format!("run {}, job {}", p.run, p.job);
        entries.push(Entry {
            name: format!("{name}/ratio"),
            unit: RATIO_UNIT,
            value: p.median,
            range: Some(format!("± {}", ratio((p.hi - p.lo) / 2.0))),
            extra: Some(format!(
                "ratio to {} on the {} clock; CI {}; n {}; {from}",
                m.reference,
                p.clock.name(),
                ci(p),
                p.n
            )),
        });
        if let Some(s) = m.seconds {
            entries.push(Entry {
                name: format!("{name}/seconds"),
                unit: SECONDS_UNIT,
                value: s,
                range: None,
                extra: Some(format!("median on the {} clock; {from}", p.clock.name())),
            });
        }
    }
    entries.sort_by(|a, b| a.name.cmp(&b.name));
    cell_schema::to_json(&entries)
}
