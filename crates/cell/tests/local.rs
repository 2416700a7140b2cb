//! `cell local` through the binary: every job this machine can run, merged into one run dir.

mod common;

use common::{GCC_TOML, GHOST_TOML, VERSIONS, assert_valid, cell, project, read_json};
use predicates::prelude::*;

#[test]
fn local_runs_every_installed_job_and_merges_them_per_cell() {
    let tmp = tempfile::tempdir().unwrap();
    let root = project(tmp.path(), VERSIONS, &format!("{GCC_TOML}\n{GHOST_TOML}"));
    let out = tmp.path().join("runs");
    let assert = cell()
        .args(["local", "--seed", "3"])
        .arg("--root")
        .arg(&root)
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&assert.get_output().stdout).into_owned();
    let stderr = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
    // Per phase, every row with its ratio and CI; the absent toolchain listed, not fatal.
    for needle in ["mix", "fib", "c-fast", "c-slow", "gcc-O2", "ratio", "CI"] {
        assert!(stdout.contains(needle), "stdout lacks {needle}:\n{stdout}");
    }
    assert!(
        stderr.contains("[ghost] not installed: `ghostc` is not on PATH"),
        "{stderr}"
    );

    let runs: Vec<_> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.contains("-local-"))
        .collect();
    assert_eq!(runs.len(), 1, "{runs:?}");
    assert!(runs[0].contains("-local-"), "{}", runs[0]);
    let cell_id = format!("{}-{}-local", std::env::consts::OS, std::env::consts::ARCH);
    let dir = out.join(&runs[0]).join(&cell_id);
    let merged = read_json(&dir.join("results.json"));
    assert_valid("results", &merged);
    assert!(dir.join("RESULTS.md").is_file());
    for tc in ["clang", "gcc"] {
        assert_valid(
            "facts",
            &read_json(&dir.join("facts").join(format!("{tc}.json"))),
        );
    }
    assert_eq!(merged["kind"], "cell");
    // Each row keeps the ratio of its own job; the reference is listed per job, never averaged.
    assert_eq!(merged["rows"]["gcc-O2"]["job"], "gcc");
    assert_eq!(merged["rows"]["c-slow"]["job"], "clang");
    assert_eq!(merged["rows"]["c-fast"]["job"], "clang");
    assert_eq!(
        merged["rows"]["c-fast"]["phases"]["mix"]["ratio"]["cpu"]["median"],
        1.0
    );
    assert!(merged["rows"].get("control").is_none());
    for tc in ["clang", "gcc"] {
        assert!(
            merged["jobs"][tc]["reference"]["phases"]["mix"]["stats"]["cpu"]["median"]
                .as_f64()
                .unwrap()
                > 0.0
        );
        assert!(merged["jobs"][tc]["versions"].get(tc).is_some());
    }
    // gcc's job used clang only for the reference: its versions list both, clang's job not gcc.
    assert!(merged["jobs"]["clang"]["versions"].get("gcc").is_none());
    assert_eq!(merged["missing"][0]["toolchain"], "ghost");
    let total: f64 = ["clang", "gcc"]
        .iter()
        .map(|t| merged["cost"]["jobs_s"][t].as_f64().unwrap())
        .sum();
    assert!((merged["cost"]["total_s"].as_f64().unwrap() - total).abs() < 1e-6);
}

#[test]
fn local_with_an_unknown_toolchain_is_exit_2() {
    let tmp = tempfile::tempdir().unwrap();
    let root = project(tmp.path(), VERSIONS, "");
    cell()
        .args(["local", "--toolchains", "clang,cobol"])
        .arg("--root")
        .arg(&root)
        .arg("--out")
        .arg(tmp.path().join("o"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("unknown toolchain `cobol`"));
}

/// `INSTRUCTIONS=on`: every timed row but the control is counted under the real valgrind on
/// each phase, the counts survive the merge (rows and each job's reference), the job records
/// the valgrind that ran, RESULTS.md shows them, and the merged file validates.
#[cfg(target_os = "linux")]
#[test]
fn local_with_the_instruction_lane_records_counts_that_survive_the_merge() {
    let tmp = tempfile::tempdir().unwrap();
    let root = project(tmp.path(), &format!("{VERSIONS}INSTRUCTIONS=on\n"), "");
    let out = tmp.path().join("runs");
    cell()
        .args(["local", "--seed", "5", "--toolchains", "clang"])
        .arg("--root")
        .arg(&root)
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    let dir = cell_testkit::first_dir(&cell_testkit::local_run_dir(&out));
    let merged = read_json(&dir.join("results.json"));
    assert_valid("results", &merged);
    let lane = &merged["jobs"]["clang"]["instructions"];
    assert!(lane.get("skipped").is_none(), "{lane}");
    assert!(
        lane["version"].as_str().unwrap().starts_with("valgrind-"),
        "{lane}"
    );
    assert_eq!(lane["argv"][1], "--tool=cachegrind");
    let count =
        |row: &serde_json::Value, phase: &str| row["phases"][phase]["instructions"].as_u64();
    for phase in ["mix", "fib"] {
        let fast = count(&merged["rows"]["c-fast"], phase).unwrap();
        let slow = count(&merged["rows"]["c-slow"], phase).unwrap();
        // c-slow does 4× the work of c-fast in the same loop.
        assert!(
            slow > 3 * fast && fast > 10_000_000,
            "{phase}: {fast} {slow}"
        );
        assert_eq!(
            count(&merged["jobs"]["clang"]["reference"], phase),
            Some(fast)
        );
        // The control is a copy of the reference: never counted.
        assert_eq!(count(&merged["jobs"]["clang"]["control"], phase), None);
    }
    let md = std::fs::read_to_string(dir.join("RESULTS.md")).unwrap();
    assert!(md.contains("## Exact lane"), "{md}");
    let fast_mix = count(&merged["rows"]["c-fast"], "mix").unwrap();
    assert!(md.contains(&format!("| {fast_mix} ×1.0000 |")), "{md}");
}

/// The exact lane on by default: two runs of the same C binaries count the same and pass the
/// code verdict; a row rebuilt to do 3% more work fails it on every phase (exit 1), whatever
/// the time verdicts say, and gate.json, the lines and RESULTS.md say so.
#[cfg(target_os = "linux")]
#[test]
fn three_percent_more_work_fails_the_code_verdict_and_the_same_binaries_pass_it() {
    let tmp = tempfile::tempdir().unwrap();
    let knob = |iter: &str| {
        cell_testkit::snippets::c_row(
            "c-knob",
            "clang",
            "clang -O2, a knob",
            "clang",
            &["-O2", &format!("-DITER={iter}")],
        )
    };
    let out = tmp.path().join("runs");
    let local = |root: &std::path::Path| {
        cell()
            .args(["local", "--seed", "5", "--toolchains", "clang"])
            .arg("--root")
            .arg(root)
            .arg("--out")
            .arg(&out)
            .assert()
    };
    let same = project(&tmp.path().join("a"), VERSIONS, &knob("10000000UL"));
    local(&same).success();
    let second = local(&same);
    let gate_of = |stdout: &[u8]| {
        let dirs: Vec<_> = std::fs::read_dir(&out)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.is_dir() && p.file_name().unwrap().to_string_lossy().contains("-local-"))
            .collect();
        let newest = dirs.iter().max().unwrap();
        (
            read_json(&newest.join("gate.json")),
            String::from_utf8_lossy(stdout).into_owned(),
        )
    };
    let (gate, lines) = gate_of(&second.get_output().stdout);
    let code = gate["cells"][0]["code"].as_array().unwrap();
    assert_eq!(code.len(), 4, "c-slow and c-knob on mix and fib: {gate}");
    for v in code {
        assert_eq!(v["status"], "pass", "{v}");
        // The same binaries, the same counts: no change at all.
        assert_eq!(v["change"], 1.0, "{v}");
    }
    assert_eq!(gate["summary"]["code_fail"], 0);
    assert!(lines.contains("code PASS"), "{lines}");
    // Run 3: c-knob does 3% more work.
    let more = project(&tmp.path().join("b"), VERSIONS, &knob("10300000UL"));
    let third = local(&more).code(1);
    let (gate, lines) = gate_of(&third.get_output().stdout);
    let code = gate["cells"][0]["code"].as_array().unwrap();
    for v in code {
        let (row, phase) = (v["row"].as_str().unwrap(), v["phase"].as_str().unwrap());
        if row == "c-knob" {
            assert_eq!(v["status"], "fail", "{v}");
            let change = v["change"].as_f64().unwrap();
            assert!((1.025..1.035).contains(&change), "{v}");
            assert!(
                v["message"].as_str().unwrap().contains(&format!(
                    "the generated code does {:.1}% more estimated cycles on {phase}",
                    (change - 1.0) * 100.0
                )),
                "{v}"
            );
        } else {
            assert_eq!(
                (v["status"].as_str(), v["change"].as_f64()),
                (Some("pass"), Some(1.0)),
                "{v}"
            );
        }
    }
    assert_eq!(gate["summary"]["code_fail"], 2, "{gate}");
    assert_eq!(gate["exit"], 1);
    assert!(lines.contains("code FAIL"), "{lines}");
}
