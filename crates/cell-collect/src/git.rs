//! Committing a collected run with the git CLI, and pushing it with bounded, jittered
//! rebase-and-retry so that concurrent collectors of different runs both land. One collect at
//! a time per checkout: a lock file in the git dir. The push alone gets a token, through the
//! environment of that one git process, never in `.git/config` or on a command line.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use cell_stats::SplitMix64;

pub use crate::lock::Lock;

/// The author of results commits when the checkout has no identity: the Actions bot.
const BOT_NAME: &str = "github-actions[bot]";
/// Its address (the bot's user id, so GitHub links the commits to it).
const BOT_EMAIL: &str = "41898282+github-actions[bot]@users.noreply.github.com";

/// A git step that failed, said in words; git's own last line is kept as the detail.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    /// git could not run or a step failed.
    #[error("{what} failed: {detail}")]
    Step {
        /// What was being done.
        what: String,
        /// git's last line of output.
        detail: String,
    },
    /// The remote refused the push for another reason than being behind (a protected
    /// branch, missing permission): retrying cannot help.
    #[error(
        "{remote} refused the push to {branch}: {detail}. If the branch is protected, set [workflow] results_branch in cell/cell.toml (docs/workflow.md) or let the workflow's token push to it"
    )]
    Refused {
        /// The remote.
        remote: String,
        /// The branch.
        branch: String,
        /// git's last line.
        detail: String,
    },
    /// Rebasing onto the moved remote conflicted (another collect wrote the same run dir).
    #[error(
        "the results on {branch} changed under this collect and the rebase conflicts ({detail}); nothing was pushed: collect the run again"
    )]
    Conflict {
        /// The branch.
        branch: String,
        /// git's last line.
        detail: String,
    },
    /// The remote stayed ahead after every try.
    #[error("{remote} kept moving: the push to {branch} did not land after {tries} tries")]
    Exhausted {
        /// The remote.
        remote: String,
        /// The branch.
        branch: String,
        /// Tries made.
        tries: u32,
    },
    /// A lock file of git's own (`.git/index.lock`, a ref's `.lock`) is there: another git is
    /// running in the checkout, or one crashed and left it.
    #[error(
        "{what} failed: {} exists: another git process is running in this checkout (wait for it to finish), or one stopped without removing it (if no git is running, remove the file) and try again",
        path.display()
    )]
    GitLocked {
        /// What was being done.
        what: String,
        /// git's lock file.
        path: PathBuf,
    },
    /// The checkout's collect lock cannot be taken.
    #[error(transparent)]
    Lock(#[from] crate::lock::LockError),
}

/// How one git call ended.
struct Failure {
    stderr: String,
}

impl Failure {
    /// The lock file of git's own that made it fail: its message names it on the first line
    /// (`Unable to create '<path>.lock': File exists.`) and ends on advice that does not.
    fn held_lock(&self) -> Option<PathBuf> {
        let rest = self.stderr.split("Unable to create '").nth(1)?;
        let (path, _) = rest.split_once("': File exists")?;
        let path = PathBuf::from(path);
        path.extension()
            .is_some_and(|e| e == "lock")
            .then_some(path)
    }

    fn last_line(&self) -> String {
        let line = self.stderr.lines().rev().find(|l| !l.trim().is_empty());
        cell_schema::escape::without_userinfo(&cell_schema::escape::one_line(
            line.unwrap_or("(no message)").trim(),
        ))
    }
}

fn run_git(repo: &Path, args: &[&str], env: &[(String, String)]) -> Result<String, Failure> {
    let out = Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(args)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .env("GIT_TERMINAL_PROMPT", "0")
        .output()
        .map_err(|e| Failure {
            stderr: format!("cannot run git: {e}"),
        })?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
    } else {
        Err(Failure {
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        })
    }
}

fn git(repo: &Path, what: &str, args: &[&str]) -> Result<String, GitError> {
    run_git(repo, args, &[]).map_err(|f| match f.held_lock() {
        Some(path) => GitError::GitLocked {
            what: what.to_owned(),
            path,
        },
        None => GitError::Step {
            what: what.to_owned(),
            detail: f.last_line(),
        },
    })
}

/// The work tree that holds `path`.
pub fn toplevel(path: &Path) -> Result<PathBuf, GitError> {
    git(
        path,
        "finding the git work tree",
        &["rev-parse", "--show-toplevel"],
    )
    .map(PathBuf::from)
}

/// The commit a checkout is at and whether it has uncommitted changes (untracked files
/// count), for a local run's record; `None` outside a git checkout.
pub fn head_state(path: &Path) -> Option<(String, bool)> {
    let sha = run_git(path, &["rev-parse", "--verify", "HEAD"], &[]).ok()?;
    let valid = sha.len() == 40 && sha.bytes().all(|b| b.is_ascii_hexdigit());
    if !valid {
        return None;
    }
    // A local run writes under the checkout (results/, target/): those are ignored files
    // in any sane checkout, and `--untracked-files=normal` does not list ignored ones.
    let status = run_git(
        path,
        &["status", "--porcelain", "--untracked-files=normal"],
        &[],
    )
    .ok()?;
    Some((sha.to_ascii_lowercase(), !status.trim().is_empty()))
}

/// Takes the checkout's collect lock (`<git dir>/cell-collect.lock`, see [`crate::lock`]),
/// waiting for another collect in the same checkout and saying so.
pub fn lock(repo: &Path) -> Result<Lock, GitError> {
    let common = git(
        repo,
        "finding the git dir",
        &["rev-parse", "--git-common-dir"],
    )?;
    let path = repo.join(common).join("cell-collect.lock");
    Ok(crate::lock::acquire(&path, "in this checkout")?)
}

/// `-c user.name=… -c user.email=…` of the Actions bot when the checkout has no identity.
fn identity(repo: &Path) -> Vec<String> {
    if run_git(repo, &["config", "user.email"], &[]).is_ok() {
        return Vec::new();
    }
    vec![
        "-c".into(),
        format!("user.name={BOT_NAME}"),
        "-c".into(),
        format!("user.email={BOT_EMAIL}"),
    ]
}

/// Commits `dir` (inside the work tree `repo`) with `message`; `Ok(false)` when there was
/// nothing new to commit (the same run collected again).
pub fn commit(repo: &Path, dir: &Path, message: &str) -> Result<bool, GitError> {
    let rel = dir.strip_prefix(repo).unwrap_or(dir);
    let rel = rel.to_str().ok_or_else(|| GitError::Step {
        what: "adding the run dir".into(),
        detail: "its path is not UTF-8".into(),
    })?;
    git(repo, "adding the run dir", &["add", "--all", "--", rel])?;
    if run_git(repo, &["diff", "--cached", "--quiet", "--", rel], &[]).is_ok() {
        return Ok(false);
    }
    let mut args = identity(repo);
    args.extend(["commit", "--quiet", "-m", message, "--", rel].map(String::from));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    git(repo, "committing the run", &args)?;
    Ok(true)
}

/// The environment that lets one git process push over HTTPS with `GITHUB_TOKEN`: git's
/// `GIT_CONFIG_*` variables, so the token is in no file and on no command line.
fn push_env(repo: &Path, remote: &str) -> Vec<(String, String)> {
    let Some(token) = std::env::var("GITHUB_TOKEN").ok().filter(|t| !t.is_empty()) else {
        return Vec::new();
    };
    let Ok(url) = run_git(repo, &["remote", "get-url", remote], &[]) else {
        return Vec::new();
    };
    let Some(rest) = url.strip_prefix("https://") else {
        return Vec::new();
    };
    let host = rest.split('/').next().unwrap_or_default();
    let basic = base64::Engine::encode(
        &base64::engine::general_purpose::STANDARD,
        format!("x-access-token:{token}"),
    );
    vec![
        ("GIT_CONFIG_COUNT".into(), "1".into()),
        (
            "GIT_CONFIG_KEY_0".into(),
            format!("http.https://{host}/.extraheader"),
        ),
        (
            "GIT_CONFIG_VALUE_0".into(),
            format!("AUTHORIZATION: basic {basic}"),
        ),
    ]
}

/// Checks out `branch` of `remote` into a new work tree at `into` (on that branch, at its
/// tip), or, when the remote has no such branch yet, a new branch with no history there:
/// where a repository whose main is protected keeps `results/`. `Ok(true)` when it existed.
pub fn results_checkout(
    repo: &Path,
    remote: &str,
    branch: &str,
    into: &Path,
) -> Result<bool, GitError> {
    let env = push_env(repo, remote);
    let into_s = into.to_str().ok_or_else(|| GitError::Step {
        what: "checking out the results branch".into(),
        detail: "the path is not UTF-8".into(),
    })?;
    let remote_ref = format!("refs/heads/{branch}");
    let listed =
        run_git(repo, &["ls-remote", "--heads", remote, &remote_ref], &env).map_err(|f| {
            GitError::Step {
                what: format!("asking {remote} for {branch}"),
                detail: f.last_line(),
            }
        })?;
    let exists = !listed.trim().is_empty();
    if exists {
        run_git(repo, &["fetch", "--quiet", remote, &remote_ref], &env).map_err(|f| {
            GitError::Step {
                what: format!("fetching {remote} {branch}"),
                detail: f.last_line(),
            }
        })?;
        git(
            repo,
            "checking out the results branch",
            &[
                "worktree",
                "add",
                "--quiet",
                "-B",
                branch,
                into_s,
                "FETCH_HEAD",
            ],
        )?;
    } else {
        git(
            repo,
            "starting the results branch",
            &[
                "worktree", "add", "--quiet", "--orphan", "-b", branch, into_s,
            ],
        )?;
    }
    Ok(exists)
}

/// A push that failed only because another push raced it on the remote: try again as is.
fn transient(f: &Failure) -> bool {
    let e = &f.stderr;
    e.contains("cannot lock ref") || e.contains("failed to update ref") || e.contains("hung up")
}

/// Pushes HEAD to `branch` of `remote` (default: the checked-out branch). When the remote
/// moved on (its tip is not in our history), rebases onto it and tries again, up to `tries`
/// times with jittered, growing waits. A refusal for any other reason ends at once, saying why.
pub fn push(
    repo: &Path,
    remote: &str,
    branch: Option<&str>,
    tries: u32,
    seed: u64,
) -> Result<u32, GitError> {
    let branch = match branch {
        Some(b) => b.to_owned(),
        None => git(
            repo,
            "reading the branch",
            &["rev-parse", "--abbrev-ref", "HEAD"],
        )?,
    };
    if branch == "HEAD" {
        return Err(GitError::Step {
            what: "pushing".into(),
            detail: "the checkout is on no branch (a detached HEAD, e.g. a tag's run): name the branch to push to (cell commit --branch B)".into(),
        });
    }
    let env = push_env(repo, remote);
    let mut rng = SplitMix64::new(seed);
    let refspec = format!("HEAD:refs/heads/{branch}");
    for attempt in 1..=tries {
        let Err(failure) = run_git(repo, &["push", remote, &refspec], &env) else {
            return Ok(attempt);
        };
        let wait_ms = 200 * u64::from(attempt) + rng.below(300 * u64::from(attempt));
        std::thread::sleep(Duration::from_millis(wait_ms));
        let fetched = run_git(repo, &["fetch", "--quiet", remote, &branch], &env).is_ok();
        let behind = fetched
            && run_git(
                repo,
                &["merge-base", "--is-ancestor", "FETCH_HEAD", "HEAD"],
                &[],
            )
            .is_err();
        if behind {
            rebase(repo, &branch)?;
        } else if !transient(&failure) {
            return Err(GitError::Refused {
                remote: remote.to_owned(),
                branch,
                detail: failure.last_line(),
            });
        }
    }
    Err(GitError::Exhausted {
        remote: remote.to_owned(),
        branch,
        tries,
    })
}

/// Replays our commit onto the fetched tip; a conflict aborts, leaving the checkout as it was.
fn rebase(repo: &Path, branch: &str) -> Result<(), GitError> {
    let mut args = identity(repo);
    args.extend(["rebase", "--quiet", "FETCH_HEAD"].map(String::from));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    run_git(repo, &args, &[]).map(|_| ()).map_err(|f| {
        if let Some(path) = f.held_lock() {
            return GitError::GitLocked {
                what: "rebasing onto the remote".into(),
                path,
            };
        }
        let _ = run_git(repo, &["rebase", "--abort"], &[]);
        GitError::Conflict {
            branch: branch.to_owned(),
            detail: f.last_line(),
        }
    })
}
