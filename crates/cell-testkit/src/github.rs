//! GitHub's REST write endpoints that cell uses, on loopback: issue comments (list, create,
//! update), check runs (create, update, a commit's listed by name) and the pull requests the
//! reporter reads (a number's head, set by the test), held in memory so a test asserts what a
//! client wrote there. [`Writes`] answers those routes inside another stand-in (the walk's run API
//! uses it); [`Rest`] serves them alone, behind a token.
//!
//! The answers are GitHub's in the fields cell reads: 201 with the new record, 200 with the
//! changed one, 404 for an unknown id, 400 for a body that is not JSON and 422 for one that
//! lacks a required field. A path that is not one of these routes gets `None` from
//! [`Writes::answer`], and a route answers only its own method.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use crate::http::{Request, Response, Server};

/// A comment as the stand-in holds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Comment {
    pub id: u64,
    /// `owner/name`.
    pub repo: String,
    /// The issue or pull request number.
    pub issue: u64,
    pub body: String,
    /// Its author's login: the identity of the token that created it.
    pub author: String,
}

/// A check run as the stand-in holds it: every field it was given, merged update by update.
#[derive(Clone, Debug, PartialEq)]
pub struct CheckRun {
    pub id: u64,
    pub repo: String,
    pub fields: serde_json::Map<String, Value>,
}

#[derive(Default)]
struct State {
    last_id: u64,
    comments: Vec<Comment>,
    check_runs: Vec<CheckRun>,
    /// (repo, number) → head SHA.
    pulls: BTreeMap<(String, u64), String>,
}

/// The login GitHub gives the workflow token (`GITHUB_TOKEN`): who a comment is by unless
/// [`Writes::set_author`] says otherwise.
pub const ACTIONS_BOT: &str = "github-actions[bot]";

/// The write endpoints' state and answers.
pub struct Writes {
    state: Mutex<State>,
    /// The token's identity: the author of every comment created from now on.
    author: Mutex<String>,
}

impl std::fmt::Debug for Writes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = self.state.lock().unwrap();
        f.debug_struct("Writes")
            .field("comments", &state.comments.len())
            .field("check_runs", &state.check_runs.len())
            .finish_non_exhaustive()
    }
}

impl Default for Writes {
    fn default() -> Self {
        Self {
            state: Mutex::default(),
            author: Mutex::new(ACTIONS_BOT.to_owned()),
        }
    }
}

/// The query of a request target, by key.
pub fn query(path: &str) -> BTreeMap<String, String> {
    path.split_once('?')
        .map(|(_, q)| {
            q.split('&')
                .filter_map(|kv| kv.split_once('='))
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .collect()
        })
        .unwrap_or_default()
}

/// One page of `items`, by `per_page` (default 30, at most 100) and `page`, with GitHub's
/// `Link` header pointing at `base`; the page's body is `wrap(items of the page, total)`.
pub fn page(
    req: &Request,
    base: &str,
    items: Vec<Value>,
    wrap: impl Fn(Vec<Value>, usize) -> Value,
) -> Response {
    let q = query(&req.path);
    let per = q
        .get("per_page")
        .and_then(|v| v.parse().ok())
        .unwrap_or(30usize)
        .clamp(1, 100);
    let n: usize = q
        .get("page")
        .and_then(|v| v.parse().ok())
        .unwrap_or(1)
        .max(1);
    let total = items.len();
    let slice: Vec<Value> = items.into_iter().skip((n - 1) * per).take(per).collect();
    let resp = Response::json(200, &wrap(slice, total));
    let last = total.div_ceil(per).max(1);
    if n >= last {
        return resp;
    }
    let path = req.path.split('?').next().unwrap_or_default();
    let mut others: Vec<String> = q
        .iter()
        .filter(|(k, _)| *k != "page")
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    others.sort();
    let url = |p: usize| format!("{base}{path}?{}&page={p}", others.join("&"));
    resp.header(
        "link",
        &format!(
            "<{}>; rel=\"next\", <{}>; rel=\"last\"",
            url(n + 1),
            url(last)
        ),
    )
}

fn comment_json(c: &Comment, base: &str) -> Value {
    let kind = if c.author.ends_with("[bot]") {
        "Bot"
    } else {
        "User"
    };
    json!({
        "id": c.id,
        "body": c.body,
        "url": format!("{base}/repos/{}/issues/comments/{}", c.repo, c.id),
        "html_url": format!("https://github.com/{}/issues/{}#issuecomment-{}", c.repo, c.issue, c.id),
        "user": { "login": c.author, "type": kind },
    })
}

fn check_json(c: &CheckRun) -> Value {
    let mut v = Value::Object(c.fields.clone());
    v["id"] = json!(c.id);
    v
}

/// A write's body as a JSON object, or the 400 GitHub gives.
fn object(req: &Request) -> Result<serde_json::Map<String, Value>, Response> {
    match req.json() {
        Some(Value::Object(m)) => Ok(m),
        _ => Err(Response::json(
            400,
            &json!({"message": "Problems parsing JSON"}),
        )),
    }
}

fn invalid(field: &str) -> Response {
    Response::json(
        422,
        &json!({"message": "Validation Failed", "errors": [{"field": field, "code": "missing_field"}]}),
    )
}

/// `/repos/{owner}/{name}/{rest}` split into the repo and the rest.
fn split_repo(path: &str) -> Option<(String, &str)> {
    let rest = path.strip_prefix("/repos/")?;
    let mut parts = rest.splitn(3, '/');
    let (owner, name, tail) = (parts.next()?, parts.next()?, parts.next()?);
    Some((format!("{owner}/{name}"), tail))
}

impl Writes {
    /// The answer to `req` if it is one of the routes (404 for a known route's unknown id);
    /// `None` otherwise. `base` is what the server's own URLs start with.
    pub fn answer(&self, req: &Request, base: &str) -> Option<Response> {
        let path = req.path.split('?').next().unwrap_or_default();
        let (repo, tail) = split_repo(path)?;
        let segs: Vec<&str> = tail.split('/').collect();
        let method = req.method.as_str();
        Some(match (method, segs.as_slice()) {
            ("GET", ["issues", n, "comments"]) => {
                let n: u64 = n.parse().ok()?;
                let items = self
                    .comments_on(&repo, n)
                    .iter()
                    .map(|c| comment_json(c, base))
                    .collect();
                page(req, base, items, |items, _| Value::Array(items))
            }
            ("POST", ["issues", n, "comments"]) => {
                let n: u64 = n.parse().ok()?;
                self.create_comment(req, &repo, n, base)
            }
            ("PATCH", ["issues", "comments", id]) => {
                self.update_comment(req, id.parse().ok()?, base)
            }
            ("GET", ["pulls", n]) => {
                let n: u64 = n.parse().ok()?;
                self.pull(&repo, n)
            }
            ("GET", ["commits", sha, "check-runs"]) => {
                let name = query(&req.path).get("check_name").cloned();
                let items = self
                    .check_runs()
                    .iter()
                    .filter(|c| c.repo == repo && c.fields.get("head_sha") == Some(&json!(sha)))
                    .filter(|c| {
                        name.as_ref()
                            .is_none_or(|n| c.fields.get("name") == Some(&json!(n)))
                    })
                    .map(check_json)
                    .collect();
                page(
                    req,
                    base,
                    items,
                    |slice, total| json!({ "total_count": total, "check_runs": slice }),
                )
            }
            ("POST", ["check-runs"]) => self.create_check(req, &repo),
            ("PATCH", ["check-runs", id]) => self.update_check(req, id.parse().ok()?),
            _ => return None,
        })
    }

    fn create_comment(&self, req: &Request, repo: &str, issue: u64, base: &str) -> Response {
        let body = match object(req) {
            Ok(m) => m,
            Err(r) => return r,
        };
        let Some(text) = body.get("body").and_then(Value::as_str) else {
            return invalid("body");
        };
        let author = self.author.lock().unwrap().clone();
        let mut state = self.state.lock().unwrap();
        state.last_id += 1;
        let c = Comment {
            id: state.last_id,
            repo: repo.to_owned(),
            issue,
            body: text.to_owned(),
            author,
        };
        state.comments.push(c.clone());
        Response::json(201, &comment_json(&c, base))
    }

    fn update_comment(&self, req: &Request, id: u64, base: &str) -> Response {
        let body = match object(req) {
            Ok(m) => m,
            Err(r) => return r,
        };
        let Some(text) = body.get("body").and_then(Value::as_str) else {
            return invalid("body");
        };
        let mut state = self.state.lock().unwrap();
        match state.comments.iter_mut().find(|c| c.id == id) {
            Some(c) => {
                text.clone_into(&mut c.body);
                Response::json(200, &comment_json(c, base))
            }
            None => Response::json(404, &json!({"message": "Not Found"})),
        }
    }

    fn create_check(&self, req: &Request, repo: &str) -> Response {
        let mut fields = match object(req) {
            Ok(m) => m,
            Err(r) => return r,
        };
        for required in ["name", "head_sha"] {
            if !fields.get(required).is_some_and(Value::is_string) {
                return invalid(required);
            }
        }
        fields.entry("status").or_insert_with(|| json!("queued"));
        fields.entry("conclusion").or_insert(Value::Null);
        let mut state = self.state.lock().unwrap();
        state.last_id += 1;
        let c = CheckRun {
            id: state.last_id,
            repo: repo.to_owned(),
            fields,
        };
        state.check_runs.push(c.clone());
        Response::json(201, &check_json(&c))
    }

    fn update_check(&self, req: &Request, id: u64) -> Response {
        let fields = match object(req) {
            Ok(m) => m,
            Err(r) => return r,
        };
        let mut state = self.state.lock().unwrap();
        match state.check_runs.iter_mut().find(|c| c.id == id) {
            Some(c) => {
                c.fields.extend(fields);
                Response::json(200, &check_json(c))
            }
            None => Response::json(404, &json!({"message": "Not Found"})),
        }
    }

    fn pull(&self, repo: &str, number: u64) -> Response {
        let state = self.state.lock().unwrap();
        match state.pulls.get(&(repo.to_owned(), number)) {
            Some(sha) => Response::json(
                200,
                &json!({
                    "number": number,
                    "state": "open",
                    "title": "a change",
                    "head": { "sha": sha, "ref": "topic", "repo": { "full_name": repo } },
                    "base": { "sha": "0".repeat(40), "ref": "main" },
                }),
            ),
            None => Response::json(404, &json!({"message": "Not Found"})),
        }
    }

    /// Pull request `number` of `repo` exists with head `sha` (set again: pushed to).
    pub fn set_pull_head(&self, repo: &str, number: u64, sha: &str) {
        let mut state = self.state.lock().unwrap();
        state
            .pulls
            .insert((repo.to_owned(), number), sha.to_owned());
    }

    /// Makes `login` the token's identity: the author of the comments created from now on (a
    /// test writes as someone else, then as the workflow again).
    pub fn set_author(&self, login: &str) {
        login.clone_into(&mut self.author.lock().unwrap());
    }

    /// A comment on issue `issue` of `repo` by the token's identity ([`Writes::set_author`]),
    /// as a POST would make it; its id.
    pub fn add_comment(&self, repo: &str, issue: u64, body: &str) -> u64 {
        let author = self.author.lock().unwrap().clone();
        let mut state = self.state.lock().unwrap();
        state.last_id += 1;
        let id = state.last_id;
        state.comments.push(Comment {
            id,
            repo: repo.to_owned(),
            issue,
            body: body.to_owned(),
            author,
        });
        id
    }

    /// Every comment, in the order they were made.
    pub fn comments(&self) -> Vec<Comment> {
        self.state.lock().unwrap().comments.clone()
    }

    /// The comments on issue or pull request `issue` of `repo`.
    pub fn comments_on(&self, repo: &str, issue: u64) -> Vec<Comment> {
        let state = self.state.lock().unwrap();
        state
            .comments
            .iter()
            .filter(|c| c.repo == repo && c.issue == issue)
            .cloned()
            .collect()
    }

    /// Every check run, in the order they were made.
    pub fn check_runs(&self) -> Vec<CheckRun> {
        self.state.lock().unwrap().check_runs.clone()
    }
}

/// The write endpoints alone on a loopback server: 401 without `Authorization: Bearer
/// <token>`, 404 for any other route. Faults go in front with `server.once`.
pub struct Rest {
    pub server: Server,
    pub writes: Arc<Writes>,
}

impl Rest {
    /// Serves until dropped.
    pub fn start(token: &str) -> Self {
        let server = Server::new();
        let writes = Arc::new(Writes::default());
        let (base, held, token) = (
            server.base(),
            Arc::clone(&writes),
            format!("Bearer {token}"),
        );
        server.handle(move |req| {
            if req.header("authorization") != Some(token.as_str()) {
                return Response::json(401, &json!({"message": "Bad credentials"}));
            }
            held.answer(req, &base)
                .unwrap_or_else(|| Response::json(404, &json!({"message": "Not Found"})))
        });
        Self { server, writes }
    }

    pub fn base(&self) -> String {
        self.server.base()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(method: &str, path: &str, body: &str) -> Request {
        Request {
            method: method.into(),
            path: path.into(),
            headers: BTreeMap::new(),
            body: body.as_bytes().to_vec(),
        }
    }

    #[test]
    fn a_comment_is_created_listed_and_updated_and_a_get_route_ignores_a_post() {
        let w = Writes::default();
        let made = w
            .answer(
                &request("POST", "/repos/o/r/issues/7/comments", r#"{"body":"hi"}"#),
                "B",
            )
            .unwrap();
        assert_eq!(made.status, 201);
        assert_eq!(w.comments_on("o/r", 7)[0].body, "hi");
        assert_eq!(w.comments_on("o/r", 7)[0].author, ACTIONS_BOT);
        let id = w.comments()[0].id;
        let patched = w
            .answer(
                &request(
                    "PATCH",
                    &format!("/repos/o/r/issues/comments/{id}"),
                    r#"{"body":"yo"}"#,
                ),
                "B",
            )
            .unwrap();
        assert_eq!(patched.status, 200);
        assert_eq!(w.comments()[0].body, "yo");
        let listed = w
            .answer(&request("GET", "/repos/o/r/issues/7/comments", ""), "B")
            .unwrap();
        let listed: Value = serde_json::from_slice(&listed.body).unwrap();
        assert_eq!(listed[0]["body"], "yo");
        assert!(
            w.answer(&request("PUT", "/repos/o/r/issues/7/comments", "{}"), "B")
                .is_none()
        );
        assert!(
            w.answer(&request("GET", "/repos/o/r/check-runs", ""), "B")
                .is_none()
        );
        let bad = w
            .answer(
                &request("POST", "/repos/o/r/issues/7/comments", "not json"),
                "B",
            )
            .unwrap();
        assert_eq!(bad.status, 400);
        let missing = w
            .answer(
                &request("POST", "/repos/o/r/check-runs", r#"{"name":"x"}"#),
                "B",
            )
            .unwrap();
        assert_eq!(missing.status, 422);
    }
}
