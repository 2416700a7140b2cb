//! The samples are the record: an artifact's stated statistics are never believed. Each case
//! forges one figure of a real job result (the frozen `cell local` runs of the fixture project),
//! collects it beside an untouched earlier run, and checks that the job is a named failure and
//! that the verdict is the samples' own, not the forged figure's.
//!
//! Regressions: a forged `ratio.cpu` of 0.5 over untouched samples failed the row on 0.5;
//! doubled samples under the old ratio passed; a tooth block kept at 3.8 over a slow row that
//! ran as fast as the reference hid the tooth failure; `answer_ok: true` over wrong runs made the
//! failure vanish; a changed `expected` was never compared with `[expect]`; `ratio.n` of
//! 1,000,000 over 3 runs and a `level` of 1.5 were accepted.

mod common;

use std::path::{Path, PathBuf};

use cell_testkit::copy_dir;
use serde_json::{Value, json};

use common::{cell, read_json};

const RUN_A: &str = "2026-12-01-local-093937";
const RUN_B: &str = "2026-12-01-local-093940";
const CELL: &str = "linux-x86_64-local";

fn fixtures() -> PathBuf {
    cell_testkit::fixtures().join("workload")
}

/// Collects the job dirs under `jobs` as run `id` into `results`.
fn collect(jobs: &Path, results: &Path, id: &str) -> assert_cmd::assert::Assert {
    cell()
        .arg("--root")
        .arg(fixtures().join("project"))
        .args(["collect", id, "--date", "2026-12-01", "--from-dir"])
        .arg(jobs)
        .arg("--results")
        .arg(results)
        .assert()
}

/// The gate of run `id` against the history in `results`, as JSON.
fn gate(results: &Path, id: &str) -> Value {
    let out = cell()
        .env_remove("GITHUB_ACTIONS")
        .env_remove("GITHUB_STEP_SUMMARY")
        .arg("--root")
        .arg(fixtures().join("project"))
        .args(["--format", "json", "gate"])
        .arg(results.join(format!("2026-12-01-{id}")))
        .output()
        .unwrap();
    assert!(out.status.code().is_some_and(|c| c < 2), "{out:?}");
    serde_json::from_slice(&out.stdout).unwrap()
}

/// A history holding run A as run 101, and run B's job dirs with `edit` applied to toolchain
/// `tc`'s results.json, collected as run 102: the merged cell, and the gate of run 102.
struct Case {
    collect_code: i32,
    merged: Value,
    gate: Value,
}

fn forge(tc: &str, edit: impl Fn(&mut Value)) -> Case {
    let tmp = tempfile::tempdir().unwrap();
    let results = tmp.path().join("results");
    collect(&fixtures().join("jobs").join(RUN_A), &results, "101").code(0);
    let jobs = tmp.path().join("jobs");
    copy_dir(&fixtures().join("jobs").join(RUN_B), &jobs);
    let file = jobs
        .join(format!("cell-{CELL}-{tc}-a1"))
        .join("results.json");
    let mut j = read_json(&file);
    edit(&mut j);
    std::fs::write(&file, serde_json::to_string_pretty(&j).unwrap()).unwrap();
    let out = collect(&jobs, &results, "102");
    let collect_code = out.get_output().status.code().unwrap();
    let merged = read_json(&results.join(format!("2026-12-01-102/{CELL}/results.json")));
    let gate = gate(&results, "102");
    Case {
        collect_code,
        merged,
        gate,
    }
}

/// The untouched run B, collected the same way.
fn genuine() -> Case {
    forge("gcc", |_| {})
}

fn phase<'a>(j: &'a mut Value, row: &str, phase: &str) -> &'a mut Value {
    &mut j["rows"][row]["phases"][phase]
}

/// The tooth's slow row as fast as its fast one: each slow run takes exactly the time of the
/// run it pairs with.
fn slow_as_fast(j: &mut Value) {
    let fast = phase(j, "c-fast", "mix")["runs"].clone();
    let slow = phase(j, "c-slow", "mix")["runs"].as_array_mut().unwrap();
    for r in slow.iter_mut() {
        let paired = fast
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["round"] == r["round"] && f["seq"] == r["paired_with"])
            .unwrap();
        r["wall_s"] = paired["wall_s"].clone();
        r["cpu_s"] = paired["cpu_s"].clone();
    }
}

fn failures(c: &Case) -> String {
    c.merged["failures"].to_string()
}

fn gate_failures(c: &Case) -> String {
    c.gate["cells"][0]["failures"].to_string()
}

fn verdict<'a>(c: &'a Case, row: &str, phase: &str) -> &'a Value {
    c.gate["cells"][0]["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["row"] == row && v["phase"] == phase)
        .unwrap_or_else(|| panic!("no verdict for {row} {phase}: {}", c.gate))
}

#[test]
fn an_untouched_run_recomputes_to_what_it_states() {
    let c = genuine();
    // Run B's clang job has a wrong answer of its own (row c-wrong): collect trips on that.
    assert_eq!(c.collect_code, 1);
    assert!(
        !failures(&c).contains("disagree"),
        "the job's own figures are its samples': {}",
        failures(&c)
    );
    assert!(
        !gate_failures(&c).contains("figures"),
        "{}",
        gate_failures(&c)
    );
    // Judged on its samples and its baseline's together: no call beyond what they resolve.
    let v = verdict(&c, "gcc-O2", "mix");
    assert_ne!(v["status"], "fail", "{v}");
    assert!(v["change"]["resolution"].as_f64().unwrap() > 0.0, "{v}");
}

#[test]
fn a_forged_ratio_over_untouched_samples_is_named_and_judged_on_the_samples() {
    let c = forge("gcc", |j| {
        phase(j, "gcc-O2", "mix")["ratio"]["cpu"] =
            json!({"n": 3, "median": 0.5, "lo": 0.49, "hi": 0.51, "level": 0.75});
    });
    assert_eq!(c.collect_code, 1);
    let f = failures(&c);
    assert!(
        f.contains("gcc: its stated figures disagree with its samples")
            && f.contains("row gcc-O2 on mix: cpu ratio 0.5"),
        "{f}"
    );
    // The record holds the samples' ratio, and the gate judges it: no FAIL on 0.5.
    let genuine = genuine();
    let ratio = |c: &Case| c.merged["rows"]["gcc-O2"]["phases"]["mix"]["ratio"]["cpu"].clone();
    assert!(ratio(&genuine)["median"].as_f64().unwrap() > 0.9);
    assert_eq!(ratio(&c), ratio(&genuine));
    assert_eq!(
        verdict(&c, "gcc-O2", "mix"),
        verdict(&genuine, "gcc-O2", "mix")
    );
    assert!(
        gate_failures(&c).contains("figures: job gcc's artifact, when collected"),
        "{}",
        gate_failures(&c)
    );
}

/// Judged on the samples: their change is the doubling, whatever the stated ratio says. The
/// recorded runs hold three rounds a side, too few for a call at the run's level: the
/// verdict names the change and why it makes none.
#[test]
fn doubled_samples_under_the_old_ratio_are_judged_on_the_samples() {
    let c = forge("gcc", |j| {
        let runs = phase(j, "gcc-O2", "mix")["runs"].as_array_mut().unwrap();
        for r in runs {
            for k in ["wall_s", "cpu_s"] {
                r[k] = json!(r[k].as_f64().unwrap() * 2.0);
            }
        }
    });
    assert_eq!(c.collect_code, 1);
    assert!(
        failures(&c).contains("row gcc-O2 on mix: cpu ratio"),
        "{}",
        failures(&c)
    );
    let v = verdict(&c, "gcc-O2", "mix");
    assert!(v["new"]["median"].as_f64().unwrap() > 1.9, "{v}");
    assert!(v["change"]["median"].as_f64().unwrap() > 1.9, "{v}");
    assert_eq!(v["status"], "inconclusive", "{v}");
    assert!(
        v["message"]
            .as_str()
            .unwrap()
            .contains("3 round(s) against 3 cannot reach"),
        "{v}"
    );
}

#[test]
fn a_tooth_kept_over_a_slow_row_that_ran_as_fast_as_the_reference_fails() {
    let c = forge("gcc", slow_as_fast);
    assert_eq!(c.collect_code, 1);
    let f = failures(&c);
    assert!(f.contains("tooth c-slow/c-fast on mix: 3.8427"), "{f}");
    let tooth = &c.merged["jobs"]["gcc"]["tooth"];
    assert_eq!(tooth["ratio"]["median"], 1.0, "{tooth}");
    assert_eq!(tooth["ok"], false);
    assert!(
        gate_failures(&c).contains("tooth c-slow/c-fast") && gate_failures(&c).contains("gcc"),
        "{}",
        gate_failures(&c)
    );
}

#[test]
fn answer_ok_stated_over_wrong_runs_is_still_a_wrong_answer() {
    let c = forge("clang", |j| {
        let p = phase(j, "c-wrong", "mix");
        p["answer_ok"] = json!(true);
        p.as_object_mut().unwrap().remove("wrong");
    });
    assert_eq!(c.collect_code, 1);
    assert!(
        failures(&c).contains("row c-wrong on mix: answer_ok true stated"),
        "{}",
        failures(&c)
    );
    assert!(
        gate_failures(&c).contains("wrong answer: row c-wrong"),
        "{}",
        gate_failures(&c)
    );
}

#[test]
fn an_expected_answer_that_is_not_the_config_s_is_a_failure() {
    let c = forge("gcc", |j| {
        phase(j, "gcc-O2", "mix")["expected"] = json!("41\n");
    });
    assert_eq!(c.collect_code, 1);
    assert!(
        failures(&c).contains("row gcc-O2 on mix: compared with an expected answer"),
        "{}",
        failures(&c)
    );
    assert!(
        gate_failures(&c).contains("wrong answer: row gcc-O2 (job gcc) on phase mix"),
        "{}",
        gate_failures(&c)
    );
}

#[test]
fn a_ratio_count_and_level_the_samples_cannot_give_are_named() {
    let c = forge("gcc", |j| {
        let r = &mut phase(j, "gcc-O2", "fib")["ratio"]["cpu"];
        r["n"] = json!(1_000_000);
        r["level"] = json!(1.5);
        j["protocol"]["ci_level"] = json!(0.5);
    });
    assert_eq!(c.collect_code, 1);
    let f = failures(&c);
    assert!(f.contains("n 1000000, level 1.5) stated"), "{f}");
    assert!(
        f.contains("protocol: ci_level 0.5 stated, CI_LEVEL is 0.95"),
        "{f}"
    );
    let fib = &c.merged["rows"]["gcc-O2"]["phases"]["fib"];
    assert_eq!(fib["ratio"]["cpu"]["n"], 3, "{fib}");
}

/// Regression: an artifact without its A/A control row (or without one of the control's
/// phases) was collected as `ok`, and the gate passed its rows: the control's check ran only
/// over the phases the control held. Now a phase no control measured is unjudged, and a job
/// stating otherwise disagrees with its samples.
#[test]
fn a_dropped_control_leaves_its_phases_unjudged_never_passed() {
    for drop_phase_only in [false, true] {
        let c = forge("gcc", |j| {
            if drop_phase_only {
                j["rows"]["control"]["phases"]
                    .as_object_mut()
                    .unwrap()
                    .remove("mix");
            } else {
                j["rows"].as_object_mut().unwrap().remove("control");
            }
        });
        let f = failures(&c);
        assert!(f.contains("disagree") && f.contains("gcc"), "{f}");
        let v = verdict(&c, "gcc-O2", "mix");
        assert_ne!(v["status"], "pass", "{v}");
        assert!(v.to_string().contains("control"), "{v}");
    }
}

/// Regression: `"tooth": null` in an artifact dropped the tooth's check at collect (the job
/// was recorded ok while its slow row ran as fast as the fast one). Now the tooth is taken
/// from the samples and the stated absence is named.
#[test]
fn a_tooth_stated_as_none_is_taken_from_the_samples() {
    let c = forge("gcc", |j| {
        slow_as_fast(j);
        j["tooth"] = Value::Null;
    });
    assert_eq!(c.collect_code, 1);
    let f = failures(&c);
    assert!(f.contains("tooth: none stated"), "{f}");
    let tooth = &c.merged["jobs"]["gcc"]["tooth"];
    assert_eq!(tooth["ok"], false, "{tooth}");
    assert_eq!(c.merged["jobs"]["gcc"]["verdict"]["status"], "failed");
}
