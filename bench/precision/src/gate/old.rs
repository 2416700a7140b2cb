//! The OLD rule: the rule the gate had before it compared two runs, kept here (and only here)
//! to be compared with the new one on the same samples. It judged a row's new interval against
//! the baseline's median as an exact point, at `CI_LEVEL` for every unit, and made no call
//! when the A/A control of either run was off by any of three tests, two of which the new
//! rule dropped (its median's distance from 1.0, its width).

use cell_stats::{median, median_ci};

use super::judge::{Interval, JOBS, Judgement};

/// Why the old rule took a job's A/A control on a phase as off, from its per-round `ratios`:
/// its interval at `level` misses 1.0, or its median is more than `tolerance/2` from 1.0, or
/// its half-width exceeds `tolerance/2`. `None` when it was on.
pub fn control_off(ratios: &[f64], level: f64, tolerance: f64) -> Option<String> {
    if ratios.is_empty() {
        return Some("has no ratio".into());
    }
    let ci = median_ci(ratios, level);
    let half = tolerance / 2.0;
    let at = format!("{:.4} (CI {:.4}–{:.4})", ci.median, ci.lo, ci.hi);
    if ci.lo > 1.0 || ci.hi < 1.0 {
        Some(format!("is {at}, an interval that misses 1.0"))
    } else if (ci.median - 1.0).abs() > half {
        Some(format!("is {at}, more than ±{half} from 1.0"))
    } else if (ci.hi - ci.lo) / 2.0 > half {
        Some(format!("is {at}, wider than ±{half}"))
    } else {
        None
    }
}

/// The old rule on one unit: no call when either job's control was off; else the new job's
/// interval at `level` three-way against the baseline's median. Its resolution is the new
/// interval's relative half-width; the interval it reports is the new one over the baseline's
/// median, so all three rules read in the same units.
pub fn judge(
    controls: [&[f64]; 2],
    baseline: &[f64],
    new: &[f64],
    level: f64,
    tolerance: f64,
) -> Judgement {
    if baseline.is_empty() || new.is_empty() {
        return Judgement::not_judged("no ratio to compare".into(), None, None);
    }
    let b = median(baseline);
    let ci = median_ci(new, level);
    let interval = Some(Interval {
        change: ci.median / b,
        lo: ci.lo / b,
        hi: ci.hi / b,
    });
    let resolution = Some(ci.rel_half_width());
    let off = controls
        .iter()
        .zip(JOBS)
        .find_map(|(ctl, job)| control_off(ctl, level, tolerance).map(|w| (job, w)));
    if let Some((job, why)) = off {
        return Judgement::not_judged(
            format!("not judged: {job} A/A control {why}"),
            interval,
            resolution,
        );
    }
    Judgement {
        // The old rule's point comparison is the one an http suite still uses.
        status: cell_verdict::three_way(b, ci.lo, ci.hi, tolerance),
        interval,
        resolution,
        why: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cell_schema::GateStatus;

    const TOL: f64 = 0.015;

    /// Ten ratios, `center` ± `spread` evenly: at 95% the interval of ten is their second
    /// smallest and second largest.
    fn ten(center: f64, spread: f64) -> Vec<f64> {
        (0..10)
            .map(|i| center + spread * (f64::from(i) / 4.5 - 1.0))
            .collect()
    }

    #[test]
    fn a_control_centred_on_one_but_wide_is_off_under_the_old_rule() {
        // Median 1.0, interval about ±0.8%: wider than ±0.75% though it holds 1.0.
        let wide = ten(1.0, 0.01);
        let why = control_off(&wide, 0.95, TOL).expect("off");
        assert!(why.contains("wider than ±0.0075"), "{why}");
        assert_eq!(control_off(&ten(1.0, 0.002), 0.95, TOL), None);
    }

    #[test]
    fn a_biased_control_is_off_by_its_interval_or_by_its_median() {
        // Wholly above 1.0.
        let why = control_off(&ten(1.01, 0.002), 0.95, TOL).expect("off");
        assert!(why.contains("misses 1.0"), "{why}");
        // Holding 1.0 but centred 0.8% away: more than tolerance/2.
        let why = control_off(&ten(1.008, 0.011), 0.95, TOL).expect("off");
        assert!(why.contains("more than ±0.0075 from 1.0"), "{why}");
        assert!(control_off(&[], 0.95, TOL).is_some());
    }

    #[test]
    fn the_unit_is_judged_against_the_baseline_median_and_not_when_a_control_is_off() {
        let quiet = ten(1.0, 0.002);
        let base = ten(1.0, 0.002);
        // 10% slower: FAIL; its interval over the baseline's median.
        let j = judge([&quiet, &quiet], &base, &ten(1.1, 0.002), 0.95, TOL);
        assert_eq!(j.status, GateStatus::Fail);
        let i = j.interval.unwrap();
        assert!((i.change - 1.1).abs() < 1e-9, "{i:?}");
        // Resolution: the new interval's relative half-width, (x(9) − x(2)) / 2 / median.
        let r = j.resolution.unwrap();
        assert!((r - 0.002 * 7.0 / 9.0 / 1.1).abs() < 1e-9, "{r}");
        // The same, the baseline's control wide: no call, the change still shown.
        let j = judge(
            [&ten(1.0, 0.01), &quiet],
            &base,
            &ten(1.1, 0.002),
            0.95,
            TOL,
        );
        assert_eq!(j.status, GateStatus::Inconclusive);
        assert!(j.why.unwrap().starts_with("not judged: the baseline's"));
        assert!(j.interval.is_some());
        // A/A: PASS.
        let j = judge([&quiet, &quiet], &base, &ten(1.001, 0.002), 0.95, TOL);
        assert_eq!(j.status, GateStatus::Pass);
    }
}
