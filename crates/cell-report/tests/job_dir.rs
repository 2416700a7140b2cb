//! The job dir of each suite, written from recorded results (frozen under
//! `crates/cell-testkit/fixtures/`, in schema version 1): every file, byte for byte (a
//! workload `RESULTS.md` but for its footprint section, which the recording predates). The
//! results are written again in the current version, which reads back as what was recorded
//! and writes back as the same bytes.

use std::path::Path;

use cell_schema::AnyJob;
use cell_testkit::{fixtures, read};

/// What the binary does with a job's result: render its files, write them as its job dir.
fn write(dir: &Path, job: &AnyJob) {
    cell_schema::store::write_job_dir(dir, &cell_report::job_dir(job)).unwrap();
}

/// `written` is the current version of what `recorded` held: the same values (a run's times
/// to the microsecond), and a fixed point of a second read and write.
fn same_record(written: &str, recorded: &str) {
    assert!(written.contains(&format!(
        "\"schema_version\": {}",
        cell_schema::SCHEMA_VERSION
    )));
    let again = cell_schema::read_results(written).unwrap();
    assert_eq!(cell_schema::to_record_json(&again), written);
    let old = cell_schema::read_results(recorded).unwrap();
    assert_eq!(
        cell_schema::to_record_json(&old),
        written,
        "what was recorded writes as what was written"
    );
}

fn dump(dir: &Path) -> String {
    cell_testkit::dump(&cell_testkit::files(dir))
}

#[test]
fn workload_job_dir() {
    let job =
        fixtures().join("workload/jobs/2026-12-01-local-093940/cell-linux-x86_64-local-clang-a1");
    let result = cell_schema::read_job(&read(&job.join("results.json"))).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    write(tmp.path(), &AnyJob::from(result));
    same_record(
        &read(&tmp.path().join("results.json")),
        &read(&job.join("results.json")),
    );
    let facts: cell_schema::Facts = serde_json::from_str(&read(&job.join("facts.json"))).unwrap();
    assert_eq!(
        read(&tmp.path().join("facts.json")),
        cell_schema::to_record_json(&facts)
    );
    // The recorded RESULTS.md predates the footprint section and two columns of the phase
    // tables: all else is as it was.
    let (md, footprint) = cell_testkit::split_section(
        &cell_testkit::without_new_phase_columns(&read(&tmp.path().join("RESULTS.md"))),
        "## Footprint",
    );
    assert_eq!(md, read(&job.join("RESULTS.md")));
    assert!(
        footprint.contains("| c-slow | clang | clang |"),
        "{footprint}"
    );
    insta::assert_snapshot!("workload_job_dir", dump(tmp.path()));
}

#[test]
fn http_job_dir() {
    let text = read(&fixtures().join("http/results.json"));
    let Ok(cell_schema::ResultsFile::Http(job)) = cell_schema::read_results(&text) else {
        panic!("an http job result");
    };
    let tmp = tempfile::tempdir().unwrap();
    write(tmp.path(), &AnyJob::Http(job));
    same_record(&read(&tmp.path().join("results.json")), &text);
    insta::assert_snapshot!("http_job_dir", dump(tmp.path()));
}

#[test]
fn soak_job_dir() {
    let text = read(&fixtures().join("soak/results.json"));
    let Ok(cell_schema::ResultsFile::Soak(job)) = cell_schema::read_results(&text) else {
        panic!("a soak job result");
    };
    let tmp = tempfile::tempdir().unwrap();
    write(tmp.path(), &AnyJob::Soak(job));
    same_record(&read(&tmp.path().join("results.json")), &text);
    for name in ["RESULTS.md", "soak/python.svg", "soak/overlay.svg"] {
        assert_eq!(
            read(&tmp.path().join(name)),
            read(&fixtures().join("soak").join(name)),
            "{name}"
        );
    }
    insta::assert_snapshot!("soak_job_dir", dump(tmp.path()));
}
