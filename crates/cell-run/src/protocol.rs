//! The measurement protocol of docs/protocol.md: rounds in a seeded random order, the reference
//! interleaved so each row pairs with a nearby reference run (sequential) or runs at the same
//! moment on another CPU (duet), warm-up excluded, an adaptive budget that stops early when it
//! is futile, and the statistics of per-round ratios.
//!
//! The protocol is written against the [`Executor`] trait so it can be driven by scripted
//! timings in tests; the real executor is [`crate::timing::Engine`].

use std::collections::BTreeMap;
use std::time::Instant;

use cell_schema::{
    Clock, ClockStats, Phase, Printed, ProtocolMode, Ratios, Run, Stopped, as_written,
};
use cell_stats::{SplitMix64, shuffle};
use cell_verdict::{Against, FutilityRule, Projection, UnitCall, figures};

/// One measurement as an executor reports it.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    /// Wall seconds.
    pub wall_s: f64,
    /// CPU seconds, user + system.
    pub cpu_s: f64,
    /// User CPU seconds (0 when the executor does not tell them apart).
    pub user_s: f64,
    /// System CPU seconds.
    pub sys_s: f64,
    /// Seconds stolen by the hypervisor from the CPU it ran on, where the kernel says.
    pub steal_s: Option<f64>,
    /// Peak RSS, KiB.
    pub maxrss_kib: u64,
    /// Right answer and clean exit.
    pub ok: bool,
    /// What it printed or how it ended, when not ok.
    pub wrong: Option<String>,
    /// The size and digest of a wrong answer it printed.
    pub printed: Option<Printed>,
    /// It hit the per-process timeout: stop running this unit.
    pub timed_out: bool,
}

/// Runs one unit on one phase once.
pub trait Executor {
    /// Runs `unit` (an index into the protocol's units) on `phase`.
    fn run(&mut self, unit: usize, phase: &Phase) -> Sample;

    /// Runs `first` on the first of two CPUs and `second` on the other at the same moment
    /// (the duet protocol). An executor that cannot runs them one after the other.
    fn run_pair(&mut self, first: usize, second: usize, phase: &Phase) -> (Sample, Sample) {
        (self.run(first, phase), self.run(second, phase))
    }
}

/// A timed thing: the reference, the control, a row, or the tooth's slow row.
#[derive(Clone, Debug)]
pub struct Unit {
    /// The phases it is timed on.
    pub phases: Vec<Phase>,
    /// The clock its verdict uses (for the adaptive budget).
    pub clock: Clock,
    /// A row the gate judges: its rounds go on while it can still change its verdict. The
    /// others (the A/A control, a tooth's row) are timed on a phase while a judged row is.
    pub judged: bool,
    /// Per phase, the baseline's per-round ratios this row is judged against, where the job
    /// could read the baseline the gate will use; without, the row aims at `CI_TARGET`.
    pub against: BTreeMap<Phase, Vec<f64>>,
}

impl Unit {
    /// A unit with no baseline: a judged row aiming at `CI_TARGET`, or one that follows them.
    pub fn new(phases: Vec<Phase>, clock: Clock, judged: bool) -> Self {
        Self {
            phases,
            clock,
            judged,
            against: BTreeMap::new(),
        }
    }
}

/// Protocol parameters.
#[derive(Clone, Debug)]
pub struct Params {
    /// Phases in order.
    pub phases: Vec<Phase>,
    /// Warm-up rounds.
    pub warmup: u32,
    /// Measured rounds to start with.
    pub min_rounds: u32,
    /// Measured rounds the budget may reach (equal to `min_rounds` when fixed).
    pub max_rounds: u32,
    /// Rounds added per step.
    pub step: u32,
    /// CI half-width target (fraction).
    pub ci_target: f64,
    /// Confidence level.
    pub ci_level: f64,
    /// Rows between two reference runs.
    pub rows_per_reference: u32,
    /// Seconds of timing after which no round is added.
    pub time_cap_s: f64,
    /// Seed of the order.
    pub seed: u64,
    /// Sequential or duet.
    pub mode: ProtocolMode,
    /// `FUTILITY_MARGIN`: stop a unit when its interval projected at `max_rounds` stays beyond
    /// what would settle it by this factor (0: never stop early).
    pub futility_margin: f64,
    /// `TOLERANCE`, for a unit judged against a baseline.
    pub tolerance: f64,
    /// The per-unit levels of the largest and the smallest family of the gate the run can
    /// have ([`cell_verdict::Against`]).
    pub settle_level: f64,
    /// See `settle_level`.
    pub fail_level: f64,
}

impl Params {
    /// The duet protocol swaps CPUs every pair, so each row's measured pairs must be an even
    /// number to sit on each CPU equally: its rounds are rounded up to even.
    #[must_use]
    pub fn normalized(mut self) -> Self {
        if self.mode == ProtocolMode::Duet {
            let even = |n: u32| n.saturating_add(n % 2);
            self.min_rounds = even(self.min_rounds);
            self.max_rounds = even(self.max_rounds).max(self.min_rounds);
            self.step = even(self.step.max(1));
        }
        self
    }
}

/// One recorded run of a unit.
#[derive(Clone, Debug)]
pub struct Recorded {
    /// The unit's index (0 is the reference).
    pub unit: usize,
    /// The phase it ran.
    pub phase: Phase,
    /// The round (the first `warmup` are warm-up).
    pub round: u32,
    /// Position in the round's order for that phase.
    pub seq: u32,
    /// What the executor measured.
    pub sample: Sample,
    /// The reference run it pairs with (seq), for non-reference units. (In a duet, the CPU a
    /// row sat on alternates with the round's parity: the figures read it from the round.)
    pub paired_with: Option<u32>,
}

/// Why one unit's rounds on one phase stopped.
#[derive(Clone, Debug, PartialEq)]
pub struct UnitStop {
    /// Why.
    pub reason: Stopped,
    /// Its measured rounds.
    pub rounds: u32,
    /// Its interval's relative half-width when it stopped: its own ratio's, or, against a
    /// baseline, the change's.
    pub half_width: Option<f64>,
    /// The half-width projected at `REPS_MAX`, when it stopped by futility.
    pub projected: Option<f64>,
    /// It was judged against the baseline's ratios (else against `CI_TARGET`).
    pub against_baseline: bool,
}

/// Everything the protocol recorded.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// Every run, in the order run.
    pub runs: Vec<Recorded>,
    /// Measured rounds run.
    pub measured_rounds: u32,
    /// Why the rounds stopped.
    pub stopped: Stopped,
    /// Warm-up rounds.
    pub warmup: u32,
    /// How the runs were paired: sequential or duet.
    pub mode: ProtocolMode,
    /// The widest projection among the units that stopped by futility: its unit, phase and
    /// clock.
    pub futility: Option<(usize, Phase, Clock, Projection)>,
    /// Why each unit (not the reference) stopped on each phase.
    pub stops: BTreeMap<(usize, Phase), UnitStop>,
}

/// Progress reported after every round.
#[derive(Clone, Copy, Debug)]
pub struct RoundDone {
    /// Rounds done (warm-up included).
    pub done: u32,
    /// Rounds planned so far (warm-up included).
    pub planned: u32,
}

/// Runs the protocol. Unit 0 is the reference. Each (unit, phase) goes on on its own: at
/// every look of the adaptive budget a judged row is called ([`FutilityRule::call`]) and
/// stops when settled, converged or futile; the units that follow them (the A/A control, a
/// tooth's row) stop on a phase when its last judged row does; a phase with no unit left is
/// no longer run, and the job ends when no unit is.
pub fn run(
    units: &[Unit],
    params: &Params,
    exec: &mut dyn Executor,
    progress: &mut dyn FnMut(RoundDone),
) -> Outcome {
    let mut rng = SplitMix64::new(params.seed);
    let mut runs: Vec<Recorded> = Vec::new();
    let mut dead = vec![false; units.len()];
    let mut looks = Looks::new(units, params);
    let started = Instant::now();
    let mut target = params.warmup + params.min_rounds;
    let mut round = 0;
    let stopped = loop {
        if round == target {
            let measured = round - params.warmup;
            if let Some(why) = looks.look(&runs, measured, &dead) {
                break why;
            }
            target = (target + params.step).min(params.warmup + params.max_rounds);
        }
        if round >= params.warmup + params.min_rounds.min(1)
            && started.elapsed().as_secs_f64() > params.time_cap_s
        {
            looks.stop_all(Stopped::TimeCap, round - params.warmup, &runs);
            break Stopped::TimeCap;
        }
        let mut phases = params.phases.clone();
        shuffle(&mut phases, &mut rng);
        for phase in &phases {
            let rows: Vec<usize> = (1..units.len())
                .filter(|&u| !dead[u] && looks.active(u, phase))
                .collect();
            if rows.is_empty() && round >= params.warmup {
                continue;
            }
            let mut ctx = RoundCtx {
                round,
                phase,
                runs: &mut runs,
                dead: &mut dead,
            };
            match params.mode {
                ProtocolMode::Sequential => {
                    let slots = order(&rows, params.rows_per_reference, &mut rng);
                    ctx.sequential(&slots, exec);
                }
                ProtocolMode::Duet => {
                    let mut rows = rows;
                    shuffle(&mut rows, &mut rng);
                    ctx.duet(&rows, exec);
                }
            }
        }
        round += 1;
        progress(RoundDone {
            done: round,
            planned: target,
        });
        looks.note_dead(&dead, round.saturating_sub(params.warmup), &runs);
        if dead[0] {
            looks.stop_all(
                Stopped::ReferenceTimedOut,
                round.saturating_sub(params.warmup),
                &runs,
            );
            break Stopped::ReferenceTimedOut;
        }
    };
    Outcome {
        measured_rounds: round.saturating_sub(params.warmup),
        stopped,
        warmup: params.warmup,
        mode: params.mode,
        futility: looks.widest_futility(units),
        stops: looks.stops,
        runs,
    }
}

/// The state of every (unit, phase) between looks of the adaptive budget.
struct Looks<'a> {
    units: &'a [Unit],
    params: &'a Params,
    stops: BTreeMap<(usize, Phase), UnitStop>,
    /// Futility projections, for the job's line.
    projections: BTreeMap<(usize, Phase), Projection>,
}

impl<'a> Looks<'a> {
    fn new(units: &'a [Unit], params: &'a Params) -> Self {
        Self {
            units,
            params,
            stops: BTreeMap::new(),
            projections: BTreeMap::new(),
        }
    }

    /// Whether `unit` is still timed on `phase`.
    fn active(&self, unit: usize, phase: &Phase) -> bool {
        self.units[unit].phases.contains(phase) && !self.stops.contains_key(&(unit, phase.clone()))
    }

    fn rule(&self) -> FutilityRule {
        FutilityRule {
            // A duet's interval holds one ratio per two rounds (`combine_swapped`).
            max_samples: match self.params.mode {
                ProtocolMode::Sequential => self.params.max_rounds,
                ProtocolMode::Duet => self.params.max_rounds / 2,
            },
            target: self.params.ci_target,
            level: self.params.ci_level,
            margin: self.params.futility_margin,
        }
    }

    /// One look after `measured` rounds: every active judged row called, the units that
    /// follow them stopped where none is left; why the job stops when no unit is active.
    fn look(&mut self, runs: &[Recorded], measured: u32, dead: &[bool]) -> Option<Stopped> {
        let p = self.params;
        let fixed = p.max_rounds <= p.min_rounds;
        let last = measured >= p.max_rounds;
        let rule = self.rule();
        let units = self.units;
        for (u, unit) in units.iter().enumerate().skip(1) {
            if !unit.judged || dead[u] {
                continue;
            }
            for phase in &unit.phases {
                if !self.active(u, phase) {
                    continue;
                }
                let own = ratios(runs, p.warmup, u, phase, unit.clock, p.mode);
                let against = unit.against.get(phase).map(|b| Against {
                    ratios: b,
                    tolerance: p.tolerance,
                    settle_level: p.settle_level,
                    fail_level: p.fail_level,
                });
                let call = rule.call(&own, against.as_ref());
                let (reason, half_width, projected) = match call {
                    _ if fixed => (Stopped::Fixed, None, None),
                    UnitCall::Converged(h) => (Stopped::Converged, Some(h), None),
                    UnitCall::Settled(h) => (Stopped::Settled, Some(h), None),
                    UnitCall::Futile(pr) if !last => {
                        self.projections.insert((u, phase.clone()), pr);
                        (Stopped::Futile, Some(pr.half_width), Some(pr.projected))
                    }
                    _ if last => (Stopped::MaxRounds, None, None),
                    _ => continue,
                };
                self.stop(u, phase, reason, measured, runs, half_width, projected);
            }
        }
        self.stop_followers(measured, runs);
        let left =
            (1..self.units.len()).any(|u| self.units[u].phases.iter().any(|ph| self.active(u, ph)));
        (!left).then(|| self.why_done(fixed))
    }

    #[expect(clippy::too_many_arguments, reason = "one stop, as recorded")]
    fn stop(
        &mut self,
        unit: usize,
        phase: &Phase,
        reason: Stopped,
        measured: u32,
        runs: &[Recorded],
        half_width: Option<f64>,
        projected: Option<f64>,
    ) {
        let rounds = unit_rounds(runs, self.params.warmup, unit, phase).min(measured);
        self.stops.insert(
            (unit, phase.clone()),
            UnitStop {
                reason,
                rounds,
                half_width,
                projected,
                against_baseline: self.units[unit].against.contains_key(phase),
            },
        );
    }

    /// A control or tooth row stops on a phase once no judged row is timed there.
    fn stop_followers(&mut self, measured: u32, runs: &[Recorded]) {
        for u in 1..self.units.len() {
            if self.units[u].judged {
                continue;
            }
            for phase in self.units[u].phases.clone() {
                let judged_left =
                    (1..self.units.len()).any(|j| self.units[j].judged && self.active(j, &phase));
                if self.active(u, &phase) && !judged_left {
                    let reason = if self.params.max_rounds <= self.params.min_rounds {
                        Stopped::Fixed
                    } else {
                        Stopped::WithRows
                    };
                    self.stop(u, &phase, reason, measured, runs, None, None);
                }
            }
        }
    }

    /// A unit that hit `RUN_TIMEOUT_S` stops on every phase.
    fn note_dead(&mut self, dead: &[bool], measured: u32, runs: &[Recorded]) {
        let units = self.units;
        for (u, unit) in units.iter().enumerate().skip(1) {
            if !dead[u] {
                continue;
            }
            for phase in unit.phases.clone() {
                if self.active(u, &phase) {
                    self.stop(u, &phase, Stopped::TimedOut, measured, runs, None, None);
                }
            }
        }
    }

    /// Every unit still timed stops for one reason (the time cap, the reference's timeout).
    fn stop_all(&mut self, reason: Stopped, measured: u32, runs: &[Recorded]) {
        for u in 1..self.units.len() {
            for phase in self.units[u].phases.clone() {
                if self.active(u, &phase) {
                    self.stop(u, &phase, reason, measured, runs, None, None);
                }
            }
        }
    }

    /// The job's reason: fixed rounds, else that of the units that stopped last, the one that
    /// spent the budget first (`max_rounds`, `futile`, `settled`, `converged`, `timed_out`);
    /// a job with no judged row ran its first rounds and stopped: `converged`.
    fn why_done(&self, fixed: bool) -> Stopped {
        if fixed {
            return Stopped::Fixed;
        }
        let last = self.stops.values().map(|s| s.rounds).max().unwrap_or(0);
        let at_last: Vec<Stopped> = self
            .stops
            .values()
            .filter(|s| s.rounds == last)
            .map(|s| s.reason)
            .collect();
        [
            Stopped::MaxRounds,
            Stopped::Futile,
            Stopped::Settled,
            Stopped::Converged,
            Stopped::TimedOut,
        ]
        .into_iter()
        .find(|r| at_last.contains(r))
        .unwrap_or(Stopped::Converged)
    }

    /// The futile unit with the widest projection, for the job's line.
    fn widest_futility(&self, units: &[Unit]) -> Option<(usize, Phase, Clock, Projection)> {
        self.projections
            .iter()
            .max_by(|a, b| a.1.projected.total_cmp(&b.1.projected))
            .map(|((u, p), pr)| (*u, p.clone(), units[*u].clock, *pr))
    }
}

/// The measured rounds `unit` ran on `phase`.
fn unit_rounds(runs: &[Recorded], warmup: u32, unit: usize, phase: &Phase) -> u32 {
    let n = runs
        .iter()
        .filter(|r| r.unit == unit && &r.phase == phase && r.round >= warmup)
        .count();
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// One phase of one round being run.
struct RoundCtx<'a> {
    round: u32,
    phase: &'a Phase,
    runs: &'a mut Vec<Recorded>,
    dead: &'a mut [bool],
}

impl RoundCtx<'_> {
    fn record(&mut self, (unit, seq): (usize, u32), sample: Sample, paired_with: Option<u32>) {
        self.dead[unit] |= sample.timed_out;
        self.runs.push(Recorded {
            unit,
            phase: self.phase.clone(),
            round: self.round,
            seq,
            sample,
            paired_with,
        });
    }

    /// One process at a time, in the order of `slots`.
    fn sequential(&mut self, slots: &[Slot], exec: &mut dyn Executor) {
        for (seq, slot) in (0..).zip(slots) {
            let (unit, paired) = match *slot {
                Slot::Reference => (0, None),
                Slot::Row {
                    unit,
                    reference_seq,
                } => (unit, Some(reference_seq)),
            };
            if self.dead[unit] {
                continue;
            }
            let sample = exec.run(unit, self.phase);
            self.record((unit, seq), sample, paired);
        }
    }

    /// Each row at the same moment as its own reference run, on the other CPU. Which CPU the
    /// row takes alternates from round to round (and starts on a different one for
    /// neighbouring units), so over an even number of rounds each row sits on each CPU
    /// equally and a faster CPU favours no one.
    fn duet(&mut self, rows: &[usize], exec: &mut dyn Executor) {
        let mut seq = 0;
        for &unit in rows {
            if self.dead[0] {
                return;
            }
            if self.dead[unit] {
                continue;
            }
            let row_first = (self.round as usize + unit).is_multiple_of(2);
            let (reference, row) = if row_first {
                let (r, f) = exec.run_pair(unit, 0, self.phase);
                (f, r)
            } else {
                exec.run_pair(0, unit, self.phase)
            };
            self.record((0, seq), reference, None);
            self.record((unit, seq + 1), row, Some(seq));
            seq += 2;
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Slot {
    Reference,
    Row { unit: usize, reference_seq: u32 },
}

/// One phase of one round: rows shuffled, cut into chunks of at most `k`, a reference run at a
/// random place inside each chunk; every row pairs with its own chunk's reference run.
fn order(rows: &[usize], k: u32, rng: &mut SplitMix64) -> Vec<Slot> {
    let mut rows = rows.to_vec();
    shuffle(&mut rows, rng);
    if rows.is_empty() {
        return vec![Slot::Reference];
    }
    let k = k.max(1) as usize;
    let chunks = rows.len().div_ceil(k);
    let base = rows.len() / chunks;
    let extra = rows.len() % chunks;
    let mut out = Vec::with_capacity(rows.len() + chunks);
    let mut it = rows.into_iter();
    for c in 0..chunks {
        let len = base + usize::from(c < extra);
        let chunk: Vec<usize> = it.by_ref().take(len).collect();
        let at = rng.below(len as u64 + 1) as usize;
        let ref_seq = u32::try_from(out.len() + at).expect("rounds are small");
        for (i, &unit) in chunk.iter().enumerate() {
            if i == at {
                out.push(Slot::Reference);
            }
            out.push(Slot::Row {
                unit,
                reference_seq: ref_seq,
            });
        }
        if at == chunk.len() {
            out.push(Slot::Reference);
        }
    }
    out
}

/// The runs of `unit` on `phase` in wire form, every time as the record holds it (whole
/// microseconds): the figures are computed from exactly what the job writes, so `cell collect`
/// recomputes them to the bit.
pub fn wire_runs(runs: &[Recorded], warmup: u32, unit: usize, phase: &Phase) -> Vec<Run> {
    runs.iter()
        .filter(|r| r.unit == unit && &r.phase == phase)
        .map(|r| Run {
            round: r.round,
            seq: r.seq,
            warmup: r.round < warmup,
            wall_s: as_written(r.sample.wall_s),
            cpu_s: as_written(r.sample.cpu_s),
            user_s: Some(as_written(r.sample.user_s)),
            sys_s: Some(as_written(r.sample.sys_s)),
            steal_s: r.sample.steal_s.map(as_written),
            maxrss_kib: r.sample.maxrss_kib,
            ok: r.sample.ok,
            paired_with: r.paired_with,
        })
        .collect()
}

/// Per-round ratios of `unit` on `phase` against its paired reference run, on `clock`
/// ([`figures::ratios`]).
pub fn ratios(
    runs: &[Recorded],
    warmup: u32,
    unit: usize,
    phase: &Phase,
    clock: Clock,
    mode: ProtocolMode,
) -> Vec<f64> {
    figures::ratios(
        &wire_runs(runs, warmup, unit, phase),
        &wire_runs(runs, warmup, 0, phase),
        clock,
        mode,
    )
}

/// Per-round ratio of two units' ratios (`a/ref ÷ b/ref`) in the same rounds: the tooth when
/// its fast row is not the reference ([`figures::ratio_of_ratios`]).
pub fn ratio_of_ratios(out: &Outcome, a: usize, b: usize, phase: &Phase, clock: Clock) -> Vec<f64> {
    let wire = |u| wire_runs(&out.runs, out.warmup, u, phase);
    let fast = (b != 0).then(|| wire(b));
    figures::ratio_of_ratios(&wire(a), fast.as_deref(), &wire(0), clock, out.mode)
}

pub use figures::ratio_ci;

/// The wire form of one unit on one phase: runs, stats, ratios, contention.
pub struct PhaseFigures {
    /// Every run, warm-up included.
    pub runs: Vec<Run>,
    /// Stats of measured runs.
    pub stats: Option<ClockStats>,
    /// Ratios to the reference.
    pub ratio: Option<Ratios>,
    /// Median wall/cpu.
    pub contention: Option<f64>,
    /// Every measured wall/cpu, for the job's contention.
    pub contentions: Vec<f64>,
    /// Every run was ok.
    pub all_ok: bool,
    /// The first wrong output.
    pub wrong: Option<String>,
    /// The size and digest of that output, when it was a wrong answer.
    pub printed: Option<Printed>,
}

/// Computes the figures of `unit` on `phase` from its runs as written
/// ([`figures::phase_figures`]) on each of `metrics` ([`Clock::written`]): an optional
/// metric's summary and ratio only where a row of the job is judged on it; elsewhere nothing
/// reads them and the samples hold every run's figure.
pub fn figures(
    out: &Outcome,
    unit: usize,
    phase: &Phase,
    level: f64,
    metrics: &[Clock],
) -> PhaseFigures {
    let runs = wire_runs(&out.runs, out.warmup, unit, phase);
    let reference = (unit != 0).then(|| wire_runs(&out.runs, out.warmup, 0, phase));
    let f = figures::phase_figures(&runs, reference.as_deref(), out.mode, level, metrics);
    let first_wrong = out
        .runs
        .iter()
        .filter(|r| r.unit == unit && &r.phase == phase)
        .find(|r| r.sample.wrong.is_some());
    PhaseFigures {
        contentions: figures::contentions(&runs),
        runs,
        stats: f.stats,
        ratio: f.ratio,
        contention: f.contention,
        all_ok: f.all_ok,
        wrong: first_wrong.and_then(|r| r.sample.wrong.clone()),
        printed: first_wrong.and_then(|r| r.sample.printed.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Scripted timings: unit u takes `base[u]` seconds, scaled by a per-run jitter that
    /// follows a fixed sequence, so the protocol's arithmetic is checked exactly.
    struct Scripted {
        base: Vec<f64>,
        calls: Vec<(usize, Phase)>,
        jitter: SplitMix64,
        spread: f64,
    }

    /// [`Scripted`] with a spread of its own on some phases.
    struct PerPhase {
        inner: Scripted,
        spread: BTreeMap<&'static str, f64>,
    }

    impl Executor for PerPhase {
        fn run(&mut self, unit: usize, phase: &Phase) -> Sample {
            let keep = self.inner.spread;
            if let Some(s) = self.spread.get(phase.as_str()) {
                self.inner.spread = *s;
            }
            let out = self.inner.run(unit, phase);
            self.inner.spread = keep;
            out
        }
    }

    impl Executor for Scripted {
        fn run(&mut self, unit: usize, phase: &Phase) -> Sample {
            self.calls.push((unit, phase.clone()));
            let j = 1.0 + self.spread * (self.jitter.below(1000) as f64 / 1000.0 - 0.5);
            let t = self.base[unit] * j;
            Sample {
                wall_s: t * 1.01,
                cpu_s: t,
                user_s: t * 0.98,
                sys_s: t * 0.02,
                steal_s: None,
                maxrss_kib: 1000,
                ok: true,
                wrong: None,
                printed: None,
                timed_out: false,
            }
        }
    }

    fn params(min: u32, max: u32) -> Params {
        Params {
            phases: vec![Phase::from("mix"), Phase::from("fib")],
            warmup: 1,
            min_rounds: min,
            max_rounds: max,
            step: 5,
            ci_target: 0.007,
            ci_level: 0.95,
            rows_per_reference: 3,
            time_cap_s: 1e9,
            seed: 42,
            mode: ProtocolMode::Sequential,
            futility_margin: 0.0,
            tolerance: 0.015,
            settle_level: 1.0 - 0.05 / 27.0,
            fail_level: 0.95,
        }
    }

    fn units(n: usize) -> Vec<Unit> {
        (0..n)
            .map(|_| {
                Unit::new(
                    vec![Phase::from("mix"), Phase::from("fib")],
                    Clock::Cpu,
                    true,
                )
            })
            .collect()
    }

    #[test]
    fn every_round_runs_every_unit_once_and_the_reference_per_chunk() {
        let mut ex = Scripted {
            base: vec![1.0, 2.0, 1.5, 1.0, 3.0, 0.5, 0.7],
            calls: vec![],
            jitter: SplitMix64::new(1),
            spread: 0.0,
        };
        let out = run(&units(7), &params(4, 4), &mut ex, &mut |_| {});
        assert_eq!(out.stopped, Stopped::Fixed);
        assert_eq!(out.measured_rounds, 4);
        for round in 0..5 {
            for phase in ["mix", "fib"] {
                let in_round: Vec<&Recorded> = out
                    .runs
                    .iter()
                    .filter(|r| r.round == round && r.phase.as_str() == phase)
                    .collect();
                // 6 rows in chunks of 3 → 2 reference runs
                assert_eq!(in_round.iter().filter(|r| r.unit == 0).count(), 2);
                for u in 1..7 {
                    assert_eq!(in_round.iter().filter(|r| r.unit == u).count(), 1);
                }
            }
        }
        // exact ratios without jitter
        let rs = ratios(&out.runs, 1, 4, &Phase::from("mix"), Clock::Cpu, out.mode);
        assert_eq!(rs.len(), 4);
        assert!(rs.iter().all(|r| (r - 3.0).abs() < 1e-12));
    }

    #[test]
    fn orders_differ_between_rounds_and_replay_from_the_seed() {
        let go = |seed| {
            let mut ex = Scripted {
                base: vec![1.0; 6],
                calls: vec![],
                jitter: SplitMix64::new(1),
                spread: 0.0,
            };
            let mut p = params(6, 6);
            p.seed = seed;
            run(&units(6), &p, &mut ex, &mut |_| {});
            ex.calls
        };
        assert_eq!(go(9), go(9));
        assert_ne!(go(9), go(10));
    }

    #[test]
    fn adaptive_budget_adds_rounds_while_wide_and_stops_at_max() {
        let mut ex = Scripted {
            base: vec![1.0, 1.0],
            calls: vec![],
            jitter: SplitMix64::new(3),
            spread: 0.2,
        };
        let out = run(&units(2), &params(10, 30), &mut ex, &mut |_| {});
        assert_eq!(out.stopped, Stopped::MaxRounds);
        assert_eq!(out.measured_rounds, 30);

        let mut quiet = Scripted {
            base: vec![1.0, 1.0],
            calls: vec![],
            jitter: SplitMix64::new(3),
            spread: 0.001,
        };
        let out = run(&units(2), &params(10, 30), &mut quiet, &mut |_| {});
        assert_eq!(out.stopped, Stopped::Converged);
        assert_eq!(out.measured_rounds, 10);
    }

    #[test]
    fn warmup_is_recorded_but_excluded() {
        let mut ex = Scripted {
            base: vec![1.0, 2.0],
            calls: vec![],
            jitter: SplitMix64::new(1),
            spread: 0.0,
        };
        let out = run(&units(2), &params(3, 3), &mut ex, &mut |_| {});
        let f = figures(&out, 1, &Phase::from("mix"), 0.95, &Clock::ALL);
        assert_eq!(f.runs.len(), 4);
        assert_eq!(f.runs.iter().filter(|r| r.warmup).count(), 1);
        assert_eq!(f.stats.unwrap().on(Clock::Cpu).unwrap().n, 3);
        assert!((f.ratio.unwrap().on(Clock::Cpu).unwrap().median - 2.0).abs() < 1e-12);
    }

    /// Records which unit ran on which CPU of each pair.
    struct Pairs {
        inner: Scripted,
        pairs: Vec<(usize, usize)>,
    }

    impl Executor for Pairs {
        fn run(&mut self, unit: usize, phase: &Phase) -> Sample {
            self.inner.run(unit, phase)
        }

        fn run_pair(&mut self, first: usize, second: usize, phase: &Phase) -> (Sample, Sample) {
            self.pairs.push((first, second));
            (self.inner.run(first, phase), self.inner.run(second, phase))
        }
    }

    #[test]
    fn a_duet_pairs_every_row_with_its_own_reference_run_and_swaps_cpus() {
        let mut ex = Pairs {
            inner: Scripted {
                base: vec![1.0, 1.0, 2.0],
                calls: vec![],
                jitter: SplitMix64::new(1),
                spread: 0.0,
            },
            pairs: vec![],
        };
        let mut p = params(3, 3);
        p.mode = ProtocolMode::Duet;
        let p = p.normalized();
        assert_eq!((p.min_rounds, p.max_rounds), (4, 4), "rounded up to even");
        let out = run(&units(3), &p, &mut ex, &mut |_| {});
        assert_eq!(out.measured_rounds, 4);
        // Every pair holds the reference and one row; 5 rounds × 2 phases × 2 rows.
        assert_eq!(ex.pairs.len(), 20);
        assert!(ex.pairs.iter().all(|&(a, b)| (a == 0) != (b == 0)));
        // Over the measured rounds each row sat on each CPU equally often.
        for row in [1, 2] {
            let first = out
                .runs
                .iter()
                .filter(|r| r.unit == row && r.round >= 1)
                .count();
            let on_first: usize = ex.pairs.iter().skip(4).filter(|&&(a, _)| a == row).count();
            assert_eq!(first, 8);
            assert_eq!(on_first * 2, first, "row {row}");
        }
        // A row's ratio pairs with the reference run of its own pair.
        for r in out.runs.iter().filter(|r| r.unit != 0) {
            let reference = out
                .runs
                .iter()
                .find(|x| {
                    x.unit == 0
                        && x.round == r.round
                        && x.phase == r.phase
                        && Some(x.seq) == r.paired_with
                })
                .expect("its reference run");
            assert_eq!(reference.seq + 1, r.seq);
        }
        let rs = ratios(&out.runs, 1, 2, &Phase::from("mix"), Clock::Cpu, out.mode);
        assert!(rs.iter().all(|r| (r - 2.0).abs() < 1e-12));
    }

    #[test]
    fn futility_stops_a_wide_budget_early_and_a_margin_of_zero_does_not() {
        let go = |margin: f64| {
            let mut ex = Scripted {
                base: vec![1.0, 1.0],
                calls: vec![],
                jitter: SplitMix64::new(3),
                spread: 0.3,
            };
            let mut p = params(10, 30);
            p.futility_margin = margin;
            run(&units(2), &p, &mut ex, &mut |_| {})
        };
        let out = go(1.25);
        assert_eq!(out.stopped, Stopped::Futile);
        // Not at the first look: the floor the next run's comparison needs (15 of 30).
        assert_eq!(out.measured_rounds, 15);
        let (unit, _, clock, proj) = out.futility.unwrap();
        assert_eq!((unit, clock), (1, Clock::Cpu));
        assert!(proj.projected > 0.007 * 1.25);
        assert_eq!(go(0.0).stopped, Stopped::MaxRounds);
    }

    fn stop<'a>(out: &'a Outcome, unit: usize, phase: &str) -> &'a UnitStop {
        &out.stops[&(unit, Phase::from(phase))]
    }

    /// Regression: one hopeless interval stopped every row of the job by futility.
    #[test]
    fn a_hopeless_phase_stops_alone_and_the_rest_go_on() {
        let mut ex = PerPhase {
            inner: Scripted {
                base: vec![1.0, 1.0, 1.0],
                calls: vec![],
                jitter: SplitMix64::new(5),
                spread: 0.04,
            },
            spread: [("fib", 0.5)].into(),
        };
        let mut p = params(10, 30);
        p.futility_margin = 1.25;
        let mut us = units(3);
        us[2].judged = false; // the A/A control
        let out = run(&us, &p, &mut ex, &mut |_| {});
        let fib = stop(&out, 1, "fib");
        assert_eq!((fib.reason, fib.rounds), (Stopped::Futile, 15), "{fib:?}");
        assert!(fib.projected.unwrap() > 0.007 * 1.25);
        let mix = stop(&out, 1, "mix");
        assert!(mix.rounds > 15, "mix went on: {mix:?}");
        assert!(
            matches!(mix.reason, Stopped::Converged | Stopped::MaxRounds),
            "{mix:?}"
        );
        // The control follows its phase's rows, and fib was run no more once they stopped.
        assert_eq!(stop(&out, 2, "fib").reason, Stopped::WithRows);
        assert_eq!(stop(&out, 2, "fib").rounds, 15);
        assert_eq!(stop(&out, 2, "mix").rounds, mix.rounds);
        let fib_runs = out
            .runs
            .iter()
            .filter(|r| r.phase.as_str() == "fib" && r.round > 15)
            .count();
        assert_eq!(fib_runs, 0);
        assert_eq!(out.measured_rounds, mix.rounds);
    }

    /// A row whose change against the baseline already passes stops; one that looks like a
    /// failure is never stopped short of `REPS_MAX`.
    #[test]
    fn a_settled_row_stops_and_a_failing_one_runs_to_the_end() {
        let mut ex = Scripted {
            base: vec![1.0, 1.0, 1.1],
            calls: vec![],
            jitter: SplitMix64::new(8),
            spread: 0.004,
        };
        let mut p = params(10, 30);
        p.futility_margin = 1.25;
        let mut us = units(3);
        let same: Vec<f64> = (0..30)
            .map(|i| 1.0 + f64::from(i % 5 - 2) * 0.001)
            .collect();
        for u in &mut us[1..] {
            u.against = [
                (Phase::from("mix"), same.clone()),
                (Phase::from("fib"), same.clone()),
            ]
            .into();
        }
        let out = run(&us, &p, &mut ex, &mut |_| {});
        for phase in ["mix", "fib"] {
            let settled = stop(&out, 1, phase);
            assert_eq!(
                (settled.reason, settled.rounds),
                (Stopped::Settled, 10),
                "{settled:?}"
            );
            let slower = stop(&out, 2, phase);
            assert_eq!(
                (slower.reason, slower.rounds),
                (Stopped::MaxRounds, 30),
                "{slower:?}"
            );
        }
        assert_eq!(out.stopped, Stopped::MaxRounds);
    }
}
