//! The record at scale: histories of N copies of a real run dir, one a day, and what `cell gate`
//! and `cell report` cost on them, run as a user runs them, for one `cell` binary or several
//! side by side; with the bytes one run adds to the results branch.
//!
//! `cargo run --release -p cell-bench-history -- --from DIR --cell [LABEL=]PATH …`; see
//! README.md for the method and `--help` for the options.

mod history;
mod spawn;

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context as _, Result, ensure};
use cell_schema::store::GATE_JSON;
use cell_stats::{SplitMix64, median, shuffle};
use clap::Parser;
use serde::Serialize;

use history::{History, RunSize, Source};

/// bench/history: gate and report time, report size and results size per run, by history size.
#[derive(Parser)]
#[command(version, about)]
struct Args {
    /// A real run dir (`<YYYY-MM-DD>-<run-id>/<cell-id>/results.json` …): one for every binary,
    /// or one per --cell, in the same order (a binary that writes a newer schema measured on
    /// its own run).
    #[arg(long, required = true)]
    from: Vec<PathBuf>,
    /// A `cell` binary, `[LABEL=]PATH`; repeat it to measure binaries side by side.
    #[arg(long = "cell", required = true, value_name = "[LABEL=]PATH")]
    cells: Vec<String>,
    /// The project root whose versions.env and cell/cell.toml the gate reads (default: this
    /// repository).
    #[arg(long)]
    root: Option<PathBuf>,
    /// History sizes, in runs.
    #[arg(long, value_delimiter = ',', default_value = "50,400,1600")]
    sizes: Vec<usize>,
    /// Timed repetitions of each measurement, after one untimed warm-up round.
    #[arg(long, default_value_t = 5)]
    reps: u32,
    /// Seed of the order of each round.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Keep the built histories (and the last report of each binary and size); say where.
    #[arg(long)]
    keep: bool,
    /// Output on stdout.
    #[arg(long, value_enum, default_value = "human")]
    format: Format,
    /// Also write the JSON (every sample, the host and the summaries) to this file.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum Format {
    /// A Markdown table and one line per binary.
    Human,
    /// Every sample and the summaries.
    Json,
}

/// A `cell` binary and the source its histories are built from.
#[derive(Serialize)]
struct Bin {
    label: String,
    path: PathBuf,
    /// Index into [`Plan::sources`].
    #[serde(skip)]
    source: usize,
    from: PathBuf,
}

/// The resolved arguments: every path absolute and checked.
struct Plan {
    bins: Vec<Bin>,
    sources: Vec<Source>,
    root: PathBuf,
    sizes: Vec<usize>,
    reps: u32,
    seed: u64,
    keep: bool,
    format: Format,
    json: Option<PathBuf>,
}

fn absolute(p: &Path) -> Result<PathBuf> {
    std::path::absolute(p).with_context(|| format!("{}", p.display()))
}

impl Plan {
    fn resolve(a: Args) -> Result<Self> {
        ensure!(
            a.from.len() == 1 || a.from.len() == a.cells.len(),
            "--from: give one run dir for all binaries or one per --cell ({} given for {} binaries)",
            a.from.len(),
            a.cells.len()
        );
        let sources = a
            .from
            .iter()
            .map(|d| Source::read(&absolute(d)?))
            .collect::<Result<Vec<_>>>()?;
        let mut bins = Vec::new();
        for (i, s) in a.cells.iter().enumerate() {
            let (label, path) = match s.split_once('=') {
                Some((l, p)) if !l.is_empty() && !l.contains('/') => (l, p),
                _ => (s.as_str(), s.as_str()),
            };
            let path = absolute(Path::new(path))?;
            ensure!(
                path.is_file(),
                "--cell {s}: {} is not a file",
                path.display()
            );
            ensure!(
                bins.iter().all(|b: &Bin| b.label != label),
                "--cell {s}: the label `{label}` is given twice"
            );
            let source = if sources.len() == 1 { 0 } else { i };
            bins.push(Bin {
                label: label.to_owned(),
                path,
                source,
                from: sources[source].dir.clone(),
            });
        }
        // The default: this repository, where the bench was built.
        let root = a
            .root
            .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."));
        let root =
            std::fs::canonicalize(&root).with_context(|| format!("--root {}", root.display()))?;
        let env = root.join("versions.env");
        ensure!(
            env.is_file(),
            "{}: not found: --root must be a project root",
            env.display()
        );
        let mut sizes = a.sizes;
        sizes.sort_unstable();
        sizes.dedup();
        ensure!(
            sizes.first().is_some_and(|&n| n >= 2),
            "--sizes: every history needs at least 2 runs (the gate's run and its baseline)"
        );
        ensure!(a.reps >= 1, "--reps: at least 1");
        Ok(Self {
            bins,
            sources,
            root,
            sizes,
            reps: a.reps,
            seed: a.seed,
            keep: a.keep,
            format: a.format,
            json: a.json.as_deref().map(absolute).transpose()?,
        })
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
enum Op {
    Gate,
    Report,
}

/// One measurement of one round.
#[derive(Clone, Copy)]
struct Step {
    bin: usize,
    size: usize,
    op: Op,
}

/// One timed run of `cell`.
#[derive(Serialize)]
struct Sample {
    round: u32,
    position: usize,
    binary: String,
    runs: usize,
    op: Op,
    wall_s: f64,
    cpu_s: f64,
    max_rss_bytes: u64,
    exit: i32,
    #[serde(skip_serializing_if = "Option::is_none")]
    report_bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    report_files: Option<usize>,
}

fn failed(bin: &Bin, what: &str, ran: &spawn::Ran) -> anyhow::Error {
    let tail: Vec<&str> = ran.stderr.lines().rev().take(5).collect();
    let tail: Vec<&str> = tail.into_iter().rev().collect();
    anyhow::anyhow!(
        "{} ({}): `cell {what}` exited {}:\n{}",
        bin.label,
        bin.path.display(),
        ran.code,
        tail.join("\n")
    )
}

/// The bytes and the number of the files under `dir`.
fn dir_size(dir: &Path) -> Result<(u64, usize)> {
    let files = history::files(dir)?;
    let mut bytes = 0;
    for f in &files {
        let p = dir.join(f);
        bytes += std::fs::metadata(&p)
            .with_context(|| format!("{}", p.display()))?
            .len();
    }
    Ok((bytes, files.len()))
}

/// Removes a file or a dir with what it holds; nothing there is fine.
fn remove(path: &Path) -> Result<()> {
    let gone = if path.is_dir() {
        std::fs::remove_dir_all(path)
    } else {
        std::fs::remove_file(path)
    };
    match gone {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(e).with_context(|| format!("removing {}", path.display()))
        }
        _ => Ok(()),
    }
}

/// Runs one step; `check` (the warm-up round) also checks that the gate judged the newest run
/// against the one before it.
fn measure(plan: &Plan, h: &History, step: Step, scratch: &Path, check: bool) -> Result<Sample> {
    let bin = &plan.bins[step.bin];
    let cell = |args: &[&OsStr]| spawn::run(&bin.path, args, &plan.root, scratch);
    let report = scratch.join(format!("report-{}-{}", step.bin, h.runs));
    let (ran, report_size) = match step.op {
        Op::Gate => {
            let args = [
                OsStr::new("gate"),
                h.newest.as_os_str(),
                OsStr::new("--history"),
                h.dir.as_os_str(),
                OsStr::new("--root"),
                plan.root.as_os_str(),
            ];
            // Each gate starts from the same history: without the gate.json another wrote.
            remove(&h.newest.join(GATE_JSON))?;
            let ran = cell(&args)?;
            if !matches!(ran.code, 0 | 1) {
                return Err(failed(bin, &format!("gate {}", h.newest.display()), &ran));
            }
            if let (true, Some(prev)) = (check, &h.previous) {
                let prev = prev.to_string();
                let json = std::fs::read_to_string(h.newest.join(GATE_JSON)).unwrap_or_default();
                ensure!(
                    ran.stdout.contains(&prev) || json.contains(&prev),
                    "{}: `cell gate {}` did not name the run before it, {prev}: the built \
                     history is not read as a series of days",
                    bin.label,
                    h.newest.display()
                );
            }
            (ran, None)
        }
        Op::Report => {
            remove(&report)?;
            let args = [
                OsStr::new("report"),
                OsStr::new("--history"),
                h.dir.as_os_str(),
                OsStr::new("--out"),
                report.as_os_str(),
            ];
            let ran = cell(&args)?;
            if ran.code != 0 {
                return Err(failed(bin, "report", &ran));
            }
            let size = dir_size(&report)?;
            if !plan.keep {
                remove(&report)?;
            }
            (ran, Some(size))
        }
    };
    Ok(Sample {
        round: 0,
        position: 0,
        binary: bin.label.clone(),
        runs: h.runs,
        op: step.op,
        wall_s: ran.wall_s,
        cpu_s: ran.cpu_s,
        max_rss_bytes: ran.max_rss_bytes,
        exit: ran.code,
        report_bytes: report_size.map(|(b, _)| b),
        report_files: report_size.map(|(_, n)| n),
    })
}

/// Median, min and max of some seconds.
#[derive(Clone, Copy, Serialize)]
struct Spread {
    median: f64,
    min: f64,
    max: f64,
}

impl Spread {
    fn of(xs: &[f64]) -> Self {
        Self {
            median: median(xs),
            min: xs.iter().copied().fold(f64::INFINITY, f64::min),
            max: xs.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        }
    }
}

/// What one command cost on one history: wall seconds, the median CPU seconds, the peak
/// resident set of the largest run.
#[derive(Serialize)]
struct Cost {
    wall_s: Spread,
    cpu_s: f64,
    max_rss_bytes: u64,
}

impl Cost {
    fn of(samples: &[&Sample]) -> Self {
        let wall: Vec<f64> = samples.iter().map(|s| s.wall_s).collect();
        let cpu: Vec<f64> = samples.iter().map(|s| s.cpu_s).collect();
        Self {
            wall_s: Spread::of(&wall),
            cpu_s: median(&cpu),
            max_rss_bytes: samples.iter().map(|s| s.max_rss_bytes).max().unwrap_or(0),
        }
    }
}

/// One line of the table: a binary on a history size.
#[derive(Serialize)]
struct Row {
    binary: String,
    runs: usize,
    gate: Cost,
    report: Cost,
    report_bytes: u64,
    report_files: usize,
}

/// Per binary: the bytes of one run of its source, and how time grows with the history.
#[derive(Serialize)]
struct BinSummary {
    binary: String,
    from: PathBuf,
    results_per_run: RunSize,
    /// The smallest and largest history sizes the ratios compare.
    ratio_runs: (usize, usize),
    /// Median wall time at the largest size over that at the smallest; the same of CPU time.
    gate_ratio: f64,
    gate_cpu_ratio: f64,
    report_ratio: f64,
    report_cpu_ratio: f64,
}

/// The machine, and its load average before and after.
#[derive(Serialize)]
struct Host {
    cpu: String,
    nproc: usize,
    load_before: String,
    load_after: String,
}

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("model name"))
                .map(|l| l.trim_start_matches([' ', '\t', ':']).to_owned())
        })
        .unwrap_or_default()
}

#[derive(Serialize)]
struct Settings<'a> {
    sizes: &'a [usize],
    reps: u32,
    seed: u64,
    root: &'a Path,
    binaries: &'a [Bin],
}

#[derive(Serialize)]
struct Output<'a> {
    host: Host,
    settings: Settings<'a>,
    rows: Vec<Row>,
    binaries: Vec<BinSummary>,
    samples: Vec<Sample>,
    seconds: f64,
}

fn summarize(plan: &Plan, samples: &[Sample]) -> (Vec<Row>, Vec<BinSummary>) {
    let pick = |bin: &str, runs: usize, op: Op| -> Vec<&Sample> {
        samples
            .iter()
            .filter(|s| s.binary == bin && s.runs == runs && s.op == op)
            .collect()
    };
    let mut rows = Vec::new();
    for b in &plan.bins {
        for &n in &plan.sizes {
            let reports = pick(&b.label, n, Op::Report);
            rows.push(Row {
                binary: b.label.clone(),
                runs: n,
                gate: Cost::of(&pick(&b.label, n, Op::Gate)),
                report: Cost::of(&reports),
                report_bytes: reports
                    .iter()
                    .filter_map(|s| s.report_bytes)
                    .max()
                    .unwrap_or(0),
                report_files: reports
                    .iter()
                    .filter_map(|s| s.report_files)
                    .max()
                    .unwrap_or(0),
            });
        }
    }
    let (lo, hi) = (plan.sizes[0], plan.sizes[plan.sizes.len() - 1]);
    let bins = plan
        .bins
        .iter()
        .map(|b| {
            let row = |n: usize| rows.iter().find(|r| r.binary == b.label && r.runs == n);
            let ratio = |f: fn(&Row) -> f64| match (row(lo), row(hi)) {
                (Some(l), Some(h)) => f(h) / f(l),
                _ => f64::NAN,
            };
            BinSummary {
                binary: b.label.clone(),
                from: b.from.clone(),
                results_per_run: plan.sources[b.source].size,
                ratio_runs: (lo, hi),
                gate_ratio: ratio(|r| r.gate.wall_s.median),
                gate_cpu_ratio: ratio(|r| r.gate.cpu_s),
                report_ratio: ratio(|r| r.report.wall_s.median),
                report_cpu_ratio: ratio(|r| r.report.cpu_s),
            }
        })
        .collect();
    (rows, bins)
}

/// `1234567` → `1,234,567`.
fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn human(o: &Output) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    let h = &o.host;
    let _ = writeln!(
        s,
        "{} × {}, load average {} before, {} after; {} timed rep(s) after a warm-up round, \
         seed {}, {:.0} s in all\n",
        h.nproc, h.cpu, h.load_before, h.load_after, o.settings.reps, o.settings.seed, o.seconds
    );
    s.push_str(
        "| binary | runs | gate s, median (min–max) | gate CPU s | gate peak RSS MB \
         | report s, median (min–max) | report CPU s | report peak RSS MB | report MB \
         | report files |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    let spread = |x: &Spread| format!("{:.2} ({:.2}–{:.2})", x.median, x.min, x.max);
    let mb = |b: u64| b as f64 / 1e6;
    for r in &o.rows {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {:.2} | {:.0} | {} | {:.2} | {:.0} | {:.1} | {} |",
            r.binary,
            thousands(r.runs as u64),
            spread(&r.gate.wall_s),
            r.gate.cpu_s,
            mb(r.gate.max_rss_bytes),
            spread(&r.report.wall_s),
            r.report.cpu_s,
            mb(r.report.max_rss_bytes),
            mb(r.report_bytes),
            r.report_files
        );
    }
    s.push('\n');
    for b in &o.binaries {
        let z = &b.results_per_run;
        let (lo, hi) = b.ratio_runs;
        let _ = writeln!(
            s,
            "- {}: one run is {} B (gzip -6 {} B), of which {} results.json {} B (gzip -6 {} B); \
             gate({hi})/gate({lo}) {:.2}× (CPU {:.2}×), report({hi})/report({lo}) {:.2}× \
             (CPU {:.2}×)",
            b.binary,
            thousands(z.dir_bytes),
            thousands(z.dir_gzip_bytes),
            z.results_files,
            thousands(z.results_bytes),
            thousands(z.results_gzip_bytes),
            b.gate_ratio,
            b.gate_cpu_ratio,
            b.report_ratio,
            b.report_cpu_ratio
        );
    }
    s
}

fn run() -> Result<ExitCode> {
    let plan = Plan::resolve(Args::parse())?;
    let started = Instant::now();
    let load_before = loadavg();
    let work = tempfile::Builder::new()
        .prefix("cell-bench-history-")
        .tempdir()
        .context("creating a temp dir")?;
    eprintln!("building histories in {}", work.path().display());
    let mut histories: Vec<Vec<History>> = Vec::new();
    for (i, source) in plan.sources.iter().enumerate() {
        let mut per = Vec::new();
        for &n in &plan.sizes {
            let t = Instant::now();
            let dir = work.path().join(format!("history-{i}-{n}"));
            per.push(history::build(source, n, &dir)?);
            eprintln!(
                "  {n} runs of {} in {:.1} s",
                source.name,
                t.elapsed().as_secs_f64()
            );
        }
        histories.push(per);
    }
    let mut steps = Vec::new();
    for bin in 0..plan.bins.len() {
        for size in 0..plan.sizes.len() {
            for op in [Op::Gate, Op::Report] {
                steps.push(Step { bin, size, op });
            }
        }
    }
    let mut rng = SplitMix64::new(plan.seed);
    let mut samples = Vec::new();
    for round in 0..=plan.reps {
        let t = Instant::now();
        shuffle(&mut steps, &mut rng);
        for (position, &step) in steps.iter().enumerate() {
            let bin = &plan.bins[step.bin];
            let h = &histories[bin.source][step.size];
            let mut s = measure(&plan, h, step, work.path(), round == 0)?;
            if round > 0 {
                (s.round, s.position) = (round, position);
                samples.push(s);
            }
        }
        let what = if round == 0 { "warm-up" } else { "round" };
        eprintln!(
            "{what} {round}/{} in {:.1} s",
            plan.reps,
            t.elapsed().as_secs_f64()
        );
    }
    let (rows, binaries) = summarize(&plan, &samples);
    let out = Output {
        host: Host {
            cpu: cpu_model(),
            nproc: std::thread::available_parallelism().map_or(1, std::num::NonZero::get),
            load_before,
            load_after: loadavg(),
        },
        settings: Settings {
            sizes: &plan.sizes,
            reps: plan.reps,
            seed: plan.seed,
            root: &plan.root,
            binaries: &plan.bins,
        },
        rows,
        binaries,
        samples,
        seconds: started.elapsed().as_secs_f64(),
    };
    let json = serde_json::to_string_pretty(&out)? + "\n";
    if let Some(f) = &plan.json {
        std::fs::write(f, &json).with_context(|| format!("{}", f.display()))?;
    }
    match plan.format {
        Format::Human => print!("{}", human(&out)),
        Format::Json => print!("{json}"),
    }
    if plan.keep {
        eprintln!(
            "kept the histories and reports in {}",
            work.keep().display()
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn main() -> ExitCode {
    match run() {
        Ok(code) => code,
        Err(e) => {
            eprintln!("Error: {e:#}");
            ExitCode::from(2)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_separators() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }
}
