//! hyperfine's verdict between two runs, at the same budget as cell's: each run's ratio of
//! means (candidate over reference) with its relative standard error, their change, and a
//! normal interval at the same per-unit level as the new rule, three-way against the same band.

use cell_stats::normal_quantile;
use serde::Serialize;

use super::judge::{Interval, Judgement};
use crate::hyperfine::Timed;

/// One command's figures as the JSON keeps them.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Means {
    /// Mean wall seconds.
    pub mean: f64,
    /// Standard deviation of its runs (none with a single run).
    pub stddev: Option<f64>,
    /// Its timed runs, warm-up excluded.
    pub times: Vec<f64>,
}

impl Means {
    /// The figures of hyperfine's export.
    pub fn of(t: &Timed) -> Self {
        Self {
            mean: t.mean,
            stddev: t.stddev,
            times: t.times.clone(),
        }
    }

    /// The standard error of the mean relative to it: `stddev / √n / mean` (NaN without a
    /// standard deviation).
    fn rel_se(&self) -> f64 {
        self.stddev.map_or(f64::NAN, |sd| {
            sd / (self.times.len() as f64).sqrt() / self.mean
        })
    }
}

/// One run's ratio of means with its relative standard error.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MeanRatio {
    /// `mean_c / mean_r`.
    pub ratio: f64,
    /// `√((se_c/mean_c)² + (se_r/mean_r)²)`.
    pub rel_err: f64,
}

impl MeanRatio {
    /// Of one hyperfine run of the reference and a candidate.
    pub fn of(reference: &Means, candidate: &Means) -> Self {
        Self {
            ratio: candidate.mean / reference.mean,
            rel_err: candidate.rel_se().hypot(reference.rel_se()),
        }
    }
}

/// The change `new / old` with relative error `√(e_new² + e_old²)`, its interval
/// `change · (1 ± z·err)` with `z` the normal quantile of `level` (two-sided), three-way
/// against the band `[1/(1+tol), 1+tol]` (the new rule's); the resolution is `z·err·change`.
pub fn judge(old: MeanRatio, new: MeanRatio, level: f64, tolerance: f64) -> Judgement {
    let change = new.ratio / old.ratio;
    let err = new.rel_err.hypot(old.rel_err);
    if !(change.is_finite() && err.is_finite()) {
        return Judgement::not_judged("hyperfine gave no standard deviation".into(), None, None);
    }
    let z = normal_quantile(0.5 + level / 2.0);
    let (lo, hi) = (change * (1.0 - z * err), change * (1.0 + z * err));
    Judgement {
        // Against a baseline of 1.0 the band is the new rule's, `[1/(1+tol), 1+tol]`.
        status: cell_verdict::three_way(1.0, lo, hi, tolerance),
        interval: Some(Interval { change, lo, hi }),
        resolution: Some(z * err * change),
        why: None,
    }
}

#[cfg(test)]
mod tests {
    use cell_schema::GateStatus;

    use super::*;

    fn means(mean: f64, stddev: f64, n: usize) -> Means {
        Means {
            mean,
            stddev: Some(stddev),
            times: vec![mean; n],
        }
    }

    #[test]
    fn a_run_s_ratio_carries_both_standard_errors() {
        // se_r = 0.004/√4 = 0.002, 0.5% of 0.4; se_c = 0.00618/√4 = 0.00309, 0.75% of 0.412.
        let r = MeanRatio::of(&means(0.4, 0.004, 4), &means(0.412, 0.00618, 4));
        assert!((r.ratio - 1.03).abs() < 1e-12, "{r:?}");
        assert!((r.rel_err - 0.005_f64.hypot(0.0075)).abs() < 1e-12, "{r:?}");
    }

    #[test]
    fn the_change_between_runs_is_judged_on_both_runs_errors() {
        let z = normal_quantile(0.975);
        // +10% with 0.3% and 0.4% errors: 0.5% combined, FAIL.
        let old = MeanRatio {
            ratio: 1.0,
            rel_err: 0.003,
        };
        let new = MeanRatio {
            ratio: 1.1,
            rel_err: 0.004,
        };
        let j = judge(old, new, 0.95, 0.015);
        assert_eq!(j.status, GateStatus::Fail);
        let i = j.interval.unwrap();
        assert!((i.change - 1.1).abs() < 1e-12);
        assert!((i.lo - 1.1 * (1.0 - z * 0.005)).abs() < 1e-12, "{i:?}");
        assert!((i.hi - 1.1 * (1.0 + z * 0.005)).abs() < 1e-12, "{i:?}");
        assert!((j.resolution.unwrap() - z * 0.005 * 1.1).abs() < 1e-12);
        // A/A, the same errors: ±0.98% around 1.002 stays in [0.9852, 1.015]: PASS.
        let same = MeanRatio {
            ratio: 1.002,
            rel_err: 0.004,
        };
        assert_eq!(judge(old, same, 0.95, 0.015).status, GateStatus::Pass);
        // A/A with 1% errors each: ±2.8%, wider than the band: INCONCLUSIVE.
        let wide = |ratio| MeanRatio {
            ratio,
            rel_err: 0.01,
        };
        assert_eq!(
            judge(wide(1.0), wide(1.0), 0.95, 0.015).status,
            GateStatus::Inconclusive
        );
        // One run without a standard deviation: no call.
        let none = MeanRatio::of(
            &Means {
                mean: 1.0,
                stddev: None,
                times: vec![1.0],
            },
            &means(1.0, 0.0, 1),
        );
        let j = judge(none, old, 0.95, 0.015);
        assert_eq!((j.status, j.resolution), (GateStatus::Inconclusive, None));
    }
}
