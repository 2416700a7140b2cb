//! A run's CSV records: every row's footprint, the cells with suites, every timed process.

use cell_schema::store::HistoryRun;
use cell_schema::{CellId, CellResult, Clock, Role, RowName, RowResult, Subject, ToolchainName};

use super::{FootprintRecord, Sample};
use crate::footprint::of_cell;
use crate::report::SuiteCell;

/// Every row of the cells `cells` of a run with its footprint, and its toolchain's installed
/// size.
pub(super) fn run_footprint(
    run: &HistoryRun,
    cells: &[(&CellId, &CellResult)],
) -> Vec<FootprintRecord> {
    let mut out = Vec::new();
    for &(cell_id, cell) in cells {
        let (rows, sizes) = of_cell(cell);
        for row in rows {
            out.push(FootprintRecord {
                run: run.name.to_string(),
                date: run.name.date().to_owned(),
                cell: cell_id.clone(),
                installed: sizes
                    .iter()
                    .find(|s| s.toolchain == row.toolchain)
                    .and_then(|s| s.installed.clone()),
                row,
            });
        }
    }
    out
}

/// Those of the cells `cells` of a run that have suites, for the suites' CSV.
pub(super) fn suite_cells(run: &HistoryRun, cells: &[(&CellId, &CellResult)]) -> Vec<SuiteCell> {
    cells
        .iter()
        .filter(|(_, c)| !c.http.is_empty() || !c.soak.is_empty())
        .map(|&(id, c)| SuiteCell {
            run: run.name.to_string(),
            info: c.run.clone(),
            cell: id.clone(),
            subject_version: c
                .jobs
                .values()
                .find_map(|j| j.subject.as_ref())
                .map(Subject::version_or_tag),
            http: c.http.iter().map(|(n, h)| (n.clone(), h.clone())).collect(),
            soak: c.soak.iter().map(|(n, s)| (n.clone(), s.clone())).collect(),
        })
        .collect()
}

/// Every timed process of the cells `cells` of a run: per cell, per job its reference and
/// control, then the rows that job measured (the reference is listed once, under
/// `reference`).
pub(super) fn run_samples(run: &HistoryRun, cells: &[(&CellId, &CellResult)]) -> Vec<Sample> {
    let mut out = Vec::new();
    for &(cell_id, cell) in cells {
        let mut push = |job: &ToolchainName, name: &RowName, role: Role, row: &RowResult| {
            for (phase, pr) in &row.phases {
                for r in &pr.runs {
                    out.push(Sample {
                        run: run.name.to_string(),
                        date: run.name.date().to_owned(),
                        cell: cell_id.clone(),
                        job: job.clone(),
                        row: name.clone(),
                        role,
                        phase: phase.clone(),
                        round: r.round,
                        seq: r.seq,
                        warmup: r.warmup,
                        figures: Clock::ALL
                            .into_iter()
                            .filter_map(|m| Some((m, m.of_run(r)?)))
                            .collect(),
                        maxrss_kib: r.maxrss_kib,
                        ok: r.ok,
                    });
                }
            }
        };
        for (job_name, job) in &cell.jobs {
            push(
                job_name,
                &job.protocol.reference,
                Role::Reference,
                &job.reference,
            );
            if let Some(c) = &job.control {
                push(job_name, &job.protocol.control, Role::Control, c);
            }
            for (name, cr) in &cell.rows {
                if cr.job == *job_name && cr.row.role != Role::Reference {
                    push(job_name, name, cr.row.role, &cr.row);
                }
            }
        }
        // Rows whose job left no summary (never in a merge, but a hand-edited file may).
        for (name, cr) in &cell.rows {
            if !cell.jobs.contains_key(&cr.job) && cr.row.role != Role::Reference {
                push(&cr.job, name, cr.row.role, &cr.row);
            }
        }
    }
    out
}
