//! Blocks as HTML elements (the body of a page; its head is the page's).

use std::fmt::Write as _;

use cell_schema::Status;
use cell_schema::escape::html as escape;

use super::{Align, Block, Item, Span, Table, status_word};

/// The blocks as HTML.
pub fn render(blocks: &[Block]) -> String {
    let mut out = String::new();
    write_blocks(&mut out, blocks);
    out
}

fn write_blocks(out: &mut String, blocks: &[Block]) {
    for b in blocks {
        block(out, b);
    }
}

fn block(out: &mut String, b: &Block) {
    match b {
        Block::Heading { level, spans, id } => {
            let _ = write!(out, "<h{level} id=\"{}\">", escape(id));
            write_spans(out, spans);
            let _ = writeln!(out, "</h{level}>");
        }
        Block::Para(s) => {
            out.push_str("<p>");
            write_spans(out, s);
            out.push_str("</p>\n");
        }
        Block::List(items) => list(out, items),
        Block::Code(lines) => {
            let _ = writeln!(out, "<pre><code>{}</code></pre>", escape(&lines.join("\n")));
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
        Block::Table(t) => table(out, t),
        Block::Blank => {}
    }
}

fn list(out: &mut String, items: &[Item]) {
    out.push_str("<ul>\n");
    for i in items {
        out.push_str("<li>");
        write_spans(out, &i.spans);
        write_blocks(out, &i.blocks);
        out.push_str("</li>\n");
    }
    out.push_str("</ul>\n");
}

fn table(out: &mut String, t: &Table) {
    out.push_str("<table>\n<thead><tr>");
    for (h, a) in t.head() {
        let _ = write!(out, "<th{}>", align(*a));
        write_spans(out, std::slice::from_ref(h));
        out.push_str("</th>");
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for r in t.rows() {
        out.push_str("<tr>");
        for (i, c) in r.iter().enumerate() {
            let _ = write!(out, "<td{}>", align(t.align(i)));
            write_spans(out, c);
            out.push_str("</td>");
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody>\n</table>\n");
}

fn write_spans(out: &mut String, spans: &[Span]) {
    for s in spans {
        match s {
            Span::Text(t) | Span::Verbatim(t) | Span::PipeEscaped(t) => {
                out.push_str(&escape(t));
            }
            Span::Code(t) | Span::VerbatimCode(t) => {
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
                    status_word(*st)
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

fn align(a: Align) -> &'static str {
    match a {
        Align::Left => "",
        Align::Right => " class=\"r\"",
    }
}
