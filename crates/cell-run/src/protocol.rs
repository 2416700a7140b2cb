//! The measurement protocol of docs/protocol.md: rounds in a seeded random order, the reference
//! interleaved so each row pairs with a nearby reference run (sequential) or runs at the same
//! moment on another CPU (duet), warm-up excluded, an adaptive budget that stops early when it
//! is futile, and the statistics of per-round ratios.
//!
//! The protocol is written against the [`Executor`] trait so it can be driven by scripted
//! timings in tests; the real executor is [`crate::timing::Engine`].

use std::time::Instant;

use cell_schema::{
    Clock, ClockStats, Phase, Printed, ProtocolMode, Ratios, Run, Stopped, as_written,
};
use cell_stats::{SplitMix64, median_ci, shuffle};
use cell_verdict::{FutilityRule, Projection, figures};

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
    /// The reference run it pairs with (seq), for non-reference units. (In a duet, the CPU a
    /// row sat on alternates with the round's parity: the figures read it from the round.)
    pub paired_with: Option<u32>,
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
        mode: params.mode,
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
                (
                    (u, p, clock),
                    ratios(runs, params.warmup, u, p, clock, params.mode),
                )
            })
        })
        .collect();
    rule.futile(intervals.iter().map(|(k, rs)| (*k, rs.as_slice())))
        .map(|((u, p, c), proj)| (u, p.clone(), c, proj))
}

fn converged(units: &[Unit], runs: &[Recorded], params: &Params, dead: &[bool]) -> bool {
    (1..units.len()).filter(|&u| !dead[u]).all(|u| {
        units[u].phases.iter().all(|p| {
            let rs = ratios(runs, params.warmup, u, p, units[u].clock, params.mode);
            rs.is_empty() || median_ci(&rs, params.ci_level).rel_half_width() <= params.ci_target
        })
    })
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
        assert_eq!(out.measured_rounds, 10);
        let (unit, _, clock, proj) = out.futility.unwrap();
        assert_eq!((unit, clock), (1, Clock::Cpu));
        assert!(proj.projected > 0.007 * 1.25);
        assert_eq!(go(0.0).stopped, Stopped::MaxRounds);
    }
}
