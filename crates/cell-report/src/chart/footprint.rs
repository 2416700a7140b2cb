//! The footprint chart of a cell, from its newest workload run: one horizontal bar per row
//! for its binary bytes with its text bytes (the code section) drawn inside it, and one per
//! toolchain for its installed size. Each panel has its own linear scale from 0; every bar
//! is labelled with its figure, `–` where the results have none.

use std::fmt::Write as _;

use super::axis::{TOP, linear_ticks};
use super::{GRID, INK, LEFT, MUTED, PALETTE, RIGHT, WIDTH, escape, line, num, subtitle, svg_open};
use crate::figures::short;
use crate::footprint::{FootprintRow, ToolchainSize, bytes, method_name};
use crate::report::CellReport;

/// Room left of the bars for their names.
const NAMES: f64 = 200.0;
/// Room right of the longest bar for its figure.
const FIGURE: f64 = 190.0;
const BAR_H: f64 = 16.0;
const BAR_GAP: f64 = 8.0;
/// A panel's title line and its tick labels above the bars.
const PANEL_HEAD: f64 = 40.0;
const PANEL_GAP: f64 = 18.0;
const BOTTOM: f64 = 14.0;

/// A cell gets a footprint chart when its newest workload run has rows.
pub(crate) fn wanted(c: &CellReport) -> bool {
    !c.newest.footprint.is_empty()
}

fn panel_h(bars: usize) -> f64 {
    PANEL_HEAD + bars as f64 * (BAR_H + BAR_GAP)
}

/// Width and height of a cell's footprint chart.
pub(crate) fn size(c: &CellReport) -> (u32, u32) {
    let n = &c.newest;
    let h = TOP + panel_h(n.footprint.len()) + PANEL_GAP + panel_h(n.installed.len()) + BOTTOM;
    (WIDTH as u32, h.ceil() as u32)
}

/// Where the bars of a panel start and end, the top value of its scale, and the binary
/// unit its ticks are round in.
struct Panel {
    top: f64,
    x0: f64,
    x1: f64,
    max: f64,
    unit: (f64, &'static str),
    measured: bool,
}

/// The largest binary unit not above `v`: ticks at round KiB or MiB, not at round thousands.
fn unit_of(v: f64) -> (f64, &'static str) {
    [
        (1024.0 * 1024.0 * 1024.0, "GiB"),
        (1024.0 * 1024.0, "MiB"),
        (1024.0, "KiB"),
    ]
    .into_iter()
    .find(|(u, _)| v >= *u)
    .unwrap_or((1.0, "B"))
}

impl Panel {
    fn new(top: f64, largest: u64) -> Self {
        let measured = largest > 0;
        let largest = largest.max(1) as f64;
        let unit = unit_of(largest);
        let in_unit = largest / unit.0;
        let ticks = linear_ticks(0.0, in_unit);
        let step = if ticks.len() >= 2 {
            ticks[1] - ticks[0]
        } else {
            in_unit
        };
        Self {
            top,
            x0: LEFT.max(NAMES),
            x1: WIDTH - RIGHT - FIGURE,
            max: (in_unit / step).ceil() * step * unit.0,
            unit,
            measured,
        }
    }

    fn x(&self, v: u64) -> f64 {
        self.x0 + v as f64 / self.max * (self.x1 - self.x0)
    }

    fn bar_y(&self, i: usize) -> f64 {
        self.top + PANEL_HEAD + i as f64 * (BAR_H + BAR_GAP)
    }

    /// The panel's title, its grid with tick labels in bytes, and the line bars stand on.
    fn frame(&self, out: &mut String, title: &str, bars: usize) {
        let _ = writeln!(
            out,
            "<text class=\"panel-title\" x=\"{}\" y=\"{}\" font-weight=\"600\" fill=\"{INK}\">{}</text>",
            num(LEFT.min(NAMES)),
            num(self.top + 14.0),
            escape(title)
        );
        let bottom = self.bar_y(bars) - BAR_GAP / 2.0;
        let head = self.top + PANEL_HEAD - 6.0;
        let (size, name) = self.unit;
        // Nothing measured: no scale to draw, only the dashes.
        let ticks = if self.measured {
            linear_ticks(0.0, self.max / size)
        } else {
            Vec::new()
        };
        for t in ticks {
            let px = self.x0 + t * size / self.max * (self.x1 - self.x0);
            line(out, "grid", (px, head), (px, bottom), GRID, "");
            let _ = writeln!(
                out,
                "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"11\" fill=\"{MUTED}\">{}</text>",
                num(px),
                num(head - 4.0),
                escape(&if t == 0.0 {
                    "0".to_owned()
                } else {
                    format!("{} {name}", short(t, 2))
                })
            );
        }
        line(
            out,
            "axis-line",
            (self.x0, head),
            (self.x0, bottom),
            MUTED,
            "",
        );
    }

    /// The `i`th bar: its name, its bar, its inner bar when it has one, its figure.
    fn bar(&self, out: &mut String, i: usize, bar: &Bar<'_>) {
        let Bar {
            name,
            value,
            inner,
            color,
            figure,
        } = *bar;
        let y = self.bar_y(i);
        let mid = num(y + BAR_H / 2.0);
        let _ = writeln!(
            out,
            "<text x=\"{}\" y=\"{mid}\" dy=\"4\" text-anchor=\"end\" fill=\"{INK}\">{}</text>",
            num(self.x0 - 8.0),
            escape(name)
        );
        let end = value.map_or(self.x0, |v| self.x(v));
        if let Some(v) = value {
            let _ = writeln!(
                out,
                "<rect class=\"bar\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{color}\" fill-opacity=\"0.35\"><title>{}</title></rect>",
                num(self.x0),
                num(y),
                num(self.x(v) - self.x0),
                num(BAR_H),
                escape(&format!("{name}: {v} bytes"))
            );
        }
        if let Some(t) = inner {
            let _ = writeln!(
                out,
                "<rect class=\"inner\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{color}\"><title>{}</title></rect>",
                num(self.x0),
                num(y + 4.0),
                num(self.x(t) - self.x0),
                num(BAR_H - 8.0),
                escape(&format!("{name}: text {t} bytes"))
            );
        }
        let _ = writeln!(
            out,
            "<text x=\"{}\" y=\"{mid}\" dy=\"4\" fill=\"{INK}\">{}</text>",
            num(end + 6.0),
            escape(figure)
        );
    }
}

/// What one bar shows.
#[derive(Clone, Copy)]
struct Bar<'a> {
    name: &'a str,
    value: Option<u64>,
    inner: Option<u64>,
    color: &'a str,
    figure: &'a str,
}

fn row_figure(r: &FootprintRow) -> String {
    format!(
        "{} · text {}",
        bytes(r.binary_bytes),
        r.text_bytes.map_or_else(|| "–".to_owned(), bytes)
    )
}

fn size_figure(s: &ToolchainSize) -> (Option<u64>, String) {
    match &s.installed {
        Some(i) => match i.bytes {
            Some(b) => (Some(b), format!("{} ({})", bytes(b), method_name(i.method))),
            None => (None, "– (not measured)".into()),
        },
        None => (None, "– (not recorded)".into()),
    }
}

/// The footprint chart of a cell's newest workload run.
pub(crate) fn chart(cell_id: &str, c: &CellReport) -> String {
    let n = &c.newest;
    let (width, height) = size(c);
    let run = n.footprint_run.as_deref().unwrap_or(&n.run);
    let mut out = String::new();
    svg_open(
        &mut out,
        width,
        height,
        &format!("{cell_id} · footprint in {run}"),
    );
    subtitle(
        &mut out,
        &escape(
            "binary bytes per row, its text bytes (the code section) inside; installed size per toolchain; each from its own job",
        ),
    );
    let rows = Panel::new(
        TOP,
        n.footprint
            .iter()
            .map(|r| r.binary_bytes)
            .max()
            .unwrap_or(0),
    );
    rows.frame(&mut out, "binary and text bytes per row", n.footprint.len());
    for (i, r) in n.footprint.iter().enumerate() {
        let name = format!("{} · {}", r.row, r.toolchain);
        let figure = row_figure(r);
        let bar = Bar {
            name: &name,
            value: Some(r.binary_bytes),
            inner: r.text_bytes,
            color: PALETTE[0],
            figure: &figure,
        };
        rows.bar(&mut out, i, &bar);
    }
    let top = TOP + panel_h(n.footprint.len()) + PANEL_GAP;
    let largest = n
        .installed
        .iter()
        .filter_map(|s| s.installed.as_ref()?.bytes)
        .max()
        .unwrap_or(0);
    let sizes = Panel::new(top, largest);
    sizes.frame(&mut out, "installed size per toolchain", n.installed.len());
    for (i, s) in n.installed.iter().enumerate() {
        let (value, figure) = size_figure(s);
        let bar = Bar {
            name: s.toolchain.as_str(),
            value,
            inner: None,
            color: PALETTE[1],
            figure: &figure,
        };
        sizes.bar(&mut out, i, &bar);
    }
    out.push_str("</svg>\n");
    out
}
