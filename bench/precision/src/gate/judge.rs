//! What a rule says of one (candidate, phase) unit between two runs, and the new rule: the
//! gate's own, imported from cell-verdict, not written again here.

use cell_schema::GateStatus;
use cell_verdict::{Change, change, control_biased};
use serde::Serialize;

/// A change between two runs, `new / baseline`, with the interval a rule judged.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Interval {
    /// The estimate (1: no change).
    pub change: f64,
    /// Lower bound.
    pub lo: f64,
    /// Upper bound.
    pub hi: f64,
}

/// One rule's verdict on one unit.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Judgement {
    /// PASS, FAIL or INCONCLUSIVE (a unit not judged is INCONCLUSIVE).
    pub status: GateStatus,
    /// The interval it judged, when the samples gave one (also when not judged).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interval: Option<Interval>,
    /// What the rule could resolve, as a fraction (0.004: ±0.4%), when it could tell.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resolution: Option<f64>,
    /// Why no call was made, when none was for another reason than the interval.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
}

impl Judgement {
    /// No call, for `why`, with whatever interval the samples still gave.
    pub fn not_judged(why: String, interval: Option<Interval>, resolution: Option<f64>) -> Self {
        Self {
            status: GateStatus::Inconclusive,
            interval,
            resolution,
            why: Some(why),
        }
    }
}

/// The two jobs' words in a verdict's reason.
pub const JOBS: [&str; 2] = ["the baseline's", "the new job's"];

/// The new rule (docs/protocol.md, "The gate: two runs, not a run and a point"). A job's A/A
/// control on the phase is read at `control_level` (the job's checks share `CI_LEVEL`'s error
/// budget, one per phase it timed); when it misses 1.0 in either job no call is made.
/// Otherwise the change between the two runs' per-round ratios at `unit_level` (the run's
/// family of judged units), three-way against the band at `tolerance`, with no call when the
/// rounds cannot reach that level.
pub fn new_rule(
    controls: [&[f64]; 2],
    baseline: &[f64],
    new: &[f64],
    levels: (f64, f64),
    tolerance: f64,
) -> Judgement {
    let (control_level, unit_level) = levels;
    let c: Option<Change> = change(new, baseline, unit_level);
    let interval = c.map(|c| Interval {
        change: c.median,
        lo: c.lo,
        hi: c.hi,
    });
    let resolution = c.map(|c| c.resolution());
    let biased = controls.iter().zip(JOBS).find_map(|(ctl, job)| {
        match cell_run::protocol::ratio_ci(ctl, control_level) {
            None => Some(format!("not judged: {job} A/A control has no ratio")),
            Some(r) if control_biased(&r) => Some(format!(
                "not judged: {job} A/A control is {:.4} (CI {:.4}–{:.4}), an interval that misses 1.0",
                r.median, r.lo, r.hi
            )),
            Some(_) => None,
        }
    });
    if let Some(why) = biased {
        return Judgement::not_judged(why, interval, resolution);
    }
    match c {
        None => Judgement::not_judged("no ratio to compare".into(), None, None),
        // The gate makes no call when the rounds cannot reach the level the family needs.
        Some(c) if !c.reaches() => Judgement::not_judged(
            format!(
                "not judged: {} round(s) against {} reach at most {:.4} of the {:.4} asked",
                c.rounds.0, c.rounds.1, c.level, c.asked
            ),
            interval,
            resolution,
        ),
        Some(c) => Judgement {
            status: c.status(tolerance),
            interval,
            resolution,
            why: None,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_biased_control_in_either_job_leaves_the_unit_unjudged_with_its_change_shown() {
        let quiet = [
            0.999, 1.0, 1.001, 1.0, 0.9995, 1.0005, 1.0, 1.0, 1.001, 0.999,
        ];
        let slow: Vec<f64> = quiet.iter().map(|x| x * 1.10).collect();
        let off: Vec<f64> = quiet.iter().map(|x| x * 1.02).collect();
        let levels = (0.95, 0.95);
        let judged = new_rule([&quiet, &quiet], &quiet, &slow, levels, 0.015);
        assert_eq!(judged.status, GateStatus::Fail, "{judged:?}");
        for controls in [[&off[..], &quiet[..]], [&quiet[..], &off[..]]] {
            let j = new_rule(controls, &quiet, &slow, levels, 0.015);
            assert_eq!(j.status, GateStatus::Inconclusive);
            assert!(j.why.unwrap().contains("misses 1.0"));
            assert!(j.interval.is_some() && j.resolution.is_some());
        }
    }
}
