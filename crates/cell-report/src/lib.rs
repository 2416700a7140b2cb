//! Reports people read, generated from the wire types only: `RESULTS.md` of a job and of a
//! cell, the terminal tables, the gate's lines and step summary, the report pages and the
//! charts.
//!
//! Every page and text is one document model ([`doc`]: blocks of spans) written by one
//! Markdown, one HTML and one text renderer; every chart is drawn with one SVG toolkit
//! (`chart`). A figure is formatted once, so no two outputs disagree on it.

mod chart;
pub mod compare;
pub mod doc;
mod figures;
pub mod footprint;
pub mod gate;
mod imported;
mod instructions;
pub mod pr;
pub mod report;
pub mod same_job;
pub mod suite;
mod workload;

use std::collections::BTreeMap;

use cell_schema::store::{CellDir, JobDir};
use cell_schema::{AnyJob, CellResult, Facts, Phase, RatioCi, RowResult, ToolchainName};

pub use doc::{Align, Table};
pub use figures::verdict_name;
pub use workload::{cell_markdown, job_markdown, job_text, text_summary};

/// A job dir of any suite, rendered: its result, `RESULTS.md`, and the charts beside it.
pub fn job_dir(job: &AnyJob) -> JobDir<'_> {
    let (markdown, charts) = match job {
        AnyJob::Workload(j) => (job_markdown(j), BTreeMap::new()),
        AnyJob::Http(j) => (suite::http_job_markdown(j), BTreeMap::new()),
        AnyJob::Soak(j) => (suite::soak_job_markdown(j), suite::soak_job_charts(j)),
    };
    JobDir {
        result: job,
        markdown,
        charts,
    }
}

/// A cell of a run dir, rendered: its result, its jobs' facts, `RESULTS.md`, and the soak
/// charts beside it.
pub fn cell_dir<'a>(
    cell: &'a CellResult,
    facts: &'a BTreeMap<ToolchainName, Facts>,
) -> CellDir<'a> {
    CellDir {
        result: cell,
        facts,
        markdown: cell_markdown(cell),
        charts: suite::soak_chart_files(cell),
    }
}

/// The terminal text of a job of any suite.
pub fn any_job_text(job: &AnyJob) -> String {
    match job {
        AnyJob::Workload(j) => job_text(j),
        AnyJob::Http(j) => suite::http_job_text(j),
        AnyJob::Soak(j) => suite::soak_job_text(j),
    }
}

/// The ratio a verdict reads: the row's own clock.
pub fn verdict_ratio<'a>(row: &'a RowResult, phase: &Phase) -> Option<&'a RatioCi> {
    row.phases.get(phase)?.ratio.as_ref()?.on(row.verdict_clock)
}

/// Median seconds on the row's verdict clock.
pub fn verdict_median(row: &RowResult, phase: &Phase) -> Option<f64> {
    let s = row.phases.get(phase)?.stats.as_ref()?;
    Some(s.on(row.verdict_clock)?.median)
}
