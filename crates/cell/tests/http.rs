//! The http and soak suites through the binary: the repository's servers on its four
//! workloads under the real wrk, oha and ab, in both connection shapes and all three modes;
//! servers that answer wrong, never answer or die; and a soak that tells a leak from a flat
//! server. Every request goes to 127.0.0.1.
//!
//! The tests that load every bundled server or soak for minutes are `#[ignore]`d: they are the
//! full lane, which `.ci/run` runs after the README's test command
//! (`cargo test -p cell-bench --test http --test workload --locked -- --ignored`). The rest stay in
//! the contributor's command and cover each tool, shape, mode and failure on one or two
//! servers.

mod common;

use std::path::{Path, PathBuf};

use cell_testkit::snippets::PYTHON;
use common::{VERSIONS, cell, project, read_json, repo_root};

/// A python toolchain and `[http]` whose servers live under `servers` (absolute), with short
/// runs: 1 s measured after 1 s of warm-up.
fn http_toml(servers: &Path, body: &str) -> String {
    format!(
        r#"{PYTHON}
[http]
source = "{servers}"
tools = ["wrk", "oha"]
connections = 16
duration = 1
warmup = 1
runs = 1
startup_timeout = 3
stop_grace = 2
drain_timeout = 1
{body}
"#,
        servers = servers.display()
    )
}

fn c_server(name: &str, port: u16, extra: &str) -> String {
    let src = repo_root().join("bench/http/c");
    format!(
        r#"
[http.servers.{name}]
toolchain = "clang"
source = "{src}"
build = ["{{tool:clang}}", "-O2", "-o", "{{out}}", "{{src}}/main.c"]
run = ["{{bin}}", "{{port}}"{extra}]
port = {port}
"#,
        src = src.display()
    )
}

fn python_server(name: &str, port: u16) -> String {
    format!(
        r#"
[http.servers.{name}]
toolchain = "python"
source = "{name}"
run = ["{{tool:python3}}", "{{src}}/server.py", "{{port}}"]
port = {port}
"#
    )
}

/// A python server script under `<servers>/<name>/server.py`.
fn script(servers: &Path, name: &str, text: &str) {
    let d = servers.join(name);
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(d.join("server.py"), text).unwrap();
}

/// A stdlib server; `{BODY}` is its body, `{LIMIT}` the requests it serves before exiting 3.
const PY: &str = r#"
import http.server, os, socket, sys
served = 0
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def setup(self):
        super().setup()
        self.request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    def do_GET(self):
        global served
        served += 1
        if served > LIMIT:
            os._exit(3)
        body = BODY
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass
http.server.ThreadingHTTPServer.allow_reuse_address = True
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
"#;

fn py(body: &str, limit: u64) -> String {
    PY.replace("BODY", body)
        .replace("LIMIT", &limit.to_string())
}

fn local(root: &Path, out: &Path, args: &[&str]) -> std::process::Output {
    let mut c = cell();
    c.arg("--root")
        .arg(root)
        .args(["local", "--out"])
        .arg(out)
        .args(args);
    c.output().unwrap()
}

/// A server's result of one workload, shape and tool.
fn combo<'a>(
    server: &'a serde_json::Value,
    workload: &str,
    shape: &str,
    tool: &str,
) -> &'a serde_json::Value {
    &server["workloads"][workload]["shapes"][shape][tool]
}

/// The result of `GET /` under one tool of a config without workloads or shapes.
fn plain<'a>(server: &'a serde_json::Value, tool: &str) -> &'a serde_json::Value {
    combo(server, "plaintext", "keep-alive", tool)
}

fn text(o: &std::process::Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// Every job's results.json of a local run, by job name.
fn jobs(out: &Path) -> Vec<(String, serde_json::Value)> {
    let mut found = Vec::new();
    for run in std::fs::read_dir(out.join("jobs")).unwrap() {
        for job in std::fs::read_dir(run.unwrap().path()).unwrap() {
            let p: PathBuf = job.unwrap().path().join("results.json");
            if p.is_file() {
                let v = read_json(&p);
                found.push((v["job"].as_str().unwrap_or_default().to_owned(), v));
            }
        }
    }
    found.sort_by(|a, b| a.0.cmp(&b.0));
    found
}

/// The samples are the record: a suite job computes its figures from the values it writes, so
/// its results.json, read back and recomputed with the configuration it ran with, is itself to
/// the bit: no disagreement, and not even a figure kept within an older cell's rounding.
fn assert_recomputes_to_the_bit(root: &Path, out: &Path) {
    let plan = cell_model::Plan::load(root).unwrap();
    let config = cell_verdict::GateConfig::from_plan(&plan, None, []);
    let jobs = jobs(out);
    assert!(!jobs.is_empty());
    for (name, j) in jobs {
        let file = cell_schema::read_results(&serde_json::to_string(&j).unwrap()).unwrap();
        let (disagree, notes, same) = match file {
            cell_schema::ResultsFile::Http(h) => {
                let r = cell_verdict::recompute::suites::http_job(&h, &config);
                (r.disagreements, r.notes, r.value == *h)
            }
            cell_schema::ResultsFile::Soak(s) => {
                let r = cell_verdict::recompute::suites::soak_job(&s, &config);
                (r.disagreements, r.notes, r.value == *s)
            }
            _ => panic!("{name}: a suite job"),
        };
        assert_eq!((disagree, notes), (Vec::new(), Vec::new()), "{name}");
        assert!(same, "{name}: its figures recompute to themselves");
    }
}

/// Held by every test that runs the repository's own servers: they listen on the ports
/// cell/cell.toml gives them, so two such tests at once would collide.
static REPO_PORTS: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn repo_ports() -> std::sync::MutexGuard<'static, ()> {
    REPO_PORTS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Every server of the repository's cell/cell.toml.
const BUNDLED: [&str; 12] = [
    "axum",
    "c",
    "cs",
    "go",
    "node",
    "node-cluster",
    "php",
    "puma",
    "python",
    "ruby-webrick",
    "rust",
    "zig",
];

/// One measured run of one second, no warm-up: every combination once, quickly.
const ONE_SHORT_RUN: [&str; 6] = ["--runs", "1", "--duration", "1", "--warmup", "0"];

/// The repository's five workloads.
const FIVE: [&str; 5] = ["plaintext", "json", "route", "post-json", "minimal"];

/// The servers by concurrency model, outside the default session.
const BY_MODEL: [&str; 5] = [
    "c-fork-conn",
    "c-fork-req",
    "c-serial",
    "rust-threads",
    "uvicorn",
];

#[test]
#[ignore = "full lane (`.ci/run`): builds and loads the servers by concurrency model"]
fn the_servers_by_concurrency_model_on_the_five_workloads() {
    let _ports = repo_ports();
    let tmp = tempfile::tempdir().unwrap();
    let five = FIVE.join(",");
    let session = |out: &Path, servers: &str, extra: &[&str]| {
        let mut args = vec!["--suite", "http"];
        args.extend(ONE_SHORT_RUN);
        args.extend(["--servers", servers, "--workloads", &five]);
        args.extend(extra);
        let o = local(&repo_root(), out, &args);
        let (stdout, stderr) = text(&o);
        assert_eq!(o.status.code(), Some(0), "{stdout}\n{stderr}");
        jobs(out)
    };
    // 64 connections kept alive: the serial server is listed as left out, not failed.
    let out = tmp.path().join("many");
    let jobs = session(&out, &BY_MODEL.join(","), &[]);
    assert_eq!(jobs.len(), BY_MODEL.len());
    for (name, j) in &jobs {
        common::assert_valid("results", j);
        let name = name.trim_start_matches("http-");
        let server = &j["servers"][name];
        assert!(server["model"].is_string(), "{name}");
        if name == "c-serial" {
            assert!(
                server["shapes_left_out"]["keep-alive"].is_string(),
                "{server}"
            );
            assert_eq!(j["verdict"]["status"], "ok", "left out is not failed: {j}");
            continue;
        }
        for w in FIVE {
            assert_eq!(server["workloads"][w]["check"], "ok", "{name} {w}");
            let t = combo(server, w, "keep-alive", "wrk");
            assert!(t["rps"].as_f64().unwrap() > 0.0, "{name} {w}: {t}");
            assert_eq!(t["non_2xx"], 0, "{name} {w}");
            assert!(t["peak_pss_kib"].as_u64().unwrap() > 0, "{name} {w}: {t}");
        }
    }
    // The same handling code: a process per request costs a multiple of a process per
    // connection's CPU per request (measured here: about 20×).
    let cpu = |server: &str| {
        let j = &jobs
            .iter()
            .find(|j| j.0 == format!("http-{server}"))
            .unwrap()
            .1;
        combo(&j["servers"][server], "plaintext", "keep-alive", "wrk")["cpu_ms_per_1k"]
            .as_f64()
            .unwrap()
    };
    let (per_request, per_connection) = (cpu("c-fork-req"), cpu("c-fork-conn"));
    assert!(
        per_request > 2.0 * per_connection,
        "CPU ms/1k: fork per request {per_request}, fork per connection {per_connection}"
    );
    // One connection: the serial server too.
    let out = tmp.path().join("one");
    let jobs = session(&out, "c-serial", &["--connections", "1"]);
    let server = &jobs[0].1["servers"]["c-serial"];
    for w in FIVE {
        let t = combo(server, w, "keep-alive", "wrk");
        assert!(t["rps"].as_f64().unwrap() > 0.0, "c-serial {w}: {t}");
        assert_eq!(t["errors"], 0, "c-serial {w}: {t}");
    }
}

#[test]
#[ignore = "full lane (`.ci/run`): builds and loads every bundled server"]
fn every_bundled_server_on_the_five_workloads() {
    let _ports = repo_ports();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    // The repository's own configuration: its default servers on every workload (the default
    // session leaves `minimal` to --full), once under wrk.
    let five = FIVE.join(",");
    let mut args = vec!["--suite", "http", "--workloads", &five];
    args.extend(ONE_SHORT_RUN);
    let o = local(&repo_root(), &out, &args);
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{stdout}\n{stderr}");
    let jobs = jobs(&out);
    assert!(
        jobs.len() >= 8,
        "at least eight servers: {:?}",
        jobs.iter().map(|j| &j.0).collect::<Vec<_>>()
    );
    let names: Vec<&str> = jobs
        .iter()
        .map(|j| j.0.trim_start_matches("http-"))
        .collect();
    // The full lane runs after `scripts/setup --test`: every bundled server is measured, none
    // skipped for a missing runtime (that a skip is listed, never fatal, is
    // `a_server_whose_runtime_is_missing_is_listed_with_what_to_install_and_the_others_run`).
    for s in BUNDLED {
        assert!(
            names.contains(&s),
            "{s} was not measured (scripts/setup --test installs its runtime): {stderr}"
        );
    }
    for (name, j) in &jobs {
        common::assert_valid("results", j);
        let server = &j["servers"][name.trim_start_matches("http-")];
        // `ok`, and for PHP's built-in server that it closes every connection.
        let check = server["check"].as_str().unwrap();
        assert!(check.starts_with("ok"), "{name}: {check}");
        assert_eq!(
            check.contains("closes every connection"),
            name == "http-php"
        );
        assert!(
            server["model"].is_string(),
            "{name}: every bundled server states its model"
        );
        for w in FIVE {
            let t = combo(server, w, "keep-alive", "wrk");
            let run = &t["runs"][0];
            assert!(
                run["load"]["requests"].as_u64().unwrap() > 100,
                "{name} {w}: {t}"
            );
            assert_eq!(run["load"]["non_2xx"], 0, "{name} {w}: every answer a 2xx");
            assert!(run["server_cpu_s"].as_f64().unwrap() > 0.0, "{name} {w}");
            assert!(t["peak_rss_kib"].as_u64().unwrap() > 500, "{name} {w}");
            assert!(run["load"]["version"].as_str().unwrap().contains("wrk"));
            assert!(run["rss_start_kib"].as_u64().unwrap() > 0, "{name} {w}");
        }
        // Server and load generator on separate CPUs, recorded; the session's settings too.
        let s = &j["settings"];
        assert_ne!(s["server_cpu"], s["load_cpu"]);
        assert_eq!(s["workloads"]["post-json"]["method"], "POST");
        assert_eq!(s["shapes"][0]["name"], "keep-alive");
    }
    // The terminal table: a line per server and workload, each figure with its unit.
    let rows: Vec<&str> = stdout
        .lines()
        .filter(|l| l.split_whitespace().nth(2) == Some("keep-alive"))
        .collect();
    assert_eq!(rows.len(), jobs.len() * 5, "{stdout}");
    for line in rows {
        for unit in ["req/s", "p99", "ms", "CPU ms/1k", "MiB"] {
            assert!(line.contains(unit), "{unit} missing in `{line}`");
        }
    }
    // The merged cell carries every server, its RESULTS.md a table per workload.
    let run_dir = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.file_name().unwrap().to_str().unwrap().contains("-local-"))
        .unwrap();
    let cell_dir = run_dir.join("linux-x86_64-local");
    let merged = read_json(&cell_dir.join("results.json"));
    common::assert_valid("results", &merged);
    assert_eq!(merged["http"].as_object().unwrap().len(), jobs.len());
    // A local run inside a git checkout records its commit (and whether it was dirty).
    let sha = merged["run"]["head_sha"]
        .as_str()
        .unwrap_or_else(|| panic!("{}", merged["run"]));
    assert_eq!(sha.len(), 40);
    assert!(merged["run"]["dirty"].is_boolean());
    let md = std::fs::read_to_string(cell_dir.join("RESULTS.md")).unwrap();
    for w in [
        "**plaintext**: `GET /`",
        "**post-json**: `POST /users`",
        "**route**: `GET /users/42`",
        "**minimal**: `POST /minimal/users/42`",
    ] {
        assert!(md.contains(w), "{w} in {md}");
    }
    // summary.csv: a record per server × workload × shape × tool, each with the commit.
    let summary = std::fs::read_to_string(out.join("report/summary.csv")).unwrap();
    let records: Vec<&str> = summary.lines().filter(|l| l.starts_with("http,")).collect();
    assert_eq!(records.len(), jobs.len() * 5, "{summary}");
    assert!(records.iter().all(|r| r.contains(sha)), "{summary}");
    let raw = std::fs::read_to_string(out.join("report/raw.csv")).unwrap();
    assert_eq!(
        raw.lines().filter(|l| l.starts_with("http,")).count(),
        jobs.len() * 5
    );

    assert_recomputes_to_the_bit(&repo_root(), &out);
    collect_gate_and_report(tmp.path(), &out, &merged);
}

/// The jobs of a local run as a workflow's artifacts: collected, gated and reported like the
/// rest.
fn collect_gate_and_report(tmp: &Path, out: &Path, merged: &serde_json::Value) {
    let results = tmp.join("results");
    cell()
        .arg("--root")
        .arg(repo_root())
        .args(["collect", "4242", "--from-dir"])
        .arg(out.join("jobs"))
        .arg("--results")
        .arg(&results)
        .assert()
        .success();
    let run_dir = std::fs::read_dir(&results)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_str().unwrap().ends_with("-4242"))
        .unwrap();
    let collected = read_json(&run_dir.join("linux-x86_64-local/results.json"));
    assert_eq!(collected["http"], merged["http"]);
    let gate = cell()
        .arg("--root")
        .arg(repo_root())
        .arg("gate")
        .arg(&run_dir)
        .arg("--history")
        .arg(&results)
        .output()
        .unwrap();
    assert_eq!(gate.status.code(), Some(0), "{}", text(&gate).0);
    let g = read_json(&run_dir.join("gate.json"));
    let notices = g["cells"][0]["notices"].to_string();
    assert!(
        notices.contains(
            "http server c, post-json over keep-alive under wrk: first run, baseline recorded"
        ),
        "{notices}"
    );
    let report = tmp.join("report");
    cell()
        .args(["report", "--history"])
        .arg(&results)
        .arg("--out")
        .arg(&report)
        .assert()
        .success();
    let html = std::fs::read_to_string(report.join("index.html")).unwrap();
    assert!(html.contains("HTTP") && html.contains("req/s"), "{html}");
}

#[test]
#[ignore = "full lane (`.ci/run`): the whole tool × shape × workload matrix"]
fn the_full_matrix_is_every_workload_under_wrk_oha_and_ab_in_both_shapes() {
    let _ports = repo_ports();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let o = local(
        &repo_root(),
        &out,
        &[
            "--suite",
            "http",
            "--full",
            "--servers",
            "c,php",
            "--runs",
            "1",
            "--duration",
            "1",
            "--warmup",
            "0",
        ],
    );
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{stdout}\n{stderr}");
    let jobs = jobs(&out);
    assert_eq!(jobs.len(), 2);
    for (name, j) in &jobs {
        let server = &j["servers"][name.trim_start_matches("http-")];
        assert_eq!(j["settings"]["full"], true);
        // PHP's built-in server closes every connection: ab, which counts its kept-alive
        // requests, records that it got none; wrk and oha record what they asked.
        let closes = name == "http-php";
        for w in FIVE {
            for shape in ["keep-alive", "one-conn"] {
                for tool in ["wrk", "oha", "ab"] {
                    let t = combo(server, w, shape, tool);
                    let load = &t["runs"][0]["load"];
                    assert!(
                        load["requests"].as_u64().unwrap() > 10,
                        "{name} {w} {shape} {tool}: {t}"
                    );
                    assert_eq!(load["non_2xx"], 0, "{name} {w} {shape} {tool}");
                    let kept = shape == "keep-alive" && !(closes && tool == "ab");
                    assert_eq!(
                        load["keep_alive"], kept,
                        "{name} {w} {shape} {tool}: the shape the tool really used"
                    );
                    assert!(!load["argv"].as_array().unwrap().is_empty());
                }
            }
        }
    }
    let summary = std::fs::read_to_string(out.join("report/summary.csv")).unwrap();
    assert_eq!(
        summary.lines().filter(|l| l.starts_with("http,")).count(),
        2 * 5 * 2 * 3,
        "{summary}"
    );
}

#[test]
fn the_same_process_mode_records_the_threads_and_connections_wrk_really_used() {
    let _ports = repo_ports();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let o = local(
        &repo_root(),
        &out,
        &[
            "--suite",
            "http",
            "--servers",
            "c,go",
            "--mode",
            "same-process",
            // What is asserted is how wrk spreads connections over its threads.
            "--tools",
            "wrk",
            "--threads",
            "16",
            "--connections",
            "100",
            "--warmup",
            "1",
            "--duration",
            "1",
            "--runs",
            "2",
            "--workloads",
            "plaintext,json",
        ],
    );
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{stdout}\n{stderr}");
    assert_recomputes_to_the_bit(&repo_root(), &out);
    for (name, j) in jobs(&out) {
        let server = &j["servers"][name.trim_start_matches("http-")];
        assert_eq!(j["settings"]["mode"], "same-process");
        assert_eq!(j["settings"]["shapes"][0]["connections"], 100);
        assert_eq!(j["settings"]["shapes"][0]["threads"], 16);
        for w in ["plaintext", "json"] {
            let runs = combo(server, w, "keep-alive", "wrk")["runs"]
                .as_array()
                .unwrap()
                .clone();
            assert_eq!(runs.len(), 2, "{name} {w}");
            for r in &runs {
                // 100 over 16 threads: wrk gives each thread 6, 96 in all.
                assert_eq!(r["load"]["connections"], 96, "{r}");
                assert_eq!(r["load"]["threads"], 16, "{r}");
            }
            // One process for every run: the same start-up for both.
            assert_eq!(runs[0]["startup_s"], runs[1]["startup_s"], "{name} {w}");
        }
    }
    assert!(stdout.contains("96 (16 threads)"), "{stdout}");
}

/// Serves the four workloads, but binds the posted user wrongly: its name comes back "Bob".
const WRONG_POST: &str = r#"
import http.server, json, socket, sys
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def setup(self):
        super().setup()
        self.request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    def answer(self, body, kind):
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def do_GET(self):
        if self.path == "/":
            self.answer(b"hello, world\n", "text/plain")
        elif self.path == "/json":
            self.answer(json.dumps({"message": "Hello, World!"}).encode(), "application/json")
        elif self.path.startswith("/users/"):
            self.answer(json.dumps({"id": int(self.path[7:])}).encode(), "application/json")
    def do_POST(self):
        user = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        user["name"] = "Bob"
        self.answer(json.dumps(user).encode(), "application/json")
    def log_message(self, *a):
        pass
http.server.ThreadingHTTPServer.allow_reuse_address = True
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
"#;

#[test]
fn a_wrong_post_json_field_fails_that_workload_and_its_other_workloads_are_measured() {
    let tmp = tempfile::tempdir().unwrap();
    let servers = tmp.path().join("servers");
    script(&servers, "bob", WRONG_POST);
    // The repository's workloads, one server that gets post-json wrong.
    let repo = std::fs::read_to_string(repo_root().join("cell/cell.toml")).unwrap();
    let start = repo.find("[[http.shapes]]").unwrap();
    let end = repo.find("[http.servers.").unwrap();
    let toml = http_toml(
        &servers,
        &format!("{}{}", &repo[start..end], python_server("bob", 18391)),
    )
    .replace("connections = 16\n", "");
    let root = project(tmp.path(), VERSIONS, &toml);
    let out = tmp.path().join("out");
    let o = local(
        &root,
        &out,
        &[
            "--suite",
            "http",
            "--tools",
            "wrk",
            "--shapes",
            "keep-alive",
        ],
    );
    let (stdout, stderr) = text(&o);
    assert_eq!(
        o.status.code(),
        Some(1),
        "a wrong answer fails: {stdout}\n{stderr}"
    );
    let diff =
        r#"post-json: wrong response to POST /users: field `name` is "Bob" (expected "Alice")"#;
    assert!(stderr.contains(diff), "{stderr}");
    let jobs = jobs(&out);
    let bob = &jobs[0].1["servers"]["bob"];
    assert!(
        bob["error"].is_null(),
        "the server as a whole is not failed: {bob}"
    );
    assert_eq!(bob["workloads"]["post-json"]["error"], diff);
    assert!(bob["workloads"]["post-json"].get("shapes").is_none());
    for w in ["plaintext", "json", "route"] {
        assert_eq!(bob["workloads"][w]["check"], "ok");
        assert!(
            combo(bob, w, "keep-alive", "wrk")["rps"].as_f64().unwrap() > 0.0,
            "{w}"
        );
    }
    assert_eq!(jobs[0].1["verdict"]["status"], "failed");
    let gate = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().path().join("gate.json"))
        .find(|p| p.is_file())
        .unwrap();
    let failures = read_json(&gate)["cells"][0]["failures"].to_string();
    assert!(
        failures.contains("field `name` is \\\"Bob\\\""),
        "{failures}"
    );
}

#[test]
fn a_sustained_run_records_totals_and_the_rss_it_started_and_ended_with() {
    let _ports = repo_ports();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let o = local(
        &repo_root(),
        &out,
        &[
            "--suite",
            "http",
            "--servers",
            "c",
            "--mode",
            "sustained",
            "--duration",
            "3",
            "--warmup",
            "0",
            "--workloads",
            "plaintext",
        ],
    );
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{stdout}\n{stderr}");
    assert_recomputes_to_the_bit(&repo_root(), &out);
    let jobs = jobs(&out);
    let j = &jobs[0].1;
    assert_eq!(j["settings"]["mode"], "sustained");
    assert_eq!(j["settings"]["runs"], 1);
    let t = combo(&j["servers"]["c"], "plaintext", "keep-alive", "wrk");
    let run = &t["runs"][0];
    assert!(run["load"]["duration_s"].as_f64().unwrap() >= 2.9);
    assert!(run["rss_start_kib"].as_u64().unwrap() > 0);
    assert!(run["rss_end_kib"].as_u64().unwrap() > 0);
    let md = std::fs::read_to_string(
        std::fs::read_dir(out.join("jobs"))
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path()
            .join("cell-linux-x86_64-local-http-c-a1/RESULTS.md"),
    )
    .unwrap();
    assert!(
        md.contains("Sustained runs") && md.contains("RSS start → end"),
        "{md}"
    );
}

#[test]
fn a_wrong_body_fails_before_any_load_and_the_others_are_kept() {
    let tmp = tempfile::tempdir().unwrap();
    let servers = tmp.path().join("servers");
    script(&servers, "wrong", &py("b\"goodbye\\n\"", u64::MAX >> 1));
    let toml = http_toml(
        &servers,
        &format!(
            "{}{}",
            python_server("wrong", 18301),
            c_server("good", 18302, "")
        ),
    );
    let root = project(tmp.path(), VERSIONS, &toml);
    let out = tmp.path().join("out");
    let o = local(&root, &out, &["--suite", "http", "--tools", "wrk"]);
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{stdout}\n{stderr}");
    let all = format!("{stdout}{stderr}");
    assert!(
        all.contains(r#"body "goodbye\n" (expected "hello, world\n")"#),
        "{all}"
    );
    let jobs = jobs(&out);
    let wrong = &jobs.iter().find(|j| j.0 == "http-wrong").unwrap().1;
    let w = &wrong["servers"]["wrong"];
    assert!(
        w["error"]
            .as_str()
            .unwrap()
            .contains("wrong response to GET /")
    );
    // Before any load: no tool ran against it.
    assert!(w.get("tools").is_none(), "{w}");
    assert!(w["workloads"]["plaintext"].get("shapes").is_none(), "{w}");
    assert!(
        w["workloads"]["plaintext"]["error"]
            .as_str()
            .unwrap()
            .contains("goodbye")
    );
    let good = &jobs.iter().find(|j| j.0 == "http-good").unwrap().1;
    assert!(good["servers"]["good"]["error"].is_null());
    assert!(
        plain(&good["servers"]["good"], "wrk")["rps"]
            .as_f64()
            .unwrap()
            > 0.0
    );
}

#[test]
fn a_server_that_never_answers_fails_at_the_startup_timeout() {
    let tmp = tempfile::tempdir().unwrap();
    let servers = tmp.path().join("servers");
    // Listens, accepts, never answers.
    script(
        &servers,
        "mute",
        "import socket, sys, time\ns = socket.socket()\ns.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\ns.bind((\"127.0.0.1\", int(sys.argv[1])))\ns.listen()\nheld = []\nwhile True:\n    held.append(s.accept())\n",
    );
    let toml = http_toml(&servers, &python_server("mute", 18311));
    let root = project(tmp.path(), VERSIONS, &toml);
    let out = tmp.path().join("out");
    let t = std::time::Instant::now();
    let o = local(&root, &out, &["--suite", "http", "--tools", "wrk"]);
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("no answer to GET / on 127.0.0.1:18311 within the startup timeout of 3 s"),
        "{stderr}"
    );
    // Bounded: the timeout, not forever (generous: builds and the merge are in here too).
    assert!(t.elapsed().as_secs() < 60);
}

#[test]
fn a_server_dying_mid_run_is_reported_with_its_exit_status() {
    let tmp = tempfile::tempdir().unwrap();
    let servers = tmp.path().join("servers");
    // Serves the check and the startup probe, then exits 3 on its 2,001st request: with no
    // warm-up, within the first second of the measured run (python serves thousands a second).
    script(&servers, "dies", &py("b\"hello, world\\n\"", 2000));
    let toml = http_toml(
        &servers,
        &format!(
            "{}{}",
            python_server("dies", 18321),
            c_server("good", 18322, "")
        ),
    );
    let root = project(tmp.path(), VERSIONS, &toml);
    let out = tmp.path().join("out");
    let o = local(
        &root,
        &out,
        &[
            "--suite",
            "http",
            "--tools",
            "oha",
            "--warmup",
            "0",
            "--duration",
            "3",
        ],
    );
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{stdout}\n{stderr}");
    let jobs = jobs(&out);
    let dies = &jobs.iter().find(|j| j.0 == "http-dies").unwrap().1;
    let e = dies["servers"]["dies"]["error"].as_str().unwrap();
    assert!(e.contains("the server exited (exit status 3)"), "{e}");
    assert!(
        e.contains("during measured run 1 of plaintext under oha"),
        "{e}"
    );
    let good = &jobs.iter().find(|j| j.0 == "http-good").unwrap().1;
    assert!(good["servers"]["good"]["error"].is_null());
    assert_eq!(
        plain(&good["servers"]["good"], "oha")["runs"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    // The merge keeps both; the gate fails the run for the dead one.
    let gate = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().path().join("gate.json"))
        .find(|p| p.is_file())
        .unwrap();
    let gate = read_json(&gate);
    let failures = gate["cells"][0]["failures"].to_string();
    assert!(failures.contains("http server dies"), "{failures}");
}

#[test]
#[ignore = "full lane (`.ci/run`): a three-minute soak"]
fn a_leak_drifts_and_the_rust_server_stays_flat_over_three_minutes() {
    let tmp = tempfile::tempdir().unwrap();
    let servers = tmp.path().join("servers");
    std::fs::create_dir_all(&servers).unwrap();
    let rust = repo_root().join("bench/http/rust");
    let toml = format!(
        r#"{}
[http.servers.rust]
toolchain = "rust"
source = "{rust}"
build = ["{{tool:cargo}}", "build", "--release", "--locked", "--quiet", "--manifest-path", "{{src}}/Cargo.toml", "--target-dir", "{{src}}/target"]
run = ["{{src}}/target/release/cell-http-rust", "{{port}}"]
port = 18332

[toolchains.rust]
install = {{ preinstalled = {{}} }}
tools.cargo = {{ version = ["--version"] }}

[soak]
rate = 200
connections = 4
duration = 180
interval = 1
window_start = 30
minima_window = 15
"#,
        http_toml(&servers, &c_server("leaky", 18331, r#", "--leak", "4096""#)),
        rust = rust.display()
    );
    let root = project(tmp.path(), VERSIONS, &toml);
    let out = tmp.path().join("out");
    let o = local(&root, &out, &["--suite", "soak"]);
    let (stdout, stderr) = text(&o);
    // The leak fails the gate (fail_on_drift defaults to true).
    assert_eq!(o.status.code(), Some(1), "{stdout}\n{stderr}");
    let jobs = jobs(&out);
    let leaky = &jobs.iter().find(|j| j.0 == "soak-leaky").unwrap().1;
    let rust = &jobs.iter().find(|j| j.0 == "soak-rust").unwrap().1;
    common::assert_valid("results", leaky);
    let l = &leaky["servers"]["leaky"];
    assert_eq!(l["verdict"], "drifted", "{l}");
    assert!(l["fit"]["r2"].as_f64().unwrap() >= 0.9, "{}", l["fit"]);
    // 200 req/s × 4 KiB ≈ 48,000 KiB/min offered; the slope must be of that order.
    let slope = l["fit"]["slope_kib_per_min"].as_f64().unwrap();
    assert!((30_000.0..60_000.0).contains(&slope), "{slope}");
    let r = &rust["servers"]["rust"];
    assert_eq!(r["verdict"], "flat", "{r}");
    assert!(r["samples"].as_array().unwrap().len() >= 170);
    let requests = r["load"]["requests"].as_u64().unwrap();
    assert!((34_000..=38_000).contains(&requests), "{requests}");
    // Charts: per server and one overlay, in the job dirs and the merged cell; well-formed XML.
    let run_dir = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.join("linux-x86_64-local").is_dir())
        .unwrap()
        .join("linux-x86_64-local");
    for chart in ["soak/leaky.svg", "soak/rust.svg", "soak/overlay.svg"] {
        let p = run_dir.join(chart);
        let status = std::process::Command::new("python3")
            .args([
                "-c",
                "import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])",
            ])
            .arg(&p)
            .status()
            .unwrap();
        assert!(status.success(), "{} is not well-formed", p.display());
    }
    let md = std::fs::read_to_string(run_dir.join("RESULTS.md")).unwrap();
    assert!(md.contains("## Soak") && md.contains("drifted"), "{md}");
}

#[test]
fn a_load_generator_that_fails_against_a_healthy_server_is_exit_2_not_the_server_s_fault() {
    let tmp = tempfile::tempdir().unwrap();
    let servers = tmp.path().join("servers");
    std::fs::create_dir_all(&servers).unwrap();
    let root = project(
        tmp.path(),
        VERSIONS,
        &http_toml(&servers, &c_server("good", 18341, "")),
    );
    // A wrk that prints its version and then fails every run, first on PATH.
    let bin = tmp.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let fake = bin.join("wrk");
    std::fs::write(
        &fake,
        "#!/bin/sh\nif [ \"$1\" = --version ]; then echo 'wrk 0.0 [broken]'; exit 1; fi\necho 'unable to connect: out of memory' >&2\nexit 1\n",
    )
    .unwrap();
    let mut perms = std::fs::metadata(&fake).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&fake, perms).unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let out = tmp.path().join("out");
    let o = cell()
        .env("PATH", path)
        .arg("--root")
        .arg(&root)
        .args(["local", "--suite", "http", "--tools", "wrk", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("the load generator failed, not the server")
            && stderr.contains("unable to connect: out of memory")
            && stderr.contains("the server still answers GET / as expected"),
        "{stderr}"
    );
}

/// The merged cell's dir of a local run in `out`.
fn cell_dir(out: &Path) -> PathBuf {
    std::fs::read_dir(out)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.join("linux-x86_64-local").is_dir())
        .unwrap()
        .join("linux-x86_64-local")
}

/// The line of `text` that starts, once trimmed, with `prefix`.
fn line_starting<'a>(text: &'a str, prefix: &str) -> &'a str {
    text.lines()
        .map(str::trim)
        .find(|l| l.starts_with(prefix))
        .unwrap_or_else(|| panic!("no line starting `{prefix}` in:\n{text}"))
}

/// Regression: a soak shortened on the command line with its own window start (`--duration
/// 90 --window-start 30`, and the docs' `--duration 600 --window-start 120`) was refused with
/// "`soak.minima_window` (as changed on the command line): -102": the minima window was shrunk
/// against the config's window start (600 s) before the command line's replaced it.
#[test]
#[ignore = "full lane (`.ci/run`): a 90-second soak"]
fn a_short_soak_with_its_own_window_start_is_not_refused_for_a_negative_minima_window() {
    let tmp = tempfile::tempdir().unwrap();
    let servers = tmp.path().join("servers");
    std::fs::create_dir_all(&servers).unwrap();
    // `[soak]` at its defaults: an hour, the fit from 600 s, minima every 60 s.
    let toml = format!(
        "{}\n[soak]\nrate = 200\n",
        http_toml(
            &servers,
            &format!(
                "{}{}",
                c_server("c", 18351, ""),
                c_server("leaky", 18352, r#", "--leak", "4096""#)
            )
        )
    );
    let root = project(tmp.path(), VERSIONS, &toml);
    let out = tmp.path().join("out");
    let o = local(
        &root,
        &out,
        &[
            "--suite",
            "soak",
            "--duration",
            "90",
            "--window-start",
            "30",
        ],
    );
    let (stdout, stderr) = text(&o);
    // It ran (the leak fails the gate: fail_on_drift), and ran what was asked.
    assert_eq!(o.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(!stderr.contains("minima_window"), "{stderr}");
    assert_recomputes_to_the_bit(&root, &out);
    let jobs = jobs(&out);
    for (_, j) in &jobs {
        let s = &j["settings"];
        assert_eq!(
            (
                &s["duration_s"],
                &s["window_start_s"],
                &s["minima_window_s"]
            ),
            (&90.0.into(), &30.0.into(), &12.0.into()),
            "{s}"
        );
        // One CPU each by default, recorded as sets.
        assert_eq!(s["server_cpus"].as_array().unwrap().len(), 1, "{s}");
        assert_eq!(s["load_cpus"].as_array().unwrap().len(), 1, "{s}");
        assert_ne!(s["server_cpus"], s["load_cpus"]);
    }
    // The verdict line of each server, in the terminal summary and the merged RESULTS.md.
    let md = std::fs::read_to_string(cell_dir(&out).join("RESULTS.md")).unwrap();
    for (server, verdict) in [("c", "flat"), ("leaky", "drifted")] {
        let line = line_starting(&stdout, &format!("• {server}: RSS "));
        assert!(line.contains(" KiB over minutes 0.5-1.5 ("), "{line}");
        assert!(
            line.contains("%), slope ") && line.contains(" KiB/min (R^2 "),
            "{line}"
        );
        assert!(line.ends_with(&format!(" KiB: {verdict}")), "{line}");
        assert!(md.contains(&format!("\n{line}\n")), "{line} not in\n{md}");
        let job = std::fs::read_to_string(
            out.join("jobs")
                .read_dir()
                .unwrap()
                .next()
                .unwrap()
                .unwrap()
                .path()
                .join(format!(
                    "cell-linux-x86_64-local-soak-{server}-a1/RESULTS.md"
                )),
        )
        .unwrap();
        assert!(job.contains(&format!("\n{line}\n")), "{line} not in\n{job}");
    }
    // The leak's end is above its start by about what it leaked: 4 KiB × 200 req/s × 60 s.
    let leaky = line_starting(&stdout, "• leaky: RSS ");
    let kib: Vec<u64> = leaky
        .split_whitespace()
        .filter_map(|w| w.parse().ok())
        .take(2)
        .collect();
    assert!(
        (30_000..60_000).contains(&(kib[1] - kib[0])),
        "{kib:?} in {leaky}"
    );
    // Beside the RSS table, the load each got: 200 req/s offered, as many achieved.
    assert!(md.contains(
        "| server | requests | req/s achieved | req/s offered | p50 ms | p99 ms | errors | non-2xx | start-up s | CPU ms / 1k req |"
    ));
    let row = md
        .lines()
        .find(|l| l.starts_with("| `c` | ") && l.split('|').count() == 12)
        .unwrap_or_else(|| panic!("no load row of c in\n{md}"));
    let cells: Vec<&str> = row.split('|').map(str::trim).collect();
    let achieved: f64 = cells[3].parse().unwrap();
    assert!((190.0..=210.0).contains(&achieved), "{row}");
    assert_eq!(cells[4], "200", "{row}");
}

#[test]
fn a_soak_without_keep_alive_opens_a_connection_per_request_and_is_labelled_churn() {
    let tmp = tempfile::tempdir().unwrap();
    let servers = tmp.path().join("servers");
    std::fs::create_dir_all(&servers).unwrap();
    let port = 18361;
    let toml = format!(
        "{}\n[soak]\nrate = 200\n",
        http_toml(&servers, &c_server("c", port, ""))
    );
    let root = project(tmp.path(), VERSIONS, &toml);
    let out = tmp.path().join("out");
    let o = local(
        &root,
        &out,
        &[
            "--suite",
            "soak",
            "--duration",
            "10",
            "--window-start",
            "3",
            "--no-keep-alive",
        ],
    );
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{stdout}\n{stderr}");
    // Each of the ~2,000 requests closed its own connection: as many sockets in TIME_WAIT
    // (they last 60 s); four kept-alive connections would leave about four.
    let tw = cell_run::suites::procfs::time_wait(port).unwrap();
    assert!(tw > 1000, "{tw} sockets in TIME_WAIT on {port}");
    let jobs = jobs(&out);
    let s = &jobs[0].1["settings"];
    assert_eq!(s["keep_alive"], false, "{s}");
    let c = &jobs[0].1["servers"]["c"];
    assert!(c["load"]["requests"].as_u64().unwrap() > 1500, "{c}");
    let md = std::fs::read_to_string(cell_dir(&out).join("RESULTS.md")).unwrap();
    assert!(
        md.contains("over 4 connections, churn (no keep-alive), for 10 s"),
        "{md}"
    );
    assert!(
        stdout.contains("connections, churn (no keep-alive), for 10 s"),
        "{stdout}"
    );
}

/// The CPUs this process may run on, from `/proc/self/status` (`0-3,6`).
fn allowed_cpus() -> Vec<u32> {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let list = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .unwrap()
        .trim();
    list.split(',')
        .flat_map(|r| match r.split_once('-') {
            Some((a, b)) => (a.parse().unwrap()..=b.parse().unwrap()).collect::<Vec<u32>>(),
            None => vec![r.parse().unwrap()],
        })
        .collect()
}

#[test]
fn cpu_sets_from_the_command_line_are_checked_and_recorded() {
    let tmp = tempfile::tempdir().unwrap();
    let servers = tmp.path().join("servers");
    std::fs::create_dir_all(&servers).unwrap();
    let toml = format!(
        "{}\n[soak]\nrate = 200\n",
        http_toml(&servers, &c_server("c", 18371, ""))
    );
    let root = project(tmp.path(), VERSIONS, &toml);
    let out = tmp.path().join("out");
    let allowed = allowed_cpus();
    let outside = (allowed.last().unwrap() + 1).to_string();
    for (suite, flags, msg) in [
        (
            "soak",
            ["--server-cpus", outside.as_str(), "--load-cpus", "0"],
            format!("--server-cpus: CPU {outside} is not allowed on this machine"),
        ),
        (
            "http",
            ["--server-cpus", "0", "--load-cpus", outside.as_str()],
            format!("--load-cpus: CPU {outside} is not allowed on this machine"),
        ),
        (
            "soak",
            ["--server-cpus", "0", "--load-cpus", "0"],
            "--load-cpus: CPU 0 is also in --server-cpus".to_owned(),
        ),
        (
            "http",
            ["--server-cpus", "0", "--tools", "oha"],
            "--load-cpus: missing: write both --server-cpus and --load-cpus, or neither".to_owned(),
        ),
    ] {
        let o = local(&root, &out, &[&["--suite", suite][..], &flags].concat());
        let (stdout, stderr) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{stdout}\n{stderr}");
        assert!(stderr.contains(&msg), "{msg} not in\n{stderr}");
    }
    assert!(
        allowed.len() >= 2,
        "the http tests need two CPUs: {allowed:?}"
    );
    // The reverse of the default: the server on the lowest CPU, the load on the highest.
    let (lo, hi) = (allowed[0], *allowed.last().unwrap());
    let (lo_s, hi_s) = (lo.to_string(), hi.to_string());
    let o = local(
        &root,
        &out,
        &[
            "--suite",
            "http",
            "--tools",
            "oha",
            "--warmup",
            "0",
            "--server-cpus",
            &lo_s,
            "--load-cpus",
            &hi_s,
        ],
    );
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{stdout}\n{stderr}");
    let jobs = jobs(&out);
    let s = &jobs[0].1["settings"];
    assert_eq!(s["server_cpus"], serde_json::json!([lo]), "{s}");
    assert_eq!(s["load_cpus"], serde_json::json!([hi]), "{s}");
    assert_eq!((&s["server_cpu"], &s["load_cpu"]), (&lo.into(), &hi.into()));
    let md = std::fs::read_to_string(cell_dir(&out).join("RESULTS.md")).unwrap();
    assert!(
        md.contains(&format!(
            "server pinned to CPU {lo}, load generator pinned to CPU {hi}"
        )),
        "{md}"
    );
}

#[test]
fn a_cpu_of_http_cpus_the_machine_does_not_allow_is_named_by_its_key() {
    let tmp = tempfile::tempdir().unwrap();
    let servers = tmp.path().join("servers");
    std::fs::create_dir_all(&servers).unwrap();
    let outside = allowed_cpus().last().unwrap() + 1;
    let toml = http_toml(&servers, &c_server("c", 18381, "")).replace(
        "[http]\n",
        &format!("[http]\ncpus = {{ server = [{outside}], load = [0] }}\n"),
    );
    let root = project(tmp.path(), VERSIONS, &toml);
    let o = local(
        &root,
        &tmp.path().join("out"),
        &["--suite", "http", "--tools", "oha"],
    );
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{stdout}\n{stderr}");
    assert!(
        stderr.contains(&format!(
            "http.cpus.server: CPU {outside} is not allowed on this machine"
        )),
        "{stderr}"
    );
}

/// What broke: with a relative `--out` (the workflow's `cell run --out job/<artifact>`,
/// `cell local`'s default `cell-local`) a server's build wrote its binary relative to the
/// build's own directory, and failed.
#[test]
fn a_relative_out_builds_and_runs_the_servers_where_it_says() {
    let tmp = tempfile::tempdir().unwrap();
    let servers = tmp.path().join("servers");
    std::fs::create_dir_all(&servers).unwrap();
    let root = project(
        tmp.path(),
        VERSIONS,
        &http_toml(&servers, &c_server("good", 18383, "")),
    );
    let o = cell()
        .current_dir(tmp.path())
        .arg("--root")
        .arg(&root)
        .args([
            "run",
            "--suite",
            "http",
            "--cell",
            "local",
            "--server",
            "good",
            "--tools",
            "wrk",
            "--out",
            "job/http-good",
        ])
        .output()
        .unwrap();
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{stdout}\n{stderr}");
    let j = read_json(&tmp.path().join("job/http-good/results.json"));
    let good = &j["servers"]["good"];
    assert!(good["error"].is_null(), "{good}");
    assert!(plain(good, "wrk")["rps"].as_f64().unwrap() > 0.0, "{good}");
}

/// Regression: the only check that a server whose runtime is absent is listed with what to
/// install (and never fails the others) was inside the every-server matrix, which the
/// contributor's command leaves to the full lane.
#[test]
fn a_server_whose_runtime_is_missing_is_listed_with_what_to_install_and_the_others_run() {
    let tmp = tempfile::tempdir().unwrap();
    let servers = tmp.path().join("servers");
    std::fs::create_dir_all(servers.join("absent")).unwrap();
    let toml = format!(
        r#"{}
[toolchains.absent]
install = {{ preinstalled = {{}} }}
tools.cell-no-such-runtime = {{ version = ["--version"] }}
hint = "install the absent runtime"

[http.servers.absent]
toolchain = "absent"
source = "absent"
run = ["{{tool:cell-no-such-runtime}}", "{{port}}"]
port = 18393
"#,
        http_toml(&servers, &c_server("c", 18394, ""))
    );
    let root = project(tmp.path(), VERSIONS, &toml);
    let out = tmp.path().join("out");
    let o = local(&root, &out, &["--suite", "http", "--tools", "wrk"]);
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(
        stderr.lines().any(|l| l
            .starts_with("[http absent] server `absent` needs toolchain `absent`")
            && l.contains("install the absent runtime")),
        "{stderr}"
    );
    let jobs = jobs(&out);
    let names: Vec<&str> = jobs.iter().map(|j| j.0.as_str()).collect();
    assert_eq!(names, ["http-c"], "{stderr}");
    assert!(
        plain(&jobs[0].1["servers"]["c"], "wrk")["rps"]
            .as_f64()
            .unwrap()
            > 0.0
    );
}
