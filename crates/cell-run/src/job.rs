//! One job, `cell run`: probe, build, time, judge, write the job dir.

use std::collections::BTreeMap;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use cell_model::{Cell, Plan, Row, Toolchain, Vars};
use cell_schema::{
    Build, Clock, Contention, JobCost, JobKind, JobResult, Phase, PhaseResult, Protocol, Role,
    RowName, RowResult, SCHEMA_VERSION, SkipReason, Skipped, Status, ToolName, Tooth, Verdict,
    round_ratio, round_time,
};
use cell_stats::median;

use crate::protocol::{self, Executor, Params, Sample, Unit};
use cell_fetch::hash_file;

use crate::timing::{Engine, ExitKind};
use crate::tools::{self, Probed};

/// What a job needs besides the plan.
#[derive(Clone, Debug)]
pub struct JobOptions {
    /// The job dir (made absolute by the caller or here).
    pub out: PathBuf,
    /// Fixed measured rounds; `None` = adaptive.
    pub reps: Option<u32>,
    /// Seed of the order.
    pub seed: u64,
}

/// Something the job reports as it goes.
#[derive(Clone, Debug)]
pub enum Event {
    /// A row is being built.
    Building(RowName),
    /// A row was skipped.
    Skipped(Skipped),
    /// Timing starts with this many rounds planned.
    Timing {
        /// Units timed.
        units: usize,
    },
    /// A round finished.
    Round(protocol::RoundDone),
}

/// A job that could not run at all (exit 2).
#[derive(Debug, thiserror::Error)]
pub enum JobError {
    /// Unknown cell or toolchain.
    #[error("{0}")]
    Usage(String),
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
        /// Exit code.
        code: Option<i32>,
        /// Last lines.
        tail: String,
    },
    /// A file or process error.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The OS error.
        source: std::io::Error,
    },
}

fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> JobError {
    let what = what.into();
    move |source| JobError::Io { what, source }
}

/// Runs one (cell, toolchain) job and writes `results.json`, `facts.json` and `RESULTS.md`.
#[expect(
    clippy::too_many_lines,
    reason = "the job's stages in order: probe, build, time, judge, write"
)]
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
    let bin_dir = out.join("build").join("bin");
    std::fs::create_dir_all(&bin_dir).map_err(io(format!("creating {}", bin_dir.display())))?;

    // Probe: the reference toolchain must be here; the job's toolchain may be absent.
    let reference = plan.reference().clone();
    let ref_tc = plan.reference_toolchain().clone();
    let ref_probe = tools::probe(&ref_tc).map_err(|missing| JobError::ReferenceMissing {
        row: reference.name.clone(),
        missing,
    })?;
    let job_probe = if tc.name == ref_tc.name {
        Ok(ref_probe.clone())
    } else {
        tools::probe(&tc)
    };
    let mut versions = ref_probe.versions.clone();
    if let Ok(p) = &job_probe {
        versions.extend(p.versions.clone());
    }
    let probe_s = t0.elapsed().as_secs_f64();

    // Build: reference, control copy, the toolchain's rows, the tooth's slow row.
    let t_build = Instant::now();
    let mut skipped = Vec::new();
    on(Event::Building(reference.name.clone()));
    let ref_build = match build_row(plan, &reference, &ref_probe, &out) {
        Ok(b) => b,
        Err(f) => {
            return Err(JobError::ReferenceBuild {
                row: reference.name.clone(),
                code: f.exit_code,
                tail: f.log_tail.join("\n"),
            });
        }
    };
    let control_name = RowName::from(cell_model::CONTROL_ROW);
    // Same file name and same path length as the reference: argv[0] and the environment sit
    // on the stack, and a longer path shifts the layout the reference runs with.
    let ctl_dir = out.join("build").join("ctl");
    std::fs::create_dir_all(&ctl_dir).map_err(io(format!("creating {}", ctl_dir.display())))?;
    let control_build = copy_control(&ref_build, &ctl_dir.join(reference.name.as_str()))?;

    let default_clock = plan
        .settings
        .clock(&cell.os)
        .unwrap_or_else(|| calibrated_clock(plan, &cell));
    let mut timed: Vec<Timed> = vec![
        Timed {
            name: reference.name.clone(),
            role: Role::Reference,
            row: reference.clone(),
            build: ref_build.clone(),
            phases: plan.settings.phases.clone(),
            clock: default_clock,
            paths: ref_probe.paths.clone(),
        },
        Timed {
            name: control_name,
            role: Role::Control,
            row: reference.clone(),
            build: control_build,
            phases: plan.settings.phases.clone(),
            clock: default_clock,
            paths: ref_probe.paths.clone(),
        },
    ];
    for rname in &tc.rows {
        let row = &plan.rows[rname];
        if *rname == reference.name {
            continue;
        }
        let probe = match &job_probe {
            Ok(p) => p,
            Err(missing) => {
                let s = Skipped {
                    row: rname.clone(),
                    toolchain: tc.name.clone(),
                    reason: SkipReason::NotInstalled,
                    message: missing.to_string(),
                    exit_code: None,
                    log_tail: vec![],
                };
                on(Event::Skipped(s.clone()));
                skipped.push(s);
                continue;
            }
        };
        on(Event::Building(rname.clone()));
        match build_row(plan, row, probe, &out) {
            Ok(build) => timed.push(Timed {
                name: rname.clone(),
                role: Role::Row,
                row: row.clone(),
                build,
                phases: plan.settings.phases.clone(),
                clock: row.clock.unwrap_or(default_clock),
                paths: probe.paths.clone(),
            }),
            Err(f) => {
                let s = Skipped {
                    row: rname.clone(),
                    toolchain: tc.name.clone(),
                    reason: SkipReason::BuildFailed,
                    message: f.message,
                    exit_code: f.exit_code,
                    log_tail: f.log_tail,
                };
                on(Event::Skipped(s.clone()));
                skipped.push(s);
            }
        }
    }
    // The tooth's rows are timed in every job that can build them, so every job proves the
    // harness can see a known difference.
    for tooth_row in [&plan.tooth.slow, &plan.tooth.fast] {
        if timed.iter().any(|t| &t.name == tooth_row) || skipped.iter().any(|s| &s.row == tooth_row)
        {
            continue;
        }
        let row = &plan.rows[tooth_row];
        let probe = if row.toolchain == ref_tc.name {
            Some(&ref_probe)
        } else {
            job_probe.as_ref().ok().filter(|_| row.toolchain == tc.name)
        };
        if let Some(probe) = probe {
            on(Event::Building(tooth_row.clone()));
            if let Ok(build) = build_row(plan, row, probe, &out) {
                timed.push(Timed {
                    name: tooth_row.clone(),
                    role: Role::Tooth,
                    row: row.clone(),
                    build,
                    phases: vec![plan.settings.tooth_phase.clone()],
                    clock: default_clock,
                    paths: probe.paths.clone(),
                });
            }
        }
    }
    let build_s = t_build.elapsed().as_secs_f64();

    // Time.
    let t_time = Instant::now();
    let scratch = out.join("build").join("run");
    std::fs::create_dir_all(&scratch).map_err(io(format!("creating {}", scratch.display())))?;
    // Facts first: once the engine pins this thread, it sees a single CPU.
    let machine = crate::facts::machine(None);
    let mut engine = Engine::new(&scratch).map_err(io("starting the timing engine"))?;
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
    };
    let units: Vec<Unit> = timed
        .iter()
        .map(|t| Unit {
            phases: t.phases.clone(),
            clock: t.clock,
        })
        .collect();
    on(Event::Timing { units: units.len() });
    let mut exec = RealExecutor {
        engine: &mut engine,
        timed: &timed,
        plan,
        scratch: &scratch,
    };
    let outcome = protocol::run(&units, &params, &mut exec, &mut |r| on(Event::Round(r)));
    let pinned = engine.pinned_cpu();
    drop(engine);
    let timing_s = t_time.elapsed().as_secs_f64();

    // Judge.
    let mut rows = BTreeMap::new();
    let mut contentions = Vec::new();
    let mut reasons_failed = Vec::new();
    for (i, t) in timed.iter().enumerate() {
        let mut phases = BTreeMap::new();
        for p in &t.phases {
            let f = protocol::figures(&outcome, i, p, plan.settings.ci_level);
            contentions.extend(f.contentions.iter().copied());
            if !f.all_ok {
                reasons_failed.push(format!(
                    "wrong answer: row `{}` on phase `{p}`: {}",
                    t.name,
                    f.wrong.clone().unwrap_or_default()
                ));
            }
            phases.insert(
                p.clone(),
                PhaseResult {
                    expected: plan.expect[p].clone(),
                    answer_ok: f.all_ok,
                    wrong: f.wrong,
                    runs: f.runs,
                    stats: f.stats,
                    ratio: f.ratio,
                    contention: f.contention,
                },
            );
        }
        rows.insert(
            t.name.clone(),
            RowResult {
                label: t.row.label.clone(),
                toolchain: t.row.toolchain.clone(),
                role: t.role,
                verdict_clock: t.clock,
                build: t.build.clone(),
                phases,
            },
        );
    }
    if outcome.stopped == "reference_timed_out" {
        reasons_failed.push(format!(
            "the reference `{}` hit RUN_TIMEOUT_S",
            reference.name
        ));
    }

    let tooth = tooth(plan, &cell, &timed, &outcome, default_clock);
    if let Some(t) = &tooth
        && !t.ok
    {
        match &t.ratio {
                Some(r) => reasons_failed.push(format!("tooth: {}/{} on {} is {:.4} (CI {:.4}–{:.4}), below the floor {} for {}: the harness cannot see a known difference", t.slow, t.fast, t.phase, r.median, r.lo, r.hi, t.floor, cell.arch)),
                None => reasons_failed.push(format!("tooth: {}/{} on {} has no measurement: a tooth row is missing", t.slow, t.fast, t.phase)),
            }
    }

    let contention = (!contentions.is_empty()).then(|| {
        let med = median(&contentions);
        Contention {
            median: round_ratio(med),
            max: round_ratio(contentions.iter().copied().fold(0.0, f64::max)),
            threshold: plan.settings.contention_max,
            contended: med > plan.settings.contention_max,
        }
    });

    // The control is judged on every clock some row's verdict reads: a wall-clock row on a
    // machine whose wall clock is noisy is as inconclusive as a cpu row on a noisy cpu clock.
    let mut clocks: Vec<Clock> = timed
        .iter()
        .filter(|t| t.role == Role::Row)
        .map(|t| t.clock)
        .chain([default_clock])
        .collect();
    clocks.sort();
    clocks.dedup();
    let mut reasons_noisy = Vec::new();
    let control = &rows[cell_model::CONTROL_ROW];
    let half_tol = plan.settings.tolerance / 2.0;
    for (p, pr) in &control.phases {
        let Some(ratios) = pr.ratio.as_ref() else {
            continue;
        };
        for clock in &clocks {
            let (r, name) = match clock {
                Clock::Cpu => (&ratios.cpu, "cpu"),
                Clock::Wall => (&ratios.wall, "wall"),
            };
            if cell_report::gate::control_is_off(r, plan.settings.tolerance) {
                reasons_noisy.push(format!(
                    "too noisy to gate: the A/A control on {p} ({name} time) is {:.4} (CI {:.4}–{:.4}); it must contain 1.0 and stay within ±{half_tol:.4}",
                    r.median, r.lo, r.hi
                ));
            }
        }
    }

    let mut notes = Vec::new();
    if let Some(c) = &contention
        && c.contended
    {
        notes.push(format!(
            "contended: median wall/cpu {:.4} exceeds {}",
            c.median, c.threshold
        ));
    }
    let (status, mut reasons) = if !reasons_failed.is_empty() {
        (Status::Failed, reasons_failed)
    } else if !reasons_noisy.is_empty() {
        (Status::Noisy, reasons_noisy)
    } else {
        (Status::Ok, vec![])
    };
    reasons.extend(notes);

    let result = JobResult {
        schema_version: SCHEMA_VERSION,
        kind: JobKind::Job,
        cell: cell.info(),
        toolchain: tc.name.clone(),
        machine: cell_schema::Machine {
            pinned_cpu: pinned,
            ..machine
        },
        pins: pins(plan, &tc, &ref_tc),
        versions,
        subject: None,
        protocol: Protocol {
            reference: reference.name.clone(),
            control: RowName::from(cell_model::CONTROL_ROW),
            phases: plan.settings.phases.clone(),
            warmup_rounds: params.warmup,
            measured_rounds: outcome.measured_rounds,
            min_rounds: params.min_rounds,
            max_rounds: params.max_rounds,
            step_rounds: params.step,
            adaptive: opts.reps.is_none(),
            stopped: outcome.stopped.to_owned(),
            seed: opts.seed,
            rows_per_reference: params.rows_per_reference,
            tolerance: plan.settings.tolerance,
            ci_target: plan.settings.ci_target,
            ci_level: plan.settings.ci_level,
            contention_max: plan.settings.contention_max,
            time_cap_s: plan.settings.time_cap_s,
            default_clock,
        },
        rows,
        skipped,
        tooth,
        contention,
        verdict: Verdict { status, reasons },
        started_at,
        github: github_context(),
        cost: JobCost {
            probe_s: round_time(probe_s),
            build_s: round_time(build_s),
            timing_s: round_time(timing_s),
            total_s: round_time(t0.elapsed().as_secs_f64()),
        },
    };
    write_job_dir(&out, &result)?;
    Ok(result)
}

/// Writes `results.json`, `facts.json` and `RESULTS.md` into `dir`, each atomically.
pub fn write_job_dir(dir: &Path, result: &JobResult) -> Result<(), JobError> {
    write_atomic(
        &dir.join("results.json"),
        cell_schema::to_json(result).as_bytes(),
    )?;
    write_atomic(
        &dir.join("facts.json"),
        cell_schema::to_json(&result.facts()).as_bytes(),
    )?;
    write_atomic(
        &dir.join("RESULTS.md"),
        cell_report::job_markdown(result).as_bytes(),
    )
}

/// Writes a file atomically, mapping the error to a [`JobError`].
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), JobError> {
    cell_schema::write_atomic(path, bytes).map_err(io(format!("writing {}", path.display())))
}

/// `CLOCK=auto`: the clock `cell calibrate` found quieter on this cell, else CPU time.
fn calibrated_clock(plan: &Plan, cell: &Cell) -> Clock {
    std::fs::read_to_string(plan.calibration_path(&cell.id()))
        .ok()
        .and_then(|t| serde_json::from_str::<cell_schema::Calibration>(&t).ok())
        .map_or(Clock::Cpu, |c| c.quieter_clock)
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

struct Timed {
    name: RowName,
    role: Role,
    row: Row,
    build: Build,
    phases: Vec<Phase>,
    clock: Clock,
    paths: BTreeMap<ToolName, PathBuf>,
}

struct RealExecutor<'a> {
    engine: &'a mut Engine,
    timed: &'a [Timed],
    plan: &'a Plan,
    scratch: &'a Path,
}

impl Executor for RealExecutor<'_> {
    fn run(&mut self, unit: usize, phase: &Phase) -> Sample {
        let t = &self.timed[unit];
        let src = t.row.source.display().to_string();
        let work = self.scratch.display().to_string();
        let tool = |n: &ToolName| t.paths[n].display().to_string();
        let vars = Vars {
            src: &src,
            bin: &t.build.binary,
            work: &work,
            phase: phase.as_str(),
            tool: &tool,
            port: "",
        };
        let argv: Vec<String> = t.row.run.iter().map(|a| a.render(&vars)).collect();
        let expected = self.plan.expect[phase].as_bytes();
        match self.engine.run(
            &argv,
            self.scratch,
            Duration::from_secs_f64(self.plan.settings.run_timeout_s),
        ) {
            Ok(m) => {
                let wrong = match &m.exit {
                    ExitKind::Code(0) if m.stdout == expected => None,
                    ExitKind::Code(0) => Some(format!(
                        "printed {:?}, expected {:?}",
                        String::from_utf8_lossy(&m.stdout),
                        String::from_utf8_lossy(expected)
                    )),
                    ExitKind::Code(c) => Some(format!("exited with {c}")),
                    ExitKind::Signal(s) => Some(format!("killed by signal {s}")),
                    ExitKind::TimedOut => Some(format!(
                        "killed after RUN_TIMEOUT_S={}",
                        self.plan.settings.run_timeout_s
                    )),
                };
                Sample {
                    wall_s: m.wall_s,
                    cpu_s: m.cpu_s,
                    maxrss_kib: m.maxrss_kib,
                    ok: wrong.is_none(),
                    wrong,
                    timed_out: m.exit == ExitKind::TimedOut,
                }
            }
            Err(e) => Sample {
                wall_s: 0.0,
                cpu_s: 0.0,
                maxrss_kib: 0,
                ok: false,
                wrong: Some(format!("could not start {}: {e}", argv[0])),
                timed_out: true,
            },
        }
    }
}

fn tooth(
    plan: &Plan,
    cell: &Cell,
    timed: &[Timed],
    outcome: &protocol::Outcome,
    clock: Clock,
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
    let floor = plan.tooth_floor(&cell.arch);
    let ratio = match (slow, fast) {
        (Some(s), Some(f)) => protocol::ratio_ci(
            &protocol::ratio_of_ratios(&outcome.runs, outcome.warmup, s, f, &phase, clock),
            plan.settings.ci_level,
        ),
        _ => None,
    };
    Some(Tooth {
        slow: plan.tooth.slow.clone(),
        fast: plan.tooth.fast.clone(),
        phase,
        clock,
        floor,
        ok: ratio.as_ref().is_some_and(|r| r.median >= floor),
        ratio,
    })
}

pub(crate) struct BuildFailure {
    pub(crate) message: String,
    pub(crate) exit_code: Option<i32>,
    pub(crate) log_tail: Vec<String>,
}

fn build_row(plan: &Plan, row: &Row, probe: &Probed, out: &Path) -> Result<Build, BuildFailure> {
    let work = out.join("build").join(row.name.as_str());
    let bin = out.join("build").join("bin").join(row.name.as_str());
    let fail = |message: String| BuildFailure {
        message,
        exit_code: None,
        log_tail: vec![],
    };
    std::fs::create_dir_all(&work)
        .map_err(|e| fail(format!("creating {}: {e}", work.display())))?;
    let _ = std::fs::remove_file(&bin);
    let (src, binary, workdir) = (
        row.source.display().to_string(),
        bin.display().to_string(),
        work.display().to_string(),
    );
    let tool = |n: &ToolName| probe.paths[n].display().to_string();
    let vars = Vars {
        src: &src,
        bin: &binary,
        work: &workdir,
        phase: "",
        tool: &tool,
        port: "",
    };
    let argv: Vec<String> = row.build.iter().map(|a| a.render(&vars)).collect();
    let compile_s = run_build(
        &format!("`{}`", row.name),
        &argv,
        &work,
        plan.settings.build_timeout_s,
    )?;
    let tail = || log_tail(&work.join("build.log"));
    let (bytes, sha256) = hash_file(&bin).map_err(|e| BuildFailure {
        message: format!(
            "build of `{}` exited 0 but wrote no binary at {}: {e}",
            row.name,
            bin.display()
        ),
        exit_code: Some(0),
        log_tail: tail(),
    })?;
    Ok(Build {
        argv,
        cwd: workdir,
        compile_s: round_time(compile_s),
        binary,
        binary_bytes: bytes,
        sha256,
    })
}

/// Runs one build command in `work`, its output in `work/build.log`, killed after
/// `timeout_s`. Returns the wall seconds it took; `what` names it in messages.
pub(crate) fn run_build(
    what: &str,
    argv: &[String],
    work: &Path,
    timeout_s: f64,
) -> Result<f64, BuildFailure> {
    let fail = |message: String| BuildFailure {
        message,
        exit_code: None,
        log_tail: vec![],
    };
    let log_path = work.join("build.log");
    let log = std::fs::File::create(&log_path)
        .map_err(|e| fail(format!("creating {}: {e}", log_path.display())))?;
    let t = Instant::now();
    let mut child = Command::new(&argv[0])
        .args(&argv[1..])
        .current_dir(work)
        .stdin(Stdio::null())
        .stdout(log.try_clone().map_err(|e| fail(e.to_string()))?)
        .stderr(log)
        .spawn()
        .map_err(|e| fail(format!("could not start {}: {e}", argv[0])))?;
    let deadline = t + Duration::from_secs_f64(timeout_s);
    let status = loop {
        if let Some(s) = child.try_wait().map_err(|e| fail(e.to_string()))? {
            break Some(s);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let compile_s = t.elapsed().as_secs_f64();
    match status {
        None => Err(BuildFailure {
            message: format!("build of {what} killed after BUILD_TIMEOUT_S={timeout_s}"),
            exit_code: None,
            log_tail: log_tail(&log_path),
        }),
        Some(s) if !s.success() => Err(BuildFailure {
            message: format!("build of {what} failed with {s}: {}", argv.join(" ")),
            exit_code: s.code(),
            log_tail: log_tail(&log_path),
        }),
        Some(_) => Ok(compile_s),
    }
}

/// The last 20 lines of a build log.
pub(crate) fn log_tail(path: &Path) -> Vec<String> {
    let mut text = String::new();
    let _ = std::fs::File::open(path).and_then(|mut f| f.read_to_string(&mut text));
    let lines: Vec<String> = text.lines().map(str::to_owned).collect();
    lines[lines.len().saturating_sub(20)..].to_vec()
}

fn copy_control(reference: &Build, to: &Path) -> Result<Build, JobError> {
    std::fs::copy(&reference.binary, to)
        .map_err(io(format!("copying the reference to {}", to.display())))?;
    let (bytes, sha256) = hash_file(to).map_err(io(format!("hashing {}", to.display())))?;
    Ok(Build {
        argv: vec![
            "copy".into(),
            reference.binary.clone(),
            to.display().to_string(),
        ],
        cwd: reference.cwd.clone(),
        compile_s: 0.0,
        binary: to.display().to_string(),
        binary_bytes: bytes,
        sha256,
    })
}

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
    let control = copy_control(&build, &ctl_dir.join(reference.name.as_str()))?;
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
    let mut engine = Engine::new(&scratch).map_err(io("starting the timing engine"))?;
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
    let pinned = engine.pinned_cpu();
    drop(engine);
    let (by_phase, quieter_clock) = noise(&outcome, &phases, plan.settings.ci_level);
    Ok(cell_schema::Calibration {
        schema_version: SCHEMA_VERSION,
        kind: cell_schema::CalibrationKind::Calibration,
        cell: cell.info(),
        machine: cell_schema::Machine {
            pinned_cpu: pinned,
            ..machine
        },
        measured_at: cell_schema::time::format_utc(cell_schema::time::now_secs()),
        rounds: outcome.measured_rounds,
        seed,
        phases: by_phase,
        quieter_clock,
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
