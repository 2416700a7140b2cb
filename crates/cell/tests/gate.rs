//! `cell gate` on runs of a small project, timed by the scripted executor so every verdict
//! is the same on a quiet machine and a busy one: A/A against its own history, a row doing
//! 10% more work, a missing tooth row, a biased control, a wide one, a biased baseline, a
//! first run, the calibration notice. (The same checks on real timings said INCONCLUSIVE instead of FAIL
//! whenever the host was noisy; `e2e.rs` keeps one run on real timings.)

mod common;

use std::path::{Path, PathBuf};

use cell_testkit::scripted::Timings;
use common::{Corruption, GCC_TOML, cell, corrupt, project, read_json};
use predicates::prelude::*;

const VERSIONS: &str = "REPS=13\nDROP=1\nREPS_MAX=13\nPHASES=mix,fib\nTOOTH_PHASE=mix\nTOOTH_MIN=2\nREFERENCE=c-fast\nTOLERANCE=0.05\nCI_TARGET=0.01\n";

/// The project's rows as the executor times them: the tooth's slow row 4× the reference,
/// gcc on a par with clang.
fn timings(seed: u64) -> Timings {
    Timings::new(seed)
        .row("c-fast", 0.05)
        .row("c-slow", 0.2)
        .row("gcc-O2", 0.05)
}

/// Runs `cell local` of `root` into `out` on `timings` and returns the new run dir.
fn local(root: &Path, out: &Path, timings: &Timings) -> PathBuf {
    std::fs::create_dir_all(out).unwrap();
    let file = timings.write(&out.join("timings.json"));
    let before: Vec<PathBuf> = list(out);
    cell()
        .args(["local", "-q", "--seed", "5", "--scripted-timings"])
        .arg(&file)
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

fn stdout(a: &assert_cmd::assert::Assert) -> String {
    String::from_utf8_lossy(&a.get_output().stdout).into_owned()
}

#[test]
fn a_ten_percent_slower_row_fails_and_an_unchanged_one_passes() {
    let tmp = tempfile::tempdir().unwrap();
    let root = project(tmp.path(), VERSIONS, &GCC_TOML);
    let history = tmp.path().join("history");
    std::fs::create_dir_all(&history).unwrap();
    let scratch = tmp.path().join("scratch");

    // First run: baseline recorded, exit 0.
    let first = local(&root, &scratch, &timings(1));
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

    // A/A: the same timings again, against the committed history: every row PASSes.
    let again = local(&root, &scratch, &timings(2));
    let out = gate(&root, &again, &history).success();
    let text = stdout(&out);
    let report = read_json(&again.join("gate.json"));
    let verdicts = report["cells"][0]["verdicts"].as_array().unwrap();
    assert_eq!(
        verdicts.len(),
        4,
        "gcc-O2 and c-slow on two phases:\n{text}"
    );
    assert!(verdicts.iter().all(|v| v["status"] == "pass"), "{text}");
    assert!(
        text.contains(&format!(
            "against {}",
            committed.file_name().unwrap().to_str().unwrap()
        )),
        "{text}"
    );

    // One row does 10% more work: FAIL naming row, phase, old and new ratio and CI.
    let slower = local(&root, &scratch, &timings(3).row("gcc-O2", 0.055));
    let out = gate(&root, &slower, &history).code(1);
    let text = stdout(&out);
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
    assert!(new / old > 1.09 && new / old < 1.11, "old {old} new {new}");

    // The tooth's fast row removed from the run: a failure naming the tooth.
    let aa = cell_json(&again);
    let mut j = read_json(&aa);
    j["rows"].as_object_mut().unwrap().remove("c-fast");
    std::fs::write(&aa, serde_json::to_string_pretty(&j).unwrap()).unwrap();
    gate(&root, &again, &history).code(1).stdout(predicate::str::contains("expected row c-fast of job clang is missing (it is the tooth's fast row: tooth c-slow/c-fast cannot be read)"));
}

#[test]
fn a_biased_control_makes_every_row_of_its_job_inconclusive() {
    let tmp = tempfile::tempdir().unwrap();
    let root = project(tmp.path(), VERSIONS, &GCC_TOML);
    let history = tmp.path().join("history");
    let scratch = tmp.path().join("scratch");
    let first = local(&root, &scratch, &timings(1));
    std::fs::create_dir_all(&history).unwrap();
    std::fs::rename(&first, history.join(first.file_name().unwrap())).unwrap();
    // The control copy of the reference runs 4% slower: two identical binaries timed apart.
    let biased = local(
        &root,
        &scratch,
        &timings(2)
            .jitter(0.0)
            .row("control", 0.052)
            .row("gcc-O2", 0.055),
    );
    let cell = read_json(&cell_json(&biased));
    assert_eq!(cell["jobs"]["gcc"]["verdict"]["status"], "noisy");
    let out = gate(&root, &biased, &history).success();
    let report = read_json(&biased.join("gate.json"));
    let verdicts = report["cells"][0]["verdicts"].as_array().unwrap();
    assert!(!verdicts.is_empty());
    assert!(
        verdicts.iter().all(|v| v["status"] == "inconclusive"),
        "10% slower, but no call on a biased job:\n{}",
        stdout(&out)
    );
    assert!(stdout(&out).contains("warning: "));
    assert!(
        stdout(&out)
            .contains("not judged: biased protocol on mix: the A/A control (cpu time) is 1.0400"),
        "{}",
        stdout(&out)
    );
}

/// Regression: a control whose runs scatter (±10% per run, its interval wide but holding
/// 1.0) was read as too noisy to gate, and a row 10% slower passed with exit 0.
#[test]
fn a_wide_control_is_noise_not_bias_and_a_slower_row_still_fails() {
    let tmp = tempfile::tempdir().unwrap();
    let root = project(tmp.path(), VERSIONS, &GCC_TOML);
    let history = tmp.path().join("history");
    let scratch = tmp.path().join("scratch");
    let noisy = |seed| timings(seed).row_jitter("control", 0.2);
    let first = local(&root, &scratch, &noisy(1));
    std::fs::create_dir_all(&history).unwrap();
    std::fs::rename(&first, history.join(first.file_name().unwrap())).unwrap();
    let slower = local(&root, &scratch, &noisy(2).row("gcc-O2", 0.055));
    let cell = read_json(&cell_json(&slower));
    let v = &cell["jobs"]["gcc"]["verdict"];
    assert_eq!(v["status"], "ok", "{v}");
    assert_eq!(v["judged"], serde_json::json!(["fib", "mix"]), "{v}");
    let out = gate(&root, &slower, &history).code(1);
    let text = stdout(&out);
    assert!(
        text.lines().any(|l| l.starts_with("  FAIL ")
            && l.contains("gcc-O2 mix")
            && l.contains("% slower")),
        "{text}"
    );
}

#[test]
fn a_biased_baseline_makes_no_call_either() {
    let tmp = tempfile::tempdir().unwrap();
    let root = project(tmp.path(), VERSIONS, &GCC_TOML);
    let history = tmp.path().join("history");
    std::fs::create_dir_all(&history).unwrap();
    let scratch = tmp.path().join("scratch");
    // The baseline's A/A control was biased on every phase: its ratios are no reference.
    let first = local(&root, &scratch, &timings(1).row("control", 0.0465));
    std::fs::rename(&first, history.join(first.file_name().unwrap())).unwrap();
    let again = local(&root, &scratch, &timings(2).row("gcc-O2", 0.055));
    gate(&root, &again, &history).success();
    let report = read_json(&again.join("gate.json"));
    let verdicts = report["cells"][0]["verdicts"].as_array().unwrap();
    assert!(!verdicts.is_empty());
    for v in verdicts {
        assert_eq!(v["status"], "inconclusive", "{v}");
        assert!(
            v["message"]
                .as_str()
                .unwrap()
                .contains("not judged: baseline: biased protocol on"),
            "{v}"
        );
    }
}

#[test]
fn annotations_and_step_summary_on_github() {
    let tmp = tempfile::tempdir().unwrap();
    let root = project(tmp.path(), VERSIONS, "");
    let run = local(&root, &tmp.path().join("scratch"), &timings(1));
    let summary = tmp.path().join("summary.md");
    cell()
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_STEP_SUMMARY", &summary)
        .args(["gate", "--allow-scripted"])
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
    // Real timings: what is checked here holds however busy the machine is.
    let out = cell()
        .args(["calibrate", "--rounds", "4", "--seed", "9"])
        .arg("--root")
        .arg(&root)
        .assert()
        .success();
    let text = stdout(&out);
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
    // Both protocols where there are two CPUs to time on, and which was the quieter.
    let two_cpus = std::thread::available_parallelism().map_or(1, std::num::NonZero::get) >= 2;
    let quieter = cal["quieter_protocol"].as_str().map(str::to_owned);
    if two_cpus {
        // A duet's ratio is one per two rounds, one on each CPU.
        assert_eq!(cal["duet"]["mix"]["cpu"]["ratio"]["n"], 2, "{cal}");
        assert!(text.contains("quieter protocol: "), "{text}");
        assert!(
            matches!(quieter.as_deref(), Some("sequential" | "duet")),
            "{cal}"
        );
    } else {
        println!("one CPU: no duet to calibrate");
        assert!(cal.get("duet").is_none(), "{cal}");
    }
    // A calibration that says the machine is noisier than the tolerance shows in the gate.
    let mut cal = cal;
    cal["phases"]["mix"]["cpu"]["half_width"] = serde_json::json!(0.2);
    if two_cpus {
        cal["duet"]["mix"]["cpu"]["half_width"] = serde_json::json!(0.2);
    }
    std::fs::write(
        root.join("cell/calibration").join(format!("{id}.json")),
        serde_json::to_string(&cal).unwrap(),
    )
    .unwrap();
    let run = local(&root, &tmp.path().join("scratch"), &timings(1));
    // The notice reads the noise of the protocol the job was timed by.
    let duet = if quieter.as_deref() == Some("duet") {
        ", duet"
    } else {
        ""
    };
    gate(&root, &run, &tmp.path().join("none"))
        .success()
        .stdout(predicate::str::contains(format!(
            "this machine's A/A noise on mix (cpu time{duet}) is ±20.00%"
        )));
    // PROTOCOL=auto (the default) times with the protocol the calibration found quieter.
    let job = &read_json(&cell_testkit::first_dir(&run).join("results.json"))["jobs"]["clang"];
    let p = &job["protocol"];
    let mode = p["mode"].as_str().unwrap_or("sequential");
    assert_eq!(Some(mode), quieter.as_deref().or(Some("sequential")), "{p}");
    if quieter.is_some() {
        assert_eq!(
            p["mode_chosen"].as_str().unwrap(),
            format!("PROTOCOL=auto: {mode}, the quieter in this cell's calibration"),
            "{p}"
        );
    }
}

fn stderr(a: &assert_cmd::assert::Assert) -> String {
    String::from_utf8_lossy(&a.get_output().stderr).into_owned()
}

/// The cell of `file` with its workload taken out (jobs, rows and what they carry), as text.
fn without_workload(file: &Path) -> String {
    let mut j = read_json(file);
    for (key, empty) in [
        ("jobs", serde_json::json!({})),
        ("rows", serde_json::json!({})),
        ("skipped", serde_json::json!([])),
        ("missing", serde_json::json!([])),
        ("failures", serde_json::json!([])),
    ] {
        j[key] = empty;
    }
    j.as_object_mut().unwrap().remove("cost");
    serde_json::to_string_pretty(&j).unwrap()
}

/// Asserts the gate of `judged` printed and wrote verdicts against `name`, every one a
/// PASS, and returns the notices of its cell in `gate.json`.
fn passes_against(judged: &Path, name: &str, out: &str) -> serde_json::Value {
    assert!(out.contains(&format!("against {name}")), "{out}");
    let report = read_json(&judged.join("gate.json"));
    let c = &report["cells"][0];
    assert_eq!(c["baseline"], name);
    assert!(
        c["verdicts"]
            .as_array()
            .unwrap()
            .iter()
            .all(|v| v["status"] == "pass"),
        "{out}"
    );
    c["notices"].clone()
}

/// Issue 12: one bad file in history stopped `cell gate`, and impossible values (a ratio of
/// 0 or below, `lo > hi`, negative times) were used as a baseline. Now a bad file in an older
/// run that is not the baseline is a notice when the gate reads it, and the gate judges as
/// usual; a bad baseline, pinned or the newest, is exit 2 naming it; `--strict` refuses any
/// bad file; the judged run itself must hold.
///
/// Issue 16: the gate reads each cell's runs newest first only until it holds its baselines,
/// so a bad file older than the baseline is no longer read, nor noticed (this test expected a
/// notice for it while the gate read the whole history); a bad file the walk passes through,
/// behind a newer run of the cell with no workload, still is.
#[test]
fn a_corrupt_file_in_history_is_a_notice_unless_it_is_the_baseline() {
    let tmp = tempfile::tempdir().unwrap();
    let root = project(tmp.path(), VERSIONS, &GCC_TOML);
    let history = tmp.path().join("history");
    std::fs::create_dir_all(&history).unwrap();
    let scratch = tmp.path().join("scratch");
    let mut committed = Vec::new();
    for seed in [1, 2] {
        let run = local(&root, &scratch, &timings(seed));
        let to = history.join(run.file_name().unwrap());
        std::fs::rename(&run, &to).unwrap();
        committed.push(to);
    }
    let (old, base) = (&committed[0], &committed[1]);
    let base_name = base.file_name().unwrap().to_str().unwrap().to_owned();
    let old_name = old.file_name().unwrap().to_str().unwrap().to_owned();
    let judged = local(&root, &scratch, &timings(3));
    let (old_file, base_file) = (cell_json(old), cell_json(base));
    let (old_bytes, base_bytes) = (
        std::fs::read(&old_file).unwrap(),
        std::fs::read(&base_file).unwrap(),
    );
    // A run of the cell newer than both with no workload (as a suite-only run has none): the
    // walk reads it, finds no baseline there, and goes on.
    let shell = history.join(format!("{base_name}-suites"));
    let shell_file = cell_json(&shell);
    let shell_text = without_workload(&base_file);
    let gate_with = |extra: &[&str]| {
        cell()
            .env_remove("GITHUB_ACTIONS")
            .env_remove("GITHUB_STEP_SUMMARY")
            .env_remove("BASELINE")
            .args(["gate", "--allow-scripted"])
            .args(extra)
            .arg(&judged)
            .arg("--root")
            .arg(&root)
            .arg("--history")
            .arg(&history)
            .assert()
    };
    let passes_against = |name: &str, out: &str| passes_against(&judged, name, out);
    for how in Corruption::ALL {
        std::fs::write(&old_file, &old_bytes).unwrap();
        std::fs::write(&base_file, &base_bytes).unwrap();
        let reason = corrupt(&old_file, how);
        let named = old_file.display().to_string();

        // In an older run than the baseline: not read, so no notice, and the normal verdict.
        let a = gate_with(&[]).success();
        let (out, err) = (stdout(&a), stderr(&a));
        assert!(
            !err.contains(&named),
            "{how:?}: read past the baseline:\n{err}"
        );
        let notices = passes_against(&base_name, &out);
        assert!(
            !notices.to_string().contains(&named),
            "{how:?}: gate.json notices: {notices}"
        );

        // Pinned to the spoiled run: it is the baseline, so exit 2 naming it.
        gate_with(&["--baseline", &old_name]).code(2).stderr(
            predicate::str::contains(named.as_str())
                .and(predicate::str::contains("baseline"))
                .and(predicate::str::contains("fix or remove the file")),
        );
        // Pinned to the good one: the spoiled older run does not matter.
        gate_with(&["--baseline", &base_name]).success();

        // --strict: the whole history is read, and any bad file is an error naming it.
        gate_with(&["--strict"]).code(2).stderr(
            predicate::str::contains(named.as_str()).and(predicate::str::contains(reason.as_str())),
        );

        // The newest older run spoiled: it is the baseline, exit 2 naming it (never a quiet
        // fallback to the run before it).
        std::fs::write(&old_file, &old_bytes).unwrap();
        let reason = corrupt(&base_file, how);
        gate_with(&[]).code(2).stderr(
            predicate::str::contains(base_file.display().to_string())
                .and(predicate::str::contains(reason.as_str()))
                .and(predicate::str::contains("baseline of cell"))
                .and(predicate::str::contains("fix or remove the file")),
        );

        // Behind a newer readable run of the cell, the spoiled file is passed through: a
        // notice on stderr and in gate.json, and the verdict against the run before it.
        std::fs::create_dir_all(shell_file.parent().unwrap()).unwrap();
        std::fs::write(&shell_file, &shell_text).unwrap();
        let named = base_file.display().to_string();
        let a = gate_with(&[]).success();
        let (out, err) = (stdout(&a), stderr(&a));
        let notice = format!("notice: skipped {named}: ");
        let line = err
            .lines()
            .find(|l| l.starts_with(&notice))
            .unwrap_or_else(|| panic!("{how:?}: no notice:\n{err}"));
        assert!(
            line.contains(&reason) && line.ends_with("fix or remove the file"),
            "{how:?}: {line}"
        );
        let notices = passes_against(&old_name, &out);
        assert!(
            notices.to_string().contains(&named),
            "{how:?}: gate.json notices: {notices}"
        );
        std::fs::remove_dir_all(&shell).unwrap();
    }

    // The judged run itself spoiled: exit 2 naming its file.
    std::fs::write(&base_file, &base_bytes).unwrap();
    let own = cell_json(&judged);
    let reason = corrupt(&own, Corruption::NegativeRatio);
    gate_with(&[]).code(2).stderr(
        predicate::str::contains(own.display().to_string())
            .and(predicate::str::contains(reason.as_str())),
    );
}

/// This machine's cell id, as `cell local` names it.
fn local_cell_id() -> String {
    format!("{}-{}-local", std::env::consts::OS, std::env::consts::ARCH)
}

/// A calibration `cell calibrate` wrote (recorded on a two-CPU VM), as this machine's cell's:
/// mix's CPU noise ±20%, wider than TOLERANCE/2 (so a usable file shows in the gate), and the
/// wall clock the quieter (so `CLOCK=auto` takes it from a usable file).
fn noisy_calibration() -> serde_json::Value {
    let mut cal = read_json(&cell_testkit::fixtures().join("calibration/linux-x86_64-local.json"));
    cal["cell"]["id"] = local_cell_id().into();
    cal["cell"]["os"] = std::env::consts::OS.into();
    cal["cell"]["arch"] = std::env::consts::ARCH.into();
    cal["phases"]["mix"]["cpu"]["half_width"] = serde_json::json!(0.2);
    cal["quieter_clock"] = "wall".into();
    cal
}

/// Each calibration file `cell calibrate` cannot write that was used before issue 24 (a
/// negative half-width silenced the noise notice, `1e308` printed `±inf%`), what the notice
/// names, and the file's text.
fn bad_calibrations() -> Vec<(&'static str, &'static str, String)> {
    type Edit = fn(&mut serde_json::Value);
    let edits: [(&str, &str, Edit); 6] = [
        (
            "a negative half-width",
            "phases.mix.cpu.half_width is -0.2: negative or not finite",
            |c| c["phases"]["mix"]["cpu"]["half_width"] = serde_json::json!(-0.2),
        ),
        (
            "lo above hi",
            "phases.mix.cpu.ratio is 0.9998 with interval [1.5, 0.5]: lo ≤ median ≤ hi does not hold",
            |c| {
                c["phases"]["mix"]["cpu"]["ratio"]["lo"] = serde_json::json!(1.5);
                c["phases"]["mix"]["cpu"]["ratio"]["hi"] = serde_json::json!(0.5);
            },
        ),
        (
            "a level of 7",
            "phases.mix.cpu.ratio.level is 7: a coverage is from 0 to 1",
            |c| c["phases"]["mix"]["cpu"]["ratio"]["level"] = serde_json::json!(7),
        ),
        (
            "another cell's id",
            "cell.id is `freebsd-riscv64-local`, not the cell",
            |c| c["cell"]["id"] = "freebsd-riscv64-local".into(),
        ),
        (
            "no rounds",
            "rounds is 0: cell calibrate measures at least 2",
            |c| c["rounds"] = serde_json::json!(0),
        ),
        (
            "a half-width of 1e308",
            "phases.mix.cpu.half_width is 1e308, beyond 10 (±1000%)",
            |c| c["phases"]["mix"]["cpu"]["half_width"] = serde_json::json!(1e308),
        ),
    ];
    let mut out: Vec<_> = edits
        .into_iter()
        .map(|(what, why, edit)| {
            let mut cal = noisy_calibration();
            edit(&mut cal);
            (what, why, serde_json::to_string_pretty(&cal).unwrap())
        })
        .collect();
    out.push((
        "a file that does not parse",
        "not a calibration file (",
        "{\"schema_version\": 1, \"kind\": \"calibration\",".to_owned(),
    ));
    out
}

/// Writes `text` as this machine's cell's calibration under `root`.
fn write_calibration(root: &Path, text: &str) -> String {
    let rel = format!("cell/calibration/{}.json", local_cell_id());
    std::fs::create_dir_all(root.join("cell/calibration")).unwrap();
    std::fs::write(root.join(&rel), text).unwrap();
    rel
}

/// Issue 24: a calibration file was believed whatever it held (a negative half-width
/// silenced the gate's noise notice, `1e308` printed `±inf%`, another cell's file spoke for
/// this one), and one that did not parse stopped the gate with exit 2.
#[test]
fn the_gate_ignores_a_calibration_cell_calibrate_cannot_write_with_a_notice_naming_the_field() {
    let tmp = tempfile::tempdir().unwrap();
    let root = project(tmp.path(), VERSIONS, "");
    let run = local(&root, &tmp.path().join("scratch"), &timings(1));
    let none = tmp.path().join("none");
    // The same file, usable, shows the machine's noise: the line the bad ones must not.
    write_calibration(
        &root,
        &serde_json::to_string_pretty(&noisy_calibration()).unwrap(),
    );
    let text = stdout(&gate(&root, &run, &none).success());
    assert!(
        text.contains("this machine's A/A noise on mix (cpu time) is ±20.00%"),
        "{text}"
    );
    for (what, why, file) in bad_calibrations() {
        let rel = write_calibration(&root, &file);
        let text = stdout(&gate(&root, &run, &none).success());
        let notice = format!("{rel} is ignored: {why}");
        assert!(text.contains(&notice), "{what}: no `{notice}` in\n{text}");
        assert!(text.contains("rerun cell calibrate"), "{what}:\n{text}");
        assert!(
            !text.contains("this machine's A/A noise"),
            "{what}: the file was used\n{text}"
        );
    }
}

/// Issue 24: `CLOCK=auto` and `PROTOCOL=auto` took their choice from any calibration file,
/// and said nothing when they could not read one.
#[test]
fn clock_and_protocol_auto_take_the_defaults_past_an_ignored_calibration_and_record_why() {
    let tmp = tempfile::tempdir().unwrap();
    let root = project(tmp.path(), &format!("{VERSIONS}CLOCK=auto\n"), "");
    let scratch = tmp.path().join("scratch");
    let protocol = |run: &Path| {
        read_json(&cell_testkit::first_dir(run).join("results.json"))["jobs"]["clang"]["protocol"]
            .clone()
    };
    // A usable file: the calibration's quieter clock, and why.
    write_calibration(
        &root,
        &serde_json::to_string_pretty(&noisy_calibration()).unwrap(),
    );
    let p = protocol(&local(&root, &scratch, &timings(1)));
    assert_eq!(p["default_clock"], "wall", "{p}");
    assert_eq!(
        p["clock_chosen"], "CLOCK=auto: wall, the quieter in this cell's calibration",
        "{p}"
    );
    for (what, why, file) in bad_calibrations() {
        let rel = write_calibration(&root, &file);
        let (out, run) = common::scripted_local(&root, &scratch, &timings(1), &[]);
        let notice = format!("{rel} is ignored: {why}");
        let p = protocol(&run);
        assert_eq!(p["default_clock"], "cpu", "{what}: {p}");
        let clock = p["clock_chosen"].as_str().unwrap();
        assert!(
            clock.starts_with(&format!("CLOCK=auto: cpu, {notice}")),
            "{what}: {clock}"
        );
        assert_eq!(p["mode"].as_str().unwrap_or("sequential"), "sequential");
        let mode = p["mode_chosen"].as_str().unwrap();
        assert!(
            mode.starts_with(&format!("PROTOCOL=auto: sequential, {notice}")),
            "{what}: {mode}"
        );
        // cell local judges its run and says so too.
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains(&notice), "{what}: cell local said\n{text}");
        assert!(
            !text.contains("this machine's A/A noise"),
            "{what}:\n{text}"
        );
    }
}
