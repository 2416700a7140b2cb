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

impl Github {
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
