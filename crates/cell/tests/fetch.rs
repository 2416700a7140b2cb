//! `cell fetch` through the binary, against a loopback HTTP/1.1 server started by each test.
#![cfg(unix)]

use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::thread;

use assert_cmd::Command;
use predicates::prelude::*;
use sha2::Digest as _;

// ---------------------------------------------------------------- loopback server

/// What the server answers for one path.
enum Route {
    /// 200 with this body and a Content-Length.
    Body(Vec<u8>),
    /// 200 with this body and no Content-Length (ends when the connection closes).
    Unsized(Vec<u8>),
    /// 302 to this path.
    Redirect(String),
}

/// Serves `routes` on 127.0.0.1 from a thread; anything else is a 404. Returns the base URL.
fn serve(routes: Vec<(&str, Route)>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
    let base = format!("http://{}", listener.local_addr().unwrap());
    let routes: HashMap<String, Route> =
        routes.into_iter().map(|(p, r)| (p.to_owned(), r)).collect();
    thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let _ = answer(stream, &routes);
        }
    });
    base
}

fn answer(stream: TcpStream, routes: &HashMap<String, Route>) -> std::io::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut request_line = String::new();
    reader.read_line(&mut request_line)?;
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header)? == 0 || header == "\r\n" {
            break;
        }
    }
    let path = request_line
        .split_whitespace()
        .nth(1)
        .unwrap_or("/")
        .to_owned();
    let mut out = stream;
    match routes.get(&path) {
        Some(Route::Body(body)) => {
            write!(
                out,
                "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n\
                 Content-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            )?;
            out.write_all(body)?;
        }
        Some(Route::Unsized(body)) => {
            write!(out, "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n")?;
            out.write_all(body)?;
        }
        Some(Route::Redirect(to)) => write!(
            out,
            "HTTP/1.1 302 Found\r\nLocation: {to}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        )?,
        None => write!(
            out,
            "HTTP/1.1 404 Not Found\r\nContent-Length: 9\r\nConnection: close\r\n\r\nnot found"
        )?,
    }
    out.flush()
}

// ---------------------------------------------------------------- archives

/// One tar entry, written with raw headers so that unsafe names can be built too.
enum Entry<'a> {
    File(&'a str, &'a [u8], u32),
    Dir(&'a str),
    Symlink(&'a str, &'a str),
    HardLink(&'a str, &'a str),
    Fifo(&'a str),
}

fn tar_gz(entries: &[Entry<'_>]) -> Vec<u8> {
    let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    let mut builder = tar::Builder::new(gz);
    for entry in entries {
        let mut header = tar::Header::new_gnu();
        header.set_mtime(1_700_000_000);
        let (name, data, ty, mode): (&str, &[u8], tar::EntryType, u32) = match entry {
            Entry::File(name, data, mode) => (name, data, tar::EntryType::Regular, *mode),
            Entry::Dir(name) => (name, &[], tar::EntryType::Directory, 0o755),
            Entry::Symlink(name, target) | Entry::HardLink(name, target) => {
                header.set_link_name(target).unwrap();
                let ty = if matches!(entry, Entry::Symlink(..)) {
                    tar::EntryType::Symlink
                } else {
                    tar::EntryType::Link
                };
                (name, &[], ty, 0o777)
            }
            Entry::Fifo(name) => (name, &[], tar::EntryType::Fifo, 0o644),
        };
        header.set_entry_type(ty);
        header.set_mode(mode);
        header.set_size(data.len() as u64);
        let slot = &mut header.as_gnu_mut().unwrap().name;
        slot.fill(0);
        slot[..name.len()].copy_from_slice(name.as_bytes());
        header.set_cksum();
        builder.append(&header, data).unwrap();
    }
    builder.into_inner().unwrap().finish().unwrap()
}

fn zip_archive(files: &[(&str, &[u8], u32)], links: &[(&str, &str)]) -> Vec<u8> {
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for (name, data, mode) in files {
        let options = zip::write::SimpleFileOptions::default().unix_permissions(*mode);
        zip.start_file(*name, options).unwrap();
        zip.write_all(data).unwrap();
    }
    for (name, target) in links {
        zip.add_symlink(*name, *target, zip::write::SimpleFileOptions::default())
            .unwrap();
    }
    zip.finish().unwrap().into_inner()
}

fn sha256_hex(bytes: &[u8]) -> String {
    sha2::Sha256::digest(bytes)
        .iter()
        .fold(String::new(), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
}

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
        let mut out = Vec::new();
        walk(self.base(), self.base(), &mut out);
        out.sort();
        out
    }
}

fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        out.push(
            path.strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned(),
        );
        if std::fs::symlink_metadata(&path).unwrap().is_dir() {
            walk(root, &path, out);
        }
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

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o111 != 0
}

/// Runs a fetch of `archive` (served as `name`) that must be refused as unsafe, and checks that
/// nothing was written anywhere.
fn assert_refused(archive: Vec<u8>, name: &str, entry: &str) {
    let scratch = Scratch::new();
    let digest = sha256_hex(&archive);
    let base = serve(vec![(&format!("/{name}"), Route::Body(archive))]);
    cell(&scratch)
        .args([
            "--url",
            &format!("{base}/{name}"),
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
    let digest = sha256_hex(&archive);
    let base = serve(vec![("/dl/pkg-1.0.tar.gz", Route::Body(archive.clone()))]);
    cell(&scratch)
        .args([
            "--url",
            &format!("{base}/dl/pkg-1.0.tar.gz"),
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
        sha256_hex(&archive),
        "1".repeat(64)
    );
    let base = serve(vec![
        ("/pkg-1.0.tar.gz", Route::Body(archive)),
        ("/SHA256SUMS", Route::Body(digests.into_bytes())),
    ]);
    cell(&scratch)
        .args(["--url", &format!("{base}/pkg-1.0.tar.gz")])
        .args(["--sha256-url", &format!("{base}/SHA256SUMS")])
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
fn sha256_url_bare_digest() {
    let scratch = Scratch::new();
    let archive = good_tar_gz();
    let sidecar = format!("{}\n", sha256_hex(&archive).to_uppercase());
    let base = serve(vec![
        ("/p.tgz", Route::Body(archive)),
        ("/p.tgz.sha256", Route::Body(sidecar.into_bytes())),
    ]);
    cell(&scratch)
        .args([
            "--url",
            &format!("{base}/p.tgz"),
            "--sha256-url",
            &format!("{base}/p.tgz.sha256"),
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
    let digest = sha256_hex(&archive);
    let base = serve(vec![("/pkg.tar.gz", Route::Body(archive.clone()))]);
    let url = format!("{base}/pkg.tar.gz");
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
            "into": "work/dest",
        })
    );
}

#[test]
fn redirect_is_followed() {
    let scratch = Scratch::new();
    let archive = good_tar_gz();
    let digest = sha256_hex(&archive);
    let base = serve(vec![
        (
            "/latest/pkg.tar.gz",
            Route::Redirect("/v1/pkg.tar.gz".to_owned()),
        ),
        ("/v1/pkg.tar.gz", Route::Body(archive)),
    ]);
    cell(&scratch)
        .args([
            "--url",
            &format!("{base}/latest/pkg.tar.gz"),
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
    let archive = zip_archive(
        &[
            ("tool/run.sh", b"#!/bin/sh\n", 0o755),
            ("tool/data.txt", b"data", 0o644),
        ],
        &[("tool/run", "run.sh")],
    );
    let digest = sha256_hex(&archive);
    let base = serve(vec![("/tool.zip", Route::Body(archive))]);
    cell(&scratch)
        .args([
            "--url",
            &format!("{base}/tool.zip"),
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
    let digest = sha256_hex(&archive);
    let base = serve(vec![("/pkg.tar.gz", Route::Body(archive))]);
    cell(&scratch)
        .args([
            "--url",
            &format!("{base}/pkg.tar.gz"),
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
    let expected = sha256_hex(&good);
    let mut tampered = good;
    let last = tampered.len() - 9;
    tampered[last] ^= 0xff;
    let actual = sha256_hex(&tampered);
    let base = serve(vec![("/pkg.tar.gz", Route::Body(tampered))]);
    let url = format!("{base}/pkg.tar.gz");
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
    let base = serve(vec![(
        "/pkg.tar.gz",
        Route::Body(b"not the archive".to_vec()),
    )]);
    cell(&scratch)
        .args([
            "--url",
            &format!("{base}/pkg.tar.gz"),
            "--sha256",
            &sha256_hex(&good),
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
    let archive = zip_archive(&[("ok", b"ok", 0o644), ("../evil", b"x", 0o644)], &[]);
    assert_refused(archive, "evil.zip", "../evil");
}

#[test]
fn zip_escaping_symlink_is_refused() {
    let archive = zip_archive(&[], &[("link", "../../outside")]);
    assert_refused(archive, "link.zip", "link");
}

// ---------------------------------------------------------------- infrastructure: exit 2

#[test]
fn not_found_exits_2() {
    let scratch = Scratch::new();
    let base = serve(vec![]);
    cell(&scratch)
        .args([
            "--url",
            &format!("{base}/missing.tar.gz"),
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
    let base = serve(vec![("/p.tar.gz", Route::Body(good_tar_gz()))]);
    cell(&scratch)
        .args([
            "--url",
            &format!("{base}/p.tar.gz"),
            "--sha256-url",
            &format!("{base}/nope"),
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
    let base = serve(vec![
        ("/p.tar.gz", Route::Body(good_tar_gz())),
        ("/SUMS", Route::Body(sums.into_bytes())),
    ]);
    cell(&scratch)
        .args([
            "--url",
            &format!("{base}/p.tar.gz"),
            "--sha256-url",
            &format!("{base}/SUMS"),
        ])
        .arg("--into")
        .arg(scratch.dest())
        .assert()
        .code(2)
        .stderr(predicate::str::contains("none for `p.tar.gz`"));
}

#[test]
fn non_empty_destination_exits_2_untouched() {
    let scratch = Scratch::new();
    std::fs::create_dir(scratch.dest()).unwrap();
    std::fs::write(scratch.dest().join("keep"), b"mine").unwrap();
    let archive = good_tar_gz();
    let digest = sha256_hex(&archive);
    let base = serve(vec![("/pkg.tar.gz", Route::Body(archive))]);
    cell(&scratch)
        .args([
            "--url",
            &format!("{base}/pkg.tar.gz"),
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
    for route in [Route::Body(good_tar_gz()), Route::Unsized(good_tar_gz())] {
        let scratch = Scratch::new();
        let digest = sha256_hex(&good_tar_gz());
        let base = serve(vec![("/pkg.tar.gz", route)]);
        cell(&scratch)
            .args(["--url", &format!("{base}/pkg.tar.gz"), "--sha256", &digest])
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
