//! `wrk`: its command line, the Lua script that sends the request and prints the report
//! as one JSON line from its `done` hook, and that line parsed.

use super::*;

/// The `wrk` driver.
pub(super) struct Wrk;

impl LoadDriver for Wrk {
    fn name(&self) -> &'static str {
        "wrk"
    }

    fn version_args(&self) -> &'static [&'static str] {
        &["--version"]
    }

    fn effective(&self, spec: &LoadSpec) -> Result<Effective, LoadError> {
        let threads = spec.threads.min(spec.connections);
        Ok(Effective {
            connections: spec.connections - spec.connections % threads,
            threads: Some(threads),
        })
    }

    fn argv(
        &self,
        out: &mut Vec<OsString>,
        spec: &LoadSpec,
        counts: Effective,
        scratch: &Path,
    ) -> Result<(), LoadError> {
        wrk_argv(out, spec, counts, scratch)
    }

    fn parse(&self, stdout: &str, _scratch: &Path) -> Result<Parsed, LoadError> {
        parse_wrk(stdout)
    }

    fn record(&self, report: &mut LoadReport, spec: &LoadSpec) -> Result<(), LoadError> {
        report.keep_alive = Some(spec.keep_alive);
        Ok(())
    }
}

/// `wrk`'s arguments after the program: whole seconds (the table's rule, checked before),
/// no fixed rate, the script.
fn wrk_argv(
    out: &mut Vec<OsString>,
    spec: &LoadSpec,
    counts: Effective,
    scratch: &Path,
) -> Result<(), LoadError> {
    let (duration, timeout) = (spec.duration.as_secs(), spec.timeout.as_secs());
    let script = scratch.join(WRK_SCRIPT_NAME);
    std::fs::write(&script, wrk_script(spec.request)).map_err(|source| LoadError::Scratch {
        what: "write the wrk report script",
        path: script.clone(),
        source,
    })?;
    let threads = counts.threads.unwrap_or(1);
    for a in [
        "-t".to_owned(),
        threads.to_string(),
        "-c".to_owned(),
        counts.connections.to_string(),
        "-d".to_owned(),
        format!("{duration}s"),
        "--timeout".to_owned(),
        format!("{timeout}s"),
    ] {
        out.push(a.into());
    }
    if !spec.keep_alive {
        out.push("-H".into());
        out.push("Connection: close".into());
    }
    out.push("-s".into());
    out.push(script.into());
    out.push(spec.url.into());
    Ok(())
}

/// The `wrk` script: the request at top level (`wrk.method`, `wrk.headers[...]`,
/// `wrk.body`; wrk builds it once and adds `Content-Length` itself), then the `done` hook.
pub(super) fn wrk_script(request: &LoadRequest) -> String {
    let mut s = String::from("-- Written by cell: the request wrk sends, then its report.\n");
    if request.method != Method::Get {
        let _ = writeln!(
            s,
            "wrk.method = {}",
            lua_string(request.method.as_str().as_bytes())
        );
    }
    for (name, value) in &request.headers {
        let _ = writeln!(
            s,
            "wrk.headers[{}] = {}",
            lua_string(name.as_bytes()),
            lua_string(value.as_bytes())
        );
    }
    if let Some(body) = &request.body {
        let _ = writeln!(s, "wrk.body = {}", lua_string(body));
    }
    s.push_str(WRK_DONE);
    s
}

/// `bytes` as a double-quoted Lua string: printable ASCII as is, and every other byte,
/// quote and backslash as a three-digit decimal escape (`\034`), which Lua 5.1 and `LuaJIT`
/// read as that byte whatever follows it.
pub(super) fn lua_string(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() + 2);
    s.push('"');
    for &b in bytes {
        if (b' '..=b'~').contains(&b) && !matches!(b, b'"' | b'\'' | b'\\') {
            s.push(char::from(b));
        } else {
            let _ = write!(s, "\\{b:03}");
        }
    }
    s.push('"');
    s
}

#[derive(Deserialize)]
pub(super) struct WrkJson {
    duration_us: f64,
    requests: u64,
    errors: WrkErrors,
    latency_us: WrkLatency,
}

#[derive(Deserialize)]
pub(super) struct WrkErrors {
    connect: u64,
    read: u64,
    write: u64,
    status: u64,
    timeout: u64,
}

#[derive(Deserialize)]
pub(super) struct WrkLatency {
    p50: f64,
    p90: f64,
    p99: f64,
    p99_9: f64,
    max: f64,
}

fn parse_wrk(stdout: &str) -> Result<Parsed, LoadError> {
    let line = stdout
        .lines()
        .find_map(|l| l.trim_start().strip_prefix(WRK_MARKER))
        .ok_or_else(|| LoadError::NoReport {
            tool: "wrk",
            why: "the done hook did not run",
            excerpt: excerpt(stdout),
        })?;
    let w: WrkJson = serde_json::from_str(line.trim()).map_err(|e| LoadError::BadReport {
        tool: "wrk",
        detail: e.to_string(),
        excerpt: excerpt(line),
    })?;
    let us_to_ms = |us: f64| us / 1000.0;
    // wrk's `status` errors are responses (status > 399), not failed requests: they are
    // already in `requests`, so they go to `non_2xx`. wrk does not count 3xx at all.
    let errors = [
        ("connect", w.errors.connect),
        ("read", w.errors.read),
        ("write", w.errors.write),
        ("timeout", w.errors.timeout),
    ]
    .into_iter()
    .filter(|&(_, n)| n > 0)
    .map(|(k, n)| (k.to_owned(), n))
    .collect();
    Ok(Parsed {
        duration_s: w.duration_us / 1e6,
        requests: w.requests,
        errors,
        non_2xx: w.errors.status,
        latency_ms: Latency {
            p50: us_to_ms(w.latency_us.p50),
            p90: us_to_ms(w.latency_us.p90),
            p99: us_to_ms(w.latency_us.p99),
            p99_9: us_to_ms(w.latency_us.p99_9),
            max: us_to_ms(w.latency_us.max),
        },
        keep_alive_requests: None,
        request_cap_hit: None,
    })
}
