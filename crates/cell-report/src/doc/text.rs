//! Blocks as terminal text: one line per heading, paragraph and list entry (entries
//! indented), tables with their columns padded.

use super::{Align, Block, Item, Span, Table, status_word};

/// How far list entries and table lines are indented under the line before.
const INDENT: &str = "  ";

/// The blocks as text.
pub fn render(blocks: &[Block]) -> String {
    let mut out = String::new();
    write_blocks(&mut out, blocks, "");
    out
}

/// The text of spans, no markup: what a heading or a cell says.
pub fn spans(spans: &[Span]) -> String {
    let mut out = String::new();
    for s in spans {
        match s {
            Span::Text(t)
            | Span::Code(t)
            | Span::Strong(t)
            | Span::Verbatim(t)
            | Span::VerbatimCode(t)
            | Span::PipeEscaped(t)
            | Span::Link { text: t, .. } => out.push_str(t),
            Span::Status(st) => out.push_str(status_word(*st)),
        }
    }
    out
}

fn write_blocks(out: &mut String, blocks: &[Block], indent: &str) {
    for b in blocks {
        block(out, b, indent);
    }
}

fn block(out: &mut String, b: &Block, indent: &str) {
    match b {
        Block::Heading { spans: s, .. } | Block::Para(s) => {
            out.push_str(indent);
            out.push_str(&spans(s));
            out.push('\n');
        }
        Block::List(items) => list(out, items, indent),
        Block::Code(lines) => {
            for l in lines {
                out.push_str(indent);
                out.push_str(l);
                out.push('\n');
            }
        }
        Block::Image { alt, .. } => {
            out.push_str(indent);
            out.push_str(alt);
            out.push('\n');
        }
        Block::Table(t) => table(out, t, indent),
        Block::Blank => out.push('\n'),
    }
}

fn list(out: &mut String, items: &[Item], indent: &str) {
    let entry = format!("{indent}{INDENT}");
    let under = format!("{entry}{INDENT}");
    for i in items {
        out.push_str(&entry);
        out.push_str(&spans(&i.spans));
        out.push('\n');
        write_blocks(out, &i.blocks, &under);
    }
}

/// A table: indented lines, columns padded to their widest cell, trailing blanks trimmed.
pub(super) fn table(out: &mut String, t: &Table, indent: &str) {
    let head: Vec<String> = t
        .head()
        .iter()
        .map(|(h, _)| spans(std::slice::from_ref(h)))
        .collect();
    let rows: Vec<Vec<String>> = t
        .rows()
        .iter()
        .map(|r| r.iter().map(|c| spans(c)).collect())
        .collect();
    let widths: Vec<usize> = (0..head.len())
        .map(|i| {
            rows.iter()
                .map(|r| r[i].chars().count())
                .chain([head[i].chars().count()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |out: &mut String, cells: &[String]| {
        let parts: Vec<String> = cells
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let pad = " ".repeat(widths[i] - c.chars().count());
                match t.align(i) {
                    Align::Left => format!("{c}{pad}"),
                    Align::Right => format!("{pad}{c}"),
                }
            })
            .collect();
        out.push_str(indent);
        out.push_str(INDENT);
        out.push_str(parts.join("  ").trim_end());
        out.push('\n');
    };
    line(out, &head);
    for r in &rows {
        line(out, r);
    }
}
