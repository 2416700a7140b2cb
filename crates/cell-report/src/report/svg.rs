//! The charts of the report, drawn by [`chart`](crate::chart): one per cell and phase, the
//! footprint and http charts of a cell, and the soak charts of its newest soak.

use super::model::Report;
use super::{
    Exporter, Output, chart_path, footprint_chart_path, http_chart_path, soak_chart_path,
    soak_overlay_path,
};
use crate::chart;

/// Writes `charts/<cell>/<phase>.svg`, `charts/<cell>/footprint.svg`, and for the suites
/// `charts/<cell>/http-rps.svg`, `charts/<cell>/soak-<server>.svg` and
/// `charts/<cell>/soak-overlay.svg`.
#[derive(Clone, Copy, Debug, Default)]
pub struct SvgExporter;

impl Exporter for SvgExporter {
    fn export(&self, report: &Report) -> Vec<Output> {
        let mut out = Vec::new();
        for (id, c) in &report.cells {
            for p in &c.phases {
                out.push(Output::new(
                    chart_path(id.as_str(), p.phase.as_str()),
                    chart::phase::chart(id.as_str(), c, p).into_bytes(),
                ));
            }
            if chart::footprint::wanted(c) {
                out.push(Output::new(
                    footprint_chart_path(id.as_str()),
                    chart::footprint::chart(id.as_str(), c).into_bytes(),
                ));
            }
            if chart::http::wanted(c) {
                out.push(Output::new(
                    http_chart_path(id.as_str()),
                    chart::http::chart(id.as_str(), c).into_bytes(),
                ));
            }
            let soak = &c.newest.soak;
            for (name, s) in soak
                .iter()
                .filter(|(_, s)| !s.server.result.samples.is_empty())
            {
                out.push(Output::new(
                    soak_chart_path(id.as_str(), name.as_str()),
                    chart::soak::soak_svg(name, &s.server.result, &s.server.settings).into_bytes(),
                ));
            }
            if soak.values().any(|s| !s.server.result.samples.is_empty()) {
                let servers = soak.iter().map(|(n, s)| (n, &s.server));
                out.push(Output::new(
                    soak_overlay_path(id.as_str()),
                    chart::soak::cell_soak_overlay_svg(servers).into_bytes(),
                ));
            }
        }
        out
    }
}
