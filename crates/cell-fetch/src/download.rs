//! HTTP(S) downloads: redirects followed, size capped, streamed to a temporary file while hashed,
//! with the connect and idle timeouts of [`Timeouts`] and a deadline for the whole download.

use std::io::Write as _;
use std::path::Path;
use std::time::Duration;

use cell_schema::Sha256;
use tempfile::NamedTempFile;

use super::error::FetchError;
use super::hash::{CapExceeded, HashingWriter};
use super::http::{self, Timeouts};
use super::url::redact;

/// The client every fetch uses: redirects followed (credentials dropped across origins),
/// statuses checked by us, no transparent decompression.
pub(super) fn client(timeouts: Timeouts) -> Result<reqwest::Client, FetchError> {
    http::client(timeouts, http::MAX_REDIRECTS).map_err(|e| FetchError::Client(http::describe(&e)))
}

/// What a failed request or body read becomes: a timeout says which one ran out.
pub(super) fn network(url: &str, timeouts: Timeouts, error: reqwest::Error) -> FetchError {
    let error = error.without_url();
    if http::is_timeout(&error) {
        let what = if error.is_connect() {
            format!(
                "no connection within {} s (the connect timeout)",
                timeouts.connect.as_secs_f64()
            )
        } else {
            format!(
                "nothing received for {} s (the idle timeout)",
                timeouts.idle.as_secs_f64()
            )
        };
        return FetchError::TimedOut {
            url: redact(url),
            what,
        };
    }
    FetchError::Network {
        url: redact(url),
        source: Box::new(error),
    }
}

/// GETs `url` and returns a 2xx answer, its body still to read.
pub(super) async fn get(
    client: &reqwest::Client,
    timeouts: Timeouts,
    url: &str,
) -> Result<reqwest::Response, FetchError> {
    let response = client
        .get(url)
        .send()
        .await
        .map_err(|e| network(url, timeouts, e))?;
    let status = response.status().as_u16();
    if !(200..300).contains(&status) {
        return Err(FetchError::Status {
            url: redact(url),
            status,
        });
    }
    Ok(response)
}

/// The next piece of the body, `None` at its end; a failure half-way is [`FetchError::Body`]
/// (or [`FetchError::TimedOut`] when the body stalled).
pub(super) async fn chunk(
    response: &mut reqwest::Response,
    timeouts: Timeouts,
    url: &str,
) -> Result<Option<bytes::Bytes>, FetchError> {
    response.chunk().await.map_err(|e| {
        if http::is_timeout(&e) {
            return network(url, timeouts, e);
        }
        FetchError::Body {
            url: redact(url),
            source: std::io::Error::other(http::describe(&e.without_url())),
        }
    })
}

/// A verified-size download sitting in a temporary file.
pub(super) struct Downloaded {
    /// The file (removed when dropped).
    pub(super) file: NamedTempFile,
    /// SHA-256 of its bytes.
    pub(super) sha256: Sha256,
    /// How many bytes.
    pub(super) bytes: u64,
    /// The file is removed on a stopping signal while this lives.
    _registered: crate::cleanup::Registered,
}

/// Streams `url` into a temporary file in `dir`, hashing as it goes; stops past `max_bytes`.
/// On any error the temporary file is removed.
pub(super) async fn to_temp_file(
    client: &reqwest::Client,
    timeouts: Timeouts,
    url: &str,
    max_bytes: u64,
    dir: &Path,
) -> Result<Downloaded, FetchError> {
    let mut response = get(client, timeouts, url).await?;
    let too_large = || FetchError::TooLarge {
        url: redact(url),
        limit: max_bytes,
    };
    if response.content_length().is_some_and(|len| len > max_bytes) {
        return Err(too_large());
    }
    let (file, registered) = crate::cleanup::create(
        || {
            tempfile::Builder::new()
                .prefix(".cell-fetch-")
                .suffix(".part")
                .tempfile_in(dir)
        },
        NamedTempFile::path,
    )
    .map_err(|e| FetchError::io("creating a temporary file in", dir, e))?;
    let path = file.path().to_owned();
    let mut out = HashingWriter::new(file, max_bytes);
    while let Some(piece) = chunk(&mut response, timeouts, url).await? {
        out.write_all(&piece)
            .map_err(|e| match CapExceeded::of(&e) {
                Some(_) => too_large(),
                None => FetchError::io("writing", &path, e),
            })?;
    }
    let (file, sha256, bytes) = out
        .finish()
        .map_err(|e| FetchError::io("writing", &path, e))?;
    Ok(Downloaded {
        file,
        sha256,
        bytes,
        _registered: registered,
    })
}

/// Runs `work` (one request to `url` and the read of its body) within `deadline`. Past it the
/// work is dropped, its temporary file with it, and the error names the URL and the deadline:
/// a server trickling a byte now and then never trips the idle timeout, but trips this.
pub(super) async fn within<T>(
    deadline: Duration,
    url: &str,
    work: impl Future<Output = Result<T, FetchError>>,
) -> Result<T, FetchError> {
    tokio::time::timeout(deadline, work)
        .await
        .unwrap_or_else(|_| {
            Err(FetchError::TimedOut {
                url: redact(url),
                what: format!(
                    "not done within its deadline of {} s (FETCH_TIMEOUT_S in versions.env, or --timeout)",
                    deadline.as_secs_f64()
                ),
            })
        })
}
