//! The GitHub REST API of one run, on loopback, built from what the walk produced:
//!
//! - `GET /repos/{o}/{r}/actions/runs/{id}` (and `…/attempts/{n}`): `run_attempt`,
//!   `created_at` (stable across attempts), `run_started_at` (reset per attempt), `head_sha`,
//!   `status`, `conclusion`;
//! - `…/runs/{id}/artifacts`: every artifact of every attempt, paginated by `per_page` and
//!   `page` with `Link` headers; `archive_download_url` is `…/actions/artifacts/{aid}/zip`,
//!   which answers 302 to a blob URL on the same server that refuses an `Authorization`
//!   header, as the real blob store does;
//! - `…/runs/{id}/jobs`: the jobs of the latest attempt (`filter=all`: of every attempt;
//!   `…/attempts/{n}/jobs`: as attempt `n` shows them), with `name` as rendered, `status`,
//!   `conclusion`, `started_at`, `completed_at`, `labels`; a job a re-run kept shows with the
//!   attempt that ran it.
//!
//! - the endpoints of [`crate::github::Writes`] (issue comments, check runs, pull requests), whose
//!   state a test reads from [`Api::writes`].
//!
//! The same routes answer for the other runs a walk is shown ([`RunView`], as a `workflow_run`
//! reporter reads the artifacts of the `pull_request` run that triggered it): GitHub lets a
//! run's token read every run of its repository, and artifact ids are unique in it.
//!
//! Every API request must carry `Authorization: Bearer <the run's token>` (this run's, also for
//! another run's routes); others get 401. The run's routes answer GET alone: another method on
//! them is GitHub's 404.

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use super::artifacts::Store;
use crate::github::{Writes, query};
use crate::http::{Request, Response, Server};

/// One job as the jobs API lists it.
#[derive(Clone, Debug)]
pub struct ApiJob {
    pub id: u64,
    pub name: String,
    pub attempt: u32,
    pub status: String,
    pub conclusion: Option<String>,
    pub started_at: String,
    pub completed_at: Option<String>,
    pub labels: Vec<String>,
}

/// The run as the API shows it at this moment.
#[derive(Clone, Debug)]
pub struct RunState {
    pub run_id: u64,
    pub repo: String,
    pub sha: String,
    pub branch: String,
    pub created_at: String,
    pub attempt: u32,
    pub run_started_at: String,
    pub status: String,
    pub conclusion: Option<String>,
    /// Every job of every attempt; the listing picks the latest attempt's.
    pub jobs: Vec<ApiJob>,
    /// The triggering event's name.
    pub event: String,
    /// `owner/name` of the head: a fork's for a fork's pull request.
    pub head_repository: String,
    /// The run's `pull_requests` (GitHub lists none for a fork's).
    pub pull_requests: Vec<Value>,
}

/// One run as an API answers for it: its state and its artifacts. Cloning shares them.
#[derive(Clone)]
pub struct RunView {
    pub state: Arc<Mutex<RunState>>,
    pub store: Arc<Store>,
}

impl std::fmt::Debug for RunView {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = self.state.lock().unwrap();
        write!(f, "RunView({} run {})", s.repo, s.run_id)
    }
}

/// The running stand-in.
pub struct Api {
    pub server: Server,
    /// What was written through the write endpoints.
    pub writes: Arc<Writes>,
    /// The other runs it answers for ([`super::Options::other_runs`]).
    pub others: Arc<Mutex<Vec<RunView>>>,
}

/// One page of `items` under `key`, with GitHub's `Link` header.
fn page(req: &Request, base: &str, key: &str, items: Vec<Value>) -> Response {
    crate::github::page(
        req,
        base,
        items,
        |slice, total| json!({ "total_count": total, key: slice }),
    )
}

fn run_json(s: &RunState, attempt: u32, base: &str) -> Value {
    json!({
        "id": s.run_id,
        "name": "cell",
        "path": ".github/workflows/cell.yml",
        "run_number": 1,
        "run_attempt": attempt,
        "event": s.event,
        "status": s.status,
        "conclusion": s.conclusion,
        "head_branch": s.branch,
        "head_sha": s.sha,
        "created_at": s.created_at,
        "updated_at": s.run_started_at,
        "run_started_at": s.run_started_at,
        "url": format!("{base}/repos/{}/actions/runs/{}", s.repo, s.run_id),
        "html_url": format!("https://github.com/{}/actions/runs/{}", s.repo, s.run_id),
        "pull_requests": s.pull_requests,
        "artifacts_url": format!("{base}/repos/{}/actions/runs/{}/artifacts", s.repo, s.run_id),
        "jobs_url": format!("{base}/repos/{}/actions/runs/{}/jobs", s.repo, s.run_id),
        "repository": { "full_name": s.repo },
        "head_repository": { "full_name": s.head_repository },
    })
}

fn job_json(s: &RunState, j: &ApiJob) -> Value {
    json!({
        "id": j.id,
        "run_id": s.run_id,
        "run_attempt": j.attempt,
        "head_sha": s.sha,
        "workflow_name": "cell",
        "name": j.name,
        "status": j.status,
        "conclusion": j.conclusion,
        "started_at": j.started_at,
        "completed_at": j.completed_at,
        "labels": j.labels,
        "runner_name": "walk",
        "steps": [],
    })
}

fn artifact_json(s: &RunState, a: &super::artifacts::Artifact, base: &str) -> Value {
    let api = format!("{base}/repos/{}/actions/artifacts/{}", s.repo, a.id);
    json!({
        "id": a.id,
        "node_id": format!("MDg6QXJ0aWZhY3Q{}", a.id),
        "name": a.name,
        "size_in_bytes": a.size,
        "url": api,
        "archive_download_url": format!("{api}/zip"),
        "expired": false,
        "digest": format!("sha256:{}", a.digest),
        "created_at": a.created_at,
        "updated_at": a.created_at,
        "expires_at": "2099-01-01T00:00:00Z",
        "workflow_run": { "id": s.run_id, "head_branch": s.branch, "head_sha": s.sha },
    })
}

/// The answer to `req`: the blob store, then (with the token) the write endpoints, an
/// artifact's zip of any run, and the routes of the run `runs` holds (this run first).
fn answer(
    req: &Request,
    runs: &[RunView],
    writes: &Writes,
    (token, base): (&str, &str),
) -> Response {
    let path = req.path.split('?').next().unwrap_or_default();
    let artifact = |id: &str| {
        runs.iter()
            .flat_map(|r| r.store.list())
            .find(|a| a.id.to_string() == id)
    };
    if let Some(id) = path.strip_prefix("/_blob/") {
        // The blob store: signed URL, no token (GitHub's rejects one).
        if req.header("authorization").is_some() {
            return Response::status(400).body("Authorization header on a signed blob URL");
        }
        return artifact(id).map_or_else(Response::not_found, |a| {
            Response::ok(std::fs::read(&a.zip).unwrap()).header("content-type", "application/zip")
        });
    }
    if req.header("authorization") != Some(&format!("Bearer {token}")) {
        return Response::json(401, &json!({"message": "Bad credentials"}));
    }
    if let Some(written) = writes.answer(req, base) {
        return written;
    }
    if req.method != "GET" {
        return Response::json(404, &json!({"message": "Not Found"}));
    }
    let repo = runs[0].state.lock().unwrap().repo.clone();
    let arts = format!("/repos/{repo}/actions/artifacts/");
    if let Some(id) = path
        .strip_prefix(&arts)
        .and_then(|r| r.strip_suffix("/zip"))
    {
        return match artifact(id) {
            Some(a) => Response::redirect(&format!("{base}/_blob/{}?sig=short-lived", a.id)),
            None => Response::not_found(),
        };
    }
    for run in runs {
        let state = run.state.lock().unwrap().clone();
        let prefix = format!("/repos/{}/actions/runs/{}", state.repo, state.run_id);
        let ours = path
            .strip_prefix(&prefix)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'));
        if ours {
            return answer_run(req, &prefix, &state, &run.store, base);
        }
    }
    Response::json(404, &json!({"message": "Not Found"}))
}

/// A `GET` of one run's routes, under `runs` (`/repos/{o}/{r}/actions/runs/{id}`).
fn answer_run(req: &Request, runs: &str, state: &RunState, store: &Store, base: &str) -> Response {
    let path = req.path.split('?').next().unwrap_or_default();
    if path == runs {
        return Response::json(200, &run_json(state, state.attempt, base));
    }
    if let Some(n) = path
        .strip_prefix(&format!("{runs}/attempts/"))
        .and_then(|r| r.strip_suffix("/jobs"))
    {
        // The jobs as attempt `n` shows them: each job's newest record up to that attempt.
        let n: u32 = n.parse().unwrap_or(0);
        let upto: Vec<&ApiJob> = state.jobs.iter().filter(|j| j.attempt <= n).collect();
        let items = upto
            .iter()
            .filter(|j| {
                !upto
                    .iter()
                    .any(|o| o.name == j.name && o.attempt > j.attempt)
            })
            .map(|j| job_json(state, j))
            .collect();
        return page(req, base, "jobs", items);
    }
    if let Some(n) = path.strip_prefix(&format!("{runs}/attempts/")) {
        return match n.parse::<u32>() {
            Ok(n) if (1..=state.attempt).contains(&n) => {
                Response::json(200, &run_json(state, n, base))
            }
            _ => Response::not_found(),
        };
    }
    if path == format!("{runs}/artifacts") {
        let items = store
            .list()
            .iter()
            .map(|a| artifact_json(state, a, base))
            .collect();
        return page(req, base, "artifacts", items);
    }
    if path == format!("{runs}/jobs") {
        let all = query(&req.path).get("filter").is_some_and(|f| f == "all");
        let items = state
            .jobs
            .iter()
            .filter(|j| all || latest(state, j))
            .map(|j| job_json(state, j))
            .collect();
        return page(req, base, "jobs", items);
    }
    Response::json(404, &json!({"message": "Not Found"}))
}

/// Whether `j` is the newest record of its job name (the latest attempt's view).
fn latest(state: &RunState, j: &ApiJob) -> bool {
    !state
        .jobs
        .iter()
        .any(|o| o.name == j.name && o.id != j.id && o.attempt > j.attempt)
}

impl Api {
    /// Serves the run `own` (and the other runs put in [`Api::others`]) with `writes` until
    /// dropped.
    pub fn start(own: RunView, writes: Arc<Writes>, token: String) -> Self {
        let server = Server::new();
        let base = server.base();
        let others: Arc<Mutex<Vec<RunView>>> = Arc::default();
        let (held, shown) = (Arc::clone(&writes), Arc::clone(&others));
        server.handle(move |req| {
            let mut runs = vec![own.clone()];
            runs.extend(shown.lock().unwrap().iter().cloned());
            answer(req, &runs, &held, (&token, &base))
        });
        Self {
            server,
            writes,
            others,
        }
    }

    pub fn base(&self) -> String {
        self.server.base()
    }
}
