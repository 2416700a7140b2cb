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
    JobBaseline::find(results, &CellId::new(CELL), None, &config(baseline), false)
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
        None,
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
    let scripted = JobBaseline::find(h.path(), &CellId::new(CELL), None, &config(None), true);
    assert_eq!(scripted.unwrap().unwrap().run, "2026-12-01-local-093940");
}

/// The run the gate compares a judged cell with, over the history under `results`.
fn gate_baseline(results: &Path, config: &GateConfig) -> Option<String> {
    let history = cell_schema::store::load_history(results).unwrap();
    let measured = history
        .runs
        .iter()
        .find(|r| r.name.to_string() == "2026-12-01-local-093940")
        .unwrap();
    let mut judged = measured.clone();
    judged.name = cell_schema::store::RunDirName::parse("2026-12-02-999").unwrap();
    let report = cell_verdict::gate(&judged, &history.runs, config).unwrap();
    report.cells[0].baseline.clone()
}

/// One rule chooses for both: the job settles against the run the gate then compares with.
#[test]
fn the_job_and_the_gate_choose_the_same_baseline() {
    let h = history();
    for pinned in [None, Some("2026-12-01-local-093937")] {
        let job = find(h.path(), pinned).unwrap().map(|b| b.run);
        assert_eq!(job, gate_baseline(h.path(), &config(pinned)), "{pinned:?}");
    }
    // A newer run holding only a suite of the cell: both pass over it to the measured one.
    let suite_only = h.path().join("2026-12-01-local-093999").join(CELL);
    std::fs::create_dir_all(&suite_only).unwrap();
    let mut cell = cell_testkit::suites::suite_cell("2026-12-01", "local-093999", 1);
    cell.cell.id = CellId::new(CELL);
    std::fs::write(suite_only.join("results.json"), cell_schema::to_json(&cell)).unwrap();
    let job = find(h.path(), None).unwrap().map(|b| b.run);
    assert_eq!(job.as_deref(), Some("2026-12-01-local-093940"));
    assert_eq!(job, gate_baseline(h.path(), &config(None)));
    // An earlier attempt of the job's own run is no baseline of it.
    let own = JobBaseline::find(
        h.path(),
        &CellId::new(CELL),
        Some("local-093940"),
        &config(None),
        false,
    );
    assert_eq!(own.unwrap().unwrap().run, "2026-12-01-local-093937");
    // A pinned run that is not there: the gate stops (exit 2), the job says so.
    let err = find(h.path(), Some("2026-12-01-local-1")).unwrap_err();
    assert!(err.contains("not a run of the history"), "{err}");
}
