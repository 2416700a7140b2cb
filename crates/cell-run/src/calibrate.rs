//! `cell calibrate`: the A/A noise of this machine, the reference against its copy.

use std::collections::BTreeMap;
use std::path::Path;

use cell_model::{Cell, Plan};
use cell_schema::{Build, Clock, Phase, ProtocolMode, Role, RowName, SCHEMA_VERSION, round_ratio};

use crate::build::{build_row, copy_control};
use crate::job::{Event, JobError, RealExecutor, Timed, io};
use crate::protocol::{self, Params, Unit};
use crate::timing::{Engine, EngineOptions};
use crate::tools;

/// `cell calibrate`: the A/A noise of this machine. Times the reference against its
/// byte-identical control for `rounds` measured rounds on every phase and reports, per phase
/// and clock, the control's ratio, the CI half-width (the smallest change this machine can
/// call at this budget) and the MAD of the per-round ratios.
pub fn calibrate(
    plan: &Plan,
    out: &Path,
    rounds: u32,
    seed: u64,
    on: &mut dyn FnMut(Event),
) -> Result<cell_schema::Calibration, JobError> {
    let cell = Cell::local();
    let out = std::path::absolute(out).map_err(io(format!("resolving {}", out.display())))?;
    let reference = plan.reference().clone();
    let probe =
        tools::probe(plan.reference_toolchain()).map_err(|missing| JobError::ReferenceMissing {
            row: reference.name.clone(),
            missing,
        })?;
    on(Event::Building(reference.name.clone()));
    std::fs::create_dir_all(out.join("build").join("bin"))
        .map_err(io(format!("creating {}", out.display())))?;
    let build =
        build_row(plan, &reference, &probe, &out).map_err(|f| JobError::ReferenceBuild {
            row: reference.name.clone(),
            code: f.exit_code,
            tail: f.log_tail.join("\n"),
        })?;
    let ctl_dir = out.join("build").join("ctl");
    std::fs::create_dir_all(&ctl_dir).map_err(io(format!("creating {}", ctl_dir.display())))?;
    let to = ctl_dir.join(reference.name.as_str());
    let control = copy_control(&build, &to)
        .map_err(io(format!("copying the reference to {}", to.display())))?;
    let phases = plan.settings.phases.clone();
    let mk = |name: &str, role, b: &Build| Timed {
        name: RowName::from(name),
        role,
        row: reference.clone(),
        build: b.clone(),
        phases: phases.clone(),
        clock: Clock::Cpu,
        paths: probe.paths.clone(),
    };
    let timed = vec![
        mk(reference.name.as_str(), Role::Reference, &build),
        mk(cell_model::CONTROL_ROW, Role::Control, &control),
    ];
    let scratch = out.join("build").join("run");
    std::fs::create_dir_all(&scratch).map_err(io(format!("creating {}", scratch.display())))?;
    let machine = crate::facts::machine(None);
    // Both protocols where the machine has two CPUs to time on.
    let duet = crate::cpus::allowed().len() >= 2;
    let options = EngineOptions {
        cpus: if duet { 2 } else { 1 },
        ..EngineOptions::from_settings(&plan.settings)
    };
    let mut engine =
        Engine::with_options(&scratch, &options).map_err(io("starting the timing engine"))?;
    let params = Params {
        phases: phases.clone(),
        warmup: plan.settings.drop,
        min_rounds: 2,
        max_rounds: 2,
        step: 1,
        ci_target: 0.0,
        ci_level: plan.settings.ci_level,
        rows_per_reference: 1,
        time_cap_s: f64::INFINITY,
        seed,
        mode: ProtocolMode::Sequential,
        futility_margin: 0.0,
        tolerance: plan.settings.tolerance,
        settle_level: plan.settings.ci_level,
        fail_level: plan.settings.ci_level,
    };
    let units: Vec<Unit> = timed
        .iter()
        .map(|t| Unit::new(t.phases.clone(), t.clock, true))
        .collect();
    on(Event::Timing { units: 2 });
    let outcomes = {
        let mut exec = RealExecutor {
            engine: &mut engine,
            timed: &timed,
            plan,
            scratch: &scratch,
        };
        let modes: &[ProtocolMode] = if duet {
            &[ProtocolMode::Sequential, ProtocolMode::Duet]
        } else {
            &[ProtocolMode::Sequential]
        };
        alternate(&units, &params, rounds, modes, &mut exec, on)
    };
    let (pinned, timing) = (engine.pinned_cpu(), engine.timing());
    drop(engine);
    let (by_phase, quieter_clock, duet, quieter_protocol) =
        summarize(plan, &cell, &outcomes, &phases);
    let sequential = &outcomes[&ProtocolMode::Sequential];
    Ok(cell_schema::Calibration {
        schema_version: SCHEMA_VERSION,
        kind: cell_schema::CalibrationKind::Calibration,
        cell: cell.info(),
        machine: cell_schema::Machine {
            pinned_cpu: pinned,
            timing,
            ..machine
        },
        measured_at: cell_schema::time::format_utc(cell_schema::time::now_secs()),
        rounds: sequential.measured_rounds,
        seed,
        phases: by_phase,
        quieter_clock,
        duet,
        quieter_protocol,
    })
}

/// Each protocol of `modes` in turn, two measured rounds at a time, until each has `rounds`
/// (rounded up to even), so a slow drift of the host over the calibration hits them alike;
/// each protocol's runs gathered as one outcome (warm-up in its first block only).
fn alternate(
    units: &[Unit],
    params: &Params,
    rounds: u32,
    modes: &[ProtocolMode],
    exec: &mut dyn protocol::Executor,
    on: &mut dyn FnMut(Event),
) -> BTreeMap<ProtocolMode, protocol::Outcome> {
    let blocks = rounds.div_ceil(2);
    let per_block = u32::try_from(modes.len()).unwrap_or(1) * 2;
    let planned = blocks * per_block + params.warmup * u32::try_from(modes.len()).unwrap_or(1);
    let mut done = 0;
    let mut out: BTreeMap<ProtocolMode, protocol::Outcome> = BTreeMap::new();
    for block in 0..blocks {
        let mut order = modes.to_vec();
        if block % 2 == 1 {
            order.reverse();
        }
        for mode in order {
            let p = Params {
                warmup: if block == 0 { params.warmup } else { 0 },
                seed: params.seed.wrapping_add(u64::from(block)),
                mode,
                ..params.clone()
            };
            let got = protocol::run(units, &p, exec, &mut |r| {
                on(Event::Round(protocol::RoundDone {
                    done: done + r.done,
                    planned,
                }));
            });
            done += p.warmup + got.measured_rounds;
            match out.get_mut(&mode) {
                None => {
                    out.insert(mode, got);
                }
                Some(acc) => {
                    let offset = acc.warmup + acc.measured_rounds;
                    acc.runs.extend(got.runs.into_iter().map(|mut r| {
                        r.round += offset;
                        r
                    }));
                    acc.measured_rounds += got.measured_rounds;
                }
            }
        }
    }
    out
}

/// Per phase and clock noise of each protocol, the quietest clock (sequential), and the
/// quieter protocol on the clock verdicts will read.
type Summary = (
    BTreeMap<Phase, BTreeMap<Clock, cell_schema::Noise>>,
    Clock,
    Option<BTreeMap<Phase, BTreeMap<Clock, cell_schema::Noise>>>,
    Option<ProtocolMode>,
);

/// The protocols are compared by the half-width each would reach in a job's budget
/// (`REPS_MAX` measured rounds: as many ratios sequentially, half as many in a duet, which
/// pairs rounds), projected from its spread here: their intervals at calibration hold
/// different numbers of ratios and cover differently, so they are not compared as they are.
fn summarize(
    plan: &Plan,
    cell: &Cell,
    outcomes: &BTreeMap<ProtocolMode, protocol::Outcome>,
    phases: &[Phase],
) -> Summary {
    let level = plan.settings.ci_level;
    let rounds = usize::try_from(plan.settings.max_rounds()).unwrap_or(usize::MAX);
    let sequential = &outcomes[&ProtocolMode::Sequential];
    let (by_phase, quieter_clock) = noise(sequential, phases, level);
    let duet = outcomes.get(&ProtocolMode::Duet);
    let verdict_clock = plan.settings.clock(&cell.os).unwrap_or(quieter_clock);
    let quieter_protocol = duet.map(|d| {
        let projected = |o: &protocol::Outcome, n: usize| -> f64 {
            phases
                .iter()
                .map(|p| {
                    let rs = protocol::ratios(&o.runs, o.warmup, 1, p, verdict_clock, o.mode);
                    cell_stats::projected_rel_half_width(&rs, n, level)
                })
                .sum()
        };
        if projected(d, rounds.div_ceil(2)) < projected(sequential, rounds) {
            ProtocolMode::Duet
        } else {
            ProtocolMode::Sequential
        }
    });
    let duet = duet.map(|o| noise(o, phases, level).0);
    (by_phase, quieter_clock, duet, quieter_protocol)
}

/// Per phase and clock, the control's (unit 1's) noise; and the quietest clock overall.
fn noise(
    outcome: &protocol::Outcome,
    phases: &[Phase],
    level: f64,
) -> (BTreeMap<Phase, BTreeMap<Clock, cell_schema::Noise>>, Clock) {
    let mut by_phase = BTreeMap::new();
    // Every metric `CLOCK=auto` may choose, in key order.
    let mut totals: Vec<(Clock, f64)> = Clock::ALL
        .into_iter()
        .filter(|m| m.info().auto)
        .map(|m| (m, 0.0))
        .collect();
    for p in phases {
        let mut clocks = BTreeMap::new();
        for (clock, total) in &mut totals {
            let rs = protocol::ratios(&outcome.runs, outcome.warmup, 1, p, *clock, outcome.mode);
            let Some(ratio) = protocol::ratio_ci(&rs, level) else {
                continue;
            };
            let half_width = round_ratio((ratio.hi - ratio.lo) / 2.0 / ratio.median);
            let mad = round_ratio(cell_stats::mad(&rs) / ratio.median);
            *total += half_width;
            clocks.insert(
                *clock,
                cell_schema::Noise {
                    ratio,
                    half_width,
                    mad,
                },
            );
        }
        by_phase.insert(p.clone(), clocks);
    }
    // The first of the quietest wins a tie, in key order: cpu before wall before user.
    let quieter_clock = totals
        .iter()
        .fold(totals[0], |best, t| if t.1 < best.1 { *t } else { best })
        .0;
    (by_phase, quieter_clock)
}
