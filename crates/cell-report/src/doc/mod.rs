//! The one document model of the crate: every `RESULTS.md`, the report's `README.md` and
//! `index.html`, the gate's step summary and every terminal text is a list of [`Block`]s of
//! [`Span`]s, written by one of three renderers: [`markdown`], [`html`] and [`text`]. A
//! figure is therefore formatted once and reads the same in each.
//!
//! Blocks follow one another as they are: the Markdown and text renderers write each block's
//! lines and nothing between them, and [`Block::Blank`] is the empty line between two blocks
//! where an output has one (Markdown needs one between paragraphs). [`spaced`] puts one after
//! every block, the layout of the report page and the suite sections; the job and cell
//! `RESULTS.md`, the step summary and the terminal texts place theirs one by one, as they
//! always have. HTML has no use for them.
//!
//! Escaping is [`cell_schema::escape`]'s; which of its rules a piece of text gets is said by
//! its span kind (see [`Span`]).

pub mod html;
pub mod markdown;
mod table;
pub mod text;

use cell_schema::Status;

pub use table::{Align, Cell, Table};

/// Inline content. The kinds differ in how much of their text Markdown may read as markup:
///
/// - [`Text`](Span::Text), [`Code`](Span::Code), [`Strong`](Span::Strong) and
///   [`Link`](Span::Link) are escaped fully ([`escape::markdown`](cell_schema::escape::markdown),
///   [`escape::markdown_code`](cell_schema::escape::markdown_code)): the report page and the
///   suite sections (of a job's and a cell's `RESULTS.md` as well), whose text comes from
///   results, configs and tools' output.
/// - [`Verbatim`](Span::Verbatim) keeps its own inline markup (the code spans a reason names
///   a row in) but is held on its line
///   ([`escape::markdown_line`](cell_schema::escape::markdown_line): line breaks, `<`, entity
///   references, a block it would open), and inside a table cell its `|` escaped, which would
///   split the cell; [`VerbatimCode`](Span::VerbatimCode) is a code
///   span ([`escape::markdown_code`](cell_schema::escape::markdown_code)): the workload job's
///   and cell's `RESULTS.md` (reasons, versions, machine lines, protocol), the header and
///   footer of a suite job's, the step summary's headings and table, and every terminal text.
/// - [`PipeEscaped`](Span::PipeEscaped) is a [`Verbatim`](Span::Verbatim) whose every `|` is
///   escaped, in a table or not: the failures and notices of the step summary.
///
/// HTML escapes every kind alike ([`escape::html`](cell_schema::escape::html)); text writes
/// every kind as it is.
#[derive(Clone, Debug, PartialEq)]
pub enum Span {
    /// Plain text, every markup character escaped.
    Text(String),
    /// Monospace (identifiers, paths), escaped as a code span.
    Code(String),
    /// An emphasised figure, escaped as text.
    Strong(String),
    /// A relative link.
    Link {
        /// Target, relative to the page's folder (or `#anchor`).
        href: String,
        /// What the link reads as.
        text: String,
    },
    /// A verdict, coloured in HTML, capitals in Markdown unless it is `ok`.
    Status(Status),
    /// Text with its own inline markup, held on its line; `|` escaped in a table cell.
    Verbatim(String),
    /// A code span, escaped as one.
    VerbatimCode(String),
    /// Verbatim text whose every `|` is escaped, wherever it stands.
    PipeEscaped(String),
}

/// Block content.
#[derive(Clone, Debug, PartialEq)]
pub enum Block {
    /// A heading; `id` is the anchor GitHub derives from its text, set explicitly in HTML.
    Heading {
        /// 1–6.
        level: u8,
        /// What the heading says.
        spans: Vec<Span>,
        /// The anchor GitHub derives from its text, set explicitly in HTML.
        id: String,
    },
    /// A paragraph: one line of spans.
    Para(Vec<Span>),
    /// A bulleted list (in text, lines indented under the line before).
    List(Vec<Item>),
    /// A fenced code block, one string per line.
    Code(Vec<String>),
    /// An image (an SVG chart), relative to the page's folder.
    Image {
        /// Its path, relative to the page.
        src: String,
        /// What the image shows, for readers that cannot see it.
        alt: String,
        /// Width in CSS pixels.
        width: u32,
        /// Height in CSS pixels.
        height: u32,
    },
    /// A table (in text, columns padded to their widest cell).
    Table(Table),
    /// An empty line.
    Blank,
}

/// One entry of a [`Block::List`]: its line, and blocks that belong to it, indented under it.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Item {
    /// The entry's line.
    pub spans: Vec<Span>,
    /// Blocks under it (a log excerpt).
    pub blocks: Vec<Block>,
}

impl From<Vec<Span>> for Item {
    fn from(spans: Vec<Span>) -> Self {
        Self {
            spans,
            blocks: Vec::new(),
        }
    }
}

impl Block {
    /// A heading of spans, its anchor derived from their text.
    pub fn heading(level: u8, spans: Vec<Span>) -> Self {
        Self::Heading {
            level,
            id: slug(&text::spans(&spans)),
            spans,
        }
    }

    /// A list of one-line entries.
    pub fn list(items: impl IntoIterator<Item = Vec<Span>>) -> Self {
        Self::List(items.into_iter().map(Item::from).collect())
    }
}

/// A [`Span::Text`].
pub fn text(s: impl Into<String>) -> Span {
    Span::Text(s.into())
}

/// A [`Span::Code`].
pub fn code(s: impl Into<String>) -> Span {
    Span::Code(s.into())
}

/// A [`Span::Verbatim`].
pub fn verbatim(s: impl Into<String>) -> Span {
    Span::Verbatim(s.into())
}

/// A [`Span::VerbatimCode`].
pub fn verbatim_code(s: impl Into<String>) -> Span {
    Span::VerbatimCode(s.into())
}

/// A heading of one [`Span::Text`].
pub fn text_heading(level: u8, t: impl Into<String>) -> Block {
    Block::heading(level, vec![text(t)])
}

/// A heading of one [`Span::Verbatim`].
pub fn verbatim_heading(level: u8, t: impl Into<String>) -> Block {
    Block::heading(level, vec![verbatim(t)])
}

/// A paragraph of one [`Span::Verbatim`].
pub fn verbatim_para(s: impl Into<String>) -> Block {
    Block::Para(vec![verbatim(s)])
}

/// The blocks with an empty line after each: the layout of the report page and of the
/// suite sections.
pub fn spaced(blocks: impl IntoIterator<Item = Block>) -> Vec<Block> {
    blocks.into_iter().flat_map(|b| [b, Block::Blank]).collect()
}

/// The anchor GitHub gives a heading: lower case, spaces to `-`, punctuation other than `-`
/// and `_` dropped.
pub fn slug(text: &str) -> String {
    text.chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c.to_ascii_lowercase()),
            _ => None,
        })
        .collect()
}

/// `ok`, `noisy`, `failed`: a verdict as a [`Span::Status`] writes it.
pub fn status_word(s: Status) -> &'static str {
    match s {
        Status::Ok => "ok",
        Status::Noisy => "noisy",
        Status::Failed => "failed",
    }
}

/// A table with these column titles as [`Span::Text`] and these rows: the tables of the
/// report page and of the suite sections.
pub fn text_table(head: &[(&str, Align)], rows: Vec<Vec<Cell>>) -> Block {
    let mut t = Table::titled(head.iter().map(|(h, a)| (text(*h), *a)));
    for r in rows {
        t.push(r);
    }
    Block::Table(t)
}
