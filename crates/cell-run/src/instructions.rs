//! The exact lane (`INSTRUCTIONS=on`, the default; Linux cells): after timing, every timed
//! row but the A/A control (a copy of the reference) runs under valgrind's cachegrind with its
//! cache simulation on a pinned geometry (`CACHE_I1`, `CACHE_D1`, `CACHE_LL`), once per phase
//! (its cheapest phase twice; every phase three times when those two differ), and its
//! instructions (`Ir`) and estimated cycles are recorded per row and phase. The gate reads
//! them as ratios to the reference's: a code verdict beside the time verdict
//! (docs/protocol.md, "Exact lane").
//!
//! Nothing here fails a job: valgrind missing skips the lane, an instruction valgrind does not
//! know (AVX-512 of a build for the native CPU) or a timeout skips the row, a wrong answer
//! under valgrind skips that phase; each is recorded as the reason.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::fs::File;
use std::io::{self, BufRead as _, BufReader, Read as _};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use cell_model::{Cell, Plan};
use cell_schema::{InstructionLane, Phase, Role, RowName, RowResult, round_time};

use crate::capture;
use crate::job::Timed;
use crate::timing::{Engine, ExitKind, Measured};

/// The package that carries valgrind on Debian and Ubuntu (and the workflow's apt install).
pub use cell_model::VALGRIND_PACKAGE as PACKAGE;

/// The options every count is taken with, before the cache geometry: the cache simulation
/// on, the branch simulation off (its events enter no figure).
pub const OPTIONS: [&str; 3] = ["--tool=cachegrind", "--cache-sim=yes", "--branch-sim=no"];

/// The weights of the estimated cycles: an L1 hit, a last-level hit, a RAM access
/// (Itamar Turner-Trauring's, which iai and iai-callgrind use: docs/protocol.md).
pub const WEIGHTS: Weights = Weights {
    l1: 1,
    ll: 5,
    ram: 35,
};

/// The runs of a row's cheapest phase: two, so a program whose count moves from run to run
/// (a runtime's own threads, its GC) shows it.
const REPEATS: usize = 2;

/// The runs of every phase of a row whose two runs differed: the median of three is recorded.
const REPEATS_MAX: usize = 3;

/// The weights of [`Counts::estimated_cycles`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Weights {
    /// An L1 hit.
    pub l1: u64,
    /// A last-level hit.
    pub ll: u64,
    /// A RAM access (a last-level miss).
    pub ram: u64,
}

/// How long `valgrind --version` may take.
const VERSION_TIMEOUT: Duration = Duration::from_secs(30);

/// The longest line read from an out file at once; the rest of a longer line is passed over.
const LINE_MAX: u64 = 64 * 1024;

/// The `events:` and `summary:` lines kept from an out file at most: one of each is expected,
/// and a second is already an error.
const KEPT_MAX: usize = 8;

/// One row as the lane runs it: for each phase, the argv its timed runs spawn.
#[derive(Clone, Debug)]
pub struct LaneRow {
    /// The row.
    pub name: RowName,
    /// Its phases in order, each with the argv of one run.
    pub phases: Vec<(Phase, Vec<String>)>,
}

/// Where and how the lane runs.
#[derive(Clone, Debug)]
pub struct Setup<'a> {
    /// The valgrind found ([`find_valgrind`]); none skips the lane.
    pub valgrind: Option<PathBuf>,
    /// The working directory of every run (the timed runs' `{work}`); the engine's scratch
    /// files and the out files are made here too.
    pub work: &'a Path,
    /// How long one run under valgrind may take (`INSTRUCTIONS_RUN_TIMEOUT_S`).
    pub timeout: Duration,
    /// The simulated caches.
    pub cache: cell_model::exact::CacheGeometry,
    /// Rows left out (`INSTRUCTIONS_SKIP`).
    pub skip: &'a [RowName],
    /// The lane's own cap (`INSTRUCTIONS_TIME_CAP_S`): no row is started past it.
    pub time_cap: Duration,
    /// The expected stdout of each phase.
    pub expect: &'a BTreeMap<Phase, String>,
    /// How the lane's engine takes its CPU (`CPU_WAIT_S` and the lock dir).
    pub engine: crate::timing::EngineOptions,
}

/// What the lane counted of one row and phase: the run with the median estimated cycles.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PhaseCount {
    /// Instructions executed.
    pub instructions: u64,
    /// Estimated cycles.
    pub estimated_cycles: u64,
    /// Runs taken.
    pub runs: u32,
    /// `(max − min) / min` of their estimated cycles.
    pub spread: f64,
}

/// What the lane counted of one row.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RowCount {
    /// Counts per phase.
    pub phases: BTreeMap<Phase, PhaseCount>,
    /// Why some or all of its phases have no count.
    pub skipped: Option<String>,
}

/// What the lane did in one job: its record and every row's counts.
#[derive(Clone, Debug, PartialEq)]
pub struct Lane {
    /// How it ran, or why it did not.
    pub record: InstructionLane,
    /// Counts and reasons per row.
    pub rows: BTreeMap<RowName, RowCount>,
}

impl Lane {
    /// A lane that did not run, and why.
    fn skipped(reason: String, timeout: Duration) -> Self {
        Self {
            record: InstructionLane {
                valgrind: None,
                version: None,
                argv: Vec::new(),
                timeout_s: round_time(timeout.as_secs_f64()),
                seconds: 0.0,
                cache: None,
                env_bytes: None,
                rows_skipped: Vec::new(),
                skipped: Some(reason),
            },
            rows: BTreeMap::new(),
        }
    }

    /// Writes every row's counts and reason into the job's rows and returns the lane's record.
    pub fn apply(self, rows: &mut BTreeMap<RowName, RowResult>) -> InstructionLane {
        for (name, count) in self.rows {
            let Some(row) = rows.get_mut(&name) else {
                continue;
            };
            for (phase, n) in count.phases {
                if let Some(p) = row.phases.get_mut(&phase) {
                    p.instructions = Some(n.instructions);
                    p.estimated_cycles = Some(n.estimated_cycles);
                    p.exact_repeat = Some(cell_schema::ExactRepeat {
                        runs: n.runs,
                        spread: n.spread,
                    });
                }
            }
            row.instructions_skipped = count.skipped;
        }
        self.record
    }
}

/// Valgrind in the directories of `path` (a value shaped like PATH).
pub fn find_valgrind(path: Option<&OsStr>) -> Option<PathBuf> {
    // The package and the program have the same name.
    crate::tools::which_in(PACKAGE, path)
}

/// The lane of one job, when `INSTRUCTIONS=on`: not run off Linux, else every timed row but
/// the control, on the argv and `{work}` of its timed runs.
pub(crate) fn job_lane(plan: &Plan, cell: &Cell, timed: &[Timed], out: &Path) -> Option<Lane> {
    let lane = &plan.settings.exact;
    if !lane.on {
        return None;
    }
    let timeout = Duration::from_secs_f64(lane.run_timeout_s);
    if cell.os != "linux" || !matches!(cell.arch.as_str(), "x86_64" | "aarch64") {
        return Some(Lane::skipped(
            format!(
                "the exact lane runs on Linux x86_64 and aarch64 cells only, where valgrind does: not run on {} {}",
                cell.os, cell.arch
            ),
            timeout,
        ));
    }
    let work = out.join("build").join("run");
    let rows: Vec<LaneRow> = timed
        .iter()
        // The previous release's rows are timed beside the new ones; the lane counts the
        // release under test's alone, and its cost stays the job's rows'.
        .filter(|t| !matches!(t.role, Role::Control | Role::Previous))
        .map(|t| LaneRow {
            name: t.name.clone(),
            phases: t
                .phases
                .iter()
                .map(|p| (p.clone(), t.argv(p, &work)))
                .collect(),
        })
        .collect();
    let setup = Setup {
        valgrind: find_valgrind(std::env::var_os("PATH").as_deref()),
        work: &work,
        timeout,
        cache: lane.cache,
        skip: &lane.skip,
        time_cap: Duration::from_secs_f64(lane.time_cap_s),
        expect: &plan.expect,
        engine: crate::timing::EngineOptions::from_settings(&plan.settings),
    };
    Some(run(&setup, &rows))
}

/// Runs every row once per phase under valgrind. Never fails: what could not be counted is
/// recorded as the lane's, the row's or the phase's reason.
pub fn run(setup: &Setup<'_>, rows: &[LaneRow]) -> Lane {
    let Some(valgrind) = &setup.valgrind else {
        return Lane::skipped(
            format!("valgrind not found (apt-get install {PACKAGE})"),
            setup.timeout,
        );
    };
    let mut engine = match Engine::with_options(setup.work, &setup.engine) {
        Ok(e) => e,
        Err(e) => {
            return Lane::skipped(
                format!("could not start the lane's engine: {e}"),
                setup.timeout,
            );
        }
    };
    // The lane's cap and seconds count from its CPU: the lease may have waited (`CPU_WAIT_S`).
    let t0 = Instant::now();
    let version = match version(&mut engine, valgrind, setup.work) {
        Ok(v) => v,
        Err(why) => return Lane::skipped(why, setup.timeout),
    };
    let mut counts = BTreeMap::new();
    let mut rows_skipped = Vec::new();
    for r in rows {
        let why = if setup.skip.contains(&r.name) {
            Some("left out by INSTRUCTIONS_SKIP".to_owned())
        } else if t0.elapsed() >= setup.time_cap {
            Some(format!(
                "not reached within the lane's {:.0} s (INSTRUCTIONS_TIME_CAP_S)",
                setup.time_cap.as_secs_f64()
            ))
        } else {
            None
        };
        let count = match why {
            Some(why) => {
                rows_skipped.push(format!("{}: {why}", r.name));
                RowCount {
                    phases: BTreeMap::new(),
                    skipped: Some(why),
                }
            }
            None => count_row(&mut engine, setup, valgrind, r, t0 + setup.time_cap),
        };
        counts.insert(r.name.clone(), count);
    }
    let mut argv = vec![valgrind.display().to_string()];
    argv.extend(OPTIONS.map(str::to_owned));
    argv.extend(setup.cache.options());
    argv.push("--cachegrind-out-file=<scratch file>".into());
    argv.push("<the row's argv>".into());
    Lane {
        record: InstructionLane {
            valgrind: Some(valgrind.display().to_string()),
            version: Some(version),
            argv,
            timeout_s: round_time(setup.timeout.as_secs_f64()),
            seconds: round_time(t0.elapsed().as_secs_f64()),
            cache: Some(cell_schema::CacheRecord {
                i1: setup.cache.i1.to_string(),
                d1: setup.cache.d1.to_string(),
                ll: setup.cache.ll.to_string(),
            }),
            env_bytes: Some(env_bytes()),
            rows_skipped,
            skipped: None,
        },
        rows: counts,
    }
}

/// Bytes of this process's environment, which every run under valgrind inherits:
/// `NAME=value` and a terminator each.
fn env_bytes() -> u64 {
    std::env::vars_os()
        .map(|(k, v)| (k.len() + v.len() + 2) as u64)
        .sum()
}

/// What `valgrind --version` printed (stdout, else stderr), trimmed.
fn version(engine: &mut Engine, valgrind: &Path, work: &Path) -> Result<String, String> {
    let argv = [valgrind.display().to_string(), "--version".into()];
    let m = engine
        .run(&argv, work, VERSION_TIMEOUT, b"")
        .map_err(|e| format!("could not start {}: {e}", argv[0]))?;
    let text = |c: &capture::Captured| String::from_utf8_lossy(&c.prefix).trim().to_owned();
    let printed = Some(text(&m.stdout))
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| text(&m.stderr));
    if m.exit != ExitKind::Code(0) || printed.is_empty() {
        return Err(format!(
            "`valgrind --version` did not answer ({}): the lane did not run",
            ended(&m.exit)
        ));
    }
    Ok(printed)
}

/// How a run ended, in words.
fn ended(exit: &ExitKind) -> String {
    match exit {
        ExitKind::Code(c) => format!("exited with {c}"),
        ExitKind::Signal(s) => format!("killed by signal {s}"),
        ExitKind::TimedOut => "timed out".into(),
    }
}

/// Why one run under valgrind gave no count.
enum NoCount {
    /// The row cannot run under valgrind at all: its other phases are not tried.
    Row(String),
    /// This phase only.
    Phase(String),
}

/// One row on each of its phases, once; then its cheapest phase (the shortest first run)
/// again. Equal counts: the row is deterministic and every count stands (a C, Rust or Zig
/// binary). Different: a runtime's own threads or GC move its counts, and every phase runs
/// [`REPEATS_MAX`] times, the median written with the spread. A reason that rules out the row
/// stops it.
fn count_row(
    engine: &mut Engine,
    setup: &Setup<'_>,
    valgrind: &Path,
    row: &LaneRow,
    deadline: Instant,
) -> RowCount {
    let lane = RowLane {
        setup,
        valgrind,
        deadline,
    };
    let mut out = RowCount::default();
    let mut reasons = Vec::new();
    // Per counted phase: its argv, its runs, the first run's wall time.
    let mut runs: Vec<(&Phase, &[String], Vec<Counts>, Duration)> = Vec::new();
    let mut ruled_out = false;
    for (phase, argv) in &row.phases {
        let t = Instant::now();
        match count_phase(engine, &lane, phase, argv) {
            Ok(c) => runs.push((phase, argv, vec![c], t.elapsed())),
            Err(NoCount::Phase(why)) => reasons.push(format!("{phase}: {why}")),
            Err(NoCount::Row(why)) => {
                reasons.push(format!("{phase}: {why}"));
                ruled_out = true;
                break;
            }
        }
    }
    if !ruled_out && let Some(i) = (0..runs.len()).min_by_key(|&i| runs[i].3) {
        if let Err(why) = repeat(engine, &lane, &mut runs, i, REPEATS) {
            reasons.push(why);
        } else if runs[i].2.iter().any(|c| *c != runs[i].2[0]) {
            for j in 0..runs.len() {
                if let Err(why) = repeat(engine, &lane, &mut runs, j, REPEATS_MAX) {
                    reasons.push(why);
                    break;
                }
            }
        }
    }
    for (phase, _, got, _) in runs {
        match summarize(&got) {
            Ok(n) => {
                out.phases.insert(phase.clone(), n);
            }
            Err(e) => reasons.push(format!("{phase}: the out file: {e}")),
        }
    }
    out.skipped = (!reasons.is_empty()).then(|| reasons.join("; "));
    out
}

/// Runs phase `i` of `runs` until it holds `n` runs; a failed run is the reason returned.
fn repeat(
    engine: &mut Engine,
    lane: &RowLane<'_>,
    runs: &mut [(&Phase, &[String], Vec<Counts>, Duration)],
    i: usize,
    n: usize,
) -> Result<(), String> {
    let (phase, argv, got, _) = &mut runs[i];
    while got.len() < n {
        match count_phase(engine, lane, phase, argv) {
            Ok(c) => got.push(c),
            Err(NoCount::Phase(why) | NoCount::Row(why)) => {
                return Err(format!("{phase}, run {}: {why}", got.len() + 1));
            }
        }
    }
    Ok(())
}

/// The run with the median estimated cycles of `got` (not empty), and the spread.
pub fn summarize(got: &[Counts]) -> Result<PhaseCount, CountError> {
    let mut cycles = got
        .iter()
        .map(|c| c.estimated_cycles().map(|e| (e, c.ir)))
        .collect::<Result<Vec<_>, _>>()?;
    cycles.sort_unstable();
    let (Some(&(lo, _)), Some(&(hi, _))) = (cycles.first(), cycles.last()) else {
        return Err(CountError::NoSummary);
    };
    if lo == 0 {
        return Err(CountError::Impossible("no cycle estimated"));
    }
    let (estimated_cycles, instructions) = cycles[cycles.len() / 2];
    Ok(PhaseCount {
        instructions,
        estimated_cycles,
        runs: u32::try_from(cycles.len()).unwrap_or(u32::MAX),
        spread: (hi - lo) as f64 / lo as f64,
    })
}

/// What every run of one row needs: the setup, the valgrind, and when the lane's cap ends.
struct RowLane<'a> {
    setup: &'a Setup<'a>,
    valgrind: &'a Path,
    deadline: Instant,
}

/// One run of `argv` under valgrind, its answer checked and its count read; its timeout is
/// `INSTRUCTIONS_RUN_TIMEOUT_S` or what is left of the lane's cap, whichever is shorter.
fn count_phase(
    engine: &mut Engine,
    lane: &RowLane<'_>,
    phase: &Phase,
    argv: &[String],
) -> Result<Counts, NoCount> {
    let out_file = tempfile::Builder::new()
        .prefix("cachegrind-")
        .suffix(".out")
        .tempfile_in(lane.setup.work)
        .map_err(|e| NoCount::Row(format!("could not make the out file: {e}")))?;
    let (setup, valgrind) = (lane.setup, lane.valgrind);
    let left = lane.deadline.saturating_duration_since(Instant::now());
    let capped = left < setup.timeout;
    if left.is_zero() {
        return Err(NoCount::Row(format!(
            "stopped at the lane's {:.0} s (INSTRUCTIONS_TIME_CAP_S)",
            setup.time_cap.as_secs_f64()
        )));
    }
    let mut full = vec![valgrind.display().to_string()];
    full.extend(OPTIONS.map(str::to_owned));
    full.extend(setup.cache.options());
    full.push(format!(
        "--cachegrind-out-file={}",
        out_file_arg(out_file.path())
    ));
    full.extend(argv.iter().cloned());
    let expected = setup.expect.get(phase).map_or(&b""[..], |e| e.as_bytes());
    let m = engine
        .run(&full, setup.work, setup.timeout.min(left), expected)
        .map_err(|e| NoCount::Row(format!("could not start {}: {e}", full[0])))?;
    if capped && m.exit == ExitKind::TimedOut {
        return Err(NoCount::Row(format!(
            "stopped at the lane's {:.0} s (INSTRUCTIONS_TIME_CAP_S)",
            setup.time_cap.as_secs_f64()
        )));
    }
    judge_run(&m, expected, setup.timeout)?;
    let file = File::open(out_file.path())
        .map_err(|e| NoCount::Phase(format!("valgrind wrote no out file: {e}")))?;
    let text =
        count_lines(file).map_err(|e| NoCount::Phase(format!("reading the out file: {e}")))?;
    parse_counts(&text).map_err(|e| NoCount::Phase(format!("the out file: {e}")))
}

/// Valgrind expands `%p`, `%q{VAR}` and `%%` in the out file's name: a `%` of the path is
/// written `%%` so the file is the one made here.
fn out_file_arg(path: &Path) -> String {
    path.display().to_string().replace('%', "%%")
}

/// Whether a run under valgrind counts: it exited 0 with the expected answer. An instruction
/// valgrind does not know (it raises SIGILL, after saying so) and a timeout rule out the row.
fn judge_run(m: &Measured, expected: &[u8], timeout: Duration) -> Result<(), NoCount> {
    let stderr = String::from_utf8_lossy(&m.stderr.prefix);
    let unknown = stderr
        .to_ascii_lowercase()
        .contains("unrecognised instruction");
    if m.exit == ExitKind::Signal(libc::SIGILL) || unknown {
        let bytes = stderr
            .lines()
            .find(|l| l.contains("unhandled instruction bytes"))
            .map_or(String::new(), |l| format!("; {}", l.trim()));
        return Err(NoCount::Row(format!(
            "valgrind does not know an instruction of this binary (SIGILL{bytes}), as with AVX-512 in a build for the native CPU"
        )));
    }
    match &m.exit {
        ExitKind::TimedOut => Err(NoCount::Row(format!(
            "killed after {:.0} s under valgrind (INSTRUCTIONS_RUN_TIMEOUT_S)",
            timeout.as_secs_f64()
        ))),
        ExitKind::Code(0) if m.stdout.matches => Ok(()),
        ExitKind::Code(0) => Err(NoCount::Phase(format!(
            "printed {} under valgrind, expected {:?}",
            capture::describe(&m.stdout),
            String::from_utf8_lossy(expected)
        ))),
        other => Err(NoCount::Phase(format!(
            "{} under valgrind, stderr {}",
            ended(other),
            capture::describe(&m.stderr)
        ))),
    }
}

/// The `events:` and `summary:` lines of a cachegrind out file, read line by line: the file
/// holds a line per source line executed, and only these two are needed.
fn count_lines(file: File) -> io::Result<String> {
    let mut r = BufReader::new(file);
    let mut kept = Vec::new();
    let mut line = Vec::new();
    // The rest of a line longer than LINE_MAX is no line start.
    let mut continued = false;
    loop {
        line.clear();
        let n = (&mut r).take(LINE_MAX).read_until(b'\n', &mut line)?;
        if n == 0 {
            break;
        }
        let wanted = line.starts_with(b"events:") || line.starts_with(b"summary:");
        if !continued && wanted && kept.len() < KEPT_MAX {
            kept.push(String::from_utf8_lossy(&line).trim_end().to_owned());
        }
        continued = line.last() != Some(&b'\n');
    }
    Ok(kept.join("\n"))
}

/// An out file that gives no count.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CountError {
    /// No `events:` line.
    #[error("no `events:` line")]
    NoEvents,
    /// An event the estimate needs is not in `events:` (a run without the cache simulation).
    #[error("its events have no `{0}`: it was not counted with the cache simulation")]
    Missing(&'static str),
    /// No `summary:` line.
    #[error("no `summary:` line")]
    NoSummary,
    /// A line that comes once came twice.
    #[error("more than one `{0}` line")]
    Twice(&'static str),
    /// A figure of `summary:` is not a plain integer.
    #[error("its summary's figure `{0}` is not a plain integer")]
    NotInteger(String),
    /// `summary:` has another number of figures than `events:` has events.
    #[error("its summary has {figures} figures for {events} events")]
    Figures {
        /// Events named.
        events: usize,
        /// Figures given.
        figures: usize,
    },
    /// Misses that outnumber what they missed: no simulation gives these.
    #[error("its counts are impossible: {0}")]
    Impossible(&'static str),
}

/// The events of a cachegrind run with its cache simulation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Instructions executed (`Ir`, also the I1 reads).
    pub ir: u64,
    /// I1 read misses.
    pub i1mr: u64,
    /// Last-level instruction read misses.
    pub ilmr: u64,
    /// Data reads.
    pub dr: u64,
    /// D1 read misses.
    pub d1mr: u64,
    /// Last-level data read misses.
    pub dlmr: u64,
    /// Data writes.
    pub dw: u64,
    /// D1 write misses.
    pub d1mw: u64,
    /// Last-level data write misses.
    pub dlmw: u64,
}

impl Counts {
    /// `l1 · L1 hits + ll · LL hits + ram · RAM accesses` with [`WEIGHTS`]: every access is
    /// one of the three, so the estimate is at least the instructions executed.
    pub fn estimated_cycles(&self) -> Result<u64, CountError> {
        let accesses = u128::from(self.ir) + u128::from(self.dr) + u128::from(self.dw);
        let first_misses = u128::from(self.i1mr) + u128::from(self.d1mr) + u128::from(self.d1mw);
        let ram = u128::from(self.ilmr) + u128::from(self.dlmr) + u128::from(self.dlmw);
        if self.i1mr > self.ir || self.d1mr > self.dr || self.d1mw > self.dw {
            return Err(CountError::Impossible("more L1 misses than accesses"));
        }
        if self.ilmr > self.i1mr || self.dlmr > self.d1mr || self.dlmw > self.d1mw {
            return Err(CountError::Impossible(
                "more last-level misses than L1 misses",
            ));
        }
        let w = WEIGHTS;
        let cycles = u128::from(w.l1) * (accesses - first_misses)
            + u128::from(w.ll) * (first_misses - ram)
            + u128::from(w.ram) * ram;
        u64::try_from(cycles).map_err(|_| CountError::Impossible("more cycles than a u64 holds"))
    }
}

/// The events the estimate reads.
const EVENTS: [&str; 9] = [
    "Ir", "I1mr", "ILmr", "Dr", "D1mr", "DLmr", "Dw", "D1mw", "DLmw",
];

/// The counts of a cachegrind out file's text: its `events:` line names the events, its
/// `summary:` line gives one plain integer (digits only, within `u64`) for each.
pub fn parse_counts(text: &str) -> Result<Counts, CountError> {
    let one = |key: &'static str| {
        let mut found = text.lines().filter_map(|l| l.strip_prefix(key));
        match (found.next(), found.next()) {
            (Some(v), None) => Ok(Some(v)),
            (None, _) => Ok(None),
            (Some(_), Some(_)) => Err(CountError::Twice(key)),
        }
    };
    let events: Vec<&str> = one("events:")?
        .ok_or(CountError::NoEvents)?
        .split_whitespace()
        .collect();
    let figures: Vec<&str> = one("summary:")?
        .ok_or(CountError::NoSummary)?
        .split_whitespace()
        .collect();
    if let Some(e) = events
        .iter()
        .enumerate()
        .find(|(i, e)| events[..*i].contains(e))
        .map(|(_, e)| e)
    {
        return Err(CountError::Impossible(if EVENTS.contains(e) {
            "an event named twice in `events:`"
        } else {
            "an unknown event named twice in `events:`"
        }));
    }
    if events.len() != figures.len() {
        return Err(CountError::Figures {
            events: events.len(),
            figures: figures.len(),
        });
    }
    let get = |name: &'static str| -> Result<u64, CountError> {
        let i = events
            .iter()
            .position(|e| *e == name)
            .ok_or(CountError::Missing(name))?;
        let figure = figures[i];
        let plain = !figure.is_empty() && figure.bytes().all(|b| b.is_ascii_digit());
        plain
            .then(|| figure.parse::<u64>().ok())
            .flatten()
            .ok_or_else(|| CountError::NotInteger(shown(figure)))
    };
    if get("Ir")? == 0 {
        return Err(CountError::Impossible("no instruction executed"));
    }
    Ok(Counts {
        ir: get("Ir")?,
        i1mr: get("I1mr")?,
        ilmr: get("ILmr")?,
        dr: get("Dr")?,
        d1mr: get("D1mr")?,
        dlmr: get("DLmr")?,
        dw: get("Dw")?,
        d1mw: get("D1mw")?,
        dlmw: get("DLmw")?,
    })
}

/// At most 40 characters of a token, for a message.
fn shown(token: &str) -> String {
    token.chars().take(40).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "desc: I1 cache:         32768 B, 64 B, 8-way associative
cmd: ./fast mix
events: Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw
fl=./csu/../csu/libc-start.c
fn=__libc_start_main@@GLIBC_2.34
128 2 1 1 0 0 0 0 0 0
fl=???
fn=main
0 130000019 0 0 0 0 0 0 0 0
summary: 1240890329 1255 1236 189767312 1234 1010 252994714 382 352
";

    #[test]
    fn the_estimate_weighs_hits_and_misses_of_the_summary() {
        let c = parse_counts(SAMPLE).unwrap();
        assert_eq!(c.ir, 1_240_890_329);
        assert_eq!((c.dlmr, c.dlmw), (1010, 352));
        // accesses 1,683,652,355; L1 misses 2,871; LL misses 2,598.
        let l1_hits = 1_683_652_355 - 2_871;
        let expected = l1_hits + 5 * (2_871 - 2_598) + 35 * 2_598;
        assert_eq!(c.estimated_cycles(), Ok(expected));
        // Events in another order read the same.
        let shuffled = "events: Dw Ir I1mr ILmr Dr D1mr DLmr D1mw DLmw\nsummary: 252994714 1240890329 1255 1236 189767312 1234 1010 382 352\n";
        assert_eq!(parse_counts(shuffled), Ok(c));
    }

    #[test]
    fn an_out_file_no_run_gives_is_refused_with_its_reason() {
        let head = "events: Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw\n";
        assert_eq!(
            parse_counts(&format!("{head}summary: 0 0 0 0 0 0 0 0 0\n")),
            Err(CountError::Impossible("no instruction executed"))
        );
        assert_eq!(
            parse_counts(
                "events: Ir Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw\nsummary: 1 2 0 0 0 0 0 0 0 0\n"
            ),
            Err(CountError::Impossible("an event named twice in `events:`"))
        );
        assert_eq!(
            parse_counts(&format!("{head}summary: 10 11 0 0 0 0 0 0 0\n"))
                .unwrap()
                .estimated_cycles(),
            Err(CountError::Impossible("more L1 misses than accesses"))
        );
        // A summary of no cycle (never parsed, but a caller's own Counts) is no median.
        assert_eq!(
            summarize(&[Counts::default()]),
            Err(CountError::Impossible("no cycle estimated"))
        );
    }

    #[test]
    fn anything_but_a_plain_integer_is_refused() {
        for bad in [
            "-5",
            "+5",
            "5.0",
            "1e9",
            "0x10",
            "5a",
            "18446744073709551616",
        ] {
            let text = format!(
                "events: Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw\nsummary: {bad} 0 0 0 0 0 0 0 0\n"
            );
            assert_eq!(
                parse_counts(&text),
                Err(CountError::NotInteger(bad.into())),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn a_count_without_the_cache_simulation_or_with_impossible_misses_is_refused() {
        assert_eq!(
            parse_counts("events: Ir\nsummary: 5\n"),
            Err(CountError::Missing("I1mr"))
        );
        assert_eq!(parse_counts("summary: 5\n"), Err(CountError::NoEvents));
        assert_eq!(
            parse_counts("events: Ir\n0 5\n"),
            Err(CountError::NoSummary)
        );
        assert_eq!(
            parse_counts("events: Ir\nsummary: 5\nsummary: 6\n"),
            Err(CountError::Twice("summary:"))
        );
        assert_eq!(
            parse_counts("events: Ir I1mr\nsummary: 5\n"),
            Err(CountError::Figures {
                events: 2,
                figures: 1
            })
        );
        let over = Counts {
            ir: 10,
            i1mr: 11,
            ..Counts::default()
        };
        assert!(matches!(
            over.estimated_cycles(),
            Err(CountError::Impossible(_))
        ));
        let ll_over = Counts {
            ir: 10,
            i1mr: 1,
            ilmr: 2,
            ..Counts::default()
        };
        assert!(matches!(
            ll_over.estimated_cycles(),
            Err(CountError::Impossible(_))
        ));
        let max = Counts {
            ir: u64::MAX,
            dr: u64::MAX,
            d1mr: u64::MAX,
            dlmr: u64::MAX,
            ..Counts::default()
        };
        assert!(matches!(
            max.estimated_cycles(),
            Err(CountError::Impossible(_))
        ));
    }

    #[test]
    fn repeated_runs_give_their_median_and_spread() {
        let c = |ir| Counts {
            ir,
            ..Counts::default()
        };
        let one = summarize(&[c(100), c(100)]).unwrap();
        assert_eq!((one.estimated_cycles, one.runs, one.spread), (100, 2, 0.0));
        let three = summarize(&[c(100), c(104), c(102)]).unwrap();
        assert_eq!((three.instructions, three.runs), (102, 3));
        assert!((three.spread - 0.04).abs() < 1e-12);
    }

    #[test]
    fn only_the_two_lines_are_kept_and_an_overlong_line_starts_none() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out");
        // A line longer than LINE_MAX whose continuation reads like a summary line.
        let long = format!("fn={}summary: 7\n", "x".repeat(LINE_MAX as usize - 3));
        std::fs::write(&path, format!("{SAMPLE}{long}")).unwrap();
        let kept = count_lines(File::open(&path).unwrap()).unwrap();
        assert_eq!(
            kept,
            "events: Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw\nsummary: 1240890329 1255 1236 189767312 1234 1010 252994714 382 352"
        );
        assert_eq!(parse_counts(&kept).map(|c| c.ir), Ok(1_240_890_329));
    }

    #[test]
    fn a_percent_in_the_out_path_is_written_for_valgrind_as_itself() {
        assert_eq!(out_file_arg(Path::new("/tmp/a%p/x")), "/tmp/a%%p/x");
    }
}
