//! This project's VM's recorded noise, for tests of the gate's error rates: the real
//! six-toolchain cell of `fixtures/scale/` (30 measured rounds of nine rows on a busy day:
//! per-round ratios spread ±5–10% on mix and primes, more for Go and Mono), and runs made of
//! it by drawing whole rounds again with a seeded generator.
//!
//! Drawing whole rounds keeps what one round shares: every row of a job pairs with that
//! job's reference runs of the same round, so a disturbed round moves them together, as it
//! did when it was measured. A run drawn this way holds samples only as the record would;
//! its stated figures are the fixture's, so a test recomputes them from the samples
//! (`cell_verdict::recompute::cell`) before judging it.

use std::collections::BTreeSet;

use cell_schema::{CellResult, Phase, PhaseResult, RowName, RowResult, Run};

use crate::{fixtures, read};

/// The fixture's run: `<date>-<run-id>`.
pub const SCALE_RUN: &str = "2026-12-02-4400000001";

/// The recorded cell of `fixtures/scale/`.
pub fn recorded_cell() -> CellResult {
    let path = fixtures()
        .join("scale")
        .join(SCALE_RUN)
        .join("linux-x86_64-local")
        .join("results.json");
    cell_schema::read_cell(&read(&path)).expect("the scale fixture reads")
}

/// A seeded `SplitMix64`, so this crate needs no statistics crate.
struct Draw(u64);

impl Draw {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        (z % n as u64) as usize
    }
}

/// `cell` with `rounds` measured rounds per job and phase drawn again from its own, with
/// replacement, by a generator seeded with `seed`: warm-up runs stay, and round `k` of the
/// new run is a whole recorded round (every unit of the job, its pairing kept).
pub fn resample(cell: &CellResult, seed: u64, rounds: u32) -> CellResult {
    let mut out = cell.clone();
    let mut draw = Draw(seed);
    let jobs: Vec<_> = out.jobs.keys().cloned().collect();
    for job in jobs {
        let phases: Vec<Phase> = out.jobs[&job].reference.phases.keys().cloned().collect();
        for phase in phases {
            let measured: BTreeSet<u32> = out.jobs[&job].reference.phases[&phase]
                .runs
                .iter()
                .filter(|r| !r.warmup)
                .map(|r| r.round)
                .collect();
            let measured: Vec<u32> = measured.into_iter().collect();
            if measured.is_empty() {
                continue;
            }
            let picks: Vec<u32> = (0..rounds)
                .map(|_| measured[draw.below(measured.len())])
                .collect();
            for row in units_of(&mut out, &job) {
                if let Some(pr) = row.phases.get_mut(&phase) {
                    pr.runs = redrawn(&pr.runs, &picks);
                }
            }
        }
    }
    out
}

/// Every timed row of `job` in `cell`: its reference, control, tooth rows and its rows.
fn units_of<'a>(
    cell: &'a mut CellResult,
    job: &cell_schema::ToolchainName,
) -> Vec<&'a mut RowResult> {
    let CellResult { jobs, rows, .. } = cell;
    let j = jobs.get_mut(job).expect("a job of the cell");
    let mut out: Vec<&mut RowResult> = vec![&mut j.reference];
    out.extend(j.control.as_mut());
    out.extend(j.tooth_rows.values_mut());
    out.extend(
        rows.values_mut()
            .filter(|r| &r.job == job)
            .map(|r| &mut r.row),
    );
    out
}

/// The warm-up runs, then round `k + 1` made of recorded round `picks[k]`.
fn redrawn(runs: &[Run], picks: &[u32]) -> Vec<Run> {
    let first = runs.iter().filter(|r| r.warmup).map(|r| r.round).max();
    let start = first.map_or(0, |w| w + 1);
    let mut out: Vec<Run> = runs.iter().filter(|r| r.warmup).cloned().collect();
    for (k, src) in (start..).zip(picks) {
        out.extend(runs.iter().filter(|r| r.round == *src).map(|r| Run {
            round: k,
            ..r.clone()
        }));
    }
    out
}

/// `cell` with a row `name` in the job `job`: a copy of that job's A/A control, so its
/// per-round ratios carry the control's recorded noise (a candidate built from the
/// reference's own source, as a user's added row is).
pub fn with_candidate(cell: &CellResult, job: &str, name: &str) -> CellResult {
    let mut out = cell.clone();
    let tc = cell_schema::ToolchainName::from(job);
    let control = out.jobs[&tc]
        .control
        .clone()
        .expect("the job has a control");
    out.rows.insert(
        RowName::from(name),
        cell_schema::CellRow {
            job: tc,
            row: RowResult {
                role: cell_schema::Role::Row,
                ..control
            },
        },
    );
    out
}

/// `cell` with row `row`'s every run on `phase` taking `factor` times as long.
pub fn slowed(cell: &CellResult, row: &str, phase: &str, factor: f64) -> CellResult {
    let mut out = cell.clone();
    let r = out.rows.get_mut(&RowName::from(row)).expect("the row");
    let pr: &mut PhaseResult = r
        .row
        .phases
        .get_mut(&Phase::from(phase))
        .expect("the phase");
    for run in &mut pr.runs {
        run.wall_s *= factor;
        run.cpu_s *= factor;
        run.user_s = run.user_s.map(|u| u * factor);
        run.sys_s = run.sys_s.map(|s| s * factor);
    }
    out
}

/// `cell` with every row's per-round ratio to its job's reference, on each phase and clock,
/// drawn towards that row's median ratio there by `factor` in log terms (0.1: a tenth of the
/// recorded spread; 1: as recorded): a quieter or noisier day of the same machine. The
/// reference keeps its runs and each row's median ratio is kept, so the same row on a
/// quieter day is still the same row: drawing each row's times towards their own median
/// instead would move the median ratio wherever the rounds' disturbances were shared.
pub fn scaled(cell: &CellResult, factor: f64) -> CellResult {
    let mut out = cell.clone();
    let jobs: Vec<_> = out.jobs.keys().cloned().collect();
    for job in jobs {
        let reference = out.jobs[&job].reference.clone();
        for row in units_of(&mut out, &job).into_iter().skip(1) {
            for (phase, pr) in &mut row.phases {
                if let Some(rp) = reference.phases.get(phase) {
                    scale_runs(&mut pr.runs, &rp.runs, factor);
                }
            }
        }
    }
    out
}

/// The log of the time each of a row's measured runs took, per clock, over the reference
/// run it pairs with.
fn round_ratios(runs: &[Run], reference: &[Run], pick: fn(&Run) -> f64) -> Vec<Option<f64>> {
    runs.iter()
        .map(|r| {
            let base = reference
                .iter()
                .find(|b| b.round == r.round && Some(b.seq) == r.paired_with)?;
            let (x, y) = (pick(r), pick(base));
            (!r.warmup && x > 0.0 && y > 0.0).then(|| (x / y).ln())
        })
        .collect()
}

fn median_of(logs: &[Option<f64>]) -> Option<f64> {
    let mut xs: Vec<f64> = logs.iter().flatten().copied().collect();
    xs.sort_by(f64::total_cmp);
    xs.get(xs.len() / 2).copied()
}

fn scale_runs(runs: &mut [Run], reference: &[Run], factor: f64) {
    let wall = round_ratios(runs, reference, |r| r.wall_s);
    let cpu = round_ratios(runs, reference, |r| r.cpu_s);
    let (Some(mw), Some(mc)) = (median_of(&wall), median_of(&cpu)) else {
        return;
    };
    // A log ratio drawn towards the median by `factor`: the time's multiplier.
    let by = |x: Option<f64>, m: f64| x.map_or(1.0, |x| ((m - x) * (1.0 - factor)).exp());
    for ((r, w), c) in runs.iter_mut().zip(wall).zip(cpu) {
        let (kw, kc) = (by(w, mw), by(c, mc));
        r.wall_s *= kw;
        // The split of CPU time into user and system is kept, its total scaled.
        r.cpu_s *= kc;
        r.user_s = r.user_s.map(|u| u * kc);
        r.sys_s = r.sys_s.map(|s| s * kc);
    }
}
