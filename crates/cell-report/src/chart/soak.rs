//! The soak charts: a server's RSS, CPU, threads and fds over time in three panels, and
//! every server's RSS on one chart (the overlay).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use cell_schema::escape::one_line;
use cell_schema::{CellSoakServer, Drift, ServerName, SoakServerResult, SoakSettings};

use super::axis::{Lin, TimeUnit, panel_frame, time_labels};
use super::{
    INK, Key, LEFT, MUTED, PALETTE, SHORT, WIDTH, escape, legend_grid, legend_height, legend_row,
    line, num, plot_w, polyline,
};
use crate::figures::{drift_name, dur, mib_kib, signed};

/// Height of a server's soak chart.
const SOAK_H: f64 = TOP + 3.0 * (HEAD + PANEL_H) + 2.0 * GAP + X_FOOT;
/// Room for the title and three caption lines.
const TOP: f64 = 86.0;
/// A panel's title and legend row, above its plot.
const HEAD: f64 = 24.0;
const PANEL_H: f64 = 130.0;
const GAP: f64 = 16.0;
/// Under the last plot: tick labels and the axis title.
const X_FOOT: f64 = 52.0;
const OVERLAY_TOP: f64 = 62.0;
const OVERLAY_H: f64 = 300.0;
/// The time before the fit window.
const SHADE: &str = "#f1f3f5";
const RSS: &str = PALETTE[0];
const FIT: &str = PALETTE[2];
const CPU: &str = PALETTE[1];
const THREADS: &str = PALETTE[3];
const FDS: &str = PALETTE[4];

/// Width and height of a server's chart, in CSS pixels.
pub(crate) fn server_size() -> (u32, u32) {
    (WIDTH as u32, SOAK_H as u32)
}

/// Width and height of the overlay of these servers; `None` when none has samples (then it
/// shows no line).
pub(crate) fn overlay_size<'a>(
    servers: impl Iterator<Item = (&'a ServerName, &'a SoakServerResult)>,
) -> Option<(u32, u32)> {
    let entries = overlay_entries(servers);
    (!entries.is_empty()).then(|| (WIDTH as u32, overlay_height(&entries).ceil() as u32))
}

/// A line (or solid) legend key of a colour, never with a point marker.
fn key(color: &str, dashed: bool) -> Key<'_> {
    Key {
        color,
        dash: if dashed { "6 3" } else { "" },
        dot: false,
        square: false,
    }
}

/// The time axis of a soak: from 0 to the longer of the planned duration and the last sample.
fn time_axis<'a>(
    runs: impl Iterator<Item = (&'a SoakServerResult, &'a SoakSettings)>,
) -> (Lin, TimeUnit) {
    let end = runs
        .flat_map(|(s, set)| {
            s.samples
                .iter()
                .map(|x| x.t_s)
                .chain([set.config.duration_s, set.config.window_start_s])
        })
        .filter(|t| t.is_finite())
        .fold(0.0_f64, f64::max);
    let unit = TimeUnit::for_span(end);
    let end = if end > 0.0 { end } else { 1.0 };
    (Lin::exact(0.0, end / unit.div, LEFT, LEFT + plot_w()), unit)
}

/// The SVG opening at a size in (fractional) pixels.
fn svg_open(out: &mut String, width: f64, height: f64, title: &str) {
    super::svg_open(out, width as u32, height.ceil() as u32, title);
}

/// A caption line at `y`: spans of text, the strong ones bold in the fit's colour.
fn caption(out: &mut String, y: f64, size: f64, color: &str, spans: &[(String, bool)]) {
    let _ = write!(
        out,
        "<text class=\"caption\" x=\"{}\" y=\"{}\" font-size=\"{size}\" fill=\"{color}\">",
        num(LEFT),
        num(y)
    );
    for (s, strong) in spans {
        if *strong {
            let _ = write!(
                out,
                "<tspan font-weight=\"600\" fill=\"{FIT}\">{}</tspan>",
                escape(s)
            );
        } else {
            out.push_str(&escape(s));
        }
    }
    out.push_str("</text>\n");
}

/// The part of the time axis before the fit window, shaded, with a dashed line where the
/// window starts.
fn window_mark(out: &mut String, x: &Lin, y: &Lin, start: f64, label: bool) {
    let ws = x.px(start).clamp(x.p0, x.p1);
    if ws <= x.p0 {
        return;
    }
    let _ = writeln!(
        out,
        "<rect class=\"before-window\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{SHADE}\"/>",
        num(x.p0),
        num(y.p1),
        num(ws - x.p0),
        num(y.p0 - y.p1)
    );
    line(
        out,
        "window-start",
        (ws, y.p1),
        (ws, y.p0),
        MUTED,
        " stroke-dasharray=\"4 3\"",
    );
    if label {
        let _ = writeln!(
            out,
            "<text x=\"{}\" y=\"{}\" font-size=\"11\" fill=\"{MUTED}\">fit window →</text>",
            num(ws + 4.0),
            num(y.p1 + 12.0)
        );
    }
}

/// A chart with nothing to draw: its title and why.
fn empty_svg(title: &str, why: &str) -> String {
    let mut out = String::new();
    let (w, h) = (WIDTH, 160.0);
    svg_open(&mut out, w, h, title);
    let _ = writeln!(
        out,
        "<text x=\"{}\" y=\"90\" text-anchor=\"middle\" font-size=\"14\" fill=\"{MUTED}\">{}</text>",
        num(w / 2.0),
        escape(why)
    );
    out.push_str("</svg>\n");
    out
}

/// The fitted RSS line over the fit window, in (seconds, MiB): through the window's mean
/// at the mean time of the window's samples (where a least-squares line always passes),
/// with the fit's slope. The intercept is not stored; this is the same line.
fn fit_line(s: &SoakServerResult, settings: &SoakSettings) -> Option<[(f64, f64); 2]> {
    let fit = s.fit.as_ref()?;
    let end = s.samples.last()?.t_s;
    let start = settings.config.window_start_s;
    if end <= start || !fit.slope_kib_per_min.is_finite() {
        return None;
    }
    let inside: Vec<f64> = s
        .samples
        .iter()
        .map(|x| x.t_s)
        .filter(|t| *t >= start)
        .collect();
    let mid = if inside.is_empty() {
        f64::midpoint(start, end)
    } else {
        inside.iter().sum::<f64>() / inside.len() as f64
    };
    let at = |t: f64| (fit.mean_kib + fit.slope_kib_per_min * (t - mid) / 60.0) / 1024.0;
    Some([(start, at(start)), (end, at(end))])
}

/// The first caption line: verdict and fits.
fn verdict_caption(s: &SoakServerResult) -> Vec<(String, bool)> {
    let mut spans = vec![
        ("verdict: ".to_owned(), false),
        (
            drift_name(s.verdict).to_owned(),
            s.verdict == Drift::Drifted,
        ),
    ];
    match &s.fit {
        Some(f) => spans.push((
            format!(
                " · RSS slope {} KiB/min, R² {:.3} · projected move {} KiB ({}% of the window mean)",
                signed(f.slope_kib_per_min, 1),
                f.r2,
                signed(f.projected_kib, 0),
                signed(f.projected_share * 100.0, 1)
            ),
            false,
        )),
        None => spans.push((" · no fit".to_owned(), false)),
    }
    spans
}

/// The second caption line: the minima fit, the peak, the CPU cost.
fn figures_caption(s: &SoakServerResult) -> String {
    let mut parts = Vec::new();
    if let Some(m) = &s.fit_minima {
        parts.push(format!(
            "minima fit {} KiB/min, R² {:.3}",
            signed(m.slope_kib_per_min, 1),
            m.r2
        ));
    }
    parts.push(format!("peak RSS {} MiB", mib_kib(s.peak_rss_kib)));
    if let Some(c) = s.cpu_ms_per_1k {
        parts.push(format!("{c:.3} CPU ms per 1k requests"));
    }
    parts.join(" · ")
}

/// A server's soak as one SVG: RSS (samples, the fitted line over the fit window, the part
/// before the window shaded), CPU (% of one CPU, from consecutive samples) and threads and
/// fds, in three panels over one time axis; the verdict, slope and R² in the caption.
pub fn soak_svg(server: &ServerName, s: &SoakServerResult, settings: &SoakSettings) -> String {
    let title = format!("soak · {server} ({})", s.toolchain);
    if s.samples.is_empty() {
        let why = s.error.as_ref().map_or_else(
            || "no samples".to_owned(),
            |e| format!("no samples: {}", one_line(e)),
        );
        return empty_svg(&title, &why);
    }
    let (x, unit) = time_axis([(s, settings)].into_iter());
    let mut out = String::new();
    svg_open(&mut out, WIDTH, SOAK_H, &title);
    caption(&mut out, 42.0, 12.5, INK, &verdict_caption(s));
    caption(&mut out, 59.0, 11.5, MUTED, &[(figures_caption(s), false)]);
    caption(
        &mut out,
        75.0,
        11.5,
        MUTED,
        &[(
            format!(
                "{} req/s over {} connections for {}, sampled every {}; shaded: before the fit window ({})",
                settings.config.rate,
                settings.config.connections,
                dur(settings.config.duration_s),
                dur(settings.config.interval_s),
                dur(settings.config.window_start_s)
            ),
            false,
        )],
    );
    let panel_top = |k: usize| TOP + k as f64 * (HEAD + PANEL_H + GAP) + HEAD;
    let time = TimeAxis {
        x: &x,
        unit,
        start: settings.config.window_start_s / unit.div,
    };
    rss_panel(&mut out, &time, panel_top(0), s, settings);
    cpu_panel(&mut out, &time, panel_top(1), s);
    counts_panel(&mut out, &time, panel_top(2), s);
    time_labels(&mut out, &x, unit, panel_top(2) + PANEL_H);
    out.push_str("</svg>\n");
    out
}

/// The shared time axis of a soak chart's panels and where its fit window starts.
struct TimeAxis<'a> {
    x: &'a Lin,
    unit: TimeUnit,
    /// In `unit`.
    start: f64,
}

impl TimeAxis<'_> {
    fn px(&self, t_s: f64) -> f64 {
        self.x.px(t_s / self.unit.div)
    }
}

/// RSS: the samples, the fitted line over the fit window.
fn rss_panel(
    out: &mut String,
    time: &TimeAxis<'_>,
    top: f64,
    s: &SoakServerResult,
    settings: &SoakSettings,
) {
    let fit = fit_line(s, settings);
    let rss: Vec<f64> = s
        .samples
        .iter()
        .map(|x| x.rss_kib as f64 / 1024.0)
        .collect();
    let (mut lo, mut hi) = rss
        .iter()
        .chain(fit.iter().flat_map(|f| [&f[0].1, &f[1].1]))
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
            (a.min(*v), b.max(*v))
        });
    let span = (hi - lo).max(hi.abs() * 0.02).max(0.1);
    if hi - lo < span {
        let mid = f64::midpoint(lo, hi);
        (lo, hi) = (mid - span / 2.0, mid + span / 2.0);
    }
    let y = Lin::new(lo.max(0.0), hi, top + PANEL_H, top);
    out.push_str("<g class=\"panel rss\">\n");
    window_mark(out, time.x, &y, time.start, true);
    panel_frame(out, time.x, &y, "RSS (MiB)");
    let pts: Vec<(f64, f64)> = s
        .samples
        .iter()
        .zip(&rss)
        .map(|(p, v)| (time.px(p.t_s), y.px(*v)))
        .collect();
    polyline(out, &pts, RSS, 1.5, " class=\"samples\"");
    if pts.len() <= 60 {
        for (px, py) in &pts {
            let _ = writeln!(
                out,
                "<circle cx=\"{}\" cy=\"{}\" r=\"2.5\" fill=\"{RSS}\"/>",
                num(*px),
                num(*py)
            );
        }
    }
    if let Some([a, b]) = fit {
        polyline(
            out,
            &[(time.px(a.0), y.px(a.1)), (time.px(b.0), y.px(b.1))],
            FIT,
            2.0,
            " class=\"fit\" stroke-dasharray=\"7 4\"",
        );
    }
    let mut entries = vec![("RSS of the process tree", key(RSS, false))];
    if fit.is_some() {
        entries.push(("least-squares fit over the window", key(FIT, true)));
    }
    legend_row(out, (LEFT, top - 12.0), &entries);
    out.push_str("</g>\n");
}

/// CPU, % of one CPU between consecutive samples.
fn cpu_panel(out: &mut String, time: &TimeAxis<'_>, top: f64, s: &SoakServerResult) {
    let cpu: Vec<(f64, f64)> = s
        .samples
        .windows(2)
        .filter_map(|w| {
            let dt = w[1].t_s - w[0].t_s;
            (dt > 0.0).then(|| (w[1].t_s, ((w[1].cpu_s - w[0].cpu_s) / dt * 100.0).max(0.0)))
        })
        .collect();
    let hi = cpu.iter().map(|c| c.1).fold(1.0_f64, f64::max) * 1.08;
    let y = Lin::new(0.0, hi, top + PANEL_H, top);
    out.push_str("<g class=\"panel cpu\">\n");
    window_mark(out, time.x, &y, time.start, false);
    panel_frame(out, time.x, &y, "CPU (% of one CPU)");
    let pts: Vec<(f64, f64)> = cpu.iter().map(|(t, v)| (time.px(*t), y.px(*v))).collect();
    polyline(out, &pts, CPU, 1.5, " class=\"cpu\"");
    legend_row(
        out,
        (LEFT, top - 12.0),
        &[("CPU of the process tree, user + system", key(CPU, false))],
    );
    out.push_str("</g>\n");
}

/// Threads and open file descriptors.
fn counts_panel(out: &mut String, time: &TimeAxis<'_>, top: f64, s: &SoakServerResult) {
    let hi = s
        .samples
        .iter()
        .map(|p| f64::from(p.threads.max(p.fds)))
        .fold(5.0_f64, f64::max)
        * 1.08;
    let y = Lin::counts(0.0, hi, top + PANEL_H, top);
    out.push_str("<g class=\"panel counts\">\n");
    window_mark(out, time.x, &y, time.start, false);
    panel_frame(out, time.x, &y, "threads, fds (count)");
    let series = |f: fn(&cell_schema::SoakSample) -> u32| -> Vec<(f64, f64)> {
        s.samples
            .iter()
            .map(|p| (time.px(p.t_s), y.px(f64::from(f(p)))))
            .collect()
    };
    polyline(
        out,
        &series(|p| p.threads),
        THREADS,
        1.5,
        " class=\"threads\"",
    );
    polyline(
        out,
        &series(|p| p.fds),
        FDS,
        1.5,
        " class=\"fds\" stroke-dasharray=\"6 3\"",
    );
    legend_row(
        out,
        (LEFT, top - 12.0),
        &[
            ("threads", key(THREADS, false)),
            ("open file descriptors", key(FDS, true)),
        ],
    );
    out.push_str("</g>\n");
}

/// Legend entries of the overlay, one per server with samples.
fn overlay_entries<'a>(
    servers: impl Iterator<Item = (&'a ServerName, &'a SoakServerResult)>,
) -> Vec<String> {
    servers
        .filter(|(_, s)| !s.samples.is_empty())
        .map(|(n, s)| {
            format!(
                "{n} ({}{})",
                drift_name(s.verdict),
                s.fit.as_ref().map_or_else(String::new, |f| format!(
                    ", {} KiB/min",
                    signed(f.slope_kib_per_min, 1)
                ))
            )
        })
        .collect()
}

fn overlay_height(entries: &[String]) -> f64 {
    OVERLAY_TOP + OVERLAY_H + X_FOOT + legend_height(entries) + 12.0
}

/// Every server's RSS over time on one chart, one colour each (the order of the map), with
/// a legend giving each one's verdict and slope.
pub fn soak_overlay_svg(
    servers: &BTreeMap<ServerName, SoakServerResult>,
    settings: &SoakSettings,
) -> String {
    overlay_svg(
        &servers
            .iter()
            .map(|(n, s)| (n, s, settings))
            .collect::<Vec<_>>(),
    )
}

/// The overlay of a merged cell's soak servers, each drawn with its own job's settings.
pub(crate) fn cell_soak_overlay_svg<'a>(
    servers: impl Iterator<Item = (&'a ServerName, &'a CellSoakServer)>,
) -> String {
    overlay_svg(
        &servers
            .map(|(n, s)| (n, &s.result, &s.settings))
            .collect::<Vec<_>>(),
    )
}

fn overlay_svg(servers: &[(&ServerName, &SoakServerResult, &SoakSettings)]) -> String {
    let title = "soak · RSS of every server";
    let entries = overlay_entries(servers.iter().map(|(n, s, _)| (*n, *s)));
    if entries.is_empty() {
        return empty_svg(title, "no samples");
    }
    let (x, unit) = time_axis(servers.iter().map(|(_, s, set)| (*s, *set)));
    let mut out = String::new();
    svg_open(&mut out, WIDTH, overlay_height(&entries), title);
    overlay_caption(&mut out, servers);
    let y = overlay_y(servers);
    let first_start = servers
        .iter()
        .map(|(_, _, set)| set.config.window_start_s)
        .fold(f64::INFINITY, f64::min);
    window_mark(&mut out, &x, &y, first_start / unit.div, true);
    panel_frame(&mut out, &x, &y, "RSS (MiB)");
    let mut colours = Vec::new();
    for (i, (name, s, _)) in servers.iter().enumerate() {
        if s.samples.is_empty() {
            continue;
        }
        let color = PALETTE[i % PALETTE.len()];
        colours.push(color);
        let pts: Vec<(f64, f64)> = s
            .samples
            .iter()
            .map(|p| (x.px(p.t_s / unit.div), y.px(p.rss_kib as f64 / 1024.0)))
            .collect();
        let _ = writeln!(
            out,
            "<g class=\"series\" data-server=\"{}\">",
            escape(name.as_str())
        );
        polyline(&mut out, &pts, color, 1.8, "");
        out.push_str("</g>\n");
    }
    time_labels(&mut out, &x, unit, OVERLAY_TOP + OVERLAY_H);
    let legend: Vec<(&str, Key<'_>)> = entries
        .iter()
        .zip(&colours)
        .map(|(label, color)| (label.as_str(), key(color, false)))
        .collect();
    legend_grid(&mut out, OVERLAY_TOP + OVERLAY_H + X_FOOT, SHORT, &legend);
    out.push_str("</svg>\n");
    out
}

/// The overlay's caption: the rates and fit window starts of the servers' soaks.
fn overlay_caption(out: &mut String, servers: &[(&ServerName, &SoakServerResult, &SoakSettings)]) {
    let starts: BTreeSet<String> = servers
        .iter()
        .map(|(_, _, set)| dur(set.config.window_start_s))
        .collect();
    let rates: BTreeSet<String> = servers
        .iter()
        .map(|(_, _, set)| format!("{} req/s", set.config.rate))
        .collect();
    caption(
        out,
        42.0,
        11.5,
        MUTED,
        &[(
            format!(
                "resident set of each server's process tree at {}; shaded: before the fit window ({})",
                rates.into_iter().collect::<Vec<_>>().join(" / "),
                starts.into_iter().collect::<Vec<_>>().join(" / ")
            ),
            false,
        )],
    );
}

/// The overlay's RSS axis: every server's samples, a little room below.
fn overlay_y(servers: &[(&ServerName, &SoakServerResult, &SoakSettings)]) -> Lin {
    let (lo, hi) = servers
        .iter()
        .flat_map(|(_, s, _)| s.samples.iter().map(|p| p.rss_kib as f64 / 1024.0))
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
            (a.min(v), b.max(v))
        });
    Lin::new(
        0.0_f64.max(lo - (hi - lo) * 0.05),
        hi.max(lo + 0.1),
        OVERLAY_TOP + OVERLAY_H,
        OVERLAY_TOP,
    )
}
#[cfg(test)]
mod tests {
    use super::*;
    use cell_schema::{RssFit, SoakSample, ToolchainName};

    fn soak(samples: Vec<SoakSample>, fit: Option<RssFit>) -> SoakServerResult {
        SoakServerResult {
            toolchain: ToolchainName::new("rust"),
            build: None,
            startup_s: None,
            load: None,
            samples,
            fit,
            fit_minima: None,
            verdict: Drift::Flat,
            peak_rss_kib: 0,
            cpu_ms_per_1k: None,
            error: None,
        }
    }

    fn settings() -> SoakSettings {
        SoakSettings {
            config: cell_schema::SoakConfig {
                rate: 100,
                connections: 4,
                duration_s: 60.0,
                interval_s: 10.0,
                window_start_s: 20.0,
                minima_window_s: 20.0,
                drift_share: 0.05,
                min_r2: 0.8,
                fail_on_drift: false,
                keep_alive: true,
            },
            concurrent: 1,
            server_cpus: Vec::new(),
            load_cpus: Vec::new(),
        }
    }

    fn sample(t_s: f64, rss_kib: u64, cpu_s: f64) -> SoakSample {
        SoakSample {
            t_s,
            rss_kib,
            cpu_s,
            threads: 2,
            fds: 8,
        }
    }

    #[test]
    fn the_fit_line_passes_through_the_window_mean_with_the_fits_slope() {
        // 1 KiB per 10 s from 1024 KiB: 6 KiB/min; window from 20 s, samples at 20..=60 s.
        let samples: Vec<SoakSample> = (0..=6u32)
            .map(|i| sample(f64::from(i) * 10.0, 1024 + u64::from(i), 0.0))
            .collect();
        let fit = RssFit {
            points: 5,
            slope_kib_per_min: 6.0,
            r2: 1.0,
            projected_kib: 4.0,
            mean_kib: 1028.0,
            projected_share: 4.0 / 1028.0,
        };
        let [a, b] = fit_line(&soak(samples, Some(fit)), &settings()).unwrap();
        assert_eq!((a.0, b.0), (20.0, 60.0));
        assert!((a.1 * 1024.0 - 1026.0).abs() < 1e-9, "{a:?}");
        assert!((b.1 * 1024.0 - 1030.0).abs() < 1e-9, "{b:?}");
    }

    #[test]
    fn soak_svg_draws_cpu_from_consecutive_samples() {
        // 0.5 CPU s per 1 s: 50% of one CPU.
        let samples = vec![
            sample(0.0, 2048, 0.0),
            sample(10.0, 2048, 5.0),
            sample(20.0, 2048, 10.0),
        ];
        let svg = soak_svg(&ServerName::new("rust"), &soak(samples, None), &settings());
        assert!(svg.contains("class=\"panel cpu\""));
        assert!(!svg.contains("class=\"fit\""), "no fit, no line");
        let cpu = svg
            .lines()
            .find(|l| l.contains("class=\"cpu\""))
            .expect("a CPU line");
        // Two points (one per consecutive pair), both at the same height.
        let pts: Vec<&str> = cpu
            .split("points=\"")
            .nth(1)
            .unwrap()
            .split('"')
            .next()
            .unwrap()
            .split(' ')
            .collect();
        assert_eq!(pts.len(), 2);
        assert_eq!(pts[0].split(',').nth(1), pts[1].split(',').nth(1));
    }
}
