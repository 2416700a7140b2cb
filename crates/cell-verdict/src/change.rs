//! The change of a row between two runs, and its three-way verdict (docs/protocol.md, "The
//! gate: two runs, not a run and a point"). One home for the rule: the gate judges every row
//! and phase with it, and a job's adaptive budget asks it whether a unit is already settled
//! against the baseline the gate will use.
//!
//! A change is `new ratio / baseline ratio`. Its interval comes from both runs' per-round
//! ratios (the samples): the Hodges–Lehmann shift between their logarithms, with the
//! Mann–Whitney order statistics of the pairwise differences ([`cell_stats::shift_ci`]).
//! The rank interval assumes both runs share the shape of their noise; with as many rounds
//! on each side it stays within the run's budget when they do not, but when the run with
//! fewer rounds is the noisier it claims too much (measured on recorded noise, 10 rounds at
//! three times the recorded spread against 30 at it: 6.7% of A/A runs failed somewhere). So
//! when the shorter run's spread is the wider by half, the interval also holds its own
//! median interval, offset by the other's median: what it would be were the longer run exact
//! (the same cases: 3.7%).

use cell_schema::GateStatus;
use cell_stats::{mad, median, median_ci, shift_ci};

/// How many times the longer run's spread (median absolute deviation of its log ratios) the
/// shorter run's must be for the change's interval to hold the shorter run alone: below it
/// the shorter run is no noisier than the rank interval assumes.
const NOISIER: f64 = 1.5;

/// A change between two runs: `new / baseline`, with its interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Change {
    /// The estimate (1: no change): the ratio of the two runs' medians.
    pub median: f64,
    /// Lower bound.
    pub lo: f64,
    /// Upper bound.
    pub hi: f64,
    /// The coverage of the interval, as its order statistics give it.
    pub level: f64,
    /// The level it was asked for: the run's per-unit level.
    pub asked: f64,
    /// The per-round ratios of each side (0 for a point).
    pub rounds: (usize, usize),
}

impl Change {
    /// What the run could resolve: half the interval's width, as a fraction (0.012: ±1.2%).
    pub fn resolution(&self) -> f64 {
        (self.hi - self.lo) / 2.0
    }

    /// Whether the rounds reached the level asked: with too few, no pair of order statistics
    /// covers that often, and the interval claims less than the run's family needs.
    pub fn reaches(&self) -> bool {
        self.level + 1e-12 >= self.asked
    }

    /// The three-way rule: PASS when the whole interval lies within the tolerance band
    /// `[1/(1+tol), 1+tol]` (symmetric in log space, so a gain and a loss are judged alike),
    /// FAIL when it lies wholly beyond it, INCONCLUSIVE otherwise, and whenever the rounds
    /// could not reach the level asked.
    pub fn status(&self, tolerance: f64) -> GateStatus {
        let (lo, hi) = band(tolerance);
        if !self.reaches() {
            GateStatus::Inconclusive
        } else if self.lo >= lo && self.hi <= hi {
            GateStatus::Pass
        } else if self.hi < lo || self.lo > hi {
            GateStatus::Fail
        } else {
            GateStatus::Inconclusive
        }
    }
}

/// The band a change must stay within: `[1/(1+tol), 1+tol]`.
pub fn band(tolerance: f64) -> (f64, f64) {
    (1.0 / (1.0 + tolerance), 1.0 + tolerance)
}

/// The level each unit of a family is judged at so that the whole family errs with at most
/// `1 − run_level`: Bonferroni's, which holds however the units depend on each other (a
/// job's rows share its reference runs, and every row's baseline its run).
pub fn unit_level(run_level: f64, units: usize) -> f64 {
    1.0 - (1.0 - run_level) / units.max(1) as f64
}

/// The change of a row between its per-round ratios in this run (`new`) and in the baseline
/// (`old`), at `level`; `None` when either side has no ratio, or one that is not a positive
/// number.
pub fn change(new: &[f64], old: &[f64], level: f64) -> Option<Change> {
    let (a, b) = (logs(new)?, logs(old)?);
    let shift = shift_ci(&a, &b, level)?;
    // The hull of the intervals below covers at least as often as the shift's.
    let (mut lo, mut hi) = (shift.lo, shift.hi);
    // The shorter run the noisier: the longer taken as exact, the interval the shorter one
    // alone gives. (The shorter the quieter, the rank interval errs on the safe side.)
    let (short, long, sign) = if a.len() < b.len() {
        (&a, &b, 1.0)
    } else {
        (&b, &a, -1.0)
    };
    if short.len() != long.len() && mad(short) >= NOISIER * mad(long) {
        let own = median_ci(short, level);
        let other = median(long);
        let (x, y) = (sign * (own.lo - other), sign * (own.hi - other));
        lo = lo.min(x.min(y));
        hi = hi.max(x.max(y));
    }
    // The estimate a reader checks against the two ratios shown: their medians' ratio (the
    // interval is the shift's, which the same noise on both sides centres on it too), or
    // the nearer end of the interval where runs of unlike shapes put it outside.
    Some(Change {
        median: (median(&a) - median(&b)).clamp(lo, hi).exp(),
        lo: lo.exp(),
        hi: hi.exp(),
        level: shift.level,
        asked: level,
        rounds: (a.len(), b.len()),
    })
}

/// The change of a row's per-round ratios against a point ratio with no interval (an
/// imported run's): this run's median interval over the point, so only this run's noise is
/// counted and the verdict says so.
pub fn change_against_point(new: &[f64], point: f64, level: f64) -> Option<Change> {
    if !(point.is_finite() && point > 0.0 && measurable(new)) {
        return None;
    }
    let ci = median_ci(new, level);
    Some(Change {
        median: ci.median / point,
        lo: ci.lo / point,
        hi: ci.hi / point,
        level: ci.level,
        asked: level,
        rounds: (new.len(), 0),
    })
}

/// Per-round ratios a change can be measured from: some, each a positive finite number.
pub(crate) fn measurable(xs: &[f64]) -> bool {
    !xs.is_empty() && xs.iter().all(|x| x.is_finite() && *x > 0.0)
}

/// The logarithms of positive finite ratios; `None` when there are none or one is not.
fn logs(xs: &[f64]) -> Option<Vec<f64>> {
    measurable(xs).then(|| xs.iter().map(|x| x.ln()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spread(center: f64, n: u32, width: f64, seed: u64) -> Vec<f64> {
        let mut rng = cell_stats::SplitMix64::new(seed);
        (0..n)
            .map(|_| center * (1.0 + width * (rng.below(1000) as f64 / 1000.0 - 0.5)))
            .collect()
    }

    #[test]
    fn a_ten_percent_slowdown_fails_through_a_noisy_baseline() {
        // The case: intervals of ±1% and the baseline's own spread both counted.
        let old = spread(1.005, 10, 0.03, 1);
        let new = spread(1.0975, 10, 0.03, 2);
        let c = change(&new, &old, unit_level(0.95, 27)).unwrap();
        assert!((c.median - 1.092).abs() < 0.01, "{c:?}");
        assert_eq!(c.status(0.015), GateStatus::Fail, "{c:?}");
    }

    #[test]
    fn the_same_spread_passes_when_narrow_and_is_inconclusive_when_wide() {
        let (a, b) = (spread(1.0, 30, 0.004, 3), spread(1.0, 30, 0.004, 4));
        let c = change(&a, &b, unit_level(0.95, 27)).unwrap();
        assert_eq!(c.status(0.015), GateStatus::Pass, "{c:?}");
        assert!(c.resolution() < 0.005, "{c:?}");
        let (a, b) = (spread(1.0, 10, 0.2, 5), spread(1.0, 10, 0.2, 6));
        let c = change(&a, &b, unit_level(0.95, 27)).unwrap();
        assert_eq!(c.status(0.015), GateStatus::Inconclusive, "{c:?}");
        assert!(c.resolution() > 0.015, "{c:?}");
    }

    #[test]
    fn a_short_noisy_run_against_a_long_quiet_one_keeps_its_own_interval() {
        // The baseline exact and longer: the change's interval holds the new run's own.
        let new = spread(1.0, 10, 0.1, 7);
        let old = vec![1.0; 30];
        let level = unit_level(0.95, 27);
        let c = change(&new, &old, level).unwrap();
        let own = median_ci(&new, level);
        assert!(
            c.lo <= own.lo + 1e-12 && c.hi >= own.hi - 1e-12,
            "{c:?} {own:?}"
        );
        // And the other way round, the baseline the shorter one.
        let c = change(&old, &new, level).unwrap();
        assert!(
            c.lo <= 1.0 / own.hi + 1e-12 && c.hi >= 1.0 / own.lo - 1e-12,
            "{c:?} {own:?}"
        );
    }

    #[test]
    fn a_short_run_no_noisier_than_a_long_one_keeps_the_rank_interval() {
        // The rank interval errs on the safe side there: holding the short run's own
        // interval too (wider than the rank interval here) would only lose calls (a baseline
        // stopped at 10 rounds hid a 10% slowdown timed 30 in 58 of 200 runs of recorded
        // noise).
        let new = spread(1.0, 10, 0.05, 8);
        let old = spread(1.0, 30, 0.06, 9);
        let level = unit_level(0.95, 27);
        let c = change(&new, &old, level).unwrap();
        let ln = |v: &[f64]| v.iter().map(|x| x.ln()).collect::<Vec<f64>>();
        let shift = shift_ci(&ln(&new), &ln(&old), level).unwrap();
        assert!((c.lo.ln() - shift.lo).abs() < 1e-12, "{c:?} {shift:?}");
        assert!((c.hi.ln() - shift.hi).abs() < 1e-12, "{c:?} {shift:?}");
    }

    #[test]
    fn a_point_baseline_counts_this_run_s_noise_alone() {
        let new = spread(1.1, 10, 0.01, 8);
        let c = change_against_point(&new, 1.0, 0.95).unwrap();
        assert_eq!(c.status(0.015), GateStatus::Fail);
        assert!(change_against_point(&new, 0.0, 0.95).is_none());
        assert!(change(&[], &new, 0.95).is_none());
        assert!(change(&[1.0, -1.0], &new, 0.95).is_none());
    }

    /// Regression: five rounds against five cannot reach 99.8%, and their narrower interval
    /// judged at 99.2% failed an unchanged run somewhere about 6% of the time over 27 units.
    #[test]
    fn too_few_rounds_for_the_family_s_level_make_no_call() {
        let level = unit_level(0.95, 27);
        let (a, b) = (spread(1.10, 5, 0.01, 17), spread(1.0, 5, 0.01, 18));
        let c = change(&a, &b, level).unwrap();
        assert!(!c.reaches() && c.level < level, "{c:?}");
        assert_eq!(c.status(0.015), GateStatus::Inconclusive);
        assert_eq!(c.rounds, (5, 5));
        // One round each: a point, no interval.
        let one = change(&[1.2], &[1.0], level).unwrap();
        assert_eq!(one.status(0.015), GateStatus::Inconclusive, "{one:?}");
        // Ten against ten reach it.
        let (a, b) = (spread(1.10, 10, 0.01, 19), spread(1.0, 10, 0.01, 20));
        assert_eq!(
            change(&a, &b, level).unwrap().status(0.015),
            GateStatus::Fail
        );
    }

    #[test]
    fn the_family_level_divides_the_run_s_error() {
        assert!((unit_level(0.95, 1) - 0.95).abs() < 1e-12);
        assert!((unit_level(0.95, 25) - 0.998).abs() < 1e-12);
        assert!((unit_level(0.95, 0) - 0.95).abs() < 1e-12);
    }
}
