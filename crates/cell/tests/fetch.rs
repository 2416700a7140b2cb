//! `cell fetch` through the binary, against a loopback HTTP/1.1 server started by each test.
#![cfg(unix)]

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use cell_testkit::archive::{Entry, tar_gz, zip};
use cell_testkit::http::{Response, Server};
use cell_testkit::{is_executable, sha256, tree};
use predicates::prelude::*;

// ---------------------------------------------------------------- archives

/// A good archive: a top directory with an executable and a data file.
fn good_tar_gz() -> Vec<u8> {
    tar_gz(&[
        Entry::Dir("pkg-1.0/"),
        Entry::Dir("pkg-1.0/bin/"),
        Entry::File("pkg-1.0/bin/tool", b"#!/bin/sh\necho hi\n", 0o755),
        Entry::File("pkg-1.0/README", b"read me\n", 0o644),
        Entry::Symlink("pkg-1.0/bin/tool2", "tool"),
    ])
}

// ---------------------------------------------------------------- harness

/// A scratch area: `work/` holds the destination `work/dest`; everything else in the
/// temporary directory is "outside".
struct Scratch {
    tmp: tempfile::TempDir,
}

impl Scratch {
    fn new() -> Self {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir(tmp.path().join("work")).unwrap();
        Self { tmp }
    }
    fn base(&self) -> &Path {
        self.tmp.path()
    }
    fn dest(&self) -> PathBuf {
        self.base().join("work").join("dest")
    }
    /// Every path under the scratch area, relative and sorted.
    fn listing(&self) -> Vec<String> {
        tree(self.base())
    }
}

fn cell(scratch: &Scratch) -> Command {
    let mut cmd = Command::cargo_bin("cell").unwrap();
    cmd.current_dir(scratch.base());
    for var in [
        "http_proxy",
        "HTTP_PROXY",
        "https_proxy",
        "HTTPS_PROXY",
        "ALL_PROXY",
        "all_proxy",
    ] {
        cmd.env_remove(var);
    }
    cmd.arg("fetch");
    cmd
}

/// Runs a fetch of `archive` (served as `name`) that must be refused as unsafe, and checks that
/// nothing was written anywhere.
fn assert_refused(archive: Vec<u8>, name: &str, entry: &str) {
    let scratch = Scratch::new();
    let digest = sha256(&archive).to_string();
    let server = Server::routes([(format!("/{name}"), Response::ok(archive))]);
    cell(&scratch)
        .args([
            "--url",
            &server.url(&format!("/{name}")),
            "--sha256",
            &digest,
            "--into",
        ])
        .arg(scratch.dest())
        .assert()
        .code(1)
        .stdout("")
        .stderr(predicate::str::contains(format!(
            "refusing archive entry `{entry}`"
        )));
    assert_eq!(scratch.listing(), vec!["work"], "something was left behind");
}

// ---------------------------------------------------------------- good paths

#[test]
fn good_tar_gz_unpacks_with_sha256() {
    let scratch = Scratch::new();
    let archive = good_tar_gz();
    let digest = sha256(&archive).to_string();
    let server = Server::routes([("/dl/pkg-1.0.tar.gz", Response::ok(archive.clone()))]);
    cell(&scratch)
        .args([
            "--url",
            &server.url("/dl/pkg-1.0.tar.gz"),
            "--sha256",
            &digest,
        ])
        .args(["--into", "work/dest"])
        .assert()
        .success()
        .stdout("")
        .stderr(format!(
            "verified sha256 {digest} ({} bytes); unpacked 5 entries into work/dest\n",
            archive.len()
        ));
    let dest = scratch.dest();
    let tool = dest.join("pkg-1.0/bin/tool");
    assert_eq!(std::fs::read(&tool).unwrap(), b"#!/bin/sh\necho hi\n");
    assert!(is_executable(&tool));
    assert!(!is_executable(&dest.join("pkg-1.0/README")));
    assert_eq!(
        std::fs::read_link(dest.join("pkg-1.0/bin/tool2")).unwrap(),
        Path::new("tool")
    );
    // No temporary file or directory is left next to the destination.
    assert_eq!(
        std::fs::read_dir(scratch.base().join("work"))
            .unwrap()
            .count(),
        1
    );
}

#[test]
fn sha256_url_with_several_names_and_strip_components() {
    let scratch = Scratch::new();
    let archive = good_tar_gz();
    let digests = format!(
        "{}  other.tar.gz\n{} *pkg-1.0.tar.gz\n{}  pkg-1.0.zip\n",
        "0".repeat(64),
        sha256(&archive),
        "1".repeat(64)
    );
    let server = Server::routes([
        ("/pkg-1.0.tar.gz", Response::ok(archive)),
        ("/SHA256SUMS", Response::ok(digests)),
    ]);
    cell(&scratch)
        .args(["--url", &server.url("/pkg-1.0.tar.gz")])
        .args(["--sha256-url", &server.url("/SHA256SUMS")])
        .args(["--strip-components", "1", "--into"])
        .arg(scratch.dest())
        .assert()
        .success()
        .stderr(predicate::str::contains("unpacked 4 entries"));
    let dest = scratch.dest();
    assert!(is_executable(&dest.join("bin/tool")));
    assert_eq!(std::fs::read(dest.join("README")).unwrap(), b"read me\n");
    assert!(!dest.join("pkg-1.0").exists());
}

#[test]
fn files_beside_the_top_directory_that_strip_drops_are_said_on_one_line() {
    // `--strip-components 1` left a tarball's root files out without a word.
    let scratch = Scratch::new();
    let archive = tar_gz(&[
        Entry::Dir("./"),
        Entry::File("./LICENSE", b"MIT\n", 0o644),
        Entry::Dir("./pkg/"),
        Entry::File("./pkg/tool", b"#!/bin/sh\n", 0o755),
        Entry::File("NOTES", b"n\n", 0o644),
        Entry::Dir("pkg/"),
        Entry::File("pkg/README", b"r\n", 0o644),
    ]);
    let digest = sha256(&archive).to_string();
    let server = Server::routes([("/p.tar.gz", Response::ok(archive))]);
    let out = cell(&scratch)
        .args(["--format", "json", "--url", &server.url("/p.tar.gz")])
        .args(["--sha256", &digest, "--strip-components", "1", "--into"])
        .arg(scratch.dest())
        .assert()
        .success()
        .stderr(predicate::str::contains(
            "\n--strip-components 1: 1 entry above the stripped level was left out: `NOTES`\n",
        ))
        .get_output()
        .stdout
        .clone();
    let value: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(
        value["dropped"],
        serde_json::json!({ "count": 1, "first": ["NOTES"] })
    );
    // A leading `./` is a level, as tar counts it: `./LICENSE` less one is `LICENSE`,
    // `./pkg/tool` is `pkg/tool`, and `pkg/README` is `README`.
    assert_eq!(
        tree(&scratch.dest()),
        ["LICENSE", "README", "pkg", "pkg/tool"]
    );
}

#[test]
fn sha256_url_bare_digest() {
    let scratch = Scratch::new();
    let archive = good_tar_gz();
    let sidecar = format!("{}\n", sha256(&archive).as_str().to_uppercase());
    let server = Server::routes([
        ("/p.tgz", Response::ok(archive)),
        ("/p.tgz.sha256", Response::ok(sidecar)),
    ]);
    cell(&scratch)
        .args([
            "--url",
            &server.url("/p.tgz"),
            "--sha256-url",
            &server.url("/p.tgz.sha256"),
        ])
        .arg("--into")
        .arg(scratch.dest())
        .assert()
        .success();
    assert!(scratch.dest().join("pkg-1.0/README").is_file());
}

#[test]
fn json_format_prints_one_object_on_stdout() {
    let scratch = Scratch::new();
    let archive = good_tar_gz();
    let digest = sha256(&archive).to_string();
    let server = Server::routes([("/pkg.tar.gz", Response::ok(archive.clone()))]);
    let url = server.url("/pkg.tar.gz");
    let out = cell(&scratch)
        .args([
            "--format",
            "json",
            "--url",
            &url,
            "--sha256",
            &digest,
            "--into",
            "work/dest",
        ])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let value: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(
        value,
        serde_json::json!({
            "url": url,
            "sha256": digest,
            "bytes": archive.len(),
            "entries": 5,
            "dropped": { "count": 0, "first": [] },
            "into": "work/dest",
        })
    );
}

#[test]
fn redirect_is_followed() {
    let scratch = Scratch::new();
    let archive = good_tar_gz();
    let digest = sha256(&archive).to_string();
    let server = Server::routes([
        ("/latest/pkg.tar.gz", Response::redirect("/v1/pkg.tar.gz")),
        ("/v1/pkg.tar.gz", Response::ok(archive)),
    ]);
    cell(&scratch)
        .args([
            "--url",
            &server.url("/latest/pkg.tar.gz"),
            "--sha256",
            &digest,
            "--into",
        ])
        .arg(scratch.dest())
        .assert()
        .success();
    assert!(scratch.dest().join("pkg-1.0/bin/tool").is_file());
}

#[test]
fn zip_unpacks_with_modes_and_links() {
    let scratch = Scratch::new();
    let archive = zip(&[
        Entry::File("tool/run.sh", b"#!/bin/sh\n", 0o755),
        Entry::File("tool/data.txt", b"data", 0o644),
        Entry::Symlink("tool/run", "run.sh"),
    ]);
    let digest = sha256(&archive).to_string();
    let server = Server::routes([("/tool.zip", Response::ok(archive))]);
    cell(&scratch)
        .args([
            "--url",
            &server.url("/tool.zip"),
            "--sha256",
            &digest,
            "--into",
        ])
        .arg(scratch.dest())
        .assert()
        .success()
        .stderr(predicate::str::contains("unpacked 3 entries"));
    let dest = scratch.dest();
    assert!(is_executable(&dest.join("tool/run.sh")));
    assert!(!is_executable(&dest.join("tool/data.txt")));
    assert_eq!(
        std::fs::read(dest.join("tool/run")).unwrap(),
        b"#!/bin/sh\n"
    );
}

#[test]
fn existing_empty_destination_is_filled() {
    let scratch = Scratch::new();
    std::fs::create_dir(scratch.dest()).unwrap();
    let archive = good_tar_gz();
    let digest = sha256(&archive).to_string();
    let server = Server::routes([("/pkg.tar.gz", Response::ok(archive))]);
    cell(&scratch)
        .args([
            "--url",
            &server.url("/pkg.tar.gz"),
            "--sha256",
            &digest,
            "--into",
        ])
        .arg(scratch.dest())
        .assert()
        .success();
    assert!(scratch.dest().join("pkg-1.0/README").is_file());
}

// ---------------------------------------------------------------- integrity failures: exit 1

#[test]
fn tampered_archive_exits_1_and_leaves_nothing() {
    let scratch = Scratch::new();
    let good = good_tar_gz();
    let expected = sha256(&good).to_string();
    let mut tampered = good;
    let last = tampered.len() - 9;
    tampered[last] ^= 0xff;
    let actual = sha256(&tampered).to_string();
    let server = Server::routes([("/pkg.tar.gz", Response::ok(tampered))]);
    let url = server.url("/pkg.tar.gz");
    cell(&scratch)
        .args(["--url", &url, "--sha256", &expected, "--into"])
        .arg(scratch.dest())
        .assert()
        .code(1)
        .stdout("")
        .stderr(
            predicate::str::contains(format!("expected {expected}"))
                .and(predicate::str::contains(format!("actual {actual}")))
                .and(predicate::str::contains(&url)),
        );
    assert_eq!(scratch.listing(), vec!["work"]);
}

#[test]
fn tampered_archive_leaves_existing_empty_destination_empty() {
    let scratch = Scratch::new();
    std::fs::create_dir(scratch.dest()).unwrap();
    let good = good_tar_gz();
    let server = Server::routes([("/pkg.tar.gz", Response::ok(b"not the archive".to_vec()))]);
    cell(&scratch)
        .args([
            "--url",
            &server.url("/pkg.tar.gz"),
            "--sha256",
            &sha256(&good).to_string(),
        ])
        .arg("--into")
        .arg(scratch.dest())
        .assert()
        .code(1);
    assert_eq!(scratch.listing(), vec!["work", "work/dest"]);
}

#[test]
fn parent_dir_entry_is_refused() {
    let archive = tar_gz(&[
        Entry::File("ok.txt", b"ok", 0o644),
        Entry::File("../evil", b"x", 0o644),
    ]);
    assert_refused(archive, "evil.tar.gz", "../evil");
}

#[test]
fn nested_parent_dir_entry_is_refused() {
    let archive = tar_gz(&[Entry::File("a/../../../evil", b"x", 0o644)]);
    assert_refused(archive, "evil.tar.gz", "a/../../../evil");
}

#[test]
fn absolute_entry_is_refused() {
    let scratch_outside = tempfile::tempdir().unwrap();
    let target = scratch_outside.path().join("abs/path");
    let name = target.to_str().unwrap().to_owned();
    let archive = tar_gz(&[Entry::File(&name, b"x", 0o644)]);
    assert_refused(archive, "abs.tar.gz", &name);
    assert!(!target.exists());
    assert!(!Path::new("/abs/path").exists());
}

#[test]
fn escaping_symlink_is_refused() {
    let archive = tar_gz(&[
        Entry::Dir("d/"),
        Entry::Symlink("d/link", "../../outside"),
        Entry::File("d/link/pwned", b"x", 0o644),
    ]);
    assert_refused(archive, "link.tar.gz", "d/link");
}

#[test]
fn top_level_escaping_symlink_is_refused() {
    let archive = tar_gz(&[Entry::Symlink("link", "../../outside")]);
    assert_refused(archive, "link.tar.gz", "link");
}

#[test]
fn absolute_symlink_is_refused() {
    let archive = tar_gz(&[Entry::Symlink("etc", "/etc")]);
    assert_refused(archive, "abs-link.tar.gz", "etc");
}

#[test]
fn symlink_chain_escape_is_refused() {
    // Each link is inside on its own; together `b` points at the parent of the destination.
    let archive = tar_gz(&[Entry::Symlink("b", "a/.."), Entry::Symlink("a", ".")]);
    assert_refused(archive, "chain.tar.gz", "b");
}

#[test]
fn write_through_symlink_is_refused() {
    let archive = tar_gz(&[
        Entry::Dir("sub/"),
        Entry::Symlink("here", "sub"),
        Entry::File("here/file", b"x", 0o644),
    ]);
    assert_refused(archive, "through.tar.gz", "here/file");
}

#[test]
fn escaping_hard_link_is_refused() {
    let archive = tar_gz(&[Entry::HardLink("passwd", "../../etc/passwd")]);
    assert_refused(archive, "hard.tar.gz", "passwd");
}

#[test]
fn fifo_is_refused() {
    let archive = tar_gz(&[Entry::File("a", b"a", 0o644), Entry::Fifo("pipe")]);
    assert_refused(archive, "fifo.tar.gz", "pipe");
}

#[test]
fn zip_parent_dir_entry_is_refused() {
    let archive = zip(&[
        Entry::File("ok", b"ok", 0o644),
        Entry::File("../evil", b"x", 0o644),
    ]);
    assert_refused(archive, "evil.zip", "../evil");
}

#[test]
fn zip_escaping_symlink_is_refused() {
    let archive = zip(&[Entry::Symlink("link", "../../outside")]);
    assert_refused(archive, "link.zip", "link");
}

// ---------------------------------------------------------------- infrastructure: exit 2

#[test]
fn not_found_exits_2() {
    let scratch = Scratch::new();
    let server = Server::new();
    cell(&scratch)
        .args([
            "--url",
            &server.url("/missing.tar.gz"),
            "--sha256",
            &"a".repeat(64),
        ])
        .arg("--into")
        .arg(scratch.dest())
        .assert()
        .code(2)
        .stderr(predicate::str::contains("HTTP 404"));
    assert_eq!(scratch.listing(), vec!["work"]);
}

#[test]
fn missing_digest_file_exits_2() {
    let scratch = Scratch::new();
    let server = Server::routes([("/p.tar.gz", Response::ok(good_tar_gz()))]);
    cell(&scratch)
        .args([
            "--url",
            &server.url("/p.tar.gz"),
            "--sha256-url",
            &server.url("/nope"),
        ])
        .arg("--into")
        .arg(scratch.dest())
        .assert()
        .code(2)
        .stderr(predicate::str::contains("HTTP 404"));
    assert_eq!(scratch.listing(), vec!["work"]);
}

#[test]
fn digest_file_without_our_name_exits_2() {
    let scratch = Scratch::new();
    let sums = format!(
        "{}  a.tar.gz\n{}  b.tar.gz\n",
        "0".repeat(64),
        "1".repeat(64)
    );
    let server = Server::routes([
        ("/p.tar.gz", Response::ok(good_tar_gz())),
        ("/SUMS", Response::ok(sums)),
    ]);
    cell(&scratch)
        .args([
            "--url",
            &server.url("/p.tar.gz"),
            "--sha256-url",
            &server.url("/SUMS"),
        ])
        .arg("--into")
        .arg(scratch.dest())
        .assert()
        .code(2)
        .stderr(predicate::str::contains("none for `p.tar.gz`"));
}

#[test]
fn a_one_line_checksum_file_of_another_asset_exits_2_naming_both() {
    // A `.sha256` of one line naming another file was taken as this archive's digest.
    let scratch = Scratch::new();
    let archive = good_tar_gz();
    let sums = format!("{}  other-1.0.tar.gz\n", sha256(&archive));
    let server = Server::routes([
        ("/p.tar.gz", Response::ok(archive)),
        ("/p.tar.gz.sha256", Response::ok(sums)),
    ]);
    cell(&scratch)
        .args(["--url", &server.url("/p.tar.gz")])
        .args(["--sha256-url", &server.url("/p.tar.gz.sha256")])
        .arg("--into")
        .arg(scratch.dest())
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "its one line is the digest of `other-1.0.tar.gz`, not of `p.tar.gz`",
        ));
    assert_eq!(scratch.listing(), vec!["work"], "nothing unpacked");
}

#[test]
fn non_empty_destination_exits_2_untouched() {
    let scratch = Scratch::new();
    std::fs::create_dir(scratch.dest()).unwrap();
    std::fs::write(scratch.dest().join("keep"), b"mine").unwrap();
    let archive = good_tar_gz();
    let digest = sha256(&archive).to_string();
    let server = Server::routes([("/pkg.tar.gz", Response::ok(archive))]);
    cell(&scratch)
        .args([
            "--url",
            &server.url("/pkg.tar.gz"),
            "--sha256",
            &digest,
            "--into",
        ])
        .arg(scratch.dest())
        .assert()
        .code(2)
        .stderr(predicate::str::contains("not an empty directory"));
    assert_eq!(
        scratch.listing(),
        vec!["work", "work/dest", "work/dest/keep"]
    );
}

#[test]
fn unknown_extension_exits_2() {
    let scratch = Scratch::new();
    cell(&scratch)
        .args([
            "--url",
            "http://127.0.0.1:9/x.tar.bz2",
            "--sha256",
            &"a".repeat(64),
            "--into",
        ])
        .arg(scratch.dest())
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "cannot tell the archive type of `x.tar.bz2`",
        ));
}

#[test]
fn download_over_the_cap_exits_2_and_leaves_nothing() {
    for route in [
        Response::ok(good_tar_gz()),
        Response::ok(good_tar_gz()).without_length(),
    ] {
        let scratch = Scratch::new();
        let digest = sha256(&good_tar_gz()).to_string();
        let server = Server::routes([("/pkg.tar.gz", route)]);
        cell(&scratch)
            .args(["--url", &server.url("/pkg.tar.gz"), "--sha256", &digest])
            .args(["--max-bytes", "100", "--into"])
            .arg(scratch.dest())
            .assert()
            .code(2)
            .stderr(predicate::str::contains("exceeds the cap of 100 bytes"));
        assert_eq!(scratch.listing(), vec!["work"]);
    }
}

#[test]
fn bad_digest_argument_is_a_usage_error() {
    let scratch = Scratch::new();
    cell(&scratch)
        .args([
            "--url",
            "http://127.0.0.1:9/x.tar.gz",
            "--sha256",
            "abc",
            "--into",
            "d",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("not a SHA-256 digest"));
    cell(&scratch)
        .args(["--url", "http://127.0.0.1:9/x.tar.gz", "--into", "d"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--sha256"));
}

#[test]
fn a_body_that_stalls_exits_2_within_the_idle_timeout_and_leaves_nothing() {
    let scratch = Scratch::new();
    let archive = good_tar_gz();
    let digest = sha256(&archive).to_string();
    let half = archive.len() / 2;
    let server = Server::routes([("/pkg.tar.gz", Response::ok(archive).stalled(half))]);
    let started = std::time::Instant::now();
    cell(&scratch)
        .args(["--url", &server.url("/pkg.tar.gz"), "--sha256", &digest])
        .args(["--idle-timeout", "2", "--into"])
        .arg(scratch.dest())
        .assert()
        .code(2)
        .stderr(predicate::str::contains(format!(
            "GET {}: nothing received for 2 s (the idle timeout); gave up",
            server.url("/pkg.tar.gz")
        )));
    assert!(
        started.elapsed() < std::time::Duration::from_secs(30),
        "{:?}",
        started.elapsed()
    );
    // No `.part` file, no destination, no partial output.
    assert_eq!(scratch.listing(), vec!["work"]);
}

#[test]
fn credentials_are_dropped_on_a_redirect_to_another_port() {
    let scratch = Scratch::new();
    let archive = good_tar_gz();
    let digest = sha256(&archive).to_string();
    let mirror = Server::routes([("/v1/pkg.tar.gz", Response::ok(archive))]);
    let origin = Server::routes([(
        "/latest/pkg.tar.gz",
        Response::redirect(&mirror.url("/v1/pkg.tar.gz")),
    )]);
    let url = format!(
        "http://user:s3cret@127.0.0.1:{}/latest/pkg.tar.gz",
        origin.port()
    );
    let out = cell(&scratch)
        .args(["--url", &url, "--sha256", &digest, "--into"])
        .arg(scratch.dest())
        .assert()
        .success();
    assert!(!String::from_utf8_lossy(&out.get_output().stderr).contains("s3cret"));
    assert!(scratch.dest().join("pkg-1.0/bin/tool").is_file());
    // The origin was given the credentials; the other port never saw them.
    let asked = origin.requests();
    assert!(
        asked[0]
            .header("authorization")
            .is_some_and(|v| v.starts_with("Basic ")),
        "{asked:?}"
    );
    let served = mirror.requests();
    assert_eq!(served.len(), 1);
    assert_eq!(served[0].header("authorization"), None, "{served:?}");
}

/// A server that sends `archive` one byte every half second: a minute and more for the whole.
fn trickling(archive: Vec<u8>) -> Server {
    Server::routes([(
        "/pkg.tar.gz",
        Response::ok(archive).trickled(std::time::Duration::from_millis(500)),
    )])
}

/// Regression: a server trickling a byte every half second never tripped the idle timeout and
/// held `cell fetch` for as long as it liked. Now the download has a deadline (`--timeout`):
/// exit 2 naming the URL and the deadline, long before the body would be done, no `.part`.
#[test]
fn a_download_that_trickles_past_its_deadline_exits_2_naming_it_and_leaves_nothing() {
    let scratch = Scratch::new();
    let archive = good_tar_gz();
    let digest = sha256(&archive).to_string();
    let whole = std::time::Duration::from_millis(500) * u32::try_from(archive.len()).unwrap();
    let server = trickling(archive);
    let started = std::time::Instant::now();
    cell(&scratch)
        .args(["--url", &server.url("/pkg.tar.gz"), "--sha256", &digest])
        .args(["--timeout", "2", "--into"])
        .arg(scratch.dest())
        .assert()
        .code(2)
        .stderr(predicate::str::contains(format!(
            "GET {}: not done within its deadline of 2 s (FETCH_TIMEOUT_S in versions.env, or --timeout); gave up",
            server.url("/pkg.tar.gz")
        )));
    // It stopped at the deadline, not at the end of the body.
    assert!(
        started.elapsed() < whole / 2,
        "{:?} of {whole:?}",
        started.elapsed()
    );
    assert_eq!(scratch.listing(), vec!["work"]);
}

/// `cell fetch` of a trickling download, spawned as a process of its own.
fn spawn_fetch(scratch: &Scratch, server: &Server, digest: &str) -> std::process::Child {
    let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("cell"));
    cmd.current_dir(scratch.base());
    for var in ["http_proxy", "HTTP_PROXY", "ALL_PROXY", "all_proxy"] {
        cmd.env_remove(var);
    }
    cmd.args([
        "fetch",
        "--url",
        &server.url("/pkg.tar.gz"),
        "--sha256",
        digest,
    ])
    .arg("--into")
    .arg(scratch.dest())
    .stdout(std::process::Stdio::null())
    .stderr(std::process::Stdio::null());
    // A test run started in the background (`cargo test &`) hands SIGINT down ignored, and
    // cell keeps an ignored signal ignored, as a background job should: the child gets the
    // default disposition a terminal's Ctrl-C meets.
    // SAFETY: signal(2) is async-signal-safe, so it may run between fork and exec.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(&mut cmd, || {
            libc::signal(libc::SIGINT, libc::SIG_DFL);
            Ok(())
        });
    }
    cmd.spawn().unwrap()
}

/// Polls until a name under `dir` starts with `prefix` (a temporary file of the process under
/// test); false after a minute.
fn appears(dir: &Path, prefix: &str) -> bool {
    (0..600).any(|_| {
        std::thread::sleep(std::time::Duration::from_millis(100));
        cell_testkit::names(dir)
            .iter()
            .any(|n| n.starts_with(prefix))
    })
}

/// Regression: SIGTERM (a cancelled job) or SIGINT (Ctrl-C) mid-download left the
/// `.cell-fetch-*.part` file behind. Now the process removes it and exits 143 or 130.
#[test]
fn a_fetch_stopped_by_sigterm_or_sigint_leaves_no_part_file() {
    for (signal, code) in [(libc::SIGTERM, 143), (libc::SIGINT, 130)] {
        let scratch = Scratch::new();
        let archive = good_tar_gz();
        let digest = sha256(&archive).to_string();
        let server = trickling(archive);
        let mut child = spawn_fetch(&scratch, &server, &digest);
        assert!(appears(&scratch.base().join("work"), ".cell-fetch-"));
        let pid = libc::pid_t::try_from(child.id()).unwrap();
        // SAFETY: kill(2) of our own child, which has not been reaped yet.
        assert_eq!(unsafe { libc::kill(pid, signal) }, 0);
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(code), "signal {signal}: {status:?}");
        assert_eq!(scratch.listing(), vec!["work"], "signal {signal}");
    }
}
