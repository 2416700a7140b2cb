//! `cell gate` on real runs of a small project: A/A against its own history, a row doing 10%
//! more work, a missing tooth row, a noisy control, a first run.

mod common;

use std::path::{Path, PathBuf};

use common::{GCC_TOML, cell, project, read_json};
use predicates::prelude::*;

const VERSIONS: &str = "REPS=13\nDROP=1\nREPS_MAX=13\nPHASES=mix,fib\nTOOTH_PHASE=mix\nTOOTH_MIN=2\nREFERENCE=c-fast\nTOLERANCE=0.05\nCI_TARGET=0.01\n";

/// The tests here time real processes: one at a time, so they do not make each other noisy.
static TIMING: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Runs `cell local` of `root` into `out` and returns the new run dir.
fn local(root: &Path, out: &Path) -> PathBuf {
    let _one_at_a_time = TIMING
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let before: Vec<PathBuf> = list(out);
    cell()
        .args(["local", "-q", "--seed", "5"])
        .arg("--root")
        .arg(root)
        .arg("--out")
        .arg(out)
        .assert()
        .code(predicate::in_iter([0, 1]));
    list(out)
        .into_iter()
        .find(|p| !before.contains(p))
        .expect("a new run dir")
}

fn list(out: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(out)
        .map(|d| {
            d.map(|e| e.unwrap().path())
                .filter(|p| p.file_name().unwrap().to_str().unwrap().contains("-local-"))
                .collect()
        })
        .unwrap_or_default()
}

fn cell_json(run: &Path) -> PathBuf {
    run.join(format!(
        "{}-{}-local",
        std::env::consts::OS,
        std::env::consts::ARCH
    ))
    .join("results.json")
}

/// The small project with 4× the work per process (about 55 ms), so that process start-up
/// and a busy CI machine weigh less in the ratios these tests judge.
fn longer(root: &Path) -> PathBuf {
    let path = root.join("cell/cell.toml");
    let toml = std::fs::read_to_string(&path)
        .unwrap()
        .replace(r#""-DITER=40000000UL""#, r#""-DITER=160000000UL""#)
        .replace(r#""-O2", "-o""#, r#""-O2", "-DITER=40000000UL", "-o""#);
    std::fs::write(&path, toml).unwrap();
    root.to_owned()
}

/// Rewrites a run's A/A control ratios, in every job, phase and clock, to the given interval.
fn set_control(run: &Path, median: f64, lo: f64, hi: f64) {
    let mut j = read_json(&cell_json(run));
    for tc in ["clang", "gcc"] {
        for p in ["mix", "fib"] {
            for clock in ["cpu", "wall"] {
                j["jobs"][tc]["control"]["phases"][p]["ratio"][clock] = serde_json::json!({"n": 8, "median": median, "lo": lo, "hi": hi, "level": 0.93});
            }
        }
    }
    std::fs::write(cell_json(run), serde_json::to_string_pretty(&j).unwrap()).unwrap();
}

fn gate(root: &Path, run: &Path, history: &Path) -> assert_cmd::assert::Assert {
    cell()
        .env_remove("GITHUB_ACTIONS")
        .env_remove("GITHUB_STEP_SUMMARY")
        .args(["gate"])
        .arg(run)
        .arg("--root")
        .arg(root)
        .arg("--history")
        .arg(history)
        .assert()
}

#[test]
fn gate_on_real_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let root = longer(&project(tmp.path(), VERSIONS, &GCC_TOML));
    let history = tmp.path().join("history");
    std::fs::create_dir_all(&history).unwrap();
    let scratch = tmp.path().join("scratch");

    // First run: baseline recorded, exit 0.
    let first = local(&root, &scratch);
    gate(&root, &first, &history)
        .success()
        .stdout(predicate::str::contains(
            "first run of this cell: baseline recorded",
        ));
    let committed = history.join(first.file_name().unwrap());
    std::fs::rename(&first, &committed).unwrap();
    let gate_json = read_json(&committed.join("gate.json"));
    assert_eq!(gate_json["kind"], "gate");
    common::assert_valid("gate", &gate_json);

    // A/A: the same binaries again, against the committed history: no FAIL.
    let again = local(&root, &scratch);
    let out = gate(&root, &again, &history).success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(!text.contains("FAIL "), "{text}");
    assert!(
        text.contains(&format!(
            "against {}",
            committed.file_name().unwrap().to_str().unwrap()
        )),
        "{text}"
    );

    // One row's binary does 10% more work: FAIL naming row, phase, old and new ratio and CI.
    let toml = std::fs::read_to_string(root.join("cell/cell.toml")).unwrap();
    std::fs::write(
        root.join("cell/cell.toml"),
        toml.replace(
            r#""{tool:gcc}", "-O2", "-DITER=40000000UL","#,
            r#""{tool:gcc}", "-O2", "-DITER=44000000UL","#,
        ),
    )
    .unwrap();
    let slower = local(&root, &scratch);
    let out = gate(&root, &slower, &history).code(1);
    let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    let fail = text
        .lines()
        .find(|l| l.contains("FAIL") && l.contains("gcc-O2 mix"))
        .unwrap_or_else(|| panic!("no FAIL for gcc-O2 mix:\n{text}"));
    assert!(
        fail.contains("(CI ") && fail.contains(" vs ") && fail.contains("band"),
        "{fail}"
    );
    let report = read_json(&slower.join("gate.json"));
    assert_eq!(report["exit"], 1);
    let v = report["cells"][0]["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["row"] == "gcc-O2" && v["phase"] == "mix")
        .unwrap()
        .clone();
    assert_eq!(v["status"], "fail");
    let (old, new) = (
        v["old"]["median"].as_f64().unwrap(),
        v["new"]["median"].as_f64().unwrap(),
    );
    assert!(new / old > 1.06 && new / old < 1.15, "old {old} new {new}");

    // The tooth's fast row removed from the run: a failure naming the tooth.
    let aa = cell_json(&again);
    let mut j = read_json(&aa);
    j["rows"].as_object_mut().unwrap().remove("c-fast");
    std::fs::write(&aa, serde_json::to_string_pretty(&j).unwrap()).unwrap();
    gate(&root, &again, &history).code(1).stdout(predicate::str::contains("expected row c-fast of job clang is missing (it is the tooth's fast row: tooth c-slow/c-fast cannot be read)"));

    // A job whose control row is off: INCONCLUSIVE for every row of it, never PASS.
    set_control(&slower, 1.04, 1.03, 1.05);
    let out = gate(&root, &slower, &history).success();
    let report = read_json(&slower.join("gate.json"));
    let verdicts = report["cells"][0]["verdicts"].as_array().unwrap();
    assert!(!verdicts.is_empty());
    assert!(
        verdicts.iter().all(|v| v["status"] == "inconclusive"),
        "{}",
        String::from_utf8_lossy(&out.get_output().stdout)
    );
    assert!(String::from_utf8_lossy(&out.get_output().stdout).contains("warning: "));
}

#[test]
fn a_noisy_baseline_makes_no_call_either() {
    let tmp = tempfile::tempdir().unwrap();
    let root = longer(&project(tmp.path(), VERSIONS, &GCC_TOML));
    let history = tmp.path().join("history");
    std::fs::create_dir_all(&history).unwrap();
    let scratch = tmp.path().join("scratch");
    let first = local(&root, &scratch);
    let committed = history.join(first.file_name().unwrap());
    std::fs::rename(&first, &committed).unwrap();
    // The baseline's A/A control was off on every phase: its ratios are no reference.
    set_control(&committed, 0.93, 0.86, 1.06);
    let again = local(&root, &scratch);
    gate(&root, &again, &history).success();
    let report = read_json(&again.join("gate.json"));
    let verdicts = report["cells"][0]["verdicts"].as_array().unwrap();
    assert!(!verdicts.is_empty());
    for v in verdicts {
        assert_eq!(v["status"], "inconclusive", "{v}");
        // The baseline's noise, or the new run's own if this machine was busy too.
        assert!(
            v["message"].as_str().unwrap().contains("too noisy to gate"),
            "{v}"
        );
    }
}

#[test]
fn annotations_and_step_summary_on_github() {
    let tmp = tempfile::tempdir().unwrap();
    let root = project(tmp.path(), VERSIONS, "");
    let scratch = tmp.path().join("scratch");
    let run = local(&root, &scratch);
    let summary = tmp.path().join("summary.md");
    cell()
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_STEP_SUMMARY", &summary)
        .args(["gate"])
        .arg(&run)
        .arg("--root")
        .arg(&root)
        .arg("--history")
        .arg(tmp.path().join("empty"))
        .assert()
        .success()
        .stdout(predicate::str::contains("::notice title=cell gate%3A "));
    let md = std::fs::read_to_string(summary).unwrap();
    assert!(md.starts_with("## cell gate: "), "{md}");
}

#[test]
fn calibrate_writes_the_noise_floor_the_gate_reads() {
    let tmp = tempfile::tempdir().unwrap();
    let root = project(tmp.path(), VERSIONS, "");
    let timing = TIMING
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let out = cell()
        .args(["calibrate", "--rounds", "4", "--seed", "9"])
        .arg("--root")
        .arg(&root)
        .assert()
        .success();
    drop(timing);
    let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    for needle in ["mix", "fib", "cpu", "wall", "half-width", "quieter clock"] {
        assert!(text.contains(needle), "{needle} missing:\n{text}");
    }
    let id = format!("{}-{}-local", std::env::consts::OS, std::env::consts::ARCH);
    let cal = read_json(&root.join("cell/calibration").join(format!("{id}.json")));
    assert_eq!(cal["kind"], "calibration");
    assert_eq!(cal["rounds"], 4);
    assert_eq!(cal["seed"], 9);
    for p in ["mix", "fib"] {
        for c in ["cpu", "wall"] {
            let n = &cal["phases"][p][c];
            assert!(
                n["half_width"].as_f64().unwrap() >= 0.0 && n["ratio"]["n"] == 4,
                "{n}"
            );
        }
    }
    // A calibration that says the machine is noisier than the tolerance shows in the gate.
    let mut cal = cal;
    cal["phases"]["mix"]["cpu"]["half_width"] = serde_json::json!(0.2);
    std::fs::write(
        root.join("cell/calibration").join(format!("{id}.json")),
        serde_json::to_string(&cal).unwrap(),
    )
    .unwrap();
    let run = local(&root, &tmp.path().join("scratch"));
    gate(&root, &run, &tmp.path().join("none"))
        .success()
        .stdout(predicate::str::contains(
            "this machine's A/A noise on mix (cpu time) is ±20.00%",
        ));
}
