//! `index.html`: the document as one self-contained page (inline CSS, no script, no fetch
//! beyond the relative chart images).

use std::fmt::Write as _;

use super::model::Report;
use super::page::page;
use super::{Exporter, INDEX_HTML, Output};
use crate::doc::Block;

/// Writes `index.html`.
#[derive(Clone, Copy, Debug, Default)]
pub struct HtmlExporter;

impl Exporter for HtmlExporter {
    fn export(&self, report: &Report) -> Vec<Output> {
        vec![Output::new(INDEX_HTML, render(&page(report)).into_bytes())]
    }
}

const STYLE: &str = "\
:root{color-scheme:light;--fg:#1b1f24;--muted:#57606a;--line:#d0d7de;--head:#f6f8fa}
body{font:14px/1.45 system-ui,-apple-system,\"Segoe UI\",Roboto,\"Helvetica Neue\",Arial,sans-serif;color:var(--fg);background:#fff;margin:0 auto;padding:16px 24px 48px;max-width:1160px}
h1{font-size:26px;margin:8px 0 12px}
h2{font-size:21px;margin:36px 0 8px;padding-bottom:4px;border-bottom:1px solid var(--line)}
h3{font-size:16px;margin:24px 0 8px}
code{font:12.5px/1.3 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;background:var(--head);padding:1px 4px;border-radius:4px}
table{border-collapse:collapse;margin:8px 0 16px;font-size:13px}
th,td{border:1px solid var(--line);padding:4px 8px;vertical-align:top}
th{background:var(--head);text-align:left;white-space:nowrap}
td.r,th.r{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
img{display:block;max-width:100%;height:auto;margin:8px 0}
ul{margin:6px 0 12px;padding-left:22px}
a{color:#0969da}
.status{font-weight:600;padding:1px 6px;border-radius:10px;font-size:12px;white-space:nowrap}
.ok{background:#dafbe1;color:#116329}
.noisy{background:#fff8c5;color:#7d4e00}
.failed{background:#ffebe9;color:#a40e26}
";

/// The page: its head (the first heading as title, the style), then the blocks.
pub fn render(blocks: &[Block]) -> String {
    let title = blocks
        .iter()
        .find_map(|b| match b {
            Block::Heading { spans, .. } => Some(crate::doc::text::spans(spans)),
            _ => None,
        })
        .unwrap_or_else(|| "cell report".to_owned());
    let mut out = String::new();
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{}</title>\n<style>\n{STYLE}</style>\n</head>\n<body>\n",
        cell_schema::escape::html(&title)
    );
    out.push_str(&crate::doc::html::render(blocks));
    out.push_str("</body>\n</html>\n");
    out
}
