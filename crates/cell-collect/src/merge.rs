//! Merging a run's job results into one cell result per cell id.
//!
//! Each row keeps the ratio measured in its own job; each job's reference medians, machine
//! and versions are listed under that job, never averaged; the newest attempt of a
//! (cell, toolchain) wins.

use std::collections::BTreeMap;

use cell_schema::{
    AnyJob, CellCost, CellId, CellKind, CellResult, CellRow, CellSuiteServer, Facts, JobSummary,
    MissingJob, Role, RunInfo, SCHEMA_VERSION, Status, Suite, SuiteJob, ToolchainName, Verdict,
    round_time,
};

/// One job's result with the attempt that produced it.
#[derive(Clone, Debug)]
pub struct JobInput {
    /// The job's `results.json`.
    pub result: AnyJob,
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
        let key = (j.result.cell().id.clone(), j.result.name());
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
            merge_cell(run, &cell, jobs, m)
        })
        .collect()
}

/// What a cell's merge gathers, job by job.
#[derive(Default)]
struct Gathered {
    rows: BTreeMap<cell_schema::RowName, CellRow>,
    jobs: BTreeMap<ToolchainName, JobSummary>,
    facts: BTreeMap<ToolchainName, Facts>,
    skipped: Vec<cell_schema::Skipped>,
    failures: Vec<String>,
    reasons: Vec<String>,
    status: Option<Status>,
    jobs_s: BTreeMap<ToolchainName, f64>,
    http: BTreeMap<cell_schema::ServerName, cell_schema::CellHttpServer>,
    soak: BTreeMap<cell_schema::ServerName, cell_schema::CellSoakServer>,
}

/// A cell that left no job result at all is still written, so its RESULTS.md says what
/// happened to each job instead of the cell silently vanishing from the run.
fn nothing_left(missing: &[MissingJob]) -> (Status, Vec<String>) {
    let reasons: Vec<String> = missing
        .iter()
        .map(|m| format!("{}: no result ({})", m.toolchain, m.conclusion))
        .collect();
    let failed = missing
        .iter()
        .any(|m| crate::collect::failed_conclusion(&m.conclusion));
    (
        if failed {
            Status::Failed
        } else {
            Status::Noisy
        },
        reasons,
    )
}

fn merge_cell(
    run: &RunInfo,
    id: &CellId,
    jobs: Vec<JobInput>,
    missing: Vec<MissingJob>,
) -> Option<MergedCell> {
    let cell = match jobs.first() {
        Some(j) => j.result.cell().clone(),
        None => cell_schema::CellInfo::of_id(id)?,
    };
    let mut g = Gathered::default();
    if jobs.is_empty() {
        let (status, reasons) = nothing_left(&missing);
        g.status = Some(status);
        if status == Status::Failed {
            g.failures.clone_from(&reasons);
        }
        g.reasons = reasons;
    }
    for JobInput { result, attempt } in jobs {
        let name = result.name();
        let verdict = result.verdict();
        g.status = Some(g.status.unwrap_or(Status::Ok).max(verdict.status));
        for r in &verdict.reasons {
            g.reasons.push(format!("{name}: {r}"));
            if verdict.status == Status::Failed {
                g.failures.push(format!("{name}: {r}"));
            }
        }
        match result {
            AnyJob::Workload(j) => merge_workload(&mut g, *j, attempt),
            AnyJob::Http(j) => {
                g.jobs_s.insert(name, j.cost.total_s);
                g.http.extend(suite_servers(*j));
            }
            AnyJob::Soak(j) => {
                g.jobs_s.insert(name, j.cost.total_s);
                g.soak.extend(suite_servers(*j));
            }
        }
    }
    let total_s = round_time(g.jobs_s.values().fold(0.0, |a, b| a + b));
    let mut run = run.clone();
    run.partial |= !missing.is_empty() && run.source != "local";
    Some(MergedCell {
        result: CellResult {
            schema_version: SCHEMA_VERSION,
            kind: CellKind::Cell,
            run,
            cell,
            jobs: g.jobs,
            rows: g.rows,
            skipped: g.skipped,
            missing,
            failures: g.failures,
            verdict: Verdict::new(g.status.unwrap_or(Status::Ok), g.reasons),
            cost: Some(CellCost {
                jobs_s: g.jobs_s,
                total_s,
            }),
            http: g.http,
            soak: g.soak,
            imported: None,
        },
        facts: g.facts,
    })
}

/// A suite job's servers, each with the job, machine, settings, pins and versions that
/// measured it.
fn suite_servers<S: Suite>(
    j: SuiteJob<S>,
) -> impl Iterator<Item = (cell_schema::ServerName, CellSuiteServer<S>)> {
    let SuiteJob {
        job,
        machine,
        settings,
        pins,
        versions,
        servers,
        ..
    } = j;
    servers.into_iter().map(move |(server, result)| {
        (
            server,
            CellSuiteServer {
                job: job.clone(),
                machine: machine.clone(),
                settings: settings.clone(),
                pins: pins.clone(),
                versions: versions.clone(),
                result,
            },
        )
    })
}

/// A workload job: its own rows, and its reference, control, machine and versions under it.
fn merge_workload(g: &mut Gathered, j: cell_schema::JobResult, attempt: u32) {
    let tc = j.toolchain.clone();
    for (name, row) in &j.rows {
        // A row belongs to the job of its own toolchain; the reference also appears as a
        // row there (at ratio 1), and as `reference` under every job.
        let own = row.toolchain == tc && matches!(row.role, Role::Row | Role::Reference);
        if own {
            g.rows.insert(
                name.clone(),
                CellRow {
                    job: tc.clone(),
                    row: row.clone(),
                },
            );
        }
    }
    let Some(reference) = j.rows.get(&j.protocol.reference).cloned() else {
        return;
    };
    let control = j.rows.get(&j.protocol.control).cloned();
    let tooth_rows = j
        .rows
        .iter()
        .filter(|(_, r)| r.role == Role::Tooth)
        .map(|(n, r)| (n.clone(), r.clone()))
        .collect();
    let previous_rows = j
        .rows
        .iter()
        .filter(|(_, r)| r.role == Role::Previous)
        .map(|(n, r)| (n.clone(), r.clone()))
        .collect();
    g.skipped.extend(j.skipped.iter().cloned());
    g.jobs_s.insert(tc.clone(), j.cost.total_s);
    g.facts.insert(tc.clone(), j.facts());
    g.jobs.insert(
        tc,
        JobSummary {
            attempt,
            machine: j.machine,
            pins: j.pins,
            versions: j.versions,
            subject: j.subject,
            installed: j.installed,
            protocol: j.protocol,
            reference,
            control,
            tooth_rows,
            previous_rows,
            previous: j.previous,
            tooth: j.tooth,
            contention: j.contention,
            verdict: j.verdict,
            cost: j.cost,
            instructions: j.instructions,
        },
    );
}
