//! Timing processes: spawned without a shell, pinned to CPUs no other `cell` process is
//! timing on (see [`crate::cpus`]), clocked from spawn to `wait4` reap; one at a time, or two
//! at once on two CPUs ([`Engine::run_pair`]).

use std::fs::File;
use std::io::{Seek as _, SeekFrom};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Barrier, Condvar, Mutex};
use std::time::{Duration, Instant};

use cell_schema::TimingCpus;

use crate::capture::{Captured, capture};
use crate::cpus::{self, Lease};
use crate::suites::procfs;

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
    /// Seconds the hypervisor took from the child's CPU while it ran (`/proc/stat` steal of
    /// that CPU, before and after); `None` where the kernel does not report steal.
    pub steal_s: Option<f64>,
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

/// One process to time.
#[derive(Clone, Copy, Debug)]
pub struct Launch<'a> {
    /// Program and arguments, spawned without a shell.
    pub argv: &'a [String],
    /// Its working directory.
    pub cwd: &'a Path,
    /// It is killed past this.
    pub timeout: Duration,
    /// The stdout it should print.
    pub expected: &'a [u8],
}

/// How an engine is set up.
#[derive(Clone, Debug, PartialEq)]
pub struct EngineOptions {
    /// CPUs to lease: 1, or 2 for [`Engine::run_pair`].
    pub cpus: usize,
    /// Keep address-space layout randomization for timed children (it is off otherwise).
    pub randomize: bool,
    /// How long to wait for the CPUs' locks (`CPU_WAIT_S`).
    pub max_wait: Duration,
    /// Where the CPU locks are ([`cpus::lock_dir`]).
    pub lock_dir: PathBuf,
}

impl EngineOptions {
    /// One CPU, a fixed layout, the lock dir of the environment, and the wait bound of
    /// `settings` (`CPU_WAIT_S`).
    pub fn from_settings(settings: &cell_model::Settings) -> Self {
        Self {
            cpus: 1,
            randomize: false,
            max_wait: Duration::from_secs_f64(settings.cpu_wait_s),
            lock_dir: cpus::lock_dir(),
        }
    }
}

impl Default for EngineOptions {
    /// As [`EngineOptions::from_settings`] with every setting at its default.
    fn default() -> Self {
        Self::from_settings(&cell_model::Settings::default())
    }
}

/// The scratch files one timed child writes its stdout and stderr to.
struct Seat {
    out: File,
    err: File,
}

impl Seat {
    fn new(scratch: &Path) -> std::io::Result<Self> {
        Ok(Self {
            out: tempfile::tempfile_in(scratch)?,
            err: tempfile::tempfile_in(scratch)?,
        })
    }
}

/// A timing engine: the leased CPUs, scratch files for output, and a watchdog.
pub struct Engine {
    seats: Vec<Seat>,
    watchdog: Watchdog,
    lease: Lease,
    pinned: Option<u32>,
    restore: Option<Affinity>,
    #[cfg(target_os = "linux")]
    persona: Option<libc::c_ulong>,
    #[cfg(not(target_os = "linux"))]
    persona: Option<u64>,
}

impl Drop for Engine {
    fn drop(&mut self) {
        // Builds and later jobs in the same process get every CPU back; the lease (dropped
        // after this) releases the CPU locks.
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
    /// Leases one CPU (not cpu0 while another is free) and pins the calling thread, and so
    /// every child it spawns, to it; see [`Engine::with_options`].
    pub fn new(scratch: &Path) -> std::io::Result<Self> {
        Self::with_options(scratch, &EngineOptions::default())
    }

    /// As [`Engine::new`]; `randomize` keeps the address-space layout randomization that
    /// [`Engine::new`] turns off for timed children (bench/precision measures both).
    pub fn with_layout(scratch: &Path, randomize: bool) -> std::io::Result<Self> {
        Self::with_options(
            scratch,
            &EngineOptions {
                randomize,
                ..EngineOptions::default()
            },
        )
    }

    /// Leases `options.cpus` CPUs (waiting up to `options.max_wait` for their locks) and pins
    /// the calling thread to the first, when the platform allows.
    pub fn with_options(scratch: &Path, options: &EngineOptions) -> std::io::Result<Self> {
        if !(1..=2).contains(&options.cpus) {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("an engine times on 1 or 2 CPUs, not {}", options.cpus),
            ));
        }
        let seats = (0..options.cpus)
            .map(|_| Seat::new(scratch))
            .collect::<std::io::Result<_>>()?;
        // The watchdog thread starts before pinning so it does not share the timed CPU.
        let watchdog = Watchdog::start();
        let restore = Affinity::current();
        let lease = Lease::take(
            &options.lock_dir,
            &cpus::allowed(),
            options.cpus,
            options.max_wait,
        );
        let pinned = lease
            .cpus()
            .first()
            .copied()
            .filter(|&c| pin_thread(c).is_ok());
        let persona = fix_layout(options.randomize);
        Ok(Self {
            seats,
            watchdog,
            lease,
            pinned,
            restore,
            persona,
        })
    }

    /// The CPU timed processes run on ([`Engine::run`]'s, the first of a pair's).
    pub fn pinned_cpu(&self) -> Option<u32> {
        self.pinned
    }

    /// The leased CPUs, in the order [`Engine::run_pair`] uses them.
    pub fn cpus(&self) -> &[u32] {
        self.lease.cpus()
    }

    /// What results record of the CPUs: which, how long it waited for them, whether cpu0
    /// was among them and whether one was timed on without its lock; `None` when nothing
    /// was pinned.
    pub fn timing(&self) -> Option<TimingCpus> {
        self.pinned.map(|_| self.lease.record())
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
        let launch = Launch {
            argv,
            cwd,
            timeout,
            expected,
        };
        // The thread is pinned already: no pinning here, no partner to start with.
        time_one(
            &mut self.seats[0],
            &self.watchdog,
            &launch,
            self.pinned,
            None,
        )
    }

    /// Runs `a` and `b` at the same moment, `a` on the first leased CPU and `b` on the second,
    /// or the other way round when `swap` (the protocol swaps CPUs every pair); results come
    /// back in argument order. Each is timed from its own spawn to its own reap, with its
    /// own rusage, output check, steal and timeout. Needs an engine of two CPUs.
    pub fn run_pair(
        &mut self,
        a: &Launch<'_>,
        b: &Launch<'_>,
        swap: bool,
    ) -> std::io::Result<[Measured; 2]> {
        let [m0, m1] = self.run_pair_each(a, b, swap)?;
        Ok([m0?, m1?])
    }

    /// As [`Engine::run_pair`], each side's outcome on its own: one that could not start
    /// does not take its partner's measurement with it. The outer error is an engine that
    /// cannot time two at once.
    pub fn run_pair_each(
        &mut self,
        a: &Launch<'_>,
        b: &Launch<'_>,
        swap: bool,
    ) -> std::io::Result<[std::io::Result<Measured>; 2]> {
        let [c0, c1] = *self.lease.cpus() else {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!(
                    "timing two processes at once needs an engine of two CPUs; this one has {}",
                    self.lease.cpus().len()
                ),
            ));
        };
        let (first, second) = if swap { (b, a) } else { (a, b) };
        let [s0, s1] = &mut self.seats[..] else {
            unreachable!("an engine of two CPUs has two seats")
        };
        let watchdog = &self.watchdog;
        let start = Barrier::new(2);
        // Each child is spawned and reaped by a thread pinned to the child's own CPU (this
        // one, and one more): the child inherits the pin from its first instruction, the spawn
        // stays posix_spawn (a pre_exec hook would force fork), and the reaper wakes on the
        // CPU its child just left, so the child that ends first is reaped and clocked at once
        // instead of after the scheduler preempts the other, still running, child.
        let (m0, m1) = std::thread::scope(|scope| {
            let other = scope.spawn(|| {
                let pinned = pin_thread(c1);
                time_one(
                    s1,
                    watchdog,
                    second,
                    Some(c1).filter(|_| pinned.is_ok()),
                    Some((&start, pinned)),
                )
            });
            let pinned = pin_thread(c0);
            let mine = time_one(
                s0,
                watchdog,
                first,
                Some(c0).filter(|_| pinned.is_ok()),
                Some((&start, pinned)),
            );
            (
                mine,
                other.join().expect("the timing thread does not panic"),
            )
        });
        Ok(if swap { [m1, m0] } else { [m0, m1] })
    }
}

/// Times `launch` once on `seat`'s scratch files; `steal_cpu` is the CPU whose steal is
/// charged to it. With `together`, it first meets its partner at the barrier (carrying
/// whether its thread could be pinned), so the two spawn at the same moment.
fn time_one(
    seat: &mut Seat,
    watchdog: &Watchdog,
    launch: &Launch<'_>,
    steal_cpu: Option<u32>,
    together: Option<(&Barrier, std::io::Result<()>)>,
) -> std::io::Result<Measured> {
    let ready = prepare(seat, launch);
    let steal_before = steal_cpu.and_then(procfs::steal_ticks);
    if let Some((barrier, pinned)) = together {
        // Both sides reach the barrier whatever failed, or the other would wait forever.
        barrier.wait();
        pinned?;
    }
    let mut cmd = ready?;
    let start = Instant::now();
    let child = cmd.spawn()?;
    let pid = libc::pid_t::try_from(child.id()).expect("pids fit pid_t");
    watchdog.arm(pid, start + launch.timeout);
    let exited = wait_exited(pid);
    let wall = start.elapsed();
    // Disarmed before the reap, so the watchdog only ever signals a pid that is still ours.
    let timed_out = watchdog.disarm(pid);
    exited?;
    let (status, usage) = wait4(pid)?;
    // The child is reaped; dropping the handle does not wait again.
    drop(child);
    let steal_after = steal_cpu.and_then(procfs::steal_ticks);

    let exit = if timed_out {
        ExitKind::TimedOut
    } else if libc::WIFEXITED(status) {
        ExitKind::Code(libc::WEXITSTATUS(status))
    } else {
        ExitKind::Signal(libc::WTERMSIG(status))
    };
    seat.out.seek(SeekFrom::Start(0))?;
    let stdout = capture(&seat.out, launch.expected)?;
    seat.err.seek(SeekFrom::Start(0))?;
    let stderr = capture(&seat.err, b"")?;
    let (user_s, sys_s) = (tv(usage.ru_utime), tv(usage.ru_stime));
    Ok(Measured {
        wall_s: wall.as_secs_f64(),
        cpu_s: user_s + sys_s,
        user_s,
        sys_s,
        steal_s: steal_before
            .zip(steal_after)
            .map(|(b, a)| procfs::ticks_s(a.saturating_sub(b))),
        maxrss_kib: maxrss_kib(usage.ru_maxrss),
        exit,
        stdout,
        stderr,
    })
}

/// Empties the seat's scratch files and builds the command writing to them.
fn prepare(seat: &mut Seat, launch: &Launch<'_>) -> std::io::Result<Command> {
    for f in [&mut seat.out, &mut seat.err] {
        f.set_len(0)?;
        f.seek(SeekFrom::Start(0))?;
    }
    let mut cmd = Command::new(&launch.argv[0]);
    cmd.args(&launch.argv[1..])
        .current_dir(launch.cwd)
        .stdin(Stdio::null())
        .stdout(seat.out.try_clone()?)
        .stderr(seat.err.try_clone()?);
    Ok(cmd)
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

/// Waits until `pid` has ended without reaping it: its wall time ends here, and the pid stays
/// ours (a zombie) until `wait4` collects its status and rusage.
pub fn wait_exited(pid: libc::pid_t) -> std::io::Result<()> {
    let id = libc::id_t::try_from(pid).expect("a child's pid is positive");
    loop {
        // SAFETY: siginfo_t is plain data that waitid fills for our own child.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        let r = unsafe {
            libc::waitid(
                libc::P_PID,
                id,
                &raw mut info,
                libc::WEXITED | libc::WNOWAIT,
            )
        };
        if r == 0 {
            return Ok(());
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// Reaps our child `pid` (retrying on `EINTR`) and returns its wait status and the resource
/// usage the kernel accounted to it: how every timed process here, and the benchmarks that time
/// `cell` itself, read a child's CPU time and peak memory.
pub fn wait4(pid: libc::pid_t) -> std::io::Result<(libc::c_int, libc::rusage)> {
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

/// Pins the calling thread (and what it spawns from now on) to `cpu`.
#[cfg(target_os = "linux")]
fn pin_thread(cpu: u32) -> std::io::Result<()> {
    // SAFETY: cpu_set_t is plain data manipulated only through the libc macros.
    unsafe {
        let mut one: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu as usize, &mut one);
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &raw const one) == 0 {
            Ok(())
        } else {
            Err(std::io::Error::last_os_error())
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn pin_thread(_cpu: u32) -> std::io::Result<()> {
    Err(std::io::Error::new(
        std::io::ErrorKind::Unsupported,
        "pinning to a CPU is Linux only",
    ))
}

/// Kills a timed process that outlives its deadline; any number may be armed at once (the
/// two of a pair).
struct Watchdog {
    shared: Arc<(Mutex<WatchState>, Condvar)>,
}

#[derive(Default)]
struct WatchState {
    armed: Vec<(libc::pid_t, Instant)>,
    fired: Vec<libc::pid_t>,
}

impl Watchdog {
    fn start() -> Self {
        let shared = Arc::new((Mutex::new(WatchState::default()), Condvar::new()));
        let s = Arc::clone(&shared);
        std::thread::spawn(move || {
            let (lock, cv) = &*s;
            let mut st = lock.lock().expect("watchdog lock");
            loop {
                let now = Instant::now();
                let WatchState { armed, fired } = &mut *st;
                armed.retain(|&(pid, deadline)| {
                    if now < deadline {
                        return true;
                    }
                    // SAFETY: an armed pid is our child, not yet reaped: it is disarmed
                    // (under this lock) before it is reaped.
                    unsafe { libc::kill(pid, libc::SIGKILL) };
                    fired.push(pid);
                    false
                });
                st = match st.armed.iter().map(|&(_, d)| d).min() {
                    None => cv.wait(st).expect("watchdog lock"),
                    Some(d) => cv.wait_timeout(st, d - now).expect("watchdog lock").0,
                };
            }
        });
        Self { shared }
    }

    fn arm(&self, pid: libc::pid_t, deadline: Instant) {
        let (lock, cv) = &*self.shared;
        let mut st = lock.lock().expect("watchdog lock");
        st.armed.push((pid, deadline));
        cv.notify_one();
    }

    /// Disarms `pid`; true when the watchdog had fired on it.
    fn disarm(&self, pid: libc::pid_t) -> bool {
        let (lock, _) = &*self.shared;
        let mut st = lock.lock().expect("watchdog lock");
        st.armed.retain(|&(p, _)| p != pid);
        let before = st.fired.len();
        st.fired.retain(|&p| p != pid);
        st.fired.len() != before
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An engine of `cpus` CPUs with its own lock dir under `dir`, never waiting.
    fn engine(dir: &Path, cpus: usize) -> Engine {
        Engine::with_options(
            dir,
            &EngineOptions {
                cpus,
                randomize: false,
                max_wait: Duration::ZERO,
                lock_dir: dir.join("locks"),
            },
        )
        .unwrap()
    }

    fn sh(script: &str) -> Vec<String> {
        vec!["/bin/sh".into(), "-c".into(), script.into()]
    }

    fn launch<'a>(argv: &'a [String], cwd: &'a Path, timeout: Duration) -> Launch<'a> {
        Launch {
            argv,
            cwd,
            timeout,
            expected: b"",
        }
    }

    /// True when this machine lets the tests use two CPUs; says so when it does not.
    fn two_cpus() -> bool {
        let n = cpus::allowed().len();
        if n < 2 {
            println!("skipped: {n} CPU allowed here, the pair needs 2");
        }
        n >= 2
    }

    #[test]
    fn times_a_real_process_and_reads_its_stdout() {
        let dir = tempfile::tempdir().unwrap();
        let mut e = engine(dir.path(), 1);
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
        let mut e = engine(dir.path(), 1);
        let argv = sh("i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done");
        let m = e
            .run(&argv, dir.path(), Duration::from_mins(1), b"")
            .unwrap();
        assert!(m.cpu_s > 0.01, "{m:?}");
        assert!(m.cpu_s <= m.wall_s * 1.05 + 0.01, "{m:?}");
    }

    #[test]
    fn steal_is_read_for_the_timed_cpu_where_the_kernel_reports_it() {
        let dir = tempfile::tempdir().unwrap();
        let mut e = engine(dir.path(), 1);
        let m = e
            .run(&sh("true"), dir.path(), Duration::from_secs(10), b"")
            .unwrap();
        let reported = e.pinned_cpu().and_then(procfs::steal_ticks).is_some();
        assert_eq!(m.steal_s.is_some(), reported, "{m:?}");
        assert!(m.steal_s.is_none_or(|s| s >= 0.0), "{m:?}");
    }

    #[test]
    fn watchdog_kills_a_hung_process() {
        let dir = tempfile::tempdir().unwrap();
        let mut e = engine(dir.path(), 1);
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
    fn two_engines_on_one_lock_dir_time_on_different_cpus() {
        if !two_cpus() {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().to_path_buf();
        // Each engine on a thread of its own, as each would be in a process of its own: an
        // engine pins its thread, and a thread pinned to one CPU is allowed no other.
        let hold = Arc::new(Barrier::new(3));
        let (tx, rx) = std::sync::mpsc::channel();
        let threads: Vec<_> = (0..2)
            .map(|_| {
                let (path, hold, tx) = (path.clone(), Arc::clone(&hold), tx.clone());
                std::thread::spawn(move || {
                    let e = engine(&path, 1);
                    tx.send((e.timing().unwrap(), e.pinned_cpu())).unwrap();
                    hold.wait();
                })
            })
            .collect();
        let (ta, pa) = rx.recv().unwrap();
        let (tb, pb) = rx.recv().unwrap();
        assert_ne!(ta.cpus, tb.cpus);
        assert_eq!((Some(ta.cpus[0]), Some(tb.cpus[0])), (pa, pb));
        assert!(!ta.shared && !tb.shared, "{ta:?} {tb:?}");
        if cpus::allowed().len() == 2 {
            assert!(
                ta.last_resort != tb.last_resort,
                "one has cpu0: {ta:?} {tb:?}"
            );
            // A third with no CPU left and no wait times shared on the preferred one.
            let c = engine(dir.path(), 1);
            let tc = c.timing().unwrap();
            assert!(tc.shared && !tc.last_resort, "{tc:?}");
        }
        hold.wait();
        for t in threads {
            t.join().unwrap();
        }
    }

    #[test]
    fn exit_codes_and_signals() {
        let dir = tempfile::tempdir().unwrap();
        let mut e = engine(dir.path(), 1);
        let m = e
            .run(&sh("exit 3"), dir.path(), Duration::from_secs(10), b"")
            .unwrap();
        assert_eq!(m.exit, ExitKind::Code(3));
        let m = e
            .run(&sh("kill -9 $$"), dir.path(), Duration::from_secs(10), b"")
            .unwrap();
        assert_eq!(m.exit, ExitKind::Signal(9));
    }

    #[test]
    fn a_pair_needs_an_engine_of_two_cpus() {
        let dir = tempfile::tempdir().unwrap();
        let mut e = engine(dir.path(), 1);
        let t = sh("true");
        let l = launch(&t, dir.path(), Duration::from_secs(10));
        let err = e.run_pair(&l, &l, false).unwrap_err();
        assert!(
            err.to_string().contains("needs an engine of two CPUs"),
            "{err}"
        );
        let err = Engine::with_options(
            dir.path(),
            &EngineOptions {
                cpus: 3,
                ..EngineOptions::default()
            },
        )
        .err()
        .unwrap();
        assert!(err.to_string().contains("1 or 2 CPUs, not 3"), "{err}");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn each_of_a_pair_runs_on_its_own_leased_cpu() {
        if !two_cpus() {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let mut eng = engine(dir.path(), 2);
        let cpus = eng.cpus().to_vec();
        assert_eq!(cpus.len(), 2);
        assert_eq!(eng.timing().unwrap().cpus, cpus);
        let argv = sh("grep Cpus_allowed_list /proc/self/status");
        let one = launch(&argv, dir.path(), Duration::from_secs(10));
        let on = |m: &Measured| {
            let text = String::from_utf8_lossy(&m.stdout.prefix).into_owned();
            text.trim()
                .rsplit('\t')
                .next()
                .unwrap()
                .parse::<u32>()
                .unwrap()
        };
        let [first, second] = eng.run_pair(&one, &one, false).unwrap();
        assert_eq!(
            [on(&first), on(&second)],
            [cpus[0], cpus[1]],
            "{first:?} {second:?}"
        );
        let [first, second] = eng.run_pair(&one, &one, true).unwrap();
        assert_eq!(
            [on(&first), on(&second)],
            [cpus[1], cpus[0]],
            "swapped: {first:?} {second:?}"
        );
        // A single run after a pair is on the first CPU still.
        let m = eng
            .run(&argv, dir.path(), Duration::from_secs(10), b"")
            .unwrap();
        assert_eq!(on(&m), cpus[0]);
    }

    #[test]
    fn the_two_of_a_pair_run_at_the_same_time() {
        if !two_cpus() {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let mut e = engine(dir.path(), 2);
        // Each leaves its marker and waits (at most 10 s) for the other's: both succeed
        // only if they ran at once.
        let meet = |me: &str, other: &str| {
            sh(&format!(
                "touch {me}; i=0; while [ ! -e {other} ] && [ $i -lt 1000 ]; do sleep 0.01; i=$((i+1)); done; [ -e {other} ]"
            ))
        };
        let (a, b) = (meet("a", "b"), meet("b", "a"));
        let [ma, mb] = e
            .run_pair(
                &launch(&a, dir.path(), Duration::from_mins(1)),
                &launch(&b, dir.path(), Duration::from_mins(1)),
                false,
            )
            .unwrap();
        assert_eq!(
            (&ma.exit, &mb.exit),
            (&ExitKind::Code(0), &ExitKind::Code(0))
        );
    }

    /// Regression guard: a child that ends first is clocked at its own reap, not when the
    /// other one ends.
    #[test]
    fn the_first_of_a_pair_to_end_is_not_clocked_to_the_second() {
        if !two_cpus() {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let mut e = engine(dir.path(), 2);
        let (quick, slow) = (sh("true"), sh("sleep 2"));
        for swap in [false, true] {
            let [q, s] = e
                .run_pair(
                    &launch(&quick, dir.path(), Duration::from_mins(1)),
                    &launch(&slow, dir.path(), Duration::from_mins(1)),
                    swap,
                )
                .unwrap();
            assert!(s.wall_s >= 2.0, "{s:?}");
            assert!(
                q.wall_s < s.wall_s / 2.0,
                "quick {} s, slow {} s",
                q.wall_s,
                s.wall_s
            );
        }
    }

    #[test]
    fn the_watchdog_kills_the_hung_one_of_a_pair() {
        if !two_cpus() {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let mut e = engine(dir.path(), 2);
        let (hung, fine) = (sh("sleep 30"), sh("echo hi"));
        for swap in [false, true] {
            let [h, f] = e
                .run_pair(
                    &launch(&hung, dir.path(), Duration::from_millis(300)),
                    &Launch {
                        expected: b"hi\n",
                        ..launch(&fine, dir.path(), Duration::from_secs(20))
                    },
                    swap,
                )
                .unwrap();
            assert_eq!(h.exit, ExitKind::TimedOut);
            assert!(h.wall_s < 20.0, "{h:?}");
            assert_eq!(f.exit, ExitKind::Code(0), "{f:?}");
            assert!(f.stdout.matches, "{f:?}");
        }
    }

    #[test]
    fn each_of_a_pair_has_its_own_rusage_and_output_check() {
        if !two_cpus() {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let mut e = engine(dir.path(), 2);
        // A spends user time in a shell loop; B system time in a million one-byte syscalls.
        let busy = sh("i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done; echo a");
        let calls = sh("dd if=/dev/zero of=/dev/null bs=1 count=500000 2>/dev/null; echo x");
        let [a, b] = e
            .run_pair(
                &Launch {
                    expected: b"a\n",
                    ..launch(&busy, dir.path(), Duration::from_mins(2))
                },
                &Launch {
                    expected: b"b\n",
                    ..launch(&calls, dir.path(), Duration::from_mins(2))
                },
                false,
            )
            .unwrap();
        assert!(a.stdout.matches && !b.stdout.matches, "{a:?} {b:?}");
        assert_eq!(b.stdout.prefix, b"x\n");
        assert!(a.user_s > 0.05 && a.user_s > a.sys_s, "{a:?}");
        assert!(b.sys_s > 0.01, "{b:?}");
        for m in [&a, &b] {
            assert!((m.cpu_s - m.user_s - m.sys_s).abs() < 1e-9, "{m:?}");
            assert!(m.maxrss_kib > 0, "{m:?}");
        }
    }
}
