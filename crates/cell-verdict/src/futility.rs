//! Where a unit's rounds stop (docs/protocol.md, "Rounds go where they change a verdict"):
//! each (row, phase) of a job is called at every look of the adaptive budget, on its own.
//! Against the baseline the gate will use, a unit whose verdict is settled stops; with no
//! baseline, one whose interval reached `CI_TARGET`. Early stop by futility: when the rounds
//! left to `REPS_MAX` cannot settle it, more rounds buy nothing but time — once the unit holds
//! the rounds the next run's comparison needs from it, for every run is the next one's
//! baseline. A judgement of the intervals, so it lives here and not in the timing loop.

use cell_schema::GateStatus;
use cell_stats::projected_rel_half_width;

use crate::change::{band, change};

/// The thresholds of the rule.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FutilityRule {
    /// The ratios an interval holds at `REPS_MAX` (its measured rounds; half of them in a
    /// duet, which pairs rounds).
    pub max_samples: u32,
    /// `CI_TARGET`: the relative half-width every interval should reach.
    pub target: f64,
    /// The intervals' confidence level.
    pub level: f64,
    /// `FUTILITY_MARGIN`: the projection must exceed `target` times this to stop (0: never).
    pub margin: f64,
}

/// One interval's projection at `REPS_MAX`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Projection {
    /// Its half-width now: relative to its ratio, or, against a baseline, the change's.
    pub half_width: f64,
    /// The half-width projected at `REPS_MAX`, in the same terms.
    pub projected: f64,
    /// The half-width it had to reach: `CI_TARGET`, or, against a baseline, the distance
    /// from its change to the nearer edge of the band.
    pub target: f64,
}

impl FutilityRule {
    /// The interval of `ratios` projected at `REPS_MAX` from its spread so far.
    pub fn project(&self, ratios: &[f64]) -> Projection {
        let n_max = usize::try_from(self.max_samples).unwrap_or(usize::MAX);
        Projection {
            half_width: cell_stats::median_ci(ratios, self.level).rel_half_width(),
            projected: projected_rel_half_width(ratios, n_max.max(ratios.len()), self.level),
            target: self.target,
        }
    }
}

/// What a unit's rounds so far say at a look of the adaptive budget.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum UnitCall {
    /// More rounds can still change what it says.
    More,
    /// No baseline: its interval reached `CI_TARGET` (its relative half-width).
    Converged(f64),
    /// Against the baseline: its change passes at the job's level (the change's resolution).
    Settled(f64),
    /// The rounds left to `REPS_MAX` cannot settle it.
    Futile(Projection),
}

/// The baseline a unit is called against: its per-round ratios, the band, and the two
/// levels of the gate's family this job can bound (the gate counts the run's units, which the
/// job cannot: `settle_level` is read for the largest family the run can have, so a PASS here
/// is a PASS there; `fail_level` for the smallest, so a unit the gate could FAIL is never
/// stopped short of `REPS_MAX`, and stopping early adds no false FAIL).
#[derive(Clone, Copy, Debug)]
pub struct Against<'a> {
    /// The baseline's per-round ratios.
    pub ratios: &'a [f64],
    /// `TOLERANCE`.
    pub tolerance: f64,
    /// The per-unit level of the largest family.
    pub settle_level: f64,
    /// The per-unit level of the smallest family.
    pub fail_level: f64,
}

impl FutilityRule {
    /// The call on a unit with these per-round ratios so far (`own`), against a baseline or
    /// its own target.
    pub fn call(&self, own: &[f64], against: Option<&Against<'_>>) -> UnitCall {
        if own.is_empty() {
            return UnitCall::More;
        }
        let call = match against {
            None => self.call_alone(own),
            Some(base) => self.call_against(own, base),
        };
        match call {
            UnitCall::Futile(_) if own.len() < self.futility_floor() => UnitCall::More,
            call => call,
        }
    }

    /// The fewest ratios a unit stops as futile with. This run is the next run's baseline,
    /// and its `m` ratios enter that comparison's width as `√(1/N + 1/m)` (the next run at
    /// `N`, this rule's `max_samples`): a futile unit stops only once that width is within
    /// `margin` of two full runs' `√(2/N)`, i.e. at `m ≥ N / (2·margin² − 1)` (15 of 30 at
    /// 1.25). Stopped at 10 of 30, a noisy unit widened every later comparison by √2, and
    /// a 10% slower row on primes failed in 17 of 20 runs, not 19.
    pub fn futility_floor(&self) -> usize {
        let n = f64::from(self.max_samples);
        if self.margin < 1.0 {
            return usize::MAX;
        }
        let floor = (n / (2.0 * self.margin * self.margin - 1.0)).ceil();
        // 1 ≤ margin keeps the divisor ≥ 1, so the floor is at most N.
        floor as usize
    }

    /// No baseline: the unit's own interval against `CI_TARGET`.
    fn call_alone(&self, own: &[f64]) -> UnitCall {
        let proj = self.project(own);
        if proj.half_width <= self.target {
            UnitCall::Converged(proj.half_width)
        } else if self.margin > 0.0 && proj.projected > self.target * self.margin {
            UnitCall::Futile(proj)
        } else {
            UnitCall::More
        }
    }

    /// Against the baseline: settled when the change passes, never stopped while it could
    /// fail, futile when the rounds left cannot bring it within or beyond the band.
    fn call_against(&self, own: &[f64], base: &Against<'_>) -> UnitCall {
        let (Some(narrow), Some(wide)) = (
            change(own, base.ratios, base.fail_level),
            change(own, base.ratios, base.settle_level),
        ) else {
            return UnitCall::More;
        };
        // A unit that fails even at one unit's level, or whose rounds cannot yet reach the
        // largest family's, gets more rounds.
        if narrow.status(base.tolerance) == GateStatus::Fail || !wide.reaches() {
            return UnitCall::More;
        }
        if wide.status(base.tolerance) == GateStatus::Pass {
            return UnitCall::Settled(wide.resolution());
        }
        // Outside the band it aims at a FAIL, which the gate may call at a level as low as
        // `fail_level`: the narrower interval decides whether that is out of reach.
        let (lo, hi) = band(base.tolerance);
        let outside = wide.median > hi || wide.median < lo;
        let aim = if outside { &narrow } else { &wide };
        // A change interval's width shrinks as √(1/n + 1/m): the baseline's m rounds stay.
        let (now, theirs) = (own.len() as f64, base.ratios.len() as f64);
        let most = f64::from(self.max_samples).max(now);
        let projected =
            aim.resolution() * ((1.0 / most + 1.0 / theirs) / (1.0 / now + 1.0 / theirs)).sqrt();
        // It settles only once its half-width is under the distance to the nearer edge.
        let edge = (hi - aim.median).abs().min((aim.median - lo).abs());
        if self.margin > 0.0 && projected > edge * self.margin {
            UnitCall::Futile(Projection {
                half_width: aim.resolution(),
                projected,
                target: edge,
            })
        } else {
            UnitCall::More
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule() -> FutilityRule {
        FutilityRule {
            max_samples: 30,
            target: 0.007,
            level: 0.95,
            margin: 1.25,
        }
    }

    /// Ratios of a seeded uniform spread of `width` around 1.
    fn spread(n: u32, width: f64, seed: u64) -> Vec<f64> {
        let mut rng = cell_stats::SplitMix64::new(seed);
        (0..n)
            .map(|_| 1.0 + width * (rng.below(1000) as f64 / 1000.0 - 0.5))
            .collect()
    }

    #[test]
    fn a_spread_like_a_busy_shared_host_is_futile_once_it_holds_the_floor() {
        // ±5%: narrower than the A/A spread of mix on a busy neighbour's day.
        let wide = spread(15, 0.10, 1);
        let UnitCall::Futile(p) = rule().call(&wide, None) else {
            panic!("{:?}", rule().call(&wide, None));
        };
        assert!(
            p.projected > 0.007 * 1.25 && p.projected < p.half_width,
            "{p:?}"
        );
        let off = FutilityRule {
            margin: 0.0,
            ..rule()
        };
        assert_eq!(
            off.call(&wide, None),
            UnitCall::More,
            "a margin of 0 never stops"
        );
    }

    /// Regression: a hopeless unit stopped at 10 of 30 rounds, and the next run, judged
    /// against those 10, resolved its change √2 wider than two full runs do.
    #[test]
    fn a_hopeless_unit_keeps_the_rounds_the_next_comparison_needs_from_it() {
        let r = rule();
        assert_eq!(r.futility_floor(), 15, "30 / (2·1.25² − 1) = 14.1");
        let wide = spread(30, 0.10, 1);
        assert_eq!(r.call(&wide[..10], None), UnitCall::More);
        assert_eq!(r.call(&wide[..14], None), UnitCall::More);
        assert!(matches!(r.call(&wide[..15], None), UnitCall::Futile(_)));
        // Against a baseline too: an edge no budget settles still waits for the floor.
        let base = spread(30, 0.004, 13);
        let edge: Vec<f64> = spread(15, 0.2, 16).iter().map(|x| x * 1.015).collect();
        assert_eq!(r.call(&edge[..10], Some(&against(&base))), UnitCall::More);
        assert!(matches!(
            r.call(&edge, Some(&against(&base))),
            UnitCall::Futile(_)
        ));
        // The floor leaves two full runs' width within the margin, and a margin of 1 asks
        // for every round.
        let n = 30.0_f64;
        let m = r.futility_floor() as f64;
        assert!(((1.0 / n + 1.0 / m) / (2.0 / n)).sqrt() <= r.margin);
        let strict = FutilityRule { margin: 1.0, ..r };
        assert_eq!(strict.futility_floor(), 30);
        assert_eq!(strict.call(&wide[..29], None), UnitCall::More);
    }

    #[test]
    fn an_interval_that_can_still_reach_the_target_keeps_the_rounds_going() {
        // Wider than the target now, within it by 30 rounds.
        let near = spread(10, 0.024, 2);
        let r = rule();
        assert!(
            r.project(&near).half_width > r.target,
            "{:?}",
            r.project(&near)
        );
        assert_eq!(r.call(&near, None), UnitCall::More);
        // A converged interval stops as converged, not futile.
        let quiet = spread(10, 0.002, 3);
        assert!(matches!(r.call(&quiet, None), UnitCall::Converged(_)));
    }

    fn against(ratios: &[f64]) -> Against<'_> {
        Against {
            ratios,
            tolerance: 0.015,
            settle_level: 1.0 - 0.05 / 27.0,
            fail_level: 0.95,
        }
    }

    #[test]
    fn a_unit_is_called_on_its_own_interval_without_a_baseline() {
        let r = rule();
        assert!(matches!(
            r.call(&spread(10, 0.002, 11), None),
            UnitCall::Converged(h) if h <= 0.007
        ));
        assert!(matches!(
            r.call(&spread(15, 0.3, 12), None),
            UnitCall::Futile(p) if (p.target - 0.007).abs() < 1e-12
        ));
        assert_eq!(r.call(&spread(10, 0.024, 2), None), UnitCall::More);
        assert_eq!(r.call(&[], None), UnitCall::More);
    }

    #[test]
    fn against_a_baseline_a_pass_settles_a_failure_goes_on_and_an_edge_is_futile() {
        let r = rule();
        let base = spread(30, 0.004, 13);
        // The same narrow spread: the change passes at the largest family's level.
        assert!(matches!(
            r.call(&spread(10, 0.004, 14), Some(&against(&base))),
            UnitCall::Settled(h) if h < 0.015
        ));
        // 10% slower: it fails already, and is never stopped short of REPS_MAX.
        let slower: Vec<f64> = spread(10, 0.004, 15).iter().map(|x| x * 1.1).collect();
        assert_eq!(r.call(&slower, Some(&against(&base))), UnitCall::More);
        // A change right at the band's edge, wide: no budget settles it.
        let edge: Vec<f64> = spread(15, 0.2, 16).iter().map(|x| x * 1.015).collect();
        let UnitCall::Futile(p) = r.call(&edge, Some(&against(&base))) else {
            panic!("{:?}", r.call(&edge, Some(&against(&base))));
        };
        assert!(p.projected > p.target * 1.25, "{p:?}");
        // The margin off: it goes on.
        let off = FutilityRule { margin: 0.0, ..r };
        assert_eq!(off.call(&edge, Some(&against(&base))), UnitCall::More);
    }
}
