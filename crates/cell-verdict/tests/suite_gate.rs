//! The gate of the http and soak suites on hand-built results with fixed figures: a steady
//! server passes, a broken one and a leak fail, a stored baseline alone never fails an HTTP
//! run, and a drift is a notice when its settings say so.

use cell_testkit::suites::{scale_rps, suite_cell};
use cell_verdict::gate_suites;

#[test]
fn the_suite_gate_passes_a_steady_server_and_fails_a_broken_one_and_a_leak() {
    let old = suite_cell("2026-11-01", "1", 0);
    let new = suite_cell("2026-11-02", "2", 1);
    let f = gate_suites(&new, &[("2026-11-01-1", &old)], 0.2, None);
    let rust_oha = f
        .verdicts
        .iter()
        .find(|v| v.row.as_str() == "http-rust" && v.phase.as_str() == "plaintext.keep-alive.oha")
        .unwrap();
    assert_eq!(
        rust_oha.status,
        cell_schema::GateStatus::Pass,
        "{}",
        rust_oha.message
    );
    assert!(
        rust_oha.message.contains("in 2026-11-01-1; band"),
        "{}",
        rust_oha.message
    );
    // A server that failed is a failure, whatever its baseline; so is a drift when the
    // settings say so.
    assert!(
        f.failures
            .iter()
            .any(|m| m.starts_with("http server go (job http-go): build failed")),
        "{:?}",
        f.failures
    );
    assert!(
        f.failures
            .iter()
            .any(|m| m.starts_with("soak server python drifted")),
        "{:?}",
        f.failures
    );
    // First run of a server and tool: a notice, no verdict.
    let none = gate_suites(&new, &[], 0.2, None);
    assert!(none.verdicts.is_empty());
    assert!(
        none.notices
            .iter()
            .any(|n| n.contains("first run, baseline recorded"))
    );
}

#[test]
fn a_stored_baseline_alone_cannot_fail_an_http_run() {
    let old = suite_cell("2026-11-01", "1", 0);
    let mut new = suite_cell("2026-11-02", "2", 0);
    scale_rps(&mut new, 0.5);
    let f = gate_suites(&new, &[("2026-11-01-1", &old)], 0.2, None);
    let v = f
        .verdicts
        .iter()
        .find(|v| v.row.as_str() == "http-rust" && v.phase.as_str() == "plaintext.keep-alive.oha")
        .unwrap();
    assert_eq!(v.status, cell_schema::GateStatus::Inconclusive);
    assert!(
        v.message.starts_with("INCONCLUSIVE") && v.message.contains("stored baseline"),
        "{}",
        v.message
    );
    assert!(
        f.verdicts
            .iter()
            .all(|v| v.status != cell_schema::GateStatus::Fail)
    );
}

#[test]
fn a_drift_is_a_notice_when_the_settings_do_not_fail_it_and_p99_is_read_at_2x() {
    let old = suite_cell("2026-11-01", "1", 0);
    let mut new = suite_cell("2026-11-02", "2", 0);
    for s in new.soak.values_mut() {
        s.settings.config.fail_on_drift = false;
    }
    for s in new.http.values_mut() {
        for t in s.result.tools.values_mut() {
            t.p99_ms *= 3.0;
        }
    }
    let f = gate_suites(&new, &[("2026-11-01-1", &old)], 0.2, None);
    assert!(
        !f.failures.iter().any(|m| m.contains("drifted")),
        "{:?}",
        f.failures
    );
    assert!(
        f.notices
            .iter()
            .any(|m| m.starts_with("soak server python drifted"))
    );
    assert!(
        f.notices
            .iter()
            .any(|m| m.contains("p99 3.70 ms vs 1.23 ms") && m.contains("(3.0×)")),
        "{:?}",
        f.notices
    );
}

/// The gate reads the repository's `[soak]` rule, not the job's copy of it: a job that
/// recorded `fail_on_drift = false` still fails when the repository says true, and a
/// `drift_share` raised above the measured share makes the same fit flat.
#[test]
fn the_soak_rule_of_the_repository_overrides_what_the_job_recorded() {
    let old = suite_cell("2026-11-01", "1", 0);
    let mut new = suite_cell("2026-11-02", "2", 0);
    let mut repo = new.soak.values().next().unwrap().settings.config.clone();
    for s in new.soak.values_mut() {
        s.settings.config.fail_on_drift = false;
    }
    repo.fail_on_drift = true;
    let f = gate_suites(&new, &[("2026-11-01-1", &old)], 0.2, Some(&repo));
    assert!(
        f.failures
            .iter()
            .any(|m| m.starts_with("soak server python drifted")),
        "{:?}",
        f.failures
    );
    repo.drift_share = 1e9;
    let f = gate_suites(&new, &[("2026-11-01-1", &old)], 0.2, Some(&repo));
    assert!(
        !f.failures
            .iter()
            .chain(&f.notices)
            .any(|m| m.contains("drifted")),
        "{:?} {:?}",
        f.failures,
        f.notices
    );
}

#[test]
fn a_baseline_measured_in_another_mode_is_no_baseline() {
    let old = suite_cell("2026-11-01", "1", 0);
    let mut new = suite_cell("2026-11-02", "2", 0);
    for s in new.http.values_mut() {
        s.settings.mode = cell_schema::HttpMode::SameProcess;
    }
    let f = gate_suites(&new, &[("2026-11-01-1", &old)], 0.2, None);
    assert!(
        f.verdicts.iter().all(|v| v.row.as_str() != "http-rust"),
        "{:?}",
        f.verdicts
    );
    assert!(
        f.notices
            .iter()
            .any(|n| n.contains("none measured as this one: 2026-11-01-1 was measured fresh")),
        "{:?}",
        f.notices
    );
}
