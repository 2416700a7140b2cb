//! The three-way verdict of each row and phase against a measured baseline, and why a row
//! cannot be judged (a noisy A/A control on either side, another protocol, no ratio on the
//! verdict clock).

use std::fmt::Write as _;

use cell_schema::{
    CellResult, Clock, GateRatio, GateStatus, GateVerdict, JobSummary, Phase, RatioCi,
};

use crate::GateConfig;
use crate::rules::{NoisyControl, band, three_way};

pub(super) fn gate_ratio(r: &RatioCi) -> GateRatio {
    GateRatio {
        median: r.median,
        lo: r.lo,
        hi: r.hi,
    }
}

/// Why a job's A/A control says its rows on `phase` (on `clock`) cannot be judged, if it does.
pub(super) fn too_noisy(
    job: &JobSummary,
    phase: &Phase,
    clock: Clock,
    tolerance: f64,
) -> Option<String> {
    // No control (or none on this phase) vouches for nothing: the phase is not judged.
    let Some(r) = (job.control.as_ref())
        .and_then(|c| c.phases.get(phase))
        .and_then(|p| p.ratio.as_ref())
    else {
        return Some(crate::rules::no_control_measurement(phase.as_str()));
    };
    let Some(r) = r.on(clock) else {
        return Some(crate::rules::no_control_metric(phase.as_str(), clock));
    };
    NoisyControl::check(phase.as_str(), clock, r, tolerance).map(|n| n.gate_reason())
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

/// Three-way per row and phase; a row the baseline lacks is a notice.
pub(super) fn row_verdicts(
    cell: &CellResult,
    base_name: &str,
    base: &CellResult,
    config: &GateConfig,
    notices: &mut Vec<String>,
) -> Vec<GateVerdict> {
    let mut verdicts = Vec::new();
    for (name, row) in &cell.rows {
        if row.row.role == cell_schema::Role::Reference {
            continue;
        }
        let Some(old_row) = base.rows.get(name) else {
            notices.push(format!("new row {name}: baseline recorded"));
            continue;
        };
        let clock = row.row.verdict_clock;
        for (p, pr) in &row.row.phases {
            let (Some(new_r), Some(old_r)) = (
                pr.ratio.as_ref(),
                old_row.row.phases.get(p).and_then(|x| x.ratio.as_ref()),
            ) else {
                continue;
            };
            let line = VerdictLine {
                cell: cell.cell.id.as_str(),
                row: name.as_str(),
                phase: p,
                clock,
                base_name,
            };
            let (new, old) = match (new_r.on(clock), old_r.on(clock)) {
                (Some(n), Some(o)) => (n, o),
                (n, o) => {
                    verdicts.push(line.unmeasured(n, o, config.tolerance));
                    continue;
                }
            };
            // Either side too noisy and there is no call: a noisy baseline is no firmer a
            // reference than a noisy new run. Nor is a ratio of another protocol.
            let (job, base_job) = (cell.jobs.get(&row.job), base.jobs.get(&old_row.job));
            let noisy = other_protocol(job, base_job)
                .or_else(|| job.and_then(|j| too_noisy(j, p, clock, config.tolerance)))
                .or_else(|| {
                    base.jobs
                        .get(&old_row.job)
                        .and_then(|j| too_noisy(j, p, clock, config.tolerance))
                        .map(|why| format!("baseline {why}"))
                });
            verdicts.push(line.verdict(new, old, noisy, config.tolerance));
        }
    }
    verdicts
}

/// Where one row verdict is, for its message.
struct VerdictLine<'a> {
    cell: &'a str,
    row: &'a str,
    phase: &'a Phase,
    clock: Clock,
    base_name: &'a str,
}

impl VerdictLine<'_> {
    /// INCONCLUSIVE: a side holds no ratio on the verdict clock (a file written before that
    /// clock was recorded, or by a job none of whose rows was judged on it), and no other
    /// clock's ratio stands in for it: the side without one shows 0, and the line says why.
    fn unmeasured(
        &self,
        new: Option<&RatioCi>,
        old: Option<&RatioCi>,
        tolerance: f64,
    ) -> GateVerdict {
        let label = self.clock.info().label;
        let base = self.base_name;
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
        let (lo, hi) = old.map_or((0.0, 0.0), |o| band(o.median, tolerance));
        GateVerdict {
            row: cell_schema::RowName::from(self.row),
            phase: self.phase.clone(),
            clock: self.clock,
            status: GateStatus::Inconclusive,
            old: old.map_or(none.clone(), gate_ratio),
            new: new.map_or(none, gate_ratio),
            band: [lo, hi],
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
        }
    }

    fn verdict(
        &self,
        new: &RatioCi,
        old: &RatioCi,
        noisy: Option<String>,
        tolerance: f64,
    ) -> GateVerdict {
        let (lo, hi) = band(old.median, tolerance);
        let status = if noisy.is_some() {
            GateStatus::Inconclusive
        } else {
            three_way(old.median, new.lo, new.hi, tolerance)
        };
        let mut message = format!(
            "{} {} {} {} ({}): {:.4} (CI {:.4}–{:.4}) vs {:.4} (CI {:.4}–{:.4}) in {}; band {lo:.4}–{hi:.4}",
            status.word(),
            self.cell,
            self.row,
            self.phase,
            self.clock.name(),
            new.median,
            new.lo,
            new.hi,
            old.median,
            old.lo,
            old.hi,
            self.base_name,
        );
        if let Some(n) = noisy {
            let _ = write!(message, "; {n}");
        }
        GateVerdict {
            row: cell_schema::RowName::from(self.row),
            phase: self.phase.clone(),
            clock: self.clock,
            status,
            old: gate_ratio(old),
            new: gate_ratio(new),
            band: [lo, hi],
            message,
            against_imported_point: false,
        }
    }
}
