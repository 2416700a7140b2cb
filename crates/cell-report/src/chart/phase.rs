//! One chart per cell and phase: every row's ratio over the runs, a shaded confidence band
//! per row (error bars where a row has a single run), the reference as a dashed line at 1,
//! axes with ticks and labels, a title and a legend.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use super::axis::{
    PLOT_H, Scale, TOP, ratio_label, runs_chart_size, runs_legend_top, runs_x_axis, runs_y_axis,
    slot_x,
};
use super::{
    DASHES, Key, LEFT, LONG, MUTED, PALETTE, escape, hollow_square, legend_grid, line, num, plot_w,
    series_path, subtitle, svg_open,
};
use crate::report::{CellReport, PhaseReport, Series};

/// The legend entry of the imported points.
const IMPORTED_LABEL: &str = "imported (wall clock, point ratio)";

/// Whether any row of the phase has an imported point.
fn has_imported(p: &PhaseReport) -> bool {
    p.rows.values().any(|s| !s.imported.is_empty())
}

/// Legend entries: each row, then the reference line, then the imported marker when the
/// phase has imported points.
fn legend_labels(c: &CellReport, p: &PhaseReport) -> Vec<String> {
    let mut e: Vec<String> = p
        .rows
        .iter()
        .map(|(name, s)| format!("{name} ({})", s.clock.name()))
        .collect();
    e.push(format!("{} = 1 (reference)", c.reference));
    if has_imported(p) {
        e.push(IMPORTED_LABEL.into());
    }
    e
}

/// Width and height of the chart of `p`, in CSS pixels.
pub(crate) fn size(c: &CellReport, p: &PhaseReport) -> (u32, u32) {
    runs_chart_size(&legend_labels(c, p))
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

/// The chart of one phase of one cell.
pub(crate) fn chart(cell_id: &str, c: &CellReport, p: &PhaseReport) -> String {
    let (width, height) = size(c, p);
    let scale = Scale::new(p.rows.values().flat_map(|s| {
        s.points
            .iter()
            .flat_map(|q| [q.lo, q.hi, q.median])
            .chain(s.imported.iter().map(|q| q.ratio))
    }));
    let mut out = String::new();
    let title = format!(
        "{cell_id} · {}: ratio to {} over runs",
        p.phase, c.reference
    );
    svg_open(&mut out, width, height, &title);
    subtitle(
        &mut out,
        &escape(&format!(
            "median of per-round ratios to {} ({}) on each row's verdict clock; {}{}",
            c.reference,
            c.reference_label,
            if c.runs.len() == 1 {
                "bars: confidence interval"
            } else {
                "bands: confidence interval"
            },
            if has_imported(p) {
                "; hollow squares: imported points, no interval"
            } else {
                ""
            }
        )),
    );
    y_axis(&mut out, &scale, c);
    runs_x_axis(&mut out, &c.runs);
    reference_line(&mut out, &scale);
    let n_rows = p.rows.len();
    for (place, (name, s)) in p.rows.iter().enumerate() {
        series(&mut out, c, &scale, name.as_str(), s, (place, n_rows));
    }
    if n_rows == 0 {
        let _ = writeln!(
            out,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"{MUTED}\">no row measured a ratio on this phase</text>",
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
        .map(|t| (scale.y(t), ratio_label(t)))
        .collect();
    let label = format!(
        "× {}{}",
        c.reference_label,
        if scale.log { " (log scale)" } else { "" }
    );
    runs_y_axis(out, &ticks, true, &label);
}

fn reference_line(out: &mut String, scale: &Scale) {
    if !scale.contains(1.0) {
        return;
    }
    let y = scale.y(1.0);
    line(
        out,
        "reference",
        (LEFT, y),
        (LEFT + plot_w(), y),
        MUTED,
        " stroke-width=\"1.2\" stroke-dasharray=\"5 4\"",
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
        band(out, scale, s, &xs, color);
    } else if !s.points.is_empty() {
        error_bars(out, scale, s, &xs, color);
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
    points(out, scale, name, s, &xs, color);
    for q in &s.imported {
        let i = cell.runs.iter().position(|r| *r == q.run).unwrap_or(0);
        let title = format!(
            "{name} in {} (imported): {:.4}, a ratio of medians on the wall clock, no interval{}",
            q.run,
            q.ratio,
            if q.answer_ok { "" } else { ", WRONG ANSWER" }
        );
        hollow_square(
            out,
            (slot_x(i, k) + offset, scale.y(q.ratio)),
            color,
            &title,
        );
    }
    out.push_str("</g>\n");
}

/// The confidence band of a row over several runs: up along the upper bounds, back along the
/// lower ones.
fn band(out: &mut String, scale: &Scale, s: &Series, xs: &[f64], color: &str) {
    let mut d = String::new();
    for (q, x) in s.points.iter().zip(xs) {
        let _ = write!(
            d,
            "{}{},{} ",
            if d.is_empty() { "M" } else { "L" },
            num(*x),
            num(scale.y(q.hi))
        );
    }
    for (q, x) in s.points.iter().zip(xs).rev() {
        let _ = write!(d, "L{},{} ", num(*x), num(scale.y(q.lo)));
    }
    d.push('Z');
    let _ = writeln!(
        out,
        "<path class=\"band\" d=\"{d}\" fill=\"{color}\" fill-opacity=\"0.14\" stroke=\"none\"/>"
    );
}

/// The interval of a row's lone point: a bar with caps.
fn error_bars(out: &mut String, scale: &Scale, s: &Series, xs: &[f64], color: &str) {
    for (q, x) in s.points.iter().zip(xs) {
        let (c0, c1) = (num(x - 4.0), num(x + 4.0));
        let (x, y0, y1) = (num(*x), num(scale.y(q.lo)), num(scale.y(q.hi)));
        let _ = writeln!(
            out,
            "<path class=\"errorbar\" d=\"M{x},{y0} L{x},{y1} M{c0},{y0} L{c1},{y0} M{c0},{y1} L{c1},{y1}\" stroke=\"{color}\" stroke-width=\"1.5\" fill=\"none\"/>"
        );
    }
}

/// A marker per point, hollow for a wrong answer, its figures in a tooltip.
fn points(out: &mut String, scale: &Scale, name: &str, s: &Series, xs: &[f64], color: &str) {
    for (q, x) in s.points.iter().zip(xs) {
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
                q.clock.name(),
                q.lo,
                q.hi,
                q.level * 100.0,
                q.n,
                if q.answer_ok { "" } else { ", WRONG ANSWER" }
            ))
        );
    }
}

fn legend(out: &mut String, c: &CellReport, p: &PhaseReport) {
    let labels = legend_labels(c, p);
    let rows: Vec<&str> = p.rows.keys().map(cell_schema::RowName::as_str).collect();
    let entries: Vec<(&str, Key<'_>)> = labels
        .iter()
        .enumerate()
        .map(|(i, label)| {
            let key = match rows.get(i) {
                Some(name) => {
                    let (color, dash) = style(row_index(c, name));
                    Key {
                        color,
                        dash,
                        dot: true,
                        square: false,
                    }
                }
                None if label == IMPORTED_LABEL => Key {
                    color: MUTED,
                    dash: "",
                    dot: false,
                    square: true,
                },
                None => Key {
                    color: MUTED,
                    dash: "5 4",
                    dot: false,
                    square: false,
                },
            };
            (label.as_str(), key)
        })
        .collect();
    legend_grid(out, runs_legend_top(), LONG, &entries);
}
