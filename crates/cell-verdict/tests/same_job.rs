//! The same-job rule: the new release's build over the previous release's, per round, judged
//! against TOLERANCE around 1.0. Slower beyond the band fails; within it, or wholly faster,
//! passes; an interval that reaches past the band on either side is no call.

use cell_schema::{GateStatus, RatioCi};
use cell_verdict::same_job_status;

fn ci(median: f64, lo: f64, hi: f64) -> RatioCi {
    RatioCi {
        n: 10,
        median,
        lo,
        hi,
        level: 0.95,
    }
}

#[test]
fn slower_beyond_tolerance_fails_within_passes_faster_passes_and_straddling_is_no_call() {
    let tol = 0.015;
    let cases = [
        (
            "twice the work",
            ci(1.93, 1.88, 1.99),
            (GateStatus::Fail, false),
        ),
        (
            "3% slower, tight",
            ci(1.03, 1.02, 1.04),
            (GateStatus::Fail, false),
        ),
        (
            "unchanged, tight",
            ci(1.0, 0.995, 1.006),
            (GateStatus::Pass, false),
        ),
        (
            "3% faster, tight",
            ci(0.97, 0.96, 0.98),
            (GateStatus::Pass, true),
        ),
        (
            "unchanged, wide",
            ci(1.0, 0.96, 1.04),
            (GateStatus::Inconclusive, false),
        ),
        (
            "slower but reaching the band",
            ci(1.03, 1.01, 1.05),
            (GateStatus::Inconclusive, false),
        ),
        (
            "at the band's edge",
            ci(1.0, 1.0 / 1.015, 1.015),
            (GateStatus::Pass, false),
        ),
    ];
    for (what, c, want) in cases {
        assert_eq!(same_job_status(&c, tol), want, "{what}");
    }
}
