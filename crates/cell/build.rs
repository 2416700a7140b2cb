//! Finds the commit `cell` is built from, for `cell --version` (`src/commit.rs` says what it
//! prints), and leaves it in `CELL_COMMIT`:
//!
//! 1. a packaged crate (`cargo package`, crates.io) names it in the `.cargo_vcs_info.json`
//!    cargo wrote at its root; that file is never in a checkout, so when it is there it is the
//!    only source;
//! 2. otherwise git, run in this crate's directory: `HEAD`, and `-dirty` when a tracked file of
//!    what the binary is built from (the workspace's `Cargo.toml` and `Cargo.lock`, and
//!    `crates/` but for its tests) differs from it: untracked files and the docs do not count.
//!    Only when the repository is the crate's own: `HEAD` holds this crate's `Cargo.toml` at
//!    this path, declaring this package (a crate unpacked inside some other repository, or not
//!    yet committed there, names no commit);
//! 3. otherwise `unknown commit`: never a commit that may be wrong.
//!
//! A crate first built in no repository is not watched for one appearing around it later (cargo
//! watches paths, and a path that does not exist reruns every build): it keeps saying
//! `unknown commit`, never a wrong one, until `build.rs` changes or `cargo clean`.
//!
//! Rerun only when the answer can change: `HEAD`, the ref it points to, the index, and the
//! tracked files `-dirty` looks at (an edit there rebuilds `cell` anyway), so a docs edit or
//! another build rebuilds nothing, and a commit, a checkout or an edit is never missed.

#[path = "src/commit.rs"]
mod commit;

use std::path::{Path, PathBuf};
use std::process::Command;

use commit::{Commit, VcsInfo};

fn main() {
    let dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let package = std::env::var("CARGO_PKG_NAME").expect("cargo sets it");
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-changed=src/commit.rs");
    let found = match commit::read_vcs_info(&dir) {
        VcsInfo::Absent => from_git(&dir, &package),
        packaged => {
            println!("cargo::rerun-if-changed={}", commit::VCS_INFO);
            match packaged {
                VcsInfo::Names(commit) => Some(commit),
                _ => None,
            }
        }
    };
    println!(
        "cargo::rustc-env=CELL_COMMIT={}",
        commit::describe(found.as_ref())
    );
    // The full id for `cell init`, which pins the workflow to the commit this cell is: empty
    // when unknown.
    println!(
        "cargo::rustc-env=CELL_COMMIT_SHA={}",
        found.as_ref().map_or("", Commit::sha)
    );
    println!(
        "cargo::rustc-env=CELL_COMMIT_DIRTY={}",
        found.as_ref().is_some_and(Commit::dirty)
    );
}

/// `git` in `dir`, with the repository found from `dir` alone (not from a `GIT_DIR` a hook or a
/// caller set) and without the index refresh `git status` may write (which would look like a
/// change to the next build): its trimmed output, `None` when it fails.
fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let mut cmd = Command::new("git");
    cmd.current_dir(dir)
        .arg("--no-optional-locks")
        .args(args)
        .env("TZ", "UTC");
    for var in [
        "GIT_DIR",
        "GIT_WORK_TREE",
        "GIT_INDEX_FILE",
        "GIT_COMMON_DIR",
        "GIT_OBJECT_DIRECTORY",
        "GIT_ALTERNATE_OBJECT_DIRECTORIES",
        "GIT_NAMESPACE",
        "GIT_CEILING_DIRECTORIES",
    ] {
        cmd.env_remove(var);
    }
    let out = cmd.output().ok()?;
    if !out.status.success() {
        return None;
    }
    Some(String::from_utf8(out.stdout).ok()?.trim_end().to_owned())
}

/// The commit of the repository `dir` sits in, when it is the crate's own (see the top).
fn from_git(dir: &Path, package: &str) -> Option<Commit> {
    let top = PathBuf::from(git(dir, &["rev-parse", "--show-toplevel"])?);
    let prefix = git(dir, &["rev-parse", "--show-prefix"])?;
    let sources = sources(&prefix);
    watch_git(dir, &top, &sources);

    let manifest = git(dir, &["show", &format!("HEAD:{prefix}Cargo.toml")])?;
    if !commit::manifest_names_package(&manifest, package) {
        return None;
    }
    let sha = git(dir, &["rev-parse", "--verify", "HEAD^{commit}"])?;
    let mut status = vec!["status", "--porcelain", "--untracked-files=no", "--"];
    status.extend(sources.iter().map(String::as_str));
    let dirty = !git(dir, &status)?.is_empty();
    let date = git(
        dir,
        &[
            "show",
            "-s",
            "--no-show-signature",
            "--format=%cd",
            "--date=format-local:%Y-%m-%d",
            "HEAD",
        ],
    );
    Commit::new(&sha, dirty, date.as_deref())
}

/// What the binary is built from, as git pathspecs: the workspace's `Cargo.toml` and
/// `Cargo.lock` and its `crates/`, tests aside (none of them goes into the binary, and an edit
/// to one then rebuilds no more than it did). The workspace is two levels above this crate's
/// `crates/cell/`; a crate found elsewhere in its repository answers for its own directory.
fn sources(prefix: &str) -> Vec<String> {
    match prefix.strip_suffix("crates/cell/") {
        Some(root) => vec![
            format!(":(top){root}Cargo.toml"),
            format!(":(top){root}Cargo.lock"),
            format!(":(top){root}crates"),
            format!(":(top,exclude,glob){root}crates/*/tests/**"),
        ],
        None => vec![
            format!(":(top){prefix}"),
            format!(":(top,exclude,glob){prefix}tests/**"),
        ],
    }
}

/// The `cargo::rerun-if-changed` lines of the git answer: `HEAD`, the index, the ref `HEAD`
/// points to (its loose file; else `packed-refs` and the directory the loose file would be
/// created in), the reftable of a repository that keeps refs there, and every tracked file of
/// `sources` (a file added or removed changes the index). A path that does not exist makes
/// cargo rerun every build, so only `HEAD` and the index are named whether or not they exist.
fn watch_git(dir: &Path, top: &Path, sources: &[String]) {
    let git_path = |p: &str| {
        git(
            dir,
            &["rev-parse", "--path-format=absolute", "--git-path", p],
        )
        .map(PathBuf::from)
    };
    let mut watched: Vec<PathBuf> = ["HEAD", "index"]
        .iter()
        .filter_map(|p| git_path(p))
        .collect();
    if let Some(reftable) = git_path("reftable").filter(|p| p.is_dir()) {
        watched.push(reftable);
    }
    if let Some(loose) = git(dir, &["symbolic-ref", "-q", "HEAD"]).and_then(|r| git_path(&r)) {
        if loose.is_file() {
            watched.push(loose.clone());
        } else if let Some(parent) = loose.ancestors().skip(1).find(|p| p.is_dir()) {
            watched.push(parent.to_owned());
        }
        if let Some(packed) = git_path("packed-refs").filter(|p| p.is_file()) {
            watched.push(packed);
        }
    }
    let mut ls_files = vec!["ls-files", "-z", "--full-name", "--"];
    ls_files.extend(sources.iter().map(String::as_str));
    if let Some(files) = git(dir, &ls_files) {
        watched.extend(
            files
                .split('\0')
                .filter(|f| !f.is_empty())
                .map(|f| top.join(f)),
        );
    }
    for path in watched {
        println!("cargo::rerun-if-changed={}", path.display());
    }
}
