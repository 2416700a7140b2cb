//! The instruction lane against the baseline: a row whose count on a phase differs from the
//! baseline's same row is a notice, never a failure; equal counts say nothing; two different
//! rows are never compared, nor the same name from another toolchain. The runs are the two
//! recorded under `crates/cell-testkit/fixtures/workload/`, with counts written in by hand.

use cell_schema::store::{HistoryRun, load_history};
use cell_schema::{CellResult, CodeVerdict, Sha256};
use cell_testkit::{copy_dir, fixtures, read};
use cell_verdict::{GateConfig, gate, instruction_notices};

const CELL: &str = "linux-x86_64-local";
const BASE: &str = "2026-12-01-local-093937";

fn recorded(run: &str) -> CellResult {
    let path = fixtures()
        .join("workload/history")
        .join(run)
        .join(CELL)
        .join("results.json");
    cell_schema::read_cell(&read(&path)).unwrap()
}

fn count(cell: &mut CellResult, row: &str, phase: &str, n: u64) {
    let row = &mut cell.rows.get_mut(row).unwrap().row;
    row.phases.get_mut(phase).unwrap().instructions = Some(n);
}

fn other_binary(cell: &mut CellResult, row: &str) {
    cell.rows.get_mut(row).unwrap().row.build.sha256 = Sha256::parse(&"ab".repeat(32)).unwrap();
}

#[test]
fn a_changed_count_of_the_same_row_is_a_notice_and_an_equal_one_says_nothing() {
    let mut old = recorded(BASE);
    let mut new = recorded("2026-12-01-local-093940");
    assert!(
        instruction_notices(&new, BASE, &old).is_empty(),
        "no counts"
    );
    count(&mut old, "gcc-O2", "mix", 1_234_567_890);
    count(&mut new, "gcc-O2", "mix", 1_271_604_926);
    count(&mut old, "gcc-O2", "fib", 5_000);
    count(&mut new, "gcc-O2", "fib", 5_000);
    other_binary(&mut new, "gcc-O2");
    assert_eq!(
        instruction_notices(&new, BASE, &old),
        [
            "instructions: row gcc-O2 on mix 1234567890 → 1271604926 (+3.0%): the generated code changed"
        ]
    );
    // The same binary counting otherwise: not a change of the generated code.
    let mut same = recorded("2026-12-01-local-093940");
    count(&mut same, "gcc-O2", "mix", 1_234_567_000);
    count(&mut same, "gcc-O2", "fib", 5_000);
    assert_eq!(
        instruction_notices(&same, BASE, &old),
        [
            "instructions: row gcc-O2 on mix 1234567890 → 1234567000 (-0.0%): the same binary: its libraries or its environment changed"
        ]
    );
}

#[test]
fn different_rows_are_never_compared_and_one_sided_counts_are_named_once() {
    let mut old = recorded(BASE);
    let mut new = recorded("2026-12-01-local-093940");
    // Each side counted a row the other did not: c-fast only in the baseline, c-slow only in
    // this run, with counts far apart; neither is compared with the other.
    count(&mut old, "c-fast", "mix", 32_626_255);
    count(&mut new, "c-slow", "mix", 130_126_201);
    count(&mut new, "c-slow", "fib", 130_126_100);
    // A row of this run only (c-wrong) says nothing about the lane.
    count(&mut new, "c-wrong", "mix", 32_626_300);
    assert_eq!(
        instruction_notices(&new, BASE, &old),
        [
            format!(
                "instructions: counted in this run only, the lane did not run on them in {BASE}: c-slow"
            ),
            format!(
                "instructions: counted in {BASE} only, the lane did not run on them this time: c-fast"
            ),
        ]
    );
    // The same name from another toolchain is another row.
    count(&mut old, "gcc-O2", "mix", 1_000);
    count(&mut new, "gcc-O2", "mix", 2_000);
    old.rows.get_mut("gcc-O2").unwrap().row.toolchain = "clang".into();
    let notices = instruction_notices(&new, BASE, &old);
    assert!(notices.iter().all(|n| !n.contains("gcc-O2")), "{notices:?}");
}

#[test]
fn the_gate_lists_a_changed_count_as_a_notice_and_fails_nothing_for_it() {
    let tmp = tempfile::tempdir().unwrap();
    copy_dir(&fixtures().join("workload/history"), tmp.path());
    let history = load_history(tmp.path()).unwrap();
    let plan = cell_model::Plan::load(&fixtures().join("workload/project")).unwrap();
    let config = GateConfig::from_plan(&plan, None, []);
    let (a, b) = (&history.runs[0], &history.runs[1]);
    let before = gate(b, &history.runs, &config).unwrap();
    let (mut old, mut new) = (a.clone(), b.clone());
    count(old.cells.values_mut().next().unwrap(), "c-slow", "mix", 100);
    let cell = new.cells.values_mut().next().unwrap();
    count(cell, "c-slow", "mix", 103);
    other_binary(cell, "c-slow");
    let after = gate(&new, &[old, new.clone()], &config).unwrap();
    let notices = &after.cells[0].notices;
    assert!(
        notices.contains(
            &"instructions: row c-slow on mix 100 → 103 (+3.0%): the generated code changed"
                .to_owned()
        ),
        "{notices:?}"
    );
    assert_eq!(after.cells[0].failures, before.cells[0].failures);
    assert_eq!(after.exit, before.exit);
    assert_eq!(after.summary.notices, before.summary.notices + 1);
}

/// The exact lane's figures of a row on a phase, with the same figures for its job's reference
/// (`reference` on both the job and, where the reference is a row of the cell, that row).
fn exact(cell: &mut CellResult, row: &str, phase: &str, cycles: u64, spread: f64) {
    let r = &mut cell.rows.get_mut(row).unwrap().row;
    let p = r.phases.get_mut(phase).unwrap();
    p.estimated_cycles = Some(cycles);
    p.instructions = Some(cycles / 2);
    p.exact_repeat = Some(cell_schema::ExactRepeat {
        runs: if spread > 0.0 { 3 } else { 2 },
        spread,
    });
}

fn exact_reference(cell: &mut CellResult, job: &str, phase: &str, cycles: u64) {
    let reference = &mut cell.jobs.get_mut(job).unwrap().reference;
    let p = reference.phases.get_mut(phase).unwrap();
    p.estimated_cycles = Some(cycles);
    p.instructions = Some(cycles / 2);
}

/// Both runs of the recorded history with the same exact-lane figures on every row and the
/// two jobs' references: the candidate rows at 2× and 3× their reference.
fn counted() -> (tempfile::TempDir, GateConfig, HistoryRun, HistoryRun) {
    let tmp = tempfile::tempdir().unwrap();
    copy_dir(&fixtures().join("workload/history"), tmp.path());
    let history = load_history(tmp.path()).unwrap();
    let plan = cell_model::Plan::load(&fixtures().join("workload/project")).unwrap();
    let config = GateConfig::from_plan(&plan, None, []);
    let (mut old, mut new) = (history.runs[0].clone(), history.runs[1].clone());
    for run in [&mut old, &mut new] {
        let cell = run.cells.values_mut().next().unwrap();
        for phase in ["mix", "fib"] {
            for job in ["clang", "gcc"] {
                exact_reference(cell, job, phase, 1_000_000_000);
            }
            exact(cell, "c-fast", phase, 1_000_000_000, 0.0);
            exact(cell, "c-slow", phase, 2_000_000_000, 0.0);
            exact(cell, "gcc-O2", phase, 3_000_000_000, 0.0);
        }
    }
    (tmp, config, old, new)
}

fn code_of<'a>(report: &'a cell_schema::GateReport, row: &str, phase: &str) -> &'a CodeVerdict {
    report.cells[0]
        .code
        .iter()
        .find(|v| v.row.as_str() == row && v.phase.as_str() == phase)
        .unwrap_or_else(|| panic!("no code verdict of {row} on {phase}: {report:#?}"))
}

#[test]
fn the_same_counts_pass_the_code_verdict_and_leave_the_time_verdicts_as_they_were() {
    let (_tmp, config, old, new) = counted();
    let report = gate(&new, &[old.clone(), new.clone()], &config).unwrap();
    // Every candidate row on both phases; the reference (c-fast) is every ratio's denominator.
    let judged: Vec<_> = report.cells[0]
        .code
        .iter()
        .map(|v| format!("{} {} {}", v.row, v.phase, v.status.word()))
        .collect();
    assert_eq!(
        judged,
        [
            "c-slow fib PASS",
            "c-slow mix PASS",
            "gcc-O2 fib PASS",
            "gcc-O2 mix PASS"
        ]
    );
    let v = code_of(&report, "c-slow", "mix");
    assert_eq!(
        (v.old, v.new, v.change, v.tolerance),
        (2.0, 2.0, 1.0, 0.005)
    );
    assert!(
        v.message.starts_with(
            "code PASS linux-x86_64-local c-slow mix: no change of the generated code beyond CYCLES_TOLERANCE ±0.50% on mix"
        ),
        "{}",
        v.message
    );
    assert_eq!((report.summary.code_pass, report.summary.code_fail), (4, 0));
    // Beside the time verdicts, never instead of them.
    let (_t, _c, plain_old, plain_new) = counted_not();
    let plain = gate(&plain_new, &[plain_old, plain_new.clone()], &config).unwrap();
    assert_eq!(report.cells[0].verdicts, plain.cells[0].verdicts);
    assert_eq!(report.exit, plain.exit);
}

/// The same two runs with no exact-lane figures.
fn counted_not() -> (tempfile::TempDir, GateConfig, HistoryRun, HistoryRun) {
    let tmp = tempfile::tempdir().unwrap();
    copy_dir(&fixtures().join("workload/history"), tmp.path());
    let history = load_history(tmp.path()).unwrap();
    let plan = cell_model::Plan::load(&fixtures().join("workload/project")).unwrap();
    let config = GateConfig::from_plan(&plan, None, []);
    (
        tmp,
        config,
        history.runs[0].clone(),
        history.runs[1].clone(),
    )
}

#[test]
fn three_percent_more_estimated_cycles_fails_the_code_verdict_and_the_gate() {
    let (_tmp, config, old, mut new) = counted();
    let (_t, _c, plain_old, plain_new) = counted_not();
    let plain = gate(&plain_new, &[plain_old, plain_new.clone()], &config).unwrap();
    let cell = new.cells.values_mut().next().unwrap();
    exact(cell, "c-slow", "mix", 2_060_000_000, 0.0);
    let report = gate(&new, &[old, new.clone()], &config).unwrap();
    let v = code_of(&report, "c-slow", "mix");
    assert_eq!(v.status, cell_schema::GateStatus::Fail);
    assert!(
        v.message
            .contains("the generated code does 3.0% more estimated cycles on mix"),
        "{}",
        v.message
    );
    assert_eq!(
        code_of(&report, "c-slow", "fib").status,
        cell_schema::GateStatus::Pass
    );
    assert_eq!(report.summary.code_fail, 1);
    assert_eq!(report.exit, 1, "{:#?}", report.summary);
    // The time verdicts are what they were without the lane.
    assert_eq!(report.cells[0].verdicts, plain.cells[0].verdicts);
}

#[test]
fn fewer_estimated_cycles_pass_with_a_notice_and_a_shared_change_cancels() {
    let (_tmp, config, old, mut new) = counted();
    let cell = new.cells.values_mut().next().unwrap();
    exact(cell, "c-slow", "mix", 1_940_000_000, 0.0);
    // valgrind or the environment changed under gcc's job: its row and reference both count
    // 4% more, and their ratio does not move.
    exact_reference(cell, "gcc", "fib", 1_040_000_000);
    exact(cell, "gcc-O2", "fib", 3_120_000_000, 0.0);
    let report = gate(&new, &[old, new.clone()], &config).unwrap();
    let v = code_of(&report, "c-slow", "mix");
    assert_eq!(v.status, cell_schema::GateStatus::Pass);
    assert!(
        v.message.contains("3.0% fewer estimated cycles on mix"),
        "{}",
        v.message
    );
    assert!(
        report.cells[0]
            .notices
            .contains(&format!("code: {}", v.message)),
        "{:?}",
        report.cells[0].notices
    );
    let g = code_of(&report, "gcc-O2", "fib");
    assert_eq!((g.status, g.change), (cell_schema::GateStatus::Pass, 1.0));
    assert_eq!(report.summary.code_fail, 0);
}

#[test]
fn a_runtimes_spread_widens_the_tolerance_and_another_cache_geometry_is_not_judged() {
    let (_tmp, config, old, mut new) = counted();
    let cell = new.cells.values_mut().next().unwrap();
    // 1% more, with runs that spread 0.8%: within 0.5% + 0.8%.
    exact(cell, "c-slow", "mix", 2_020_000_000, 0.008);
    let report = gate(&new, &[old.clone(), new.clone()], &config).unwrap();
    let v = code_of(&report, "c-slow", "mix");
    assert_eq!(
        (v.status, v.spread, v.tolerance),
        (cell_schema::GateStatus::Pass, 0.008, 0.013)
    );
    assert!(
        v.message.contains("widened by the runs' spread to ±1.3%"),
        "{}",
        v.message
    );
    // The same 1% with no spread fails.
    exact(
        new.cells.values_mut().next().unwrap(),
        "c-slow",
        "mix",
        2_020_000_000,
        0.0,
    );
    let report = gate(&new, &[old.clone(), new.clone()], &config).unwrap();
    assert_eq!(
        code_of(&report, "c-slow", "mix").status,
        cell_schema::GateStatus::Fail
    );
    // Another geometry in clang's job: no code verdict for its rows, a notice saying why.
    let lane = |run: &mut HistoryRun, ll: &str| {
        let job = run
            .cells
            .values_mut()
            .next()
            .unwrap()
            .jobs
            .get_mut("clang")
            .unwrap();
        job.instructions = Some(lane_record(ll));
    };
    let (mut old2, mut new2) = (old, new);
    lane(&mut old2, "8388608,16,64");
    lane(&mut new2, "33554432,16,64");
    let report = gate(&new2, &[old2, new2.clone()], &config).unwrap();
    assert!(
        report.cells[0]
            .code
            .iter()
            .all(|v| v.row.as_str() != "c-slow")
    );
    assert!(
        report.cells[0]
            .code
            .iter()
            .any(|v| v.row.as_str() == "gcc-O2")
    );
    assert!(
        report.cells[0].notices.iter().any(|n| n
            .starts_with("code: job clang simulated other caches than")
            && n.contains("LL 8388608,16,64 → I1 32768,8,64 D1 32768,8,64 LL 33554432,16,64")),
        "{:?}",
        report.cells[0].notices
    );
}

fn lane_record(ll: &str) -> cell_schema::InstructionLane {
    cell_schema::InstructionLane {
        valgrind: Some("/usr/bin/valgrind".into()),
        version: Some("valgrind-3.19.0".into()),
        argv: vec!["valgrind".into()],
        timeout_s: 600.0,
        seconds: 10.0,
        cache: Some(cell_schema::CacheRecord {
            i1: "32768,8,64".into(),
            d1: "32768,8,64".into(),
            ll: ll.into(),
        }),
        env_bytes: Some(2000),
        rows_skipped: Vec::new(),
        skipped: None,
    }
}

#[test]
fn a_spread_past_two_percent_buys_no_pass_and_a_lost_count_or_cache_record_is_named() {
    let (_tmp, config, old, mut new) = counted();
    let cell = new.cells.values_mut().next().unwrap();
    // 5% more, with a planted spread of 50%: no PASS, no call either way; three times the
    // work fails whatever spread is claimed.
    exact(cell, "c-slow", "mix", 2_100_000_000, 0.5);
    exact(cell, "c-slow", "fib", 6_000_000_000, 0.5);
    // gcc-O2 counted on fib in the baseline, not this time.
    let p = cell
        .rows
        .get_mut("gcc-O2")
        .unwrap()
        .row
        .phases
        .get_mut("fib")
        .unwrap();
    p.estimated_cycles = None;
    p.instructions = None;
    let report = gate(&new, &[old.clone(), new.clone()], &config).unwrap();
    let v = code_of(&report, "c-slow", "mix");
    assert_eq!(v.status, cell_schema::GateStatus::Inconclusive, "{v:?}");
    assert!(
        v.message
            .contains("spread ±50.0% on mix, more than the ±2.0%"),
        "{}",
        v.message
    );
    assert_eq!(report.summary.code_inconclusive, 1);
    assert_eq!(
        code_of(&report, "c-slow", "fib").status,
        cell_schema::GateStatus::Fail
    );
    assert!(
        report.cells[0]
            .code
            .iter()
            .all(|v| !(v.row.as_str() == "gcc-O2" && v.phase.as_str() == "fib"))
    );
    let notices = &report.cells[0].notices;
    assert!(
        notices
            .iter()
            .any(|n| n.starts_with(&format!("code: row gcc-O2 on fib was counted in {BASE}"))),
        "{notices:?}"
    );
    // A cache record on one side only: another estimate, not judged.
    let mut new2 = new.clone();
    new2.cells
        .values_mut()
        .next()
        .unwrap()
        .jobs
        .get_mut("gcc")
        .unwrap()
        .instructions = Some(lane_record("8388608,16,64"));
    let report = gate(&new2, &[old, new2.clone()], &config).unwrap();
    assert!(
        report.cells[0]
            .code
            .iter()
            .all(|v| v.row.as_str() != "gcc-O2")
    );
    assert!(
        report.cells[0]
            .notices
            .iter()
            .any(|n| n.starts_with("code: job gcc simulated other caches")
                && n.contains("(none recorded → I1 32768,8,64")),
        "{:?}",
        report.cells[0].notices
    );
}

#[test]
fn a_row_that_only_calls_itself_the_reference_is_judged() {
    let (_tmp, config, old, mut new) = counted();
    let cell = new.cells.values_mut().next().unwrap();
    exact(cell, "c-slow", "mix", 2_100_000_000, 0.0);
    cell.rows.get_mut("c-slow").unwrap().row.role = cell_schema::Role::Reference;
    let report = gate(&new, &[old, new.clone()], &config).unwrap();
    assert_eq!(
        code_of(&report, "c-slow", "mix").status,
        cell_schema::GateStatus::Fail
    );
    assert_eq!(report.exit, 1);
}

#[test]
fn another_reference_binary_compares_each_rows_own_estimate() {
    let (_tmp, config, old, mut new) = counted();
    let cell = new.cells.values_mut().next().unwrap();
    // gcc's job built its reference with another clang: 10% more estimated cycles, which
    // would move every ratio; gcc-O2's own code did not change.
    let reference = &mut cell.jobs.get_mut("gcc").unwrap().reference;
    reference.build.sha256 = Sha256::parse(&"cd".repeat(32)).unwrap();
    exact_reference(cell, "gcc", "mix", 1_100_000_000);
    exact_reference(cell, "gcc", "fib", 1_100_000_000);
    let report = gate(&new, &[old, new.clone()], &config).unwrap();
    let v = code_of(&report, "gcc-O2", "mix");
    assert_eq!(
        (v.status, v.own_counts, v.change),
        (cell_schema::GateStatus::Pass, true, 1.0),
        "{v:?}"
    );
    assert!(
        v.message
            .contains("the row's own: its reference's binary changed"),
        "{}",
        v.message
    );
    assert!(
        report.cells[0]
            .notices
            .iter()
            .any(|n| n.starts_with("code: job gcc's reference binary is not the one of")),
        "{:?}",
        report.cells[0].notices
    );
    // clang's job kept its reference: its rows are still read as ratios.
    assert!(!code_of(&report, "c-slow", "mix").own_counts);
}
