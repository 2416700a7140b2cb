//! The gate on the runs it needs is the gate on the whole history: on a history of workload
//! runs, suite runs, an imported run, a run of the scripted executor and unreadable files,
//! the report (or the error) of `gate_history` over what `needed_history` read equals the one
//! over `load_history`, pinned or not; and the walk reads no file past the baselines, so a bad
//! file there is not noticed (the one way the two differ).

use std::path::{Path, PathBuf};

use cell_schema::store::{self, HistoryIndex, HistoryRun};
use cell_schema::{CellId, CellInfo, CellResult, GateReport, HttpMode};
use cell_testkit::suites::suite_cell;
use cell_testkit::{fixtures, read};
use cell_verdict::{GateConfig, GateError, gate_history, needed_history};

/// The workload cell, with a measured history, a suite-only run and a bad file in it.
const A: &str = "linux-x86_64-local";
/// A workload cell whose only baseline is imported.
const B: &str = "linux-x86_64-spare";
/// A suite-only cell, whose baseline is the oldest comparable run behind two that are not.
const C: &str = cell_testkit::suites::CELL;
/// A cell the judged run does not have.
const D: &str = "linux-x86_64-gone";
/// The judged run, inside the history dir as `cell gate results/<run>` has it.
const JUDGED: &str = "2026-11-07-107";

fn recorded(run: &str) -> CellResult {
    let path = fixtures()
        .join("workload/history")
        .join(run)
        .join(A)
        .join("results.json");
    cell_schema::read_cell(&read(&path)).unwrap()
}

fn with_id(mut cell: CellResult, id: &str, label: &str) -> CellResult {
    cell.cell = CellInfo {
        id: CellId::new(id),
        label: cell_schema::CellLabel::new(label),
        ..cell.cell
    };
    cell
}

/// A's workload with the http servers of suite run `k`.
fn workload_and_http(run: &str, k: u32) -> CellResult {
    let mut cell = recorded(run);
    cell.http = suite_cell("2026-11-01", "1", k).http;
    cell
}

/// A cell of the suites only, under `id`.
fn suites_only(id: &str, k: u32) -> CellResult {
    let mut cell = suite_cell("2026-11-01", "1", k);
    cell.cell.id = CellId::new(id);
    cell
}

/// The Python cell's recorded run, imported, as cell B.
fn imported() -> CellResult {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../cell/tests/fixtures/upstream-cell");
    let rel = "results/2026-09-13-34783020976/linux-x86_64-ubuntu-latest/results.json";
    let text = read(&dir.join(rel));
    let sha = cell_schema::Sha256::parse(&"ab".repeat(32)).unwrap();
    let cell_schema::upstream::Import::Cell { result, .. } =
        cell_schema::upstream::read(&text, rel, &sha).unwrap()
    else {
        panic!("a workload cell");
    };
    with_id(*result, B, "spare")
}

fn write_cell(results: &Path, run: &str, cell: &CellResult) {
    let dir = results.join(run).join(cell.cell.id.as_str());
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("results.json"), cell_schema::to_json(cell)).unwrap();
}

fn cell_file(results: &Path, run: &str, id: &str) -> PathBuf {
    results.join(run).join(id).join("results.json")
}

/// Oldest first:
/// - 101 imported: B.
/// - 102: A measured; C comparable (C's baseline).
/// - 103: A measured, timed by the scripted executor (A's baseline); B suite-only with no
///   server; C measured in another http mode.
/// - 104: A and D unreadable (A's: a notice, a readable A is newer).
/// - 105: A suite-only, its servers comparable (A's http baseline); C with other connections.
/// - 2026-11-06-local-1: D only; a dot-dir of an interrupted write; a stray folder.
/// - 107: the judged run (A with servers, B, C).
fn history(results: &Path) {
    write_cell(results, "2026-11-01-101", &imported());
    write_cell(
        results,
        "2026-11-02-102",
        &recorded("2026-12-01-local-093937"),
    );
    write_cell(results, "2026-11-02-102", &suites_only(C, 0));
    let mut scripted = recorded("2026-12-01-local-093937");
    for j in scripted.jobs.values_mut() {
        j.protocol.scripted = true;
    }
    write_cell(results, "2026-11-03-103", &scripted);
    let mut empty = suites_only(B, 1);
    empty.http.clear();
    empty.soak.clear();
    empty.cell.label = cell_schema::CellLabel::new("spare");
    write_cell(results, "2026-11-03-103", &empty);
    let mut other_mode = suites_only(C, 1);
    for s in other_mode.http.values_mut() {
        s.settings.mode = HttpMode::SameProcess;
    }
    write_cell(results, "2026-11-03-103", &other_mode);
    for id in [A, D] {
        let f = cell_file(results, "2026-11-04-104", id);
        std::fs::create_dir_all(f.parent().unwrap()).unwrap();
        std::fs::write(f, "not json").unwrap();
    }
    let mut suite_a = suites_only(A, 2);
    suite_a.cell = recorded("2026-12-01-local-093937").cell;
    write_cell(results, "2026-11-05-105", &suite_a);
    let mut other_shape = suites_only(C, 2);
    for s in other_shape.http.values_mut() {
        s.settings.connections = 16;
    }
    write_cell(results, "2026-11-05-105", &other_shape);
    write_cell(results, "2026-11-06-local-1", &suites_only(D, 2));
    std::fs::create_dir_all(results.join(".2026-11-06-106.x1y2z3/linux-x86_64-local")).unwrap();
    std::fs::create_dir_all(results.join("notes")).unwrap();
    write_cell(
        results,
        JUDGED,
        &workload_and_http("2026-12-01-local-093940", 3),
    );
    write_cell(
        results,
        JUDGED,
        &with_id(recorded("2026-12-01-local-093940"), B, "spare"),
    );
    write_cell(results, JUDGED, &suites_only(C, 3));
}

fn config(run: &HistoryRun, baseline: Option<&str>, allow_scripted: bool) -> GateConfig {
    let plan = cell_model::Plan::load(&fixtures().join("workload/project")).unwrap();
    let mut c = GateConfig::from_plan(&plan, baseline.map(str::to_owned), run.cells.keys());
    c.allow_scripted = allow_scripted;
    c
}

type Outcome = Result<GateReport, String>;

fn shown(r: Result<GateReport, GateError>) -> Outcome {
    r.map_err(|e| e.to_string())
}

/// The gate over the whole history, and over what the walk read.
fn both(results: &Path, config: &GateConfig) -> (Outcome, Outcome) {
    let run = store::load_run(&results.join(JUDGED)).unwrap();
    let full = store::load_history(results).unwrap();
    let index = HistoryIndex::open(results).unwrap();
    let needed = needed_history(&run, &index, config).unwrap();
    (
        shown(gate_history(&run, &full, config)),
        shown(gate_history(&run, &needed, config)),
    )
}

/// `report` without the notices of the bad files in `unread`, which the walk does not read.
fn less_notices_of(report: &GateReport, unread: &[PathBuf]) -> GateReport {
    let mut out = report.clone();
    for c in &mut out.cells {
        let before = c.notices.len();
        c.notices
            .retain(|n| !unread.iter().any(|p| n.contains(&p.display().to_string())));
        let gone = u32::try_from(before - c.notices.len()).unwrap();
        out.summary.notices -= gone;
    }
    out
}

/// Which cells of which runs the walk read, and which files it left out.
fn reads(results: &Path, config: &GateConfig) -> (Vec<String>, Vec<String>) {
    let run = store::load_run(&results.join(JUDGED)).unwrap();
    let index = HistoryIndex::open(results).unwrap();
    let needed = needed_history(&run, &index, config).unwrap();
    let cells = needed
        .runs
        .iter()
        .flat_map(|r| r.cells.keys().map(move |c| format!("{} {c}", r.name)))
        .collect();
    let skipped = needed
        .skipped
        .iter()
        .map(|s| format!("{} {}", s.run, s.cell))
        .collect();
    (cells, skipped)
}

fn cell<'a>(report: &'a GateReport, id: &str) -> &'a cell_schema::GateCell {
    report.cells.iter().find(|c| c.cell.as_str() == id).unwrap()
}

#[test]
fn the_gate_on_the_runs_it_needs_is_the_gate_on_the_whole_history() {
    let tmp = tempfile::tempdir().unwrap();
    let results = tmp.path();
    history(results);
    let run = store::load_run(&results.join(JUDGED)).unwrap();
    let cfg = config(&run, None, true);

    let (full, lazy) = both(results, &cfg);
    let full = full.unwrap();
    assert_eq!(lazy.unwrap(), full);
    // What the history was built to exercise.
    assert_eq!(cell(&full, A).baseline.as_deref(), Some("2026-11-03-103"));
    assert!(
        cell(&full, A)
            .notices
            .iter()
            .any(|n| n.contains("2026-11-04-104") && n.contains("fix or remove the file")),
        "{:?}",
        cell(&full, A).notices
    );
    assert!(
        cell(&full, A)
            .verdicts
            .iter()
            .any(|v| v.row.as_str() == "http-rust" && v.message.contains("in 2026-11-05-105")),
        "{:?}",
        cell(&full, A).verdicts
    );
    assert_eq!(cell(&full, B).baseline.as_deref(), Some("2026-11-01-101"));
    assert!(
        cell(&full, B)
            .notices
            .iter()
            .any(|n| n.starts_with("baseline 2026-11-01-101 is imported")),
        "{:?}",
        cell(&full, B).notices
    );
    let c = cell(&full, C);
    assert!(!c.verdicts.is_empty());
    assert!(
        c.verdicts
            .iter()
            .all(|v| v.message.contains("in 2026-11-02-102")),
        "{:?}",
        c.verdicts
    );

    // The walk stopped at each cell's baselines: A at 103, C at 102; B, judged against an
    // imported run, walked to the oldest. The files past them were not read.
    let (cells, skipped) = reads(results, &cfg);
    assert_eq!(
        cells,
        [
            "2026-11-01-101 linux-x86_64-spare",
            "2026-11-02-102 linux-x86_64-ubuntu-24.04",
            "2026-11-03-103 linux-x86_64-local",
            "2026-11-03-103 linux-x86_64-spare",
            "2026-11-03-103 linux-x86_64-ubuntu-24.04",
            "2026-11-05-105 linux-x86_64-local",
            "2026-11-05-105 linux-x86_64-ubuntu-24.04",
        ]
    );
    assert_eq!(skipped, ["2026-11-04-104 linux-x86_64-local"]);

    // A server no run measured walks C back to the oldest run: a first run, with the same
    // notice on both paths.
    let mut c = suites_only(C, 3);
    let new = c.http[&cell_schema::ServerName::new("rust")].clone();
    c.http.insert(cell_schema::ServerName::new("rust-16"), new);
    write_cell(results, JUDGED, &c);
    let (full, lazy) = both(results, &cfg);
    let full = full.unwrap();
    assert_eq!(lazy.unwrap(), full);
    assert!(
        cell(&full, C)
            .notices
            .iter()
            .any(|n| n.starts_with("http server rust-16") && n.contains("first run")),
        "{:?}",
        cell(&full, C).notices
    );
    write_cell(results, JUDGED, &suites_only(C, 3));

    // Without the test suite's leave, the scripted run the walk reads is refused by both.
    let (full, lazy) = both(results, &config(&run, None, false));
    let err = full.unwrap_err();
    assert!(err.contains("2026-11-03-103"), "{err}");
    assert_eq!(lazy.unwrap_err(), err);

    // Pinned: the pinned run alone, so bad files of the others go unnoticed; a bad file of it
    // is the baseline; a run not in the history is no baseline.
    for pin in [
        "2026-11-01-101",
        "2026-11-02-102",
        "2026-11-03-103",
        "2026-11-04-104",
        "2026-11-05-105",
        "2026-11-06-local-1",
        "2026-11-09-1",
        JUDGED,
    ] {
        let cfg = config(&run, Some(pin), true);
        let (full, lazy) = both(results, &cfg);
        // The bad file of 104 is noticed only when 104 is the run read.
        let unread = if pin == "2026-11-04-104" {
            Vec::new()
        } else {
            vec![cell_file(results, "2026-11-04-104", A)]
        };
        assert_eq!(
            lazy,
            full.map(|r| less_notices_of(&r, &unread)),
            "pinned {pin}"
        );
        let (cells, _) = reads(results, &cfg);
        assert!(cells.iter().all(|c| c.starts_with(pin)), "{pin}: {cells:?}");
    }
    let (full, _) = both(results, &config(&run, Some("2026-11-04-104"), true));
    assert!(
        full.unwrap_err().contains("it is the baseline of cell"),
        "a bad pinned file"
    );
}

/// A bad file newer than every readable file of its cell is the baseline: exit 2 in both,
/// naming the newest of two such files.
#[test]
fn a_bad_newest_file_is_the_baseline_on_both_paths() {
    let tmp = tempfile::tempdir().unwrap();
    let results = tmp.path();
    history(results);
    let run = store::load_run(&results.join(JUDGED)).unwrap();
    let cfg = config(&run, None, true);
    let newest = cell_file(results, "2026-11-05-105", A);
    std::fs::write(&newest, "{}").unwrap();
    let (full, lazy) = both(results, &cfg);
    let err = full.unwrap_err();
    assert!(
        err.starts_with(&format!(
            "{}: it is the baseline of cell {A}",
            newest.display()
        )),
        "{err}"
    );
    assert_eq!(lazy.unwrap_err(), err);
    // The walk of A read the one file; the other cells walked as before.
    let (cells, skipped) = reads(results, &cfg);
    assert!(!cells.iter().any(|c| c.ends_with(A)), "{cells:?}");
    assert_eq!(skipped, ["2026-11-05-105 linux-x86_64-local"]);
}

/// The one difference: a file past every baseline is not read, so not noticed (and the whole
/// history's gate, with `--strict`, is there to refuse it).
#[test]
fn a_bad_file_past_the_baselines_is_not_read() {
    let tmp = tempfile::tempdir().unwrap();
    let results = tmp.path();
    history(results);
    let run = store::load_run(&results.join(JUDGED)).unwrap();
    let cfg = config(&run, None, true);
    let past = cell_file(results, "2026-11-02-102", A);
    std::fs::write(&past, "not json").unwrap();
    let (full, lazy) = both(results, &cfg);
    let (full, lazy) = (full.unwrap(), lazy.unwrap());
    let notice = |r: &GateReport| {
        cell(r, A)
            .notices
            .iter()
            .any(|n| n.contains(&past.display().to_string()))
    };
    assert!(notice(&full) && !notice(&lazy));
    let without = less_notices_of(&full, &[past]);
    assert_eq!(without.summary.notices + 1, full.summary.notices);
    assert_eq!(lazy, without);
}
