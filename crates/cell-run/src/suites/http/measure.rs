//! One measured load of the http suite: the server's CPU, memory and the machine's
//! other load over it, and the wait for the port's `TIME_WAIT` sockets to drain.

use super::{
    Ctx, Duration, HttpMode, HttpRun, Instant, Prepared, Run, RunError, Running, TimeWait, blame,
    procfs, round_ratio, round_time, run_load, scratch_dir, spec, suite_figures, workload_of,
};

/// How often the server's tree is sampled for RSS and PSS during a measured load: a child
/// that lives less than this can fall between two samples (its CPU still counts, through
/// the parent's reaped-children times).
pub(super) const SAMPLE_EVERY: Duration = Duration::from_millis(50);

/// A measured load before the server's start-up and drain are added.
pub(super) struct Measured {
    index: u32,
    seq: u32,
    load: super::super::session::LoadRun,
    server_cpu_s: f64,
    load_cpu_share: f64,
    other_cpu_share: f64,
    peaks: super::super::server::Peaks,
    rss: (Option<u64>, Option<u64>),
    /// The contamination rule of `versions.env`.
    rule: cell_verdict::Contamination,
}

impl Measured {
    /// The run as written: its CPU per 1k responses and its contamination computed from the
    /// figures it records (rounded as written), so the record recomputes to the same bits.
    pub(super) fn run(self, startup_s: f64, time_wait: TimeWait) -> HttpRun {
        let server_cpu_s = round_time(self.server_cpu_s);
        let mut run = HttpRun {
            index: self.index,
            seq: self.seq,
            startup_s: round_time(startup_s),
            time_wait,
            server_cpu_s,
            cpu_ms_per_1k: suite_figures::run_cpu_ms_per_1k(
                server_cpu_s,
                self.load.report.requests,
            ),
            peak_rss_kib: self.peaks.rss_kib,
            peak_pss_kib: self.peaks.pss_kib,
            rss_start_kib: self.rss.0,
            rss_end_kib: self.rss.1,
            load_cpu_s: round_time(self.load.cpu_s),
            load_cpu_share: round_ratio(self.load_cpu_share),
            other_cpu_share: round_ratio(self.other_cpu_share),
            contaminated: Vec::new(),
            load: self.load.report,
        };
        run.contaminated = self.rule.of_run(&run);
        run
    }
}

/// The measured load of one combination on a running server: its tree's CPU and RSS, the
/// machine's CPU, the load generator's own, and the contamination rule's reading of them.
pub(super) fn measure_load(
    ctx: &Ctx<'_>,
    p: &Prepared,
    running: &mut Running,
    at: &Run<'_>,
) -> Result<Measured, RunError> {
    let (w, expect) = workload_of(ctx, p, at.key);
    let lg = &ctx.generators[at.key.tool];
    let tool = lg.tool.name();
    let url = format!("http://127.0.0.1:{}{}", p.server.port, w.path);
    let scratch = scratch_dir(p, at.seq, "run")?;
    let shape = &ctx.d.shapes[at.key.shape];
    running.start_sampling(SAMPLE_EVERY);
    let pid = running.pid();
    let before = procfs::sample_tree(pid).map_err(|e| {
        format!(
            "reading the server's process tree before run {}: {e}",
            at.index + 1
        )
    })?;
    let machine_start = procfs::machine_cpu().ok();
    let self_start = self_cpu_s();
    let load = run_load(
        lg,
        &spec(
            &url,
            shape,
            &ctx.requests[&at.key.workload],
            ctx.d.duration_s,
        ),
        ctx.cpus.load,
        &scratch,
    );
    let self_s = self_cpu_s() - self_start;
    let _ = std::fs::remove_dir_all(&scratch);
    // A dead server is reported with its exit status, whatever the load tool made of it.
    let what = format!("measured run {} of {} under {tool}", at.index + 1, w.name);
    if let Err(e) = running.alive() {
        return Err(RunError::Server(format!("{e} during {what}")));
    }
    let load = match load {
        Ok(l) => l,
        Err(m) => return Err(blame(running, p, (w, expect), &what, &m)),
    };
    let after = procfs::sample_tree(pid).ok();
    let machine_end = procfs::machine_cpu().ok();
    // One process for every run: its VmHWM holds every earlier run's peak, so only what the
    // sampler saw during this one counts.
    let peaks = running.stop_sampling(ctx.d.mode != HttpMode::SameProcess);
    let server_cpu_s = (after.map_or(before.cpu_s, |s| s.cpu_s) - before.cpu_s).max(0.0);
    let load_cpu_share = if load.wall_s > 0.0 {
        load.cpu_s / load.wall_s
    } else {
        0.0
    };
    let other_cpu_share = match (machine_start, machine_end) {
        (Some(a), Some(b)) if b.total_s > a.total_s => {
            let busy = b.busy_s - a.busy_s;
            // The harness's own sampling is ours, not another tenant's.
            ((busy - server_cpu_s - load.cpu_s - self_s) / (b.total_s - a.total_s)).max(0.0)
        }
        _ => 0.0,
    };
    Ok(Measured {
        index: at.index,
        seq: at.seq,
        load,
        server_cpu_s,
        load_cpu_share,
        other_cpu_share,
        peaks,
        rss: (Some(before.rss_kib), after.map(|s| s.rss_kib)),
        rule: cell_verdict::Contamination::of_settings(&ctx.plan.settings),
    })
}

/// User+sys seconds of this process so far (every thread, the samplers included).
fn self_cpu_s() -> f64 {
    // SAFETY: rusage is plain data filled by the kernel.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &raw mut ru) } != 0 {
        return 0.0;
    }
    let secs = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 / 1e6;
    secs(ru.ru_utime) + secs(ru.ru_stime)
}

/// Waits (bounded) for `TIME_WAIT` sockets on the port to drain.
pub(super) fn drain(port: u16, bound: Duration) -> TimeWait {
    let t = Instant::now();
    let before = procfs::time_wait(port).unwrap_or(0);
    let mut now = before;
    while now > 0 && t.elapsed() < bound {
        std::thread::sleep(Duration::from_millis(100));
        now = procfs::time_wait(port).unwrap_or(0);
    }
    TimeWait {
        before,
        after: now,
        waited_s: round_time(t.elapsed().as_secs_f64()),
    }
}
