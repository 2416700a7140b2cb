//! Downloads with caps and timeouts, a digest checked before anything is unpacked, and a safe
//! unpack: `cell fetch`, the toolchain tarballs of a job and the artifacts of `cell collect`.
//!
//! The download streams into a temporary file next to the destination while it is hashed, and
//! stops past a size cap. A digest mismatch leaves the destination exactly as it was. The
//! archive is unpacked by [`unpack`], which refuses entries that would write outside the
//! destination and moves the result into place with one rename. Each download has a deadline
//! besides its connect and idle timeouts, and its temporary paths are registered in
//! [`cleanup`] while they exist, so a process stopped by a signal removes them.

pub mod cleanup;
mod digest_file;
mod download;
mod error;
mod hash;
pub mod http;
mod strip;
mod unpack;
mod url;

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use cell_schema::Sha256;

pub use self::digest_file::{DigestFileError, MAX_DIGEST_FILE};
pub use self::error::{FetchError, Unsafe};
pub use self::hash::{CapExceeded, HashingWriter, hash_bytes, hash_file};
pub use self::http::Timeouts;
pub use self::strip::{Dropped, Unpacked};
pub use self::unpack::{
    ArchiveKind, DEFAULT_MAX_ENTRIES, DEFAULT_MAX_RATIO, DEFAULT_MAX_UNPACKED_BYTES,
    DEFAULT_RATIO_FLOOR, UnpackOptions, unpack,
};

/// The default cap on the download size: 2 GiB.
pub const DEFAULT_MAX_BYTES: u64 = 2 << 30;
/// The default deadline of one download (the request and its whole body): the
/// `FETCH_TIMEOUT_S` default of `versions.env`, for callers that read none.
pub const DEFAULT_DEADLINE: Duration = Duration::from_mins(10);

/// Where the expected digest comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expected {
    /// Given outright.
    Digest(Sha256),
    /// In a `.sha256` file (`sha256sum` format) at this URL.
    DigestUrl(String),
}

/// One `cell fetch`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FetchRequest {
    /// The archive's URL (http or https); its file name picks the archive format.
    pub url: String,
    /// The digest the download must have.
    pub expected: Expected,
    /// Where to unpack; must not exist or be an empty directory.
    pub into: PathBuf,
    /// Cap on the download size in bytes.
    pub max_bytes: u64,
    /// Caps and `--strip-components` for the unpack.
    pub unpack: UnpackOptions,
    /// Connect and idle-read timeouts of every request.
    pub timeouts: Timeouts,
    /// How long each download (the digest file's, the archive's) may take in all.
    pub deadline: Duration,
}

impl FetchRequest {
    /// A request with the default caps and no stripping.
    pub fn new(url: impl Into<String>, expected: Expected, into: impl Into<PathBuf>) -> Self {
        Self {
            url: url.into(),
            expected,
            into: into.into(),
            max_bytes: DEFAULT_MAX_BYTES,
            unpack: UnpackOptions::default(),
            timeouts: Timeouts::default(),
            deadline: DEFAULT_DEADLINE,
        }
    }
}

/// What a successful fetch did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fetched {
    /// The URL (credentials removed).
    pub url: String,
    /// The verified digest.
    pub sha256: Sha256,
    /// Bytes downloaded.
    pub bytes: u64,
    /// Entries unpacked.
    pub entries: usize,
    /// Files and links `--strip-components` left out.
    pub dropped: Dropped,
    /// Where they are.
    pub into: PathBuf,
}

/// Downloads `req.url`, verifies its SHA-256, and unpacks it into `req.into`.
///
/// Nothing is unpacked unless the digest matches; on any error `req.into` is left as it was
/// and no temporary file or directory remains.
pub fn fetch(req: &FetchRequest) -> Result<Fetched, FetchError> {
    for url in std::iter::once(&req.url).chain(match &req.expected {
        Expected::DigestUrl(u) => Some(u),
        Expected::Digest(_) => None,
    }) {
        if !url::is_http(url) {
            return Err(FetchError::Usage(format!(
                "`{}` is not an http:// or https:// URL",
                url::redact(url)
            )));
        }
    }
    let name = url::file_name(&req.url).ok_or_else(|| {
        FetchError::Usage(format!(
            "`{}` does not end in a file name, so the archive type is unknown",
            url::redact(&req.url)
        ))
    })?;
    let kind = ArchiveKind::from_file_name(&name)?;
    unpack::check_destination(&req.into)?;

    let runtime = http::runtime().map_err(|e| FetchError::Client(e.to_string()))?;
    let downloaded = runtime.block_on(verified_download(req, &name))?;
    let unpacked = unpack(downloaded.file.path(), kind, &req.into, &req.unpack)
        .map_err(|e| e.naming(downloaded.file.path(), &url::redact(&req.url)))?;
    Ok(Fetched {
        url: url::redact(&req.url),
        sha256: downloaded.sha256,
        bytes: downloaded.bytes,
        entries: unpacked.entries,
        dropped: unpacked.dropped,
        into: req.into.clone(),
    })
}

/// The digest a published checksum file (`sha256sum` format, or BSD `SHA256 (NAME) = HEX`)
/// gives for `archive_name`: `HEX`, `HEX  NAME` and `HEX *NAME` lines; anything else is
/// refused by line. The download has `deadline` in all.
pub fn published_digest(
    url: &str,
    archive_name: &str,
    timeouts: Timeouts,
    deadline: Duration,
) -> Result<Sha256, FetchError> {
    let text = published_file(url, timeouts, deadline)?;
    digest_file::pick(&text, archive_name, true).map_err(|e| FetchError::DigestFile {
        url: url::redact(url),
        msg: e.to_string(),
    })
}

/// The text of a published checksum file (`SHA256SUMS`), at most [`MAX_DIGEST_FILE`] bytes,
/// within `deadline`.
pub fn published_file(
    url: &str,
    timeouts: Timeouts,
    deadline: Duration,
) -> Result<String, FetchError> {
    if !url::is_http(url) {
        return Err(FetchError::Usage(format!(
            "`{}` is not an http:// or https:// URL",
            url::redact(url)
        )));
    }
    let runtime = http::runtime().map_err(|e| FetchError::Client(e.to_string()))?;
    runtime.block_on(async {
        let client = download::client(timeouts)?;
        let text = digest_file::fetch_text(&client, timeouts, url);
        download::within(deadline, url, text).await
    })
}

/// The digest a checksum list's text gives for `archive_name` on a line that names it (the
/// rules of [`published_digest`], but a bare digest is nobody's: a list of several assets
/// must say which line is which).
pub fn listed_digest(text: &str, archive_name: &str) -> Result<Sha256, DigestFileError> {
    digest_file::pick(text, archive_name, false)
}

/// The expected digest (from the digest file when asked) and the verified download.
async fn verified_download(
    req: &FetchRequest,
    name: &str,
) -> Result<download::Downloaded, FetchError> {
    let client = download::client(req.timeouts)?;
    let expected = match &req.expected {
        Expected::Digest(d) => d.clone(),
        Expected::DigestUrl(u) => {
            let digest = digest_file::fetch_expected(&client, req.timeouts, u, name);
            download::within(req.deadline, u, digest).await?
        }
    };
    let dir = download_dir(&req.into);
    let archive = download::to_temp_file(&client, req.timeouts, &req.url, req.max_bytes, &dir);
    let downloaded = download::within(req.deadline, &req.url, archive).await?;
    if downloaded.sha256 != expected {
        return Err(FetchError::Mismatch {
            url: url::redact(&req.url),
            expected,
            actual: downloaded.sha256,
        });
    }
    Ok(downloaded)
}

/// Next to the destination when its parent exists (same file system as the unpack), else the
/// system's temporary directory: a failed fetch must not create the destination's parents.
fn download_dir(into: &Path) -> PathBuf {
    let parent = unpack::parent_dir(into);
    if fs::metadata(parent).is_ok_and(|m| m.is_dir()) {
        parent.to_path_buf()
    } else {
        std::env::temp_dir()
    }
}
