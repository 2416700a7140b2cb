//! A verdict on a metric one side's file lacks: INCONCLUSIVE, saying which side lacks it, never
//! judged on another metric's figure. The runs are the two recorded under
//! `crates/cell-testkit/fixtures/workload/`, neither judged on user time.

use cell_schema::store::HistoryRun;
use cell_schema::store::load_history;
use cell_schema::{Clock, GateStatus, RowName, RowResult};
use cell_testkit::{copy_dir, fixtures};
use cell_verdict::{GateConfig, gate};

/// A row as a job that records user time writes it: each run's user time (here its wall
/// time), and the user summary and ratio beside the wall ones.
fn with_user_time(row: &mut RowResult) {
    for pr in row.phases.values_mut() {
        for r in &mut pr.runs {
            r.user_s = Some(r.wall_s);
        }
        if let Some(r) = pr.ratio.as_mut() {
            let wall = r.clocks[&Clock::Wall].clone();
            r.clocks.insert(Clock::User, wall);
        }
        if let Some(s) = pr.stats.as_mut() {
            let wall = s.clocks[&Clock::Wall].clone();
            s.clocks.insert(Clock::User, wall);
        }
    }
}

/// The newer run with `gcc-O2` judged on user time, every row recording it.
fn judged_on_user(run: &HistoryRun) -> HistoryRun {
    let mut run = run.clone();
    let cell = run.cells.values_mut().next().unwrap();
    for (name, row) in &mut cell.rows {
        if *name == RowName::new("gcc-O2") {
            row.row.verdict_clock = Clock::User;
        }
        with_user_time(&mut row.row);
    }
    for job in cell.jobs.values_mut() {
        with_user_time(&mut job.reference);
        job.control.iter_mut().for_each(with_user_time);
        job.tooth_rows.values_mut().for_each(with_user_time);
    }
    run
}

/// Regression: `Ratios::on(User)` gave the CPU ratio of a baseline that recorded no user
/// time, and the gate patched around it by name. The baseline's lack is now its own
/// INCONCLUSIVE verdict, whatever the metric.
#[test]
fn a_verdict_on_a_metric_the_baseline_lacks_is_inconclusive_and_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    copy_dir(&fixtures().join("workload/history"), tmp.path());
    let history = load_history(tmp.path()).unwrap();
    let plan = cell_model::Plan::load(&fixtures().join("workload/project")).unwrap();
    let config = GateConfig::from_plan(&plan, None, []);
    let (a, b) = (&history.runs[0], &history.runs[1]);
    let before = gate(b, &history.runs, &config).unwrap();
    let on_user = judged_on_user(b);
    let after = gate(&on_user, &[a.clone(), on_user.clone()], &config).unwrap();
    let (was, now) = (&before.cells[0].verdicts, &after.cells[0].verdicts);
    let show = |v: &[cell_schema::GateVerdict]| -> Vec<String> {
        v.iter().map(|v| v.message.clone()).collect()
    };
    assert_eq!(
        was.len(),
        now.len(),
        "every row and phase still has its verdict: {:#?} {:#?} {:#?}",
        show(was),
        show(now),
        after.cells[0].notices
    );
    let gcc: Vec<_> = now.iter().filter(|v| v.row.as_str() == "gcc-O2").collect();
    assert!(!gcc.is_empty());
    for v in gcc {
        assert_eq!(v.clock, Clock::User);
        assert_eq!(v.status, GateStatus::Inconclusive, "{}", v.message);
        assert!(
            v.message.contains(&format!(
                "not compared: {} recorded no user time ratio",
                a.name
            )),
            "{}",
            v.message
        );
    }
    // The rows judged on a clock both files hold are judged as before (at the level of a
    // family without gcc's units, which no longer count).
    for (w, n) in was
        .iter()
        .zip(now)
        .filter(|(w, _)| w.row.as_str() != "gcc-O2")
    {
        assert_eq!(w.status, n.status, "{}\n{}", w.message, n.message);
        assert_eq!(
            w.change.as_ref().map(|c| c.median),
            n.change.as_ref().map(|c| c.median),
            "{}\n{}",
            w.message,
            n.message
        );
    }
}

/// An A/A control without a user ratio left its phases unjudged (right) saying "too noisy to
/// gate: … has no user time ratio" (wrong): the figure is missing, nothing was noisy.
#[test]
fn a_control_without_the_verdict_clocks_ratio_is_not_judged_and_says_the_figure_is_missing() {
    use cell_schema::Status;
    use cell_verdict::{WorkloadJob, workload_verdict};
    let history = load_history(&fixtures().join("workload/history")).unwrap();
    let plan = cell_model::Plan::load(&fixtures().join("workload/project")).unwrap();
    let config = GateConfig::from_plan(&plan, None, []);
    let cell = history.runs[0].cells.values().next().unwrap();
    let (job_name, job) = cell.jobs.iter().next().unwrap();
    let control = job
        .control
        .as_ref()
        .expect("the fixture's job has its control");
    assert!(
        control.phases.values().all(|p| p
            .ratio
            .as_ref()
            .is_some_and(|r| r.on(Clock::User).is_none())),
        "the fixture records no user ratio"
    );
    let mut timed = vec![
        (&job.protocol.reference, &job.reference),
        (&job.protocol.control, control),
    ];
    timed.extend(
        cell.rows
            .iter()
            .filter(|(_, r)| r.job == *job_name)
            .map(|(n, r)| (n, &r.row)),
    );
    let verdict = workload_verdict(
        &WorkloadJob {
            rows: &timed,
            control: &job.protocol.control,
            tooth: None,
            contention: None,
            reference_timed_out: None,
            default_clock: Clock::User,
            arch: "x86_64",
            mode: job.protocol.mode,
        },
        &config,
    );
    assert_eq!(verdict.status, Status::Noisy, "{verdict:?}");
    assert!(!verdict.reasons.is_empty());
    for (reason, phase) in verdict.reasons.iter().zip(control.phases.keys()) {
        assert_eq!(
            reason,
            &format!("not judged: the A/A control has no user time ratio on {phase}")
        );
    }
    assert!(
        verdict.reasons.iter().all(|r| !r.contains("noisy")),
        "{:?}",
        verdict.reasons
    );
}
