//! The gate against an imported baseline: another tool's point ratios, read on this run's
//! wall clock with the band only.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use cell_schema::{CellResult, Clock, GateRatio, GateStatus, GateVerdict, Phase, RowName};

use super::rows::{gate_ratio, too_noisy};
use crate::GateConfig;
use crate::rules::{band, three_way};

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
pub(super) fn imported_notices(
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
pub(super) fn imported_verdicts(
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
