//! A shared machine's noise, on the scripted executor: a phase whose A/A control is biased
//! is inconclusive on its own (the job, the gate and RESULTS.md still judge the other
//! phases), and one whose control is merely wide is judged;
//! a job whose intervals cannot reach the target in the rounds left stops early and says
//! why, while a quiet one converges as before; ratios of two protocols are never compared.

mod common;

use std::path::{Path, PathBuf};

use cell_testkit::first_dir;
use cell_testkit::scripted::Timings;
use common::{GCC_TOML, cell, project, read_json};
use predicates::prelude::*;

/// The tiny project with a third phase, `primes` (the tiny program prints both answers for
/// any phase it does not know).
fn three_phases(dir: &Path, versions: &str) -> PathBuf {
    let root = project(dir, versions, &GCC_TOML);
    let toml = root.join("cell/cell.toml");
    let text = std::fs::read_to_string(&toml).unwrap();
    std::fs::write(
        &toml,
        text.replacen("fib = \"7\"\n", "fib = \"7\"\nprimes = \"42\\n7\"\n", 1),
    )
    .unwrap();
    root
}

/// `cell local` on `timings` with `--out out`: the new run dir.
fn local(root: &Path, out: &Path, timings: &Timings) -> PathBuf {
    common::scripted_local(root, out, timings, &[]).1
}

fn gate(root: &Path, run: &Path, history: &Path) -> serde_json::Value {
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
        .code(predicate::in_iter([0, 1]));
    read_json(&run.join("gate.json"))
}

fn verdicts(gate: &serde_json::Value) -> Vec<(String, String, String, String)> {
    gate["cells"][0]["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            let s = |k: &str| v[k].as_str().unwrap().to_owned();
            (s("row"), s("phase"), s("status"), s("message"))
        })
        .collect()
}

/// Everything at the reference's time, exactly, but the control on fib: 3% slower there.
fn fib_biased(seed: u64) -> Timings {
    Timings::new(seed)
        .jitter(0.0)
        .phase("control", "fib", 0.0412)
        .row("c-fast", 0.04)
        .row("c-slow", 0.1)
        .row("gcc-O2", 0.04)
}

const FIXED: &str = "REPS=11\nDROP=1\nREPS_MAX=11\nPHASES=mix,primes,fib\nTOOTH_PHASE=mix\nTOOTH_MIN=2\nREFERENCE=c-fast\nTOLERANCE=0.02\nCI_TARGET=0.005\nPROTOCOL=sequential\n";

#[test]
fn a_control_biased_only_on_fib_still_judges_mix_and_primes() {
    let tmp = tempfile::tempdir().unwrap();
    let root = three_phases(tmp.path(), FIXED);
    let out = tmp.path().join("runs");
    local(&root, &out, &fib_biased(1));
    let second = local(&root, &out, &fib_biased(2));
    let cell_dir = first_dir(&second);
    let job = &read_json(&cell_dir.join("results.json"))["jobs"]["gcc"];
    let v = &job["verdict"];
    assert_eq!(v["status"], "ok", "{v}");
    assert_eq!(v["judged"], serde_json::json!(["mix", "primes"]), "{v}");
    assert_eq!(v["inconclusive"], serde_json::json!(["fib"]), "{v}");
    let reasons = v["reasons"].to_string();
    assert!(reasons.contains("biased protocol on fib"), "{reasons}");
    assert!(reasons.contains("+3.0% apart"), "{reasons}");
    assert!(
        !reasons.contains("on mix") && !reasons.contains("on primes"),
        "{reasons}"
    );

    let g = gate(&root, &second, &out);
    let vs = verdicts(&g);
    for (row, phase, status, message) in &vs {
        if phase == "fib" {
            assert_eq!(status, "inconclusive", "{row} {phase}: {message}");
            assert!(message.contains("biased protocol on fib"), "{message}");
        } else {
            assert_eq!(status, "pass", "{row} {phase}: {message}");
            assert!(message.contains("no change beyond ±2.0%"), "{message}");
        }
    }
    assert!(vs.iter().any(|v| v.1 == "primes") && vs.iter().any(|v| v.1 == "mix"));

    let md = std::fs::read_to_string(cell_dir.join("RESULTS.md")).unwrap();
    assert!(
        md.contains("ok on mix ±0.00%, primes ±0.00%; fib inconclusive (A/A control biased)"),
        "{md}"
    );
}

/// Regression: a control whose fib runs scatter ±15% (its interval wide, holding 1.0) made
/// fib inconclusive: width is noise every row's own interval carries, not bias.
#[test]
fn a_wide_control_on_fib_leaves_fib_judged() {
    let tmp = tempfile::tempdir().unwrap();
    let root = three_phases(tmp.path(), FIXED);
    let out = tmp.path().join("runs");
    let t = Timings::new(1)
        .jitter(0.0)
        .phase_jitter("control", "fib", 0.3)
        .row("c-fast", 0.04)
        .row("c-slow", 0.1)
        .row("gcc-O2", 0.04);
    let run = local(&root, &out, &t);
    let v = &read_json(&first_dir(&run).join("results.json"))["jobs"]["gcc"]["verdict"];
    assert_eq!(v["status"], "ok", "{v}");
    assert_eq!(
        v["judged"],
        serde_json::json!(["fib", "mix", "primes"]),
        "{v}"
    );
    assert!(v.get("inconclusive").is_none(), "{v}");
}

#[test]
fn a_control_biased_on_every_phase_leaves_the_job_noisy() {
    let tmp = tempfile::tempdir().unwrap();
    let root = three_phases(tmp.path(), FIXED);
    let out = tmp.path().join("runs");
    let t = fib_biased(1).row("control", 0.0412);
    let run = local(&root, &out, &t);
    let v = &read_json(&first_dir(&run).join("results.json"))["jobs"]["gcc"]["verdict"];
    assert_eq!(v["status"], "noisy", "{v}");
    assert!(v.get("judged").is_none(), "{v}");
    assert_eq!(
        v["inconclusive"],
        serde_json::json!(["fib", "mix", "primes"]),
        "{v}"
    );
}

/// The default budget: 10 measured rounds, up to 30, `CI_TARGET` ±0.5%.
const ADAPTIVE: &str = "REPS=11\nDROP=1\nREPS_MAX=31\nREPS_STEP=5\nPHASES=mix,primes,fib\nTOOTH_PHASE=mix\nTOOTH_MIN=2\nREFERENCE=c-fast\nTOLERANCE=0.015\nCI_TARGET=0.005\nPROTOCOL=sequential\n";

#[test]
fn a_job_as_noisy_as_a_busy_shared_host_stops_early_by_futility() {
    let tmp = tempfile::tempdir().unwrap();
    let root = three_phases(tmp.path(), ADAPTIVE);
    let out = tmp.path().join("runs");
    // Every run ±15% around its row: the same binary's 0.41–0.73 s of a busy day.
    let noisy = Timings::new(3)
        .jitter(0.3)
        .row("c-fast", 0.04)
        .row("c-slow", 0.1)
        .row("gcc-O2", 0.04);
    let run = local(&root, &out, &noisy);
    let job = &read_json(&first_dir(&run).join("results.json"))["jobs"]["gcc"];
    let p = &job["protocol"];
    assert_eq!(p["stopped"], "futile", "{p}");
    let rounds = p["measured_rounds"].as_u64().unwrap();
    // Early, but not before the 15 of 30 the next run's comparison needs from it.
    assert_eq!(rounds, 15, "{p}");
    let f = &p["futility"];
    assert_eq!(f["rounds"], rounds);
    assert_eq!(f["max_rounds"], 30);
    let (projected, target) = (
        f["projected"].as_f64().unwrap(),
        f["target"].as_f64().unwrap(),
    );
    assert!(projected > target * f["margin"].as_f64().unwrap(), "{f}");
    assert!(f["half_width"].as_f64().unwrap() > projected, "{f}");
    // Said where a reader looks: the job's RESULTS.md and the terminal.
    let jobs = out.join("jobs").join(run.file_name().unwrap());
    let gcc = std::fs::read_dir(&jobs)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_str().unwrap().ends_with("-gcc-a1"))
        .unwrap();
    let md = std::fs::read_to_string(gcc.join("RESULTS.md")).unwrap();
    assert!(
        md.contains(&format!("Stopped by futility after {rounds} of 30 rounds")),
        "{md}"
    );

    // Quiet timings with no baseline converge at the first look, as before the rule.
    let quiet = Timings::new(3)
        .jitter(0.002)
        .row("c-fast", 0.04)
        .row("c-slow", 0.1)
        .row("gcc-O2", 0.04);
    let run = local(&root, &tmp.path().join("fresh"), &quiet);
    let p = &read_json(&first_dir(&run).join("results.json"))["jobs"]["gcc"]["protocol"];
    assert_eq!(p["stopped"], "converged", "{p}");
    assert_eq!(p["measured_rounds"], 10, "{p}");
    assert!(p.get("futility").is_none(), "{p}");
}

#[test]
fn ratios_of_two_protocols_are_never_compared() {
    let tmp = tempfile::tempdir().unwrap();
    let duet = FIXED.replace("PROTOCOL=sequential", "PROTOCOL=duet");
    let root = three_phases(tmp.path(), &duet);
    let out = tmp.path().join("runs");
    let quiet = Timings::new(4)
        .jitter(0.002)
        .row("c-fast", 0.04)
        .row("c-slow", 0.1)
        .row("gcc-O2", 0.04);
    let first = local(&root, &out, &quiet);
    let p = &read_json(&first_dir(&first).join("results.json"))["jobs"]["gcc"]["protocol"];
    assert_eq!(p["mode"], "duet", "{p}");
    // A duet's rounds are even, so each row sits on each CPU equally often.
    assert_eq!(p["measured_rounds"], 10, "{p}");

    std::fs::write(root.join("versions.env"), FIXED).unwrap();
    let second = local(&root, &out, &quiet);
    let g = gate(&root, &second, &out);
    let vs = verdicts(&g);
    assert!(!vs.is_empty());
    for (row, phase, status, message) in &vs {
        assert_eq!(status, "inconclusive", "{row} {phase}: {message}");
        assert!(
            message.contains("timed by the sequential protocol, the baseline by the duet"),
            "{message}"
        );
    }

    // The next sequential run compares with the sequential one.
    let third = local(&root, &out, &quiet);
    let g = gate(&root, &third, &out);
    assert!(verdicts(&g).iter().all(|v| v.2 == "pass"), "{g}");
}

/// The stop of `row` of job `job` on `phase`, as results.json records it.
fn stopped(run: &Path, job: &str, row: &str, phase: &str) -> serde_json::Value {
    let cell = read_json(&first_dir(run).join("results.json"));
    let j = &cell["jobs"][job];
    let r = if cell["rows"][row].is_object() {
        &cell["rows"][row]
    } else if j["control"].is_object() && row == "control" {
        &j["control"]
    } else {
        panic!("no row {row}: {cell}")
    };
    r["phases"][phase]["stopped"].clone()
}

/// Regression: one hopeless interval stopped every row of its job by futility, so a busy
/// phase cost the quiet ones their rounds.
#[test]
fn a_hopeless_phase_stops_alone_and_the_others_get_their_rounds() {
    let tmp = tempfile::tempdir().unwrap();
    let root = three_phases(tmp.path(), ADAPTIVE);
    let mut t = Timings::new(5)
        .jitter(0.012)
        .row("c-fast", 0.04)
        .row("c-slow", 0.1)
        .row("gcc-O2", 0.04);
    for row in ["c-fast", "c-slow", "gcc-O2", "control"] {
        t = t.phase_jitter(row, "fib", 0.5);
    }
    let run = local(&root, &tmp.path().join("runs"), &t);
    let fib = stopped(&run, "gcc", "gcc-O2", "fib");
    assert_eq!(fib["reason"], "futile", "{fib}");
    // At the floor the next run's comparison needs, 15 of 30, not at the first look.
    assert_eq!(fib["rounds"], 15, "{fib}");
    assert!(fib["projected"].as_f64().unwrap() > 0.005 * 1.25, "{fib}");
    for phase in ["mix", "primes"] {
        let s = stopped(&run, "gcc", "gcc-O2", phase);
        // Not stopped by fib's futility: each stops on its own interval, no earlier.
        assert!(s["rounds"].as_u64().unwrap() >= 15, "{phase}: {s}");
        assert!(
            s["reason"] == "converged" || s["reason"] == "max_rounds",
            "{phase}: {s}"
        );
    }
    // The control follows the rows of its phase.
    assert_eq!(
        stopped(&run, "gcc", "control", "fib")["reason"],
        "with_rows"
    );
    assert_eq!(stopped(&run, "gcc", "control", "fib")["rounds"], 15);
}

/// With an earlier run in `--out`, each row is judged against it while timed: one that
/// already passes stops, and the job says which run it judged against.
#[test]
fn a_row_settled_against_the_baseline_stops() {
    let tmp = tempfile::tempdir().unwrap();
    let root = three_phases(tmp.path(), ADAPTIVE);
    let out = tmp.path().join("runs");
    let quiet = |seed| {
        Timings::new(seed)
            .jitter(0.002)
            .row("c-fast", 0.04)
            .row("c-slow", 0.1)
            .row("gcc-O2", 0.04)
    };
    let first = local(&root, &out, &quiet(1));
    let p = &read_json(&first_dir(&first).join("results.json"))["jobs"]["gcc"]["protocol"];
    assert!(p.get("baseline").is_none(), "{p}");
    assert!(
        p["no_baseline"]
            .as_str()
            .unwrap()
            .contains("no earlier measured run"),
        "{p}"
    );
    assert_eq!(
        stopped(&first, "gcc", "gcc-O2", "mix")["reason"],
        "converged"
    );
    let second = local(&root, &out, &quiet(2));
    let p = &read_json(&first_dir(&second).join("results.json"))["jobs"]["gcc"]["protocol"];
    assert_eq!(
        p["baseline"],
        first.file_name().unwrap().to_str().unwrap(),
        "{p}"
    );
    assert_eq!(p["stopped"], "settled", "{p}");
    for phase in ["mix", "primes", "fib"] {
        let s = stopped(&second, "gcc", "gcc-O2", phase);
        assert_eq!(s["reason"], "settled", "{phase}: {s}");
        assert_eq!(s["against_baseline"], true, "{phase}: {s}");
        assert_eq!(s["rounds"], 10, "{phase}: {s}");
    }
}
