//! The footprint through the binary, on real builds: every row built `BUILD_REPS` times with
//! each build's seconds and their median recorded, the code section of an ELF (or Mach-O)
//! binary read, and the installed size of an apt toolchain (dpkg) and of one in a directory
//! (its files), all shown in `RESULTS.md`.

mod common;

use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;

use common::{VERSIONS, assert_valid, cell, project, read_json};

/// A toolchain no package manager installed: a C compiler wrapper in its own directory, the
/// way a tarball or a setup action leaves one (`<root>/bin/<tool>`), and a row it builds.
fn wrapped_toolchain(root: &Path) -> String {
    std::fs::create_dir_all(root.join("bin")).unwrap();
    std::fs::create_dir_all(root.join("lib")).unwrap();
    let tool = root.join("bin/mycc");
    std::fs::write(&tool, "#!/bin/sh\nexec clang \"$@\"\n").unwrap();
    std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::write(root.join("lib/runtime.a"), vec![7u8; 5000]).unwrap();
    format!(
        "\n[toolchains.wrapped]\ninstall = {{ preinstalled = {{}} }}\ntools.mycc = {{ version = [\"--version\"] }}\n{}",
        cell_testkit::snippets::c_row("w-O2", "wrapped", "mycc -O2", "mycc", &["-O2"])
    )
}

fn dpkg_knows_clang() -> bool {
    std::process::Command::new("dpkg-query")
        .args(["-W", "-f", "${db:Status-Abbrev}", "clang"])
        .output()
        .is_ok_and(|o| o.status.success() && o.stdout.starts_with(b"ii"))
}

#[test]
fn build_reps_builds_every_row_twice_and_records_sizes_and_installs() {
    let tmp = tempfile::tempdir().unwrap();
    let tc_root = tmp.path().join("wrapped-toolchain");
    let extra = wrapped_toolchain(&tc_root);
    let root = project(tmp.path(), &format!("{VERSIONS}BUILD_REPS=2\n"), &extra);
    let out = tmp.path().join("job");
    let path = format!(
        "{}:{}",
        tc_root.join("bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    cell()
        .env("PATH", path)
        .args(["run", "--cell", "local", "--toolchain", "wrapped"])
        .arg("--root")
        .arg(&root)
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    let results = read_json(&out.join("results.json"));
    assert_valid("results", &results);
    assert_valid("facts", &read_json(&out.join("facts.json")));
    for row in ["c-fast", "c-slow", "w-O2"] {
        let b = &results["rows"][row]["build"];
        let runs: Vec<f64> = b["compile_runs_s"]
            .as_array()
            .unwrap_or_else(|| panic!("{row}: {b}"))
            .iter()
            .map(|s| s.as_f64().unwrap())
            .collect();
        assert_eq!(runs.len(), 2, "{row}: two builds");
        let median = b["compile_s"].as_f64().unwrap();
        assert!(
            (median - f64::midpoint(runs[0], runs[1])).abs() < 1e-6,
            "{row}: {median} is not the median of {runs:?}"
        );
        assert!(b["reproducible"].is_boolean(), "{row}: {b}");
        let (text, binary) = (
            b["text_bytes"]
                .as_u64()
                .unwrap_or_else(|| panic!("{row}: {b}")),
            b["binary_bytes"].as_u64().unwrap(),
        );
        assert!(
            text > 0 && text < binary,
            "{row}: text {text}, binary {binary}"
        );
    }
    // The control is a copy: no builds of its own, its reference's code section.
    let control = &results["rows"]["control"]["build"];
    assert!(control.get("compile_runs_s").is_none());
    assert_eq!(
        control["text_bytes"],
        results["rows"]["c-fast"]["build"]["text_bytes"]
    );

    // The directory toolchain: every file under its root, the wrapper and the library.
    let wrapped = &results["installed"]["wrapped"];
    let expected = std::fs::metadata(tc_root.join("bin/mycc")).unwrap().len() + 5000;
    assert_eq!(wrapped["method"], "tree", "{wrapped}");
    assert_eq!(wrapped["bytes"].as_u64(), Some(expected), "{wrapped}");
    let measured_root = std::fs::canonicalize(&tc_root).unwrap();
    assert_eq!(wrapped["root"], measured_root.display().to_string());
    // The reference's apt package: dpkg's figure of clang and what it pulled in.
    let clang = &results["installed"]["clang"];
    if dpkg_knows_clang() {
        assert_eq!(clang["method"], "dpkg", "{clang}");
        assert!(clang["bytes"].as_u64().unwrap() > 1 << 20, "{clang}");
        let packages = clang["packages"].as_u64().unwrap();
        assert!(packages > 1, "a metapackage and its compiler: {clang}");
        assert!(
            clang["how"].as_str().unwrap().starts_with(&format!(
                "dpkg Installed-Size of {packages} packages (clang"
            )),
            "{clang}"
        );
    } else {
        println!("not checked: dpkg has no clang package here; clang measured as {clang}");
    }
    assert_eq!(
        read_json(&out.join("facts.json"))["installed"],
        results["installed"]
    );

    let md = std::fs::read_to_string(out.join("RESULTS.md")).unwrap();
    assert!(md.contains("## Footprint"), "{md}");
    let line = md
        .lines()
        .find(|l| l.starts_with("| w-O2 | wrapped | wrapped | "))
        .unwrap_or_else(|| panic!("no footprint line of w-O2:\n{md}"));
    let b = &results["rows"]["w-O2"]["build"];
    let figures = format!("| 2 | {} | {} |", b["binary_bytes"], b["text_bytes"]);
    assert!(line.contains(&figures), "{line} lacks {figures}");
    // The toolchain's installed size, and how it was measured.
    assert!(
        md.lines()
            .any(|l| l.starts_with("| wrapped | wrapped | ") && l.contains("| tree | files under ")),
        "{md}"
    );
}

#[test]
fn build_reps_of_zero_is_refused_naming_its_line() {
    let tmp = tempfile::tempdir().unwrap();
    let root = project(tmp.path(), &format!("{VERSIONS}BUILD_REPS=0\n"), "");
    let line = VERSIONS.lines().count() + 1;
    cell()
        .args(["run", "--cell", "local", "--toolchain", "clang"])
        .arg("--root")
        .arg(&root)
        .arg("--out")
        .arg(tmp.path().join("job"))
        .assert()
        .code(2)
        .stderr(predicates::str::contains(format!(
            "versions.env:{line}: BUILD_REPS=0 allows nothing"
        )));
}
