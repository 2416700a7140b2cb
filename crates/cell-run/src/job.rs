//! One job, `cell run`: probe, build, time, judge, assemble. The job's result is returned as
//! data; the caller renders and writes the job dir.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use cell_model::{Cell, Plan, Row, Toolchain, Vars};
use cell_schema::{
    Build, Clock, Contention, Installed, JobCost, JobResult, Machine, Phase, PhaseResult, Role,
    RowName, RowResult, SkipReason, Skipped, Stopped, ToolName, ToolchainName, Tooth, Verdict,
    round_ratio, round_time,
};
use cell_stats::median;
use cell_verdict::{CalibrationFile, GateConfig, WorkloadJob};

use crate::build::{BuildFailure, build_row, copy_control};
use crate::capture;
use crate::installed;
use crate::protocol::{self, Executor, Outcome, Params, Sample, Unit};
use crate::scripted::{ScriptedExecutor, ScriptedTimings};
use crate::timing::{Engine, EngineOptions, ExitKind};
use crate::tools::{self, Probed};

mod assemble;
mod baseline;
mod choice;
mod execute;
mod previous;
mod tooth;

pub(crate) use assemble::github_context;
use assemble::{Assembly, assemble};
pub use baseline::BaselineSource;
use baseline::{Baseline, job_baseline};
use choice::calibrated_clock;
pub(crate) use choice::resolve_mode;
pub(crate) use execute::RealExecutor;
use tooth::{tooth, tooth_rows};

/// What a job needs besides the plan.
#[derive(Clone, Debug)]
pub struct JobOptions {
    /// The job dir (made absolute by the caller or here).
    pub out: PathBuf,
    /// Fixed measured rounds; `None` = adaptive.
    pub reps: Option<u32>,
    /// Seed of the order.
    pub seed: u64,
    /// Timings from a file instead of timed processes (the test suite's executor).
    pub scripted: Option<ScriptedTimings>,
    /// Where verified tarball trees are cached, and which this process has checked.
    pub cache: crate::cache::Cache,
    /// Install a tarball toolchain even when its tools are on PATH (a workflow job: the
    /// pinned release, never what the image happens to carry). The release under test is
    /// always installed.
    pub tarballs_always: bool,
    /// Where the job reads the baseline the gate will use, so each row's rounds stop once
    /// its verdict against it is settled.
    pub baseline: BaselineSource,
    /// The checkout whose git history holds the baseline run's commit: when the release under
    /// test is not the one the baseline recorded, the job installs that one by the commit's
    /// pins and times its rows beside the new release's. `None`: never.
    pub previous_root: Option<PathBuf>,
}

/// Something the job reports as it goes.
#[derive(Clone, Debug)]
pub enum Event {
    /// A row is being built.
    Building(RowName),
    /// A row was skipped.
    Skipped(Skipped),
    /// Timing starts with this many units.
    Timing {
        /// How many units (rows, reference, control, tooth rows) each round times.
        units: usize,
    },
    /// A round finished.
    Round(protocol::RoundDone),
    /// A cached tree differed from its manifest: it was removed and installed again.
    Reinstalled {
        /// The toolchain.
        toolchain: ToolchainName,
        /// The tree that was removed.
        dir: PathBuf,
        /// How it differed.
        why: String,
    },
}

/// A job that could not run at all (exit 2).
#[derive(Debug, thiserror::Error)]
pub enum JobError {
    /// Unknown cell or toolchain.
    #[error("{0}")]
    Usage(cell_model::LookupError),
    /// The reference compiler is missing.
    #[error("the reference row `{row}` cannot be built: {missing}")]
    ReferenceMissing {
        /// The reference row.
        row: RowName,
        /// What is missing.
        missing: tools::Missing,
    },
    /// The reference failed to build.
    #[error("the reference row `{row}` failed to build (exit {code:?}):\n{tail}")]
    ReferenceBuild {
        /// The reference row.
        row: RowName,
        /// The build command's exit code, when it exited.
        code: Option<i32>,
        /// The last lines the build printed.
        tail: String,
    },
    /// A tarball could not be installed; a digest that is not the release's is integrity.
    #[error(transparent)]
    Install(#[from] crate::install::InstallError),
    /// A file or process error.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The OS error.
        source: std::io::Error,
    },
}

pub(crate) fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> JobError {
    let what = what.into();
    move |source| JobError::Io { what, source }
}

/// Runs one (cell, toolchain) job and returns its result.
pub fn run_job(
    plan: &Plan,
    cell_label: &str,
    toolchain: &str,
    opts: &JobOptions,
    on: &mut dyn FnMut(Event),
) -> Result<JobResult, JobError> {
    let t0 = Instant::now();
    let started_at = cell_schema::time::format_utc(cell_schema::time::now_secs());
    let cell = plan.cell(cell_label).map_err(JobError::Usage)?;
    let tc = plan.toolchain(toolchain).map_err(JobError::Usage)?.clone();
    let out =
        std::path::absolute(&opts.out).map_err(io(format!("resolving {}", opts.out.display())))?;
    // Installs and verifies first: a tarball that is not the release's leaves nothing behind.
    let probed = probe(plan, &cell, &tc, opts, on)?;
    let bin_dir = out.join("build").join("bin");
    std::fs::create_dir_all(&bin_dir).map_err(io(format!("creating {}", bin_dir.display())))?;
    let installed = installed_sizes(plan, &tc, &probed);
    let probe_s = t0.elapsed().as_secs_f64();
    let (default_clock, clock_chosen) = match plan.settings.clock(&cell.os) {
        Some(clock) => (clock, None),
        None => calibrated_clock(plan, &cell),
    };
    let baseline = job_baseline(plan, &cell, opts);
    let mut prev = previous::previous_release(
        plan,
        &cell,
        &tc,
        opts,
        &baseline,
        probed.subject.as_ref(),
        on,
    );
    let t_build = Instant::now();
    let mut built = build(plan, &tc, &probed, &out, default_clock, on)?;
    if let Some(p) = prev.as_mut() {
        previous::previous_rows(plan, p, &out, &mut built.timed, on);
    }
    let build_s = t_build.elapsed().as_secs_f64();
    let t_time = Instant::now();
    let timed = time(plan, &cell, &built.timed, opts, &out, &baseline, on)?;
    let timing_s = t_time.elapsed().as_secs_f64();
    let judged = judge(plan, &cell, &built.timed, &timed.outcome, default_clock);
    let lane = crate::instructions::job_lane(plan, &cell, &built.timed, &out);
    let cost = JobCost {
        probe_s: round_time(probe_s),
        build_s: round_time(build_s),
        timing_s: round_time(timing_s),
        exact_s: lane
            .as_ref()
            .filter(|l| l.record.skipped.is_none())
            .map(|l| l.record.seconds),
        total_s: round_time(t0.elapsed().as_secs_f64()),
    };
    Ok(assemble(
        plan,
        &cell,
        &tc,
        opts,
        Assembly {
            probes: probed,
            installed,
            built,
            timed,
            judged,
            lane,
            default_clock,
            clock_chosen,
            cost,
            started_at,
            baseline,
            previous: prev.map(|p| p.record),
        },
    ))
}

/// The reference's toolchain (which must be here), the job's (which may be absent) and the
/// release under test, installed and verified.
struct Probes {
    reference: Probed,
    job: Result<Probed, tools::Missing>,
    subject: Option<cell_schema::Subject>,
}

/// A toolchain's tools: from its verified tarball tree when it is the subject, when the job
/// asks for tarballs always, or when they are not on PATH; else from PATH.
fn probe_toolchain(
    plan: &Plan,
    cell: &Cell,
    tc: &Toolchain,
    opts: &JobOptions,
    on: &mut dyn FnMut(Event),
) -> Result<
    (
        Result<Probed, tools::Missing>,
        Option<crate::install::Installed>,
    ),
    JobError,
> {
    if !matches!(tc.install, cell_model::Install::Tarball(_)) {
        return Ok((tools::probe(tc), None));
    }
    if !tc.subject
        && !opts.tarballs_always
        && let Ok(p) = tools::probe(tc)
    {
        return Ok((Ok(p), None));
    }
    let installed = crate::install::install(plan, tc, &cell.os, &cell.arch, &opts.cache)?;
    announce_reinstall(&tc.name, &installed, on);
    Ok((tools::probe_in(tc, Some(&installed.bin)), Some(installed)))
}

/// Tells the caller a cached tree was found changed and installed again, when it was.
fn announce_reinstall(
    toolchain: &ToolchainName,
    installed: &crate::install::Installed,
    on: &mut dyn FnMut(Event),
) {
    if let Some(why) = &installed.replaced {
        on(Event::Reinstalled {
            toolchain: toolchain.clone(),
            dir: installed.dir.clone(),
            why: why.clone(),
        });
    }
}

fn probe(
    plan: &Plan,
    cell: &Cell,
    tc: &Toolchain,
    opts: &JobOptions,
    on: &mut dyn FnMut(Event),
) -> Result<Probes, JobError> {
    let ref_tc = plan.reference_toolchain();
    let (reference, ref_install) = probe_toolchain(plan, cell, ref_tc, opts, on)?;
    let reference = reference.map_err(|missing| JobError::ReferenceMissing {
        row: plan.reference().name.clone(),
        missing,
    })?;
    let (job, job_install) = if tc.name == ref_tc.name {
        (Ok(reference.clone()), ref_install.clone())
    } else {
        probe_toolchain(plan, cell, tc, opts, on)?
    };
    let subject = match plan.subject() {
        None => None,
        Some(s) if s.name == tc.name => job_install.map(|i| {
            let versions = job.as_ref().map(|p| p.versions.clone()).unwrap_or_default();
            crate::install::subject_record(s, &i, &versions)
        }),
        Some(s) if s.name == ref_tc.name => {
            ref_install.map(|i| crate::install::subject_record(s, &i, &reference.versions))
        }
        Some(s) => {
            let (probed, installed) = probe_toolchain(plan, cell, s, opts, on)?;
            installed.map(|i| {
                let versions = probed.map(|p| p.versions).unwrap_or_default();
                crate::install::subject_record(s, &i, &versions)
            })
        }
    };
    Ok(Probes {
        reference,
        job,
        subject,
    })
}

/// The installed size of the reference's toolchain and of the job's, once each: the job's
/// only when it is here.
fn installed_sizes(
    plan: &Plan,
    tc: &Toolchain,
    probes: &Probes,
) -> BTreeMap<ToolchainName, Installed> {
    let ref_tc = plan.reference_toolchain();
    let mut sizes = BTreeMap::new();
    sizes.insert(
        ref_tc.name.clone(),
        installed::installed(ref_tc, &probes.reference),
    );
    if let Ok(p) = &probes.job
        && tc.name != ref_tc.name
    {
        sizes.insert(tc.name.clone(), installed::installed(tc, p));
    }
    sizes
}

/// Every timed unit (reference, control, the toolchain's rows, the tooth's rows) and the rows
/// that could not be built.
struct Built {
    timed: Vec<Timed>,
    skipped: Vec<Skipped>,
}

fn build(
    plan: &Plan,
    tc: &Toolchain,
    probes: &Probes,
    out: &Path,
    default_clock: Clock,
    on: &mut dyn FnMut(Event),
) -> Result<Built, JobError> {
    let reference = plan.reference();
    on(Event::Building(reference.name.clone()));
    let ref_build = build_row(plan, reference, &probes.reference, out).map_err(|f| {
        JobError::ReferenceBuild {
            row: reference.name.clone(),
            code: f.exit_code,
            tail: f.log_tail.join("\n"),
        }
    })?;
    let mut timed = reference_and_control(plan, &ref_build, &probes.reference, out, default_clock)?;
    let mut skipped = Vec::new();
    for rname in tc.rows.iter().filter(|r| **r != reference.name) {
        let row = &plan.rows[rname];
        let probe = match &probes.job {
            Ok(p) => p,
            Err(missing) => {
                let s = skip(
                    row,
                    &tc.name,
                    SkipReason::NotInstalled,
                    missing.to_string(),
                    None,
                );
                on(Event::Skipped(s.clone()));
                skipped.push(s);
                continue;
            }
        };
        on(Event::Building(rname.clone()));
        match build_row(plan, row, probe, out) {
            Ok(build) => timed.push(Timed::new(
                row,
                Role::Row,
                build,
                probe,
                plan,
                default_clock,
            )),
            Err(f) => {
                let s = skip(
                    row,
                    &tc.name,
                    SkipReason::BuildFailed,
                    f.message.clone(),
                    Some(f),
                );
                on(Event::Skipped(s.clone()));
                skipped.push(s);
            }
        }
    }
    tooth_rows(
        plan,
        tc,
        probes,
        out,
        default_clock,
        &mut timed,
        &skipped,
        on,
    );
    Ok(Built { timed, skipped })
}

fn skip(
    row: &Row,
    tc: &ToolchainName,
    reason: SkipReason,
    message: String,
    failure: Option<BuildFailure>,
) -> Skipped {
    Skipped {
        row: row.name.clone(),
        toolchain: tc.clone(),
        reason,
        message,
        exit_code: failure.as_ref().and_then(|f| f.exit_code),
        log_tail: failure.map(|f| f.log_tail).unwrap_or_default(),
    }
}

/// The reference and its A/A control, a byte-identical copy under another path.
fn reference_and_control(
    plan: &Plan,
    ref_build: &Build,
    probe: &Probed,
    out: &Path,
    default_clock: Clock,
) -> Result<Vec<Timed>, JobError> {
    let reference = plan.reference();
    // Same file name and same path length as the reference: argv[0] and the environment sit
    // on the stack, and a longer path shifts the layout the reference runs with.
    let ctl_dir = out.join("build").join("ctl");
    std::fs::create_dir_all(&ctl_dir).map_err(io(format!("creating {}", ctl_dir.display())))?;
    let to = ctl_dir.join(reference.name.as_str());
    let control_build = copy_control(ref_build, &to)
        .map_err(io(format!("copying the reference to {}", to.display())))?;
    let mut control = Timed::new(
        reference,
        Role::Control,
        control_build,
        probe,
        plan,
        default_clock,
    );
    control.name = RowName::from(cell_model::CONTROL_ROW);
    Ok(vec![
        Timed::new(
            reference,
            Role::Reference,
            ref_build.clone(),
            probe,
            plan,
            default_clock,
        ),
        control,
    ])
}

/// What the timing stage measured.
struct Timing {
    outcome: Outcome,
    params: Params,
    machine: Machine,
    scripted: bool,
    /// Why this protocol, when `PROTOCOL` did not name it or could not be honoured.
    mode_chosen: Option<String>,
}

/// `PROTOCOL=auto`: the protocol the cell's calibration found quieter, else sequential (no
/// calibration of the protocols, or a calibration file that is ignored, and why).
fn auto_mode(plan: &Plan, cell: &Cell) -> (cell_schema::ProtocolMode, Option<String>) {
    use cell_schema::ProtocolMode;
    let file = cell_verdict::calibration_of(plan, &cell.id());
    match (&file, file.usable().and_then(|c| c.quieter_protocol)) {
        (_, Some(m)) => (
            m,
            Some(format!(
                "PROTOCOL=auto: {}, the quieter in this cell's calibration",
                m.as_str()
            )),
        ),
        (CalibrationFile::Ignored(notice), None) => (
            ProtocolMode::Sequential,
            Some(format!("PROTOCOL=auto: sequential, {notice}")),
        ),
        (_, None) => (
            ProtocolMode::Sequential,
            Some("PROTOCOL=auto: sequential, no calibration of the protocols for this cell".into()),
        ),
    }
}

fn time(
    plan: &Plan,
    cell: &Cell,
    timed: &[Timed],
    opts: &JobOptions,
    out: &Path,
    baseline: &Baseline,
    on: &mut dyn FnMut(Event),
) -> Result<Timing, JobError> {
    let scratch = out.join("build").join("run");
    std::fs::create_dir_all(&scratch).map_err(io(format!("creating {}", scratch.display())))?;
    // Facts first: once the engine pins this thread, it sees a single CPU.
    let machine = crate::facts::machine(None);
    let cpus = if opts.scripted.is_some() {
        2
    } else {
        crate::cpus::allowed().len()
    };
    let (mode, mode_chosen) = resolve_mode(plan, cell, cpus);
    let params = Params {
        phases: plan.settings.phases.clone(),
        warmup: plan.settings.drop,
        min_rounds: opts.reps.unwrap_or_else(|| plan.settings.min_rounds()),
        max_rounds: opts.reps.unwrap_or_else(|| plan.settings.max_rounds()),
        step: plan.settings.reps_step,
        ci_target: plan.settings.ci_target,
        ci_level: plan.settings.ci_level,
        rows_per_reference: plan.settings.rows_per_reference,
        time_cap_s: plan.settings.time_cap_s,
        seed: opts.seed,
        mode,
        futility_margin: plan.settings.futility_margin,
        tolerance: plan.settings.tolerance,
        settle_level: cell_verdict::unit_level(plan.settings.ci_level, baseline.run_units),
        // The smallest family is one unit: a row whose interval at CI_LEVEL alone fails is
        // never stopped short (docs/protocol.md).
        fail_level: plan.settings.ci_level,
    }
    .normalized();
    let units: Vec<Unit> = timed
        .iter()
        .map(|t| {
            let mut unit = Unit::new(t.phases.clone(), t.clock, t.role == Role::Row);
            if let (Some(b), true) = (&baseline.found, unit.judged) {
                unit.against = t
                    .phases
                    .iter()
                    .filter_map(|p| Some((p.clone(), b.ratios(&t.name, p, t.clock, mode)?)))
                    .collect();
            }
            unit
        })
        .collect();
    on(Event::Timing { units: units.len() });
    let mut progress = |r| on(Event::Round(r));
    if let Some(script) = &opts.scripted {
        let names = timed.iter().map(|t| t.name.clone()).collect();
        let mut exec = ScriptedExecutor::new(script, names);
        let outcome = protocol::run(&units, &params, &mut exec, &mut progress);
        return Ok(Timing {
            outcome,
            params,
            machine,
            scripted: true,
            mode_chosen,
        });
    }
    let options = EngineOptions {
        // A duet times on two CPUs at once; sequential timing takes one.
        cpus: if params.mode == cell_schema::ProtocolMode::Duet {
            2
        } else {
            1
        },
        ..EngineOptions::from_settings(&plan.settings)
    };
    let mut engine =
        Engine::with_options(&scratch, &options).map_err(io("starting the timing engine"))?;
    let outcome = {
        let mut exec = RealExecutor {
            engine: &mut engine,
            timed,
            plan,
            scratch: &scratch,
        };
        protocol::run(&units, &params, &mut exec, &mut progress)
    };
    let machine = Machine {
        pinned_cpu: engine.pinned_cpu(),
        timing: engine.timing(),
        ..machine
    };
    Ok(Timing {
        outcome,
        params,
        machine,
        scripted: false,
        mode_chosen,
    })
}

/// Every row's figures, the tooth, the contention and the verdict.
struct Judged {
    rows: BTreeMap<RowName, RowResult>,
    tooth: Option<Tooth>,
    contention: Option<Contention>,
    verdict: Verdict,
}

fn judge(
    plan: &Plan,
    cell: &Cell,
    timed: &[Timed],
    outcome: &Outcome,
    default_clock: Clock,
) -> Judged {
    let config = GateConfig::from_plan(plan, None, []);
    let mut rows = Vec::with_capacity(timed.len());
    let mut contentions = Vec::new();
    // The A/A control is read on the clock of every row it vouches for.
    let metrics =
        Clock::written(std::iter::once(default_clock).chain(timed.iter().map(|t| t.clock)));
    for (i, t) in timed.iter().enumerate() {
        let mut phases = BTreeMap::new();
        for p in &t.phases {
            let f = protocol::figures(outcome, i, p, plan.settings.ci_level, &metrics);
            contentions.extend(f.contentions.iter().copied());
            phases.insert(
                p.clone(),
                PhaseResult {
                    expected: plan.expect[p].clone(),
                    answer_ok: f.all_ok,
                    wrong: f.wrong,
                    printed: f.printed,
                    runs: f.runs,
                    stats: f.stats,
                    ratio: f.ratio,
                    contention: f.contention,
                    instructions: None,
                    estimated_cycles: None,
                    exact_repeat: None,
                    stopped: outcome
                        .stops
                        .get(&(i, p.clone()))
                        .map(|s| cell_schema::UnitStop {
                            reason: s.reason,
                            rounds: s.rounds,
                            half_width: s.half_width.map(round_ratio),
                            projected: s.projected.map(round_ratio),
                            against_baseline: s.against_baseline,
                        }),
                },
            );
        }
        rows.push((
            t.name.clone(),
            RowResult {
                label: t.row.label.clone(),
                toolchain: t.row.toolchain.clone(),
                role: t.role,
                verdict_clock: t.clock,
                build: t.build.clone(),
                phases,
                instructions_skipped: None,
            },
        ));
    }
    let tooth = tooth(plan, cell, timed, outcome, default_clock, &config);
    let contention = (!contentions.is_empty()).then(|| {
        let med = median(&contentions);
        Contention {
            median: round_ratio(med),
            max: round_ratio(contentions.iter().copied().fold(0.0, f64::max)),
            threshold: config.settings.contention_max,
            contended: cell_verdict::rules::contended(med, config.settings.contention_max),
        }
    });
    let reference = &plan.reference().name;
    let control = RowName::from(cell_model::CONTROL_ROW);
    let in_order: Vec<(&RowName, &RowResult)> = rows.iter().map(|(n, r)| (n, r)).collect();
    let verdict = cell_verdict::workload_verdict(
        &WorkloadJob {
            rows: &in_order,
            control: &control,
            tooth: tooth.as_ref(),
            contention: contention.as_ref(),
            reference_timed_out: (outcome.stopped == Stopped::ReferenceTimedOut)
                .then_some(reference),
            default_clock,
            arch: &cell.arch,
            mode: outcome.mode,
        },
        &config,
    );
    Judged {
        rows: rows.into_iter().collect(),
        tooth,
        contention,
        verdict,
    }
}

/// One timed unit: a row with its part, its binary, its phases, its clock and its tools.
pub(crate) struct Timed {
    pub(crate) name: RowName,
    pub(crate) role: Role,
    pub(crate) row: Row,
    pub(crate) build: Build,
    pub(crate) phases: Vec<Phase>,
    pub(crate) clock: Clock,
    pub(crate) paths: BTreeMap<ToolName, PathBuf>,
}

impl Timed {
    /// `row` in `role`, on every phase, on its own clock (a row's, else the default).
    pub(crate) fn new(
        row: &Row,
        role: Role,
        build: Build,
        probe: &Probed,
        plan: &Plan,
        default_clock: Clock,
    ) -> Self {
        Self {
            name: row.name.clone(),
            role,
            row: row.clone(),
            build,
            phases: plan.settings.phases.clone(),
            clock: match role {
                Role::Row => row.clock.unwrap_or(default_clock),
                _ => default_clock,
            },
            paths: probe.paths.clone(),
        }
    }

    /// The argv of one run on `phase` with `scratch` as `{work}`: what the timed runs and the
    /// instruction lane both spawn.
    pub(crate) fn argv(&self, phase: &Phase, scratch: &Path) -> Vec<String> {
        let src = self.row.source.display().to_string();
        let work = scratch.display().to_string();
        let tool = |n: &ToolName| self.paths[n].display().to_string();
        let vars = Vars {
            src: &src,
            bin: &self.build.binary,
            work: &work,
            phase: phase.as_str(),
            tool: &tool,
            port: "",
        };
        self.row.run.iter().map(|a| a.render(&vars)).collect()
    }
}
