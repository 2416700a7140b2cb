//! DESIGN §9 end to end: `cell local` → `cell collect --from-dir` → `cell gate` → `cell report`,
//! on a small real project, twice, into one committed history.

mod common;

use common::{GCC_TOML, VERSIONS, cell, project, read_json};

#[test]
fn local_collect_gate_report() {
    let tmp = tempfile::tempdir().unwrap();
    let root = project(tmp.path(), VERSIONS, &GCC_TOML);
    let results = tmp.path().join("results");
    let mut run_dirs = Vec::new();
    for run_id in ["101", "102"] {
        let out = tmp.path().join(format!("local-{run_id}"));
        cell()
            .args(["local", "-q"])
            .arg("--root")
            .arg(&root)
            .arg("--out")
            .arg(&out)
            .assert()
            .code(predicates::ord::lt(2));
        let jobs = out.join("jobs");
        cell()
            .args(["collect", run_id, "--from-dir"])
            .arg(&jobs)
            .arg("--results")
            .arg(&results)
            .assert()
            .success();
        let dir = std::fs::read_dir(&results)
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.to_str().unwrap().ends_with(&format!("-{run_id}")))
            .unwrap();
        run_dirs.push(dir);
    }
    // The second run is judged against the first: a verdict per row and phase, no failure.
    let gate = cell()
        .args(["gate"])
        .arg(&run_dirs[1])
        .arg("--root")
        .arg(&root)
        .arg("--history")
        .arg(&results)
        .assert()
        .code(predicates::ord::lt(2));
    let text = String::from_utf8_lossy(&gate.get_output().stdout).into_owned();
    let report = read_json(&run_dirs[1].join("gate.json"));
    assert_eq!(
        report["cells"][0]["baseline"],
        run_dirs[0].file_name().unwrap().to_str().unwrap(),
        "{text}"
    );
    assert!(
        !report["cells"][0]["verdicts"]
            .as_array()
            .unwrap()
            .is_empty(),
        "{text}"
    );
    assert_eq!(report["summary"]["failures"], 0, "{text}");
    // The report covers both runs.
    let out = tmp.path().join("report");
    cell()
        .args(["report", "--history"])
        .arg(&results)
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    let page = std::fs::read_to_string(out.join("index.html")).unwrap();
    for d in &run_dirs {
        assert!(
            page.contains(d.file_name().unwrap().to_str().unwrap()),
            "the report lacks {}",
            d.display()
        );
    }
    assert!(out.join("samples.csv").is_file());
}
