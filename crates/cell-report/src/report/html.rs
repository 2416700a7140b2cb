//! `index.html`: the document as one self-contained page (inline CSS, no script, no fetch
//! beyond the relative chart images).

use std::fmt::Write as _;

use cell_schema::Status;

use super::doc::{Block, Span, page, status_text};
use super::model::Report;
use super::{Exporter, INDEX_HTML, Output};
use crate::Align;

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

/// Escapes text for HTML content and attribute values.
pub fn escape(s: &str) -> String {
    cell_schema::escape::html(s)
}

fn spans(out: &mut String, spans: &[Span]) {
    for s in spans {
        match s {
            Span::Text(t) => out.push_str(&escape(t)),
            Span::Code(t) => {
                let _ = write!(out, "<code>{}</code>", escape(t));
            }
            Span::Strong(t) => {
                let _ = write!(out, "<strong>{}</strong>", escape(t));
            }
            Span::Link { href, text } => {
                let _ = write!(out, "<a href=\"{}\">{}</a>", escape(href), escape(text));
            }
            Span::Status(st) => {
                let _ = write!(
                    out,
                    "<span class=\"status {}\">{}</span>",
                    class(*st),
                    status_text(*st)
                );
            }
        }
    }
}

fn class(s: Status) -> &'static str {
    match s {
        Status::Ok => "ok",
        Status::Noisy => "noisy",
        Status::Failed => "failed",
    }
}

/// The page.
pub fn render(blocks: &[Block]) -> String {
    let title = blocks
        .iter()
        .find_map(|b| match b {
            Block::Heading { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .unwrap_or("cell report");
    let mut out = String::new();
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{}</title>\n<style>\n{STYLE}</style>\n</head>\n<body>\n",
        escape(title)
    );
    for b in blocks {
        block(&mut out, b);
    }
    out.push_str("</body>\n</html>\n");
    out
}

fn block(out: &mut String, b: &Block) {
    match b {
        Block::Heading { level, text, id } => {
            let _ = writeln!(
                out,
                "<h{level} id=\"{}\">{}</h{level}>",
                escape(id),
                escape(text)
            );
        }
        Block::Para(s) => {
            out.push_str("<p>");
            spans(out, s);
            out.push_str("</p>\n");
        }
        Block::List(items) => {
            out.push_str("<ul>\n");
            for i in items {
                out.push_str("<li>");
                spans(out, i);
                out.push_str("</li>\n");
            }
            out.push_str("</ul>\n");
        }
        Block::Image {
            src,
            alt,
            width,
            height,
        } => {
            let _ = writeln!(
                out,
                "<img src=\"{}\" alt=\"{}\" width=\"{width}\" height=\"{height}\">",
                escape(src),
                escape(alt)
            );
        }
        Block::Table { head, rows } => {
            out.push_str("<table>\n<thead><tr>");
            for (h, a) in head {
                let _ = write!(out, "<th{}>{}</th>", align(*a), escape(h));
            }
            out.push_str("</tr></thead>\n<tbody>\n");
            for r in rows {
                out.push_str("<tr>");
                for (i, c) in r.iter().enumerate() {
                    let a = head.get(i).map_or(Align::Left, |h| h.1);
                    let _ = write!(out, "<td{}>", align(a));
                    spans(out, c);
                    out.push_str("</td>");
                }
                out.push_str("</tr>\n");
            }
            out.push_str("</tbody>\n</table>\n");
        }
    }
}

fn align(a: Align) -> &'static str {
    match a {
        Align::Left => "",
        Align::Right => " class=\"r\"",
    }
}
