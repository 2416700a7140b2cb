//! Timing one process: spawned without a shell, pinned, clocked from spawn to `wait4` reap.

use std::fs::File;
use std::io::{Seek as _, SeekFrom};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use crate::capture::{Captured, capture};

/// What one run measured.
#[derive(Clone, Debug, PartialEq)]
pub struct Measured {
    /// Wall seconds, spawn to reap.
    pub wall_s: f64,
    /// User + system CPU seconds of the child.
    pub cpu_s: f64,
    /// User CPU seconds of the child.
    pub user_s: f64,
    /// System CPU seconds of the child (page faults, syscalls).
    pub sys_s: f64,
    /// Peak RSS, KiB.
    pub maxrss_kib: u64,
    /// How it ended.
    pub exit: ExitKind,
    /// Its stdout, compared with the expected answer as it was read back.
    pub stdout: Captured,
    /// Its stderr.
    pub stderr: Captured,
}

/// How a run ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ExitKind {
    /// Exit code.
    Code(i32),
    /// Killed by a signal.
    Signal(i32),
    /// Killed by the watchdog after the timeout.
    TimedOut,
}

/// A timing engine: the pinned CPU, scratch files for output, and a watchdog.
pub struct Engine {
    out: File,
    err: File,
    watchdog: Watchdog,
    pinned: Option<u32>,
    restore: Option<Affinity>,
    #[cfg(target_os = "linux")]
    persona: Option<libc::c_ulong>,
    #[cfg(not(target_os = "linux"))]
    persona: Option<u64>,
}

impl Drop for Engine {
    fn drop(&mut self) {
        // Builds and later jobs in the same process get every CPU back.
        if let Some(a) = self.restore.take() {
            a.apply();
        }
        if let Some(p) = self.persona.take() {
            set_persona(p);
        }
    }
}

/// Timed children start with a fixed address-space layout (`personality(ADDR_NO_RANDOMIZE)`,
/// inherited across fork and exec, like `setarch -R`): with ASLR each run of the same binary
/// gets its own stack, heap and library addresses, and so its own cache and TLB aliasing,
/// which shows up as run-to-run noise that the protocol would otherwise have to average out.
/// Returns the previous persona to restore.
#[cfg(target_os = "linux")]
fn fix_layout(randomize: bool) -> Option<libc::c_ulong> {
    if randomize {
        return None;
    }
    // SAFETY: 0xffffffff queries the persona without changing it.
    let current = unsafe { libc::personality(0xffff_ffff) };
    let current = libc::c_ulong::try_from(current).ok()?;
    let fixed = current | libc::c_ulong::try_from(libc::ADDR_NO_RANDOMIZE).ok()?;
    set_persona(fixed);
    Some(current)
}

#[cfg(target_os = "linux")]
fn set_persona(p: libc::c_ulong) {
    // SAFETY: personality takes a flag word; a failure leaves the persona as it was.
    unsafe { libc::personality(p) };
}

#[cfg(not(target_os = "linux"))]
fn fix_layout(_randomize: bool) -> Option<u64> {
    None
}

#[cfg(not(target_os = "linux"))]
fn set_persona(_p: u64) {}

impl Engine {
    /// Pins the calling thread (and so every child it spawns) to one CPU that is not cpu0,
    /// when the platform allows; returns the engine with the CPU it pinned to.
    pub fn new(scratch: &Path) -> std::io::Result<Self> {
        Self::with_layout(scratch, false)
    }

    /// As [`Engine::new`]; `randomize` keeps the address-space layout randomization that
    /// [`Engine::new`] turns off for timed children (bench/precision measures both).
    pub fn with_layout(scratch: &Path, randomize: bool) -> std::io::Result<Self> {
        let out = tempfile::tempfile_in(scratch)?;
        let err = tempfile::tempfile_in(scratch)?;
        // The watchdog thread starts before pinning so it does not share the timed CPU.
        let watchdog = Watchdog::start();
        let restore = Affinity::current();
        let pinned = pin_self();
        let persona = fix_layout(randomize);
        Ok(Self {
            out,
            err,
            watchdog,
            pinned,
            restore,
            persona,
        })
    }

    /// The CPU timed processes run on.
    pub fn pinned_cpu(&self) -> Option<u32> {
        self.pinned
    }

    /// Runs `argv` once with `cwd`, killing it after `timeout`; its stdout is compared with
    /// `expected` as it is read back, and only a prefix of it and of stderr is kept.
    pub fn run(
        &mut self,
        argv: &[String],
        cwd: &Path,
        timeout: Duration,
        expected: &[u8],
    ) -> std::io::Result<Measured> {
        self.out.set_len(0)?;
        self.out.seek(SeekFrom::Start(0))?;
        self.err.set_len(0)?;
        self.err.seek(SeekFrom::Start(0))?;
        let mut cmd = Command::new(&argv[0]);
        cmd.args(&argv[1..])
            .current_dir(cwd)
            .stdin(Stdio::null())
            .stdout(self.out.try_clone()?)
            .stderr(self.err.try_clone()?);

        let start = Instant::now();
        let child = cmd.spawn()?;
        let pid = libc::pid_t::try_from(child.id()).expect("pids fit pid_t");
        self.watchdog.arm(pid, start + timeout);
        let (status, usage) = wait4(pid)?;
        let wall = start.elapsed();
        let timed_out = self.watchdog.disarm();
        // The child is reaped; dropping the handle does not wait again.
        drop(child);

        let exit = if timed_out {
            ExitKind::TimedOut
        } else if libc::WIFEXITED(status) {
            ExitKind::Code(libc::WEXITSTATUS(status))
        } else {
            ExitKind::Signal(libc::WTERMSIG(status))
        };
        self.out.seek(SeekFrom::Start(0))?;
        let stdout = capture(&self.out, expected)?;
        self.err.seek(SeekFrom::Start(0))?;
        let stderr = capture(&self.err, b"")?;
        let (user_s, sys_s) = (tv(usage.ru_utime), tv(usage.ru_stime));
        Ok(Measured {
            wall_s: wall.as_secs_f64(),
            cpu_s: user_s + sys_s,
            user_s,
            sys_s,
            maxrss_kib: maxrss_kib(usage.ru_maxrss),
            exit,
            stdout,
            stderr,
        })
    }
}

fn tv(t: libc::timeval) -> f64 {
    t.tv_sec as f64 + t.tv_usec as f64 * 1e-6
}

/// `ru_maxrss` is KiB on Linux and bytes on macOS.
fn maxrss_kib(v: libc::c_long) -> u64 {
    let v = u64::try_from(v).unwrap_or(0);
    if cfg!(target_os = "macos") {
        v / 1024
    } else {
        v
    }
}

fn wait4(pid: libc::pid_t) -> std::io::Result<(libc::c_int, libc::rusage)> {
    let mut status: libc::c_int = 0;
    // SAFETY: rusage is plain data; wait4 writes it and status for our own child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        let r = unsafe { libc::wait4(pid, &raw mut status, 0, &raw mut usage) };
        if r == pid {
            return Ok((status, usage));
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// The calling thread's CPU set, to put back when timing ends.
#[cfg(target_os = "linux")]
struct Affinity(libc::cpu_set_t);

#[cfg(target_os = "linux")]
impl Affinity {
    fn current() -> Option<Self> {
        // SAFETY: cpu_set_t is plain data filled by the kernel.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            (libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &raw mut set) == 0)
                .then_some(Self(set))
        }
    }

    fn apply(&self) {
        // SAFETY: a set the kernel gave us for this thread.
        unsafe {
            libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &raw const self.0);
        }
    }
}

#[cfg(not(target_os = "linux"))]
struct Affinity;

#[cfg(not(target_os = "linux"))]
impl Affinity {
    fn current() -> Option<Self> {
        None
    }

    fn apply(&self) {}
}

/// The CPUs this thread may run on, ascending (empty when the OS does not say).
#[cfg(target_os = "linux")]
pub(crate) fn allowed_cpus() -> Vec<usize> {
    // SAFETY: cpu_set_t is plain data filled by the kernel and read with the libc macros.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &raw mut set) != 0 {
            return Vec::new();
        }
        (0..libc::CPU_SETSIZE as usize)
            .filter(|&c| libc::CPU_ISSET(c, &set))
            .collect()
    }
}

/// The CPUs this thread may run on (not known off Linux).
#[cfg(not(target_os = "linux"))]
pub(crate) fn allowed_cpus() -> Vec<usize> {
    Vec::new()
}

#[cfg(target_os = "linux")]
fn pin_self() -> Option<u32> {
    let allowed = allowed_cpus();
    // The highest allowed CPU other than cpu0, which takes most interrupts and housekeeping.
    let cpu = allowed
        .iter()
        .rev()
        .copied()
        .find(|&c| c != 0)
        .or_else(|| allowed.first().copied())?;
    // SAFETY: cpu_set_t is plain data manipulated only through the libc macros.
    unsafe {
        let mut one: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut one);
        (libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &raw const one) == 0)
            .then(|| u32::try_from(cpu).unwrap_or(u32::MAX))
    }
}

#[cfg(not(target_os = "linux"))]
fn pin_self() -> Option<u32> {
    None
}

/// Kills a timed process that outlives its deadline.
struct Watchdog {
    shared: Arc<(Mutex<WatchState>, Condvar)>,
}

#[derive(Default)]
struct WatchState {
    armed: Option<(libc::pid_t, Instant)>,
    fired: bool,
}

impl Watchdog {
    fn start() -> Self {
        let shared = Arc::new((Mutex::new(WatchState::default()), Condvar::new()));
        let s = Arc::clone(&shared);
        std::thread::spawn(move || {
            let (lock, cv) = &*s;
            let mut st = lock.lock().expect("watchdog lock");
            loop {
                match st.armed {
                    None => st = cv.wait(st).expect("watchdog lock"),
                    Some((pid, deadline)) => {
                        let now = Instant::now();
                        if now >= deadline {
                            // SAFETY: the pid is our unreaped child while armed (disarm takes the lock).
                            unsafe { libc::kill(pid, libc::SIGKILL) };
                            st.fired = true;
                            st.armed = None;
                        } else {
                            st = cv
                                .wait_timeout(st, deadline - now)
                                .expect("watchdog lock")
                                .0;
                        }
                    }
                }
            }
        });
        Self { shared }
    }

    fn arm(&self, pid: libc::pid_t, deadline: Instant) {
        let (lock, cv) = &*self.shared;
        let mut st = lock.lock().expect("watchdog lock");
        st.armed = Some((pid, deadline));
        st.fired = false;
        cv.notify_one();
    }

    /// Disarms; true when the watchdog had fired.
    fn disarm(&self) -> bool {
        let (lock, _) = &*self.shared;
        let mut st = lock.lock().expect("watchdog lock");
        st.armed = None;
        std::mem::take(&mut st.fired)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_a_real_process_and_reads_its_stdout() {
        let dir = tempfile::tempdir().unwrap();
        let mut e = Engine::new(dir.path()).unwrap();
        let m = e
            .run(
                &["/bin/echo".into(), "hi".into()],
                dir.path(),
                Duration::from_secs(10),
                b"hi\n",
            )
            .unwrap();
        assert!(m.stdout.matches, "{m:?}");
        assert_eq!(m.stdout.prefix, b"hi\n");
        assert_eq!(m.stderr.bytes, 0);
        assert_eq!(m.exit, ExitKind::Code(0));
        assert!(m.wall_s > 0.0 && m.maxrss_kib > 0);
    }

    #[test]
    fn cpu_time_counts_the_child_busy_loop() {
        let dir = tempfile::tempdir().unwrap();
        let mut e = Engine::new(dir.path()).unwrap();
        let argv: Vec<String> = [
            "/bin/sh",
            "-c",
            "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done",
        ]
        .map(String::from)
        .to_vec();
        let m = e
            .run(&argv, dir.path(), Duration::from_mins(1), b"")
            .unwrap();
        assert!(m.cpu_s > 0.01, "{m:?}");
        assert!(m.cpu_s <= m.wall_s * 1.05 + 0.01, "{m:?}");
    }

    #[test]
    fn watchdog_kills_a_hung_process() {
        let dir = tempfile::tempdir().unwrap();
        let mut e = Engine::new(dir.path()).unwrap();
        let m = e
            .run(
                &["/bin/sleep".into(), "30".into()],
                dir.path(),
                Duration::from_millis(200),
                b"",
            )
            .unwrap();
        assert_eq!(m.exit, ExitKind::TimedOut);
        assert!(m.wall_s < 10.0);
        // The engine is usable again afterwards.
        let m = e
            .run(
                &["/bin/true".into()],
                dir.path(),
                Duration::from_secs(10),
                b"",
            )
            .unwrap();
        assert_eq!(m.exit, ExitKind::Code(0));
    }

    #[test]
    fn dropping_the_engine_gives_the_cpus_back() {
        let before = std::thread::available_parallelism().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let e = Engine::new(dir.path()).unwrap();
        if e.pinned_cpu().is_some() {
            assert_eq!(std::thread::available_parallelism().unwrap().get(), 1);
        }
        drop(e);
        assert_eq!(std::thread::available_parallelism().unwrap(), before);
    }

    #[test]
    fn exit_codes_and_signals() {
        let dir = tempfile::tempdir().unwrap();
        let mut e = Engine::new(dir.path()).unwrap();
        let m = e
            .run(
                &["/bin/sh".into(), "-c".into(), "exit 3".into()],
                dir.path(),
                Duration::from_secs(10),
                b"",
            )
            .unwrap();
        assert_eq!(m.exit, ExitKind::Code(3));
        let m = e
            .run(
                &["/bin/sh".into(), "-c".into(), "kill -9 $$".into()],
                dir.path(),
                Duration::from_secs(10),
                b"",
            )
            .unwrap();
        assert_eq!(m.exit, ExitKind::Signal(9));
    }
}
