//! The files `cell` writes from recorded results, snapshotted byte for byte: the merge of a
//! run's jobs (`cell collect --from-dir`), the gate (`gate.json`, its lines, annotations and
//! step summary) and the report. The inputs are two real `cell local` runs of the fixture
//! project, frozen under `crates/cell-testkit/fixtures/workload/`, so nothing here is timed.

mod common;

use std::collections::BTreeMap;
use std::path::PathBuf;

use cell_testkit::{copy_dir, dump, files};

use common::cell;

const RUN_A: &str = "2026-12-01-local-093937";
const RUN_B: &str = "2026-12-01-local-093940";

fn fixtures() -> PathBuf {
    cell_testkit::fixtures().join("workload")
}

#[test]
fn collect_from_a_directory_writes_the_merged_run() {
    let tmp = tempfile::tempdir().unwrap();
    let results = tmp.path().join("results");
    for (id, run) in [("101", RUN_A), ("102", RUN_B)] {
        cell()
            .arg("--root")
            .arg(fixtures().join("project"))
            .args(["collect", id, "--date", "2026-12-01", "--from-dir"])
            .arg(fixtures().join("jobs").join(run))
            .arg("--results")
            .arg(&results)
            .assert()
            .code(predicates::ord::lt(2));
    }
    let written = files(&results);
    insta::assert_snapshot!("collect_run_a", dump(&filter(&written, "2026-12-01-101/")));
    insta::assert_snapshot!("collect_run_b", dump(&filter(&written, "2026-12-01-102/")));
}

fn filter(all: &BTreeMap<String, String>, prefix: &str) -> BTreeMap<String, String> {
    all.iter()
        .filter_map(|(k, v)| k.strip_prefix(prefix).map(|k| (k.to_owned(), v.clone())))
        .collect()
}

#[test]
fn gate_of_run_b_against_run_a() {
    let tmp = tempfile::tempdir().unwrap();
    let history = tmp.path().join("history");
    copy_dir(&fixtures().join("history"), &history);
    let summary = tmp.path().join("summary.md");
    let out = cell()
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_STEP_SUMMARY", &summary)
        .arg("gate")
        .arg(history.join(RUN_B))
        .arg("--root")
        .arg(fixtures().join("project"))
        .assert()
        .code(1);
    let stdout = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    insta::assert_snapshot!("gate_stdout", stdout);
    insta::assert_snapshot!(
        "gate_json",
        std::fs::read_to_string(history.join(RUN_B).join("gate.json")).unwrap()
    );
    insta::assert_snapshot!(
        "gate_step_summary",
        std::fs::read_to_string(&summary).unwrap()
    );
    let json = cell()
        .env_remove("GITHUB_ACTIONS")
        .env_remove("GITHUB_STEP_SUMMARY")
        .args(["--format", "json", "gate"])
        .arg(history.join(RUN_B))
        .arg("--root")
        .arg(fixtures().join("project"))
        .assert()
        .code(1);
    assert_eq!(
        String::from_utf8(json.get_output().stdout.clone()).unwrap(),
        std::fs::read_to_string(history.join(RUN_B).join("gate.json")).unwrap()
    );
}

#[test]
fn report_of_the_two_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("report");
    cell()
        .args(["report", "--history"])
        .arg(fixtures().join("history"))
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    let written = files(&out);
    assert_eq!(
        written.keys().collect::<Vec<_>>(),
        [
            "README.md",
            "charts/linux-x86_64-local/fib.svg",
            "charts/linux-x86_64-local/footprint.svg",
            "charts/linux-x86_64-local/mix.svg",
            "footprint.csv",
            "index.html",
            "report.json",
        ]
    );
    for (path, text) in &written {
        insta::assert_snapshot!(format!("report_{}", path.replace('/', "_")), text);
    }
    // Every sample, when asked for.
    cell()
        .args(["report", "--samples", "--history"])
        .arg(fixtures().join("history"))
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    let written = files(&out);
    insta::assert_snapshot!("report_samples.csv", &written["samples.csv"]);
}

/// The upgrade: a history committed in schema version 1, a new run collected (written in the
/// current version) from the same jobs as run B. The gate of the new run against run A is the
/// gate of run B against run A, verdict for verdict; the committed files are not touched; the
/// report reads the mixed history.
#[test]
fn a_run_written_in_version_two_is_gated_against_a_version_one_history() {
    let tmp = tempfile::tempdir().unwrap();
    let history = tmp.path().join("history");
    copy_dir(&fixtures().join("history"), &history);
    let before = files(&history);
    cell()
        .arg("--root")
        .arg(fixtures().join("project"))
        .args(["collect", "102", "--date", "2026-12-01", "--from-dir"])
        .arg(fixtures().join("jobs").join(RUN_B))
        .arg("--results")
        .arg(&history)
        .assert()
        .code(predicates::ord::lt(2));
    let new_cell = history.join("2026-12-01-102/linux-x86_64-local/results.json");
    let text = std::fs::read_to_string(&new_cell).unwrap();
    assert!(text.contains("\"schema_version\": 2") && text.contains("\"samples\": {"));
    let gate = |run: &str| -> serde_json::Value {
        let out = cell()
            .env_remove("GITHUB_ACTIONS")
            .env_remove("GITHUB_STEP_SUMMARY")
            .args(["--format", "json", "gate"])
            .arg(history.join(run))
            .args(["--baseline", RUN_A, "--root"])
            .arg(fixtures().join("project"))
            .assert()
            .code(1);
        serde_json::from_slice(&out.get_output().stdout).unwrap()
    };
    let (v1, v2) = (gate(RUN_B), gate("2026-12-01-102"));
    assert_eq!(v1["cells"][0]["verdicts"], v2["cells"][0]["verdicts"]);
    assert_eq!(v1["cells"][0]["failures"], v2["cells"][0]["failures"]);
    // Notices differ by provenance alone: `cell local` recorded its missing job, a collect
    // from the job dirs has no plan to miss it by.
    for key in ["pass", "fail", "inconclusive", "failures"] {
        assert_eq!(v1["summary"][key], v2["summary"][key], "{key}");
    }
    for (path, bytes) in &before {
        let now = std::fs::read_to_string(history.join(path)).unwrap();
        if !path.ends_with("gate.json") {
            assert_eq!(
                &now, bytes,
                "{path}: a committed version-1 file is never rewritten"
            );
        }
    }
    let out = tmp.path().join("report");
    cell()
        .args(["report", "--history"])
        .arg(&history)
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    let runs = report["cells"]["linux-x86_64-local"]["runs"]
        .as_array()
        .unwrap();
    assert_eq!(runs.len(), 3, "{runs:?}");
}
