//! The bundled workload prints byte-identical output in every language whose toolchain is
//! installed here, built with the real recipes of cell/cell.toml.

mod common;

use std::collections::BTreeMap;
use std::process::Command;

use cell_model::{Plan, Vars};

#[test]
fn every_installed_row_prints_the_expected_answers() {
    let plan = Plan::load(&common::repo_root()).expect("the repository config loads");
    let expected_all: String = plan
        .settings
        .phases
        .iter()
        .map(|p| plan.expect[p].clone())
        .collect();
    assert_eq!(expected_all, "10701324453717703963\n3001134\n39088169\n");
    let tmp = tempfile::tempdir().unwrap();
    let mut checked = Vec::new();
    let mut absent = Vec::new();
    for row in plan.rows.values() {
        let tc = &plan.toolchains[&row.toolchain];
        let Ok(probed) = cell_run::tools::probe(tc) else {
            absent.push(row.name.to_string());
            continue;
        };
        let work = tmp.path().join(row.name.as_str());
        std::fs::create_dir_all(&work).unwrap();
        let bin = work.join("bin");
        let (src, binary, w) = (
            row.source.display().to_string(),
            bin.display().to_string(),
            work.display().to_string(),
        );
        let tool = |n: &cell_model::ToolName| probed.paths[n].display().to_string();
        let argv = |args: &[cell_model::Arg], phase: &str| -> Vec<String> {
            let vars = Vars {
                src: &src,
                bin: &binary,
                work: &w,
                phase,
                tool: &tool,
                port: "",
            };
            args.iter().map(|a| a.render(&vars)).collect()
        };
        let b = argv(&row.build, "");
        let st = Command::new(&b[0])
            .args(&b[1..])
            .current_dir(&work)
            .output()
            .unwrap();
        assert!(
            st.status.success(),
            "{}: build failed: {}",
            row.name,
            String::from_utf8_lossy(&st.stderr)
        );
        // Every phase alone, then all three (no argument's equivalent: an unknown phase letter).
        let mut outputs = BTreeMap::new();
        for phase in plan
            .settings
            .phases
            .iter()
            .map(cell_model::Phase::as_str)
            .chain(["x"])
        {
            let r = argv(&row.run, phase);
            let out = Command::new(&r[0])
                .args(&r[1..])
                .current_dir(&work)
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{} {phase}: {}",
                row.name,
                String::from_utf8_lossy(&out.stderr)
            );
            outputs.insert(phase.to_owned(), out.stdout);
        }
        for p in &plan.settings.phases {
            assert_eq!(
                String::from_utf8_lossy(&outputs[p.as_str()]),
                plan.expect[p],
                "{} on {p}",
                row.name
            );
        }
        assert_eq!(
            String::from_utf8_lossy(&outputs["x"]),
            expected_all,
            "{} with no phase",
            row.name
        );
        checked.push(row.name.to_string());
    }
    eprintln!(
        "checked: {}; not installed here: {}",
        checked.join(", "),
        absent.join(", ")
    );
    assert!(
        checked.iter().any(|r| r == "c-O2"),
        "the reference must be installed to run the tests"
    );
    // In CI every toolchain is installed by .ci/run: a row silently missing there is a failure.
    if std::env::var_os("CI").is_some() {
        assert!(absent.is_empty(), "toolchains missing in CI: {absent:?}");
    }
}
