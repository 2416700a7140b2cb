//! Blocks as GitHub Markdown.

use std::fmt::Write as _;

use cell_schema::Status;
use cell_schema::escape;

use super::{Align, Block, Item, Span, Table, status_word};

/// Where a span stands: a table cell is split at every unescaped `|`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Place {
    Line,
    Cell,
}

/// The blocks as Markdown.
pub fn render(blocks: &[Block]) -> String {
    let mut out = String::new();
    write_blocks(&mut out, blocks, "");
    out
}

fn write_blocks(out: &mut String, blocks: &[Block], indent: &str) {
    for b in blocks {
        block(out, b, indent);
    }
}

/// One block; `indent` starts each of its lines but an empty one (blocks under a list item).
fn block(out: &mut String, b: &Block, indent: &str) {
    match b {
        Block::Heading { level, spans, .. } => {
            let _ = write!(out, "{indent}{} ", "#".repeat(usize::from(*level)));
            line(out, spans);
        }
        Block::Para(spans) => {
            out.push_str(indent);
            line(out, spans);
        }
        Block::List(items) => list(out, items, indent),
        Block::Code(lines) => code_block(out, lines, indent),
        Block::Image { src, alt, .. } => {
            let _ = writeln!(out, "{indent}![{}]({})", escape::markdown(alt), target(src));
        }
        Block::Table(t) => table(out, t, indent),
        Block::Blank => out.push('\n'),
    }
}

/// A fenced code block: its fence longer than any run of backticks in it, so no line of it
/// closes the block, and every line it holds indented, those a line break inside one of its
/// strings starts too (an unindented one would end the list item the block belongs to).
fn code_block(out: &mut String, lines: &[String], indent: &str) {
    let fence = escape::markdown_fence(&lines.join("\n"));
    let _ = writeln!(out, "{indent}{fence}");
    for l in lines {
        for part in l.split("\r\n").flat_map(|p| p.split(['\r', '\n'])) {
            let _ = writeln!(out, "{indent}{part}");
        }
    }
    let _ = writeln!(out, "{indent}{fence}");
}

fn line(out: &mut String, spans: &[Span]) {
    write_spans(out, spans, Place::Line);
    out.push('\n');
}

fn list(out: &mut String, items: &[Item], indent: &str) {
    let under = format!("{indent}  ");
    for i in items {
        let _ = write!(out, "{indent}- ");
        line(out, &i.spans);
        write_blocks(out, &i.blocks, &under);
    }
}

/// A table: title row, alignment rule, one line per row.
pub(super) fn table(out: &mut String, t: &Table, indent: &str) {
    let cell = |spans: &[Span]| {
        let mut s = String::new();
        write_spans(&mut s, spans, Place::Cell);
        s
    };
    let row = |out: &mut String, cells: Vec<String>| {
        let _ = writeln!(out, "{indent}| {} |", cells.join(" | "));
    };
    row(
        out,
        t.head()
            .iter()
            .map(|(h, _)| cell(std::slice::from_ref(h)))
            .collect(),
    );
    let rule: Vec<&str> = t
        .head()
        .iter()
        .map(|(_, a)| if *a == Align::Right { "---:" } else { "---" })
        .collect();
    let _ = writeln!(out, "{indent}|{}|", rule.join("|"));
    for r in t.rows() {
        row(out, r.iter().map(|c| cell(c)).collect());
    }
}

fn write_spans(out: &mut String, spans: &[Span], place: Place) {
    for s in spans {
        span(out, s, place);
    }
}

fn span(out: &mut String, s: &Span, place: Place) {
    match s {
        Span::Text(t) => out.push_str(&escape::markdown(t)),
        Span::Code(t) | Span::VerbatimCode(t) => out.push_str(&escape::markdown_code(t)),
        Span::Strong(t) => {
            let _ = write!(out, "**{}**", escape::markdown(t));
        }
        Span::Link { href, text } => {
            let _ = write!(out, "[{}]({})", escape::markdown(text), target(href));
        }
        Span::Status(st) => {
            let word = status_word(*st);
            if *st == Status::Ok {
                out.push_str(word);
            } else {
                let _ = write!(out, "**{}**", word.to_uppercase());
            }
        }
        Span::Verbatim(t) => out.push_str(&in_place(t, place)),
        Span::PipeEscaped(t) => out.push_str(&bars(t)),
    }
}

/// Verbatim text: as it is but held on its line ([`escape::markdown_line`]), and in a table
/// cell, where a `|` would end the cell, with its bars escaped.
fn in_place(t: &str, place: Place) -> String {
    match place {
        Place::Line => escape::markdown_line(t),
        Place::Cell => bars(t),
    }
}

fn bars(t: &str) -> String {
    escape::markdown_cell(&escape::markdown_line(t))
}

fn target(href: &str) -> String {
    escape::markdown_target(href)
}
