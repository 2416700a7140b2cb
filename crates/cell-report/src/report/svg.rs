//! One SVG chart per cell and phase: every row's ratio over the runs, a shaded confidence band
//! per row (error bars where a row has a single run), the reference as a dashed line at 1,
//! axes with ticks and labels, a title and a legend. Written by hand, coordinates rounded to
//! 0.1 px, so the same report always gives the same bytes.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use super::model::{CellReport, HttpSeries, PhaseReport, Report, Series, clock_name};
use super::{Exporter, Output, chart_path, http_chart_path, soak_chart_path, soak_overlay_path};

/// Writes `charts/<cell>/<phase>.svg`, and for the suites `charts/<cell>/http-rps.svg`,
/// `charts/<cell>/soak-<server>.svg` and `charts/<cell>/soak-overlay.svg`.
#[derive(Clone, Copy, Debug, Default)]
pub struct SvgExporter;

impl Exporter for SvgExporter {
    fn export(&self, report: &Report) -> Vec<Output> {
        let mut out = Vec::new();
        for (id, c) in &report.cells {
            for p in &c.phases {
                out.push(Output::new(
                    chart_path(id.as_str(), p.phase.as_str()),
                    chart(id.as_str(), c, p).into_bytes(),
                ));
            }
            if http_chart_wanted(c) {
                out.push(Output::new(
                    http_chart_path(id.as_str()),
                    http_chart(id.as_str(), c).into_bytes(),
                ));
            }
            let soak = &c.newest.soak;
            for (name, s) in soak
                .iter()
                .filter(|(_, s)| !s.server.result.samples.is_empty())
            {
                out.push(Output::new(
                    soak_chart_path(id.as_str(), name.as_str()),
                    crate::suite::soak_svg(name, &s.server.result, &s.server.settings).into_bytes(),
                ));
            }
            if soak.values().any(|s| !s.server.result.samples.is_empty()) {
                let servers = soak.iter().map(|(n, s)| (n, &s.server));
                out.push(Output::new(
                    soak_overlay_path(id.as_str()),
                    crate::suite::cell_soak_overlay_svg(servers).into_bytes(),
                ));
            }
        }
        out
    }
}

pub(crate) const WIDTH: f64 = 880.0;
pub(crate) const LEFT: f64 = 70.0;
pub(crate) const RIGHT: f64 = 24.0;
const TOP: f64 = 56.0;
const PLOT_H: f64 = 250.0;
/// Room under the plot for two lines of run labels.
const X_LABELS: f64 = 44.0;
pub(crate) const LEGEND_LINE: f64 = 20.0;
const BOTTOM: f64 = 12.0;
/// Average advance of a character at the legend's 12 px, generous so text never overlaps.
const CHAR_W: f64 = 7.0;
pub(crate) const FONT: &str =
    "system-ui, -apple-system, Segoe UI, Roboto, Helvetica, Arial, sans-serif";

/// Colour-blind-friendly categorical colours (Tableau 10 without its pale tones), then the
/// same again dashed.
pub(crate) const PALETTE: [&str; 8] = [
    "#4e79a7", "#f28e2b", "#e15759", "#59a14f", "#b07aa1", "#76b7b2", "#9c755f", "#d37295",
];
const DASHES: [&str; 3] = ["", "6 3", "2 3"];

pub(crate) fn plot_w() -> f64 {
    WIDTH - LEFT - RIGHT
}

/// Legend entries: each row, then the reference line.
fn legend_entries(c: &CellReport, p: &PhaseReport) -> Vec<String> {
    let mut e: Vec<String> = p
        .rows
        .iter()
        .map(|(name, s)| format!("{name} ({})", clock_name(s.clock)))
        .collect();
    e.push(format!("{} = 1 (reference)", c.reference));
    e
}

/// `(columns, column width)` of the legend.
pub(crate) fn legend_layout(entries: &[String]) -> (usize, f64) {
    let widest = entries.iter().map(|e| e.chars().count()).max().unwrap_or(0);
    let col_w = (28.0 + widest as f64 * CHAR_W + 18.0).min(plot_w());
    let cols = ((plot_w() / col_w).floor() as usize).max(1);
    (cols, col_w)
}

/// Width and height of the chart of `p`, in CSS pixels.
pub fn size(c: &CellReport, p: &PhaseReport) -> (u32, u32) {
    let e = legend_entries(c, p);
    let (cols, _) = legend_layout(&e);
    let lines = e.len().div_ceil(cols);
    let h = TOP + PLOT_H + X_LABELS + lines as f64 * LEGEND_LINE + BOTTOM;
    (WIDTH as u32, h.ceil() as u32)
}

/// Escapes text for XML.
pub fn escape(s: &str) -> String {
    cell_schema::escape::html(s)
}

/// The y axis: linear, or logarithmic when the ratios span more than a factor of 3.
#[derive(Clone, Debug, PartialEq)]
struct Scale {
    log: bool,
    lo: f64,
    hi: f64,
}

impl Scale {
    fn new(values: impl Iterator<Item = f64>) -> Self {
        let mut lo: f64 = 1.0;
        let mut hi: f64 = 1.0;
        for v in values.filter(|v| v.is_finite()) {
            lo = lo.min(v);
            hi = hi.max(v);
        }
        if lo > 0.0 && hi / lo > 3.0 {
            let (a, b) = (lo.log10(), hi.log10());
            let pad = (b - a) * 0.05;
            Self {
                log: true,
                lo: a - pad,
                hi: b + pad,
            }
        } else {
            let span = (hi - lo).max(0.02);
            let pad = span * 0.08;
            Self {
                log: false,
                lo: lo - pad,
                hi: hi + pad,
            }
        }
    }

    fn t(&self, v: f64) -> f64 {
        if self.log { v.max(1e-12).log10() } else { v }
    }

    /// The y pixel of a ratio.
    fn y(&self, v: f64) -> f64 {
        TOP + PLOT_H - (self.t(v) - self.lo) / (self.hi - self.lo) * PLOT_H
    }

    fn contains(&self, v: f64) -> bool {
        let t = self.t(v);
        t >= self.lo - 1e-9 && t <= self.hi + 1e-9
    }

    fn ticks(&self) -> Vec<f64> {
        if self.log {
            let lo = 10f64.powf(self.lo);
            let hi = 10f64.powf(self.hi);
            for mults in [
                &[1.0, 2.0, 5.0][..],
                &[1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 7.0][..],
            ] {
                let mut t = Vec::new();
                let e0 = lo.log10().floor() as i32 - 1;
                let e1 = hi.log10().ceil() as i32 + 1;
                for e in e0..=e1 {
                    for m in mults {
                        let v = m * 10f64.powi(e);
                        if v >= lo && v <= hi {
                            t.push(v);
                        }
                    }
                }
                if t.len() >= 4 {
                    return t;
                }
            }
            linear_ticks(lo, hi)
        } else {
            linear_ticks(self.lo, self.hi)
        }
    }
}

/// About five ticks at 1, 2, 2.5 or 5 × 10ᵏ.
pub(crate) fn linear_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let raw = (hi - lo) / 5.0;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    let first = (lo / step - 1e-9).ceil() as i64;
    let last = (hi / step + 1e-9).floor() as i64;
    (first..=last).map(|i| i as f64 * step).collect()
}

/// A tick label: as few decimals as tell the ticks apart, then `×`.
fn tick_label(v: f64) -> String {
    let s = if v >= 10.0 {
        format!("{v:.0}")
    } else {
        let s = format!("{v:.3}");
        s.trim_end_matches('0').trim_end_matches('.').to_owned()
    };
    format!("{s}×")
}

/// The colour and dash of the row at `index` of the cell's rows.
fn style(index: usize) -> (&'static str, &'static str) {
    (
        PALETTE[index % PALETTE.len()],
        DASHES[(index / PALETTE.len()) % DASHES.len()],
    )
}

/// Every row name of the cell, sorted: a row keeps its colour across phases.
fn row_index(c: &CellReport, row: &str) -> usize {
    let all: BTreeSet<&str> = c
        .phases
        .iter()
        .flat_map(|p| p.rows.keys().map(cell_schema::RowName::as_str))
        .collect();
    all.iter().position(|r| *r == row).unwrap_or(0)
}

pub(crate) fn num(v: f64) -> String {
    let s = format!("{v:.1}");
    if s == "-0.0" { "0.0".into() } else { s }
}

/// The chart of one phase of one cell.
pub fn chart(cell_id: &str, c: &CellReport, p: &PhaseReport) -> String {
    let (width, height) = size(c, p);
    let scale = Scale::new(
        p.rows
            .values()
            .flat_map(|s| s.points.iter().flat_map(|q| [q.lo, q.hi, q.median])),
    );
    let mut out = String::new();
    let title = format!(
        "{cell_id} · {}: ratio to {} over runs",
        p.phase, c.reference
    );
    svg_open(&mut out, width, height, &title);
    let _ = writeln!(
        out,
        "<text class=\"subtitle\" x=\"{}\" y=\"40\" font-size=\"11.5\" fill=\"#57606a\">{}</text>",
        num(LEFT),
        escape(&format!(
            "median of per-round ratios to {} ({}) on each row's verdict clock; {}",
            c.reference,
            c.reference_label,
            if c.runs.len() == 1 {
                "bars: confidence interval"
            } else {
                "bands: confidence interval"
            }
        ))
    );
    y_axis(&mut out, &scale, c);
    x_axis(&mut out, c);
    reference_line(&mut out, &scale);
    let n_rows = p.rows.len();
    for (place, (name, s)) in p.rows.iter().enumerate() {
        series(&mut out, c, &scale, name.as_str(), s, (place, n_rows));
    }
    if n_rows == 0 {
        let _ = writeln!(
            out,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"#57606a\">no row measured a ratio on this phase</text>",
            num(LEFT + plot_w() / 2.0),
            num(TOP + PLOT_H / 2.0)
        );
    }
    legend(&mut out, c, p);
    out.push_str("</svg>\n");
    out
}

fn y_axis(out: &mut String, scale: &Scale, c: &CellReport) {
    let ticks: Vec<(f64, String)> = scale
        .ticks()
        .into_iter()
        .map(|t| (scale.y(t), tick_label(t)))
        .collect();
    let label = format!(
        "× {}{}",
        c.reference_label,
        if scale.log { " (log scale)" } else { "" }
    );
    y_axis_with(out, &ticks, true, &label);
}

/// A y axis: a grid line and a label per tick (`(pixel y, label)`), tick marks when asked,
/// the axis line and its rotated title.
fn y_axis_with(out: &mut String, ticks: &[(f64, String)], marks: bool, title: &str) {
    out.push_str("<g class=\"axis y\">\n");
    for (py, text) in ticks {
        let y = num(*py);
        let _ = writeln!(
            out,
            "<line class=\"grid\" x1=\"{}\" y1=\"{y}\" x2=\"{}\" y2=\"{y}\" stroke=\"#eaeef2\"/>",
            num(LEFT),
            num(LEFT + plot_w())
        );
        if marks {
            let _ = writeln!(
                out,
                "<line class=\"tick\" x1=\"{}\" y1=\"{y}\" x2=\"{}\" y2=\"{y}\" stroke=\"#57606a\"/>",
                num(LEFT - 5.0),
                num(LEFT)
            );
        }
        let _ = writeln!(
            out,
            "<text x=\"{}\" y=\"{y}\" dy=\"4\" text-anchor=\"end\" fill=\"#1b1f24\">{text}</text>",
            num(LEFT - 8.0)
        );
    }
    let _ = writeln!(
        out,
        "<line class=\"axis-line\" x1=\"{x}\" y1=\"{}\" x2=\"{x}\" y2=\"{}\" stroke=\"#57606a\"/>",
        num(TOP),
        num(TOP + PLOT_H),
        x = num(LEFT)
    );
    let cy = num(TOP + PLOT_H / 2.0);
    let _ = writeln!(
        out,
        "<text class=\"axis-label\" x=\"16\" y=\"{cy}\" transform=\"rotate(-90 16 {cy})\" text-anchor=\"middle\" fill=\"#1b1f24\">{}</text>",
        escape(title)
    );
    out.push_str("</g>\n");
}

/// An SVG document's opening: the root element, its title, a white background and the title
/// line. Every chart of the report starts so.
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
        "<text class=\"title\" x=\"{}\" y=\"22\" font-size=\"15\" font-weight=\"600\" fill=\"#1b1f24\">{}</text>",
        num(LEFT),
        escape(title)
    );
}

/// A series' line through its points (pixels), dashed when `dash` is not empty.
fn series_path(out: &mut String, pts: impl Iterator<Item = (f64, f64)>, color: &str, dash: &str) {
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
    let dash_attr = if dash.is_empty() {
        String::new()
    } else {
        format!(" stroke-dasharray=\"{dash}\"")
    };
    let _ = writeln!(
        out,
        "<path class=\"line\" d=\"{d}\" fill=\"none\" stroke=\"{color}\" stroke-width=\"2\" stroke-linejoin=\"round\"{dash_attr}/>"
    );
}

/// The x pixel of run slot `i` of `k`.
fn slot_x(i: usize, k: usize) -> f64 {
    LEFT + plot_w() * (i as f64 + 0.5) / k.max(1) as f64
}

fn x_axis(out: &mut String, c: &CellReport) {
    out.push_str("<g class=\"axis x\">\n");
    let base = num(TOP + PLOT_H);
    let _ = writeln!(
        out,
        "<line class=\"axis-line\" x1=\"{}\" y1=\"{base}\" x2=\"{}\" y2=\"{base}\" stroke=\"#57606a\"/>",
        num(LEFT),
        num(LEFT + plot_w())
    );
    let k = c.runs.len();
    // At most one label per 96 px, counted back from the newest run so it is always labelled.
    let fit = ((plot_w() / 96.0).floor() as usize).max(1);
    let step = k.div_ceil(fit).max(1);
    for (i, run) in c.runs.iter().enumerate() {
        let x = num(slot_x(i, k));
        let _ = writeln!(
            out,
            "<line class=\"tick\" x1=\"{x}\" y1=\"{base}\" x2=\"{x}\" y2=\"{}\" stroke=\"#57606a\"/>",
            num(TOP + PLOT_H + 5.0)
        );
        if !(k - 1 - i).is_multiple_of(step) {
            continue;
        }
        let (date, id) = match cell_schema::store::RunDirName::parse(run) {
            Ok(n) => (n.date().to_owned(), n.id().to_owned()),
            Err(_) => (String::new(), run.clone()),
        };
        let id = if id.chars().count() > 14 {
            format!("{}…", id.chars().take(13).collect::<String>())
        } else {
            id
        };
        let _ = writeln!(
            out,
            "<text x=\"{x}\" y=\"{}\" text-anchor=\"middle\" font-size=\"11\" fill=\"#1b1f24\">{}</text>",
            num(TOP + PLOT_H + 18.0),
            escape(&date)
        );
        let _ = writeln!(
            out,
            "<text x=\"{x}\" y=\"{}\" text-anchor=\"middle\" font-size=\"11\" fill=\"#57606a\">{}</text>",
            num(TOP + PLOT_H + 32.0),
            escape(&id)
        );
    }
    out.push_str("</g>\n");
}

fn reference_line(out: &mut String, scale: &Scale) {
    if !scale.contains(1.0) {
        return;
    }
    let y = num(scale.y(1.0));
    let _ = writeln!(
        out,
        "<line class=\"reference\" x1=\"{}\" y1=\"{y}\" x2=\"{}\" y2=\"{y}\" stroke=\"#57606a\" stroke-width=\"1.2\" stroke-dasharray=\"5 4\"/>",
        num(LEFT),
        num(LEFT + plot_w())
    );
}

/// One row: band (or error bar), line, points. `(place, n_rows)`: its place among the
/// phase's rows, for a small sideways offset that keeps intervals of one run apart.
fn series(
    out: &mut String,
    cell: &CellReport,
    scale: &Scale,
    name: &str,
    s: &Series,
    (place, n_rows): (usize, usize),
) {
    let (color, dash) = style(row_index(cell, name));
    let k = cell.runs.len();
    let slot = plot_w() / k.max(1) as f64;
    // Intervals of a lone run sit side by side; over several runs the bands overlap instead,
    // and every point stays on its run's tick.
    let spread = if k == 1 {
        (slot * 0.5 / n_rows.max(1) as f64).min(14.0)
    } else {
        0.0
    };
    let offset = (place as f64 - (n_rows as f64 - 1.0) / 2.0) * spread;
    let xs: Vec<f64> = s
        .points
        .iter()
        .map(|q| {
            let i = cell.runs.iter().position(|r| *r == q.run).unwrap_or(0);
            slot_x(i, k) + offset
        })
        .collect();
    let _ = writeln!(out, "<g class=\"series\" data-row=\"{}\">", escape(name));
    if s.points.len() >= 2 {
        let mut d = String::new();
        for (q, x) in s.points.iter().zip(&xs) {
            let _ = write!(
                d,
                "{}{},{} ",
                if d.is_empty() { "M" } else { "L" },
                num(*x),
                num(scale.y(q.hi))
            );
        }
        for (q, x) in s.points.iter().zip(&xs).rev() {
            let _ = write!(d, "L{},{} ", num(*x), num(scale.y(q.lo)));
        }
        d.push('Z');
        let _ = writeln!(
            out,
            "<path class=\"band\" d=\"{d}\" fill=\"{color}\" fill-opacity=\"0.14\" stroke=\"none\"/>"
        );
    } else {
        for (q, x) in s.points.iter().zip(&xs) {
            let (c0, c1) = (num(x - 4.0), num(x + 4.0));
            let (x, y0, y1) = (num(*x), num(scale.y(q.lo)), num(scale.y(q.hi)));
            let _ = writeln!(
                out,
                "<path class=\"errorbar\" d=\"M{x},{y0} L{x},{y1} M{c0},{y0} L{c1},{y0} M{c0},{y1} L{c1},{y1}\" stroke=\"{color}\" stroke-width=\"1.5\" fill=\"none\"/>"
            );
        }
    }
    series_path(
        out,
        s.points
            .iter()
            .zip(&xs)
            .map(|(q, x)| (*x, scale.y(q.median))),
        color,
        dash,
    );
    for (q, x) in s.points.iter().zip(&xs) {
        let _ = writeln!(
            out,
            "<circle cx=\"{}\" cy=\"{}\" r=\"3.5\" fill=\"{}\" stroke=\"{color}\" stroke-width=\"1.5\"><title>{}</title></circle>",
            num(*x),
            num(scale.y(q.median)),
            if q.answer_ok { color } else { "#ffffff" },
            escape(&format!(
                "{name} in {}: {:.4} ({} clock), CI {:.4}–{:.4} (coverage {:.0}%), n {}{}",
                q.run,
                q.median,
                clock_name(q.clock),
                q.lo,
                q.hi,
                q.level * 100.0,
                q.n,
                if q.answer_ok { "" } else { ", WRONG ANSWER" }
            ))
        );
    }
    out.push_str("</g>\n");
}

fn legend(out: &mut String, c: &CellReport, p: &PhaseReport) {
    let entries = legend_entries(c, p);
    let (cols, col_w) = legend_layout(&entries);
    let top = TOP + PLOT_H + X_LABELS;
    out.push_str("<g class=\"legend\">\n");
    let rows: Vec<(&str, &Series)> = p.rows.iter().map(|(n, s)| (n.as_str(), s)).collect();
    for (i, label) in entries.iter().enumerate() {
        let x = LEFT + (i % cols) as f64 * col_w;
        let y = top + (i / cols) as f64 * LEGEND_LINE + LEGEND_LINE / 2.0;
        let (color, dash) = match rows.get(i) {
            Some((name, _)) => style(row_index(c, name)),
            None => ("#57606a", "5 4"),
        };
        legend_item(out, x, y, (color, dash), rows.get(i).is_some(), label);
    }
    out.push_str("</g>\n");
}

/// One legend entry at `(x, y)`: a line sample in the series' style, its point marker when
/// `dot`, and the label.
fn legend_item(out: &mut String, x: f64, y: f64, style: (&str, &str), dot: bool, label: &str) {
    let (color, dash) = style;
    let dash_attr = if dash.is_empty() {
        String::new()
    } else {
        format!(" stroke-dasharray=\"{dash}\"")
    };
    let y = num(y);
    let _ = writeln!(
        out,
        "<line x1=\"{}\" y1=\"{y}\" x2=\"{}\" y2=\"{y}\" stroke=\"{color}\" stroke-width=\"2\"{dash_attr}/>",
        num(x),
        num(x + 22.0)
    );
    if dot {
        let _ = writeln!(
            out,
            "<circle cx=\"{}\" cy=\"{y}\" r=\"3.5\" fill=\"{color}\"/>",
            num(x + 11.0)
        );
    }
    let _ = writeln!(
        out,
        "<text x=\"{}\" y=\"{y}\" dy=\"4\" fill=\"#1b1f24\">{}</text>",
        num(x + 28.0),
        escape(label)
    );
}

/// A cell gets an http chart once some server and tool was measured in two runs.
pub fn http_chart_wanted(c: &CellReport) -> bool {
    c.http.iter().any(|s| s.points.len() >= 2)
}

/// One colour per server, one dash per tool (its place among the server's tools).
fn http_styles(c: &CellReport) -> Vec<(&'static str, &'static str)> {
    let servers: BTreeSet<&str> = c.http.iter().map(|s| s.server.as_str()).collect();
    let mut seen: Vec<&str> = Vec::new();
    c.http
        .iter()
        .map(|s| {
            let server = servers
                .iter()
                .position(|n| *n == s.server.as_str())
                .unwrap_or(0);
            let tool = seen.iter().filter(|n| **n == s.server.as_str()).count();
            seen.push(s.server.as_str());
            (PALETTE[server % PALETTE.len()], DASHES[tool % DASHES.len()])
        })
        .collect()
}

fn http_legend(c: &CellReport) -> Vec<String> {
    c.http
        .iter()
        .map(|s| format!("{} · {}", s.server, s.tool))
        .collect()
}

/// Width and height of a cell's http chart.
pub fn http_size(c: &CellReport) -> (u32, u32) {
    let e = http_legend(c);
    let (cols, _) = legend_layout(&e);
    let lines = e.len().div_ceil(cols);
    let h = TOP + PLOT_H + X_LABELS + lines as f64 * LEGEND_LINE + BOTTOM;
    (WIDTH as u32, h.ceil() as u32)
}

/// A req/s tick: `0`, `500`, `12.5k`.
fn rps_label(v: f64) -> String {
    let trim = |s: String| {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_owned()
        } else {
            s
        }
    };
    if v.abs() >= 1000.0 {
        format!("{}k", trim(format!("{:.2}", v / 1000.0)))
    } else {
        trim(format!("{v:.2}"))
    }
}

/// Median req/s of every http server and load tool of a cell over the runs: one line per
/// server and tool, on the same run axis as the phase charts.
pub fn http_chart(cell_id: &str, c: &CellReport) -> String {
    let (width, height) = http_size(c);
    let hi = c
        .http
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.rps))
        .filter(|v| v.is_finite())
        .fold(1.0_f64, f64::max);
    let ticks = linear_ticks(0.0, hi * 1.08);
    let step = if ticks.len() >= 2 {
        ticks[1] - ticks[0]
    } else {
        hi
    };
    let top_v = (hi * 1.08 / step).ceil() * step;
    let y = |v: f64| TOP + PLOT_H - v / top_v * PLOT_H;
    let mut out = String::new();
    let title = format!("{cell_id} · http: median req/s over runs");
    svg_open(&mut out, width, height, &title);
    let _ = writeln!(
        out,
        "<text class=\"subtitle\" x=\"{}\" y=\"40\" font-size=\"11.5\" fill=\"#57606a\">median over each run's clean measured runs; higher is faster; each job's own machine and load</text>",
        num(LEFT)
    );
    let ticks: Vec<(f64, String)> = (0..=((top_v / step).round() as i64))
        .map(|k| {
            let v = k as f64 * step;
            (y(v), rps_label(v))
        })
        .collect();
    y_axis_with(&mut out, &ticks, false, "req/s (median)");
    x_axis(&mut out, c);
    let styles = http_styles(c);
    for (s, st) in c.http.iter().zip(&styles) {
        http_line(&mut out, c, s, *st, y);
    }
    let entries = http_legend(c);
    let (cols, col_w) = legend_layout(&entries);
    let top = TOP + PLOT_H + X_LABELS;
    out.push_str("<g class=\"legend\">\n");
    for (i, label) in entries.iter().enumerate() {
        let (color, dash) = styles[i];
        let x = LEFT + (i % cols) as f64 * col_w;
        let ly = top + (i / cols) as f64 * LEGEND_LINE + LEGEND_LINE / 2.0;
        legend_item(&mut out, x, ly, (color, dash), true, label);
    }
    out.push_str("</g>\n</svg>\n");
    out
}

fn http_line(
    out: &mut String,
    cell: &CellReport,
    s: &HttpSeries,
    (color, dash): (&str, &str),
    y_of: impl Fn(f64) -> f64,
) {
    let slots = cell.runs.len();
    let xs: Vec<f64> = s
        .points
        .iter()
        .map(|p| {
            slot_x(
                cell.runs.iter().position(|r| *r == p.run).unwrap_or(0),
                slots,
            )
        })
        .collect();
    let _ = writeln!(
        out,
        "<g class=\"series\" data-server=\"{}\" data-tool=\"{}\">",
        escape(s.server.as_str()),
        escape(&s.tool)
    );
    series_path(
        out,
        s.points.iter().zip(&xs).map(|(p, x)| (*x, y_of(p.rps))),
        color,
        dash,
    );
    for (p, x) in s.points.iter().zip(&xs) {
        let _ = writeln!(
            out,
            "<circle cx=\"{}\" cy=\"{}\" r=\"3.5\" fill=\"{color}\"><title>{}</title></circle>",
            num(*x),
            num(y_of(p.rps)),
            escape(&format!(
                "{} · {} in {}: {:.0} req/s, p99 {:.2} ms, {} clean run(s)",
                s.server, s.tool, p.run, p.rps, p.p99_ms, p.clean_runs
            ))
        );
    }
    out.push_str("</g>\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn narrow_ratios_get_a_linear_axis_that_includes_the_reference() {
        let s = Scale::new([1.02, 1.05].into_iter());
        assert!(!s.log);
        assert!(s.contains(1.0) && s.contains(1.05));
        let t = s.ticks();
        assert!(t.len() >= 3, "{t:?}");
        let labels: Vec<String> = t.iter().map(|v| tick_label(*v)).collect();
        assert!(labels.contains(&"1×".to_owned()), "{labels:?}");
    }

    #[test]
    fn ratios_spanning_more_than_three_times_get_a_log_axis() {
        let s = Scale::new([0.95, 7.9].into_iter());
        assert!(s.log);
        let labels: Vec<String> = s.ticks().iter().map(|v| tick_label(*v)).collect();
        assert_eq!(labels, ["1×", "1.5×", "2×", "3×", "4×", "5×", "7×"]);
        assert!(s.y(1.0) > s.y(7.0), "up is slower");
        let wide = Scale::new([0.5, 120.0].into_iter());
        let labels: Vec<String> = wide.ticks().iter().map(|v| tick_label(*v)).collect();
        assert_eq!(
            labels,
            ["0.5×", "1×", "2×", "5×", "10×", "20×", "50×", "100×"]
        );
    }

    #[test]
    fn linear_ticks_land_on_round_numbers() {
        let labels: Vec<String> = linear_ticks(0.9, 1.1)
            .iter()
            .map(|v| tick_label(*v))
            .collect();
        assert_eq!(labels, ["0.9×", "0.95×", "1×", "1.05×", "1.1×"]);
    }

    #[test]
    fn coordinates_never_print_negative_zero() {
        assert_eq!(num(-0.01), "0.0");
        assert_eq!(num(12.345), "12.3");
    }
}
