//! The recompute of the http and soak suites on the recorded jobs of a real session: to the bit
//! when untouched, the rounding an older cell's file may carry allowed and no more, and at the
//! gate a limit changed since a note rather than a disagreement.

use cell_schema::{CellHttpServer, HttpJobResult, ResultsFile, SoakJobResult};
use cell_testkit::{fixtures, read};
use cell_verdict::GateConfig;
use cell_verdict::recompute::{self, suites};

fn config() -> GateConfig {
    let plan = cell_model::Plan::load(&fixtures().join("workload/project")).unwrap();
    GateConfig::from_plan(&plan, None, [])
}

fn http() -> HttpJobResult {
    match cell_schema::read_results(&read(&fixtures().join("http/results.json"))).unwrap() {
        ResultsFile::Http(j) => *j,
        _ => panic!("an http job"),
    }
}

fn soak() -> SoakJobResult {
    match cell_schema::read_results(&read(&fixtures().join("soak/results.json"))).unwrap() {
        ResultsFile::Soak(j) => *j,
        _ => panic!("a soak job"),
    }
}

fn wrk_run(j: &mut HttpJobResult, i: usize) -> &mut cell_schema::HttpRun {
    let s = j.servers.values_mut().next().unwrap();
    &mut s.tools.get_mut("wrk").unwrap().runs[i]
}

#[test]
fn the_recorded_suite_jobs_recompute_to_the_bit() {
    let c = config();
    let h = http();
    let r = suites::http_job(&h, &c);
    assert_eq!((r.disagreements, r.notes), (Vec::new(), Vec::new()));
    assert_eq!(r.value, h);
    let s = soak();
    let r = suites::soak_job(&s, &c);
    assert_eq!((r.disagreements, r.notes), (Vec::new(), Vec::new()));
    assert_eq!(r.value, s);
}

/// An older cell divided the unrounded server CPU time: a run's CPU per 1k a rounding unit off
/// is kept with a note; further off it is a disagreement, and replaced.
#[test]
#[expect(
    clippy::float_cmp,
    reason = "the recomputed figure is the division's exact result"
)]
fn a_run_s_cpu_per_1k_within_an_older_cell_s_rounding_is_kept_and_beyond_it_named() {
    let c = config();
    let mut h = http();
    wrk_run(&mut h, 0).cpu_ms_per_1k = 102.1431;
    // An older file's median is the median of its runs' figures as it wrote them.
    let wrk = h
        .servers
        .values_mut()
        .next()
        .unwrap()
        .tools
        .get_mut("wrk")
        .unwrap();
    wrk.cpu_ms_per_1k = cell_verdict::suite_figures::http_tool(wrk.runs.clone()).cpu_ms_per_1k;
    let r = suites::http_job(&h, &c);
    assert!(r.disagreements.is_empty(), "{:?}", r.disagreements);
    assert!(
        r.notes[0].contains("cpu_ms_per_1k 102.1431 stated") && r.notes[0].ends_with("kept"),
        "{:?}",
        r.notes
    );
    assert_eq!(r.value, h);
    wrk_run(&mut h, 0).cpu_ms_per_1k = 102.2;
    let r = suites::http_job(&h, &c);
    assert!(
        r.disagreements[0].contains(
            "under wrk: run 0 (seq 0): cpu_ms_per_1k 102.2 stated, its server CPU 1.02 s over 9986 responses gives 102.143"
        ),
        "{:?}",
        r.disagreements
    );
    assert_eq!(wrk_run(&mut r.value.clone(), 0).cpu_ms_per_1k, 102.143);
    assert_eq!(r.value.verdict.status, cell_schema::Status::Failed);
}

/// An older cell read the unrounded CPU shares: a share within its 4 decimals of the limit
/// keeps the stated decision; one beyond is named.
#[test]
fn a_share_within_its_rounding_of_the_limit_keeps_the_stated_decision() {
    let c = config();
    let mut h = http();
    wrk_run(&mut h, 1).load_cpu_share = 0.90005;
    let r = suites::http_job(&h, &c);
    assert!(r.disagreements.is_empty(), "{:?}", r.disagreements);
    assert!(
        r.notes[0].contains("run 1 (seq 2) clean stated"),
        "{:?}",
        r.notes
    );
    assert!(wrk_run(&mut r.value.clone(), 1).contaminated.is_empty());
    wrk_run(&mut h, 1).load_cpu_share = 0.9002;
    let r = suites::http_job(&h, &c);
    assert!(
        r.disagreements[0]
            .contains("run 1 (seq 2) clean stated, but its CPU shares contaminate it"),
        "{:?}",
        r.disagreements
    );
}

/// The gate judges a committed cell by today's limits, which may have changed since it was
/// collected: the runs they now exclude are noted and the medians recomputed without them,
/// and no stated figure is called a disagreement for it.
#[test]
fn at_the_gate_a_limit_changed_since_is_a_note_not_a_disagreement() {
    let mut c = config();
    c.settings.http_load_cpu_max = 0.3;
    let h = http();
    let mut cell = cell_testkit::suites::suite_cell("2026-12-01", "1", 0);
    cell.soak.clear();
    cell.http.clear();
    for (name, result) in h.servers {
        cell.http.insert(
            name,
            CellHttpServer {
                job: h.job.clone(),
                machine: h.machine.clone(),
                settings: h.settings.clone(),
                pins: h.pins.clone(),
                versions: h.versions.clone(),
                result,
            },
        );
    }
    let r = recompute::cell(&cell, &c);
    assert!(r.disagreements.is_empty(), "{:?}", r.disagreements);
    // Both oha runs (shares 0.3183 and 0.3224) are above 0.3 now.
    assert_eq!(r.notes.len(), 2, "{:?}", r.notes);
    assert!(
        r.notes[0].contains("judged by today's HTTP_LOAD_CPU_MAX"),
        "{:?}",
        r.notes
    );
    let oha = &r.value.http.values().next().unwrap().result.tools["oha"];
    assert_eq!(oha.clean_runs, 0);
}

/// At collect the drift rule a soak states must be the configuration's: a job that raised its
/// own `drift_share` is named, and judged by the configuration's rule.
#[test]
fn a_soak_s_own_drift_rule_is_named_when_it_is_not_the_configuration_s() {
    let mut c = config();
    let mut s = soak();
    c.soak = Some(s.settings.config.clone());
    s.settings.config.drift_share = 10.0;
    let r = suites::soak_job(&s, &c);
    assert!(
        r.disagreements[0].starts_with(
            "soak settings: drift_share 10, min_r2 0.5, fail_on_drift true stated, [soak] says 0.05"
        ),
        "{:?}",
        r.disagreements
    );
}
