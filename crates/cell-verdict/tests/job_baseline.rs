//! What a job judges its rows against while it times them: the baseline the gate will use,
//! read by the gate's rule, and a row's ratios only where the gate would compare it.

use std::path::Path;

use cell_schema::{CellId, Clock, Phase, ProtocolMode, RowName};
use cell_testkit::{copy_dir, fixtures};
use cell_verdict::{GateConfig, JobBaseline};

const CELL: &str = "linux-x86_64-local";

fn config(baseline: Option<&str>) -> GateConfig {
    let plan = cell_model::Plan::load(&fixtures().join("workload/project")).unwrap();
    GateConfig::from_plan(&plan, baseline.map(str::to_owned), [])
}

fn history() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    copy_dir(&fixtures().join("workload/history"), tmp.path());
    tmp
}

fn find(results: &Path, baseline: Option<&str>) -> Result<Option<JobBaseline>, String> {
    JobBaseline::find(results, &CellId::new(CELL), &config(baseline), false)
}

#[test]
fn the_newest_measured_run_or_the_pinned_one() {
    let h = history();
    let b = find(h.path(), None).unwrap().unwrap();
    assert_eq!(b.run, "2026-12-01-local-093940");
    let b = find(h.path(), Some("2026-12-01-local-093937"))
        .unwrap()
        .unwrap();
    assert_eq!(b.run, "2026-12-01-local-093937");
    // No history, or none of this cell: no baseline, and no error.
    assert!(find(&h.path().join("none"), None).unwrap().is_none());
    let other = JobBaseline::find(
        h.path(),
        &CellId::new("linux-x86_64-gone"),
        &config(None),
        false,
    );
    assert!(other.unwrap().is_none());
}

#[test]
fn a_row_s_ratios_only_where_the_gate_would_compare_it() {
    let h = history();
    let b = find(h.path(), None).unwrap().unwrap();
    let (gcc, mix) = (RowName::from("gcc-O2"), Phase::from("mix"));
    let ratios = b
        .ratios(&gcc, &mix, Clock::Cpu, ProtocolMode::Sequential)
        .expect("gcc-O2 on mix");
    assert_eq!(ratios.len(), 3, "the fixture's three measured rounds");
    assert!(ratios.iter().all(|r| (0.9..1.1).contains(r)), "{ratios:?}");
    // Another protocol, a row or phase the baseline lacks: nothing to settle against.
    assert!(
        b.ratios(&gcc, &mix, Clock::Cpu, ProtocolMode::Duet)
            .is_none()
    );
    assert!(
        b.ratios(
            &RowName::from("nope"),
            &mix,
            Clock::Cpu,
            ProtocolMode::Sequential
        )
        .is_none()
    );
    assert!(
        b.ratios(
            &gcc,
            &Phase::from("primes"),
            Clock::Cpu,
            ProtocolMode::Sequential
        )
        .is_none()
    );
}

#[test]
fn a_run_of_the_scripted_executor_is_no_baseline_of_a_real_job() {
    let h = history();
    let file = h
        .path()
        .join("2026-12-01-local-093940")
        .join(CELL)
        .join("results.json");
    let mut cell = cell_schema::read_cell(&std::fs::read_to_string(&file).unwrap()).unwrap();
    for j in cell.jobs.values_mut() {
        j.protocol.scripted = true;
    }
    std::fs::write(&file, cell_schema::to_json(&cell)).unwrap();
    let err = find(h.path(), None).unwrap_err();
    assert!(err.contains("scripted test executor"), "{err}");
    let scripted = JobBaseline::find(h.path(), &CellId::new(CELL), &config(None), true);
    assert_eq!(scripted.unwrap().unwrap().run, "2026-12-01-local-093940");
}
