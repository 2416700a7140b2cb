//! The samples are the record of the http and soak suites too. Each case forges a recorded job
//! result of a real session (`http-python`, `soak-python`), collects it beside an untouched
//! earlier run, and checks that the job is a named failure and that the record and the gate
//! hold the runs' and samples' own figures, not the forged ones.
//!
//! Regressions: collect and the gate believed a suite job's stated medians: a run's req/s
//! halved under the old median kept the old median; a run stated clean with its load generator
//! at 97% of its CPU stayed in the medians; a soak stated flat over samples that climb 1 MiB a
//! second passed the gate; a negative req/s and more clean runs than runs were merged.

mod common;

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use common::{cell, read_json};

const CELL: &str = "linux-x86_64-local";
const HTTP: &str = "http-python";
const SOAK: &str = "soak-python";

fn fixtures() -> PathBuf {
    cell_testkit::fixtures()
}

/// The recorded suite jobs as a run's artifacts under `dir`, `edit` applied to job `job`.
fn artifacts(dir: &Path, job: &str, edit: &dyn Fn(&mut Value)) {
    for (name, file) in [(HTTP, "http/results.json"), (SOAK, "soak/results.json")] {
        let mut j = read_json(&fixtures().join(file));
        if name == job {
            edit(&mut j);
        }
        let to = dir.join(format!("cell-{CELL}-{name}-a1"));
        std::fs::create_dir_all(&to).unwrap();
        std::fs::write(
            to.join("results.json"),
            serde_json::to_string_pretty(&j).unwrap(),
        )
        .unwrap();
    }
}

fn collect(jobs: &Path, results: &Path, id: &str) -> std::process::Output {
    cell()
        .arg("--root")
        .arg(fixtures().join("workload/project"))
        .args(["collect", id, "--date", "2026-12-01", "--from-dir"])
        .arg(jobs)
        .arg("--results")
        .arg(results)
        .output()
        .unwrap()
}

/// The gate of run `id` against the history in `results`, as JSON.
fn gate(results: &Path, id: &str) -> Value {
    let out = cell()
        .env_remove("GITHUB_ACTIONS")
        .env_remove("GITHUB_STEP_SUMMARY")
        .arg("--root")
        .arg(fixtures().join("workload/project"))
        .args(["--format", "json", "gate"])
        .arg(results.join(format!("2026-12-01-{id}")))
        .output()
        .unwrap();
    assert!(out.status.code().is_some_and(|c| c < 2), "{out:?}");
    serde_json::from_slice(&out.stdout).unwrap()
}

fn merged_file(results: &Path, id: &str) -> PathBuf {
    results.join(format!("2026-12-01-{id}/{CELL}/results.json"))
}

/// Run 101 untouched, then run 102 with `edit` applied to `job`: collect's exit code, the
/// merged cell of 102 and its gate.
struct Case {
    code: i32,
    stderr: String,
    merged: Value,
    gate: Value,
}

fn forge(job: &str, edit: impl Fn(&mut Value)) -> Case {
    let tmp = tempfile::tempdir().unwrap();
    let results = tmp.path().join("results");
    let first = tmp.path().join("first");
    artifacts(&first, "", &|_| {});
    let out = collect(&first, &results, "101");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let jobs = tmp.path().join("jobs");
    artifacts(&jobs, job, &edit);
    let out = collect(&jobs, &results, "102");
    Case {
        code: out.status.code().unwrap(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        merged: read_json(&merged_file(&results, "102")),
        gate: gate(&results, "102"),
    }
}

fn failures(c: &Case) -> String {
    c.merged["failures"].to_string()
}

fn gate_failures(c: &Case) -> String {
    c.gate["cells"][0]["failures"].to_string()
}

fn tool<'a>(v: &'a Value, tool: &str) -> &'a Value {
    &v["http"]["python"]["tools"][tool]
}

fn job_tool<'a>(j: &'a mut Value, tool: &str) -> &'a mut Value {
    &mut j["servers"]["python"]["tools"][tool]
}

fn verdict<'a>(c: &'a Case, tool: &str) -> &'a Value {
    let phase = format!("plaintext.keep-alive.{tool}");
    c.gate["cells"][0]["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["row"] == "http-python" && v["phase"] == phase.as_str())
        .unwrap_or_else(|| panic!("no verdict for {tool}: {}", c.gate))
}

#[test]
fn an_untouched_suite_artifact_recomputes_to_what_it_states() {
    let c = forge("", |_| {});
    assert_eq!(c.code, 0, "{}", c.stderr);
    assert!(!failures(&c).contains("disagree"), "{}", failures(&c));
    assert!(
        !gate_failures(&c).contains("figures"),
        "{}",
        gate_failures(&c)
    );
    // The record is the artifact's, figure for figure.
    let http = read_json(&fixtures().join("http/results.json"));
    assert_eq!(
        c.merged["http"]["python"]["tools"],
        http["servers"]["python"]["tools"]
    );
    let soak = read_json(&fixtures().join("soak/results.json"));
    for k in [
        "fit",
        "fit_minima",
        "verdict",
        "peak_rss_kib",
        "cpu_ms_per_1k",
    ] {
        assert_eq!(
            c.merged["soak"]["python"][k], soak["servers"]["python"][k],
            "{k}"
        );
    }
    assert_eq!(verdict(&c, "oha")["status"], "pass");
}

#[test]
fn a_median_kept_over_runs_that_halved_is_named_and_judged_on_the_runs() {
    let c = forge(HTTP, |j| {
        for r in job_tool(j, "oha")["runs"].as_array_mut().unwrap() {
            r["load"]["rps"] = json!(r["load"]["rps"].as_f64().unwrap() / 2.0);
        }
    });
    assert_eq!(c.code, 1, "{}", c.stderr);
    let f = failures(&c);
    assert!(
        f.contains("http-python: its stated figures disagree with its samples")
            && f.contains(
                "http server python, plaintext over keep-alive under oha: rps 8811.3578 stated, the samples give 4405.6789"
            )
            && f.contains("rps_range 8784.3367–8838.3789 stated"),
        "{f}"
    );
    // The record holds the runs' median, and the gate judges it, naming the failure again.
    assert_eq!(tool(&c.merged, "oha")["rps"], 4405.6789);
    let v = verdict(&c, "oha");
    assert_eq!(v["new"]["median"], 4405.6789, "{v}");
    assert_ne!(v["status"], "pass", "{v}");
    assert!(
        gate_failures(&c).contains("figures: job http-python's artifact, when collected"),
        "{}",
        gate_failures(&c)
    );
}

#[test]
fn a_run_stated_clean_with_its_load_generator_above_the_limit_is_named() {
    // A forgery that keeps every median consistent with its runs as stated: only the run's
    // own CPU share gives it away.
    let c = forge(HTTP, |j| {
        job_tool(j, "wrk")["runs"][0]["load_cpu_share"] = json!(0.97);
    });
    assert_eq!(c.code, 1, "{}", c.stderr);
    let f = failures(&c);
    assert!(
        f.contains(
            "http server python, plaintext over keep-alive under wrk: run 0 (seq 0) clean stated, but its CPU shares contaminate it (load generator 0.97 of its CPU, HTTP_LOAD_CPU_MAX 0.9"
        ),
        "{f}"
    );
    assert!(
        !f.contains("under wrk: rps"),
        "the medians agree as stated: {f}"
    );
    // Judged without it: one clean run, its req/s the median.
    let wrk = tool(&c.merged, "wrk");
    assert_eq!(wrk["clean_runs"], 1, "{wrk}");
    assert_eq!(wrk["rps"], 9985.9839, "{wrk}");
    assert!(
        wrk["runs"][0]["contaminated"]
            .to_string()
            .contains("load generator at 97% of its CPU (limit 90%)"),
        "{wrk}"
    );
    assert_eq!(verdict(&c, "wrk")["new"]["median"], 9985.9839);
}

#[test]
fn a_soak_stated_flat_over_samples_that_drift_fails() {
    let c = forge(SOAK, |j| {
        for s in j["servers"]["python"]["samples"].as_array_mut().unwrap() {
            // 1 MiB a second on top of the recorded RSS.
            let t = s["t_s"].as_f64().unwrap();
            s["rss_kib"] = json!(s["rss_kib"].as_u64().unwrap() + (t * 1024.0) as u64);
        }
    });
    assert_eq!(c.code, 1, "{}", c.stderr);
    let f = failures(&c);
    assert!(
        f.contains("soak-python: its stated figures disagree with its samples")
            && f.contains("soak server python: fit -32.7549 KiB/min")
            && f.contains("soak server python: verdict flat stated, the samples give drifted"),
        "{f}"
    );
    let s = &c.merged["soak"]["python"];
    assert_eq!(s["verdict"], "drifted", "{s}");
    assert!(
        s["fit"]["slope_kib_per_min"].as_f64().unwrap() > 60_000.0,
        "{s}"
    );
    let g = gate_failures(&c);
    assert!(
        g.contains("soak server python drifted")
            && g.contains("figures: job soak-python's artifact, when collected"),
        "{g}"
    );
}

#[test]
fn a_negative_req_s_or_more_clean_runs_than_runs_is_refused_naming_the_field() {
    for (edit, named) in [
        (
            &(|j: &mut Value| job_tool(j, "oha")["runs"][1]["load"]["rps"] = json!(-5.0))
                as &dyn Fn(&mut Value),
            "load rps of http server python, plaintext over keep-alive under oha, run 1 (seq 3) is -5 (impossible)",
        ),
        (
            &|j: &mut Value| job_tool(j, "wrk")["clean_runs"] = json!(5),
            "http server python, plaintext over keep-alive under wrk counts 5 clean runs of 2 (impossible)",
        ),
    ] {
        let tmp = tempfile::tempdir().unwrap();
        let jobs = tmp.path().join("jobs");
        artifacts(&jobs, HTTP, edit);
        let results = tmp.path().join("results");
        let out = collect(&jobs, &results, "102");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert!(
            stderr.contains(&format!("cell-{CELL}-{HTTP}-a1/results.json"))
                && stderr.contains(named),
            "{stderr}"
        );
        // The job is refused, never merged; the run is written partial naming it.
        let merged = read_json(&merged_file(&results, "102"));
        assert!(
            merged["http"]
                .as_object()
                .is_none_or(serde_json::Map::is_empty),
            "{merged}"
        );
        assert_eq!(merged["soak"]["python"]["verdict"], "flat");
        let record = read_json(&results.join("2026-12-01-102/run.json"));
        assert_eq!(record["run"]["partial"], true, "{record}");
        assert!(record["missing"].to_string().contains(named), "{record}");
    }
}

#[test]
fn a_committed_http_median_that_disagrees_with_its_runs_fails_the_run_and_is_a_baseline_notice() {
    let tmp = tempfile::tempdir().unwrap();
    let results = tmp.path().join("results");
    for id in ["101", "102"] {
        let jobs = tmp.path().join(id);
        artifacts(&jobs, "", &|_| {});
        assert_eq!(collect(&jobs, &results, id).status.code(), Some(0));
        // The committed file edited afterwards, as a bad commit would.
        let file = merged_file(&results, id);
        let mut cell = read_json(&file);
        cell["http"]["python"]["tools"]["oha"]["rps"] =
            json!(if id == "101" { 8800.0 } else { 8811.0 });
        std::fs::write(&file, serde_json::to_string_pretty(&cell).unwrap()).unwrap();
    }
    let g = gate(&results, "102");
    let failures = g["cells"][0]["failures"].to_string();
    assert!(
        failures.contains(
            "figures: a stated figure disagrees with its samples: http server python, plaintext over keep-alive under oha: rps 8811 stated, the samples give 8811.3578"
        ),
        "{failures}"
    );
    let notices = g["cells"][0]["notices"].to_string();
    assert!(
        notices.contains(
            "baseline 2026-12-01-101: http server python, plaintext over keep-alive under oha: rps 8800 stated, the samples give 8811.3578"
        ),
        "{notices}"
    );
    // Both sides judged on their runs: the same figures, a pass.
    let oha = g["cells"][0]["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["phase"] == "plaintext.keep-alive.oha")
        .unwrap();
    assert_eq!(oha["status"], "pass", "{oha}");
    assert_eq!(oha["old"]["median"], 8811.3578, "{oha}");
}
