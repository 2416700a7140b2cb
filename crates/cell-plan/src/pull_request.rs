//! `[workflow.pull_requests]` → two workflows. `cell-pr.yml` runs on `pull_request` with a
//! read-only token and no secrets: it times the PR's head commit on the PR's cells and
//! toolchains and uploads one artifact (`cell-pr`: the job results, the PR's number and head,
//! an informational verdict); it never commits. `cell-pr-report.yml` runs on `workflow_run`
//! of it in the base repository: it checks out the default branch only, runs the default
//! branch's cell, and `cell comment` judges the artifact as hostile input and writes the PR's
//! one comment and its check run. A fork's code runs only in the first.

use cell_model::{Plan, PullRequests};

use crate::PlanError;
use crate::build::{self, Ctx};
use crate::getter::{self, Getter};
use crate::layout::{Layout, MatrixJob, Suite};
use crate::pins::{CHECKOUT, DOWNLOAD_ARTIFACT, UPLOAD_ARTIFACT};
use crate::render::Notes;
use crate::side::{self, BIN_DIR, HOST_PLATFORM, side_job};
use crate::workflow::{
    Concurrency, Defaults, Filters, Job, Level, Map, On, Permissions, RunDefaults, Scope, Step,
    Workflow, WorkflowRunTrigger, expr,
};

/// The PR workflow's file.
pub const PR_PATH: &str = ".github/workflows/cell-pr.yml";
/// The reporter's file.
pub const REPORT_PATH: &str = ".github/workflows/cell-pr-report.yml";
/// The PR workflow's `name:`, which the reporter's trigger names.
pub const PR_WORKFLOW: &str = "cell-pr";
/// The one artifact a PR run leaves for the reporter.
pub const PR_ARTIFACT: &str = "cell-pr";
/// Where the `pr` job gathers what it uploads.
const PR_DIR: &str = "cell-pr";
/// Where the reporter checks out `[workflow] results_branch`.
const RESULTS_CHECKOUT: &str = ".cell-results";

/// The commit a PR run measures: the PR's head, not the merge commit GitHub checks out by
/// default (the base may move; the head is what the author pushed and what the check is on).
const HEAD_SHA: &str = "github.event.pull_request.head.sha";

/// Why the PR workflow holds what zizmor asks about.
pub const PR_NOTES: Notes = Notes {
    permissions: &[("contents: read", "check out the repository")],
    suppressions: &[],
};

/// The runs the reporter reports on: a pull request's, not cancelled. A run cancelled by a newer
/// push has no artifact and a head the PR no longer has: nothing to report, and no failed
/// reporter run for every superseded push.
const REPORTABLE: &str = "github.event.workflow_run.event == 'pull_request' && github.event.workflow_run.conclusion != 'cancelled'";

/// Why the reporter holds what zizmor asks about.
pub const REPORT_NOTES: Notes = Notes {
    permissions: &[
        (
            "contents: read",
            "check out the default branch (its configuration and results/)",
        ),
        ("actions: read", "download the pull request run's artifact"),
        ("checks: write", "the check run `cell` on the PR's head"),
        ("pull-requests: write", "the PR's one comment"),
    ],
    suppressions: &[(
        "on:",
        "dangerous-triggers",
        "runs no code of the pull request: checks out the default branch only, runs its pinned cell, reads the PR run's artifact as hostile input (sizes, names, schema, figures recomputed, head SHA checked through the API)",
    )],
};

/// The plan a pull request runs: its cells only, no http or soak suite; `None` without
/// `[workflow.pull_requests]`.
pub fn pull_request_plan(plan: &Plan) -> Option<Plan> {
    let pr = plan.workflow.pull_requests.as_ref()?;
    let mut narrowed = plan.clone();
    narrowed.cells.retain(|label, _| pr.cells.contains(label));
    narrowed.http = None;
    narrowed.soak = None;
    Some(narrowed)
}

/// The PR workflow and its header; `None` without `[workflow.pull_requests]`.
pub fn pr_workflow(plan: &Plan) -> Result<Option<(Workflow, Vec<String>)>, PlanError> {
    let (Some(pr), Some(narrowed)) = (&plan.workflow.pull_requests, pull_request_plan(plan)) else {
        return Ok(None);
    };
    let layout = Layout::of(&narrowed)?;
    let timed: Vec<&MatrixJob> = layout
        .jobs
        .iter()
        .filter(|j| j.suite == Suite::Workload && pr.toolchains.contains(&j.toolchain))
        .collect();
    let mut jobs = Map::new();
    let getter = getter::of(&narrowed, &mut jobs)?;
    jobs.insert("plan", plan_job(pr, &timed, &getter));
    let ctx = Ctx::new(&narrowed, getter.clone(), false);
    for job in &timed {
        jobs.insert(job.id.clone(), build::run_job(&ctx, job)?);
    }
    jobs.insert("pr", pr_job(&timed, &getter));
    for (id, job) in jobs.iter_mut() {
        let at = if id == "pr" {
            "github.event.pull_request.base.sha"
        } else {
            HEAD_SHA
        };
        for step in &mut job.steps {
            if step.uses.is_some_and(|u| u.0.action == CHECKOUT.action) {
                step.with.set("ref", expr(at).into());
            }
        }
    }
    let w = &plan.workflow;
    let wf = Workflow {
        name: PR_WORKFLOW.into(),
        on: On {
            pull_request: Some(Filters {
                branches: w.branches.clone(),
                paths: pr_paths(&w.paths),
                ..Filters::default()
            }),
            ..On::default()
        },
        permissions: Permissions::of([(Scope::Contents, Level::Read)]),
        concurrency: Some(Concurrency {
            group: format!("cell-pr-{}", expr("github.event.pull_request.number")),
            cancel_in_progress: true,
            queue: None,
        }),
        defaults: Some(bash()),
        jobs,
    };
    let entries: usize = timed.iter().map(|j| j.cells.len()).sum();
    Ok(Some((wf, pr_header(pr, entries))))
}

/// Main's path filters and this workflow's own file (none: every change).
fn pr_paths(paths: &[String]) -> Vec<String> {
    let mut out = paths.to_vec();
    if !out.is_empty() && !out.iter().any(|p| p == PR_PATH) {
        out.push(PR_PATH.to_owned());
    }
    out
}

fn bash() -> Defaults {
    Defaults {
        run: RunDefaults {
            shell: "bash".into(),
        },
    }
}

fn pr_header(pr: &PullRequests, entries: usize) -> Vec<String> {
    let mut h: Vec<String> = [
        "Generated by `cell plan` from [workflow.pull_requests] of cell/cell.toml: do not edit.",
        "A pull request's run: its head commit timed with a read-only token and no secrets; it",
        "uploads one artifact (cell-pr) and commits nothing. cell-pr-report.yml, in the base",
        "repository, judges that artifact and writes the PR's comment and check run. A newer",
        "push cancels the run in progress: unlike main's runs, an older head's measurement is",
        "worth nothing once the PR has a newer one.",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    h.push(format!(
        "Cost per push: {entries} job(s), cells {} × toolchains {} (main's matrix is larger).",
        pr.cells
            .iter()
            .map(cell_model::CellLabel::as_str)
            .collect::<Vec<_>>()
            .join(", "),
        pr.toolchains
            .iter()
            .map(cell_model::ToolchainName::as_str)
            .collect::<Vec<_>>()
            .join(", "),
    ));
    if pr.has_self_hosted() {
        h.push(
            "WARNING: self_hosted = true: a pull request's code (a fork's too) runs on a".into(),
        );
        h.push("self-hosted machine of this list; require approval of fork runs.".into());
    }
    h
}

/// `plan`: checks the PR's workflows are current and plans the PR's matrices.
fn plan_job(pr: &PullRequests, timed: &[&MatrixJob], getter: &Getter) -> Job {
    let host = [HOST_PLATFORM.to_owned()];
    let mut steps = vec![side::checkout()];
    steps.extend(getter.steps(&host));
    steps.push(Step::run(
        "check that the workflows are what `cell plan` writes",
        &["cell plan --check"],
    ));
    steps.push(
        Step::run(
            "plan the pull request's matrices",
            &["cell plan --matrix --pull-request --toolchains \"$TOOLCHAINS\" --outputs \"$GITHUB_OUTPUT\""],
        )
        .id("matrix")
        .env(
            "TOOLCHAINS",
            pr.toolchains
                .iter()
                .map(cell_model::ToolchainName::as_str)
                .collect::<Vec<_>>()
                .join(","),
        ),
    );
    let mut outputs = Map::new();
    for job in timed {
        outputs.insert(
            job.id.clone(),
            expr(&format!("steps.matrix.outputs.{}", job.id)),
        );
    }
    side_job("plan", getter.needs(&host), steps, outputs)
}

/// `pr`: the job results, the PR's number and head, and an informational verdict against the
/// base's history, in one artifact. The base commit is checked out: its configuration and
/// results are what the reporter judges with too.
fn pr_job(timed: &[&MatrixJob], getter: &Getter) -> Job {
    let host = [HOST_PLATFORM.to_owned()];
    let mut steps = vec![side::checkout()];
    steps.extend(getter.steps(&host));
    // `cell-*-a*`: the job results (`cell-<cell-id>-<toolchain>-a<attempt>`), never the
    // `cell-pr` an earlier attempt of this run uploaded, which would nest in `jobs/`.
    steps.push(
        Step::uses("download the job results", DOWNLOAD_ARTIFACT)
            .input("pattern", "cell-*-a*")
            .input("path", format!("{PR_DIR}/jobs")),
    );
    steps.push(
        Step::run(
            "record the pull request's number and head",
            &[&format!(
                "cell pr-json --out \"{PR_DIR}/pr.json\" --number \"$NUMBER\" --head-sha \"$HEAD_SHA\" --base-sha \"$BASE_SHA\" --base-ref \"$BASE_REF\""
            )],
        )
        .env("NUMBER", expr("github.event.pull_request.number"))
        .env("HEAD_SHA", expr(HEAD_SHA))
        .env("BASE_SHA", expr("github.event.pull_request.base.sha"))
        .env("BASE_REF", expr("github.event.pull_request.base.ref")),
    );
    steps.push(
        Step::run(
            "the verdict against the base's history (informational: the reporter recomputes it)",
            &[
                &format!(
                    "cell comment \"$RUN_ID\" --from-dir \"{PR_DIR}\" --head-sha \"$HEAD_SHA\" --dry-run > \"{PR_DIR}/gate.md\""
                ),
                &format!("cat \"{PR_DIR}/gate.md\" >> \"$GITHUB_STEP_SUMMARY\""),
            ],
        )
        .continue_on_error()
        .env("RUN_ID", expr("github.run_id"))
        .env("HEAD_SHA", expr(HEAD_SHA)),
    );
    steps.push(
        Step::uses("upload the pull request's result", UPLOAD_ARTIFACT)
            .input("name", PR_ARTIFACT)
            .input("path", PR_DIR)
            // A re-run's upload replaces the earlier attempt's (the reporter refuses a run
            // with two; without it the upload fails on the name).
            .input("overwrite", true),
    );
    let mut needs = vec!["plan".to_owned()];
    needs.extend(getter.needs(&host));
    needs.extend(timed.iter().map(|j| j.id.clone()));
    let mut job = side_job("pr", needs, steps, Map::new());
    job.cond = Some("!cancelled() && needs.plan.result == 'success'".into());
    job
}

/// The reporter; `None` without `[workflow.pull_requests]`.
pub fn report_workflow(plan: &Plan) -> Result<Option<(Workflow, Vec<String>)>, PlanError> {
    let Some(pr) = &plan.workflow.pull_requests else {
        return Ok(None);
    };
    // cell for the host alone: the reporter runs nothing on the PR's cells.
    let mut host_only = plan.clone();
    host_only.cells.clear();
    let mut jobs = Map::new();
    let getter = getter::of(&host_only, &mut jobs)?;
    // A build of cell for a run there is nothing to report on would only cost minutes.
    for (_, job) in jobs.iter_mut() {
        job.cond = Some(REPORTABLE.into());
    }
    jobs.insert("report", report_job(plan, pr, &getter));
    let wf = Workflow {
        name: "cell-pr-report".into(),
        on: On {
            workflow_run: Some(WorkflowRunTrigger {
                workflows: vec![PR_WORKFLOW.into()],
                types: vec!["completed".into()],
            }),
            ..On::default()
        },
        permissions: Permissions::of([(Scope::Contents, Level::Read)]),
        concurrency: Some(Concurrency {
            group: format!(
                "cell-pr-report-{}-{}",
                expr("github.event.workflow_run.head_repository.full_name"),
                expr("github.event.workflow_run.head_branch")
            ),
            cancel_in_progress: false,
            queue: Some("max".into()),
        }),
        defaults: Some(bash()),
        jobs,
    };
    let header = [
        "Generated by `cell plan` from [workflow.pull_requests] of cell/cell.toml: do not edit.",
        "Reports a cell-pr run: runs in the base repository with the default branch's files and",
        "its pinned cell, never the pull request's code; downloads the run's cell-pr artifact,",
        "checks it (sizes, names, schema, every figure recomputed) and that its head is the PR's",
        "head now, then edits the PR's one comment and the check run `cell`. The check is",
        "advisory: a fork controls its own run's samples; never make it a required check",
        "(docs/workflow.md, \"Pull requests\").",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    Ok(Some((wf, header)))
}

/// The getter's steps without their write to `GITHUB_PATH`: in a workflow started by another
/// run's completion, no step changes what later steps run; the reporter calls cell by its path.
fn off_path(steps: Vec<Step>) -> Vec<Step> {
    steps
        .into_iter()
        .map(|mut step| {
            if let Some(run) = &step.run {
                let kept: Vec<&str> = run
                    .lines()
                    .filter(|l| !l.contains("\"$GITHUB_PATH\""))
                    .collect();
                step.run = Some(format!("{}\n", kept.join("\n")));
            }
            step
        })
        .collect()
}

fn report_job(plan: &Plan, pr: &PullRequests, getter: &Getter) -> Job {
    let host = [HOST_PLATFORM.to_owned()];
    let mut steps = vec![
        side::checkout()
            .comment("The default branch (the event's commit): nothing of the pull request."),
    ];
    steps.extend(off_path(getter.steps(&host)));
    let mut command = format!(
        "\"$RUNNER_TEMP/{BIN_DIR}/cell\" comment \"$RUN_ID\" --head-sha \"$HEAD_SHA\" --comment \"$POLICY\" --details-url \"$DETAILS\""
    );
    if let Some(branch) = &plan.workflow.results_branch {
        steps.push(
            Step::uses(format!("check out the results branch {branch}"), CHECKOUT)
                .input("ref", branch.clone())
                .input("path", RESULTS_CHECKOUT)
                .input("persist-credentials", false),
        );
        command += " --results \"";
        command += RESULTS_CHECKOUT;
        command += "/results\"";
    }
    steps.push(
        Step::run("judge the run and report on the pull request", &[&command])
            .env("GITHUB_TOKEN", expr("github.token"))
            .env("RUN_ID", expr("github.event.workflow_run.id"))
            .env("HEAD_SHA", expr("github.event.workflow_run.head_sha"))
            .env("POLICY", pr.comment.as_str())
            .env(
                "DETAILS",
                format!(
                    "{}/{}/actions/runs/{}",
                    expr("github.server_url"),
                    expr("github.repository"),
                    expr("github.run_id")
                ),
            )
            .comment("The PR's number comes from the artifact (a fork PR's event lists none) and is believed only when the API says that PR's head is this run's head."),
    );
    let mut needs = Vec::new();
    needs.extend(getter.needs(&host));
    let mut job = side_job("report", needs, steps, Map::new());
    // A run cancelled by a newer push has no artifact and a head the PR no longer has:
    // nothing to report, and no failed reporter run for every superseded push.
    job.cond = Some(REPORTABLE.into());
    job.permissions = Some(Permissions::of([
        (Scope::Contents, Level::Read),
        (Scope::Actions, Level::Read),
        (Scope::Checks, Level::Write),
        (Scope::PullRequests, Level::Write),
    ]));
    job
}
