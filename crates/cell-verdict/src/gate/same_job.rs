//! The release under test against the previous release, timed in the same job
//! (docs/protocol.md, "The previous release in the same job"). Each `<row>.prev` row was built
//! by the release the baseline run recorded and timed in the same rounds as `<row>`, so the
//! per-round ratio `row / row.prev` cancels the machine and the hour; its median interval is
//! judged against `TOLERANCE` around 1.0, beside the history verdict, never instead of it.

use cell_schema::{
    CellResult, GateStatus, JobSummary, Phase, PhaseResult, RatioCi, Role, RowName, SameJobVerdict,
    Subject, escape,
};

use crate::figures;
use crate::rules::three_way;

/// One (row, phase) of one job still to be judged: its per-round ratios new / old.
pub(crate) struct Pending {
    toolchain: cell_schema::ToolchainName,
    row: RowName,
    phase: Phase,
    clock: cell_schema::Clock,
    old_version: String,
    new_version: String,
    ratios: Vec<f64>,
    /// Why no call is made whatever the ratios say (a wrong answer on either side).
    blocked: Option<String>,
}

/// The units of every job of `cell` that timed a previous release: one per `<row>.prev` row
/// and phase the new row has, with the ratios of their paired rounds.
pub(crate) fn pending(cell: &CellResult) -> Vec<Pending> {
    let mut out = Vec::new();
    for (tc, job) in &cell.jobs {
        let Some(old) = job.previous.as_ref().and_then(|p| p.installed.as_ref()) else {
            continue;
        };
        let new_version = job
            .subject
            .as_ref()
            .map_or_else(|| tc.to_string(), Subject::version_or_tag);
        for (prev_name, prev) in &job.previous_rows {
            let Some(row) = Role::previous_of(prev_name) else {
                continue;
            };
            let Some(new) = cell.rows.get(&row).filter(|r| r.job == *tc) else {
                continue;
            };
            for (phase, np) in &new.row.phases {
                let op = prev.phases.get(phase);
                let ratios = op
                    .map(|op| ratios(job, np, op, new.row.verdict_clock, phase))
                    .unwrap_or_default();
                let blocked = match op {
                    _ if !np.answer_ok => Some(format!("{row} printed a wrong answer")),
                    Some(op) if !op.answer_ok => {
                        Some(format!("{prev_name} printed a wrong answer"))
                    }
                    _ => None,
                };
                out.push(Pending {
                    toolchain: tc.clone(),
                    row: row.clone(),
                    phase: phase.clone(),
                    clock: new.row.verdict_clock,
                    old_version: old.version_or_tag(),
                    new_version: new_version.clone(),
                    ratios,
                    blocked,
                });
            }
        }
    }
    out
}

/// Per-round `new/ref ÷ old/ref` in the rounds both ran: `new / old`, the reference's run of
/// the round cancelled.
fn ratios(
    job: &JobSummary,
    new: &PhaseResult,
    old: &PhaseResult,
    clock: cell_schema::Clock,
    phase: &Phase,
) -> Vec<f64> {
    let Some(reference) = job.reference.phases.get(phase) else {
        return Vec::new();
    };
    // A run of 0 µs is a valid record and would make a ratio of 0 or infinity: no evidence.
    figures::ratio_of_ratios(
        &new.runs,
        Some(&old.runs),
        &reference.runs,
        clock,
        job.protocol.mode,
    )
    .into_iter()
    .filter(|r| r.is_finite() && *r > 0.0)
    .collect()
}

/// The rule: FAIL when the whole interval lies above `1 + tolerance` (the new release's
/// output is slower), PASS when it lies within the band or wholly below it (faster, which
/// the message says), INCONCLUSIVE otherwise. Returns the status and whether it is faster.
pub fn same_job_status(ci: &RatioCi, tolerance: f64) -> (GateStatus, bool) {
    match three_way(1.0, ci.lo, ci.hi, tolerance) {
        // Wholly below the band: the new release's output is faster, which passes.
        GateStatus::Fail if ci.hi < 1.0 => (GateStatus::Pass, true),
        status => (status, false),
    }
}

impl Pending {
    /// The verdict at the per-unit `level` of the run's same-job family.
    pub(crate) fn judge(self, level: f64, tolerance: f64) -> SameJobVerdict {
        let ci = figures::ratio_ci(&self.ratios, level);
        // Too few rounds for the level asked: no pair of order statistics covers that often.
        let short = ci.as_ref().is_some_and(|c| c.level + 1e-9 < level);
        let (status, faster) = match &ci {
            Some(c) if self.blocked.is_none() && !short => same_job_status(c, tolerance),
            _ => (GateStatus::Inconclusive, false),
        };
        let resolution = ci
            .as_ref()
            .map(|c| ((c.hi - c.lo) / 2.0 * 1e4).round() / 1e4);
        let head = format!(
            "{} {} against {} in the same job: {} {}",
            self.toolchain,
            escape::one_line(&self.new_version),
            escape::one_line(&self.old_version),
            self.row,
            self.phase
        );
        let message = match &ci {
            None => format!("{head}: no paired rounds, INCONCLUSIVE"),
            Some(c) => {
                let what = match (status, faster) {
                    (GateStatus::Pass, true) => {
                        format!("PASS, faster by {:.1}%", (1.0 - c.median) * 100.0)
                    }
                    (GateStatus::Pass, false) => {
                        format!("PASS, no change beyond ±{:.1}%", tolerance * 100.0)
                    }
                    (GateStatus::Fail, _) => format!(
                        "FAIL, {:.1}% slower, beyond TOLERANCE ±{:.1}%",
                        (c.median - 1.0) * 100.0,
                        tolerance * 100.0
                    ),
                    (GateStatus::Inconclusive, _) => match (&self.blocked, short) {
                        (Some(why), _) => format!("INCONCLUSIVE, not judged: {why}"),
                        (None, true) => format!(
                            "INCONCLUSIVE, {} paired rounds cannot reach the {:.2}% interval this run's same-job verdicts need",
                            c.n,
                            level * 100.0
                        ),
                        (None, false) => format!(
                            "INCONCLUSIVE, this job resolves ±{:.1}%, wider than TOLERANCE ±{:.1}% allows here",
                            (c.hi - c.lo) / 2.0 * 100.0,
                            tolerance * 100.0
                        ),
                    },
                };
                format!(
                    "{head} {:.2} (CI {:.2}–{:.2}, {} rounds) {what}",
                    c.median, c.lo, c.hi, c.n
                )
            }
        };
        SameJobVerdict {
            row: self.row,
            phase: self.phase,
            clock: self.clock,
            old_version: self.old_version,
            new_version: self.new_version,
            status,
            ratio: ci,
            resolution,
            message,
        }
    }
}

/// The same-job verdicts of one cell on its own, at `run_level` split over its units: what
/// a cell's RESULTS.md shows (the gate splits the level over every cell of the run).
pub fn same_job_verdicts(cell: &CellResult, run_level: f64, tolerance: f64) -> Vec<SameJobVerdict> {
    let units = pending(cell);
    let level = crate::unit_level(run_level, units.len());
    units
        .into_iter()
        .map(|p| p.judge(level, tolerance))
        .collect()
}

/// Notices of a cell's jobs about the previous release: skipped, and why (the history
/// verdict stands alone), or timed.
pub(crate) fn notices(cell: &CellResult) -> Vec<String> {
    let mut out = Vec::new();
    for (tc, job) in &cell.jobs {
        let Some(p) = &job.previous else { continue };
        let old = escape::one_line(&p.recorded.version_or_tag());
        match &p.skipped {
            Some(why) => out.push(format!(
                "job {tc}: the previous release {old} (baseline {}) was not timed in the same job: {}; the history verdict stands alone",
                escape::one_line(&p.baseline_run),
                escape::one_line(why)
            )),
            None if job.previous_rows.is_empty() => out.push(format!(
                "job {tc}: the previous release {old} was installed, but none of its rows was built or timed"
            )),
            None => {}
        }
        for (row, why) in &p.not_built {
            out.push(format!(
                "job {tc}: {row} was not built by the previous release {old}: {}",
                escape::one_line(why)
            ));
        }
    }
    out
}
