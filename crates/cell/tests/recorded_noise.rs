//! `cell gate` through the binary on this VM's recorded noise: two runs drawn again, whole
//! rounds at a time, from the real six-toolchain cell of `fixtures/scale/` (per-round ratios
//! spread ±5–10% on mix and primes), with a row built from the reference's own source.
//!
//! Regression: on such a host every phase was INCONCLUSIVE (the A/A control's width read as
//! bias) and a row about 10% slower passed with exit 0; only the footprint notice said
//! anything had changed.

mod common;

use std::path::{Path, PathBuf};

use cell_schema::CellResult;
use cell_testkit::noise::{recorded_cell, resample, slowed, with_candidate};
use common::cell;

/// The repository's own configuration judges the fixture: its rows are this repository's.
fn config() -> cell_verdict::GateConfig {
    let plan = cell_model::Plan::load(&cell_testkit::repo_root()).unwrap();
    cell_verdict::GateConfig::from_plan(&plan, None, [])
}

/// `cell` as a run dir `name` under `results`, its figures its samples'.
fn write_run(results: &Path, name: &str, cell: &CellResult) -> PathBuf {
    let cell = cell_verdict::recompute::cell(cell, &config()).value;
    let dir = results.join(name);
    let cell_dir = dir.join(cell.cell.id.as_str());
    std::fs::create_dir_all(&cell_dir).unwrap();
    std::fs::write(cell_dir.join("results.json"), cell_schema::to_json(&cell)).unwrap();
    dir
}

/// A baseline and a new run of 10 rounds each, drawn with `seed`, the new one changed.
fn gate(seed: u64, change: impl Fn(CellResult) -> CellResult) -> (i32, String) {
    let tmp = tempfile::tempdir().unwrap();
    let results = tmp.path().join("results");
    let recorded = with_candidate(&recorded_cell(), "clang", "c-cand");
    write_run(
        &results,
        "2026-12-02-101",
        &resample(&recorded, 2 * seed + 1, 10),
    );
    let new = write_run(
        &tmp.path().join("new"),
        "2026-12-03-102",
        &change(resample(&recorded, 2 * seed, 10)),
    );
    let out = cell()
        .env_remove("GITHUB_ACTIONS")
        .env_remove("GITHUB_STEP_SUMMARY")
        .arg("gate")
        .arg(&new)
        .arg("--root")
        .arg(cell_testkit::repo_root())
        .arg("--history")
        .arg(&results)
        .output()
        .unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn a_row_ten_percent_slower_fails_the_gate_through_recorded_noise() {
    let (code, text) = gate(3, |c| slowed(&c, "c-cand", "mix", 1.10));
    assert_eq!(code, 1, "{text}");
    let fail = text
        .lines()
        .find(|l| l.starts_with("  FAIL ") && l.contains("c-cand mix (cpu)"))
        .unwrap_or_else(|| panic!("no FAIL for c-cand on mix:\n{text}"));
    assert!(fail.contains("% slower (+"), "{fail}");
    assert!(fail.contains("beyond TOLERANCE ±1.5%"), "{fail}");
    assert!(fail.contains("this run resolves ±"), "{fail}");
}

#[test]
fn the_same_run_drawn_twice_fails_nowhere_and_says_what_it_resolved() {
    let (code, text) = gate(3, |c| c);
    assert_eq!(code, 0, "{text}");
    assert!(!text.contains("  FAIL "), "{text}");
    let inconclusive: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("  INCONCLUSIVE "))
        .collect();
    assert!(!inconclusive.is_empty(), "go and mono are wide: {text}");
    for l in inconclusive {
        assert!(
            l.contains("resolves ±") || l.contains("resolved to ±"),
            "{l}"
        );
        assert!(!l.contains("too noisy"), "{l}");
    }
    assert!(
        text.contains("unit(s) judged together: each interval at"),
        "{text}"
    );
}
