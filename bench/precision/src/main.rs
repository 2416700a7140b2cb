//! The benchmark of the measurement itself (docs/protocol.md): how far apart do repeated verdicts
//! land, how often does an A/A comparison fail the gate, how often is a known 3% slowdown
//! caught — for `cell`'s protocol, the plain protocol and hyperfine, interleaved in one run, at
//! the same budget of process runs, and for cell on each clock.
//!
//! Binaries: the reference (clang -O2 of bench/workload/c), an A/A candidate (a byte-identical
//! copy at a path of the same length), and A/B candidates doing 3% more work on mix and on
//! primes (`-DMIX_ITERS`, `-DSIEVE_LIMIT`). Loads: none, a busy loop on the other CPU, a busy
//! loop on the timed CPU. See README.md for the method and `--help` for the options.
//!
//! `--gate` ([`gate`]) measures the gate's verdicts between two runs instead: A/A, +3% and
//! +10%, the old rule and the new one on the same samples, beside hyperfine at the same budget.

mod gate;
mod hyperfine;
mod protocols;
mod report;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use anyhow::{Context as _, Result, bail, ensure};
use cell_stats::{SplitMix64, shuffle};
use clap::Parser;
use serde::Serialize;

use protocols::{Protocol, Trial};
use report::{Comparison, Key, Line, Load, Record, Workload};

/// bench/precision: A/A and A/B verdicts of cell's protocol beside the plain one and hyperfine.
#[derive(Parser)]
#[command(version, about)]
struct Args {
    /// Repeats: verdicts per line of the table.
    #[arg(long, default_value_t = 20)]
    repeats: u32,
    /// Workload phases.
    #[arg(long, value_enum, value_delimiter = ',', default_value = "mix")]
    phases: Vec<Workload>,
    /// Added loads, for both comparisons (the default: both under none,other).
    #[arg(long, value_enum, value_delimiter = ',')]
    conditions: Option<Vec<Load>>,
    /// Loads the A/A comparison runs under, instead of --conditions.
    #[arg(long, value_enum, value_delimiter = ',')]
    aa_loads: Option<Vec<Load>>,
    /// Loads the A/B +3% comparison runs under, instead of --conditions.
    #[arg(long, value_enum, value_delimiter = ',')]
    ab_loads: Option<Vec<Load>>,
    /// Protocols, each a verdict per comparison and repeat: plain, cell, cell-duet (a row and
    /// its reference at the same moment on two CPUs), hyperfine, cell-adaptive
    /// (`REPS`..`REPS_MAX` of versions.env), cell-aslr (layout randomized).
    #[arg(long, value_delimiter = ',', default_value = "plain,cell,cell-duet,hyperfine", value_parser = protocols::by_name)]
    protocols: Vec<&'static Protocol>,
    /// Process runs per verdict, warm-ups included (even, at least 4).
    #[arg(long, default_value_t = 14)]
    budget: u32,
    /// Seed of the protocols' order in each repeat.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Also write every verdict here.
    #[arg(long)]
    json: Option<PathBuf>,
    /// The repository root.
    #[arg(long, default_value = ".")]
    root: PathBuf,
    /// Gate verdicts between two runs instead (README.md, "Gate verdicts between runs"): the
    /// old rule, the new one and hyperfine on the same samples, A/A, +3% and +10%; reads
    /// --repeats, --phases, --conditions (default none,other), --seed, --json and --root.
    #[arg(long, conflicts_with_all = ["aa_loads", "ab_loads", "protocols", "budget"])]
    gate: bool,
}

/// Which comparison runs under which load, resolved from the three load options.
struct Matrix {
    aa: BTreeSet<Load>,
    ab: BTreeSet<Load>,
}

impl Matrix {
    /// The default covers A/A and A/B under no load and a busy other CPU, on mix: what fits
    /// in an hour here (README.md, "Default and the rest").
    fn of(a: &Args) -> Self {
        let pick = |own: &Option<Vec<Load>>, default: &[Load]| -> BTreeSet<Load> {
            own.as_deref()
                .or(a.conditions.as_deref())
                .unwrap_or(default)
                .iter()
                .copied()
                .collect()
        };
        Self {
            aa: pick(&a.aa_loads, &[Load::None, Load::Other]),
            ab: pick(&a.ab_loads, &[Load::None, Load::Other]),
        }
    }

    fn loads(&self) -> BTreeSet<Load> {
        self.aa.union(&self.ab).copied().collect()
    }

    fn runs(&self, cmp: Comparison, load: Load) -> bool {
        match cmp {
            Comparison::Aa => self.aa.contains(&load),
            Comparison::Ab => self.ab.contains(&load),
        }
    }
}

/// The binaries compared.
struct Bins {
    reference: String,
    aa: String,
    ab_mix: String,
    ab_primes: String,
}

impl Bins {
    /// The comparisons a phase has: A/A always, A/B where a 3% knob exists.
    fn comparisons(&self, phase: Workload) -> Vec<(Comparison, &str)> {
        let ab = match phase {
            Workload::Mix => Some(self.ab_mix.as_str()),
            Workload::Primes => Some(self.ab_primes.as_str()),
            Workload::Fib => None,
        };
        std::iter::once((Comparison::Aa, self.aa.as_str()))
            .chain(ab.map(|b| (Comparison::Ab, b)))
            .collect()
    }
}

/// Work knobs of bench/workload/c/main.c, whose defaults are `MIX_ITERS` 200,000,000 and
/// `SIEVE_LIMIT` 50,000,000: 3% more work is 206,000,000 mix iterations and a sieve over
/// 51,500,000 numbers; 10% more, 220,000,000 and 55,000,000.
const MIX_PLUS_3: &str = "-DMIX_ITERS=206000000u";
const SIEVE_PLUS_3: &str = "-DSIEVE_LIMIT=51500000u";
const MIX_PLUS_10: &str = "-DMIX_ITERS=220000000u";
const SIEVE_PLUS_10: &str = "-DSIEVE_LIMIT=55000000u";

/// clang -O2 of bench/workload/c with `defines` into `dir/<name>/workload`: every `name` of
/// the bench is three letters, so every binary's path has the same length (a path's length
/// moves the stack of the process it starts). Returns the path.
fn compile(root: &Path, dir: &Path, name: &str, defines: &[&str]) -> Result<String> {
    let src = root.join("bench/workload/c/main.c");
    let out = dir.join(name).join("workload");
    std::fs::create_dir_all(dir.join(name))?;
    let st = Command::new("clang")
        .arg("-O2")
        .args(defines)
        .arg("-o")
        .arg(&out)
        .arg(&src)
        .stdin(Stdio::null())
        .status()
        .context("clang is needed: apt-get install clang")?;
    ensure!(st.success(), "clang failed on {}", src.display());
    Ok(out.display().to_string())
}

/// A byte-identical copy of the binary at `from` into `dir/<name>/workload` (a path of the same
/// length, `name` being three letters as in [`compile`]). Returns the path.
fn copy_of(from: &str, dir: &Path, name: &str) -> Result<String> {
    let out = dir.join(name).join("workload");
    std::fs::create_dir_all(dir.join(name))?;
    std::fs::copy(from, &out).with_context(|| format!("copying {from}"))?;
    let path = out.display().to_string();
    ensure!(
        path.len() == from.len(),
        "{path} and {from} differ in length"
    );
    Ok(path)
}

fn build(dir: &Path, root: &Path) -> Result<Bins> {
    let reference = compile(root, dir, "ref", &[])?;
    Ok(Bins {
        aa: copy_of(&reference, dir, "a-a")?,
        ab_mix: compile(root, dir, "mix", &[MIX_PLUS_3])?,
        ab_primes: compile(root, dir, "pri", &[SIEVE_PLUS_3])?,
        reference,
    })
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

    /// The load of `load`: cell times on the highest CPU, cpu0 is the other one.
    fn of(load: Load) -> Option<Self> {
        let cpus = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
        match load {
            Load::None => None,
            Load::Other => Some(Self::on(0)),
            Load::Same => Some(Self::on(cpus - 1)),
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

/// One repeat's seeded order, for the JSON.
#[derive(Serialize)]
struct RepeatJson {
    phase: Workload,
    load: Load,
    repeat: u32,
    /// "comparison protocol" in the order they ran.
    order: Vec<String>,
    seconds: f64,
}

/// What a run shares, and what it collected.
struct Bench<'a> {
    args: &'a Args,
    settings: &'a cell_model::Settings,
    bins: &'a Bins,
    matrix: Matrix,
    dir: &'a Path,
    rng: SplitMix64,
    lines: BTreeMap<Key, Line>,
    repeats: Vec<RepeatJson>,
    started: Instant,
}

impl Bench<'_> {
    /// One repeat on `phase` under the load already running: every (comparison, protocol)
    /// once, in a seeded random order, so a slow drift of the host hits every protocol alike.
    fn repeat(&mut self, phase: Workload, load: Load, rep: u32) -> Result<()> {
        let t0 = Instant::now();
        let bins = self.bins;
        let mut trials: Vec<(Comparison, &str, usize)> = bins
            .comparisons(phase)
            .into_iter()
            .filter(|&(cmp, _)| self.matrix.runs(cmp, load))
            .flat_map(|(cmp, cand)| (0..self.args.protocols.len()).map(move |i| (cmp, cand, i)))
            .collect();
        shuffle(&mut trials, &mut self.rng);
        let mut order = Vec::new();
        for (position, (cmp, candidate, i)) in trials.into_iter().enumerate() {
            let protocol = self.args.protocols[i];
            let trial = Trial {
                reference: &bins.reference,
                candidate,
                phase: phase.arg(),
                budget: self.args.budget,
                seed: 1000 + u64::from(rep),
                dir: self.dir,
                settings: self.settings,
            };
            let verdict = (protocol.run)(&trial)
                .with_context(|| format!("{} on {} {}", protocol.name, phase.arg(), cmp.label()))?;
            let position = u32::try_from(position).expect("a repeat has few trials");
            self.lines
                .entry((phase, load, cmp, i))
                .or_insert_with(|| Line {
                    protocol: protocol.name,
                    records: Vec::new(),
                })
                .records
                .push(Record::new(rep, position, verdict));
            order.push(format!("{} {}", cmp.label(), protocol.name));
        }
        let seconds = t0.elapsed().as_secs_f64();
        eprintln!(
            "precision: {} · load {} · repeat {}/{} in {seconds:.0} s ({:.0} s in all)",
            phase.arg(),
            load.label(),
            rep + 1,
            self.args.repeats,
            self.started.elapsed().as_secs_f64()
        );
        self.repeats.push(RepeatJson {
            phase,
            load,
            repeat: rep,
            order,
            seconds,
        });
        Ok(())
    }

    fn measure(&mut self) -> Result<()> {
        let phases: BTreeSet<Workload> = self.args.phases.iter().copied().collect();
        for phase in phases {
            for load in self.matrix.loads() {
                let runs = |(cmp, _): &(Comparison, &str)| self.matrix.runs(*cmp, load);
                if !self.bins.comparisons(phase).iter().any(runs) {
                    continue;
                }
                let _busy = Busy::of(load);
                for rep in 0..self.args.repeats {
                    self.repeat(phase, load, rep)?;
                }
            }
        }
        Ok(())
    }
}

/// The JSON file: the settings of the run, every line, every repeat's order.
#[derive(Serialize)]
struct RunJson<'a> {
    repeats: u32,
    budget: u32,
    tolerance: f64,
    seed: u64,
    protocols: Vec<&'a str>,
    aa_loads: &'a BTreeSet<Load>,
    ab_loads: &'a BTreeSet<Load>,
    versions: &'a BTreeMap<&'a str, String>,
    lines: Vec<report::LineJson<'a>>,
    order: &'a [RepeatJson],
    seconds: f64,
}

fn check_args(a: &Args) -> Result<()> {
    ensure!(
        a.budget >= 4 && a.budget.is_multiple_of(2),
        "--budget is an even number of process runs, at least 4"
    );
    ensure!(a.repeats >= 1, "--repeats is at least 1");
    let mut names: Vec<&str> = a.protocols.iter().map(|p| p.name).collect();
    names.sort_unstable();
    if let Some([twice, _]) = names.windows(2).find(|w| w[0] == w[1]) {
        bail!("--protocols names {twice} twice");
    }
    Ok(())
}

fn run() -> Result<()> {
    let a = Args::parse();
    check_args(&a)?;
    if a.gate {
        return gate::run(&a);
    }
    let mut versions = BTreeMap::new();
    for p in &a.protocols {
        if let Some(check) = p.check {
            versions.insert(p.name, check()?);
        }
    }
    let plan =
        cell_model::Plan::load(&a.root).context("run from the repository root (or pass --root)")?;
    let s = &plan.settings;
    let dir = tempfile::tempdir().context("a temp dir for the binaries")?;
    let bins = build(dir.path(), &a.root)?;
    let names: Vec<&str> = a.protocols.iter().map(|p| p.name).collect();
    let matrix = Matrix::of(&a);
    let tools: Vec<&str> = versions.values().map(String::as_str).collect();
    let list = |loads: &BTreeSet<Load>| -> String {
        let names: Vec<&str> = loads.iter().map(|l| l.label()).collect();
        names.join(",")
    };
    println!(
        "precision: {} repeats, budget {} process runs per verdict, tolerance ±{}, protocols {} ({}), A/A under {}, A/B under {}",
        a.repeats,
        a.budget,
        s.tolerance,
        names.join(","),
        tools.join(", "),
        list(&matrix.aa),
        list(&matrix.ab),
    );
    let mut bench = Bench {
        args: &a,
        settings: s,
        bins: &bins,
        matrix,
        dir: dir.path(),
        rng: SplitMix64::new(a.seed),
        lines: BTreeMap::new(),
        repeats: Vec::new(),
        started: Instant::now(),
    };
    bench.measure()?;
    let seconds = bench.started.elapsed().as_secs_f64();
    println!();
    println!("{}", report::verdict_table(&bench.lines, s.tolerance));
    println!("{}", report::against_cell_table(&bench.lines, s.tolerance));
    println!("{}", report::clock_table(&bench.lines, s.tolerance));
    println!("took {seconds:.0} s");
    if let Some(path) = &a.json {
        let run = RunJson {
            repeats: a.repeats,
            budget: a.budget,
            tolerance: s.tolerance,
            seed: a.seed,
            protocols: names,
            aa_loads: &bench.matrix.aa,
            ab_loads: &bench.matrix.ab,
            versions: &versions,
            lines: report::json_lines(&bench.lines, s.tolerance),
            order: &bench.repeats,
            seconds,
        };
        std::fs::write(path, cell_schema::to_json(&run))
            .with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("Error: {e:#}");
            ExitCode::from(2)
        }
    }
}
