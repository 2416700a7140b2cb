//! Pure statistics for `cell`: no I/O, no clocks, no global randomness.
//!
//! Confidence intervals of a median come from order statistics (distribution-free): for `n`
//! samples the interval `[x(k), x(n-k+1)]` covers the true median with probability
//! `1 - 2·P(Binomial(n, ½) < k)`, whatever the distribution. With very few samples the
//! nominal level cannot be reached; [`median_ci`] then returns `[min, max]` and the level it
//! actually has, so a report never claims more than the data gives.

mod ols;
mod rng;
mod shift;

pub use ols::{Ols, ols};
pub use rng::SplitMix64;
pub use shift::{ShiftCi, shift_ci};

/// Median of a non-empty slice (mean of the two middle values for even lengths).
pub fn median(xs: &[f64]) -> f64 {
    assert!(!xs.is_empty(), "median of nothing");
    let s = sorted(xs);
    let n = s.len();
    if n % 2 == 1 {
        s[n / 2]
    } else {
        f64::midpoint(s[n / 2 - 1], s[n / 2])
    }
}

/// Median absolute deviation from the median (unscaled).
pub fn mad(xs: &[f64]) -> f64 {
    let m = median(xs);
    let dev: Vec<f64> = xs.iter().map(|x| (x - m).abs()).collect();
    median(&dev)
}

/// min, median, max, MAD of a non-empty slice.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Summary {
    /// Number of samples.
    pub n: usize,
    /// Smallest.
    pub min: f64,
    /// Median.
    pub median: f64,
    /// Largest.
    pub max: f64,
    /// Median absolute deviation.
    pub mad: f64,
}

/// Summarises a non-empty slice.
pub fn summary(xs: &[f64]) -> Summary {
    let s = sorted(xs);
    Summary {
        n: s.len(),
        min: s[0],
        median: median(&s),
        max: s[s.len() - 1],
        mad: mad(&s),
    }
}

/// A median with its confidence interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MedianCi {
    /// Number of samples.
    pub n: usize,
    /// The sample median.
    pub median: f64,
    /// Lower bound.
    pub lo: f64,
    /// Upper bound.
    pub hi: f64,
    /// The coverage these order statistics actually give.
    pub level: f64,
}

impl MedianCi {
    /// Half the interval's width relative to the median.
    pub fn rel_half_width(&self) -> f64 {
        (self.hi - self.lo) / 2.0 / self.median.abs()
    }
}

/// The distribution-free CI of the median at (at least) `level`, or `[min, max]` with its
/// real coverage when `n` is too small for `level`.
pub fn median_ci(xs: &[f64], level: f64) -> MedianCi {
    let s = sorted(xs);
    let n = s.len();
    let k = order_stat_index(n, level);
    MedianCi {
        n,
        median: median(&s),
        lo: s[k - 1],
        hi: s[n - k],
        level: coverage(n, k),
    }
}

/// The relative half-width the median CI of [`median_ci`] would have after `n_future`
/// samples spread like `xs`: today's interval scaled by `√(n/n_future)` (a median's spread
/// shrinks as `1/√n`) and by `z(level)/z(coverage)`, because an interval of few samples
/// covers more than `level` (the order statistics jump) and so is wider than one at `level`.
pub fn projected_rel_half_width(xs: &[f64], n_future: usize, level: f64) -> f64 {
    if xs.is_empty() || n_future == 0 {
        return f64::INFINITY;
    }
    let now = median_ci(xs, level);
    let shrink = (now.n as f64 / n_future as f64).sqrt();
    let coverage = now.level.clamp(level, 0.999_999);
    let z = |c: f64| normal_quantile(0.5 + c / 2.0);
    now.rel_half_width() * shrink * z(level) / z(coverage)
}

/// The standard normal quantile of `p` in (0, 1) (Abramowitz and Stegun 26.2.23, absolute
/// error below 4.5e-4: ample for a projection).
pub fn normal_quantile(p: f64) -> f64 {
    let tail = |q: f64| {
        let t = (-2.0 * q.ln()).sqrt();
        t - (2.515_517 + 0.802_853 * t + 0.010_328 * t * t)
            / (1.0 + 1.432_788 * t + 0.189_269 * t * t + 0.001_308 * t * t * t)
    };
    let p = p.clamp(1e-12, 1.0 - 1e-12);
    if p < 0.5 { -tail(p) } else { tail(1.0 - p) }
}

/// The largest 1-based `k ≤ n/2` (at least 1) such that `[x(k), x(n-k+1)]` covers at `level`.
fn order_stat_index(n: usize, level: f64) -> usize {
    let mut k = 1;
    while k < n.div_ceil(2) && coverage(n, k + 1) >= level {
        k += 1;
    }
    k
}

/// Coverage of `[x(k), x(n-k+1)]`: `1 - 2·P(B < k)` with `B ~ Binomial(n, ½)`.
fn coverage(n: usize, k: usize) -> f64 {
    let tail: f64 = (0..k).map(|i| binom_half(n, i)).sum();
    (1.0 - 2.0 * tail).max(0.0)
}

/// `P(B = i)` for `B ~ Binomial(n, ½)`, in log space so large `n` does not overflow.
fn binom_half(n: usize, i: usize) -> f64 {
    let ln_choose = ln_factorial(n) - ln_factorial(i) - ln_factorial(n - i);
    (ln_choose - n as f64 * std::f64::consts::LN_2).exp()
}

pub(crate) fn ln_factorial(n: usize) -> f64 {
    (2..=n).map(|i| (i as f64).ln()).sum()
}

pub(crate) fn sorted(xs: &[f64]) -> Vec<f64> {
    let mut s = xs.to_vec();
    s.sort_by(f64::total_cmp);
    s
}

/// Fisher–Yates shuffle driven by a seeded generator, so an order can be replayed from its seed.
pub fn shuffle<T>(items: &mut [T], rng: &mut SplitMix64) {
    for i in (1..items.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        items.swap(i, j);
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_projection_shrinks_with_more_samples_and_matches_the_interval_at_n() {
        let xs: Vec<f64> = (0..20).map(|i| 1.0 + f64::from(i) * 0.001).collect();
        let now = projected_rel_half_width(&xs, 20, 0.95);
        let later = projected_rel_half_width(&xs, 80, 0.95);
        assert!(later < now * 0.6, "{now} {later}");
        // Of evenly spread samples, the projection at n is close to the interval at n.
        // At n the projection is today's interval, narrowed only for its excess coverage.
        let ci = median_ci(&xs, 0.95);
        assert!(
            now <= ci.rel_half_width() && now > ci.rel_half_width() * 0.8,
            "{now} {ci:?}"
        );
        assert!((normal_quantile(0.975) - 1.96).abs() < 1e-3);
        assert!((normal_quantile(0.5)).abs() < 1e-3);
        assert!(projected_rel_half_width(&[], 10, 0.95).is_infinite());
        assert!(projected_rel_half_width(&[1.0; 5], 30, 0.95).abs() < 1e-12);
    }

    use super::*;

    #[test]
    fn median_odd_even() {
        assert!((median(&[3.0, 1.0, 2.0]) - 2.0).abs() < f64::EPSILON);
        assert!((median(&[4.0, 1.0, 2.0, 3.0]) - 2.5).abs() < f64::EPSILON);
    }

    #[test]
    fn mad_of_known_set() {
        // deviations from 3: 2,1,0,1,2 → median 1
        assert!((mad(&[1.0, 2.0, 3.0, 4.0, 5.0]) - 1.0).abs() < f64::EPSILON);
    }

    #[test]
    fn ci_small_n_is_min_max_with_true_level() {
        let ci = median_ci(&[5.0, 1.0, 3.0, 2.0, 4.0], 0.95);
        assert!((ci.lo - 1.0).abs() < f64::EPSILON && (ci.hi - 5.0).abs() < f64::EPSILON);
        // 1 - 2/32
        assert!((ci.level - 0.9375).abs() < 1e-12);
    }

    #[test]
    fn ci_n10_uses_second_order_statistics() {
        // n = 10: [x(2), x(9)] covers 1 - 2·11/1024 = 0.9785; [x(3), x(8)] only 0.8906.
        let xs: Vec<f64> = (1..=10).map(f64::from).collect();
        let ci = median_ci(&xs, 0.95);
        assert!((ci.lo - 2.0).abs() < f64::EPSILON && (ci.hi - 9.0).abs() < f64::EPSILON);
        assert!((ci.level - (1.0 - 22.0 / 1024.0)).abs() < 1e-12);
    }

    #[test]
    fn ci_level_never_below_nominal_when_reachable() {
        for n in 6..200 {
            let xs: Vec<f64> = (0..n).map(f64::from).collect();
            let ci = median_ci(&xs, 0.95);
            assert!(ci.level >= 0.95, "n={n} level={}", ci.level);
            assert!(ci.lo <= ci.median && ci.median <= ci.hi);
        }
    }

    #[test]
    fn shuffle_is_a_permutation_and_replays() {
        let mut a: Vec<u32> = (0..20).collect();
        let mut b = a.clone();
        shuffle(&mut a, &mut SplitMix64::new(7));
        shuffle(&mut b, &mut SplitMix64::new(7));
        assert_eq!(a, b);
        let mut s = a.clone();
        s.sort_unstable();
        assert_eq!(s, (0..20).collect::<Vec<_>>());
        assert_ne!(a, (0..20).collect::<Vec<_>>());
    }
}
