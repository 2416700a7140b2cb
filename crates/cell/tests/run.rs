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
    assert_eq!(results["schema_version"], cell_schema::SCHEMA_VERSION);
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
    let samples = &rows["c-slow"]["phases"]["mix"]["samples"];
    assert_eq!(samples["wall_us"].as_array().unwrap().len(), 4);
    assert_eq!(samples["warmup_runs"], 1);
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
    assert_eq!(mix["samples"]["seq"].as_array().unwrap().len(), 4);
    assert_eq!(
        mix["samples"]["ok"],
        serde_json::json!([false, false, false, false]),
        "every run printed 41"
    );
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
            predicate::str::contains(
                "clang, cs, gcc, go, node, php, puma, python, ruby, rust, zig",
            ),
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
            "toolchain `python` has no workload rows: it only builds or runs servers (--suite http --server python, --suite http --server uvicorn)",
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

/// A workload whose `mix` prints `-DLOUD=<n>` bytes of `x` instead of its answer.
const LOUD_C: &str = r#"#include <stdio.h>
#include <string.h>
int main(int argc, char **argv) {
    char p = argc > 1 ? argv[1][0] : 0;
#ifdef LOUD
    if (p == 'm') {
        static char line[1 << 16];
        memset(line, 'x', sizeof line);
        for (long n = 0; n < LOUD; n += (long)sizeof line) fwrite(line, 1, sizeof line, stdout);
        return 0;
    }
#endif
    if (p == 'm') puts("42");
    else if (p == 'f') puts("7");
    else { puts("42"); puts("7"); }
    return 0;
}
"#;

/// `cell run` of the tiny project with the row `c-loud` built with `flags`, under `dir`: its
/// exit code, the peak RSS (KiB) of `cell` and the processes it waited for, and the job dir.
fn run_loud(dir: &std::path::Path, flags: &[&str]) -> (i32, i64, std::path::PathBuf) {
    let mut row = c_row("c-loud", "clang", "prints a lot", "clang", flags);
    row = row.replace("source = \"c\"", "source = \"loud\"");
    let root = project(dir, VERSIONS, &row);
    std::fs::create_dir_all(root.join("bench/workload/loud")).unwrap();
    std::fs::write(root.join("bench/workload/loud/main.c"), LOUD_C).unwrap();
    let out = dir.join("job");
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("cell"))
        .env_remove("CELL_ROOT")
        .env("CELL_CPU_LOCKS", common::cpu_locks())
        .args(["run", "-q", "--cell", "local", "--toolchain", "clang"])
        .arg("--root")
        .arg(&root)
        .arg("--out")
        .arg(&out)
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let pid = libc::pid_t::try_from(child.id()).unwrap();
    let mut status = 0;
    // SAFETY: rusage is plain data that wait4 fills for our own child, reaped here once.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let r = unsafe { libc::wait4(pid, &raw mut status, 0, &raw mut usage) };
    assert_eq!(r, pid, "{}", std::io::Error::last_os_error());
    std::mem::forget(child);
    assert!(libc::WIFEXITED(status), "cell killed: {status}");
    (libc::WEXITSTATUS(status), usage.ru_maxrss, out)
}

/// Regression: a row printing 1 GB took 8.4 GB of memory and wrote a 2.1 GB results.json,
/// its whole stdout kept in memory for every run and written into the wrong-answer message.
#[test]
fn a_row_printing_200_mb_is_wrong_with_its_length_in_bounded_memory() {
    const LOUD: u64 = 200_000_000;
    let quiet = tempfile::tempdir().unwrap();
    let (code, quiet_rss, quiet_out) = run_loud(quiet.path(), &["-O2"]);
    assert_eq!(code, 0, "the same project answering right passes");
    let loud = tempfile::tempdir().unwrap();
    let flag = format!("-DLOUD={LOUD}L");
    let (code, loud_rss, out) = run_loud(loud.path(), &["-O2", &flag]);
    assert_eq!(code, 1, "a wrong answer fails the job");

    let size = |p: &std::path::Path| std::fs::metadata(p.join("results.json")).unwrap().len();
    let (quiet_size, loud_size) = (size(&quiet_out), size(&out));
    eprintln!(
        "peak RSS KiB: right answer {quiet_rss}, 200 MB answer {loud_rss}; \
         results.json bytes: {quiet_size} / {loud_size}"
    );
    assert!(loud_size < 1_000_000, "results.json is {loud_size} bytes");
    assert!(
        loud_rss < quiet_rss + 100 * 1024,
        "peak RSS {loud_rss} KiB against {quiet_rss} KiB answering right"
    );

    let results = read_json(&out.join("results.json"));
    assert_valid("results", &results);
    let mix = &results["rows"]["c-loud"]["phases"]["mix"];
    assert_eq!(mix["answer_ok"], false);
    assert_eq!(mix["printed"]["bytes"], LOUD.div_ceil(1 << 16) * (1 << 16));
    let sha = mix["printed"]["sha256"].as_str().unwrap();
    assert_eq!(sha.len(), 64);
    let wrong = mix["wrong"].as_str().unwrap();
    let bytes = mix["printed"]["bytes"].as_u64().unwrap();
    assert!(
        wrong.starts_with(&format!(
            "printed {bytes} bytes (sha256 {sha}), starting: \"xxxx"
        )),
        "{wrong}"
    );
    assert!(wrong.ends_with(r#", expected "42\n""#), "{wrong}");
    // A right answer records no size: its results are as they were.
    let fib = &results["rows"]["c-loud"]["phases"]["fib"];
    assert_eq!(fib["answer_ok"], true);
    assert!(fib.get("printed").is_none());
}

/// Regression: on a full disk the job dir's files were written one by one, and the job left
/// results.json and facts.json without RESULTS.md, a dir that looked complete. Here the disk
/// is "full" for results.json (`ulimit -f`, `SIGXFSZ` ignored so the write fails with
/// `EFBIG`): the command fails naming the file, and none of the set is there, nor a stage.
#[test]
fn a_full_disk_leaves_no_part_of_the_job_dir() {
    let tmp = tempfile::tempdir().unwrap();
    // 400 measured rounds on scripted timings: a results.json well past the 40 KiB limit
    // (a row's runs are columns, about 40 bytes a run), while every file the build writes (a
    // binary of about 16 KiB) stays under it.
    let versions = "REPS=400\nDROP=1\nREPS_MAX=400\nPHASES=mix,fib\nTOOTH_PHASE=mix\nTOOTH_MIN=2\nREFERENCE=c-fast\n";
    let root = project(tmp.path(), versions, "");
    let timings = cell_testkit::scripted::Timings::new(1)
        .row("c-fast", 0.04)
        .row("c-slow", 0.1)
        .write(&tmp.path().join("timings.json"));
    let parent = tmp.path().join("jobs");
    let out = parent.join("job");
    let script = "trap '' XFSZ; ulimit -f 40; exec \"$0\" \"$@\"";
    let a = std::process::Command::new("bash")
        .args(["-c", script])
        .arg(assert_cmd::cargo::cargo_bin("cell"))
        .args(["run", "-q", "--cell", "local", "--toolchain", "clang"])
        .arg("--scripted-timings")
        .arg(&timings)
        .arg("--root")
        .arg(&root)
        .arg("--out")
        .arg(&out)
        .env_remove("CELL_ROOT")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&a.stderr);
    assert_eq!(a.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!("{}", out.join("results.json").display())),
        "{stderr}"
    );
    assert!(stderr.contains("File too large"), "{stderr}");
    // The builds are there (they were written before the disk filled); no file of the set is.
    let left: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left, ["build"]);
    let beside: Vec<String> = std::fs::read_dir(&parent)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(beside, ["job"], "no staging dir is left");
}

/// The row `c-meet`: each run leaves the file `ME` and waits (30 s at most) for `OTHER`, which
/// the other job's `c-meet` leaves, so it answers right only once both jobs have been timing
/// at the same moment.
const MEET_C: &str = r#"
#include <stdio.h>
#include <unistd.h>
int main(int argc, char **argv) {
    char p = argc > 1 ? argv[1][0] : 0;
    FILE *f = fopen(ME, "w");
    if (f) fclose(f);
    for (int i = 0; i < 3000 && access(OTHER, F_OK) != 0; i++) usleep(10000);
    if (access(OTHER, F_OK) != 0) { puts("alone"); return 0; }
    if (p == 'm') puts("42");
    else if (p == 'f') puts("7");
    else { puts("42"); puts("7"); }
    return 0;
}
"#;

/// The two CPUs both jobs are confined to: the highest allowed one and cpu0 (else the next
/// highest), so that on any machine the second job finds its preferred CPU taken.
fn two_cpus() -> Option<[u32; 2]> {
    let order = cell_run::cpus::preference(&cell_run::cpus::allowed());
    match order.as_slice() {
        [top, .., last] => Some([*top, if *last == 0 { 0 } else { order[1] }]),
        _ => None,
    }
}

/// A `cell run` of its own project under `dir`, whose `c-meet` meets the other job's, confined
/// to `cpus`, taking its CPU locks in `locks`.
fn meeting_job(
    dir: &std::path::Path,
    me: &str,
    other: &str,
    cpus: [u32; 2],
    locks: &std::path::Path,
) -> std::process::Child {
    use std::os::unix::process::CommandExt as _;
    let meet = dir.parent().unwrap().join("meet");
    let define = |k: &str, v: &str| format!("-D{k}=\"{}\"", meet.join(v).display());
    let mut row = c_row(
        "c-meet",
        "clang",
        "meets the other job",
        "clang",
        &["-O2", &define("ME", me), &define("OTHER", other)],
    );
    row = row.replace("source = \"c\"", "source = \"meet\"");
    let root = project(dir, VERSIONS, &row);
    std::fs::create_dir_all(root.join("bench/workload/meet")).unwrap();
    std::fs::create_dir_all(&meet).unwrap();
    std::fs::write(root.join("bench/workload/meet/main.c"), MEET_C).unwrap();
    let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("cell"));
    cmd.env_remove("CELL_ROOT")
        .env("CELL_CPU_LOCKS", locks)
        .args([
            "run",
            "-q",
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
        .arg(dir.join("job"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    // SAFETY: the hook only calls sched_setaffinity, which is async-signal-safe.
    unsafe {
        cmd.pre_exec(move || {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            for c in cpus {
                libc::CPU_SET(c as usize, &mut set);
            }
            if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &raw const set)
                == 0
            {
                Ok(())
            } else {
                Err(std::io::Error::last_os_error())
            }
        });
    }
    cmd.spawn().unwrap()
}

/// Two `cell` processes on one machine (two runner services, a local run beside a CI job)
/// timed on the same CPU before the CPU lock: both pinned the highest CPU. Here two real
/// `cell run`s share one lock dir and are made to time at the same moment.
#[cfg(target_os = "linux")]
#[test]
fn two_cell_runs_at_once_time_on_different_cpus() {
    let Some(cpus) = two_cpus() else {
        println!("skipped: fewer than 2 CPUs allowed here");
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let locks = tmp.path().join("locks");
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    let ja = meeting_job(&a, "a", "b", cpus, &locks);
    let jb = meeting_job(&b, "b", "a", cpus, &locks);
    let mut timings = Vec::new();
    for (dir, job) in [(&a, ja), (&b, jb)] {
        let out = job.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let results = read_json(&dir.join("job/results.json"));
        assert_valid("results", &results);
        assert_eq!(
            results["rows"]["c-meet"]["phases"]["mix"]["answer_ok"], true,
            "the two jobs timed at the same moment"
        );
        let md = std::fs::read_to_string(dir.join("job/RESULTS.md")).unwrap();
        assert!(md.contains("CPU lock: cpu"), "{md}");
        timings.push(results["machine"]["timing"].clone());
    }
    let on: Vec<u64> = timings
        .iter()
        .map(|t| t["cpus"][0].as_u64().unwrap())
        .collect();
    assert_ne!(on[0], on[1], "{timings:?}");
    for (t, cpu) in timings.iter().zip(&on) {
        assert!(cpus.contains(&u32::try_from(*cpu).unwrap()), "{t}");
        assert_eq!(t["cpus"].as_array().unwrap().len(), 1, "{t}");
        assert_eq!(t["shared"], false, "{t}");
    }
    // The job that did not get the preferred CPU took cpu0 as the last resort (or, where
    // cpu0 is not allowed, the next one down).
    let second = &timings[usize::from(on[0] == u64::from(cpus[0]))];
    if cpus[1] == 0 {
        assert_eq!(second["last_resort"], true, "{second}");
        assert_eq!(second["cpus"][0], 0, "{second}");
    } else {
        println!(
            "cpu0 is not allowed here: the second job took cpu{}",
            cpus[1]
        );
        assert_eq!(second["cpus"][0], cpus[1], "{second}");
    }
}
