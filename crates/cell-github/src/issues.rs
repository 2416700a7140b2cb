//! Issue and pull-request comments (a pull request's conversation is its issue's): list,
//! create, update, and create-or-update by a marker the body carries.

use serde::{Deserialize, Serialize};

use crate::client::Github;
use crate::error::GithubError;

/// A comment, the fields we read.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct IssueComment {
    /// Id, for [`Github::update_issue_comment`].
    pub id: u64,
    /// The Markdown body (GitHub omits it only for comments it has hidden).
    #[serde(default)]
    pub body: String,
    /// Where people read it.
    #[serde(default)]
    pub html_url: Option<String>,
    /// Who wrote it (GitHub gives no `user` for a deleted account).
    #[serde(default)]
    pub user: Option<CommentAuthor>,
}

/// A comment's author, the fields we read.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct CommentAuthor {
    /// The login, e.g. [`ACTIONS_BOT`].
    pub login: String,
    /// `User`, `Bot` or `Organization`.
    #[serde(default, rename = "type")]
    pub kind: Option<String>,
}

/// The login GitHub gives the workflow token (`GITHUB_TOKEN`): the author an upsert made with
/// it may update.
pub const ACTIONS_BOT: &str = "github-actions[bot]";

impl IssueComment {
    /// Whether `login` wrote it.
    pub fn is_by(&self, login: &str) -> bool {
        self.user.as_ref().is_some_and(|u| u.login == login)
    }
}

#[derive(Serialize)]
struct CommentBody<'a> {
    body: &'a str,
}

impl Github {
    /// Every comment on issue or pull request `number`, oldest first, following
    /// `Link: rel="next"`.
    pub fn list_issue_comments(
        &self,
        repo: &str,
        number: u64,
    ) -> Result<Vec<IssueComment>, GithubError> {
        let first = format!("/repos/{repo}/issues/{number}/comments?per_page=100");
        self.get_paged(&first, |page: Vec<IssueComment>| page)
    }

    /// Adds a comment to issue or pull request `number`. A POST: after
    /// [`GithubError::MaybeWritten`] list the comments before trying again (or use
    /// [`Github::upsert_issue_comment`], which does).
    pub fn create_issue_comment(
        &self,
        repo: &str,
        number: u64,
        body: &str,
    ) -> Result<IssueComment, GithubError> {
        self.post(
            &format!("/repos/{repo}/issues/{number}/comments"),
            &CommentBody { body },
        )
    }

    /// Replaces the body of comment `id`.
    pub fn update_issue_comment(
        &self,
        repo: &str,
        id: u64,
        body: &str,
    ) -> Result<IssueComment, GithubError> {
        self.patch(
            &format!("/repos/{repo}/issues/comments/{id}"),
            &CommentBody { body },
        )
    }

    /// The one comment on `number` by `author` (the token's own login, [`ACTIONS_BOT`] for the
    /// workflow token) whose body contains `marker` (e.g. an HTML comment such as
    /// `<!-- cell-gate -->`), set to `body`: updated when it exists, else created. Anyone may
    /// write the marker, so a comment by someone else is never taken for ours. A create whose
    /// outcome is unknown is followed by a second listing, so a comment that did land is
    /// updated, never doubled; `body` must contain `marker` for that to work.
    pub fn upsert_issue_comment(
        &self,
        repo: &str,
        number: u64,
        author: &str,
        marker: &str,
        body: &str,
    ) -> Result<IssueComment, GithubError> {
        if marker.is_empty() || !body.contains(marker) {
            return Err(GithubError::Request {
                method: "POST",
                url: self.endpoint(&format!("/repos/{repo}/issues/{number}/comments")),
                msg: format!("the body does not contain its marker `{marker}`"),
            });
        }
        let find = |comments: Vec<IssueComment>| {
            comments
                .into_iter()
                .find(|c| c.is_by(author) && c.body.contains(marker))
        };
        if let Some(c) = find(self.list_issue_comments(repo, number)?) {
            return self.update_issue_comment(repo, c.id, body);
        }
        match self.create_issue_comment(repo, number, body) {
            Err(e) if e.may_have_written() => match find(self.list_issue_comments(repo, number)?) {
                Some(c) if c.body == body => Ok(c),
                Some(c) => self.update_issue_comment(repo, c.id, body),
                None => self.create_issue_comment(repo, number, body),
            },
            other => other,
        }
    }
}
