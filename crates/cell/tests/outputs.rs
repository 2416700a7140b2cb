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
