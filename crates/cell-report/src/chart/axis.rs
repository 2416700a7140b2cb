//! Axes: tick values and labels, the ratio scale of the phase charts, linear axes of round
//! ticks, and how an axis is drawn. The charts over runs (phase, http) share a frame and
//! a run axis; the soak charts' panels a time axis.

use std::fmt::Write as _;

use super::{GRID, INK, LEFT, MUTED, WIDTH, escape, legend_height, line, num, plot_w};
use crate::figures::short;

/// Top of the plot of a chart over runs: room for the title and the subtitle.
pub(crate) const TOP: f64 = 56.0;
/// Height of the plot of a chart over runs.
pub(crate) const PLOT_H: f64 = 250.0;
/// Room under the plot for two lines of run labels.
pub(crate) const X_LABELS: f64 = 44.0;
const BOTTOM: f64 = 12.0;

/// Width and height of a chart over runs with this legend, in CSS pixels.
pub(crate) fn runs_chart_size(legend: &[impl AsRef<str>]) -> (u32, u32) {
    let h = TOP + PLOT_H + X_LABELS + legend_height(legend) + BOTTOM;
    (WIDTH as u32, h.ceil() as u32)
}

/// Where the legend of a chart over runs starts.
pub(crate) fn runs_legend_top() -> f64 {
    TOP + PLOT_H + X_LABELS
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

/// A ratio tick label: as few decimals as tell the ticks apart, then `×`.
pub(crate) fn ratio_label(v: f64) -> String {
    let s = if v >= 10.0 {
        format!("{v:.0}")
    } else {
        short(v, 3)
    };
    format!("{s}×")
}

/// The y axis of ratios: linear, or logarithmic when the ratios span more than a factor
/// of 3.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Scale {
    pub log: bool,
    lo: f64,
    hi: f64,
}

impl Scale {
    /// The scale of these ratios and 1 (the reference).
    pub fn new(values: impl Iterator<Item = f64>) -> Self {
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
    pub fn y(&self, v: f64) -> f64 {
        TOP + PLOT_H - (self.t(v) - self.lo) / (self.hi - self.lo) * PLOT_H
    }

    /// Whether a ratio is on the axis.
    pub fn contains(&self, v: f64) -> bool {
        let t = self.t(v);
        t >= self.lo - 1e-9 && t <= self.hi + 1e-9
    }

    /// Round ratios on the axis: 1, 2, 5 × 10ᵏ on a log axis (finer when too few).
    pub fn ticks(&self) -> Vec<f64> {
        if !self.log {
            return linear_ticks(self.lo, self.hi);
        }
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
    }
}

/// A linear axis with round ticks, mapped onto pixels `p0` (at `lo`) to `p1` (at `hi`).
#[derive(Clone, Debug)]
pub(crate) struct Lin {
    pub lo: f64,
    pub hi: f64,
    pub ticks: Vec<f64>,
    pub p0: f64,
    pub p1: f64,
}

impl Lin {
    /// `[lo, hi]` widened to the nearest ticks at 1, 2, 2.5 or 5 × 10ᵏ.
    pub fn new(lo: f64, hi: f64, p0: f64, p1: f64) -> Self {
        Self::round(lo, hi, p0, p1, false)
    }

    /// As [`Lin::new`], for counts: whole steps, never 2.5.
    pub fn counts(lo: f64, hi: f64, p0: f64, p1: f64) -> Self {
        Self::round(lo, hi, p0, p1, true)
    }

    /// Exactly `[lo, hi]` (a time axis ends where the soak does), ticks inside it.
    pub fn exact(lo: f64, hi: f64, p0: f64, p1: f64) -> Self {
        Self {
            lo,
            hi,
            ticks: linear_ticks(lo, hi),
            p0,
            p1,
        }
    }

    fn round(lo: f64, hi: f64, p0: f64, p1: f64, whole: bool) -> Self {
        let (lo, hi) = if (hi - lo).abs() < 1e-9 {
            let pad = (lo.abs() * 0.05).max(0.5);
            (lo - pad, hi + pad)
        } else {
            (lo.min(hi), hi.max(lo))
        };
        let t = linear_ticks(lo, hi);
        let mut step = if t.len() >= 2 { t[1] - t[0] } else { hi - lo };
        if whole && step.fract() > 1e-9 {
            step = if step < 1.0 { 1.0 } else { step * 2.0 };
        }
        let a = (lo / step + 1e-9).floor() as i64;
        let b = (hi / step - 1e-9).ceil() as i64;
        Self {
            lo: a as f64 * step,
            hi: b as f64 * step,
            ticks: (a..=b).map(|k| k as f64 * step).collect(),
            p0,
            p1,
        }
    }

    /// The pixel of a value.
    pub fn px(&self, v: f64) -> f64 {
        self.p0 + (v - self.lo) / (self.hi - self.lo) * (self.p1 - self.p0)
    }
}

/// Seconds, or minutes for a soak longer than 15 minutes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct TimeUnit {
    pub div: f64,
    pub name: &'static str,
}

impl TimeUnit {
    /// The unit of a time axis `seconds` long.
    pub fn for_span(seconds: f64) -> Self {
        if seconds > 900.0 {
            Self {
                div: 60.0,
                name: "min",
            }
        } else {
            Self {
                div: 1.0,
                name: "s",
            }
        }
    }
}

/// A y tick at pixel `py` across the plot from `x0` to `x1`: its grid line, its mark when
/// asked, its label.
fn y_tick(out: &mut String, (x0, x1): (f64, f64), py: f64, label: &str, mark: bool) {
    line(out, "grid", (x0, py), (x1, py), GRID, "");
    if mark {
        line(out, "tick", (x0 - 5.0, py), (x0, py), MUTED, "");
    }
    let _ = writeln!(
        out,
        "<text x=\"{}\" y=\"{}\" dy=\"4\" text-anchor=\"end\" fill=\"{INK}\">{label}</text>",
        num(x0 - 8.0),
        num(py)
    );
}

/// An axis title at `(x, cy)`, rotated to read upwards.
fn y_title(out: &mut String, x: u32, cy: f64, title: &str) {
    let cy = num(cy);
    let _ = writeln!(
        out,
        "<text class=\"axis-label\" x=\"{x}\" y=\"{cy}\" transform=\"rotate(-90 {x} {cy})\" text-anchor=\"middle\" fill=\"{INK}\">{}</text>",
        escape(title)
    );
}

/// A tick mark under an x axis at `bottom`.
fn x_tick(out: &mut String, px: f64, bottom: f64) {
    line(out, "tick", (px, bottom), (px, bottom + 5.0), MUTED, "");
}

/// The y axis of a chart over runs: a grid line and a label per tick (`(pixel y, label)`),
/// tick marks when asked, the axis line and its rotated title.
pub(crate) fn runs_y_axis(out: &mut String, ticks: &[(f64, String)], marks: bool, title: &str) {
    out.push_str("<g class=\"axis y\">\n");
    for (py, text) in ticks {
        y_tick(out, (LEFT, LEFT + plot_w()), *py, text, marks);
    }
    line(
        out,
        "axis-line",
        (LEFT, TOP),
        (LEFT, TOP + PLOT_H),
        MUTED,
        "",
    );
    y_title(out, 16, TOP + PLOT_H / 2.0, title);
    out.push_str("</g>\n");
}

/// The x pixel of run slot `i` of `k`.
pub(crate) fn slot_x(i: usize, k: usize) -> f64 {
    LEFT + plot_w() * (i as f64 + 0.5) / k.max(1) as f64
}

/// The x axis of a chart over runs: a tick per run, and its date and id under it, at most one
/// label per 96 px, counted back from the newest run so it is always labelled.
pub(crate) fn runs_x_axis(out: &mut String, runs: &[String]) {
    out.push_str("<g class=\"axis x\">\n");
    let base = TOP + PLOT_H;
    line(
        out,
        "axis-line",
        (LEFT, base),
        (LEFT + plot_w(), base),
        MUTED,
        "",
    );
    let k = runs.len();
    let fit = ((plot_w() / 96.0).floor() as usize).max(1);
    let step = k.div_ceil(fit).max(1);
    for (i, run) in runs.iter().enumerate() {
        let px = slot_x(i, k);
        x_tick(out, px, base);
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
        let x = num(px);
        let _ = writeln!(
            out,
            "<text x=\"{x}\" y=\"{}\" text-anchor=\"middle\" font-size=\"11\" fill=\"{INK}\">{}</text>",
            num(base + 18.0),
            escape(&date)
        );
        let _ = writeln!(
            out,
            "<text x=\"{x}\" y=\"{}\" text-anchor=\"middle\" font-size=\"11\" fill=\"{MUTED}\">{}</text>",
            num(base + 32.0),
            escape(&id)
        );
    }
    out.push_str("</g>\n");
}

/// Grid, ticks and tick labels of a panel; the y axis title rotated on the left.
pub(crate) fn panel_frame(out: &mut String, x: &Lin, y: &Lin, y_title_text: &str) {
    let (top, bottom) = (y.p1, y.p0);
    out.push_str("<g class=\"axis\">\n");
    for t in &x.ticks {
        let px = x.px(*t);
        line(out, "grid", (px, top), (px, bottom), GRID, "");
    }
    for t in &y.ticks {
        y_tick(out, (x.p0, x.p1), y.px(*t), &short(*t, 4), true);
    }
    let _ = writeln!(
        out,
        "<path class=\"axis-line\" d=\"M{x0},{t} L{x0},{b} L{x1},{b}\" fill=\"none\" stroke=\"{MUTED}\"/>",
        x0 = num(x.p0),
        x1 = num(x.p1),
        t = num(top),
        b = num(bottom)
    );
    y_title(out, 18, f64::midpoint(top, bottom), y_title_text);
    out.push_str("</g>\n");
}

/// Tick labels and title of a time axis under a plot whose bottom is `bottom`.
pub(crate) fn time_labels(out: &mut String, x: &Lin, unit: TimeUnit, bottom: f64) {
    out.push_str("<g class=\"axis x\">\n");
    for t in &x.ticks {
        let px = x.px(*t);
        x_tick(out, px, bottom);
        let _ = writeln!(
            out,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"{INK}\">{}</text>",
            num(px),
            num(bottom + 18.0),
            short(*t, 4)
        );
    }
    let _ = writeln!(
        out,
        "<text class=\"axis-label\" x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"{INK}\">time since the load started ({})</text>",
        num(f64::midpoint(x.p0, x.p1)),
        num(bottom + 38.0),
        unit.name
    );
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
        let labels: Vec<String> = t.iter().map(|v| ratio_label(*v)).collect();
        assert!(labels.contains(&"1×".to_owned()), "{labels:?}");
    }

    #[test]
    fn ratios_spanning_more_than_three_times_get_a_log_axis() {
        let s = Scale::new([0.95, 7.9].into_iter());
        assert!(s.log);
        let labels: Vec<String> = s.ticks().iter().map(|v| ratio_label(*v)).collect();
        assert_eq!(labels, ["1×", "1.5×", "2×", "3×", "4×", "5×", "7×"]);
        assert!(s.y(1.0) > s.y(7.0), "up is slower");
        let wide = Scale::new([0.5, 120.0].into_iter());
        let labels: Vec<String> = wide.ticks().iter().map(|v| ratio_label(*v)).collect();
        assert_eq!(
            labels,
            ["0.5×", "1×", "2×", "5×", "10×", "20×", "50×", "100×"]
        );
    }

    #[test]
    fn linear_ticks_land_on_round_numbers() {
        let labels: Vec<String> = linear_ticks(0.9, 1.1)
            .iter()
            .map(|v| ratio_label(*v))
            .collect();
        assert_eq!(labels, ["0.9×", "0.95×", "1×", "1.05×", "1.1×"]);
    }

    #[test]
    fn axes_widen_to_round_ticks_and_counts_take_whole_steps() {
        let y = Lin::new(5.0, 5.14, 100.0, 0.0);
        assert_eq!(
            y.ticks.iter().map(|t| short(*t, 4)).collect::<Vec<_>>(),
            ["5", "5.05", "5.1", "5.15"]
        );
        assert!((y.px(5.0) - 100.0).abs() < 1e-9 && (y.px(5.15) - 0.0).abs() < 1e-9);
        let c = Lin::counts(0.0, 12.0, 100.0, 0.0);
        assert!(c.ticks.iter().all(|t| t.fract() == 0.0), "{:?}", c.ticks);
        let t = Lin::exact(0.0, 120.0, 0.0, 100.0);
        assert_eq!(
            (t.lo, t.hi),
            (0.0, 120.0),
            "a time axis ends where the soak does"
        );
        let flat = Lin::new(7.0, 7.0, 100.0, 0.0);
        assert!(flat.lo < 7.0 && flat.hi > 7.0);
    }
}
