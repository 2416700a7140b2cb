//! End to end on real toolchains and real timings: `cell local` → `cell collect --from-dir`
//! → `cell gate` → `cell report`, on a small project, twice, into one committed history; the
//! second time one row does 1.5× the work. What is asserted holds however busy the machine is:
//! the slower row is FAIL, or INCONCLUSIVE saying why (a biased control, or what the two runs
//! resolved), never PASS, and the tooth (4× the work) stays well above its floor of 2.

mod common;

use common::{GCC_TOML, VERSIONS, cell, project, read_json};

#[test]
fn local_collect_gate_report() {
    let tmp = tempfile::tempdir().unwrap();
    let root = project(tmp.path(), VERSIONS, &GCC_TOML);
    let results = tmp.path().join("results");
    let mut run_dirs = Vec::new();
    for run_id in ["101", "102"] {
        if run_id == "102" {
            let toml = root.join("cell/cell.toml");
            let text = std::fs::read_to_string(&toml).unwrap().replace(
                r#""{tool:gcc}", "-O2","#,
                r#""{tool:gcc}", "-O2", "-DITER=15000000UL","#,
            );
            std::fs::write(&toml, text).unwrap();
        }
        let out = tmp.path().join(format!("local-{run_id}"));
        // Eight rounds a side: enough for the gate to call a change among its units.
        cell()
            .args(["local", "-q", "--reps", "8"])
            .arg("--root")
            .arg(&root)
            .arg("--out")
            .arg(&out)
            .assert()
            .code(predicates::ord::lt(2));
        cell()
            .arg("--root")
            .arg(&root)
            .args(["collect", run_id, "--from-dir"])
            .arg(out.join("jobs"))
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
    // The second run is judged against the first: a verdict per row and phase.
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
    let verdicts = report["cells"][0]["verdicts"].as_array().unwrap();
    assert!(!verdicts.is_empty(), "{text}");
    for v in verdicts.iter().filter(|v| v["row"] == "gcc-O2") {
        let message = v["message"].as_str().unwrap();
        match v["status"].as_str().unwrap() {
            "fail" => {}
            // Not judged (a biased control on either side) or not resolved: it says which.
            "inconclusive" => assert!(
                message.contains("not judged")
                    || message.contains("resolves ±")
                    || message.contains("cannot reach"),
                "{message}"
            ),
            other => panic!("a row doing 1.5× the work is {other}: {message}"),
        }
    }
    assert_eq!(report["summary"]["failures"], 0, "{text}");
    for dir in &run_dirs {
        let cell = read_json(
            &std::fs::read_dir(dir)
                .unwrap()
                .map(|e| e.unwrap().path())
                .find(|p| p.is_dir())
                .unwrap()
                .join("results.json"),
        );
        for (job, j) in cell["jobs"].as_object().unwrap() {
            let tooth = j["tooth"]["ratio"]["median"].as_f64().unwrap();
            assert!(
                tooth > 3.0,
                "job {job}: tooth {tooth} (4× the work, floor 2)"
            );
        }
    }
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
    // Every sample only when asked for.
    assert!(!out.join("samples.csv").exists());
}
