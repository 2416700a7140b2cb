//! The A/A control, read per phase (docs/protocol.md, "The verdict of a job"): one home for
//! the reading that a job's verdict states and the gate reads again.
//!
//! The control is a byte-identical copy of the reference, timed as a row; on a phase where
//! its interval misses 1.0 the protocol timed two identical binaries apart, so no row there
//! is judged. A job checks it on every (phase, clock) some row's verdict reads, and each
//! check is one more chance to call an unbiased protocol biased: the checks share the job's
//! error budget, `1 − CI_LEVEL`, so the interval of each is read at `1 − (1 − CI_LEVEL)/m`
//! for `m` checks (at 10 rounds and three phases, the smallest and largest ratio). The
//! interval is computed from the control's samples, paired with the reference's as a row's
//! are.

use cell_schema::{Clock, Phase, ProtocolMode, RatioCi, Role, RowName, RowResult};

use crate::figures::{ratio_ci, ratios};
use crate::rules::{BiasedControl, no_control_measurement, no_control_metric};

/// One phase as the A/A control judges it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct PhaseControl {
    /// The phase.
    pub(crate) phase: Phase,
    /// Why its rows cannot be judged (empty: they can).
    pub(crate) reasons: Vec<String>,
}

impl PhaseControl {
    /// The control vouches for this phase: its rows are judged.
    pub(crate) fn judged(&self) -> bool {
        self.reasons.is_empty()
    }
}

/// The control's reading on every phase of `rows` (a job's timed rows: its reference, its
/// control named `control`, its rows), on every clock some row's verdict reads there and the
/// default clock. A phase the control has no figure on is not judged either: missing data,
/// not bias, and the words say which.
pub(crate) fn by_phase(
    rows: &[(&RowName, &RowResult)],
    control: &RowName,
    clocks: Clocks,
    mode: ProtocolMode,
    run_level: f64,
) -> Vec<PhaseControl> {
    let find = |pick: &dyn Fn(&RowName, &RowResult) -> bool| {
        rows.iter().find(|(n, r)| pick(n, r)).map(|(_, r)| *r)
    };
    let ctl = find(&|n, _| n == control);
    let reference = find(&|_, r| r.role == Role::Reference);
    let checks = checks(rows, ctl, clocks);
    let level = crate::unit_level(run_level, checks.len());
    let mut out: Vec<PhaseControl> = Vec::new();
    for (p, clock) in checks {
        let reason = match ctl.and_then(|c| c.phases.get(p)) {
            Some(pr) if pr.ratio.is_some() => {
                match interval(
                    pr,
                    reference.and_then(|r| r.phases.get(p)),
                    clock,
                    mode,
                    level,
                ) {
                    None => Some(format!(
                        "not judged: {}",
                        no_control_metric(p.as_str(), clock)
                    )),
                    Some(r) => BiasedControl::check(p.as_str(), clock, &r).map(|b| b.reason(level)),
                }
            }
            _ => Some(format!(
                "not judged: {}",
                no_control_measurement(p.as_str())
            )),
        };
        match out.iter_mut().find(|c| &c.phase == p) {
            Some(c) => c.reasons.extend(reason),
            None => out.push(PhaseControl {
                phase: p.clone(),
                reasons: reason.into_iter().collect(),
            }),
        }
    }
    // A phase the control lacks is said once, not once per clock.
    for c in &mut out {
        c.reasons.dedup();
    }
    out
}

/// The reading of the job `tc` of a merged cell: its reference and control, and its rows
/// among the cell's, as the job itself read them.
pub(crate) fn of_cell_job(
    cell: &cell_schema::CellResult,
    tc: &cell_schema::ToolchainName,
    run_level: f64,
    also: Option<Clock>,
) -> Vec<PhaseControl> {
    let Some(job) = cell.jobs.get(tc) else {
        return Vec::new();
    };
    let mut rows: Vec<(&RowName, &RowResult)> = vec![(&job.protocol.reference, &job.reference)];
    if let Some(c) = &job.control {
        rows.push((&job.protocol.control, c));
    }
    rows.extend(
        cell.rows
            .iter()
            .filter(|(n, r)| &r.job == tc && **n != job.protocol.reference)
            .map(|(n, r)| (n, &r.row)),
    );
    by_phase(
        &rows,
        &job.protocol.control,
        Clocks {
            default: job.protocol.default_clock,
            also,
        },
        job.protocol.mode,
        run_level,
    )
}

/// Why `phase` is not judged in a reading, if it is not: its reasons in one line.
pub(crate) fn blocked(reading: &[PhaseControl], phase: &Phase) -> Option<String> {
    reading
        .iter()
        .find(|c| &c.phase == phase && !c.judged())
        .map(|c| c.reasons.join("; "))
}

/// The clocks a control is checked on besides its rows' own: the job's default clock, and
/// one more a reader compares on (the wall clock of a gate against an imported baseline).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Clocks {
    /// The job's default verdict clock.
    pub(crate) default: Clock,
    /// A clock every row is compared on besides its own.
    pub(crate) also: Option<Clock>,
}

/// Every (phase, clock) the control is checked on: each phase a row is judged on or the
/// control was timed on, with each clock a row's verdict reads there and the others.
fn checks<'a>(
    rows: &[(&RowName, &'a RowResult)],
    control: Option<&'a RowResult>,
    extra: Clocks,
) -> Vec<(&'a Phase, Clock)> {
    let judged = || {
        rows.iter()
            .filter(|(_, r)| r.role == Role::Row)
            .map(|(_, r)| *r)
    };
    let mut phases: Vec<&Phase> = judged()
        .flat_map(|r| r.phases.keys())
        .chain(control.into_iter().flat_map(|c| c.phases.keys()))
        .collect();
    phases.sort();
    phases.dedup();
    let mut out = Vec::new();
    for p in phases {
        let mut clocks: Vec<Clock> = judged()
            .filter(|r| r.phases.contains_key(p))
            .map(|r| r.verdict_clock)
            .chain([extra.default])
            .chain(extra.also)
            .collect();
        clocks.sort();
        clocks.dedup();
        out.extend(clocks.into_iter().map(|c| (p, c)));
    }
    out
}

/// The control's interval on `clock` at `level`, from its samples against the reference's;
/// its stated interval when it has no samples; `None` when it has no figure on `clock`.
fn interval(
    control: &cell_schema::PhaseResult,
    reference: Option<&cell_schema::PhaseResult>,
    clock: Clock,
    mode: ProtocolMode,
    level: f64,
) -> Option<RatioCi> {
    let stated = control.ratio.as_ref()?.on(clock)?;
    let per_round =
        reference.map_or_else(Vec::new, |r| ratios(&control.runs, &r.runs, clock, mode));
    if per_round.is_empty() {
        return Some(stated.clone());
    }
    ratio_ci(&per_round, level)
}
