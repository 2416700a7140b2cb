//! The soak charts a job dir and a merged cell's dir hold beside their `RESULTS.md`.

use std::collections::BTreeMap;

use cell_schema::store::ChartName;
use cell_schema::{CellResult, SoakJobResult};

use crate::chart::soak::{cell_soak_overlay_svg, soak_overlay_svg, soak_svg};

/// The soak charts of a merged cell, for its writer to put next to `RESULTS.md`: one per
/// server with samples, then the overlay (none when no server has samples).
pub fn soak_chart_files(cell: &CellResult) -> BTreeMap<ChartName, String> {
    let mut out: BTreeMap<ChartName, String> = cell
        .soak
        .iter()
        .filter(|(_, s)| !s.result.samples.is_empty())
        .map(|(name, s)| {
            (
                ChartName::Soak(name.clone()),
                soak_svg(name, &s.result, &s.settings),
            )
        })
        .collect();
    if !out.is_empty() {
        out.insert(
            ChartName::SoakOverlay,
            cell_soak_overlay_svg(cell.soak.iter()),
        );
    }
    out
}

/// The charts of a soak job's dir: every server's, with samples or not, and the overlay.
pub fn soak_job_charts(job: &SoakJobResult) -> BTreeMap<ChartName, String> {
    let mut out: BTreeMap<ChartName, String> = job
        .servers
        .iter()
        .map(|(name, r)| {
            (
                ChartName::Soak(name.clone()),
                soak_svg(name, r, &job.settings),
            )
        })
        .collect();
    out.insert(
        ChartName::SoakOverlay,
        soak_overlay_svg(&job.servers, &job.settings),
    );
    out
}
