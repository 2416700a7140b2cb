//! Merging a run's job results into one cell result per cell id.
//!
//! Each row keeps the ratio measured in its own job; each job's reference medians, machine
//! and versions are listed under that job, never averaged; the newest attempt of a
//! (cell, toolchain) wins.

use std::collections::BTreeMap;
use std::path::Path;

use cell_schema::{
    CellCost, CellHttpServer, CellId, CellInfo, CellKind, CellResult, CellRow, CellSoakServer,
    Facts, GithubJob, HttpJobResult, JobResult, JobSummary, MissingJob, Role, RunInfo,
    SCHEMA_VERSION, SoakJobResult, Status, ToolchainName, Verdict, round_time,
};

/// A job's `results.json` of any suite.
#[derive(Clone, Debug)]
pub enum AnyJob {
    /// The workload suite (one toolchain).
    Workload(Box<JobResult>),
    /// The http suite.
    Http(Box<HttpJobResult>),
    /// The soak suite.
    Soak(Box<SoakJobResult>),
}

impl AnyJob {
    /// The cell it ran in.
    pub fn cell(&self) -> &CellInfo {
        match self {
            Self::Workload(j) => &j.cell,
            Self::Http(j) => &j.cell,
            Self::Soak(j) => &j.cell,
        }
    }

    /// Its name within the cell: the toolchain of a workload job, `http-<server>` or
    /// `soak-<server>` of a suite job (the last word of the workflow job's name).
    pub fn name(&self) -> ToolchainName {
        match self {
            Self::Workload(j) => j.toolchain.clone(),
            Self::Http(j) => ToolchainName::from(j.job.as_str()),
            Self::Soak(j) => ToolchainName::from(j.job.as_str()),
        }
    }

    /// When it started.
    pub fn started_at(&self) -> &str {
        match self {
            Self::Workload(j) => &j.started_at,
            Self::Http(j) => &j.started_at,
            Self::Soak(j) => &j.started_at,
        }
    }

    /// The GitHub run it belonged to.
    pub fn github(&self) -> Option<&GithubJob> {
        match self {
            Self::Workload(j) => j.github.as_ref(),
            Self::Http(j) => j.github.as_ref(),
            Self::Soak(j) => j.github.as_ref(),
        }
    }

    /// Its outcome.
    pub fn verdict(&self) -> &Verdict {
        match self {
            Self::Workload(j) => &j.verdict,
            Self::Http(j) => &j.verdict,
            Self::Soak(j) => &j.verdict,
        }
    }
}

impl From<JobResult> for AnyJob {
    fn from(j: JobResult) -> Self {
        Self::Workload(Box::new(j))
    }
}

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
            merge_cell(run, jobs, m)
        })
        .collect()
}

fn merge_cell(run: &RunInfo, jobs: Vec<JobInput>, missing: Vec<MissingJob>) -> Option<MergedCell> {
    let cell = jobs.first()?.result.cell().clone();
    let mut rows = BTreeMap::new();
    let mut job_summaries = BTreeMap::new();
    let mut facts = BTreeMap::new();
    let mut skipped = Vec::new();
    let mut failures = Vec::new();
    let mut reasons = Vec::new();
    let mut status = Status::Ok;
    let mut jobs_s = BTreeMap::new();
    let mut http = BTreeMap::new();
    let mut soak = BTreeMap::new();
    for JobInput { result, attempt } in jobs {
        let name = result.name();
        status = status.max(result.verdict().status);
        for r in &result.verdict().reasons {
            reasons.push(format!("{name}: {r}"));
            if result.verdict().status == Status::Failed {
                failures.push(format!("{name}: {r}"));
            }
        }
        let j = match result {
            AnyJob::Workload(j) => *j,
            AnyJob::Http(j) => {
                jobs_s.insert(name, j.cost.total_s);
                for (server, result) in j.servers {
                    http.insert(
                        server,
                        CellHttpServer {
                            job: j.job.clone(),
                            machine: j.machine.clone(),
                            settings: j.settings.clone(),
                            pins: j.pins.clone(),
                            versions: j.versions.clone(),
                            result,
                        },
                    );
                }
                continue;
            }
            AnyJob::Soak(j) => {
                jobs_s.insert(name, j.cost.total_s);
                for (server, result) in j.servers {
                    soak.insert(
                        server,
                        CellSoakServer {
                            job: j.job.clone(),
                            machine: j.machine.clone(),
                            settings: j.settings.clone(),
                            pins: j.pins.clone(),
                            versions: j.versions.clone(),
                            result,
                        },
                    );
                }
                continue;
            }
        };
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
            http,
            soak,
        },
        facts,
    })
}

/// Writes `<dir>/<cell-id>/{results.json,RESULTS.md,facts/<toolchain>.json}` and the soak
/// charts (`soak/<server>.svg`, `soak/overlay.svg`), each atomically.
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
        for (path, svg) in cell_report::suite::soak_chart_files(&c.result) {
            cell_schema::write_atomic(&cdir.join(path), svg.as_bytes())?;
        }
        for (tc, f) in &c.facts {
            cell_schema::write_atomic(
                &cdir.join("facts").join(format!("{tc}.json")),
                cell_schema::to_json(f).as_bytes(),
            )?;
        }
    }
    Ok(())
}
