//! `cell run` through the binary: real clang, real processes, tiny workloads.

mod common;

use cell_testkit::snippets::c_row;
use common::{VERSIONS, assert_valid, cell, project, read_json, repo_root};
use predicates::prelude::*;

#[test]
fn a_job_writes_results_facts_and_markdown_that_validate() {
    let tmp = tempfile::tempdir().unwrap();
    let root = project(tmp.path(), VERSIONS, "");
    let out = tmp.path().join("job");
    cell()
        .args([
            "run",
            "--cell",
            "local",
            "--toolchain",
            "clang",
            "--seed",
            "7",
        ])
        .arg("--root")
        .arg(&root)
        .arg("--out")
        .arg(&out)
        .assert()
        .success()
        .stdout(predicate::str::contains("c-slow"));
    let results = read_json(&out.join("results.json"));
    assert_valid("results", &results);
    assert_valid("facts", &read_json(&out.join("facts.json")));
    assert!(
        std::fs::read_to_string(out.join("RESULTS.md"))
            .unwrap()
            .contains("## mix")
    );
    assert_eq!(results["schema_version"], 1);
    assert_eq!(results["protocol"]["seed"], 7);
    assert_eq!(results["protocol"]["measured_rounds"], 3);
    // The reference and the control are byte-identical binaries under different paths.
    let rows = &results["rows"];
    assert_eq!(
        rows["c-fast"]["build"]["sha256"],
        rows["control"]["build"]["sha256"]
    );
    assert_ne!(
        rows["c-fast"]["build"]["binary"],
        rows["control"]["build"]["binary"]
    );
    // Every repetition is kept, warm-up included, and the tooth sees its 4× the work.
    assert_eq!(
        rows["c-slow"]["phases"]["mix"]["runs"]
            .as_array()
            .unwrap()
            .len(),
        4
    );
    let tooth = results["tooth"]["ratio"]["median"].as_f64().unwrap();
    assert!(tooth > 3.0, "tooth {tooth}");
    // The version is the one printed by the clang that built, recorded with its path.
    let v = &results["versions"]["clang"];
    assert!(v["printed"].as_str().unwrap().contains("clang version"));
    assert_eq!(rows["c-fast"]["build"]["argv"][0], v["path"]);
}

#[test]
fn a_wrong_answer_fails_the_job_names_the_row_and_keeps_its_timings() {
    let tmp = tempfile::tempdir().unwrap();
    let root = project(tmp.path(), VERSIONS, &common::WRONG_TOML);
    let out = tmp.path().join("job");
    cell()
        .args(["run", "--cell", "local", "--toolchain", "clang"])
        .arg("--root")
        .arg(&root)
        .arg("--out")
        .arg(&out)
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "wrong answer: row `c-wrong` on phase `mix`",
        ));
    let results = read_json(&out.join("results.json"));
    assert_valid("results", &results);
    let mix = &results["rows"]["c-wrong"]["phases"]["mix"];
    assert_eq!(mix["answer_ok"], false);
    assert!(mix["wrong"].as_str().unwrap().contains("41"));
    assert_eq!(mix["runs"].as_array().unwrap().len(), 4);
    assert!(mix["stats"]["cpu"]["median"].as_f64().unwrap() > 0.0);
    assert_eq!(
        results["rows"]["c-wrong"]["phases"]["fib"]["answer_ok"],
        true
    );
    assert_eq!(results["verdict"]["status"], "failed");
}

#[test]
fn a_relative_out_dir_builds_every_row_of_the_real_workload() {
    let tmp = tempfile::tempdir().unwrap();
    cell()
        .current_dir(tmp.path())
        .args([
            "run",
            "--cell",
            "local",
            "--toolchain",
            "clang",
            "--reps",
            "1",
            "--out",
            "rel/dir",
        ])
        .arg("--root")
        .arg(repo_root())
        .assert()
        .success();
    let results = read_json(&tmp.path().join("rel/dir/results.json"));
    assert_valid("results", &results);
    for row in ["c-O2", "c-O0", "control"] {
        let bin = results["rows"][row]["build"]["binary"].as_str().unwrap();
        assert!(
            std::path::Path::new(bin).is_absolute() && std::path::Path::new(bin).exists(),
            "{row}: {bin}"
        );
        assert!(
            results["rows"][row]["phases"]["mix"]["answer_ok"]
                .as_bool()
                .unwrap()
        );
    }
}

#[test]
fn an_absent_toolchain_is_skipped_as_not_installed() {
    let tmp = tempfile::tempdir().unwrap();
    let root = project(tmp.path(), VERSIONS, &common::GHOST_TOML);
    let out = tmp.path().join("job");
    cell().args(["run", "--cell", "local", "--toolchain", "ghost"]).arg("--root").arg(&root).arg("--out").arg(&out)
        .assert()
        .success()
        .stderr(predicate::str::contains("skipped ghost-O2: not installed: `ghostc` is not on PATH (apt-get install ghost-compiler)"));
    let results = read_json(&out.join("results.json"));
    assert_eq!(results["skipped"][0]["reason"], "not_installed");
    assert_eq!(results["skipped"][0]["row"], "ghost-O2");
}

#[test]
fn a_missing_reference_compiler_is_exit_2_saying_what_to_install() {
    let tmp = tempfile::tempdir().unwrap();
    let root = project(tmp.path(), VERSIONS, "");
    let empty = tmp.path().join("empty-bin");
    std::fs::create_dir_all(&empty).unwrap();
    cell().env("PATH", &empty).args(["run", "--cell", "local", "--toolchain", "clang"]).arg("--root").arg(&root).arg("--out").arg(tmp.path().join("job"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("the reference row `c-fast` cannot be built: not installed: `clang` is not on PATH (apt-get install clang)"));
}

#[test]
fn a_failed_build_is_skipped_with_its_exit_code_and_last_lines() {
    let tmp = tempfile::tempdir().unwrap();
    let extra = c_row(
        "c-broken",
        "clang",
        "does not compile",
        "clang",
        &["-O2", "-DITER=syntax error"],
    );
    let root = project(tmp.path(), VERSIONS, &extra);
    let out = tmp.path().join("job");
    cell()
        .args([
            "run",
            "--cell",
            "local",
            "--toolchain",
            "clang",
            "--reps",
            "2",
        ])
        .arg("--root")
        .arg(&root)
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    let results = read_json(&out.join("results.json"));
    let s = &results["skipped"][0];
    assert_eq!(s["reason"], "build_failed");
    assert_eq!(s["exit_code"], 1);
    assert!(
        s["log_tail"]
            .as_array()
            .unwrap()
            .iter()
            .any(|l| l.as_str().unwrap().contains("error"))
    );
}

#[test]
fn unknown_cell_or_toolchain_is_exit_2_listing_the_known_ones() {
    cell()
        .args(["run", "--cell", "nowhere", "--toolchain", "clang"])
        .arg("--root")
        .arg(repo_root())
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("unknown cell `nowhere`")
                .and(predicate::str::contains("ubuntu-24.04")),
        );
    cell()
        .args(["run", "--cell", "local", "--toolchain", "fortran"])
        .arg("--root")
        .arg(repo_root())
        .assert()
        .code(2)
        .stderr(predicate::str::contains("unknown toolchain `fortran`").and(
            predicate::str::contains("clang, cs, gcc, go, python, rust, zig"),
        ));
}

#[test]
fn a_toolchain_without_rows_points_at_its_servers() {
    cell()
        .args(["run", "--cell", "local", "--toolchain", "python"])
        .arg("--root")
        .arg(repo_root())
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "toolchain `python` has no workload rows: it only builds or runs servers (--suite http --server python)",
        ));
    cell()
        .args(["run", "--cell", "local"])
        .arg("--root")
        .arg(repo_root())
        .assert()
        .code(2)
        .stderr(predicate::str::contains("cell run needs --toolchain NAME"));
    let tmp = tempfile::tempdir().unwrap();
    cell()
        .args(["local", "--toolchains", "python", "--out"])
        .arg(tmp.path().join("out"))
        .arg("--root")
        .arg(repo_root())
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "toolchain `python` has no workload rows",
        ));
    assert!(!tmp.path().join("out").exists());
}
