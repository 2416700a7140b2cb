//! The three-way verdict of each row and phase between two runs, and why a row cannot be
//! judged (a biased A/A control on either side, another protocol, no ratio on the verdict
//! clock). A verdict is made in two steps: each cell lists its units ([`Unit`]), and once the
//! run's family is counted every pending one is judged at the per-unit level
//! ([`Pending::judge`]), so an A/A run fails anywhere at most `1 − CI_LEVEL` of the time.

use std::fmt::Write as _;

use cell_schema::{
    CellResult, Clock, GateChange, GateRatio, GateStatus, GateVerdict, JobSummary, Phase, RatioCi,
    RowName, round_ratio,
};

use crate::GateConfig;
use crate::change::{Change, change, change_against_point, measurable};
use crate::control::{PhaseControl, blocked, of_cell_job};
use crate::rules::band;

pub(super) fn gate_ratio(r: &RatioCi) -> GateRatio {
    GateRatio {
        median: r.median,
        lo: r.lo,
        hi: r.hi,
    }
}

/// Why a row's ratio cannot be compared with its baseline's when the two were timed by
/// different protocols: a duet's ratio shares the moment's noise, a sequential one does not,
/// and the two need not agree on a machine whose CPUs differ.
fn other_protocol(job: Option<&JobSummary>, base: Option<&JobSummary>) -> Option<String> {
    let (new, old) = (job?.protocol.mode, base?.protocol.mode);
    (new != old).then(|| {
        format!(
            "timed by the {} protocol, the baseline by the {}: ratios of two protocols are not compared (the next run of this protocol is compared with this one)",
            new.as_str(),
            old.as_str()
        )
    })
}

/// One row and phase of a cell as the gate lists it.
pub(super) enum Unit {
    /// Decided already: a side holds no ratio on the verdict clock.
    Done(GateVerdict),
    /// To be judged once the run's family is counted.
    Pending(Pending),
}

/// What a baseline gives a row and phase.
pub(super) enum Old {
    /// A measured run: its ratio and its per-round ratios.
    Measured(RatioCi, Vec<f64>),
    /// An imported run: a point ratio on the wall clock, no interval, no rounds.
    Point(f64),
}

/// A row and phase whose change between the two runs is measured, and judged unless
/// `blocked` says why not.
pub(super) struct Pending {
    line: VerdictLine,
    new: RatioCi,
    new_ratios: Vec<f64>,
    old: Old,
    /// Why no call is made (a biased control, another protocol): the change is still shown
    /// with what the run resolved, and the unit is not one of the family.
    blocked: Option<String>,
}

impl Pending {
    /// Whether this unit is judged, and so is one of the run's family.
    pub(super) fn judged(&self) -> bool {
        self.blocked.is_none()
            && measurable(&self.new_ratios)
            && match &self.old {
                Old::Measured(_, old) => measurable(old),
                Old::Point(p) => p.is_finite() && *p > 0.0,
            }
    }

    fn change(&self, level: f64) -> Option<Change> {
        match &self.old {
            Old::Measured(_, old) => change(&self.new_ratios, old, level),
            Old::Point(p) => change_against_point(&self.new_ratios, *p, level),
        }
    }

    /// The verdict at the family's per-unit `level`.
    pub(super) fn judge(self, level: f64, tolerance: f64) -> GateVerdict {
        let change = self.change(level);
        let status = match (&self.blocked, &change) {
            (None, Some(c)) => c.status(tolerance),
            _ => GateStatus::Inconclusive,
        };
        let (old, point) = match &self.old {
            Old::Measured(r, _) => (gate_ratio(r), None),
            Old::Point(p) => (
                GateRatio {
                    median: *p,
                    lo: *p,
                    hi: *p,
                },
                Some(*p),
            ),
        };
        let (lo, hi) = band(old.median, tolerance);
        let mut message = format!(
            "{} {} {} {} ({}): ",
            status.word(),
            self.line.cell,
            self.line.row,
            self.line.phase,
            self.line.clock.name(),
        );
        message.push_str(&change_words(
            status,
            change.as_ref(),
            self.blocked.as_deref(),
            &self.line.phase,
            tolerance,
        ));
        let _ = write!(
            message,
            "; {:.4} (CI {:.4}–{:.4}) vs ",
            self.new.median, self.new.lo, self.new.hi
        );
        match point {
            None => {
                let _ = write!(
                    message,
                    "{:.4} (CI {:.4}–{:.4}) in {}",
                    old.median, old.lo, old.hi, self.line.base_name
                );
            }
            Some(p) => {
                let _ = write!(
                    message,
                    "{p:.4} in {}, against an imported point ratio on the wall clock (a ratio of medians, no interval: only this run's noise is counted)",
                    self.line.base_name
                );
            }
        }
        let _ = write!(message, "; band {lo:.4}–{hi:.4}");
        GateVerdict {
            row: RowName::from(self.line.row.as_str()),
            phase: self.line.phase,
            clock: self.line.clock,
            status,
            old,
            new: gate_ratio(&self.new),
            band: [lo, hi],
            message,
            against_imported_point: point.is_some(),
            change: change.map(|c| GateChange {
                median: round_ratio(c.median),
                lo: round_ratio(c.lo),
                hi: round_ratio(c.hi),
                level: round_ratio(c.level),
                resolution: round_ratio(c.resolution()),
            }),
        }
    }
}

/// A level as a percentage to two decimals, trailing zeros dropped: `98.75`, `97.5`, `90`.
fn level_pct(level: f64) -> String {
    let s = format!("{:.2}", level * 100.0);
    s.trim_end_matches('0').trim_end_matches('.').to_owned()
}

/// `+1.2%`: a change as a signed percentage.
fn pct(c: f64) -> String {
    let s = format!("{:+.1}%", (c - 1.0) * 100.0);
    if s == "-0.0%" { "+0.0%".into() } else { s }
}

/// What a verdict says about the change: how big, how sure, and why no call when none.
fn change_words(
    status: GateStatus,
    change: Option<&Change>,
    blocked: Option<&str>,
    phase: &Phase,
    tolerance: f64,
) -> String {
    let tol = format!("±{}%", cell_schema::percent(tolerance));
    let Some(c) = change else {
        return format!(
            "not compared: {}",
            blocked
                .unwrap_or("a side has no per-round ratios to compare (its samples are missing, or a time of 0 makes a ratio that is not a positive number)")
        );
    };
    // As gate.json writes it, so the line and the file say the same.
    let res = format!("±{}%", cell_schema::percent(round_ratio(c.resolution())));
    let range = format!("{} to {}", pct(c.lo), pct(c.hi));
    if let Some(why) = blocked {
        return format!(
            "not judged: {why} (the change is {} ({range}), resolved to {res})",
            pct(c.median)
        );
    }
    let (band_lo, band_hi) = crate::change::band(tolerance);
    match status {
        GateStatus::Pass => format!(
            "no change beyond {tol}: {} ({range}), resolved to {res}",
            pct(c.median)
        ),
        GateStatus::Fail => {
            let way = if c.lo > band_hi { "slower" } else { "faster" };
            format!(
                "{:.1}% {way} ({range}), beyond TOLERANCE {tol}; this run resolves {res}",
                (c.median - 1.0).abs() * 100.0
            )
        }
        GateStatus::Inconclusive if !c.reaches() => format!(
            "{} round(s) against {} cannot reach the {}% the run's verdicts need together (at most {}%): no call; the change is {} ({range}), resolved to {res}",
            c.rounds.0,
            if c.rounds.1 == 0 {
                "a point".to_owned()
            } else {
                c.rounds.1.to_string()
            },
            level_pct(c.asked),
            level_pct(c.level),
            pct(c.median)
        ),
        // A wide interval that holds 1.0 saw nothing; one that misses it saw a change it
        // cannot place against the band.
        GateStatus::Inconclusive
            if c.resolution() > (band_hi - band_lo) / 2.0 && c.lo <= 1.0 && c.hi >= 1.0 =>
        {
            format!(
                "this run resolves {res} on {phase}, wider than TOLERANCE {tol}; it saw no change beyond that ({range}, estimate {})",
                pct(c.median)
            )
        }
        GateStatus::Inconclusive if c.resolution() > (band_hi - band_lo) / 2.0 => format!(
            "this run resolves {res} on {phase}, wider than TOLERANCE {tol}; it saw a change of {} ({range}), which may lie within TOLERANCE or beyond it: more rounds would settle it",
            pct(c.median)
        ),
        GateStatus::Inconclusive => format!(
            "a change of {} ({range}) reaches across the edge of TOLERANCE {tol}; this run resolves {res}: more rounds would settle it",
            pct(c.median)
        ),
    }
}

/// Every row and phase of `cell` with a baseline row in `base`, in order: each decided
/// (no ratio on its clock) or pending; a row the baseline lacks is a notice.
pub(super) fn row_units(
    cell: &CellResult,
    base_name: &str,
    base: &CellResult,
    config: &GateConfig,
    notices: &mut Vec<String>,
) -> Vec<Unit> {
    let mut units = Vec::new();
    let level = config.settings.ci_level;
    let (mine, theirs) = (controls(cell, level, None), controls(base, level, None));
    for (name, row) in &cell.rows {
        if row.row.role == cell_schema::Role::Reference {
            continue;
        }
        let Some(old_row) = base.rows.get(name) else {
            notices.push(format!("new row {name}: baseline recorded"));
            continue;
        };
        let clock = row.row.verdict_clock;
        let (job, base_job) = (cell.jobs.get(&row.job), base.jobs.get(&old_row.job));
        let (mine, theirs) = (&mine[&row.job], &theirs[&old_row.job]);
        for (p, pr) in &row.row.phases {
            let Some(old_pr) = old_row.row.phases.get(p) else {
                continue;
            };
            let (Some(mine_r), Some(theirs_r)) = (pr.ratio.as_ref(), old_pr.ratio.as_ref()) else {
                continue;
            };
            let line = VerdictLine {
                cell: cell.cell.id.to_string(),
                row: name.to_string(),
                phase: p.clone(),
                clock,
                base_name: base_name.to_owned(),
            };
            let (new, old) = match (mine_r.on(clock), theirs_r.on(clock)) {
                (Some(n), Some(o)) => (n, o),
                (n, o) => {
                    units.push(Unit::Done(line.unmeasured(n, o, config.tolerance)));
                    continue;
                }
            };
            // A biased control on either side and there is no call: a biased baseline is no
            // firmer a reference than a biased new run. Nor is a ratio of another protocol.
            let blocked = other_protocol(job, base_job)
                .or_else(|| blocked(mine, p))
                .or_else(|| blocked(theirs, p).map(|why| format!("baseline: {why}")));
            units.push(Unit::Pending(Pending {
                line,
                new: new.clone(),
                new_ratios: per_round(cell, &row.job, &pr.runs, p, clock),
                old: Old::Measured(
                    old.clone(),
                    per_round(base, &old_row.job, &old_pr.runs, p, clock),
                ),
                blocked,
            }));
        }
    }
    units
}

/// Each job's reading of its A/A control, as the job's verdict read it, and on `also` too
/// when every row is compared on that clock besides its own.
pub(super) fn controls(
    cell: &CellResult,
    run_level: f64,
    also: Option<Clock>,
) -> std::collections::BTreeMap<cell_schema::ToolchainName, Vec<PhaseControl>> {
    cell.rows
        .values()
        .map(|r| &r.job)
        .chain(cell.jobs.keys())
        .map(|tc| (tc.clone(), of_cell_job(cell, tc, run_level, also)))
        .collect()
}

/// A pending unit against an imported point (`gate/imported.rs` decides which).
pub(super) fn against_point(
    cell: &CellResult,
    (name, job): (&RowName, &cell_schema::ToolchainName),
    (phase, runs): (&Phase, &[cell_schema::Run]),
    (new, point): (&RatioCi, f64),
    base_name: &str,
    blocked: Option<String>,
) -> Unit {
    Unit::Pending(Pending {
        line: VerdictLine {
            cell: cell.cell.id.to_string(),
            row: name.to_string(),
            phase: phase.clone(),
            clock: Clock::Wall,
            base_name: base_name.to_owned(),
        },
        new: new.clone(),
        new_ratios: per_round(cell, job, runs, phase, Clock::Wall),
        old: Old::Point(point),
        blocked,
    })
}

/// A row's per-round ratios on `clock` against its own job's reference runs, from the samples.
fn per_round(
    cell: &CellResult,
    job: &cell_schema::ToolchainName,
    runs: &[cell_schema::Run],
    phase: &Phase,
    clock: Clock,
) -> Vec<f64> {
    let Some(j) = cell.jobs.get(job) else {
        return Vec::new();
    };
    let Some(reference) = j.reference.phases.get(phase) else {
        return Vec::new();
    };
    crate::figures::ratios(runs, &reference.runs, clock, j.protocol.mode)
}

/// Where one row verdict is, for its message.
struct VerdictLine {
    cell: String,
    row: String,
    phase: Phase,
    clock: Clock,
    base_name: String,
}

impl VerdictLine {
    /// INCONCLUSIVE: a side holds no ratio on the verdict clock (a file written before that
    /// clock was recorded, or by a job none of whose rows was judged on it), and no other
    /// clock's ratio stands in for it: the side without one shows 0, and the line says why.
    fn unmeasured(
        self,
        new: Option<&RatioCi>,
        old: Option<&RatioCi>,
        tolerance: f64,
    ) -> GateVerdict {
        let label = self.clock.info().label;
        let base = &self.base_name;
        let why = match (new, old) {
            (Some(_), None) => format!("{base} recorded no {label} ratio"),
            (None, Some(_)) => format!("this run recorded no {label} ratio ({base} did)"),
            _ => format!("neither this run nor {base} recorded a {label} ratio"),
        };
        let none = GateRatio {
            median: 0.0,
            lo: 0.0,
            hi: 0.0,
        };
        let shown = |r: Option<&RatioCi>| {
            r.map_or_else(
                || "none".to_owned(),
                |r| format!("{:.4} (CI {:.4}–{:.4})", r.median, r.lo, r.hi),
            )
        };
        GateVerdict {
            row: RowName::from(self.row.as_str()),
            phase: self.phase.clone(),
            clock: self.clock,
            status: GateStatus::Inconclusive,
            old: old.map_or(none.clone(), gate_ratio),
            new: new.map_or(none, gate_ratio),
            band: old.map_or([0.0, 0.0], |o| {
                let (lo, hi) = band(o.median, tolerance);
                [lo, hi]
            }),
            message: format!(
                "{} {} {} {} ({}): {} vs {} in {base}, not compared: {why}",
                GateStatus::Inconclusive.word(),
                self.cell,
                self.row,
                self.phase,
                self.clock.name(),
                shown(new),
                shown(old),
            ),
            against_imported_point: false,
            change: None,
        }
    }
}
