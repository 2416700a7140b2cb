//! A server process under test: started with a scrubbed environment on its own CPU, watched
//! through /proc, stopped with SIGTERM to its own pid and SIGKILL after a grace period.

use std::os::unix::process::{CommandExt as _, ExitStatusExt as _};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use cell_model::CpuSets;

use super::error::{CpuNotAllowed, Gone, StartError};
use super::procfs;

/// A set of CPUs a process is pinned to; empty: not pinned. Plain bits (as `cpu_set_t`
/// holds them), so a choice of CPUs is copied into every run and thread that needs it.
#[derive(Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuSet {
    bits: [u64; 16],
}

impl CpuSet {
    /// The CPUs this set can hold: 0 to 1023, as `cpu_set_t` does.
    pub const CAPACITY: u32 = 1024;

    /// The set of `cpus`; any at or above [`Self::CAPACITY`] is left out (the machine allows
    /// none such).
    pub fn of(cpus: &[u32]) -> Self {
        let mut s = Self::default();
        for &c in cpus.iter().filter(|&&c| c < Self::CAPACITY) {
            s.bits[(c / 64) as usize] |= 1 << (c % 64);
        }
        s
    }

    /// Its CPUs, ascending.
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        (0..Self::CAPACITY).filter(|c| self.bits[(c / 64) as usize] & (1 << (c % 64)) != 0)
    }

    /// Its lowest CPU: what a single-CPU field records.
    pub fn first(&self) -> Option<u32> {
        self.iter().next()
    }

    /// Its CPUs, ascending, as the results record them.
    pub fn to_vec(&self) -> Vec<u32> {
        self.iter().collect()
    }

    /// Nothing pinned.
    pub fn is_empty(&self) -> bool {
        self.bits.iter().all(|&w| w == 0)
    }
}

impl std::fmt::Debug for CpuSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

/// The CPUs servers and load generators run on: separate ones when the machine has two.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cpus {
    /// The servers' CPUs.
    pub server: CpuSet,
    /// The load generators' CPUs.
    pub load: CpuSet,
}

impl Cpus {
    /// The CPUs of `[http] cpus` (or the command line's), each one checked against the CPUs
    /// this process may use; none configured: one each, as [`Self::by_default`] picks them.
    /// Where the OS does not say which CPUs may be used (off Linux) nothing is pinned.
    pub fn choose(configured: Option<&CpuSets>) -> Result<Self, CpuNotAllowed> {
        let allowed = crate::cpus::allowed();
        match configured {
            Some(c) if !allowed.is_empty() => Self::configured(c, &allowed),
            Some(_) => Ok(Self::unpinned()),
            None => Ok(Self::by_default(&allowed)),
        }
    }

    /// The configured sets when every CPU of them is in `allowed`.
    fn configured(c: &CpuSets, allowed: &[u32]) -> Result<Self, CpuNotAllowed> {
        for (field, set) in c.fields.iter().zip([&c.server, &c.load]) {
            if let Some(&cpu) = set.iter().find(|x| !allowed.contains(x)) {
                return Err(CpuNotAllowed {
                    field: field.clone(),
                    cpu,
                    allowed: ranges(allowed),
                });
            }
        }
        Ok(Self {
            server: CpuSet::of(&c.server),
            load: CpuSet::of(&c.load),
        })
    }

    /// The highest allowed CPU other than cpu0 for the server (cpu0 takes most interrupts),
    /// the next one down for the load generator. Nothing is pinned with a single CPU.
    fn by_default(allowed: &[u32]) -> Self {
        let server = allowed.iter().rev().copied().find(|&c| c != 0);
        let load = server.and_then(|s| allowed.iter().rev().copied().find(|&c| c != s));
        match (server, load) {
            (Some(s), Some(l)) => Self {
                server: CpuSet::of(&[s]),
                load: CpuSet::of(&[l]),
            },
            _ => Self::unpinned(),
        }
    }

    fn unpinned() -> Self {
        Self {
            server: CpuSet::default(),
            load: CpuSet::default(),
        }
    }
}

/// `0-3, 6`: CPUs (ascending) as ranges.
fn ranges(cpus: &[u32]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        out.push(if i == j {
            cpus[i].to_string()
        } else {
            format!("{}-{}", cpus[i], cpus[j])
        });
        i = j + 1;
    }
    out.join(", ")
}

/// Pins the child to `cpus` between fork and exec (inherited by its threads and children);
/// an empty set pins nothing.
pub fn pin(cmd: &mut Command, cpus: CpuSet) {
    #[cfg(target_os = "linux")]
    if !cpus.is_empty() {
        // SAFETY: the closure only calls sched_setaffinity, which is async-signal-safe.
        unsafe {
            cmd.pre_exec(move || {
                let mut set: libc::cpu_set_t = std::mem::zeroed();
                for cpu in cpus.iter() {
                    libc::CPU_SET(cpu as usize, &mut set);
                }
                if libc::sched_setaffinity(
                    0,
                    std::mem::size_of::<libc::cpu_set_t>(),
                    &raw const set,
                ) != 0
                {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (cmd, cpus);
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
    /// Starts `argv` in `cwd` with a scrubbed environment, pinned to `cpus`, stdout and stderr
    /// appended to `log`.
    pub fn start(argv: &[String], cwd: &Path, cpus: CpuSet, log: &Path) -> std::io::Result<Self> {
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
        pin(&mut cmd, cpus);
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

    /// Starts sampling the tree's summed RSS and PSS every `every` (the peaks are kept).
    pub fn start_sampling(&mut self, every: Duration) {
        self.sampler = Some(Sampler::start(self.pid(), every));
    }

    /// Stops sampling; the peaks seen since `start_sampling`, and with `with_hwm` the RSS
    /// never below the root's `VmHWM` (its peak since it started: right for a process started
    /// for this run, wrong for one that served earlier runs).
    pub fn stop_sampling(&mut self, with_hwm: bool) -> Peaks {
        let peaks = self.sampler.take().map_or(Peaks::default(), Sampler::stop);
        if !with_hwm {
            return peaks;
        }
        // The sampler can miss a short peak; VmHWM of the root cannot.
        let hwm = procfs::sample_tree(self.pid()).map_or(0, |s| s.hwm_kib);
        Peaks {
            rss_kib: peaks.rss_kib.max(hwm),
            ..peaks
        }
    }

    /// SIGTERM to the server's own pid; SIGKILL to its group after `grace`.
    pub fn stop(mut self, grace: Duration) -> Ended {
        let _ = self.stop_sampling(false);
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

/// The largest memory of a process tree seen by the sampler, KiB.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Peaks {
    /// Summed RSS.
    pub rss_kib: u64,
    /// Summed PSS, when it could be read.
    pub pss_kib: Option<u64>,
}

/// A thread summing the tree's RSS and PSS every interval, keeping the peaks. A child that
/// lives less than one interval can fall between two samples.
struct Sampler {
    stop: Arc<AtomicBool>,
    rss_kib: Arc<AtomicU64>,
    /// `u64::MAX` until a PSS is read.
    pss_kib: Arc<AtomicU64>,
    thread: std::thread::JoinHandle<()>,
}

impl Sampler {
    fn start(pid: i32, every: Duration) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let rss_kib = Arc::new(AtomicU64::new(0));
        let pss_kib = Arc::new(AtomicU64::new(u64::MAX));
        let (s, r, p) = (stop.clone(), rss_kib.clone(), pss_kib.clone());
        let thread = std::thread::spawn(move || {
            while !s.load(Ordering::Relaxed) {
                if let Ok(t) = procfs::sample_tree_with_pss(pid) {
                    r.fetch_max(t.rss_kib, Ordering::Relaxed);
                    if let Some(pss) = t.pss_kib {
                        let _ = p.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |old| {
                            Some(if old == u64::MAX { pss } else { old.max(pss) })
                        });
                    }
                }
                std::thread::sleep(every);
            }
        });
        Self {
            stop,
            rss_kib,
            pss_kib,
            thread,
        }
    }

    fn stop(self) -> Peaks {
        self.stop.store(true, Ordering::Relaxed);
        let _ = self.thread.join();
        let pss = self.pss_kib.load(Ordering::Relaxed);
        Peaks {
            rss_kib: self.rss_kib.load(Ordering::Relaxed),
            pss_kib: (pss != u64::MAX).then_some(pss),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sets(server: &[u32], load: &[u32], fields: [&str; 2]) -> CpuSets {
        CpuSets::new(fields, Some(server.to_vec()), Some(load.to_vec()))
            .unwrap()
            .unwrap()
    }

    #[test]
    fn by_default_the_server_takes_the_highest_cpu_but_cpu0_and_the_load_the_next() {
        let two = Cpus::by_default(&[0, 1]);
        assert_eq!((two.server.to_vec(), two.load.to_vec()), (vec![1], vec![0]));
        let four = Cpus::by_default(&[0, 1, 2, 3]);
        assert_eq!(
            (four.server.to_vec(), four.load.to_vec()),
            (vec![3], vec![2])
        );
        let one = Cpus::by_default(&[0]);
        assert!(one.server.is_empty() && one.load.is_empty());
    }

    #[test]
    fn configured_cpus_must_be_allowed_and_the_error_names_where_they_were_written() {
        let c = sets(&[2, 3], &[0, 1], ["http.cpus.server", "http.cpus.load"]);
        let four = Cpus::configured(&c, &[0, 1, 2, 3]).unwrap();
        assert_eq!(four.server.to_vec(), [2, 3]);
        assert_eq!(four.load.to_vec(), [0, 1]);
        assert_eq!((four.server.first(), four.load.first()), (Some(2), Some(0)));
        let e = Cpus::configured(&c, &[0, 1]).unwrap_err().to_string();
        assert!(
            e.starts_with("http.cpus.server: CPU 2 is not allowed on this machine")
                && e.contains("CPUs 0-1"),
            "{e}"
        );
        let c = sets(&[1], &[7], ["--server-cpus", "--load-cpus"]);
        let e = Cpus::configured(&c, &[0, 1, 2, 4, 5])
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("--load-cpus: CPU 7 is not allowed") && e.contains("CPUs 0-2, 4-5"),
            "{e}"
        );
    }

    #[test]
    fn a_cpu_set_holds_what_cpu_set_t_holds() {
        let s = CpuSet::of(&[1023, 0, 64, 63, 1024]);
        assert_eq!(s.to_vec(), [0, 63, 64, 1023]);
        assert_eq!(format!("{s:?}"), "{0, 63, 64, 1023}");
        assert!(CpuSet::default().is_empty() && CpuSet::default().first().is_none());
    }

    /// The pinned child sees exactly the set as its allowed CPUs.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_child_pinned_to_a_set_may_run_on_every_cpu_of_it_and_no_other() {
        let allowed = crate::cpus::allowed();
        let set = CpuSet::of(&allowed);
        let mut cmd = Command::new("grep");
        cmd.args(["Cpus_allowed_list", "/proc/self/status"]);
        pin(&mut cmd, set);
        let out = String::from_utf8(cmd.output().unwrap().stdout).unwrap();
        assert_eq!(
            out.split_whitespace().nth(1),
            Some(ranges(&allowed).replace(", ", ",").as_str()),
            "{out}"
        );
        let last = *allowed.last().unwrap();
        let mut cmd = Command::new("grep");
        cmd.args(["Cpus_allowed_list", "/proc/self/status"]);
        pin(&mut cmd, CpuSet::of(&[last]));
        let out = String::from_utf8(cmd.output().unwrap().stdout).unwrap();
        assert_eq!(
            out.split_whitespace().nth(1),
            Some(last.to_string().as_str())
        );
    }
}
