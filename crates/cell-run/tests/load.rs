//! `cell_run::suites::load` against the real `wrk`, `oha` and `ab` and a loopback HTTP server
//! of the test's own: the argv runs, the reports parse, and the figures agree with what the
//! server saw (its connections, each request's method, headers and body).
//!
//! All three tools must be installed: a missing tool fails the test with how to install it,
//! because a silently skipped test would let a broken driver through.
#![cfg(target_os = "linux")]

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread;
use std::time::Duration;

use cell_run::suites::load::{LoadRequest, LoadSpec, LoadTool, Method};
use cell_run::suites::server::CpuSet;
use cell_run::suites::session::{Generator, find_generator, generator_at, run_load};
use cell_schema::LoadReport;

// ---------------------------------------------------------------- a tiny server

/// One request as the server read it (header names lower-cased).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Received {
    method: String,
    content_type: Option<String>,
    content_length: Option<String>,
    body: Vec<u8>,
}

/// What the server saw: connections accepted, and each distinct request with its count.
#[derive(Debug, Default)]
struct Seen {
    connections: u64,
    requests: BTreeMap<Received, u64>,
}

type Shared = Arc<Mutex<Seen>>;

/// Largest request head or body the server reads; anything larger closes the connection.
const CAP: u64 = 64 * 1024;

/// Serves every request on 127.0.0.1 with `status` and `hello, world\n` (no body for HEAD),
/// one thread per connection, counting what it sees. HTTP/1.1 connections stay open unless
/// the client sends `Connection: close`; HTTP/1.0 ones (ab) only when it sends
/// `Connection: Keep-Alive`, answered in kind. The listener lives until the test process
/// exits.
fn serve(status: &'static str) -> (u16, Shared) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
    let port = listener.local_addr().expect("local addr").port();
    let seen = Shared::default();
    let shared = seen.clone();
    thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            shared
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .connections += 1;
            let shared = shared.clone();
            thread::spawn(move || connection(stream, status, &shared));
        }
    });
    (port, seen)
}

fn connection(stream: TcpStream, status: &str, seen: &Shared) {
    let _ = stream.set_nodelay(true);
    // Bounded: a client that goes quiet releases its thread.
    let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
    let Ok(read_half) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(read_half);
    let mut writer = stream;
    while let Some((request, keep)) = read_request(&mut reader) {
        let head = request.method == "HEAD";
        seen.lock()
            .unwrap_or_else(PoisonError::into_inner)
            .requests
            .entry(request)
            .and_modify(|n| *n += 1)
            .or_insert(1);
        let body = "hello, world\n";
        let response = format!(
            "HTTP/1.1 {status}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n{}\r\n{}",
            body.len(),
            if keep {
                "Connection: keep-alive\r\n"
            } else {
                "Connection: close\r\n"
            },
            if head { "" } else { body },
        );
        if writer.write_all(response.as_bytes()).is_err() || !keep {
            return;
        }
    }
}

/// One request and whether the connection stays open; `None` at the end of the
/// connection or on anything malformed or too large.
fn read_request(reader: &mut BufReader<TcpStream>) -> Option<(Received, bool)> {
    let mut line = String::new();
    let mut read_line = |line: &mut String| {
        line.clear();
        match reader.by_ref().take(CAP).read_line(line) {
            Ok(n) if n > 0 && line.ends_with('\n') => Some(()),
            _ => None,
        }
    };
    read_line(&mut line)?;
    let mut parts = line.split_whitespace();
    let method = parts.next()?.to_owned();
    let http10 = parts.nth(1)? == "HTTP/1.0";
    let mut headers = BTreeMap::new();
    loop {
        read_line(&mut line)?;
        let header = line.trim();
        if header.is_empty() {
            break;
        }
        let (name, value) = header.split_once(':')?;
        headers.insert(name.trim().to_ascii_lowercase(), value.trim().to_owned());
    }
    let content_length = headers.get("content-length").cloned();
    let n: u64 = content_length
        .as_deref()
        .map_or(Some(0), |v| v.parse().ok())?;
    if n > CAP {
        return None;
    }
    let mut body = vec![0; usize::try_from(n).ok()?];
    reader.read_exact(&mut body).ok()?;
    let connection = headers.get("connection").map(|v| v.to_ascii_lowercase());
    let keep = if http10 {
        connection.as_deref() == Some("keep-alive")
    } else {
        connection.as_deref() != Some("close")
    };
    let request = Received {
        method,
        content_type: headers.get("content-type").cloned(),
        content_length,
        body,
    };
    Some((request, keep))
}

fn seen(shared: &Shared) -> (u64, BTreeMap<Received, u64>) {
    let s = shared.lock().unwrap_or_else(PoisonError::into_inner);
    (s.connections, s.requests.clone())
}

// ---------------------------------------------------------------- running the tools

/// The tool of the table named `name`.
fn named(name: &str) -> LoadTool {
    LoadTool::parse(name).expect(name)
}

/// The tool's program, or a failure saying how to install it.
fn program(tool: LoadTool) -> PathBuf {
    let name = tool.name();
    let mut dirs: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect())
        .unwrap_or_default();
    // `cargo install` puts oha here, which is not always on a test's PATH.
    if let Some(cargo_home) = std::env::var_os("CARGO_HOME") {
        dirs.push(Path::new(&cargo_home).join("bin"));
    }
    if let Some(home) = std::env::var_os("HOME") {
        dirs.push(Path::new(&home).join(".cargo/bin"));
    }
    if let Some(found) = dirs.iter().map(|d| d.join(name)).find(|p| p.is_file()) {
        return found;
    }
    let how = tool.def().hint();
    panic!("`{name}` is not installed (not on PATH nor in ~/.cargo/bin); install it with `{how}`");
}

/// The tool as the suites drive it, found where [`program`] finds it.
fn generator(tool: LoadTool) -> Generator {
    generator_at(tool, program(tool)).expect("run version")
}

/// One run through `run_load`, as the suites run it; the tool's output is shown on failure
/// (and with --nocapture) so a changed report format can be seen.
fn run(tool: LoadTool, spec: &LoadSpec) -> LoadReport {
    let scratch = tempfile::tempdir().expect("scratch dir");
    let result = run_load(&generator(tool), spec, CpuSet::of(&[]), scratch.path());
    for stream in ["out", "err"] {
        let path = scratch.path().join(format!("{}.{stream}", tool.name()));
        let text = std::fs::read(&path).unwrap_or_default();
        eprintln!("--- {stream}\n{}", String::from_utf8_lossy(&text));
    }
    let report = result
        .unwrap_or_else(|e| panic!("{} failed: {e}", tool.name()))
        .report;
    eprintln!("{report:#?}");
    report
}

fn spec<'a>(url: &'a str, request: &'a LoadRequest) -> LoadSpec<'a> {
    LoadSpec {
        url,
        connections: 4,
        threads: 2,
        duration: Duration::from_secs(1),
        keep_alive: true,
        rate: None,
        timeout: Duration::from_secs(2),
        request,
    }
}

fn assert_sane(r: &LoadReport, tool: LoadTool, spec: &LoadSpec) {
    assert_eq!(r.tool, tool.name());
    assert!(!r.version.contains("printed no version"), "{r:?}");
    assert!(r.requests > 100, "{r:?}");
    assert!(r.errors.is_empty(), "{r:?}");
    assert!(r.duration_s > 0.9 && r.duration_s < 2.0, "{r:?}");
    let l = &r.latency_ms;
    assert!(
        0.0 < l.p50 && l.p50 <= l.p90 && l.p90 <= l.p99 && l.p99 <= l.p99_9 && l.p99_9 <= l.max,
        "{r:?}"
    );
    let rate = r.requests as f64 / r.duration_s;
    assert!(
        (r.rps - rate).abs() <= 0.2 * rate,
        "rps {} vs {rate}: {r:?}",
        r.rps
    );
    // What ran: the command, the connections, the shape.
    assert_eq!(Path::new(&r.argv[0]), program(tool), "{r:?}");
    assert_eq!(r.argv.last().map(String::as_str), Some(spec.url), "{r:?}");
    assert_eq!(r.connections, Some(4), "{r:?}");
    let threads = (tool == named("wrk")).then_some(2);
    assert_eq!(r.threads, threads, "{r:?}");
    assert_eq!(r.keep_alive, Some(spec.keep_alive), "{r:?}");
    if tool == named("ab") {
        assert_eq!(r.request_cap_hit, Some(false), "{r:?}");
        let kept = spec.keep_alive.then_some(r.requests);
        assert_eq!(r.keep_alive_requests, kept, "{r:?}");
    } else {
        assert_eq!((r.keep_alive_requests, r.request_cap_hit), (None, None));
    }
}

/// The server's count of `GET /` with no body, and every request was one.
fn only_gets(requests: &BTreeMap<Received, u64>) -> u64 {
    let get = Received {
        method: "GET".into(),
        content_type: None,
        content_length: None,
        body: Vec::new(),
    };
    assert_eq!(requests.keys().collect::<Vec<_>>(), [&get], "{requests:?}");
    requests[&get]
}

fn ok_run(tool: LoadTool) {
    let (port, shared) = serve("200 OK");
    let url = format!("http://127.0.0.1:{port}/");
    let s = spec(&url, LoadRequest::get());
    let r = run(tool, &s);
    assert_sane(&r, tool, &s);
    assert_eq!(r.non_2xx, 0, "{r:?}");
    let (connections, requests) = seen(&shared);
    // Every response was to a request the server read; a few more may have been in flight.
    let served = only_gets(&requests);
    assert!(
        r.requests <= served && served <= r.requests + 4,
        "{served}: {r:?}"
    );
    // Kept alive: the four connections, not one per request.
    assert!(connections <= 8, "{connections} connections: {r:?}");
}

fn error_run(tool: LoadTool) {
    let (port, _) = serve("500 Internal Server Error");
    let url = format!("http://127.0.0.1:{port}/");
    let s = spec(&url, LoadRequest::get());
    let r = run(tool, &s);
    assert_sane(&r, tool, &s);
    assert_eq!(r.non_2xx, r.requests, "{r:?}");
}

fn no_keep_alive_run(tool: LoadTool) {
    let (port, shared) = serve("200 OK");
    let url = format!("http://127.0.0.1:{port}/");
    let s = LoadSpec {
        keep_alive: false,
        ..spec(&url, LoadRequest::get())
    };
    let r = run(tool, &s);
    assert_sane(&r, tool, &s);
    assert_eq!(r.non_2xx, 0, "{r:?}");
    let (connections, _) = seen(&shared);
    assert!(
        connections >= r.requests,
        "{connections} connections: {r:?}"
    );
}

/// The http suite's JSON body, 38 bytes.
const JSON: &str = r#"{"name":"Alice","age":28,"adult":true}"#;

/// A run sending `request`; the server must have received exactly it, once per response at
/// least and no more often than the requests in flight at the end allow.
fn body_run(tool: LoadTool, request: &LoadRequest, content_type: &str) -> LoadReport {
    let (port, shared) = serve("200 OK");
    let url = format!("http://127.0.0.1:{port}/");
    let s = spec(&url, request);
    let r = run(tool, &s);
    assert_sane(&r, tool, &s);
    let body = request.body.clone().unwrap_or_default();
    let want = Received {
        method: request.method.as_str().to_owned(),
        content_type: Some(content_type.to_owned()),
        content_length: Some(body.len().to_string()),
        body,
    };
    let (_, requests) = seen(&shared);
    assert_eq!(requests.keys().collect::<Vec<_>>(), [&want], "{requests:?}");
    let got = requests[&want];
    assert!(r.requests <= got && got <= r.requests + 4, "{got}: {r:?}");
    r
}

fn post_json(tool: LoadTool) {
    let request = LoadRequest::with_body(Method::Post, "application/json", JSON);
    assert_eq!(JSON.len(), 38);
    body_run(tool, &request, "application/json");
}

// ---------------------------------------------------------------- tests

#[test]
fn wrk_ok() {
    ok_run(named("wrk"));
}

#[test]
fn oha_ok() {
    ok_run(named("oha"));
}

#[test]
fn ab_ok() {
    ok_run(named("ab"));
}

#[test]
fn wrk_500_is_non_2xx_not_errors() {
    error_run(named("wrk"));
}

#[test]
fn oha_500_is_non_2xx_not_errors() {
    error_run(named("oha"));
}

#[test]
fn ab_500_is_non_2xx_not_errors() {
    error_run(named("ab"));
}

#[test]
fn wrk_without_keep_alive() {
    no_keep_alive_run(named("wrk"));
}

#[test]
fn oha_without_keep_alive() {
    no_keep_alive_run(named("oha"));
}

#[test]
fn ab_without_keep_alive() {
    no_keep_alive_run(named("ab"));
}

#[test]
fn wrk_posts_json() {
    post_json(named("wrk"));
}

#[test]
fn oha_posts_json() {
    post_json(named("oha"));
}

#[test]
fn ab_posts_json() {
    post_json(named("ab"));
}

/// The Lua string wrk's script builds its body from carries any byte.
#[test]
fn wrk_posts_any_bytes() {
    let body = b"say \"hi\" \\ 'there'\r\nnul:\0 high:\xff\x80 end\\".to_vec();
    let request = LoadRequest::with_body(Method::Post, "application/octet-stream", body);
    body_run(named("wrk"), &request, "application/octet-stream");
}

#[test]
fn ab_puts_and_oha_patches() {
    let put = LoadRequest::with_body(Method::Put, "text/plain", "x=1");
    body_run(named("ab"), &put, "text/plain");
    let patch = LoadRequest::with_body(Method::Patch, "text/plain", "x=2");
    body_run(named("oha"), &patch, "text/plain");
}

#[test]
fn ab_and_oha_send_head() {
    let head = LoadRequest {
        method: Method::Head,
        ..LoadRequest::get().clone()
    };
    for tool in [named("ab"), named("oha")] {
        let (port, shared) = serve("200 OK");
        let url = format!("http://127.0.0.1:{port}/");
        let s = spec(&url, &head);
        let r = run(tool, &s);
        assert_sane(&r, tool, &s);
        let (_, requests) = seen(&shared);
        assert!(requests.keys().all(|k| k.method == "HEAD"), "{requests:?}");
    }
}

/// 5 connections over 2 wrk threads used to be refused; wrk runs 4, and says so.
#[test]
fn wrk_uneven_connections_are_recorded() {
    let (port, shared) = serve("200 OK");
    let url = format!("http://127.0.0.1:{port}/");
    let s = LoadSpec {
        connections: 5,
        ..spec(&url, LoadRequest::get())
    };
    let r = run(named("wrk"), &s);
    assert_eq!((r.connections, r.threads), (Some(4), Some(2)), "{r:?}");
    let c = r.argv.iter().position(|a| a == "-c").expect("-c");
    assert_eq!(r.argv[c + 1], "4");
    // wrk first connects once from its main thread to check the address, then each thread
    // opens its share: 1 + 2 × 2.
    let (connections, _) = seen(&shared);
    assert_eq!(connections, 1 + 4, "{r:?}");
}

#[test]
fn oha_holds_a_fixed_rate() {
    let (port, _) = serve("200 OK");
    let url = format!("http://127.0.0.1:{port}/");
    let r = run(
        named("oha"),
        &LoadSpec {
            rate: Some(50),
            duration: Duration::from_secs(2),
            ..spec(&url, LoadRequest::get())
        },
    );
    assert!((80..=120).contains(&r.requests), "{r:?}");
    assert!(r.errors.is_empty(), "{r:?}");
    assert_eq!(r.non_2xx, 0, "{r:?}");
}

#[test]
fn wrk_and_ab_refuse_a_fixed_rate() {
    for tool in [named("wrk"), named("ab")] {
        let scratch = tempfile::tempdir().expect("scratch dir");
        let s = LoadSpec {
            rate: Some(50),
            ..spec("http://127.0.0.1:1/", LoadRequest::get())
        };
        let err = run_load(&generator(tool), &s, CpuSet::of(&[]), scratch.path())
            .err()
            .expect("no fixed rate");
        assert!(err.to_string().contains("use oha"), "{err}");
    }
}

#[test]
fn find_generator_records_abs_version() {
    // ab is on PATH where apt puts it; the version is the line ab prints.
    let g = find_generator("ab").expect("ab on PATH");
    assert_eq!(g.tool, named("ab"));
    assert_eq!(g.version.argv, ["-V"]);
    assert!(
        g.version
            .printed
            .starts_with("This is ApacheBench, Version 2.3"),
        "{:?}",
        g.version
    );
}
