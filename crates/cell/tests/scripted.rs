//! One rule, one home, checked through the binary on the scripted executor: `cell local` and
//! `cell gate` judge a run alike, a threshold changed in versions.env changes the job's
//! verdict, the gate and the report together, and scripted results never become history.

mod common;

use std::path::{Path, PathBuf};

use cell_testkit::scripted::Timings;
use common::{GCC_TOML, cell, project, read_json};
use predicates::prelude::*;

fn versions(tolerance: f64, tooth_min: f64) -> String {
    format!(
        "REPS=11\nDROP=1\nREPS_MAX=11\nPHASES=mix,fib\nTOOTH_PHASE=mix\nTOOTH_MIN={tooth_min}\nREFERENCE=c-fast\nTOLERANCE={tolerance}\nCI_TARGET=0.01\n"
    )
}

/// The reference exact, its control scattered ±4% around it (an interval about ±3% wide,
/// which holds 1.0: noise, not bias), the tooth at 2.5×, gcc at `gcc` times the reference.
fn timings(seed: u64, gcc: f64) -> Timings {
    Timings::new(seed)
        .jitter(0.0)
        .row_jitter("control", 0.08)
        .row("c-fast", 0.04)
        .row("c-slow", 0.1)
        .row("gcc-O2", 0.04 * gcc)
}

/// `cell local` on `timings` into `out`: its stdout and the new run dir.
fn local(root: &Path, out: &Path, timings: &Timings) -> (String, PathBuf) {
    let (output, dir) = common::scripted_local(root, out, timings, &[]);
    (String::from_utf8(output.stdout).unwrap(), dir)
}

fn cell_dir(run: &Path) -> PathBuf {
    run.join(format!(
        "{}-{}-local",
        std::env::consts::OS,
        std::env::consts::ARCH
    ))
}

fn gate(root: &Path, run: &Path, history: &Path) -> assert_cmd::assert::Assert {
    cell()
        .env_remove("GITHUB_ACTIONS")
        .env_remove("GITHUB_STEP_SUMMARY")
        .args(["gate", "--allow-scripted"])
        .arg(run)
        .arg("--root")
        .arg(root)
        .arg("--history")
        .arg(history)
        .assert()
}

#[test]
fn local_and_gate_print_the_same_verdict_lines() {
    let tmp = tempfile::tempdir().unwrap();
    let root = project(tmp.path(), &versions(0.1, 2.0), &GCC_TOML);
    let out = tmp.path().join("runs");
    local(&root, &out, &timings(1, 1.0));
    let (printed, second) = local(&root, &out, &timings(2, 1.12));
    let from_local = &printed[printed
        .find(" against ")
        .and_then(|at| printed[..at].rfind('\n'))
        .map_or(0, |nl| nl + 1)..];
    let g = gate(&root, &second, &out).code(1);
    let from_gate = String::from_utf8(g.get_output().stdout.clone()).unwrap();
    assert!(from_gate.contains("FAIL "), "{from_gate}");
    assert_eq!(from_local, from_gate);
}

/// The figures of one configuration, read from the job, the gate and the report.
struct Judged {
    job_status: String,
    job_reasons: String,
    gate: serde_json::Value,
    job_md: String,
    report_md: String,
}

fn judge_with(tolerance: f64, tooth_min: f64) -> Judged {
    let tmp = tempfile::tempdir().unwrap();
    let root = project(tmp.path(), &versions(tolerance, tooth_min), &GCC_TOML);
    let out = tmp.path().join("runs");
    local(&root, &out, &timings(1, 1.0));
    let (_, second) = local(&root, &out, &timings(2, 1.06));
    let _ = gate(&root, &second, &out);
    let job = read_json(&cell_dir(&second).join("results.json"))["jobs"]["gcc"].clone();
    let jobs_dir = out.join("jobs").join(second.file_name().unwrap());
    let gcc_job = std::fs::read_dir(&jobs_dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_str().unwrap().ends_with("-gcc-a1"))
        .unwrap();
    let report = tmp.path().join("report");
    cell()
        .args(["report", "--history"])
        .arg(&out)
        .arg("--out")
        .arg(&report)
        .assert()
        .success();
    Judged {
        job_status: job["verdict"]["status"].as_str().unwrap().to_owned(),
        job_reasons: job["verdict"]["reasons"].to_string(),
        gate: read_json(&second.join("gate.json")),
        job_md: std::fs::read_to_string(gcc_job.join("RESULTS.md")).unwrap(),
        report_md: std::fs::read_to_string(report.join("README.md")).unwrap(),
    }
}

fn verdict<'a>(gate: &'a serde_json::Value, row: &str, phase: &str) -> &'a serde_json::Value {
    gate["cells"][0]["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["row"] == row && v["phase"] == phase)
        .unwrap_or_else(|| panic!("no verdict for {row} {phase}: {gate}"))
}

#[test]
fn tolerance_and_tooth_floor_are_read_alike_by_the_job_the_gate_and_the_report() {
    // Lenient: the control is wide, not biased, the tooth of 2.5 is
    // above its floor of 2, and gcc 6% slower lies inside the ±10% band.
    let lenient = judge_with(0.1, 2.0);
    assert_eq!(lenient.job_status, "ok", "{}", lenient.job_reasons);
    assert_eq!(verdict(&lenient.gate, "gcc-O2", "mix")["status"], "pass");
    assert_eq!(lenient.gate["summary"]["failures"], 0);
    assert!(
        lenient.job_md.contains("floor 2 → seen"),
        "{}",
        lenient.job_md
    );
    assert!(
        lenient.job_md.contains("tolerance ±0.1."),
        "{}",
        lenient.job_md
    );
    assert!(!lenient.report_md.contains("below the floor"));

    // A stricter TOLERANCE, same timings: the job still judges every phase (its control
    // is wide, not biased: regression, the width once made it noisy), and the gate fails gcc
    // 6% slower, beyond ±4%, saying so; the job's page states the tolerance it read.
    let strict = judge_with(0.04, 2.0);
    assert_eq!(strict.job_status, "ok", "{}", strict.job_reasons);
    let gcc = verdict(&strict.gate, "gcc-O2", "mix");
    assert_eq!(gcc["status"], "fail", "{gcc}");
    assert!(
        gcc["message"]
            .as_str()
            .unwrap()
            .contains("6.0% slower (+6.0% to +6.0%), beyond TOLERANCE ±4.0%"),
        "{gcc}"
    );
    assert_eq!(strict.gate["tolerance"], 0.04);
    assert!(
        strict.job_md.contains("tolerance ±0.04."),
        "{}",
        strict.job_md
    );

    // A higher tooth floor, same timings: the job fails its tooth, the gate fails it with
    // the same floor, and the job's page and the report say so.
    let floor = judge_with(0.1, 3.0);
    assert_eq!(floor.job_status, "failed", "{}", floor.job_reasons);
    assert!(
        floor.job_reasons.contains(
            "tooth: c-slow/c-fast on mix is 2.5000 (CI 2.5000–2.5000), below the floor 3 for"
        ),
        "{}",
        floor.job_reasons
    );
    let failures = floor.gate["cells"][0]["failures"].to_string();
    assert!(
        failures.contains(
            "tooth c-slow/c-fast on mix: 2.5000 (CI 2.5000–2.5000) in job gcc is below the floor 3 for"
        ),
        "{failures}"
    );
    assert!(
        floor.job_md.contains("floor 3 → NOT SEEN"),
        "{}",
        floor.job_md
    );
    assert!(
        floor.report_md.contains("below the floor 3 for"),
        "{}",
        floor.report_md
    );
}

#[test]
fn scripted_results_are_refused_as_history() {
    let tmp = tempfile::tempdir().unwrap();
    let root = project(tmp.path(), &versions(0.1, 2.0), &GCC_TOML);
    let out = tmp.path().join("runs");
    let (_, run) = local(&root, &out, &timings(1, 1.0));
    // cell collect: nothing written, exit 1, the jobs named.
    let results = tmp.path().join("results");
    cell()
        .arg("--root")
        .arg(&root)
        .args(["collect", "7", "--from-dir"])
        .arg(out.join("jobs"))
        .arg("--results")
        .arg(&results)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("scripted test executor"))
        .stderr(predicate::str::contains("job clang of"));
    assert!(
        !results.exists() || std::fs::read_dir(&results).unwrap().next().is_none(),
        "cell collect wrote into {}",
        results.display()
    );
    // cell gate: without the hidden flag a scripted run is no history, as run or baseline.
    cell()
        .args(["gate"])
        .arg(&run)
        .arg("--root")
        .arg(&root)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "its timings come from the scripted test executor",
        ));
}

#[test]
fn the_scripted_executor_is_not_in_help() {
    for cmd in ["run", "local", "gate"] {
        cell()
            .args([cmd, "--help"])
            .assert()
            .success()
            .stdout(predicate::str::contains("scripted").not());
    }
}

/// The samples are the record: a job computes its figures from its times as written (whole
/// microseconds), so its results.json, read back and recomputed with the same configuration,
/// is itself to the bit — the rounding `cell collect` allows is never needed for a job of this
/// cell. (The jitter makes every time a fraction of a microsecond.)
#[test]
fn a_job_s_written_figures_recompute_to_the_bit() {
    let tmp = tempfile::tempdir().unwrap();
    let root = project(tmp.path(), &versions(0.1, 2.0), &GCC_TOML);
    let out = tmp.path().join("runs");
    local(&root, &out, &timings(3, 1.07).jitter(0.013));
    let plan = cell_model::Plan::load(&root).unwrap();
    let config = cell_verdict::GateConfig::from_plan(&plan, None, []);
    let mut seen = 0;
    for run in std::fs::read_dir(out.join("jobs")).unwrap() {
        for job in std::fs::read_dir(run.unwrap().path()).unwrap() {
            let text = std::fs::read_to_string(job.unwrap().path().join("results.json")).unwrap();
            let cell_schema::ResultsFile::Job(job) = cell_schema::read_results(&text).unwrap()
            else {
                panic!("a job dir holds a job result");
            };
            let again = cell_verdict::recompute::job(&job, &config);
            assert_eq!(again.disagreements, Vec::<String>::new());
            assert_eq!(again.value, *job);
            // Not merely within rounding: the very figures.
            let reference = &job.rows[&job.protocol.reference];
            for (name, row) in &job.rows {
                for (p, pr) in &row.phases {
                    let theirs = (*name != job.protocol.reference)
                        .then(|| reference.phases[p].runs.as_slice());
                    let f = cell_verdict::figures::phase_figures(
                        &pr.runs,
                        theirs,
                        job.protocol.mode,
                        job.protocol.ci_level,
                        &cell_schema::Clock::written([job.protocol.default_clock]),
                    );
                    assert_eq!(f.stats, pr.stats, "{name} {p}");
                    assert_eq!(f.ratio, pr.ratio, "{name} {p}");
                    assert_eq!(f.contention, pr.contention, "{name} {p}");
                }
            }
            seen += 1;
        }
    }
    assert_eq!(seen, 2, "the clang and gcc jobs");
}
