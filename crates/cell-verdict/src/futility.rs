//! Early stop by futility (docs/protocol.md, "Early stop"): after the minimum rounds, when the
//! rounds left to `REPS_MAX` cannot bring the widest interval the verdict needs under
//! `CI_TARGET`, more rounds buy nothing but time. A judgement of the intervals, so it lives
//! here and not in the timing loop.

use cell_stats::projected_rel_half_width;

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
    /// Its relative half-width now.
    pub half_width: f64,
    /// The relative half-width projected at `REPS_MAX`.
    pub projected: f64,
}

impl FutilityRule {
    /// The interval of `ratios` projected at `REPS_MAX` from its spread so far.
    pub fn project(&self, ratios: &[f64]) -> Projection {
        let n_max = usize::try_from(self.max_samples).unwrap_or(usize::MAX);
        Projection {
            half_width: cell_stats::median_ci(ratios, self.level).rel_half_width(),
            projected: projected_rel_half_width(ratios, n_max.max(ratios.len()), self.level),
        }
    }

    /// The widest projection among the intervals still wider than the target, when even it
    /// at `REPS_MAX` stays beyond `target · margin`: the rounds should stop. `None` while any
    /// round left could still matter, or when the rule is off.
    pub fn futile<'a, K>(
        &self,
        intervals: impl IntoIterator<Item = (K, &'a [f64])>,
    ) -> Option<(K, Projection)> {
        if self.margin <= 0.0 {
            return None;
        }
        let widest = intervals
            .into_iter()
            .filter(|(_, rs)| !rs.is_empty())
            .map(|(k, rs)| (k, self.project(rs)))
            .filter(|(_, p)| p.half_width > self.target)
            .max_by(|a, b| a.1.projected.total_cmp(&b.1.projected))?;
        (widest.1.projected > self.target * self.margin).then_some(widest)
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
    fn a_spread_like_a_busy_shared_host_is_futile_at_ten_rounds() {
        // ±5%: narrower than the A/A spread of mix on a busy neighbour's day.
        let wide = spread(10, 0.10, 1);
        let (k, p) = rule().futile([("fib", wide.as_slice())]).unwrap();
        assert_eq!(k, "fib");
        assert!(
            p.projected > 0.007 * 1.25 && p.projected < p.half_width,
            "{p:?}"
        );
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
        assert!(r.futile([("mix", near.as_slice())]).is_none());
        // Converged intervals are not the reason to stop.
        let quiet = spread(10, 0.002, 3);
        assert!(r.futile([("mix", quiet.as_slice())]).is_none());
    }

    #[test]
    fn the_widest_projection_decides_and_a_margin_of_zero_turns_the_rule_off() {
        let (a, b) = (spread(10, 0.10, 4), spread(10, 0.30, 5));
        let (k, _) = rule()
            .futile([("a", a.as_slice()), ("b", b.as_slice())])
            .unwrap();
        assert_eq!(k, "b");
        let off = FutilityRule {
            margin: 0.0,
            ..rule()
        };
        assert!(off.futile([("b", b.as_slice())]).is_none());
    }
}
