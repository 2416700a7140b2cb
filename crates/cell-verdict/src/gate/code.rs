//! The code verdict: did the generated code change? Each row's estimated cycles (the exact
//! lane, docs/protocol.md) as a ratio to its job's reference, this run's over the baseline's.
//! The ratio cancels what the row and its reference share — valgrind's version, the
//! environment's size, the C library — so a move is the row's code. Beyond
//! `CYCLES_TOLERANCE` (widened by the spread of repeated runs) it FAILs when it grew and
//! PASSes with a notice when it shrank; the time verdicts are judged beside it, unchanged.

use cell_schema::{CellResult, CodeVerdict, GateStatus, Phase, PhaseResult, Role};

/// What the code verdicts of one cell found, and their notices.
pub(crate) struct Code {
    pub verdicts: Vec<CodeVerdict>,
    pub notices: Vec<String>,
}

/// One side's figures of a row and phase: its estimated cycles and instructions over its
/// reference's, and the spreads the lane saw of both.
struct Side {
    cycles: f64,
    instructions: f64,
    spread: f64,
}

impl Side {
    fn of(row: &PhaseResult, reference: &PhaseResult) -> Option<Self> {
        let ratio = |a: Option<u64>, b: Option<u64>| match (a, b) {
            (Some(a), Some(b)) if a > 0 && b > 0 => Some(a as f64 / b as f64),
            _ => None,
        };
        let spread = |p: &PhaseResult| p.exact_repeat.as_ref().map_or(0.0, |r| r.spread);
        Some(Self {
            cycles: ratio(row.estimated_cycles, reference.estimated_cycles)?,
            instructions: ratio(row.instructions, reference.instructions)?,
            spread: spread(row) + spread(reference),
        })
    }
}

/// The code verdicts of `cell` against `base` (the baseline run `base_name`) at
/// `CYCLES_TOLERANCE` = `tolerance`: one per row and phase both runs counted, the reference
/// and the control left out (the reference is every ratio's denominator). A job whose cache
/// geometry differs from the baseline's is not judged (another geometry is another estimate),
/// with a notice.
pub(crate) fn code_verdicts(
    cell: &CellResult,
    base_name: &str,
    base: &CellResult,
    tolerance: f64,
) -> Code {
    let mut code = Code {
        verdicts: Vec::new(),
        notices: Vec::new(),
    };
    let mut unjudged = std::collections::BTreeSet::new();
    for (tc, job) in &cell.jobs {
        let (Some(new), Some(old)) = (
            job.instructions.as_ref(),
            base.jobs.get(tc).and_then(|j| j.instructions.as_ref()),
        ) else {
            continue;
        };
        if let (Some(a), Some(b)) = (&new.cache, &old.cache)
            && a != b
        {
            code.notices.push(format!(
                "code: job {tc} simulated other caches than {base_name} (I1 {} D1 {} LL {} → I1 {} D1 {} LL {}): its code verdicts are not given, this run is the next one's baseline",
                b.i1, b.d1, b.ll, a.i1, a.d1, a.ll
            ));
            unjudged.insert(tc.clone());
        } else if new.version != old.version
            && let (Some(a), Some(b)) = (&new.version, &old.version)
        {
            code.notices.push(format!(
                "code: job {tc} ran {a}, {base_name} ran {b}: each ratio to the reference cancels the change"
            ));
        }
    }
    for (name, row) in &cell.rows {
        if matches!(row.row.role, Role::Reference | Role::Control) || unjudged.contains(&row.job) {
            continue;
        }
        let Some(old) = base
            .rows
            .get(name)
            .filter(|o| o.row.toolchain == row.row.toolchain)
        else {
            continue;
        };
        let (Some(new_ref), Some(old_ref)) = (
            cell.jobs.get(&row.job).map(|j| &j.reference),
            base.jobs.get(&old.job).map(|j| &j.reference),
        ) else {
            continue;
        };
        for (phase, pr) in &row.row.phases {
            let new = new_ref.phases.get(phase).and_then(|r| Side::of(pr, r));
            let old = old
                .row
                .phases
                .get(phase)
                .zip(old_ref.phases.get(phase))
                .and_then(|(p, r)| Side::of(p, r));
            let (Some(new), Some(old)) = (new, old) else {
                continue;
            };
            let v = judge(
                cell.cell.id.as_str(),
                name.as_str(),
                phase,
                &new,
                &old,
                tolerance,
            );
            if v.status == GateStatus::Pass && v.change < 1.0 / (1.0 + v.tolerance) {
                code.notices.push(format!("code: {}", v.message));
            }
            code.verdicts.push(v);
        }
    }
    code
}

/// One row and phase: the one rule of the code verdict.
fn judge(
    cell: &str,
    name: &str,
    phase: &Phase,
    new: &Side,
    old: &Side,
    tolerance: f64,
) -> CodeVerdict {
    let change = new.cycles / old.cycles;
    let spread = new.spread + old.spread;
    let tol = tolerance + spread;
    let status = if change > 1.0 + tol {
        GateStatus::Fail
    } else {
        GateStatus::Pass
    };
    let instructions_change = new.instructions / old.instructions;
    let pct = |x: f64| format!("{:+.1}%", (x - 1.0) * 100.0);
    let tol_words = if spread > 0.0 {
        format!(
            "CYCLES_TOLERANCE ±{}% widened by the runs' spread to ±{}%",
            cell_schema::percent(tolerance),
            cell_schema::percent(tol)
        )
    } else {
        format!("CYCLES_TOLERANCE ±{}%", cell_schema::percent(tolerance))
    };
    let figures = format!(
        "{:.4} → {:.4} of the reference's, instructions {}",
        old.cycles,
        new.cycles,
        pct(instructions_change)
    );
    let what = if change > 1.0 + tol {
        format!(
            "the generated code does {:.1}% more estimated cycles on {phase} ({figures}), beyond {tol_words}",
            (change - 1.0) * 100.0
        )
    } else if change < 1.0 / (1.0 + tol) {
        format!(
            "the generated code does {:.1}% fewer estimated cycles on {phase} ({figures}), beyond {tol_words}",
            (1.0 - change) * 100.0
        )
    } else {
        format!(
            "no change of the generated code beyond {tol_words} on {phase}: estimated cycles {} ({figures})",
            pct(change)
        )
    };
    CodeVerdict {
        row: cell_schema::RowName::from(name),
        phase: phase.clone(),
        status,
        old: round(old.cycles),
        new: round(new.cycles),
        change: round(change),
        tolerance: round(tol),
        spread: round(spread),
        instructions_change: round(instructions_change),
        message: format!("code {} {} {name} {phase}: {what}", status.word(), cell),
    }
}

/// Ratios to 6 significant decimals, so gate.json reads the same on every machine.
fn round(x: f64) -> f64 {
    (x * 1e6).round() / 1e6
}
