//! The HTTP stack of every download in the workspace (`cell fetch`, a job's toolchains, the
//! artifact blobs of `cell collect`): reqwest on rustls with the ring provider, a connect
//! timeout and an idle-read timeout on every request, and a small tokio runtime so that
//! synchronous callers can drive it.
//!
//! Redirects are followed by reqwest's policy, which drops `Authorization`, `Cookie` and
//! `Proxy-Authorization` whenever the host, port or scheme changes, so credentials given for
//! one origin never reach the next.

use std::time::Duration;

/// The `User-Agent` of our downloads.
pub const USER_AGENT: &str = concat!("cell/", env!("CARGO_PKG_VERSION"));

/// How many redirects a download follows before giving up.
pub const MAX_REDIRECTS: usize = 10;

/// How long a request may wait for the network before it gives up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timeouts {
    /// To open the connection (TCP and TLS).
    pub connect: Duration,
    /// Between two reads: a response that sends nothing for this long has stalled.
    pub idle: Duration,
}

impl Default for Timeouts {
    /// 30 s to connect, 60 s of silence.
    fn default() -> Self {
        Self {
            connect: Duration::from_secs(30),
            idle: Duration::from_mins(1),
        }
    }
}

/// Makes ring the process's rustls provider (once; a provider installed earlier stays).
pub fn install_ring() {
    // An error only says that a provider is already installed: that one is used.
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// A client with our user agent and `timeouts`, following up to `redirects` redirects (0: none,
/// the caller reads the 3xx itself). No transparent decompression: a digest is of the bytes as
/// published.
pub fn client(timeouts: Timeouts, redirects: usize) -> Result<reqwest::Client, reqwest::Error> {
    install_ring();
    let policy = if redirects == 0 {
        reqwest::redirect::Policy::none()
    } else {
        reqwest::redirect::Policy::limited(redirects)
    };
    reqwest::Client::builder()
        .user_agent(USER_AGENT)
        .connect_timeout(timeouts.connect)
        .read_timeout(timeouts.idle)
        .redirect(policy)
        .build()
}

/// A single-threaded tokio runtime with the I/O and time drivers: what a synchronous entry point
/// owns to `block_on` its requests.
pub fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
}

/// An error and its causes on one line (`a: b: c`), repeated messages said once. Callers strip
/// URLs first (`reqwest::Error::without_url`) where a URL may carry a signature.
pub fn describe(error: &(dyn std::error::Error + 'static)) -> String {
    let mut out = error.to_string();
    let mut cause = error.source();
    while let Some(c) = cause {
        let text = c.to_string();
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        cause = c.source();
    }
    out
}

/// Whether `error` (or a cause of it) is a timeout.
pub fn is_timeout(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut cause = Some(error);
    while let Some(c) = cause {
        if c.downcast_ref::<reqwest::Error>()
            .is_some_and(reqwest::Error::is_timeout)
            || c.downcast_ref::<std::io::Error>()
                .is_some_and(|e| e.kind() == std::io::ErrorKind::TimedOut)
        {
            return true;
        }
        cause = c.source();
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("reading: {0}")]
    struct Wrap(#[source] std::io::Error);

    #[test]
    fn describe_joins_causes_once() {
        let timed_out = std::io::Error::new(std::io::ErrorKind::TimedOut, "no data");
        let wrapped = Wrap(timed_out);
        assert_eq!(describe(&wrapped), "reading: no data");
        assert!(is_timeout(&wrapped));
        assert!(!is_timeout(&Wrap(std::io::Error::other("x"))));
    }
}
