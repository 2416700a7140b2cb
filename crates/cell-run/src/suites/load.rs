//! Load generator drivers: the command line for `wrk` or `oha`, and their reports parsed
//! into one [`LoadReport`].
//!
//! `wrk` is asked for its figures through a Lua `done` hook that prints one JSON line, so
//! nothing depends on the layout of its human-readable summary. `oha` prints JSON itself.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use cell_schema::{Latency, LoadReport};
use serde::Deserialize;

/// A supported load generator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoadTool {
    /// `wrk` (tested with Debian's 4.1.0).
    Wrk,
    /// `oha` (tested with 1.16.0, installed by `cargo install oha --locked`).
    Oha,
}

impl LoadTool {
    /// The tool's name, which is also its program name.
    pub fn name(self) -> &'static str {
        match self {
            LoadTool::Wrk => "wrk",
            LoadTool::Oha => "oha",
        }
    }

    /// The tool named `s` (`wrk` or `oha`).
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "wrk" => Some(LoadTool::Wrk),
            "oha" => Some(LoadTool::Oha),
            _ => None,
        }
    }

    /// Arguments that make the tool print its version (see [`version_line`]).
    pub fn version_args(self) -> &'static [&'static str] {
        &["--version"]
    }
}

/// What one load run asks of the tool.
#[derive(Clone, Copy, Debug)]
pub struct LoadSpec<'a> {
    /// `http://` or `https://` URL to request.
    pub url: &'a str,
    /// Connections held open at once.
    pub connections: u32,
    /// Threads of the load generator. `wrk` spreads the connections evenly over them (so
    /// `connections` must be a multiple of `threads`). `oha` ignores it: its tokio runtime
    /// sizes itself (one worker per physical core unless `--worker-threads` says otherwise).
    pub threads: u32,
    /// How long to send requests. `wrk` counts whole seconds only.
    pub duration: Duration,
    /// Reuse connections (HTTP/1.1 keep-alive); when false every request opens its own.
    pub keep_alive: bool,
    /// A fixed total request rate per second, or `None` to send as fast as responses come
    /// back. Only `oha` can hold a rate.
    pub rate: Option<u32>,
    /// Per-request timeout. `wrk` counts whole seconds only.
    pub timeout: Duration,
}

/// Why a load run could not be set up or its report not read.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The spec asks for something the tool cannot do.
    #[error("{tool} cannot {what}")]
    Unsupported {
        /// The tool's name.
        tool: &'static str,
        /// What it cannot do, and what to do instead.
        what: String,
    },
    /// The `wrk` report script could not be written.
    #[error("could not write the wrk report script {}: {source}", path.display())]
    Script {
        /// Where it was to be written.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The tool's output holds no report at all.
    #[error("{tool} printed no JSON report ({why}): {excerpt}")]
    NoReport {
        /// The tool's name.
        tool: &'static str,
        /// The likely reason.
        why: &'static str,
        /// The start of what it printed.
        excerpt: String,
    },
    /// The report is there but not in the shape expected.
    #[error("{tool} printed a report cell cannot read ({detail}): {excerpt}")]
    BadReport {
        /// The tool's name.
        tool: &'static str,
        /// What is wrong with it.
        detail: String,
        /// The start of the report.
        excerpt: String,
    },
}

/// Prefix of the line the `wrk` script prints; nothing wrk prints itself starts with it.
const WRK_MARKER: &str = "CELL-WRK-JSON ";

/// File name of the `wrk` script inside the scratch directory.
const WRK_SCRIPT_NAME: &str = "cell-report.lua";

/// The `wrk` script: only a `done` hook, so wrk's request loop stays the plain built-in one
/// (no `request`/`response` hooks, which would cost Lua calls per request). `%.0f` rather
/// than `%d` because every value is a Lua number (a double) and `%.0f` is exact for integers
/// up to 2^53 whatever the Lua version.
const WRK_SCRIPT: &str = r#"-- Written by cell: wrk's own figures as one JSON line once the run is over.
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'CELL-WRK-JSON {"duration_us":%.0f,"requests":%.0f,"bytes":%.0f,' ..
    '"errors":{"connect":%.0f,"read":%.0f,"write":%.0f,"status":%.0f,"timeout":%.0f},' ..
    '"latency_us":{"p50":%.0f,"p90":%.0f,"p99":%.0f,"p99_9":%.0f,"max":%.0f}}\n',
    summary.duration, summary.requests, summary.bytes,
    e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99),
    latency:percentile(99.9), latency.max))
  io.flush()
end
"#;

/// Builds the argv (program first) for one run. `scratch` is a directory where the `wrk`
/// Lua script can be written.
///
/// Errs when the spec asks for something the tool cannot do: a fixed rate from `wrk` (use
/// `oha`), fractional seconds from `wrk`, connections that `wrk` cannot spread evenly over
/// its threads, no connections, or a URL that is not `http://`/`https://`.
pub fn argv(
    tool: LoadTool,
    program: &Path,
    spec: &LoadSpec,
    scratch: &Path,
) -> Result<Vec<OsString>, LoadError> {
    let unsupported = |what: String| LoadError::Unsupported {
        tool: tool.name(),
        what,
    };
    if !(spec.url.starts_with("http://") || spec.url.starts_with("https://")) {
        return Err(unsupported(format!(
            "load `{}`: only http:// and https:// URLs",
            spec.url
        )));
    }
    if spec.connections == 0 {
        return Err(unsupported("run with 0 connections".into()));
    }
    if spec.duration.is_zero() {
        return Err(unsupported("run for 0 seconds".into()));
    }
    let mut out: Vec<OsString> = vec![program.into()];
    let mut push = |a: &str| out.push(a.into());
    match tool {
        LoadTool::Wrk => {
            if let Some(rate) = spec.rate {
                return Err(unsupported(format!(
                    "hold a fixed rate ({rate} requests/s): it has no fixed-rate mode; use oha"
                )));
            }
            let uneven = spec.threads == 0 || !spec.connections.is_multiple_of(spec.threads);
            if uneven {
                return Err(unsupported(format!(
                    "spread {} connections evenly over {} threads: it gives each thread \
                     connections/threads and drops the rest",
                    spec.connections, spec.threads
                )));
            }
            let duration = whole_seconds(spec.duration).ok_or_else(|| {
                unsupported(format!("run for {:?}: whole seconds only", spec.duration))
            })?;
            let timeout = whole_seconds(spec.timeout).ok_or_else(|| {
                unsupported(format!(
                    "time out after {:?}: whole seconds only",
                    spec.timeout
                ))
            })?;
            let script = scratch.join(WRK_SCRIPT_NAME);
            std::fs::write(&script, WRK_SCRIPT).map_err(|source| LoadError::Script {
                path: script.clone(),
                source,
            })?;
            push("-t");
            push(&spec.threads.to_string());
            push("-c");
            push(&spec.connections.to_string());
            push("-d");
            push(&format!("{duration}s"));
            push("--timeout");
            push(&format!("{timeout}s"));
            if !spec.keep_alive {
                push("-H");
                push("Connection: close");
            }
            out.push("-s".into());
            out.push(script.into());
            out.push(spec.url.into());
        }
        LoadTool::Oha => {
            if spec.timeout.is_zero() {
                return Err(unsupported("time out after 0 seconds".into()));
            }
            // Flags as in oha 1.16.0. `-w` lets requests in flight at the deadline finish:
            // without it they are aborted and reported as errors ("aborted due to deadline"),
            // which would make every clean run look faulty. `threads` is not passed: oha
            // runs on tokio and its connections are not tied to threads the way wrk's are.
            push("--no-tui");
            push("--output-format");
            push("json");
            push("-c");
            push(&spec.connections.to_string());
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
            push(spec.url);
        }
    }
    Ok(out)
}

/// Parses what the tool printed on stdout into the report; `version` is stored as given
/// (the line [`version_line`] returned).
///
/// `requests` counts responses of any status and `rps` is responses over the tool's own
/// measured duration (wrk overshoots `-d` by about 0.1 s, as it checks the deadline every
/// 100 ms; oha waits for the requests in flight). `wrk` only reports statuses above 399, so
/// a 3xx is not in `non_2xx` for wrk; oha reports every status.
pub fn parse(tool: LoadTool, stdout: &str, version: &str) -> Result<LoadReport, LoadError> {
    let parsed = match tool {
        LoadTool::Wrk => parse_wrk(stdout)?,
        LoadTool::Oha => parse_oha(stdout)?,
    };
    // Responses over the tool's own duration for both tools. oha's `requestsPerSec` also
    // counts requests that failed, so it is not used.
    let rps = if parsed.duration_s > 0.0 {
        parsed.requests as f64 / parsed.duration_s
    } else {
        0.0
    };
    Ok(LoadReport {
        tool: tool.name().to_owned(),
        version: version.to_owned(),
        duration_s: parsed.duration_s,
        requests: parsed.requests,
        errors: parsed.errors,
        non_2xx: parsed.non_2xx,
        rps,
        latency_ms: parsed.latency_ms,
    })
}

/// Normalises what `<tool> <version_args>` printed (stdout and stderr) into the version line
/// as printed: the first non-empty line, trimmed, from stdout or else stderr. `wrk --version`
/// prints `wrk debian/4.1.0-3+b2 [epoll] Copyright ...` and then its usage, and exits 1; the
/// exit status is not this function's concern.
pub fn version_line(tool: LoadTool, stdout: &str, stderr: &str) -> String {
    stdout
        .lines()
        .chain(stderr.lines())
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map_or_else(
            || format!("{} (printed no version)", tool.name()),
            str::to_owned,
        )
}

/// A report before the figures common to both tools are derived.
struct Parsed {
    duration_s: f64,
    requests: u64,
    errors: BTreeMap<String, u64>,
    non_2xx: u64,
    latency_ms: Latency,
}

/// At most 200 characters of `s`, for error messages.
fn excerpt(s: &str) -> String {
    let mut out: String = s.trim().chars().take(200).collect();
    if s.trim().chars().nth(200).is_some() {
        out.push('…');
    }
    out
}

fn whole_seconds(d: Duration) -> Option<u64> {
    (d.subsec_nanos() == 0 && d.as_secs() > 0).then_some(d.as_secs())
}

/// A duration as `oha` reads it: whole seconds as `Ns`, anything finer in milliseconds.
fn oha_duration(d: Duration) -> String {
    if d.subsec_nanos() == 0 {
        format!("{}s", d.as_secs())
    } else {
        // Sub-millisecond precision means nothing to a load run; round up so it is never 0.
        format!("{}ms", d.as_nanos().div_ceil(1_000_000))
    }
}

#[derive(Deserialize)]
struct WrkJson {
    duration_us: f64,
    requests: u64,
    errors: WrkErrors,
    latency_us: WrkLatency,
}

#[derive(Deserialize)]
struct WrkErrors {
    connect: u64,
    read: u64,
    write: u64,
    status: u64,
    timeout: u64,
}

#[derive(Deserialize)]
struct WrkLatency {
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
    })
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
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `wrk -t 2 -c 4 -d 1s --timeout 2s -s cell-report.lua URL` (wrk debian/4.1.0-3+b2)
    /// against a loopback server answering 200.
    const WRK_OK: &str = r#"Running 1s test @ http://127.0.0.1:40555/
  2 threads and 4 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency    65.52us  115.52us   3.17ms   99.15%
    Req/Sec    30.49k     1.25k   32.48k    71.43%
  63697 requests in 1.10s, 4.74MB read
Requests/sec:  57937.91
Transfer/sec:      4.31MB
CELL-WRK-JSON {"duration_us":1099401,"requests":63697,"bytes":4968366,"errors":{"connect":0,"read":0,"write":0,"status":0,"timeout":0},"latency_us":{"p50":55,"p90":89,"p99":151,"p99_9":2276,"max":3173}}
"#;

    /// The same against a server answering 500 to everything.
    const WRK_500: &str = r#"Running 1s test @ http://127.0.0.1:39845/
  2 threads and 4 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency    55.77us  221.20us   6.09ms   98.30%
    Req/Sec    49.04k    16.49k   64.95k    63.64%
  107142 requests in 1.10s, 9.91MB read
  Non-2xx or 3xx responses: 107142
Requests/sec:  97441.59
Transfer/sec:      9.01MB
CELL-WRK-JSON {"duration_us":1099551,"requests":107142,"bytes":10392774,"errors":{"connect":0,"read":0,"write":0,"status":107142,"timeout":0},"latency_us":{"p50":28,"p90":68,"p99":610,"p99_9":3712,"max":6090}}
"#;

    /// `oha --no-tui --output-format json -c 4 -z 1s -w -t 2s URL` (oha 1.16.0) against a
    /// loopback server answering 200.
    const OHA_OK: &str = r#"{
  "summary": {
    "successRate": 1.0,
    "total": 1.002343783,
    "slowest": 0.004140706,
    "fastest": 0.000017266,
    "average": 0.0000740060269801299,
    "requestsPerSec": 53469.67867610349,
    "totalData": 696735,
    "sizePerRequest": 13,
    "sizePerSec": 695105.8227893454
  },
  "metrics": {
    "success_rate": 1.0,
    "requests_per_sec": 53469.67867610349,
    "latency_ms": {
      "min": 0.017,
      "mean": 0.074,
      "p50": 0.07,
      "p95": 0.108,
      "p99": 0.365,
      "max": 4.141
    }
  },
  "responseTimeHistogram": {
    "0.000017266": 1,
    "0.00042961": 53408,
    "0.000841954": 140,
    "0.0012542979999999998": 13,
    "0.0016666419999999999": 14,
    "0.002078986": 8,
    "0.00249133": 0,
    "0.002903674": 2,
    "0.003316018": 4,
    "0.003728362": 1,
    "0.004140706": 4
  },
  "latencyPercentiles": {
    "p10": 0.000034792,
    "p25": 0.000052719,
    "p50": 0.000070365,
    "p75": 0.000072548,
    "p90": 0.000089724,
    "p95": 0.000107641,
    "p99": 0.000365055,
    "p99.9": 0.000653985,
    "p99.99": 0.003300562
  },
  "firstByteHistogram": {
    "0.000017196": 1,
    "0.00042953999999999996": 53408,
    "0.000841884": 140,
    "0.0012542279999999998": 14,
    "0.0016665719999999998": 13,
    "0.002078916": 8,
    "0.00249126": 0,
    "0.002903604": 2,
    "0.003315948": 4,
    "0.003728292": 1,
    "0.004140636": 4
  },
  "firstBytePercentiles": {
    "p10": 0.000034722,
    "p25": 0.000052649,
    "p50": 0.000070295,
    "p75": 0.000072478,
    "p90": 0.000089654,
    "p95": 0.000107581,
    "p99": 0.000364985,
    "p99.9": 0.000653905,
    "p99.99": 0.003300492
  },
  "rps": {
    "mean": 53439.58539018116,
    "stddev": 6002.93777666137,
    "max": 56535.06793079403,
    "min": 21492.87069426994,
    "percentiles": {
      "p10": 50840.2966621741,
      "p25": 54505.97930592954,
      "p50": 55136.80707269655,
      "p75": 55551.04029582402,
      "p90": 55845.28019841123,
      "p95": 55957.39135466315,
      "p99": 56228.102222085865,
      "p99.9": 56535.06793079403,
      "p99.99": 56535.06793079403
    }
  },
  "details": {
    "DNSDialup": {
      "average": 0.000098199,
      "fastest": 0.000035783,
      "slowest": 0.000196714
    },
    "DNSLookup": {
      "average": 0.00001466675,
      "fastest": 7.21e-7,
      "slowest": 0.000043084
    },
    "firstByte": {
      "average": 0.00007393555604067557,
      "fastest": 0.000017196,
      "slowest": 0.004140636
    }
  },
  "statusCodeDistribution": {
    "200": 53595
  },
  "errorDistribution": {}
}"#;

    /// The same (`-c 2`) against a port nobody listens on: no response at all.
    const OHA_REFUSED: &str = r#"{
  "summary": {
    "successRate": 0.0,
    "total": 1.005039895,
    "slowest": null,
    "fastest": null,
    "average": null,
    "requestsPerSec": 47189.17153035005,
    "totalData": 0,
    "sizePerRequest": null,
    "sizePerSec": 0.0
  },
  "metrics": {
    "success_rate": 0.0,
    "requests_per_sec": 47189.17153035005,
    "latency_ms": {
      "min": null,
      "mean": null,
      "p50": null,
      "p95": null,
      "p99": null,
      "max": null
    }
  },
  "responseTimeHistogram": {
    "NaN": 0
  },
  "latencyPercentiles": {
    "p10": null,
    "p25": null,
    "p50": null,
    "p75": null,
    "p90": null,
    "p95": null,
    "p99": null,
    "p99.9": null,
    "p99.99": null
  },
  "firstByteHistogram": {
    "NaN": 0
  },
  "firstBytePercentiles": {
    "p10": null,
    "p25": null,
    "p50": null,
    "p75": null,
    "p90": null,
    "p95": null,
    "p99": null,
    "p99.9": null,
    "p99.99": null
  },
  "rps": {
    "mean": null,
    "stddev": null,
    "max": null,
    "min": null,
    "percentiles": {
      "p10": null,
      "p25": null,
      "p50": null,
      "p75": null,
      "p90": null,
      "p95": null,
      "p99": null,
      "p99.9": null,
      "p99.99": null
    }
  },
  "details": {
    "DNSDialup": {
      "average": null,
      "fastest": null,
      "slowest": null
    },
    "DNSLookup": {
      "average": null,
      "fastest": null,
      "slowest": null
    },
    "firstByte": {
      "average": null,
      "fastest": null,
      "slowest": null
    }
  },
  "statusCodeDistribution": {},
  "errorDistribution": {
    "Connection refused (os error 111)": 47427
  }
}"#;

    const WRK_VERSION: &str = "wrk debian/4.1.0-3+b2 [epoll] Copyright (C) 2012 Will Glozer";

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    fn spec(keep_alive: bool, rate: Option<u32>) -> LoadSpec<'static> {
        LoadSpec {
            url: "http://127.0.0.1:8080/",
            connections: 4,
            threads: 2,
            duration: Duration::from_secs(3),
            keep_alive,
            rate,
            timeout: Duration::from_secs(2),
        }
    }

    fn strings(v: &[OsString]) -> Vec<String> {
        v.iter().map(|a| a.to_string_lossy().into_owned()).collect()
    }

    #[test]
    fn tool_names_round_trip() {
        for tool in [LoadTool::Wrk, LoadTool::Oha] {
            assert_eq!(LoadTool::parse(tool.name()), Some(tool));
            assert_eq!(tool.version_args(), ["--version"]);
        }
        assert_eq!(LoadTool::parse("ab"), None);
    }

    #[test]
    fn wrk_report() {
        let r = parse(LoadTool::Wrk, WRK_OK, WRK_VERSION).expect("parse");
        assert_eq!(r.tool, "wrk");
        assert_eq!(r.version, WRK_VERSION);
        assert!(close(r.duration_s, 1.099_401));
        assert_eq!(r.requests, 63_697);
        assert!(r.errors.is_empty());
        assert_eq!(r.non_2xx, 0);
        assert!(close(r.rps, 63_697.0 / 1.099_401));
        let l = &r.latency_ms;
        assert!(close(l.p50, 0.055) && close(l.p90, 0.089) && close(l.p99, 0.151));
        assert!(close(l.p99_9, 2.276) && close(l.max, 3.173));
    }

    #[test]
    fn wrk_status_errors_are_non_2xx_responses() {
        let r = parse(LoadTool::Wrk, WRK_500, WRK_VERSION).expect("parse");
        assert_eq!(r.requests, 107_142);
        assert_eq!(r.non_2xx, 107_142);
        assert!(r.errors.is_empty());
    }

    #[test]
    fn wrk_socket_errors_are_kept_by_kind() {
        let line = r#"CELL-WRK-JSON {"duration_us":2000000,"requests":10,"bytes":0,"errors":{"connect":1,"read":2,"write":0,"status":3,"timeout":4},"latency_us":{"p50":1,"p90":2,"p99":3,"p99_9":4,"max":5}}"#;
        let r = parse(LoadTool::Wrk, line, "wrk").expect("parse");
        let want: BTreeMap<String, u64> = [
            ("connect".to_owned(), 1),
            ("read".to_owned(), 2),
            ("timeout".to_owned(), 4),
        ]
        .into_iter()
        .collect();
        assert_eq!(r.errors, want);
        assert_eq!(r.non_2xx, 3);
        assert!(close(r.rps, 5.0));
    }

    #[test]
    fn wrk_without_marker_is_an_error() {
        let head = WRK_OK.lines().next().unwrap_or_default();
        let err = parse(LoadTool::Wrk, head, WRK_VERSION).expect_err("no marker");
        assert!(matches!(err, LoadError::NoReport { .. }), "{err:?}");
        let msg = err.to_string();
        assert!(
            msg.starts_with("wrk printed no JSON report (the done hook did not run): Running 1s"),
            "{msg}"
        );
        let err = parse(LoadTool::Wrk, "CELL-WRK-JSON {\"requests\":1}", "").expect_err("bad");
        assert!(matches!(err, LoadError::BadReport { .. }), "{err:?}");
    }

    #[test]
    fn oha_report() {
        let r = parse(LoadTool::Oha, OHA_OK, "oha 1.16.0").expect("parse");
        assert_eq!(r.tool, "oha");
        assert_eq!(r.version, "oha 1.16.0");
        assert!(close(r.duration_s, 1.002_343_783));
        assert_eq!(r.requests, 53_595);
        assert!(r.errors.is_empty());
        assert_eq!(r.non_2xx, 0);
        assert!(close(r.rps, 53_595.0 / 1.002_343_783));
        let l = &r.latency_ms;
        assert!(close(l.p50, 0.070_365) && close(l.p90, 0.089_724));
        assert!(close(l.p99, 0.365_055) && close(l.p99_9, 0.653_985));
        assert!(close(l.max, 4.140_706));
    }

    #[test]
    fn oha_text_before_the_json_is_skipped() {
        let noisy = format!("warning: something odd\n{OHA_OK}");
        let r = parse(LoadTool::Oha, &noisy, "oha").expect("parse");
        assert_eq!(r.requests, 53_595);
    }

    #[test]
    fn oha_with_no_response_reads_zero_latencies() {
        let r = parse(LoadTool::Oha, OHA_REFUSED, "oha").expect("parse");
        assert_eq!(r.requests, 0);
        assert!(close(r.rps, 0.0));
        assert!(close(r.latency_ms.p50, 0.0) && close(r.latency_ms.max, 0.0));
        assert_eq!(
            r.errors.get("Connection refused (os error 111)"),
            Some(&47_427)
        );
    }

    #[test]
    fn oha_counts_non_2xx_by_status() {
        let json = OHA_OK.replace(
            "\"200\": 53595",
            "\"200\": 10, \"204\": 1, \"301\": 2, \"404\": 3, \"503\": 4",
        );
        let r = parse(LoadTool::Oha, &json, "oha").expect("parse");
        assert_eq!(r.requests, 20);
        assert_eq!(r.non_2xx, 9);
    }

    #[test]
    fn oha_missing_field_or_json_is_an_error() {
        let err = parse(LoadTool::Oha, "error: connection refused", "oha").expect_err("no json");
        assert!(matches!(err, LoadError::NoReport { .. }), "{err:?}");
        assert!(
            err.to_string().starts_with("oha printed no JSON report"),
            "{err}"
        );
        let json = OHA_OK.replace("\"p99.9\"", "\"p99_9\"");
        let err = parse(LoadTool::Oha, &json, "oha").expect_err("missing p99.9");
        assert!(
            err.to_string().contains("no `latencyPercentiles.p99.9`"),
            "{err}"
        );
        let json = OHA_OK.replace("\"total\": 1.002343783", "\"total\": \"soon\"");
        let err = parse(LoadTool::Oha, &json, "oha").expect_err("total not a number");
        assert!(err.to_string().contains("summary.total"), "{err}");
        let err = parse(LoadTool::Oha, "{\"summary\": ", "oha").expect_err("cut short");
        assert!(matches!(err, LoadError::BadReport { .. }), "{err:?}");
    }

    #[test]
    fn wrk_argv_writes_its_script() {
        let dir = tempfile::tempdir().expect("tempdir");
        let wrk = Path::new("/usr/bin/wrk");
        let script = dir.path().join(WRK_SCRIPT_NAME);
        let on = argv(LoadTool::Wrk, wrk, &spec(true, None), dir.path()).expect("argv");
        let script_arg = script.to_string_lossy().into_owned();
        assert_eq!(
            strings(&on),
            [
                "/usr/bin/wrk",
                "-t",
                "2",
                "-c",
                "4",
                "-d",
                "3s",
                "--timeout",
                "2s",
                "-s",
                &script_arg,
                "http://127.0.0.1:8080/",
            ]
        );
        let text = std::fs::read_to_string(&script).expect("script written");
        assert!(text.contains("done = function(summary, latency, requests)"));
        assert!(text.contains(WRK_MARKER));
        let off = strings(&argv(LoadTool::Wrk, wrk, &spec(false, None), dir.path()).expect("argv"));
        let h = off.iter().position(|a| a == "-H").expect("-H");
        assert_eq!(off[h + 1], "Connection: close");
        assert_eq!(off.len(), on.len() + 2);
    }

    #[test]
    fn wrk_refuses_what_it_cannot_do() {
        let dir = tempfile::tempdir().expect("tempdir");
        let wrk = Path::new("wrk");
        let err = argv(LoadTool::Wrk, wrk, &spec(true, Some(100)), dir.path()).expect_err("rate");
        assert!(err.to_string().contains("use oha"), "{err}");
        let half = LoadSpec {
            duration: Duration::from_millis(1500),
            ..spec(true, None)
        };
        let err = argv(LoadTool::Wrk, wrk, &half, dir.path()).expect_err("1.5 s");
        assert!(err.to_string().contains("whole seconds"), "{err}");
        let uneven = LoadSpec {
            connections: 5,
            ..spec(true, None)
        };
        assert!(argv(LoadTool::Wrk, wrk, &uneven, dir.path()).is_err());
        let ftp = LoadSpec {
            url: "ftp://127.0.0.1/",
            ..spec(true, None)
        };
        assert!(argv(LoadTool::Wrk, wrk, &ftp, dir.path()).is_err());
        // Nothing was refused after writing: the script only appears for a valid spec.
        assert!(!dir.path().join(WRK_SCRIPT_NAME).exists());
    }

    #[test]
    fn oha_argv() {
        let dir = Path::new("/nonexistent");
        let oha = Path::new("oha");
        let on = strings(&argv(LoadTool::Oha, oha, &spec(true, None), dir).expect("argv"));
        assert_eq!(
            on,
            [
                "oha",
                "--no-tui",
                "--output-format",
                "json",
                "-c",
                "4",
                "-z",
                "3s",
                "-w",
                "-t",
                "2s",
                "http://127.0.0.1:8080/",
            ]
        );
        let off = LoadSpec {
            duration: Duration::from_millis(1500),
            ..spec(false, Some(50))
        };
        let off = strings(&argv(LoadTool::Oha, oha, &off, dir).expect("argv"));
        assert_eq!(
            off,
            [
                "oha",
                "--no-tui",
                "--output-format",
                "json",
                "-c",
                "4",
                "-z",
                "1500ms",
                "-w",
                "-t",
                "2s",
                "--disable-keepalive",
                "-q",
                "50",
                "http://127.0.0.1:8080/",
            ]
        );
    }

    #[test]
    fn version_lines() {
        let wrk_out = format!("{WRK_VERSION}\nUsage: wrk <options> <url>\n  Options:\n");
        assert_eq!(version_line(LoadTool::Wrk, &wrk_out, ""), WRK_VERSION);
        assert_eq!(
            version_line(LoadTool::Oha, "\n  oha 1.16.0  \n", ""),
            "oha 1.16.0"
        );
        assert_eq!(
            version_line(LoadTool::Oha, " \n", "oha 1.16.0\n"),
            "oha 1.16.0"
        );
        assert_eq!(
            version_line(LoadTool::Wrk, "", ""),
            "wrk (printed no version)"
        );
    }
}
