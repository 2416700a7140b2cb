//! The previous release in the same job: tcc packaged twice as its project would publish it
//! (0.9.27, and a 0.9.28 whose compiler builds the workload with twice the work), served on
//! loopback. A committed baseline run of 0.9.27, then a run of 0.9.28 from the next commit:
//! the job installs both (each digest verified, the old one by the baseline commit's own
//! pins), times `tcc-O2` and `tcc-O2.prev` in the same rounds, and the gate says "tcc 0.9.28
//! against 0.9.27 in the same job". A tampered old tarball: the old release is skipped with
//! the reason, nothing of it timed.

mod common;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use cell_testkit::archive::{Entry, tar_gz};
use cell_testkit::http::{Response, Server};
use common::{VERSIONS, cell, project, read_json};

fn hex(bytes: &[u8]) -> String {
    cell_testkit::sha256(bytes).to_string()
}

fn asset(version: &str) -> String {
    format!("tcc-{version}-linux-x86_64.tar.gz")
}

/// tcc `version` as a release tarball; `bin/tcc` is the system's tcc itself, or a script that
/// runs it with `flags` first (a release whose output does other work).
fn tarball(version: &str, flags: Option<&str>) -> Vec<u8> {
    let tcc = std::fs::read("/usr/bin/tcc").expect("tcc is installed (scripts/setup --test)");
    let wrapper = flags.map(|f| format!("#!/bin/sh\nexec /usr/bin/tcc {f} \"$@\"\n"));
    let bin: &[u8] = wrapper.as_deref().map_or(&tcc, str::as_bytes);
    let (top, dir, file) = (
        format!("tcc-{version}/"),
        format!("tcc-{version}/bin/"),
        format!("tcc-{version}/bin/tcc"),
    );
    tar_gz(&[
        Entry::Dir(&top),
        Entry::Dir(&dir),
        Entry::File(&file, bin, 0o755),
    ])
}

/// Serves both releases and their `.sha256`; once `tampered` is set, the old tarball's bytes
/// have one byte changed (its published checksum stays the release's).
fn releases(old: Vec<u8>, new: Vec<u8>, tampered: Arc<AtomicBool>) -> Server {
    Server::start(move |req| {
        let path = req.path.as_str();
        for (version, bytes) in [("0.9.27", &old), ("0.9.28", &new)] {
            let name = asset(version);
            if path == format!("/releases/{name}") {
                let mut body = bytes.clone();
                if version == "0.9.27" && tampered.load(Ordering::SeqCst) {
                    let at = body.len() / 2;
                    body[at] ^= 0x01;
                }
                return Response::ok(body);
            }
            if path == format!("/releases/{name}.sha256") {
                return Response::ok(format!("{}  {name}\n", hex(bytes)));
            }
        }
        Response::not_found()
    })
}

fn versions(version: &str, pin: &str) -> String {
    // The exact lane is another issue's signal: this test is about time.
    format!("{VERSIONS}INSTRUCTIONS=off\nTCC_VERSION={version}\nTCC_SHA256_LINUX_X86_64={pin}\n")
}

fn toml(server: &Server) -> String {
    common::tcc_subject_toml(&server.base())
}

fn git(root: &Path, args: &[&str]) {
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(root)
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
}

fn local(root: &Path, out: &Path, cache: &Path) -> assert_cmd::assert::Assert {
    cell()
        .env("CELL_CACHE", cache)
        .args([
            "local",
            "--toolchains",
            "tcc",
            "--reps",
            "10",
            "--seed",
            "1",
        ])
        .arg("--root")
        .arg(root)
        .arg("--out")
        .arg(out)
        .assert()
}

/// The newest run dir (`<date>-local-<stamp>`) under `out`.
fn newest_run(out: &Path) -> PathBuf {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(out)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir() && p.file_name().unwrap().to_string_lossy().contains("-local-"))
        .collect();
    dirs.sort();
    dirs.pop().unwrap()
}

/// The tcc job's results of the newest run under `out`.
fn tcc_job(out: &Path) -> serde_json::Value {
    let run = newest_run(out);
    let jobs = out.join("jobs").join(run.file_name().unwrap());
    let dir = std::fs::read_dir(&jobs)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.file_name().unwrap().to_string_lossy().contains("tcc"))
        .unwrap();
    read_json(&dir.join("results.json"))
}

/// The job of the new release: both releases installed and verified, both rows timed in the
/// same rounds, each built from its own tree.
fn both_installed_and_timed(job: &serde_json::Value, old: &[u8], new: &[u8]) {
    assert_eq!(job["subject"]["sha256"], hex(new));
    assert_eq!(job["subject"]["verified"], "both");
    let prev = &job["previous"];
    assert_eq!(prev["recorded"]["sha256"], hex(old), "{prev}");
    assert_eq!(prev["installed"]["sha256"], hex(old), "{prev}");
    assert_eq!(prev["installed"]["version"], "0.9.27", "{prev}");
    assert_eq!(prev["installed"]["verified"], "both", "{prev}");
    assert!(prev.get("skipped").is_none(), "{prev}");
    assert_eq!(prev["commit"].as_str().unwrap().len(), 40);
    // Both rows, in the same rounds.
    let rows = &job["rows"];
    assert_eq!(rows["tcc-O2.prev"]["role"], "previous");
    assert_eq!(rows["tcc-O2.prev"]["label"], "tcc -O2 (0.9.27)");
    for phase in ["mix", "fib"] {
        // One run a round each, in the same rounds (a row's samples list its rounds only
        // when they are not one per round).
        let runs = |row: &str| rows[row]["phases"][phase]["samples"].clone();
        let (a, b) = (runs("tcc-O2"), runs("tcc-O2.prev"));
        assert_eq!(a["round"], b["round"], "{phase}");
        assert_eq!(
            a["seq"].as_array().unwrap().len(),
            b["seq"].as_array().unwrap().len()
        );
    }
    // The old release built the .prev row from its own tree, not the new one's.
    let tool = |row: &str| rows[row]["build"]["argv"][0].as_str().unwrap().to_owned();
    // Each from its own verified tree, cached by its digest.
    assert!(
        tool("tcc-O2.prev").contains(&hex(old)),
        "{}",
        tool("tcc-O2.prev")
    );
    assert!(tool("tcc-O2").contains(&hex(new)), "{}", tool("tcc-O2"));
    assert_ne!(tool("tcc-O2"), tool("tcc-O2.prev"));
}

#[test]
#[cfg_attr(
    not(all(target_os = "linux", target_arch = "x86_64")),
    ignore = "the packaged tcc is the x86-64 Linux one"
)]
fn a_new_release_is_timed_beside_the_baselines_and_a_tampered_old_one_is_skipped() {
    let tmp = tempfile::tempdir().unwrap();
    let old = tarball("0.9.27", None);
    // Twice the work of the default build: the new release's output is about 2x slower. Ten
    // rounds: two same-job units at 97.5% each need at least seven.
    let new = tarball("0.9.28", Some("-DITER=20000000UL"));
    let tampered = Arc::new(AtomicBool::new(false));
    let server = releases(old.clone(), new.clone(), tampered.clone());
    let root = project(tmp.path(), &versions("0.9.27", &hex(&old)), &toml(&server));
    git(&root, &["init", "-q"]);
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-q", "-m", "tcc 0.9.27"]);
    let (out, cache) = (tmp.path().join("runs"), tmp.path().join("cache"));
    local(&root, &out, &cache).success();
    assert!(
        tcc_job(&out).get("previous").is_none(),
        "a first run has no previous release"
    );
    // The same baseline, kept apart for the tampered run below.
    let out_tampered = tmp.path().join("runs-tampered");
    let cp = std::process::Command::new("cp")
        .arg("-a")
        .arg(&out)
        .arg(&out_tampered)
        .status()
        .unwrap();
    assert!(cp.success());

    // The next commit pins 0.9.28.
    std::fs::write(root.join("versions.env"), versions("0.9.28", &hex(&new))).unwrap();
    git(&root, &["commit", "-q", "-am", "tcc 0.9.28"]);
    let run = local(&root, &out, &cache).code(1);
    let stdout = String::from_utf8_lossy(&run.get_output().stdout).into_owned();
    let job = tcc_job(&out);
    both_installed_and_timed(&job, &old, &new);

    let gate = read_json(&newest_run(&out).join("gate.json"));
    let same = gate["cells"][0]["same_job"].as_array().unwrap();
    assert_eq!(same.len(), 2, "mix and fib: {gate}");
    for v in same {
        assert_eq!(v["status"], "fail", "twice the work: {v}");
        let r = v["ratio"]["median"].as_f64().unwrap();
        assert!((1.5..2.6).contains(&r), "{v}");
        let msg = v["message"].as_str().unwrap();
        assert!(
            msg.starts_with(&format!(
                "tcc 0.9.28 against 0.9.27 in the same job: tcc-O2 {}",
                v["phase"].as_str().unwrap()
            )),
            "{msg}"
        );
        assert!(stdout.contains(msg), "the gate prints it: {stdout}");
    }
    assert_eq!(gate["summary"]["same_job_fail"], 2);
    assert_eq!(gate["exit"], 1);
    // The merged cell keeps the .prev rows apart, with their samples.
    let cell_file = std::fs::read_dir(newest_run(&out))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.is_dir())
        .unwrap()
        .join("results.json");
    let merged = read_json(&cell_file);
    let md = std::fs::read_to_string(cell_file.with_file_name("RESULTS.md")).unwrap();
    assert!(md.contains("## Same job: the previous release"), "{md}");
    assert!(
        md.contains("| FAIL | tcc-O2 | mix |")
            && md.contains("tcc 0.9.28 against 0.9.27 in the same job: tcc-O2 mix "),
        "{md}"
    );
    assert!(
        merged["rows"].get("tcc-O2.prev").is_none(),
        "not a row of the history"
    );
    assert_eq!(
        merged["jobs"]["tcc"]["previous_rows"]["tcc-O2.prev"]["role"],
        "previous"
    );
    // The report page says it too, in HTML and in Markdown.
    let report = out.join(cell_schema::store::REPORT_DIR);
    for file in ["index.html", "README.md"] {
        let page = std::fs::read_to_string(report.join(file)).unwrap();
        assert!(
            page.contains("Same job: the previous release")
                && page.contains("0.9.28 against 0.9.27"),
            "{file}"
        );
    }
    common::assert_valid("results", &merged);
    common::assert_valid("results", &job);
    common::assert_valid("gate", &gate);

    // A tampered old tarball, from a cache that does not hold it: skipped, nothing timed.
    tampered.store(true, Ordering::SeqCst);
    let run = local(&root, &out_tampered, &tmp.path().join("cache-2")).code(1);
    let stdout = String::from_utf8_lossy(&run.get_output().stdout).into_owned();
    let job = tcc_job(&out_tampered);
    let why = job["previous"]["skipped"].as_str().unwrap();
    assert!(why.contains("sha256") || why.contains("SHA-256"), "{why}");
    assert!(job["previous"].get("installed").is_none());
    assert!(
        job["rows"].get("tcc-O2.prev").is_none(),
        "nothing of it timed"
    );
    let gate = read_json(&newest_run(&out_tampered).join("gate.json"));
    assert!(gate["cells"][0].get("same_job").is_none(), "{gate}");
    assert!(
        stdout.contains("the previous release 0.9.27")
            && stdout.contains("was not timed in the same job"),
        "{stdout}"
    );
}
