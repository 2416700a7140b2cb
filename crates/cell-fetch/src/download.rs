//! HTTP(S) downloads: redirects followed, size capped, streamed to a temporary file while hashed.

use std::io::{self, Read, Write};
use std::path::Path;
use std::time::Duration;

use cell_schema::Sha256;
use tempfile::NamedTempFile;

use super::error::FetchError;
use super::hash::{CapExceeded, HashingWriter};
use super::url::redact;

/// How many redirects are followed before giving up.
const MAX_REDIRECTS: u32 = 10;

/// The agent every fetch uses: redirects followed, statuses checked by us, no transparent
/// decompression asked for (the digest is of the bytes as published).
pub(super) fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .max_redirects(MAX_REDIRECTS)
        .http_status_as_error(false)
        .accept_encoding("identity")
        .user_agent(concat!("cell/", env!("CARGO_PKG_VERSION")))
        .timeout_connect(Some(Duration::from_secs(30)))
        .timeout_recv_response(Some(Duration::from_mins(2)))
        // A stalled transfer must end some day; 2 GiB at 1 MB/s still fits.
        .timeout_recv_body(Some(Duration::from_hours(3)))
        .build()
        .into()
}

/// GETs `url` and returns the body of a 2xx answer.
pub(super) fn get(agent: &ureq::Agent, url: &str) -> Result<ureq::Body, FetchError> {
    let response = agent.get(url).call().map_err(|e| FetchError::Network {
        url: redact(url),
        source: Box::new(e),
    })?;
    let status = response.status().as_u16();
    if !(200..300).contains(&status) {
        return Err(FetchError::Status {
            url: redact(url),
            status,
        });
    }
    Ok(response.into_body())
}

/// A verified-size download sitting in a temporary file.
pub(super) struct Downloaded {
    /// The file (removed when dropped).
    pub(super) file: NamedTempFile,
    /// SHA-256 of its bytes.
    pub(super) sha256: Sha256,
    /// How many bytes.
    pub(super) bytes: u64,
}

/// Streams `url` into a temporary file in `dir`, hashing as it goes; stops past `max_bytes`.
pub(super) fn to_temp_file(
    agent: &ureq::Agent,
    url: &str,
    max_bytes: u64,
    dir: &Path,
) -> Result<Downloaded, FetchError> {
    let body = get(agent, url)?;
    let too_large = || FetchError::TooLarge {
        url: redact(url),
        limit: max_bytes,
    };
    if body.content_length().is_some_and(|len| len > max_bytes) {
        return Err(too_large());
    }
    let mut reader = body.into_reader();
    let file = tempfile::Builder::new()
        .prefix(".cell-fetch-")
        .suffix(".part")
        .tempfile_in(dir)
        .map_err(|e| FetchError::io("creating a temporary file in", dir, e))?;
    let path = file.path().to_owned();
    let mut out = HashingWriter::new(file, max_bytes);
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => {
                return Err(FetchError::Body {
                    url: redact(url),
                    source: e,
                });
            }
        };
        out.write_all(&buf[..n])
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
    })
}
