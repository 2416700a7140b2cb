//! `cell_run::suites::load` against the real `wrk` and `oha` and a loopback HTTP/1.1 server:
//! the argv runs, the reports parse, and the figures agree with what the server did.
//!
//! Both tools must be installed: a missing tool fails the test with how to install it,
//! because a silently skipped test would let a broken driver through.
#![cfg(target_os = "linux")]

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::thread;
use std::time::Duration;

use cell_run::suites::load::{LoadSpec, LoadTool, argv, parse, version_line};
use cell_schema::LoadReport;

// ---------------------------------------------------------------- a tiny server

/// Serves every request on 127.0.0.1 with `status` and `hello, world\n`, one thread per
/// connection, keeping connections open unless the client sends `Connection: close`.
/// The listener lives until the test process exits.
fn serve(status: &'static str) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
    let port = listener.local_addr().expect("local addr").port();
    thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            thread::spawn(move || connection(stream, status));
        }
    });
    port
}

fn connection(stream: TcpStream, status: &str) {
    let _ = stream.set_nodelay(true);
    let Ok(read_half) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(read_half);
    let mut writer = stream;
    let body = "hello, world\n";
    let mut line = String::new();
    loop {
        // Request line, then headers up to the blank line; GET requests carry no body.
        line.clear();
        match reader.read_line(&mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) if line.trim().is_empty() => continue,
            Ok(_) => {}
        }
        let mut close = false;
        loop {
            line.clear();
            match reader.read_line(&mut line) {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
            let header = line.trim();
            if header.is_empty() {
                break;
            }
            if let Some((name, value)) = header.split_once(':') {
                close |= name.trim().eq_ignore_ascii_case("connection")
                    && value.trim().eq_ignore_ascii_case("close");
            }
        }
        let response = format!(
            "HTTP/1.1 {status}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n{}\r\n{body}",
            body.len(),
            if close { "Connection: close\r\n" } else { "" },
        );
        if writer.write_all(response.as_bytes()).is_err() || close {
            return;
        }
    }
}

// ---------------------------------------------------------------- running the tools

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
    let how = match tool {
        LoadTool::Wrk => "apt-get install wrk",
        LoadTool::Oha => "cargo install oha --locked",
    };
    panic!("`{name}` is not installed (not on PATH nor in ~/.cargo/bin); install it with `{how}`");
}

fn version(tool: LoadTool, program: &Path) -> String {
    // wrk exits 1 after printing its version; only the text matters.
    let out = Command::new(program)
        .args(tool.version_args())
        .output()
        .expect("run version");
    version_line(
        tool,
        &String::from_utf8_lossy(&out.stdout),
        &String::from_utf8_lossy(&out.stderr),
    )
}

fn run(tool: LoadTool, spec: &LoadSpec) -> LoadReport {
    let program = program(tool);
    let scratch = tempfile::tempdir().expect("scratch dir");
    let args = argv(tool, &program, spec, scratch.path()).expect("argv");
    let out = Command::new(&args[0])
        .args(&args[1..])
        .output()
        .expect("run load tool");
    let stdout = String::from_utf8_lossy(&out.stdout);
    // Shown on failure (and with --nocapture) so a changed report format can be seen.
    eprintln!(
        "{args:?}\n--- stdout\n{stdout}\n--- stderr\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success(),
        "{} failed: {}",
        tool.name(),
        out.status
    );
    let report = parse(tool, &stdout, &version(tool, &program)).expect("parse report");
    eprintln!("{report:#?}");
    report
}

fn spec(url: &str) -> LoadSpec<'_> {
    LoadSpec {
        url,
        connections: 4,
        threads: 2,
        duration: Duration::from_secs(1),
        keep_alive: true,
        rate: None,
        timeout: Duration::from_secs(2),
    }
}

fn assert_sane(r: &LoadReport, tool: LoadTool) {
    assert_eq!(r.tool, tool.name());
    assert!(r.version.contains(tool.name()), "{r:?}");
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
}

fn ok_run(tool: LoadTool) {
    let url = format!("http://127.0.0.1:{}/", serve("200 OK"));
    let r = run(tool, &spec(&url));
    assert_sane(&r, tool);
    assert_eq!(r.non_2xx, 0, "{r:?}");
}

fn error_run(tool: LoadTool) {
    let url = format!("http://127.0.0.1:{}/", serve("500 Internal Server Error"));
    let r = run(tool, &spec(&url));
    assert_sane(&r, tool);
    assert_eq!(r.non_2xx, r.requests, "{r:?}");
}

fn no_keep_alive_run(tool: LoadTool) {
    let url = format!("http://127.0.0.1:{}/", serve("200 OK"));
    let r = run(
        tool,
        &LoadSpec {
            keep_alive: false,
            ..spec(&url)
        },
    );
    assert_sane(&r, tool);
    assert_eq!(r.non_2xx, 0, "{r:?}");
}

// ---------------------------------------------------------------- tests

#[test]
fn wrk_ok() {
    ok_run(LoadTool::Wrk);
}

#[test]
fn oha_ok() {
    ok_run(LoadTool::Oha);
}

#[test]
fn wrk_500_is_non_2xx_not_errors() {
    error_run(LoadTool::Wrk);
}

#[test]
fn oha_500_is_non_2xx_not_errors() {
    error_run(LoadTool::Oha);
}

#[test]
fn wrk_without_keep_alive() {
    no_keep_alive_run(LoadTool::Wrk);
}

#[test]
fn oha_without_keep_alive() {
    no_keep_alive_run(LoadTool::Oha);
}

#[test]
fn oha_holds_a_fixed_rate() {
    let url = format!("http://127.0.0.1:{}/", serve("200 OK"));
    let r = run(
        LoadTool::Oha,
        &LoadSpec {
            rate: Some(50),
            duration: Duration::from_secs(2),
            ..spec(&url)
        },
    );
    assert!((80..=120).contains(&r.requests), "{r:?}");
    assert!(r.errors.is_empty(), "{r:?}");
    assert_eq!(r.non_2xx, 0, "{r:?}");
}

#[test]
fn wrk_refuses_a_fixed_rate() {
    let program = program(LoadTool::Wrk);
    let scratch = tempfile::tempdir().expect("scratch dir");
    let err = argv(
        LoadTool::Wrk,
        &program,
        &LoadSpec {
            rate: Some(50),
            ..spec("http://127.0.0.1:1/")
        },
        scratch.path(),
    )
    .expect_err("wrk has no fixed rate");
    assert!(err.to_string().contains("oha"), "{err}");
}
