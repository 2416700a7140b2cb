//! The temporary paths of downloads and unpacks under way (a `.cell-fetch-*.part` file, a
//! `.cell-unpack-*` stage, a toolchain's `.<sha>.partial-<pid>` tree), so that a process
//! stopped by SIGTERM or SIGINT removes them before it exits: the binary's signal thread calls
//! [`remove_all`]. A path is registered while it may exist and forgotten when its guard drops.
//!
//! Nothing here runs in signal context: the handler only wakes a thread, and that thread takes
//! the lock like any other. The lock is then kept until the process exits, and every creation
//! of a registered path and every entry an unpack writes passes through it ([`create`],
//! [`checkpoint`]), so nothing new appears under a path once it has been removed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

static PATHS: Mutex<BTreeMap<u64, PathBuf>> = Mutex::new(BTreeMap::new());
static NEXT: AtomicU64 = AtomicU64::new(0);

fn paths() -> MutexGuard<'static, BTreeMap<u64, PathBuf>> {
    // A panic elsewhere while holding it leaves the map as it was: still the right list.
    PATHS.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A registered path; dropping it forgets the path (it is gone, or it is no longer temporary).
#[derive(Debug)]
#[must_use = "the path is forgotten as soon as this is dropped"]
pub struct Registered {
    id: u64,
}

impl Drop for Registered {
    fn drop(&mut self) {
        paths().remove(&self.id);
    }
}

fn insert(map: &mut BTreeMap<u64, PathBuf>, path: PathBuf) -> Registered {
    let id = NEXT.fetch_add(1, Ordering::Relaxed);
    map.insert(id, path);
    Registered { id }
}

/// Registers `path` (which need not exist yet) for removal on a stopping signal.
pub fn register(path: impl Into<PathBuf>) -> Registered {
    insert(&mut paths(), path.into())
}

/// Creates a temporary file or directory with `make` and registers the path `path_of` gives
/// of it, both under the lock: a signal finds it registered, or not created yet.
pub fn create<T, E>(
    make: impl FnOnce() -> Result<T, E>,
    path_of: impl FnOnce(&T) -> &Path,
) -> Result<(T, Registered), E> {
    let mut map = paths();
    let temp = make()?;
    let guard = insert(&mut map, path_of(&temp).to_owned());
    Ok((temp, guard))
}

/// Returns at once, unless the process is stopping: then it never returns (the process exits
/// first). An unpack calls it before each entry.
pub fn checkpoint() {
    drop(paths());
}

/// Removes every registered path and keeps the lock until the process exits. A second pass
/// after a moment removes what an entry already past its [`checkpoint`] wrote meanwhile.
pub fn remove_all() {
    let map = paths();
    for pass in 0..2 {
        if pass > 0 {
            std::thread::sleep(Duration::from_millis(50));
        }
        for path in map.values() {
            remove(path);
        }
    }
    // Held until exit: no registered path is created, and no entry written, from now on.
    std::mem::forget(map);
}

fn remove(path: &Path) {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => {
            let _ = std::fs::remove_dir_all(path);
        }
        Ok(_) => {
            let _ = std::fs::remove_file(path);
        }
        Err(_) => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_guard_forgets_its_path_when_dropped() {
        let tmp = tempfile::tempdir().unwrap();
        let (file, guard) = create(
            || tempfile::NamedTempFile::new_in(tmp.path()),
            tempfile::NamedTempFile::path,
        )
        .unwrap();
        let path = file.path().to_owned();
        assert!(paths().values().any(|p| *p == path));
        drop(guard);
        assert!(!paths().values().any(|p| *p == path));
        let later = register(tmp.path().join("not yet"));
        assert!(paths().values().any(|p| p.ends_with("not yet")));
        drop(later);
    }
}
