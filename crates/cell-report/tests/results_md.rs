//! `RESULTS.md` and the terminal tables of the workload suite, from two real runs frozen under
//! `crates/cell-testkit/fixtures/workload/`: what a job and a merge render must be what they
//! rendered when the runs were recorded, byte for byte, but for what came later: the
//! footprint section, cut out before the comparison, which shows the figures those files lack
//! as `–`; and the phase tables' `resolves` and `stopped` columns, taken out, each checked.

use std::path::PathBuf;

use cell_schema::{CellResult, JobResult};
use cell_testkit::{read, split_section};

/// The rendered file without its footprint section, which the recorded one predates; and
/// that section, whose figures the recorded results lack (text bytes, every build's seconds,
/// installed sizes) read `–`.
fn recorded_part(md: &str) -> String {
    let md = cell_testkit::without_new_phase_columns(md);
    let (rest, footprint) = split_section(&md, "## Footprint");
    assert!(
        footprint.contains("| text bytes | reproducible |"),
        "{footprint}"
    );
    for line in footprint.lines().filter(|l| l.starts_with("| c-")) {
        assert!(
            line.ends_with("| – | – |"),
            "an old row has no text bytes and no reproducibility: {line}"
        );
        assert!(!line.contains("| 0 |"), "{line}");
    }
    assert!(footprint.contains("| clang | "), "{footprint}");
    assert!(footprint.contains("| – | – | – |"), "{footprint}");
    rest
}

fn fixtures() -> PathBuf {
    cell_testkit::fixtures().join("workload")
}

/// `(run, toolchain, job dir)` of every recorded job.
fn jobs() -> Vec<(String, String, PathBuf)> {
    let mut out = Vec::new();
    for run in std::fs::read_dir(fixtures().join("jobs")).unwrap() {
        let run = run.unwrap();
        for job in std::fs::read_dir(run.path()).unwrap() {
            let job = job.unwrap();
            let name = job.file_name().into_string().unwrap();
            let tc = name
                .trim_start_matches("cell-linux-x86_64-local-")
                .trim_end_matches("-a1")
                .to_owned();
            out.push((run.file_name().into_string().unwrap(), tc, job.path()));
        }
    }
    out.sort();
    out
}

fn cells() -> Vec<(String, PathBuf)> {
    let mut out: Vec<(String, PathBuf)> = std::fs::read_dir(fixtures().join("history"))
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (
                e.file_name().into_string().unwrap(),
                e.path().join("linux-x86_64-local"),
            )
        })
        .collect();
    out.sort();
    out
}

#[test]
fn a_job_renders_the_results_md_it_wrote() {
    for (run, tc, dir) in jobs() {
        let job: JobResult = cell_schema::read_job(&read(&dir.join("results.json"))).unwrap();
        let md = cell_report::job_markdown(&job);
        assert_eq!(
            recorded_part(&md),
            read(&dir.join("RESULTS.md")),
            "{run} {tc}"
        );
        insta::assert_snapshot!(format!("job_md_{run}_{tc}"), md);
        insta::assert_snapshot!(format!("job_text_{run}_{tc}"), cell_report::job_text(&job));
    }
}

#[test]
fn a_merged_cell_renders_the_results_md_it_wrote() {
    for (run, dir) in cells() {
        let cell: CellResult = cell_schema::read_cell(&read(&dir.join("results.json"))).unwrap();
        let md = cell_report::cell_markdown(&cell);
        assert_eq!(recorded_part(&md), read(&dir.join("RESULTS.md")), "{run}");
        insta::assert_snapshot!(format!("cell_md_{run}"), md);
        insta::assert_snapshot!(
            format!("text_summary_{run}"),
            cell_report::text_summary(std::slice::from_ref(&cell))
        );
    }
}

#[test]
fn a_suite_job_renders_the_results_md_it_wrote() {
    let dir = fixtures().join("..");
    let http = read(&dir.join("http/results.json"));
    let Ok(cell_schema::ResultsFile::Http(http)) = cell_schema::read_results(&http) else {
        panic!("an http job result");
    };
    assert_eq!(
        cell_report::suite::http_job_markdown(&http),
        read(&dir.join("http/RESULTS.md"))
    );
    let soak = read(&dir.join("soak/results.json"));
    let Ok(cell_schema::ResultsFile::Soak(soak)) = cell_schema::read_results(&soak) else {
        panic!("a soak job result");
    };
    assert_eq!(
        cell_report::suite::soak_job_markdown(&soak),
        read(&dir.join("soak/RESULTS.md"))
    );
}
