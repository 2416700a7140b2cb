//! The notices that never trip the gate: the release verified, jobs that left no result,
//! contention, the machine's calibrated noise, health and machine changes, a binary or code
//! section of another size, another instruction count, rows not run this time.

use cell_schema::{CellResult, Clock, JobSummary, Phase, RowResult};

use crate::GateConfig;
use crate::rules::contended;

/// What release the cell's jobs verified, once per distinct digest: the step summary and the
/// gate's lines name it.
pub(super) fn subject_notices(cell: &CellResult) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (_, s) in super::failures::subject_records(cell) {
        let line = format!("release under test: {}", s.summary());
        if !out.contains(&line) {
            out.push(line);
        }
    }
    out
}

pub(super) fn missing_job_notices(cell: &CellResult) -> Vec<String> {
    cell.missing
        .iter()
        .map(|m| format!("job {} left no result ({})", m.toolchain, m.conclusion))
        .collect()
}

/// Contention judged again with the repository's `CONTENTION_MAX`, not the job's own copy.
pub(super) fn contention_notices(cell: &CellResult, config: &GateConfig) -> Vec<String> {
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

/// The machine's measured A/A noise, when calibrated: two runs of it resolve about twice its
/// half-width (both runs' noise, at the family's level), so beyond `TOLERANCE/2` a row
/// cannot pass there; or why the cell's calibration file is ignored.
pub(super) fn calibration_notices(cell: &CellResult, config: &GateConfig) -> Vec<String> {
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
                "this machine's A/A noise on {p} ({} time{}) is ±{:.2}% (cell calibrate, {} rounds, {}): two runs like it together resolve about twice that, wider than TOLERANCE ±{:.2}%: expect INCONCLUSIVE there",
                clock.name(),
                if mode.is_sequential() { "" } else { ", duet" },
                n.half_width * 100.0,
                cal.rounds,
                cal.measured_at,
                config.tolerance * 100.0
            ));
        }
    }
    out
}

/// A job that judged its rows against another run than the gate's baseline while it timed
/// them (a results commit landed between the job's checkout and the gate's): its rows'
/// rounds stopped for that run, and a row it settled there may read INCONCLUSIVE here.
pub(super) fn settled_against_notices(cell: &CellResult, base_name: &str) -> Vec<String> {
    cell.jobs
        .iter()
        .filter_map(|(tc, j)| {
            let theirs = j.protocol.baseline.as_deref()?;
            (theirs != base_name).then(|| {
                format!(
                    "job {tc} judged its rows against {theirs} while it timed them; the gate compares with {base_name}: a row whose rounds stopped as settled there may be INCONCLUSIVE here (a rerun settles it)"
                )
            })
        })
        .collect()
}

/// Health and machine notices, job by job.
pub(super) fn baseline_notices(
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

/// The instruction lane's tripwire, where the code verdict cannot speak (a side counted
/// instructions only): a row whose count on a phase differs from the count of the baseline's
/// **same row** (same name, same toolchain) on that phase is a notice, never a
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
            let before = old.phases.get(p);
            // Both estimated: the code verdict speaks for this row and phase.
            if pr.estimated_cycles.is_some() && before.is_some_and(|x| x.estimated_cycles.is_some())
            {
                continue;
            }
            let (Some(a), Some(b)) = (pr.instructions, before.and_then(|x| x.instructions)) else {
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

pub(super) fn dropped_row_notices(cell: &CellResult, base: &CellResult) -> Vec<String> {
    base.rows
        .iter()
        .filter(|(name, r)| !cell.rows.contains_key(*name) && !cell.jobs.contains_key(&r.job))
        .map(|(name, r)| format!("row {name} was not run this time (no job {})", r.job))
        .collect()
}
