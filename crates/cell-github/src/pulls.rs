//! Pull requests: the one read the reporter makes, a pull request's current head.

use serde::Deserialize;

use crate::client::Github;
use crate::error::GithubError;

/// `GET /repos/{o}/{r}/pulls/{n}`, the fields we read.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct PullRequest {
    /// Its number.
    pub number: u64,
    /// `open` or `closed` (text: new values appear).
    #[serde(default)]
    pub state: Option<String>,
    /// Its head branch's tip.
    pub head: PullHead,
    /// The branch it would merge into.
    pub base: PullBase,
}

/// A pull request's base, the field we read.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct PullBase {
    /// The branch's name (`main`).
    #[serde(rename = "ref")]
    pub branch: String,
}

/// A pull request's head, the field we read.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct PullHead {
    /// The head commit's SHA, as GitHub writes it (40 lowercase hex digits).
    pub sha: String,
}

impl Github {
    /// Pull request `number` as it is now.
    pub fn pull_request(&self, repo: &str, number: u64) -> Result<PullRequest, GithubError> {
        self.get(&format!("/repos/{repo}/pulls/{number}"))
    }
}
