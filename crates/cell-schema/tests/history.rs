//! The store's reading of history: impossible values found by `validate::cell_result`, and
//! a bad file left out by path with its reason while the other runs are kept (issue 12).

use std::path::{Path, PathBuf};

use cell_schema::store::{self, StoreError, Unusable};
use cell_schema::{CellResult, RowName, ToolchainName, validate};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../cell-testkit/fixtures/workload/history")
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &to.join(e.file_name()));
        } else {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

fn first_cell() -> CellResult {
    let h = store::load_history(&fixtures()).unwrap();
    h.runs[0].cells.values().next().unwrap().clone()
}

fn messages(cell: &CellResult) -> Vec<String> {
    validate::cell_result(cell)
        .iter()
        .map(ToString::to_string)
        .collect()
}

#[test]
fn the_recorded_history_holds_no_impossible_value() {
    let h = store::load_history(&fixtures()).unwrap();
    assert_eq!(h.runs.len(), 2);
    assert!(h.skipped.is_empty(), "{:?}", h.skipped);
}

/// What a case is called, how it spoils a cell, and what a problem must say.
type Case = (&'static str, fn(&mut CellResult), &'static str);

/// Issue 12: a ratio of 0, a negative ratio, `lo > hi` and negative times were used as a
/// baseline. Each is a problem naming where it sits.
#[test]
fn impossible_values_are_named_where_they_sit() {
    let cases: [Case; 7] = [
        (
            "zero",
            |c| ratio(c).median = 0.0,
            "wall ratio of row gcc-O2 on phase fib is 0 (impossible)",
        ),
        (
            "negative",
            |c| ratio(c).lo = -1.0,
            "wall ratio of row gcc-O2 on phase fib lower bound is -1 (impossible)",
        ),
        (
            "not finite",
            |c| ratio(c).hi = f64::INFINITY,
            "upper bound is inf (impossible)",
        ),
        (
            "lo above hi",
            |c| ratio(c).lo = ratio(c).hi + 1.0,
            "lo ≤ median ≤ hi does not hold",
        ),
        (
            "negative time",
            |c| phase(c).runs[0].cpu_s = -0.25,
            "cpu time of row gcc-O2 on phase fib, round",
        ),
        (
            "negative cost",
            |c| c.cost.as_mut().unwrap().total_s = -1.0,
            "total cost is -1 s (impossible)",
        ),
        (
            "no reference",
            |c| {
                c.jobs.remove(&ToolchainName::new("gcc"));
            },
            "row gcc-O2 names job gcc, which has no summary and so no reference (impossible)",
        ),
    ];
    for (what, spoil, want) in cases {
        let mut c = first_cell();
        spoil(&mut c);
        let got = messages(&c);
        assert!(got.iter().any(|m| m.contains(want)), "{what}: {got:?}");
    }
}

/// `gcc-O2`'s first phase, where the cases spoil a value.
fn phase(c: &mut CellResult) -> &mut cell_schema::PhaseResult {
    c.rows
        .get_mut(&RowName::new("gcc-O2"))
        .unwrap()
        .row
        .phases
        .values_mut()
        .next()
        .unwrap()
}

fn ratio(c: &mut CellResult) -> &mut cell_schema::RatioCi {
    &mut phase(c).ratio.as_mut().unwrap().wall
}

/// Issue 12: one bad file stopped every reader of the history. Now it is left out by path
/// with the reason, and the other runs are read; the run itself, read to be judged, is an
/// error naming the file.
#[test]
fn a_bad_file_is_skipped_by_path_and_the_other_runs_are_kept() {
    let tmp = tempfile::tempdir().unwrap();
    copy_dir(&fixtures(), tmp.path());
    let bad_run = tmp.path().join("2026-12-01-local-093937");
    let file = bad_run.join("linux-x86_64-local").join("results.json");
    let text = std::fs::read_to_string(&file).unwrap();
    for (spoiled, want) in [
        ("not json".to_owned(), "not a cell results file"),
        (
            text.replacen("\"schema_version\": 1", "\"schema_version\": 999", 1),
            "written by a newer cell (schema_version 999",
        ),
        (
            text.replacen("\"kind\": \"cell\",", "", 1),
            "missing field `kind`",
        ),
        (
            text.replacen(
                "\"kind\": \"cell\",",
                "\"kind\": \"cell\", \"kind\": \"cell\",",
                1,
            ),
            "duplicate key \"kind\"",
        ),
        (
            // A map's key given twice: serde would keep the last one silently.
            text.replacen("\"rows\": {", "\"rows\": {\"x\": 1, \"x\": 2,", 1),
            "duplicate key \"x\"",
        ),
        (
            text.replacen("\"median\": 1.0", "\"median\": -1.0", 1),
            "is -1 (impossible)",
        ),
    ] {
        std::fs::write(&file, &spoiled).unwrap();
        let h = store::load_history(tmp.path()).unwrap();
        let names: Vec<String> = h.runs.iter().map(|r| r.name.to_string()).collect();
        assert_eq!(names, ["2026-12-01-local-093940"], "{want}");
        assert_eq!(h.skipped.len(), 1);
        let s = &h.skipped[0];
        assert_eq!(s.path, file);
        assert_eq!(s.cell, "linux-x86_64-local");
        assert_eq!(s.run.to_string(), "2026-12-01-local-093937");
        let notice = s.notice();
        assert!(notice.contains(want), "{notice}");
        assert!(notice.ends_with("; fix or remove the file"), "{notice}");
        assert!(!matches!(s.reason, Unusable::Io(_)), "{notice}");
        let err = store::load_run(&bad_run).unwrap_err();
        assert!(
            matches!(err, StoreError::Bad { .. } | StoreError::Impossible { .. }),
            "{err}"
        );
        assert!(
            err.to_string().contains(&file.display().to_string()),
            "{err}"
        );
    }
}
