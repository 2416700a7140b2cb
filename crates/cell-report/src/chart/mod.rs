//! Every chart of the crate, drawn by hand as SVG with one toolkit: the phase charts, the
//! http chart and the footprint bars of the report ([`phase`], [`http`], [`footprint`]), and
//! the soak charts of a server and of every server ([`soak`]). Coordinates are rounded to
//! 0.1 px, so the same input always gives the same bytes.
//!
//! This module holds the primitives they share: the document opening, escaping, number
//! formatting, colours, legend entries and lines; [`axis`] holds the axes.

pub(crate) mod axis;
pub(crate) mod footprint;
pub(crate) mod http;
pub(crate) mod phase;
pub(crate) mod soak;

use std::fmt::Write as _;

/// Width of every chart.
pub(crate) const WIDTH: f64 = 880.0;
/// Left of the plot: room for the y tick labels and the rotated axis title.
pub(crate) const LEFT: f64 = 70.0;
/// Right margin.
pub(crate) const RIGHT: f64 = 24.0;
/// Height of a line of legend entries.
pub(crate) const LEGEND_LINE: f64 = 20.0;
/// Average advance of a character at the legend's 12 px, generous so text never overlaps.
const CHAR_W: f64 = 7.0;
const FONT: &str = "system-ui, -apple-system, Segoe UI, Roboto, Helvetica, Arial, sans-serif";

/// Text.
pub(crate) const INK: &str = "#1b1f24";
/// Secondary text, axes, ticks.
pub(crate) const MUTED: &str = "#57606a";
/// Grid lines.
pub(crate) const GRID: &str = "#eaeef2";

/// Colour-blind-friendly categorical colours (Tableau 10 without its pale tones), then the
/// same again dashed.
pub(crate) const PALETTE: [&str; 8] = [
    "#4e79a7", "#f28e2b", "#e15759", "#59a14f", "#b07aa1", "#76b7b2", "#9c755f", "#d37295",
];
/// Dash patterns, once the palette is used up.
pub(crate) const DASHES: [&str; 3] = ["", "6 3", "2 3"];

/// Width of the plot.
pub(crate) fn plot_w() -> f64 {
    WIDTH - LEFT - RIGHT
}

/// Text for SVG content and attributes.
pub(crate) fn escape(s: &str) -> String {
    cell_schema::escape::html(s)
}

/// A coordinate: one decimal, never `-0.0`.
pub(crate) fn num(v: f64) -> String {
    let s = format!("{v:.1}");
    if s == "-0.0" { "0.0".into() } else { s }
}

/// ` stroke-dasharray="…"`, or nothing for a solid line.
fn dash_attr(dash: &str) -> String {
    if dash.is_empty() {
        String::new()
    } else {
        format!(" stroke-dasharray=\"{dash}\"")
    }
}

/// An SVG document's opening: the root element, its title, a white background and the title
/// line. Every chart starts so.
pub(crate) fn svg_open(out: &mut String, width: u32, height: u32, title: &str) {
    let _ = writeln!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\" font-family=\"{FONT}\" font-size=\"12\" role=\"img\">"
    );
    let _ = writeln!(out, "<title>{}</title>", escape(title));
    let _ = writeln!(
        out,
        "<rect class=\"background\" x=\"0\" y=\"0\" width=\"{width}\" height=\"{height}\" fill=\"#ffffff\"/>"
    );
    let _ = writeln!(
        out,
        "<text class=\"title\" x=\"{}\" y=\"22\" font-size=\"15\" font-weight=\"600\" fill=\"{INK}\">{}</text>",
        num(LEFT),
        escape(title)
    );
}

/// The subtitle under a chart's title (charts over runs): `markup`, its text escaped.
pub(crate) fn subtitle(out: &mut String, markup: &str) {
    let _ = writeln!(
        out,
        "<text class=\"subtitle\" x=\"{}\" y=\"40\" font-size=\"11.5\" fill=\"{MUTED}\">{markup}</text>",
        num(LEFT)
    );
}

/// A straight line of a class (`grid`, `tick`, `axis-line`, …) from `a` to `b`; `extra` are
/// further attributes, each with its leading space.
pub(crate) fn line(
    out: &mut String,
    class: &str,
    a: (f64, f64),
    b: (f64, f64),
    stroke: &str,
    extra: &str,
) {
    let _ = writeln!(
        out,
        "<line class=\"{class}\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{stroke}\"{extra}/>",
        num(a.0),
        num(a.1),
        num(b.0),
        num(b.1)
    );
}

/// A series' line through its points (pixels) as a path, dashed when `dash` is not empty.
pub(crate) fn series_path(
    out: &mut String,
    pts: impl Iterator<Item = (f64, f64)>,
    color: &str,
    dash: &str,
) {
    let mut d = String::new();
    for (x, y) in pts {
        let _ = write!(
            d,
            "{}{},{}",
            if d.is_empty() { "M" } else { " L" },
            num(x),
            num(y)
        );
    }
    let _ = writeln!(
        out,
        "<path class=\"line\" d=\"{d}\" fill=\"none\" stroke=\"{color}\" stroke-width=\"2\" stroke-linejoin=\"round\"{}/>",
        dash_attr(dash)
    );
}

/// A line through points (pixels) as a polyline; nothing without points. `extra` are further
/// attributes, each with its leading space.
pub(crate) fn polyline(
    out: &mut String,
    points: &[(f64, f64)],
    color: &str,
    width: f64,
    extra: &str,
) {
    if points.is_empty() {
        return;
    }
    let pts: Vec<String> = points
        .iter()
        .map(|(x, y)| format!("{},{}", num(*x), num(*y)))
        .collect();
    let _ = writeln!(
        out,
        "<polyline points=\"{}\" fill=\"none\" stroke=\"{color}\" stroke-width=\"{width}\" stroke-linejoin=\"round\"{extra}/>",
        pts.join(" ")
    );
}

/// How a series is drawn in a legend: its colour, its dash (empty: solid) and whether its
/// point marker is shown.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Key<'a> {
    pub color: &'a str,
    pub dash: &'a str,
    pub dot: bool,
    /// A hollow square and no line: the imported points, which no line joins.
    pub square: bool,
}

/// The line sample of a legend entry: its length and where the label starts, both from the
/// entry's left.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Sample {
    line: f64,
    label: f64,
}

/// The sample of the charts over runs.
pub(crate) const LONG: Sample = Sample {
    line: 22.0,
    label: 28.0,
};
/// The sample of the soak charts.
pub(crate) const SHORT: Sample = Sample {
    line: 18.0,
    label: 23.0,
};

impl Sample {
    /// The room an entry of `chars` characters takes, gap to the next included.
    fn advance(self, chars: usize) -> f64 {
        self.label + chars as f64 * CHAR_W + 18.0
    }
}

/// One legend entry at `(x, y)`: a line sample in the series' style, its point marker when
/// the key has one, and the label.
pub(crate) fn legend_entry(
    out: &mut String,
    (x, y): (f64, f64),
    sample: Sample,
    key: Key<'_>,
    label: &str,
) {
    let color = key.color;
    if key.square {
        hollow_square(out, (x + 11.0, y), color, "");
    }
    let y = num(y);
    if !key.square {
        let _ = writeln!(
            out,
            "<line x1=\"{}\" y1=\"{y}\" x2=\"{}\" y2=\"{y}\" stroke=\"{color}\" stroke-width=\"2\"{}/>",
            num(x),
            num(x + sample.line),
            dash_attr(key.dash)
        );
    }
    if key.dot {
        let _ = writeln!(
            out,
            "<circle cx=\"{}\" cy=\"{y}\" r=\"3.5\" fill=\"{color}\"/>",
            num(x + 11.0)
        );
    }
    let _ = writeln!(
        out,
        "<text x=\"{}\" y=\"{y}\" dy=\"4\" fill=\"{INK}\">{}</text>",
        num(x + sample.label),
        escape(label)
    );
}

/// The marker of an imported point: a hollow square centred on `(x, y)`, with `title` (escaped
/// here; none when empty) as its tooltip.
pub(crate) fn hollow_square(out: &mut String, (x, y): (f64, f64), color: &str, title: &str) {
    let tip = if title.is_empty() {
        String::new()
    } else {
        format!("<title>{}</title>", escape(title))
    };
    let _ = writeln!(
        out,
        "<rect class=\"imported\" x=\"{}\" y=\"{}\" width=\"8\" height=\"8\" fill=\"#ffffff\" stroke=\"{color}\" stroke-width=\"1.5\">{tip}</rect>",
        num(x - 4.0),
        num(y - 4.0)
    );
}

/// Entries side by side from `x` on one line at `y` (a soak panel's legend).
pub(crate) fn legend_row(out: &mut String, (x, y): (f64, f64), entries: &[(&str, Key<'_>)]) {
    let mut x = x;
    for (label, key) in entries {
        legend_entry(out, (x, y), SHORT, *key, label);
        x += SHORT.advance(label.chars().count());
    }
}

/// `(columns, column width)` of a legend grid: as many columns of the widest entry as fit
/// the plot's width.
pub(crate) fn legend_layout(labels: &[impl AsRef<str>]) -> (usize, f64) {
    let widest = labels
        .iter()
        .map(|e| e.as_ref().chars().count())
        .max()
        .unwrap_or(0);
    let col_w = LONG.advance(widest).min(plot_w());
    let cols = ((plot_w() / col_w).floor() as usize).max(1);
    (cols, col_w)
}

/// The height of a legend grid of these labels.
pub(crate) fn legend_height(labels: &[impl AsRef<str>]) -> f64 {
    let (cols, _) = legend_layout(labels);
    labels.len().div_ceil(cols) as f64 * LEGEND_LINE
}

/// A legend grid from `top`, entries row by row, in a `legend` group.
pub(crate) fn legend_grid(out: &mut String, top: f64, sample: Sample, entries: &[(&str, Key<'_>)]) {
    let labels: Vec<&str> = entries.iter().map(|(l, _)| *l).collect();
    let (cols, col_w) = legend_layout(&labels);
    out.push_str("<g class=\"legend\">\n");
    for (i, (label, key)) in entries.iter().enumerate() {
        let x = LEFT + (i % cols) as f64 * col_w;
        let y = top + (i / cols) as f64 * LEGEND_LINE + LEGEND_LINE / 2.0;
        legend_entry(out, (x, y), sample, *key, label);
    }
    out.push_str("</g>\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coordinates_never_print_negative_zero() {
        assert_eq!(num(-0.01), "0.0");
        assert_eq!(num(12.345), "12.3");
    }
}
