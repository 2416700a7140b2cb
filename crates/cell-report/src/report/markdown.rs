//! `README.md`: the page in GitHub Markdown, charts embedded by relative links, so the
//! folder reads the same on GitHub as `index.html` does in a browser.

use super::model::Report;
use super::page::page;
use super::{Exporter, Output, README_MD};

/// Writes `README.md`.
#[derive(Clone, Copy, Debug, Default)]
pub struct MarkdownExporter;

impl Exporter for MarkdownExporter {
    fn export(&self, report: &Report) -> Vec<Output> {
        vec![Output::new(
            README_MD,
            crate::doc::markdown::render(&page(report)).into_bytes(),
        )]
    }
}
