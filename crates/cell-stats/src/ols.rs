//! Ordinary least squares of one variable, for trends such as resident memory over a soak.

/// A fitted line `y = intercept + slope·x` and how much of `y`'s variation it explains.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ols {
    /// Change of `y` per unit of `x`.
    pub slope: f64,
    /// `y` at `x = 0`.
    pub intercept: f64,
    /// Coefficient of determination, `1 − SS_res/SS_tot`; 0.0 when `y` is constant.
    pub r2: f64,
    /// Number of points fitted.
    pub n: usize,
}

/// Fits `y = intercept + slope·x` by ordinary least squares.
///
/// `None` when there are fewer than 3 points (two points always fit exactly, so the fit
/// says nothing), when the slices differ in length, or when `x` has no variance (no slope
/// is defined). The data are centred on their means before summing products, so large
/// offsets (timestamps, byte counts) do not swamp the small deviations that carry the slope.
///
/// When `y` is constant (`SS_tot = 0`) the line is flat and `r2` is 0.0 rather than NaN or
/// 1.0: a flat line explains no variation because there is none, and a caller looking for
/// a trend must not read that as a perfect fit.
pub fn ols(xs: &[f64], ys: &[f64]) -> Option<Ols> {
    let n = xs.len();
    if n < 3 || ys.len() != n {
        return None;
    }
    // Compared exactly: the mean of equal values need not round back to them, which would
    // leave tiny non-zero deviations and a meaningless slope.
    if xs.iter().all(|x| x.total_cmp(&xs[0]).is_eq()) {
        return None;
    }
    let nf = n as f64;
    let mx = xs.iter().sum::<f64>() / nf;
    let my = ys.iter().sum::<f64>() / nf;
    let (mut sxx, mut sxy, mut syy) = (0.0, 0.0, 0.0);
    for (&x, &y) in xs.iter().zip(ys) {
        let (dx, dy) = (x - mx, y - my);
        sxx += dx * dx;
        sxy += dx * dy;
        syy += dy * dy;
    }
    if sxx <= 0.0 || !sxx.is_finite() {
        return None;
    }
    let slope = sxy / sxx;
    let intercept = my - slope * mx;
    let r2 = if syy > 0.0 {
        // Residuals summed directly rather than as `syy − slope·sxy`, which cancels badly
        // when the fit is nearly exact.
        let ss_res: f64 = xs
            .iter()
            .zip(ys)
            .map(|(&x, &y)| {
                let r = (y - my) - slope * (x - mx);
                r * r
            })
            .sum();
        (1.0 - ss_res / syy).clamp(0.0, 1.0)
    } else {
        0.0
    };
    Some(Ols {
        slope,
        intercept,
        r2,
        n,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn exact_line() {
        let xs: Vec<f64> = (0..10).map(f64::from).collect();
        let ys: Vec<f64> = xs.iter().map(|x| 3.0 + 2.5 * x).collect();
        let fit = ols(&xs, &ys).expect("fit");
        assert!(close(fit.slope, 2.5, 1e-12), "{fit:?}");
        assert!(close(fit.intercept, 3.0, 1e-12), "{fit:?}");
        assert!(close(fit.r2, 1.0, 1e-12), "{fit:?}");
        assert_eq!(fit.n, 10);
    }

    #[test]
    fn exact_line_far_from_origin() {
        // Centring keeps the slope exact even with a huge x offset.
        let xs: Vec<f64> = (0..100).map(|i| 1.0e9 + f64::from(i)).collect();
        let ys: Vec<f64> = (0..100).map(|i| 5.0e6 + 0.5 * f64::from(i)).collect();
        let fit = ols(&xs, &ys).expect("fit");
        assert!(close(fit.slope, 0.5, 1e-9), "{fit:?}");
        assert!(close(fit.r2, 1.0, 1e-9), "{fit:?}");
    }

    #[test]
    fn hand_computed() {
        // x̄ = 2.5, ȳ = 3.5; Sxx = 5, Sxy = 4 → slope 0.8, intercept 1.5.
        // Predictions 2.3, 3.1, 3.9, 4.7 → residuals −0.3, 0.9, −0.9, 0.3 → SS_res = 1.8;
        // SS_tot = 1 + 1 + 1 + 1 = 5 → r2 = 1 − 1.8/5 = 0.64.
        let fit = ols(&[1.0, 2.0, 3.0, 4.0], &[2.0, 4.0, 3.0, 5.0]).expect("fit");
        assert!(close(fit.slope, 0.8, 1e-12), "{fit:?}");
        assert!(close(fit.intercept, 1.5, 1e-12), "{fit:?}");
        assert!(close(fit.r2, 0.64, 1e-12), "{fit:?}");
    }

    #[test]
    fn constant_y_is_flat_and_explains_nothing() {
        let fit = ols(&[1.0, 2.0, 3.0, 4.0], &[7.0; 4]).expect("fit");
        assert!(close(fit.slope, 0.0, 0.0), "{fit:?}");
        assert!(close(fit.intercept, 7.0, 1e-12), "{fit:?}");
        assert!(close(fit.r2, 0.0, 0.0), "{fit:?}");
    }

    #[test]
    fn refuses_what_has_no_fit() {
        assert_eq!(ols(&[1.0, 2.0], &[1.0, 2.0]), None);
        assert_eq!(ols(&[1.0, 2.0, 3.0], &[1.0, 2.0]), None);
        assert_eq!(ols(&[2.0; 5], &[1.0, 2.0, 3.0, 4.0, 5.0]), None);
        assert_eq!(ols(&[0.1; 3], &[1.0, 2.0, 3.0]), None);
        assert_eq!(ols(&[], &[]), None);
    }

    #[test]
    fn noisy_line() {
        // A tiny LCG (Numerical Recipes constants) so the noise is the same on every run.
        let mut state: u32 = 12_345;
        let mut noise = || {
            state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            // Uniform in [−1, 1).
            f64::from(state >> 8) / f64::from(1u32 << 23) - 1.0
        };
        let xs: Vec<f64> = (0..200).map(f64::from).collect();
        let ys: Vec<f64> = xs.iter().map(|x| 10.0 + 0.2 * x + 4.0 * noise()).collect();
        let fit = ols(&xs, &ys).expect("fit");
        assert!(close(fit.slope, 0.2, 0.02), "{fit:?}");
        assert!(close(fit.intercept, 10.0, 2.0), "{fit:?}");
        // Signal variance 0.04·(200²−1)/12 ≈ 133, noise variance 16/3 ≈ 5.3 → r2 ≈ 0.96.
        assert!(fit.r2 > 0.9 && fit.r2 < 0.99, "{fit:?}");
    }
}
