//! The tooth: its rows built and timed in every job that can build them, and its ratio
//! judged, so every job proves the harness can see a known difference.

use super::{
    Cell, Clock, Event, GateConfig, Outcome, Path, Plan, Probes, Role, RowName, Skipped, Timed,
    Toolchain, Tooth, build_row, protocol,
};

/// The tooth's rows are timed in every job that can build them, so every job proves the
/// harness can see a known difference.
#[expect(
    clippy::too_many_arguments,
    reason = "the build stage's state, handed on as it stands"
)]
pub(super) fn tooth_rows(
    plan: &Plan,
    tc: &Toolchain,
    probes: &Probes,
    out: &Path,
    default_clock: Clock,
    timed: &mut Vec<Timed>,
    skipped: &[Skipped],
    on: &mut dyn FnMut(Event),
) {
    let ref_tc = &plan.reference().toolchain;
    for tooth_row in [&plan.tooth.slow, &plan.tooth.fast] {
        if timed.iter().any(|t| &t.name == tooth_row) || skipped.iter().any(|s| &s.row == tooth_row)
        {
            continue;
        }
        let row = &plan.rows[tooth_row];
        let probe = if &row.toolchain == ref_tc {
            Some(&probes.reference)
        } else {
            probes
                .job
                .as_ref()
                .ok()
                .filter(|_| row.toolchain == tc.name)
        };
        if let Some(probe) = probe {
            on(Event::Building(tooth_row.clone()));
            if let Ok(build) = build_row(plan, row, probe, out) {
                let mut t = Timed::new(row, Role::Tooth, build, probe, plan, default_clock);
                t.phases = vec![plan.settings.tooth_phase.clone()];
                t.clock = default_clock;
                timed.push(t);
            }
        }
    }
}

pub(super) fn tooth(
    plan: &Plan,
    cell: &Cell,
    timed: &[Timed],
    outcome: &Outcome,
    clock: Clock,
    config: &GateConfig,
) -> Option<Tooth> {
    let idx = |n: &RowName| timed.iter().position(|t| &t.name == n);
    let (slow, fast) = (idx(&plan.tooth.slow), idx(&plan.tooth.fast));
    // A job that could not even try to build the tooth's rows has no tooth; one that tried and
    // failed has a tooth with no ratio, which fails.
    let buildable = |n: &RowName| {
        plan.rows[n].toolchain == plan.reference().toolchain
            || timed
                .iter()
                .any(|t| t.row.toolchain == plan.rows[n].toolchain)
    };
    if !(buildable(&plan.tooth.slow) && buildable(&plan.tooth.fast)) {
        return None;
    }
    let phase = plan.settings.tooth_phase.clone();
    let ratio = match (slow, fast) {
        (Some(s), Some(f)) => protocol::ratio_ci(
            &protocol::ratio_of_ratios(outcome, s, f, &phase, clock),
            plan.settings.ci_level,
        ),
        _ => None,
    };
    Some(Tooth {
        slow: plan.tooth.slow.clone(),
        fast: plan.tooth.fast.clone(),
        phase,
        clock,
        floor: config.floor(&cell.arch),
        ok: cell_verdict::tooth_ok(ratio.as_ref(), &cell.arch, config),
        ratio,
    })
}
