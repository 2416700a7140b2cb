//! Check runs: a named result on a commit, with a summary people read on the pull request.

use serde::{Deserialize, Serialize};

use crate::client::Github;
use crate::error::GithubError;

/// The text of a check run (`output`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CheckOutput {
    /// One line.
    pub title: String,
    /// Markdown, at most 65,535 characters (GitHub's limit).
    pub summary: String,
    /// More Markdown, under the summary.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
}

/// A check run to create (`POST /repos/{o}/{r}/check-runs`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct NewCheckRun {
    /// Its name on the pull request.
    pub name: String,
    /// The commit it is about.
    pub head_sha: String,
    /// `queued`, `in_progress` or `completed`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// With `completed`: `success`, `failure`, `neutral`, …
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conclusion: Option<String>,
    /// Where the details are (e.g. the run's page).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub details_url: Option<String>,
    /// Our id for it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub external_id: Option<String>,
    /// Its text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output: Option<CheckOutput>,
}

/// What to change in a check run (`PATCH /repos/{o}/{r}/check-runs/{id}`); fields left
/// `None` stay as they are.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct CheckRunUpdate {
    /// `queued`, `in_progress` or `completed`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// With `completed`: `success`, `failure`, `neutral`, …
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conclusion: Option<String>,
    /// Its text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output: Option<CheckOutput>,
}

/// A check run, the fields we read.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct CheckRun {
    /// Id, for [`Github::update_check_run`].
    pub id: u64,
    /// Its name.
    pub name: String,
    /// The commit.
    pub head_sha: String,
    /// `queued`, `in_progress`, `completed`, … (text: new values appear).
    pub status: String,
    /// Null until completed.
    #[serde(default)]
    pub conclusion: Option<String>,
    /// Our id for it, as given.
    #[serde(default)]
    pub external_id: Option<String>,
}

#[derive(Deserialize)]
struct CheckRunPage {
    check_runs: Vec<CheckRun>,
}

impl Github {
    /// The check runs named `name` on commit `sha` (every app's: GitHub filters by name
    /// alone), following `Link: rel="next"`. `name` is one of ours, a safe id (it goes into
    /// the query as it is).
    pub fn check_runs_named(
        &self,
        repo: &str,
        sha: &str,
        name: &str,
    ) -> Result<Vec<CheckRun>, GithubError> {
        if !cell_schema::ids::is_safe_id(name) || !sha.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(GithubError::Request {
                method: "GET",
                url: self.endpoint(&format!("/repos/{repo}/commits/…/check-runs")),
                msg: "a check run is listed by a safe name on a hex commit id".into(),
            });
        }
        let first = format!(
            "/repos/{repo}/commits/{sha}/check-runs?check_name={name}&filter=all&per_page=100"
        );
        self.get_paged(&first, |p: CheckRunPage| p.check_runs)
    }

    /// The one check run named `run.name` with `run.external_id` on `run.head_sha`, set to
    /// `run`: updated when it exists (so a retried reporter never makes a second), else
    /// created. A create whose outcome is unknown is followed by a second listing, as
    /// [`Github::upsert_issue_comment`] does; `run.external_id` must be set for that.
    pub fn upsert_check_run(&self, repo: &str, run: &NewCheckRun) -> Result<CheckRun, GithubError> {
        if run.external_id.as_deref().is_none_or(str::is_empty) {
            return Err(GithubError::Request {
                method: "POST",
                url: self.endpoint(&format!("/repos/{repo}/check-runs")),
                msg: "a check run to upsert needs its external_id".into(),
            });
        }
        let find = |runs: Vec<CheckRun>| {
            runs.into_iter()
                .find(|c| c.name == run.name && c.external_id == run.external_id)
        };
        let update = |id| {
            let changes = CheckRunUpdate {
                status: run.status.clone(),
                conclusion: run.conclusion.clone(),
                output: run.output.clone(),
            };
            self.update_check_run(repo, id, &changes)
        };
        if let Some(c) = find(self.check_runs_named(repo, &run.head_sha, &run.name)?) {
            return update(c.id);
        }
        match self.create_check_run(repo, run) {
            Err(e) if e.may_have_written() => {
                match find(self.check_runs_named(repo, &run.head_sha, &run.name)?) {
                    Some(c) => update(c.id),
                    None => self.create_check_run(repo, run),
                }
            }
            other => other,
        }
    }

    /// Creates a check run. A POST: after [`GithubError::MaybeWritten`] list the commit's check
    /// runs (by name or `external_id`) before trying again.
    pub fn create_check_run(&self, repo: &str, run: &NewCheckRun) -> Result<CheckRun, GithubError> {
        self.post(&format!("/repos/{repo}/check-runs"), run)
    }

    /// Updates check run `id`.
    pub fn update_check_run(
        &self,
        repo: &str,
        id: u64,
        update: &CheckRunUpdate,
    ) -> Result<CheckRun, GithubError> {
        self.patch(&format!("/repos/{repo}/check-runs/{id}"), update)
    }
}
