//! The figures of a workload job, computed from its samples: per-round ratios to the paired
//! reference run, their median with its interval, each clock's summary, contention and the
//! tooth. The job computes what it writes with these functions, and `cell collect` and
//! `cell gate` compute them again from the samples a file holds ([`crate::recompute`]), so a
//! stated figure is never believed and a change of a rule here reaches every run judged.
//!
//! Every function reads the wire [`Run`]s, with their times as written (whole microseconds):
//! a job computes from the values it records, so a figure recomputed from a file is the
//! figure the job wrote, to the last bit.

use std::collections::BTreeMap;

use cell_schema::{
    Clock, ClockStats, Contention, ProtocolMode, RatioCi, Ratios, Run, Summary, round_ratio,
    round_time,
};
use cell_stats::{median, median_ci, summary};

/// What `clock` reads of a run; `None` when the run has no figure on it (a user time a file
/// did not record apart).
pub fn on_clock(run: &Run, clock: Clock) -> Option<f64> {
    clock.of_run(run)
}

/// Per-round ratios of `row` (its runs on one phase) to the reference run each pairs with
/// (`paired_with`, the reference's `seq` in the same round), measured rounds only, in the
/// order run, with their rounds. A duet's ratios are combined two rounds at a time
/// ([`combine_swapped`]).
pub fn per_round(
    row: &[Run],
    reference: &[Run],
    clock: Clock,
    mode: ProtocolMode,
) -> Vec<(u32, f64)> {
    // The reference runs by (round, seq), once, rather than a scan per run: the adaptive
    // budget asks for every unit's ratios after every round.
    let references: BTreeMap<(u32, u32), &Run> =
        reference.iter().map(|r| ((r.round, r.seq), r)).collect();
    let ratios: Vec<(u32, f64)> = row
        .iter()
        .filter(|r| !r.warmup)
        .filter_map(|r| {
            let paired = references.get(&(r.round, r.paired_with?))?;
            let denom = on_clock(paired, clock)?;
            let num = on_clock(r, clock)?;
            (denom > 0.0).then(|| (r.round, num / denom))
        })
        .collect();
    match mode {
        ProtocolMode::Sequential => ratios,
        ProtocolMode::Duet => combine_swapped(ratios),
    }
}

/// [`per_round`] without the rounds.
pub fn ratios(row: &[Run], reference: &[Run], clock: Clock, mode: ProtocolMode) -> Vec<f64> {
    per_round(row, reference, clock, mode)
        .into_iter()
        .map(|(_, r)| r)
        .collect()
}

/// A duet's row alternates CPUs from round to round, so its ratio alternates between `r·k`
/// and `r/k` when one CPU is `k` times faster: a median of those would not cancel `k`. Each
/// two consecutive rounds, one on each CPU, become one ratio, their geometric mean, which
/// cancels `k` exactly. The CPU a row sat on alternates with the round's parity, so two
/// ratios sat on different CPUs exactly when their rounds differ in parity; a round whose
/// partner is missing (a time cap after an odd round, a run that failed) is left out.
fn combine_swapped(per_round: Vec<(u32, f64)>) -> Vec<(u32, f64)> {
    let mut out = Vec::with_capacity(per_round.len() / 2);
    let mut it = per_round.into_iter().peekable();
    while let Some((round, a)) = it.next() {
        if let Some(&(other, b)) = it.peek()
            && other % 2 != round % 2
        {
            it.next();
            out.push((round, (a * b).sqrt()));
        }
    }
    out
}

/// Per-round ratio of two rows' ratios (`a/ref ÷ b/ref`) in the same rounds: the tooth when its
/// fast row is not the reference (`b` is `None` when it is).
pub fn ratio_of_ratios(
    a: &[Run],
    b: Option<&[Run]>,
    reference: &[Run],
    clock: Clock,
    mode: ProtocolMode,
) -> Vec<f64> {
    let Some(b) = b else {
        return ratios(a, reference, clock, mode);
    };
    let rb: BTreeMap<u32, f64> = per_round(b, reference, clock, mode).into_iter().collect();
    per_round(a, reference, clock, mode)
        .into_iter()
        .filter_map(|(round, x)| rb.get(&round).map(|y| x / y))
        .collect()
}

/// The median of `xs` with its distribution-free interval at `level`, in wire form (rounded);
/// `None` for no ratios.
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

/// A summary of times in wire form (rounded).
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

/// The measured runs' summaries on each of `metrics` ([`Clock::written`]): `None` when a
/// required metric lacks a figure on a measured run; an optional one only when every measured
/// run recorded it. The system time's summary is never written: nothing judges by it, and the
/// samples hold it whole.
pub fn clock_stats(runs: &[Run], metrics: &[Clock]) -> Option<ClockStats> {
    let measured: Vec<&Run> = runs.iter().filter(|r| !r.warmup).collect();
    if measured.is_empty() {
        return None;
    }
    let mut clocks = BTreeMap::new();
    for &m in metrics {
        match measured
            .iter()
            .map(|r| on_clock(r, m))
            .collect::<Option<Vec<f64>>>()
        {
            Some(xs) => {
                clocks.insert(m, wire_summary(&xs));
            }
            None if m.required() => return None,
            None => {}
        }
    }
    Some(ClockStats { clocks, sys: None })
}

/// The ratios of a row to the reference on each of `metrics` ([`Clock::written`]): `None` when
/// a required metric has none. The reference itself is 1 on every measured run.
pub fn row_ratios(
    runs: &[Run],
    reference: Option<&[Run]>,
    mode: ProtocolMode,
    level: f64,
    metrics: &[Clock],
) -> Option<Ratios> {
    let Some(reference) = reference else {
        let ones = vec![1.0; runs.iter().filter(|r| !r.warmup).count()];
        return ratio_ci(&ones, level).map(|r| Ratios {
            clocks: metrics.iter().map(|m| (*m, r.clone())).collect(),
        });
    };
    let mut clocks = BTreeMap::new();
    for &m in metrics {
        match ratio_ci(&ratios(runs, reference, m, mode), level) {
            Some(r) => {
                clocks.insert(m, r);
            }
            None if m.required() => return None,
            None => {}
        }
    }
    Some(Ratios { clocks })
}

/// Every measured run's wall/cpu (runs with no CPU time left out).
pub fn contentions(runs: &[Run]) -> Vec<f64> {
    runs.iter()
        .filter(|r| !r.warmup && r.cpu_s > 0.0)
        .map(|r| r.wall_s / r.cpu_s)
        .collect()
}

/// The median wall/cpu of one row's measured runs, rounded.
pub fn row_contention(runs: &[Run]) -> Option<f64> {
    let c = contentions(runs);
    (!c.is_empty()).then(|| round_ratio(median(&c)))
}

/// A job's contention over every measured run of every row it timed, judged against
/// `contention_max` (`CONTENTION_MAX`).
pub fn job_contention(all: &[f64], contention_max: f64) -> Option<Contention> {
    if all.is_empty() {
        return None;
    }
    let med = median(all);
    Some(Contention {
        median: round_ratio(med),
        max: round_ratio(all.iter().copied().fold(0.0, f64::max)),
        threshold: contention_max,
        contended: crate::rules::contended(med, contention_max),
    })
}

/// The figures of one row on one phase.
#[derive(Clone, Debug, PartialEq)]
pub struct PhaseFigures {
    /// Summaries of the measured runs.
    pub stats: Option<ClockStats>,
    /// Ratios to the reference.
    pub ratio: Option<Ratios>,
    /// Median wall/cpu.
    pub contention: Option<f64>,
    /// Every run was right.
    pub all_ok: bool,
}

/// The figures of a row's runs on one phase against the reference's runs on it (`None`: the
/// row is the reference), on each of `metrics` ([`Clock::written`]).
pub fn phase_figures(
    runs: &[Run],
    reference: Option<&[Run]>,
    mode: ProtocolMode,
    level: f64,
    metrics: &[Clock],
) -> PhaseFigures {
    PhaseFigures {
        stats: clock_stats(runs, metrics),
        ratio: row_ratios(runs, reference, mode, level, metrics),
        contention: row_contention(runs),
        all_ok: runs.iter().all(|r| r.ok),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(round: u32, seq: u32, t: f64, paired_with: Option<u32>) -> Run {
        Run {
            round,
            seq,
            warmup: round == 0,
            wall_s: t,
            cpu_s: t,
            user_s: Some(t),
            sys_s: Some(0.0),
            steal_s: None,
            maxrss_kib: 1,
            ok: true,
            paired_with,
        }
    }

    #[test]
    fn a_row_pairs_with_the_reference_run_of_its_own_round_and_seq() {
        let reference = vec![
            run(0, 0, 1.0, None),
            run(1, 1, 2.0, None),
            run(1, 3, 4.0, None),
        ];
        let row = vec![run(0, 1, 9.0, Some(0)), run(1, 0, 3.0, Some(3))];
        // Warm-up left out; the row of round 1 pairs with seq 3 (4.0), not seq 1.
        assert_eq!(
            per_round(&row, &reference, Clock::Cpu, ProtocolMode::Sequential),
            vec![(1, 0.75)]
        );
    }

    #[test]
    fn a_duet_combines_rounds_of_either_parity_and_drops_an_unpartnered_one() {
        let reference: Vec<Run> = (1..=5).map(|k| run(k, 0, 1.0, None)).collect();
        // CPU 1 is twice as fast on odd rounds: ratios 2, 0.5, 2, (round 4 missing), 2.
        let row = vec![
            run(1, 1, 2.0, Some(0)),
            run(2, 1, 0.5, Some(0)),
            run(3, 1, 2.0, Some(0)),
            run(5, 1, 2.0, Some(0)),
        ];
        let got = per_round(&row, &reference, Clock::Cpu, ProtocolMode::Duet);
        assert_eq!(got, vec![(1, 1.0)], "rounds 3 and 5 sat on one CPU");
    }

    #[test]
    fn a_user_time_a_file_lacks_is_no_ratio_not_a_cpu_one() {
        let reference = vec![run(1, 0, 1.0, None)];
        let mut row = vec![run(1, 1, 2.0, Some(0))];
        row[0].user_s = None;
        assert!(per_round(&row, &reference, Clock::User, ProtocolMode::Sequential).is_empty());
        assert!(
            clock_stats(&row, &Clock::ALL)
                .unwrap()
                .on(Clock::User)
                .is_none()
        );
    }
}
