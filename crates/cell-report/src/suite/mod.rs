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
mod verdict;

use cell_schema::{HttpServerResult, HttpSettings, SoakServerResult};

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

/// A server's tools: the settings' order, then any it has that the settings do not list.
fn tool_order<'a>(settings: &'a HttpSettings, server: &'a HttpServerResult) -> Vec<&'a str> {
    let mut out: Vec<&str> = settings.tools.iter().map(String::as_str).collect();
    out.extend(
        server
            .tools
            .keys()
            .map(String::as_str)
            .filter(|t| !settings.tools.iter().any(|s| s == t)),
    );
    out
}

/// Errors of the soak's load, summed over kinds.
fn load_errors(s: &SoakServerResult) -> Option<u64> {
    s.load.as_ref().map(|l| l.errors.values().sum())
}
