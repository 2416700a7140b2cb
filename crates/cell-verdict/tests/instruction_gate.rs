//! The instruction lane against the baseline: a row whose count on a phase differs from the
//! baseline's same row is a notice, never a failure; equal counts say nothing; two different
//! rows are never compared, nor the same name from another toolchain. The runs are the two
//! recorded under `crates/cell-testkit/fixtures/workload/`, with counts written in by hand.

use cell_schema::store::load_history;
use cell_schema::{CellResult, Sha256};
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
