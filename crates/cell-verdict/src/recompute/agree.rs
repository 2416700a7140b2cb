//! Whether a stated figure agrees with the one its samples give, within what writing can
//! explain (a time's 0.1 µs, a ratio's 4 decimals, the samples' whole microseconds), and how
//! each side of a disagreement is shown.

use cell_schema::{Clock, ClockStats, Contention, RatioCi, Ratios, Run, Summary};

use crate::figures;

/// The relative slack of µs samples: 1 µs over the shortest measured time on `clock` (0 for
/// none).
pub(super) fn quantum(runs: &[Run], clock: Clock) -> f64 {
    let shortest = runs
        .iter()
        .filter(|r| !r.warmup)
        .filter_map(|r| figures::on_clock(r, clock))
        .filter(|t| *t > 0.0)
        .fold(f64::INFINITY, f64::min);
    if shortest.is_finite() {
        1e-6 / shortest
    } else {
        0.0
    }
}

/// Times agree to 0.1 µs of writing and the samples' whole microseconds: half a microsecond
/// for a time, a whole one for a deviation (the run's and the median's half each).
fn close_time(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1.05e-6 + 1e-12
}

fn close_summary(a: &Summary, b: &Summary) -> bool {
    a.n == b.n
        && close_time(a.min, b.min)
        && close_time(a.median, b.median)
        && close_time(a.max, b.max)
        && close_time(a.mad, b.mad)
}

/// Whether the stated summaries agree with the samples'; each that does not is named.
pub(super) fn stats(
    at: &str,
    stated: Option<&ClockStats>,
    got: Option<&ClockStats>,
    out: &mut Vec<String>,
) -> bool {
    let mut agree = true;
    for clock in Clock::ALL {
        let (a, b) = (
            stated.and_then(|s| s.on(clock)).cloned(),
            got.and_then(|s| s.on(clock)).cloned(),
        );
        // An optional summary the job did not write is not a disagreement; one it wrote is
        // checked.
        if !clock.required() && a.is_none() {
            continue;
        }
        let same = match (&a, &b) {
            (Some(a), Some(b)) => close_summary(a, b),
            (None, None) => true,
            _ => false,
        };
        if !same {
            agree = false;
            out.push(format!(
                "{at}: {clock} time {} stated, the samples give {}",
                show_summary(a.as_ref()),
                show_summary(b.as_ref())
            ));
        }
    }
    agree
}

pub(super) fn ratios(
    at: &str,
    stated: Option<&Ratios>,
    got: Option<&Ratios>,
    slack: impl Fn(Clock) -> f64,
    intervals: bool,
    out: &mut Vec<String>,
) -> bool {
    let mut agree = true;
    for clock in Clock::ALL {
        let (a, b) = (
            stated.and_then(|r| r.on(clock)).cloned(),
            got.and_then(|r| r.on(clock)).cloned(),
        );
        if !clock.required() && a.is_none() {
            continue;
        }
        if !close_ci(a.as_ref(), b.as_ref(), slack(clock), intervals) {
            agree = false;
            out.push(format!(
                "{at}: {} ratio {} stated, the samples give {}",
                clock.name(),
                show_ci(a.as_ref()),
                show_ci(b.as_ref())
            ));
        }
    }
    agree
}

/// Ratios agree to their 4 decimals and the samples' microseconds (`slack`, relative); `n` and
/// the level exactly (to their decimals). Without `intervals`, the bounds and level are not
/// compared (they were computed at another `CI_LEVEL`).
pub(super) fn close_ci(
    a: Option<&RatioCi>,
    b: Option<&RatioCi>,
    slack: f64,
    intervals: bool,
) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => {
            let near = |x: f64, y: f64| (x - y).abs() <= 0.5e-4 + slack * y.abs() + 1e-12;
            a.n == b.n
                && near(a.median, b.median)
                && (!intervals
                    || ((a.level - b.level).abs() <= 0.5e-4 + 1e-12
                        && near(a.lo, b.lo)
                        && near(a.hi, b.hi)))
        }
        (None, None) => true,
        _ => false,
    }
}

pub(super) fn close_opt(a: Option<f64>, b: Option<f64>, tol: f64) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => (a - b).abs() <= tol + 1e-12,
        (None, None) => true,
        _ => false,
    }
}

/// Contention agrees to a thousandth (a notice, never a verdict); `contended` too when the
/// threshold is the one the job ran with (`own`).
pub(super) fn close_contention(a: Option<&Contention>, b: Option<&Contention>, own: bool) -> bool {
    match (a, b) {
        // The threshold is the configuration's and replaced, not compared: a job that wrote its
        // own copy is judged by the repository's.
        (Some(a), Some(b)) => {
            let near = |x: f64, y: f64| (x - y).abs() <= 1e-3 * y.abs().max(1.0);
            near(a.median, b.median) && near(a.max, b.max) && (!own || a.contended == b.contended)
        }
        (None, None) => true,
        _ => false,
    }
}

fn show_summary(s: Option<&Summary>) -> String {
    s.map_or("none".into(), |s| {
        format!("median {} s over {} runs", s.median, s.n)
    })
}

pub(super) fn show_ci(r: Option<&RatioCi>) -> String {
    r.map_or("none".into(), |r| {
        format!(
            "{} (CI {}–{}, n {}, level {})",
            r.median, r.lo, r.hi, r.n, r.level
        )
    })
}

pub(super) fn show_opt(v: Option<f64>) -> String {
    v.map_or("none".into(), |v| v.to_string())
}

pub(super) fn show_contention(c: Option<&Contention>) -> String {
    c.map_or("none".into(), |c| {
        format!(
            "median {} max {}{}",
            c.median,
            c.max,
            if c.contended { " (contended)" } else { "" }
        )
    })
}

pub(super) fn seen(ok: bool) -> &'static str {
    if ok { "seen" } else { "not seen" }
}
