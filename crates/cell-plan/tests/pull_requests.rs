//! `[workflow.pull_requests]`: the read-only PR workflow (the PR's head timed on its cells,
//! one artifact, nothing committed) and the `workflow_run` reporter (the default branch's
//! files and cell only, four permissions), both linted, and the config's refusals.

mod support;

use cell_testkit::lint::lint_text;
use cell_testkit::planning::{BASE, GCC, Project, hosted, self_hosted};
use serde_norway::Value;
use support::PlanOf as _;

/// The base fixture on a Linux, an Arm and a macOS cell, gcc beside clang, with `table`.
fn toml_with(table: &str) -> String {
    format!(
        "{BASE}{GCC}{}\n[workflow.pull_requests]\n{table}",
        hosted(&["macos-15", "ubuntu-24.04", "ubuntu-24.04-arm"])
    )
}

fn files(toml: &str) -> (String, String) {
    let rendered = cell_plan::render_all(&Project::of(toml).plan()).unwrap();
    let get = |path: &str| {
        rendered
            .iter()
            .find(|(p, _)| *p == path)
            .unwrap_or_else(|| panic!("{path} not written"))
            .1
            .clone()
    };
    (get(cell_plan::PR_PATH), get(cell_plan::REPORT_PATH))
}

fn yaml(text: &str) -> Value {
    serde_norway::from_str(text).unwrap()
}

fn steps(job: &Value) -> Vec<Value> {
    job["steps"].as_sequence().unwrap().clone()
}

fn checkouts(job: &Value) -> Vec<Value> {
    steps(job)
        .into_iter()
        .filter(|s| {
            s["uses"]
                .as_str()
                .is_some_and(|u| u.starts_with("actions/checkout@"))
        })
        .collect()
}

#[test]
fn the_pr_workflow_times_the_head_read_only_and_uploads_one_artifact() {
    let (pr, report) = files(&toml_with(""));
    lint_text(&pr);
    lint_text(&report);
    let doc = yaml(&pr);
    assert_eq!(doc["name"].as_str(), Some(cell_plan::PR_WORKFLOW));
    let on = &doc["on"];
    assert!(on["pull_request"].is_mapping(), "{pr}");
    for other in [
        "push",
        "schedule",
        "workflow_dispatch",
        "pull_request_target",
    ] {
        assert!(on[other].is_null(), "the PR workflow runs on {other}");
    }
    assert_eq!(
        serde_norway::to_string(&doc["permissions"]).unwrap(),
        "contents: read\n"
    );
    assert!(!pr.contains("secrets."), "a secret in the PR workflow");
    assert!(!pr.contains(": write"), "a write permission: {pr}");
    assert!(
        !pr.contains("cell collect") && !pr.contains("cell commit"),
        "{pr}"
    );
    assert_eq!(
        doc["concurrency"]["cancel-in-progress"].as_bool(),
        Some(true)
    );
    assert!(
        doc["concurrency"]["group"]
            .as_str()
            .unwrap()
            .contains("github.event.pull_request.number")
    );
    let jobs = doc["jobs"].as_mapping().unwrap();
    for (id, job) in jobs {
        let id = id.as_str().unwrap();
        assert!(job["permissions"].is_null(), "{id} has its own permissions");
        let want = if id == "pr" {
            "${{ github.event.pull_request.base.sha }}"
        } else {
            "${{ github.event.pull_request.head.sha }}"
        };
        for c in checkouts(job) {
            assert_eq!(c["with"]["ref"].as_str(), Some(want), "{id}");
            assert_eq!(c["with"]["persist-credentials"].as_bool(), Some(false));
        }
    }
    // The default: one hosted Linux x86-64 cell, every toolchain with rows, no build for the
    // other platforms.
    assert!(jobs.contains_key("run-clang") && jobs.contains_key("run-gcc"));
    assert!(
        !pr.contains("build-macos") && !pr.contains("build-linux-aarch64"),
        "{pr}"
    );
    assert!(pr.contains("Cost per push: 2 job(s), cells ubuntu-24.04 × toolchains clang, gcc"));
    let uploads: Vec<Value> = steps(&doc["jobs"]["pr"])
        .into_iter()
        .filter(|s| {
            s["uses"]
                .as_str()
                .is_some_and(|u| u.starts_with("actions/upload-artifact@"))
        })
        .collect();
    assert_eq!(uploads.len(), 1);
    assert_eq!(
        uploads[0]["with"]["name"].as_str(),
        Some(cell_plan::PR_ARTIFACT)
    );
    insta::assert_snapshot!("pr_workflow", pr);
}

/// A cell-pr run cancelled by a newer push (its concurrency group cancels) still started the
/// reporter, which failed on the missing artifact: one failed run per superseded push.
#[test]
fn a_cancelled_pr_run_is_not_reported() {
    let (_, report) = files(&toml_with(""));
    let doc = yaml(&report);
    let cond = doc["jobs"]["report"]["if"].as_str().unwrap();
    assert!(
        cond.contains("github.event.workflow_run.event == 'pull_request'")
            && cond.contains("github.event.workflow_run.conclusion != 'cancelled'"),
        "{cond}"
    );
}

/// A re-run of the PR workflow downloaded the earlier attempt's `cell-pr` into `jobs/` (the
/// pattern `cell-*` matched it) and then failed to upload `cell-pr` again (no overwrite).
#[test]
fn a_rerun_of_the_pr_job_neither_nests_nor_fails_on_the_earlier_cell_pr() {
    let (pr, _) = files(&toml_with(""));
    let doc = yaml(&pr);
    let pr_steps = steps(&doc["jobs"]["pr"]);
    // The step of `action` whose `with:` has `key`, and that value.
    let with = |action: &str, key: &str| -> Value {
        pr_steps
            .iter()
            .filter(|s| s["uses"].as_str().is_some_and(|u| u.starts_with(action)))
            .find(|s| !s["with"][key].is_null())
            .unwrap()["with"][key]
            .clone()
    };
    let pattern = with("actions/download-artifact@", "pattern")
        .as_str()
        .unwrap()
        .to_owned();
    let glob = |name: &str| {
        let (head, tail) = pattern.split_once('*').unwrap();
        let (mid, end) = tail.split_once('*').unwrap();
        name.strip_prefix(head)
            .and_then(|r| r.find(mid).map(|i| &r[i + mid.len()..]))
            .is_some_and(|r| end.is_empty() || r.ends_with(end))
    };
    assert_eq!(pattern, "cell-*-a*");
    assert!(glob("cell-linux-x86_64-ubuntu-24.04-gcc-a2"));
    assert!(!glob(cell_plan::PR_ARTIFACT));
    assert_eq!(
        with("actions/upload-artifact@", "overwrite").as_bool(),
        Some(true)
    );
}

#[test]
fn the_reporter_runs_nothing_of_the_pull_request() {
    let (_, report) = files(&toml_with("comment = \"on-fail\"\n"));
    lint_text(&report);
    let doc = yaml(&report);
    let trigger = &doc["on"]["workflow_run"];
    assert_eq!(
        trigger["workflows"][0].as_str(),
        Some(cell_plan::PR_WORKFLOW)
    );
    assert_eq!(trigger["types"][0].as_str(), Some("completed"));
    let job = &doc["jobs"]["report"];
    assert_eq!(
        serde_norway::to_string(&job["permissions"]).unwrap(),
        "contents: read\nactions: read\nchecks: write\npull-requests: write\n"
    );
    for (id, job) in doc["jobs"].as_mapping().unwrap() {
        for c in checkouts(job) {
            // The event's commit: the default branch. Nothing the PR names is fetched.
            assert!(
                c["with"]["ref"].is_null(),
                "{id:?} checks out {:?}",
                c["with"]["ref"]
            );
            assert!(c["with"]["repository"].is_null());
        }
    }
    assert!(!report.contains("pull_request.head"), "{report}");
    assert!(
        !report.contains("GITHUB_PATH"),
        "a step changes what later steps run"
    );
    let last = steps(job).pop().unwrap();
    let run = last["run"].as_str().unwrap();
    assert!(
        run.starts_with("\"$RUNNER_TEMP/cell-bin/cell\" comment \"$RUN_ID\""),
        "{run}"
    );
    assert_eq!(last["env"]["POLICY"].as_str(), Some("on-fail"));
    assert_eq!(
        last["env"]["HEAD_SHA"].as_str(),
        Some("${{ github.event.workflow_run.head_sha }}")
    );
    insta::assert_snapshot!("pr_report_workflow", report);
}

#[test]
fn named_cells_and_toolchains_narrow_the_pr_matrix_and_self_hosted_needs_consent() {
    let toml = toml_with("cells = [\"ubuntu-24.04-arm\"]\ntoolchains = [\"gcc\"]\n");
    let (pr, _) = files(&toml);
    let doc = yaml(&pr);
    let jobs = doc["jobs"].as_mapping().unwrap();
    assert!(
        jobs.contains_key("run-gcc") && !jobs.contains_key("run-clang"),
        "{pr}"
    );
    assert!(pr.contains("build-linux-aarch64"), "{pr}");

    let with_box = |table: &str| {
        format!(
            "{BASE}{}{}\n[workflow.pull_requests]\n{table}",
            self_hosted("bench-box", "linux", "x86_64"),
            hosted(&["ubuntu-24.04"])
        )
    };
    let refused = Plan::load_err(&with_box("cells = [\"bench-box\"]\n"));
    assert!(
        refused.contains("workflow.pull_requests.cells[0]"),
        "{refused}"
    );
    assert!(refused.contains("self_hosted = true"), "{refused}");
    let (pr, _) = files(&with_box("cells = [\"bench-box\"]\nself_hosted = true\n"));
    assert!(pr.contains("WARNING: self_hosted = true"), "{pr}");
    // Left out, the default is the hosted cell, never the self-hosted one.
    let (pr, _) = files(&with_box(""));
    assert!(pr.contains("cells ubuntu-24.04 ×"), "{pr}");

    for (table, field) in [
        ("cells = [\"nope\"]\n", "workflow.pull_requests.cells[0]"),
        ("cells = []\n", "workflow.pull_requests.cells"),
        (
            "toolchains = [\"rust\"]\n",
            "workflow.pull_requests.toolchains[0]",
        ),
        (
            "comment = \"sometimes\"\n",
            "workflow.pull_requests.comment",
        ),
        ("comments = \"always\"\n", "comments"),
    ] {
        let e = Plan::load_err(&toml_with(table));
        assert!(e.contains(field), "{table}: {e}");
    }
}

#[test]
fn without_the_table_no_pr_workflow_is_written() {
    let toml = format!("{BASE}{}", hosted(&["ubuntu-24.04"]));
    let rendered = cell_plan::render_all(&Project::of(&toml).plan()).unwrap();
    assert!(
        rendered
            .iter()
            .all(|(p, _)| *p != cell_plan::PR_PATH && *p != cell_plan::REPORT_PATH)
    );
}

/// The config's error, as text.
struct Plan;

impl Plan {
    fn load_err(toml: &str) -> String {
        cell_model::Plan::load(&Project::of(toml).root)
            .unwrap_err()
            .to_string()
    }
}
