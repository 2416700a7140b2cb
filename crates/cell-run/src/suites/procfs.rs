//! A server's process tree read from Linux `/proc`: which processes, how much memory and CPU
//! they hold, and the machine's CPU ticks, sampled from outside while the load runs.
//!
//! On other systems every reading fails with [`std::io::ErrorKind::Unsupported`] (and
//! [`tree`] is empty), because none of this is portable and a wrong figure is worse than none.

use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// What [`sample_tree`] read over a process tree at one instant.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TreeSample {
    /// Resident set now (`VmRSS`), summed over the tree, KiB: a page shared by several
    /// processes (a forked child's inherited pages) counts once per process.
    pub rss_kib: u64,
    /// Proportional set now (`Pss` of `smaps_rollup`), summed over the tree, KiB: a shared
    /// page counts once, split over its sharers. `None` when the root's cannot be read
    /// (kernels before 4.14, another user's process).
    pub pss_kib: Option<u64>,
    /// The largest peak resident set (`VmHWM`) of any one process, KiB.
    pub hwm_kib: u64,
    /// User + system seconds of the tree, including children it has already reaped.
    pub cpu_s: f64,
    /// Threads over the tree.
    pub threads: u32,
    /// Open file descriptors over the tree (entries of `/proc/<pid>/fd`).
    pub fds: u32,
    /// Processes in the tree.
    pub processes: u32,
}

/// The machine's CPU time since boot, all CPUs together.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct MachineCpu {
    /// Seconds spent in user, nice, system, irq, softirq and steal.
    pub busy_s: f64,
    /// Busy seconds plus idle and iowait.
    pub total_s: f64,
}

/// Every pid of the tree rooted at `root` (root first, then breadth first, children in pid
/// order), from the ppid field of `/proc/<pid>/stat`; processes that vanish while reading
/// are skipped. Empty when `root` does not exist or `/proc` cannot be read.
pub fn tree(root: i32) -> Vec<i32> {
    let Ok(proc) = proc_dir() else {
        return Vec::new();
    };
    if !proc.join(root.to_string()).join("stat").exists() {
        return Vec::new();
    }
    let Ok(entries) = fs::read_dir(proc) else {
        return Vec::new();
    };
    let mut children: BTreeMap<i32, Vec<i32>> = BTreeMap::new();
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<i32>().ok())
        else {
            continue;
        };
        // A process may exit between listing and reading: it is simply not in the tree.
        let Ok(stat) = fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        if let Some(st) = parse_stat(&stat) {
            children.entry(st.ppid).or_default().push(pid);
        }
    }
    let mut out = vec![root];
    let mut i = 0;
    while i < out.len() {
        if let Some(kids) = children.get_mut(&out[i]) {
            kids.sort_unstable();
            // A pid cannot be its own ancestor, but guard anyway so a torn read cannot loop.
            for &k in kids.iter() {
                if !out.contains(&k) {
                    out.push(k);
                }
            }
        }
        i += 1;
    }
    out
}

/// Memory, CPU, threads and descriptors summed over the tree rooted at `root` (without PSS:
/// see [`sample_tree_with_pss`]).
///
/// Errs only when `root` itself cannot be read (gone, or not Linux); descendants that exit
/// mid-sample are left out of the sum.
pub fn sample_tree(root: i32) -> io::Result<TreeSample> {
    sample(root, false)
}

/// [`sample_tree`] with each process's PSS read too (`smaps_rollup`: the kernel walks the
/// process's page tables under its mmap lock, so only the http sampler asks for it).
pub fn sample_tree_with_pss(root: i32) -> io::Result<TreeSample> {
    sample(root, true)
}

fn sample(root: i32, pss: bool) -> io::Result<TreeSample> {
    let proc = proc_dir()?;
    let mut sample = TreeSample::default();
    // Read the root first and on its own so its disappearance is an error, not an empty sum.
    let first = read_process(proc, root, pss)?;
    sample.pss_kib = first.pss_kib.map(|_| 0);
    sample.add(&first);
    for pid in tree(root).into_iter().filter(|&p| p != root) {
        if let Ok(p) = read_process(proc, pid, pss) {
            sample.add(&p);
        }
    }
    Ok(sample)
}

/// Sockets in `TIME_WAIT` (state `06`) whose local or remote port is `port`, over
/// `/proc/net/tcp` and `/proc/net/tcp6`.
pub fn time_wait(port: u16) -> io::Result<u64> {
    let proc = proc_dir()?;
    let mut total = count_time_wait(&fs::read_to_string(proc.join("net/tcp"))?, port);
    // A kernel without IPv6 has no tcp6 table; that is zero sockets, not a failure.
    match fs::read_to_string(proc.join("net/tcp6")) {
        Ok(text) => total += count_time_wait(&text, port),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    Ok(total)
}

/// The machine's CPU time from the first line of `/proc/stat`, in seconds.
pub fn machine_cpu() -> io::Result<MachineCpu> {
    let text = fs::read_to_string(proc_dir()?.join("stat"))?;
    let (busy, total) = parse_cpu_line(text.lines().next().unwrap_or_default())
        .ok_or_else(|| bad_data(format!("/proc/stat has no cpu line: {text:.80}")))?;
    let hz = clock_ticks();
    Ok(MachineCpu {
        busy_s: busy as f64 / hz,
        total_s: total as f64 / hz,
    })
}

/// Steal ticks of CPU `cpu` so far (time the hypervisor ran something else while this CPU
/// had work); `None` off Linux and where the kernel does not report steal.
pub fn steal_ticks(cpu: u32) -> Option<u64> {
    let text = fs::read_to_string(proc_dir().ok()?.join("stat")).ok()?;
    parse_steal(&text, cpu)
}

/// Ticks to seconds, at the kernel's `USER_HZ`.
pub fn ticks_s(ticks: u64) -> f64 {
    ticks as f64 / clock_ticks()
}

/// The steal column (the 8th value) of the `cpu<N>` line of `/proc/stat` text; `None` when
/// there is no such line or the line stops before it (kernels before 2.6.11).
fn parse_steal(stat: &str, cpu: u32) -> Option<u64> {
    let name = format!("cpu{cpu}");
    let line = stat
        .lines()
        .find(|l| l.split_ascii_whitespace().next() == Some(name.as_str()))?;
    // user nice system idle iowait irq softirq steal
    line.split_ascii_whitespace().nth(8)?.parse().ok()
}

/// `/proc`, or `Unsupported` off Linux, where a `/proc` (if any) means something else.
fn proc_dir() -> io::Result<&'static Path> {
    if cfg!(target_os = "linux") {
        Ok(Path::new("/proc"))
    } else {
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "process trees are read from Linux /proc",
        ))
    }
}

/// Clock ticks per second, asked once: it is fixed for the life of the system.
fn clock_ticks() -> f64 {
    static HZ: OnceLock<f64> = OnceLock::new();
    *HZ.get_or_init(|| {
        // SAFETY: sysconf reads a constant and has no preconditions.
        let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
        // -1 means unknown; 100 is what Linux reports on every architecture in practice.
        if hz > 0 { hz as f64 } else { 100.0 }
    })
}

fn bad_data(msg: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg)
}

/// The fields of `/proc/<pid>/stat` this module uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Stat {
    ppid: i32,
    /// utime + stime + cutime + cstime, clock ticks.
    cpu_ticks: u64,
    threads: u32,
}

/// Parses a `/proc/<pid>/stat` line. The command name sits in parentheses and may itself
/// contain spaces and `)`, so the fields start after the *last* `)`.
fn parse_stat(line: &str) -> Option<Stat> {
    let rest = &line[line.rfind(')')? + 1..];
    // Fields counted from 3 (state) in proc(5); index here is field number − 3.
    let f: Vec<&str> = rest.split_ascii_whitespace().collect();
    let num = |i: usize| f.get(i)?.parse::<u64>().ok();
    let cpu_ticks = num(11)? + num(12)? + num(13)? + num(14)?;
    Some(Stat {
        ppid: f.get(1)?.parse().ok()?,
        cpu_ticks,
        threads: f.get(17)?.parse().ok()?,
    })
}

/// A `kB` line of `/proc/<pid>/status`, such as `VmRSS:    1234 kB`.
fn status_kib(status: &str, key: &str) -> Option<u64> {
    status.lines().find_map(|l| {
        let v = l.strip_prefix(key)?.strip_prefix(':')?;
        v.split_ascii_whitespace().next()?.parse().ok()
    })
}

/// One process as read from `/proc/<pid>`.
struct Process {
    stat: Stat,
    rss_kib: u64,
    pss_kib: Option<u64>,
    hwm_kib: u64,
    fds: u32,
}

impl TreeSample {
    fn add(&mut self, p: &Process) {
        self.rss_kib += p.rss_kib;
        match p.pss_kib {
            Some(pss) => {
                if let Some(sum) = self.pss_kib.as_mut() {
                    *sum += pss;
                }
            }
            // A process holding memory whose PSS could not be read (it exited between the
            // two reads, or is hidden): the sum would be short, so there is none.
            None if p.rss_kib > 0 => self.pss_kib = None,
            None => {}
        }
        self.hwm_kib = self.hwm_kib.max(p.hwm_kib);
        self.cpu_s += p.stat.cpu_ticks as f64 / clock_ticks();
        self.threads += p.stat.threads;
        self.fds += p.fds;
        self.processes += 1;
    }
}

fn read_process(proc: &Path, pid: i32, pss: bool) -> io::Result<Process> {
    let dir: PathBuf = proc.join(pid.to_string());
    let stat_text = fs::read_to_string(dir.join("stat"))?;
    let stat = parse_stat(&stat_text)
        .ok_or_else(|| bad_data(format!("unreadable /proc/{pid}/stat: {stat_text:.120}")))?;
    let status = fs::read_to_string(dir.join("status"))?;
    let fds = match fs::read_dir(dir.join("fd")) {
        Ok(d) => u32::try_from(d.count()).unwrap_or(u32::MAX),
        // Another user's process: its memory and CPU still count, its descriptors are hidden.
        Err(e) if e.kind() == io::ErrorKind::PermissionDenied => 0,
        Err(e) => return Err(e),
    };
    Ok(Process {
        stat,
        // Kernel threads and zombies have no Vm lines: they hold no user memory.
        rss_kib: status_kib(&status, "VmRSS").unwrap_or(0),
        // A zombie's rollup cannot be read: it holds no memory (RSS 0), so it adds nothing.
        pss_kib: pss
            .then(|| fs::read_to_string(dir.join("smaps_rollup")).ok())
            .flatten()
            .and_then(|r| status_kib(&r, "Pss")),
        hwm_kib: status_kib(&status, "VmHWM").unwrap_or(0),
        fds,
    })
}

/// Counts `TIME_WAIT` rows of a `/proc/net/tcp{,6}` table with `port` at either end.
fn count_time_wait(table: &str, port: u16) -> u64 {
    let port_of = |addr: &str| {
        let (_, hex) = addr.rsplit_once(':')?;
        u16::from_str_radix(hex, 16).ok()
    };
    let mut n = 0;
    // The first line is the column header.
    for line in table.lines().skip(1) {
        let mut f = line.split_ascii_whitespace().skip(1);
        let (Some(local), Some(remote), Some(state)) = (f.next(), f.next(), f.next()) else {
            continue;
        };
        if state == "06" && (port_of(local) == Some(port) || port_of(remote) == Some(port)) {
            n += 1;
        }
    }
    n
}

/// `(busy, total)` clock ticks from the aggregate `cpu` line of `/proc/stat`.
fn parse_cpu_line(line: &str) -> Option<(u64, u64)> {
    let mut f = line.split_ascii_whitespace();
    if f.next()? != "cpu" {
        return None;
    }
    let v: Vec<u64> = f.map(str::parse).collect::<Result<_, _>>().ok()?;
    // user nice system idle iowait irq softirq steal [guest guest_nice]; guest time is
    // already inside user and nice, so it is not added again.
    let at = |i: usize| v.get(i).copied().unwrap_or(0);
    if v.len() < 4 {
        return None;
    }
    let busy = at(0) + at(1) + at(2) + at(5) + at(6) + at(7);
    Some((busy, busy + at(3) + at(4)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{TcpListener, TcpStream};
    use std::process::Command;
    use std::time::{Duration, Instant};

    #[test]
    fn stat_with_parenthesis_in_comm() {
        let line = "4242 ((a) b)) S 17 4242 4242 0 -1 4194560 500 0 0 0 \
                    7 3 2 1 20 0 5 0 123456 1000000 250 18446744073709551615 \
                    1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0";
        assert_eq!(
            parse_stat(line),
            Some(Stat {
                ppid: 17,
                cpu_ticks: 13,
                threads: 5
            })
        );
        assert_eq!(parse_stat("12 (truncated"), None);
    }

    #[test]
    fn status_fields() {
        let s = "Name:\tx\nVmHWM:\t    2048 kB\nVmRSS:\t    1024 kB\nThreads:\t3\n";
        assert_eq!(status_kib(s, "VmRSS"), Some(1024));
        assert_eq!(status_kib(s, "VmHWM"), Some(2048));
        assert_eq!(status_kib(s, "VmSwap"), None);
    }

    #[test]
    fn time_wait_rows() {
        // Port 8080 = 0x1F90; rows: TIME_WAIT to it, TIME_WAIT from it, ESTABLISHED, LISTEN,
        // TIME_WAIT on another port.
        let table = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n   \
            0: 0100007F:D431 0100007F:1F90 06 00000000:00000000 03:00000F9E 00000000     0        0 0 3 0000000000000000\n   \
            1: 0100007F:1F90 0100007F:D432 06 00000000:00000000 03:00000F9E 00000000     0        0 0 3 0000000000000000\n   \
            2: 0100007F:1F90 0100007F:D433 01 00000000:00000000 00:00000000 00000000  1000        0 1 1 0000000000000000\n   \
            3: 00000000:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 2 1 0000000000000000\n   \
            4: 0100007F:0050 0100007F:D434 06 00000000:00000000 03:00000F9E 00000000     0        0 0 3 0000000000000000\n";
        assert_eq!(count_time_wait(table, 8080), 2);
        assert_eq!(count_time_wait(table, 80), 1);
        assert_eq!(count_time_wait(table, 9), 0);
        let v6 = "  sl  local_address                         remote_address                        st\n   \
            0: 0000000000000000FFFF00000100007F:1F90 0000000000000000FFFF00000100007F:E000 06 0\n";
        assert_eq!(count_time_wait(v6, 8080), 1);
    }

    #[test]
    fn steal_of_one_cpu_line() {
        let stat = "cpu  3228 0 674 2504 47 0 51 236 0 0\n\
                    cpu0 1491 0 327 1389 17 0 26 118 0 0\n\
                    cpu1 1737 0 346 1115 30 0 24 119 0 0\n\
                    cpu10 1 0 1 1 0 0 0 7\n\
                    intr 41154927 0 0\n";
        assert_eq!(parse_steal(stat, 1), Some(119));
        assert_eq!(parse_steal(stat, 0), Some(118));
        assert_eq!(parse_steal(stat, 10), Some(7), "cpu10 is not cpu1");
        assert_eq!(parse_steal(stat, 2), None, "no such CPU");
        // Before the steal column existed: seven values.
        let old = "cpu  10 0 5 100 1 0 0\ncpu0 10 0 5 100 1 0 0\n";
        assert_eq!(parse_steal(old, 0), None);
        assert_eq!(parse_steal("", 0), None);
    }

    #[test]
    fn steal_is_read_where_the_kernel_reports_it() {
        let cpu = crate::cpus::allowed().first().copied().unwrap_or(0);
        match fs::read_to_string("/proc/stat") {
            Ok(text) if cfg!(target_os = "linux") => assert_eq!(
                steal_ticks(cpu).is_some(),
                parse_steal(&text, cpu).is_some(),
                "{text:.200}"
            ),
            _ => assert_eq!(steal_ticks(cpu), None),
        }
    }

    #[test]
    fn cpu_line() {
        let line = "cpu  100 2 30 1000 40 5 6 7 50 0";
        assert_eq!(parse_cpu_line(line), Some((150, 1190)));
        assert_eq!(parse_cpu_line("cpu0 1 2 3 4"), None);
        assert_eq!(parse_cpu_line("intr 1 2 3"), None);
    }

    #[test]
    fn samples_this_process() {
        let me = i32::try_from(std::process::id()).expect("pid fits i32");
        let s = sample_tree(me).expect("sample self");
        assert!(s.rss_kib > 0, "{s:?}");
        assert!(s.hwm_kib > 0, "{s:?}");
        assert!(s.threads >= 1, "{s:?}");
        assert!(s.fds >= 3, "{s:?}");
        assert!(s.processes >= 1, "{s:?}");
        assert!(s.cpu_s >= 0.0, "{s:?}");
        assert_eq!(tree(me).first(), Some(&me));
    }

    #[test]
    fn vanished_root_is_an_error() {
        // pid_max is at most 2^22, so this pid cannot exist.
        assert!(sample_tree(i32::MAX).is_err());
        assert!(tree(i32::MAX).is_empty());
    }

    #[test]
    fn tree_of_a_shell_and_two_sleeps() {
        let mut child = Command::new("sh")
            .args(["-c", "sleep 5 & sleep 5 & wait"])
            .spawn()
            .expect("spawn sh");
        let root = i32::try_from(child.id()).expect("pid fits i32");
        let deadline = Instant::now() + Duration::from_secs(3);
        let mut pids = tree(root);
        while pids.len() < 3 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
            pids = tree(root);
        }
        let sample = sample_tree(root);
        for &pid in pids.iter().rev() {
            // SAFETY: plain kill(2) on pids this test started; no memory is involved.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        let _ = child.wait();
        assert_eq!(pids.len(), 3, "{pids:?}");
        assert_eq!(pids[0], root);
        let sample = sample.expect("sample tree");
        assert_eq!(sample.processes, 3, "{sample:?}");
        assert!(sample.threads >= 3, "{sample:?}");
    }

    /// A forked child holding 64 MiB of private, written memory: the tree's RSS and PSS both
    /// hold it (the parent's own do not), and the child's PSS is at least all of it.
    #[test]
    fn tree_memory_includes_a_forked_childs_private_pages() {
        const MIB: u64 = 64;
        let script = format!(
            "import os, sys, time\n\
             r, w = os.pipe()\n\
             if os.fork() == 0:\n    \
                 held = b'x' * ({MIB} << 20)\n    \
                 os.write(w, b'1')\n    \
                 time.sleep(30)\n    \
                 os._exit(0)\n\
             os.read(r, 1)\n\
             sys.stdout.write('ready\\n')\n\
             sys.stdout.flush()\n\
             time.sleep(30)\n"
        );
        let mut parent = Command::new("python3")
            .args(["-c", &script])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("spawn python3");
        let mut line = String::new();
        let mut out = std::io::BufReader::new(parent.stdout.take().expect("stdout"));
        std::io::BufRead::read_line(&mut out, &mut line).expect("read ready");
        let root = i32::try_from(parent.id()).expect("pid fits i32");
        let pids = tree(root);
        let (whole, own) = (
            sample_tree_with_pss(root),
            read_process(proc_dir().unwrap(), root, true),
        );
        let child = pids.get(1).map(|&c| sample_tree_with_pss(c));
        for &pid in pids.iter().rev() {
            // SAFETY: plain kill(2) on pids this test started; no memory is involved.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        let _ = parent.wait();
        assert_eq!(line, "ready\n");
        assert_eq!(pids.len(), 2, "{pids:?}");
        let (whole, own) = (whole.expect("tree"), own.expect("parent"));
        let child = child.expect("a child").expect("child sample");
        let held = MIB << 10;
        let (pss, child_pss) = (whole.pss_kib.expect("PSS"), child.pss_kib.expect("PSS"));
        assert!(child_pss >= held, "child PSS {child_pss} KiB < {held}");
        assert!(
            own.rss_kib < held && own.pss_kib.expect("PSS") < held,
            "parent alone"
        );
        assert!(whole.rss_kib >= held + own.rss_kib, "tree RSS {whole:?}");
        assert!(
            pss >= held && pss < whole.rss_kib,
            "tree PSS {pss} KiB: {whole:?}"
        );
    }

    #[test]
    fn time_wait_on_loopback() {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let client = TcpStream::connect(("127.0.0.1", port)).expect("connect");
        let (server, _) = listener.accept().expect("accept");
        // The side that closes first holds TIME_WAIT: close the client, then the server.
        drop(client);
        std::thread::sleep(Duration::from_millis(20));
        drop(server);
        let deadline = Instant::now() + Duration::from_secs(1);
        let mut n = time_wait(port).expect("read tcp tables");
        while n == 0 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
            n = time_wait(port).expect("read tcp tables");
        }
        assert!(n >= 1, "no TIME_WAIT socket on port {port}");
    }

    #[test]
    fn machine_cpu_is_sane() {
        let m = machine_cpu().expect("read /proc/stat");
        assert!(
            m.total_s > 0.0 && m.busy_s > 0.0 && m.busy_s <= m.total_s,
            "{m:?}"
        );
    }
}
