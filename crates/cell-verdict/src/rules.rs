//! The rules of docs/protocol.md, each written once: the three-way gate, the A/A control,
//! the tooth, contention. A job judges itself with them and the gate judges the job again
//! with them, from the repository's own thresholds; the two lines they print differ only in
//! what they add (the gate names the job and the baseline).

use cell_schema::{Clock, GateStatus, RatioCi, RowName};

/// The three-way rule for a new interval `[lo, hi]` against a stored figure `b` (an http
/// suite's req/s): PASS inside `[b/(1+tol), b·(1+tol)]`, FAIL wholly outside, INCONCLUSIVE
/// otherwise. A workload row is judged between two runs instead ([`crate::Change`]).
pub fn three_way(b: f64, lo: f64, hi: f64, tolerance: f64) -> GateStatus {
    let (band_lo, band_hi) = band(b, tolerance);
    if lo >= band_lo && hi <= band_hi {
        GateStatus::Pass
    } else if hi < band_lo || lo > band_hi {
        GateStatus::Fail
    } else {
        GateStatus::Inconclusive
    }
}

/// The tolerance band around a baseline ratio `b`: `[b/(1+tol), b·(1+tol)]`, symmetric in
/// log space so a 10% gain and a 10% loss are judged alike.
pub fn band(b: f64, tolerance: f64) -> (f64, f64) {
    (b / (1.0 + tolerance), b * (1.0 + tolerance))
}

/// The A/A rule: the control is a byte-identical copy of the reference, so a control ratio
/// whose interval misses 1.0 means the protocol timed two identical binaries apart: it is
/// biased, and no row on that phase may be called better or worse. Its width, and its
/// median's wander inside it, are noise every row's own interval already carries: neither
/// silences a phase.
pub fn control_biased(r: &RatioCi) -> bool {
    r.lo > 1.0 || r.hi < 1.0
}

/// The contention rule: a job whose median wall/cpu exceeds `CONTENTION_MAX` shared its
/// cores; it is noted, never a verdict.
pub fn contended(median_wall_per_cpu: f64, contention_max: f64) -> bool {
    median_wall_per_cpu > contention_max
}

/// Why a phase the A/A control has no ratio on cannot be judged (its rows are inconclusive).
pub fn no_control_measurement(phase: &str) -> String {
    format!("the A/A control has no measurement on {phase}")
}

/// Why a phase the A/A control has no ratio on `clock` for cannot be judged on that clock (a
/// file that did not record it): its rows are inconclusive there.
pub fn no_control_metric(phase: &str, clock: Clock) -> String {
    format!(
        "the A/A control has no {} ratio on {phase}",
        clock.info().label
    )
}

/// A control whose interval missed 1.0 on one phase and clock: a biased protocol there.
#[derive(Clone, Debug, PartialEq)]
pub struct BiasedControl<'a> {
    /// The phase the control was biased on.
    pub phase: &'a str,
    /// The clock it was biased on.
    pub clock: Clock,
    /// The control's ratio on it.
    pub ratio: &'a RatioCi,
}

impl<'a> BiasedControl<'a> {
    /// The finding, when the control's `ratio` on `phase` and `clock` misses 1.0.
    pub fn check(phase: &'a str, clock: Clock, ratio: &'a RatioCi) -> Option<Self> {
        control_biased(ratio).then_some(Self {
            phase,
            clock,
            ratio,
        })
    }

    /// What it found, in the words both the job and the gate use; `level` is the one the
    /// interval was asked for (the job's checks share `CI_LEVEL`'s error budget).
    pub fn reason(&self, level: f64) -> String {
        let r = self.ratio;
        format!(
            "biased protocol on {}: the A/A control ({} time) is {:.4} (CI {:.4}–{:.4} at {}%, the job's checks of its control taken together), an interval that misses 1.0: two identical binaries were timed {:+.1}% apart, so no row on {} is called better or worse",
            self.phase,
            self.clock.name(),
            r.median,
            r.lo,
            r.hi,
            cell_schema::percent(level),
            (r.median - 1.0) * 100.0,
            self.phase
        )
    }
}

/// The tooth rule: the slow row must stay at least `floor` times the fast row.
pub fn tooth_seen(ratio: Option<&RatioCi>, floor: f64) -> bool {
    ratio.is_some_and(|r| r.median >= floor)
}

/// A tooth the harness did not see.
#[derive(Clone, Debug, PartialEq)]
pub struct ToothMissed<'a> {
    /// The row built to be slow (`tooth.slow` in `cell/cell.toml`).
    pub slow: &'a RowName,
    /// The row it must stay slower than.
    pub fast: &'a RowName,
    /// The phase it is read on.
    pub phase: &'a str,
    /// Its ratio, when both rows were measured.
    pub ratio: Option<&'a RatioCi>,
    /// The floor it is held to.
    pub floor: f64,
    /// The architecture the floor is for.
    pub arch: &'a str,
}

impl<'a> ToothMissed<'a> {
    /// The finding, when the tooth's `ratio` is below `floor` (or missing).
    pub fn check(
        (slow, fast, phase): (&'a RowName, &'a RowName, &'a str),
        ratio: Option<&'a RatioCi>,
        floor: f64,
        arch: &'a str,
    ) -> Option<Self> {
        (!tooth_seen(ratio, floor)).then_some(Self {
            slow,
            fast,
            phase,
            ratio,
            floor,
            arch,
        })
    }

    /// The line a job's own verdict gives.
    pub fn job_reason(&self) -> String {
        let (slow, fast, phase) = (self.slow, self.fast, self.phase);
        match self.ratio {
            Some(r) => format!(
                "tooth: {slow}/{fast} on {phase} is {:.4} (CI {:.4}–{:.4}), below the floor {} for {}: the harness cannot see a known difference",
                r.median, r.lo, r.hi, self.floor, self.arch
            ),
            None => format!(
                "tooth: {slow}/{fast} on {phase} has no measurement: a tooth row is missing"
            ),
        }
    }

    /// The failure the gate gives for job `job`.
    pub fn gate_failure(&self, job: &str) -> String {
        let (slow, fast, phase) = (self.slow, self.fast, self.phase);
        match self.ratio {
            Some(r) => format!(
                "tooth {slow}/{fast} on {phase}: {:.4} (CI {:.4}–{:.4}) in job {job} is below the floor {} for {}: the harness could not see a known difference",
                r.median, r.lo, r.hi, self.floor, self.arch
            ),
            None => format!(
                "tooth {slow}/{fast} on {phase}: not measured in job {job}: its rows were expected but are missing"
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn three_way_rule() {
        assert_eq!(three_way(1.0, 0.995, 1.005, 0.02), GateStatus::Pass);
        assert_eq!(three_way(1.0, 1.025, 1.04, 0.02), GateStatus::Fail);
        assert_eq!(three_way(1.0, 0.90, 0.97, 0.02), GateStatus::Fail);
        assert_eq!(three_way(1.0, 1.01, 1.03, 0.02), GateStatus::Inconclusive);
        assert_eq!(three_way(2.0, 1.97, 2.03, 0.02), GateStatus::Pass);
        // Around a point off 1.0, as the bench's old rule reads a baseline: [1.0049, 1.0353].
        assert_eq!(three_way(1.02, 1.01, 1.03, 0.015), GateStatus::Pass);
        assert_eq!(three_way(1.02, 1.036, 1.05, 0.015), GateStatus::Fail);
        assert_eq!(three_way(1.02, 0.98, 1.004, 0.015), GateStatus::Fail);
        assert_eq!(three_way(1.02, 1.03, 1.04, 0.015), GateStatus::Inconclusive);
    }

    #[test]
    fn the_control_is_biased_only_when_its_interval_misses_one() {
        assert!(!control_biased(&ci(1.0, 0.995, 1.005)));
        assert!(control_biased(&ci(1.02, 1.01, 1.03)), "misses 1.0 above");
        assert!(control_biased(&ci(0.98, 0.97, 0.999)), "misses 1.0 below");
        // Regression: a wide control, or one whose median wanders, was read as noise that
        // silenced every row of the phase (0 of 18 phases judged on a noisy host).
        assert!(!control_biased(&ci(1.0, 0.90, 1.10)), "wide");
        assert!(
            !control_biased(&ci(1.03, 0.999, 1.06)),
            "median off, 1.0 inside"
        );
        let r = ci(1.0123, 1.0051, 1.019);
        let b = BiasedControl::check("mix", Clock::Cpu, &r).unwrap();
        let why = b.reason(0.9833);
        assert!(why.contains("misses 1.0"), "{why}");
        assert!(why.contains("+1.2% apart"), "{why}");
        assert!(why.contains("at 98.3%"), "{why}");
    }

    #[test]
    fn the_tooth_is_read_against_its_floor() {
        assert!(tooth_seen(Some(&ci(1.6, 1.5, 1.7)), 1.3));
        assert!(!tooth_seen(Some(&ci(1.2, 1.1, 1.3)), 1.3));
        assert!(!tooth_seen(None, 1.3));
        let (s, f) = (RowName::new("c-O0"), RowName::new("c-O2"));
        let r = ci(1.2, 1.1, 1.3);
        let m = ToothMissed::check((&s, &f, "mix"), Some(&r), 1.3, "x86_64").unwrap();
        assert!(m.job_reason().contains("below the floor 1.3 for x86_64"));
        assert!(
            m.gate_failure("clang")
                .contains("in job clang is below the floor 1.3")
        );
    }
}
