//! One collect at a time: an advisory lock (`flock`) taken before a run dir is checked and
//! held until it is written (and, in a git checkout, committed and pushed), so two collects of
//! one run can never both replace its dir. In a checkout the lock file is in the git dir
//! ([`crate::git::lock`]), where no stray file shows in `git status`; outside one it is
//! `<results>/.cell-collect.lock` ([`results`]).
//!
//! The file is opened without following a symbolic link, created 0644, and must be a regular
//! file: a link, fifo or device planted in its place is refused by name, never written through.
//! A waiting collect says whom it waits for (the holder writes its pid into the file) and gives
//! up after [`WAIT`]: writing a run dir takes seconds, a push a minute at worst, so a lock held
//! that long belongs to a stuck collect, and the message says so rather than waiting on.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::{FileExt as _, MetadataExt as _, OpenOptionsExt as _};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The lock file of a results dir outside a git checkout.
pub const RESULTS_LOCK: &str = ".cell-collect.lock";
/// How long a collect waits for another one before it gives up, naming the lock file.
pub const WAIT: Duration = Duration::from_mins(10);
/// How often a waiting collect tries the lock again: soon after it is free, at the cost of a
/// system call.
const POLL: Duration = Duration::from_millis(20);

/// Held while a collect checks, writes (commits and pushes) a run dir; released when dropped.
#[derive(Debug)]
pub struct Lock {
    _file: File,
}

/// A lock that could not be taken.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// The lock file cannot be opened or created (a symbolic link in its place, a file of
    /// another user, no such directory).
    #[error("{}: cannot open the collect lock file ({source}); if it is a symbolic link or another user's file, remove it", path.display())]
    Open {
        /// The lock file.
        path: PathBuf,
        /// What the OS said.
        source: io::Error,
    },
    /// Something other than a regular file is in the lock file's place.
    #[error("{}: the collect lock file is not a regular file ({kind}); remove it", path.display())]
    NotAFile {
        /// The lock file.
        path: PathBuf,
        /// What it is instead.
        kind: &'static str,
    },
    /// Another collect held the lock past [`WAIT`].
    #[error("{}: {holder} held this lock for {} s; try again when it is done, or remove the file if no cell collect is running", path.display(), WAIT.as_secs())]
    Held {
        /// The lock file.
        path: PathBuf,
        /// Who held it, e.g. `another cell collect (pid 4242)`.
        holder: String,
    },
    /// `flock` itself failed.
    #[error("{}: locking the collect lock file: {source}", path.display())]
    Lock {
        /// The lock file.
        path: PathBuf,
        /// What the OS said.
        source: io::Error,
    },
}

/// Takes the lock of a results dir that is not in a git checkout (creating the dir when it is
/// not there yet), waiting for another collect of it up to [`WAIT`] and saying so.
pub fn results(results: &Path) -> Result<Lock, LockError> {
    std::fs::create_dir_all(results).map_err(|source| LockError::Open {
        path: results.to_owned(),
        source,
    })?;
    acquire(&results.join(RESULTS_LOCK), "of this results dir")
}

/// Takes the lock at `path`, waiting up to [`WAIT`] for another collect (`scope` says which
/// collects exclude each other, e.g. `in this checkout`).
pub fn acquire(path: &Path, scope: &str) -> Result<Lock, LockError> {
    let file = open(path)?;
    let start = Instant::now();
    let mut said = false;
    loop {
        match file.try_lock() {
            Ok(()) => {
                mark(&file);
                return Ok(Lock { _file: file });
            }
            Err(std::fs::TryLockError::WouldBlock) if start.elapsed() < WAIT => {
                if !said {
                    eprintln!(
                        "waiting for {} {scope} to finish (lock {})",
                        holder(&file),
                        path.display()
                    );
                    said = true;
                }
                std::thread::sleep(POLL);
            }
            Err(std::fs::TryLockError::WouldBlock) => {
                return Err(LockError::Held {
                    path: path.to_owned(),
                    holder: holder(&file),
                });
            }
            Err(std::fs::TryLockError::Error(source)) => {
                return Err(LockError::Lock {
                    path: path.to_owned(),
                    source,
                });
            }
        }
    }
}

/// Opens (or creates, 0644) the lock file without following a link, and refuses anything but a
/// regular file. `O_NONBLOCK`: a fifo in its place must not hang the open.
fn open(path: &Path) -> Result<File, LockError> {
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o644)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .map_err(|source| LockError::Open {
            path: path.to_owned(),
            source,
        })?;
    let meta = file.metadata().map_err(|source| LockError::Open {
        path: path.to_owned(),
        source,
    })?;
    if meta.is_file() {
        return Ok(file);
    }
    let t = meta.file_type();
    let kind = if t.is_dir() {
        "a directory"
    } else if std::os::unix::fs::FileTypeExt::is_fifo(&t) {
        "a fifo"
    } else {
        "a device or socket"
    };
    Err(LockError::NotAFile {
        path: path.to_owned(),
        kind,
    })
}

/// Writes our pid into the lock file we now hold, so a waiting collect can say whom it waits
/// for. Only into a file with no other name (one link): never through a hard link planted to
/// another file. A failure only costs the pid in a message.
fn mark(file: &File) {
    if file.metadata().is_ok_and(|m| m.nlink() == 1) && file.set_len(0).is_ok() {
        let _ = file.write_all_at(format!("{}\n", std::process::id()).as_bytes(), 0);
    }
}

/// `another cell collect (pid N)` from the pid the holder wrote, or without it.
fn holder(file: &File) -> String {
    let mut buf = [0u8; 16];
    let n = file.read_at(&mut buf, 0).unwrap_or(0);
    let pid = std::str::from_utf8(&buf[..n])
        .ok()
        .and_then(|s| s.trim().parse::<u32>().ok());
    match pid {
        Some(pid) => format!("another cell collect (pid {pid})"),
        None => "another cell collect".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A symbolic link in the lock file's place is not followed: its target is never created.
    #[test]
    fn a_symlink_in_place_of_the_lock_file_is_refused_and_not_followed() {
        let tmp = tempfile::tempdir().unwrap();
        let target = tmp.path().join("elsewhere");
        std::os::unix::fs::symlink(&target, tmp.path().join(RESULTS_LOCK)).unwrap();
        let e = results(tmp.path()).unwrap_err();
        assert!(matches!(e, LockError::Open { .. }), "{e}");
        assert!(e.to_string().contains(RESULTS_LOCK), "{e}");
        assert!(!target.exists());
    }

    /// A fifo in its place is refused by name, and the open does not hang.
    #[test]
    fn a_fifo_in_place_of_the_lock_file_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join(RESULTS_LOCK);
        let status = std::process::Command::new("mkfifo")
            .arg(&path)
            .status()
            .unwrap();
        assert!(status.success());
        let e = results(tmp.path()).unwrap_err();
        assert!(e.to_string().contains("not a regular file (a fifo)"), "{e}");
    }

    /// The lock file is created 0644 (never writable by others) and names its holder.
    #[test]
    fn the_lock_file_is_0644_and_names_its_holder() {
        let tmp = tempfile::tempdir().unwrap();
        let lock = results(&tmp.path().join("results")).unwrap();
        let path = tmp.path().join("results").join(RESULTS_LOCK);
        let meta = std::fs::metadata(&path).unwrap();
        assert_eq!(meta.mode() & 0o022, 0, "{:o}", meta.mode());
        let other = open(&path).unwrap();
        assert_eq!(
            holder(&other),
            format!("another cell collect (pid {})", std::process::id())
        );
        drop(lock);
    }
}
