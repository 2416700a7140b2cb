//! A small GitHub REST client: exactly the four calls `cell collect` needs, octocrab for the
//! API and reqwest for the artifact blobs, our own serde structs with only the fields we read,
//! and the retry rules of docs/collect-and-gate.md.
//!
//! Each reason this client once gave for not using octocrab has an answer:
//!
//! - *Its models reject real payloads* (e.g. job status `requested`): we call its generic
//!   `_get` and parse the body into our own structs, which keep such fields as text.
//! - *Its artifact listing drops `per_page`*: we write the URLs, query strings included
//!   (`per_page=100`), and follow `Link: rel="next"` ourselves.
//! - *It needs a tokio runtime for a handful of sequential calls*: the client owns a
//!   single-threaded runtime and its methods stay synchronous (`block_on`); the runtime also
//!   downloads several artifacts at a time ([`Github::download_all`]).
//! - *The artifact redirect must be followed by hand, without the Authorization header*:
//!   octocrab is built without its `follow-redirect` feature, so the `/zip` call hands us the
//!   302 and its `Location`; octocrab attaches the token only to the API's own host. The blob
//!   URL is fetched with reqwest, which never had the token and drops credentials on any
//!   cross-origin redirect.
//! - *Its retry layer retries 5xx without back-off*: it is built without `retry`; ours backs
//!   off with jitter and waits out rate limits, bounded by [`RetryPolicy::max_wait`].
//!
//! Every request has a connect and an idle-read timeout ([`Timeouts`]), and all of a client's
//! requests together may have a deadline ([`Settings::deadline`], `cell collect --timeout`).

use std::future::Future;
use std::io::Write as _;
use std::path::Path;
use std::time::{Duration, Instant};

use bytes::Bytes;
use cell_fetch::Timeouts;
use cell_fetch::http::describe;
use cell_schema::{RunId, Sha256};
use cell_stats::SplitMix64;
use futures_util::StreamExt as _;
use http_body_util::BodyExt as _;
use serde::Deserialize;

/// Errors talking to GitHub.
#[derive(Debug, thiserror::Error)]
pub enum GithubError {
    /// A request that did not succeed after the retries.
    #[error("GET {url}: HTTP {status}{hint}")]
    Status {
        /// The URL (never with credentials).
        url: String,
        /// The final status.
        status: u16,
        /// What to do about it.
        hint: String,
    },
    /// The network failed after the retries.
    #[error("GET {url}: {msg}")]
    Transport {
        /// The URL.
        url: String,
        /// What the transport said on the last try.
        msg: String,
    },
    /// A body that is not the JSON we expect.
    #[error("GET {url}: unexpected response: {msg}")]
    Decode {
        /// The URL.
        url: String,
        /// The parser's message.
        msg: String,
    },
    /// The artifact has expired (410, or `expired: true`).
    #[error("artifact `{name}` has expired: GitHub no longer serves it")]
    Expired {
        /// Artifact name.
        name: String,
    },
    /// The downloaded zip does not match the artifact's digest.
    #[error("artifact `{name}`: SHA-256 mismatch: expected {expected}, got {actual}")]
    Digest {
        /// Artifact name.
        name: String,
        /// From the artifact record.
        expected: String,
        /// Of the bytes received.
        actual: String,
    },
    /// The deadline of the whole collect passed while this request was outstanding.
    #[error("GET {url}: no answer within the {secs} s deadline of cell collect")]
    Deadline {
        /// The request that was still waiting (a blob URL without its query).
        url: String,
        /// The deadline, in seconds from the start.
        secs: f64,
    },
    /// The HTTP clients or their runtime could not be set up.
    #[error("setting up the GitHub client: {msg}")]
    Setup {
        /// What failed.
        msg: String,
    },
    /// Writing the download.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The OS error.
        source: std::io::Error,
    },
}

impl GithubError {
    /// An integrity failure (exit 1) rather than infrastructure (exit 2).
    pub fn is_integrity(&self) -> bool {
        matches!(self, Self::Expired { .. } | Self::Digest { .. })
    }
}

/// `GET /repos/{o}/{r}/actions/runs/{id}`, the fields we read.
#[derive(Clone, Debug, Deserialize)]
pub struct WorkflowRun {
    /// The run id (a u64: run ids outgrew 32 bits long ago).
    pub id: u64,
    /// The attempt this record describes (re-runs raise it).
    pub run_attempt: Option<u32>,
    /// When the run was created.
    pub created_at: String,
    /// When this attempt started.
    pub run_started_at: Option<String>,
    /// The commit the run tested.
    pub head_sha: String,
    /// `success`, `failure`, … or null while running.
    pub conclusion: Option<String>,
    /// `completed`, `in_progress`, `requested`, …
    pub status: Option<String>,
}

/// An artifact record.
#[derive(Clone, Debug, Deserialize)]
pub struct Artifact {
    /// Id.
    pub id: u64,
    /// Name, `cell-<cell-id>-<toolchain>-a<attempt>` for ours.
    pub name: String,
    /// Size of the zip in bytes, which bounds what the download may read.
    pub size_in_bytes: u64,
    /// Where to download the zip (answers 302).
    pub archive_download_url: String,
    /// Past its retention.
    pub expired: bool,
    /// `sha256:<hex>` of the zip, when GitHub recorded it.
    pub digest: Option<String>,
}

#[derive(Deserialize)]
struct ArtifactPage {
    artifacts: Vec<Artifact>,
}

/// A job record.
#[derive(Clone, Debug, Deserialize)]
pub struct Job {
    /// Id.
    pub id: u64,
    /// Display name (`cell <cell-id> <toolchain>` for ours).
    pub name: String,
    /// `queued`, `in_progress`, `completed`, `requested`, … (kept as text: new values appear).
    pub status: String,
    /// Conclusion, null while running.
    pub conclusion: Option<String>,
    /// When its runner started it (RFC 3339).
    pub started_at: Option<String>,
    /// When it finished (RFC 3339), null while running.
    pub completed_at: Option<String>,
    /// Runner labels.
    #[serde(default)]
    pub labels: Vec<String>,
    /// The attempt of the run this record is from (a job kept from an earlier attempt keeps
    /// its number).
    #[serde(default)]
    pub run_attempt: Option<u32>,
}

impl Job {
    /// Seconds from start to completion, when both are known.
    pub fn seconds(&self) -> Option<f64> {
        let start = cell_schema::time::parse_utc(self.started_at.as_deref()?)?;
        let end = cell_schema::time::parse_utc(self.completed_at.as_deref()?)?;
        #[expect(
            clippy::cast_precision_loss,
            reason = "job durations are far below 2^52 s"
        )]
        Some((end - start).max(0) as f64)
    }
}

#[derive(Deserialize)]
struct JobPage {
    jobs: Vec<Job>,
}

/// How patient the client is.
#[derive(Clone, Debug)]
pub struct RetryPolicy {
    /// Tries per request.
    pub tries: u32,
    /// First back-off; doubles each time, with jitter.
    pub base: Duration,
    /// Longest wait a rate limit may impose before we give up.
    pub max_wait: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            tries: 5,
            base: Duration::from_millis(500),
            max_wait: Duration::from_mins(15),
        }
    }
}

/// Everything about a client but its address and token.
#[derive(Clone, Debug, Default)]
pub struct Settings {
    /// How patient each request is.
    pub retry: RetryPolicy,
    /// Connect and idle-read timeouts of every request.
    pub timeouts: Timeouts,
    /// A bound on all the client's requests together, counted from when it is made; a request
    /// still waiting when it passes fails with [`GithubError::Deadline`].
    pub deadline: Option<Duration>,
    /// Print each request and its status on stderr.
    pub verbose: bool,
}

/// A GitHub REST client for the calls `cell collect` makes, with the retry rules above.
pub struct Github {
    api: String,
    has_token: bool,
    /// The API calls, with the token (for the API's host only) and no redirect following.
    octo: octocrab::Octocrab,
    /// The blob store, without the token.
    blob: reqwest::Client,
    settings: Settings,
    /// When the deadline passes.
    deadline: Option<Instant>,
    /// Drives both clients; dropped last.
    runtime: tokio::runtime::Runtime,
}

impl std::fmt::Debug for Github {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The token is never printed, not even in debug output.
        f.debug_struct("Github")
            .field("api", &self.api)
            .field("token", &self.has_token.then_some("<redacted>"))
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

/// Which client a request goes through.
#[derive(Clone, Copy)]
enum Via {
    /// octocrab, to the API (the token goes along when the host is the API's).
    Api,
    /// reqwest, to the blob store (never with the token).
    Blob,
}

/// The body of an octocrab response.
type ApiBody = http_body_util::combinators::BoxBody<Bytes, octocrab::Error>;

/// One response of either client, its body still to read.
enum Reply {
    Api(http::Response<ApiBody>),
    Blob(reqwest::Response),
}

impl Reply {
    fn status(&self) -> u16 {
        match self {
            Self::Api(r) => r.status().as_u16(),
            Self::Blob(r) => r.status().as_u16(),
        }
    }

    fn header(&self, name: &str) -> Option<String> {
        let headers = match self {
            Self::Api(r) => r.headers(),
            Self::Blob(r) => r.headers(),
        };
        let value = headers.get(name)?.to_str().ok()?;
        Some(value.to_owned())
    }

    /// The next piece of the body, `None` at its end.
    async fn chunk(&mut self) -> Result<Option<Bytes>, String> {
        match self {
            Self::Api(r) => loop {
                match r.body_mut().frame().await {
                    None => return Ok(None),
                    Some(Err(e)) => return Err(describe(&e)),
                    Some(Ok(frame)) => {
                        if let Ok(data) = frame.into_data() {
                            return Ok(Some(data));
                        }
                    }
                }
            },
            Self::Blob(r) => r.chunk().await.map_err(|e| describe(&e.without_url())),
        }
    }

    async fn text(mut self) -> Result<String, String> {
        let mut bytes = Vec::new();
        while let Some(piece) = self.chunk().await? {
            bytes.extend_from_slice(&piece);
        }
        String::from_utf8(bytes).map_err(|e| e.to_string())
    }
}

impl Github {
    /// A client for `api` (e.g. `https://api.github.com`) with an optional token, the default
    /// timeouts and no deadline.
    pub fn new(
        api: &str,
        token: Option<String>,
        retry: RetryPolicy,
        verbose: bool,
    ) -> Result<Self, GithubError> {
        let settings = Settings {
            retry,
            verbose,
            ..Settings::default()
        };
        Self::with_settings(api, token, settings)
    }

    /// A client for `api` with an optional token and `settings`.
    pub fn with_settings(
        api: &str,
        token: Option<String>,
        settings: Settings,
    ) -> Result<Self, GithubError> {
        let setup = |e: &dyn std::error::Error| GithubError::Setup { msg: e.to_string() };
        let runtime = cell_fetch::http::runtime().map_err(|e| setup(&e))?;
        cell_fetch::http::install_ring();
        let api = api.trim_end_matches('/').to_owned();
        // Credentials belong in GITHUB_TOKEN: a URL carrying them would print them in every
        // message that names a request.
        let authority = api
            .split_once("://")
            .map_or("", |(_, r)| r)
            .split('/')
            .next();
        if authority.is_some_and(|a| a.contains('@')) {
            return Err(GithubError::Setup {
                msg: "GITHUB_API_URL carries credentials (user:secret@): remove them and put the token in GITHUB_TOKEN".into(),
            });
        }
        let token = token.filter(|t| !t.is_empty());
        let t = settings.timeouts;
        let mut builder = octocrab::Octocrab::builder()
            .base_uri(api.as_str())
            .and_then(|b| b.upload_uri(api.as_str()))
            .map_err(|e| setup(&e))?
            .set_connect_timeout(Some(t.connect))
            .set_read_timeout(Some(t.idle))
            .set_write_timeout(Some(t.idle));
        let has_token = token.is_some();
        if let Some(token) = token {
            builder = builder.personal_token(token);
        }
        // octocrab starts its service's worker task on the runtime it is built in.
        let octo = {
            let _entered = runtime.enter();
            builder.build().map_err(|e| setup(&e))?
        };
        let blob =
            cell_fetch::http::client(t, cell_fetch::http::MAX_REDIRECTS).map_err(|e| setup(&e))?;
        let deadline = settings.deadline.map(|d| Instant::now() + d);
        Ok(Self {
            api,
            has_token,
            octo,
            blob,
            settings,
            deadline,
            runtime,
        })
    }

    /// A client from the environment: `GITHUB_API_URL` (default `https://api.github.com`),
    /// token from `GITHUB_TOKEN` or `GH_TOKEN`.
    pub fn from_env(settings: Settings) -> Result<Self, GithubError> {
        let api = std::env::var("GITHUB_API_URL")
            .ok()
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| "https://api.github.com".into());
        let token = std::env::var("GITHUB_TOKEN")
            .ok()
            .filter(|s| !s.is_empty())
            .or_else(|| std::env::var("GH_TOKEN").ok());
        Self::with_settings(&api, token, settings)
    }

    /// The run record.
    pub fn run(&self, repo: &str, run: RunId) -> Result<WorkflowRun, GithubError> {
        let url = format!("{}/repos/{repo}/actions/runs/{run}", self.api);
        self.runtime
            .block_on(self.within(&url, async { Ok(self.get_json(&url).await?.0) }))
    }

    /// Every artifact of the run, following `Link: rel="next"`.
    pub fn artifacts(&self, repo: &str, run: RunId) -> Result<Vec<Artifact>, GithubError> {
        let first = format!(
            "{}/repos/{repo}/actions/runs/{run}/artifacts?per_page=100",
            self.api
        );
        self.runtime
            .block_on(self.paged(&first, |p: ArtifactPage| p.artifacts))
    }

    /// Every job of the run's latest attempt, following `Link: rel="next"`.
    pub fn jobs(&self, repo: &str, run: RunId) -> Result<Vec<Job>, GithubError> {
        let first = format!(
            "{}/repos/{repo}/actions/runs/{run}/jobs?per_page=100",
            self.api
        );
        self.runtime
            .block_on(self.paged(&first, |p: JobPage| p.jobs))
    }

    /// Downloads an artifact's zip to `to`: the API answers 302 to a short-lived blob URL,
    /// which is fetched **without** the Authorization header; the zip's SHA-256 is checked
    /// against the artifact's digest when it has one.
    pub fn download(&self, a: &Artifact, to: &Path) -> Result<Sha256, GithubError> {
        self.runtime.block_on(self.download_one(a, to))
    }

    /// Downloads `artifacts`, at most `concurrency` at a time, each to `<dir>/<id>.zip`, as
    /// [`Github::download`] does; returns each artifact's name and outcome, in the order given.
    pub fn download_all<'a>(
        &self,
        artifacts: impl IntoIterator<Item = &'a Artifact>,
        dir: &Path,
        concurrency: usize,
    ) -> Vec<(String, Result<Sha256, GithubError>)> {
        let downloads = artifacts.into_iter().map(|a| async move {
            let to = dir.join(format!("{}.zip", a.id));
            (a.name.clone(), self.download_one(a, &to).await)
        });
        self.runtime.block_on(
            futures_util::stream::iter(downloads)
                .buffered(concurrency.max(1))
                .collect(),
        )
    }

    async fn download_one(&self, a: &Artifact, to: &Path) -> Result<Sha256, GithubError> {
        let expired = || GithubError::Expired {
            name: a.name.clone(),
        };
        if a.expired {
            return Err(expired());
        }
        let url = &a.archive_download_url;
        let reply = self.within(url, self.send(url, Via::Api)).await?;
        let blob = match reply.status() {
            301 | 302 | 303 | 307 | 308 => location(url, reply.header("location"))?,
            410 => return Err(expired()),
            200 => return self.within(url, save(a, reply, to)).await,
            s => return Err(status_error(url, s)),
        };
        let shown = redact_query(&blob);
        self.within(&shown, async {
            let reply = self.send(&blob, Via::Blob).await?;
            match reply.status() {
                200 => save(a, reply, to).await,
                410 => Err(expired()),
                s => Err(status_error(&shown, s)),
            }
        })
        .await
    }

    async fn paged<P: serde::de::DeserializeOwned, T>(
        &self,
        first: &str,
        items: impl Fn(P) -> Vec<T>,
    ) -> Result<Vec<T>, GithubError> {
        let mut out = Vec::new();
        let mut next = Some(first.to_owned());
        let mut pages = 0;
        while let Some(url) = next.take() {
            pages += 1;
            if pages > 1000 {
                return Err(GithubError::Decode {
                    url,
                    msg: "more than 1000 pages: the Link header loops".into(),
                });
            }
            let (page, link) = self.within(&url, self.get_json::<P>(&url)).await?;
            next = link.as_deref().and_then(next_link);
            out.extend(items(page));
        }
        Ok(out)
    }

    /// GETs `url` from the API and parses the body; returns the `Link` header too.
    async fn get_json<T: serde::de::DeserializeOwned>(
        &self,
        url: &str,
    ) -> Result<(T, Option<String>), GithubError> {
        let reply = self.send(url, Via::Api).await?;
        if reply.status() != 200 {
            return Err(status_error(url, reply.status()));
        }
        let link = reply.header("link");
        let text = reply.text().await.map_err(|msg| GithubError::Transport {
            url: url.to_owned(),
            msg,
        })?;
        let value = serde_json::from_str(&text).map_err(|e| GithubError::Decode {
            url: url.to_owned(),
            msg: e.to_string(),
        })?;
        Ok((value, link))
    }

    /// Runs `work`, which requests `shown`, within the deadline, if there is one.
    async fn within<T>(
        &self,
        shown: &str,
        work: impl Future<Output = Result<T, GithubError>>,
    ) -> Result<T, GithubError> {
        let (Some(deadline), Some(total)) = (self.deadline, self.settings.deadline) else {
            return work.await;
        };
        tokio::time::timeout_at(deadline.into(), work)
            .await
            .unwrap_or_else(|_| {
                Err(GithubError::Deadline {
                    url: shown.to_owned(),
                    secs: total.as_secs_f64(),
                })
            })
    }

    /// The longest rate-limit wait worth sitting out: the policy's, and never past the
    /// deadline.
    fn max_wait(&self) -> Duration {
        let policy = self.settings.retry.max_wait;
        self.deadline.map_or(policy, |d| {
            policy.min(d.saturating_duration_since(Instant::now()))
        })
    }

    /// One try, through the client `via` names.
    async fn attempt(&self, url: &str, via: Via) -> Result<Reply, String> {
        match via {
            Via::Api => {
                let mut headers = http::HeaderMap::new();
                headers.insert(
                    http::header::ACCEPT,
                    http::HeaderValue::from_static("application/vnd.github+json"),
                );
                self.octo
                    ._get_with_headers(url, Some(headers))
                    .await
                    .map(Reply::Api)
                    .map_err(|e| describe(&e))
            }
            Via::Blob => self
                .blob
                .get(url)
                .send()
                .await
                .map(Reply::Blob)
                .map_err(|e| describe(&e.without_url())),
        }
    }

    /// One GET with the retry rules: 403/429 wait for `retry-after` or `x-ratelimit-reset`;
    /// 5xx and transport errors back off exponentially with jitter.
    async fn send(&self, url: &str, via: Via) -> Result<Reply, GithubError> {
        let shown = redact_query(url);
        let retry = &self.settings.retry;
        let mut jitter = SplitMix64::new(u64::from(std::process::id()) ^ url.len() as u64);
        let mut tries = 0;
        loop {
            tries += 1;
            let backoff = retry
                .base
                .saturating_mul(1 << (tries - 1).min(10))
                .mul_f64(0.75 + jitter.below(500) as f64 / 1000.0);
            let reply = match self.attempt(url, via).await {
                Err(msg) => {
                    self.say(format_args!("GET {shown} → {msg}"));
                    if tries >= retry.tries {
                        return Err(GithubError::Transport { url: shown, msg });
                    }
                    tokio::time::sleep(backoff).await;
                    continue;
                }
                Ok(reply) => reply,
            };
            let status = reply.status();
            self.say(format_args!("GET {shown} → {status}"));
            let wait = match status {
                403 | 429 => rate_limit_wait(
                    reply.header("retry-after").as_deref(),
                    reply.header("x-ratelimit-remaining").as_deref(),
                    reply.header("x-ratelimit-reset").as_deref(),
                ),
                500..=599 => Some(backoff),
                _ => None,
            };
            match wait {
                Some(w) if tries < retry.tries && w <= self.max_wait() => {
                    self.say(format_args!("  retrying in {:.1} s", w.as_secs_f64()));
                    tokio::time::sleep(w).await;
                }
                _ => return Ok(reply),
            }
        }
    }

    fn say(&self, line: std::fmt::Arguments<'_>) {
        if self.settings.verbose {
            eprintln!("{line}");
        }
    }
}

/// Where a redirect of `url` points, resolved against it.
fn location(url: &str, location: Option<String>) -> Result<String, GithubError> {
    let decode = |msg: String| GithubError::Decode {
        url: url.to_owned(),
        msg,
    };
    let location = location.ok_or_else(|| decode("redirect without Location".into()))?;
    let base = reqwest::Url::parse(url).map_err(|e| decode(e.to_string()))?;
    let next = base
        .join(&location)
        .map_err(|e| decode(format!("unusable Location: {e}")))?;
    Ok(next.into())
}

/// Streams an artifact's zip to `to` and checks its digest.
async fn save(a: &Artifact, mut reply: Reply, to: &Path) -> Result<Sha256, GithubError> {
    let io = |what: String| move |source| GithubError::Io { what, source };
    let file = std::fs::File::create(to).map_err(io(format!("creating {}", to.display())))?;
    let cap = a.size_in_bytes.saturating_mul(2).max(1 << 20) + (1 << 30);
    let mut out = cell_fetch::HashingWriter::new(file, cap);
    let reading = format!("downloading artifact `{}`", a.name);
    while let Some(piece) = reply
        .chunk()
        .await
        .map_err(|msg| io(reading.clone())(std::io::Error::other(msg)))?
    {
        out.write_all(&piece).map_err(io(reading.clone()))?;
    }
    let (_, actual, _) = out
        .finish()
        .map_err(io(format!("writing {}", to.display())))?;
    if let Some(d) = &a.digest {
        let expected = d.strip_prefix("sha256:").unwrap_or(d).to_ascii_lowercase();
        if expected != actual.as_str() {
            return Err(GithubError::Digest {
                name: a.name.clone(),
                expected,
                actual: actual.to_string(),
            });
        }
    }
    Ok(actual)
}

fn status_error(url: &str, status: u16) -> GithubError {
    let hint = match status {
        401 => ": the token is missing or invalid (set GITHUB_TOKEN or GH_TOKEN)",
        403 => ": forbidden or rate-limited (the token needs `actions: read`)",
        404 => ": not found (check the run id and --repo; a private repo needs a token)",
        _ => "",
    };
    GithubError::Status {
        url: url.to_owned(),
        status,
        hint: hint.to_owned(),
    }
}

/// How long a 403/429 asks us to wait, if it is a rate limit at all.
pub fn rate_limit_wait(
    retry_after: Option<&str>,
    remaining: Option<&str>,
    reset: Option<&str>,
) -> Option<Duration> {
    if let Some(secs) = retry_after.and_then(|s| s.trim().parse::<u64>().ok()) {
        return Some(Duration::from_secs(secs));
    }
    if remaining.map(str::trim) == Some("0") {
        let reset = reset?.trim().parse::<i64>().ok()?;
        let wait = (reset - cell_schema::time::now_secs()).max(0) + 1;
        return Some(Duration::from_secs(u64::try_from(wait).unwrap_or(1)));
    }
    None
}

/// The `rel="next"` URL of a `Link` header.
pub fn next_link(link: &str) -> Option<String> {
    link.split(',').find_map(|part| {
        let (url, params) = part.split_once(';')?;
        params
            .split(';')
            .any(|p| p.trim() == "rel=\"next\"")
            .then(|| {
                url.trim()
                    .trim_start_matches('<')
                    .trim_end_matches('>')
                    .to_owned()
            })
    })
}

/// A blob URL's query carries a signature: never print it.
fn redact_query(url: &str) -> String {
    match url.split_once('?') {
        Some((base, _)) => format!("{base}?…"),
        None => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn link_header() {
        let l = r#"<https://api.github.com/x?page=2&per_page=100>; rel="next", <https://api.github.com/x?page=5>; rel="last""#;
        assert_eq!(
            next_link(l).as_deref(),
            Some("https://api.github.com/x?page=2&per_page=100")
        );
        assert_eq!(next_link(r#"<https://a/x?page=1>; rel="prev""#), None);
    }

    #[test]
    fn rate_limits() {
        assert_eq!(
            rate_limit_wait(Some("3"), None, None),
            Some(Duration::from_secs(3))
        );
        assert_eq!(rate_limit_wait(None, Some("5"), Some("0")), None);
        let reset = (cell_schema::time::now_secs() + 10).to_string();
        let w = rate_limit_wait(None, Some("0"), Some(&reset)).unwrap();
        assert!(
            w >= Duration::from_secs(9) && w <= Duration::from_secs(12),
            "{w:?}"
        );
        assert_eq!(rate_limit_wait(None, None, None), None);
    }

    #[test]
    fn debug_never_shows_the_token() {
        let g = Github::new(
            "http://x",
            Some("ghp_secret".into()),
            RetryPolicy::default(),
            false,
        )
        .unwrap();
        assert!(!format!("{g:?}").contains("ghp_secret"));
    }
}
