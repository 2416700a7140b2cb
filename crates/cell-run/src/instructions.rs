//! The instruction lane (`INSTRUCTIONS=on`, Linux cells): after timing, every timed row but
//! the A/A control (a copy of the reference) runs once per phase under valgrind's cachegrind,
//! and the instructions it executed (`Ir`) are recorded per row and phase. A tripwire for "the
//! generated code changed": the gate compares a row with the same row of its baseline only,
//! never two toolchains, and a change is a notice, never a failure.
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

/// How many times `RUN_TIMEOUT_S` one run under valgrind may take: cachegrind without its
/// cache simulation ran this project's workloads 14–19× slower than natively.
pub const SLOWDOWN: f64 = 20.0;

/// The options every count is taken with: instructions only, no cache simulation.
pub const OPTIONS: [&str; 2] = ["--tool=cachegrind", "--cache-sim=no"];

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
    /// How long one run under valgrind may take.
    pub timeout: Duration,
    /// The expected stdout of each phase.
    pub expect: &'a BTreeMap<Phase, String>,
    /// How the lane's engine takes its CPU (`CPU_WAIT_S` and the lock dir).
    pub engine: crate::timing::EngineOptions,
}

/// What the lane counted of one row.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RowCount {
    /// Instructions per phase counted.
    pub phases: BTreeMap<Phase, u64>,
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
                    p.instructions = Some(n);
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
    if !plan.settings.instructions {
        return None;
    }
    let timeout = Duration::from_secs_f64(plan.settings.run_timeout_s * SLOWDOWN);
    if cell.os != "linux" {
        return Some(Lane::skipped(
            format!(
                "INSTRUCTIONS=on counts on Linux cells only: not run on {}",
                cell.os
            ),
            timeout,
        ));
    }
    let work = out.join("build").join("run");
    let rows: Vec<LaneRow> = timed
        .iter()
        .filter(|t| t.role != Role::Control)
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
        expect: &plan.expect,
        engine: crate::timing::EngineOptions::from_settings(&plan.settings),
    };
    Some(run(&setup, &rows))
}

/// Runs every row once per phase under valgrind. Never fails: what could not be counted is
/// recorded as the lane's, the row's or the phase's reason.
pub fn run(setup: &Setup<'_>, rows: &[LaneRow]) -> Lane {
    let t0 = Instant::now();
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
    let version = match version(&mut engine, valgrind, setup.work) {
        Ok(v) => v,
        Err(why) => return Lane::skipped(why, setup.timeout),
    };
    let counts = rows
        .iter()
        .map(|r| (r.name.clone(), count_row(&mut engine, setup, valgrind, r)))
        .collect();
    let mut argv = vec![valgrind.display().to_string()];
    argv.extend(OPTIONS.map(str::to_owned));
    argv.push("--cachegrind-out-file=<scratch file>".into());
    argv.push("<the row's argv>".into());
    Lane {
        record: InstructionLane {
            valgrind: Some(valgrind.display().to_string()),
            version: Some(version),
            argv,
            timeout_s: round_time(setup.timeout.as_secs_f64()),
            seconds: round_time(t0.elapsed().as_secs_f64()),
            skipped: None,
        },
        rows: counts,
    }
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

/// One row on each of its phases; a reason that rules out the row stops it.
fn count_row(engine: &mut Engine, setup: &Setup<'_>, valgrind: &Path, row: &LaneRow) -> RowCount {
    let mut out = RowCount::default();
    let mut reasons = Vec::new();
    for (phase, argv) in &row.phases {
        match count_phase(engine, setup, valgrind, phase, argv) {
            Ok(n) => {
                out.phases.insert(phase.clone(), n);
            }
            Err(NoCount::Phase(why)) => reasons.push(format!("{phase}: {why}")),
            Err(NoCount::Row(why)) => {
                reasons.push(format!("{phase}: {why}"));
                break;
            }
        }
    }
    out.skipped = (!reasons.is_empty()).then(|| reasons.join("; "));
    out
}

/// One run of `argv` under valgrind, its answer checked and its count read.
fn count_phase(
    engine: &mut Engine,
    setup: &Setup<'_>,
    valgrind: &Path,
    phase: &Phase,
    argv: &[String],
) -> Result<u64, NoCount> {
    let out_file = tempfile::Builder::new()
        .prefix("cachegrind-")
        .suffix(".out")
        .tempfile_in(setup.work)
        .map_err(|e| NoCount::Row(format!("could not make the out file: {e}")))?;
    let mut full = vec![valgrind.display().to_string()];
    full.extend(OPTIONS.map(str::to_owned));
    full.push(format!(
        "--cachegrind-out-file={}",
        out_file_arg(out_file.path())
    ));
    full.extend(argv.iter().cloned());
    let expected = setup.expect.get(phase).map_or(&b""[..], |e| e.as_bytes());
    let m = engine
        .run(&full, setup.work, setup.timeout, expected)
        .map_err(|e| NoCount::Row(format!("could not start {}: {e}", full[0])))?;
    judge_run(&m, expected, setup.timeout)?;
    let file = File::open(out_file.path())
        .map_err(|e| NoCount::Phase(format!("valgrind wrote no out file: {e}")))?;
    let text =
        count_lines(file).map_err(|e| NoCount::Phase(format!("reading the out file: {e}")))?;
    parse_ir(&text).map_err(|e| NoCount::Phase(format!("the out file: {e}")))
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
            "killed after {:.0} s under valgrind (RUN_TIMEOUT_S × {SLOWDOWN})",
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
    /// The first event is not `Ir`.
    #[error("its first event is `{0}`, not `Ir`")]
    NotIr(String),
    /// No `summary:` line.
    #[error("no `summary:` line")]
    NoSummary,
    /// A line that comes once came twice.
    #[error("more than one `{0}` line")]
    Twice(&'static str),
    /// The first figure of `summary:` is not a plain integer.
    #[error("its summary's first figure `{0}` is not a plain integer")]
    NotInteger(String),
}

/// The instructions executed, from the text of a cachegrind out file: the first figure of its
/// `summary:` line, which must be a plain integer (digits only, no sign, within `u64`), where
/// the first event of its `events:` line is `Ir`.
pub fn parse_ir(text: &str) -> Result<u64, CountError> {
    let one = |key: &'static str| {
        let mut found = text.lines().filter_map(|l| l.strip_prefix(key));
        match (found.next(), found.next()) {
            (Some(v), None) => Ok(Some(v)),
            (None, _) => Ok(None),
            (Some(_), Some(_)) => Err(CountError::Twice(key)),
        }
    };
    let events = one("events:")?.ok_or(CountError::NoEvents)?;
    let first = events.split_whitespace().next().unwrap_or("");
    if first != "Ir" {
        return Err(CountError::NotIr(shown(first)));
    }
    let summary = one("summary:")?.ok_or(CountError::NoSummary)?;
    let figure = summary.split_whitespace().next().unwrap_or("");
    let plain = !figure.is_empty() && figure.bytes().all(|b| b.is_ascii_digit());
    plain
        .then(|| figure.parse::<u64>().ok())
        .flatten()
        .ok_or_else(|| CountError::NotInteger(shown(figure)))
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
events: Ir
fl=./csu/../csu/libc-start.c
fn=__libc_start_main@@GLIBC_2.34
128 2
fl=???
fn=main
0 130000019
summary: 130126201
";

    #[test]
    fn the_count_is_the_first_figure_of_the_summary() {
        assert_eq!(parse_ir(SAMPLE), Ok(130_126_201));
        // With the cache simulation on, Ir still comes first.
        let sim = "events: Ir I1mr ILmr Dr D1mr\nsummary: 5 1 1 2 0\n";
        assert_eq!(parse_ir(sim), Ok(5));
    }

    #[test]
    fn anything_but_a_plain_integer_is_refused() {
        for bad in [
            "-5",
            "+5",
            "5.0",
            "1e9",
            "0x10",
            "",
            "5a",
            "18446744073709551616",
        ] {
            let text = format!("events: Ir\nsummary: {bad}\n");
            assert_eq!(
                parse_ir(&text),
                Err(CountError::NotInteger(bad.into())),
                "{bad:?}"
            );
        }
        assert_eq!(
            parse_ir("events: Ir\nsummary: 18446744073709551615\n"),
            Ok(u64::MAX)
        );
    }

    #[test]
    fn the_first_event_must_be_ir_and_each_line_must_come_once() {
        assert_eq!(
            parse_ir("events: Dr Ir\nsummary: 5 6\n"),
            Err(CountError::NotIr("Dr".into()))
        );
        assert_eq!(parse_ir("summary: 5\n"), Err(CountError::NoEvents));
        assert_eq!(parse_ir("events: Ir\n0 5\n"), Err(CountError::NoSummary));
        assert_eq!(
            parse_ir("events: Ir\nsummary: 5\nsummary: 6\n"),
            Err(CountError::Twice("summary:"))
        );
    }

    #[test]
    fn only_the_two_lines_are_kept_and_an_overlong_line_starts_none() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out");
        // A line longer than LINE_MAX whose continuation reads like a summary line.
        let long = format!("fn={}summary: 7\n", "x".repeat(LINE_MAX as usize - 3));
        std::fs::write(&path, format!("{SAMPLE}{long}")).unwrap();
        let kept = count_lines(File::open(&path).unwrap()).unwrap();
        assert_eq!(kept, "events: Ir\nsummary: 130126201");
        assert_eq!(parse_ir(&kept), Ok(130_126_201));
    }

    #[test]
    fn a_percent_in_the_out_path_is_written_for_valgrind_as_itself() {
        assert_eq!(out_file_arg(Path::new("/tmp/a%p/x")), "/tmp/a%%p/x");
    }
}
