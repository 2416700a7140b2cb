//! A small GitHub REST client: exactly the four calls `cell collect` needs, our own serde
//! structs with only the fields we read, and the retry rules of docs/collect-and-gate.md.
//!
//! Why not octocrab: its models reject real payloads (e.g. job status `requested`), its
//! artifact listing drops `per_page`, and it needs a tokio runtime for what are a handful of
//! sequential calls. ureq gives a blocking agent whose redirects we turn off, so the one
//! 302 of an artifact download is followed by hand, without the Authorization header.

use std::path::Path;
use std::time::Duration;

use cell_schema::{RunId, Sha256};
use cell_stats::SplitMix64;
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

/// A GitHub REST client for the calls `cell collect` makes, with the retry rules above.
pub struct Github {
    api: String,
    token: Option<String>,
    agent: ureq::Agent,
    retry: RetryPolicy,
    verbose: bool,
}

impl std::fmt::Debug for Github {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The token is never printed, not even in debug output.
        f.debug_struct("Github")
            .field("api", &self.api)
            .field("token", &self.token.as_ref().map(|_| "<redacted>"))
            .finish_non_exhaustive()
    }
}

/// One response, read whole or streamed.
struct Reply {
    status: u16,
    location: Option<String>,
    link: Option<String>,
    body: ureq::Body,
}

impl Github {
    /// A client for `api` (e.g. `https://api.github.com`) with an optional token.
    pub fn new(api: &str, token: Option<String>, retry: RetryPolicy, verbose: bool) -> Self {
        let agent = ureq::Agent::config_builder()
            .max_redirects(0)
            .http_status_as_error(false)
            .timeout_global(Some(Duration::from_mins(10)))
            .user_agent(concat!("cell/", env!("CARGO_PKG_VERSION")))
            .build()
            .into();
        Self {
            api: api.trim_end_matches('/').to_owned(),
            token: token.filter(|t| !t.is_empty()),
            agent,
            retry,
            verbose,
        }
    }

    /// A client from the environment: `GITHUB_API_URL` (default `https://api.github.com`),
    /// token from `GITHUB_TOKEN` or `GH_TOKEN`.
    pub fn from_env(verbose: bool) -> Self {
        let api = std::env::var("GITHUB_API_URL")
            .ok()
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| "https://api.github.com".into());
        let token = std::env::var("GITHUB_TOKEN")
            .ok()
            .filter(|s| !s.is_empty())
            .or_else(|| std::env::var("GH_TOKEN").ok());
        Self::new(&api, token, RetryPolicy::default(), verbose)
    }

    /// The run record.
    pub fn run(&self, repo: &str, run: RunId) -> Result<WorkflowRun, GithubError> {
        self.get_json(&format!("{}/repos/{repo}/actions/runs/{run}", self.api))
    }

    /// Every artifact of the run, following `Link: rel="next"`.
    pub fn artifacts(&self, repo: &str, run: RunId) -> Result<Vec<Artifact>, GithubError> {
        let first = format!(
            "{}/repos/{repo}/actions/runs/{run}/artifacts?per_page=100",
            self.api
        );
        self.paged(&first, |p: ArtifactPage| p.artifacts)
    }

    /// Every job of the run's latest attempt, following `Link: rel="next"`.
    pub fn jobs(&self, repo: &str, run: RunId) -> Result<Vec<Job>, GithubError> {
        let first = format!(
            "{}/repos/{repo}/actions/runs/{run}/jobs?per_page=100",
            self.api
        );
        self.paged(&first, |p: JobPage| p.jobs)
    }

    /// Downloads an artifact's zip to `to`: the API answers 302 to a short-lived blob URL,
    /// which is fetched **without** the Authorization header; the zip's SHA-256 is checked
    /// against the artifact's digest when it has one.
    pub fn download(&self, a: &Artifact, to: &Path) -> Result<Sha256, GithubError> {
        if a.expired {
            return Err(GithubError::Expired {
                name: a.name.clone(),
            });
        }
        let reply = self.send(&a.archive_download_url, true)?;
        let blob = match reply.status {
            302 | 301 | 303 | 307 | 308 => reply.location.ok_or_else(|| GithubError::Decode {
                url: a.archive_download_url.clone(),
                msg: "redirect without Location".into(),
            })?,
            410 => {
                return Err(GithubError::Expired {
                    name: a.name.clone(),
                });
            }
            200 => return Self::save(a, reply, to),
            s => return Err(status_error(&a.archive_download_url, s)),
        };
        let reply = self.send(&blob, false)?;
        match reply.status {
            200 => Self::save(a, reply, to),
            410 => Err(GithubError::Expired {
                name: a.name.clone(),
            }),
            s => Err(status_error(&redact_query(&blob), s)),
        }
    }

    fn save(a: &Artifact, reply: Reply, to: &Path) -> Result<Sha256, GithubError> {
        let io = |what: String| move |source| GithubError::Io { what, source };
        let file = std::fs::File::create(to).map_err(io(format!("creating {}", to.display())))?;
        let cap = a.size_in_bytes.saturating_mul(2).max(1 << 20) + (1 << 30);
        let mut out = cell_fetch::HashingWriter::new(file, cap);
        let mut reader = reply.body.into_reader();
        std::io::copy(&mut reader, &mut out)
            .map_err(io(format!("downloading artifact `{}`", a.name)))?;
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

    fn paged<P: serde::de::DeserializeOwned, T>(
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
            let mut reply = self.send(&url, true)?;
            if reply.status != 200 {
                return Err(status_error(&url, reply.status));
            }
            next = reply.link.as_deref().and_then(next_link);
            let text = reply
                .body
                .read_to_string()
                .map_err(|e| GithubError::Transport {
                    url: url.clone(),
                    msg: e.to_string(),
                })?;
            let page: P = serde_json::from_str(&text).map_err(|e| GithubError::Decode {
                url: url.clone(),
                msg: e.to_string(),
            })?;
            out.extend(items(page));
        }
        Ok(out)
    }

    fn get_json<T: serde::de::DeserializeOwned>(&self, url: &str) -> Result<T, GithubError> {
        let mut reply = self.send(url, true)?;
        if reply.status != 200 {
            return Err(status_error(url, reply.status));
        }
        let text = reply
            .body
            .read_to_string()
            .map_err(|e| GithubError::Transport {
                url: url.to_owned(),
                msg: e.to_string(),
            })?;
        serde_json::from_str(&text).map_err(|e| GithubError::Decode {
            url: url.to_owned(),
            msg: e.to_string(),
        })
    }

    /// One GET with the retry rules: 403/429 wait for `retry-after` or `x-ratelimit-reset`;
    /// 5xx and transport errors back off exponentially with jitter.
    fn send(&self, url: &str, auth: bool) -> Result<Reply, GithubError> {
        let shown = redact_query(url);
        let mut jitter = SplitMix64::new(u64::from(std::process::id()) ^ url.len() as u64);
        let mut tries = 0;
        loop {
            tries += 1;
            let mut req = self
                .agent
                .get(url)
                .header("Accept", "application/vnd.github+json")
                .header("X-GitHub-Api-Version", "2022-11-28");
            if auth && let Some(t) = &self.token {
                req = req.header("Authorization", format!("Bearer {t}"));
            }
            let backoff = self
                .retry
                .base
                .saturating_mul(1 << (tries - 1).min(10))
                .mul_f64(0.75 + jitter.below(500) as f64 / 1000.0);
            match req.call() {
                Err(e) => {
                    if self.verbose {
                        eprintln!("GET {shown} → {e}");
                    }
                    if tries >= self.retry.tries {
                        return Err(GithubError::Transport {
                            url: shown,
                            msg: e.to_string(),
                        });
                    }
                    std::thread::sleep(backoff);
                }
                Ok(resp) => {
                    let status = resp.status().as_u16();
                    if self.verbose {
                        eprintln!("GET {shown} → {status}");
                    }
                    let header = |k: &str| {
                        resp.headers()
                            .get(k)
                            .and_then(|v| v.to_str().ok())
                            .map(str::to_owned)
                    };
                    let wait = match status {
                        403 | 429 => rate_limit_wait(
                            header("retry-after").as_deref(),
                            header("x-ratelimit-remaining").as_deref(),
                            header("x-ratelimit-reset").as_deref(),
                        ),
                        500..=599 => Some(backoff),
                        _ => None,
                    };
                    match wait {
                        Some(w) if tries < self.retry.tries && w <= self.retry.max_wait => {
                            if self.verbose {
                                eprintln!("  retrying in {:.1} s", w.as_secs_f64());
                            }
                            std::thread::sleep(w);
                        }
                        _ => {
                            let (location, link) = (header("location"), header("link"));
                            return Ok(Reply {
                                status,
                                location,
                                link,
                                body: resp.into_body(),
                            });
                        }
                    }
                }
            }
        }
    }
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
        );
        assert!(!format!("{g:?}").contains("ghp_secret"));
    }
}
