//! `README.md`: the document in GitHub Markdown, charts embedded by relative links, so the
//! folder reads the same on GitHub as `index.html` does in a browser.

use std::fmt::Write as _;

use cell_schema::Status;

use super::doc::{Block, Span, page, status_text};
use super::model::Report;
use super::{Exporter, Output, README_MD};
use crate::Align;

/// Writes `README.md`.
#[derive(Clone, Copy, Debug, Default)]
pub struct MarkdownExporter;

impl Exporter for MarkdownExporter {
    fn export(&self, report: &Report) -> Vec<Output> {
        vec![Output::new(README_MD, render(&page(report)).into_bytes())]
    }
}

/// Escapes the characters GitHub Markdown would read as markup (and `|`, for tables).
pub fn escape(s: &str) -> String {
    cell_schema::escape::markdown(s)
}

fn code(s: &str) -> String {
    cell_schema::escape::markdown_code(s)
}

fn spans(out: &mut String, spans: &[Span]) {
    for s in spans {
        match s {
            Span::Text(t) => out.push_str(&escape(t)),
            Span::Code(t) => out.push_str(&code(t)),
            Span::Strong(t) => {
                let _ = write!(out, "**{}**", escape(t));
            }
            Span::Link { href, text } => {
                let _ = write!(out, "[{}]({})", escape(text), href.replace(' ', "%20"));
            }
            Span::Status(st) => {
                let t = status_text(*st);
                if *st == Status::Ok {
                    out.push_str(t);
                } else {
                    let _ = write!(out, "**{}**", t.to_uppercase());
                }
            }
        }
    }
}

/// The page.
pub fn render(blocks: &[Block]) -> String {
    let mut out = String::new();
    for b in blocks {
        block(&mut out, b);
    }
    out
}

fn block(out: &mut String, b: &Block) {
    match b {
        Block::Heading { level, text, .. } => {
            let _ = writeln!(
                out,
                "{} {}\n",
                "#".repeat(usize::from(*level)),
                escape(text)
            );
        }
        Block::Para(s) => {
            spans(out, s);
            out.push_str("\n\n");
        }
        Block::List(items) => {
            for i in items {
                out.push_str("- ");
                spans(out, i);
                out.push('\n');
            }
            out.push('\n');
        }
        Block::Image { src, alt, .. } => {
            let _ = writeln!(out, "![{}]({})\n", escape(alt), src.replace(' ', "%20"));
        }
        Block::Table { head, rows } => {
            let cells: Vec<String> = head.iter().map(|(h, _)| escape(h)).collect();
            let _ = writeln!(out, "| {} |", cells.join(" | "));
            let rule: Vec<&str> = head
                .iter()
                .map(|(_, a)| if *a == Align::Right { "---:" } else { "---" })
                .collect();
            let _ = writeln!(out, "|{}|", rule.join("|"));
            for r in rows {
                let cells: Vec<String> = r
                    .iter()
                    .map(|c| {
                        let mut s = String::new();
                        spans(&mut s, c);
                        s
                    })
                    .collect();
                let _ = writeln!(out, "| {} |", cells.join(" | "));
            }
            out.push('\n');
        }
    }
}
