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
    Clock, ClockStats, Phase, Printed, ProtocolMode, RatioCi, Ratios, Run, Stopped, Summary,
    round_ratio, round_time,
};
use cell_stats::{SplitMix64, median, median_ci, shuffle, summary};
use cell_verdict::{FutilityRule, Projection};

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
    /// `FUTILITY_MARGIN`: stop when the widest interval projected at `max_rounds` stays beyond
    /// `ci_target` times this (0: never stop early).
    pub futility_margin: f64,
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
    /// The reference run it pairs with (seq), for non-reference units.
    pub paired_with: Option<u32>,
    /// In a duet, which of the two CPUs it ran on (0: the first); `None` when sequential.
    pub slot: Option<u8>,
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
    /// The widest interval's projection when the rounds stopped by futility: its unit, phase
    /// and clock.
    pub futility: Option<(usize, Phase, Clock, Projection)>,
}

/// Progress reported after every round.
#[derive(Clone, Copy, Debug)]
pub struct RoundDone {
    /// Rounds done (warm-up included).
    pub done: u32,
    /// Rounds planned so far (warm-up included).
    pub planned: u32,
}

/// Runs the protocol. Unit 0 is the reference.
pub fn run(
    units: &[Unit],
    params: &Params,
    exec: &mut dyn Executor,
    progress: &mut dyn FnMut(RoundDone),
) -> Outcome {
    let mut rng = SplitMix64::new(params.seed);
    let mut runs: Vec<Recorded> = Vec::new();
    let mut dead = vec![false; units.len()];
    let started = Instant::now();
    let mut target = params.warmup + params.min_rounds;
    let mut round = 0;
    let mut futility = None;
    let stopped = loop {
        if round == target {
            let measured = round - params.warmup;
            if params.max_rounds <= params.min_rounds {
                break Stopped::Fixed;
            }
            if measured >= params.max_rounds {
                break Stopped::MaxRounds;
            }
            if converged(units, &runs, params, &dead) {
                break Stopped::Converged;
            }
            if let Some(f) = futile(units, &runs, params, &dead) {
                futility = Some(f);
                break Stopped::Futile;
            }
            target = (target + params.step).min(params.warmup + params.max_rounds);
        }
        if round >= params.warmup + params.min_rounds.min(1)
            && started.elapsed().as_secs_f64() > params.time_cap_s
        {
            break Stopped::TimeCap;
        }
        let mut phases = params.phases.clone();
        shuffle(&mut phases, &mut rng);
        for phase in &phases {
            let rows: Vec<usize> = (1..units.len())
                .filter(|&u| !dead[u] && units[u].phases.contains(phase))
                .collect();
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
        if dead[0] {
            break Stopped::ReferenceTimedOut;
        }
    };
    Outcome {
        runs,
        measured_rounds: round.saturating_sub(params.warmup),
        stopped,
        warmup: params.warmup,
        futility,
    }
}

/// One phase of one round being run.
struct RoundCtx<'a> {
    round: u32,
    phase: &'a Phase,
    runs: &'a mut Vec<Recorded>,
    dead: &'a mut [bool],
}

impl RoundCtx<'_> {
    fn record(
        &mut self,
        (unit, seq, slot): (usize, u32, Option<u8>),
        sample: Sample,
        paired_with: Option<u32>,
    ) {
        self.dead[unit] |= sample.timed_out;
        self.runs.push(Recorded {
            unit,
            phase: self.phase.clone(),
            round: self.round,
            seq,
            sample,
            paired_with,
            slot,
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
            self.record((unit, seq, None), sample, paired);
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
            let row_slot = u8::from(!row_first);
            self.record((0, seq, Some(1 - row_slot)), reference, None);
            self.record((unit, seq + 1, Some(row_slot)), row, Some(seq));
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

/// Per-round ratios of `unit` on `phase` against its paired reference run, on `clock`.
pub fn ratios(
    runs: &[Recorded],
    warmup: u32,
    unit: usize,
    phase: &Phase,
    clock: Clock,
) -> Vec<f64> {
    ratios_by_round(runs, warmup, unit, phase, clock)
        .into_iter()
        .map(|(_, r)| r)
        .collect()
}

fn ratios_by_round(
    runs: &[Recorded],
    warmup: u32,
    unit: usize,
    phase: &Phase,
    clock: Clock,
) -> Vec<(u32, f64)> {
    let pick = |s: &Sample| on_clock(s, clock);
    // The reference runs of this phase by (round, seq), once, rather than a scan per run:
    // the adaptive budget asks for every unit's ratios after every round.
    let references: BTreeMap<(u32, u32), &Sample> = runs
        .iter()
        .filter(|x| x.unit == 0 && &x.phase == phase)
        .map(|x| ((x.round, x.seq), &x.sample))
        .collect();
    let per_round: Vec<(u32, f64, Option<u8>)> = runs
        .iter()
        .filter(|r| r.unit == unit && &r.phase == phase && r.round >= warmup)
        .filter_map(|r| {
            let reference = references.get(&(r.round, r.paired_with?))?;
            let denom = pick(reference);
            (denom > 0.0).then(|| (r.round, pick(&r.sample) / denom, r.slot))
        })
        .collect();
    if per_round.iter().all(|r| r.2.is_none()) {
        return per_round.into_iter().map(|(k, r, _)| (k, r)).collect();
    }
    combine_swapped(per_round)
}

/// A duet's row alternates CPUs from round to round, so its ratio alternates between `r·k`
/// and `r/k` when one CPU is `k` times faster: a median of those would not cancel `k`. Each
/// two consecutive rounds, one on each CPU, become one ratio, their geometric mean, which
/// cancels `k` exactly; a round whose partner is missing (a time cap after an odd round, a
/// run that failed) is left out.
fn combine_swapped(per_round: Vec<(u32, f64, Option<u8>)>) -> Vec<(u32, f64)> {
    let mut out = Vec::with_capacity(per_round.len() / 2);
    let mut it = per_round.into_iter().peekable();
    while let Some((round, a, slot)) = it.next() {
        if let Some(&(_, b, other)) = it.peek()
            && other != slot
        {
            it.next();
            out.push((round, (a * b).sqrt()));
        }
    }
    out
}

/// Per-round ratio of two units' ratios (`a/ref ÷ b/ref`) in the same rounds: the tooth when
/// its fast row is not the reference.
pub fn ratio_of_ratios(
    runs: &[Recorded],
    warmup: u32,
    a: usize,
    b: usize,
    phase: &Phase,
    clock: Clock,
) -> Vec<f64> {
    if b == 0 {
        return ratios(runs, warmup, a, phase, clock);
    }
    let rb: BTreeMap<u32, f64> = ratios_by_round(runs, warmup, b, phase, clock)
        .into_iter()
        .collect();
    ratios_by_round(runs, warmup, a, phase, clock)
        .into_iter()
        .filter_map(|(round, x)| rb.get(&round).map(|y| x / y))
        .collect()
}

/// What `clock` reads of a sample.
fn on_clock(s: &Sample, clock: Clock) -> f64 {
    match clock {
        Clock::Cpu => s.cpu_s,
        Clock::Wall => s.wall_s,
        Clock::User => s.user_s,
    }
}

/// An interval the verdict needs: its unit, phase and clock.
type IntervalKey<'a> = (usize, &'a Phase, Clock);

/// The widest interval the verdict needs, when the rounds left cannot bring it under the
/// target ([`FutilityRule::futile`]).
fn futile(
    units: &[Unit],
    runs: &[Recorded],
    params: &Params,
    dead: &[bool],
) -> Option<(usize, Phase, Clock, Projection)> {
    // A duet's interval holds one ratio per two rounds (`combine_swapped`).
    let rule = FutilityRule {
        max_samples: match params.mode {
            ProtocolMode::Sequential => params.max_rounds,
            ProtocolMode::Duet => params.max_rounds / 2,
        },
        target: params.ci_target,
        level: params.ci_level,
        margin: params.futility_margin,
    };
    let intervals: Vec<(IntervalKey<'_>, Vec<f64>)> = (1..units.len())
        .filter(|&u| !dead[u])
        .flat_map(|u| {
            units[u].phases.iter().map(move |p| {
                let clock = units[u].clock;
                ((u, p, clock), ratios(runs, params.warmup, u, p, clock))
            })
        })
        .collect();
    rule.futile(intervals.iter().map(|(k, rs)| (*k, rs.as_slice())))
        .map(|((u, p, c), proj)| (u, p.clone(), c, proj))
}

fn converged(units: &[Unit], runs: &[Recorded], params: &Params, dead: &[bool]) -> bool {
    (1..units.len()).filter(|&u| !dead[u]).all(|u| {
        units[u].phases.iter().all(|p| {
            let rs = ratios(runs, params.warmup, u, p, units[u].clock);
            rs.is_empty() || median_ci(&rs, params.ci_level).rel_half_width() <= params.ci_target
        })
    })
}

/// A ratio CI in wire form (rounded).
pub fn ratio_ci(xs: &[f64], level: f64) -> Option<RatioCi> {
    if xs.is_empty() {
        return None;
    }
    let ci = median_ci(xs, level);
    Some(RatioCi {
        n: u32::try_from(ci.n).unwrap_or(u32::MAX),
        median: round_ratio(ci.median),
        lo: round_ratio(ci.lo),
        hi: round_ratio(ci.hi),
        level: round_ratio(ci.level),
    })
}

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

/// Computes the figures of `unit` on `phase`. The user clock's summary and ratio are computed
/// only when `user` (a row of the job is judged on it): elsewhere nothing reads them and the
/// samples hold every user time. The system time's summary is never written: nothing judges
/// by it, and its column of the samples holds it whole.
pub fn figures(out: &Outcome, unit: usize, phase: &Phase, level: f64, user: bool) -> PhaseFigures {
    let mine: Vec<&Recorded> = out
        .runs
        .iter()
        .filter(|r| r.unit == unit && &r.phase == phase)
        .collect();
    let runs: Vec<Run> = mine
        .iter()
        .map(|r| Run {
            round: r.round,
            seq: r.seq,
            warmup: r.round < out.warmup,
            wall_s: round_time(r.sample.wall_s),
            cpu_s: round_time(r.sample.cpu_s),
            user_s: Some(round_time(r.sample.user_s)),
            sys_s: Some(round_time(r.sample.sys_s)),
            steal_s: r.sample.steal_s.map(round_time),
            maxrss_kib: r.sample.maxrss_kib,
            ok: r.sample.ok,
            paired_with: r.paired_with,
        })
        .collect();
    let measured: Vec<&Recorded> = mine
        .iter()
        .copied()
        .filter(|r| r.round >= out.warmup)
        .collect();
    let wall: Vec<f64> = measured.iter().map(|r| r.sample.wall_s).collect();
    let cpu: Vec<f64> = measured.iter().map(|r| r.sample.cpu_s).collect();
    let user_times: Vec<f64> = measured.iter().map(|r| r.sample.user_s).collect();
    let stats = (!measured.is_empty()).then(|| ClockStats {
        cpu: wire_summary(&cpu),
        wall: wire_summary(&wall),
        user: user.then(|| wire_summary(&user_times)),
        sys: None,
    });
    let ratio = if unit == 0 {
        let ones = vec![1.0; measured.len()];
        ratio_ci(&ones, level).map(|r| Ratios {
            cpu: r.clone(),
            wall: r.clone(),
            user: user.then_some(r),
        })
    } else {
        let on = |clock| ratio_ci(&ratios(&out.runs, out.warmup, unit, phase, clock), level);
        let (c, w) = (on(Clock::Cpu), on(Clock::Wall));
        c.zip(w).map(|(cpu, wall)| Ratios {
            cpu,
            wall,
            user: if user { on(Clock::User) } else { None },
        })
    };
    let contentions: Vec<f64> = measured
        .iter()
        .filter(|r| r.sample.cpu_s > 0.0)
        .map(|r| r.sample.wall_s / r.sample.cpu_s)
        .collect();
    let contention = (!contentions.is_empty()).then(|| round_ratio(median(&contentions)));
    let first_wrong = mine.iter().find(|r| r.sample.wrong.is_some());
    PhaseFigures {
        runs,
        stats,
        ratio,
        contention,
        contentions,
        all_ok: mine.iter().all(|r| r.sample.ok),
        wrong: first_wrong.and_then(|r| r.sample.wrong.clone()),
        printed: first_wrong.and_then(|r| r.sample.printed.clone()),
    }
}

fn wire_summary(xs: &[f64]) -> Summary {
    let s = summary(xs);
    Summary {
        n: u32::try_from(s.n).unwrap_or(u32::MAX),
        min: round_time(s.min),
        median: round_time(s.median),
        max: round_time(s.max),
        mad: round_time(s.mad),
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
        }
    }

    fn units(n: usize) -> Vec<Unit> {
        (0..n)
            .map(|_| Unit {
                phases: vec![Phase::from("mix"), Phase::from("fib")],
                clock: Clock::Cpu,
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
        let rs = ratios(&out.runs, 1, 4, &Phase::from("mix"), Clock::Cpu);
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
        let f = figures(&out, 1, &Phase::from("mix"), 0.95, true);
        assert_eq!(f.runs.len(), 4);
        assert_eq!(f.runs.iter().filter(|r| r.warmup).count(), 1);
        assert_eq!(f.stats.unwrap().cpu.n, 3);
        assert!((f.ratio.unwrap().cpu.median - 2.0).abs() < 1e-12);
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
        let rs = ratios(&out.runs, 1, 2, &Phase::from("mix"), Clock::Cpu);
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
        assert_eq!(out.measured_rounds, 10);
        let (unit, _, clock, proj) = out.futility.unwrap();
        assert_eq!((unit, clock), (1, Clock::Cpu));
        assert!(proj.projected > 0.007 * 1.25);
        assert_eq!(go(0.0).stopped, Stopped::MaxRounds);
    }
}
