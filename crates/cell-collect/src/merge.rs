//! Merging a run's job results into one cell result per cell id.
//!
//! Each row keeps the ratio measured in its own job; each job's reference medians, machine
//! and versions are listed under that job, never averaged; the newest attempt of a
//! (cell, toolchain) wins.

use std::collections::BTreeMap;
use std::path::Path;

use cell_schema::{
    CellCost, CellId, CellKind, CellResult, CellRow, Facts, JobResult, JobSummary, MissingJob,
    Role, RunInfo, SCHEMA_VERSION, Status, ToolchainName, Verdict, round_time,
};

/// One job's result with the attempt that produced it.
#[derive(Clone, Debug)]
pub struct JobInput {
    /// The job's `results.json`.
    pub result: JobResult,
    /// Its attempt (1 for local runs).
    pub attempt: u32,
}

/// A merged cell with the facts of each of its jobs.
#[derive(Clone, Debug)]
pub struct MergedCell {
    /// The cell's `results.json`.
    pub result: CellResult,
    /// `facts/<toolchain>.json`.
    pub facts: BTreeMap<ToolchainName, Facts>,
}

/// Merges every job of a run. `missing` lists jobs of the plan with no result, per cell id.
pub fn merge_run(
    run: &RunInfo,
    jobs: Vec<JobInput>,
    missing: &BTreeMap<CellId, Vec<MissingJob>>,
) -> Vec<MergedCell> {
    // Newest attempt per (cell, toolchain).
    let mut newest: BTreeMap<(CellId, ToolchainName), JobInput> = BTreeMap::new();
    for j in jobs {
        let key = (j.result.cell.id.clone(), j.result.toolchain.clone());
        match newest.get(&key) {
            Some(prev) if prev.attempt >= j.attempt => {}
            _ => {
                newest.insert(key, j);
            }
        }
    }
    let mut by_cell: BTreeMap<CellId, Vec<JobInput>> = BTreeMap::new();
    for ((cell, _), j) in newest {
        by_cell.entry(cell).or_default().push(j);
    }
    for cell in missing.keys() {
        by_cell.entry(cell.clone()).or_default();
    }
    by_cell
        .into_iter()
        .filter_map(|(cell, jobs)| {
            let m = missing.get(&cell).cloned().unwrap_or_default();
            merge_cell(run, jobs, m)
        })
        .collect()
}

fn merge_cell(run: &RunInfo, jobs: Vec<JobInput>, missing: Vec<MissingJob>) -> Option<MergedCell> {
    let cell = jobs.first()?.result.cell.clone();
    let mut rows = BTreeMap::new();
    let mut job_summaries = BTreeMap::new();
    let mut facts = BTreeMap::new();
    let mut skipped = Vec::new();
    let mut failures = Vec::new();
    let mut reasons = Vec::new();
    let mut status = Status::Ok;
    let mut jobs_s = BTreeMap::new();
    for JobInput { result: j, attempt } in jobs {
        let tc = j.toolchain.clone();
        for (name, row) in &j.rows {
            // A row belongs to the job of its own toolchain; the reference also appears as a
            // row there (at ratio 1), and as `reference` under every job.
            let own = row.toolchain == tc && matches!(row.role, Role::Row | Role::Reference);
            if own {
                rows.insert(
                    name.clone(),
                    CellRow {
                        job: tc.clone(),
                        row: row.clone(),
                    },
                );
            }
        }
        let reference = j.rows.get(&j.protocol.reference).cloned();
        let control = j.rows.get(&j.protocol.control).cloned();
        let Some(reference) = reference else { continue };
        status = status.max(j.verdict.status);
        for r in &j.verdict.reasons {
            reasons.push(format!("{tc}: {r}"));
            if j.verdict.status == Status::Failed {
                failures.push(format!("{tc}: {r}"));
            }
        }
        skipped.extend(j.skipped.iter().cloned());
        jobs_s.insert(tc.clone(), j.cost.total_s);
        facts.insert(tc.clone(), j.facts());
        job_summaries.insert(
            tc,
            JobSummary {
                attempt,
                machine: j.machine,
                pins: j.pins,
                versions: j.versions,
                subject: j.subject,
                protocol: j.protocol,
                reference,
                control,
                tooth: j.tooth,
                contention: j.contention,
                verdict: j.verdict,
                cost: j.cost,
            },
        );
    }
    let total_s = round_time(jobs_s.values().sum());
    let mut run = run.clone();
    run.partial |= !missing.is_empty() && run.source != "local";
    Some(MergedCell {
        result: CellResult {
            schema_version: SCHEMA_VERSION,
            kind: CellKind::Cell,
            run,
            cell,
            jobs: job_summaries,
            rows,
            skipped,
            missing,
            failures,
            verdict: Verdict { status, reasons },
            cost: CellCost { jobs_s, total_s },
        },
        facts,
    })
}

/// Writes `<dir>/<cell-id>/{results.json,RESULTS.md,facts/<toolchain>.json}`, each atomically.
pub fn write_run_dir(dir: &Path, cells: &[MergedCell]) -> std::io::Result<()> {
    for c in cells {
        let cdir = dir.join(c.result.cell.id.as_str());
        cell_schema::write_atomic(
            &cdir.join("results.json"),
            cell_schema::to_json(&c.result).as_bytes(),
        )?;
        cell_schema::write_atomic(
            &cdir.join("RESULTS.md"),
            cell_report::cell_markdown(&c.result).as_bytes(),
        )?;
        for (tc, f) in &c.facts {
            cell_schema::write_atomic(
                &cdir.join("facts").join(format!("{tc}.json")),
                cell_schema::to_json(f).as_bytes(),
            )?;
        }
    }
    Ok(())
}
