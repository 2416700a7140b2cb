//! The release under test: a compiler that is none of the bundled toolchains (tcc), packaged
//! as its project would publish it (a tarball and its `.sha256`), served on loopback, declared
//! the subject, and run by `cell local` for real: fetched, verified before unpacking, cached
//! by digest, recorded with both digests, its row timed against `clang -O2`. One changed byte
//! of the tarball: exit 1, nothing unpacked, nothing timed.

mod common;

use std::path::{Path, PathBuf};

use cell_testkit::archive::{Entry, tar_gz};
use cell_testkit::http::{Response, Server};
use common::tcc::{ASSET, hex, release, tarball};
use common::{VERSIONS, cell, project, read_json};

/// The tiny project with tcc declared the release under test, pinned and checksummed.
fn subject_project(dir: &Path, server: &Server, pin: &str) -> PathBuf {
    let versions = common::tcc::versions(pin);
    let toml = common::tcc_subject_toml(&server.base());
    project(dir, &versions, &toml)
}

fn local(root: &Path, out: &Path, cache: &Path) -> assert_cmd::assert::Assert {
    cell()
        .env("CELL_CACHE", cache)
        .args([
            "local",
            "--toolchains",
            "tcc",
            "--reps",
            "3",
            "--seed",
            "1",
            "-q",
        ])
        .arg("--root")
        .arg(root)
        .arg("--out")
        .arg(out)
        .assert()
}

/// The results.json of the one job of the one run under `out`.
fn job_dir(out: &Path) -> PathBuf {
    cell_testkit::first_dir(&cell_testkit::first_dir(&out.join("jobs")))
}

fn job_result(out: &Path) -> serde_json::Value {
    read_json(&job_dir(out).join("results.json"))
}

#[test]
#[cfg_attr(
    not(all(target_os = "linux", target_arch = "x86_64")),
    ignore = "the packaged tcc is the x86-64 Linux one"
)]
fn a_compilers_own_tarball_is_verified_recorded_and_timed() {
    let tmp = tempfile::tempdir().unwrap();
    let tar = tarball();
    let server = release(tar.clone(), &tar);
    let root = subject_project(tmp.path(), &server, &hex(&tar));
    let (out, cache) = (tmp.path().join("runs"), tmp.path().join("cache"));
    local(&root, &out, &cache).success();

    let job = job_result(&out);
    let s = &job["subject"];
    assert_eq!(s["toolchain"], "tcc");
    assert_eq!(s["tag"], "release-0.9.27");
    assert_eq!(s["asset"], ASSET);
    assert_eq!(s["version"], "0.9.27");
    assert_eq!(s["sha256"], hex(&tar));
    assert_eq!(s["verified"], "both");
    assert_eq!(s["url"], format!("{}/releases/{ASSET}", server.base()));
    let tool = &s["tools"]["tcc"];
    let tcc = std::fs::read("/usr/bin/tcc").unwrap();
    assert_eq!(tool["sha256"], hex(&tcc), "the binary that built the row");
    assert_eq!(tool["bytes"], tcc.len());
    // And in the shape the upstream record has: the compiler's digest, size and version.
    assert_eq!(s["binary_sha256"], hex(&tcc));
    assert_eq!(s["binary_bytes"], tcc.len());
    assert_eq!(s["printed"], "tcc version 0.9.27 (x86_64 Linux)");
    assert!(
        tool["printed"]
            .as_str()
            .unwrap()
            .contains("tcc version 0.9.27")
    );
    assert!(
        tool["resolved"]
            .as_str()
            .unwrap()
            .starts_with(cache.to_str().unwrap()),
        "the row was built with the unpacked release, not the system's tcc: {tool}"
    );
    // The reference's tools carry their digests too.
    assert!(
        job["versions"]["clang"]["sha256"].is_string(),
        "{}",
        job["versions"]
    );
    // The row is timed against the reference.
    let ratio = &job["rows"]["tcc-O2"]["phases"]["mix"]["ratio"]["cpu"];
    assert!(ratio["median"].as_f64().unwrap() > 0.0, "{ratio}");

    // The footprint: compile time, binary and text bytes of the row, the release's size.
    let build = &job["rows"]["tcc-O2"]["build"];
    assert!(build["compile_s"].as_f64().unwrap() > 0.0, "{build}");
    let (bin, text) = (
        build["binary_bytes"].as_u64().unwrap(),
        build["text_bytes"].as_u64().unwrap(),
    );
    assert!(text > 0 && text < bin, "{build}");
    let size = &job["installed"]["tcc"];
    assert_eq!(size["method"], "tree", "{size}");
    assert!(
        size["bytes"].as_u64().unwrap() >= tcc.len() as u64,
        "{size}"
    );

    // RESULTS.md and the gate name the release and both digests.
    let job_dir = job_dir(&out);
    let run = job_dir.parent().unwrap().to_path_buf();
    let md = std::fs::read_to_string(job_dir.join("RESULTS.md")).unwrap();
    assert!(md.contains("## Footprint"), "{md}");
    let row = md
        .lines()
        .find(|l| l.starts_with("| tcc-O2 | tcc | tcc |"))
        .expect("the row's footprint");
    assert!(
        row.contains(&format!("| {bin} | {text} |")) && !row.contains('–'),
        "compile s, builds, binary and text bytes: {row}"
    );
    let size = md
        .lines()
        .find(|l| l.starts_with("| tcc | tcc |"))
        .expect("the release's size");
    assert!(size.contains("| tree | files under "), "{size}");
    assert!(
        md.contains(&format!(
            "Release under test: `tcc` release-0.9.27, `{ASSET}` sha256 `{}` (verified by the pin and the published checksum); `tcc` sha256 `{}` ({} bytes)",
            hex(&tar),
            hex(&tcc),
            tcc.len()
        )),
        "{md}"
    );
    let run_dir = out.join(run.file_name().unwrap());
    let gate = read_json(&run_dir.join("gate.json"));
    assert!(
        gate["cells"][0]["notices"].to_string().contains(&format!(
            "release under test: tcc release-0.9.27 {ASSET} sha256 {}",
            hex(&tar)
        )),
        "{gate}"
    );

    // A second run finds the tree in the cache: the tarball is fetched once. (Its gate
    // against the first run may trip on a loaded machine: exit 1 is a verdict, not a fault.)
    let again = local(&root, &out, &cache);
    let code = again.get_output().status.code();
    assert!(matches!(code, Some(0 | 1)), "{code:?}");
    assert_eq!(server.hits(&format!("/releases/{ASSET}")), 1);
}

#[test]
fn one_changed_byte_of_the_tarball_is_exit_1_and_nothing_is_unpacked_or_timed() {
    let tmp = tempfile::tempdir().unwrap();
    let tar = tarball();
    let mut bad = tar.clone();
    let mid = bad.len() / 2;
    bad[mid] ^= 1;
    let server = release(bad, &tar);
    let root = subject_project(tmp.path(), &server, &hex(&tar));
    let (out, cache) = (tmp.path().join("runs"), tmp.path().join("cache"));
    local(&root, &out, &cache)
        .code(1)
        .stderr(predicates::str::contains("sha256 mismatch"));
    let cached: Vec<_> = std::fs::read_dir(cache.join("toolchains"))
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    assert!(cached.is_empty(), "unpacked: {cached:?}");
    if out.exists() {
        let written = cell_testkit::files(&out);
        assert!(
            written.is_empty(),
            "something was timed: {:?}",
            written.keys()
        );
    }
}

#[test]
fn a_pin_that_disagrees_with_the_published_checksum_is_exit_1_before_any_download() {
    let tmp = tempfile::tempdir().unwrap();
    let tar = tarball();
    let server = release(tar.clone(), &tar);
    let root = subject_project(tmp.path(), &server, &"0".repeat(64));
    let (out, cache) = (tmp.path().join("runs"), tmp.path().join("cache"));
    local(&root, &out, &cache)
        .code(1)
        .stderr(predicates::str::contains("the published checksum"))
        .stderr(predicates::str::contains("versions.env pins 0000"));
    assert_eq!(server.hits(&format!("/releases/{ASSET}")), 0);
}

/// The unpack caps are versions.env's: a release of four entries refused under a cap of one,
/// naming the URL, with nothing left in the cache.
#[test]
fn a_tarball_is_unpacked_under_the_caps_of_versions_env() {
    let tmp = tempfile::tempdir().unwrap();
    let tar = tarball();
    let server = release(tar.clone(), &tar);
    let root = subject_project(tmp.path(), &server, &hex(&tar));
    let env = root.join("versions.env");
    let text = std::fs::read_to_string(&env).unwrap();
    std::fs::write(&env, format!("{text}UNPACK_MAX_ENTRIES=1\n")).unwrap();
    let cache = tmp.path().join("cache");
    cell()
        .env("CELL_CACHE", &cache)
        .args(["install", "--toolchain", "tcc", "--root"])
        .arg(&root)
        .assert()
        .code(2)
        .stderr(predicates::str::contains("more than 1 entries"))
        .stderr(predicates::str::contains(ASSET));
    let left: Vec<_> = std::fs::read_dir(cache.join("toolchains"))
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn files_a_tarballs_strip_drops_are_said_by_cell_install() {
    // `strip = 1` left the files beside the tarball's top directory out without a word.
    let tmp = tempfile::tempdir().unwrap();
    let tar = tar_gz(&[
        Entry::Dir("tool-1/"),
        Entry::Dir("tool-1/bin/"),
        Entry::File("tool-1/bin/tool", b"#!/bin/sh\n", 0o755),
        Entry::File("LICENSE", b"MIT\n", 0o644),
        Entry::File("./NOTICE", b"n\n", 0o644),
    ]);
    let server = Server::routes([("/tool-1.tar.gz", Response::ok(tar.clone()))]);
    let versions = format!("{VERSIONS}TOOL_SHA256={}\n", hex(&tar));
    let toml = format!(
        "\n[toolchains.tool]\ninstall = {{ tarball = {{ template = \"{}\", sha256 = \"TOOL_SHA256\", strip = 1 }} }}\ntools.tool = {{ version = [\"-v\"] }}\n",
        server.url("/tool-1.tar.gz")
    );
    let root = project(tmp.path(), &versions, &toml);
    let cache = tmp.path().join("cache");
    let install = || {
        cell()
            .env("CELL_CACHE", &cache)
            .args(["install", "--toolchain", "tool", "--root"])
            .arg(&root)
            .assert()
            .success()
    };
    // `./NOTICE` is two levels as tar counts them: `NOTICE` is kept.
    install().stderr(predicates::str::contains(
        "tool strip 1: 1 entry above the stripped level was left out: `LICENSE`\n",
    ));
    let tree = cache.join("toolchains").join(hex(&tar));
    assert!(tree.join("bin/tool").is_file() && tree.join("NOTICE").is_file());
    // From the cache nothing is unpacked, so nothing is said.
    install().stderr(predicates::prelude::PredicateBooleanExt::not(
        predicates::str::contains("left out"),
    ));
}

/// A tarball with mirrors, installed as the workflow's step does (`cell install`): an
/// unreachable mirror passes to the next URL, the pinned digest is checked on the one that
/// answers, and a mirror serving other bytes stops at once (exit 1, nothing cached).
#[test]
fn a_mirrored_tarball_falls_through_unreachable_mirrors_and_stops_on_other_bytes() {
    let tmp = tempfile::tempdir().unwrap();
    let tar = tarball();
    let mut other = tar.clone();
    other[10] ^= 1;
    let server = Server::routes([
        (format!("/gone/{ASSET}"), Response::status(404)),
        (format!("/good/{ASSET}"), Response::ok(tar.clone())),
        (format!("/other/{ASSET}"), Response::ok(other)),
    ]);
    let install = |mirrors: &[&str], cache: &Path| {
        let versions = format!("{VERSIONS}TCC_SHA256={}\n", hex(&tar));
        let mirrors: Vec<String> = mirrors
            .iter()
            .map(|m| format!("\"{}\"", server.url(m)))
            .collect();
        let toml = format!(
            "\n[toolchains.tcc]\ninstall = {{ tarball = {{ template = \"{}/nowhere/{ASSET}\", sha256 = \"TCC_SHA256\", strip = 1, mirrors = [{}] }} }}\ntools.tcc = {{ version = [\"-v\"] }}\n",
            server.base(),
            mirrors.join(", ")
        );
        let dir = tempfile::tempdir_in(tmp.path()).unwrap();
        let root = project(dir.path(), &versions, &toml);
        let out = cell()
            .env("CELL_CACHE", cache)
            .args(["install", "--toolchain", "tcc", "--root"])
            .arg(&root)
            .output()
            .unwrap();
        (out, dir)
    };
    let cache = tmp.path().join("c1");
    let (out, _d) = install(&["/gone", "/good"], &cache);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(server.hits(&format!("/gone/{ASSET}")), 1);
    let tree = cache.join("toolchains").join(hex(&tar));
    assert!(tree.join("bin/tcc").is_file());

    let cache = tmp.path().join("c2");
    let (out, _d) = install(&["/other", "/good"], &cache);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("sha256 mismatch"));
    assert_eq!(
        server.hits(&format!("/good/{ASSET}")),
        1,
        "no URL after other bytes"
    );
    assert!(!cache.join("toolchains").join(hex(&tar)).exists());

    let (out, _d) = install(&["/gone"], &tmp.path().join("c3"));
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The gate fails a run whose job verified other bytes than the pin, or whose jobs verified
/// different bytes for the same asset (a results file edited after the fact, or a job that
/// fetched elsewhere).
#[test]
fn the_gate_fails_a_subject_digest_that_is_not_the_pin_or_differs_between_jobs() {
    let tmp = tempfile::tempdir().unwrap();
    let tar = tarball();
    let server = release(tar.clone(), &tar);
    let root = subject_project(tmp.path(), &server, &hex(&tar));
    let (out, cache) = (tmp.path().join("runs"), tmp.path().join("cache"));
    cell()
        .env("CELL_CACHE", &cache)
        .args([
            "local",
            "--toolchains",
            "clang,tcc",
            "--reps",
            "3",
            "--seed",
            "1",
            "-q",
        ])
        .arg("--root")
        .arg(&root)
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    let run = cell_testkit::local_run_dir(&out);
    let cell_dir = cell_testkit::first_dir(&run);
    let file = cell_dir.join("results.json");
    let mut merged = read_json(&file);
    assert_eq!(
        merged["jobs"]["clang"]["subject"]["sha256"],
        hex(&tar),
        "every job verifies it"
    );
    let gate = |history: &Path| {
        cell()
            .args(["gate", run.to_str().unwrap(), "--history"])
            .arg(history)
            .arg("--root")
            .arg(&root)
            .assert()
    };
    let empty = tmp.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    gate(&empty).success();
    merged["jobs"]["clang"]["subject"]["sha256"] = "1".repeat(64).into();
    std::fs::write(&file, cell_schema::to_json(&merged)).unwrap();
    let a = gate(&empty).code(1);
    let printed = String::from_utf8_lossy(&a.get_output().stdout).into_owned();
    assert!(
        printed.contains(&format!(
            "subject: job clang verified {ASSET} as {}, but versions.env pins {}",
            "1".repeat(64),
            hex(&tar)
        )),
        "{printed}"
    );
    assert!(
        printed.contains("differs between jobs of this run"),
        "{printed}"
    );
}
