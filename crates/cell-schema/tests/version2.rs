//! Schema version 2: a row's runs written as columns, version 1 still read. The inputs are
//! real runs: the two recorded version-1 runs of the fixture project, and a six-toolchain,
//! 30-round cell recorded with version 2 (`fixtures/scale/`).

use std::path::{Path, PathBuf};

use cell_schema::store::{self, RESULTS_JSON};
use cell_schema::{CellResult, Run, SCHEMA_VERSION};

fn testkit() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../cell-testkit/fixtures")
}

/// Every `<cell-id>/results.json` under the run dirs of `history`.
fn cell_files(history: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for run in std::fs::read_dir(history).unwrap() {
        let run = run.unwrap().path();
        if !run.is_dir() {
            continue;
        }
        for cell in std::fs::read_dir(run).unwrap() {
            let file = cell.unwrap().path().join(RESULTS_JSON);
            if file.is_file() {
                out.push(file);
            }
        }
    }
    out.sort();
    out
}

fn read(file: &Path) -> (String, CellResult) {
    let text = std::fs::read_to_string(file).unwrap();
    let cell = cell_schema::read_cell(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    (text, cell)
}

fn runs(cell: &CellResult) -> Vec<&Run> {
    cell.rows
        .values()
        .map(|r| &r.row)
        .chain(cell.jobs.values().map(|j| &j.reference))
        .chain(cell.jobs.values().filter_map(|j| j.control.as_ref()))
        .flat_map(|r| r.phases.values())
        .flat_map(|p| &p.runs)
        .collect()
}

/// A version-1 file reads, writes as version 2, and reads back as what it held: every
/// statistic, ratio and verdict exactly, every run's times to the microsecond.
#[test]
fn a_version_one_cell_is_written_as_version_two_and_reads_back_the_same() {
    let files = cell_files(&testkit().join("workload/history"));
    assert_eq!(files.len(), 2);
    for file in files {
        let (text, v1) = read(&file);
        assert!(text.contains("\"schema_version\": 1") && text.contains("\"runs\": ["));
        let mut written = v1.clone();
        written.schema_version = SCHEMA_VERSION;
        let v2_text = cell_schema::to_record_json(&written);
        assert!(
            !v2_text.contains("\"wall_s\""),
            "no run objects in version 2"
        );
        let v2 = cell_schema::read_cell(&v2_text).unwrap();
        assert_eq!(
            cell_schema::to_record_json(&v2),
            v2_text,
            "{}",
            file.display()
        );
        let (old, new) = (runs(&v1), runs(&v2));
        assert_eq!(old.len(), new.len());
        assert!(!old.is_empty());
        for (a, b) in old.iter().zip(&new) {
            assert_eq!(
                (a.round, a.seq, a.warmup, a.ok),
                (b.round, b.seq, b.warmup, b.ok)
            );
            assert_eq!((a.maxrss_kib, a.paired_with), (b.maxrss_kib, b.paired_with));
            for (x, y) in [(a.wall_s, b.wall_s), (a.cpu_s, b.cpu_s)] {
                assert!((x - y).abs() <= 0.5e-6 + 1e-12, "{x} vs {y}");
            }
        }
        // Everything but the runs is the same value.
        let strip = |c: &CellResult| {
            let mut c = c.clone();
            c.schema_version = 0;
            for r in c.rows.values_mut() {
                r.row.phases.values_mut().for_each(|p| p.runs.clear());
            }
            for j in c.jobs.values_mut() {
                j.reference.phases.values_mut().for_each(|p| p.runs.clear());
                if let Some(ctl) = j.control.as_mut() {
                    ctl.phases.values_mut().for_each(|p| p.runs.clear());
                }
            }
            c
        };
        assert_eq!(strip(&v1), strip(&v2));
    }
}

/// The bound: a six-toolchain cell at the 30-round cap is at most 150 KB on disk, and
/// a second write of what was read is the same bytes (a re-collect changes nothing).
#[test]
fn a_six_toolchain_thirty_round_cell_is_at_most_150_kb() {
    let files = cell_files(&testkit().join("scale"));
    assert_eq!(files.len(), 1, "{files:?}");
    let (text, cell) = read(&files[0]);
    assert_eq!(cell.schema_version, SCHEMA_VERSION);
    assert_eq!(cell.jobs.len(), 6, "six toolchains");
    for j in cell.jobs.values() {
        assert_eq!(j.protocol.measured_rounds, 30, "30 rounds");
    }
    assert!(text.len() <= 150_000, "{} bytes", text.len());
    assert_eq!(cell_schema::to_record_json(&cell), text);
    assert!(
        store::load_history(&testkit().join("scale"))
            .unwrap()
            .skipped
            .is_empty()
    );
}
