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
        &ok.replace("[http]\n", "[http]\ntools = [\"siege\"]\n"),
    )
    .code(2)
    .stderr(predicate::str::contains(
        "http.tools[0]: `siege` is not a load generator cell drives: write wrk, oha, ab",
    ));
    for (extra, msg) in [
        (
            "[[http.workloads]]\nname = \"a\"\npath = \"/\"\nexpect = { body = \"x\", json = 1 }\n",
            "http.workloads[0].expect: both `body` and `json`",
        ),
        (
            "[[http.workloads]]\nname = \"a\"\nmethod = \"get\"\npath = \"/\"\nexpect = {}\n",
            "http.workloads[0].method: `get`: write an HTTP method in capitals",
        ),
        (
            "[[http.workloads]]\nname = \"a\"\npath = \"no slash\"\nexpect = {}\n",
            "http.workloads[0].path: `no slash`",
        ),
        (
            "[[http.shapes]]\nname = \"k\"\nconnections = 0\nkeep_alive = true\n",
            "http.shapes[0].connections: 0",
        ),
        (
            "[http.default]\nshapes = [\"nope\"]\n",
            "http.default.shapes[0]: `nope` is not one of keep-alive",
        ),
    ] {
        run_with(VERSIONS, &format!("{ok}{extra}"))
            .code(2)
            .stderr(predicate::str::contains(msg));
    }
    run_with(
        VERSIONS,
        &ok.replace("[http]\n", "[http]\nmode = \"warm\"\n"),
    )
    .code(2)
    .stderr(predicate::str::contains(
        "http.mode: `warm`: write fresh, same-process or sustained",
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
    for (cpus, msg) in [
        (
            "{ server = [1] }",
            "http.cpus.load: missing: write both http.cpus.server and http.cpus.load, or neither",
        ),
        (
            "{ server = [1, 2], load = [0, 2] }",
            "http.cpus.load: CPU 2 is also in http.cpus.server",
        ),
        ("{ server = [], load = [0] }", "http.cpus.server: empty"),
        (
            "{ server = [1, 1], load = [0] }",
            "http.cpus.server: CPU 1 is listed twice",
        ),
        (
            "{ server = [1], load = [0], other = [2] }",
            "unknown field `other`",
        ),
    ] {
        run_with(
            VERSIONS,
            &ok.replace("[http]\n", &format!("[http]\ncpus = {cpus}\n")),
        )
        .code(2)
        .stderr(predicate::str::contains(msg));
    }
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

// --- Issue 12, item 8: nothing from outside can rewrite the record. ---

const WORKFLOW: &str = ".github/workflows/cell.yml";

/// A copy of this repository's config (its source dirs created), `versions.env` and
/// `cell/cell.toml` passed through `env` and `toml`.
fn repo_copy(
    dir: &std::path::Path,
    env: impl Fn(String) -> String,
    toml: impl Fn(String) -> String,
) -> std::path::PathBuf {
    let root = dir.join("proj");
    std::fs::create_dir_all(root.join("cell")).unwrap();
    let repo = common::repo_root();
    let text = std::fs::read_to_string(repo.join("cell/cell.toml")).unwrap();
    for line in text.lines() {
        if let Some(src) = line
            .strip_prefix("source = \"")
            .and_then(|s| s.strip_suffix('"'))
        {
            std::fs::create_dir_all(root.join("bench/workload").join(src)).unwrap();
            std::fs::create_dir_all(root.join("bench/http").join(src)).unwrap();
        }
    }
    let versions = std::fs::read_to_string(repo.join("versions.env")).unwrap();
    std::fs::write(root.join("versions.env"), env(versions)).unwrap();
    std::fs::write(root.join("cell/cell.toml"), toml(text)).unwrap();
    root
}

/// The 1-based line of `versions.env` that starts with `prefix`.
fn line_of(prefix: &str) -> usize {
    let text = std::fs::read_to_string(common::repo_root().join("versions.env")).unwrap();
    text.lines().position(|l| l.starts_with(prefix)).unwrap() + 1
}

/// `cell plan` on the edited copy exits 2 with `msg` on stderr and writes no workflow.
fn plan_refuses(env: impl Fn(String) -> String, toml: impl Fn(String) -> String, msg: &str) {
    let tmp = tempfile::tempdir().unwrap();
    let root = repo_copy(tmp.path(), env, toml);
    cell()
        .arg("plan")
        .current_dir(&root)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(msg));
    assert!(
        !root.join(WORKFLOW).exists(),
        "a refused config must not write a workflow"
    );
}

/// `cell plan` on the edited copy succeeds and writes what it writes for the repository.
fn plan_writes_the_committed_workflow(
    env: impl Fn(String) -> String,
    toml: impl Fn(String) -> String,
) {
    let tmp = tempfile::tempdir().unwrap();
    let root = repo_copy(tmp.path(), env, toml);
    cell().arg("plan").current_dir(&root).assert().success();
    assert_eq!(
        std::fs::read(root.join(WORKFLOW)).unwrap(),
        std::fs::read(common::repo_root().join(WORKFLOW)).unwrap()
    );
}

fn same(s: String) -> String {
    s
}

/// One `cell.toml` string replaced, once.
fn swap(from: &'static str, to: &'static str) -> impl Fn(String) -> String {
    move |s: String| {
        assert!(s.contains(from), "cell.toml has no {from}");
        s.replacen(from, to, 1)
    }
}

/// One `versions.env` line replaced.
fn set(key: &'static str, line: &'static str) -> impl Fn(String) -> String {
    move |s: String| {
        s.lines()
            .map(|l| {
                if l.starts_with(&format!("{key}=")) {
                    line.to_owned()
                } else {
                    l.to_owned()
                }
            })
            .collect::<Vec<_>>()
            .join("\n")
            + "\n"
    }
}

/// CRLF line endings used to pass the parser (`str::lines` drops the CR) and then break `sh`,
/// which keeps the CR in every value it sources.
#[test]
fn a_crlf_versions_env_is_refused_naming_the_line() {
    plan_refuses(
        |s| s.replace('\n', "\r\n"),
        same,
        "versions.env:1: line 1 ends in CR: save the file with LF line endings",
    );
    let go = line_of("GO_VERSION=");
    plan_refuses(
        |s| s.replace("GO_VERSION=1.26.7\n", "GO_VERSION=1.26.7\r\n"),
        same,
        &format!("versions.env:{go}: line {go} ends in CR"),
    );
}

/// A UTF-8 BOM was reported as part of the first key; it is stripped now.
#[test]
fn a_bom_before_versions_env_is_stripped() {
    plan_writes_the_committed_workflow(|s| format!("\u{feff}{s}"), same);
    // One that starts a key, not a file, is still no key.
    plan_refuses(
        |s| s.replace("REPS=11", "REPS=11\n\u{feff}DROP2=1"),
        same,
        "is not a key",
    );
}

/// The same BOM at the head of cell/cell.toml.
#[test]
fn a_bom_before_cell_toml_is_stripped() {
    plan_writes_the_committed_workflow(same, |s| format!("\u{feff}{s}"));
}

/// `GO_VERSION=` was accepted and wrote `go-version: ''` into the workflow.
#[test]
fn an_empty_pin_is_refused_naming_the_key_and_line() {
    let go = line_of("GO_VERSION=");
    plan_refuses(
        set("GO_VERSION", "GO_VERSION="),
        same,
        &format!("versions.env:{go}: GO_VERSION is empty: write its value after `=`"),
    );
    let zig = line_of("ZIG_SHA256_AARCH64=");
    plan_refuses(
        set("ZIG_SHA256_AARCH64", "ZIG_SHA256_AARCH64="),
        same,
        &format!("versions.env:{zig}: ZIG_SHA256_AARCH64 is empty"),
    );
}

/// An empty threshold is refused by name before it is parsed as a number.
#[test]
fn an_empty_threshold_is_refused_naming_the_key_and_line() {
    let line = line_of("TOLERANCE=");
    plan_refuses(
        set("TOLERANCE", "TOLERANCE="),
        same,
        &format!("versions.env:{line}: TOLERANCE is empty"),
    );
}

/// An apt package was written into `env:` and `name:` as it stood.
#[test]
fn an_expression_in_an_apt_package_is_refused_naming_the_field() {
    plan_refuses(
        same,
        swap(
            "package = \"clang\"",
            "package = \"clang ${{ secrets.GITHUB_TOKEN }}\"",
        ),
        "toolchains.clang.install.apt.package: `clang ${{ secrets.GITHUB_TOKEN }}` holds `${{`",
    );
}

/// Debian policy: lower-case letters, digits, `+`, `-`, `.`; at least two characters.
#[test]
fn an_apt_package_outside_debian_policy_is_refused_naming_the_field() {
    plan_refuses(
        same,
        swap("package = \"gcc\"", "package = \"gcc;id\""),
        "toolchains.gcc.install.apt.package: `gcc;id` is not a Debian package name",
    );
}

/// A setup action's input name became a key of `with:`.
#[test]
fn an_expression_in_a_setup_input_is_refused_naming_the_field() {
    plan_refuses(
        same,
        swap(
            "input = \"go-version\"",
            "input = \"${{ github.event.head_commit.message }}\"",
        ),
        "toolchains.go.install.setup.input: `${{ github.event.head_commit.message }}` holds `${{`",
    );
}

/// The action of a setup install is `owner/repo`.
#[test]
fn a_setup_action_that_is_not_owner_repo_is_refused_naming_the_field() {
    plan_refuses(
        same,
        swap(
            "action = \"actions/setup-go\"",
            "action = \"actions/setup-go@${{ x }}\"",
        ),
        "toolchains.go.install.setup.action: `actions/setup-go@${{ x }}` holds `${{`",
    );
}

/// A version from versions.env that sh takes literally but is no version (`,`, a leading `-`).
#[test]
fn a_pin_that_is_not_a_version_is_refused_naming_the_line() {
    let go = line_of("GO_VERSION=");
    plan_refuses(
        set("GO_VERSION", "GO_VERSION=--help"),
        same,
        &format!("versions.env:{go}: GO_VERSION: `--help` is not a version"),
    );
    let oha = line_of("OHA_VERSION=");
    plan_refuses(
        set("OHA_VERSION", "OHA_VERSION=1.16.0,2"),
        same,
        &format!("versions.env:{oha}: OHA_VERSION: `1.16.0,2` is not a version"),
    );
}

/// A `$` never reaches a value: sh would expand it, GitHub would evaluate `${{`.
#[test]
fn an_expression_in_versions_env_is_refused_naming_the_line() {
    let rust = line_of("RUST_VERSION=");
    plan_refuses(
        set("RUST_VERSION", "RUST_VERSION=${{github.token}}"),
        same,
        &format!("versions.env:{rust}: RUST_VERSION: the value has `$`"),
    );
}

/// A tarball URL is http(s) and URL-safe; a digest is 64 hex digits, on every architecture.
#[test]
fn a_tarball_url_or_digest_of_the_wrong_kind_is_refused_naming_the_line() {
    let url = line_of("ZIG_URL_AARCH64=");
    plan_refuses(
        set("ZIG_URL_AARCH64", "ZIG_URL_AARCH64=file:///etc/passwd"),
        same,
        &format!(
            "versions.env:{url}: ZIG_URL_AARCH64: `file:///etc/passwd` is not an http:// or https:// URL"
        ),
    );
    let sha = line_of("ZIG_SHA256_X86_64=");
    plan_refuses(
        set("ZIG_SHA256_X86_64", "ZIG_SHA256_X86_64=abc"),
        same,
        &format!("versions.env:{sha}: ZIG_SHA256_X86_64: "),
    );
}

/// The triggers: cron lines, branches and paths of the push filter.
#[test]
fn an_expression_in_a_workflow_trigger_is_refused_naming_the_field() {
    plan_refuses(
        same,
        swap("\"cell/**\"", "\"cell/${{ github.token }}\""),
        "workflow.paths[1]: `cell/${{ github.token }}` holds `${{`",
    );
    plan_refuses(
        same,
        swap("branches = [\"main\"]", "branches = [\"main\", \"a b\"]"),
        "workflow.branches[1]: `a b` is not a pattern of letters",
    );
    plan_refuses(
        same,
        swap("\"17 4 * * 1\"", "\"17 4 * * ${{ x }}\""),
        "workflow.schedule[0]: `17 4 * * ${{ x }}` holds `${{`",
    );
}

/// `cell run` and `cell local` resolve the same plan, so they refuse what `cell plan` does.
#[test]
fn run_and_local_refuse_what_plan_refuses() {
    let tmp = tempfile::tempdir().unwrap();
    let root = repo_copy(
        tmp.path(),
        same,
        swap("package = \"clang\"", "package = \"${{ github.token }}\""),
    );
    let out = tmp.path().join("out");
    for args in [
        &["run", "--cell", "local", "--toolchain", "clang", "--out"][..],
        &["local", "--out"][..],
    ] {
        cell()
            .args(args)
            .arg(&out)
            .arg("--root")
            .arg(&root)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(
                "toolchains.clang.install.apt.package: `${{ github.token }}` holds `${{`",
            ));
        assert!(!out.exists(), "{args:?} wrote {}", out.display());
    }
}

/// `--date notadate` wrote `results/notadate-<id>/`, which gate and report never list.
#[test]
fn a_collect_date_that_is_not_a_calendar_day_is_refused_naming_the_flag() {
    let tmp = tempfile::tempdir().unwrap();
    let from = tmp.path().join("artifacts");
    std::fs::create_dir_all(&from).unwrap();
    let results = tmp.path().join("results");
    for date in [
        "notadate",
        "2026-02-30",
        "2026-13-01",
        "26-01-01",
        "2026-01-01x",
    ] {
        cell()
            .args(["collect", "7", "--date", date, "--from-dir"])
            .arg(&from)
            .arg("--results")
            .arg(&results)
            .assert()
            .code(2)
            .stderr(
                predicate::str::contains("--date").and(predicate::str::contains(
                    "write a calendar date as YYYY-MM-DD",
                )),
            );
        assert!(
            !results.exists(),
            "--date {date} wrote {}",
            results.display()
        );
    }
}

/// Regression: a NUL, an escape sequence or a bidi override inside any cell.toml string was
/// accepted (a NUL then failed the build much later; an override shows one command and runs
/// another). Refused naming the field.
#[test]
fn an_invisible_character_in_cell_toml_is_refused_naming_the_field() {
    for (hostile, code) in [
        ("\\u0000", "U+0000"),
        ("\\u001b[31m", "U+001B"),
        ("\\u202e", "U+202E"),
    ] {
        plan_refuses(
            same,
            move |s: String| s.replacen("\"-O2\"", &format!("\"-O2{hostile}\""), 1),
            &format!("rows.c-O2.build[1]: holds the invisible character {code}"),
        );
    }
}

/// A row that sets its own verdict clock.
fn clocked_row(clock: &str) -> String {
    format!(
        "\n[rows.c-clocked]\ntoolchain = \"clang\"\nlabel = \"clang -O1\"\nsource = \"c\"\nbuild = [\"{{tool:clang}}\", \"-O1\", \"-o\", \"{{out}}\", \"{{src}}/main.c\"]\nrun = [\"{{bin}}\", \"{{phase}}\"]\nclock = \"{clock}\"\n"
    )
}

/// Regression: clock names were parsed in three places that disagreed — `CLOCK=user` in
/// versions.env was accepted, a row's `clock = "user"` refused. Every metric now goes through
/// one parser: written in versions.env and in a row, recorded by the job, and read back from
/// its file as the gate reads it, it is the same metric.
#[test]
fn every_clock_round_trips_through_versions_env_a_row_and_the_job_file() {
    for clock in cell_schema::Clock::ALL {
        let tmp = tempfile::tempdir().unwrap();
        let versions = format!("{VERSIONS}CLOCK={clock}\n");
        let root = project(tmp.path(), &versions, &clocked_row(clock.name()));
        let timings = cell_testkit::scripted::Timings::new(1)
            .row("c-fast", 0.04)
            .row("c-slow", 0.1)
            .row("c-clocked", 0.05)
            .write(&tmp.path().join("timings.json"));
        let out = tmp.path().join("job");
        cell()
            .args(["run", "-q", "--cell", "local", "--toolchain", "clang"])
            .arg("--scripted-timings")
            .arg(&timings)
            .arg("--root")
            .arg(&root)
            .arg("--out")
            .arg(&out)
            .assert()
            .success();
        let text = std::fs::read_to_string(out.join("results.json")).unwrap();
        let cell_schema::ResultsFile::Job(job) = cell_schema::read_results(&text).unwrap() else {
            panic!("{clock}: not a job file");
        };
        assert_eq!(
            job.protocol.default_clock, clock,
            "versions.env CLOCK={clock}"
        );
        let row = &job.rows[&cell_schema::RowName::from("c-clocked")];
        assert_eq!(row.verdict_clock, clock, "a row's clock = \"{clock}\"");
        // What the job judged on it, it wrote: no figure is a stand-in for another.
        for pr in row.phases.values() {
            assert!(pr.ratio.as_ref().unwrap().on(clock).is_some(), "{clock}");
            assert!(pr.stats.as_ref().unwrap().on(clock).is_some(), "{clock}");
        }
        // RESULTS.md reads alike on every clock: the judged clock's ratio is the `ratio`
        // column (`clock` names it, `resolves` its interval), beside the cpu and wall ratios
        // every file holds.
        let md = std::fs::read_to_string(out.join("RESULTS.md")).unwrap();
        let heads: Vec<&str> = md
            .lines()
            .filter(|l| l.starts_with("| row | job | clock"))
            .collect();
        assert!(!heads.is_empty(), "{clock}: {md}");
        for h in heads {
            assert_eq!(
                h,
                "| row | job | clock | median s | ratio | CI | resolves | cpu ratio | wall ratio | n | stopped | answer |",
                "{clock}"
            );
        }
    }
}

/// The other half of the regression above: a name that is no clock is refused alike in
/// versions.env and in a row, each naming where it stands and the names there are.
#[test]
fn an_unknown_clock_is_refused_alike_in_versions_env_and_a_row() {
    run_with(&format!("{VERSIONS}CLOCK=fast\n"), "")
        .code(2)
        .stderr(predicate::str::contains(
            "versions.env:8: CLOCK=fast: write cpu, wall, user or auto",
        ));
    run_with(VERSIONS, &clocked_row("fast")).code(2).stderr(
        predicate::str::contains("rows.c-clocked.clock")
            .and(predicate::str::contains("`fast`: write cpu, wall or user")),
    );
}
