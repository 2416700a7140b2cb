//! The verdict of a run against committed history: three-way per row and phase (PASS / FAIL /
//! INCONCLUSIVE), failures that always trip (wrong answers, checksums, the tooth, missing
//! rows), and notices that never do (health, machine changes, contention, a binary or code
//! section of another size, another instruction count).
//!
//! Every threshold comes from the checked-in configuration ([`GateConfig`]), never from the
//! artifact being judged: a job that wrote a lenient floor into its own results is still
//! judged by the repository's floor.

mod baseline;
mod code;
mod failures;
mod imported;
mod notices;
mod rows;
mod same_job;

pub use same_job::{same_job_status, same_job_verdicts};

use cell_schema::store::{History, HistoryRun, SkippedFile};
use cell_schema::{
    CellResult, GateCell, GateFamily, GateKind, GateReport, GateStatus, GateSummary, SCHEMA_VERSION,
};

use crate::{GateConfig, recompute};
pub(crate) use baseline::{Baseline, baseline, is_measured};
use failures::{
    answer_failures, checksum_failures, expected_row_failures, subject_digests, subject_failures,
    tooth_failures,
};
use imported::{imported_notices, imported_units};
use notices::{
    baseline_notices, calibration_notices, contention_notices, dropped_row_notices,
    missing_job_notices, settled_against_notices, subject_notices,
};
pub use notices::{footprint_notices, instruction_notices};
use rows::{Unit, row_units};

/// A gate that could not run (exit 2).
#[derive(Debug, thiserror::Error)]
pub enum GateError {
    /// The pinned baseline is not in the history.
    #[error(
        "the pinned baseline `{0}` is not a run of the history: pick one of its run directories"
    )]
    NoBaseline(String),
    /// A run of the scripted test executor where a measurement is expected.
    #[error(
        "{}: its timings come from the scripted test executor, not from timed processes: it is no history to judge by or against; remove it",
        .0.display()
    )]
    Scripted(std::path::PathBuf),
    /// The run the gate would compare a cell against is a file the store left out.
    #[error(
        "{}: it is the baseline of cell {cell} (run {run}), and it cannot be used: {reason}; fix or remove the file, or pin another baseline with --baseline",
        path.display()
    )]
    SkippedBaseline {
        /// The results file.
        path: std::path::PathBuf,
        /// The cell it would be the baseline of.
        cell: String,
        /// Its run, `<date>-<run-id>`.
        run: String,
        /// Why the store left it out.
        reason: String,
    },
}

/// Judges `run` against a history the store read with some files left out: a left-out file
/// that would be a cell's baseline is an error ([`GateError::SkippedBaseline`]); any other
/// is a notice of the cell it belongs to (when the run has that cell). The baseline is the
/// pinned run when one is (`--baseline`, `BASELINE`), else the newest other run holding the
/// cell: a left-out file newer than every readable run of its cell would have been it (of
/// several, the newest is named). `history` may be the whole history or the part of it
/// [`needed_history`](crate::needed_history) read: the report is the same.
pub fn gate_history(
    run: &HistoryRun,
    history: &History,
    config: &GateConfig,
) -> Result<GateReport, GateError> {
    let others = |r: &cell_schema::store::RunDirName| r.id() != run.name.id();
    for s in history.skipped.iter().rev().filter(|s| others(&s.run)) {
        let Some(id) = run.cells.keys().find(|id| id.as_str() == s.cell) else {
            continue;
        };
        let is_baseline = match &config.baseline {
            Some(pinned) => &s.run.to_string() == pinned,
            None => !history
                .runs
                .iter()
                .any(|h| others(&h.name) && h.name > s.run && h.cells.contains_key(id)),
        };
        if is_baseline {
            return Err(skipped_baseline(s));
        }
    }
    let mut report = gate(run, &history.runs, config)?;
    for s in history.skipped.iter().filter(|s| others(&s.run)) {
        if let Some(c) = report.cells.iter_mut().find(|c| c.cell.as_str() == s.cell) {
            c.notices.push(s.notice());
        }
    }
    report.summary = summarize(&report.cells);
    Ok(report)
}

fn skipped_baseline(s: &SkippedFile) -> GateError {
    GateError::SkippedBaseline {
        path: s.path.clone(),
        cell: s.cell.clone(),
        run: s.run.to_string(),
        reason: s.reason.to_string(),
    }
}

/// Judges `run` against `history` (which may contain it; the same run is skipped). What the
/// run's record says is missing (expired or corrupt artifacts) counts against it.
pub fn gate(
    run: &HistoryRun,
    history: &[HistoryRun],
    config: &GateConfig,
) -> Result<GateReport, GateError> {
    if !config.allow_scripted
        && let Some(r) = std::iter::once(run).chain(history).find(|r| r.scripted())
    {
        return Err(GateError::Scripted(r.dir.clone()));
    }
    let pinned = match &config.baseline {
        Some(name) => Some(
            history
                .iter()
                .find(|h| &h.name.to_string() == name)
                .ok_or_else(|| GateError::NoBaseline(name.clone()))?,
        ),
        None => None,
    };
    let digests = subject_digests(run);
    let mut listed = Vec::new();
    let mut same = Vec::new();
    for (id, cell) in &run.cells {
        // Older runs of this cell, oldest first (only the pinned one when pinned).
        let names: Vec<String>;
        let older: Vec<(&str, &CellResult)> = {
            let sources: Vec<&HistoryRun> = match pinned {
                Some(p) => vec![p],
                None => history
                    .iter()
                    .filter(|h| h.name.id() != run.name.id())
                    .collect(),
            };
            names = sources.iter().map(|h| h.name.to_string()).collect();
            sources
                .iter()
                .zip(&names)
                .filter_map(|(h, n)| h.cells.get(id).map(|c| (n.as_str(), c)))
                .collect()
        };
        // The samples are the record: the run's figures are judged as its samples give them,
        // and a stated one that disagrees fails the run.
        let now = recompute::cell(cell, config);
        let cell = &now.value;
        let (mut g, units) = gate_one_cell(cell, &older, config, run.missing());
        g.failures.extend(
            recompute::summarize(&now.disagreements)
                .into_iter()
                .map(|d| format!("figures: a stated figure disagrees with its samples: {d}")),
        );
        for (tc, j) in &cell.jobs {
            g.failures.extend(
                recompute::collected_disagreements(&j.verdict)
                    .map(|r| format!("figures: job {tc}'s artifact, when collected: {r}")),
            );
        }
        for (job, r) in recompute::suites::collected(cell) {
            g.failures.push(format!(
                "figures: job {job}'s artifact, when collected: {r}"
            ));
        }
        g.notices.extend(now.notes);
        g.failures.extend(subject_failures(cell, &digests, config));
        g.notices.extend(subject_notices(cell));
        g.notices.extend(same_job::notices(cell));
        same.push(same_job::pending(cell));
        listed.push((g, units));
    }
    // The same-job verdicts are their own family: one run's false-alarm budget, split over
    // every (row, phase) timed beside a previous release.
    let same_units: usize = same.iter().map(Vec::len).sum();
    let same_level = crate::unit_level(config.settings.ci_level, same_units);
    for ((g, _), pending) in listed.iter_mut().zip(same) {
        g.same_job = pending
            .into_iter()
            .map(|p| p.judge(same_level, config.tolerance))
            .collect();
    }
    let (cells, family) = judge_family(listed, config);
    let summary = summarize(&cells);
    let exit = u8::from(
        summary.fail > 0
            || summary.failures > 0
            || summary.code_fail > 0
            || summary.same_job_fail > 0,
    );
    Ok(GateReport {
        schema_version: SCHEMA_VERSION,
        kind: GateKind::Gate,
        run: run.name.to_string(),
        tolerance: config.tolerance,
        cells,
        summary,
        exit,
        family,
        config_rev: None,
    })
}

/// Every pending unit of the run judged at one per-unit level: the run's false-alarm budget,
/// `1 − CI_LEVEL`, split over every unit the run judges (Bonferroni), so an A/A run fails
/// anywhere at most that often however its units depend on each other. A cell's workload
/// verdicts come first, then its suites'.
fn judge_family(
    listed: Vec<(GateCell, Vec<Unit>)>,
    config: &GateConfig,
) -> (Vec<GateCell>, Option<GateFamily>) {
    let units = listed
        .iter()
        .flat_map(|(_, us)| us)
        .filter(|u| matches!(u, Unit::Pending(p) if p.judged()))
        .count();
    let run_level = config.settings.ci_level;
    let level = crate::unit_level(run_level, units);
    let cells = listed
        .into_iter()
        .map(|(mut g, us)| {
            let mut verdicts: Vec<_> = us
                .into_iter()
                .map(|u| match u {
                    Unit::Done(v) => v,
                    Unit::Pending(p) => p.judge(level, config.tolerance),
                })
                .collect();
            verdicts.append(&mut g.verdicts);
            g.verdicts = verdicts;
            g
        })
        .collect();
    let family = (units > 0).then(|| GateFamily {
        units: u32::try_from(units).unwrap_or(u32::MAX),
        run_level,
        unit_level: (level * 1e6).round() / 1e6,
    });
    (cells, family)
}

/// One cell: the workload against its baseline ([`baseline()`]), its units still to be
/// judged, then the suites against theirs (their verdicts already in the cell).
fn gate_one_cell(
    cell: &CellResult,
    older: &[(&str, &CellResult)],
    config: &GateConfig,
    run_missing: &[String],
) -> (GateCell, Vec<Unit>) {
    let baseline = baseline(older);
    let suites = crate::suite::gate_suites_of(cell, older, config);
    let (mut g, units) = if cell.jobs.is_empty() {
        // A suite-only run: nothing of the workload to judge.
        let g = GateCell {
            cell: cell.cell.id.clone(),
            baseline: None,
            failures: Vec::new(),
            notices: missing_job_notices(cell),
            verdicts: Vec::new(),
            code: Vec::new(),
            same_job: Vec::new(),
        };
        (g, Vec::new())
    } else {
        gate_cell(cell, baseline, config, run_missing)
    };
    g.failures.extend(suites.failures);
    g.notices.extend(suites.notices);
    g.verdicts.extend(suites.verdicts);
    (g, units)
}

fn summarize(cells: &[GateCell]) -> GateSummary {
    let mut summary = GateSummary {
        pass: 0,
        fail: 0,
        inconclusive: 0,
        failures: 0,
        notices: 0,
        code_pass: 0,
        code_fail: 0,
        code_inconclusive: 0,
        same_job_pass: 0,
        same_job_fail: 0,
        same_job_inconclusive: 0,
    };
    for c in cells {
        for v in &c.same_job {
            match v.status {
                GateStatus::Fail => summary.same_job_fail += 1,
                GateStatus::Inconclusive => summary.same_job_inconclusive += 1,
                GateStatus::Pass => summary.same_job_pass += 1,
            }
        }
        for v in &c.code {
            match v.status {
                GateStatus::Fail => summary.code_fail += 1,
                GateStatus::Inconclusive => summary.code_inconclusive += 1,
                GateStatus::Pass => summary.code_pass += 1,
            }
        }
        for v in &c.verdicts {
            match v.status {
                GateStatus::Pass => summary.pass += 1,
                GateStatus::Fail => summary.fail += 1,
                GateStatus::Inconclusive => summary.inconclusive += 1,
            }
        }
        summary.failures += u32::try_from(c.failures.len()).unwrap_or(u32::MAX);
        summary.notices += u32::try_from(c.notices.len()).unwrap_or(u32::MAX);
    }
    summary
}

/// The workload of one cell: failures, notices, and a unit per row and phase.
fn gate_cell(
    cell: &CellResult,
    baseline: Baseline<'_>,
    config: &GateConfig,
    run_missing: &[String],
) -> (GateCell, Vec<Unit>) {
    let mut failures = answer_failures(cell);
    failures.extend(checksum_failures(cell, config, run_missing));
    failures.extend(tooth_failures(cell, config));
    failures.extend(expected_row_failures(cell, config));
    let mut notices = missing_job_notices(cell);
    notices.extend(contention_notices(cell, config));
    notices.extend(calibration_notices(cell, config));
    let mut code = Vec::new();
    let (base_name, units) = match baseline {
        Baseline::None => {
            notices.push("first run of this cell: baseline recorded".into());
            let g = GateCell {
                cell: cell.cell.id.clone(),
                baseline: None,
                failures,
                notices,
                verdicts: Vec::new(),
                code: Vec::new(),
                same_job: Vec::new(),
            };
            return (g, Vec::new());
        }
        Baseline::Measured(base_name, stated) => {
            // The baseline too is judged by its samples; a stated figure of it that disagrees
            // is named, never believed.
            // Its workload only: each http baseline is recomputed where the suite gate finds it.
            let recomputed = recompute::workload_cell(stated, config);
            notices.extend(
                recompute::summarize(&recomputed.disagreements)
                    .into_iter()
                    .map(|d| {
                        format!("baseline {base_name}: a stated figure disagrees with its samples (judged on the samples): {d}")
                    }),
            );
            notices.extend(
                recomputed
                    .notes
                    .iter()
                    .map(|n| format!("baseline {base_name}: {n}")),
            );
            let base = &recomputed.value;
            notices.extend(settled_against_notices(cell, base_name));
            notices.extend(baseline_notices(cell, base_name, base, config));
            notices.extend(footprint_notices(cell, base));
            notices.extend(instruction_notices(cell, base_name, base));
            let c = code::code_verdicts(
                cell,
                base_name,
                base,
                config.settings.exact.cycles_tolerance,
            );
            notices.extend(c.notices);
            code = c.verdicts;
            let units = row_units(cell, base_name, base, config, &mut notices);
            notices.extend(dropped_row_notices(cell, base));
            (base_name, units)
        }
        Baseline::Imported(base_name, imp) => {
            notices.extend(imported_notices(cell, base_name, imp));
            (
                base_name,
                imported_units(cell, base_name, imp, config.settings.ci_level),
            )
        }
    };
    let g = GateCell {
        cell: cell.cell.id.clone(),
        baseline: Some(base_name.to_owned()),
        failures,
        notices,
        verdicts: Vec::new(),
        code,
        same_job: Vec::new(),
    };
    (g, units)
}
