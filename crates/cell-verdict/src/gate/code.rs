//! The code verdict: did the generated code change? Each row's estimated cycles (the exact
//! lane, docs/protocol.md) as a ratio to its job's reference, this run's over the baseline's.
//! The ratio cancels what the row and its reference share — valgrind's version, the
//! environment's size, the C library — so a move is the row's code. Beyond
//! `CYCLES_TOLERANCE` (widened by the spread of repeated runs) it FAILs when it grew and
//! PASSes with a notice when it shrank; the time verdicts are judged beside it, unchanged.

use cell_schema::{CellResult, CodeVerdict, GateStatus, Phase, PhaseResult};

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
    own: bool,
}

impl Side {
    /// Over the reference's counts, or the row's own when `own` (the reference's binary
    /// changed, so its counts would move every ratio).
    fn of(row: &PhaseResult, reference: &PhaseResult, own: bool) -> Option<Self> {
        let ratio = |a: Option<u64>, b: Option<u64>| match (a, b) {
            (Some(a), Some(_)) if own && a > 0 => Some(a as f64),
            (Some(a), Some(b)) if a > 0 && b > 0 => Some(a as f64 / b as f64),
            _ => None,
        };
        let spread = |p: &PhaseResult| p.exact_repeat.as_ref().map_or(0.0, |r| r.spread);
        Some(Self {
            cycles: ratio(row.estimated_cycles, reference.estimated_cycles)?,
            instructions: ratio(row.instructions, reference.instructions)?,
            spread: spread(row) + spread(reference),
            own,
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
    let mut reference_changed = std::collections::BTreeSet::new();
    for (tc, job) in &cell.jobs {
        let (new, old) = (
            job.instructions.as_ref(),
            base.jobs.get(tc).and_then(|j| j.instructions.as_ref()),
        );
        let cache = |l: Option<&cell_schema::InstructionLane>| l.and_then(|l| l.cache.clone());
        let (new_cache, old_cache) = (cache(new), cache(old));
        if new_cache != old_cache {
            let caches = |c: Option<&cell_schema::CacheRecord>| {
                c.map_or_else(
                    || "none recorded".to_owned(),
                    |c| format!("I1 {} D1 {} LL {}", c.i1, c.d1, c.ll),
                )
            };
            code.notices.push(format!(
                "code: job {tc} simulated other caches than {base_name} ({} → {}): its code verdicts are not given, this run is the next one's baseline",
                caches(old_cache.as_ref()),
                caches(new_cache.as_ref())
            ));
            unjudged.insert(tc.clone());
        } else if new.map(|l| &l.version) != old.map(|l| &l.version)
            && let (Some(a), Some(b)) = (
                new.and_then(|l| l.version.as_ref()),
                old.and_then(|l| l.version.as_ref()),
            )
        {
            code.notices.push(format!(
                "code: job {tc} ran {a:?}, {base_name} ran {b:?}: each ratio to the reference cancels the change"
            ));
        }
    }
    for (name, row) in &cell.rows {
        // The reference (every ratio's denominator) and the control, by the names the job
        // gave them: a row that only calls itself so is judged.
        let denominator = cell
            .jobs
            .get(&row.job)
            .is_some_and(|j| *name == j.protocol.reference || *name == j.protocol.control);
        if denominator || unjudged.contains(&row.job) {
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
        // Another reference binary (its compiler changed on the runner) would move every
        // ratio: the row's own counts are compared instead, which the environment's size
        // moves by some hundreds of instructions at most.
        let own = new_ref.build.sha256 != old_ref.build.sha256;
        if own && reference_changed.insert(row.job.clone()) {
            code.notices.push(format!(
                "code: job {}'s reference binary is not the one of {base_name}: its rows' code verdicts compare their own estimated cycles, not their ratio to it",
                row.job
            ));
        }
        for (phase, pr) in &row.row.phases {
            let new = new_ref.phases.get(phase).and_then(|r| Side::of(pr, r, own));
            let old = old
                .row
                .phases
                .get(phase)
                .zip(old_ref.phases.get(phase))
                .and_then(|(p, r)| Side::of(p, r, own));
            let (new, old) = match (new, old) {
                (Some(new), Some(old)) => (new, old),
                (None, Some(_)) => {
                    code.notices.push(format!(
                        "code: row {name} on {phase} was counted in {base_name} but not in this run (see the row's exact-lane reason, or its reference's): no code verdict"
                    ));
                    continue;
                }
                _ => continue,
            };
            let (v, shrank) = judge(
                cell.cell.id.as_str(),
                name.as_str(),
                phase,
                &new,
                &old,
                tolerance,
            );
            if shrank {
                code.notices.push(format!("code: {}", v.message));
            }
            code.verdicts.push(v);
        }
    }
    code
}

/// The most spread of repeated runs (all four counts' together) a code verdict stands: the
/// runtimes measured here moved by hundredths of a percent (Go's fib 0.004%); a spread beyond
/// this widens the band past what says anything about the code, and a file that claims it
/// must not buy a PASS.
const SPREAD_MAX: f64 = 0.02;

/// One row and phase: the one rule of the code verdict; and whether it shrank beyond the
/// tolerance (a PASS with a notice).
fn judge(
    cell: &str,
    name: &str,
    phase: &Phase,
    new: &Side,
    old: &Side,
    tolerance: f64,
) -> (CodeVerdict, bool) {
    let change = new.cycles / old.cycles;
    let spread = new.spread + old.spread;
    let tol = tolerance + spread;
    // Beyond even the widened band is a FAIL; within it, a spread too wide to stand for the
    // code makes no call rather than a PASS.
    let status = if change > 1.0 + tol {
        GateStatus::Fail
    } else if spread > SPREAD_MAX {
        GateStatus::Inconclusive
    } else {
        GateStatus::Pass
    };
    let instructions_change = new.instructions / old.instructions;
    let pct = |x: f64| format!("{:+.1}%", (x - 1.0) * 100.0);
    // A spread too small to show in the band's figures is not said.
    let (base, widened) = (cell_schema::percent(tolerance), cell_schema::percent(tol));
    let tol_words = if base == widened {
        format!("CYCLES_TOLERANCE ±{base}%")
    } else {
        format!("CYCLES_TOLERANCE ±{base}% widened by the runs' spread to ±{widened}%")
    };
    let figures = if new.own {
        format!(
            "{:.0} → {:.0}, the row's own: its reference's binary changed; instructions {}",
            old.cycles,
            new.cycles,
            pct(instructions_change)
        )
    } else {
        format!(
            "{:.4} → {:.4} of the reference's, instructions {}",
            old.cycles,
            new.cycles,
            pct(instructions_change)
        )
    };
    let shrank = status == GateStatus::Pass && change < 1.0 / (1.0 + tol);
    let what = if status == GateStatus::Inconclusive {
        format!(
            "the lane's repeated runs spread ±{}% on {phase}, more than the ±{}% a code verdict stands: no call; estimated cycles {} ({figures})",
            cell_schema::percent(spread),
            cell_schema::percent(SPREAD_MAX),
            pct(change)
        )
    } else if change > 1.0 + tol {
        format!(
            "the generated code does {:.1}% more estimated cycles on {phase} ({figures}), beyond {tol_words}",
            (change - 1.0) * 100.0
        )
    } else if shrank {
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
    let v = CodeVerdict {
        row: cell_schema::RowName::from(name),
        phase: phase.clone(),
        status,
        old: if new.own {
            old.cycles
        } else {
            round(old.cycles)
        },
        new: if new.own {
            new.cycles
        } else {
            round(new.cycles)
        },
        own_counts: new.own,
        change: round(change),
        tolerance: round(tol),
        spread: round(spread),
        instructions_change: round(instructions_change),
        message: format!("code {} {} {name} {phase}: {what}", status.word(), cell),
    };
    (v, shrank)
}

/// Ratios to 6 significant decimals, so gate.json reads the same on every machine.
fn round(x: f64) -> f64 {
    (x * 1e6).round() / 1e6
}
