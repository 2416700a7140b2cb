//! One CPU per timer: a lock file per CPU, so two `cell` processes on one machine (two runner
//! services on a self-hosted box, a local run beside a CI job) never time on the same CPU.
//!
//! A lock is `flock(LOCK_EX|LOCK_NB)` on `<dir>/cpu<N>.lock`, held for as long as the
//! [`Lease`] lives and dropped by the kernel if the process dies, so a crashed job never
//! leaves a CPU locked (std opens files close-on-exec, so no timed child inherits a lock and
//! outlives it holding one). Locking never fails a job: when the lock dir cannot be used, timing
//! goes on without the lock and the results say so.
//!
//! Nothing in the lock dir is believed because of its name. The dir must be a real directory
//! (never a link) owned by this user or root, and writable by nobody else unless it is root's
//! and sticky, like `/tmp`: then several users share it. Lock files are opened read-only
//! (`flock` needs no more), relative to the checked directory, without following a link and
//! without waiting on a fifo, then must be regular files with one link; in a dir of this user
//! or root alone they must be this user's or root's too, in a root-owned sticky dir anyone's
//! (another user's runner service made it; all it can do is hold its lock). Anything else is
//! refused by name, and the lease times without locks with the reason recorded.

use std::ffi::CString;
use std::fs::{File, Metadata, OpenOptions, Permissions, TryLockError};
use std::io;
use std::os::fd::{AsRawFd as _, FromRawFd as _, OwnedFd};
use std::os::unix::fs::{
    DirBuilderExt as _, MetadataExt as _, OpenOptionsExt as _, PermissionsExt as _,
};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use cell_schema::{TimingCpus, round_time};

/// The environment variable that names another lock dir.
pub const DIR_ENV: &str = "CELL_CPU_LOCKS";

/// The lock dir unless [`DIR_ENV`] names another. A fixed path, not `TMPDIR` or
/// `RUNNER_TEMP`: two runner services on one machine differ in those.
pub const DEFAULT_DIR: &str = "/tmp/cell-cpus";

/// How often a lease that is short of CPUs tries again.
const POLL: Duration = Duration::from_millis(100);

/// The lock dir: [`DIR_ENV`] when set and not empty, else [`DEFAULT_DIR`].
pub fn lock_dir() -> PathBuf {
    std::env::var_os(DIR_ENV)
        .filter(|d| !d.is_empty())
        .map_or_else(|| PathBuf::from(DEFAULT_DIR), PathBuf::from)
}

/// The CPUs this thread may run on, ascending (empty when the OS does not say).
#[cfg(target_os = "linux")]
pub fn allowed() -> Vec<u32> {
    // SAFETY: cpu_set_t is plain data filled by the kernel and read with the libc macros.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &raw mut set) != 0 {
            return Vec::new();
        }
        (0..libc::CPU_SETSIZE as usize)
            .filter(|&c| libc::CPU_ISSET(c, &set))
            .filter_map(|c| u32::try_from(c).ok())
            .collect()
    }
}

/// The CPUs this thread may run on (not known off Linux).
#[cfg(not(target_os = "linux"))]
pub fn allowed() -> Vec<u32> {
    Vec::new()
}

/// The order CPUs are taken in: every allowed CPU but cpu0, highest first, then cpu0 as the
/// last resort (it takes most interrupts and housekeeping).
pub fn preference(allowed: &[u32]) -> Vec<u32> {
    let mut order: Vec<u32> = allowed.iter().copied().filter(|&c| c != 0).collect();
    order.sort_unstable_by(|a, b| b.cmp(a));
    order.dedup();
    if allowed.contains(&0) {
        order.push(0);
    }
    order
}

/// CPUs held for timing, and how they were come by.
#[derive(Debug)]
pub struct Lease {
    cpus: Vec<u32>,
    waited: Duration,
    shared: bool,
    lock_error: Option<String>,
    /// The locked CPUs' lock files: closing them (when the lease drops) releases the locks.
    _held: Vec<File>,
}

impl Lease {
    /// Takes `want` CPUs of `allowed` in [`preference`] order, each locked in `dir`. While
    /// fewer are free it polls every 100 ms for at most `max_wait` (zero: it tries once);
    /// when the wait runs out it keeps the locks it could get and times on the preferred
    /// CPUs for the rest without their locks (`shared`). Never fails: a lock dir that
    /// cannot be used means timing without locks, recorded in [`Lease::lock_error`].
    pub fn take(dir: &Path, allowed: &[u32], want: usize, max_wait: Duration) -> Self {
        let order = preference(allowed);
        let want = want.min(order.len());
        let start = Instant::now();
        if want == 0 {
            return Self::unlocked(Vec::new(), start, None);
        }
        let files = match open_locks(dir, &order) {
            Ok(f) => f,
            Err(e) => {
                let why = format!("lock dir {}: {e}", dir.display());
                return Self::unlocked(order[..want].to_vec(), start, Some(why));
            }
        };
        let deadline = start + max_wait;
        loop {
            let held = match try_lock(&files, want) {
                Ok(h) => h,
                Err(e) => {
                    let why = format!("locking in {}: {e}", dir.display());
                    return Self::unlocked(order[..want].to_vec(), start, Some(why));
                }
            };
            let now = Instant::now();
            if held.len() == want || now >= deadline {
                return Self::settle(&order, files, &held, want, start);
            }
            // Let go of a partial set while waiting: two leases of two CPUs each holding one
            // would otherwise wait for each other until both time without locks.
            for &i in &held {
                let _ = files[i].unlock();
            }
            std::thread::sleep(POLL.min(deadline - now));
        }
    }

    /// No locks: the preferred CPUs, timed on as they are.
    fn unlocked(cpus: Vec<u32>, start: Instant, lock_error: Option<String>) -> Self {
        Self {
            shared: !cpus.is_empty(),
            cpus,
            waited: start.elapsed(),
            lock_error,
            _held: Vec::new(),
        }
    }

    /// The held CPUs, and when they are fewer than `want` the most preferred others, shared.
    fn settle(
        order: &[u32],
        files: Vec<File>,
        held: &[usize],
        want: usize,
        start: Instant,
    ) -> Self {
        let mut picked = held.to_vec();
        for i in 0..order.len() {
            if picked.len() == want {
                break;
            }
            if !picked.contains(&i) {
                picked.push(i);
            }
        }
        picked.sort_unstable();
        let kept = files
            .into_iter()
            .enumerate()
            .filter_map(|(i, f)| held.contains(&i).then_some(f))
            .collect();
        Self {
            cpus: picked.iter().map(|&i| order[i]).collect(),
            waited: start.elapsed(),
            shared: held.len() < want,
            lock_error: None,
            _held: kept,
        }
    }

    /// The CPUs, in preference order.
    pub fn cpus(&self) -> &[u32] {
        &self.cpus
    }

    /// How long taking them took.
    pub fn waited(&self) -> Duration {
        self.waited
    }

    /// cpu0 is among them.
    pub fn last_resort(&self) -> bool {
        self.cpus.contains(&0)
    }

    /// At least one of them is not locked: another process may time on it too.
    pub fn shared(&self) -> bool {
        self.shared
    }

    /// Why nothing could be locked, when the lock dir could not be used.
    pub fn lock_error(&self) -> Option<&str> {
        self.lock_error.as_deref()
    }

    /// What results record of it.
    pub fn record(&self) -> TimingCpus {
        TimingCpus {
            cpus: self.cpus.clone(),
            waited_s: round_time(self.waited.as_secs_f64()),
            last_resort: self.last_resort(),
            shared: self.shared,
            lock_error: self.lock_error.clone(),
        }
    }
}

/// Opens the lock dir (creating it when missing) and one lock file per CPU of `order`, each
/// checked as the module says.
fn open_locks(dir: &Path, order: &[u32]) -> io::Result<Vec<File>> {
    let dir = open_dir(dir)?;
    let shared = check_dir(&dir.metadata()?)?;
    order
        .iter()
        .map(|c| open_lock(&dir, &format!("cpu{c}.lock"), shared))
        .collect()
}

/// The mode a new lock dir gets: root's is shared by every user, as `/tmp` is (root-owned
/// and sticky, so nobody removes or replaces another's file); anyone else's is theirs alone,
/// since a sticky dir of a user other than root is still that user's to empty.
fn new_dir_mode() -> u32 {
    if crate::cache::euid() == 0 {
        0o1777
    } else {
        0o755
    }
}

/// The lock dir, created when missing, opened without following a link.
fn open_dir(dir: &Path) -> io::Result<File> {
    if let Some(parent) = dir.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let created = match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => true,
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => false,
        Err(e) => return Err(e),
    };
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(dir)
        .map_err(|e| match e.raw_os_error() {
            // Linux says ENOTDIR for a link with O_DIRECTORY, others ELOOP: say which it is.
            Some(libc::ELOOP | libc::ENOTDIR) => io::Error::other(
                if std::fs::symlink_metadata(dir).is_ok_and(|m| m.file_type().is_symlink()) {
                    "a symbolic link, not followed"
                } else {
                    "not a directory"
                },
            ),
            _ => e,
        })?;
    if created {
        // The umask trimmed the mode mkdir was given; set it whole, on what was opened.
        file.set_permissions(Permissions::from_mode(new_dir_mode()))?;
    }
    Ok(file)
}

/// Whether the opened lock dir may be used, and whether it is shared (root's and sticky).
fn check_dir(meta: &Metadata) -> io::Result<bool> {
    let (me, uid, mode) = (crate::cache::euid(), meta.uid(), meta.mode() & 0o7777);
    if uid != me && uid != 0 {
        return Err(io::Error::other(format!(
            "owned by uid {uid}, not by this user (uid {me}) or root (mode {mode:04o})"
        )));
    }
    if mode & 0o022 == 0 {
        return Ok(false);
    }
    if uid == 0 && mode & 0o1000 != 0 {
        return Ok(true);
    }
    Err(io::Error::other(format!(
        "writable by others (mode {mode:04o}) without being root's and sticky"
    )))
}

/// Opens `name` in `dir` read-only, creating it when missing, never through a link, and
/// checks what was opened.
fn open_lock(dir: &File, name: &str, shared: bool) -> io::Result<File> {
    const OPEN: libc::c_int =
        libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC;
    let file = match open_at(dir, name, OPEN, 0) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            match open_at(dir, name, OPEN | libc::O_CREAT | libc::O_EXCL, 0o644) {
                // Readable by every user of a shared dir whatever the umask.
                Ok(f) => f.set_permissions(Permissions::from_mode(0o644)).map(|()| f),
                // Another process created it first.
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => open_at(dir, name, OPEN, 0),
                Err(e) => Err(e),
            }
        }
        other => other,
    }
    .map_err(|e| match e.raw_os_error() {
        Some(libc::ELOOP) => io::Error::other(format!("{name}: a symbolic link, not followed")),
        _ => io::Error::new(e.kind(), format!("{name}: {e}")),
    })?;
    check_lock(&file.metadata()?, shared)
        .map_err(|why| io::Error::other(format!("{name}: {why}")))?;
    Ok(file)
}

/// Why an opened lock file may not be used, if it may not.
fn check_lock(meta: &Metadata, shared: bool) -> Result<(), String> {
    let (me, uid) = (crate::cache::euid(), meta.uid());
    if !meta.is_file() {
        let t = meta.file_type();
        return Err(if t.is_dir() {
            "a directory, not a lock file".to_owned()
        } else {
            "not a regular file (a fifo, socket or device)".to_owned()
        });
    }
    if meta.nlink() != 1 {
        return Err(format!("a hard link ({} links)", meta.nlink()));
    }
    if !shared && uid != me && uid != 0 {
        return Err(format!(
            "owned by uid {uid}, not by this user (uid {me}) or root, in a dir that is not shared"
        ));
    }
    Ok(())
}

/// `openat(2)`: `name` relative to the open directory `dir`, so the directory checked is the
/// one used even if its path is changed meanwhile.
fn open_at(dir: &File, name: &str, flags: libc::c_int, mode: libc::mode_t) -> io::Result<File> {
    let c = CString::new(name).map_err(io::Error::other)?;
    // SAFETY: `dir` is an open descriptor and `c` a NUL-terminated string, both alive for the
    // call; the mode is passed promoted to an unsigned int, as the variadic call expects.
    let fd = unsafe { libc::openat(dir.as_raw_fd(), c.as_ptr(), flags, libc::c_uint::from(mode)) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a non-negative result is a new descriptor nothing else owns.
    Ok(File::from(unsafe { OwnedFd::from_raw_fd(fd) }))
}

/// One pass over `files` in preference order, locking free ones until `want` are held;
/// returns the indices held. A lock is per open file description, so two leases of one
/// process contend like two processes do.
fn try_lock(files: &[File], want: usize) -> io::Result<Vec<usize>> {
    let mut held = Vec::with_capacity(want);
    for (i, f) in files.iter().enumerate() {
        if held.len() == want {
            break;
        }
        match f.try_lock() {
            Ok(()) => held.push(i),
            Err(TryLockError::WouldBlock) => {}
            Err(TryLockError::Error(e)) => {
                for &j in &held {
                    let _ = files[j].unlock();
                }
                return Err(e);
            }
        }
    }
    Ok(held)
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: Duration = Duration::ZERO;

    #[test]
    fn two_leases_from_one_dir_get_different_cpus() {
        let dir = tempfile::tempdir().unwrap();
        let a = Lease::take(dir.path(), &[0, 1, 2, 3], 1, NOW);
        let b = Lease::take(dir.path(), &[0, 1, 2, 3], 1, NOW);
        assert_eq!(a.cpus(), [3]);
        assert_eq!(b.cpus(), [2]);
        for l in [&a, &b] {
            assert!(
                !l.shared() && !l.last_resort() && l.lock_error().is_none(),
                "{l:?}"
            );
        }
    }

    #[test]
    fn cpu0_is_the_last_resort() {
        let dir = tempfile::tempdir().unwrap();
        let leases: Vec<Lease> = (0..3)
            .map(|_| Lease::take(dir.path(), &[2, 0, 1], 1, NOW))
            .collect();
        let cpus: Vec<&[u32]> = leases.iter().map(Lease::cpus).collect();
        assert_eq!(cpus, [[2], [1], [0]]);
        assert!(!leases[1].last_resort());
        assert!(leases[2].last_resort() && !leases[2].shared());
        assert!(leases[2].record().last_resort);
        // A machine that allows cpu0 alone times there, locked.
        let only = tempfile::tempdir().unwrap();
        let l = Lease::take(only.path(), &[0], 1, NOW);
        assert_eq!(l.cpus(), [0]);
        assert!(!l.shared());
    }

    #[test]
    fn a_lease_short_of_cpus_waits_its_bound_then_times_shared() {
        let dir = tempfile::tempdir().unwrap();
        let holder = Lease::take(dir.path(), &[0, 1], 2, NOW);
        assert_eq!(holder.cpus(), [1, 0]);
        let bound = Duration::from_millis(300);
        let late = Lease::take(dir.path(), &[0, 1], 1, bound);
        assert_eq!(late.cpus(), [1], "the preferred CPU, unlocked");
        assert!(late.shared() && late.lock_error().is_none(), "{late:?}");
        assert!(late.waited() >= bound, "{late:?}");
        let r = late.record();
        assert!(r.shared && r.waited_s >= 0.3, "{r:?}");
        // CPU_WAIT_S=0: one try, no wait.
        let at_once = Lease::take(dir.path(), &[0, 1], 1, NOW);
        assert!(at_once.shared() && at_once.waited() < bound, "{at_once:?}");
    }

    #[test]
    fn a_waiting_lease_takes_the_cpu_once_it_is_released() {
        let dir = tempfile::tempdir().unwrap();
        let holder = Lease::take(dir.path(), &[1], 1, NOW);
        let release = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(250));
            drop(holder);
        });
        let l = Lease::take(dir.path(), &[1], 1, Duration::from_mins(1));
        release.join().unwrap();
        assert_eq!(l.cpus(), [1]);
        assert!(!l.shared(), "{l:?}");
        assert!(l.waited() >= Duration::from_millis(200), "{l:?}");
    }

    #[test]
    fn want_two_takes_the_two_preferred_free_cpus() {
        let dir = tempfile::tempdir().unwrap();
        let first = Lease::take(dir.path(), &[0, 1, 2, 3], 2, NOW);
        let second = Lease::take(dir.path(), &[0, 1, 2, 3], 2, NOW);
        assert_eq!(first.cpus(), [3, 2]);
        assert_eq!(second.cpus(), [1, 0]);
        assert!(!first.shared() && !second.shared() && second.last_resort());
        // On two CPUs a pair is both of them.
        let two = tempfile::tempdir().unwrap();
        let pair = Lease::take(two.path(), &[0, 1], 2, NOW);
        assert_eq!(pair.cpus(), [1, 0]);
        // A third pair finds one free CPU: it keeps that one locked and shares the other.
        let third = Lease::take(dir.path(), &[0, 1, 2, 3, 4], 2, NOW);
        assert_eq!(third.cpus(), [4, 3], "{third:?}");
        assert!(third.shared());
        drop(third);
        let after = Lease::take(dir.path(), &[0, 1, 2, 3, 4], 1, NOW);
        assert_eq!(
            after.cpus(),
            [4],
            "the shared pair held cpu4's lock, and dropped it"
        );
        // Two CPUs asked of one: the one there is.
        let one = tempfile::tempdir().unwrap();
        assert_eq!(Lease::take(one.path(), &[5], 2, NOW).cpus(), [5]);
    }

    #[test]
    fn dropping_a_lease_releases_its_cpus() {
        let dir = tempfile::tempdir().unwrap();
        let a = Lease::take(dir.path(), &[0, 1], 1, NOW);
        assert_eq!(a.cpus(), [1]);
        drop(a);
        let b = Lease::take(dir.path(), &[0, 1], 1, NOW);
        assert_eq!(b.cpus(), [1]);
        assert!(!b.shared());
    }

    #[test]
    fn an_unusable_lock_dir_is_recorded_not_fatal() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("not-a-dir");
        std::fs::write(&file, "").unwrap();
        for dir in [file.clone(), file.join("below")] {
            let l = Lease::take(&dir, &[0, 1, 2], 1, Duration::from_mins(1));
            assert_eq!(l.cpus(), [2], "the preferred CPU all the same");
            assert!(l.shared(), "{l:?}");
            let why = l.lock_error().expect("recorded");
            assert!(why.contains(&dir.display().to_string()), "{why}");
            assert!(
                l.waited() < Duration::from_secs(30),
                "it does not wait: {l:?}"
            );
            assert_eq!(l.record().lock_error.as_deref(), Some(why));
        }
    }

    #[test]
    fn a_new_lock_dir_is_shared_when_root_makes_it_and_private_otherwise() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("deep").join("cpus");
        let l = Lease::take(&dir, &[0, 1], 1, NOW);
        assert!(l.lock_error().is_none(), "{l:?}");
        let mode = std::fs::metadata(&dir).unwrap().permissions().mode();
        let want = if crate::cache::euid() == 0 {
            0o1777
        } else {
            0o755
        };
        assert_eq!(mode & 0o7777, want);
        for f in ["cpu1.lock", "cpu0.lock"] {
            let meta = std::fs::symlink_metadata(dir.join(f)).unwrap();
            assert!(meta.is_file(), "{f}");
            assert_eq!(
                meta.mode() & 0o777,
                0o644,
                "{f}: readable by the dir's other users"
            );
        }
    }

    #[test]
    fn a_read_only_descriptor_holds_the_lock_like_any_other() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("cpu1.lock");
        std::fs::write(&path, "").unwrap();
        let ro = File::open(&path).unwrap();
        ro.try_lock().unwrap();
        let l = Lease::take(tmp.path(), &[1], 1, NOW);
        assert!(l.shared(), "the read-only lock is held: {l:?}");
        drop(ro);
        let l = Lease::take(tmp.path(), &[1], 1, NOW);
        assert!(!l.shared(), "{l:?}");
    }

    #[test]
    fn preference_is_highest_first_then_cpu0() {
        assert_eq!(preference(&[0, 1, 2, 3]), [3, 2, 1, 0]);
        assert_eq!(preference(&[3, 1]), [3, 1]);
        assert_eq!(preference(&[0]), [0]);
        assert!(preference(&[]).is_empty());
        let real = preference(&allowed());
        if real.len() > 1 && real.contains(&0) {
            assert_eq!(real.last(), Some(&0));
        }
    }

    #[test]
    fn no_cpus_known_is_an_empty_lease_without_locks() {
        let dir = tempfile::tempdir().unwrap();
        let l = Lease::take(dir.path(), &[], 1, Duration::from_mins(1));
        assert!(l.cpus().is_empty() && !l.shared() && l.lock_error().is_none());
    }

    /// A lease that had to time without locks: the reason, which names `dir` and has `want`.
    fn refused(dir: &Path, want: &str) -> String {
        let l = Lease::take(dir, &[0, 1], 1, Duration::from_mins(1));
        assert!(l.shared() && l.cpus() == [1], "{l:?}");
        let why = l.record().lock_error.expect("the reason is recorded");
        assert!(
            why.contains(&dir.display().to_string()) && why.contains(want),
            "{why}"
        );
        why
    }

    /// Tests run as root here; ownership cases need it to hand a file to `nobody`.
    fn as_root() -> bool {
        let root = crate::cache::euid() == 0;
        if !root {
            println!("skipped: only root can give a file to another user");
        }
        root
    }

    const NOBODY: u32 = 65534;

    /// Regression: a lock dir that was a link to a root-only directory was followed, and a
    /// root job created its lock files there.
    #[test]
    fn a_lock_dir_that_is_a_symlink_is_not_followed() {
        let tmp = tempfile::tempdir().unwrap();
        let private = tmp.path().join("root-only");
        std::fs::create_dir(&private).unwrap();
        std::fs::set_permissions(&private, Permissions::from_mode(0o700)).unwrap();
        let link = tmp.path().join("cell-cpus");
        std::os::unix::fs::symlink(&private, &link).unwrap();
        refused(&link, "a symbolic link, not followed");
        assert_eq!(
            std::fs::read_dir(&private).unwrap().count(),
            0,
            "nothing created there"
        );
    }

    /// Regression: `/tmp/cell-cpus` made by another user was used as it was.
    #[test]
    fn a_lock_dir_of_another_user_or_writable_by_others_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("cell-cpus");
        std::fs::create_dir(&dir).unwrap();
        std::fs::set_permissions(&dir, Permissions::from_mode(0o777)).unwrap();
        refused(&dir, "writable by others (mode 0777)");
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
        // Sticky is not enough when the dir is not root's.
        if crate::cache::euid() != 0 {
            std::fs::set_permissions(&dir, Permissions::from_mode(0o1777)).unwrap();
            refused(&dir, "without being root's and sticky");
        }
        if as_root() {
            std::fs::set_permissions(&dir, Permissions::from_mode(0o755)).unwrap();
            std::os::unix::fs::chown(&dir, Some(NOBODY), Some(NOBODY)).unwrap();
            refused(&dir, "owned by uid 65534");
            assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
        }
    }

    /// Regression: `cpuN.lock` was opened `O_CREAT` through a link, creating its target.
    #[test]
    fn a_lock_file_that_is_a_symlink_is_not_followed_and_creates_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        let private = tmp.path().join("root-only");
        std::fs::create_dir(&private).unwrap();
        std::fs::set_permissions(&private, Permissions::from_mode(0o700)).unwrap();
        let dir = tmp.path().join("locks");
        std::fs::create_dir(&dir).unwrap();
        let target = private.join("planted");
        std::os::unix::fs::symlink(&target, dir.join("cpu1.lock")).unwrap();
        refused(&dir, "cpu1.lock: a symbolic link, not followed");
        assert!(!target.exists(), "the link's target was created");
        // A link to a file that exists is not followed either.
        std::fs::write(&target, "keep").unwrap();
        refused(&dir, "cpu1.lock: a symbolic link");
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep");
    }

    #[test]
    fn a_fifo_a_directory_or_a_hard_link_in_a_lock_files_place_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let fifo = tmp.path().join("fifo");
        std::fs::create_dir(&fifo).unwrap();
        let path =
            std::ffi::CString::new(fifo.join("cpu1.lock").as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a NUL-terminated path alive for the call.
        assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o644) }, 0);
        refused(&fifo, "cpu1.lock: not a regular file");
        let dir = tmp.path().join("dir");
        std::fs::create_dir_all(dir.join("cpu1.lock")).unwrap();
        refused(&dir, "cpu1.lock: a directory");
        let linked = tmp.path().join("linked");
        std::fs::create_dir(&linked).unwrap();
        std::fs::write(tmp.path().join("elsewhere"), "").unwrap();
        std::fs::hard_link(tmp.path().join("elsewhere"), linked.join("cpu1.lock")).unwrap();
        refused(&linked, "cpu1.lock: a hard link (2 links)");
    }

    /// Who may own a lock file: in a dir of this user's alone, this user or root; in a
    /// root-owned sticky dir shared by several users' services, anyone.
    #[test]
    fn another_users_lock_file_is_used_only_in_a_shared_dir() {
        if !as_root() {
            return;
        }
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("locks");
        std::fs::create_dir(&dir).unwrap();
        let theirs = dir.join("cpu1.lock");
        std::fs::write(&theirs, "").unwrap();
        std::os::unix::fs::chown(&theirs, Some(NOBODY), Some(NOBODY)).unwrap();
        refused(&dir, "cpu1.lock: owned by uid 65534");
        std::fs::set_permissions(&dir, Permissions::from_mode(0o1777)).unwrap();
        let l = Lease::take(&dir, &[0, 1], 1, NOW);
        assert!(l.lock_error().is_none() && !l.shared(), "{l:?}");
        assert_eq!(l.cpus(), [1]);
    }
}
