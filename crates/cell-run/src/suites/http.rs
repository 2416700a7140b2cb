//! The http suite: every server on every workload under every load tool in every connection
//! shape, runs interleaved in a seeded order, each run checked for contamination
//! (docs/http-and-soak.md). Three modes: a fresh server per run, one server process per
//! server for the whole session, or one long sustained run per combination.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use cell_model::{Cell, CpuSets, Expect, FieldError, HttpDef, Plan, Shape, Workload};
use cell_schema::{
    HttpJobResult, HttpKind, HttpMode, HttpRequestSpec, HttpRun, HttpServerResult, HttpSettings,
    HttpShape, SCHEMA_VERSION, ServerName, SuiteCost, TimeWait, ToolName, WorkloadName,
    round_ratio, round_time,
};
use cell_stats::{SplitMix64, shuffle};
use cell_verdict::suite_figures;

use super::error::NotServing;
use super::load::{LoadRequest, LoadSpec};
use super::procfs;
use super::server::{Cpus, Running};
mod measure;
mod prepare;

use super::session::{
    Generator, Prepared, RunError, SuiteError, blame, find_generator, run_load, suite_pins,
};
use measure::{drain, measure_load};

/// What the caller may change of `[http]` for one session (tests, quick local runs).
#[derive(Clone, Debug, Default)]
pub struct HttpOverrides {
    /// The whole matrix rather than `[http.default]`.
    pub full: bool,
    /// How servers are run.
    pub mode: Option<HttpMode>,
    /// Measured runs per combination.
    pub runs: Option<u32>,
    /// Seconds per measured run.
    pub duration_s: Option<f64>,
    /// Seconds of warm-up load.
    pub warmup_s: Option<f64>,
    /// Load tools.
    pub tools: Option<Vec<String>>,
    /// Workloads, by name.
    pub workloads: Option<Vec<String>>,
    /// Connection shapes, by name.
    pub shapes: Option<Vec<String>>,
    /// Connections of every chosen shape that keeps its connections alive.
    pub connections: Option<u32>,
    /// Load generator threads of every chosen shape, for the tools that take a count.
    pub threads: Option<u32>,
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
    /// Where a release under test that builds a server is installed (verified first); only
    /// needed when one does.
    pub cache: Option<crate::cache::Cache>,
}

/// `[http]` narrowed to the session and changed by the command line, then validated again.
pub fn session_def(plan: &Plan, o: &HttpOverrides) -> Result<HttpDef, SuiteError> {
    let http = plan.http.as_ref().ok_or_else(|| {
        SuiteError::Usage(
            "cell/cell.toml has no [http] table: the http suite has nothing to run".into(),
        )
    })?;
    let usage = |FieldError { field: f, msg: m }| {
        SuiteError::Usage(format!("{f} (as changed on the command line): {m}"))
    };
    let mut d = http.session(o.full, o.mode);
    d.runs = o.runs.map_or(d.runs, |r| r.max(1));
    d.duration_s = o.duration_s.unwrap_or(d.duration_s);
    d.warmup_s = o.warmup_s.unwrap_or(d.warmup_s);
    if let Some(t) = &o.tools {
        d.tools.clone_from(t);
    }
    if let Some(list) = &o.workloads {
        let all: Vec<&str> = http.workloads.keys().map(WorkloadName::as_str).collect();
        let names = cell_model::names_in("--workloads", list, &all).map_err(usage)?;
        d.workloads = http.workloads.clone();
        d.workloads.retain(|k, _| names.contains(&k.as_str()));
    }
    if let Some(list) = &o.shapes {
        let all: Vec<&str> = http.shapes.iter().map(|s| s.name.as_str()).collect();
        let names = cell_model::names_in("--shapes", list, &all).map_err(usage)?;
        d.shapes = names
            .iter()
            .filter_map(|n| http.shapes.iter().find(|s| s.name.as_str() == *n).cloned())
            .collect();
    }
    for s in &mut d.shapes {
        if let Some(c) = o.connections.filter(|_| s.keep_alive) {
            s.connections = c.max(1);
        }
        if let Some(t) = o.threads {
            s.threads = t.max(1);
        }
    }
    if let Some(t) = o.threads {
        d.threads = t.max(1);
    }
    if let Some(c) = &o.cpus {
        d.cpus = Some(c.clone());
    }
    d.validate().map_err(usage)?;
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
    let d = session_def(plan, &opts.overrides)?;
    let cell: Cell = plan.cell(cell_label)?;
    let chosen = servers
        .iter()
        .map(|s| d.server(s.as_str()).map_err(SuiteError::from))
        .collect::<Result<Vec<_>, _>>()?;
    let (chosen, left_out) = prepare::serving(&d, chosen, on)?;
    let generators: Vec<Generator> = d
        .tools
        .iter()
        .map(|t| find_generator(t))
        .collect::<Result<_, _>>()?;
    let cpus = Cpus::choose(d.cpus.as_ref())?;
    let machine = crate::facts::machine(cpus.server.first());
    let install = prepare::Install {
        cell: &cell,
        cache: opts.cache.as_ref(),
    };
    let mut session = prepare::prepare(plan, &d, (&chosen, &install), &opts.work, cpus, on)?;
    for s in left_out {
        session
            .results
            .insert(s.name.clone(), prepare::server_result(&d, s));
    }
    let measure_t = Instant::now();
    let requests = load_requests(&d)?;
    let ctx = Ctx {
        plan,
        d: &d,
        requests: &requests,
        generators: &generators,
        cpus,
    };
    let runs = match d.mode {
        HttpMode::SameProcess => same_process(&ctx, &mut session, opts.seed, on)?,
        HttpMode::Fresh | HttpMode::Sustained => fresh(&ctx, &mut session, opts.seed, on)?,
    };
    let measure_s = measure_t.elapsed().as_secs_f64();
    file_runs(&d, &generators, &mut session, runs);
    let setup_s =
        (total.elapsed().as_secs_f64() - measure_s - session.build_s.values().sum::<f64>())
            .max(0.0);
    let shared = Shared {
        cell: &cell,
        machine: &machine,
        settings: settings(&d, cpus, opts),
        generators: &generators,
        started_at: &started_at,
        measure_s,
        setup_s,
    };
    Ok(jobs(plan, &d, session, &shared))
}

/// What every measured run of a session reads.
struct Ctx<'a> {
    plan: &'a Plan,
    d: &'a HttpDef,
    requests: &'a BTreeMap<WorkloadName, LoadRequest>,
    generators: &'a [Generator],
    cpus: Cpus,
}

/// One measured combination: a server's workload in one shape under one tool.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Key {
    server: ServerName,
    workload: WorkloadName,
    /// Index into the session's shapes.
    shape: usize,
    /// Index into the session's generators.
    tool: usize,
}

type Runs = BTreeMap<Key, Vec<HttpRun>>;

/// Puts every combination's runs into its server's result, medians over the clean ones.
fn file_runs(d: &HttpDef, generators: &[Generator], session: &mut Session, runs: Runs) {
    for (k, rs) in runs {
        let Some(r) = session.results.get_mut(&k.server) else {
            continue;
        };
        let Some(w) = r.workloads.get_mut(&k.workload) else {
            continue;
        };
        w.shapes
            .entry(d.shapes[k.shape].name.clone())
            .or_default()
            .insert(
                generators[k.tool].tool.name().to_owned(),
                suite_figures::http_tool(rs),
            );
    }
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

impl Session {
    /// Every combination of the ready servers, the workloads they answered as expected and
    /// the shapes they are measured in, in a sorted order (the caller shuffles).
    fn combinations(&self, shapes: &[Shape], tools: usize) -> Vec<Key> {
        let mut out = Vec::new();
        for (server, p) in &self.ready {
            let Some(r) = self.results.get(server) else {
                continue;
            };
            let answered = r.workloads.iter().filter(|(_, w)| w.error.is_none());
            let measured: Vec<usize> = (0..shapes.len())
                .filter(|&i| p.server.left_out_of(&shapes[i]).is_none())
                .collect();
            for (w, _) in answered {
                for &shape in &measured {
                    for tool in 0..tools {
                        out.push(Key {
                            server: server.clone(),
                            workload: w.clone(),
                            shape,
                            tool,
                        });
                    }
                }
            }
        }
        out
    }

    /// A server failed: its other runs stop, its results so far are kept.
    fn drop_server(&mut self, name: &ServerName, why: String, on: &mut dyn FnMut(String)) {
        on(format!("[http {name}] FAILED: {why}"));
        if let Some(r) = self.results.get_mut(name) {
            r.error = Some(why);
        }
        self.ready.remove(name);
    }
}

/// Measures one run of a combination on a server of the session; `None` when that server
/// has nothing left to run it on.
type MeasureOne<'a> = dyn FnMut(&Prepared, &Run<'_>) -> Option<Result<HttpRun, RunError>> + 'a;

/// Every combination once per round, in a fresh seeded order, measured by `one`; a server
/// that fails drops out, a load generator that fails ends the session.
fn interleaved(
    ctx: &Ctx<'_>,
    session: &mut Session,
    seed: u64,
    on: &mut dyn FnMut(String),
    one: &mut MeasureOne<'_>,
) -> Result<Runs, SuiteError> {
    let mut rng = SplitMix64::new(seed);
    let mut runs = Runs::new();
    let mut seq = 0u32;
    for index in 0..ctx.d.runs {
        let mut order = session.combinations(&ctx.d.shapes, ctx.generators.len());
        shuffle(&mut order, &mut rng);
        for k in order {
            let Some(p) = session.ready.get(&k.server) else {
                continue;
            };
            on(progress(ctx, &k, index));
            let at = Run {
                key: &k,
                index,
                seq,
            };
            match one(p, &at) {
                None => continue,
                Some(Ok(run)) => runs.entry(k.clone()).or_default().push(run),
                Some(Err(RunError::Tool(m))) => return Err(SuiteError::Load(m)),
                Some(Err(RunError::Server(m))) => session.drop_server(&k.server, m, on),
            }
            seq += 1;
        }
    }
    Ok(runs)
}

/// The fresh and sustained modes: each run on a fresh server.
fn fresh(
    ctx: &Ctx<'_>,
    session: &mut Session,
    seed: u64,
    on: &mut dyn FnMut(String),
) -> Result<Runs, SuiteError> {
    interleaved(ctx, session, seed, on, &mut |p, at| {
        Some(measure_fresh(ctx, p, at))
    })
}

/// The same-process mode: every server started once, each workload warmed up on it, then
/// every run on those processes; a server that fails is stopped at once.
fn same_process(
    ctx: &Ctx<'_>,
    session: &mut Session,
    seed: u64,
    on: &mut dyn FnMut(String),
) -> Result<Runs, SuiteError> {
    let grace = Duration::from_secs_f64(ctx.d.stop_grace_s);
    let mut procs = start_all(ctx, session, on);
    warm_all(ctx, session, &mut procs, on)?;
    let runs = interleaved(ctx, session, seed, on, &mut |p, at| {
        let (running, startup_s) = procs.get_mut(&at.key.server)?;
        let drain_bound = Duration::from_secs_f64(ctx.d.drain_timeout_s);
        let time_wait = drain(p.server.port, drain_bound);
        let startup_s = *startup_s;
        let run = measure_load(ctx, p, running, at).map(|m| m.run(startup_s, time_wait));
        if matches!(run, Err(RunError::Server(_)))
            && let Some((r, _)) = procs.remove(&at.key.server)
        {
            r.stop(grace);
        }
        Some(run)
    });
    for (_, (r, _)) in procs {
        r.stop(grace);
    }
    runs
}

/// Starts every ready server once (each on its own port, all on the server CPUs).
fn start_all(
    ctx: &Ctx<'_>,
    session: &mut Session,
    on: &mut dyn FnMut(String),
) -> BTreeMap<ServerName, (Running, f64)> {
    let mut procs = BTreeMap::new();
    let names: Vec<ServerName> = session.ready.keys().cloned().collect();
    for name in names {
        let started = session.ready[&name].start(
            ctx.cpus.server,
            Duration::from_secs_f64(ctx.d.startup_timeout_s),
        );
        match started {
            Ok(r) => {
                procs.insert(name, r);
            }
            Err(e) => session.drop_server(&name, NotServing::from(e).to_string(), on),
        }
    }
    procs
}

/// One warm-up per server and workload on the running process, under the first tool in
/// the first shape it is measured in.
fn warm_all(
    ctx: &Ctx<'_>,
    session: &mut Session,
    procs: &mut BTreeMap<ServerName, (Running, f64)>,
    on: &mut dyn FnMut(String),
) -> Result<(), SuiteError> {
    if ctx.d.warmup_s <= 0.0 {
        return Ok(());
    }
    let mut keys = session.combinations(&ctx.d.shapes, 1);
    // The first shape the server is measured in, once per workload.
    keys.dedup_by(|b, a| a.server == b.server && a.workload == b.workload);
    for k in keys {
        let (Some(p), Some((running, _))) =
            (session.ready.get(&k.server), procs.get_mut(&k.server))
        else {
            continue;
        };
        on(format!("[http {}] warm-up of {}", k.server, k.workload));
        let at = Run {
            key: &k,
            index: 0,
            seq: 0,
        };
        match warm_up(ctx, p, running, &at) {
            Ok(()) => {}
            Err(RunError::Tool(m)) => return Err(SuiteError::Load(m)),
            Err(RunError::Server(m)) => {
                session.drop_server(&k.server, m, on);
                if let Some((r, _)) = procs.remove(&k.server) {
                    r.stop(Duration::from_secs_f64(ctx.d.stop_grace_s));
                }
            }
        }
    }
    Ok(())
}

fn progress(ctx: &Ctx<'_>, k: &Key, index: u32) -> String {
    format!(
        "[http {}] run {}/{}: {} over {} under {}",
        k.server,
        index + 1,
        ctx.d.runs,
        k.workload,
        ctx.d.shapes[k.shape].name,
        ctx.generators[k.tool].tool.name()
    )
}

/// The load every server of the session got, as the job records it.
fn settings(d: &HttpDef, cpus: Cpus, o: &HttpOptions) -> HttpSettings {
    let first = d.shapes.first();
    let shapes = d
        .shapes
        .iter()
        .map(|s| HttpShape {
            name: s.name.clone(),
            connections: s.connections,
            keep_alive: s.keep_alive,
            threads: s.threads,
        })
        .collect();
    let workloads = d
        .workloads
        .values()
        .map(|w| {
            let spec = HttpRequestSpec {
                method: w.method.clone(),
                path: w.path.clone(),
                headers: w.headers.clone(),
                body: w.body.clone(),
            };
            (w.name.clone(), spec)
        })
        .collect();
    HttpSettings {
        tools: d.tools.clone(),
        // The first shape's, as results written before shapes read them.
        connections: first.map_or(0, |x| x.connections),
        threads: d.threads,
        duration_s: d.duration_s,
        warmup_s: d.warmup_s,
        runs: d.runs,
        keep_alive: first.is_none_or(|x| x.keep_alive),
        server_cpu: cpus.server.first(),
        load_cpu: cpus.load.first(),
        server_cpus: cpus.server.to_vec(),
        load_cpus: cpus.load.to_vec(),
        seed: o.seed,
        startup_timeout_s: d.startup_timeout_s,
        stop_grace_s: d.stop_grace_s,
        drain_timeout_s: d.drain_timeout_s,
        mode: d.mode,
        full: o.overrides.full,
        shapes,
        workloads,
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
            verdict: cell_verdict::http_verdict(&name, &r, &shared.settings),
            servers: BTreeMap::from([(name, r)]),
            cost,
            started_at: shared.started_at.to_owned(),
            github: crate::job::github_context(),
        });
    }
    out
}

/// Where a run is in the session.
struct Run<'a> {
    key: &'a Key,
    index: u32,
    seq: u32,
}

/// The load spec of one combination.
fn spec<'a>(url: &'a str, shape: &Shape, request: &'a LoadRequest, secs: f64) -> LoadSpec<'a> {
    LoadSpec {
        url,
        connections: shape.connections,
        threads: shape.threads,
        duration: Duration::from_secs_f64(secs),
        keep_alive: shape.keep_alive,
        rate: None,
        timeout: Duration::from_secs(5),
        request,
    }
}

/// Each workload's request as the load tools send it.
fn load_requests(d: &HttpDef) -> Result<BTreeMap<WorkloadName, LoadRequest>, SuiteError> {
    d.workloads
        .values()
        .map(|w| Ok((w.name.clone(), super::session::load_request(w)?)))
        .collect()
}

/// The workload of a key and what the server must answer to it.
fn workload_of<'a>(ctx: &Ctx<'a>, p: &'a Prepared, k: &Key) -> (&'a Workload, &'a Expect) {
    (
        &ctx.d.workloads[&k.workload],
        &p.server.workloads[&k.workload],
    )
}

/// The warm-up load of one combination on a running server.
fn warm_up(
    ctx: &Ctx<'_>,
    p: &Prepared,
    running: &mut Running,
    at: &Run<'_>,
) -> Result<(), RunError> {
    let (w, e) = workload_of(ctx, p, at.key);
    let url = format!("http://127.0.0.1:{}{}", p.server.port, w.path);
    let lg = &ctx.generators[at.key.tool];
    let scratch = scratch_dir(p, at.seq, "warm")?;
    let shape = &ctx.d.shapes[at.key.shape];
    let r = run_load(
        lg,
        &spec(&url, shape, &ctx.requests[&at.key.workload], ctx.d.warmup_s),
        ctx.cpus.load,
        &scratch,
    );
    let _ = std::fs::remove_dir_all(&scratch);
    let what = format!(
        "the warm-up of run {} of {} under {}",
        at.index + 1,
        w.name,
        lg.tool.name()
    );
    if let Err(m) = r {
        return Err(blame(running, p, (w, e), &what, &m));
    }
    running
        .alive()
        .map_err(|e| RunError::Server(format!("{e} during {what}")))
}

fn scratch_dir(p: &Prepared, seq: u32, what: &str) -> Result<PathBuf, RunError> {
    let scratch = p.work.join(format!("{what}-{seq}"));
    std::fs::create_dir_all(&scratch)
        .map_err(|e| RunError::Server(format!("creating {}: {e}", scratch.display())))?;
    Ok(scratch)
}

/// One measured run of the fresh and sustained modes: drain, fresh server, warm-up,
/// measured load, stop.
fn measure_fresh(ctx: &Ctx<'_>, p: &Prepared, at: &Run<'_>) -> Result<HttpRun, RunError> {
    let time_wait = drain(
        p.server.port,
        Duration::from_secs_f64(ctx.d.drain_timeout_s),
    );
    let (mut running, startup_s) = p.start(
        ctx.cpus.server,
        Duration::from_secs_f64(ctx.d.startup_timeout_s),
    )?;
    if ctx.d.warmup_s > 0.0 {
        warm_up(ctx, p, &mut running, at)?;
    }
    let m = measure_load(ctx, p, &mut running, at);
    running.stop(Duration::from_secs_f64(ctx.d.stop_grace_s));
    Ok(m?.run(startup_s, time_wait))
}
