//! The toolchain cache on disk, checked rather than believed. A cached tree is used only when
//! the cache root, every directory from it down to the tree, and everything in the tree belong
//! to the running user (or root) and cannot be written by anyone else, and when the tree still
//! matches the manifest its verified install wrote ([`manifest`]). A tree that differs is
//! removed and installed again; one that someone else could have written is refused, and
//! nothing of it runs.
//!
//! Where it is: `CELL_CACHE`, else `$RUNNER_TEMP/cell-cache`, `$XDG_CACHE_HOME/cell`,
//! `~/.cache/cell`; with none of those set, a directory of this process's own under `$TMPDIR`
//! (mode 0700, a random name) that goes when the process ends: never a fixed name in a
//! directory every user may write to, where anyone could have put a tree first.

pub mod manifest;

use std::collections::BTreeMap;
use std::fs::{self, Metadata};
use std::io;
use std::os::unix::fs::{DirBuilderExt as _, MetadataExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use cell_schema::Sha256;

/// The environment variable that names the cache root.
pub const CACHE_ENV: &str = "CELL_CACHE";

/// Where verified trees are kept, and which of them this process has checked already.
#[derive(Clone, Debug)]
pub struct Cache(Arc<Inner>);

#[derive(Debug)]
struct Inner {
    root: PathBuf,
    /// The process's own root when the environment names none; removed when it drops.
    private: Option<tempfile::TempDir>,
    /// Trees checked against their manifests by this process, with the URL each came from:
    /// a tree is hashed once per process, however many jobs use it.
    checked: Mutex<BTreeMap<PathBuf, String>>,
}

/// Why the cache cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum CacheError {
    /// A directory or file someone other than this user (or root) could have written.
    #[error(
        "{}: {why} (owner uid {uid}, mode {mode:04o}); nothing in the toolchain cache runs while it is so: remove it, or point {CACHE_ENV} at a directory of your own",
        path.display()
    )]
    Untrusted {
        /// The path.
        path: PathBuf,
        /// What is wrong with it.
        why: String,
        /// Its owner.
        uid: u32,
        /// Its permission bits.
        mode: u32,
    },
    /// A file system error.
    #[error("the toolchain cache {}: {source}", path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// The OS error.
        source: io::Error,
    },
}

pub(crate) fn io_at(path: &Path) -> impl FnOnce(io::Error) -> CacheError {
    let path = path.to_owned();
    move |source| CacheError::Io { path, source }
}

/// What a cached tree turned out to be.
#[derive(Debug)]
pub(crate) enum Tree {
    /// Not there.
    Missing,
    /// Whole, as its manifest says: fetched from this URL.
    Holds {
        /// The URL its install fetched.
        url: String,
    },
    /// Ours, but not what its manifest says (or without a readable one): why.
    Differs(String),
}

impl Cache {
    /// The cache the environment names, else a private one for this process.
    pub fn from_env() -> Result<Self, CacheError> {
        match named_root() {
            Some(root) => Ok(Self::at(root)),
            None => Self::private_in(&std::env::temp_dir()),
        }
    }

    /// A cache of this process's own under `parent`, removed when the last clone drops.
    fn private_in(parent: &Path) -> Result<Self, CacheError> {
        // A random name created 0700 (mkdir fails if it exists), so nobody put anything there.
        let dir = tempfile::Builder::new()
            .prefix("cell-cache-")
            .permissions(std::fs::Permissions::from_mode(0o700))
            .tempdir_in(parent)
            .map_err(io_at(parent))?;
        Ok(Self::new(dir.path().to_owned(), Some(dir)))
    }

    /// A cache at `root`.
    pub fn at(root: impl Into<PathBuf>) -> Self {
        Self::new(root.into(), None)
    }

    fn new(root: PathBuf, private: Option<tempfile::TempDir>) -> Self {
        Self(Arc::new(Inner {
            root,
            private,
            checked: Mutex::new(BTreeMap::new()),
        }))
    }

    /// The cache root.
    pub fn root(&self) -> &Path {
        &self.0.root
    }

    /// Whether the root is this process's own, gone when it ends (no cache dir was named).
    pub fn is_private(&self) -> bool {
        self.0.private.is_some()
    }

    /// `<root>/toolchains`: the root and it created (0700) when missing, and both checked,
    /// with the directories above the root.
    pub(crate) fn toolchains(&self) -> Result<PathBuf, CacheError> {
        let root = std::path::absolute(&self.0.root).map_err(io_at(&self.0.root))?;
        above_root(&root)?;
        let toolchains = root.join("toolchains");
        for dir in [&root, &toolchains] {
            make_private_dir(dir)?;
            trusted_dir(dir)?;
        }
        Ok(toolchains)
    }

    /// The tree at `tree`, for the digest `sha256`: missing, whole, or differing from its
    /// manifest; an error when it, or anything in it, is not this user's alone.
    pub(crate) fn open_tree(&self, tree: &Path, sha256: &Sha256) -> Result<Tree, CacheError> {
        match fs::symlink_metadata(tree) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Tree::Missing),
            Err(e) => return Err(io_at(tree)(e)),
            Ok(_) => trusted_dir(tree)?,
        }
        if let Some(url) = self.checked().get(tree) {
            return Ok(Tree::Holds { url: url.clone() });
        }
        let tree_state = manifest::check(tree, sha256)?;
        if let Tree::Holds { url } = &tree_state {
            self.remember(tree, url);
        }
        Ok(tree_state)
    }

    /// Notes that `tree` holds: this process checks it no more.
    pub(crate) fn remember(&self, tree: &Path, url: &str) {
        self.checked().insert(tree.to_owned(), url.to_owned());
    }

    fn checked(&self) -> std::sync::MutexGuard<'_, BTreeMap<PathBuf, String>> {
        // A panic elsewhere cannot leave the map half-written: it holds whole entries only.
        self.0
            .checked
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// `CELL_CACHE`, else `$RUNNER_TEMP/cell-cache`, `$XDG_CACHE_HOME/cell`, `~/.cache/cell`.
fn named_root() -> Option<PathBuf> {
    let var = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    var(CACHE_ENV)
        .or_else(|| var("RUNNER_TEMP").map(|t| t.join("cell-cache")))
        .or_else(|| var("XDG_CACHE_HOME").map(|c| c.join("cell")))
        .or_else(|| var("HOME").map(|h| h.join(".cache").join("cell")))
}

/// Moves a tree that differs from its manifest aside and removes it.
pub(crate) fn discard(tree: &Path) -> Result<(), CacheError> {
    let name = tree.file_name().unwrap_or_default().to_string_lossy();
    let aside = tree.with_file_name(format!(".{name}.refused-{}", std::process::id()));
    match fs::rename(tree, &aside) {
        Ok(()) => fs::remove_dir_all(&aside).map_err(io_at(&aside)),
        // Another process of this user removed it first.
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(io_at(tree)(e)),
    }
}

/// Creates `dir` (and any missing parent) with mode 0700 when it is missing.
fn make_private_dir(dir: &Path) -> Result<(), CacheError> {
    match fs::symlink_metadata(dir) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(io_at(dir)),
        Err(e) => Err(io_at(dir)(e)),
    }
}

/// The effective user id of this process.
pub(crate) fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// Refuses `path` unless it belongs to this user or root and, when it is not a link, nobody
/// else may write to it.
pub(crate) fn trusted(path: &Path, meta: &Metadata) -> Result<(), CacheError> {
    let me = euid();
    let why = if meta.uid() != me && meta.uid() != 0 {
        Some(if me == 0 {
            "owned by another user than root".to_owned()
        } else {
            format!("owned by another user than uid {me} or root")
        })
    } else if !meta.file_type().is_symlink() && meta.mode() & 0o022 != 0 {
        Some("writable by group or others".to_owned())
    } else {
        None
    };
    why.map_or(Ok(()), |why| Err(untrusted(path, meta, why)))
}

/// As [`trusted`], for a real directory (a link to one is refused too).
fn trusted_dir(path: &Path) -> Result<(), CacheError> {
    let meta = fs::symlink_metadata(path).map_err(io_at(path))?;
    if meta.file_type().is_symlink() {
        return Err(untrusted(
            path,
            &meta,
            "a symbolic link in the toolchain cache",
        ));
    }
    if !meta.is_dir() {
        return Err(untrusted(path, &meta, "not a directory"));
    }
    trusted(path, &meta)
}

/// The directories above the root, and every link on the way to it: none may let another
/// user rename the root away and put theirs in its place. Each must be owned by this user or
/// root and writable by nobody else, unless sticky (as `/tmp` is: others cannot rename what
/// is ours in it); a link must be this user's or root's, and what it leads to is checked the
/// same way.
fn above_root(root: &Path) -> Result<(), CacheError> {
    for dir in root.ancestors().skip(1) {
        let meta = match fs::symlink_metadata(dir) {
            Ok(m) => m,
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(e) => return Err(io_at(dir)(e)),
        };
        above(dir, &meta)?;
    }
    // Where the links lead: the nearest existing ancestor, resolved.
    let Some(existing) = root.ancestors().skip(1).find(|d| d.exists()) else {
        return Ok(());
    };
    let real = fs::canonicalize(existing).map_err(io_at(existing))?;
    for dir in real.ancestors() {
        let meta = fs::symlink_metadata(dir).map_err(io_at(dir))?;
        above(dir, &meta)?;
    }
    Ok(())
}

/// One directory or link above the root, by [`above_root`]'s rule.
fn above(dir: &Path, meta: &Metadata) -> Result<(), CacheError> {
    let me = euid();
    let why = if meta.uid() != me && meta.uid() != 0 {
        "above the toolchain cache, owned by another user"
    } else if meta.file_type().is_symlink() {
        return Ok(());
    } else if meta.mode() & 0o022 != 0 && meta.mode() & 0o1000 == 0 {
        "above the toolchain cache, writable by group or others without the sticky bit"
    } else {
        return Ok(());
    };
    Err(untrusted(dir, meta, why))
}

fn untrusted(path: &Path, meta: &Metadata, why: impl Into<String>) -> CacheError {
    CacheError::Untrusted {
        path: path.to_owned(),
        why: why.into(),
        uid: meta.uid(),
        mode: meta.mode() & 0o7777,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn digest() -> Sha256 {
        Sha256::parse(&"ab".repeat(32)).unwrap()
    }

    #[test]
    fn a_missing_root_is_created_private() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("a").join("cache");
        let toolchains = Cache::at(&root).toolchains().unwrap();
        for dir in [&root, &toolchains] {
            let mode = fs::metadata(dir).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o700, "{}", dir.display());
        }
    }

    /// Regression: a cache root other users could write to was used as it was.
    #[test]
    fn a_root_others_can_write_to_is_refused_by_name() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("cache");
        fs::create_dir(&root).unwrap();
        fs::set_permissions(&root, fs::Permissions::from_mode(0o777)).unwrap();
        let err = Cache::at(&root).toolchains().unwrap_err().to_string();
        assert!(
            err.contains(&root.display().to_string())
                && err.contains("writable by group or others")
                && err.contains("mode 0777")
                && err.contains("CELL_CACHE"),
            "{err}"
        );
    }

    /// Regression: a cache whose `toolchains` was a link to another user's directory was
    /// followed.
    #[test]
    fn a_symlinked_directory_in_the_cache_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("cache");
        let elsewhere = tmp.path().join("elsewhere");
        fs::create_dir_all(&elsewhere).unwrap();
        fs::create_dir(&root).unwrap();
        std::os::unix::fs::symlink(&elsewhere, root.join("toolchains")).unwrap();
        let err = Cache::at(&root).toolchains().unwrap_err().to_string();
        assert!(err.contains("a symbolic link"), "{err}");
    }

    #[test]
    fn a_root_below_a_directory_anyone_may_rename_in_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let open = tmp.path().join("open");
        fs::create_dir(&open).unwrap();
        fs::set_permissions(&open, fs::Permissions::from_mode(0o777)).unwrap();
        let err = Cache::at(open.join("cache"))
            .toolchains()
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(&open.display().to_string()) && err.contains("sticky"),
            "{err}"
        );
        // With the sticky bit (as /tmp has), nobody else may rename what is ours there.
        fs::set_permissions(&open, fs::Permissions::from_mode(0o1777)).unwrap();
        Cache::at(open.join("cache")).toolchains().unwrap();
    }

    /// Regression: with no cache dir named, every process used `$TMPDIR/cell-cache`, a name
    /// any user could have created first.
    #[test]
    fn no_named_root_is_a_private_dir_gone_with_the_process() {
        let tmp = tempfile::tempdir().unwrap();
        let cache = Cache::private_in(tmp.path()).unwrap();
        let root = cache.root().to_owned();
        assert!(cache.is_private());
        assert_ne!(root, tmp.path().join("cell-cache"));
        let mode = fs::metadata(&root).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        let other = Cache::private_in(tmp.path()).unwrap();
        assert_ne!(other.root(), root, "one per process, never shared");
        let clone = cache.clone();
        drop(cache);
        assert!(root.is_dir(), "a clone keeps it");
        drop(clone);
        assert!(!root.exists(), "removed with the last clone");
    }

    #[test]
    fn a_missing_tree_is_missing_and_a_file_in_its_place_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let cache = Cache::at(tmp.path());
        let toolchains = cache.toolchains().unwrap();
        let tree = toolchains.join(digest().to_string());
        assert!(matches!(
            cache.open_tree(&tree, &digest()).unwrap(),
            Tree::Missing
        ));
        fs::write(&tree, "").unwrap();
        let err = cache.open_tree(&tree, &digest()).unwrap_err().to_string();
        assert!(err.contains("not a directory"), "{err}");
    }
}
