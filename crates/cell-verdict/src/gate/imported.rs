//! The gate against an imported baseline: another tool's point ratios, read on this run's
//! wall clock against this run's interval alone.

use std::collections::BTreeMap;

use cell_schema::{CellResult, Clock, Phase, RowName};

use super::rows::{Unit, against_point, controls};
use crate::control::blocked;

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
        "baseline {base_name} is imported ({}): {}; its figures are the other tool's, with no samples to recompute them from (exempt from recomputing); each row is compared on this run's wall clock against its point ratio, counting this run's noise alone",
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
/// clock, this run's median interval over the imported point (PASS inside the band, FAIL
/// wholly beyond it, INCONCLUSIVE otherwise, or when this run's A/A control on the wall clock
/// is biased): only this run's noise is counted, and each verdict says so.
pub(super) fn imported_units(
    cell: &CellResult,
    base_name: &str,
    imp: &cell_schema::Imported,
    run_level: f64,
) -> Vec<Unit> {
    let mut units = Vec::new();
    // Every row is read on the wall clock here: so is its job's control.
    let mine = controls(cell, run_level, Some(Clock::Wall));
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
            let blocked = blocked(&mine[&row.job], p);
            units.push(against_point(
                cell,
                (name, &row.job),
                (p, &pr.runs),
                (new, old),
                base_name,
                blocked,
            ));
        }
    }
    units
}
