//! A cell's report over its runs: each phase's series over the window, each http
//! combination's points, the tools that built a row.

use std::collections::{BTreeMap, BTreeSet};

use cell_schema::store::HistoryRun;
use cell_schema::{
    CellResult, Clock, Combo, JobSummary, Phase, RatioCi, Role, RowName, RowResult, ServerName,
    ToolName, ToolchainName,
};

use super::newest::newest_report;
use super::{
    CellReport, HttpPoint, HttpSeries, ImportedPoint, LeftOut, PhaseReport, Point, ReportOptions,
    Series,
};

/// Phases in the newest run's protocol order, then any only older runs timed, sorted.
fn phase_order(seen: &[(&HistoryRun, &CellResult)]) -> Vec<Phase> {
    let mut order: Vec<Phase> = seen
        .last()
        .and_then(|(_, cell)| cell.jobs.values().next())
        .map(|j| j.protocol.phases.clone())
        .unwrap_or_default();
    let mut all: BTreeSet<Phase> = BTreeSet::new();
    for (_, cell) in seen {
        for job in cell.jobs.values() {
            all.extend(job.protocol.phases.iter().cloned());
        }
        for row in cell.rows.values() {
            all.extend(row.row.phases.keys().cloned());
        }
        if let Some(imp) = &cell.imported {
            all.extend(imp.phases().into_iter().cloned());
        }
    }
    for p in all {
        if !order.contains(&p) {
            order.push(p);
        }
    }
    order
}

/// Every row's series on one phase over the cell's runs: measured points from measured runs,
/// imported points (no interval) from imported ones, each row keeping its newest label.
fn phase_report(seen: &[(&HistoryRun, &CellResult)], phase: Phase) -> PhaseReport {
    let mut rows: BTreeMap<RowName, Series> = BTreeMap::new();
    for (run, cell) in seen {
        if let Some(imp) = &cell.imported {
            for (name, row, p) in imp.points(&phase) {
                let s = rows.entry(name.clone()).or_insert_with(|| Series {
                    label: String::new(),
                    job: row.toolchain.clone(),
                    role: Role::Row,
                    // An imported-only row reads the clock its points were timed on.
                    clock: Clock::Wall,
                    tools: Vec::new(),
                    points: Vec::new(),
                    imported: Vec::new(),
                });
                if s.points.is_empty() {
                    s.label.clone_from(&row.label);
                    s.job = row.toolchain.clone();
                }
                s.imported.push(ImportedPoint {
                    run: run.name.to_string(),
                    date: run.name.date().to_owned(),
                    job: row.toolchain.clone(),
                    ratio: p.point_ratio,
                    answer_ok: p.stdout_ok,
                });
            }
        }
        for (name, cr) in &cell.rows {
            if cr.row.role == Role::Reference {
                continue;
            }
            let reference = cell.jobs.get(&cr.job).map(|j| &j.reference);
            let Some(point) = point(run, &cr.job, &cr.row, reference, &phase) else {
                continue;
            };
            let s = rows.entry(name.clone()).or_insert_with(|| Series {
                label: String::new(),
                job: cr.job.clone(),
                role: cr.row.role,
                clock: cr.row.verdict_clock,
                tools: Vec::new(),
                points: Vec::new(),
                imported: Vec::new(),
            });
            s.label.clone_from(&cr.row.label);
            s.job = cr.job.clone();
            s.role = cr.row.role;
            s.clock = cr.row.verdict_clock;
            s.tools = cell
                .jobs
                .get(&cr.job)
                .map(|j| build_tools(j, &cr.row))
                .unwrap_or_default();
            s.points.push(point);
        }
    }
    PhaseReport { phase, rows }
}

/// A cell over its runs `seen`: the charts and series over `shown` (the window, the newest
/// of them), the newest-run sections over all.
pub(super) fn cell_report(
    seen: &[(&HistoryRun, &CellResult)],
    shown: &[(&HistoryRun, &CellResult)],
    options: &ReportOptions,
) -> CellReport {
    // The newest measured run is the cell's state; an imported one only when nothing else is.
    let (newest_run, newest) = *seen
        .iter()
        .rev()
        .find(|(_, c)| !c.is_imported())
        .or(seen.last())
        .expect("a cell is listed only once seen");
    let first_job = newest.jobs.values().next();
    let (reference, reference_label) = match (first_job, &newest.imported) {
        (Some(j), _) => (j.protocol.reference.clone(), j.reference.label.clone()),
        (None, Some(imp)) => (
            imp.reference.clone(),
            imp.rows
                .get(&imp.reference)
                .map(|r| r.label.clone())
                .unwrap_or_default(),
        ),
        (None, None) => (RowName::new(String::new()), String::new()),
    };
    let phases = phase_order(shown)
        .into_iter()
        .map(|phase| phase_report(shown, phase))
        .collect();
    // The window is the newest of the cell's runs: those before it are left out.
    let older = seen.len() - shown.len();
    CellReport {
        os: newest.cell.os.clone(),
        arch: newest.cell.arch.clone(),
        label: newest.cell.label.clone(),
        runs: shown.iter().map(|(r, _)| r.name.to_string()).collect(),
        left_out: LeftOut::of(
            seen.iter()
                .enumerate()
                .map(|(i, (r, _))| (r.name.to_string(), i >= older)),
            options.last,
        ),
        reference,
        reference_label,
        phases,
        newest: newest_report(newest_run, newest, seen),
        http: http_series(shown),
    }
}

/// Every http server's combination (workload, shape, tool) over the cell's runs: servers in
/// name order, each server's combinations in the newest run's order, then those only older
/// runs measured.
fn http_series(seen: &[(&HistoryRun, &CellResult)]) -> Vec<HttpSeries> {
    let mut series: BTreeMap<(ServerName, Combo), Vec<HttpPoint>> = BTreeMap::new();
    let mut order: BTreeMap<ServerName, Vec<Combo>> = BTreeMap::new();
    for (run, cell) in seen {
        for (name, h) in &cell.http {
            let measured = crate::suite::measured_in_order(&h.settings, &h.result);
            for (combo, t) in &measured {
                series
                    .entry((name.clone(), combo.clone()))
                    .or_default()
                    .push(HttpPoint {
                        run: run.name.to_string(),
                        rps: t.rps,
                        p99_ms: t.p99_ms,
                        clean_runs: t.clean_runs,
                    });
            }
            // The newest run's order wins: the list is rebuilt for each later run.
            let mut combos: Vec<Combo> = measured.into_iter().map(|(c, _)| c).collect();
            let known = order.entry(name.clone()).or_default();
            let stale: Vec<Combo> = known
                .iter()
                .filter(|c| !combos.contains(c))
                .cloned()
                .collect();
            combos.extend(stale);
            *known = combos;
        }
    }
    order
        .into_iter()
        .flat_map(|(server, combos)| combos.into_iter().map(move |c| (server.clone(), c)))
        .filter_map(|key| {
            let points = series.remove(&key)?;
            Some(HttpSeries {
                server: key.0,
                workload: key.1.workload,
                shape: key.1.shape,
                tool: key.1.tool,
                points,
            })
        })
        .collect()
}

/// The tools whose path (or resolved path) is the row's build program; else the tool named
/// after the row's toolchain.
fn build_tools(job: &JobSummary, row: &RowResult) -> Vec<ToolName> {
    let program = row.build.argv.first().map_or("", String::as_str);
    let by_path: Vec<ToolName> = job
        .versions
        .iter()
        .filter(|(_, v)| !program.is_empty() && (v.path == program || v.resolved == program))
        .map(|(t, _)| t.clone())
        .collect();
    if !by_path.is_empty() {
        return by_path;
    }
    job.versions
        .keys()
        .filter(|t| t.as_str() == row.toolchain.as_str())
        .cloned()
        .collect()
}

fn point(
    run: &HistoryRun,
    job: &ToolchainName,
    row: &RowResult,
    reference: Option<&RowResult>,
    phase: &Phase,
) -> Option<Point> {
    let pr = row.phases.get(phase)?;
    // The exact lane's estimated cycles over the job's reference's, when both were counted.
    let cycles = reference
        .and_then(|r| r.phases.get(phase))
        .and_then(|r| r.estimated_cycles)
        .zip(pr.estimated_cycles)
        .filter(|(r, _)| *r > 0)
        .map(|(r, c)| c as f64 / r as f64);
    let ratios = pr.ratio.as_ref()?;
    // A file without a ratio on the row's clock gives no point (never another clock's).
    let (v, other): (&RatioCi, &RatioCi) = (
        ratios.on(row.verdict_clock)?,
        ratios.on(row.verdict_clock.other())?,
    );
    Some(Point {
        run: run.name.to_string(),
        date: run.name.date().to_owned(),
        run_id: run.name.id().to_owned(),
        job: job.clone(),
        clock: row.verdict_clock,
        median: v.median,
        lo: v.lo,
        hi: v.hi,
        level: v.level,
        n: v.n,
        other_median: other.median,
        median_s: crate::verdict_median(row, phase),
        cycles,
        answer_ok: pr.answer_ok,
    })
}
