//! The http suite by concurrency model: the same C handling (`bench/http/c/http.h`) served
//! serially, forked per connection and forked per request, built with the real clang or by
//! the release under test (tcc, packaged and served on loopback), measured under the real wrk.
//!
//! Regressions: a server built by the release under test recorded no release digest in its
//! suite job, so the gate could not tell which bytes built it; a server that did not serve a
//! workload of the session disappeared from the tables instead of being listed; a serial
//! server under 64 connections timed out as if it had failed.

mod common;

use std::path::{Path, PathBuf};

use cell_testkit::http::Server;
use common::tcc::{ASSET, hex, release, tarball};
use common::{VERSIONS, cell, project, read_json, repo_root};
use serde_json::Value;

const CELL: &str = "linux-x86_64-local";

/// Two workloads: the plain one and the combined one (a routed id and a bound body).
const WORKLOADS: &str = r#"
[[http.shapes]]
name = "keep-alive"
connections = 8
keep_alive = true

[[http.workloads]]
name = "plaintext"
path = "/"
expect = { status = 200, headers = { content-type = "text/plain" }, body = "hello, world\n" }

[[http.workloads]]
name = "minimal"
method = "POST"
path = "/minimal/users/42"
headers = { content-type = "application/json" }
body = '{"name":"Alice","age":28,"adult":true}'
expect = { status = 200, headers = { content-type = "application/json" }, json = { id = 42, name = "Alice", age = 28, adult = true } }
"#;

/// `[http]` over the repository's servers: wrk only, one short run each.
fn http_toml(servers: &str) -> String {
    format!(
        r#"
[http]
source = "{src}"
tools = ["wrk"]
duration = 1
warmup = 0
runs = 1
startup_timeout = 5
stop_grace = 2
drain_timeout = 1
{WORKLOADS}
{servers}
"#,
        src = repo_root().join("bench/http").display()
    )
}

/// A server of `bench/http/c-models` built by `toolchain` (`tool` its compiler) as `model`.
fn c_model(name: &str, toolchain: &str, define: &str, port: u16, extra: &str) -> String {
    format!(
        r#"
[http.servers.{name}]
toolchain = "{toolchain}"
source = "c-models"
build = ["{{tool:{toolchain}}}", "-O2", "-D{define}", "-o", "{{out}}", "{{src}}/main.c"]
run = ["{{bin}}", "{{port}}"]
port = {port}
{extra}
"#
    )
}

/// The tiny project with tcc, served by `server` and pinned to `pin`, the release under test
/// building the fork-per-connection server on `port`.
fn tcc_project(dir: &Path, server: &Server, pin: &str, port: u16) -> PathBuf {
    let fork_conn = c_model(
        "c-fork-conn",
        "tcc",
        "MODEL_FORK_CONN",
        port,
        "model = \"process-per-connection\"",
    );
    let toml = format!(
        "{}{}",
        common::tcc_subject_toml(&server.base()),
        http_toml(&fork_conn)
    );
    project(dir, &common::tcc::versions(pin), &toml)
}

fn local(root: &Path, out: &Path, cache: &Path, args: &[&str]) -> std::process::Output {
    cell()
        .env("CELL_CACHE", cache)
        .arg("--root")
        .arg(root)
        .args(["local", "--suite", "http", "--seed", "1", "--out"])
        .arg(out)
        .args(args)
        .output()
        .unwrap()
}

fn text(o: &std::process::Output) -> String {
    format!(
        "{}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// The merged cell of the one local run under `out`.
fn cell_dir(out: &Path) -> PathBuf {
    cell_testkit::local_run_dir(out).join(CELL)
}

fn gate(root: &Path, run: &Path) -> std::process::Output {
    cell()
        .env_remove("GITHUB_ACTIONS")
        .env_remove("GITHUB_STEP_SUMMARY")
        .arg("--root")
        .arg(root)
        .arg("gate")
        .arg(run)
        .output()
        .unwrap()
}

/// Rewrites the merged results of `out`'s run with `edit` applied to server `name`.
fn forge(out: &Path, name: &str, edit: impl Fn(&mut Value)) {
    let file = cell_dir(out).join("results.json");
    let mut v = read_json(&file);
    edit(&mut v["http"][name]);
    std::fs::write(&file, serde_json::to_string_pretty(&v).unwrap()).unwrap();
}

#[test]
#[cfg_attr(
    not(all(target_os = "linux", target_arch = "x86_64")),
    ignore = "the packaged tcc is the x86-64 Linux one"
)]
fn a_server_built_by_the_release_under_test_records_its_digest_and_the_gate_checks_it() {
    let dir = tempfile::tempdir().unwrap();
    let tar = tarball();
    let server = release(tar.clone(), &tar);
    let root = tcc_project(dir.path(), &server, &hex(&tar), 18_431);
    let (out, cache) = (dir.path().join("out"), dir.path().join("cache"));
    let o = local(&root, &out, &cache, &["--servers", "c-fork-conn"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));

    // The suite job itself records the release, as a workload job does.
    let job = read_json(
        &cell_testkit::first_dir(&cell_testkit::first_dir(&out.join("jobs"))).join("results.json"),
    );
    assert_eq!(job["job"], "http-c-fork-conn");
    assert_eq!(
        job["servers"]["c-fork-conn"]["release"]["sha256"],
        hex(&tar)
    );
    let merged = read_json(&cell_dir(&out).join("results.json"));
    let s = &merged["http"]["c-fork-conn"];
    assert_eq!(s["model"], "process-per-connection");
    let r = &s["release"];
    assert_eq!(r["asset"], ASSET);
    assert_eq!(r["sha256"], hex(&tar), "the release's digest, as verified");
    assert_eq!(r["verified"], "both", "the pin and the published checksum");
    assert_eq!(r["toolchain"], "tcc");
    let tcc = std::fs::read("/usr/bin/tcc").unwrap();
    assert_eq!(r["tools"]["tcc"]["sha256"], hex(&tcc));
    // Built by the unpacked release in the cache, never by a tcc on PATH.
    let compiler = s["build"]["argv"][0].as_str().unwrap();
    assert!(
        compiler.starts_with(cache.to_str().unwrap()),
        "{compiler} is not the cached release"
    );
    for w in ["plaintext", "minimal"] {
        assert_eq!(s["workloads"][w]["check"], "ok", "{w}: {s}");
        let t = &s["workloads"][w]["shapes"]["keep-alive"]["wrk"];
        assert!(t["rps"].as_f64().unwrap() > 0.0, "{w}: {t}");
        // A process per connection: 8 children share the parent's pages, which RSS counts
        // once per process and PSS once.
        let (rss, pss) = (
            t["peak_rss_kib"].as_u64().unwrap(),
            t["peak_pss_kib"].as_u64().unwrap(),
        );
        assert!(pss > 0 && pss < rss, "{w}: PSS {pss} KiB, RSS {rss} KiB");
    }
    let md = std::fs::read_to_string(cell_dir(&out).join("RESULTS.md")).unwrap();
    let note = md
        .lines()
        .find(|l| l.contains("built by the release under test 0.9.27"))
        .unwrap_or_else(|| panic!("no line on the release:\n{md}"));
    assert!(
        note.contains(&hex(&tar))
            && note.ends_with("verified by the pin and the published checksum)"),
        "{note}"
    );

    // The gate holds the server's record to the pin: another digest, or none, trips it.
    let run = cell_testkit::local_run_dir(&out);
    assert_eq!(gate(&root, &run).status.code(), Some(0));
    forge(&out, "c-fork-conn", |s| {
        s["release"]["sha256"] = Value::from("0".repeat(64));
    });
    let o = gate(&root, &run);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("but versions.env pins"), "{}", text(&o));
    forge(&out, "c-fork-conn", |s| {
        s.as_object_mut().unwrap().remove("release");
    });
    let o = gate(&root, &run);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o).contains("built server c-fork-conn with tcc but recorded no release under test"),
        "{}",
        text(&o)
    );
}

#[test]
#[cfg_attr(
    not(all(target_os = "linux", target_arch = "x86_64")),
    ignore = "the packaged tcc is the x86-64 Linux one"
)]
fn a_changed_byte_in_the_release_fails_its_server_with_nothing_built() {
    let dir = tempfile::tempdir().unwrap();
    let tar = tarball();
    let mut other = tar.clone();
    let last = other.len() - 1;
    other[last] ^= 1;
    let server = release(other, &tar);
    let root = tcc_project(dir.path(), &server, &hex(&tar), 18_432);
    let (out, cache) = (dir.path().join("out"), dir.path().join("cache"));
    let o = local(&root, &out, &cache, &["-q", "--servers", "c-fork-conn"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let merged = read_json(&cell_dir(&out).join("results.json"));
    let s = &merged["http"]["c-fork-conn"];
    let e = s["error"].as_str().unwrap();
    assert!(e.starts_with("the release under test tcc:"), "{e}");
    assert!(s["build"].is_null() && s["release"].is_null(), "{s}");
    assert!(s["workloads"].is_null(), "nothing checked or timed: {s}");
}

/// clang's servers: the epoll one told it serves only `plaintext`, the serial one and the
/// fork-per-request one.
fn clang_models() -> String {
    let c = r#"
[http.servers.c-old]
toolchain = "clang"
source = "c"
build = ["{tool:clang}", "-O2", "-o", "{out}", "{src}/main.c"]
run = ["{bin}", "{port}"]
port = 18441
model = "event-loop"
workloads = ["plaintext"]
"#;
    let serial = c_model(
        "c-serial",
        "clang",
        "MODEL_SERIAL",
        18_442,
        "model = \"serial\"",
    );
    let fork_req = c_model(
        "c-fork-req",
        "clang",
        "MODEL_FORK_REQ",
        18_443,
        "model = \"process-per-request\"\nkeep_alive = false",
    );
    format!("{c}{serial}{fork_req}")
}

#[test]
fn a_serial_server_is_left_out_of_many_connections_and_a_workload_not_served_is_listed() {
    let dir = tempfile::tempdir().unwrap();
    let root = project(dir.path(), VERSIONS, &http_toml(&clang_models()));
    let (out, cache) = (dir.path().join("out"), dir.path().join("cache"));
    let o = local(&root, &out, &cache, &["-q"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let merged = read_json(&cell_dir(&out).join("results.json"));
    let http = &merged["http"];

    let serial = &http["c-serial"];
    assert_eq!(serial["model"], "serial");
    let why = serial["shapes_left_out"]["keep-alive"].as_str().unwrap();
    assert!(
        why.contains("8 connections: a serial server takes one at a time"),
        "{why}"
    );
    assert!(
        serial["error"].is_null() && serial["workloads"].is_null(),
        "{serial}"
    );

    let old = &http["c-old"];
    assert_eq!(old["not_served"], serde_json::json!(["minimal"]));
    assert!(old["error"].is_null(), "not serving is not failing: {old}");
    assert!(
        old["workloads"]["plaintext"]["shapes"]["keep-alive"]["wrk"]["rps"].as_f64() > Some(0.0)
    );

    let fork_req = &http["c-fork-req"];
    assert_eq!(fork_req["model"], "process-per-request");
    for w in ["plaintext", "minimal"] {
        assert_eq!(fork_req["workloads"][w]["check"], "ok", "{fork_req}");
    }

    let md = std::fs::read_to_string(cell_dir(&out).join("RESULTS.md")).unwrap();
    for line in [
        "`c-old`: does not serve minimal (not measured, not failed)",
        "`c-serial`: shape keep-alive left out: 8 connections: a serial server takes one at a time",
    ] {
        assert!(md.contains(line), "{line}\n{md}");
    }
    // Rows are grouped by model: the event loop before the process per request.
    let plaintext = &md[md.find("**plaintext**").expect("the plaintext table")..];
    let (a, b) = (
        plaintext.find("| `c-old` |").unwrap(),
        plaintext.find("| `c-fork-req` |").unwrap(),
    );
    assert!(a < b, "{plaintext}");
    let summary = std::fs::read_to_string(out.join("report/summary.csv")).unwrap();
    assert!(
        summary
            .lines()
            .any(|l| l.contains(",c-old,event-loop,") && l.ends_with(",not served")),
        "{summary}"
    );
    assert!(
        summary
            .lines()
            .any(|l| l.contains(",c-serial,serial,") && l.contains("left out: 8 connections")),
        "{summary}"
    );

    // What a job says it did not measure is held to the config and the model's rule.
    let run = cell_testkit::local_run_dir(&out);
    assert_eq!(
        gate(&root, &run).status.code(),
        Some(0),
        "{}",
        text(&gate(&root, &run))
    );
    forge(&out, "c-old", |s| {
        s["not_served"] = serde_json::json!(["minimal", "plaintext"]);
    });
    forge(&out, "c-serial", |s| {
        s.as_object_mut().unwrap().remove("shapes_left_out");
    });
    forge(&out, "c-fork-req", |s| {
        s["model"] = Value::from("event-loop");
    });
    let o = gate(&root, &run);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    for failure in [
        "http server c-old (job http-c-old): recorded as not serving [minimal, plaintext], but [minimal] by its config and model",
        "http server c-serial (job http-c-serial): recorded shapes left out [], but [keep-alive] by its config and model",
        "http server c-fork-req (job http-c-fork-req): recorded model event-loop, its config says process-per-request",
    ] {
        assert!(text(&o).contains(failure), "{failure}\n{}", text(&o));
    }

    // One connection: the serial server is measured.
    let out1 = dir.path().join("out1");
    let o = local(
        &root,
        &out1,
        &cache,
        &["-q", "--servers", "c-serial", "--connections", "1"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let merged = read_json(&cell_dir(&out1).join("results.json"));
    let t = &merged["http"]["c-serial"]["workloads"]["minimal"]["shapes"]["keep-alive"]["wrk"];
    assert!(t["rps"].as_f64().unwrap() > 0.0, "{t}");
    assert_eq!(t["errors"], 0);
}

#[test]
fn a_model_that_is_not_one_is_refused_naming_the_field_and_the_models() {
    let dir = tempfile::tempdir().unwrap();
    let bad = clang_models().replace("model = \"serial\"", "model = \"actor\"");
    let root = project(dir.path(), VERSIONS, &http_toml(&bad));
    let o = cell()
        .arg("--root")
        .arg(&root)
        .arg("plan")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let t = text(&o);
    assert!(
        t.contains("http.servers.c-serial.model")
            && t.contains("unknown model `actor`: models are event-loop, thread-per-connection, runtime-managed, process-per-connection, process-per-request, serial"),
        "{t}"
    );
    let unknown = format!(
        "{}\n[http.default]\nservers = [\"c-old\", \"nginx\"]\n",
        http_toml(&clang_models())
    );
    let root = project(&dir.path().join("2"), VERSIONS, &unknown);
    let o = cell()
        .arg("--root")
        .arg(&root)
        .arg("plan")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("http.default.servers[1]") && text(&o).contains("`nginx` is not one of"),
        "{}",
        text(&o)
    );
}
