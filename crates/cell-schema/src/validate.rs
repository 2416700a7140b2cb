//! Values no measurement can produce: the checks a results file passes before anything
//! compares against it or draws it. A file that parses but fails them is not history: the
//! store reports it by path and leaves it out (see [`crate::store::load_history`]).
//!
//! Impossible means impossible, not unusual: a ratio at or below 0, or not finite; an
//! interval whose bounds do not hold its median (`lo ≤ median ≤ hi`); a negative or
//! non-finite time; a code section larger than its binary; an instruction count of 0; a row
//! of a job the cell has no summary (and so no reference) for, or a ratio on a phase its
//! job's reference never measured; of the suites, a negative or non-finite req/s, latency,
//! CPU time, share, RSS figure or time, a req/s outside its own runs' range, more clean runs
//! than runs, an R² outside 0–1. A calibration file (`cell calibrate`) is held to the same
//! standard by [`calibration`]: a file that fails is ignored with a notice, never believed.

use std::fmt;

use crate::{
    Calibration, CellId, CellResult, Clock, Combo, HttpServerResult, HttpSettings, HttpToolResult,
    Imported, JobSummary, LEGACY_WORKLOAD, LoadReport, Noise, ProtocolMode, RatioCi, ResultsFile,
    RowResult, RssFit, ServerName, SoakServerResult, Summary,
};

/// One impossible value, with where it sits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem(String);

impl Problem {
    /// What is wrong, one line (`ratio of row rust-O2 on phase run is -1 (impossible)`).
    pub fn message(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Every impossible value of a cell's results, in file order; empty when it may be used.
pub fn cell_result(cell: &CellResult) -> Vec<Problem> {
    let mut out = Vec::new();
    for (tc, job) in &cell.jobs {
        job_summary(&format!("job {tc}"), job, &mut out);
        previous_rows(cell, tc, job, &mut out);
    }
    for (name, row) in &cell.rows {
        let what = format!("row {name}");
        let Some(job) = cell.jobs.get(&row.job) else {
            out.push(Problem(format!(
                "{what} names job {}, which has no summary and so no reference (impossible)",
                row.job
            )));
            row_result(&what, &row.row, &mut out);
            continue;
        };
        if row.row.role == crate::Role::Reference && *name != job.protocol.reference {
            out.push(Problem(format!(
                "{what} says it is a reference, but job {}'s reference is {} (impossible)",
                row.job, job.protocol.reference
            )));
        }
        for (phase, pr) in &row.row.phases {
            if pr.ratio.is_some() && !job.reference.phases.contains_key(phase) {
                out.push(Problem(format!(
                    "{what} has a ratio on phase {phase}, which the reference {} of job {} never measured (impossible)",
                    job.protocol.reference, row.job
                )));
            }
        }
        row_result(&what, &row.row, &mut out);
    }
    if let Some(cost) = &cell.cost {
        for (tc, s) in &cost.jobs_s {
            seconds(&format!("cost of job {tc}"), *s, &mut out);
        }
        seconds("total cost", cost.total_s, &mut out);
    }
    if let Some(imp) = &cell.imported {
        imported(imp, &mut out);
    }
    for (name, s) in &cell.http {
        http_server(name, &s.result, &s.settings, &mut out);
    }
    for (name, s) in &cell.soak {
        soak_server(name, &s.result, &mut out);
    }
    out
}

/// Every impossible value of an http or soak job's servers (none for another file: a
/// workload job's are found in the cell it is merged into, by [`cell_result`]).
pub fn suite_job(file: &ResultsFile) -> Vec<Problem> {
    let mut out = Vec::new();
    match file {
        ResultsFile::Http(j) => {
            for (name, r) in &j.servers {
                http_server(name, r, &j.settings, &mut out);
            }
        }
        ResultsFile::Soak(j) => {
            for (name, r) in &j.servers {
                soak_server(name, r, &mut out);
            }
        }
        ResultsFile::Job(_) | ResultsFile::Cell(_) => {}
    }
    out
}

fn http_server(
    name: &ServerName,
    r: &HttpServerResult,
    settings: &HttpSettings,
    out: &mut Vec<Problem>,
) {
    let legacy = r.tools.iter().map(|(tool, t)| {
        let c = Combo {
            workload: LEGACY_WORKLOAD.to_owned(),
            shape: settings.legacy_shape().to_owned(),
            tool: tool.clone(),
        };
        (c, t)
    });
    let current = r.workloads.iter().flat_map(|(w, wr)| {
        wr.shapes.iter().flat_map(move |(shape, tools)| {
            tools.iter().map(move |(tool, t)| {
                let c = Combo {
                    workload: w.to_string(),
                    shape: shape.to_string(),
                    tool: tool.clone(),
                };
                (c, t)
            })
        })
    });
    for (c, t) in legacy.chain(current) {
        http_tool(&format!("http server {name}, {c}"), t, out);
    }
}

fn http_tool(at: &str, t: &HttpToolResult, out: &mut Vec<Problem>) {
    let [lo, hi] = t.rps_range;
    for (field, v) in [
        ("rps", t.rps),
        ("rps_range low", lo),
        ("rps_range high", hi),
        ("p99_ms", t.p99_ms),
        ("cpu_ms_per_1k", t.cpu_ms_per_1k),
    ] {
        figure(&format!("{field} of {at}"), v, out);
    }
    if !(lo <= t.rps && t.rps <= hi) {
        out.push(Problem(format!(
            "rps of {at} is {} with its runs' range [{lo}, {hi}]: low ≤ rps ≤ high does not hold (impossible)",
            t.rps
        )));
    }
    if t.clean_runs as usize > t.runs.len() {
        out.push(Problem(format!(
            "{at} counts {} clean runs of {} (impossible)",
            t.clean_runs,
            t.runs.len()
        )));
    }
    for run in &t.runs {
        let of = format!("{at}, run {} (seq {})", run.index, run.seq);
        for (field, v) in [
            ("startup_s", run.startup_s),
            ("time_wait.waited_s", run.time_wait.waited_s),
            ("server_cpu_s", run.server_cpu_s),
            ("cpu_ms_per_1k", run.cpu_ms_per_1k),
            ("load_cpu_s", run.load_cpu_s),
            ("load_cpu_share", run.load_cpu_share),
            ("other_cpu_share", run.other_cpu_share),
        ] {
            figure(&format!("{field} of {of}"), v, out);
        }
        load_report(&of, &run.load, out);
    }
}

fn load_report(at: &str, l: &LoadReport, out: &mut Vec<Problem>) {
    let p = &l.latency_ms;
    for (field, v) in [
        ("load duration_s", l.duration_s),
        ("load rps", l.rps),
        ("p50 latency", p.p50),
        ("p90 latency", p.p90),
        ("p99 latency", p.p99),
        ("p99.9 latency", p.p99_9),
        ("max latency", p.max),
    ] {
        figure(&format!("{field} of {at}"), v, out);
    }
}

fn soak_server(name: &ServerName, r: &SoakServerResult, out: &mut Vec<Problem>) {
    let at = format!("soak server {name}");
    if let Some(v) = r.startup_s {
        figure(&format!("startup_s of {at}"), v, out);
    }
    if let Some(v) = r.cpu_ms_per_1k {
        figure(&format!("cpu_ms_per_1k of {at}"), v, out);
    }
    if let Some(l) = &r.load {
        load_report(&at, l, out);
    }
    for (i, s) in r.samples.iter().enumerate() {
        let of = format!("sample {} of {at}", i + 1);
        figure(&format!("t_s of {of}"), s.t_s, out);
        figure(&format!("cpu_s of {of}"), s.cpu_s, out);
    }
    for (which, f) in [("fit", &r.fit), ("fit_minima", &r.fit_minima)] {
        if let Some(f) = f {
            fit(&format!("{which} of {at}"), f, out);
        }
    }
}

fn fit(at: &str, f: &RssFit, out: &mut Vec<Problem>) {
    for (field, v) in [
        ("slope_kib_per_min", f.slope_kib_per_min),
        ("projected_kib", f.projected_kib),
        ("projected_share", f.projected_share),
    ] {
        if !v.is_finite() {
            out.push(Problem(format!("{field} of {at} is {v} (impossible)")));
        }
    }
    figure(&format!("mean_kib of {at}"), f.mean_kib, out);
    if !(0.0..=1.0).contains(&f.r2) {
        out.push(Problem(format!("R² of {at} is {} (impossible)", f.r2)));
    }
}

/// A count, rate, share or time of the suites: finite and not negative.
fn figure(what: &str, v: f64, out: &mut Vec<Problem>) {
    if !(v.is_finite() && v >= 0.0) {
        out.push(Problem(format!("{what} is {} (impossible)", shown(v))));
    }
}

fn job_summary(what: &str, job: &JobSummary, out: &mut Vec<Problem>) {
    if let Some(c) = job.instructions.as_ref().and_then(|l| l.cache.as_ref()) {
        for (level, v) in [("I1", &c.i1), ("D1", &c.d1), ("LL", &c.ll)] {
            if !is_geometry(v) {
                out.push(Problem(format!(
                    "exact-lane cache {level} of {what} is `{}`, not size,associativity,line (impossible)",
                    v.chars().take(40).flat_map(char::escape_default).collect::<String>()
                )));
            }
        }
    }
    row_result(
        &format!("reference {} ({what})", job.protocol.reference),
        &job.reference,
        out,
    );
    if let Some(c) = &job.control {
        row_result(
            &format!("control {} ({what})", job.protocol.control),
            c,
            out,
        );
    }
    if let Some(r) = job.tooth.as_ref().and_then(|t| t.ratio.as_ref()) {
        ratio(&format!("tooth ratio ({what})"), r, out);
    }
    let cost = &job.cost;
    for (name, s) in [
        ("probe_s", cost.probe_s),
        ("build_s", cost.build_s),
        ("timing_s", cost.timing_s),
        ("total_s", cost.total_s),
    ] {
        seconds(&format!("cost {name} ({what})"), s, out);
    }
    if let Some(s) = cost.exact_s {
        seconds(&format!("cost exact_s ({what})"), s, out);
    }
}

/// A `<row>.prev` row is the previous release's build of a row of the same job, timed only
/// when that release was installed: anything else would put a ratio beside a row it never
/// ran with.
fn previous_rows(
    cell: &CellResult,
    tc: &crate::ToolchainName,
    job: &JobSummary,
    out: &mut Vec<Problem>,
) {
    if let Some(p) = &job.previous {
        previous_release(tc, job, p, out);
    }
    let installed = job.previous.as_ref().is_some_and(|p| p.installed.is_some());
    for (name, row) in &job.previous_rows {
        let what = format!("previous row {name} (job {tc})");
        let base = crate::Role::previous_of(name);
        let own = base
            .as_ref()
            .and_then(|b| cell.rows.get(b))
            .is_some_and(|r| r.job == *tc && r.row.role == crate::Role::Row);
        if row.role != crate::Role::Previous || !own || !installed {
            out.push(Problem(format!(
                "{what} is not `<row>.prev` of a row of job {tc} built by an installed previous release (impossible)"
            )));
        }
        row_result(&what, row, out);
    }
}

/// The previous release is either installed (the digest the baseline recorded, another
/// release than the job's own) or skipped with a reason, never both: anything else would let a
/// file compare a release with itself and call it a version bump.
fn previous_release(
    tc: &crate::ToolchainName,
    job: &JobSummary,
    p: &crate::PreviousRelease,
    out: &mut Vec<Problem>,
) {
    let what = format!("the previous release of job {tc}");
    match (&p.installed, &p.skipped) {
        (Some(_), Some(_)) => out.push(Problem(format!(
            "{what} is both installed and skipped (impossible)"
        ))),
        (None, None) => out.push(Problem(format!(
            "{what} is neither installed nor skipped with a reason (impossible)"
        ))),
        (Some(i), None) if i.sha256 != p.recorded.sha256 => out.push(Problem(format!(
            "{what} was installed as sha256 {}, not the recorded {} (impossible: a job skips it)",
            i.sha256, p.recorded.sha256
        ))),
        _ => {}
    }
    if job
        .subject
        .as_ref()
        .is_none_or(|s| s.sha256 == p.recorded.sha256)
    {
        out.push(Problem(format!(
            "{what} is not another release than the job's release under test (impossible)"
        )));
    }
}

fn row_result(what: &str, row: &RowResult, out: &mut Vec<Problem>) {
    seconds(&format!("compile time of {what}"), row.build.compile_s, out);
    for (i, s) in row.build.compile_runs_s.iter().enumerate() {
        seconds(&format!("compile time of {what}, build {}", i + 1), *s, out);
    }
    // The code section is a part of the file: it cannot be larger than the file.
    if let Some(text) = row.build.text_bytes
        && text > row.build.binary_bytes
    {
        out.push(Problem(format!(
            "text bytes of {what} are {text}, more than its binary's {} (impossible)",
            row.build.binary_bytes
        )));
    }
    for (phase, pr) in &row.phases {
        let at = format!("{what} on phase {phase}");
        // Every metric the file holds is checked, the optional ones too.
        for (metric, r) in pr.ratio.iter().flat_map(|r| &r.clocks) {
            ratio(&format!("{metric} ratio of {at}"), r, out);
        }
        for (metric, s) in pr.stats.iter().flat_map(|s| &s.clocks) {
            summary(&format!("{} of {at}", metric.info().label), s, out);
        }
        for run in &pr.runs {
            let of = format!("{at}, round {} seq {}", run.round, run.seq);
            for metric in Clock::COLUMNS {
                if let Some(v) = metric.of_run(run) {
                    seconds(&format!("{} of {of}", metric.info().label), v, out);
                }
            }
        }
        // A process that ran executed at least one instruction.
        if pr.instructions == Some(0) {
            out.push(Problem(format!(
                "instruction count of {at} is 0 (impossible)"
            )));
        }
        exact(&at, pr, out);
    }
}

/// The exact lane's figures of one row and phase: every instruction fetch is at least one
/// simulated L1 access of weight 1, so the estimate is never below the count; the repeat is
/// at least one run with a finite, non-negative spread.
fn exact(at: &str, pr: &crate::PhaseResult, out: &mut Vec<Problem>) {
    match (pr.estimated_cycles, pr.instructions) {
        (Some(0), _) => out.push(Problem(format!(
            "estimated cycles of {at} are 0 (impossible)"
        ))),
        (Some(c), Some(i)) if c < i => out.push(Problem(format!(
            "estimated cycles of {at} are {c}, fewer than its {i} instructions (impossible: each costs at least one)"
        ))),
        (Some(_), None) => out.push(Problem(format!(
            "estimated cycles of {at} without its instruction count (a lane records both)"
        ))),
        _ => {}
    }
    // The lane takes one run, two of a row's cheapest phase, three of every phase whose row
    // moved: only three runs can have spread.
    if let Some(r) = &pr.exact_repeat
        && !((1..=3).contains(&r.runs)
            && r.spread.is_finite()
            && (0.0..=1.0).contains(&r.spread)
            && (r.runs == 3 || r.spread == 0.0))
    {
        out.push(Problem(format!(
            "exact-lane repeat of {at} is {} run(s) with spread {} (impossible: 1 to 3 runs, a spread from 0 to 1, and none below 3 runs)",
            r.runs, r.spread
        )));
    }
}

/// An imported cell: every time a time, every point ratio above 0, the statistics in order
/// and drawn from repetitions that were kept.
fn imported(imp: &Imported, out: &mut Vec<Problem>) {
    for (name, row) in &imp.rows {
        let what = format!("imported row {name}");
        seconds(&format!("compile time of {what}"), row.build.compile_s, out);
        for (phase, p) in &row.phases {
            let at = format!("{what} on phase {phase}");
            if !(p.point_ratio.is_finite() && p.point_ratio > 0.0) {
                out.push(Problem(format!(
                    "point ratio of {at} is {} (impossible)",
                    p.point_ratio
                )));
            }
            for (i, t) in p.run_s.iter().enumerate() {
                seconds(&format!("repetition {} of {at}", i + 1), *t, out);
            }
            for (name, v) in [("best", p.best_s), ("median", p.median_s), ("max", p.max_s)] {
                seconds(&format!("{name} of {at}"), v, out);
            }
            if !(p.best_s <= p.median_s && p.median_s <= p.max_s) {
                out.push(Problem(format!(
                    "{at}: best {} ≤ median {} ≤ max {} does not hold (impossible)",
                    p.best_s, p.median_s, p.max_s
                )));
            }
            if p.run_s.len() <= p.dropped as usize {
                out.push(Problem(format!(
                    "{at} drops {} of {} repetitions: none kept (impossible)",
                    p.dropped,
                    p.run_s.len()
                )));
            }
        }
    }
    for (tc, job) in &imp.jobs {
        for (phase, m) in &job.reference_median_s {
            seconds(
                &format!("reference median of imported job {tc} on phase {phase}"),
                *m,
                out,
            );
        }
    }
}

/// The widest A/A half-width or MAD a calibration may hold, as a fraction of its ratio
/// (±1000%). The control is the reference's byte-identical copy, so an interval ten times
/// its median wide is a broken calibration or an edited file; a larger figure would only
/// print as noise (`1e308` printed `±inf%`), and none of them changes what the gate can say.
pub const MAX_CALIBRATION_NOISE: f64 = 10.0;

/// The fewest measured rounds `cell calibrate` writes (`--rounds` is at least 2).
pub const MIN_CALIBRATION_ROUNDS: u32 = 2;

/// Every value of a calibration file, `cell/calibration/<file_cell>.json`, that `cell
/// calibrate` cannot write; empty when it may be used. A negative half-width would silence
/// the gate's noise notice, another cell's file would speak for this machine, and a bad
/// `quieter_protocol` would choose a protocol never measured.
pub fn calibration(cal: &Calibration, file_cell: &CellId) -> Vec<Problem> {
    let mut out = Vec::new();
    if cal.cell.id != *file_cell {
        out.push(Problem(format!(
            "cell.id is `{}`, not the cell `{file_cell}` the file is named for (another cell's calibration)",
            cal.cell.id
        )));
    }
    if cal.rounds < MIN_CALIBRATION_ROUNDS {
        out.push(Problem(format!(
            "rounds is {}: cell calibrate measures at least {MIN_CALIBRATION_ROUNDS}",
            cal.rounds
        )));
    }
    if crate::time::parse_utc(&cal.measured_at).is_none() {
        out.push(Problem(format!(
            "measured_at `{}` is no time (a calendar day, a time of day and its zone)",
            crate::escape::one_line(&cal.measured_at.chars().take(64).collect::<String>())
        )));
    }
    // Each figure is named by its path in the file, which is what a reader fixes or removes.
    let protocols =
        std::iter::once(("phases", &cal.phases)).chain(cal.duet.as_ref().map(|d| ("duet", d)));
    for (section, phases) in protocols {
        for (phase, clocks) in phases {
            for (clock, n) in clocks {
                let at = format!("{section}.{phase}.{}", clock.name());
                noise(&at, n, cal.rounds, &mut out);
            }
        }
    }
    if cal.quieter_protocol == Some(ProtocolMode::Duet) && cal.duet.is_none() {
        out.push(Problem(
            "quieter_protocol is duet, but the file holds no duet noise".to_owned(),
        ));
    }
    out
}

/// One phase and clock of a calibration, at path `at` in the file: a possible ratio over at
/// most `rounds` ratios, a coverage that is a probability, a half-width and a MAD within
/// bounds.
fn noise(at: &str, n: &Noise, rounds: u32, out: &mut Vec<Problem>) {
    ratio(&format!("{at}.ratio"), &n.ratio, out);
    if n.ratio.n == 0 || n.ratio.n > rounds {
        out.push(Problem(format!(
            "{at}.ratio.n is {}: none, or more ratios than the file's {rounds} rounds (impossible)",
            n.ratio.n
        )));
    }
    // 0 is what one ratio covers (a duet of two rounds), 1 what rounding makes of many.
    if !(0.0..=1.0).contains(&n.ratio.level) {
        out.push(Problem(format!(
            "{at}.ratio.level is {}: a coverage is from 0 to 1",
            shown(n.ratio.level)
        )));
    }
    for (name, v) in [("half_width", n.half_width), ("mad", n.mad)] {
        if !(v.is_finite() && v >= 0.0) {
            out.push(Problem(format!(
                "{at}.{name} is {}: negative or not finite (impossible)",
                shown(v)
            )));
        } else if v > MAX_CALIBRATION_NOISE {
            out.push(Problem(format!(
                "{at}.{name} is {}, beyond {MAX_CALIBRATION_NOISE} (±{}%): no A/A noise of identical binaries is that wide",
                shown(v),
                MAX_CALIBRATION_NOISE * 100.0
            )));
        }
    }
}

/// A figure as a message shows it: `1e308`, not its 309 digits.
fn shown(v: f64) -> String {
    if v.is_finite() && v.abs() < 1e6 {
        v.to_string()
    } else {
        format!("{v:e}")
    }
}

fn ratio(what: &str, r: &RatioCi, out: &mut Vec<Problem>) {
    for (name, v) in [
        ("", r.median),
        (" lower bound", r.lo),
        (" upper bound", r.hi),
    ] {
        if !(v.is_finite() && v > 0.0) {
            out.push(Problem(format!(
                "{what}{name} is {} (impossible)",
                shown(v)
            )));
            return;
        }
    }
    if !(r.lo <= r.median && r.median <= r.hi) {
        out.push(Problem(format!(
            "{what} is {} with interval [{}, {}]: lo ≤ median ≤ hi does not hold (impossible)",
            shown(r.median),
            shown(r.lo),
            shown(r.hi)
        )));
    }
}

fn summary(what: &str, s: &Summary, out: &mut Vec<Problem>) {
    for (name, v) in [
        ("min", s.min),
        ("median", s.median),
        ("max", s.max),
        ("MAD", s.mad),
    ] {
        seconds(&format!("{name} {what}"), v, out);
    }
}

fn seconds(what: &str, v: f64, out: &mut Vec<Problem>) {
    if !(v.is_finite() && v >= 0.0) {
        out.push(Problem(format!("{what} is {v} s (impossible)")));
    }
}

/// `size,associativity,line`: three whole numbers as the lane writes them.
fn is_geometry(v: &str) -> bool {
    let parts: Vec<&str> = v.split(',').collect();
    parts.len() == 3
        && parts
            .iter()
            .all(|p| (1..=10).contains(&p.len()) && p.bytes().all(|b| b.is_ascii_digit()))
}
