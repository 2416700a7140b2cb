//! The verdict of a run against committed history: three-way per row and phase (PASS / FAIL /
//! INCONCLUSIVE), failures that always trip (wrong answers, checksums, the tooth, missing
//! rows), and notices that never do (health, machine changes, contention, a binary or code
//! section of another size).
//!
//! Every threshold comes from the checked-in configuration ([`GateConfig`]), never from the
//! artifact being judged: a job that wrote a lenient floor into its own results is still
//! judged by the repository's floor.

use std::fmt::Write as _;

use cell_schema::store::{History, HistoryRun, SkippedFile};
use cell_schema::{
    CellResult, Clock, GateCell, GateKind, GateRatio, GateReport, GateStatus, GateSummary,
    GateVerdict, JobSummary, Phase, RatioCi, RowResult, SCHEMA_VERSION,
};

use crate::GateConfig;
use crate::rules::{NoisyControl, ToothMissed, band, contended, three_way};

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
/// cell: a left-out file newer than every readable run of its cell would have been it.
pub fn gate_history(
    run: &HistoryRun,
    history: &History,
    config: &GateConfig,
) -> Result<GateReport, GateError> {
    let others = |r: &cell_schema::store::RunDirName| r.id() != run.name.id();
    for s in history.skipped.iter().filter(|s| others(&s.run)) {
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

fn gate_ratio(r: &RatioCi) -> GateRatio {
    GateRatio {
        median: r.median,
        lo: r.lo,
        hi: r.hi,
    }
}

/// Why a job's A/A control says its rows on `phase` (on `clock`) cannot be judged, if it does.
fn too_noisy(job: &JobSummary, phase: &Phase, clock: Clock, tolerance: f64) -> Option<String> {
    let control = job.control.as_ref()?;
    let Some(r) = control.phases.get(phase).and_then(|p| p.ratio.as_ref()) else {
        return Some(format!("the A/A control has no measurement on {phase}"));
    };
    NoisyControl::check(phase.as_str(), clock, r.on(clock), tolerance).map(|n| n.gate_reason())
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
    let mut cells = Vec::new();
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
        cells.push(gate_one_cell(cell, &older, config, run.missing()));
    }
    let summary = summarize(&cells);
    let exit = u8::from(summary.fail > 0 || summary.failures > 0);
    Ok(GateReport {
        schema_version: SCHEMA_VERSION,
        kind: GateKind::Gate,
        run: run.name.to_string(),
        tolerance: config.tolerance,
        cells,
        summary,
        exit,
        config_rev: None,
    })
}

/// One cell: the workload against the newest older run that had workload jobs, then the
/// suites against theirs.
fn gate_one_cell(
    cell: &CellResult,
    older: &[(&str, &CellResult)],
    config: &GateConfig,
    run_missing: &[String],
) -> GateCell {
    let baseline = older
        .iter()
        .rev()
        .find(|(_, c)| !c.jobs.is_empty())
        .copied();
    let suites =
        crate::suite::gate_suites(cell, older, config.http_tolerance, config.soak.as_ref());
    let mut g = if cell.jobs.is_empty() {
        // A suite-only run: nothing of the workload to judge.
        GateCell {
            cell: cell.cell.id.clone(),
            baseline: None,
            failures: Vec::new(),
            notices: missing_job_notices(cell),
            verdicts: Vec::new(),
        }
    } else {
        gate_cell(cell, baseline, config, run_missing)
    };
    g.failures.extend(suites.failures);
    g.notices.extend(suites.notices);
    g.verdicts.extend(suites.verdicts);
    g
}

fn summarize(cells: &[GateCell]) -> GateSummary {
    let mut summary = GateSummary {
        pass: 0,
        fail: 0,
        inconclusive: 0,
        failures: 0,
        notices: 0,
    };
    for c in cells {
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

/// The workload of one cell: failures, notices, and a verdict per row and phase.
fn gate_cell(
    cell: &CellResult,
    baseline: Option<(&str, &CellResult)>,
    config: &GateConfig,
    run_missing: &[String],
) -> GateCell {
    let mut failures = answer_failures(cell);
    failures.extend(checksum_failures(cell, config, run_missing));
    failures.extend(tooth_failures(cell, config));
    failures.extend(expected_row_failures(cell, config));
    let mut notices = missing_job_notices(cell);
    notices.extend(contention_notices(cell, config));
    notices.extend(calibration_notices(cell, config));
    let Some((base_name, base)) = baseline else {
        notices.push("first run of this cell: baseline recorded".into());
        return GateCell {
            cell: cell.cell.id.clone(),
            baseline: None,
            failures,
            notices,
            verdicts: Vec::new(),
        };
    };
    notices.extend(baseline_notices(cell, base_name, base, config));
    notices.extend(footprint_notices(cell, base));
    let verdicts = row_verdicts(cell, base_name, base, config, &mut notices);
    notices.extend(dropped_row_notices(cell, base));
    GateCell {
        cell: cell.cell.id.clone(),
        baseline: Some(base_name.to_owned()),
        failures,
        notices,
        verdicts,
    }
}

/// Wrong answers, in every row a job timed (reference and control included).
fn answer_failures(cell: &CellResult) -> Vec<String> {
    let mut every_row: Vec<(String, &RowResult)> = cell
        .rows
        .iter()
        .map(|(n, r)| (format!("{n} (job {})", r.job), &r.row))
        .collect();
    for (tc, j) in &cell.jobs {
        every_row.push((
            format!("{} (reference, job {tc})", j.protocol.reference),
            &j.reference,
        ));
        if let Some(c) = &j.control {
            every_row.push((format!("{} (job {tc})", j.protocol.control), c));
        }
    }
    let mut out = Vec::new();
    for (name, row) in &every_row {
        for (p, pr) in &row.phases {
            if !pr.answer_ok {
                out.push(format!(
                    "wrong answer: row {name} on phase {p}: {}",
                    pr.wrong.clone().unwrap_or_default()
                ));
            }
        }
    }
    out
}

/// A job that ran with other digests than the repository pins, or an artifact whose zip did
/// not match its digest.
fn checksum_failures(
    cell: &CellResult,
    config: &GateConfig,
    run_missing: &[String],
) -> Vec<String> {
    let mut out = Vec::new();
    for (tc, j) in &cell.jobs {
        for (k, v) in &j.pins {
            if let Some(pinned) = config.digests.get(k)
                && !pinned.eq_ignore_ascii_case(v)
            {
                out.push(format!(
                    "checksum: job {tc} ran with {k}={v}, but versions.env pins {pinned}"
                ));
            }
        }
    }
    for m in run_missing.iter().filter(|m| m.contains("SHA-256")) {
        out.push(format!("checksum: {m}"));
    }
    out
}

/// The tooth, judged by the repository's floor, in every job.
fn tooth_failures(cell: &CellResult, config: &GateConfig) -> Vec<String> {
    let (slow, fast, phase) = &config.tooth;
    let floor = config.floor(&cell.cell.arch);
    cell.jobs
        .iter()
        .filter_map(|(tc, j)| {
            let ratio = j.tooth.as_ref().and_then(|t| t.ratio.as_ref());
            ToothMissed::check((slow, fast, phase.as_str()), ratio, floor, &cell.cell.arch)
                .map(|m| m.gate_failure(tc.as_str()))
        })
        .collect()
}

/// Rows the configuration expects from every job that ran.
fn expected_row_failures(cell: &CellResult, config: &GateConfig) -> Vec<String> {
    let (slow, fast, _) = &config.tooth;
    let mut out = Vec::new();
    for tc in cell.jobs.keys() {
        for row in config.rows.get(tc).into_iter().flatten() {
            if cell.rows.contains_key(row) {
                continue;
            }
            let why = cell
                .skipped
                .iter()
                .find(|s| &s.row == row)
                .map_or(String::new(), |s| format!(": {}", s.message));
            let tooth = if row == slow || row == fast {
                format!(
                    " (it is the tooth's {} row: tooth {slow}/{fast} cannot be read)",
                    if row == slow { "slow" } else { "fast" }
                )
            } else {
                String::new()
            };
            out.push(format!(
                "expected row {row} of job {tc} is missing{tooth}{why}"
            ));
        }
    }
    out
}

fn missing_job_notices(cell: &CellResult) -> Vec<String> {
    cell.missing
        .iter()
        .map(|m| format!("job {} left no result ({})", m.toolchain, m.conclusion))
        .collect()
}

/// Contention judged again with the repository's `CONTENTION_MAX`, not the job's own copy.
fn contention_notices(cell: &CellResult, config: &GateConfig) -> Vec<String> {
    cell.jobs
        .iter()
        .filter_map(|(tc, j)| {
            let c = j.contention.as_ref()?;
            contended(c.median, config.settings.contention_max).then(|| {
                format!(
                    "job {tc} was contended: median wall/cpu {:.4} > {}",
                    c.median, config.settings.contention_max
                )
            })
        })
        .collect()
}

/// The machine's measured A/A noise, when calibrated: a tolerance below it cannot pass.
fn calibration_notices(cell: &CellResult, config: &GateConfig) -> Vec<String> {
    let Some(cal) = config.calibration.get(cell.cell.id.as_str()) else {
        return Vec::new();
    };
    let mut used: Vec<(Phase, Clock)> = cell
        .rows
        .values()
        .flat_map(|r| {
            r.row
                .phases
                .keys()
                .map(move |p| (p.clone(), r.row.verdict_clock))
        })
        .collect();
    used.sort();
    used.dedup();
    let mut out = Vec::new();
    for (p, clock) in used {
        if let Some(n) = cal.phases.get(&p).and_then(|c| c.get(&clock))
            && n.half_width > config.tolerance / 2.0
        {
            out.push(format!(
                "this machine's A/A noise on {p} ({} time) is ±{:.2}% (cell calibrate, {} rounds, {}), wider than TOLERANCE/2 = ±{:.2}%: expect INCONCLUSIVE there",
                clock.name(),
                n.half_width * 100.0,
                cal.rounds,
                cal.measured_at,
                config.tolerance * 50.0
            ));
        }
    }
    out
}

/// Health and machine notices, job by job.
fn baseline_notices(
    cell: &CellResult,
    base_name: &str,
    base: &CellResult,
    config: &GateConfig,
) -> Vec<String> {
    let mut out = Vec::new();
    for (tc, j) in &cell.jobs {
        let Some(old) = base.jobs.get(tc) else {
            continue;
        };
        out.extend(health_notices(tc.as_str(), j, old, base_name, config));
        if j.machine.cpu_model != old.machine.cpu_model {
            out.push(format!(
                "job {tc} ran on `{}`, the baseline on `{}`",
                j.machine.cpu_model, old.machine.cpu_model
            ));
        }
        if j.machine.runner_image != old.machine.runner_image {
            let describe = |image: &Option<cell_schema::RunnerImage>| {
                image
                    .as_ref()
                    .map_or("none".into(), |i| format!("{} {}", i.os, i.version))
            };
            out.push(format!(
                "job {tc}'s runner image changed: {} → {}",
                describe(&old.machine.runner_image),
                describe(&j.machine.runner_image)
            ));
        }
    }
    out
}

/// The reference's absolute median against the baseline's: a notice, never a gate.
fn health_notices(
    tc: &str,
    j: &JobSummary,
    old: &JobSummary,
    base_name: &str,
    config: &GateConfig,
) -> Vec<String> {
    let clock = j.protocol.default_clock;
    let mut out = Vec::new();
    for (p, pr) in &j.reference.phases {
        let (Some(new), Some(prev)) = (
            pr.stats.as_ref(),
            old.reference.phases.get(p).and_then(|x| x.stats.as_ref()),
        ) else {
            continue;
        };
        let (a, b) = (new.on(clock).median, prev.on(clock).median);
        if b > 0.0 && (a / b - 1.0).abs() > config.health_threshold {
            out.push(format!(
                "health: job {tc}'s reference on {p} took {a:.4} s, {:+.1}% from {b:.4} s in {base_name} (beyond ±{:.0}%): the machine changed, ratios still compare",
                (a / b - 1.0) * 100.0,
                config.health_threshold * 100.0
            ));
        }
    }
    out
}

/// A row whose binary or code section changed size against the baseline's same row: a
/// notice, never a failure (a new compiler release may rightly change either). A figure an
/// older file lacks is not compared.
pub fn footprint_notices(cell: &CellResult, base: &CellResult) -> Vec<String> {
    let mut out = Vec::new();
    for (name, row) in &cell.rows {
        let Some(old) = base.rows.get(name) else {
            continue;
        };
        let (new, old) = (&row.row.build, &old.row.build);
        let sizes = [
            (
                "binary bytes",
                Some(old.binary_bytes),
                Some(new.binary_bytes),
            ),
            ("text bytes", old.text_bytes, new.text_bytes),
        ];
        for (what, old, new) in sizes {
            if let (Some(old), Some(new)) = (old, new)
                && old != new
            {
                out.push(format!(
                    "row {name} {what} {old} → {new} ({})",
                    change(old, new)
                ));
            }
        }
    }
    out
}

/// `+10.0%`: the change from `old` to `new`, signed, of a size that was not 0.
fn change(old: u64, new: u64) -> String {
    if old == 0 {
        return "from nothing".into();
    }
    format!("{:+.1}%", (new as f64 / old as f64 - 1.0) * 100.0)
}

/// Three-way per row and phase; a row the baseline lacks is a notice.
fn row_verdicts(
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
            let (Some(new), Some(old)) = (
                pr.ratio.as_ref().map(|r| r.on(clock)),
                old_row
                    .row
                    .phases
                    .get(p)
                    .and_then(|x| x.ratio.as_ref())
                    .map(|r| r.on(clock)),
            ) else {
                continue;
            };
            // Either side too noisy and there is no call: a noisy baseline is no firmer a
            // reference than a noisy new run.
            let noisy = cell
                .jobs
                .get(&row.job)
                .and_then(|j| too_noisy(j, p, clock, config.tolerance))
                .or_else(|| {
                    base.jobs
                        .get(&old_row.job)
                        .and_then(|j| too_noisy(j, p, clock, config.tolerance))
                        .map(|why| format!("baseline {why}"))
                });
            let line = VerdictLine {
                cell: cell.cell.id.as_str(),
                row: name.as_str(),
                phase: p,
                clock,
                base_name,
            };
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
        }
    }
}

fn dropped_row_notices(cell: &CellResult, base: &CellResult) -> Vec<String> {
    base.rows
        .iter()
        .filter(|(name, r)| !cell.rows.contains_key(*name) && !cell.jobs.contains_key(&r.job))
        .map(|(name, r)| format!("row {name} was not run this time (no job {})", r.job))
        .collect()
}
