//! The verdict of a run against committed history: three-way per row and phase (PASS / FAIL /
//! INCONCLUSIVE), failures that always trip (wrong answers, checksums, the tooth, missing
//! rows), and notices that never do (health, machine changes, contention, a binary or code
//! section of another size, another instruction count).
//!
//! Every threshold comes from the checked-in configuration ([`GateConfig`]), never from the
//! artifact being judged: a job that wrote a lenient floor into its own results is still
//! judged by the repository's floor.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use cell_schema::store::{History, HistoryRun, SkippedFile};
use cell_schema::{
    CellResult, Clock, GateCell, GateKind, GateRatio, GateReport, GateStatus, GateSummary,
    GateVerdict, JobSummary, Phase, RatioCi, RowName, RowResult, SCHEMA_VERSION,
};

use crate::rules::{NoisyControl, ToothMissed, band, contended, three_way};
use crate::{GateConfig, recompute};

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

fn gate_ratio(r: &RatioCi) -> GateRatio {
    GateRatio {
        median: r.median,
        lo: r.lo,
        hi: r.hi,
    }
}

/// Why a job's A/A control says its rows on `phase` (on `clock`) cannot be judged, if it does.
fn too_noisy(job: &JobSummary, phase: &Phase, clock: Clock, tolerance: f64) -> Option<String> {
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
        // The samples are the record: the run's figures are judged as its samples give them,
        // and a stated one that disagrees fails the run.
        let now = recompute::cell(cell, config);
        let cell = &now.value;
        let mut g = gate_one_cell(cell, &older, config, run.missing());
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
        cells.push(g);
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

/// What a cell's workload is judged against.
#[derive(Clone, Copy)]
enum Baseline<'a> {
    /// A first run: nothing.
    None,
    /// A measured run of this tool: interval against interval.
    Measured(&'a str, &'a CellResult),
    /// An imported run of another tool's history: interval against its point ratio.
    Imported(&'a str, &'a cell_schema::Imported),
}

/// The baseline among `older` (oldest first; only the pinned run when one is pinned): the
/// newest measured run, else the newest imported one. An imported run is judged against only
/// when it is pinned or no measured run of the cell exists: its points are a weaker baseline
/// than any interval.
fn baseline<'a>(older: &[(&'a str, &'a CellResult)]) -> Baseline<'a> {
    if let Some((name, c)) = older.iter().rev().find(|(_, c)| is_measured(c)) {
        return Baseline::Measured(name, c);
    }
    older
        .iter()
        .rev()
        .find_map(|(name, c)| c.imported.as_ref().map(|i| Baseline::Imported(name, i)))
        .unwrap_or(Baseline::None)
}

/// Whether an older run's cell is a measured baseline of the workload: it has jobs (a
/// suite-only or an imported cell has none).
pub(crate) fn is_measured(cell: &CellResult) -> bool {
    !cell.jobs.is_empty()
}

/// One cell: the workload against its baseline ([`baseline`]), then the suites against
/// theirs.
fn gate_one_cell(
    cell: &CellResult,
    older: &[(&str, &CellResult)],
    config: &GateConfig,
    run_missing: &[String],
) -> GateCell {
    let baseline = baseline(older);
    let suites = crate::suite::gate_suites_of(cell, older, config);
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
    baseline: Baseline<'_>,
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
    let (base_name, verdicts) = match baseline {
        Baseline::None => {
            notices.push("first run of this cell: baseline recorded".into());
            return GateCell {
                cell: cell.cell.id.clone(),
                baseline: None,
                failures,
                notices,
                verdicts: Vec::new(),
            };
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
            notices.extend(baseline_notices(cell, base_name, base, config));
            notices.extend(footprint_notices(cell, base));
            notices.extend(instruction_notices(cell, base_name, base));
            let verdicts = row_verdicts(cell, base_name, base, config, &mut notices);
            notices.extend(dropped_row_notices(cell, base));
            (base_name, verdicts)
        }
        Baseline::Imported(base_name, imp) => {
            notices.extend(imported_notices(cell, base_name, imp));
            (base_name, imported_verdicts(cell, base_name, imp, config))
        }
    };
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

/// Every digest the run's jobs verified for each asset of the release under test, with the
/// jobs (`<toolchain>@<cell>`) that verified it.
fn subject_digests(run: &HistoryRun) -> BTreeMap<String, BTreeMap<String, Vec<String>>> {
    let mut out: BTreeMap<String, BTreeMap<String, Vec<String>>> = BTreeMap::new();
    for (id, cell) in &run.cells {
        for (tc, j) in &cell.jobs {
            if let Some(s) = &j.subject {
                out.entry(s.asset.clone())
                    .or_default()
                    .entry(s.sha256.to_string())
                    .or_default()
                    .push(format!("{tc}@{id}"));
            }
        }
    }
    out
}

/// What release the cell's jobs verified, once per distinct digest: the step summary and the
/// gate's lines name it.
fn subject_notices(cell: &CellResult) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for s in cell.jobs.values().filter_map(|j| j.subject.as_ref()) {
        let line = format!("release under test: {}", s.summary());
        if !out.contains(&line) {
            out.push(line);
        }
    }
    out
}

/// The release under test must be the pinned one in every job, and the same bytes in every
/// job of the run that fetched the same asset; a job that recorded none when one is declared
/// did not verify it.
fn subject_failures(
    cell: &CellResult,
    digests: &BTreeMap<String, BTreeMap<String, Vec<String>>>,
    config: &GateConfig,
) -> Vec<String> {
    let Some((name, _)) = &config.subject else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (tc, j) in &cell.jobs {
        let Some(s) = &j.subject else {
            out.push(format!(
                "subject: job {tc} recorded no release under test, though {name} is declared one"
            ));
            continue;
        };
        if s.tools.is_empty() {
            out.push(format!(
                "subject: job {tc} verified {} but found none of {name}'s tools in it",
                s.asset
            ));
        }
        if let Some(pin) = config.subject_pin(&cell.cell.os, &cell.cell.arch)
            && *pin != s.sha256
        {
            out.push(format!(
                "subject: job {tc} verified {} as {}, but versions.env pins {pin}",
                s.asset, s.sha256
            ));
        }
        if let Some(seen) = digests.get(&s.asset).filter(|d| d.len() > 1) {
            let all: Vec<String> = seen
                .iter()
                .map(|(d, jobs)| format!("{d} ({})", jobs.join(", ")))
                .collect();
            out.push(format!(
                "subject: job {tc}'s {} differs between jobs of this run: {}",
                s.asset,
                all.join("; ")
            ));
        }
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

/// The machine's measured A/A noise, when calibrated: a tolerance below it cannot pass; or
/// why the cell's calibration file is ignored.
fn calibration_notices(cell: &CellResult, config: &GateConfig) -> Vec<String> {
    if let Some(ignored) = config.calibration_ignored.get(cell.cell.id.as_str()) {
        return vec![ignored.clone()];
    }
    let Some(cal) = config.calibration.get(cell.cell.id.as_str()) else {
        return Vec::new();
    };
    // Each row's noise is the calibration's under the protocol its job was timed by.
    let mode_of = |job: &cell_schema::ToolchainName| {
        cell.jobs
            .get(job)
            .map_or(cell_schema::ProtocolMode::Sequential, |j| j.protocol.mode)
    };
    let mut used: Vec<(cell_schema::ProtocolMode, Phase, Clock)> = cell
        .rows
        .values()
        .flat_map(|r| {
            let mode = mode_of(&r.job);
            r.row
                .phases
                .keys()
                .map(move |p| (mode, p.clone(), r.row.verdict_clock))
        })
        .collect();
    used.sort();
    used.dedup();
    let mut out = Vec::new();
    for (mode, p, clock) in used {
        let noise = match mode {
            cell_schema::ProtocolMode::Sequential => Some(&cal.phases),
            cell_schema::ProtocolMode::Duet => cal.duet.as_ref(),
        };
        if let Some(n) = noise.and_then(|n| n.get(&p)).and_then(|c| c.get(&clock))
            && n.half_width > config.tolerance / 2.0
        {
            out.push(format!(
                "this machine's A/A noise on {p} ({} time{}) is ±{:.2}% (cell calibrate, {} rounds, {}), wider than TOLERANCE/2 = ±{:.2}%: expect INCONCLUSIVE there",
                clock.name(),
                if mode.is_sequential() { "" } else { ", duet" },
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
    // A reference timed beside another process is not the same measurement as one timed
    // alone: its absolute time is not compared across protocols.
    if j.protocol.mode != old.protocol.mode {
        return Vec::new();
    }
    let clock = j.protocol.default_clock;
    let mut out = Vec::new();
    for (p, pr) in &j.reference.phases {
        let (Some(new), Some(prev)) = (
            pr.stats.as_ref(),
            old.reference.phases.get(p).and_then(|x| x.stats.as_ref()),
        ) else {
            continue;
        };
        // A reference a file holds no figure of on this clock is not compared.
        let (Some(a), Some(b)) = (
            new.on(clock).map(|s| s.median),
            prev.on(clock).map(|s| s.median),
        ) else {
            continue;
        };
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

/// The instruction lane's tripwire: a row whose count on a phase differs from the count of
/// the baseline's **same row** (same name, same toolchain) on that phase is a notice, never a
/// failure; equal counts say nothing, and no row is ever compared with another. A different
/// binary is "the generated code changed"; the same binary (same SHA-256) counting otherwise
/// ran other library code or saw another environment. Rows counted on one side only are
/// named in one notice per side.
pub fn instruction_notices(cell: &CellResult, base_name: &str, base: &CellResult) -> Vec<String> {
    let counted = |r: &RowResult| r.phases.values().any(|p| p.instructions.is_some());
    let mut out = Vec::new();
    let (mut new_only, mut old_only) = (Vec::new(), Vec::new());
    for (name, row) in &cell.rows {
        let Some(old) = base
            .rows
            .get(name)
            .filter(|o| o.row.toolchain == row.row.toolchain)
        else {
            continue;
        };
        let (new, old) = (&row.row, &old.row);
        match (counted(new), counted(old)) {
            (true, false) => new_only.push(name.to_string()),
            (false, true) => old_only.push(name.to_string()),
            _ => {}
        }
        for (p, pr) in &new.phases {
            let (Some(a), Some(b)) = (
                pr.instructions,
                old.phases.get(p).and_then(|x| x.instructions),
            ) else {
                continue;
            };
            if a == b {
                continue;
            }
            let why = if new.build.sha256 == old.build.sha256 {
                "the same binary: its libraries or its environment changed"
            } else {
                "the generated code changed"
            };
            out.push(format!(
                "instructions: row {name} on {p} {b} → {a} ({}): {why}",
                change(b, a)
            ));
        }
    }
    if !new_only.is_empty() {
        out.push(format!(
            "instructions: counted in this run only, the lane did not run on them in {base_name}: {}",
            new_only.join(", ")
        ));
    }
    if !old_only.is_empty() {
        out.push(format!(
            "instructions: counted in {base_name} only, the lane did not run on them this time: {}",
            old_only.join(", ")
        ));
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

/// Rows with the phases each has on one side of a comparison.
type RowPhases<'a> = BTreeMap<&'a RowName, Vec<&'a Phase>>;

/// The rows (not the reference) of `cell` and of the imported baseline, each with the phases
/// it has on that side.
fn row_phases<'a>(
    cell: &'a CellResult,
    imp: &'a cell_schema::Imported,
) -> (RowPhases<'a>, RowPhases<'a>) {
    let new = cell
        .rows
        .iter()
        .filter(|(_, r)| r.row.role != cell_schema::Role::Reference)
        .map(|(n, r)| (n, r.row.phases.keys().collect()))
        .collect();
    let old = imp
        .rows
        .iter()
        .filter(|(n, _)| **n != imp.reference)
        .map(|(n, r)| (n, r.phases.keys().collect()))
        .collect();
    (new, old)
}

/// What a gate against an imported baseline says beside its verdicts: what the baseline is and
/// how it is read, the rows and phases only one side has, a change of CPU.
fn imported_notices(
    cell: &CellResult,
    base_name: &str,
    imp: &cell_schema::Imported,
) -> Vec<String> {
    let mut out = vec![format!(
        "baseline {base_name} is imported ({}): {}; its figures are the other tool's, with no samples to recompute them from (exempt from recomputing); each row is compared on this run's wall clock against its point ratio, with the band only",
        imp.source.path, imp.method.summary
    )];
    let (new, old) = row_phases(cell, imp);
    let only = |a: &RowPhases<'_>, b: &RowPhases<'_>| {
        a.keys()
            .filter(|n| !b.contains_key(*n))
            .map(ToString::to_string)
            .collect::<Vec<_>>()
    };
    let (new_only, old_only) = (only(&new, &old), only(&old, &new));
    if !new_only.is_empty() || !old_only.is_empty() {
        let list = |v: &[String]| {
            if v.is_empty() {
                "none".into()
            } else {
                v.join(", ")
            }
        };
        out.push(format!(
            "rows not compared: only in this run: {}; only in the imported baseline: {}",
            list(&new_only),
            list(&old_only)
        ));
    }
    let mut phases = Vec::new();
    for (name, ps) in &new {
        let Some(old_ps) = old.get(name) else {
            continue;
        };
        let mine: Vec<String> = ps
            .iter()
            .filter(|p| !old_ps.contains(p))
            .map(ToString::to_string)
            .collect();
        let theirs: Vec<String> = old_ps
            .iter()
            .filter(|p| !ps.contains(p))
            .map(ToString::to_string)
            .collect();
        if !mine.is_empty() {
            phases.push(format!("{name} {} (this run only)", mine.join(", ")));
        }
        if !theirs.is_empty() {
            phases.push(format!("{name} {} (imported only)", theirs.join(", ")));
        }
    }
    if !phases.is_empty() {
        out.push(format!("phases not compared: {}", phases.join("; ")));
    }
    if let Some(cpu) = &imp.machine.cpu_model {
        for (tc, j) in &cell.jobs {
            if &j.machine.cpu_model != cpu {
                out.push(format!(
                    "job {tc} ran on `{}`, the imported baseline on `{cpu}`",
                    j.machine.cpu_model
                ));
            }
        }
    }
    out
}

/// The rule against an imported baseline: its ratios are ratios of medians on the wall clock
/// with no interval, so each row and phase both runs have is judged on this run's **wall**
/// clock, its interval against the band around the imported point (PASS inside, FAIL wholly
/// outside, INCONCLUSIVE otherwise, or when this run's A/A control on the wall clock is off).
fn imported_verdicts(
    cell: &CellResult,
    base_name: &str,
    imp: &cell_schema::Imported,
    config: &GateConfig,
) -> Vec<GateVerdict> {
    let mut verdicts = Vec::new();
    for (name, row) in &cell.rows {
        if row.row.role == cell_schema::Role::Reference || *name == imp.reference {
            continue;
        }
        let Some(old_row) = imp.rows.get(name) else {
            continue;
        };
        for (p, pr) in &row.row.phases {
            let (Some(new), Some(old)) = (
                pr.ratio.as_ref().and_then(|r| r.on(Clock::Wall)),
                old_row.phases.get(p).map(|x| x.point_ratio),
            ) else {
                continue;
            };
            let noisy = cell
                .jobs
                .get(&row.job)
                .and_then(|j| too_noisy(j, p, Clock::Wall, config.tolerance));
            let (lo, hi) = band(old, config.tolerance);
            let status = if noisy.is_some() {
                GateStatus::Inconclusive
            } else {
                three_way(old, new.lo, new.hi, config.tolerance)
            };
            let mut message = format!(
                "{} {} {name} {p} (wall): {:.4} (CI {:.4}–{:.4}) vs {old:.4} in {base_name}, against an imported point ratio on the wall clock (a ratio of medians, no interval); band {lo:.4}–{hi:.4}",
                status.word(),
                cell.cell.id,
                new.median,
                new.lo,
                new.hi,
            );
            if let Some(n) = noisy {
                let _ = write!(message, "; {n}");
            }
            verdicts.push(GateVerdict {
                row: name.clone(),
                phase: p.clone(),
                clock: Clock::Wall,
                status,
                old: GateRatio {
                    median: old,
                    lo: old,
                    hi: old,
                },
                new: gate_ratio(new),
                band: [lo, hi],
                message,
                against_imported_point: true,
            });
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

fn dropped_row_notices(cell: &CellResult, base: &CellResult) -> Vec<String> {
    base.rows
        .iter()
        .filter(|(name, r)| !cell.rows.contains_key(*name) && !cell.jobs.contains_key(&r.job))
        .map(|(name, r)| format!("row {name} was not run this time (no job {})", r.job))
        .collect()
}
