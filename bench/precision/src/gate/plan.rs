//! A `--gate` run resolved from the options: its phases, loads and judged rows, the binaries
//! it builds, and the duration it announces before timing.

use std::path::{Path, PathBuf};

use anyhow::Result;

use super::{Comparison, Side};
use crate::Args;
use crate::report::{Load, Workload};

/// A `--gate` run, resolved from the options.
pub struct Plan {
    /// Repeats per load.
    pub repeats: u32,
    /// Loads, each once per repeat.
    pub loads: Vec<Load>,
    /// Phases every job times.
    pub phases: Vec<Workload>,
    /// Seed of the blocks' order.
    pub seed: u64,
    /// Where the JSON goes.
    pub json: Option<PathBuf>,
    /// The judged rows, units 2, 3, …, each with the phases it is timed on.
    pub rows: Vec<(Comparison, Vec<Workload>)>,
}

impl Plan {
    /// Of the options: `--conditions` are the loads (none and other by default).
    pub fn of(a: &Args) -> Self {
        let loads = a
            .conditions
            .clone()
            .unwrap_or_else(|| vec![Load::None, Load::Other]);
        Self::new(&a.phases, &loads, a.repeats, a.seed, a.json.clone())
    }

    /// Of its parts, sorted and without repeats.
    pub fn new(
        phases: &[Workload],
        loads: &[Load],
        repeats: u32,
        seed: u64,
        json: Option<PathBuf>,
    ) -> Self {
        let mut phases = phases.to_vec();
        phases.sort_unstable();
        phases.dedup();
        let mut loads = loads.to_vec();
        loads.sort_unstable();
        loads.dedup();
        let rows = Comparison::ALL
            .into_iter()
            .map(|c| (c, phases.iter().copied().filter(|&p| c.on(p)).collect()))
            .filter(|(_, ps): &(Comparison, Vec<Workload>)| !ps.is_empty())
            .collect();
        Self {
            repeats,
            loads,
            phases,
            seed,
            json,
            rows,
        }
    }

    /// K: the judged (row, phase) units of a run, the family the new rule's level divides.
    pub fn judged_units(&self) -> usize {
        self.rows.iter().map(|(_, ps)| ps.len()).sum()
    }

    /// Every judged (unit, comparison, phase), in unit then phase order.
    pub fn judged(&self) -> Vec<(usize, Comparison, Workload)> {
        (2..)
            .zip(&self.rows)
            .flat_map(|(u, (c, ps))| ps.iter().map(move |&p| (u, *c, p)))
            .collect()
    }
}

/// The binaries: the reference, two copies of it, the two candidates.
pub struct Bins {
    /// clang -O2 of bench/workload/c.
    pub reference: String,
    /// Its copy timed as the A/A control.
    pub control: String,
    /// Its copy timed as the A/A row, and as every row of the baseline job.
    pub aa: String,
    /// Both work knobs 3% up.
    pub plus3: String,
    /// Both work knobs 10% up.
    pub plus10: String,
}

impl Bins {
    /// Builds them into `dir` from the repository at `root`.
    pub fn build(dir: &Path, root: &Path) -> Result<Self> {
        let reference = crate::compile(root, dir, "ref", &[])?;
        Ok(Self {
            control: crate::copy_of(&reference, dir, "ctl")?,
            aa: crate::copy_of(&reference, dir, "a-a")?,
            plus3: crate::compile(root, dir, "p03", &[crate::MIX_PLUS_3, crate::SIEVE_PLUS_3])?,
            plus10: crate::compile(
                root,
                dir,
                "p10",
                &[crate::MIX_PLUS_10, crate::SIEVE_PLUS_10],
            )?,
            reference,
        })
    }

    /// The binary of `cmp`'s row in `side`'s job: in the baseline every row is the A/A copy
    /// of the reference (the row before the change); in the new job the candidates are the
    /// builds doing more work.
    pub fn row(&self, cmp: Comparison, side: Side) -> &str {
        match (cmp, side) {
            (Comparison::Aa, _) | (_, Side::Baseline) => &self.aa,
            (Comparison::Plus3, Side::New) => &self.plus3,
            (Comparison::Plus10, Side::New) => &self.plus10,
        }
    }
}

/// CPU seconds of one run of the reference on each phase on this project's VM (2026-12):
/// the unit of the duration estimate.
fn seconds_per_run(phase: Workload) -> f64 {
    match phase {
        Workload::Mix => 0.32,
        Workload::Primes => 0.30,
        Workload::Fib => 0.08,
    }
}

/// The run's duration in seconds, estimated before timing from the process runs: every unit
/// stopping at its first look (`REPS`), and every unit going to `REPS_MAX`. Per repeat and
/// load: two cell jobs (each round, on each phase, the control, the judged rows and a
/// reference run per `ROWS_PER_REFERENCE` of them) and hyperfine on each judged unit of each
/// (one warm-up and `R` runs of two commands). A busy CPU adds about 15% to cell, pinned away
/// from it, and half to hyperfine, which runs unpinned and shares the busy CPU (2026-12-04:
/// one repeat of the default took 255 s under no load, 426 s under a busy other CPU).
pub fn estimate(plan: &Plan, s: &cell_model::Settings) -> (f64, f64) {
    let per = |measured: u32, load: Load| -> f64 {
        let (cell_slower, hyperfine_slower) = match load {
            Load::None => (1.0, 1.0),
            Load::Other | Load::Same => (1.15, 1.5),
        };
        let rounds = f64::from(s.drop + measured);
        let mut seconds = 0.0;
        for &p in &plan.phases {
            let judged = plan.rows.iter().filter(|(_, ps)| ps.contains(&p)).count();
            let rows = judged + 1;
            let references = rows.div_ceil(s.rows_per_reference.max(1) as usize);
            let cell = rounds * (rows + references) as f64 * cell_slower;
            let hyperfine = judged as f64 * 2.0 * (f64::from(measured) + 1.0) * hyperfine_slower;
            seconds += (cell + hyperfine) * seconds_per_run(p);
        }
        2.0 * seconds
    };
    let all = |measured: u32| -> f64 {
        let one: f64 = plan.loads.iter().map(|&l| per(measured, l)).sum();
        f64::from(plan.repeats) * one
    };
    (all(s.min_rounds()), all(s.max_rounds()))
}

/// Seconds as a reader wants them: seconds, minutes or hours.
pub fn duration(seconds: f64) -> String {
    if seconds < 120.0 {
        format!("{seconds:.0} s")
    } else if seconds < 7200.0 {
        format!("{:.0} min", seconds / 60.0)
    } else {
        format!("{:.1} h", seconds / 3600.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(phases: &[Workload], loads: &[Load], repeats: u32) -> Plan {
        Plan::new(phases, loads, repeats, 1, None)
    }

    #[test]
    fn fib_has_the_a_a_row_alone_and_the_family_counts_every_judged_unit() {
        let all = plan(
            &[Workload::Mix, Workload::Primes, Workload::Fib],
            &[Load::None],
            1,
        );
        assert_eq!(all.judged_units(), 7);
        let judged = all.judged();
        assert!(judged.contains(&(4, Comparison::Plus10, Workload::Primes)));
        assert!(
            !judged
                .iter()
                .any(|&(_, c, p)| c != Comparison::Aa && p == Workload::Fib)
        );
        let fib = plan(&[Workload::Fib], &[Load::None], 1);
        assert_eq!((fib.judged_units(), fib.rows.len()), (1, 1));
    }

    #[test]
    fn the_estimate_of_the_smoke_run_is_a_couple_of_minutes() {
        let s = cell_model::Settings::default();
        let (low, high) = estimate(&plan(&[Workload::Fib], &[Load::None], 1), &s);
        assert!(low < high && high < 120.0, "{low} {high}");
        let (low, high) = estimate(
            &plan(
                &[Workload::Mix, Workload::Primes, Workload::Fib],
                &[Load::None, Load::Other],
                20,
            ),
            &s,
        );
        assert!(low > 2.0 * 3600.0 && high < 7.0 * 3600.0, "{low} {high}");
    }
}
