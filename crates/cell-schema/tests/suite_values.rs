//! Values no measurement of the http and soak suites can produce: a suite job holding one is
//! refused where it is read, naming the figure and where it sits, and a committed cell holding
//! one is no history.
//!
//! Regression: a negative req/s, more clean runs than runs, a negative soak sample time and a
//! req/s outside its own runs' range were read and merged like any figure.

use std::path::{Path, PathBuf};

use cell_schema::{CellHttpServer, ResultsFile, SchemaError, validate};
use serde_json::{Value, json};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../cell-testkit/fixtures")
}

fn recorded(file: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(fixtures().join(file)).unwrap()).unwrap()
}

fn read(v: &Value) -> Result<ResultsFile, SchemaError> {
    cell_schema::read_results(&serde_json::to_string(v).unwrap())
}

type Case = (&'static str, &'static str, fn(&mut Value), &'static str);

#[test]
fn an_impossible_suite_figure_is_refused_naming_where_it_sits() {
    let cases: [Case; 5] = [
        (
            "a negative req/s of a run",
            "http/results.json",
            |j| j["servers"]["python"]["tools"]["oha"]["runs"][0]["load"]["rps"] = json!(-1.0),
            "load rps of http server python, plaintext over keep-alive under oha, run 0 (seq 1) is -1 (impossible)",
        ),
        (
            "more clean runs than runs",
            "http/results.json",
            |j| j["servers"]["python"]["tools"]["wrk"]["clean_runs"] = json!(3),
            "http server python, plaintext over keep-alive under wrk counts 3 clean runs of 2 (impossible)",
        ),
        (
            "a median outside its runs",
            "http/results.json",
            |j| j["servers"]["python"]["tools"]["wrk"]["rps"] = json!(50_000.0),
            "rps of http server python, plaintext over keep-alive under wrk is 50000 with its runs' range [9964.775, 9985.9839]",
        ),
        (
            "a negative sample time",
            "soak/results.json",
            |j| j["servers"]["python"]["samples"][3]["t_s"] = json!(-3.0),
            "t_s of sample 4 of soak server python is -3 (impossible)",
        ),
        (
            "an R² above 1",
            "soak/results.json",
            |j| j["servers"]["python"]["fit"]["r2"] = json!(1.5),
            "R² of fit of soak server python is 1.5 (impossible)",
        ),
    ];
    for (what, file, spoil, named) in cases {
        let mut j = recorded(file);
        assert!(read(&j).is_ok(), "{what}: the recorded job reads");
        spoil(&mut j);
        let e = read(&j).expect_err(what);
        assert!(matches!(e, SchemaError::Impossible(_)), "{what}: {e}");
        assert!(e.to_string().contains(named), "{what}: {e}");
    }
}

/// A committed cell: a non-finite figure (which no JSON can carry, but a value in memory may)
/// is named too, and the store would leave the file out.
#[test]
fn a_cell_with_a_non_finite_suite_figure_is_no_history() {
    let Ok(ResultsFile::Http(job)) = read(&recorded("http/results.json")) else {
        panic!("an http job");
    };
    let text = std::fs::read_to_string(
        fixtures().join("workload/history/2026-12-01-local-093937/linux-x86_64-local/results.json"),
    )
    .unwrap();
    let mut cell = cell_schema::read_cell(&text).unwrap();
    assert!(validate::cell_result(&cell).is_empty());
    for (name, mut result) in job.servers.clone() {
        result.tools.get_mut("oha").unwrap().p99_ms = f64::NAN;
        cell.http.insert(
            name,
            CellHttpServer {
                job: job.job.clone(),
                machine: job.machine.clone(),
                settings: job.settings.clone(),
                pins: job.pins.clone(),
                versions: job.versions.clone(),
                result,
            },
        );
    }
    let problems: Vec<String> = validate::cell_result(&cell)
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        problems,
        ["p99_ms of http server python, plaintext over keep-alive under oha is NaN (impossible)"]
    );
}
