//! The http suite: every server under every load tool, a fresh server per run, runs
//! interleaved in a seeded order, each run checked for contamination (docs/http-and-soak.md).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use cell_model::{Cell, CpuSets, FieldError, HttpDef, Plan, Server};
use cell_schema::{
    HttpJobResult, HttpKind, HttpRun, HttpServerResult, HttpSettings, HttpToolResult,
    SCHEMA_VERSION, ServerName, SuiteCost, TimeWait, ToolName, round_ratio, round_time,
};
use cell_stats::{SplitMix64, median, shuffle};

use super::error::NotServing;
use super::load::LoadSpec;
use super::procfs;
use super::server::Cpus;
use super::session::{
    Generator, Prepared, RunError, SuiteError, blame, build_server, find_generator, probe_server,
    run_load, suite_pins,
};

/// What the caller may change of `[http]` for one session (tests, quick local runs).
#[derive(Clone, Debug, Default)]
pub struct HttpOverrides {
    /// Measured runs per server and tool.
    pub runs: Option<u32>,
    /// Seconds per measured run.
    pub duration_s: Option<f64>,
    /// Seconds of warm-up load.
    pub warmup_s: Option<f64>,
    /// Load tools.
    pub tools: Option<Vec<String>>,
    /// CPUs of servers and load generators, instead of `[http] cpus`.
    pub cpus: Option<CpuSets>,
}

/// A session's inputs.
pub struct HttpOptions {
    /// Scratch root: `<work>/<server>/` holds each server's build and logs.
    pub work: PathBuf,
    /// Seed of the interleaving order.
    pub seed: u64,
    /// Changes to `[http]`.
    pub overrides: HttpOverrides,
}

fn def(plan: &Plan, o: &HttpOverrides) -> Result<HttpDef, SuiteError> {
    let mut d = plan.http.clone().ok_or_else(|| {
        SuiteError::Usage(
            "cell/cell.toml has no [http] table: the http suite has nothing to run".into(),
        )
    })?;
    if let Some(r) = o.runs {
        d.runs = r.max(1);
    }
    if let Some(s) = o.duration_s {
        d.duration_s = s;
    }
    if let Some(s) = o.warmup_s {
        d.warmup_s = s;
    }
    if let Some(t) = &o.tools {
        d.tools.clone_from(t);
    }
    if let Some(c) = &o.cpus {
        d.cpus = Some(c.clone());
    }
    d.validate().map_err(|FieldError { field: f, msg: m }| {
        SuiteError::Usage(format!("{f} (as changed on the command line): {m}"))
    })?;
    Ok(d)
}

/// Runs the http suite for `servers` in one session and returns one job result per server
/// (`http-<server>`). Progress lines go to `on`.
pub fn run_http(
    plan: &Plan,
    cell_label: &str,
    servers: &[ServerName],
    opts: &HttpOptions,
    on: &mut dyn FnMut(String),
) -> Result<Vec<HttpJobResult>, SuiteError> {
    let total = Instant::now();
    let started_at = cell_schema::time::format_utc(cell_schema::time::now_secs());
    let d = def(plan, &opts.overrides)?;
    let cell: Cell = plan.cell(cell_label)?;
    let chosen = servers
        .iter()
        .map(|s| d.server(s.as_str()).map_err(SuiteError::from))
        .collect::<Result<Vec<_>, _>>()?;
    let generators: Vec<Generator> = d
        .tools
        .iter()
        .map(|t| find_generator(t))
        .collect::<Result<_, _>>()?;
    let cpus = Cpus::choose(d.cpus.as_ref())?;
    let machine = crate::facts::machine(cpus.server.first());
    let mut session = prepare(plan, &d, &chosen, &opts.work, cpus, on)?;
    let measure_t = Instant::now();
    let runs = rounds(plan, &d, &mut session, &generators, cpus, opts.seed, on)?;
    let measure_s = measure_t.elapsed().as_secs_f64();
    for ((name, tool), rs) in runs {
        if let Some(r) = session.results.get_mut(&name) {
            r.tools.insert(tool, aggregate(rs));
        }
    }
    let setup_s =
        (total.elapsed().as_secs_f64() - measure_s - session.build_s.values().sum::<f64>())
            .max(0.0);
    let shared = Shared {
        cell: &cell,
        machine: &machine,
        settings: settings(&d, cpus, opts.seed),
        generators: &generators,
        started_at: &started_at,
        measure_s,
        setup_s,
    };
    Ok(jobs(plan, &d, session, &shared))
}

/// The servers of a session after their builds and response checks.
struct Session {
    /// Every server's result so far.
    results: BTreeMap<ServerName, HttpServerResult>,
    /// The servers that passed the check, ready to be measured.
    ready: BTreeMap<ServerName, Prepared>,
    /// Build seconds per server.
    build_s: BTreeMap<ServerName, f64>,
    /// Tool versions of each server's toolchain.
    versions: BTreeMap<ServerName, BTreeMap<ToolName, cell_schema::ToolVersion>>,
}

/// Builds and checks every server first: a wrong answer fails before any load.
fn prepare(
    plan: &Plan,
    def: &HttpDef,
    chosen: &[&Server],
    work: &Path,
    cpus: Cpus,
    on: &mut dyn FnMut(String),
) -> Result<Session, SuiteError> {
    let mut session = Session {
        results: BTreeMap::new(),
        ready: BTreeMap::new(),
        build_s: BTreeMap::new(),
        versions: BTreeMap::new(),
    };
    for s in chosen {
        let probed = probe_server(plan, s)?;
        session
            .versions
            .insert(s.name.clone(), probed.versions.clone());
        let mut result = HttpServerResult {
            toolchain: s.toolchain.clone(),
            build: None,
            check: None,
            tools: BTreeMap::new(),
            error: None,
        };
        on(format!("[http {}] building", s.name));
        let build_t = Instant::now();
        let built = build_server(plan, s, probed, &work.join(s.name.as_str()));
        session
            .build_s
            .insert(s.name.clone(), build_t.elapsed().as_secs_f64());
        match built {
            Err(e) => result.error = Some(e.to_string()),
            Ok(p) => {
                result.build = Some(p.build.clone());
                match check_before_load(def, &p, cpus) {
                    Ok(()) => {
                        result.check = Some("ok".into());
                        session.ready.insert(s.name.clone(), p);
                    }
                    Err(e) => {
                        let m = e.to_string();
                        on(format!("[http {}] FAILED before any load: {m}", s.name));
                        result.check = Some(m.clone());
                        result.error = Some(m);
                    }
                }
            }
        }
        session.results.insert(s.name.clone(), result);
    }
    Ok(session)
}

/// A fresh start, the response check, and the server still alive after it.
fn check_before_load(d: &HttpDef, p: &Prepared, cpus: Cpus) -> Result<(), NotServing> {
    let (mut running, _) = p.start(cpus.server, Duration::from_secs_f64(d.startup_timeout_s))?;
    let checked = super::check::verify(p.server.port, &p.server.expect, Duration::from_secs(5))
        .map_err(NotServing::from)
        .and_then(|()| running.alive().map_err(NotServing::from));
    running.stop(Duration::from_secs_f64(d.stop_grace_s));
    checked
}

/// Every (server, tool) once per round, in a fresh seeded order; a server that fails drops
/// out, a load generator that fails ends the session.
fn rounds(
    plan: &Plan,
    d: &HttpDef,
    session: &mut Session,
    generators: &[Generator],
    cpus: Cpus,
    seed: u64,
    on: &mut dyn FnMut(String),
) -> Result<BTreeMap<(ServerName, String), Vec<HttpRun>>, SuiteError> {
    let mut rng = SplitMix64::new(seed);
    let mut runs: BTreeMap<(ServerName, String), Vec<HttpRun>> = BTreeMap::new();
    let mut seq = 0u32;
    for index in 0..d.runs {
        let mut order: Vec<(ServerName, usize)> = session
            .ready
            .keys()
            .flat_map(|s| (0..generators.len()).map(move |g| (s.clone(), g)))
            .collect();
        shuffle(&mut order, &mut rng);
        for (name, g) in order {
            let Some(p) = session.ready.get(&name) else {
                continue;
            };
            let lg = &generators[g];
            on(format!(
                "[http {name}] run {}/{} under {}",
                index + 1,
                d.runs,
                lg.tool.name()
            ));
            match measure(plan, d, p, lg, cpus, index, seq) {
                Ok(run) => runs
                    .entry((name.clone(), lg.tool.name().to_owned()))
                    .or_default()
                    .push(run),
                Err(RunError::Tool(m)) => return Err(SuiteError::Load(m)),
                Err(RunError::Server(m)) => {
                    on(format!("[http {name}] FAILED: {m}"));
                    if let Some(r) = session.results.get_mut(&name) {
                        r.error = Some(m);
                    }
                    session.ready.remove(&name);
                }
            }
            seq += 1;
        }
    }
    Ok(runs)
}

/// The load every server of the session got, as the job records it.
fn settings(d: &HttpDef, cpus: Cpus, seed: u64) -> HttpSettings {
    HttpSettings {
        tools: d.tools.clone(),
        connections: d.connections,
        threads: d.threads,
        duration_s: d.duration_s,
        warmup_s: d.warmup_s,
        runs: d.runs,
        keep_alive: d.keep_alive,
        server_cpu: cpus.server.first(),
        load_cpu: cpus.load.first(),
        server_cpus: cpus.server.to_vec(),
        load_cpus: cpus.load.to_vec(),
        seed,
        startup_timeout_s: d.startup_timeout_s,
        stop_grace_s: d.stop_grace_s,
        drain_timeout_s: d.drain_timeout_s,
    }
}

/// What every job of the session shares.
struct Shared<'a> {
    cell: &'a Cell,
    machine: &'a cell_schema::Machine,
    settings: HttpSettings,
    generators: &'a [Generator],
    started_at: &'a str,
    measure_s: f64,
    setup_s: f64,
}

/// One job result per server.
fn jobs(plan: &Plan, d: &HttpDef, mut session: Session, shared: &Shared<'_>) -> Vec<HttpJobResult> {
    let n = session.results.len().max(1) as f64;
    let mut out = Vec::new();
    for (name, r) in session.results {
        let server = &d.servers[&name];
        // Each server's own build; the interleaved measuring is shared out evenly.
        let b = session.build_s.get(&name).copied().unwrap_or(0.0);
        let cost = SuiteCost {
            build_s: round_time(b),
            measure_s: round_time(shared.measure_s / n),
            total_s: round_time(b + (shared.measure_s + shared.setup_s) / n),
        };
        let mut v = session.versions.remove(&name).unwrap_or_default();
        for g in shared.generators {
            v.insert(ToolName::from(g.tool.name()), g.version.clone());
        }
        out.push(HttpJobResult {
            schema_version: SCHEMA_VERSION,
            kind: HttpKind::Http,
            job: format!("http-{name}"),
            cell: shared.cell.info(),
            machine: shared.machine.clone(),
            pins: suite_pins(plan, &[server]),
            versions: v,
            settings: shared.settings.clone(),
            verdict: cell_verdict::http_verdict(&name, &r),
            servers: BTreeMap::from([(name, r)]),
            cost,
            started_at: shared.started_at.to_owned(),
            github: crate::job::github_context(),
        });
    }
    out
}

/// One measured run: drain, fresh server, warm-up, measured load, stop.
fn measure(
    plan: &Plan,
    http: &HttpDef,
    server: &Prepared,
    lg: &Generator,
    cpus: Cpus,
    index: u32,
    seq: u32,
) -> Result<HttpRun, RunError> {
    let port = server.server.port;
    let time_wait = drain(port, Duration::from_secs_f64(http.drain_timeout_s));
    let (mut running, startup_s) =
        server.start(cpus.server, Duration::from_secs_f64(http.startup_timeout_s))?;
    let url = format!("http://127.0.0.1:{port}/");
    let spec = |secs: f64| LoadSpec {
        url: &url,
        connections: http.connections,
        threads: http.threads,
        duration: Duration::from_secs_f64(secs),
        keep_alive: http.keep_alive,
        rate: None,
        timeout: Duration::from_secs(5),
    };
    let scratch = server.work.join(format!("run-{seq}"));
    std::fs::create_dir_all(&scratch)
        .map_err(|e| format!("creating {}: {e}", scratch.display()))?;
    let tool = lg.tool.name();
    if http.warmup_s > 0.0
        && let Err(m) = run_load(lg, &spec(http.warmup_s), cpus.load, &scratch)
    {
        let what = format!("the warm-up of run {} under {tool}", index + 1);
        return Err(blame(&mut running, server, &what, &m));
    }
    running
        .alive()
        .map_err(|e| format!("{e} during the warm-up of run {} under {tool}", index + 1))?;
    running.start_sampling(Duration::from_millis(50));
    let pid = running.pid();
    let tree_cpu_start = procfs::sample_tree(pid)
        .map_err(|e| {
            format!(
                "reading the server's process tree before run {}: {e}",
                index + 1
            )
        })?
        .cpu_s;
    let machine_start = procfs::machine_cpu().ok();
    let self_start = self_cpu_s();
    let load = run_load(lg, &spec(http.duration_s), cpus.load, &scratch);
    let self_s = self_cpu_s() - self_start;
    // A dead server is reported with its exit status, whatever the load tool made of it.
    let what = format!("measured run {} under {tool}", index + 1);
    if let Err(e) = running.alive() {
        return Err(RunError::Server(format!("{e} during {what}")));
    }
    let load = match load {
        Ok(l) => l,
        Err(m) => return Err(blame(&mut running, server, &what, &m)),
    };
    let tree_cpu_end = procfs::sample_tree(pid).map_or(tree_cpu_start, |s| s.cpu_s);
    let machine_end = procfs::machine_cpu().ok();
    let peak_rss_kib = running.stop_sampling();
    running.stop(Duration::from_secs_f64(http.stop_grace_s));
    let _ = std::fs::remove_dir_all(&scratch);

    let server_cpu_s = (tree_cpu_end - tree_cpu_start).max(0.0);
    let requests = load.report.requests;
    let cpu_ms_per_1k = if requests == 0 {
        0.0
    } else {
        server_cpu_s * 1e6 / requests as f64
    };
    let load_cpu_share = if load.wall_s > 0.0 {
        load.cpu_s / load.wall_s
    } else {
        0.0
    };
    let other_cpu_share = match (machine_start, machine_end) {
        (Some(a), Some(b)) if b.total_s > a.total_s => {
            let busy = b.busy_s - a.busy_s;
            // The harness's own sampling is ours, not another tenant's.
            ((busy - server_cpu_s - load.cpu_s - self_s) / (b.total_s - a.total_s)).max(0.0)
        }
        _ => 0.0,
    };
    let contaminated = cell_verdict::Contamination {
        load_cpu_max: plan.settings.http_load_cpu_max,
        other_cpu_max: plan.settings.http_other_cpu_max,
    }
    .reasons(load_cpu_share, other_cpu_share);
    Ok(HttpRun {
        index,
        seq,
        startup_s: round_time(startup_s),
        time_wait,
        load: load.report,
        server_cpu_s: round_time(server_cpu_s),
        cpu_ms_per_1k: round_ratio(cpu_ms_per_1k),
        peak_rss_kib,
        load_cpu_s: round_time(load.cpu_s),
        load_cpu_share: round_ratio(load_cpu_share),
        other_cpu_share: round_ratio(other_cpu_share),
        contaminated,
    })
}

/// User+sys seconds of this process so far (every thread, the samplers included).
fn self_cpu_s() -> f64 {
    // SAFETY: rusage is plain data filled by the kernel.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &raw mut ru) } != 0 {
        return 0.0;
    }
    let secs = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 / 1e6;
    secs(ru.ru_utime) + secs(ru.ru_stime)
}

/// Waits (bounded) for `TIME_WAIT` sockets on the port to drain.
fn drain(port: u16, bound: Duration) -> TimeWait {
    let t = Instant::now();
    let before = procfs::time_wait(port).unwrap_or(0);
    let mut now = before;
    while now > 0 && t.elapsed() < bound {
        std::thread::sleep(Duration::from_millis(100));
        now = procfs::time_wait(port).unwrap_or(0);
    }
    TimeWait {
        before,
        after: now,
        waited_s: round_time(t.elapsed().as_secs_f64()),
    }
}

/// Medians over the clean runs (all runs when none is clean).
pub fn aggregate(runs: Vec<HttpRun>) -> HttpToolResult {
    let clean: Vec<&HttpRun> = runs.iter().filter(|r| r.contaminated.is_empty()).collect();
    let basis: Vec<&HttpRun> = if clean.is_empty() {
        runs.iter().collect()
    } else {
        clean.clone()
    };
    let of = |f: &dyn Fn(&HttpRun) -> f64| basis.iter().map(|r| f(r)).collect::<Vec<f64>>();
    let rps = of(&|r| r.load.rps);
    let lo = rps.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = rps.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    HttpToolResult {
        clean_runs: u32::try_from(clean.len()).unwrap_or(u32::MAX),
        rps: round_ratio(median(&rps)),
        rps_range: [round_ratio(lo), round_ratio(hi)],
        p99_ms: round_ratio(median(&of(&|r| r.load.latency_ms.p99))),
        cpu_ms_per_1k: round_ratio(median(&of(&|r| r.cpu_ms_per_1k))),
        peak_rss_kib: runs.iter().map(|r| r.peak_rss_kib).max().unwrap_or(0),
        errors: runs
            .iter()
            .map(|r| r.load.errors.values().sum::<u64>())
            .sum(),
        non_2xx: runs.iter().map(|r| r.load.non_2xx).sum(),
        runs,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cell_schema::{Latency, LoadReport};

    fn run(index: u32, rps: f64, p99: f64, dirty: bool) -> HttpRun {
        HttpRun {
            index,
            seq: index,
            startup_s: 0.01,
            time_wait: TimeWait {
                before: 0,
                after: 0,
                waited_s: 0.0,
            },
            load: LoadReport {
                tool: "wrk".into(),
                version: "wrk 4.1.0".into(),
                duration_s: 1.0,
                requests: rps as u64,
                errors: BTreeMap::from([("timeout".to_owned(), u64::from(index))]),
                non_2xx: 1,
                rps,
                latency_ms: Latency {
                    p50: 0.1,
                    p90: 0.2,
                    p99,
                    p99_9: 1.0,
                    max: 2.0,
                },
            },
            server_cpu_s: 0.5,
            cpu_ms_per_1k: rps / 1000.0,
            peak_rss_kib: 1000 + u64::from(index),
            load_cpu_s: 0.5,
            load_cpu_share: 0.5,
            other_cpu_share: 0.0,
            contaminated: if dirty {
                vec!["busy".into()]
            } else {
                Vec::new()
            },
        }
    }

    #[test]
    #[expect(clippy::float_cmp, reason = "medians of exact values are exact")]
    fn contaminated_runs_are_kept_but_left_out_of_the_medians() {
        let t = aggregate(vec![
            run(0, 1000.0, 1.0, false),
            run(1, 9000.0, 9.0, true),
            run(2, 1200.0, 2.0, false),
            run(3, 1100.0, 3.0, false),
        ]);
        assert_eq!(t.runs.len(), 4);
        assert_eq!(t.clean_runs, 3);
        assert_eq!(t.rps, 1100.0);
        assert_eq!(t.rps_range, [1000.0, 1200.0]);
        assert_eq!(t.p99_ms, 2.0);
        assert_eq!(t.cpu_ms_per_1k, 1.1);
        // Peaks, errors and non-2xx count every run.
        assert_eq!(t.peak_rss_kib, 1003);
        assert_eq!(t.errors, 6);
        assert_eq!(t.non_2xx, 4);
    }

    #[test]
    #[expect(clippy::float_cmp, reason = "medians of exact values are exact")]
    fn with_no_clean_run_the_medians_come_from_all() {
        let t = aggregate(vec![run(0, 1000.0, 1.0, true), run(1, 3000.0, 3.0, true)]);
        assert_eq!(t.clean_runs, 0);
        assert_eq!(t.rps, 2000.0);
    }
}
