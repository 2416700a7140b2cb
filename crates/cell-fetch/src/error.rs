//! What can go wrong in a fetch, split into integrity failures (exit 1) and infrastructure
//! failures (exit 2).

use std::fmt;
use std::io;
use std::path::PathBuf;

use cell_schema::Sha256;

/// Why `cell fetch` (or [`super::unpack`]) stopped.
///
/// [`FetchError::is_integrity`] tells a tampered or malicious download (the gate trips, exit 1)
/// from everything else: network, HTTP status, disk, arguments, caps (exit 2).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FetchError {
    /// The download does not have the expected digest. Nothing was unpacked.
    #[error(
        "sha256 mismatch for {url}: expected {expected}, actual {actual}; nothing was unpacked"
    )]
    Mismatch {
        /// Where it came from (credentials removed).
        url: String,
        /// The digest we were told to expect.
        expected: Sha256,
        /// The digest of what arrived.
        actual: Sha256,
    },
    /// An archive entry would write outside the destination, or is a device or fifo.
    #[error("refusing archive entry `{entry}`: {why}; nothing was unpacked")]
    Unsafe {
        /// The entry's name as written in the archive.
        entry: String,
        /// What is wrong with it.
        why: Unsafe,
    },
    /// The request could not be made or the connection failed.
    #[error("GET {url}: {}", crate::http::describe(.source.as_ref()))]
    Network {
        /// Where we tried to go (credentials removed).
        url: String,
        /// What reqwest said (without the URL, which is above).
        source: Box<reqwest::Error>,
    },
    /// The connection did not open, or the server sent nothing, within its timeout.
    #[error("GET {url}: {what}; gave up")]
    TimedOut {
        /// Where we tried to go (credentials removed).
        url: String,
        /// Which timeout ran out, e.g. `nothing received for 60 s (the idle timeout)`.
        what: String,
    },
    /// The HTTP client or its runtime could not be set up.
    #[error("setting up the HTTP client: {0}")]
    Client(String),
    /// Reading the response body failed half-way.
    #[error("GET {url}: reading the body: {source}")]
    Body {
        /// Where it came from (credentials removed).
        url: String,
        /// What the reader said.
        source: io::Error,
    },
    /// The server answered with a status other than 2xx (after following redirects).
    #[error("GET {url}: HTTP {status}")]
    Status {
        /// Where we asked (credentials removed).
        url: String,
        /// The final status code.
        status: u16,
    },
    /// The download is larger than the cap.
    #[error("GET {url}: the download exceeds the cap of {limit} bytes (raise --max-bytes)")]
    TooLarge {
        /// Where it came from (credentials removed).
        url: String,
        /// The cap in bytes.
        limit: u64,
    },
    /// The `.sha256` file cannot be used.
    #[error("digest file {url}: {msg}")]
    DigestFile {
        /// Where it came from (credentials removed).
        url: String,
        /// What is wrong and what was expected.
        msg: String,
    },
    /// The archive type cannot be told from the file name.
    #[error(
        "cannot tell the archive type of `{name}`: expected a name ending in .tar.gz, .tgz, \
         .tar.xz, .txz or .zip"
    )]
    UnknownArchive {
        /// The file name we looked at.
        name: String,
    },
    /// The arguments do not make sense (e.g. a URL that is not http(s)).
    #[error("{0}")]
    Usage(String),
    /// The destination exists and is not an empty directory.
    #[error("{} exists and is not an empty directory; refusing to unpack into it", path.display())]
    DestinationNotEmpty {
        /// The destination that is not empty.
        path: PathBuf,
    },
    /// Unpacking would write more bytes than the cap.
    #[error(
        "unpacking `{entry}` exceeds the cap of {limit} unpacked bytes (a multiple of the archive's size, at least a floor, at most a ceiling: --max-ratio, --max-unpacked-bytes)"
    )]
    UnpackedTooLarge {
        /// The entry that crossed the cap.
        entry: String,
        /// The cap in bytes.
        limit: u64,
    },
    /// The archive has more entries than the cap.
    #[error("the archive has more than {limit} entries")]
    TooManyEntries {
        /// The entry cap (`--max-entries`).
        limit: usize,
    },
    /// The archive cannot be read (corrupt, truncated, encrypted, unsupported feature).
    #[error("{}: cannot read the archive: {msg}", path.display())]
    Archive {
        /// The archive file.
        path: PathBuf,
        /// What the decoder said.
        msg: String,
    },
    /// A file-system operation failed.
    #[error("{what} {}: {source}", path.display())]
    Io {
        /// What we were doing, e.g. `creating`.
        what: &'static str,
        /// The path it was done to.
        path: PathBuf,
        /// What the OS said.
        source: io::Error,
    },
}

impl FetchError {
    /// Whether this is an integrity failure (the digest does not match, or the archive tries to
    /// write outside its destination): the gate trips, exit 1. Everything else is
    /// infrastructure or usage: exit 2.
    pub fn is_integrity(&self) -> bool {
        matches!(self, Self::Mismatch { .. } | Self::Unsafe { .. })
    }

    /// The same error with the downloaded temporary file, which is gone by the time anyone
    /// reads the message, named by the URL it came from.
    #[must_use]
    pub(crate) fn naming(self, temp: &std::path::Path, url: &str) -> Self {
        match self {
            Self::Archive { path, msg } if path == temp => Self::Archive {
                path: PathBuf::from(url),
                msg,
            },
            Self::Io { what, path, source } if path == temp => Self::Io {
                what,
                path: PathBuf::from(url),
                source,
            },
            e => e,
        }
    }

    pub(crate) fn io(what: &'static str, path: impl Into<PathBuf>, source: io::Error) -> Self {
        Self::Io {
            what,
            path: path.into(),
            source,
        }
    }
}

/// What makes an archive entry unsafe to unpack.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Unsafe {
    /// The name is an absolute path.
    Absolute,
    /// The name has a `..` component.
    ParentDir,
    /// The name is not UTF-8.
    NotUtf8,
    /// A symbolic or hard link whose target is absolute.
    AbsoluteLink {
        /// The link target.
        target: String,
    },
    /// A symbolic or hard link whose target resolves outside the destination.
    LinkEscapes {
        /// The link target.
        target: String,
    },
    /// A link target resolved through too many symbolic links.
    LinkLoop {
        /// The link target.
        target: String,
    },
    /// The entry would be written through a symbolic link of the archive.
    ThroughSymlink {
        /// The symbolic link on the way (after `--strip-components`).
        link: String,
    },
    /// A hard link to something that is not a regular file unpacked earlier.
    HardLinkTarget {
        /// The link target.
        target: String,
    },
    /// A symbolic link would replace a directory unpacked earlier.
    LinkOverDirectory,
    /// A device, fifo, socket or an entry type we do not know.
    Special {
        /// What it is.
        kind: String,
    },
}

impl fmt::Display for Unsafe {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Absolute => f.write_str("absolute path"),
            Self::ParentDir => f.write_str("path has a `..` component"),
            Self::NotUtf8 => f.write_str("name is not UTF-8"),
            Self::AbsoluteLink { target } => write!(f, "link to absolute path `{target}`"),
            Self::LinkEscapes { target } => {
                write!(f, "link target `{target}` resolves outside the destination")
            }
            Self::LinkLoop { target } => {
                write!(
                    f,
                    "link target `{target}` goes through too many symbolic links"
                )
            }
            Self::ThroughSymlink { link } => {
                write!(f, "it would be written through the symbolic link `{link}`")
            }
            Self::HardLinkTarget { target } => write!(
                f,
                "hard link target `{target}` is not a regular file unpacked before it"
            ),
            Self::LinkOverDirectory => f.write_str("symbolic link would replace a directory"),
            Self::Special { kind } => write!(f, "{kind} entries are not unpacked"),
        }
    }
}
