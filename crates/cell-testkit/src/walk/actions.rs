//! The `uses:` steps, replaced by local equivalents:
//!
//! - `actions/checkout`: what the action runs, against the bare origin: `git init`, a fetch of
//!   the commit (`ref`, default `github.sha` on `github.ref`'s branch) with `--depth` from
//!   `fetch-depth` (default 1; 0 fetches every branch and tag), a checkout on the branch (a
//!   commit or tag checks out detached; a commit id in `ref` is fetched by id, as the action
//!   does, so one only a pull request's `refs/pull/<n>/head` holds is found), and, with
//!   `persist-credentials` (default true), the token as `http.https://github.com/.extraheader`
//!   in `.git/config`, as the action leaves it, so a test can see a job that keeps
//!   credentials it should not;
//! - `actions/upload-artifact`, `actions/download-artifact`: the run's [`Store`];
//! - the setup actions and caches: nothing, because the tools are installed on this machine;
//! - anything else is an error: a walk that does not know an action must not pretend.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::Path;
use std::process::Command;

use super::artifacts::Store;

/// Actions that set up a tool or a cache: no-ops here, with the outputs steps may read.
const NO_OPS: &[(&str, &[(&str, &str)])] = &[
    (
        "dtolnay/rust-toolchain",
        &[("cachekey", "walk"), ("name", "walk")],
    ),
    ("swatinem/rust-cache", &[("cache-hit", "false")]),
    ("actions/cache", &[("cache-hit", "false")]),
    ("actions/setup-go", &[("cache-hit", "false")]),
    ("actions/setup-dotnet", &[("cache-hit", "false")]),
    ("actions/setup-python", &[]),
    ("actions/setup-node", &[]),
    ("actions/setup-java", &[]),
    ("mlugg/setup-zig", &[]),
    ("goto-bus-stop/setup-zig", &[]),
];

/// What an action step needs from the run.
pub struct Env<'a> {
    pub origin: &'a Path,
    pub workspace: &'a Path,
    pub sha: &'a str,
    pub git_ref: &'a str,
    pub repository: &'a str,
    pub token: &'a str,
    pub store: &'a Store,
    pub attempt: u32,
    /// The runner's `HOME`, for a `~` in an artifact path.
    pub home: &'a Path,
}

/// How an action step went: its outputs, or why it failed (into the log either way).
pub type Outcome = Result<Vec<(String, String)>, String>;

/// Runs `uses` with `with`; `Err` of the outer result when the walk does not know it.
pub fn run(
    uses: &str,
    with: &BTreeMap<String, String>,
    env: &Env<'_>,
    log: &mut std::fs::File,
) -> Result<Outcome, String> {
    let action = uses.split('@').next().unwrap_or(uses).to_ascii_lowercase();
    // The artifact actions expand a leading `~` of their paths to the runner's home.
    let mut with = with.clone();
    if let Some(path) = with.get_mut("path") {
        let home = env.home.display().to_string();
        *path = path
            .lines()
            .map(|l| match l.trim().strip_prefix('~') {
                Some(rest) if rest.is_empty() || rest.starts_with('/') => format!("{home}{rest}"),
                _ => l.to_owned(),
            })
            .collect::<Vec<_>>()
            .join("\n");
    }
    let with = &with;
    let action = action.split('/').take(2).collect::<Vec<_>>().join("/");
    Ok(match action.as_str() {
        "actions/checkout" => checkout(with, env, log),
        "actions/upload-artifact" => {
            env.store
                .upload(env.workspace, with, env.attempt)
                .map(|(outputs, warning)| {
                    if let Some(w) = warning {
                        let _ = writeln!(log, "##[warning]{w}");
                    }
                    outputs
                })
        }
        "actions/download-artifact" => env.store.download(env.workspace, with),
        other => match NO_OPS.iter().find(|(a, _)| *a == other) {
            Some((_, outputs)) => {
                let _ = writeln!(log, "(walk: {uses} is a no-op, the tools are installed)");
                Ok(outputs
                    .iter()
                    .map(|(k, v)| ((*k).into(), (*v).into()))
                    .collect())
            }
            None => return Err(format!("the walk does not know the action `{uses}`")),
        },
    })
}

fn git(dir: &Path, args: &[&str], log: &mut std::fs::File) -> Result<String, String> {
    let _ = writeln!(log, "[command]git {}", args.join(" "));
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_TERMINAL_PROMPT", "0")
        .output()
        .map_err(|e| format!("git: {e}"))?;
    let _ = log.write_all(&out.stdout);
    let _ = log.write_all(&out.stderr);
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
    } else {
        Err(format!(
            "git {} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// Standard base64, for the credential header.
fn base64(bytes: &[u8]) -> String {
    base64::Engine::encode(&base64::engine::general_purpose::STANDARD, bytes)
}

/// The value `actions/checkout` writes for `http.https://github.com/.extraheader`.
pub fn extraheader(token: &str) -> String {
    format!(
        "AUTHORIZATION: basic {}",
        base64(format!("x-access-token:{token}").as_bytes())
    )
}

fn checkout(with: &BTreeMap<String, String>, env: &Env<'_>, log: &mut std::fs::File) -> Outcome {
    let input = |k: &str| {
        with.get(k)
            .map(|v| v.trim().to_owned())
            .filter(|v| !v.is_empty())
    };
    if let Some(repo) = input("repository").filter(|r| r != env.repository) {
        return Err(format!(
            "the walk checks out only {} (asked for {repo})",
            env.repository
        ));
    }
    let dest = match input("path") {
        Some(p) => env.workspace.join(p),
        None => env.workspace.to_path_buf(),
    };
    std::fs::create_dir_all(&dest).map_err(|e| e.to_string())?;
    let depth: u32 = input("fetch-depth")
        .map_or(Ok(1), |d| d.parse())
        .map_err(|e| format!("fetch-depth: {e}"))?;
    let git_ref = input("ref");
    let url = format!("file://{}", env.origin.display());
    git(&dest, &["init", "-q"], log)?;
    git(&dest, &["remote", "add", "origin", &url], log)?;
    // What to fetch, and what to check out: a branch as `-B <branch>`, the rest detached.
    let (spec, branch, detached) = match git_ref.as_deref() {
        None => {
            let b = env.git_ref.strip_prefix("refs/heads/").map(str::to_owned);
            let spec = match &b {
                Some(b) => format!("+{}:refs/remotes/origin/{b}", env.sha),
                None => env.sha.to_owned(),
            };
            (spec, b, env.sha.to_owned())
        }
        Some(r) if r.len() == 40 && r.bytes().all(|c| c.is_ascii_hexdigit()) => {
            (r.to_owned(), None, r.to_owned())
        }
        Some(r) if r.starts_with("refs/tags/") => (format!("+{r}:{r}"), None, r.to_owned()),
        Some(r) => {
            let b = r.strip_prefix("refs/heads/").unwrap_or(r).to_owned();
            (
                format!("+refs/heads/{b}:refs/remotes/origin/{b}"),
                Some(b),
                String::new(),
            )
        }
    };
    let depth_arg = format!("--depth={depth}");
    let mut fetch = vec!["fetch", "--no-tags", "--prune", "-q", "origin"];
    if depth == 0 {
        fetch = vec![
            "fetch",
            "--tags",
            "--prune",
            "-q",
            "origin",
            "+refs/heads/*:refs/remotes/origin/*",
        ];
    } else {
        fetch.insert(1, &depth_arg);
    }
    fetch.push(&spec);
    git(&dest, &fetch, log)?;
    match &branch {
        Some(b) => git(
            &dest,
            &[
                "checkout",
                "-q",
                "--force",
                "-B",
                b,
                &format!("refs/remotes/origin/{b}"),
            ],
            log,
        )?,
        None => git(
            &dest,
            &["checkout", "-q", "--force", "--detach", &detached],
            log,
        )?,
    };
    if input("persist-credentials").is_none_or(|p| p == "true") {
        git(
            &dest,
            &[
                "config",
                "--local",
                "http.https://github.com/.extraheader",
                &extraheader(env.token),
            ],
            log,
        )?;
    }
    let commit = git(&dest, &["rev-parse", "HEAD"], log)?;
    Ok(vec![
        (
            "ref".into(),
            git_ref.unwrap_or_else(|| env.git_ref.to_owned()),
        ),
        ("commit".into(), commit),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_as_the_action_writes_it() {
        assert_eq!(base64(b"x-access-token:abc"), "eC1hY2Nlc3MtdG9rZW46YWJj");
        assert_eq!(base64(b"a"), "YQ==");
        assert_eq!(base64(b"ab"), "YWI=");
    }
}
