//! The gate's error rates on this VM's recorded noise: runs drawn again, whole rounds at a
//! time, from the real six-toolchain cell of `fixtures/scale/` (per-round ratios spread
//! ±5–10% on mix and primes), each judged by the real gate against another drawn the same
//! way.
//!
//! Regression: the A/A control's width was read as bias, so on such a host every phase was
//! INCONCLUSIVE and a row 10% slower passed with exit 0; and the gate compared a new interval
//! with the baseline's point ratio, ignoring the baseline's own noise.

use cell_schema::store::{HistoryRun, RunDirName};
use cell_schema::{CellId, CellResult, GateReport, GateStatus};
use cell_testkit::noise::{recorded_cell, resample, scaled, slowed, with_candidate};
use cell_verdict::{GateConfig, gate, recompute};

/// The repository's own configuration: `TOLERANCE` ±1.5%, `CI_LEVEL` 0.95.
fn config() -> GateConfig {
    let plan = cell_model::Plan::load(&cell_testkit::repo_root()).unwrap();
    GateConfig::from_plan(&plan, None, [])
}

/// A run of one cell, its figures as its samples give them.
fn run(name: &str, cell: &CellResult, config: &GateConfig) -> HistoryRun {
    let cell = recompute::cell(cell, config).value;
    HistoryRun {
        dir: std::path::PathBuf::from(name),
        name: RunDirName::parse(name).unwrap(),
        cells: [(CellId::new(cell.cell.id.as_str()), cell)].into(),
        record: None,
        imported_soak: None,
    }
}

/// One side of a drawn comparison: its rounds, and its noise as a share of the recorded.
#[derive(Clone, Copy)]
struct Side {
    rounds: u32,
    noise: f64,
}

const RECORDED_10: Side = Side {
    rounds: 10,
    noise: 1.0,
};

/// One gate of a run drawn with `seed` against a baseline drawn with another seed, each as
/// its side says, the new one changed by `change` first.
fn judged_as(
    recorded: &CellResult,
    seed: u64,
    (new, base): (Side, Side),
    config: &GateConfig,
    change: impl Fn(CellResult) -> CellResult,
) -> GateReport {
    let drawn = |side: Side, seed| {
        let c = resample(recorded, seed, side.rounds);
        if (side.noise - 1.0).abs() < f64::EPSILON {
            c
        } else {
            scaled(&c, side.noise)
        }
    };
    let base = run("2026-12-02-1", &drawn(base, 2 * seed + 1), config);
    let new = run("2026-12-03-2", &change(drawn(new, 2 * seed)), config);
    gate(&new, &[base], config).unwrap()
}

/// [`judged_as`] with both sides of `rounds` rounds of the recorded noise.
fn judged(
    recorded: &CellResult,
    seed: u64,
    rounds: u32,
    config: &GateConfig,
    change: impl Fn(CellResult) -> CellResult,
) -> GateReport {
    let side = Side { rounds, noise: 1.0 };
    judged_as(recorded, seed, (side, side), config, change)
}

fn fails(r: &GateReport) -> Vec<&str> {
    r.cells
        .iter()
        .flat_map(|c| &c.verdicts)
        .filter(|v| v.status == GateStatus::Fail)
        .map(|v| v.message.as_str())
        .collect()
}

#[test]
fn an_a_a_run_fails_anywhere_at_most_one_time_in_twenty() {
    let config = config();
    let recorded = recorded_cell();
    let runs = 1000;
    let mut failed = 0;
    let mut units = 0;
    let mut judged_units = 0;
    let mut resolved = Vec::new();
    for seed in 0..runs {
        let r = judged_as(&recorded, seed, (RECORDED_10, RECORDED_10), &config, |c| c);
        assert_eq!(r.summary.failures, 0, "{:#?}", r.cells[0].failures);
        let f = fails(&r);
        if !f.is_empty() {
            failed += 1;
            eprintln!("seed {seed}: {f:#?}");
        }
        let family = r.family.as_ref().expect("units were judged");
        units += r.cells[0].verdicts.len();
        judged_units += family.units as usize;
        resolved.extend(
            r.cells[0]
                .verdicts
                .iter()
                .filter_map(|v| v.change.as_ref().map(|c| c.resolution)),
        );
    }
    resolved.sort_by(f64::total_cmp);
    eprintln!(
        "{runs} A/A runs of 10 rounds on recorded noise: {failed} failed somewhere ({:.1}%); {units} verdicts, {judged_units} judged (the rest behind a biased control); median resolution ±{:.2}%",
        f64::from(failed) / runs as f64 * 100.0,
        resolved[resolved.len() / 2] * 100.0
    );
    assert!(
        f64::from(failed) <= 0.05 * runs as f64,
        "{failed} of {runs} A/A runs failed"
    );
}

/// How many of `runs` A/A comparisons drawn as `sides` failed somewhere.
fn failed_runs(sides: (Side, Side), runs: u64) -> u64 {
    let config = config();
    let recorded = recorded_cell();
    let failed = (0..runs)
        .filter(|&seed| !fails(&judged_as(&recorded, seed, sides, &config, |c| c)).is_empty())
        .count() as u64;
    let (new, base) = sides;
    eprintln!(
        "A/A, {} rounds at {}× the recorded noise against {} at {}×: {failed} of {runs} runs failed somewhere",
        new.rounds, new.noise, base.rounds, base.noise
    );
    failed
}

/// The runs of a unit stop on their own, so two runs of one row often have unequal rounds,
/// and a quiet day is judged against a noisy one: the rank interval alone is too narrow
/// when the shorter run is the noisier (5.5% of runs failed somewhere in that case), and the
/// shorter run's own interval keeps it within the run's budget.
#[test]
fn unequal_rounds_and_unequal_noise_fail_an_a_a_run_at_most_one_time_in_twenty() {
    let side = |rounds, noise| Side { rounds, noise };
    for sides in [
        (side(10, 1.0), side(30, 1.0)),
        (side(30, 1.0), side(10, 1.0)),
        (side(10, 1.0), side(30, 0.1)),
        (side(30, 0.1), side(10, 1.0)),
    ] {
        assert!(failed_runs(sides, 200) <= 10);
    }
}

/// How many of `runs` drawn runs of `rounds` rounds FAIL the candidate on mix when it is
/// made 10% slower; none may PASS it.
fn caught(recorded: &CellResult, rounds: u32, runs: u64, config: &GateConfig) -> u64 {
    let mut caught = 0;
    for seed in 0..runs {
        let r = judged(recorded, seed, rounds, config, |c| {
            slowed(&c, "c-cand", "mix", 1.10)
        });
        let v = r.cells[0]
            .verdicts
            .iter()
            .find(|v| v.row.as_str() == "c-cand" && v.phase.as_str() == "mix")
            .expect("the candidate's verdict on mix");
        if v.status == GateStatus::Fail {
            caught += 1;
            assert!(v.message.contains("% slower"), "{}", v.message);
            assert_eq!(r.exit, 1);
        } else {
            assert_ne!(v.status, GateStatus::Pass, "{}", v.message);
        }
    }
    eprintln!("+10% on mix at {rounds} rounds: FAIL in {caught} of {runs} runs");
    caught
}

/// The case: a row built from the reference's own source (its noise the A/A
/// control's, recorded: per-round ratios from −6% to +13% on mix), then made 10% slower with
/// the same answer. At 10 rounds, and at the 30 the adaptive budget gives a unit it cannot
/// settle.
#[test]
fn a_ten_percent_slower_row_fails_on_mix_through_recorded_noise() {
    let config = config();
    let recorded = with_candidate(&recorded_cell(), "clang", "c-cand");
    assert!(caught(&recorded, 10, 200, &config) >= 175);
    assert!(caught(&recorded, 30, 200, &config) >= 190);
}

#[test]
fn an_inconclusive_verdict_names_what_the_run_resolved() {
    let config = config();
    let recorded = recorded_cell();
    let r = judged(&recorded, 7, 10, &config, |c| c);
    let wide: Vec<_> = r.cells[0]
        .verdicts
        .iter()
        .filter(|v| v.status == GateStatus::Inconclusive)
        .collect();
    assert!(!wide.is_empty(), "go and mono on the wall clock are wide");
    let mut wider = 0;
    for v in wide {
        let c = v.change.as_ref().expect("a change was measured");
        assert!(c.resolution > 0.0);
        if v.message.contains("not judged") {
            assert!(v.message.contains("resolved to ±"), "{}", v.message);
        } else if c.resolution > 0.0148 {
            wider += 1;
            let says = format!(
                "this run resolves ±{}% on {}, wider than TOLERANCE ±1.5%; it saw no change beyond that",
                cell_schema::percent(c.resolution),
                v.phase
            );
            assert!(v.message.contains(&says), "{}\n{says}", v.message);
        } else {
            assert!(
                v.message
                    .contains("reaches across the edge of TOLERANCE ±1.5%"),
                "{}",
                v.message
            );
        }
        assert!(!v.message.contains("too noisy"), "{}", v.message);
    }
    assert!(wider > 0, "go and mono resolve more than ±1.5%");
    for v in r.cells[0]
        .verdicts
        .iter()
        .filter(|v| v.status == GateStatus::Pass)
    {
        assert!(
            v.message.contains("no change beyond ±1.5%"),
            "{}",
            v.message
        );
    }
}
