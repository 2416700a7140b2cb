//! Bencher Metric Format (BMF) JSON of one cell, for `bencher run --adapter json --file FILE
//! --testbed <cell>`: an object of benchmarks, `<row>/<phase>`, each an object of measures by
//! slug, each measure a `value` with, for the ratio, its interval as `lower_value` and
//! `upper_value`. The shape is `crates/cell-report/schemas/bmf.schema.json`.
//!
//! A cell is a testbed (one machine), so a file holds one cell: benchmarks of two cells would
//! meet under one name. The figures are those [`measurements`] selects.

use std::collections::BTreeMap;

use cell_schema::CellId;
use serde::Serialize;

use super::dashboard::measurements;
use super::model::Report;
use super::{Exporter, Output, segment};

/// The measure of the ratio to the reference (the interval as its bounds).
pub const RATIO: &str = "ratio";
/// The measure of the row's median seconds on its verdict clock.
pub const SECONDS: &str = "seconds";

/// Writes `bmf-<cell>.json`: one cell of the exported run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BmfExporter {
    cell: CellId,
}

impl BmfExporter {
    /// The exporter of `cell`'s file.
    pub fn new(cell: CellId) -> Self {
        Self { cell }
    }
}

impl Exporter for BmfExporter {
    fn export(&self, report: &Report) -> Vec<Output> {
        vec![Output::new(
            format!("bmf-{}.json", segment(self.cell.as_str())),
            render(report, &self.cell).into_bytes(),
        )]
    }
}

/// One measure: a value, and for an interval its bounds.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
struct Metric {
    value: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    lower_value: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    upper_value: Option<f64>,
}

/// The file of `cell`: benchmarks by name, measures by slug (both sorted), pretty JSON with
/// a trailing newline.
pub fn render(report: &Report, cell: &CellId) -> String {
    let mut benchmarks: BTreeMap<String, BTreeMap<&str, Metric>> = BTreeMap::new();
    for m in measurements(report, Some(cell)).measured {
        let p = m.point;
        let measures = benchmarks
            .entry(format!("{}/{}", m.row, m.phase))
            .or_default();
        measures.insert(
            RATIO,
            Metric {
                value: p.median,
                lower_value: Some(p.lo),
                upper_value: Some(p.hi),
            },
        );
        if let Some(s) = m.seconds {
            measures.insert(
                SECONDS,
                Metric {
                    value: s,
                    lower_value: None,
                    upper_value: None,
                },
            );
        }
    }
    cell_schema::to_json(&benchmarks)
}
