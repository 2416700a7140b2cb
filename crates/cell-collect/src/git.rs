//! Committing a collected run with the git CLI, and pushing it with bounded, jittered
//! rebase-and-retry so that concurrent collectors of different runs both land.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use cell_stats::SplitMix64;

/// A git step that failed.
#[derive(Debug, thiserror::Error)]
#[error("git {args}: {msg}")]
pub struct GitError {
    /// The git arguments.
    pub args: String,
    /// What git said.
    pub msg: String,
}

fn git(repo: &Path, args: &[&str]) -> Result<String, GitError> {
    let out = Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(args)
        .output()
        .map_err(|e| GitError {
            args: args.join(" "),
            msg: format!("cannot run git: {e}"),
        })?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
    } else {
        Err(GitError {
            args: args.join(" "),
            msg: String::from_utf8_lossy(&out.stderr).trim().to_owned(),
        })
    }
}

/// The work tree that holds `path`.
pub fn toplevel(path: &Path) -> Result<PathBuf, GitError> {
    git(path, &["rev-parse", "--show-toplevel"]).map(PathBuf::from)
}

/// Commits `dir` (inside the work tree `repo`) with `message`; `Ok(false)` when there was
/// nothing new to commit (the same run collected again).
pub fn commit(repo: &Path, dir: &Path, message: &str) -> Result<bool, GitError> {
    let rel = dir.strip_prefix(repo).unwrap_or(dir);
    let rel = rel.to_str().ok_or_else(|| GitError {
        args: "add".into(),
        msg: "non-UTF-8 path".into(),
    })?;
    git(repo, &["add", "--all", "--", rel])?;
    if git(repo, &["diff", "--cached", "--quiet", "--", rel]).is_ok() {
        return Ok(false);
    }
    // A runner has no identity configured; the results commit still needs one.
    let ident: Vec<&str> = if git(repo, &["config", "user.email"]).is_ok() {
        vec![]
    } else {
        vec![
            "-c",
            "user.name=cell collect",
            "-c",
            "user.email=cell-collect@users.noreply.github.com",
        ]
    };
    let mut args = ident;
    args.extend(["commit", "--quiet", "-m", message, "--", rel]);
    git(repo, &args)?;
    Ok(true)
}

/// Pushes HEAD to `remote`'s current branch; when rejected because the remote moved on,
/// rebases onto it and tries again, up to `tries` times with jittered, growing waits.
pub fn push(repo: &Path, remote: &str, tries: u32, seed: u64) -> Result<u32, GitError> {
    let branch = git(repo, &["rev-parse", "--abbrev-ref", "HEAD"])?;
    let mut rng = SplitMix64::new(seed);
    let mut last = None;
    for attempt in 1..=tries {
        match git(
            repo,
            &[
                "push",
                "--quiet",
                remote,
                &format!("HEAD:refs/heads/{branch}"),
            ],
        ) {
            Ok(_) => return Ok(attempt),
            Err(e) => last = Some(e),
        }
        let wait_ms = 200 * u64::from(attempt) + rng.below(300 * u64::from(attempt));
        std::thread::sleep(Duration::from_millis(wait_ms));
        git(repo, &["fetch", "--quiet", remote, &branch])?;
        let ident: &[&str] = if git(repo, &["config", "user.email"]).is_ok() {
            &[]
        } else {
            &[
                "-c",
                "user.name=cell collect",
                "-c",
                "user.email=cell-collect@users.noreply.github.com",
            ]
        };
        let mut args = ident.to_vec();
        args.extend(["rebase", "--quiet", "FETCH_HEAD"]);
        if let Err(e) = git(repo, &args) {
            let _ = git(repo, &["rebase", "--abort"]);
            return Err(e);
        }
    }
    Err(last.unwrap_or(GitError {
        args: "push".into(),
        msg: "no attempt made".into(),
    }))
}
