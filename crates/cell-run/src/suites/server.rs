//! A server process under test: started with a scrubbed environment on its own CPU, watched
//! through /proc, stopped with SIGTERM to its own pid and SIGKILL after a grace period.

use std::os::unix::process::{CommandExt as _, ExitStatusExt as _};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::error::{Gone, StartError};
use super::procfs;

/// The CPUs server and load generator run on: separate ones when the machine has two.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cpus {
    /// The server's CPU.
    pub server: Option<u32>,
    /// The load generator's CPU.
    pub load: Option<u32>,
}

impl Cpus {
    /// The highest allowed CPU other than cpu0 for the server (cpu0 takes most interrupts),
    /// the next one down for the load generator. Nothing is pinned with a single CPU.
    pub fn choose() -> Self {
        let allowed = crate::cpus::allowed();
        let server = allowed.iter().rev().copied().find(|&c| c != 0);
        let load = server.and_then(|s| allowed.iter().rev().copied().find(|&c| c != s));
        match (server, load) {
            (Some(s), Some(l)) => Self {
                server: Some(s),
                load: Some(l),
            },
            _ => Self {
                server: None,
                load: None,
            },
        }
    }
}

/// Pins the child to `cpu` between fork and exec (inherited by its threads and children).
pub fn pin(cmd: &mut Command, cpu: Option<u32>) {
    #[cfg(target_os = "linux")]
    if let Some(cpu) = cpu {
        // SAFETY: the closure only calls sched_setaffinity, which is async-signal-safe.
        unsafe {
            cmd.pre_exec(move || {
                let mut one: libc::cpu_set_t = std::mem::zeroed();
                libc::CPU_SET(cpu as usize, &mut one);
                if libc::sched_setaffinity(
                    0,
                    std::mem::size_of::<libc::cpu_set_t>(),
                    &raw const one,
                ) != 0
                {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (cmd, cpu);
}

/// The environment a server sees: nothing of the harness but PATH, a HOME of its own and a
/// plain locale, so its CLI cannot pick up the harness's variables.
pub fn scrub(cmd: &mut Command, home: &Path) {
    cmd.env_clear();
    if let Some(path) = std::env::var_os("PATH") {
        cmd.env("PATH", path);
    }
    cmd.env("HOME", home).env("LANG", "C");
}

/// A running server.
pub struct Running {
    child: Child,
    started: Instant,
    sampler: Option<Sampler>,
    /// How it ended, once `alive` saw it (it is reaped then).
    ended: Option<Gone>,
}

/// How a server ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ended {
    /// `exit status 0`, `signal 9 (SIGKILL)`, …
    pub status: String,
    /// It needed SIGKILL.
    pub killed: bool,
}

fn describe(s: ExitStatus) -> String {
    match (s.code(), s.signal()) {
        (Some(c), _) => format!("exit status {c}"),
        (None, Some(sig)) => format!("signal {sig}"),
        _ => s.to_string(),
    }
}

impl Running {
    /// Starts `argv` in `cwd` with a scrubbed environment, pinned to `cpu`, stdout and stderr
    /// appended to `log`.
    pub fn start(
        argv: &[String],
        cwd: &Path,
        cpu: Option<u32>,
        log: &Path,
    ) -> std::io::Result<Self> {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)?;
        let mut cmd = Command::new(&argv[0]);
        cmd.args(&argv[1..])
            .current_dir(cwd)
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log)
            // Its own process group, so leftovers of its tree can be killed together.
            .process_group(0);
        scrub(&mut cmd, cwd);
        pin(&mut cmd, cpu);
        die_with_parent(&mut cmd);
        let child = cmd.spawn()?;
        Ok(Self {
            child,
            started: Instant::now(),
            sampler: None,
            ended: None,
        })
    }

    /// The server's own pid.
    pub fn pid(&self) -> i32 {
        i32::try_from(self.child.id()).unwrap_or(i32::MAX)
    }

    /// Seconds since spawn.
    pub fn age_s(&self) -> f64 {
        self.started.elapsed().as_secs_f64()
    }

    /// `Err(how it ended)` once the process has exited; what it left of its process group is
    /// killed at once.
    pub fn alive(&mut self) -> Result<(), Gone> {
        if let Some(e) = &self.ended {
            return Err(e.clone());
        }
        match self.child.try_wait() {
            Ok(None) => Ok(()),
            Ok(Some(s)) => {
                kill_group(self.pid());
                let e = Gone::Exited(describe(s));
                self.ended = Some(e.clone());
                Err(e)
            }
            Err(e) => Err(Gone::Wait(e.to_string())),
        }
    }

    /// Starts sampling the tree's summed RSS every `every` (the peak is kept).
    pub fn start_sampling(&mut self, every: Duration) {
        self.sampler = Some(Sampler::start(self.pid(), every));
    }

    /// Stops sampling; the peak RSS (KiB) seen since `start_sampling`.
    pub fn stop_sampling(&mut self) -> u64 {
        let peak_kib = self.sampler.take().map_or(0, Sampler::stop);
        // The sampler can miss a short peak; VmHWM of the root cannot.
        let hwm = procfs::sample_tree(self.pid()).map_or(0, |s| s.hwm_kib);
        peak_kib.max(hwm)
    }

    /// SIGTERM to the server's own pid; SIGKILL to its group after `grace`.
    pub fn stop(mut self, grace: Duration) -> Ended {
        let _ = self.stop_sampling();
        if let Err(e) = self.alive() {
            return Ended {
                status: e.to_string(),
                killed: false,
            };
        }
        let pid = self.pid();
        // SAFETY: kill(2) on a pid we spawned and have not reaped.
        unsafe {
            libc::kill(pid, libc::SIGTERM);
        }
        let deadline = Instant::now() + grace;
        let (status, killed) = loop {
            match self.child.try_wait() {
                Ok(Some(s)) => {
                    // Leftover children of the tree go with their group.
                    kill_group(pid);
                    break (describe(s), false);
                }
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(10));
                }
                _ => {
                    kill_group(pid);
                    let s = self.child.wait().map(describe).unwrap_or_default();
                    break (s, true);
                }
            }
        };
        self.ended = Some(Gone::Exited(status.clone()));
        Ended { status, killed }
    }
}

/// SIGKILL to a server's process group (its pid, set at spawn). Called before the leader is
/// reaped or right after, while the group id cannot have been reused.
fn kill_group(pid: i32) {
    // SAFETY: kill(2) on a process group we created; ESRCH when it is already empty.
    unsafe {
        libc::kill(-pid, libc::SIGKILL);
    }
}

/// The child gets SIGKILL when the thread that spawned it dies, so an interrupted harness
/// leaves no server holding its port.
pub(crate) fn die_with_parent(cmd: &mut Command) {
    #[cfg(target_os = "linux")]
    // SAFETY: prctl is async-signal-safe.
    unsafe {
        cmd.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            Ok(())
        });
    }
    #[cfg(not(target_os = "linux"))]
    let _ = cmd;
}

/// `Err` naming the port when something already answers on it: a server left over from an
/// earlier run would otherwise be measured in place of the one just built.
pub fn port_free(port: u16) -> Result<(), StartError> {
    match std::net::TcpStream::connect_timeout(
        &super::check::loopback(port),
        Duration::from_millis(200),
    ) {
        Ok(_) => Err(StartError::PortTaken(port)),
        Err(_) => Ok(()),
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(s) = self.sampler.take() {
            s.stop();
        }
        if self.ended.is_none() {
            kill_group(self.pid());
            let _ = self.child.wait();
        }
    }
}

/// A thread summing the tree's RSS every interval, keeping the peak.
struct Sampler {
    stop: Arc<AtomicBool>,
    peak_kib: Arc<AtomicU64>,
    thread: std::thread::JoinHandle<()>,
}

impl Sampler {
    fn start(pid: i32, every: Duration) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let peak_kib = Arc::new(AtomicU64::new(0));
        let (s, p) = (stop.clone(), peak_kib.clone());
        let thread = std::thread::spawn(move || {
            while !s.load(Ordering::Relaxed) {
                if let Ok(t) = procfs::sample_tree(pid) {
                    p.fetch_max(t.rss_kib, Ordering::Relaxed);
                }
                std::thread::sleep(every);
            }
        });
        Self {
            stop,
            peak_kib,
            thread,
        }
    }

    fn stop(self) -> u64 {
        self.stop.store(true, Ordering::Relaxed);
        let _ = self.thread.join();
        self.peak_kib.load(Ordering::Relaxed)
    }
}
