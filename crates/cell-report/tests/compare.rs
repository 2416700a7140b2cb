//! The comparison the report opens with: one recorded cell and a copy of it as a macOS cell,
//! a job of it declared to have verified a release under test. Every row against every cell,
//! the subject's rows first and marked, the cost with macOS at ten Linux minutes.

use cell_schema::{CellId, CellResult, Sha256, Subject, ToolchainName};

fn recorded() -> CellResult {
    let dir = cell_testkit::fixtures().join("workload/history");
    let mut runs: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    runs.sort();
    let text = cell_testkit::read(&runs.last().unwrap().join("linux-x86_64-local/results.json"));
    cell_schema::read_cell(&text).unwrap()
}

fn two_cells() -> (CellResult, CellResult) {
    let mut linux = recorded();
    let gcc = ToolchainName::from("gcc");
    linux.jobs.get_mut(&gcc).unwrap().subject = Some(Subject {
        tag: "14.2".into(),
        asset: "gcc-14.2.tar.xz".into(),
        sha256: Sha256::parse(&"a".repeat(64)).unwrap(),
        toolchain: Some(gcc.clone()),
        version: Some("14.2".into()),
        url: None,
        verified: None,
        tools: std::collections::BTreeMap::new(),
        binary_sha256: None,
        binary_bytes: None,
        printed: None,
    });
    let mut mac = linux.clone();
    mac.cell.id = CellId::from("macos-aarch64-macos-15");
    mac.cell.os = "macos".into();
    mac.cell.arch = "aarch64".into();
    (linux, mac)
}

#[test]
fn every_row_against_every_cell_with_the_subject_first() {
    let (linux, mac) = two_cells();
    let c = cell_report::compare::comparison("2026-12-01-1", &[&linux, &mac], None);
    assert_eq!(c.cells.len(), 2);
    assert_eq!(
        c.subject.as_ref().map(ToString::to_string).as_deref(),
        Some("gcc")
    );
    let mix = &c.phases[0];
    assert_eq!(mix.phase.as_str(), "mix");
    assert_eq!(
        mix.rows[0].row.as_str(),
        "gcc-O2",
        "the subject's rows come first"
    );
    assert!(mix.rows[0].subject);
    assert!(mix.rows.iter().skip(1).all(|r| !r.subject));
    assert!(
        mix.rows.iter().all(|r| r.cells.len() == 2),
        "every row on both cells"
    );
    assert!(
        mix.rows.iter().all(|r| r.row.as_str() != "c-fast"),
        "the reference is 1 by construction"
    );
    let mac_cost = c.cost.iter().find(|m| m.os == "macos").unwrap();
    assert_eq!(mac_cost.factor, 10);

    let md = cell_report::compare::markdown(&c);
    assert!(
        md.contains("| row | toolchain | linux-x86\\_64-local | macos-aarch64-macos-15 |"),
        "{md}"
    );
    assert!(md.contains("| ★ `gcc-O2` | gcc |"), "{md}");
    assert!(md.contains("(×10 on macOS:"), "{md}");
    assert!(
        md.contains("Rows of the release under test (gcc) come first, marked ★."),
        "{md}"
    );
}
