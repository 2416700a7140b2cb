//! A small GitHub REST client: the Actions calls of `cell collect` (a run, its artifacts, its
//! jobs, an artifact's zip), a pull request's head and the first writes (issue comments, check
//! runs, each created or updated by a mark it carries), over typed
//! verbs: [`Github::get`], [`Github::get_paged`], [`Github::post`], [`Github::patch`] and
//! [`Github::put`], each taking a [`serde::Serialize`] body and giving the caller's own
//! [`serde::Deserialize`] type back. Our serde structs hold only the fields we read and keep
//! open sets (a job's `status`) as text, so a new value GitHub sends never fails a payload.
//!
//! # The token
//!
//! The token is attached by this client, not by a library, and only to a URL whose scheme,
//! host and port are exactly the API base's ([`Origin`]). Every URL it is about to send the
//! token to — the ones it builds, a `Link: rel="next"`, an `archive_download_url` from a
//! payload — is checked first; any other is refused with [`GithubError::ForeignUrl`], which
//! names it: a `Link` to `http://api.github.com` (a scheme downgrade on the API's host) or to
//! another port never gets the token. The one documented exception is the artifact redirect:
//! the API answers 302 (no redirect is followed on the API's stack) and the blob URL is
//! fetched on a second stack that never had the token, and which drops `Authorization`,
//! `Cookie` and `Proxy-Authorization` on any redirect that changes host, port or scheme.
//!
//! # Retries
//!
//! Every request has a connect and an idle-read timeout ([`cell_fetch::Timeouts`]), and all
//! of a client's requests together may have a deadline ([`Settings::deadline`],
//! `cell collect --timeout`). 403/429 with `retry-after`, or with no requests left and
//! `x-ratelimit-reset`, wait that long (bounded by [`RetryPolicy::max_wait`] and the
//! deadline) and try again; 5xx and transport errors back off exponentially with jitter,
//! up to [`RetryPolicy::tries`].
//!
//! GET, PUT and PATCH are retried that way: doing them twice leaves what doing them once
//! does. **A POST is not**: after an unclear failure — a timeout, a reset connection, a 5xx,
//! an answer lost after the request was sent, the deadline — it fails at once with
//! [`GithubError::MaybeWritten`], which says the write may have happened, and the caller
//! reads back before trying again (e.g. lists the comments and looks for its marker:
//! [`Github::upsert_issue_comment`] does). A POST is repeated only when it surely did not
//! reach GitHub: the connection was never made (refused, DNS, a connect timeout) or a rate
//! limit refused it with a wait.

mod actions;
mod checks;
mod client;
mod error;
mod issues;
mod pulls;
mod retry;
mod urls;

pub use actions::{Artifact, Job, MAX_ARTIFACT_BYTES, WorkflowRun};
pub use checks::{CheckOutput, CheckRun, CheckRunUpdate, NewCheckRun};
pub use client::{Github, MAX_JSON_BYTES, MAX_PAGES, Settings};
pub use error::GithubError;
pub use issues::{ACTIONS_BOT, CommentAuthor, IssueComment};
pub use pulls::{PullBase, PullHead, PullRequest};
pub use retry::{RetryPolicy, rate_limit_wait};
pub use urls::{Origin, next_link};
