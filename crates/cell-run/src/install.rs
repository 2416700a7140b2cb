//! Installing a toolchain from its release tarball: the digest is established first (the pin,
//! the release's published checksum file, or both, which must agree), then the archive is
//! downloaded from the mirrors or the URL, verified before anything is unpacked, and unpacked
//! into a cache keyed by that digest, so a second job or a second local run finds it there.
//! A tree found there is used only once [`Cache`] has checked it (its owner, its mode, its
//! manifest); one that differs from its manifest is removed and installed again.

use std::path::{Path, PathBuf};
use std::time::Duration;

use cell_fetch::{Expected, FetchError, FetchRequest, Timeouts, UnpackOptions};
use cell_model::{Plan, TarballSource, Toolchain};
use cell_schema::{Sha256, Subject, ToolName, ToolVersion};

use crate::cache::{Cache, CacheError, Tree, io_at, manifest};

/// A tarball installed (or found in the cache) and verified.
#[derive(Clone, Debug)]
pub struct Installed {
    /// The unpacked tree.
    pub dir: PathBuf,
    /// Where its programs are: `<dir>/bin` when there is one, else `<dir>`.
    pub bin: PathBuf,
    /// What was resolved for this platform.
    pub source: TarballSource,
    /// The verified digest.
    pub sha256: Sha256,
    /// The URL that served it (credentials removed); the cached one's, on a cache hit.
    pub url: String,
    /// Whether it came from the cache.
    pub cached: bool,
    /// Files and links the tarball's `strip` left out (none on a cache hit: nothing was
    /// unpacked).
    pub dropped: cell_fetch::Dropped,
    /// Why the tree found in the cache was removed and this one installed in its place (it
    /// differed from its manifest, or had none).
    pub replaced: Option<String>,
}

/// Why a tarball could not be installed.
#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    /// The config does not resolve for this platform.
    #[error("toolchain `{toolchain}`: {source}")]
    Config {
        /// The toolchain.
        toolchain: String,
        /// What is wrong.
        source: cell_model::TarballError,
    },
    /// The pin and the published checksum disagree: nothing was downloaded.
    #[error(
        "toolchain `{toolchain}`: the published checksum {checksum_url} says {published}, versions.env pins {pinned}: one of them is not this release; nothing was unpacked"
    )]
    Disagree {
        /// The toolchain.
        toolchain: String,
        /// The checksum file.
        checksum_url: String,
        /// What it says.
        published: Sha256,
        /// What the pin says.
        pinned: Sha256,
    },
    /// Downloading, verifying or unpacking failed.
    #[error("toolchain `{toolchain}` from {url}: {source}")]
    Fetch {
        /// The toolchain.
        toolchain: String,
        /// The URL (credentials removed).
        url: String,
        /// The last failure (a digest mismatch stops at once; an unreachable URL passes on).
        source: FetchError,
    },
    /// The cache: a directory or tree others could have written to, or a disk error.
    #[error(transparent)]
    Cache(#[from] CacheError),
}

impl InstallError {
    /// The toolchain it is about.
    pub fn toolchain(&self) -> Option<&str> {
        match self {
            Self::Config { toolchain, .. }
            | Self::Disagree { toolchain, .. }
            | Self::Fetch { toolchain, .. } => Some(toolchain),
            Self::Cache(_) => None,
        }
    }

    /// A cache or tree someone else could have written to: nothing of it ran (exit 2, and
    /// never a toolchain merely missing).
    pub fn is_untrusted(&self) -> bool {
        matches!(self, Self::Cache(CacheError::Untrusted { .. }))
    }

    /// A digest that is not the release's (exit 1), as opposed to a network or disk failure.
    pub fn is_integrity(&self) -> bool {
        match self {
            Self::Disagree { .. } => true,
            Self::Fetch { source, .. } => source.is_integrity(),
            _ => false,
        }
    }
}

/// The unpack options a set of caps from versions.env stands for (no stripping).
pub fn unpack_options(caps: &cell_model::UnpackCaps) -> UnpackOptions {
    UnpackOptions {
        strip_components: 0,
        max_unpacked_bytes: caps.max_bytes,
        max_entries: usize::try_from(caps.max_entries).unwrap_or(usize::MAX),
        max_ratio: caps.max_ratio,
        ratio_floor: caps.ratio_floor_bytes,
    }
}

/// The digest to expect, from the pin, the published checksum file, or both.
fn expected_digest(
    tc: &Toolchain,
    src: &TarballSource,
    timeouts: Timeouts,
    deadline: Duration,
) -> Result<Sha256, InstallError> {
    let published = match &src.checksum_url {
        Some(url) => Some(
            cell_fetch::published_digest(url, &src.asset, timeouts, deadline).map_err(
                |source| InstallError::Fetch {
                    toolchain: tc.name.to_string(),
                    url: cell_schema::escape::without_userinfo(url),
                    source,
                },
            )?,
        ),
        None => None,
    };
    match (&src.sha256, published) {
        (Some(pin), Some(p)) if *pin != p => Err(InstallError::Disagree {
            toolchain: tc.name.to_string(),
            checksum_url: cell_schema::escape::without_userinfo(
                src.checksum_url.as_deref().unwrap_or_default(),
            ),
            published: p,
            pinned: pin.clone(),
        }),
        (Some(pin), _) => Ok(pin.clone()),
        (None, Some(p)) => Ok(p),
        (None, None) => unreachable!("the model requires a pin or a checksum file"),
    }
}

/// Installs `tc` for `os`/`arch` under `cache`, or finds it there and checks it.
pub fn install(
    plan: &Plan,
    tc: &Toolchain,
    os: &str,
    arch: &str,
    cache: &Cache,
) -> Result<Installed, InstallError> {
    let src = plan
        .tarball_source(tc, os, arch)
        .map_err(|source| InstallError::Config {
            toolchain: tc.name.to_string(),
            source,
        })?;
    let timeouts = Timeouts::default();
    let deadline = Duration::from_secs(plan.settings.fetch_timeout_s);
    let sha256 = expected_digest(tc, &src, timeouts, deadline)?;
    let root = cache.toolchains()?;
    let dir = root.join(sha256.to_string());
    let replaced = match cache.open_tree(&dir, &sha256)? {
        Tree::Holds { url } => return Ok(found(dir, src, sha256, url, None, None)),
        Tree::Missing => None,
        Tree::Differs(why) => {
            crate::cache::discard(&dir)?;
            Some(why)
        }
    };
    let partial = root.join(format!(".{sha256}.partial-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&partial);
    // Removed on SIGTERM/SIGINT until it is renamed into place (or removed here).
    let _partial = cell_fetch::cleanup::register(&partial);
    let (url, dropped) = download(plan, tc, &src, &sha256, &partial, (timeouts, deadline))?;
    let placed = manifest::seal(&partial, &url, &sha256)
        .map(|_| ())
        .and_then(|()| place(cache, &partial, &dir, &sha256));
    // Gone when it was renamed into place; whatever is left otherwise.
    let _ = std::fs::remove_dir_all(&partial);
    placed?;
    cache.remember(&dir, &url);
    Ok(found(dir, src, sha256, url, Some(dropped), replaced))
}

/// Fetches the tarball from the first URL that serves it, verified and unpacked into
/// `partial`: the URL it came from, and what the tarball's `strip` left out.
fn download(
    plan: &Plan,
    tc: &Toolchain,
    src: &TarballSource,
    sha256: &Sha256,
    partial: &Path,
    (timeouts, deadline): (Timeouts, Duration),
) -> Result<(String, cell_fetch::Dropped), InstallError> {
    let mut last = None;
    for url in &src.urls {
        let req = FetchRequest {
            unpack: UnpackOptions {
                strip_components: usize::try_from(src.strip).unwrap_or(usize::MAX),
                ..unpack_options(&plan.settings.unpack)
            },
            timeouts,
            deadline,
            ..FetchRequest::new(url.clone(), Expected::Digest(sha256.clone()), partial)
        };
        match cell_fetch::fetch(&req) {
            Ok(done) => return Ok((done.url, done.dropped)),
            // Other bytes than the release's: no other URL is tried.
            Err(e) if e.is_integrity() => {
                return Err(InstallError::Fetch {
                    toolchain: tc.name.to_string(),
                    url: cell_schema::escape::without_userinfo(url),
                    source: e,
                });
            }
            Err(e) => last = Some((url, e)),
        }
    }
    let (url, source) = last.expect("a tarball has at least one URL");
    Err(InstallError::Fetch {
        toolchain: tc.name.to_string(),
        url: cell_schema::escape::without_userinfo(url),
        source,
    })
}

/// Renames the sealed `partial` tree into place.
fn place(cache: &Cache, partial: &Path, dir: &Path, sha256: &Sha256) -> Result<(), CacheError> {
    match std::fs::rename(partial, dir) {
        Ok(()) => Ok(()),
        // Another job may have finished the same digest first: theirs is as good once it is
        // checked; anything else in its place is not a tree to time.
        Err(e) => match cache.open_tree(dir, sha256)? {
            Tree::Holds { .. } => Ok(()),
            Tree::Missing | Tree::Differs(_) => Err(io_at(dir)(e)),
        },
    }
}

fn found(
    dir: PathBuf,
    source: TarballSource,
    sha256: Sha256,
    url: String,
    unpacked: Option<cell_fetch::Dropped>,
    replaced: Option<String>,
) -> Installed {
    let bin = if dir.join("bin").is_dir() {
        dir.join("bin")
    } else {
        dir.clone()
    };
    Installed {
        dir,
        bin,
        source,
        sha256,
        url,
        cached: unpacked.is_none(),
        dropped: unpacked.unwrap_or_default(),
        replaced,
    }
}

/// The subject record of an installed release, with its tools as probed in its tree.
pub fn subject_record(
    tc: &Toolchain,
    installed: &Installed,
    tools: &std::collections::BTreeMap<ToolName, ToolVersion>,
) -> Subject {
    // The release's compiler: its only tool, or the tool named like the toolchain; with
    // several and none so named, no single binary stands for the release.
    let first = if tc.tools.len() == 1 {
        tc.tools.keys().next()
    } else {
        tc.tools.keys().find(|t| t.as_str() == tc.name.as_str())
    }
    .and_then(|t| tools.get(t));
    Subject {
        tag: installed.source.tag.clone(),
        asset: installed.source.asset.clone(),
        sha256: installed.sha256.clone(),
        toolchain: Some(tc.name.clone()),
        version: installed.source.version.clone(),
        url: Some(installed.url.clone()),
        verified: Some(installed.source.verification()),
        // Its digest, size and version as printed, in the shape an imported record has;
        // every tool's are under `tools`.
        binary_sha256: first.and_then(|v| v.sha256.clone()),
        binary_bytes: first.and_then(|v| v.bytes),
        printed: first.map(|v| v.printed.lines().next().unwrap_or("").to_owned()),
        tools: tools.clone(),
    }
}
