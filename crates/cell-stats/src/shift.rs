//! The shift between two samples with its distribution-free interval: the Hodges–Lehmann
//! estimate (the median of every pairwise difference `a_i − b_j`) and the interval between two
//! order statistics of those differences, chosen from the null distribution of the
//! Mann–Whitney statistic `U`. It is the two-sample counterpart of [`crate::median_ci`]: no
//! assumption on the shape of the noise beyond both samples sharing it.
//!
//! The `k`-th smallest difference is found without listing the `n·m` differences: a bisection
//! over the ordered bit patterns of `f64` that counts, in one merge of the two sorted samples,
//! how many differences lie at or below a value. The null distribution of `U` is exact
//! (a Gaussian binomial coefficient, expanded as a product) while `n·m` stays small, and its
//! normal approximation beyond, where the two agree.

use crate::{ln_factorial, sorted};

/// A shift between two samples with its interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ShiftCi {
    /// Size of the first sample.
    pub n: usize,
    /// Size of the second sample.
    pub m: usize,
    /// The Hodges–Lehmann estimate: the median of every `a_i − b_j`.
    pub estimate: f64,
    /// Lower bound.
    pub lo: f64,
    /// Upper bound.
    pub hi: f64,
    /// The coverage these order statistics actually give (at least the level asked for,
    /// when it can be reached).
    pub level: f64,
}

/// Above this many pairs the null distribution of `U` is taken as normal (for 100 against 100
/// rounds the two tails agree to a few parts in a thousand).
const EXACT_PAIRS: usize = 10_000;

/// The shift of `a` against `b` (`a − b`) with its interval at (at least) `level`; `None` when
/// a sample is empty or holds a value that is not finite. When no pair of order statistics
/// reaches `level`, the interval is the smallest and largest difference with the coverage it
/// has.
pub fn shift_ci(a: &[f64], b: &[f64], level: f64) -> Option<ShiftCi> {
    if a.is_empty() || b.is_empty() || a.iter().chain(b).any(|x| !x.is_finite()) {
        return None;
    }
    let (xs, ys) = (sorted(a), sorted(b));
    let pairs = xs.len() * ys.len();
    let null = NullU::new(xs.len(), ys.len());
    let k = null.lower_index(level);
    let nth = |k: usize| kth_difference(&xs, &ys, k);
    let estimate = if pairs % 2 == 1 {
        nth(pairs.div_ceil(2))
    } else {
        f64::midpoint(nth(pairs / 2), nth(pairs / 2 + 1))
    };
    Some(ShiftCi {
        n: xs.len(),
        m: ys.len(),
        estimate,
        lo: nth(k),
        hi: nth(pairs + 1 - k),
        level: null.coverage(k),
    })
}

/// The number of pairs with `a_i − b_j ≤ d` (both sorted ascending). For a fixed `i` the
/// difference falls as `b_j` grows, so the pairs that hold are a suffix of `b`, and its start
/// only moves right as `a_i` grows: one merge.
fn count_at_most(a: &[f64], b: &[f64], d: f64) -> usize {
    let mut j = 0;
    let mut count = 0;
    for &x in a {
        while j < b.len() && x - b[j] > d {
            j += 1;
        }
        count += b.len() - j;
    }
    count
}

/// An order-preserving map of finite `f64`s onto `u64`, and back.
fn key(x: f64) -> u64 {
    let bits = x.to_bits();
    if bits >> 63 == 1 {
        !bits
    } else {
        bits | 1 << 63
    }
}

fn unkey(k: u64) -> f64 {
    f64::from_bits(if k >> 63 == 1 { k & !(1 << 63) } else { !k })
}

/// The `k`-th smallest (1-based) of the `n·m` differences `a_i − b_j`: the smallest value
/// at or below which `k` differences lie. The count only changes at a difference, so that
/// value is one.
fn kth_difference(a: &[f64], b: &[f64], k: usize) -> f64 {
    let (mut lo, mut hi) = (key(a[0] - b[b.len() - 1]), key(a[a.len() - 1] - b[0]));
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if count_at_most(a, b, unkey(mid)) >= k {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    unkey(lo)
}

/// The null distribution of the Mann–Whitney `U` for samples of `n` and `m`: exact while
/// `n·m` is at most [`EXACT_PAIRS`], normal beyond.
struct NullU {
    pairs: usize,
    /// `P(U ≤ u)` for `u` up to `n·m/2`, when exact.
    exact: Option<Vec<f64>>,
    mean: f64,
    sd: f64,
}

impl NullU {
    fn new(n: usize, m: usize) -> Self {
        let (nf, mf) = (n as f64, m as f64);
        Self {
            pairs: n * m,
            exact: exact_tail(n, m),
            mean: nf * mf / 2.0,
            sd: (nf * mf * (nf + mf + 1.0) / 12.0).sqrt(),
        }
    }

    /// `P(U ≤ u)`.
    fn cdf(&self, u: usize) -> f64 {
        match &self.exact {
            Some(cdf) => cdf.get(u).copied().unwrap_or(0.5),
            None => 0.5 * erfc(-(u as f64 + 0.5 - self.mean) / self.sd / std::f64::consts::SQRT_2),
        }
    }

    /// The largest 1-based `k` (at least 1, at most `n·m/2`) whose interval
    /// `[D(k), D(nm+1−k)]` covers at `level`: `P(U ≤ k−1) ≤ (1 − level)/2`.
    fn lower_index(&self, level: f64) -> usize {
        let tail = (1.0 - level) / 2.0;
        let top = (self.pairs / 2).max(1);
        let below = if let Some(cdf) = &self.exact {
            // k − 1 is the largest u with P(U ≤ u) ≤ tail.
            cdf.iter().take_while(|&&p| p <= tail).count()
        } else {
            let u = (self.mean - 0.5 + self.sd * crate::normal_quantile(tail)).floor();
            if u < 0.0 { 0 } else { u as usize + 1 }
        };
        below.clamp(1, top)
    }

    /// The coverage of `[D(k), D(nm+1−k)]`: `1 − 2·P(U ≤ k−1)`.
    fn coverage(&self, k: usize) -> f64 {
        (1.0 - 2.0 * self.cdf(k - 1)).clamp(0.0, 1.0)
    }
}

/// `P(U ≤ u)` for `u` up to `n·m/2`, exactly, while `n·m` is at most [`EXACT_PAIRS`]. The
/// number of orderings with `U = u` is the coefficient of `q^u` in the Gaussian binomial
/// `Π_{i=1..n} (1 − q^{m+i}) / (1 − q^i)`; each factor changes only coefficients at or above
/// its own degree from those below, so the lower half is computed alone.
fn exact_tail(n: usize, m: usize) -> Option<Vec<f64>> {
    if n * m > EXACT_PAIRS {
        return None;
    }
    let top = n * m / 2;
    let mut c = vec![0.0_f64; top + 1];
    c[0] = 1.0;
    for i in 1..=n {
        let s = m + i;
        for u in (s..=top).rev() {
            c[u] -= c[u - s];
        }
        for u in i..=top {
            c[u] += c[u - i];
        }
    }
    let ln_total = ln_factorial(n + m) - ln_factorial(n) - ln_factorial(m);
    let mut acc = 0.0;
    Some(
        c.iter()
            .map(|x| {
                acc += x;
                (acc.ln() - ln_total).exp().min(1.0)
            })
            .collect(),
    )
}

/// The complementary error function (Numerical Recipes' `erfcc`, relative error below 1.2e-7:
/// ample for a coverage printed to four decimals).
fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -z * z - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98
                                + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let r = t * poly.exp();
    if x >= 0.0 { r } else { 2.0 - r }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SplitMix64;

    /// Every difference, sorted: what the bisection must agree with.
    fn differences(a: &[f64], b: &[f64]) -> Vec<f64> {
        let mut d: Vec<f64> = a
            .iter()
            .flat_map(|x| b.iter().map(move |y| x - y))
            .collect();
        d.sort_by(f64::total_cmp);
        d
    }

    fn sample(rng: &mut SplitMix64, n: usize, spread: f64) -> Vec<f64> {
        (0..n)
            .map(|_| spread * (rng.below(10_000) as f64 / 10_000.0 - 0.5))
            .collect()
    }

    /// `P(U = u)` by brute force: every way to place `n` of `n + m` ranks.
    fn brute_cdf(n: usize, m: usize) -> Vec<f64> {
        let total = n + m;
        let mut counts = vec![0u64; n * m + 1];
        for mask in 0u32..(1 << total) {
            if mask.count_ones() as usize != n {
                continue;
            }
            // U: pairs (a from the mask, b not) with the b ranked below the a.
            let mut u = 0;
            let mut bs = 0;
            for r in 0..total {
                if mask >> r & 1 == 1 {
                    u += bs;
                } else {
                    bs += 1;
                }
            }
            counts[u] += 1;
        }
        let all: u64 = counts.iter().sum();
        let mut acc = 0;
        counts
            .iter()
            .map(|c| {
                acc += c;
                acc as f64 / all as f64
            })
            .collect()
    }

    #[test]
    #[expect(
        clippy::float_cmp,
        reason = "the k-th difference is one of the differences, exactly"
    )]
    fn the_kth_difference_is_the_sorted_list_s() {
        let mut rng = SplitMix64::new(4);
        for (n, m) in [(1, 1), (3, 7), (10, 10), (13, 30)] {
            let (a, b) = (sample(&mut rng, n, 0.2), sample(&mut rng, m, 0.2));
            let d = differences(&a, &b);
            let (sa, sb) = (sorted(&a), sorted(&b));
            for k in 1..=n * m {
                assert_eq!(kth_difference(&sa, &sb, k), d[k - 1], "n {n} m {m} k {k}");
            }
        }
        // Ties and negative zeros count as the values they are.
        let (a, b) = (vec![0.0, 0.0, 1.0], vec![0.0, -0.0, 1.0]);
        let d = differences(&a, &b);
        for k in 1..=9 {
            assert!(kth_difference(&sorted(&a), &sorted(&b), k) == d[k - 1]);
        }
    }

    #[test]
    fn the_exact_null_distribution_is_the_brute_force_one() {
        for (n, m) in [(1, 1), (2, 5), (5, 5), (6, 9), (10, 8)] {
            let exact = exact_tail(n, m).unwrap();
            let brute = brute_cdf(n, m);
            for (u, p) in exact.iter().enumerate() {
                assert!(
                    (p - brute[u]).abs() < 1e-12,
                    "n {n} m {m} u {u}: {p} {}",
                    brute[u]
                );
            }
        }
    }

    #[test]
    fn the_normal_tail_agrees_with_the_exact_one_where_they_meet() {
        // 100 × 100 pairs: the exact tail, and what the approximation gives beside it.
        let exact = NullU::new(100, 100);
        let approx = NullU {
            exact: None,
            ..NullU::new(100, 100)
        };
        for level in [0.95, 0.998] {
            let (e, a) = (exact.lower_index(level), approx.lower_index(level));
            assert!(e.abs_diff(a) <= 12, "{level}: {e} {a}");
            assert!(exact.coverage(e) >= level);
            assert!(
                (exact.coverage(e) - approx.coverage(e)).abs() < 2e-3,
                "{level}"
            );
        }
        // And beyond it the approximation's interval is used.
        assert!(exact_tail(101, 100).is_none());
        let big = NullU::new(200, 200);
        let k = big.lower_index(0.95);
        assert!(big.coverage(k) >= 0.95 - 1e-3, "{}", big.coverage(k));
    }

    #[test]
    fn ten_against_ten_at_the_level_of_27_units() {
        // 0.05/27 two-sided: P(U ≤ 10) = 139/184756 is the largest tail under 0.000926.
        let null = NullU::new(10, 10);
        let k = null.lower_index(1.0 - 0.05 / 27.0);
        assert_eq!(k, 11);
        assert!((null.coverage(k) - (1.0 - 2.0 * 139.0 / 184_756.0)).abs() < 1e-12);
    }

    #[test]
    fn a_shift_is_found_and_covered() {
        let mut rng = SplitMix64::new(9);
        let a: Vec<f64> = sample(&mut rng, 20, 0.04).iter().map(|x| x + 0.1).collect();
        let b = sample(&mut rng, 25, 0.04);
        let s = shift_ci(&a, &b, 0.95).unwrap();
        assert!(s.lo < 0.1 && 0.1 < s.hi, "{s:?}");
        assert!((s.estimate - 0.1).abs() < 0.01, "{s:?}");
        assert!(s.level >= 0.95);
        // Too few to reach a level: every difference, with its real coverage.
        let s = shift_ci(&[1.0, 2.0], &[0.0], 0.95).unwrap();
        assert_eq!((s.lo, s.hi, s.estimate), (1.0, 2.0, 1.5));
        assert!((s.level - 1.0 / 3.0).abs() < 1e-12, "{s:?}");
        assert!(shift_ci(&[], &[1.0], 0.95).is_none());
        assert!(shift_ci(&[f64::NAN], &[1.0], 0.95).is_none());
    }

    #[test]
    fn erfc_is_close() {
        for (x, want) in [(0.0, 1.0), (1.0, 0.157_299_207), (-1.0, 1.842_700_793)] {
            assert!((erfc(x) - want).abs() < 1e-6, "{x}");
        }
    }
}
