//! The footprint against the baseline: a row whose binary or code section changed size is a
//! notice, never a failure, and a figure the older file lacks is not compared. The runs are
//! the two recorded under `crates/cell-testkit/fixtures/workload/`, with their sizes edited.

use cell_schema::CellResult;
use cell_schema::store::load_history;
use cell_testkit::{copy_dir, fixtures, read};
use cell_verdict::{GateConfig, footprint_notices, gate};

const CELL: &str = "linux-x86_64-local";

fn recorded(run: &str) -> CellResult {
    let path = fixtures()
        .join("workload/history")
        .join(run)
        .join(CELL)
        .join("results.json");
    cell_schema::read_cell(&read(&path)).unwrap()
}

fn set_sizes(cell: &mut CellResult, row: &str, binary: u64, text: Option<u64>) {
    let build = &mut cell.rows.get_mut(row).unwrap().row.build;
    build.binary_bytes = binary;
    build.text_bytes = text;
}

#[test]
fn a_binary_or_text_size_that_changed_is_one_notice_each() {
    let mut old = recorded("2026-12-01-local-093937");
    let mut new = recorded("2026-12-01-local-093940");
    assert!(
        footprint_notices(&new, &old).is_empty(),
        "same sizes, no notice"
    );
    set_sizes(&mut old, "gcc-O2", 15_960, Some(10_240));
    set_sizes(&mut new, "gcc-O2", 16_000, Some(11_264));
    set_sizes(&mut old, "c-slow", 16_056, Some(4_000));
    set_sizes(&mut new, "c-slow", 16_056, Some(4_000));
    assert_eq!(
        footprint_notices(&new, &old),
        [
            "row gcc-O2 binary bytes 15960 → 16000 (+0.3%)",
            "row gcc-O2 text bytes 10240 → 11264 (+10.0%)",
        ]
    );
    // A baseline written before text bytes were measured: only the binary is compared.
    set_sizes(&mut old, "gcc-O2", 16_100, None);
    assert_eq!(
        footprint_notices(&new, &old),
        ["row gcc-O2 binary bytes 16100 → 16000 (-0.6%)"]
    );
    // A row the baseline lacks (c-wrong) is no footprint notice.
    assert!(new.rows.contains_key("c-wrong") && !old.rows.contains_key("c-wrong"));
}

#[test]
fn the_gate_lists_a_footprint_change_as_a_notice_and_fails_nothing_for_it() {
    let tmp = tempfile::tempdir().unwrap();
    copy_dir(&fixtures().join("workload/history"), tmp.path());
    let history = load_history(tmp.path()).unwrap();
    let plan = cell_model::Plan::load(&fixtures().join("workload/project")).unwrap();
    let config = GateConfig::from_plan(&plan, None, []);
    let (a, b) = (&history.runs[0], &history.runs[1]);
    let before = gate(b, &history.runs, &config).unwrap();
    let mut grown = b.clone();
    let cell = grown.cells.values_mut().next().unwrap();
    let text = cell.rows["gcc-O2"].row.build.binary_bytes / 2;
    set_sizes(cell, "gcc-O2", 20_000, Some(text));
    let after = gate(&grown, &[a.clone(), grown.clone()], &config).unwrap();
    let notices = &after.cells[0].notices;
    assert!(
        notices.contains(&"row gcc-O2 binary bytes 15960 → 20000 (+25.3%)".to_owned()),
        "{notices:?}"
    );
    assert_eq!(after.cells[0].failures, before.cells[0].failures);
    assert_eq!(after.exit, before.exit);
    assert_eq!(after.summary.notices, before.summary.notices + 1);
}
