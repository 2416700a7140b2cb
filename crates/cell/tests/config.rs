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

/// A `[http]` table with one server of the tiny project's toolchain.
fn http(server: &str) -> String {
    format!(
        "[http]\nsource = \"bench/workload\"\n[http.servers.s]\ntoolchain = \"clang\"\nsource = \"c\"\n{server}\n"
    )
}

#[test]
fn http_server_errors_name_the_field() {
    for (server, msg) in [
        (
            "run = [\"x\"]\nport = 18400",
            "http.servers.s.run: the run never names {port}",
        ),
        (
            "run = [\"x\", \"{port}\"]\nport = 80",
            "http.servers.s.port: 80: use a port of 1024 or above",
        ),
        (
            "run = [\"{tool:gcc}\", \"{port}\"]\nport = 18400",
            "{tool:gcc} is not a tool of toolchain `clang`",
        ),
        (
            "run = [\"x\", \"{port}\"]\nport = 18400\nexpect = { status = 999 }",
            "http.servers.s.expect.status: 999: write an HTTP status code",
        ),
        (
            "run = [\"x\", \"{port}\"]\nport = 18400\nhello = 1",
            "unknown field `hello`",
        ),
    ] {
        run_with(VERSIONS, &http(server))
            .code(2)
            .stderr(predicate::str::contains(msg));
    }
    run_with(
        VERSIONS,
        &format!(
            "{}[http.servers.t]\ntoolchain = \"clang\"\nsource = \"c\"\nrun = [\"y\", \"{{port}}\"]\nport = 18400\n",
            http("run = [\"x\", \"{port}\"]\nport = 18400")
        ),
    )
    .code(2)
    .stderr(predicate::str::contains(
        "18400 is also the port of server `s`",
    ));
}

#[test]
fn http_and_soak_settings_are_checked() {
    let ok = http("run = [\"x\", \"{port}\"]\nport = 18400");
    run_with(
        VERSIONS,
        &ok.replace("[http]\n", "[http]\ntools = [\"ab\"]\n"),
    )
    .code(2)
    .stderr(predicate::str::contains(
        "http.tools[0]: `ab` is not a load generator cell drives: write wrk, oha",
    ));
    run_with(VERSIONS, &format!("{ok}[soak]\nservers = [\"nope\"]\n"))
        .code(2)
        .stderr(predicate::str::contains(
            "soak.servers[0]: unknown server `nope`: [http.servers] has s",
        ));
    run_with(
        VERSIONS,
        &format!("{ok}[soak]\nduration = 60\nwindow_start = 60\n"),
    )
    .code(2)
    .stderr(predicate::str::contains("soak.window_start: 60"));
    run_with(VERSIONS, "[soak]\nrate = 10\n")
        .code(2)
        .stderr(predicate::str::contains(
            "the soak suite soaks the servers of [http]",
        ));
    run_with(&format!("{VERSIONS}HTTP_TOLERANCE=lots\n"), "")
        .code(2)
        .stderr(predicate::str::contains(
            "versions.env:8: HTTP_TOLERANCE=lots is not a number",
        ));
}

#[test]
fn a_port_in_a_workload_row_is_refused() {
    run_with(
        VERSIONS,
        "[rows.p]\ntoolchain = \"clang\"\nlabel = \"p\"\nsource = \"c\"\nbuild = [\"{tool:clang}\", \"-o\", \"{out}\", \"{src}/main.c\"]\nrun = [\"{bin}\", \"{phase}\", \"{port}\"]\n",
    )
    .code(2)
    .stderr(predicate::str::contains(
        "{port} belongs to servers of [http], not workload rows",
    ));
}
