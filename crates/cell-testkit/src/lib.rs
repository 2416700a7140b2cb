//! # cell-testkit
//!
//! Test-only parts shared by the integration tests (`crates/*/tests/`) of every crate. Only a
//! `[dev-dependencies]` entry may name it, and no crate's own unit tests use it, so no crate
//! ever depends on itself through this one.
//!
//! What is in it:
//!
//! - this module: files on disk — [`fixtures`] (results recorded from real runs, frozen),
//!   [`repo_root`], [`read`], [`read_json`], [`files`] and [`dump`] (a tree as one text for a
//!   snapshot), [`copy_dir`], [`names`], [`tree`], [`is_executable`], [`git`], [`sha256`] and
//!   [`split_section`] (a Markdown file without one of its sections) and
//!   [`without_new_phase_columns`] (a `RESULTS.md` as the recorded ones were written);
//! - [`http`]: one loopback HTTP/1.1 server (a handler closure or a route table, a log of every
//!   request) with fault injection: any status, redirects, rate limits, a delay, a body that
//!   stalls or comes up short, a connection closed without an answer; method-aware routes, a
//!   bounded request body, and the writes (POST, PATCH, PUT) listed with their JSON;
//! - [`github`]: GitHub's write endpoints cell uses (issue comments, check runs) on loopback,
//!   alone or inside the walk's run API, holding what was written;
//! - [`archive`]: tar, tar.gz, tar.xz and zip archives of files with modes, directories,
//!   symlinks, hard links and fifos, under names as given (`..` and absolute ones too);
//! - [`snippets`]: the TOML of a toolchain and of a C row, written once, and the pieces the
//!   fixtures share (clang, gcc, python);
//! - [`tiny`]: the tiny C project the CLI tests build and time for real;
//! - [`planning`]: the projects the planning tests render workflows of;
//! - [`lint`]: actionlint, check-jsonschema and zizmor on a workflow file;
//! - [`noise`]: this VM's recorded noise, and runs drawn from it again (whole rounds, seeded);
//! - [`suites`]: hand-built results of the http and soak suites with fixed figures;
//! - [`walk`]: a generated workflow file run as a GitHub runner would, on this machine.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use sha2::Digest as _;

pub mod archive;
pub mod github;
pub mod http;
pub mod lint;
pub mod noise;
pub mod planning;
pub mod scripted;
pub mod snippets;
pub mod suites;
pub mod tiny;
pub mod walk;

/// `crates/cell-testkit/fixtures`: results recorded from real runs, frozen.
pub fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures")
}

/// The repository root (two levels above this crate, as above every crate).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// `markdown` without its section under `heading` (the heading line up to the next heading of
/// the same level, or the end), and that section: the recorded `RESULTS.md` files predate
/// the footprint section, and everything around it must still be what they hold.
pub fn split_section(markdown: &str, heading: &str) -> (String, String) {
    let level = heading.split(' ').next().unwrap_or("##");
    let Some(start) = markdown.match_indices(heading).map(|(i, _)| i).find(|i| {
        (*i == 0 || markdown[..*i].ends_with('\n'))
            && markdown[*i..].starts_with(&format!("{heading}\n"))
    }) else {
        return (markdown.to_owned(), String::new());
    };
    let rest = &markdown[start + heading.len()..];
    let end = rest
        .find(&format!("\n{level} "))
        .map_or(markdown.len(), |i| start + heading.len() + i + 1);
    (
        format!("{}{}", &markdown[..start], &markdown[end..]),
        markdown[start..end].to_owned(),
    )
}

/// A `RESULTS.md`'s phase tables without their `resolves` and `stopped` columns, which the
/// recorded files of `fixtures/workload/` predate: each resolution is checked to be a
/// percentage, and no recorded row to say why it stopped.
pub fn without_new_phase_columns(md: &str) -> String {
    const HEAD: &str = "| row | job | clock | median s | ratio | CI | resolves |";
    let mut out = Vec::new();
    let mut in_table = false;
    for line in md.lines() {
        in_table = line.starts_with(HEAD) || (in_table && line.starts_with('|'));
        if !in_table {
            out.push(line.to_owned());
            continue;
        }
        let cells: Vec<&str> = line.split('|').collect();
        // `| a | b |` splits into "", " a ", " b ", "": the columns are cells[1..].
        let (resolves, stopped) = (cells[7].trim(), cells[11].trim());
        if !line.starts_with(HEAD) && !resolves.starts_with("---") {
            assert!(
                resolves.starts_with('±') && resolves.ends_with('%'),
                "{line}"
            );
            assert_eq!(stopped, "–", "{line}");
        }
        let kept: Vec<&str> = cells
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != 7 && *i != 11)
            .map(|(_, c)| *c)
            .collect();
        out.push(kept.join("|"));
    }
    let mut text = out.join("\n");
    if md.ends_with('\n') {
        text.push('\n');
    }
    text
}

/// A file's text, or a panic naming it.
pub fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A JSON file, or a panic naming it.
pub fn read_json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&read(path)).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The run dir `cell local --out OUT` wrote (`<date>-local-<time>`), the first by name.
pub fn local_run_dir(out: &Path) -> PathBuf {
    let mut runs: Vec<PathBuf> = std::fs::read_dir(out)
        .unwrap_or_else(|e| panic!("{}: {e}", out.display()))
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.is_dir()
                && p.file_name()
                    .is_some_and(|n| n.to_string_lossy().contains("-local-"))
        })
        .collect();
    runs.sort();
    runs.into_iter()
        .next()
        .unwrap_or_else(|| panic!("no local run under {}", out.display()))
}

/// The first subdirectory of `dir` by name (a run dir's cell, a jobs dir's job).
pub fn first_dir(dir: &Path) -> PathBuf {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs.into_iter()
        .next()
        .unwrap_or_else(|| panic!("no directory under {}", dir.display()))
}

/// Every file under `dir`, by `/`-separated relative path.
pub fn files(dir: &Path) -> BTreeMap<String, String> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, String>) {
        let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        for e in entries {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                let rel = p.strip_prefix(root).unwrap().to_str().unwrap();
                out.insert(rel.replace('\\', "/"), read(&p));
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

/// One text of a set of files, for a snapshot: a `=== path` line, then the file's bytes.
pub fn dump(files: &BTreeMap<String, String>) -> String {
    let mut out = String::new();
    for (path, text) in files {
        let _ = write!(out, "=== {path}\n{text}");
    }
    out
}

/// Copies a directory tree.
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &to.join(e.file_name()));
        } else {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

/// The names in `dir`, sorted.
pub fn names(dir: &Path) -> Vec<String> {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let mut v: Vec<String> = entries
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// Every path under `dir` (directories too, symlinks not followed), relative and sorted: what
/// a test compares to prove that nothing was left behind.
pub fn tree(dir: &Path) -> Vec<String> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let rel = path.strip_prefix(root).unwrap().to_string_lossy();
            out.push(rel.replace('\\', "/"));
            if std::fs::symlink_metadata(&path).unwrap().is_dir() {
                walk(root, &path, out);
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

/// Runs `git -C dir args…`, panicking with git's message unless it succeeds; its stdout,
/// trimmed. The one git helper of the tests.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// `git add -A` and a commit of everything in `dir` as a test identity (no global git config
/// needed); returns the commit.
pub fn commit_all(dir: &Path, message: &str) -> String {
    git(dir, &["add", "-A"]);
    let id = ["-c", "user.name=t", "-c", "user.email=t@example.invalid"];
    git(dir, &[&id[..], &["commit", "-qm", message]].concat());
    git(dir, &["rev-parse", "HEAD"])
}

/// A bare clone of the repository at `src`, at `dst`: the origin a walk's checkout clones and
/// pushes to.
pub fn bare_clone(src: &Path, dst: &Path) {
    git(
        src,
        &["clone", "-q", "--bare", ".", &dst.display().to_string()],
    );
}

/// Whether anyone may execute the file `path` (or what it links to).
#[cfg(unix)]
pub fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    let meta = std::fs::metadata(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    meta.permissions().mode() & 0o111 != 0
}

/// The SHA-256 of `bytes`; `.to_string()` gives the 64 lowercase hex digits.
pub fn sha256(bytes: &[u8]) -> cell_schema::Sha256 {
    cell_schema::Sha256::from_bytes(&sha2::Sha256::digest(bytes))
}
