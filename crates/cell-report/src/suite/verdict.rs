//! The verdict line of a soaked server, one for RESULTS.md, the report and the terminal:
//! `• c: RSS 940 -> 940 KiB over minutes 10-60 (+0.0%), slope +0.0 KiB/min (R^2 1.00), peak
//! 940 KiB: flat`.

use cell_schema::escape::one_line;
use cell_schema::{ServerName, SoakConfig, SoakSample, SoakServerResult};

use crate::doc::{Span, text, verbatim};
use crate::figures::{drift_name, plus, short};

/// RSS (KiB) at the two ends of the fit window: the lowest sample of its first minima window
/// (`minima_window` seconds from its first sample) and of its last (the `minima_window`
/// seconds up to its last sample), so an allocator's sawtooth does not move them. `None` when
/// no sample fell in the window.
pub(crate) fn window_ends(samples: &[SoakSample], c: &SoakConfig) -> Option<(u64, u64)> {
    let window: Vec<&SoakSample> = samples
        .iter()
        .filter(|s| s.t_s >= c.window_start_s)
        .collect();
    let (first, last) = (window.first()?.t_s, window.last()?.t_s);
    let lowest = |keep: &dyn Fn(f64) -> bool| {
        window
            .iter()
            .filter(|s| keep(s.t_s))
            .map(|s| s.rss_kib)
            .min()
    };
    Some((
        lowest(&|t| t < first + c.minima_window_s)?,
        lowest(&|t| t > last - c.minima_window_s)?,
    ))
}

/// `minutes 10-60`, `minutes 0.5-1.5`: the fit window, whole minutes when whole.
fn minutes(c: &SoakConfig) -> String {
    format!(
        "minutes {}-{}",
        short(c.window_start_s / 60.0, 1),
        short(c.duration_s / 60.0, 1)
    )
}

/// Everything of the line after the server's name: its figures and the verdict word, or
/// `failed: <reason>`.
fn figures(s: &SoakServerResult, c: &SoakConfig) -> String {
    if let Some(e) = &s.error {
        return format!("failed: {}", one_line(e));
    }
    let over = minutes(c);
    let rss = match window_ends(&s.samples, c) {
        Some((a, b)) => {
            let change = if a > 0 {
                format!("{}%", plus((b as f64 / a as f64 - 1.0) * 100.0, 1))
            } else {
                "–".to_owned()
            };
            format!("RSS {a} -> {b} KiB over {over} ({change})")
        }
        None => format!("no RSS sample over {over}"),
    };
    let slope = s.fit.as_ref().map_or_else(
        || "slope – (too few samples to fit)".to_owned(),
        |f| {
            format!(
                "slope {} KiB/min (R^2 {:.2})",
                plus(f.slope_kib_per_min, 1),
                f.r2
            )
        },
    );
    format!(
        "{rss}, {slope}, peak {} KiB: {}",
        s.peak_rss_kib,
        drift_name(s.verdict)
    )
}

/// The verdict line of a soaked server: the name as text (escaped wherever it is written),
/// the rest as it is.
pub(crate) fn verdict_spans(name: &ServerName, s: &SoakServerResult, c: &SoakConfig) -> Vec<Span> {
    let reason = s.error.is_some();
    let rest = figures(s, c);
    let mut out = vec![verbatim("• "), text(name.as_str()), verbatim(": ")];
    // A failure's reason comes from the server's run: escaped like any text of the results.
    out.push(if reason { text(rest) } else { verbatim(rest) });
    out
}

/// The verdict line as terminal text.
pub fn soak_verdict_line(name: &ServerName, s: &SoakServerResult, c: &SoakConfig) -> String {
    crate::doc::text::spans(&verdict_spans(name, s, c))
}

#[cfg(test)]
mod tests {
    use super::*;
    use cell_schema::{Drift, RssFit, ToolchainName};

    fn config(duration_s: f64, window_start_s: f64, minima_window_s: f64) -> SoakConfig {
        SoakConfig {
            rate: 200,
            connections: 4,
            duration_s,
            interval_s: 1.0,
            window_start_s,
            minima_window_s,
            drift_share: 0.05,
            min_r2: 0.5,
            fail_on_drift: true,
            keep_alive: true,
        }
    }

    fn sample(t_s: f64, rss_kib: u64) -> SoakSample {
        SoakSample {
            t_s,
            rss_kib,
            cpu_s: 0.0,
            threads: 1,
            fds: 5,
        }
    }

    fn server(samples: Vec<SoakSample>, fit: Option<RssFit>, verdict: Drift) -> SoakServerResult {
        SoakServerResult {
            toolchain: ToolchainName::new("clang"),
            build: None,
            startup_s: Some(0.01),
            load: None,
            peak_rss_kib: samples.iter().map(|s| s.rss_kib).max().unwrap_or(0),
            samples,
            fit,
            fit_minima: None,
            verdict,
            cpu_ms_per_1k: None,
            error: None,
        }
    }

    fn fit(slope: f64, r2: f64) -> RssFit {
        RssFit {
            points: 10,
            slope_kib_per_min: slope,
            r2,
            projected_kib: 0.0,
            mean_kib: 940.0,
            projected_share: 0.0,
        }
    }

    #[test]
    fn a_flat_server_reads_as_the_one_form() {
        let flat: Vec<SoakSample> = (0..=3600)
            .step_by(60)
            .map(|t| sample(f64::from(t), 940))
            .collect();
        let s = server(flat, Some(fit(0.0, 1.0)), Drift::Flat);
        assert_eq!(
            soak_verdict_line(&ServerName::new("c"), &s, &config(3600.0, 600.0, 60.0)),
            "• c: RSS 940 -> 940 KiB over minutes 10-60 (+0.0%), slope +0.0 KiB/min (R^2 1.00), peak 940 KiB: flat"
        );
    }

    #[test]
    fn the_ends_are_the_minima_of_the_first_and_last_window_not_the_samples() {
        // A sawtooth on a floor rising from 1,000 to 1,100 KiB: the ends read the floor.
        let saw: Vec<SoakSample> = (30..=90u32)
            .map(|t| {
                let floor = 1_000 + (t - 30) * 100 / 60;
                let rss = floor + if t % 5 == 0 { 0 } else { 400 };
                sample(f64::from(t), u64::from(rss))
            })
            .collect();
        let c = config(90.0, 30.0, 12.0);
        assert_eq!(window_ends(&saw, &c), Some((1_000, 1_083)));
        let s = server(saw, Some(fit(99.96, 0.204)), Drift::Flat);
        assert_eq!(
            soak_verdict_line(&ServerName::new("saw"), &s, &c),
            "• saw: RSS 1000 -> 1083 KiB over minutes 0.5-1.5 (+8.3%), slope +100.0 KiB/min (R^2 0.20), peak 1498 KiB: flat"
        );
    }

    #[test]
    fn no_fit_no_samples_and_a_failure_each_say_so() {
        let c = config(90.0, 30.0, 12.0);
        let name = ServerName::new("go");
        let early = server(vec![sample(1.0, 500)], None, Drift::Unknown);
        assert_eq!(
            soak_verdict_line(&name, &early, &c),
            "• go: no RSS sample over minutes 0.5-1.5, slope – (too few samples to fit), peak 500 KiB: unknown"
        );
        let failed = SoakServerResult {
            error: Some("the server exited (exit status 3)\nduring the soak".into()),
            ..early
        };
        assert_eq!(
            soak_verdict_line(&name, &failed, &c),
            "• go: failed: the server exited (exit status 3) during the soak"
        );
    }
}
