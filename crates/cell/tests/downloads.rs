//! `cell install` of a tarball toolchain whose download never ends or is stopped: a deadline on
//! each download, and nothing left in the cache when the deadline passes or a signal arrives.
#![cfg(unix)]

mod common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use cell_testkit::archive::{Entry, tar_gz};
use cell_testkit::http::{Response, Server};
use common::{VERSIONS, cell, project};

const ASSET: &str = "tool-1.0.tar.gz";

/// A small release: `tool-1.0/bin/tool`.
fn tarball() -> Vec<u8> {
    tar_gz(&[
        Entry::Dir("tool-1.0/"),
        Entry::Dir("tool-1.0/bin/"),
        Entry::File("tool-1.0/bin/tool", b"#!/bin/sh\necho 1.0\n", 0o755),
    ])
}

/// A release of `files` empty files: quick to download, seconds to unpack.
fn many_files(files: usize) -> Vec<u8> {
    let names: Vec<String> = (0..files)
        .map(|i| format!("tool-1.0/d{}/f{i}", i / 1000))
        .collect();
    let entries: Vec<Entry<'_>> = names.iter().map(|n| Entry::File(n, b"", 0o644)).collect();
    tar_gz(&entries)
}

/// The project with toolchain `tool` from `server`'s `/r/<ASSET>`, pinned to `tar`, with its
/// `.sha256` checked when `checksum` says so.
fn tool_project(dir: &Path, server: &Server, tar: &[u8], checksum: bool) -> PathBuf {
    let versions = format!("{VERSIONS}TOOL_SHA256={}\n", cell_testkit::sha256(tar));
    let checksum = if checksum {
        ", checksum = \"{url}.sha256\""
    } else {
        ""
    };
    let toml = format!(
        "\n[toolchains.tool]\ninstall = {{ tarball = {{ template = \"{}/r/{ASSET}\", sha256 = \"TOOL_SHA256\", strip = 1{checksum} }} }}\ntools.tool = {{ version = [\"--version\"] }}\n",
        server.base()
    );
    project(dir, &versions, &toml)
}

fn install(root: &Path, cache: &Path) -> assert_cmd::Command {
    let mut c = cell();
    c.env("CELL_CACHE", cache)
        .args(["install", "--toolchain", "tool", "--root"])
        .arg(root);
    c
}

/// What the cache's toolchains dir holds (nothing when it was never made).
fn cached(cache: &Path) -> Vec<String> {
    let dir = cache.join("toolchains");
    if dir.exists() {
        cell_testkit::names(&dir)
    } else {
        Vec::new()
    }
}

const EVERY: Duration = Duration::from_millis(500);

/// Regression: a tarball (or its published checksum) trickling a byte every half second held
/// `cell install` as long as the server liked. Now each download has a deadline: exit 2 naming
/// the URL that ran out, nothing in the cache.
#[test]
fn a_tarball_or_checksum_that_trickles_past_its_deadline_exits_2_and_caches_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let tar = tarball();
    let sums = format!("{}  {ASSET}\n", cell_testkit::sha256(&tar));
    let server = Server::routes([
        (
            format!("/r/{ASSET}"),
            Response::ok(tar.clone()).trickled(EVERY),
        ),
        (
            format!("/r/{ASSET}.sha256"),
            Response::ok(sums.clone()).trickled(EVERY),
        ),
    ]);
    for checksum in [false, true] {
        let dir = tempfile::tempdir_in(tmp.path()).unwrap();
        let root = tool_project(dir.path(), &server, &tar, checksum);
        let cache = dir.path().join("cache");
        let url = if checksum {
            server.url(&format!("/r/{ASSET}.sha256"))
        } else {
            server.url(&format!("/r/{ASSET}"))
        };
        let started = std::time::Instant::now();
        install(&root, &cache)
            .args(["--timeout", "2"])
            .assert()
            .code(2)
            .stderr(predicates::str::contains(format!(
                "GET {url}: not done within its deadline of 2 s"
            )));
        let whole = EVERY * u32::try_from(sums.len().min(tar.len())).unwrap();
        assert!(started.elapsed() < whole / 2, "{:?}", started.elapsed());
        assert_eq!(cached(&cache), Vec::<String>::new());
    }
    // versions.env's FETCH_TIMEOUT_S is the default of --timeout.
    let dir = tempfile::tempdir_in(tmp.path()).unwrap();
    let root = tool_project(dir.path(), &server, &tar, false);
    let env = root.join("versions.env");
    let text = std::fs::read_to_string(&env).unwrap();
    std::fs::write(&env, format!("{text}FETCH_TIMEOUT_S=1\n")).unwrap();
    install(&root, &dir.path().join("cache"))
        .assert()
        .code(2)
        .stderr(predicates::str::contains("its deadline of 1 s"));
}

/// `cell install` as a process of its own, stderr to a file.
fn spawn_install(root: &Path, cache: &Path) -> std::process::Child {
    std::process::Command::new(assert_cmd::cargo::cargo_bin("cell"))
        .env("CELL_CACHE", cache)
        .env("CELL_CPU_LOCKS", common::cpu_locks())
        .args(["install", "--toolchain", "tool", "--root"])
        .arg(root)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap()
}

/// Polls (every 10 ms, for a minute at most) until a name in `dir` starts with `prefix`.
fn appears(dir: &Path, prefix: &str) -> bool {
    (0..6000).any(|_| {
        std::thread::sleep(Duration::from_millis(10));
        dir.exists()
            && cell_testkit::names(dir)
                .iter()
                .any(|n| n.starts_with(prefix))
    })
}

fn sigterm(child: &mut std::process::Child) -> std::process::ExitStatus {
    let pid = libc::pid_t::try_from(child.id()).unwrap();
    // SAFETY: kill(2) of our own child, which has not been reaped yet.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
    child.wait().unwrap()
}

/// Regression: SIGTERM mid-download left the `.cell-fetch-*.part` file in the cache, and
/// mid-unpack the half-unpacked tree. Now both are removed and the process exits 143.
#[test]
fn an_install_stopped_by_sigterm_leaves_nothing_in_the_cache() {
    let tmp = tempfile::tempdir().unwrap();
    // Mid-download: a trickling tarball.
    let tar = tarball();
    let slow = Server::routes([(
        format!("/r/{ASSET}"),
        Response::ok(tar.clone()).trickled(EVERY),
    )]);
    let root = tool_project(&tmp.path().join("a"), &slow, &tar, false);
    let cache = tmp.path().join("cache-a");
    let mut child = spawn_install(&root, &cache);
    assert!(appears(&cache.join("toolchains"), ".cell-fetch-"));
    assert_eq!(sigterm(&mut child).code(), Some(143));
    assert_eq!(cached(&cache), Vec::<String>::new());

    // Mid-unpack: forty thousand files, served at once.
    let big = many_files(40_000);
    let fast = Server::routes([(format!("/r/{ASSET}"), Response::ok(big.clone()))]);
    let root = tool_project(&tmp.path().join("b"), &fast, &big, false);
    let cache = tmp.path().join("cache-b");
    let mut child = spawn_install(&root, &cache);
    assert!(appears(&cache.join("toolchains"), ".cell-unpack-"));
    assert_eq!(sigterm(&mut child).code(), Some(143));
    assert_eq!(cached(&cache), Vec::<String>::new());
}
