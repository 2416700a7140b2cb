//! The jobs around the matrix: `build-<platform>` (cell compiled once per run and platform),
//! `plan` (the file is current, the run's inputs become matrices) and `collect` (the run's
//! artifacts become one commit of `results/`, whatever failed before it).

use cell_model::Plan;
use std::fmt::Write as _;

use crate::getter::{Getter, job_platform};
use crate::layout::{Layout, runs_on};
use crate::pins::{CHECKOUT, DOWNLOAD_ARTIFACT, RUST_CACHE, UPLOAD_ARTIFACT};
use crate::workflow::{Concurrency, Job, Level, Map, Permissions, RunsOn, Scope, Step, expr};
use crate::{HOST_RUNNER, WORKFLOW_PATH};

/// Minutes `build-*`, `plan` and `collect` may take (a cold build of cell is most of it).
pub const SIDE_JOB_MINUTES: u32 = 30;
/// The platform of the hosted runner `plan` and `collect` run on.
pub const HOST_PLATFORM: &str = "linux-x86_64";
/// Where a job unpacks the cell binary of its platform.
pub(crate) const BIN_DIR: &str = "cell-bin";

/// One platform cell runs on (`<os>-<arch>`) and the runner its build job uses: the hosted
/// one for `linux-x86_64` (which also serves `plan` and `collect`), else the first cell's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Platform {
    /// `<os>-<arch>`.
    pub id: String,
    /// Where its build job runs.
    pub runs_on: RunsOn,
}

impl Platform {
    /// The id of the job that builds cell for it.
    pub fn job(&self) -> String {
        build_job_id(&self.id)
    }
}

/// `build-<platform>`: the job that builds cell for a platform.
pub fn build_job_id(platform: &str) -> String {
    format!("build-{platform}")
}

/// `bin-<platform>`: the artifact holding cell for a platform. It is named by the run, not
/// the attempt (a "re-run failed jobs" attempt does not re-run the build), and outside the
/// `cell-` namespace, which holds job results only.
pub fn bin_artifact(platform: &str) -> String {
    format!("bin-{platform}")
}

/// Every platform of the plan's cells, the host's first. A platform builds on a hosted
/// runner of one of its cells when it has one, else on any self-hosted runner of it, by the
/// labels every self-hosted runner carries (`self-hosted`, its OS, its architecture).
pub fn platforms(plan: &Plan) -> Vec<Platform> {
    let mut out = vec![Platform {
        id: HOST_PLATFORM.to_owned(),
        runs_on: RunsOn::Label(HOST_RUNNER.to_owned()),
    }];
    for cell in plan.cells.values() {
        let id = format!("{}-{}", cell.os, cell.arch);
        let hosted = match runs_on(cell) {
            RunsOn::Label(l) => Some(RunsOn::Label(l)),
            RunsOn::Labels(_) => None,
        };
        match out.iter_mut().find(|p| p.id == id) {
            Some(p) => {
                if let (RunsOn::Labels(_), Some(h)) = (&p.runs_on, hosted) {
                    p.runs_on = h;
                }
            }
            None => out.push(Platform {
                runs_on: hosted.unwrap_or_else(|| self_hosted(&cell.os, &cell.arch)),
                id,
            }),
        }
    }
    out
}

/// The default labels of a self-hosted runner of `os` and `arch`.
fn self_hosted(os: &str, arch: &str) -> RunsOn {
    let os = match os {
        "linux" => "Linux",
        "macos" => "macOS",
        "windows" => "Windows",
        other => other,
    };
    let arch = match arch {
        "x86_64" => "X64",
        "aarch64" => "ARM64",
        other => other,
    };
    RunsOn::Labels(vec!["self-hosted".into(), os.into(), arch.into()])
}

/// `actions/checkout`, never leaving a token in `.git/config`: only the push of `collect`
/// gets one, through its environment.
pub fn checkout() -> Step {
    Step::uses("check out the repository", CHECKOUT).input("persist-credentials", false)
}

/// The Rust that builds cell, by rustup (preinstalled on the runners), not by an action.
pub(crate) fn install_rust(rust: &str) -> Step {
    Step::run(
        format!("install Rust {rust} to build cell"),
        &[
            // A warm (self-hosted) runner that has it skips rustup's network round trip.
            "if ! rustup toolchain list | grep -q \"^$RUST-\"; then rustup toolchain install \"$RUST\" --profile minimal --no-self-update; fi",
            "rustup default \"$RUST\"",
        ],
    )
    .env("RUST", rust)
}

/// Prints the SHA-256 of `$1` (sha256sum on Linux, shasum on macOS).
pub(crate) const SHA256_OF: &str =
    "sha256_of() { { sha256sum \"$1\" 2>/dev/null || shasum -a 256 \"$1\"; } | cut -d ' ' -f 1; }";

/// Where a git source is checked out in its build job.
const GIT_SRC: &str = "cell-src";

/// What a build job compiles: this commit of the repository, or one commit of another.
#[derive(Clone, Copy, Debug)]
pub enum BuildFrom<'a> {
    /// The repository's own commit (`cell = "source"`).
    ThisCommit,
    /// `cell = { git, rev }`.
    Git {
        /// The repository.
        url: &'a str,
        /// The full commit id.
        rev: &'a str,
    },
}

/// The steps that put the source in place, and the directory cargo runs in.
fn source_steps(from: BuildFrom<'_>) -> (Vec<Step>, &'static str) {
    match from {
        BuildFrom::ThisCommit => (vec![checkout()], "."),
        BuildFrom::Git { url, rev } => (
            vec![
                Step::run(
                    format!("fetch cell at {rev}"),
                    &[
                        &format!("git init -q {GIT_SRC}"),
                        &format!("git -C {GIT_SRC} fetch -q --depth 1 \"$CELL_GIT\" \"$CELL_REV\""),
                        &format!("git -C {GIT_SRC} checkout -q --detach \"$CELL_REV\""),
                    ],
                )
                .env("CELL_GIT", url)
                .env("CELL_REV", rev)
                .comment("One exact commit (a full id, never a branch): the same cell on every run until the pin changes."),
            ],
            GIT_SRC,
        ),
    }
}

/// The job that builds cell once for `platform` and hands it on with its digest.
pub fn build_job(rust: &str, platform: &Platform, from: BuildFrom<'_>) -> Job {
    let (mut steps, dir) = source_steps(from);
    let mut cache = Step::uses("restore the cargo cache (keyed on Cargo.lock)", RUST_CACHE)
        .input("shared-key", format!("cell-{}", platform.id));
    if dir != "." {
        cache = cache.input("workspaces", format!("{dir} -> target"));
    }
    let build = if dir == "." {
        vec![
            "cargo build --release --locked --bin cell".to_owned(),
            format!("mkdir -p {BIN_DIR}"),
            format!("cp target/release/cell {BIN_DIR}/cell"),
        ]
    } else {
        vec![
            format!("(cd {dir} && cargo build --release --locked --bin cell)"),
            format!("mkdir -p {BIN_DIR}"),
            format!("cp {dir}/target/release/cell {BIN_DIR}/cell"),
        ]
    };
    let build: Vec<&str> = build.iter().map(String::as_str).collect();
    steps.extend([
        install_rust(rust),
        cache,
        Step::run("build cell", &build),
        Step::run(
            "record the binary's SHA-256 for the jobs that download it",
            &[
                SHA256_OF,
                &format!("echo \"sha256=$(sha256_of {BIN_DIR}/cell)\" >> \"$GITHUB_OUTPUT\""),
            ],
        )
        .id("digest"),
        Step::uses("upload cell", UPLOAD_ARTIFACT)
            .input("name", bin_artifact(&platform.id))
            .input("path", format!("{BIN_DIR}/cell"))
            .input("if-no-files-found", "error")
            // A full re-run builds again under the same name.
            .input("overwrite", true),
    ]);
    Job {
        name: format!("build cell for {}", platform.id),
        needs: Vec::new(),
        cond: None,
        runs_on: platform.runs_on.clone(),
        permissions: None,
        concurrency: None,
        timeout_minutes: SIDE_JOB_MINUTES,
        strategy: None,
        env: Map::new(),
        outputs: Map::new().with("sha256", expr("steps.digest.outputs.sha256")),
        steps,
    }
}

/// Downloads cell for the job's platform (one of `platforms`; `matrix.os`-`matrix.arch` when
/// there are several), checks its SHA-256 against what the build job recorded (a binary is
/// run only when it is the one built for this run), and puts it on PATH.
pub(crate) fn get_cell(platforms: &[String]) -> Vec<Step> {
    let platform = job_platform(platforms);
    let name = bin_artifact(&platform);
    // `<platform>=<sha256>` lines, one per build job this job needs.
    let digests: Vec<String> = platforms
        .iter()
        .map(|p| {
            format!(
                "{p}={}",
                expr(&format!("needs.{}.outputs.sha256", build_job_id(p)))
            )
        })
        .collect();
    vec![
        Step::uses("download cell (built once for this run)", DOWNLOAD_ARTIFACT)
            .input("name", name)
            .input("path", format!("{}/{BIN_DIR}", expr("runner.temp"))),
        Step::run(
            "check cell's SHA-256 and put it on PATH",
            &[
                SHA256_OF,
                &format!("bin=\"$RUNNER_TEMP/{BIN_DIR}/cell\""),
                "want=$(printf '%s\\n' \"$CELL_SHA256S\" | sed -n \"s/^$PLATFORM=//p\")",
                "got=$(sha256_of \"$bin\")",
                "if [ -z \"$want\" ] || [ \"$got\" != \"$want\" ]; then",
                "  echo \"::error::the downloaded cell for $PLATFORM has SHA-256 $got, not the ${want:-(none)} its build job recorded\"",
                "  exit 1",
                "fi",
                // Artifacts are zips, which drop the exec bit.
                "chmod +x \"$bin\"",
                &format!("echo \"$RUNNER_TEMP/{BIN_DIR}\" >> \"$GITHUB_PATH\""),
            ],
        )
        .env("PLATFORM", platform)
        .env("CELL_SHA256S", digests.join("\n")),
    ]
}

/// `plan`: checks this file is current and turns the run's inputs into matrices; unknown
/// cells or toolchains and a bad `reps` fail here, before any runner is taken.
pub fn plan_job(layout: &Layout, getter: &Getter) -> Job {
    let host = [HOST_PLATFORM.to_owned()];
    let mut steps = vec![checkout()];
    steps.extend(getter.steps(&host));
    steps.push(Step::run(
        format!("check that {WORKFLOW_PATH} is what `cell plan` writes"),
        &["cell plan --check"],
    ));
    steps.push(
        Step::run(
            "plan the matrices (unknown cells or toolchains, or bad reps, fail here)",
            &["cell plan --matrix --cells \"$CELLS\" --toolchains \"$TOOLCHAINS\" --subject \"$SUBJECT\" --reps \"$REPS\" --outputs \"$GITHUB_OUTPUT\""],
        )
        .id("matrix")
        .env("CELLS", expr("inputs.cells"))
        .env("TOOLCHAINS", expr("inputs.toolchains"))
        .env("SUBJECT", expr("inputs.subject"))
        .env("REPS", expr("inputs.reps")),
    );
    let mut outputs = Map::new();
    for job in &layout.jobs {
        outputs.insert(
            job.id.clone(),
            expr(&format!("steps.matrix.outputs.{}", job.id)),
        );
    }
    side_job("plan", getter.needs(&host), steps, outputs)
}

/// A job on the host runner with the side jobs' time limit, no condition or permissions of
/// its own.
pub(crate) fn side_job(
    name: &str,
    needs: Vec<String>,
    steps: Vec<Step>,
    outputs: Map<String>,
) -> Job {
    Job {
        name: name.into(),
        needs,
        cond: None,
        runs_on: RunsOn::Label(HOST_RUNNER.into()),
        permissions: None,
        concurrency: None,
        timeout_minutes: SIDE_JOB_MINUTES,
        strategy: None,
        env: Map::new(),
        outputs,
        steps,
    }
}

/// `collect`: runs unless the run was cancelled (a cancel commits nothing; a later re-run
/// collects), after failed and skipped jobs alike, and ends in one commit whenever anything
/// was collected; the job fails after that commit when a job failed or the gate tripped.
pub fn collect_job(plan: &Plan, layout: &Layout, getter: &Getter) -> Job {
    let host = [HOST_PLATFORM.to_owned()];
    let built = getter.needs(&host);
    let mut cond = "!cancelled() && needs.plan.result == 'success'".to_owned();
    for b in &built {
        let _ = write!(cond, " && needs.{b}.result == 'success'");
    }
    let mut needs = vec!["plan".to_owned()];
    needs.extend(built);
    needs.extend(layout.jobs.iter().map(|j| j.id.clone()));
    Job {
        name: "collect".into(),
        needs,
        cond: Some(cond),
        runs_on: RunsOn::Label(HOST_RUNNER.into()),
        permissions: Some(Permissions::of([
            (Scope::Contents, Level::Write),
            (Scope::Actions, Level::Read),
        ])),
        concurrency: Some(Concurrency {
            group: format!("cell-collect-{}", expr("github.ref")),
            cancel_in_progress: false,
            queue: Some("max".into()),
        }),
        timeout_minutes: SIDE_JOB_MINUTES,
        strategy: None,
        env: Map::new(),
        outputs: Map::new(),
        steps: collect_steps(plan.workflow.results_branch.as_deref(), getter),
    }
}

/// Where the collect job checks out `[workflow] results_branch`.
const RESULTS_CHECKOUT: &str = ".cell-results";

fn collect_steps(results_branch: Option<&str>, getter: &Getter) -> Vec<Step> {
    let run_dir = expr("steps.collect.outputs.run-dir");
    let collected = "steps.collect.outputs.run-dir != ''";
    let mut steps = vec![
        checkout()
            .input("ref", expr("github.ref"))
            .input("fetch-depth", "0")
            .comment("The branch tip, not github.sha: a re-run must commit on top of what attempt 1 pushed."),
    ];
    let mut get = getter.steps(&[HOST_PLATFORM.to_owned()]);
    if let Getter::Built = getter {
        get[0] = get[0].clone().comment(
            "cell as the build job compiled it for this run: this job runs no build script.",
        );
    }
    steps.extend(get);
    let mut collect = match results_branch {
        None => Step::run(
            "collect the run's artifacts into results/",
            &["cell collect \"$RUN_ID\" --config-rev \"$RUN_SHA\" --outputs \"$GITHUB_OUTPUT\""],
        ),
        Some(branch) => {
            steps.push(
                Step::run(
                    format!("check out the results branch {branch}"),
                    &["cell results-branch \"$BRANCH\" --into \"$RESULTS_CHECKOUT\""],
                )
                .env("GITHUB_TOKEN", expr("github.token"))
                .env("BRANCH", branch)
                .env("RESULTS_CHECKOUT", RESULTS_CHECKOUT)
                .comment("[workflow] results_branch: the history lives on its own branch (created on first use), so a protected main is never pushed to."),
            );
            Step::run(
                format!("collect the run's artifacts into results/ of {branch}"),
                &["cell collect \"$RUN_ID\" --config-rev \"$RUN_SHA\" --results \"$RESULTS_CHECKOUT/results\" --outputs \"$GITHUB_OUTPUT\""],
            )
            .env("RESULTS_CHECKOUT", RESULTS_CHECKOUT)
        }
    };
    collect = collect.id("collect");
    steps.push(
        collect
        .continue_on_error()
        .env("GITHUB_TOKEN", expr("github.token"))
        .env("RUN_ID", expr("github.run_id"))
        .env("RUN_SHA", expr("github.sha"))
        .comment("Writes what it got: missing or failed jobs make the run partial, listed in run.json; every job's figures recomputed from its samples and its answers checked with the run's own commit's configuration. Exit 1 (a job failed) must not stop the gate and the commit; the last step fails the job."),
    );
    steps.push(
        Step::run(
            "gate the run against the committed history",
            &["cell gate \"$RUN_DIR\" --config-rev \"$RUN_SHA\""],
        )
        .id("gate")
        .when(collected)
        .continue_on_error()
        .env("RUN_DIR", run_dir.clone())
        .env("RUN_SHA", expr("github.sha"))
        .comment("Thresholds from the run's own commit, not the branch tip; writes gate.json into the run dir."),
    );
    steps.push(
        Step::run(
            "commit and push results/ (with gate.json)",
            &["cell commit \"$RUN_DIR\" --push"],
        )
        .when(collected)
        .env("GITHUB_TOKEN", expr("github.token"))
        .env("RUN_DIR", run_dir)
        .comment("The push gets the token through its environment only, never .git/config or a command line; it rebases and retries when the branch moved."),
    );
    steps.push(
        Step::run(
            "fail the job when a job failed or the gate tripped",
            &[
                "if [ -n \"$RUN_DIR\" ]; then where=\"$RUN_DIR is committed\"; else where=\"nothing was written\"; fi",
                "echo \"::error::collect: $COLLECT, gate: $GATE ($where; see the step summary)\"",
                "exit 1",
            ],
        )
        .env("RUN_DIR", expr("steps.collect.outputs.run-dir"))
        .when("steps.collect.outcome == 'failure' || steps.gate.outcome == 'failure'")
        .comment("After the commit, so the record lands either way; the job's status still says a job failed or the gate tripped.")
        .env("COLLECT", expr("steps.collect.outcome"))
        .env("GATE", expr("steps.gate.outcome")),
    );
    steps
}
