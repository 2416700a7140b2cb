//! The real executor: a unit's phase run as a process on the timing engine, sampled.

use super::{Duration, Engine, Executor, ExitKind, Path, Phase, Plan, Sample, Timed, capture};

/// Runs units as real processes on the timing engine.
pub(crate) struct RealExecutor<'a> {
    pub(crate) engine: &'a mut Engine,
    pub(crate) timed: &'a [Timed],
    pub(crate) plan: &'a Plan,
    pub(crate) scratch: &'a Path,
}

impl Executor for RealExecutor<'_> {
    fn run(&mut self, unit: usize, phase: &Phase) -> Sample {
        let (plan, scratch) = (self.plan, self.scratch);
        let argv = self.timed[unit].argv(phase, scratch);
        let l = launch(plan, scratch, &argv, phase);
        let measured = self.engine.run(l.argv, l.cwd, l.timeout, l.expected);
        sample(plan, &argv, l.expected, measured)
    }

    fn run_pair(&mut self, first: usize, second: usize, phase: &Phase) -> (Sample, Sample) {
        let (plan, scratch) = (self.plan, self.scratch);
        let (argv_a, argv_b) = (
            self.timed[first].argv(phase, scratch),
            self.timed[second].argv(phase, scratch),
        );
        let (a, b) = (
            launch(plan, scratch, &argv_a, phase),
            launch(plan, scratch, &argv_b, phase),
        );
        let expected = a.expected;
        // The protocol already chose which unit goes first, so which CPU each takes.
        // Each side judged on its own: a row that cannot start must not take its reference
        // run with it.
        let [ma, mb] = self
            .engine
            .run_pair_each(&a, &b, false)
            .unwrap_or_else(|e| {
                let again = std::io::Error::new(e.kind(), e.to_string());
                [Err(e), Err(again)]
            });
        (
            sample(plan, &argv_a, expected, ma),
            sample(plan, &argv_b, expected, mb),
        )
    }
}

/// One timed run of `argv` on `phase`, as the engine takes it.
fn launch<'a>(
    plan: &'a Plan,
    scratch: &'a Path,
    argv: &'a [String],
    phase: &Phase,
) -> crate::timing::Launch<'a> {
    crate::timing::Launch {
        argv,
        cwd: scratch,
        timeout: Duration::from_secs_f64(plan.settings.run_timeout_s),
        expected: plan.expect[phase].as_bytes(),
    }
}

/// What one timed run says: its clocks, and what was wrong with it, if anything.
fn sample(
    plan: &Plan,
    argv: &[String],
    expected: &[u8],
    measured: std::io::Result<crate::timing::Measured>,
) -> Sample {
    let m = match measured {
        Ok(m) => m,
        Err(e) => {
            return Sample {
                wall_s: 0.0,
                cpu_s: 0.0,
                user_s: 0.0,
                sys_s: 0.0,
                steal_s: None,
                maxrss_kib: 0,
                ok: false,
                wrong: Some(format!("could not start {}: {e}", argv[0])),
                printed: None,
                timed_out: true,
            };
        }
    };
    let answered = m.exit == ExitKind::Code(0) && !m.stdout.matches;
    let wrong = match &m.exit {
        ExitKind::Code(0) if m.stdout.matches => None,
        ExitKind::Code(0) => Some(format!(
            "printed {}, expected {:?}",
            capture::describe(&m.stdout),
            String::from_utf8_lossy(expected)
        )),
        ExitKind::Code(c) if m.stderr.bytes > 0 => Some(format!(
            "exited with {c}, stderr {}",
            capture::describe(&m.stderr)
        )),
        ExitKind::Code(c) => Some(format!("exited with {c}")),
        ExitKind::Signal(s) => Some(format!("killed by signal {s}")),
        ExitKind::TimedOut => Some(format!(
            "killed after RUN_TIMEOUT_S={}",
            plan.settings.run_timeout_s
        )),
    };
    Sample {
        wall_s: m.wall_s,
        cpu_s: m.cpu_s,
        user_s: m.user_s,
        sys_s: m.sys_s,
        steal_s: m.steal_s,
        maxrss_kib: m.maxrss_kib,
        ok: wrong.is_none(),
        wrong,
        printed: answered.then(|| m.stdout.printed()),
        timed_out: m.exit == ExitKind::TimedOut,
    }
}
