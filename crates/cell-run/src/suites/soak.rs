//! The soak suite: each server under a fixed request rate for a long window, its process tree
//! sampled from /proc; RSS fitted from the window start, flat or drifted by the rule.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use cell_model::{CpuSets, FieldError, HttpDef, Plan, SoakDef};
use cell_schema::{
    Drift, SCHEMA_VERSION, ServerName, SoakConfig, SoakJobResult, SoakKind, SoakSample,
    SoakServerResult, SoakSettings, SuiteCost, ToolName, round_time,
};

use super::load::LoadSpec;
use super::procfs;
use super::server::Cpus;
use super::session::{
    Generator, Prepared, RunError, SuiteError, blame, build_server, find_generator, probe_server,
    run_load, suite_pins,
};

/// What the caller may change of `[soak]` (CI uses minutes, tests less).
#[derive(Clone, Debug, Default)]
pub struct SoakOverrides {
    /// Seconds of load.
    pub duration_s: Option<f64>,
    /// Seconds into the load where the fit starts.
    pub window_start_s: Option<f64>,
    /// Seconds between samples.
    pub interval_s: Option<f64>,
    /// Seconds per minima window.
    pub minima_window_s: Option<f64>,
    /// Requests per second.
    pub rate: Option<u32>,
    /// Keep connections alive (`Some(false)`: a new connection per request).
    pub keep_alive: Option<bool>,
    /// CPUs of servers and load generators, instead of `[http] cpus`.
    pub cpus: Option<CpuSets>,
}

/// A soak's inputs.
pub struct SoakOptions {
    /// Scratch root (`<work>/<server>/`).
    pub work: PathBuf,
    /// Changes to `[soak]`.
    pub overrides: SoakOverrides,
}

fn def(plan: &Plan, o: &SoakOverrides) -> Result<(SoakDef, HttpDef), SuiteError> {
    let (Some(soak), Some(mut http)) = (plan.soak.clone(), plan.http.clone()) else {
        return Err(SuiteError::Usage(
            "cell/cell.toml has no [soak] table (and [http] servers): the soak suite has nothing to run".into(),
        ));
    };
    let d = SoakDef {
        config: overridden(&soak.config, o),
        ..soak
    };
    if let Some(c) = &o.cpus {
        http.cpus = Some(c.clone());
    }
    d.validate().map_err(|FieldError { field: f, msg: m }| {
        SuiteError::Usage(format!("{f} (as changed on the command line): {m}"))
    })?;
    Ok((d, http))
}

/// `[soak]` with the command line's changes: every change applied first, then what they leave
/// to derive computed once from the final figures. A soak shortened by `--duration` moves its
/// fit window with it unless `--window-start` says where it starts (30 s in, or a sixth of the
/// soak when longer); a changed duration or window start shrinks the minima windows to fit at
/// least five, unless `--minima-window` sets them.
fn overridden(c: &SoakConfig, o: &SoakOverrides) -> SoakConfig {
    let mut d = c.clone();
    if let Some(v) = o.duration_s {
        d.duration_s = v;
    }
    if let Some(v) = o.window_start_s {
        d.window_start_s = v;
    }
    if let Some(v) = o.interval_s {
        d.interval_s = v;
    }
    if let Some(v) = o.minima_window_s {
        d.minima_window_s = v;
    }
    if let Some(v) = o.rate {
        d.rate = v.max(1);
    }
    if let Some(v) = o.keep_alive {
        d.keep_alive = v;
    }
    if o.duration_s.is_some()
        && o.window_start_s.is_none()
        && d.window_start_s >= d.duration_s / 2.0
    {
        d.window_start_s = (d.duration_s / 6.0).max(30.0).min(d.duration_s / 2.0);
    }
    let span = d.duration_s - d.window_start_s;
    // A window that does not fit is the window start's error, reported as such.
    if (o.duration_s.is_some() || o.window_start_s.is_some())
        && o.minima_window_s.is_none()
        && span > 0.0
    {
        d.minima_window_s = d.minima_window_s.min(span / 5.0);
    }
    d
}

/// Soaks `servers` at the same time (each with its own load generator; the rate is fixed, so
/// they do not compete for throughput) and returns one job result per server (`soak-<server>`).
pub fn run_soak(
    plan: &Plan,
    cell_label: &str,
    servers: &[ServerName],
    opts: &SoakOptions,
    on: &mut dyn FnMut(String),
) -> Result<Vec<SoakJobResult>, SuiteError> {
    let total = Instant::now();
    let started_at = cell_schema::time::format_utc(cell_schema::time::now_secs());
    let (d, http) = def(plan, &opts.overrides)?;
    let cell = plan.cell(cell_label)?;
    let lg = find_generator(cell_model::soak_tool().name)?;
    let cpus = Cpus::choose(http.cpus.as_ref())?;
    let machine = crate::facts::machine(cpus.server.first());
    let mut built = build_all(plan, &http, servers, &opts.work, on)?;
    let measure_t = Instant::now();
    let concurrent = u32::try_from(built.ready.len()).unwrap_or(u32::MAX);
    on(format!(
        "[soak] {} server(s) at {} req/s for {} s, sampled every {} s",
        built.ready.len(),
        d.config.rate,
        d.config.duration_s,
        d.config.interval_s
    ));
    let outcomes = soak_all(&d, &http, &built.ready, &lg, cpus);
    let measure_s = measure_t.elapsed().as_secs_f64();
    for (name, outcome) in outcomes {
        let r = built
            .results
            .get_mut(&name)
            .expect("every soaked server has a result");
        match outcome {
            Ok(s) => record(r, s, &d.config, &name, on),
            Err(RunError::Tool(m)) => return Err(SuiteError::Load(m)),
            Err(RunError::Server(m)) => {
                on(format!("[soak {name}] FAILED: {m}"));
                r.error = Some(m);
            }
        }
    }
    let setup_s =
        (total.elapsed().as_secs_f64() - measure_s - built.build_s.values().sum::<f64>()).max(0.0);
    let settings = SoakSettings {
        config: d.config.clone(),
        concurrent,
        server_cpus: cpus.server.to_vec(),
        load_cpus: cpus.load.to_vec(),
    };
    let n = built.results.len().max(1) as f64;
    let mut jobs = Vec::new();
    for (name, r) in std::mem::take(&mut built.results) {
        let server = &http.servers[&name];
        // Each server's own build; the soak ran every server at once, so each took all of it.
        let b = built.build_s.get(&name).copied().unwrap_or(0.0);
        let cost = SuiteCost {
            build_s: round_time(b),
            measure_s: round_time(measure_s),
            total_s: round_time(b + measure_s + setup_s / n),
        };
        let mut v = built.versions.remove(&name).unwrap_or_default();
        v.insert(ToolName::from(lg.tool.name()), lg.version.clone());
        jobs.push(SoakJobResult {
            schema_version: SCHEMA_VERSION,
            kind: SoakKind::Soak,
            job: format!("soak-{name}"),
            cell: cell.info(),
            machine: machine.clone(),
            pins: suite_pins(plan, &[server]),
            versions: v,
            settings: settings.clone(),
            verdict: cell_verdict::soak_verdict(&name, &r, &d.config),
            servers: BTreeMap::from([(name, r)]),
            cost,
            started_at: started_at.clone(),
            github: crate::job::github_context(),
        });
    }
    Ok(jobs)
}

/// The soaked servers after their builds.
struct Built {
    results: BTreeMap<ServerName, SoakServerResult>,
    ready: Vec<Prepared>,
    build_s: BTreeMap<ServerName, f64>,
    versions: BTreeMap<ServerName, BTreeMap<ToolName, cell_schema::ToolVersion>>,
}

fn build_all(
    plan: &Plan,
    http: &HttpDef,
    servers: &[ServerName],
    work: &std::path::Path,
    on: &mut dyn FnMut(String),
) -> Result<Built, SuiteError> {
    let mut built = Built {
        results: BTreeMap::new(),
        ready: Vec::new(),
        build_s: BTreeMap::new(),
        versions: BTreeMap::new(),
    };
    for name in servers {
        let s = http.server(name.as_str())?;
        let probed = probe_server(plan, s)?;
        built.versions.insert(name.clone(), probed.versions.clone());
        let mut r = empty(s.toolchain.clone());
        on(format!("[soak {name}] building"));
        let build_t = Instant::now();
        let b = build_server(plan, s, probed, &work.join(name.as_str()));
        built
            .build_s
            .insert(name.clone(), build_t.elapsed().as_secs_f64());
        match b {
            Ok(p) => {
                r.build = Some(p.build.clone());
                built.ready.push(p);
            }
            Err(e) => r.error = Some(e.to_string()),
        }
        built.results.insert(name.clone(), r);
    }
    Ok(built)
}

/// Every ready server soaked at once, each on its own thread with its own load generator.
fn soak_all(
    d: &SoakDef,
    http: &HttpDef,
    ready: &[Prepared],
    lg: &Generator,
    cpus: Cpus,
) -> Vec<(ServerName, Result<Soaked, RunError>)> {
    std::thread::scope(|scope| {
        let handles: Vec<_> = ready
            .iter()
            .map(|p| {
                (
                    p.server.name.clone(),
                    scope.spawn(move || soak_one(d, http, p, lg, cpus)),
                )
            })
            .collect();
        handles
            .into_iter()
            .map(|(n, h)| {
                (
                    n,
                    h.join().unwrap_or_else(|_| {
                        Err(RunError::Server("the soak thread panicked".into()))
                    }),
                )
            })
            .collect()
    })
}

/// A soaked server's samples, fits and drift into its result.
fn record(
    r: &mut SoakServerResult,
    s: Soaked,
    c: &SoakConfig,
    name: &ServerName,
    on: &mut dyn FnMut(String),
) {
    r.startup_s = Some(round_time(s.startup_s));
    let f = cell_verdict::suite_figures::soak(&s.samples, c, s.load.as_ref().map(|l| l.requests));
    r.peak_rss_kib = f.peak_rss_kib;
    r.cpu_ms_per_1k = f.cpu_ms_per_1k;
    r.fit = f.fit;
    r.fit_minima = f.fit_minima;
    r.verdict = f.verdict;
    r.samples = s.samples;
    r.load = s.load;
    r.error = s.error;
    on(format!("[soak {name}] {:?}", r.verdict));
}

fn empty(toolchain: cell_schema::ToolchainName) -> SoakServerResult {
    SoakServerResult {
        toolchain,
        build: None,
        startup_s: None,
        load: None,
        samples: Vec::new(),
        fit: None,
        fit_minima: None,
        verdict: Drift::Unknown,
        peak_rss_kib: 0,
        cpu_ms_per_1k: None,
        error: None,
    }
}

struct Soaked {
    startup_s: f64,
    samples: Vec<SoakSample>,
    load: Option<cell_schema::LoadReport>,
    error: Option<String>,
}

/// One server: fresh start, the response check, then the fixed-rate load with a sampler.
fn soak_one(
    d: &SoakDef,
    http: &HttpDef,
    p: &Prepared,
    lg: &Generator,
    cpus: Cpus,
) -> Result<Soaked, RunError> {
    let (running, startup_s) =
        p.start(cpus.server, Duration::from_secs_f64(http.startup_timeout_s))?;
    let Some((w, expect)) = super::session::default_workload(http, &p.server) else {
        running.stop(Duration::from_secs_f64(http.stop_grace_s));
        return Err(RunError::Server("it serves no workload".into()));
    };
    if let Err(m) = super::check::verify(
        p.server.port,
        w,
        expect,
        p.server.keep_alive,
        Duration::from_secs(5),
    ) {
        running.stop(Duration::from_secs_f64(http.stop_grace_s));
        return Err(RunError::Server(m.to_string()));
    }
    let url = format!("http://127.0.0.1:{}{}", p.server.port, w.path);
    let request = match super::session::load_request(w) {
        Ok(r) => r,
        Err(e) => {
            running.stop(Duration::from_secs_f64(http.stop_grace_s));
            return Err(RunError::Tool(e.to_string()));
        }
    };
    let spec = LoadSpec {
        url: &url,
        connections: d.config.connections,
        threads: 1,
        duration: Duration::from_secs_f64(d.config.duration_s),
        keep_alive: d.config.keep_alive,
        rate: Some(d.config.rate),
        timeout: Duration::from_secs(5),
        request: &request,
    };
    let scratch = p.work.join("soak");
    std::fs::create_dir_all(&scratch)
        .map_err(|e| format!("creating {}: {e}", scratch.display()))?;
    let pid = running.pid();
    let stop = Arc::new(AtomicBool::new(false));
    let interval = Duration::from_secs_f64(d.config.interval_s);
    // Bounded: the sampler stops with the load, or at the duration plus a minute.
    let limit = Duration::from_secs_f64(d.config.duration_s + 60.0);
    let (samples, load) = std::thread::scope(|scope| {
        let stop2 = stop.clone();
        let sampler = scope.spawn(move || sample_loop(pid, interval, limit, &stop2));
        let load = run_load(lg, &spec, cpus.load, &scratch);
        stop.store(true, Ordering::Relaxed);
        (sampler.join().unwrap_or_default(), load)
    });
    let mut running = running;
    // A server that died or stopped answering is its own failure, the samples kept; a load
    // generator that failed against a healthy server is not the server's.
    let error = match (running.alive(), &load) {
        (Err(e), _) => Some(format!("{e} during the soak")),
        (Ok(()), Err(m)) => match blame(&mut running, p, (w, expect), "the soak", m) {
            RunError::Tool(m) => return Err(RunError::Tool(m)),
            RunError::Server(m) => Some(m),
        },
        (Ok(()), Ok(_)) => None,
    };
    running.stop(Duration::from_secs_f64(http.stop_grace_s));
    Ok(Soaked {
        startup_s,
        samples,
        load: load.ok().map(|l| l.report),
        error,
    })
}

fn sample_loop(
    pid: i32,
    interval: Duration,
    limit: Duration,
    stop: &AtomicBool,
) -> Vec<SoakSample> {
    let t0 = Instant::now();
    let mut out = Vec::new();
    let mut next = t0;
    while !stop.load(Ordering::Relaxed) && t0.elapsed() < limit {
        let Ok(s) = procfs::sample_tree(pid) else {
            break;
        };
        out.push(SoakSample {
            t_s: round_time(t0.elapsed().as_secs_f64()),
            rss_kib: s.rss_kib,
            cpu_s: round_time(s.cpu_s),
            threads: s.threads,
            fds: s.fds,
        });
        next += interval;
        // Sleep in short steps so the end of the load is seen promptly.
        while Instant::now() < next && !stop.load(Ordering::Relaxed) {
            std::thread::sleep(Duration::from_millis(20).min(interval));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn def() -> SoakConfig {
        SoakConfig {
            rate: 200,
            connections: 4,
            duration_s: 180.0,
            interval_s: 1.0,
            window_start_s: 30.0,
            minima_window_s: 15.0,
            drift_share: 0.05,
            min_r2: 0.5,
            fail_on_drift: true,
            keep_alive: true,
        }
    }

    /// `[soak]` as its defaults are: an hour, the fit from 10 minutes, minima every minute.
    fn configured() -> SoakConfig {
        SoakConfig {
            duration_s: 3600.0,
            window_start_s: 600.0,
            minima_window_s: 60.0,
            ..def()
        }
    }

    fn changed(
        duration: Option<f64>,
        window_start: Option<f64>,
        minima: Option<f64>,
    ) -> SoakConfig {
        let o = SoakOverrides {
            duration_s: duration,
            window_start_s: window_start,
            minima_window_s: minima,
            ..SoakOverrides::default()
        };
        overridden(&configured(), &o)
    }

    /// Regression: `--duration 90 --window-start 30` was refused with "`soak.minima_window`:
    /// -102", the minima window shrunk against the config's window start (600 s) before the
    /// command line's (30 s) replaced it.
    #[test]
    #[expect(
        clippy::float_cmp,
        reason = "the figures are assigned or exact quotients, not measured"
    )]
    fn every_override_is_applied_before_the_derived_windows_are_computed() {
        // (duration, window start, minima window) asked → (window start, minima window) run.
        let cases = [
            // The bug: the fit from 30 s leaves 60 s, five minima windows of 12 s.
            ((Some(90.0), Some(30.0), None), (30.0, 12.0)),
            // The docs' example: 480 s of fit window, the configured minute fits.
            ((Some(600.0), Some(120.0), None), (120.0, 60.0)),
            // A shortened soak moves its window: 30 s in, or a sixth when that is longer.
            ((Some(90.0), None, None), (30.0, 12.0)),
            ((Some(1200.0), None, None), (200.0, 60.0)),
            // The config's window start still fits (before half the soak): kept.
            ((Some(1500.0), None, None), (600.0, 60.0)),
            ((Some(1400.0), None, None), (600.0, 60.0)),
            ((Some(1000.0), Some(700.0), None), (700.0, 60.0)),
            // Less than five minutes of fit window: five minima windows in it.
            ((Some(1000.0), Some(800.0), None), (800.0, 40.0)),
            // Only the window start changed: the minima fit what is left.
            ((None, Some(3400.0), None), (3400.0, 40.0)),
            // A minima window asked for is kept as asked.
            ((Some(90.0), Some(30.0), Some(20.0)), (30.0, 20.0)),
            // Nothing asked: the config as written.
            ((None, None, None), (600.0, 60.0)),
        ];
        for ((duration, start, minima), want) in cases {
            let c = changed(duration, start, minima);
            assert_eq!(
                (c.window_start_s, c.minima_window_s),
                want,
                "--duration {duration:?} --window-start {start:?} --minima-window {minima:?}"
            );
            assert_eq!(c.duration_s, duration.unwrap_or(3600.0));
            let d = SoakDef {
                servers: Vec::new(),
                config: c,
            };
            d.validate().unwrap_or_else(|e| {
                panic!("--duration {duration:?} --window-start {start:?}: {e}")
            });
        }
    }

    #[test]
    fn no_keep_alive_on_the_command_line_turns_a_kept_alive_soak_into_churn() {
        let o = SoakOverrides {
            keep_alive: Some(false),
            ..SoakOverrides::default()
        };
        assert!(configured().keep_alive);
        assert!(!overridden(&configured(), &o).keep_alive);
        assert!(overridden(&configured(), &SoakOverrides::default()).keep_alive);
    }

    #[test]
    fn a_window_start_past_the_soak_is_refused_for_itself_not_for_the_minima() {
        let d = SoakDef {
            servers: Vec::new(),
            config: changed(Some(60.0), Some(90.0), None),
        };
        let e = d.validate().unwrap_err();
        assert_eq!(e.field, "soak.window_start", "{e}");
    }
}
