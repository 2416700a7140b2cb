//! The http and soak suites from the command line: `cell run --suite` and `cell local --suite`.

use std::path::Path;

use anyhow::Context as _;
use cell_collect::JobInput;
use cell_model::{CpuSets, Plan};
use cell_run::suites::http::{HttpOptions, HttpOverrides};
use cell_run::suites::soak::{SoakOptions, SoakOverrides};
use cell_schema::{AnyJob, MissingJob, ServerName, Status, ToolchainName};

use crate::cli::{Cli, Format, LocalArgs, RunArgs, Suite, SuiteFlags};
use crate::exit::Exit;

/// `--server-cpus` and `--load-cpus`: both or neither, checked as `[http] cpus` is.
fn cpu_overrides(f: &SuiteFlags) -> anyhow::Result<Option<CpuSets>> {
    let given = |v: &Vec<u32>| (!v.is_empty()).then(|| v.clone());
    CpuSets::new(
        ["--server-cpus", "--load-cpus"],
        given(&f.server_cpus),
        given(&f.load_cpus),
    )
    .map_err(anyhow::Error::msg)
}

fn http_overrides(f: &SuiteFlags) -> anyhow::Result<HttpOverrides> {
    let list = |v: &Vec<String>| (!v.is_empty()).then(|| v.clone());
    Ok(HttpOverrides {
        full: f.full,
        mode: f.mode,
        runs: f.runs,
        duration_s: f.duration,
        warmup_s: f.warmup,
        tools: list(&f.tools),
        workloads: list(&f.workloads),
        shapes: list(&f.shapes),
        connections: f.connections,
        threads: f.threads,
        cpus: cpu_overrides(f)?,
    })
}

fn soak_overrides(f: &SuiteFlags) -> anyhow::Result<SoakOverrides> {
    Ok(SoakOverrides {
        duration_s: f.duration,
        window_start_s: f.window_start,
        interval_s: f.interval,
        minima_window_s: f.minima_window,
        rate: f.rate,
        keep_alive: f.no_keep_alive.then_some(false),
        cpus: cpu_overrides(f)?,
    })
}

fn progress(cli: &Cli) -> impl FnMut(String) + '_ {
    move |line| {
        if !cli.quiet {
            eprintln!("{}", cell_schema::escape::terminal(&line));
        }
    }
}

/// One session of a suite.
pub struct Session<'a> {
    /// http or soak.
    pub suite: Suite,
    /// The cell label.
    pub cell: &'a str,
    /// Servers, in one session.
    pub servers: &'a [ServerName],
    /// Changes to the config.
    pub flags: &'a SuiteFlags,
    /// Scratch root.
    pub work: &'a Path,
    /// Seed of the interleaving.
    pub seed: u64,
}

/// Runs a session; every job written under `dir_of(job name)`.
pub fn run_suite(
    plan: &Plan,
    cli: &Cli,
    s: &Session<'_>,
    dir_of: &dyn Fn(&str) -> std::path::PathBuf,
) -> anyhow::Result<Vec<AnyJob>> {
    let Session {
        suite,
        cell,
        servers,
        flags,
        work,
        seed,
    } = *s;
    let mut on = progress(cli);
    let mut out = Vec::new();
    match suite {
        Suite::Http => {
            let opts = HttpOptions {
                work: work.to_owned(),
                seed,
                overrides: http_overrides(flags)?,
                // Made only when a server is built by the release under test: it installs there.
                cache: servers
                    .iter()
                    .filter_map(|n| plan.http.as_ref()?.servers.get(n))
                    .any(|s| cell_model::built_by_release(plan, s))
                    .then(cell_run::cache::Cache::from_env)
                    .transpose()?,
            };
            for job in cell_run::suites::http::run_http(plan, cell, servers, &opts, &mut on)? {
                let dir = dir_of(&job.job);
                let job = AnyJob::from(job);
                super::write_job(&dir, &job)?;
                out.push(job);
            }
        }
        Suite::Soak => {
            let opts = SoakOptions {
                work: work.to_owned(),
                overrides: soak_overrides(flags)?,
            };
            for job in cell_run::suites::soak::run_soak(plan, cell, servers, &opts, &mut on)? {
                let dir = dir_of(&job.job);
                let job = AnyJob::from(job);
                super::write_job(&dir, &job)?;
                out.push(job);
            }
        }
        Suite::Workload => unreachable!("the workload suite has its own path"),
    }
    Ok(out)
}

/// Terminal text of suite jobs.
pub fn text(jobs: &[AnyJob]) -> String {
    jobs.iter().map(cell_report::any_job_text).collect()
}

/// `cell run --suite http|soak --server NAME`: one job into `--out`.
pub fn run(args: &RunArgs, cli: &Cli) -> anyhow::Result<Exit> {
    let plan = super::load_plan(cli)?;
    let server = ServerName::from(args.server.as_deref().unwrap_or_default());
    let work = args.out.join("work");
    let session = Session {
        suite: args.suite,
        cell: &args.cell,
        servers: std::slice::from_ref(&server),
        flags: &args.suite_flags,
        work: &work,
        seed: args.seed.unwrap_or_else(crate::clock::clock_seed),
    };
    let jobs = run_suite(&plan, cli, &session, &|_| args.out.clone()).with_context(|| {
        format!("cell run --suite {:?} --server {server}", args.suite).to_lowercase()
    })?;
    match cli.format {
        Format::Json => {
            for j in &jobs {
                print!("{}", cell_schema::to_json(j));
            }
        }
        Format::Human => print!("{}", cell_schema::escape::terminal(&text(&jobs))),
    }
    if !cli.quiet {
        eprintln!(
            "wrote {}",
            std::path::absolute(&args.out)
                .unwrap_or_else(|_| args.out.clone())
                .display()
        );
    }
    Ok(
        if jobs.iter().any(|j| j.verdict().status == Status::Failed) {
            Exit::Gate
        } else {
            Exit::Ok
        },
    )
}

/// The servers `cell local` runs: those asked for (all by default) whose toolchain is here;
/// the others listed as missing jobs.
pub fn local_servers(
    plan: &Plan,
    suite: Suite,
    asked: &[String],
    full: bool,
    cli: &Cli,
) -> anyhow::Result<(Vec<ServerName>, Vec<MissingJob>)> {
    let http = plan
        .http
        .as_ref()
        .context("cell/cell.toml has no [http] table: the http and soak suites have no servers")?;
    let pool: Vec<ServerName> = match (suite, &plan.soak) {
        (Suite::Soak, Some(s)) => s.servers.clone(),
        (Suite::Soak, None) => anyhow::bail!("cell/cell.toml has no [soak] table"),
        _ => plan.http_default_servers(full),
    };
    let names: Vec<ServerName> = if asked.is_empty() {
        pool
    } else {
        asked.iter().map(|s| ServerName::from(s.as_str())).collect()
    };
    let prefix = if suite == Suite::Soak { "soak" } else { "http" };
    let mut run = Vec::new();
    let mut missing = Vec::new();
    for n in names {
        let server = http.server(n.as_str()).map_err(anyhow::Error::msg)?;
        // Its toolchain is the release under test: installed and verified in the session.
        if suite == Suite::Http && cell_model::built_by_release(plan, server) {
            run.push(n);
            continue;
        }
        match cell_run::suites::session::probe_server(plan, server) {
            Ok(_) => run.push(n),
            Err(m) => {
                if !cli.quiet {
                    eprintln!("[{prefix} {n}] {m}");
                }
                missing.push(MissingJob {
                    toolchain: ToolchainName::from(format!("{prefix}-{n}").as_str()),
                    conclusion: m.to_string(),
                });
            }
        }
    }
    Ok((run, missing))
}

/// `cell local --suite http|soak`: every installable server in one session, each job written
/// where a workflow's artifact would put it; the merge's inputs and the servers left out.
pub fn local(
    plan: &Plan,
    args: &LocalArgs,
    cli: &Cli,
    jobs_dir: &Path,
    seed: u64,
) -> anyhow::Result<(Vec<JobInput>, Vec<MissingJob>)> {
    let (servers, missing) =
        local_servers(plan, args.suite, &args.servers, args.suite_flags.full, cli)?;
    if servers.is_empty() {
        anyhow::bail!(
            "no server of the {} suite can run here: {}",
            format!("{:?}", args.suite).to_lowercase(),
            missing
                .iter()
                .map(|m| m.conclusion.clone())
                .collect::<Vec<_>>()
                .join("; ")
        );
    }
    let cell_id = cell_model::Cell::local().id();
    let session = Session {
        suite: args.suite,
        cell: cell_model::LOCAL_LABEL,
        servers: &servers,
        flags: &args.suite_flags,
        work: &jobs_dir.join("work"),
        seed,
    };
    let jobs = run_suite(plan, cli, &session, &|job| {
        jobs_dir.join(cell_schema::store::job_artifact(cell_id.as_str(), job, "1"))
    })?;
    if !cli.quiet && cli.format == Format::Human {
        print!("{}", cell_schema::escape::terminal(&text(&jobs)));
    }
    let inputs = jobs
        .into_iter()
        .map(|result| JobInput { result, attempt: 1 })
        .collect();
    Ok((inputs, missing))
}
