//! The figures of an http or soak job from its samples: a combination's medians over its
//! clean runs, a run's server CPU per 1,000 responses, a soak's two fits, its peak and its CPU
//! per 1,000 requests. The job computes with these functions from the values it writes, and
//! collect and the gate compute again with them from the values they read
//! ([`crate::recompute::suites`]), so an honest file recomputes to the bit.

use std::collections::BTreeMap;

use cell_schema::{
    Drift, HttpRun, HttpToolResult, RssFit, SoakConfig, SoakSample, round_ratio, round_time,
};
use cell_stats::median;

/// One combination's figures from its runs: medians over the clean runs (all runs when none
/// is clean); peak RSS, errors and non-2xx over every run. No runs, no figures: all 0.
pub fn http_tool(runs: Vec<HttpRun>) -> HttpToolResult {
    let clean: Vec<&HttpRun> = runs.iter().filter(|r| r.contaminated.is_empty()).collect();
    let basis: Vec<&HttpRun> = if clean.is_empty() {
        runs.iter().collect()
    } else {
        clean.clone()
    };
    let of = |f: &dyn Fn(&HttpRun) -> f64| basis.iter().map(|r| f(r)).collect::<Vec<f64>>();
    let mid = |xs: &[f64]| {
        if xs.is_empty() {
            0.0
        } else {
            round_ratio(median(xs))
        }
    };
    let rps = of(&|r| r.load.rps);
    let (lo, hi) = if rps.is_empty() {
        (0.0, 0.0)
    } else {
        (
            rps.iter().copied().fold(f64::INFINITY, f64::min),
            rps.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        )
    };
    HttpToolResult {
        clean_runs: u32::try_from(clean.len()).unwrap_or(u32::MAX),
        rps: mid(&rps),
        rps_range: [round_ratio(lo), round_ratio(hi)],
        p99_ms: mid(&of(&|r| r.load.latency_ms.p99)),
        cpu_ms_per_1k: mid(&of(&|r| r.cpu_ms_per_1k)),
        peak_rss_kib: runs.iter().map(|r| r.peak_rss_kib).max().unwrap_or(0),
        peak_pss_kib: runs.iter().filter_map(|r| r.peak_pss_kib).max(),
        errors: runs
            .iter()
            .map(|r| {
                r.load
                    .errors
                    .values()
                    .fold(0u64, |a, b| a.saturating_add(*b))
            })
            .fold(0u64, u64::saturating_add),
        non_2xx: runs
            .iter()
            .map(|r| r.load.non_2xx)
            .fold(0u64, u64::saturating_add),
        runs,
    }
}

/// A run's server CPU milliseconds per 1,000 responses, from its server CPU seconds as written
/// (0.1 µs) and its responses; 0 without responses.
pub fn run_cpu_ms_per_1k(server_cpu_s: f64, requests: u64) -> f64 {
    if requests == 0 {
        0.0
    } else {
        round_ratio(round_time(server_cpu_s) * 1e6 / requests as f64)
    }
}

/// What a soak's samples give: its fits, the drift rule's reading of them, its peak and its
/// CPU per 1,000 requests over the fit window.
#[derive(Clone, Debug, PartialEq)]
pub struct SoakFigures {
    /// RSS over time from the window start.
    pub fit: Option<RssFit>,
    /// The minimum of each minima window over time.
    pub fit_minima: Option<RssFit>,
    /// Flat, drifted or unknown, by the drift rule of `c`.
    pub verdict: Drift,
    /// The largest RSS sample, KiB.
    pub peak_rss_kib: u64,
    /// Server CPU ms per 1,000 requests over the fit window.
    pub cpu_ms_per_1k: Option<f64>,
}

/// A soak's figures from its samples and the load tool's request count, with the window and
/// drift rule of `c`.
pub fn soak(samples: &[SoakSample], c: &SoakConfig, requests: Option<u64>) -> SoakFigures {
    let (fit, fit_minima) = rss_fits(samples, c);
    SoakFigures {
        verdict: crate::drift(fit.as_ref(), fit_minima.as_ref(), c),
        fit,
        fit_minima,
        peak_rss_kib: samples.iter().map(|x| x.rss_kib).max().unwrap_or(0),
        cpu_ms_per_1k: soak_cpu_per_1k(samples, c, requests),
    }
}

/// Fits RSS from the window start, and again on the minimum of each minima window; the drift
/// rule reads both (a sawtooth allocator moves the samples, not the minima).
pub fn rss_fits(samples: &[SoakSample], c: &SoakConfig) -> (Option<RssFit>, Option<RssFit>) {
    let pts: Vec<(f64, f64)> = samples
        .iter()
        .filter(|s| s.t_s >= c.window_start_s)
        .map(|s| (s.t_s, s.rss_kib as f64))
        .collect();
    let mut minima: BTreeMap<u64, (f64, f64)> = BTreeMap::new();
    for &(t, y) in &pts {
        let k = ((t - c.window_start_s) / c.minima_window_s).floor() as u64;
        let e = minima.entry(k).or_insert((t, y));
        if y < e.1 {
            *e = (t, y);
        }
    }
    (
        fit_pts(&pts),
        fit_pts(&minima.into_values().collect::<Vec<_>>()),
    )
}

fn fit_pts(pts: &[(f64, f64)]) -> Option<RssFit> {
    let xs: Vec<f64> = pts.iter().map(|p| p.0 / 60.0).collect();
    let ys: Vec<f64> = pts.iter().map(|p| p.1).collect();
    let o = cell_stats::ols(&xs, &ys)?;
    let span_min = xs.last()? - xs.first()?;
    let mean = ys.iter().sum::<f64>() / ys.len() as f64;
    let projected = o.slope * span_min;
    Some(RssFit {
        points: u32::try_from(pts.len()).unwrap_or(u32::MAX),
        slope_kib_per_min: round_ratio(o.slope),
        r2: round_ratio(o.r2),
        projected_kib: round_ratio(projected),
        mean_kib: round_ratio(mean),
        projected_share: if mean > 0.0 {
            round_ratio(projected / mean)
        } else {
            0.0
        },
    })
}

/// Server CPU over the window per 1,000 requests served in it (at a fixed rate the requests
/// are spread evenly, so the window's share of them is its share of the duration).
fn soak_cpu_per_1k(samples: &[SoakSample], c: &SoakConfig, requests: Option<u64>) -> Option<f64> {
    let first = samples.iter().find(|s| s.t_s >= c.window_start_s)?;
    let last = samples.last()?;
    let requests = requests? as f64 * (last.t_s - first.t_s) / c.duration_s;
    (requests > 0.0).then(|| round_ratio((last.cpu_s - first.cpu_s) * 1e6 / requests))
}

#[cfg(test)]
mod tests {
    use super::*;
    use cell_schema::{Latency, LoadReport, TimeWait};

    fn run(index: u32, rps: f64, p99: f64, dirty: bool) -> HttpRun {
        HttpRun {
            index,
            seq: index,
            startup_s: 0.01,
            time_wait: TimeWait {
                before: 0,
                after: 0,
                waited_s: 0.0,
            },
            load: LoadReport {
                tool: "wrk".into(),
                version: "wrk 4.1.0".into(),
                duration_s: 1.0,
                requests: rps as u64,
                errors: BTreeMap::from([("timeout".to_owned(), u64::from(index))]),
                non_2xx: 1,
                rps,
                latency_ms: Latency {
                    p50: 0.1,
                    p90: 0.2,
                    p99,
                    p99_9: 1.0,
                    max: 2.0,
                },
                ..LoadReport::default()
            },
            server_cpu_s: 0.5,
            cpu_ms_per_1k: rps / 1000.0,
            peak_rss_kib: 1000 + u64::from(index),
            peak_pss_kib: None,
            rss_start_kib: None,
            rss_end_kib: None,
            load_cpu_s: 0.5,
            load_cpu_share: 0.5,
            other_cpu_share: 0.0,
            contaminated: if dirty {
                vec!["busy".into()]
            } else {
                Vec::new()
            },
        }
    }

    #[test]
    #[expect(clippy::float_cmp, reason = "medians of exact values are exact")]
    fn contaminated_runs_are_kept_but_left_out_of_the_medians() {
        let t = http_tool(vec![
            run(0, 1000.0, 1.0, false),
            run(1, 9000.0, 9.0, true),
            run(2, 1200.0, 2.0, false),
            run(3, 1100.0, 3.0, false),
        ]);
        assert_eq!(t.runs.len(), 4);
        assert_eq!(t.clean_runs, 3);
        assert_eq!(t.rps, 1100.0);
        assert_eq!(t.rps_range, [1000.0, 1200.0]);
        assert_eq!(t.p99_ms, 2.0);
        assert_eq!(t.cpu_ms_per_1k, 1.1);
        // Peaks, errors and non-2xx count every run.
        assert_eq!(t.peak_rss_kib, 1003);
        assert_eq!(t.errors, 6);
        assert_eq!(t.non_2xx, 4);
    }

    #[test]
    #[expect(clippy::float_cmp, reason = "medians of exact values are exact")]
    fn with_no_clean_run_the_medians_come_from_all() {
        let t = http_tool(vec![run(0, 1000.0, 1.0, true), run(1, 3000.0, 3.0, true)]);
        assert_eq!(t.clean_runs, 0);
        assert_eq!(t.rps, 2000.0);
    }

    /// Regression: a forged combination with no runs at all reached `median` of nothing, a
    /// panic; no runs give no figures.
    #[test]
    fn no_runs_give_zeros_not_a_panic() {
        let t = http_tool(Vec::new());
        assert_eq!((t.clean_runs, t.peak_rss_kib, t.errors), (0, 0, 0));
        assert!(t.rps.abs() < f64::EPSILON && t.rps_range == [0.0, 0.0]);
    }

    /// The job divides the server CPU it writes (0.1 µs), so the figure read back divides to
    /// the same bits.
    #[test]
    #[expect(clippy::float_cmp, reason = "the same inputs give the same bits")]
    fn a_run_s_cpu_per_1k_divides_the_written_cpu_time() {
        assert_eq!(run_cpu_ms_per_1k(1.01, 8869), 113.8798);
        assert_eq!(
            run_cpu_ms_per_1k(0.123_456_78, 1000),
            run_cpu_ms_per_1k(0.123_456_8, 1000)
        );
        assert_eq!(run_cpu_ms_per_1k(5.0, 0), 0.0);
    }

    fn def() -> SoakConfig {
        SoakConfig {
            rate: 200,
            connections: 4,
            duration_s: 180.0,
            interval_s: 1.0,
            window_start_s: 30.0,
            minima_window_s: 15.0,
            drift_share: 0.05,
            min_r2: 0.5,
            fail_on_drift: true,
            keep_alive: true,
        }
    }

    fn samples(f: impl Fn(f64) -> u64) -> Vec<SoakSample> {
        (0..=180)
            .map(|t| SoakSample {
                t_s: f64::from(t),
                rss_kib: f(f64::from(t)),
                cpu_s: f64::from(t) * 0.01,
                threads: 1,
                fds: 5,
            })
            .collect()
    }

    #[test]
    fn a_steady_leak_drifts_and_a_flat_line_does_not() {
        // 800 KiB a second on 10 MiB: 48,000 KiB/min.
        let f = soak(
            &samples(|t| 10_240 + (t * 800.0) as u64),
            &def(),
            Some(36_000),
        );
        assert_eq!(f.verdict, Drift::Drifted);
        let fit = f.fit.clone().unwrap();
        assert!((fit.slope_kib_per_min - 48_000.0).abs() < 1.0, "{fit:?}");
        assert!(fit.r2 > 0.999);
        assert!(f.fit_minima.as_ref().unwrap().slope_kib_per_min > 40_000.0);
        assert_eq!(f.peak_rss_kib, 10_240 + 180 * 800);
        // 1.5 CPU seconds over 150 of 180 s of 36,000 requests: 50 ms per 1k.
        assert!((f.cpu_ms_per_1k.unwrap() - 50.0).abs() < 1e-9, "{f:?}");
        let f = soak(&samples(|_| 10_240), &def(), None);
        assert_eq!(f.verdict, Drift::Flat);
        assert!(f.fit.unwrap().slope_kib_per_min.abs() < 1e-9);
        assert_eq!(f.cpu_ms_per_1k, None);
    }

    #[test]
    fn a_sawtooth_whose_floor_stays_is_not_a_leak() {
        // Most samples climb 40 KiB a second, but once per minima window a collection takes
        // RSS back to its floor: the samples' fit trips, the minima stay flat.
        let saw = |t: f64| {
            if (t as u64).is_multiple_of(15) {
                10_240
            } else {
                10_240 + (t * 40.0) as u64
            }
        };
        let f = soak(&samples(saw), &def(), None);
        let fit = f.fit.clone().unwrap();
        assert!(
            fit.projected_share >= 0.05 && fit.r2 >= 0.5,
            "the samples alone would call it a leak: {fit:?}"
        );
        assert!(f.fit_minima.unwrap().projected_share < 0.05);
        assert_eq!(f.verdict, Drift::Flat);
    }

    #[test]
    fn the_rule_s_thresholds_come_from_the_config() {
        let small = samples(|t| 10_240 + (t * 5.0) as u64); // +7.3% over the window
        assert_eq!(soak(&small, &def(), None).verdict, Drift::Drifted);
        let lax = SoakConfig {
            drift_share: 0.10,
            ..def()
        };
        assert_eq!(soak(&small, &lax, None).verdict, Drift::Flat);
        let strict_r2 = SoakConfig {
            min_r2: 1.1,
            ..def()
        };
        assert_eq!(soak(&small, &strict_r2, None).verdict, Drift::Flat);
    }

    #[test]
    fn too_few_points_is_unknown() {
        let few: Vec<SoakSample> = samples(|_| 1).into_iter().take(32).collect();
        assert_eq!(soak(&few, &def(), None).verdict, Drift::Unknown);
        assert_eq!(soak(&[], &def(), Some(10)).peak_rss_kib, 0);
    }
}
