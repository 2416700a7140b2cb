//! `cell_fetch` as a library: `.tar.xz`, the caps, links that stay inside, and `unpack`
//! on its own (no network), plus `fetch` against a loopback HTTP/1.1 server.
#![cfg(unix)]

use std::path::{Path, PathBuf};

use cell_fetch::{
    ArchiveKind, Expected, FetchError, FetchRequest, UnpackOptions, Unsafe, fetch, unpack,
};
use cell_testkit::archive::{self, Entry, gz, tar, xz};
use cell_testkit::http::{Response, Server};
use cell_testkit::{is_executable, names, sha256};

// ---------------------------------------------------------------- fixtures

fn toolchain() -> Vec<u8> {
    tar(&[
        Entry::Dir("tc/"),
        Entry::Dir("tc/lib/"),
        Entry::File("tc/lib/libx.so.1", b"ELF", 0o644),
        Entry::Symlink("tc/lib/libx.so", "libx.so.1"),
        Entry::Symlink("tc/lib64", "lib"),
        Entry::Dir("tc/bin/"),
        Entry::File("tc/bin/cc", b"#!/bin/sh\n", 0o755),
        Entry::HardLink("tc/bin/c99", "tc/bin/cc"),
        // Through another link of the archive, still inside.
        Entry::Symlink("tc/bin/libx", "../lib64/libx.so"),
    ])
}

/// Writes `bytes` to `dir/name` and returns the path.
fn put(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

/// A server answering 200 with `body` on `path`, 404 otherwise.
fn serve(path: &str, body: Vec<u8>) -> Server {
    Server::routes([(path, Response::ok(body))])
}

// ---------------------------------------------------------------- tests

#[test]
fn tar_xz_unpacks_with_links_modes_and_strip() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = put(tmp.path(), "tc.tar.xz", &xz(&toolchain()));
    let dest = tmp.path().join("out");
    let opts = UnpackOptions {
        strip_components: 1,
        ..UnpackOptions::default()
    };
    let done = unpack(&archive, ArchiveKind::TarXz, &dest, &opts).unwrap();
    assert_eq!(done.entries, 8, "tc/ itself is stripped away");
    assert!(done.dropped.is_empty(), "a directory is not said");
    assert_eq!(names(&dest), ["bin", "lib", "lib64"]);
    assert!(is_executable(&dest.join("bin/cc")));
    assert!(!is_executable(&dest.join("lib/libx.so.1")));
    assert_eq!(std::fs::read(dest.join("bin/c99")).unwrap(), b"#!/bin/sh\n");
    assert_eq!(std::fs::read(dest.join("bin/libx")).unwrap(), b"ELF");
    // Only the destination and the archive remain next to it.
    assert_eq!(names(tmp.path()), ["out", "tc.tar.xz"]);
}

#[test]
fn fetch_tar_xz_over_http() {
    let tmp = tempfile::tempdir().unwrap();
    let body = xz(&toolchain());
    let digest = sha256(&body);
    let server = serve("/tc.tar.xz", body.clone());
    let dest = tmp.path().join("deps/tc");
    let req = FetchRequest::new(
        server.url("/tc.tar.xz"),
        Expected::Digest(digest.clone()),
        &dest,
    );
    let done = fetch(&req).unwrap();
    assert_eq!(done.sha256, digest);
    assert_eq!(done.bytes, body.len() as u64);
    assert_eq!(done.entries, 9);
    assert!(is_executable(&dest.join("tc/bin/cc")));
    assert_eq!(names(&tmp.path().join("deps")), ["tc"]);
}

#[test]
fn fetch_tar_xz_mismatch_is_integrity_and_creates_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let body = xz(&toolchain());
    let server = serve("/tc.tar.xz", body.clone());
    let wrong = sha256(b"something else");
    let dest = tmp.path().join("deps/tc");
    let req = FetchRequest::new(
        server.url("/tc.tar.xz"),
        Expected::Digest(wrong.clone()),
        &dest,
    );
    let err = fetch(&req).unwrap_err();
    assert!(err.is_integrity());
    match &err {
        FetchError::Mismatch {
            expected, actual, ..
        } => {
            assert_eq!(*expected, wrong);
            assert_eq!(*actual, sha256(&body));
        }
        other => panic!("expected a mismatch, got {other}"),
    }
    assert!(
        names(tmp.path()).is_empty(),
        "not even the parent is created"
    );
}

#[test]
fn fetch_404_is_infrastructure() {
    let tmp = tempfile::tempdir().unwrap();
    let server = serve("/other", Vec::new());
    let req = FetchRequest::new(
        server.url("/tc.tar.xz"),
        Expected::Digest(sha256(b"")),
        tmp.path().join("x"),
    );
    let err = fetch(&req).unwrap_err();
    assert!(
        matches!(err, FetchError::Status { status: 404, .. }),
        "{err}"
    );
    assert!(!err.is_integrity());
}

#[test]
fn a_body_cut_short_or_no_answer_is_infrastructure_and_creates_nothing() {
    let body = xz(&toolchain());
    let half = body.len() / 2;
    for (response, body_error) in [
        (Response::ok(body.clone()).truncated(half), true),
        (Response::hang_up(), false),
    ] {
        let tmp = tempfile::tempdir().unwrap();
        let server = Server::routes([("/tc.tar.xz", response)]);
        let req = FetchRequest::new(
            server.url("/tc.tar.xz"),
            Expected::Digest(sha256(&body)),
            tmp.path().join("deps/tc"),
        );
        let err = fetch(&req).unwrap_err();
        if body_error {
            assert!(matches!(err, FetchError::Body { .. }), "{err}");
        } else {
            assert!(matches!(err, FetchError::Network { .. }), "{err}");
        }
        assert!(!err.is_integrity(), "{err}");
        assert!(names(tmp.path()).is_empty(), "{err}: something was created");
    }
}

#[test]
fn entry_cap_is_enforced() {
    let tmp = tempfile::tempdir().unwrap();
    let entries: Vec<String> = (0..10).map(|i| format!("f{i}")).collect();
    let list: Vec<Entry<'_>> = entries
        .iter()
        .map(|n| Entry::File(n, b"x", 0o644))
        .collect();
    let archive = put(tmp.path(), "many.tar.gz", &gz(&tar(&list)));
    let dest = tmp.path().join("out");
    let opts = UnpackOptions {
        max_entries: 9,
        ..UnpackOptions::default()
    };
    let err = unpack(&archive, ArchiveKind::TarGz, &dest, &opts).unwrap_err();
    assert!(
        matches!(err, FetchError::TooManyEntries { limit: 9 }),
        "{err}"
    );
    assert!(!err.is_integrity());
    assert_eq!(names(tmp.path()), ["many.tar.gz"]);
    let opts = UnpackOptions {
        max_entries: 10,
        ..UnpackOptions::default()
    };
    assert_eq!(
        unpack(&archive, ArchiveKind::TarGz, &dest, &opts)
            .unwrap()
            .entries,
        10
    );
}

#[test]
fn unpacked_size_cap_is_enforced() {
    let tmp = tempfile::tempdir().unwrap();
    let big = vec![0u8; 10_000];
    let archive = put(
        tmp.path(),
        "big.tar.xz",
        &xz(&tar(&[
            Entry::File("a", &big, 0o644),
            Entry::File("b", &big, 0o644),
        ])),
    );
    let dest = tmp.path().join("out");
    let opts = UnpackOptions {
        max_unpacked_bytes: 15_000,
        ..UnpackOptions::default()
    };
    let err = unpack(&archive, ArchiveKind::TarXz, &dest, &opts).unwrap_err();
    match &err {
        FetchError::UnpackedTooLarge { entry, limit } => {
            assert_eq!(entry, "b");
            assert_eq!(*limit, 15_000);
        }
        other => panic!("expected the size cap, got {other}"),
    }
    assert_eq!(names(tmp.path()), ["big.tar.xz"]);
}

#[test]
fn refusals_name_the_entry_and_are_integrity_failures() {
    let cases: Vec<(Vec<u8>, &str, Unsafe)> = vec![
        (
            tar(&[Entry::File("../evil", b"x", 0o644)]),
            "../evil",
            Unsafe::ParentDir,
        ),
        (
            tar(&[Entry::File("/abs/path", b"x", 0o644)]),
            "/abs/path",
            Unsafe::Absolute,
        ),
        (
            tar(&[Entry::Symlink("link", "../../outside")]),
            "link",
            Unsafe::LinkEscapes {
                target: "../../outside".to_owned(),
            },
        ),
        (
            tar(&[
                Entry::Dir("d/"),
                Entry::File("d/f", b"x", 0o644),
                Entry::Symlink("d", "."),
            ]),
            "d",
            Unsafe::LinkOverDirectory,
        ),
        (
            tar(&[Entry::HardLink("h", "missing")]),
            "h",
            Unsafe::HardLinkTarget {
                target: "missing".to_owned(),
            },
        ),
        (
            tar(&[
                Entry::Symlink("a", "b/x"),
                Entry::Symlink("b", "a/x"),
                Entry::Symlink("c", "a/y"),
            ]),
            "c",
            Unsafe::LinkLoop {
                target: "a/y".to_owned(),
            },
        ),
    ];
    for (raw, entry, why) in cases {
        let tmp = tempfile::tempdir().unwrap();
        let archive = put(tmp.path(), "bad.tar.xz", &xz(&raw));
        let dest = tmp.path().join("out");
        let err = unpack(
            &archive,
            ArchiveKind::TarXz,
            &dest,
            &UnpackOptions::default(),
        )
        .unwrap_err();
        assert!(err.is_integrity(), "{err}");
        match &err {
            FetchError::Unsafe { entry: e, why: w } => {
                assert_eq!((e.as_str(), w), (entry, &why));
            }
            other => panic!("expected a refusal of {entry}, got {other}"),
        }
        assert!(err.to_string().contains(&format!("`{entry}`")));
        assert_eq!(
            names(tmp.path()),
            ["bad.tar.xz"],
            "{entry}: something was left"
        );
    }
}

#[test]
fn parents_created_for_a_refused_archive_are_removed() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = put(
        tmp.path(),
        "bad.tar.gz",
        &gz(&tar(&[Entry::File("../x", b"", 0o644)])),
    );
    let dest = tmp.path().join("new/deeper/out");
    let err = unpack(
        &archive,
        ArchiveKind::TarGz,
        &dest,
        &UnpackOptions::default(),
    )
    .unwrap_err();
    assert!(err.is_integrity(), "{err}");
    assert_eq!(names(tmp.path()), ["bad.tar.gz"]);
}

#[test]
fn strip_applies_to_hard_link_targets_and_skips_short_entries() {
    let tmp = tempfile::tempdir().unwrap();
    let raw = tar(&[
        Entry::File("top", b"skipped", 0o644),
        Entry::File("a/b/f", b"f", 0o755),
        Entry::HardLink("a/b/g", "a/b/f"),
    ]);
    let archive = put(tmp.path(), "s.tar.gz", &gz(&raw));
    let dest = tmp.path().join("out");
    let opts = UnpackOptions {
        strip_components: 2,
        ..UnpackOptions::default()
    };
    let done = unpack(&archive, ArchiveKind::TarGz, &dest, &opts).unwrap();
    assert_eq!(done.entries, 2);
    assert_eq!(done.dropped.count, 1);
    assert_eq!(done.dropped.first, ["top"]);
    assert_eq!(names(&dest), ["f", "g"]);
    assert!(is_executable(&dest.join("g")));
}

/// An archive rooted at `./`, as `tar -C dir -cf x.tar .` writes one.
fn dot_rooted() -> Vec<u8> {
    tar(&[
        Entry::Dir("./"),
        Entry::Dir("./a/"),
        Entry::File("./a/b", b"b", 0o644),
        Entry::File("./c", b"c", 0o644),
        Entry::HardLink("./a/h", "./a/b"),
    ])
}

#[test]
fn strip_counts_a_leading_dot_as_a_level_as_gnu_tar_does() {
    // `./a/b` and `./c` less one level were `b` and nothing: the `.` was not counted, so
    // one level more was stripped than tar strips, and `c` was dropped without a word.
    // Compared with GNU tar 1.34: `tar -xf x.tar -C out --strip-components=1` of an archive
    // of `./a/b` and `./c` writes `a/b` and `c`; `--strip-components=2` writes `b` alone.
    let tmp = tempfile::tempdir().unwrap();
    let archive = put(tmp.path(), "x.tar.gz", &gz(&dot_rooted()));
    let strip = |n: usize, into: &str| {
        let opts = UnpackOptions {
            strip_components: n,
            ..UnpackOptions::default()
        };
        let dest = tmp.path().join(into);
        (
            unpack(&archive, ArchiveKind::TarGz, &dest, &opts).unwrap(),
            dest,
        )
    };
    let (one, dest) = strip(1, "one");
    assert_eq!(cell_testkit::tree(&dest), ["a", "a/b", "a/h", "c"]);
    assert!(one.dropped.is_empty(), "{:?}", one.dropped);
    let (two, dest) = strip(2, "two");
    assert_eq!(cell_testkit::tree(&dest), ["b", "h"]);
    assert_eq!(two.dropped.count, 1);
    assert_eq!(two.dropped.first, ["./c"]);
    assert_eq!(
        two.dropped.to_string(),
        "1 entry above the stripped level was left out: `./c`"
    );
}

#[test]
fn entries_dropped_by_strip_are_counted_and_the_first_five_named() {
    // Files beside a tarball's top directory vanished under --strip-components unsaid.
    let tmp = tempfile::tempdir().unwrap();
    let loose: Vec<String> = (1..=7).map(|i| format!("note{i}")).collect();
    let mut entries = vec![
        Entry::Dir("pkg/"),
        Entry::File("pkg/tool", b"x", 0o755),
        Entry::Symlink("latest", "pkg"),
    ];
    entries.extend(loose.iter().map(|n| Entry::File(n, b"n", 0o644)));
    let archive = put(tmp.path(), "p.tar.gz", &gz(&tar(&entries)));
    let opts = UnpackOptions {
        strip_components: 1,
        ..UnpackOptions::default()
    };
    let dest = tmp.path().join("out");
    let done = unpack(&archive, ArchiveKind::TarGz, &dest, &opts).unwrap();
    assert_eq!(names(&dest), ["tool"]);
    assert_eq!(done.dropped.count, 8, "the link and the seven files");
    assert_eq!(
        done.dropped.first,
        ["latest", "note1", "note2", "note3", "note4"]
    );
    assert!(
        done.dropped
            .to_string()
            .starts_with("8 entries above the stripped level were left out: `latest`, `note1`,")
            && done.dropped.to_string().ends_with("`note4`, …"),
        "{}",
        done.dropped
    );
}

/// Where GNU tar writes `archive`'s entries with `--strip-components=strip`.
#[cfg(target_os = "linux")]
fn gnu_tar(archive: &Path, strip: usize, dest: &Path) -> Vec<String> {
    std::fs::create_dir(dest).unwrap();
    let out = std::process::Command::new("tar")
        .arg("-xf")
        .arg(archive)
        .arg("-C")
        .arg(dest)
        .arg(format!("--strip-components={strip}"))
        .output()
        .expect("GNU tar is installed (it is on every Linux runner)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    cell_testkit::tree(dest)
}

#[cfg(target_os = "linux")]
#[test]
fn strip_writes_what_gnu_tar_writes_for_dotted_names() {
    // The same archive unpacked by this machine's `tar -xf x.tar -C out
    // --strip-components=N` and by `unpack`, N from 0 to 3: the same tree. (Not compared: a
    // doubled `/` where the cut falls, after which GNU tar 1.34 writes nothing of the entry,
    // `.//d/e` less one level; `unpack` takes the `//` for one `/` and writes `d/e`.)
    let tmp = tempfile::tempdir().unwrap();
    let raw = tar(&[
        Entry::Dir("./"),
        Entry::Dir("./a/"),
        Entry::File("./a/./b/c", b"1", 0o644),
        Entry::File("a/./x/y", b"2", 0o644),
        Entry::File("./d/e", b"3", 0o644),
        Entry::File("./f", b"4", 0o644),
        Entry::File("g/h", b"5", 0o644),
        Entry::File("././i/j", b"6", 0o644),
        Entry::File("top", b"7", 0o644),
    ]);
    let plain = put(tmp.path(), "x.tar", &raw);
    let archive = put(tmp.path(), "x.tar.gz", &gz(&raw));
    for strip in 0..=3 {
        let theirs = gnu_tar(&plain, strip, &tmp.path().join(format!("tar{strip}")));
        let dest = tmp.path().join(format!("ours{strip}"));
        let opts = UnpackOptions {
            strip_components: strip,
            ..UnpackOptions::default()
        };
        unpack(&archive, ArchiveKind::TarGz, &dest, &opts).unwrap();
        assert_eq!(
            cell_testkit::tree(&dest),
            theirs,
            "--strip-components={strip}"
        );
    }
}

#[test]
fn zip_unpacks_without_the_network() {
    let tmp = tempfile::tempdir().unwrap();
    let bytes = archive::zip(&[
        Entry::Dir("artifact/"),
        Entry::File("artifact/results.json", b"{}", 0o644),
        Entry::File("artifact/run", b"#!/bin/sh\n", 0o755),
    ]);
    let archive = put(tmp.path(), "a.zip", &bytes);
    let dest = tmp.path().join("out");
    // An existing empty directory is fine.
    std::fs::create_dir(&dest).unwrap();
    let done = unpack(&archive, ArchiveKind::Zip, &dest, &UnpackOptions::default()).unwrap();
    assert_eq!(done.entries, 3);
    assert_eq!(
        std::fs::read(dest.join("artifact/results.json")).unwrap(),
        b"{}"
    );
    assert!(is_executable(&dest.join("artifact/run")));
}

#[test]
fn non_empty_destination_and_corrupt_archive_are_infrastructure() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = put(tmp.path(), "c.tar.xz", b"definitely not xz");
    let dest = tmp.path().join("out");
    let err = unpack(
        &archive,
        ArchiveKind::TarXz,
        &dest,
        &UnpackOptions::default(),
    )
    .unwrap_err();
    assert!(matches!(err, FetchError::Archive { .. }), "{err}");
    assert!(!err.is_integrity());
    assert_eq!(names(tmp.path()), ["c.tar.xz"]);

    std::fs::create_dir(&dest).unwrap();
    std::fs::write(dest.join("keep"), b"").unwrap();
    let good = put(tmp.path(), "g.tar.xz", &xz(&toolchain()));
    let err = unpack(&good, ArchiveKind::TarXz, &dest, &UnpackOptions::default()).unwrap_err();
    assert!(
        matches!(err, FetchError::DestinationNotEmpty { .. }),
        "{err}"
    );
    assert_eq!(names(&dest), ["keep"]);
}

#[test]
fn archive_kind_errors_name_the_file() {
    let err = ArchiveKind::from_file_name("tool.tar.zst").unwrap_err();
    assert!(err.to_string().contains("`tool.tar.zst`"), "{err}");
    assert!(!err.is_integrity());
}

/// Sends `Authorization`, `Cookie` and `Proxy-Authorization` to `url` with the shared client and
/// returns the final status.
fn get_with_credentials(url: &str) -> u16 {
    let client = cell_fetch::http::client(
        cell_fetch::Timeouts::default(),
        cell_fetch::http::MAX_REDIRECTS,
    )
    .unwrap();
    let runtime = cell_fetch::http::runtime().unwrap();
    runtime.block_on(async {
        client
            .get(url)
            .header("authorization", "Bearer ghs_secret")
            .header("cookie", "session=1")
            .header("proxy-authorization", "Basic eDp5")
            .send()
            .await
            .unwrap()
            .status()
            .as_u16()
    })
}

const CREDENTIALS: [&str; 3] = ["authorization", "cookie", "proxy-authorization"];

#[test]
fn a_cross_origin_redirect_drops_the_credentials_a_same_origin_one_keeps_them() {
    let other = Server::routes([("/blob", Response::ok("bytes"))]);
    let api = Server::new();
    let target = other.url("/blob");
    api.handle(move |r| match r.path.as_str() {
        "/away" => Response::redirect(&target),
        "/here" => Response::redirect("/blob"),
        "/blob" => Response::ok("bytes"),
        _ => Response::not_found(),
    });

    assert_eq!(get_with_credentials(&api.url("/away")), 200);
    let first = &api.requests()[0];
    for h in CREDENTIALS {
        assert!(first.header(h).is_some(), "{h} was not sent to the origin");
    }
    let seen = other.requests();
    assert_eq!(seen.len(), 1);
    for h in CREDENTIALS {
        assert_eq!(seen[0].header(h), None, "{h} crossed to another port");
    }

    // The same origin keeps them: the check above is not vacuous.
    assert_eq!(get_with_credentials(&api.url("/here")), 200);
    let followed = api.requests().last().cloned().unwrap();
    assert_eq!(followed.path, "/blob");
    assert_eq!(followed.header("authorization"), Some("Bearer ghs_secret"));
}

#[test]
fn a_stalled_body_times_out_and_creates_nothing() {
    let body = xz(&toolchain());
    let tmp = tempfile::tempdir().unwrap();
    let server = Server::routes([("/tc.tar.xz", Response::ok(body.clone()).stalled(100))]);
    let req = FetchRequest {
        timeouts: cell_fetch::Timeouts {
            idle: std::time::Duration::from_millis(500),
            ..cell_fetch::Timeouts::default()
        },
        ..FetchRequest::new(
            server.url("/tc.tar.xz"),
            Expected::Digest(sha256(&body)),
            tmp.path().join("deps/tc"),
        )
    };
    let started = std::time::Instant::now();
    let err = fetch(&req).unwrap_err();
    assert!(matches!(err, FetchError::TimedOut { .. }), "{err}");
    assert!(
        err.to_string().contains("nothing received for 0.5 s"),
        "{err}"
    );
    assert!(!err.is_integrity());
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
    assert!(names(tmp.path()).is_empty(), "{err}: something was created");
}

/// Regression: a 10 MB archive put 2.1 GB on disk under the 8 GiB default cap. Now the
/// unpacked bytes are capped at a multiple of the archive's size (at least a floor).
#[test]
fn a_small_archive_that_unpacks_to_far_more_is_refused_by_the_ratio_cap() {
    let tmp = tempfile::tempdir().unwrap();
    // 64 MiB of zeros compresses to a few hundred KiB: past 20× and past a 1 MiB floor.
    let zeros = vec![0u8; 64 << 20];
    let archive = tmp.path().join("bomb.tar.gz");
    std::fs::write(
        &archive,
        cell_testkit::archive::tar_gz(&[cell_testkit::archive::Entry::File("z", &zeros, 0o644)]),
    )
    .unwrap();
    let size = std::fs::metadata(&archive).unwrap().len();
    assert!(size * 20 < (64 << 20), "the archive is not small: {size}");
    let dest = tmp.path().join("out");
    let opts = UnpackOptions {
        ratio_floor: 1 << 20,
        ..UnpackOptions::default()
    };
    let err = unpack(&archive, ArchiveKind::TarGz, &dest, &opts).unwrap_err();
    assert!(
        matches!(err, FetchError::UnpackedTooLarge { limit, .. } if limit == (size * 20).max(1 << 20)),
        "{err}"
    );
    assert!(!dest.exists());
    // The same archive with the ratio off unpacks (under the absolute ceiling).
    let off = UnpackOptions {
        max_ratio: 0,
        ..UnpackOptions::default()
    };
    unpack(&archive, ArchiveKind::TarGz, &dest, &off).unwrap();
    assert_eq!(std::fs::metadata(dest.join("z")).unwrap().len(), 64 << 20);
}

/// Regression: an archive that matched its digest but could not be read was reported under
/// the name of the deleted temporary file. The error names the URL it came from.
#[test]
fn an_unreadable_archive_is_named_by_its_url_not_the_temp_file() {
    let tmp = tempfile::tempdir().unwrap();
    let body = b"definitely not xz".to_vec();
    let server = serve("/tc.tar.xz", body.clone());
    let dest = tmp.path().join("tc");
    let req = FetchRequest::new(
        server.url("/tc.tar.xz"),
        Expected::Digest(sha256(&body)),
        &dest,
    );
    let err = fetch(&req).unwrap_err().to_string();
    assert!(err.contains(&server.url("/tc.tar.xz")), "{err}");
    assert!(err.contains("cannot read the archive"), "{err}");
    assert!(!dest.exists());
}
