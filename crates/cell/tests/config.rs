//! Bad configuration: a clear message naming file and line, exit 2, nothing written.

mod common;

use common::{VERSIONS, cell, project};
use predicates::prelude::*;

fn run_with(versions: &str, extra: &str) -> assert_cmd::assert::Assert {
    let tmp = tempfile::tempdir().unwrap();
    let root = project(tmp.path(), versions, extra);
    let out = tmp.path().join("job");
    let a = cell()
        .args(["run", "--cell", "local", "--toolchain", "clang"])
        .arg("--root")
        .arg(&root)
        .arg("--out")
        .arg(&out)
        .assert();
    assert!(!out.exists(), "a bad config must not write a job dir");
    a
}

#[test]
fn duplicate_key_names_file_and_line() {
    run_with(&format!("{VERSIONS}REPS=9\n"), "")
        .code(2)
        .stderr(predicate::str::contains(
            "versions.env:8: REPS is already set on line 1",
        ));
}

#[test]
fn line_without_equals_names_file_and_line() {
    run_with(&format!("# pins\n{VERSIONS}ZIG_VERSION 0.16.0\n"), "")
        .code(2)
        .stderr(predicate::str::contains(
            "versions.env:9: `ZIG_VERSION 0.16.0` has no `=`: write KEY=value",
        ));
}

#[test]
fn reps_not_above_drop_names_file_and_line() {
    run_with(
        "PHASES=mix,fib\nTOOTH_PHASE=mix\nREFERENCE=c-fast\nREPS=2\nDROP=2\n",
        "",
    )
    .code(2)
    .stderr(predicate::str::contains(
        "versions.env:4: REPS=2 with DROP=2 leaves no measured repetition",
    ));
}

#[test]
fn empty_key_and_non_numeric_threshold() {
    run_with(&format!("{VERSIONS}=3\n"), "")
        .code(2)
        .stderr(predicate::str::contains("versions.env:8: empty key"));
    run_with(&format!("{VERSIONS}TOLERANCE=two-percent\n"), "")
        .code(2)
        .stderr(predicate::str::contains(
            "versions.env:8: TOLERANCE=two-percent is not a number",
        ));
}

#[test]
fn a_misspelt_setting_is_an_error_not_a_silent_default() {
    run_with(&format!("{VERSIONS}TOLERENCE=0.5\n"), "")
        .code(2)
        .stderr(predicate::str::contains(
            "versions.env:8: unknown key `TOLERENCE` (did you mean TOLERANCE?)",
        ));
}

#[test]
fn unknown_key_in_cell_toml_is_an_error_with_its_line() {
    run_with(VERSIONS, "[rows.c-typo]\ntoolchain = \"clang\"\nlabel = \"x\"\nsource = \"c\"\nbuild = [\"{out}\"]\nrun = [\"{bin}\", \"{phase}\"]\nflags = \"-O3\"\n")
        .code(2)
        .stderr(predicate::str::contains("cell.toml").and(predicate::str::contains("unknown field `flags`")).and(predicate::str::contains("line")));
}

#[test]
fn row_with_unknown_toolchain_names_the_field() {
    run_with(VERSIONS, "[rows.c-x]\ntoolchain = \"clangg\"\nlabel = \"x\"\nsource = \"c\"\nbuild = [\"{out}\"]\nrun = [\"{bin}\", \"{phase}\"]\n")
        .code(2)
        .stderr(predicate::str::contains("rows.c-x.toolchain: unknown toolchain `clangg`; known: clang").or(predicate::str::contains("rows.c-x.toolchain: unknown toolchain `clangg`: known: clang")));
}

#[test]
fn the_repository_config_loads() {
    cell()
        .args(["run", "--cell", "nowhere", "--toolchain", "clang"])
        .arg("--root")
        .arg(common::repo_root())
        .assert()
        .code(2)
        .stderr(predicate::str::contains("unknown cell"));
}
