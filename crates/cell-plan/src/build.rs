//! The resolved [`Plan`] → the typed [`Workflow`] of `.github/workflows/cell.yml` (docs/workflow.md).
//!
//! Jobs: `plan` (checks this file is current, turns the run's inputs into matrices), one matrix
//! job per toolchain with rows (`run-<toolchain>`), one per server of `[http]` (`http-<server>`)
//! and of `[soak]` (`soak-<server>`, on schedule and by hand only), each split into parts past
//! 256 cells, and `collect` (downloads every job's artifact, commits `results/`, gates). Values
//! reach scripts only through `env:`; no `run:` holds an expression.

use std::collections::BTreeSet;
use std::path::PathBuf;

use cell_model::{Cell, HttpDef, Install, LOAD_TOOLS, LoadInstall, LoadToolDef, Plan, Toolchain};
use cell_schema::ServerName;
use cell_schema::store::{FACTS_JSON, RESULTS_JSON, RESULTS_MD};

use crate::PlanError;
use crate::getter::{self, Getter};
use crate::layout::{Layout, MatrixJob, Suite};
use crate::pins::{self, CACHE, RUST_TOOLCHAIN, UPLOAD_ARTIFACT};
use crate::side;
use crate::workflow::{
    Cron, Defaults, Filters, Input, InputType, Job, Level, Map, Matrix, On, Permissions,
    RunDefaults, RunsOn, Scope, Step, Strategy, Workflow, WorkflowDispatch, expr,
};

/// Where `plan` and `collect` run: a hosted runner, whatever the cells are.
pub const HOST_RUNNER: &str = "ubuntu-24.04";
/// Minutes a matrix job may take besides `TIME_CAP_S`: building cell cold, installing, building
/// the rows.
const RUN_JOB_BASE_MINUTES: u32 = 45;
/// Minutes a soak job may take besides the soak itself: building cell, the server and oha.
const SOAK_JOB_EXTRA_MINUTES: u32 = 60;
/// The events a soak job runs on (an hour per server is too much for every push).
const SOAK_EVENTS: &str =
    "(github.event_name == 'schedule' || github.event_name == 'workflow_dispatch')";
/// Where a suite job keeps the load generators it builds (under the home directory,
/// `/<name>-<version>` appended), cached.
const LOAD_TOOL_CACHE: &str = ".cache/cell";
/// The directory `cell run` writes in a job, and the files uploaded from it.
const JOB_DIR: &str = "job";
const JOB_FILES: [&str; 3] = [RESULTS_JSON, FACTS_JSON, RESULTS_MD];
/// `apt-get update` at most once a job, however many apt installs it has: the first leaves a
/// mark in the runner's temp directory (emptied between jobs).
const APT_UPDATE_ONCE: &str = "if [ ! -e \"$RUNNER_TEMP/cell-apt-updated\" ]; then sudo apt-get update -q && touch \"$RUNNER_TEMP/cell-apt-updated\"; fi";

pub(crate) struct Ctx<'a> {
    plan: &'a Plan,
    /// How every job gets cell.
    getter: Getter,
    toml: PathBuf,
    /// The `reps` a workload job passes to `cell run`: the dispatch input, or none (a pull
    /// request's run has no inputs).
    reps: String,
}

impl<'a> Ctx<'a> {
    /// The jobs of `plan` getting cell through `getter`; `dispatch`: the run has the inputs
    /// of `workflow_dispatch`.
    pub(crate) fn new(plan: &'a Plan, getter: Getter, dispatch: bool) -> Self {
        Ctx {
            plan,
            getter,
            toml: plan.root.join(cell_model::CELL_TOML),
            reps: if dispatch {
                expr("inputs.reps")
            } else {
                String::new()
            },
        }
    }
}

/// Builds the workflow.
pub fn workflow(plan: &Plan, layout: &Layout) -> Result<Workflow, PlanError> {
    let mut jobs = Map::new();
    let getter = getter::of(plan, &mut jobs)?;
    let ctx = Ctx::new(plan, getter, true);
    jobs.insert("plan", side::plan_job(layout, &ctx.getter));
    for job in &layout.jobs {
        let built = match job.suite {
            Suite::Workload => run_job(&ctx, job)?,
            Suite::Http(_) | Suite::Soak(_) => suite_job(&ctx, job)?,
        };
        jobs.insert(job.id.clone(), built);
    }
    jobs.insert("collect", side::collect_job(plan, layout, &ctx.getter));

    let wf = Workflow {
        name: "cell".into(),
        on: triggers(plan),
        permissions: Permissions::of([(Scope::Contents, Level::Read)]),
        concurrency: None,
        defaults: Some(Defaults {
            run: RunDefaults {
                shell: "bash".into(),
            },
        }),
        jobs,
    };
    for (id, job) in wf.jobs.iter() {
        for step in &job.steps {
            if step.run.as_deref().is_some_and(|r| r.contains("${{")) {
                return Err(PlanError::Render(format!(
                    "job `{id}`, step `{}`: an expression inside run (pass it through env)",
                    step.name
                )));
            }
        }
    }
    Ok(wf)
}

fn triggers(plan: &Plan) -> On {
    let input = |description: &str| Input {
        description: description.to_owned(),
        required: false,
        kind: InputType::String,
        default: Some(String::new()),
    };
    let inputs = Map::new()
        .with(
            "cells",
            input("Cells to run: labels from cell/cell.toml, comma-separated (empty: all)"),
        )
        .with(
            "toolchains",
            input(if plan.http.is_some() {
                "Jobs to run per cell: toolchain names from cell/cell.toml, or http-<server> and soak-<server> for the suite jobs, comma-separated (empty: all, suites too; soak jobs run on schedule and by hand only)"
            } else {
                "Toolchains to run: names from cell/cell.toml, comma-separated (empty: all)"
            }),
        )
        .with(
            "reps",
            input("Measured rounds per job (empty: the adaptive budget of versions.env)"),
        )
        .with(
            "subject",
            input(
                "Version of the release under test (the toolchains installed from a tarball) this run must install (empty: as pinned in versions.env; another version fails in the plan job)",
            ),
        );
    let w = &plan.workflow;
    On {
        workflow_dispatch: Some(WorkflowDispatch { inputs }),
        schedule: w
            .schedule
            .iter()
            .map(|c| Cron { cron: c.clone() })
            .collect(),
        push: (!w.paths.is_empty()).then(|| Filters {
            branches: w.branches.clone(),
            paths: w.paths.clone(),
            ..Filters::default()
        }),
        pull_request: None,
        workflow_run: None,
    }
}

/// `cell-<cell-id>-<name>-a<attempt>`: the artifact of a job, and the folder its files sit in.
fn artifact_name(job: &MatrixJob) -> String {
    cell_schema::store::job_artifact(
        &expr("matrix.cell-id"),
        &job.name(),
        &expr("env.CELL_ATTEMPT"),
    )
}

/// The steps every matrix job ends with, both `if: always()` so a job whose gate tripped still
/// reports: RESULTS.md into the step summary, and the upload of the job's files.
fn report_steps(artifact: String) -> Vec<Step> {
    let summary = Step::run(
        "add RESULTS.md to the step summary",
        &[&format!(
            "for f in {JOB_DIR}/*/RESULTS.md; do if [ -f \"$f\" ]; then cat \"$f\" >> \"$GITHUB_STEP_SUMMARY\"; fi; done"
        )],
    )
    .when("always()");
    // The job dir sits in a folder named like the artifact, so the files keep that folder in
    // the artifact and `download-artifact` with merge-multiple cannot overwrite one job's
    // results.json with another's.
    let paths: Vec<String> = JOB_FILES
        .iter()
        .map(|f| format!("{JOB_DIR}/*/{f}"))
        .collect();
    let upload = Step::uses("upload the job result", UPLOAD_ARTIFACT)
        .when("always()")
        .input("name", artifact)
        .input("path", paths.join("\n"));
    vec![summary, upload]
}

/// A matrix job over the `plan` output named like it; `only` narrows when it runs. It needs
/// the build job of every platform its cells are on.
fn matrix_job(
    job: &MatrixJob,
    cells: &[&Cell],
    only: Option<&str>,
    getter: &Getter,
    timeout_minutes: u32,
    steps: Vec<Step>,
) -> Job {
    // `!cancelled()` and plan's success instead of the implied `success()`: a failed build of
    // another platform must not skip this job's cells; a job whose own platform's build
    // failed fails at the download, and collect lists it.
    let selected = format!(
        "!cancelled() && needs.plan.result == 'success' && needs.plan.outputs.{} != ''",
        job.id
    );
    let mut needs = vec!["plan".to_owned()];
    needs.extend(getter.needs(&platforms_of(cells)));
    Job {
        // `cell collect` finds the jobs that left no artifact by this name:
        // `cell <cell-id> <name>`.
        name: format!("cell {} {}", expr("matrix.cell-id"), job.name()),
        needs,
        cond: Some(match only {
            Some(c) => format!("{c} && {selected}"),
            None => selected,
        }),
        runs_on: RunsOn::Label(expr("matrix.runs-on")),
        permissions: None,
        concurrency: None,
        timeout_minutes,
        strategy: Some(Strategy {
            fail_fast: false,
            matrix: Matrix::FromJson(format!("needs.plan.outputs.{}", job.id)),
        }),
        env: Map::new().with("CELL_ATTEMPT", expr("github.run_attempt")),
        outputs: Map::new(),
        steps,
    }
}

/// `<os>-<arch>` of each of `cells`, once each, in order.
fn platforms_of(cells: &[&Cell]) -> Vec<String> {
    let set: BTreeSet<String> = cells
        .iter()
        .map(|c| format!("{}-{}", c.os, c.arch))
        .collect();
    set.into_iter().collect()
}

/// The steps every matrix job starts with: check out, then cell as built for this run.
fn job_prelude(getter: &Getter, cells: &[&Cell]) -> Vec<Step> {
    let mut steps = vec![side::checkout()];
    steps.extend(getter.steps(&platforms_of(cells)));
    steps
}

fn job_cells<'a>(plan: &'a Plan, job: &MatrixJob) -> Vec<&'a Cell> {
    job.cells.iter().map(|l| &plan.cells[l]).collect()
}

pub(crate) fn run_job(ctx: &Ctx, job: &MatrixJob) -> Result<Job, PlanError> {
    let plan = ctx.plan;
    let tc = &plan.toolchains[&job.toolchain];
    let cells = job_cells(plan, job);
    let mut steps = job_prelude(&ctx.getter, &cells);
    // The subject's job reads the baseline commit's pins to time the previous release beside
    // the new one (`git archive <commit>`), which a shallow checkout does not hold.
    if tc.subject
        && tc.name != plan.reference_toolchain().name
        && plan.workflow.results_branch.is_none()
    {
        steps[0] = side::checkout().input("fetch-depth", "0");
    }
    steps.extend(install_steps(ctx, tc, &cells, None)?);
    let reference = plan.reference_toolchain();
    if reference.name != tc.name {
        steps.extend(install_steps(
            ctx,
            reference,
            &cells,
            Some("the reference compiler"),
        )?);
    }
    // Every job verifies and records the release under test, whatever it times.
    if let Some(subject) = plan.subject()
        && subject.name != tc.name
        && subject.name != reference.name
    {
        steps.extend(install_steps(
            ctx,
            subject,
            &cells,
            Some("the release under test"),
        )?);
    }
    steps.extend(valgrind_step(plan, &cells));
    let artifact = artifact_name(job);
    steps.push(
        Step::run(
            format!("time {} against the reference", tc.name),
            &[
                "set --",
                "if [ -n \"$REPS\" ]; then set -- --reps \"$REPS\"; fi",
                &format!(
                    "cell run --cell \"$CELL\" --toolchain \"$TOOLCHAIN\" --out \"{JOB_DIR}/$ARTIFACT\" \"$@\""
                ),
            ],
        )
        .env("ARTIFACT", artifact.clone())
        .env("CELL", expr("matrix.cell"))
        .env("TOOLCHAIN", tc.name.to_string())
        .env("REPS", ctx.reps.clone()),
    );
    steps.extend(report_steps(artifact));
    let cap_minutes = (plan.settings.time_cap_s / 60.0).ceil() as u32;
    // The exact lane runs after timing, under its own cap.
    let lane_minutes = if exact_lane_runs(plan, &cells) {
        (plan.settings.exact.time_cap_s / 60.0).ceil() as u32
    } else {
        0
    };
    let cap_minutes = cap_minutes + lane_minutes;
    Ok(matrix_job(
        job,
        &cells,
        None,
        &ctx.getter,
        RUN_JOB_BASE_MINUTES + cap_minutes,
        steps,
    ))
}

/// The job of one server in the http or soak suite: its own runner, never a toolchain's
/// workload job. It installs the server's toolchain as that toolchain's workload job does, the
/// load generators the suite drives, and runs `cell run --suite <suite> --server <server>`.
fn suite_job(ctx: &Ctx, job: &MatrixJob) -> Result<Job, PlanError> {
    let plan = ctx.plan;
    let (Some(http), Some(server)) = (&plan.http, job.suite.server()) else {
        unreachable!("a suite job comes from [http] and has a server");
    };
    let tc = &plan.toolchains[&job.toolchain];
    let cells = job_cells(plan, job);
    let mut steps = job_prelude(&ctx.getter, &cells);
    steps.extend(install_steps(ctx, tc, &cells, None)?);
    let (tools, run_name, only, minutes) = match &job.suite {
        Suite::Soak(_) => {
            let soak = plan.soak.as_ref().expect("a soak job comes from [soak]");
            let minutes = (soak.config.duration_s / 60.0).ceil() as u32;
            (
                vec![cell_model::soak_tool().name.to_owned()],
                format!(
                    "soak server {server} at {} req/s for {minutes} min",
                    soak.config.rate
                ),
                // An hour per server is too much for every push: schedule and by hand only.
                Some(SOAK_EVENTS),
                minutes + SOAK_JOB_EXTRA_MINUTES,
            )
        }
        Suite::Http(_) => {
            // What `cell run` measures without `--full`: `[http.default]`.
            let session = http.session(false, None);
            let (tools, minutes) = http_job_minutes(&session, server);
            (
                tools.clone(),
                format!("load server {server} with {}", tools.join(" and ")),
                None,
                minutes,
            )
        }
        Suite::Workload => unreachable!("a workload job is built by run_job"),
    };
    let wanted: Vec<&LoadToolDef> = LOAD_TOOLS
        .iter()
        .filter(|t| tools.iter().any(|n| n == t.name))
        .collect();
    steps.extend(load_generator_steps(ctx, http, &wanted, &cells)?);
    let artifact = artifact_name(job);
    steps.push(
        Step::run(
            run_name,
            &[&format!(
                "cell run --suite {} --cell \"$CELL\" --server \"$SERVER\" --out \"{JOB_DIR}/$ARTIFACT\"",
                job.suite.as_str()
            )],
        )
        .env("ARTIFACT", artifact.clone())
        .env("CELL", expr("matrix.cell"))
        .env("SERVER", server.to_string()),
    );
    steps.extend(report_steps(artifact));
    Ok(matrix_job(job, &cells, only, &ctx.getter, minutes, steps))
}

/// The load tools of one server's http job and its bound in minutes: every measured run of
/// every workload it serves, in every shape, under every tool, at its worst (start, warm up,
/// measure, stop, drain).
fn http_job_minutes(session: &HttpDef, server: &ServerName) -> (Vec<String>, u32) {
    let per_run = session.startup_timeout_s
        + session.warmup_s
        + session.duration_s
        + session.stop_grace_s
        + session.drain_timeout_s;
    let workloads = session.server(server.as_str()).map_or(1, |s| {
        s.workloads
            .keys()
            .filter(|w| session.workloads.contains_key(*w))
            .count()
            .max(1)
    });
    let runs = f64::from(session.runs)
        * session.tools.len() as f64
        * session.shapes.len() as f64
        * workloads as f64;
    let load_s = per_run * runs;
    (
        session.tools.clone(),
        RUN_JOB_BASE_MINUTES + (load_s / 60.0).ceil() as u32,
    )
}

/// Installs the load generators a suite job drives, each as its table entry says: the apt
/// ones first, then those `cargo install --locked` builds at the version `versions.env` pins
/// (kept in a cache per version and cell so a warm job skips the build), then release
/// tarballs. It takes the entries, not the table, so an entry no bundled tool has yet is
/// built (and tested) the same way.
fn load_generator_steps(
    ctx: &Ctx,
    http: &HttpDef,
    wanted: &[&LoadToolDef],
    cells: &[&Cell],
) -> Result<Vec<Step>, PlanError> {
    let mut steps = Vec::new();
    for tool in wanted {
        let LoadInstall::Apt { package } = tool.install else {
            continue;
        };
        let what = if package == tool.name {
            format!("{} (apt)", tool.name)
        } else {
            format!("{} (apt {package})", tool.name)
        };
        let install = format!(
            "sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends {package}"
        );
        let mut step = Step::run(
            format!("install the load generator {what}"),
            &[APT_UPDATE_ONCE, &install],
        );
        if cells.iter().any(|c| c.os != "linux") {
            step = step.when("matrix.os == 'linux'");
        }
        steps.push(step);
    }
    for tool in wanted {
        if let LoadInstall::Crate { krate, version_key } = tool.install {
            steps.extend(crate_install_steps(
                ctx,
                http,
                tool.name,
                krate,
                version_key,
            )?);
        }
    }
    for tool in wanted {
        if let LoadInstall::Tarball {
            url_key,
            sha256_key,
            strip,
            bin,
        } = tool.install
        {
            let keys = (url_key, sha256_key);
            steps.push(tarball_tool_step(ctx, tool.name, keys, strip, bin)?);
        }
    }
    Ok(steps)
}

/// The value of `key` in `versions.env`, which a load generator's install of `name` needs
/// (`how` it uses it; `kind` what the value is).
fn load_tool_pin<'a>(
    ctx: &'a Ctx,
    name: &str,
    key: &str,
    (how, kind): (&str, &str),
) -> Result<&'a str, PlanError> {
    ctx.plan.env.get(key).ok_or_else(|| {
        let rename = if key == ctx.plan.http.as_ref().map_or("", |h| h.oha_key.as_str()) {
            " (or name another key in [http] oha of cell/cell.toml)"
        } else {
            ""
        };
        PlanError::Config {
            path: ctx.plan.env.path.clone(),
            field: key.to_owned(),
            msg: format!(
                "the http and soak jobs install {name} {how}, and versions.env has no {key}: add {key}=<{kind}>{rename}"
            ),
        }
    })
}

/// The cache restore and `cargo install --locked` of a load generator built from its crate,
/// at the version its own key pins (`[http] oha` names oha's; `version_key` is the variable
/// the script reads).
fn crate_install_steps(
    ctx: &Ctx,
    http: &HttpDef,
    name: &str,
    krate: &str,
    version_key: &str,
) -> Result<[Step; 2], PlanError> {
    let key = http.version_key(version_key);
    let version = load_tool_pin(ctx, name, key, ("at the version this key pins", "version"))?;
    let cache = format!("{LOAD_TOOL_CACHE}/{name}");
    Ok([
        Step::uses(format!("restore {name} {version} from the cache"), CACHE)
            .input("path", format!("~/{cache}-{version}"))
            .input(
                "key",
                format!("{name}-{version}-{}", expr("matrix.cell-id")),
            ),
        Step::run(
            format!("install the load generator {name} {version} (cargo install --locked)"),
            &[
                &format!("root=\"$HOME/{cache}-${version_key}\""),
                &format!("if [ ! -x \"$root/bin/{name}\" ]; then"),
                &format!(
                    "  cargo install {krate} --locked --version \"${version_key}\" --root \"$root\""
                ),
                "fi",
                "echo \"$root/bin\" >> \"$GITHUB_PATH\"",
            ],
        )
        .env(version_key, version),
    ])
}

/// A load generator from a release tarball: `cell fetch` downloads it, checks the pinned
/// SHA-256 before unpacking a byte (as a tarball toolchain's install does), and the
/// directory of its binary goes on PATH.
fn tarball_tool_step(
    ctx: &Ctx,
    name: &str,
    (url_key, sha256_key): (&str, &str),
    strip: u32,
    bin: &str,
) -> Result<Step, PlanError> {
    let url = load_tool_pin(
        ctx,
        name,
        url_key,
        ("from the tarball this key points to", "url"),
    )?;
    let sha256 = load_tool_pin(
        ctx,
        name,
        sha256_key,
        ("checking the SHA-256 this key pins", "sha256"),
    )?;
    let dir = bin.rsplit_once('/').map_or("", |(d, _)| d);
    let on_path = if dir.is_empty() {
        "$root".to_owned()
    } else {
        format!("$root/{dir}")
    };
    Ok(Step::run(
        format!("install the load generator {name} (tarball, pinned SHA-256 verified)"),
        &[
            &format!("root=\"$RUNNER_TEMP/cell-load-tools/{name}\""),
            &format!(
                "cell fetch --url \"$URL\" --sha256 \"$SHA256\" --into \"$root\" --strip-components {strip}"
            ),
            &format!("test -x \"$root/{bin}\""),
            &format!("echo \"{on_path}\" >> \"$GITHUB_PATH\""),
        ],
    )
    .comment(&format!("{url_key} and {sha256_key} of versions.env"))
    .env("URL", url)
    .env("SHA256", sha256))
}

/// The steps that install one toolchain at its pinned version on this job's cells; `role`
/// names it when it is not the toolchain under test.
fn install_steps(
    ctx: &Ctx,
    tc: &Toolchain,
    cells: &[&Cell],
    role: Option<&str>,
) -> Result<Vec<Step>, PlanError> {
    let what = match role {
        Some(r) => format!("{r} {}", tc.name),
        None => tc.name.to_string(),
    };
    let field = |f: &str| format!("toolchains.{}.install.{f}", tc.name);
    let steps = match &tc.install {
        Install::Apt { package, version } => {
            let spec = match version {
                Some(v) => format!("{package}={v}"),
                None => package.clone(),
            };
            vec![apt_step(&what, spec, cells)]
        }
        Install::Setup {
            action,
            input,
            version,
        } => vec![setup_step(ctx, tc, &what, action, input, version)?],
        Install::Tarball(def) => {
            let platforms: BTreeSet<(&str, &str)> = cells
                .iter()
                .map(|c| (c.os.as_str(), c.arch.as_str()))
                .collect();
            let mut steps = Vec::new();
            for (os, arch) in platforms {
                let src = ctx
                    .plan
                    .tarball_source(tc, os, arch)
                    .map_err(|e| PlanError::Config {
                        path: ctx.toml.clone(),
                        field: field("tarball"),
                        msg: format!("{os}-{arch}: {e}"),
                    })?;
                steps.push(tarball_step(tc, &what, def, &src, os, arch));
            }
            steps
        }
        Install::Preinstalled => Vec::new(),
    };
    Ok(steps)
}

/// `install <what> (apt <spec>)`: one package by name, on Linux runners only when the job has
/// other cells too (only Linux runners have apt; elsewhere the image must carry the tool).
fn apt_step(what: &str, spec: String, cells: &[&Cell]) -> Step {
    let mut step = Step::run(
        format!("install {what} (apt {spec})"),
        &[
            APT_UPDATE_ONCE,
            "sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \"$PACKAGE\"",
        ],
    )
    .env("PACKAGE", spec);
    if cells.iter().any(|c| c.os != "linux") {
        step = step.when("matrix.os == 'linux'");
    }
    step
}

/// `INSTRUCTIONS=on` (the default): the exact lane runs under valgrind, installed with apt where a
/// job's cells are Linux (elsewhere the lane records that it did not run); nothing when off.
fn valgrind_step(plan: &Plan, cells: &[&Cell]) -> Option<Step> {
    exact_lane_runs(plan, cells).then(|| {
        apt_step(
            "valgrind for the exact lane",
            cell_model::VALGRIND_PACKAGE.to_owned(),
            cells,
        )
    })
}

/// The exact lane is on and some cell of the job can run valgrind (Linux).
fn exact_lane_runs(plan: &Plan, cells: &[&Cell]) -> bool {
    plan.settings.exact.on && cells.iter().any(|c| c.os == "linux")
}

/// One platform's tarball install: `cell install` resolves the same keys for the job's cell,
/// tries the mirrors then the URL, verifies the digest before unpacking and caches the tree
/// by digest, where `cell run` finds it (and verifies the subject again on its own).
fn tarball_step(
    tc: &Toolchain,
    what: &str,
    def: &cell_model::TarballDef,
    src: &cell_model::TarballSource,
    os: &str,
    arch: &str,
) -> Step {
    let version = def
        .version
        .as_deref()
        .map(|v| format!(" {v}"))
        .unwrap_or_default();
    let how = match src.verification() {
        cell_model::Verification::Pin => "pinned SHA-256",
        cell_model::Verification::Checksum => "published checksum",
        cell_model::Verification::Both => "pinned SHA-256 and published checksum",
    };
    let keys: Vec<&str> = src
        .url_key
        .iter()
        .chain(&src.sha256_key)
        .map(String::as_str)
        .collect();
    let from = if keys.is_empty() {
        format!("{} (template)", src.url)
    } else {
        format!("{} of versions.env", keys.join(" and "))
    };
    Step::run(
        format!("install {what}{version} ({os} {arch} tarball, {how} verified)"),
        &["cell install --cell \"$CELL\" --toolchain \"$INSTALL\""],
    )
    .comment(&format!("{}: {from}", src.asset))
    .when(format!("matrix.os == '{os}' && matrix.arch == '{arch}'"))
    .env("CELL", expr("matrix.cell"))
    .env("INSTALL", tc.name.to_string())
}

/// The pinned setup action of a toolchain, with its version input and fixed inputs.
fn setup_step(
    ctx: &Ctx,
    tc: &Toolchain,
    what: &str,
    action: &str,
    input: &str,
    version: &str,
) -> Result<Step, PlanError> {
    let field = |f: &str| format!("toolchains.{}.install.{f}", tc.name);
    let Some(pin) = pins::pin(action) else {
        return Err(PlanError::Config {
            path: ctx.toml.clone(),
            field: field("setup.action"),
            msg: format!(
                "`{action}` has no verified commit in crates/cell-plan/src/pins.rs: add one there (checked against the action's repository), or install with apt or a tarball; pinned actions: {}",
                pins::PINS
                    .iter()
                    .map(|p| p.action)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        });
    };
    if pin == RUST_TOOLCHAIN && input != "toolchain" {
        return Err(PlanError::Config {
            path: ctx.toml.clone(),
            field: field("setup.input"),
            msg: format!(
                "`{input}`: {} is pinned to a master commit, which installs only the toolchain passed as `toolchain`: write input = \"toolchain\"",
                pin.action
            ),
        });
    }
    if pin == RUST_TOOLCHAIN {
        // rustup is on every hosted runner: the action adds nothing but a third party to trust
        // (zizmor's superfluous-actions), so its one input becomes a rustup call.
        return Ok(Step::run(
            format!("install {what} {version} (rustup)"),
            &[
                // A warm (self-hosted) runner that has it skips rustup's network round trip.
            "if ! rustup toolchain list | grep -q \"^$RUST-\"; then rustup toolchain install \"$RUST\" --profile minimal --no-self-update; fi",
                "rustup default \"$RUST\"",
            ],
        )
        .env("RUST", version));
    }
    let mut step = Step::uses(format!("install {what} {version}"), pin).input(input, version);
    for (k, v) in pin.fixed_inputs {
        if *k != input {
            step = match *v {
                "true" => step.input(k, true),
                "false" => step.input(k, false),
                text => step.input(k, text),
            };
        }
    }
    Ok(step)
}

#[cfg(test)]
mod tests {
    use cell_model::{Body, Durations};
    use cell_testkit::planning::{Project, with_suites};

    use super::*;

    const GET: &[(&str, Body)] = &[("GET", Body::Optional)];

    /// A table entry no bundled tool has.
    fn entry(name: &'static str, install: LoadInstall) -> LoadToolDef {
        LoadToolDef {
            name,
            by_default: false,
            durations: Durations::Fractional,
            fixed_rate: false,
            soak: false,
            threads: false,
            sends: GET,
            other_methods: None,
            bodies: None,
            install,
        }
    }

    fn plan_with(pins: &[(&str, &str)]) -> (Project, Plan) {
        let project = Project::of(&with_suites());
        let mut plan = Plan::load(&project.root).unwrap();
        for (key, value) in pins {
            let line = plan.env.entries.len() + 1;
            plan.env.entries.insert(
                (*key).to_owned(),
                cell_model::env::Entry {
                    value: (*value).to_owned(),
                    line,
                },
            );
        }
        (project, plan)
    }

    /// The workflow with `tool`'s install steps in the http job, before the bundled ones.
    fn rendered_with(plan: &Plan, tool: &LoadToolDef) -> Result<String, PlanError> {
        let layout = Layout::of(plan)?;
        let mut wf = workflow(plan, &layout)?;
        let ctx = Ctx::new(plan, Getter::Built, true);
        let job = layout
            .jobs
            .iter()
            .find(|j| matches!(j.suite, Suite::Http(_)))
            .unwrap();
        let cells = job_cells(plan, job);
        let extra = load_generator_steps(&ctx, plan.http.as_ref().unwrap(), &[tool], &cells)?;
        let mut jobs = Map::new();
        for (id, j) in wf.jobs.iter() {
            let mut j = j.clone();
            if id == job.id {
                let at = j
                    .steps
                    .iter()
                    .position(|s| s.name.starts_with("install the load generator"))
                    .unwrap();
                j.steps.splice(at..at, extra.clone());
            }
            jobs.insert(id, j);
        }
        wf.jobs = jobs;
        crate::render::to_yaml(&wf, &crate::header::header(plan, &layout))
    }

    /// Every crate-built load generator was installed at oha's version (`http.oha_version`
    /// under `http.oha_key`), whatever its own `version_key` said.
    #[test]
    fn a_crate_built_load_tool_is_installed_at_its_own_keys_version_not_ohas() {
        let bomb = entry(
            "bomb",
            LoadInstall::Crate {
                krate: "bomb-rs",
                version_key: "BOMB_VERSION",
            },
        );
        let (_p, plan) = plan_with(&[("BOMB_VERSION", "2.0.1")]);
        let text = rendered_with(&plan, &bomb).unwrap();
        assert!(
            text.contains("install the load generator bomb 2.0.1 (cargo install --locked)"),
            "{text}"
        );
        assert!(text.contains("BOMB_VERSION: 2.0.1"), "{text}");
        assert!(text.contains("cargo install bomb-rs --locked --version \"$BOMB_VERSION\""));
        assert!(
            !text.contains("bomb 1.16.0"),
            "oha's version is oha's alone"
        );
        assert!(text.contains("install the load generator oha 1.16.0"));
        cell_testkit::lint::lint_text(&text);

        let (_p, unpinned) = plan_with(&[]);
        let e = rendered_with(&unpinned, &bomb).unwrap_err().to_string();
        assert!(
            e.ends_with(
                "BOMB_VERSION: the http and soak jobs install bomb at the version this key pins, and versions.env has no BOMB_VERSION: add BOMB_VERSION=<version>"
            ),
            "{e}"
        );
    }

    /// The table's third kind of install: a release tarball, fetched with its pinned digest
    /// checked before a byte is unpacked, its binary's directory put on PATH.
    #[test]
    fn a_tarball_load_tool_is_fetched_with_its_digest_checked_and_put_on_path() {
        let hey = entry(
            "hey",
            LoadInstall::Tarball {
                url_key: "HEY_URL",
                sha256_key: "HEY_SHA256",
                strip: 1,
                bin: "bin/hey",
            },
        );
        let digest = "ab".repeat(32);
        let url = "https://example.com/hey-0.1.4-linux-x86_64.tar.gz";
        let (_p, plan) = plan_with(&[("HEY_URL", url), ("HEY_SHA256", &digest)]);
        let text = rendered_with(&plan, &hey).unwrap();
        let at = text
            .find("- name: install the load generator hey (tarball, pinned SHA-256 verified)")
            .unwrap_or_else(|| panic!("{text}"));
        let step = &text[at..at + text[at..].find("\n\n").unwrap()];
        for line in [
            "root=\"$RUNNER_TEMP/cell-load-tools/hey\"",
            "cell fetch --url \"$URL\" --sha256 \"$SHA256\" --into \"$root\" --strip-components 1",
            "test -x \"$root/bin/hey\"",
            "echo \"$root/bin\" >> \"$GITHUB_PATH\"",
            &format!("URL: {url}"),
            &format!("SHA256: {digest}"),
        ] {
            assert!(step.contains(line), "{line} not in {step}");
        }
        cell_testkit::lint::lint_text(&text);

        let (_p, no_digest) = plan_with(&[("HEY_URL", url)]);
        let e = rendered_with(&no_digest, &hey).unwrap_err().to_string();
        assert!(
            e.ends_with("versions.env has no HEY_SHA256: add HEY_SHA256=<sha256>"),
            "{e}"
        );
    }
}
