//! The `http` and `soak` suites as people read them: the sections of `RESULTS.md` and of the
//! report (`sections`), a job's `RESULTS.md` and terminal table (`jobs`), and the soak charts
//! beside a `RESULTS.md` (`charts`; drawn by the crate's chart toolkit).
//!
//! A section is built once as blocks ([`Block`](crate::doc::Block)) and written by the one
//! Markdown and HTML writer, so `RESULTS.md`, `README.md` and `index.html` never disagree on
//! a figure. Its text comes from results, configs and tools' output, and is escaped fully
//! ([`Span::Text`](crate::doc::Span::Text)); a job's header and footer are written as they
//! always were ([`Span::Verbatim`](crate::doc::Span::Verbatim)).

mod charts;
mod jobs;
mod sections;
mod servers;
mod verdict;

use cell_schema::{
    Combo, HttpServerResult, HttpSettings, HttpToolResult, LEGACY_WORKLOAD, SoakServerResult,
};

pub use crate::chart::soak::{soak_overlay_svg, soak_svg};
pub use crate::figures::{drift_name, soak_shape};
pub use charts::{soak_chart_files, soak_job_charts};
pub use jobs::{
    http_job_markdown, http_job_text, http_summary_line, soak_job_markdown, soak_job_text,
    soak_summary_line,
};
pub(crate) use sections::{cell_http_blocks, cell_soak_blocks, cell_suites_blocks};
pub use sections::{cell_suites_markdown, http_markdown, soak_markdown};
pub use verdict::soak_verdict_line;

/// Every combination a server was to be measured in, in the session's order (workloads
/// sorted, shapes and tools as the settings list them, then any other it has), each with its
/// result when there is one. A workload that failed its check has none listed (its error is
/// the server's note).
pub(crate) fn combos<'a>(
    settings: &HttpSettings,
    server: &'a HttpServerResult,
) -> Vec<(Combo, Option<&'a HttpToolResult>)> {
    let measured = server.measured(settings);
    let mut workloads: Vec<String> = server
        .workloads
        .iter()
        .filter(|(_, w)| w.error.is_none())
        .map(|(n, _)| n.to_string())
        .collect();
    if !server.tools.is_empty() {
        workloads.push(LEGACY_WORKLOAD.to_owned());
    }
    let shapes: Vec<String> = if settings.shapes.is_empty() {
        vec![settings.legacy_shape().to_owned()]
    } else {
        settings.shapes.iter().map(|s| s.name.to_string()).collect()
    };
    let mut out: Vec<(Combo, Option<&HttpToolResult>)> = Vec::new();
    for workload in &workloads {
        // A shape the server was not measured in is a note, not a row of `no result`.
        let measured_shapes = shapes
            .iter()
            .filter(|x| !server.shapes_left_out.contains_key(x.as_str()));
        for shape in measured_shapes {
            for tool in &settings.tools {
                let c = Combo {
                    workload: workload.clone(),
                    shape: shape.clone(),
                    tool: tool.clone(),
                };
                let r = server.get(settings, &c);
                out.push((c, r));
            }
        }
    }
    for (c, r) in measured {
        if !out.iter().any(|(o, _)| *o == c) {
            out.push((c, Some(r)));
        }
    }
    out
}

/// The combinations a server was measured in, in the order of [`combos`].
pub(crate) fn measured_in_order<'a>(
    settings: &HttpSettings,
    server: &'a HttpServerResult,
) -> Vec<(Combo, &'a HttpToolResult)> {
    combos(settings, server)
        .into_iter()
        .filter_map(|(c, t)| Some((c, t?)))
        .collect()
}

/// Errors of the soak's load, summed over kinds.
fn load_errors(s: &SoakServerResult) -> Option<u64> {
    s.load.as_ref().map(|l| l.errors.values().sum())
}
