//! The protocols compared, one entry each in [`ALL`]: a protocol is a function from one trial
//! (reference, candidate, phase, budget) to one verdict. Adding one is a function and an entry.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::Read as _;
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, ensure};
use cell_run::protocol::{self, Executor, Outcome, Params, Recorded, Sample, Unit};
use cell_run::timing::{Engine, EngineOptions, ExitKind, Launch, Measured};
use cell_schema::{Clock, Phase, ProtocolMode};
use cell_stats::{median, median_ci};
use serde::Serialize;

use crate::hyperfine;

/// How long one timed process may run before it is killed.
pub const PER_PROCESS: Duration = Duration::from_mins(2);

/// One comparison to time once.
pub struct Trial<'a> {
    /// The reference binary.
    pub reference: &'a str,
    /// The candidate binary (the A/A copy or an A/B candidate).
    pub candidate: &'a str,
    /// The workload phase, the binaries' one argument.
    pub phase: &'a str,
    /// Process runs per verdict, warm-ups included, the same for every fixed-budget protocol.
    pub budget: u32,
    /// Seed of cell's order in this repeat.
    pub seed: u64,
    /// Scratch files and the working dir of every timed process.
    pub dir: &'a Path,
    /// `versions.env`, for the confidence level and the adaptive budget.
    pub settings: &'a cell_model::Settings,
}

/// What one protocol concluded from one trial.
#[derive(Clone, Debug, PartialEq)]
pub struct Verdict {
    /// Candidate over reference.
    pub ratio: f64,
    /// The protocol's own interval around the ratio, when it has one.
    pub interval: Option<(f64, f64)>,
    /// Process runs it took, warm-ups included.
    pub runs: u32,
    /// The same runs judged on each clock (cell's protocols only).
    pub clocks: BTreeMap<ClockKind, f64>,
}

/// A clock a verdict can be read on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ClockKind {
    /// User CPU time.
    User,
    /// System CPU time (page faults, syscalls).
    Sys,
    /// User + system.
    Cpu,
    /// Spawn to reap.
    Wall,
}

impl ClockKind {
    /// Every clock, in the order the tables print them.
    pub const ALL: [Self; 4] = [Self::User, Self::Sys, Self::Cpu, Self::Wall];

    /// The table heading.
    pub fn label(self) -> &'static str {
        match self {
            Self::User => "user",
            Self::Sys => "system",
            Self::Cpu => "user+system",
            Self::Wall => "wall",
        }
    }
}

/// One protocol of the list.
pub struct Protocol {
    /// Its name in `--protocols` and in the tables.
    pub name: &'static str,
    /// Times one trial.
    pub run: fn(&Trial<'_>) -> Result<Verdict>,
    /// What it needs on the host, checked before anything is built; returns its version.
    pub check: Option<fn() -> Result<String>>,
}

/// Every protocol the bench knows, in the order `--help` lists them.
pub const ALL: &[Protocol] = &[
    Protocol {
        name: "plain",
        run: plain,
        check: None,
    },
    Protocol {
        name: "cell",
        run: cell_fixed,
        check: None,
    },
    Protocol {
        name: "hyperfine",
        run: hyperfine::verdict,
        check: Some(hyperfine::version),
    },
    Protocol {
        name: "cell-duet",
        run: cell_duet,
        check: None,
    },
    Protocol {
        name: "cell-adaptive",
        run: cell_adaptive,
        check: None,
    },
    Protocol {
        name: "cell-aslr",
        run: cell_aslr,
        check: None,
    },
];

/// The protocol called `name` (the `--protocols` parser).
pub fn by_name(name: &str) -> Result<&'static Protocol, String> {
    ALL.iter().find(|p| p.name == name).ok_or_else(|| {
        let known: Vec<&str> = ALL.iter().map(|p| p.name).collect();
        format!("no protocol {name:?}; known: {}", known.join(", "))
    })
}

/// A process that ended within its time.
pub struct Ended {
    /// Its exit status.
    pub status: ExitStatus,
    /// Spawn to reap.
    pub wall: Duration,
}

/// Runs `cmd` to its end, killing it after `timeout`. The watchdog thread starts before the
/// clock so its creation is not timed; the child is reaped only after the watchdog stood
/// down, so its kill can never reach a recycled pid.
pub fn run_bounded(cmd: &mut Command, timeout: Duration) -> std::io::Result<Ended> {
    let (pid_tx, pid_rx) = mpsc::channel::<libc::pid_t>();
    let (done_tx, done_rx) = mpsc::channel::<()>();
    let dog = std::thread::spawn(move || {
        let Ok(pid) = pid_rx.recv() else {
            return false;
        };
        let fired = done_rx.recv_timeout(timeout) == Err(RecvTimeoutError::Timeout);
        if fired {
            // SAFETY: our own child, not reaped yet (the waiter waits for this thread first).
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        fired
    });
    let start = Instant::now();
    let spawned = cmd.spawn();
    let exited = spawned.and_then(|child| {
        let pid = libc::pid_t::try_from(child.id()).expect("pids fit pid_t");
        let _ = pid_tx.send(pid);
        cell_run::timing::wait_exited(pid).map(|()| (child, start.elapsed()))
    });
    drop(pid_tx);
    let _ = done_tx.send(());
    let fired = dog.join().unwrap_or(false);
    let (mut child, wall) = exited?;
    let status = child.wait()?;
    if fired {
        return Err(std::io::Error::new(
            std::io::ErrorKind::TimedOut,
            format!("killed after {} s", timeout.as_secs()),
        ));
    }
    Ok(Ended { status, wall })
}

/// The first `limit` bytes of a file, as text.
pub fn read_prefix(path: &Path, limit: u64) -> Result<String> {
    let mut text = String::new();
    File::open(path)
        .and_then(|f| f.take(limit).read_to_string(&mut text))
        .with_context(|| format!("reading {}", path.display()))?;
    Ok(text)
}

/// The plain protocol: `budget/2` runs of the reference then as many of the candidate,
/// unpinned, wall clock, the first of each dropped, median over median.
fn plain(t: &Trial<'_>) -> Result<Verdict> {
    let time = |bin: &str| -> Result<Vec<f64>> {
        let mut walls = Vec::new();
        for _ in 0..t.budget / 2 {
            let mut cmd = Command::new(bin);
            cmd.arg(t.phase)
                .current_dir(t.dir)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null());
            let ended =
                run_bounded(&mut cmd, PER_PROCESS).with_context(|| format!("{bin} {}", t.phase))?;
            ensure!(
                ended.status.success(),
                "{bin} {} ended with {}",
                t.phase,
                ended.status
            );
            walls.push(ended.wall.as_secs_f64());
        }
        Ok(walls.split_off(1))
    };
    let r = time(t.reference)?;
    let c = time(t.candidate)?;
    Ok(Verdict {
        ratio: median(&c) / median(&r),
        interval: None,
        runs: t.budget,
        clocks: BTreeMap::new(),
    })
}

/// cell's protocol at the fixed budget: one warm-up round and `budget/2 - 1` measured rounds
/// of (reference, candidate), sequential. A duet entry sets `mode` here.
fn fixed_params(t: &Trial<'_>) -> Params {
    let rounds = t.budget / 2;
    Params {
        phases: vec![Phase::from(t.phase)],
        warmup: 1,
        min_rounds: rounds - 1,
        max_rounds: rounds - 1,
        step: 1,
        ci_target: 0.0,
        ci_level: t.settings.ci_level,
        rows_per_reference: 3,
        time_cap_s: 1e9,
        seed: t.seed,
        mode: ProtocolMode::Sequential,
        futility_margin: 0.0,
        tolerance: t.settings.tolerance,
        settle_level: t.settings.ci_level,
        fail_level: t.settings.ci_level,
    }
}

fn cell_fixed(t: &Trial<'_>) -> Result<Verdict> {
    cell(
        t,
        &fixed_params(t),
        &EngineOptions::from_settings(t.settings),
    )
}

/// As `cell`, with address-space layout randomization left on for the timed children.
fn cell_aslr(t: &Trial<'_>) -> Result<Verdict> {
    let options = EngineOptions {
        randomize: true,
        ..EngineOptions::from_settings(t.settings)
    };
    cell(t, &fixed_params(t), &options)
}

/// cell's duet protocol at the same budget: each round the candidate and its reference run
/// at the same moment, one on each of two CPUs, swapping CPUs every round (`budget/2 - 1`
/// measured rounds, an even number at the default budget of 14).
fn cell_duet(t: &Trial<'_>) -> Result<Verdict> {
    let params = Params {
        mode: ProtocolMode::Duet,
        ..fixed_params(t)
    };
    ensure!(
        params.clone().normalized().max_rounds == params.max_rounds,
        "the duet needs an even number of measured rounds: --budget {} gives {}",
        t.budget,
        params.max_rounds
    );
    let options = EngineOptions {
        cpus: 2,
        ..EngineOptions::from_settings(t.settings)
    };
    cell(t, &params, &options)
}

/// cell's adaptive budget (`REPS` to `REPS_MAX` of versions.env): not at the others' budget.
fn cell_adaptive(t: &Trial<'_>) -> Result<Verdict> {
    let s = t.settings;
    let params = Params {
        warmup: s.drop,
        min_rounds: s.min_rounds(),
        max_rounds: s.max_rounds(),
        step: s.reps_step,
        ci_target: s.ci_target,
        futility_margin: s.futility_margin,
        ..fixed_params(t)
    };
    cell(t, &params, &EngineOptions::from_settings(t.settings))
}

/// The real executor: the pinned engine, one binary per unit (index 0 the reference), the
/// first failure kept.
struct Real<'a> {
    engine: Engine,
    bins: &'a [&'a str],
    dir: &'a Path,
    failed: Option<anyhow::Error>,
}

impl Executor for Real<'_> {
    fn run(&mut self, unit: usize, phase: &Phase) -> Sample {
        let argv = vec![self.bins[unit].to_owned(), phase.to_string()];
        let measured = self.engine.run(&argv, self.dir, PER_PROCESS, b"");
        self.sample(&argv, measured)
    }

    fn run_pair(&mut self, first: usize, second: usize, phase: &Phase) -> (Sample, Sample) {
        let argv = |u: usize| vec![self.bins[u].to_owned(), phase.to_string()];
        let (a, b) = (argv(first), argv(second));
        let launch = |argv| Launch {
            argv,
            cwd: self.dir,
            timeout: PER_PROCESS,
            expected: b"",
        };
        let [ma, mb] = self
            .engine
            .run_pair_each(&launch(&a), &launch(&b), false)
            .unwrap_or_else(|e| {
                let again = std::io::Error::new(e.kind(), e.to_string());
                [Err(e), Err(again)]
            });
        (self.sample(&a, ma), self.sample(&b, mb))
    }
}

impl Real<'_> {
    fn sample(&mut self, argv: &[String], measured: std::io::Result<Measured>) -> Sample {
        let phase = &argv[1];
        let failure = match &measured {
            Err(e) => Some(format!("{e}")),
            Ok(m) if m.exit != ExitKind::Code(0) => Some(format!("ended with {:?}", m.exit)),
            Ok(_) => None,
        };
        if let Some(why) = failure {
            self.failed
                .get_or_insert_with(|| anyhow::anyhow!("{} {phase}: {why}", argv[0]));
        }
        let m = measured.ok();
        Sample {
            wall_s: m.as_ref().map_or(0.0, |m| m.wall_s),
            cpu_s: m.as_ref().map_or(0.0, |m| m.cpu_s),
            user_s: m.as_ref().map_or(0.0, |m| m.user_s),
            sys_s: m.as_ref().map_or(0.0, |m| m.sys_s),
            steal_s: None,
            maxrss_kib: m.as_ref().map_or(0, |m| m.maxrss_kib),
            ok: self.failed.is_none(),
            wrong: None,
            printed: None,
            // A failed run stops the protocol: the reference's ends it, a row's ends that row.
            timed_out: self.failed.is_some(),
        }
    }
}

/// cell's protocol: rounds of (reference, candidate) in a seeded random order, pinned, CPU
/// time, warm-up excluded, median of per-round ratios with its interval; every clock read
/// from the same runs.
fn cell(t: &Trial<'_>, params: &Params, options: &EngineOptions) -> Result<Verdict> {
    let units = vec![Unit::new(params.phases.clone(), Clock::Cpu, true); 2];
    let out = job(&[t.reference, t.candidate], &units, params, t.dir, options)?;
    let phase = Phase::from(t.phase);
    let rs = clock_ratios(&out, &phase, ClockKind::Cpu);
    ensure!(!rs.is_empty(), "cell's protocol paired no runs on {phase}");
    let ci = median_ci(&rs, params.ci_level);
    let clocks = ClockKind::ALL
        .into_iter()
        .filter_map(|k| {
            let rs = clock_ratios(&out, &phase, k);
            (!rs.is_empty()).then(|| (k, median(&rs)))
        })
        .collect();
    Ok(Verdict {
        ratio: ci.median,
        interval: Some((ci.lo, ci.hi)),
        runs: u32::try_from(out.runs.len()).unwrap_or(u32::MAX),
        clocks,
    })
}

/// One job of cell's protocol on the pinned engine: `bins[u]` is unit `u`'s binary (0 the
/// reference), each run with its phase as its one argument in `dir`. The engine is dropped,
/// and this thread unpinned, before it returns, so whatever runs next runs unpinned.
pub fn job(
    bins: &[&str],
    units: &[Unit],
    params: &Params,
    dir: &Path,
    options: &EngineOptions,
) -> Result<Outcome> {
    ensure!(
        bins.len() == units.len(),
        "{} binaries for {} units",
        bins.len(),
        units.len()
    );
    let engine = Engine::with_options(dir, options).context("the timing engine")?;
    let mut exec = Real {
        engine,
        bins,
        dir,
        failed: None,
    };
    let out = protocol::run(units, params, &mut exec, &mut |_| {});
    drop(exec.engine);
    match exec.failed {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

/// The candidate's (unit 1) per-round ratios on `clock`: `protocol::ratios` for the clocks
/// `cell_schema::Clock` has, the same pairing on the recorded samples for system time.
pub fn clock_ratios(out: &Outcome, phase: &Phase, clock: ClockKind) -> Vec<f64> {
    let theirs = |c| protocol::ratios(&out.runs, out.warmup, 1, phase, c, out.mode);
    match clock {
        ClockKind::Cpu => theirs(Clock::Cpu),
        ClockKind::Wall => theirs(Clock::Wall),
        ClockKind::User => theirs(Clock::User),
        ClockKind::Sys => paired_ratios(&out.runs, out.warmup, phase, |s| s.sys_s),
    }
}

/// Each measured run of unit 1 on `phase` over the reference run it was paired with, as
/// `protocol::ratios` pairs them; pairs whose reference read 0 are left out.
fn paired_ratios(
    runs: &[Recorded],
    warmup: u32,
    phase: &Phase,
    pick: fn(&Sample) -> f64,
) -> Vec<f64> {
    let references: BTreeMap<(u32, u32), &Sample> = runs
        .iter()
        .filter(|r| r.unit == 0 && &r.phase == phase)
        .map(|r| ((r.round, r.seq), &r.sample))
        .collect();
    runs.iter()
        .filter(|r| r.unit == 1 && &r.phase == phase && r.round >= warmup)
        .filter_map(|r| {
            let denom = pick(references.get(&(r.round, r.paired_with?))?);
            (denom > 0.0).then(|| pick(&r.sample) / denom)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Samples whose four clocks differ from run to run and from each other, so a pairing
    /// that picks the wrong reference run or the wrong clock gives other ratios.
    struct Counting(u32);

    impl Executor for Counting {
        fn run(&mut self, unit: usize, _phase: &Phase) -> Sample {
            self.0 += 1;
            let k = f64::from(self.0);
            let user = 1.0 + 0.01 * k + 0.1 * unit as f64;
            let sys = 0.02 + 0.001 * (k % 7.0);
            Sample {
                wall_s: user + sys + 0.003 * (k % 5.0),
                cpu_s: user + sys,
                user_s: user,
                sys_s: sys,
                steal_s: None,
                maxrss_kib: 1,
                ok: true,
                wrong: None,
                printed: None,
                timed_out: false,
            }
        }
    }

    #[test]
    fn the_bench_pairs_system_time_as_the_protocol_pairs_its_clocks() {
        let phase = Phase::from("mix");
        let units = vec![Unit::new(vec![phase.clone()], Clock::Cpu, true); 2];
        let params = Params {
            phases: vec![phase.clone()],
            warmup: 1,
            min_rounds: 6,
            max_rounds: 6,
            step: 1,
            ci_target: 0.0,
            ci_level: 0.95,
            rows_per_reference: 3,
            time_cap_s: 1e9,
            seed: 7,
            mode: ProtocolMode::Sequential,
            futility_margin: 0.0,
            tolerance: 0.015,
            settle_level: 0.95,
            fail_level: 0.95,
        };
        let out = protocol::run(&units, &params, &mut Counting(0), &mut |_| {});
        for (clock, pick) in [
            (Clock::Cpu, (|s| s.cpu_s) as fn(&Sample) -> f64),
            (Clock::Wall, |s| s.wall_s),
            (Clock::User, |s| s.user_s),
        ] {
            let theirs = protocol::ratios(&out.runs, out.warmup, 1, &phase, clock, out.mode);
            assert_eq!(theirs.len(), 6);
            // The job's ratios are of its times as written (whole microseconds, CPU time their
            // sum): the same pairs agree to rounding, a wrong pairing by far more.
            let ours = paired_ratios(&out.runs, out.warmup, &phase, pick);
            assert_eq!(ours.len(), theirs.len());
            for (a, b) in ours.iter().zip(&theirs) {
                assert!(
                    (a / b - 1.0).abs() < 1e-9,
                    "{clock:?}: {ours:?} vs {theirs:?}"
                );
            }
        }
        let user = clock_ratios(&out, &phase, ClockKind::User);
        let sys = clock_ratios(&out, &phase, ClockKind::Sys);
        assert_eq!((user.len(), sys.len()), (6, 6));
        assert_ne!(user, clock_ratios(&out, &phase, ClockKind::Cpu));
        assert_ne!(user, sys);
    }

    #[test]
    fn a_protocol_is_found_by_name_and_an_unknown_one_lists_the_known() {
        assert_eq!(by_name("hyperfine").map(|p| p.name), Ok("hyperfine"));
        let e = by_name("duet").err().unwrap();
        assert!(e.contains("plain, cell, hyperfine"), "{e}");
    }

    #[test]
    fn a_hung_process_is_killed_at_its_deadline() {
        let mut cmd = Command::new("sleep");
        cmd.arg("30");
        let e = run_bounded(&mut cmd, Duration::from_millis(200))
            .err()
            .expect("killed");
        assert_eq!(e.kind(), std::io::ErrorKind::TimedOut);
        let mut ok = Command::new("true");
        assert!(run_bounded(&mut ok, PER_PROCESS).unwrap().status.success());
    }
}
