//! One table, two markups: GitHub Markdown and aligned plain text.

use std::fmt::Write as _;

/// Column alignment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Align {
    /// Left.
    Left,
    /// Right (numbers).
    Right,
}

/// A table of strings.
#[derive(Clone, Debug)]
pub struct Table {
    head: Vec<(String, Align)>,
    rows: Vec<Vec<String>>,
}

impl Table {
    /// A table with these columns.
    pub fn new(head: &[(&str, Align)]) -> Self {
        Self {
            head: head.iter().map(|(h, a)| ((*h).to_owned(), *a)).collect(),
            rows: Vec::new(),
        }
    }

    /// Adds a row (as many cells as columns).
    pub fn row(&mut self, cells: Vec<String>) {
        debug_assert_eq!(cells.len(), self.head.len());
        self.rows.push(cells);
    }

    /// Replaces one column's cells, top to bottom.
    pub fn set_column(&mut self, col: usize, cells: Vec<String>) {
        for (row, cell) in self.rows.iter_mut().zip(cells) {
            row[col] = cell;
        }
    }

    /// GitHub-flavoured Markdown, `|` in cells escaped.
    pub fn markdown(&self) -> String {
        let esc = |s: &str| s.replace('|', "\\|");
        let line = |cells: Vec<String>| format!("| {} |\n", cells.join(" | "));
        let mut out = line(self.head.iter().map(|(h, _)| esc(h)).collect());
        let rule: Vec<&str> = self
            .head
            .iter()
            .map(|(_, a)| if *a == Align::Right { "---:" } else { "---" })
            .collect();
        let _ = writeln!(out, "|{}|", rule.join("|"));
        for r in &self.rows {
            out += &line(r.iter().map(|c| esc(c)).collect());
        }
        out
    }

    /// Columns padded to their widest cell.
    pub fn text(&self) -> String {
        let width = |i: usize| {
            self.rows
                .iter()
                .map(|r| r[i].chars().count())
                .chain([self.head[i].0.chars().count()])
                .max()
                .unwrap_or(0)
        };
        let widths: Vec<usize> = (0..self.head.len()).map(width).collect();
        let line = |cells: Vec<&str>| {
            let parts: Vec<String> = cells
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    let pad = widths[i] - c.chars().count();
                    match self.head[i].1 {
                        Align::Left => format!("{c}{}", " ".repeat(pad)),
                        Align::Right => format!("{}{c}", " ".repeat(pad)),
                    }
                })
                .collect();
            format!("  {}\n", parts.join("  ").trim_end())
        };
        let mut out = line(self.head.iter().map(|(h, _)| h.as_str()).collect());
        for r in &self.rows {
            out.push_str(&line(r.iter().map(String::as_str).collect()));
        }
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
