//! The newest-run sections of a cell: its verdict, its jobs and their machines, its suites,
//! its footprint.

use cell_schema::store::HistoryRun;
use cell_schema::{CellResult, Clock, JobSummary};

use super::{JobReport, MachineReport, NewestRun, ReferenceMedian, SoakReport, version_line};
use crate::footprint::of_cell;

pub(super) fn newest_report(
    run: &HistoryRun,
    cell: &CellResult,
    seen: &[(&HistoryRun, &CellResult)],
) -> NewestRun {
    // Each suite from the newest run that ran it: push runs have no soak, a local run one suite.
    let http_from = seen.iter().rev().find(|(_, c)| !c.http.is_empty());
    let soak_from = seen.iter().rev().find(|(_, c)| !c.soak.is_empty());
    let workload_from = seen.iter().rev().find(|(_, c)| !c.jobs.is_empty());
    let (footprint, installed) = workload_from.map_or_else(Default::default, |(_, c)| of_cell(c));
    NewestRun {
        run: run.name.to_string(),
        date: run.name.date().to_owned(),
        run_id: run.name.id().to_owned(),
        status: cell.verdict.status,
        reasons: cell.verdict.reasons.clone(),
        jobs: cell
            .jobs
            .iter()
            .map(|(name, j)| (name.clone(), job_report(j)))
            .collect(),
        skipped: cell
            .skipped
            .iter()
            .map(|s| format!("{} ({}): {}", s.row, s.toolchain, s.message))
            .collect(),
        missing: cell.missing.clone(),
        imported: cell.is_imported(),
        http: http_from.map(|(_, c)| c.http.clone()).unwrap_or_default(),
        http_run: http_from.map(|(r, _)| r.name.to_string()),
        soak_run: soak_from.map(|(r, _)| r.name.to_string()),
        footprint,
        installed,
        footprint_run: workload_from.map(|(r, _)| r.name.to_string()),
        same_job: crate::same_job::SameJob::of_cell(cell),
        soak: soak_from
            .map(|(_, c)| &c.soak)
            .into_iter()
            .flatten()
            .map(|(name, s)| {
                let r = &s.result;
                let report = SoakReport {
                    job: s.job.clone(),
                    settings: s.settings.clone(),
                    toolchain: r.toolchain.clone(),
                    verdict: r.verdict,
                    fit: r.fit.clone(),
                    fit_minima: r.fit_minima.clone(),
                    peak_rss_kib: r.peak_rss_kib,
                    cpu_ms_per_1k: r.cpu_ms_per_1k,
                    load: r.load.clone(),
                    samples: r.samples.len(),
                    error: r.error.clone(),
                    server: s.clone(),
                };
                (name.clone(), report)
            })
            .collect(),
    }
}

fn job_report(j: &JobSummary) -> JobReport {
    let m = &j.machine;
    JobReport {
        status: j.verdict.status,
        reasons: j.verdict.reasons.clone(),
        inconclusive: j.verdict.inconclusive.clone(),
        resolution: j.verdict.resolution.clone(),
        machine: MachineReport {
            cpu_model: m.cpu_model.clone(),
            nproc: m.nproc,
            kernel: m.kernel.clone(),
            os_release: m.os_release.clone(),
            runner_image: m
                .runner_image
                .as_ref()
                .map(|i| format!("{} {}", i.os, i.version)),
        },
        versions: j
            .versions
            .iter()
            .map(|(t, v)| (t.clone(), version_line(v).to_owned()))
            .collect(),
        reference: j
            .reference
            .phases
            .iter()
            .filter_map(|(p, pr)| {
                let s = pr.stats.as_ref()?;
                let median_s = s.on(j.reference.verdict_clock)?.median;
                Some((
                    p.clone(),
                    ReferenceMedian {
                        clock: j.reference.verdict_clock,
                        median_s,
                        cpu_s: s.on(Clock::Cpu)?.median,
                        wall_s: s.on(Clock::Wall)?.median,
                    },
                ))
            })
            .collect(),
    }
}
