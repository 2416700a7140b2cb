//! `cell --version` names the commit it was built from (build.rs, src/commit.rs): in a git
//! checkout, this checkout's `HEAD`, `-dirty` when a tracked file of what the binary is built
//! from differs, and the commit's date.

mod common;

use common::{cell, repo_root};

/// `git` in this checkout, as the build script runs it; `None` when it fails (no checkout).
fn git(args: &[&str]) -> Option<String> {
    let out = std::process::Command::new("git")
        .current_dir(repo_root())
        .arg("--no-optional-locks")
        .args(args)
        .env("TZ", "UTC")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE")
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8(out.stdout).unwrap().trim_end().to_owned())
}

/// The line `cell --version` must print when built from this checkout as it stands.
fn expected() -> String {
    let version = env!("CARGO_PKG_VERSION");
    let Some(sha) = git(&["rev-parse", "--verify", "HEAD^{commit}"]) else {
        return format!("cell {version} (unknown commit)\n");
    };
    let changed = git(&[
        "status",
        "--porcelain",
        "--untracked-files=no",
        "--",
        ":(top)Cargo.toml",
        ":(top)Cargo.lock",
        ":(top)crates",
        ":(top,exclude,glob)crates/*/tests/**",
    ])
    .expect("git status runs where git rev-parse did");
    let dirty = if changed.is_empty() { "" } else { "-dirty" };
    let date = git(&["show", "-s", "--format=%cd", "--date=format-local:%Y-%m-%d"]).unwrap();
    format!("cell {version} (commit {}{dirty}, {date})\n", &sha[..12])
}

#[test]
fn version_names_the_commit_of_this_checkout() {
    let out = cell().arg("--version").output().unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(String::from_utf8(out.stdout).unwrap(), expected());
}

#[test]
fn short_v_prints_the_same_line() {
    let long = cell().arg("--version").output().unwrap();
    let short = cell().arg("-V").output().unwrap();
    assert!(short.status.success(), "{short:?}");
    assert_eq!(short.stdout, long.stdout);
    let line = String::from_utf8(short.stdout).unwrap();
    let start = format!("cell {} (", env!("CARGO_PKG_VERSION"));
    assert!(line.starts_with(&start) && line.ends_with(")\n"), "{line}");
}
