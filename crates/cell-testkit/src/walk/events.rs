//! The events a walk can be triggered by besides `workflow_dispatch`, as GitHub delivers them:
//!
//! - [`pull_request_event`] and [`workflow_run_event`]: the payloads (`github.event`) in the
//!   fields a workflow reads, shaped as GitHub's (the `workflow_run` object is the REST API's
//!   run, as `official-workflow-run.json` shows it);
//! - [`open_pull_request`]: what GitHub keeps in the base repository for a pull request, the
//!   head as `refs/pull/<n>/head` and the test merge as `refs/pull/<n>/merge`, so a checkout of
//!   the head SHA finds a commit no branch of the origin holds (a fork's);
//! - [`Trigger`]: what the runner derives from an event: `github.head_ref` and
//!   `github.base_ref`, and the `github.sha` and `github.ref` GitHub gives the run, which the
//!   walk checks its [`super::Config`] against.
//!
//! GitHub sets, for `pull_request`, `github.sha` to the test merge commit and `github.ref` to
//! `refs/pull/<n>/merge`; for `workflow_run`, both to the default branch's tip and
//! `refs/heads/<default>`, whatever the triggering run checked out.

use std::path::Path;

use serde_json::{Value, json};

use crate::git;

/// The owner of a fork in [`pull_request_event`]'s payloads.
pub const FORK_OWNER: &str = "contributor";

/// The default branch the payloads' `repository.default_branch` names.
pub const DEFAULT_BRANCH: &str = "main";

/// The fork of `repository` (`owner/name`) a fork's pull request comes from.
pub fn fork_of(repository: &str) -> String {
    let name = repository.rsplit('/').next().unwrap_or(repository);
    format!("{FORK_OWNER}/{name}")
}

/// A repository as payloads show it.
fn repo_json(full_name: &str, fork: bool) -> Value {
    let (owner, name) = full_name.split_once('/').unwrap_or(("", full_name));
    json!({
        "full_name": full_name,
        "name": name,
        "owner": { "login": owner, "type": "User" },
        "fork": fork,
        "private": false,
        "default_branch": DEFAULT_BRANCH,
        "html_url": format!("https://github.com/{full_name}"),
        "url": format!("https://api.github.com/repos/{full_name}"),
    })
}

/// The `pull_request` event of pull request `number` of `repository` (action
/// `synchronize`): `head` is `head_ref` at `head_sha` in the fork ([`fork_of`], `fork: true`)
/// or in `repository` itself, `base` is `base_ref` at `base_sha`.
pub fn pull_request_event(
    repository: &str,
    number: u64,
    head_sha: &str,
    head_ref: &str,
    base_sha: &str,
    base_ref: &str,
    fork: bool,
) -> Value {
    let head_repo = if fork {
        fork_of(repository)
    } else {
        repository.to_owned()
    };
    let author = head_repo.split('/').next().unwrap_or_default().to_owned();
    json!({
        "action": "synchronize",
        "number": number,
        "pull_request": {
            "id": 1_000_000 + number,
            "number": number,
            "state": "open",
            "draft": false,
            "title": format!("Pull request {number}"),
            "user": { "login": author, "type": "User" },
            "url": format!("https://api.github.com/repos/{repository}/pulls/{number}"),
            "html_url": format!("https://github.com/{repository}/pull/{number}"),
            "head": {
                "label": format!("{author}:{head_ref}"),
                "ref": head_ref,
                "sha": head_sha,
                "repo": repo_json(&head_repo, fork),
            },
            "base": {
                "label": format!("{}:{base_ref}", repository.split('/').next().unwrap_or_default()),
                "ref": base_ref,
                "sha": base_sha,
                "repo": repo_json(repository, false),
            },
        },
        "repository": repo_json(repository, false),
        "sender": { "login": author, "type": "User" },
    })
}

/// The `workflow_run` event (action `completed`) of run `run_id` of `repository`, a
/// `pull_request` run of `head_branch` at `head_sha` from `head_repository` (the fork's name
/// for a fork's pull request) that ended with `conclusion`. `pull_requests` are the (number,
/// head SHA) of the open pull requests of that head: GitHub lists only those whose head is in
/// `repository` itself, so for a fork's it is empty.
pub fn workflow_run_event(
    repository: &str,
    head_repository: &str,
    run_id: u64,
    head_sha: &str,
    head_branch: &str,
    pull_requests: &[(u64, &str)],
    conclusion: &str,
) -> Value {
    let api = format!("https://api.github.com/repos/{repository}");
    let prs: Vec<Value> = pull_requests
        .iter()
        .map(|(number, sha)| {
            json!({
                "id": 1_000_000 + number,
                "number": number,
                "url": format!("{api}/pulls/{number}"),
                "head": {
                    "ref": head_branch,
                    "sha": sha,
                    "repo": { "id": 1, "name": repository.rsplit('/').next(), "url": api },
                },
                "base": {
                    "ref": DEFAULT_BRANCH,
                    "repo": { "id": 1, "name": repository.rsplit('/').next(), "url": api },
                },
            })
        })
        .collect();
    let run = format!("{api}/actions/runs/{run_id}");
    json!({
        "action": "completed",
        "workflow_run": {
            "id": run_id,
            "name": "cell-pr",
            "event": "pull_request",
            "status": "completed",
            "conclusion": conclusion,
            "head_branch": head_branch,
            "head_sha": head_sha,
            "run_number": 1,
            "run_attempt": 1,
            "path": ".github/workflows/cell-pr.yml",
            "pull_requests": prs,
            "url": run,
            "html_url": format!("https://github.com/{repository}/actions/runs/{run_id}"),
            "artifacts_url": format!("{run}/artifacts"),
            "jobs_url": format!("{run}/jobs"),
            "head_repository": repo_json(head_repository, head_repository != repository),
            "repository": repo_json(repository, false),
        },
        "workflow": { "name": "cell-pr", "path": ".github/workflows/cell-pr.yml" },
        "repository": repo_json(repository, false),
        "sender": { "login": head_repository.split('/').next(), "type": "User" },
    })
}

/// What [`open_pull_request`] left in the origin.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PullRefs {
    pub number: u64,
    /// `refs/pull/<n>/head`: the pull request's head commit.
    pub head_sha: String,
    /// The base branch's tip the test merge was made on.
    pub base_sha: String,
    /// `refs/pull/<n>/merge`: GitHub's test merge of the head into the base, `github.sha` of
    /// a `pull_request` run.
    pub merge_sha: String,
}

impl PullRefs {
    /// `refs/pull/<n>/merge`: `github.ref` of a `pull_request` run.
    pub fn merge_ref(&self) -> String {
        format!("refs/pull/{}/merge", self.number)
    }
}

/// Opens (or updates) pull request `number` of the bare `origin` as GitHub keeps one: the
/// commit `head` of the repository at `from` (a fork's clone, say) pushed as
/// `refs/pull/<n>/head`, and the merge of it into `base` (a branch of `origin`) committed as
/// `refs/pull/<n>/merge`. No branch of `origin` holds the head. Panics when git fails (a test
/// helper); a head that does not merge cleanly is such a failure.
pub fn open_pull_request(
    origin: &Path,
    from: &Path,
    head: &str,
    number: u64,
    base: &str,
) -> PullRefs {
    let head_sha = git(from, &["rev-parse", &format!("{head}^{{commit}}")]);
    let origin_arg = origin.display().to_string();
    git(
        from,
        &[
            "push",
            "-q",
            "--force",
            &origin_arg,
            &format!("{head_sha}:refs/pull/{number}/head"),
        ],
    );
    let base_sha = git(origin, &["rev-parse", &format!("refs/heads/{base}")]);
    let tree = git(
        origin,
        &["merge-tree", "--write-tree", &base_sha, &head_sha],
    );
    let tree = tree.lines().next().unwrap_or_default().to_owned();
    let message = format!("Merge {head_sha} into {base_sha}");
    let id = [
        "-c",
        "user.name=GitHub",
        "-c",
        "user.email=noreply@github.com",
    ];
    let merge_sha = git(
        origin,
        &[
            &id[..],
            &[
                "commit-tree",
                &tree,
                "-p",
                &base_sha,
                "-p",
                &head_sha,
                "-m",
                &message,
            ],
        ]
        .concat(),
    );
    git(
        origin,
        &[
            "update-ref",
            &format!("refs/pull/{number}/merge"),
            &merge_sha,
        ],
    );
    PullRefs {
        number,
        head_sha,
        base_sha,
        merge_sha,
    }
}

/// What the runner takes from the event: `github.head_ref`, `github.base_ref`, and the
/// `github.ref` (with the commit it must be at in the origin) GitHub gives the run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Trigger {
    pub head_ref: String,
    pub base_ref: String,
    /// `github.ref` as GitHub sets it for this event; `None`: whatever the test chose.
    pub git_ref: Option<String>,
    /// The pull request's head (the run's `head_sha` and `head_branch` in the API), and its
    /// repository.
    pub head: Option<(String, String, String)>,
    /// The pull requests the run's API record lists (none for a fork's).
    pub pull_requests: Vec<Value>,
}

impl Trigger {
    /// Reads `event` of `event_name`; an error names the field a payload lacks.
    pub fn of(event_name: &str, event: &Value, repository: &str) -> Result<Self, String> {
        let text = |v: &Value, what: &str| {
            v.as_str()
                .map(str::to_owned)
                .ok_or_else(|| format!("the {event_name} event has no `{what}`"))
        };
        match event_name {
            "pull_request" | "pull_request_target" => {
                let pr = &event["pull_request"];
                let number = pr["number"].as_u64().ok_or_else(|| {
                    format!("the {event_name} event has no `pull_request.number`")
                })?;
                let head_ref = text(&pr["head"]["ref"], "pull_request.head.ref")?;
                let base_ref = text(&pr["base"]["ref"], "pull_request.base.ref")?;
                let head_sha = text(&pr["head"]["sha"], "pull_request.head.sha")?;
                let head_repo = text(&pr["head"]["repo"]["full_name"], "pull_request.head.repo")?;
                let pull_requests = if head_repo == repository {
                    vec![json!({
                        "number": number,
                        "head": { "ref": head_ref, "sha": head_sha },
                        "base": { "ref": base_ref, "sha": pr["base"]["sha"] },
                    })]
                } else {
                    Vec::new()
                };
                let git_ref = if event_name == "pull_request" {
                    format!("refs/pull/{number}/merge")
                } else {
                    format!("refs/heads/{base_ref}")
                };
                Ok(Self {
                    head: Some((head_sha, head_ref.clone(), head_repo)),
                    head_ref,
                    base_ref,
                    git_ref: Some(git_ref),
                    pull_requests,
                })
            }
            "workflow_run" => {
                let default = event["repository"]["default_branch"]
                    .as_str()
                    .unwrap_or(DEFAULT_BRANCH);
                Ok(Self {
                    git_ref: Some(format!("refs/heads/{default}")),
                    ..Self::default()
                })
            }
            _ => Ok(Self::default()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fork_pull_request_and_the_run_it_leaves_for_workflow_run() {
        let pr = pull_request_event("o/r", 7, "h", "feature", "b", "main", true);
        assert_eq!(
            pr["pull_request"]["head"]["repo"]["full_name"],
            "contributor/r"
        );
        assert_eq!(pr["pull_request"]["head"]["repo"]["fork"], true);
        assert_eq!(pr["pull_request"]["base"]["repo"]["full_name"], "o/r");
        let t = Trigger::of("pull_request", &pr, "o/r").unwrap();
        assert_eq!(
            (t.head_ref.as_str(), t.base_ref.as_str()),
            ("feature", "main")
        );
        assert_eq!(t.git_ref.as_deref(), Some("refs/pull/7/merge"));
        assert!(t.pull_requests.is_empty(), "GitHub lists no fork's");
        let own = pull_request_event("o/r", 8, "h", "feature", "b", "main", false);
        let t = Trigger::of("pull_request", &own, "o/r").unwrap();
        assert_eq!(t.pull_requests[0]["number"], 8);

        let run = workflow_run_event("o/r", "o/r", 42, "h", "feature", &[(8, "h")], "success");
        assert_eq!(run["workflow_run"]["pull_requests"][0]["head"]["sha"], "h");
        assert_eq!(run["workflow_run"]["head_repository"]["fork"], false);
        let t = Trigger::of("workflow_run", &run, "o/r").unwrap();
        assert_eq!(t.git_ref.as_deref(), Some("refs/heads/main"));
        let err = Trigger::of("pull_request", &json!({}), "o/r").unwrap_err();
        assert!(err.contains("pull_request.number"), "{err}");
    }
}
