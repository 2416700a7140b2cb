//! `oha`: its command line and its JSON report parsed.

use cell_schema::LoadReport;

use super::{
    BTreeMap, Duration, Effective, Latency, LoadDriver, LoadError, LoadSpec, Method, OsString,
    Parsed, Path, excerpt, write_body,
};

/// The `oha` driver.
pub(super) struct Oha;

impl LoadDriver for Oha {
    fn name(&self) -> &'static str {
        "oha"
    }

    fn version_args(&self) -> &'static [&'static str] {
        &["--version"]
    }

    fn effective(&self, spec: &LoadSpec) -> Result<Effective, LoadError> {
        Ok(Effective {
            connections: spec.connections,
            threads: None,
        })
    }

    fn argv(
        &self,
        out: &mut Vec<OsString>,
        spec: &LoadSpec,
        counts: Effective,
        scratch: &Path,
    ) -> Result<(), LoadError> {
        oha_argv(out, spec, counts, scratch)
    }

    fn parse(&self, stdout: &str, _scratch: &Path) -> Result<Parsed, LoadError> {
        parse_oha(stdout)
    }

    fn record(&self, report: &mut LoadReport, spec: &LoadSpec) -> Result<(), LoadError> {
        report.keep_alive = Some(spec.keep_alive);
        Ok(())
    }
}

/// `oha`'s arguments after the program (flags as in oha 1.16.0). `-w` lets requests in
/// flight at the deadline finish: without it they are aborted and reported as errors
/// ("aborted due to deadline"), which would make every clean run look faulty. `threads` is
/// not passed: oha runs on tokio and its connections are not tied to threads the way wrk's
/// are. The method, headers and type are passed only when the request has them, so a plain
/// GET runs the command it always ran.
fn oha_argv(
    out: &mut Vec<OsString>,
    spec: &LoadSpec,
    counts: Effective,
    scratch: &Path,
) -> Result<(), LoadError> {
    if spec.timeout.is_zero() {
        return Err(LoadError::Unsupported {
            tool: "oha",
            what: "time out after 0 seconds".to_owned(),
        });
    }
    let mut push = |a: &str| out.push(a.into());
    push("--no-tui");
    push("--output-format");
    push("json");
    push("-c");
    push(&counts.connections.to_string());
    push("-z");
    push(&oha_duration(spec.duration));
    push("-w");
    push("-t");
    push(&oha_duration(spec.timeout));
    if !spec.keep_alive {
        push("--disable-keepalive");
    }
    if let Some(rate) = spec.rate {
        push("-q");
        push(&rate.to_string());
    }
    let request = spec.request;
    if request.method != Method::Get {
        push("-m");
        push(request.method.as_str());
    }
    for (name, value) in request.other_headers() {
        push("-H");
        push(&format!("{name}: {value}"));
    }
    if let Some(t) = request.content_type() {
        push("-T");
        push(t);
    }
    if let Some(body) = &request.body {
        let file = write_body(scratch, body)?;
        out.push("-D".into());
        out.push(file.into());
    }
    out.push(spec.url.into());
    Ok(())
}

/// A duration as `oha` reads it: whole seconds as `Ns`, anything finer in milliseconds.
pub(super) fn oha_duration(d: Duration) -> String {
    if d.subsec_nanos() == 0 {
        format!("{}s", d.as_secs())
    } else {
        // Sub-millisecond precision means nothing to a load run; round up so it is never 0.
        format!("{}ms", d.as_nanos().div_ceil(1_000_000))
    }
}

/// Reads `oha --output-format json` (checked against oha 1.16.0). Anything before the first
/// `{` is skipped (a warning line, say); every field used must be present, and a `null`
/// latency (no response at all) reads as 0.
fn parse_oha(stdout: &str) -> Result<Parsed, LoadError> {
    let start = stdout.find('{').ok_or_else(|| LoadError::NoReport {
        tool: "oha",
        why: "no `{` in its output",
        excerpt: excerpt(stdout),
    })?;
    let json = &stdout[start..];
    let bad = |detail: String| LoadError::BadReport {
        tool: "oha",
        detail,
        excerpt: excerpt(json),
    };
    let v: serde_json::Value = serde_json::from_str(json).map_err(|e| bad(e.to_string()))?;
    let field = |path: &[&str]| {
        path.iter()
            .try_fold(&v, |node, key| node.get(key))
            .ok_or_else(|| bad(format!("no `{}`", path.join("."))))
    };
    let seconds = |path: &[&str]| -> Result<f64, LoadError> {
        let node = field(path)?;
        if node.is_null() {
            return Ok(0.0);
        }
        node.as_f64()
            .filter(|s| s.is_finite() && *s >= 0.0)
            .ok_or_else(|| bad(format!("`{}` is {node}, not seconds", path.join("."))))
    };
    let counts = |key: &str| -> Result<Vec<(String, u64)>, LoadError> {
        let map = field(&[key])?
            .as_object()
            .ok_or_else(|| bad(format!("`{key}` is not an object")))?;
        map.iter()
            .map(|(k, n)| {
                n.as_u64()
                    .map(|n| (k.clone(), n))
                    .ok_or_else(|| bad(format!("`{key}.{k}` is {n}, not a count")))
            })
            .collect()
    };
    let ms = |path: &[&str]| seconds(path).map(|s| s * 1000.0);

    let mut requests = 0;
    let mut non_2xx = 0;
    for (code, n) in counts("statusCodeDistribution")? {
        let code: u16 = code
            .parse()
            .map_err(|_| bad(format!("status code `{code}` is not a number")))?;
        requests += n;
        if !(200..300).contains(&code) {
            non_2xx += n;
        }
    }
    let mut errors = BTreeMap::new();
    for (message, n) in counts("errorDistribution")? {
        *errors.entry(message).or_insert(0) += n;
    }
    Ok(Parsed {
        duration_s: seconds(&["summary", "total"])?,
        requests,
        errors,
        non_2xx,
        latency_ms: Latency {
            p50: ms(&["latencyPercentiles", "p50"])?,
            p90: ms(&["latencyPercentiles", "p90"])?,
            p99: ms(&["latencyPercentiles", "p99"])?,
            p99_9: ms(&["latencyPercentiles", "p99.9"])?,
            max: ms(&["summary", "slowest"])?,
        },
        keep_alive_requests: None,
        request_cap_hit: None,
    })
}
