//! `cell calibrate`: the A/A noise of this machine, the reference against its copy.

use std::collections::BTreeMap;
use std::path::Path;

use cell_model::{Cell, Plan};
use cell_schema::{Build, Clock, Phase, Role, RowName, SCHEMA_VERSION, round_ratio};

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
    let mut engine = Engine::with_options(&scratch, &EngineOptions::from_settings(&plan.settings))
        .map_err(io("starting the timing engine"))?;
    let params = Params {
        phases: phases.clone(),
        warmup: plan.settings.drop,
        min_rounds: rounds,
        max_rounds: rounds,
        step: 1,
        ci_target: 0.0,
        ci_level: plan.settings.ci_level,
        rows_per_reference: 1,
        time_cap_s: f64::INFINITY,
        seed,
        mode: cell_schema::ProtocolMode::Sequential,
        futility_margin: 0.0,
    };
    let units: Vec<Unit> = timed
        .iter()
        .map(|t| Unit {
            phases: t.phases.clone(),
            clock: t.clock,
        })
        .collect();
    on(Event::Timing { units: 2 });
    let outcome = {
        let mut exec = RealExecutor {
            engine: &mut engine,
            timed: &timed,
            plan,
            scratch: &scratch,
        };
        protocol::run(&units, &params, &mut exec, &mut |r| on(Event::Round(r)))
    };
    let (pinned, timing) = (engine.pinned_cpu(), engine.timing());
    drop(engine);
    let (by_phase, quieter_clock) = noise(&outcome, &phases, plan.settings.ci_level);
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
        rounds: outcome.measured_rounds,
        seed,
        phases: by_phase,
        quieter_clock,
        duet: None,
        quieter_protocol: None,
    })
}

/// Per phase and clock, the control's (unit 1's) noise; and the quieter clock overall.
fn noise(
    outcome: &protocol::Outcome,
    phases: &[Phase],
    level: f64,
) -> (BTreeMap<Phase, BTreeMap<Clock, cell_schema::Noise>>, Clock) {
    let mut by_phase = BTreeMap::new();
    let mut totals = [(Clock::Cpu, 0.0), (Clock::Wall, 0.0)];
    for p in phases {
        let mut clocks = BTreeMap::new();
        for (clock, total) in &mut totals {
            let rs = protocol::ratios(&outcome.runs, outcome.warmup, 1, p, *clock);
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
    let quieter_clock = if totals[0].1 <= totals[1].1 {
        Clock::Cpu
    } else {
        Clock::Wall
    };
    (by_phase, quieter_clock)
}
