//! The modes of what `cell` writes: every output file and directory takes the process umask,
//! as any program's new file does, through the binary run under `sh -c 'umask …'`.
#![cfg(unix)]

mod common;

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

use cell_testkit::scripted::Timings;
use common::{VERSIONS, cpu_locks, project};

/// `cell ARGS` under `umask MASK`.
fn cell_under_umask(mask: &str, args: &[&std::ffi::OsStr]) -> std::process::Output {
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("umask {mask} && exec \"$@\""))
        .arg("sh")
        .arg(assert_cmd::cargo::cargo_bin("cell"))
        .args(args)
        .env_remove("CELL_ROOT")
        .env_remove("GITHUB_ACTIONS")
        .env_remove("GITHUB_STEP_SUMMARY")
        .env("CELL_CPU_LOCKS", cpu_locks())
        .output()
        .unwrap();
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// What was written: its path, whether it is a directory, its permission bits.
type Written = (PathBuf, bool, u32);

/// Every file the store wrote under `dir` (the record and the report, not a build's binary)
/// and every directory.
fn modes(dir: &Path, out: &mut Vec<Written>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let path = e.unwrap().path();
        let meta = std::fs::symlink_metadata(&path).unwrap();
        let written = ["json", "md", "svg", "csv", "html"]
            .iter()
            .any(|x| path.extension().is_some_and(|e| e == *x));
        if meta.is_dir() {
            if path.file_name().is_some_and(|n| n == "build") {
                continue;
            }
            out.push((path.clone(), true, meta.permissions().mode() & 0o777));
            modes(&path, out);
        } else if written {
            out.push((path, false, meta.permissions().mode() & 0o777));
        }
    }
}

/// A scripted `cell local` run and `cell report` of it, both under `umask mask`: the modes of
/// the job dirs, the run dir and the report.
fn written_under(mask: &str) -> Vec<Written> {
    let tmp = tempfile::tempdir().unwrap();
    let root = project(tmp.path(), VERSIONS, "");
    let timings = Timings::new(1).write(&tmp.path().join("timings.json"));
    let runs = tmp.path().join("runs");
    let report = tmp.path().join("report");
    let os = |s: &Path| s.as_os_str().to_owned();
    cell_under_umask(
        mask,
        &[
            "local".as_ref(),
            "-q".as_ref(),
            "--scripted-timings".as_ref(),
            &os(&timings),
            "--root".as_ref(),
            &os(&root),
            "--out".as_ref(),
            &os(&runs),
        ],
    );
    cell_under_umask(
        mask,
        &[
            "report".as_ref(),
            "-q".as_ref(),
            "--history".as_ref(),
            &os(&runs),
            "--out".as_ref(),
            &os(&report),
        ],
    );
    let mut all = Vec::new();
    modes(&runs, &mut all);
    modes(&report, &mut all);
    for part in ["RESULTS.md", "results.json", "index.html", "footprint.csv"] {
        assert!(
            all.iter().any(|(p, _, _)| p.ends_with(part)),
            "{part} was written"
        );
    }
    all
}

#[test]
fn outputs_take_the_umask_instead_of_0600() {
    // Every file written through the atomic writer was 0600 and every run and job dir
    // 0700, whatever the umask: a report served by another user could not be read.
    for (mask, file, dir) in [("022", 0o644, 0o755), ("077", 0o600, 0o700)] {
        let all = written_under(mask);
        let wrong: Vec<_> = all
            .iter()
            .filter(|(_, is_dir, m)| *m != if *is_dir { dir } else { file })
            .map(|(p, _, m)| format!("{} {m:o}", p.display()))
            .collect();
        assert!(wrong.is_empty(), "umask {mask}: {wrong:#?}");
    }
}
