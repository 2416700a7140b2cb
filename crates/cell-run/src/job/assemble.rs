//! The job's result, put together from what its stages produced.

use std::collections::BTreeMap;

use cell_model::{Cell, Plan, Toolchain};
use cell_schema::{
    Clock, Installed, JobCost, JobKind, JobResult, Protocol, RowName, SCHEMA_VERSION,
    ToolchainName, round_ratio,
};

use super::{Baseline, Built, JobOptions, Judged, Probes, Timed, Timing};
use crate::protocol::{Outcome, Params};

/// What the job's stages produced, for the result.
pub(super) struct Assembly {
    pub(super) probes: Probes,
    pub(super) installed: BTreeMap<ToolchainName, Installed>,
    pub(super) built: Built,
    pub(super) timed: Timing,
    pub(super) judged: Judged,
    /// The instruction lane, when `INSTRUCTIONS=on`.
    pub(super) lane: Option<crate::instructions::Lane>,
    pub(super) default_clock: Clock,
    /// Why this clock, when `CLOCK` was `auto`.
    pub(super) clock_chosen: Option<String>,
    pub(super) cost: JobCost,
    pub(super) started_at: String,
    pub(super) baseline: Baseline,
    /// The previous release, when the job tried to time it.
    pub(super) previous: Option<cell_schema::PreviousRelease>,
}

pub(super) fn assemble(
    plan: &Plan,
    cell: &Cell,
    tc: &Toolchain,
    opts: &JobOptions,
    a: Assembly,
) -> JobResult {
    let ref_tc = plan.reference_toolchain();
    let mut versions = a.probes.reference.versions.clone();
    if let Ok(p) = &a.probes.job {
        versions.extend(p.versions.clone());
    }
    let (params, outcome) = (&a.timed.params, &a.timed.outcome);
    let mut rows = a.judged.rows;
    let instructions = a.lane.map(|lane| lane.apply(&mut rows));
    JobResult {
        schema_version: SCHEMA_VERSION,
        kind: JobKind::Job,
        cell: cell.info(),
        toolchain: tc.name.clone(),
        machine: a.timed.machine.clone(),
        pins: pins(plan, tc, ref_tc),
        versions,
        subject: a.probes.subject.clone(),
        previous: a.previous,
        installed: a.installed,
        protocol: Protocol {
            reference: plan.reference().name.clone(),
            control: RowName::from(cell_model::CONTROL_ROW),
            phases: plan.settings.phases.clone(),
            warmup_rounds: params.warmup,
            measured_rounds: outcome.measured_rounds,
            min_rounds: params.min_rounds,
            max_rounds: params.max_rounds,
            step_rounds: params.step,
            adaptive: opts.reps.is_none(),
            stopped: outcome.stopped,
            seed: opts.seed,
            rows_per_reference: params.rows_per_reference,
            tolerance: plan.settings.tolerance,
            ci_target: plan.settings.ci_target,
            ci_level: plan.settings.ci_level,
            contention_max: plan.settings.contention_max,
            time_cap_s: plan.settings.time_cap_s,
            default_clock: a.default_clock,
            clock_chosen: a.clock_chosen,
            mode: params.mode,
            mode_chosen: a.timed.mode_chosen.clone(),
            futility: futility(
                params,
                outcome,
                &a.built.timed,
                a.baseline.found.as_ref().map(|b| b.run.as_str()),
            ),
            baseline: a.baseline.found.as_ref().map(|b| b.run.clone()),
            no_baseline: a.baseline.note.clone(),
            scripted: a.timed.scripted,
        },
        rows,
        skipped: a.built.skipped,
        tooth: a.judged.tooth,
        contention: a.judged.contention,
        verdict: a.judged.verdict,
        started_at: a.started_at,
        github: github_context(),
        cost: a.cost,
        instructions,
    }
}

/// The widest projection of a unit that stopped by futility, in wire form.
fn futility(
    params: &Params,
    outcome: &Outcome,
    timed: &[Timed],
    baseline: Option<&str>,
) -> Option<cell_schema::Futility> {
    let (unit, phase, clock, p) = outcome.futility.as_ref()?;
    let stop = outcome.stops.get(&(*unit, phase.clone()));
    let rounds = stop.map_or(outcome.measured_rounds, |s| s.rounds);
    Some(cell_schema::Futility {
        rounds,
        max_rounds: params.max_rounds,
        row: timed[*unit].name.clone(),
        phase: phase.clone(),
        clock: *clock,
        half_width: round_ratio(p.half_width),
        projected: round_ratio(p.projected),
        target: round_ratio(p.target),
        margin: params.futility_margin,
        against: stop
            .filter(|s| s.against_baseline)
            .and(baseline)
            .map(str::to_owned),
    })
}

/// The GitHub Actions run from the runner's environment, when this job runs in one.
pub(crate) fn github_context() -> Option<cell_schema::GithubJob> {
    if std::env::var("GITHUB_ACTIONS").as_deref() != Ok("true") {
        return None;
    }
    let var = |k: &str| std::env::var(k).unwrap_or_default();
    Some(cell_schema::GithubJob {
        repository: var("GITHUB_REPOSITORY"),
        run_id: cell_schema::RunId(var("GITHUB_RUN_ID").parse().unwrap_or(0)),
        run_attempt: var("GITHUB_RUN_ATTEMPT").parse().unwrap_or(1),
        sha: var("GITHUB_SHA"),
    })
}

fn pins(plan: &Plan, tc: &Toolchain, ref_tc: &Toolchain) -> BTreeMap<String, String> {
    let mut p = plan.pins(ref_tc);
    p.extend(plan.pins(tc));
    p
}
