//! The benchmark of the measurement itself (docs/protocol.md): how far apart do repeated verdicts
//! land, how often does an A/A comparison fail the gate, how often is a known 3% slowdown
//! caught — for `cell`'s protocol and for the plain protocol, side by side, in one run, at the
//! same budget of process runs.
//!
//! Binaries: the reference (clang -O2 of bench/workload/c), an A/A candidate (a byte-identical
//! copy at a path of the same length), and A/B candidates doing 3% more work on mix and on
//! primes (`-DMIX_ITERS`, `-DSIEVE_LIMIT`). Conditions: no added load, a busy loop on the other
//! CPU, a busy loop on the timed CPU.
//!
//! `cargo run --release -p cell-bench-precision -- [--repeats 20] [--phases mix,primes,fib]
//!  [--conditions none,other,same] [--budget 14] [--random-layout yes] [--adaptive yes] [--json FILE]`

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use cell_run::protocol::{self, Executor, Params, Sample, Unit};
use cell_run::timing::Engine;
use cell_schema::{Clock, GateStatus, Phase};
use cell_stats::{median, median_ci};

struct Args {
    repeats: usize,
    phases: Vec<String>,
    conditions: Vec<String>,
    budget: u32,
    json: Option<PathBuf>,
    root: PathBuf,
    /// Also run cell's protocol with address-space randomization left on.
    random_layout: bool,
    /// Also run the adaptive budget (`REPS` to `REPS_MAX` of versions.env) on phases with an A/B.
    adaptive: bool,
}

fn args() -> Args {
    let mut a = Args {
        repeats: 20,
        phases: vec!["mix".into(), "primes".into(), "fib".into()],
        conditions: vec!["none".into(), "other".into(), "same".into()],
        budget: 14,
        json: None,
        root: PathBuf::from("."),
        random_layout: false,
        adaptive: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let v = it.next().unwrap_or_else(|| panic!("{flag} needs a value"));
        match flag.as_str() {
            "--repeats" => a.repeats = v.parse().expect("--repeats N"),
            "--phases" => a.phases = v.split(',').map(str::to_owned).collect(),
            "--conditions" => a.conditions = v.split(',').map(str::to_owned).collect(),
            "--budget" => a.budget = v.parse().expect("--budget N"),
            "--json" => a.json = Some(PathBuf::from(v)),
            "--root" => a.root = PathBuf::from(v),
            "--random-layout" => a.random_layout = v == "yes",
            "--adaptive" => a.adaptive = v == "yes",
            _ => panic!("unknown flag {flag}"),
        }
    }
    assert!(
        a.budget >= 4 && a.budget.is_multiple_of(2),
        "--budget is an even number of process runs, at least 4"
    );
    a
}

/// The binaries compared.
struct Bins {
    reference: String,
    aa: String,
    ab_mix: String,
    ab_primes: String,
}

fn build(dir: &Path, root: &Path) -> Bins {
    let src = root.join("bench/workload/c/main.c");
    let cc = |out: &Path, extra: &[&str]| {
        let st = Command::new("clang")
            .arg("-O2")
            .args(extra)
            .arg("-o")
            .arg(out)
            .arg(&src)
            .status()
            .expect("clang is needed: apt-get install clang");
        assert!(st.success(), "clang failed");
    };
    for d in ["ref", "a-a", "mix", "pri"] {
        std::fs::create_dir_all(dir.join(d)).unwrap();
    }
    cc(&dir.join("ref/workload"), &[]);
    std::fs::copy(dir.join("ref/workload"), dir.join("a-a/workload")).unwrap();
    // 3% more work: 206,000,000 mix iterations; a sieve over 51,500,000 numbers.
    cc(&dir.join("mix/workload"), &["-DMIX_ITERS=206000000u"]);
    cc(&dir.join("pri/workload"), &["-DSIEVE_LIMIT=51500000u"]);
    let s = |d: &str| dir.join(d).join("workload").display().to_string();
    Bins {
        reference: s("ref"),
        aa: s("a-a"),
        ab_mix: s("mix"),
        ab_primes: s("pri"),
    }
}

/// A spinning thread pinned to one CPU, until dropped.
struct Busy {
    stop: Arc<AtomicBool>,
    handle: Option<std::thread::JoinHandle<()>>,
}

impl Busy {
    fn on(cpu: usize) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let s = Arc::clone(&stop);
        let handle = std::thread::spawn(move || {
            // SAFETY: plain data for the affinity call of this thread.
            unsafe {
                let mut set: libc::cpu_set_t = std::mem::zeroed();
                libc::CPU_SET(cpu, &mut set);
                libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &raw const set);
            }
            let mut x: u64 = 1;
            while !s.load(Ordering::Relaxed) {
                for _ in 0..10_000 {
                    x = std::hint::black_box(
                        x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1),
                    );
                }
            }
        });
        Self {
            stop,
            handle: Some(handle),
        }
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

/// The plain protocol: N runs of the reference then N of the candidate, unpinned, wall clock,
/// first of each dropped, median over median.
fn plain(reference: &str, candidate: &str, phase: &str, budget: u32) -> f64 {
    let n = budget / 2;
    let time = |bin: &str| -> Vec<f64> {
        (0..n)
            .map(|_| {
                let t = Instant::now();
                let st = Command::new(bin)
                    .arg(phase)
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .status()
                    .expect("run");
                assert!(st.success());
                t.elapsed().as_secs_f64()
            })
            .skip(1)
            .collect()
    };
    let r = time(reference);
    let c = time(candidate);
    median(&c) / median(&r)
}

struct Real<'a> {
    engine: &'a mut Engine,
    bins: [&'a str; 2],
    dir: &'a Path,
}

impl Executor for Real<'_> {
    fn run(&mut self, unit: usize, phase: &Phase) -> Sample {
        let argv = vec![self.bins[unit].to_owned(), phase.to_string()];
        let m = self
            .engine
            .run(&argv, self.dir, Duration::from_mins(2), b"")
            .expect("run");
        Sample {
            wall_s: m.wall_s,
            cpu_s: m.cpu_s,
            user_s: m.user_s,
            sys_s: m.sys_s,
            steal_s: None,
            maxrss_kib: m.maxrss_kib,
            ok: true,
            wrong: None,
            printed: None,
            timed_out: false,
        }
    }
}

/// cell's protocol: rounds of (reference, candidate) in a seeded random order, pinned, CPU
/// time, warm-up excluded, median of per-round ratios with its CI; returns the process runs
/// it took.
fn cell(
    reference: &str,
    candidate: &str,
    phase: &str,
    params: &Params,
    randomize: bool,
    dir: &Path,
) -> (f64, f64, f64, u32) {
    let mut engine = Engine::with_layout(dir, randomize).expect("engine");
    let params = Params {
        phases: vec![Phase::from(phase)],
        ..params.clone()
    };
    let units = vec![
        Unit {
            phases: params.phases.clone(),
            clock: Clock::Cpu
        };
        2
    ];
    let mut exec = Real {
        engine: &mut engine,
        bins: [reference, candidate],
        dir,
    };
    let out = protocol::run(&units, &params, &mut exec, &mut |_| {});
    let rs = protocol::ratios(&out.runs, out.warmup, 1, &Phase::from(phase), Clock::Cpu);
    let ci = median_ci(&rs, params.ci_level);
    (
        ci.median,
        ci.lo,
        ci.hi,
        u32::try_from(out.runs.len()).unwrap_or(u32::MAX),
    )
}

#[derive(Default, Clone)]
struct Cellf {
    verdicts: Vec<f64>,
    fails: usize,
    runs: Vec<u32>,
}

fn three_sigma_pct(xs: &[f64]) -> f64 {
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0).max(1.0);
    3.0 * var.sqrt() / mean * 100.0
}

/// What every comparison of a run shares.
struct Bench<'a> {
    args: &'a Args,
    settings: &'a cell_model::Settings,
    bins: &'a Bins,
    dir: &'a Path,
}

impl Bench<'_> {
    /// Every protocol's verdicts on one comparison, repeated, each repeat running every
    /// protocol back to back (interleaved).
    fn compare(&self, phase: &str, candidate: &str, has_ab: bool) -> Vec<(&'static str, Cellf)> {
        let (a, s) = (self.args, self.settings);
        // name → results, in the order printed
        let mut rows: Vec<(&str, Cellf)> =
            vec![("plain", Cellf::default()), ("cell", Cellf::default())];
        if a.random_layout {
            rows.push(("cell, ASLR on", Cellf::default()));
        }
        if a.adaptive && has_ab {
            rows.push(("cell, adaptive", Cellf::default()));
        }
        let rounds = a.budget / 2;
        let fixed = Params {
            phases: vec![],
            warmup: 1,
            min_rounds: rounds - 1,
            max_rounds: rounds - 1,
            step: 1,
            ci_target: 0.0,
            ci_level: s.ci_level,
            rows_per_reference: 3,
            time_cap_s: 1e9,
            seed: 0,
            mode: cell_schema::ProtocolMode::Sequential,
            futility_margin: 0.0,
        };
        let adaptive = Params {
            warmup: s.drop,
            min_rounds: s.min_rounds(),
            max_rounds: s.max_rounds(),
            step: s.reps_step,
            ci_target: s.ci_target,
            ..fixed.clone()
        };
        for rep in 0..a.repeats {
            let seed = 1000 + rep as u64;
            for (name, f) in &mut rows {
                let with_seed = |p: &Params| Params { seed, ..p.clone() };
                let reference = self.bins.reference.as_str();
                let (m, lo, hi, runs) = match *name {
                    "plain" => {
                        let v = plain(reference, candidate, phase, a.budget);
                        // The plain protocol has no interval: its gate reads the point.
                        (v, v, v, a.budget)
                    }
                    "cell" => cell(
                        reference,
                        candidate,
                        phase,
                        &with_seed(&fixed),
                        false,
                        self.dir,
                    ),
                    "cell, ASLR on" => cell(
                        reference,
                        candidate,
                        phase,
                        &with_seed(&fixed),
                        true,
                        self.dir,
                    ),
                    _ => cell(
                        reference,
                        candidate,
                        phase,
                        &with_seed(&adaptive),
                        false,
                        self.dir,
                    ),
                };
                f.verdicts.push(m);
                f.runs.push(runs);
                if cell_verdict::three_way(1.0, lo, hi, s.tolerance) == GateStatus::Fail {
                    f.fails += 1;
                }
            }
        }
        rows
    }
}

/// One table line and one JSON record per protocol.
fn report(
    rows: &[(&str, Cellf)],
    (phase, cond, kind): (&str, &str, &str),
    json: &mut Vec<serde_json::Value>,
) {
    for (name, f) in rows {
        let mean = f.verdicts.iter().sum::<f64>() / f.verdicts.len() as f64;
        let s3 = three_sigma_pct(&f.verdicts);
        let runs = f64::from(f.runs.iter().sum::<u32>()) / f.runs.len() as f64;
        println!(
            "| {phase} | {cond} | {kind} | {name} | {runs:.0} | {} | {mean:.4} | {s3:.2}% | {}/{} |",
            f.verdicts.len(),
            f.fails,
            f.verdicts.len()
        );
        json.push(serde_json::json!({"phase": phase, "load": cond, "comparison": kind, "protocol": name, "runs_per_verdict": runs, "verdicts": f.verdicts, "mean": mean, "three_sigma_pct": s3, "fails": f.fails}));
    }
}

fn main() {
    let a = args();
    let plan =
        cell_model::Plan::load(&a.root).expect("run from the repository root (or pass --root)");
    let s = &plan.settings;
    let tol = s.tolerance;
    let dir = tempfile::tempdir().expect("temp dir");
    let bins = build(dir.path(), &a.root);
    let cpus = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    let timed_cpu = cpus - 1;
    let other_cpu = 0;
    println!(
        "precision: {} repeats, budget {} process runs per verdict, tolerance ±{tol}, timed CPU {timed_cpu}",
        a.repeats, a.budget
    );
    println!();
    println!(
        "| phase | load | comparison | protocol | process runs per verdict | verdicts | mean ratio | 3σ of the verdict | gate FAIL |"
    );
    println!("|---|---|---|---|---:|---:|---:|---:|---:|");
    let bench = Bench {
        args: &a,
        settings: s,
        bins: &bins,
        dir: dir.path(),
    };
    let mut json = Vec::new();
    let started = Instant::now();
    for phase in &a.phases {
        let ab = match phase.as_str() {
            "mix" => Some(bins.ab_mix.as_str()),
            "primes" => Some(bins.ab_primes.as_str()),
            _ => None,
        };
        for cond in &a.conditions {
            let _busy = match cond.as_str() {
                "none" => None,
                "other" => Some(Busy::on(other_cpu)),
                "same" => Some(Busy::on(timed_cpu)),
                c => panic!("unknown condition {c}"),
            };
            let comparisons: Vec<(&str, &str)> = std::iter::once(("A/A", bins.aa.as_str()))
                .chain(ab.map(|b| ("A/B +3%", b)))
                .collect();
            for (kind, cand) in comparisons {
                let rows = bench.compare(phase, cand, ab.is_some());
                report(&rows, (phase, cond, kind), &mut json);
            }
        }
    }
    println!();
    println!("took {:.0} s", started.elapsed().as_secs_f64());
    if let Some(path) = a.json {
        std::fs::write(&path, cell_schema::to_json(&json)).expect("write --json");
    }
}
