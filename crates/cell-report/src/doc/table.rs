//! The table block: column titles with their alignment, rows of cells. Its Markdown, HTML
//! and text are the renderers' ([`markdown`](super::markdown), [`html`](super::html),
//! [`text`](super::text)); [`Table::markdown`] and [`Table::text`] are those, for a table on
//! its own.

use super::{Span, verbatim};

/// Column alignment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Align {
    /// Left.
    Left,
    /// Right (numbers).
    Right,
}

/// A cell of a table: spans side by side.
pub type Cell = Vec<Span>;

/// A table of cells.
#[derive(Clone, Debug, PartialEq)]
pub struct Table {
    head: Vec<(Span, Align)>,
    rows: Vec<Vec<Cell>>,
}

impl Table {
    /// A table with these columns, titles written as they are ([`Span::Verbatim`]).
    pub fn new(head: &[(&str, Align)]) -> Self {
        Self::titled(head.iter().map(|(h, a)| (verbatim(*h), *a)))
    }

    /// A table with these column titles.
    pub fn titled(head: impl IntoIterator<Item = (Span, Align)>) -> Self {
        Self {
            head: head.into_iter().collect(),
            rows: Vec::new(),
        }
    }

    /// Adds a row of cells written as they are ([`Span::Verbatim`]), as many as columns.
    pub fn row(&mut self, cells: Vec<String>) {
        self.push(cells.into_iter().map(|c| vec![verbatim(c)]).collect());
    }

    /// Adds a row of cells of spans, as many as columns.
    pub fn push(&mut self, cells: Vec<Cell>) {
        debug_assert_eq!(cells.len(), self.head.len());
        self.rows.push(cells);
    }

    /// Replaces one column's cells, top to bottom, with text written as it is.
    pub fn set_column(&mut self, col: usize, cells: Vec<String>) {
        for (row, cell) in self.rows.iter_mut().zip(cells) {
            row[col] = vec![verbatim(cell)];
        }
    }

    /// The column titles and alignments.
    pub fn head(&self) -> &[(Span, Align)] {
        &self.head
    }

    /// The body rows, top to bottom.
    pub fn rows(&self) -> &[Vec<Cell>] {
        &self.rows
    }

    /// The alignment of column `i` (left past the last).
    pub fn align(&self, i: usize) -> Align {
        self.head.get(i).map_or(Align::Left, |h| h.1)
    }

    /// GitHub-flavoured Markdown.
    pub fn markdown(&self) -> String {
        let mut out = String::new();
        super::markdown::table(&mut out, self, "");
        out
    }

    /// Columns padded to their widest cell.
    pub fn text(&self) -> String {
        let mut out = String::new();
        super::text::table(&mut out, self, "");
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_markups() {
        let mut t = Table::new(&[("row", Align::Left), ("ratio", Align::Right)]);
        t.row(vec!["c|O2".into(), "1.0000".into()]);
        t.row(vec!["zig-debug".into(), "12.5".into()]);
        assert_eq!(
            t.markdown(),
            "| row | ratio |\n|---|---:|\n| c\\|O2 | 1.0000 |\n| zig-debug | 12.5 |\n"
        );
        assert_eq!(
            t.text(),
            "  row         ratio\n  c|O2       1.0000\n  zig-debug    12.5\n"
        );
    }
}
