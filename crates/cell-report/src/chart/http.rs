//! The http chart of a cell: median req/s of every server and load tool over the runs, on
//! the same run axis as the phase charts, for one workload over one connection shape.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use super::axis::{
    PLOT_H, TOP, linear_ticks, runs_chart_size, runs_legend_top, runs_x_axis, runs_y_axis, slot_x,
};
use super::{
    DASHES, Key, LONG, PALETTE, escape, legend_grid, num, series_path, subtitle, svg_open,
};
use crate::figures::short;
use crate::report::{CellReport, HttpSeries};

/// The series the chart draws: one workload over one shape (`plaintext` over the first
/// shape it was measured in, else the first series'), every server and tool of it; the
/// report's tables carry the rest.
fn charted(c: &CellReport) -> Vec<&HttpSeries> {
    let Some(first) = cell_schema::lead_workload(&c.http, |s| s.workload.as_str()) else {
        return Vec::new();
    };
    c.http
        .iter()
        .filter(|s| s.workload == first.workload && s.shape == first.shape)
        .collect()
}

/// A cell gets an http chart once some server and tool was measured in two runs.
pub(crate) fn wanted(c: &CellReport) -> bool {
    charted(c).into_iter().any(|s| s.points.len() >= 2)
}

/// One colour per server, one dash per tool (its place among the server's tools).
fn styles(c: &CellReport) -> Vec<(&'static str, &'static str)> {
    let servers: BTreeSet<&str> = charted(c).into_iter().map(|s| s.server.as_str()).collect();
    let mut seen: Vec<&str> = Vec::new();
    charted(c)
        .into_iter()
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

fn legend_labels(c: &CellReport) -> Vec<String> {
    charted(c)
        .into_iter()
        .map(|s| format!("{} · {}", s.server, s.tool))
        .collect()
}

/// Width and height of a cell's http chart.
pub(crate) fn size(c: &CellReport) -> (u32, u32) {
    runs_chart_size(&legend_labels(c))
}

/// A req/s tick: `0`, `500`, `12.5k`.
fn rps_label(v: f64) -> String {
    if v.abs() >= 1000.0 {
        format!("{}k", short(v / 1000.0, 2))
    } else {
        short(v, 2)
    }
}

/// The y axis from 0 to the first round tick above the highest median, with 8% headroom:
/// its top and step.
fn rps_axis(c: &CellReport) -> (f64, f64) {
    let hi = charted(c)
        .into_iter()
        .flat_map(|s| s.points.iter().map(|p| p.rps))
        .filter(|v| v.is_finite())
        .fold(1.0_f64, f64::max);
    let ticks = linear_ticks(0.0, hi * 1.08);
    let step = if ticks.len() >= 2 {
        ticks[1] - ticks[0]
    } else {
        hi
    };
    ((hi * 1.08 / step).ceil() * step, step)
}

/// Median req/s of every http server and load tool of a cell over the runs: one line per
/// server and tool.
pub(crate) fn chart(cell_id: &str, c: &CellReport) -> String {
    let (width, height) = size(c);
    let (top_v, step) = rps_axis(c);
    let y = |v: f64| TOP + PLOT_H - v / top_v * PLOT_H;
    let mut out = String::new();
    let which = charted(c).first().map_or_else(String::new, |s| {
        format!(" ({} over {})", s.workload, s.shape)
    });
    let title = format!("{cell_id} · http: median req/s over runs{which}");
    svg_open(&mut out, width, height, &title);
    subtitle(
        &mut out,
        "median over each run's clean measured runs; higher is faster; each job's own machine and load",
    );
    let ticks: Vec<(f64, String)> = (0..=((top_v / step).round() as i64))
        .map(|k| {
            let v = k as f64 * step;
            (y(v), rps_label(v))
        })
        .collect();
    runs_y_axis(&mut out, &ticks, false, "req/s (median)");
    runs_x_axis(&mut out, &c.runs);
    let styles = styles(c);
    for (s, st) in charted(c).into_iter().zip(&styles) {
        line(&mut out, c, s, *st, y);
    }
    let labels = legend_labels(c);
    let entries: Vec<(&str, Key<'_>)> = labels
        .iter()
        .zip(&styles)
        .map(|(label, (color, dash))| {
            (
                label.as_str(),
                Key {
                    color,
                    dash,
                    dot: true,
                    square: false,
                },
            )
        })
        .collect();
    legend_grid(&mut out, runs_legend_top(), LONG, &entries);
    out.push_str("</svg>\n");
    out
}

fn line(
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
