//! `report.json`: the data model itself, as `cell report --format json` prints it.

use super::model::Report;
use super::{Exporter, Output, REPORT_JSON};

/// Writes `report.json`.
#[derive(Clone, Copy, Debug, Default)]
pub struct JsonExporter;

impl Exporter for JsonExporter {
    fn export(&self, report: &Report) -> Vec<Output> {
        vec![Output::new(REPORT_JSON, render(report).into_bytes())]
    }
}

/// Pretty JSON in declaration order, floats in plain decimal, a trailing newline.
pub fn render(report: &Report) -> String {
    cell_schema::to_json(report)
}
