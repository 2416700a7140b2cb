//! What can go wrong talking to GitHub, each error naming the request.

/// Errors talking to GitHub. Every URL in a message has its query redacted (a blob URL's
/// query is a signature) and never carries the token.
#[derive(Debug, thiserror::Error)]
pub enum GithubError {
    /// A request that did not succeed after the retries.
    #[error("{method} {url}: HTTP {status}{hint}")]
    Status {
        /// `GET`, `POST`, `PATCH` or `PUT`.
        method: &'static str,
        /// The URL (never with credentials).
        url: String,
        /// The final status.
        status: u16,
        /// What to do about it.
        hint: String,
    },
    /// The network failed after the retries.
    #[error("{method} {url}: {msg}")]
    Transport {
        /// The method.
        method: &'static str,
        /// The URL.
        url: String,
        /// What the transport said on the last try.
        msg: String,
    },
    /// A write whose outcome is unknown: the request may have reached GitHub (a timeout, a
    /// reset, a 5xx after the body was sent, no answer within the deadline). It is never
    /// repeated by the client: read the state back (e.g. list the comments and look for the
    /// marker) before trying again.
    #[error("{method} {url}: {msg}; the write may have happened: read it back before trying again")]
    MaybeWritten {
        /// The method (`POST`).
        method: &'static str,
        /// The URL.
        url: String,
        /// What happened.
        msg: String,
    },
    /// A URL the client was about to send the token to is not on the API's origin.
    #[error(
        "{method} {url}: refused: not on the API's origin {api} (the scheme, host and port \
         must be the API's: the token goes nowhere else)"
    )]
    ForeignUrl {
        /// The method.
        method: &'static str,
        /// The refused URL (its query redacted).
        url: String,
        /// The API's origin, `scheme://host:port`.
        api: String,
    },
    /// A body that is not the JSON we expect.
    #[error("{method} {url}: unexpected response: {msg}")]
    Decode {
        /// The method.
        method: &'static str,
        /// The URL.
        url: String,
        /// The parser's message.
        msg: String,
    },
    /// A request body that cannot be written as JSON, or a call given values it cannot use.
    #[error("{method} {url}: cannot send the request: {msg}")]
    Request {
        /// The method.
        method: &'static str,
        /// The URL.
        url: String,
        /// What is wrong.
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
    #[error("{method} {url}: no answer within the {secs} s deadline of cell collect")]
    Deadline {
        /// The method.
        method: &'static str,
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
    /// An artifact larger than any download may write, refused before a byte is asked for.
    #[error(
        "artifact `{name}` is {size} bytes, over the {} GiB a download may write \
         (MAX_ARTIFACT_BYTES): no job of cell leaves one that large",
        max >> 30
    )]
    TooLarge {
        /// The artifact's name.
        name: String,
        /// The size GitHub states for it.
        size: u64,
        /// The ceiling.
        max: u64,
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

    /// Whether a write may have taken effect although it failed: the caller reads back
    /// before trying again.
    pub fn may_have_written(&self) -> bool {
        matches!(self, Self::MaybeWritten { .. })
    }
}

/// The error for a final `status` of `method url`, with a hint for the usual causes.
pub(crate) fn status_error(method: &'static str, url: &str, status: u16) -> GithubError {
    let read = method == "GET";
    let hint = match status {
        401 => ": the token is missing or invalid (set GITHUB_TOKEN or GH_TOKEN)",
        403 if read => ": forbidden or rate-limited (the token needs `actions: read`)",
        403 => {
            ": forbidden or rate-limited (the token needs write permission for this call, \
             e.g. `issues: write`, `pull-requests: write` or `checks: write`)"
        }
        404 if read => ": not found (check the run id and --repo; a private repo needs a token)",
        404 => ": not found (check the repository and the number; a private repo needs a token)",
        422 => ": GitHub refused the request as invalid (a field it does not accept)",
        _ => "",
    };
    GithubError::Status {
        method,
        url: url.to_owned(),
        status,
        hint: hint.to_owned(),
    }
}
