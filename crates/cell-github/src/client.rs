//! The client: its two HTTP stacks, the one retry loop every request goes through, and the
//! typed verbs (`get`, `get_paged`, `post`, `patch`, `put`).

use std::future::Future;
use std::time::{Duration, Instant};

use bytes::Bytes;
use cell_fetch::Timeouts;
use cell_fetch::http::describe;
use cell_stats::SplitMix64;
use reqwest::Method;
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::error::{GithubError, status_error};
use crate::retry::{RetryPolicy, rate_limit_wait};
use crate::urls::{Origin, next_link, redact_query};

/// The largest JSON answer read: a page of 100 jobs is about 100 KB.
pub const MAX_JSON_BYTES: usize = 32 << 20;

/// The most pages one listing follows: more means the `Link` header loops.
pub const MAX_PAGES: usize = 1000;

/// GitHub's REST API version the client is written against.
const API_VERSION: &str = "2022-11-28";

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

/// A GitHub REST client with the rules of the crate's documentation.
pub struct Github {
    /// The base, without a trailing `/`.
    pub(crate) api: String,
    origin: Origin,
    token: Option<String>,
    /// To the API: no redirect is followed (a 3xx comes back to our code).
    rest: reqwest::Client,
    /// To the blob store: never with the token; redirects followed by reqwest's policy.
    blob: reqwest::Client,
    settings: Settings,
    /// When the deadline passes.
    deadline: Option<Instant>,
    /// Drives both clients; dropped last.
    pub(crate) runtime: tokio::runtime::Runtime,
}

impl std::fmt::Debug for Github {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The token is never printed, not even in debug output.
        f.debug_struct("Github")
            .field("api", &self.api)
            .field("token", &self.token.as_ref().map(|_| "<redacted>"))
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

/// Which stack a request goes through.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Via {
    /// To the API, with the token, after the origin check.
    Api,
    /// To the blob store, never with the token.
    Blob,
}

/// The method's name, for messages.
pub(crate) fn verb(method: &Method) -> &'static str {
    match *method {
        Method::POST => "POST",
        Method::PATCH => "PATCH",
        Method::PUT => "PUT",
        Method::DELETE => "DELETE",
        _ => "GET",
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
        let (api, origin) = api_base(api)?;
        let t = settings.timeouts;
        let rest = cell_fetch::http::client(t, 0).map_err(|e| setup(&e))?;
        let blob =
            cell_fetch::http::client(t, cell_fetch::http::MAX_REDIRECTS).map_err(|e| setup(&e))?;
        let deadline = settings.deadline.map(|d| Instant::now() + d);
        Ok(Self {
            api,
            origin,
            token: token.filter(|t| !t.is_empty()),
            rest,
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

    /// `path` (from `/`) under the API's base; a full URL is kept as it is (and must be on
    /// the API's origin to be sent).
    pub fn endpoint(&self, path: &str) -> String {
        if path.starts_with('/') {
            format!("{}{path}", self.api)
        } else {
            path.to_owned()
        }
    }

    /// `GET path`, its JSON answer parsed into `T`.
    pub fn get<T: DeserializeOwned>(&self, path: &str) -> Result<T, GithubError> {
        let url = self.endpoint(path);
        self.runtime
            .block_on(self.within(&Method::GET, &url, async {
                Ok(self.call(&Method::GET, &url, None).await?.0)
            }))
    }

    /// Every item of a listing from `path` on, following `Link: rel="next"` (each next URL
    /// must be on the API's origin); `items` takes a page's items out of its body.
    pub fn get_paged<P: DeserializeOwned, T>(
        &self,
        path: &str,
        items: impl Fn(P) -> Vec<T>,
    ) -> Result<Vec<T>, GithubError> {
        let first = self.endpoint(path);
        self.runtime.block_on(self.paged(&first, items))
    }

    /// `POST path` with `body` as JSON. Never repeated after an unclear failure: see
    /// [`GithubError::MaybeWritten`].
    pub fn post<B: Serialize + ?Sized, T: DeserializeOwned>(
        &self,
        path: &str,
        body: &B,
    ) -> Result<T, GithubError> {
        self.write(&Method::POST, path, body)
    }

    /// `PATCH path` with `body` as JSON, retried as a GET is.
    pub fn patch<B: Serialize + ?Sized, T: DeserializeOwned>(
        &self,
        path: &str,
        body: &B,
    ) -> Result<T, GithubError> {
        self.write(&Method::PATCH, path, body)
    }

    /// `PUT path` with `body` as JSON, retried as a GET is. An empty answer (204) reads as
    /// JSON `null`: ask for `()` or an `Option`.
    pub fn put<B: Serialize + ?Sized, T: DeserializeOwned>(
        &self,
        path: &str,
        body: &B,
    ) -> Result<T, GithubError> {
        self.write(&Method::PUT, path, body)
    }

    fn write<B: Serialize + ?Sized, T: DeserializeOwned>(
        &self,
        method: &Method,
        path: &str,
        body: &B,
    ) -> Result<T, GithubError> {
        let url = self.endpoint(path);
        let body = serde_json::to_vec(body).map_err(|e| GithubError::Request {
            method: verb(method),
            url: url.clone(),
            msg: e.to_string(),
        })?;
        let body = Bytes::from(body);
        let work = async { Ok(self.call(method, &url, Some(&body)).await?.0) };
        match self.runtime.block_on(self.within(method, &url, work)) {
            // Whether a POST still waiting at the deadline reached GitHub is not known.
            Err(GithubError::Deadline { method, url, secs }) if method == "POST" => {
                Err(GithubError::MaybeWritten {
                    method,
                    url,
                    msg: format!("no answer within the {secs} s deadline"),
                })
            }
            other => other,
        }
    }

    pub(crate) async fn paged<P: DeserializeOwned, T>(
        &self,
        first: &str,
        items: impl Fn(P) -> Vec<T>,
    ) -> Result<Vec<T>, GithubError> {
        let mut out = Vec::new();
        let mut next = Some(first.to_owned());
        let mut pages = 0;
        while let Some(url) = next.take() {
            pages += 1;
            if pages > MAX_PAGES {
                return Err(GithubError::Decode {
                    method: "GET",
                    url,
                    msg: format!("more than {MAX_PAGES} pages: the Link header loops"),
                });
            }
            let work = self.call::<P>(&Method::GET, &url, None);
            let (page, link) = self.within(&Method::GET, &url, work).await?;
            next = self.next_page(link.as_deref())?;
            out.extend(items(page));
        }
        Ok(out)
    }

    /// The next page's URL from a page's `Link` header, `None` after the last page. A next
    /// URL off the API's origin (`http://` on an `https` API's host among them) is refused
    /// here, before anything is sent to it: the token goes to the API's origin alone.
    pub(crate) fn next_page(&self, link: Option<&str>) -> Result<Option<String>, GithubError> {
        let Some(next) = link.and_then(next_link) else {
            return Ok(None);
        };
        self.check_origin(&Method::GET, &next)?;
        Ok(Some(next))
    }

    /// Sends `method url` (with `body`) to the API and parses the answer; returns the `Link`
    /// header too. A GET must answer 200, a write any 2xx.
    pub(crate) async fn call<T: DeserializeOwned>(
        &self,
        method: &Method,
        url: &str,
        body: Option<&Bytes>,
    ) -> Result<(T, Option<String>), GithubError> {
        let name = verb(method);
        let reply = self.send(method, url, body, Via::Api).await?;
        let status = reply.status().as_u16();
        let ok = if *method == Method::GET {
            status == 200
        } else {
            (200..300).contains(&status)
        };
        if !ok {
            return Err(status_error(name, url, status));
        }
        let link = header(&reply, "link");
        let text = read_capped(reply).await.map_err(|msg| {
            // The write was answered 2xx: it happened, only the answer is lost.
            if *method == Method::POST {
                GithubError::MaybeWritten {
                    method: name,
                    url: url.to_owned(),
                    msg: format!("reading the answer: {msg}"),
                }
            } else {
                GithubError::Transport {
                    method: name,
                    url: url.to_owned(),
                    msg,
                }
            }
        })?;
        let text = if text.trim().is_empty() && *method != Method::GET {
            "null".to_owned()
        } else {
            text
        };
        let value = serde_json::from_str(&text).map_err(|e| GithubError::Decode {
            method: name,
            url: url.to_owned(),
            msg: e.to_string(),
        })?;
        Ok((value, link))
    }

    /// Runs `work`, which requests `shown` (a blob URL without its query), within the
    /// deadline, if there is one.
    pub(crate) async fn within<T>(
        &self,
        method: &Method,
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
                    method: verb(method),
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

    /// Refuses `url` unless it is on the API's origin: the token goes to that origin alone.
    fn check_origin(&self, method: &Method, url: &str) -> Result<(), GithubError> {
        if Origin::of(url).as_ref() == Some(&self.origin) {
            return Ok(());
        }
        Err(GithubError::ForeignUrl {
            method: verb(method),
            url: redact_query(url),
            api: self.origin.to_string(),
        })
    }

    /// One try, through the stack `via` names.
    async fn attempt(
        &self,
        method: &Method,
        url: &str,
        body: Option<&Bytes>,
        via: Via,
    ) -> Result<reqwest::Response, reqwest::Error> {
        let request = match via {
            Via::Blob => self.blob.get(url),
            Via::Api => {
                let mut r = self
                    .rest
                    .request(method.clone(), url)
                    .header(reqwest::header::ACCEPT, "application/vnd.github+json")
                    .header("x-github-api-version", API_VERSION);
                // `send` checked the origin before the first try.
                if let Some(token) = &self.token {
                    r = r.bearer_auth(token);
                }
                if let Some(body) = body {
                    r = r
                        .header(reqwest::header::CONTENT_TYPE, "application/json")
                        .body(body.clone());
                }
                r
            }
        };
        request.send().await
    }

    /// One request with the retry rules: 403/429 wait for `retry-after` or
    /// `x-ratelimit-reset`; 5xx and transport errors back off exponentially with jitter, but
    /// a POST is repeated only when it surely did not reach GitHub (the connection was never
    /// made, or a rate limit refused it); otherwise [`GithubError::MaybeWritten`].
    pub(crate) async fn send(
        &self,
        method: &Method,
        url: &str,
        body: Option<&Bytes>,
        via: Via,
    ) -> Result<reqwest::Response, GithubError> {
        if via == Via::Api {
            self.check_origin(method, url)?;
        }
        let name = verb(method);
        let blind = *method != Method::POST;
        let shown = redact_query(url);
        let retry = &self.settings.retry;
        let mut jitter = SplitMix64::new(u64::from(std::process::id()) ^ url.len() as u64);
        let mut tries = 0;
        loop {
            tries += 1;
            let backoff = retry.backoff(tries, &mut jitter);
            let reply = match self.attempt(method, url, body, via).await {
                Err(e) => {
                    // A connection never made carried no request: even a POST may go again.
                    let unsent = e.is_connect();
                    let msg = describe(&e.without_url());
                    self.say(format_args!("{name} {shown} → {msg}"));
                    if !blind && !unsent {
                        return Err(GithubError::MaybeWritten {
                            method: name,
                            url: shown,
                            msg,
                        });
                    }
                    if tries >= retry.tries {
                        return Err(GithubError::Transport {
                            method: name,
                            url: shown,
                            msg,
                        });
                    }
                    tokio::time::sleep(backoff).await;
                    continue;
                }
                Ok(reply) => reply,
            };
            let status = reply.status().as_u16();
            self.say(format_args!("{name} {shown} → {status}"));
            let wait = match status {
                403 | 429 => rate_limit_wait(
                    header(&reply, "retry-after").as_deref(),
                    header(&reply, "x-ratelimit-remaining").as_deref(),
                    header(&reply, "x-ratelimit-reset").as_deref(),
                ),
                500..=599 if blind => Some(backoff),
                500..=599 => {
                    return Err(GithubError::MaybeWritten {
                        method: name,
                        url: shown,
                        msg: format!("HTTP {status}"),
                    });
                }
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

/// `GITHUB_API_URL` as the client keeps it: the normalised origin and path, no trailing `/`,
/// with its origin. Credentials belong in `GITHUB_TOKEN`: a URL carrying them would print
/// them in every message naming a request, and reqwest would send them as Basic auth. The
/// URL parser accepts more spellings than `scheme://user@host` (`https:user:secret@host`,
/// `https:\\user@host`, a tab inside the scheme), so the check is on the parsed URL, and a
/// text the parser would quietly repair is refused before it is parsed. Nothing here echoes
/// a text that may hold a secret.
fn api_base(raw: &str) -> Result<(String, Origin), GithubError> {
    let refuse = |msg: String| Err(GithubError::Setup { msg });
    if raw.chars().any(|c| c.is_control() || c == '\\') {
        return refuse(
            "GITHUB_API_URL holds a control character or a backslash: write it as \
             https://host[:port][/path] (e.g. https://api.github.com)"
                .into(),
        );
    }
    let not_http = || {
        // A text with `@` may carry a secret: it is not shown.
        let shown = if raw.contains('@') {
            "(not shown: it holds `@`)".to_owned()
        } else {
            format!("`{raw}`")
        };
        GithubError::Setup {
            msg: format!(
                "GITHUB_API_URL {shown} is not an http(s) URL with a host \
                 (e.g. https://api.github.com)"
            ),
        }
    };
    let url = reqwest::Url::parse(raw).map_err(|_| not_http())?;
    if !url.username().is_empty() || url.password().is_some() {
        return refuse(
            "GITHUB_API_URL carries credentials (user:secret@): remove them and put the token \
             in GITHUB_TOKEN"
                .into(),
        );
    }
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
        return Err(not_http());
    }
    let base = format!(
        "{}{}",
        url.origin().ascii_serialization(),
        url.path().trim_end_matches('/')
    );
    let origin = Origin::of(&base).ok_or_else(not_http)?;
    Ok((base, origin))
}

/// A header's value as text.
pub(crate) fn header(reply: &reqwest::Response, name: &str) -> Option<String> {
    let value = reply.headers().get(name)?.to_str().ok()?;
    Some(value.to_owned())
}

/// A JSON answer as text, at most [`MAX_JSON_BYTES`].
async fn read_capped(mut reply: reqwest::Response) -> Result<String, String> {
    let mut bytes = Vec::new();
    while let Some(piece) = reply
        .chunk()
        .await
        .map_err(|e| describe(&e.without_url()))?
    {
        if bytes.len() + piece.len() > MAX_JSON_BYTES {
            return Err(format!(
                "the answer is larger than {} MiB",
                MAX_JSON_BYTES >> 20
            ));
        }
        bytes.extend_from_slice(&piece);
    }
    String::from_utf8(bytes).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The acceptance of the client: a `Link` header pointing at `http://` on an `https` API's
    /// host would have had the token sent in clear had the origin been compared by host. The
    /// header comes from a real page of the loopback stand-in; the API is
    /// `https://api.github.com`, and the next page is refused before any request is made.
    #[test]
    fn a_link_to_plain_http_on_the_apis_host_never_gets_the_token() {
        use cell_testkit::http::{Response, Server};
        let next = "http://api.github.com/repos/o/r/actions/runs/7/jobs?per_page=100&page=2";
        let link = format!("<{next}>; rel=\"next\"");
        let stand_in = Server::start(move |_| {
            Response::json(200, &serde_json::json!({"jobs": []})).header("link", &link)
        });
        let reader = Github::new(&stand_in.base(), None, RetryPolicy::default(), false).unwrap();
        let first = stand_in.url("/repos/o/r/actions/runs/7/jobs?per_page=100");
        let (_, header): (serde_json::Value, _) = reader
            .runtime
            .block_on(reader.call(&Method::GET, &first, None))
            .unwrap();
        assert!(
            header.as_deref().is_some_and(|h| h.contains(next)),
            "{header:?}"
        );

        let api = Github::new(
            "https://api.github.com",
            Some("ghp_linkSecret".into()),
            RetryPolicy::default(),
            false,
        )
        .unwrap();
        let err = api.next_page(header.as_deref()).unwrap_err();
        assert!(matches!(err, GithubError::ForeignUrl { .. }), "{err}");
        assert!(
            err.to_string().starts_with(
                "GET http://api.github.com/repos/o/r/actions/runs/7/jobs?…: refused: not on the \
                 API's origin https://api.github.com:443"
            ),
            "{err}"
        );
        assert!(!format!("{err} {err:?}").contains("ghp_linkSecret"));
        // The sending path refuses it too, before a connection is tried.
        let sent = api
            .runtime
            .block_on(api.send(&Method::GET, next, None, Via::Api));
        assert!(matches!(sent, Err(GithubError::ForeignUrl { .. })));
        let asked = stand_in.requests();
        assert_eq!(asked.len(), 1, "only the first page, from the stand-in");
        assert!(!asked[0].headers.contains_key("authorization"));
        // A same-origin next page is followed; no `Link` ends the listing.
        let same = "<https://api.github.com/repos/o/r/x?page=2>; rel=\"next\"";
        assert_eq!(
            api.next_page(Some(same)).unwrap().as_deref(),
            Some("https://api.github.com/repos/o/r/x?page=2")
        );
        assert_eq!(api.next_page(None).unwrap(), None);
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

    /// The check looked for `@` only after a literal `://`, but the URL parser also reads
    /// `https:user:secret@host`, `https:\\user:secret@host` and a tab inside the scheme as a
    /// URL with credentials: the secret stayed in the base, in every error, in `Debug`, and
    /// went out as Basic auth.
    #[test]
    fn an_api_url_with_credentials_in_any_spelling_is_refused_at_setup_without_the_secret() {
        for raw in [
            "https://user:s3cr3t@api.github.com",
            "https:user:s3cr3t@api.github.com",
            "https:/user:s3cr3t@api.github.com",
            "https:\\user:s3cr3t@api.github.com",
            "https:\\\\user:s3cr3t@api.github.com",
            "ht\ttps://user:s3cr3t@api.github.com",
            "https://user:s3cr3t@api.github.com\n",
            "HTTPS://s3cr3t@API.github.com/api/v3",
            "https://:s3cr3t@api.github.com",
            "https:s3cr3t@api.github.com",
            "user:s3cr3t@api.github.com",
        ] {
            let err = Github::new(raw, None, RetryPolicy::default(), false).unwrap_err();
            assert!(matches!(err, GithubError::Setup { .. }), "{raw:?}: {err}");
            let text = format!("{err} {err:?}");
            assert!(!text.contains("s3cr3t"), "{raw:?}: {text}");
        }
    }

    #[test]
    fn the_api_base_kept_is_the_normalised_origin_and_path() {
        for (raw, kept) in [
            ("https://api.github.com", "https://api.github.com"),
            ("https://api.github.com/", "https://api.github.com"),
            (
                "https://API.github.com:443/api/v3/",
                "https://api.github.com/api/v3",
            ),
            ("http://127.0.0.1:8080", "http://127.0.0.1:8080"),
            (
                "https://ghe.example/api/v3?x=1#f",
                "https://ghe.example/api/v3",
            ),
        ] {
            let g = Github::new(raw, None, RetryPolicy::default(), false).unwrap();
            assert_eq!(g.api, kept, "{raw}");
        }
    }

    #[test]
    fn an_api_url_without_a_host_is_refused_at_setup() {
        let err = Github::new("api.github.com", None, RetryPolicy::default(), false).unwrap_err();
        assert!(
            err.to_string()
                .contains("`api.github.com` is not an http(s) URL"),
            "{err}"
        );
    }
}
