//! Load generator drivers: the command line for `wrk`, `oha` or `ab`, and their reports
//! parsed into one [`LoadReport`].
//!
//! `wrk` is asked for its figures through a Lua `done` hook that prints one JSON line, so
//! nothing depends on the layout of its human-readable summary. `oha` prints JSON itself.
//! `ab` prints text only: its summary lines are read strictly and its percentiles come from
//! the CSV it writes with `-e` (see the `ab` module).

mod ab;
mod oha;
mod wrk;

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fmt::Write as _;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use cell_model::{Durations, LoadToolDef};
use cell_schema::{Latency, LoadReport};
use serde::Deserialize;

/// A load generator: its entry of the load tool table and its driver.
#[derive(Clone, Copy)]
pub struct LoadTool {
    def: &'static LoadToolDef,
    driver: &'static dyn LoadDriver,
}

/// What differs from one load generator to the next; everything else (the checks the table
/// allows, the report's common figures) is this module's. One implementation per module:
/// `wrk.rs`, `oha.rs`, `ab.rs`.
trait LoadDriver: Sync {
    /// The name of its entry in the load tool table.
    fn name(&self) -> &'static str;
    /// Arguments that make the tool print its version (see [`version_line`]).
    fn version_args(&self) -> &'static [&'static str];
    /// The connections and threads it really uses for `spec` (connections above 0).
    fn effective(&self, spec: &LoadSpec) -> Result<Effective, LoadError>;
    /// Its arguments after the program, for a spec the table says it can run.
    fn argv(
        &self,
        out: &mut Vec<OsString>,
        spec: &LoadSpec,
        counts: Effective,
        scratch: &Path,
    ) -> Result<(), LoadError>;
    /// Its report, from its stdout and whatever it wrote in `scratch`.
    fn parse(&self, stdout: &str, scratch: &Path) -> Result<Parsed, LoadError>;
    /// The connection shape of the run into `report`: what was asked, unless the tool
    /// counts it itself.
    fn record(&self, report: &mut LoadReport, spec: &LoadSpec) -> Result<(), LoadError>;
}

/// One driver per entry of the load tool table.
static DRIVERS: [&dyn LoadDriver; 3] = [&wrk::Wrk, &oha::Oha, &ab::Ab];

impl LoadTool {
    /// The tool named `s`: an entry of the load tool table.
    pub fn parse(s: &str) -> Option<Self> {
        let def = cell_model::load_tool(s)?;
        let driver = *DRIVERS.iter().find(|d| d.name() == def.name)?;
        Some(Self { def, driver })
    }

    /// The tool's name, which is also its program name.
    pub fn name(self) -> &'static str {
        self.def.name
    }

    /// Its entry of the load tool table.
    pub fn def(self) -> &'static LoadToolDef {
        self.def
    }

    /// Arguments that make the tool print its version (see [`version_line`]).
    pub fn version_args(self) -> &'static [&'static str] {
        self.driver.version_args()
    }
}

impl PartialEq for LoadTool {
    fn eq(&self, other: &Self) -> bool {
        self.def.name == other.def.name
    }
}

impl Eq for LoadTool {}

impl std::fmt::Debug for LoadTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.def.name)
    }
}

/// An HTTP method a load run can send.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Method {
    /// `GET`
    Get,
    /// `HEAD`
    Head,
    /// `POST`
    Post,
    /// `PUT`
    Put,
    /// `PATCH`
    Patch,
    /// `DELETE`
    Delete,
    /// `OPTIONS`
    Options,
}

impl Method {
    /// Every method, in the order of [`Method::as_str`]'s match.
    pub const ALL: [Method; 7] = [
        Method::Get,
        Method::Head,
        Method::Post,
        Method::Put,
        Method::Patch,
        Method::Delete,
        Method::Options,
    ];

    /// The method as sent on the request line.
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Head => "HEAD",
            Method::Post => "POST",
            Method::Put => "PUT",
            Method::Patch => "PATCH",
            Method::Delete => "DELETE",
            Method::Options => "OPTIONS",
        }
    }

    /// The method written `s` (upper case, as on the request line).
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|m| m.as_str() == s)
    }
}

/// The request a load run sends, the same one over and over on every connection.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoadRequest {
    /// Its method.
    pub method: Method,
    /// Headers beyond those the tool writes itself, by name as sent (sorted, so the command
    /// line and the wrk script come out the same every time). `Content-Type` is one of them,
    /// and is required with a body. `Host`, `Content-Length`, `Connection` and
    /// `Transfer-Encoding` belong to the tool and the spec, and are refused.
    pub headers: BTreeMap<String, String>,
    /// The body, sent with a `Content-Length`; `None` sends no body.
    pub body: Option<Vec<u8>>,
}

/// What [`LoadRequest::get`] lends.
static GET: LoadRequest = LoadRequest {
    method: Method::Get,
    headers: BTreeMap::new(),
    body: None,
};

impl LoadRequest {
    /// `GET` with no header of its own and no body: what the http and soak suites send.
    pub fn get() -> &'static LoadRequest {
        &GET
    }

    /// A `method` request carrying `body` as `content_type`, with no other header.
    pub fn with_body(method: Method, content_type: &str, body: impl Into<Vec<u8>>) -> Self {
        Self {
            method,
            headers: BTreeMap::from([("Content-Type".to_owned(), content_type.to_owned())]),
            body: Some(body.into()),
        }
    }

    /// The `Content-Type` header, whatever the case of its name.
    pub fn content_type(&self) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case("content-type"))
            .map(|(_, v)| v.as_str())
    }

    /// The headers other than `Content-Type`, sorted by name: the tools that take the
    /// content type on a flag of its own (`-T`) get these as `-H`.
    fn other_headers(&self) -> impl Iterator<Item = (&str, &str)> {
        self.headers
            .iter()
            .filter(|(k, _)| !k.eq_ignore_ascii_case("content-type"))
            .map(|(k, v)| (k.as_str(), v.as_str()))
    }
}

/// What one load run asks of the tool.
#[derive(Clone, Copy, Debug)]
pub struct LoadSpec<'a> {
    /// `http://` or `https://` URL to request.
    pub url: &'a str,
    /// Connections held open at once (what a tool really holds: [`effective`]).
    pub connections: u32,
    /// Threads of the load generator. `wrk` gives each thread connections/threads
    /// connections and drops the rest ([`effective`] says what it really runs). `oha` and
    /// `ab` ignore it: oha's tokio runtime sizes itself (one worker per physical core unless
    /// `--worker-threads` says otherwise), and ab has one thread.
    pub threads: u32,
    /// How long to send requests. `wrk` and `ab` count whole seconds only.
    pub duration: Duration,
    /// Reuse connections (keep-alive); when false every request opens its own.
    pub keep_alive: bool,
    /// A fixed total request rate per second, or `None` to send as fast as responses come
    /// back. Only `oha` can hold a rate.
    pub rate: Option<u32>,
    /// Per-request timeout. `wrk` and `ab` count whole seconds only.
    pub timeout: Duration,
    /// The request sent: [`LoadRequest::get`] for a plain `GET`.
    pub request: &'a LoadRequest,
}

/// What a tool really runs with for a spec: the one place these numbers are worked out.
/// [`argv`] passes them to the tool and [`record`] writes them into the report.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Effective {
    /// Connections held open.
    pub connections: u32,
    /// Threads (`wrk` only).
    pub threads: Option<u32>,
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
    /// The request is not one any tool should send (a header it cannot carry, a body
    /// without a type).
    #[error("the load request cannot be sent: {0}")]
    Request(String),
    /// A file of the run in the scratch directory could not be written, removed or read.
    #[error("could not {what} {}: {source}", path.display())]
    Scratch {
        /// What was being done (`write the wrk report script`).
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The tool's output holds no report at all.
    #[error("{tool} printed no report ({why}): {excerpt}")]
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
        /// What is wrong with it, naming the file when it is not stdout.
        detail: String,
        /// The start of the report.
        excerpt: String,
    },
}

/// Most bytes of a tool's stdout that are read. oha's JSON is a few KiB and wrk's summary
/// less; ab prints a line per failed write (`Send request failed!`), so a run against a
/// server that resets connections can print a few MiB before its summary.
pub const STDOUT_CAP: u64 = 16 << 20;

/// Prefix of the line the `wrk` script prints; nothing wrk prints itself starts with it.
const WRK_MARKER: &str = "CELL-WRK-JSON ";

/// File name of the `wrk` script inside the scratch directory.
const WRK_SCRIPT_NAME: &str = "cell-report.lua";

/// File name of the request body (oha `-D`, ab `-p`/`-u`) inside the scratch directory.
const BODY_NAME: &str = "request-body";

/// The `wrk` script's `done` hook. The script has no `request`/`response` hooks (they would
/// cost Lua calls per request): the request is set once, at top level, and wrk's built-in
/// loop sends it. `%.0f` rather than `%d` because every value is a Lua number (a double)
/// and `%.0f` is exact for integers up to 2^53 whatever the Lua version.
const WRK_DONE: &str = r#"-- wrk's own figures as one JSON line once the run is over.
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

fn unsupported(tool: LoadTool, what: impl Into<String>) -> LoadError {
    LoadError::Unsupported {
        tool: tool.name(),
        what: what.into(),
    }
}

/// The connections and threads `tool` really uses for `spec`.
///
/// wrk 4.1 refuses fewer connections than threads and gives each thread
/// connections/threads of them, so it runs `min(threads, connections)` threads and
/// `connections - connections % threads` connections (100 over 16 threads: 96). oha opens
/// the connections asked for; so does ab, within its own bounds (at most 20,000, and no
/// more than the requests it may make).
pub fn effective(tool: LoadTool, spec: &LoadSpec) -> Result<Effective, LoadError> {
    if spec.connections == 0 {
        return Err(unsupported(tool, "run with 0 connections"));
    }
    if tool.def.threads && spec.threads == 0 {
        return Err(unsupported(tool, "run with 0 threads"));
    }
    tool.driver.effective(spec)
}

/// Builds the argv (program first) for one run. `scratch` is a directory of the run's own:
/// the `wrk` Lua script and the request body are written there, and ab's percentile CSV
/// goes there (an older one is removed first, so a run never reads another's).
///
/// Errs when the spec asks for something the tool cannot do: a fixed rate from `wrk` or
/// `ab` (use `oha`), fractional seconds from `wrk` or `ab`, no connections, a request the
/// tool cannot send, or a URL that is not `http://`/`https://`. Nothing is written unless
/// the spec is valid.
pub fn argv(
    tool: LoadTool,
    program: &Path,
    spec: &LoadSpec,
    scratch: &Path,
) -> Result<Vec<OsString>, LoadError> {
    if !(spec.url.starts_with("http://") || spec.url.starts_with("https://")) {
        return Err(unsupported(
            tool,
            format!("load `{}`: only http:// and https:// URLs", spec.url),
        ));
    }
    if spec.duration.is_zero() {
        return Err(unsupported(tool, "run for 0 seconds"));
    }
    let counts = effective(tool, spec)?;
    check_request(tool, spec.request)?;
    check_rate_and_seconds(tool, spec)?;
    let mut out: Vec<OsString> = vec![program.into()];
    tool.driver.argv(&mut out, spec, counts, scratch)?;
    Ok(out)
}

/// What every tool requires of a request, then what the table says this one cannot send.
///
/// Header names must be tokens and unique whatever their case, values printable ASCII (a
/// value goes on a command line, into a Lua string and onto the wire as is); the tool's own
/// headers are refused; a body needs a `Content-Type` (ab would send `text/plain` and the
/// others none). wrk 4.1 cannot send `HEAD`: it waits for the body the response's
/// `Content-Length` announces and counts no response. ab sends `GET`, `HEAD`, and `POST`
/// or `PUT` with a body, nothing else.
fn check_request(tool: LoadTool, request: &LoadRequest) -> Result<(), LoadError> {
    let headers = request
        .headers
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()));
    if let Some(p) = cell_model::request_problem(headers, request.body.is_some()) {
        return Err(LoadError::Request(p));
    }
    let refusal = tool
        .def
        .refusal(request.method.as_str(), request.body.is_some());
    refusal.map_or(Ok(()), |why| Err(unsupported(tool, why)))
}

/// Writes the request body into the scratch directory; its path.
fn write_body(scratch: &Path, body: &[u8]) -> Result<PathBuf, LoadError> {
    let file = scratch.join(BODY_NAME);
    std::fs::write(&file, body).map_err(|source| LoadError::Scratch {
        what: "write the request body",
        path: file.clone(),
        source,
    })?;
    Ok(file)
}

/// Parses what the tool printed on stdout (and, for `ab`, the CSV it wrote in `scratch`)
/// into the report; `version` is stored as given (the line [`version_line`] returned).
///
/// `requests` counts responses of any status and `rps` is responses over the tool's own
/// measured duration (wrk overshoots `-d` by about 0.1 s, as it checks the deadline every
/// 100 ms; oha waits for the requests in flight; ab stops at its deadline). `wrk` only
/// reports statuses above 399, so a 3xx is not in `non_2xx` for wrk; oha and ab report
/// every status. What the run really was (its argv, connections, threads, keep-alive) is
/// [`record`]'s.
pub fn parse(
    tool: LoadTool,
    stdout: &str,
    scratch: &Path,
    version: &str,
) -> Result<LoadReport, LoadError> {
    let parsed = tool.driver.parse(stdout, scratch)?;
    // Responses over the tool's own duration for every tool. oha's `requestsPerSec` also
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
        keep_alive: parsed
            .keep_alive_requests
            .map(|n| n > 0 && n == parsed.requests),
        keep_alive_requests: parsed.keep_alive_requests,
        request_cap_hit: parsed.request_cap_hit,
        ..LoadReport::default()
    })
}

/// Writes into a parsed `report` what the run really was: the command as run, the
/// connections and threads of [`effective`], and the connection shape. For wrk and oha
/// that is what was asked; for ab it is what ab counted, and ab must have counted
/// keep-alive requests exactly when it was asked to keep connections alive.
pub fn record(
    mut report: LoadReport,
    tool: LoadTool,
    spec: &LoadSpec,
    argv: &[OsString],
) -> Result<LoadReport, LoadError> {
    let counts = effective(tool, spec)?;
    report.argv = argv
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    report.connections = Some(counts.connections);
    report.threads = counts.threads;
    tool.driver.record(&mut report, spec)?;
    Ok(report)
}

/// Reads a tool's stdout, at most [`STDOUT_CAP`] bytes of it (lossy UTF-8).
pub fn read_stdout(tool: LoadTool, path: &Path) -> Result<String, LoadError> {
    read_capped(path, STDOUT_CAP, "read the output of")?.ok_or_else(|| LoadError::BadReport {
        tool: tool.name(),
        detail: format!("{} holds more than {STDOUT_CAP} bytes", path.display()),
        excerpt: String::new(),
    })
}

/// At most `cap` bytes of `path` as text (lossy UTF-8); `None` when it holds more.
fn read_capped(path: &Path, cap: u64, what: &'static str) -> Result<Option<String>, LoadError> {
    let scratch = |source| LoadError::Scratch {
        what,
        path: path.to_owned(),
        source,
    };
    let file = std::fs::File::open(path).map_err(scratch)?;
    let mut bytes = Vec::new();
    file.take(cap + 1)
        .read_to_end(&mut bytes)
        .map_err(scratch)?;
    if bytes.len() as u64 > cap {
        return Ok(None);
    }
    Ok(Some(String::from_utf8_lossy(&bytes).into_owned()))
}

/// Normalises what `<tool> <version_args>` printed (stdout and stderr) into the version line
/// as printed: the first non-empty line, trimmed, from stdout or else stderr. `wrk --version`
/// prints `wrk debian/4.1.0-3+b2 [epoll] Copyright ...` and then its usage, and exits 1;
/// `ab -V` prints `This is ApacheBench, Version 2.3 <$Revision$>` (Debian leaves the
/// revision unexpanded) and its copyright lines. The exit status is not this function's
/// concern.
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

/// A report before the figures common to every tool are derived.
struct Parsed {
    duration_s: f64,
    requests: u64,
    errors: BTreeMap<String, u64>,
    non_2xx: u64,
    latency_ms: Latency,
    /// ab's `Keep-Alive requests:` (printed with `-k` only).
    keep_alive_requests: Option<u64>,
    /// Whether ab's `-n` bound ended the run (ab only).
    request_cap_hit: Option<bool>,
}

/// At most 200 characters of `s`, for error messages.
fn excerpt(s: &str) -> String {
    let mut out: String = s.trim().chars().take(200).collect();
    if s.trim().chars().nth(200).is_some() {
        out.push('…');
    }
    out
}

/// What the table says a tool cannot run: a fixed rate from one that has no fixed-rate mode,
/// fractional seconds (of the run or of its timeout) from one that counts whole seconds.
fn check_rate_and_seconds(tool: LoadTool, spec: &LoadSpec) -> Result<(), LoadError> {
    if let Some(rate) = spec.rate
        && !tool.def.fixed_rate
    {
        let with: Vec<&str> = cell_model::LOAD_TOOLS
            .iter()
            .filter(|t| t.fixed_rate)
            .map(|t| t.name)
            .collect();
        return Err(unsupported(
            tool,
            format!(
                "hold a fixed rate ({rate} requests/s): it has no fixed-rate mode; use {}",
                with.join(" or ")
            ),
        ));
    }
    if tool.def.durations == Durations::WholeSeconds {
        whole_seconds(tool, "run for", spec.duration)?;
        whole_seconds(tool, "time out after", spec.timeout)?;
    }
    Ok(())
}

fn whole_seconds(tool: LoadTool, what: &str, d: Duration) -> Result<(), LoadError> {
    if d.subsec_nanos() == 0 && d.as_secs() > 0 {
        Ok(())
    } else {
        Err(unsupported(
            tool,
            format!("{what} {d:?}: whole seconds only"),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::wrk::lua_string;
    use super::*;

    /// The tool of the table named `name`.
    fn named(name: &str) -> LoadTool {
        LoadTool::parse(name).expect(name)
    }

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
            request: LoadRequest::get(),
        }
    }

    /// The scratch directory of a parse that reads none (wrk, oha).
    fn nowhere() -> &'static Path {
        Path::new("/nonexistent")
    }

    fn strings(v: &[OsString]) -> Vec<String> {
        v.iter().map(|a| a.to_string_lossy().into_owned()).collect()
    }

    /// A tool in the table without a driver, or a driver without an entry, would be found
    /// out only when a run asked for it.
    #[test]
    fn every_table_entry_has_a_driver_and_every_driver_an_entry() {
        for def in cell_model::LOAD_TOOLS {
            let tool =
                LoadTool::parse(def.name).unwrap_or_else(|| panic!("{} has no driver", def.name));
            assert_eq!(tool.def(), def);
        }
        for (i, d) in DRIVERS.iter().enumerate() {
            assert!(
                cell_model::load_tool(d.name()).is_some(),
                "the driver {} has no entry",
                d.name()
            );
            assert!(
                DRIVERS[..i].iter().all(|o| o.name() != d.name()),
                "two drivers of {}",
                d.name()
            );
        }
    }

    #[test]
    fn tool_names_round_trip() {
        for tool in [named("wrk"), named("oha"), named("ab")] {
            assert_eq!(LoadTool::parse(tool.name()), Some(tool));
        }
        assert_eq!(named("wrk").version_args(), ["--version"]);
        assert_eq!(named("ab").version_args(), ["-V"]);
        assert_eq!(LoadTool::parse("siege"), None);
        for m in Method::ALL {
            assert_eq!(Method::parse(m.as_str()), Some(m));
        }
        assert_eq!(Method::parse("get"), None);
    }

    #[test]
    fn wrk_report() {
        let r = parse(named("wrk"), WRK_OK, nowhere(), WRK_VERSION).expect("parse");
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
        let r = parse(named("wrk"), WRK_500, nowhere(), WRK_VERSION).expect("parse");
        assert_eq!(r.requests, 107_142);
        assert_eq!(r.non_2xx, 107_142);
        assert!(r.errors.is_empty());
    }

    #[test]
    fn wrk_socket_errors_are_kept_by_kind() {
        let line = r#"CELL-WRK-JSON {"duration_us":2000000,"requests":10,"bytes":0,"errors":{"connect":1,"read":2,"write":0,"status":3,"timeout":4},"latency_us":{"p50":1,"p90":2,"p99":3,"p99_9":4,"max":5}}"#;
        let r = parse(named("wrk"), line, nowhere(), "wrk").expect("parse");
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
        let err = parse(named("wrk"), head, nowhere(), WRK_VERSION).expect_err("no marker");
        assert!(matches!(err, LoadError::NoReport { .. }), "{err:?}");
        let msg = err.to_string();
        assert!(
            msg.starts_with("wrk printed no report (the done hook did not run): Running 1s"),
            "{msg}"
        );
        let err = parse(
            named("wrk"),
            "CELL-WRK-JSON {\"requests\":1}",
            nowhere(),
            "",
        )
        .expect_err("bad");
        assert!(matches!(err, LoadError::BadReport { .. }), "{err:?}");
    }

    #[test]
    fn oha_report() {
        let r = parse(named("oha"), OHA_OK, nowhere(), "oha 1.16.0").expect("parse");
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
        let r = parse(named("oha"), &noisy, nowhere(), "oha").expect("parse");
        assert_eq!(r.requests, 53_595);
    }

    #[test]
    fn oha_with_no_response_reads_zero_latencies() {
        let r = parse(named("oha"), OHA_REFUSED, nowhere(), "oha").expect("parse");
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
        let r = parse(named("oha"), &json, nowhere(), "oha").expect("parse");
        assert_eq!(r.requests, 20);
        assert_eq!(r.non_2xx, 9);
    }

    #[test]
    fn oha_missing_field_or_json_is_an_error() {
        let err = parse(named("oha"), "error: connection refused", nowhere(), "oha")
            .expect_err("no json");
        assert!(matches!(err, LoadError::NoReport { .. }), "{err:?}");
        assert!(
            err.to_string().starts_with("oha printed no report"),
            "{err}"
        );
        let json = OHA_OK.replace("\"p99.9\"", "\"p99_9\"");
        let err = parse(named("oha"), &json, nowhere(), "oha").expect_err("missing p99.9");
        assert!(
            err.to_string().contains("no `latencyPercentiles.p99.9`"),
            "{err}"
        );
        let json = OHA_OK.replace("\"total\": 1.002343783", "\"total\": \"soon\"");
        let err = parse(named("oha"), &json, nowhere(), "oha").expect_err("total not a number");
        assert!(err.to_string().contains("summary.total"), "{err}");
        let err = parse(named("oha"), "{\"summary\": ", nowhere(), "oha").expect_err("cut short");
        assert!(matches!(err, LoadError::BadReport { .. }), "{err:?}");
    }

    #[test]
    fn wrk_argv_writes_its_script() {
        let dir = tempfile::tempdir().expect("tempdir");
        let wrk = Path::new("/usr/bin/wrk");
        let script = dir.path().join(WRK_SCRIPT_NAME);
        let on = argv(named("wrk"), wrk, &spec(true, None), dir.path()).expect("argv");
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
        let off = strings(&argv(named("wrk"), wrk, &spec(false, None), dir.path()).expect("argv"));
        let h = off.iter().position(|a| a == "-H").expect("-H");
        assert_eq!(off[h + 1], "Connection: close");
        assert_eq!(off.len(), on.len() + 2);
    }

    #[test]
    fn wrk_refuses_what_it_cannot_do() {
        let dir = tempfile::tempdir().expect("tempdir");
        let wrk = Path::new("wrk");
        let err = argv(named("wrk"), wrk, &spec(true, Some(100)), dir.path()).expect_err("rate");
        assert!(err.to_string().contains("use oha"), "{err}");
        let half = LoadSpec {
            duration: Duration::from_millis(1500),
            ..spec(true, None)
        };
        let err = argv(named("wrk"), wrk, &half, dir.path()).expect_err("1.5 s");
        assert!(err.to_string().contains("whole seconds"), "{err}");
        let head = LoadRequest {
            method: Method::Head,
            ..LoadRequest::get().clone()
        };
        let err = argv(
            named("wrk"),
            wrk,
            &LoadSpec {
                request: &head,
                ..spec(true, None)
            },
            dir.path(),
        )
        .expect_err("HEAD");
        assert!(err.to_string().contains("send HEAD"), "{err}");
        let ftp = LoadSpec {
            url: "ftp://127.0.0.1/",
            ..spec(true, None)
        };
        assert!(argv(named("wrk"), wrk, &ftp, dir.path()).is_err());
        // Nothing was refused after writing: the script only appears for a valid spec.
        assert!(!dir.path().join(WRK_SCRIPT_NAME).exists());
    }

    #[test]
    fn oha_argv() {
        let dir = Path::new("/nonexistent");
        let oha = Path::new("oha");
        let on = strings(&argv(named("oha"), oha, &spec(true, None), dir).expect("argv"));
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
        let off = strings(&argv(named("oha"), oha, &off, dir).expect("argv"));
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
        assert_eq!(version_line(named("wrk"), &wrk_out, ""), WRK_VERSION);
        assert_eq!(
            version_line(named("oha"), "\n  oha 1.16.0  \n", ""),
            "oha 1.16.0"
        );
        assert_eq!(
            version_line(named("oha"), " \n", "oha 1.16.0\n"),
            "oha 1.16.0"
        );
        assert_eq!(
            version_line(named("wrk"), "", ""),
            "wrk (printed no version)"
        );
        // `ab -V` as Debian's apache2-utils 2.4.71 prints it (exit 0).
        let ab_out = "This is ApacheBench, Version 2.3 <$Revision$>\nCopyright 1996 Adam Twiss, \
                      Zeus Technology Ltd, http://www.zeustech.net/\n\n";
        assert_eq!(
            version_line(named("ab"), ab_out, ""),
            "This is ApacheBench, Version 2.3 <$Revision$>"
        );
    }

    /// The JSON of the http suite's POST tests, 38 bytes.
    const JSON: &str = r#"{"name":"Alice","age":28,"adult":true}"#;

    fn post() -> LoadRequest {
        LoadRequest::with_body(Method::Post, "application/json", JSON)
    }

    #[test]
    fn effective_counts() {
        let wide = LoadSpec {
            connections: 100,
            threads: 16,
            ..spec(true, None)
        };
        let wrk = effective(named("wrk"), &wide).expect("wrk");
        assert_eq!(
            wrk,
            Effective {
                connections: 96,
                threads: Some(16)
            }
        );
        for tool in [named("oha"), named("ab")] {
            let e = effective(tool, &wide).expect("as asked");
            assert_eq!((e.connections, e.threads), (100, None), "{tool:?}");
        }
        // Fewer connections than threads: wrk would refuse; it gets one thread a connection.
        let narrow = LoadSpec {
            connections: 3,
            threads: 8,
            ..spec(true, None)
        };
        let e = effective(named("wrk"), &narrow).expect("narrow");
        assert_eq!((e.connections, e.threads), (3, Some(3)));
        let none = LoadSpec {
            threads: 0,
            ..spec(true, None)
        };
        assert!(effective(named("wrk"), &none).is_err());
        assert!(effective(named("oha"), &none).is_ok());
        let zero = LoadSpec {
            connections: 0,
            ..spec(true, None)
        };
        for tool in [named("wrk"), named("oha"), named("ab")] {
            assert!(effective(tool, &zero).is_err(), "{tool:?}");
        }
        let many = LoadSpec {
            connections: 20_001,
            ..spec(true, None)
        };
        let err = effective(named("ab"), &many).expect_err("ab's bound");
        assert!(err.to_string().contains("at most 20000"), "{err}");
    }

    #[test]
    fn argv_and_report_take_the_effective_counts() {
        let dir = tempfile::tempdir().expect("tempdir");
        let wide = LoadSpec {
            connections: 100,
            threads: 16,
            ..spec(false, None)
        };
        let args = argv(named("wrk"), Path::new("/usr/bin/wrk"), &wide, dir.path()).expect("argv");
        let s = strings(&args);
        assert_eq!(s[1..5], ["-t", "16", "-c", "96"]);
        let report = parse(named("wrk"), WRK_OK, nowhere(), WRK_VERSION).expect("parse");
        let r = record(report, named("wrk"), &wide, &args).expect("record");
        assert_eq!((r.connections, r.threads), (Some(96), Some(16)));
        assert_eq!(r.argv, s);
        assert_eq!(r.keep_alive, Some(false));
        assert_eq!((r.keep_alive_requests, r.request_cap_hit), (None, None));
        let oha = parse(named("oha"), OHA_OK, nowhere(), "oha").expect("parse");
        let r = record(oha, named("oha"), &wide, &[]).expect("record");
        assert_eq!(
            (r.connections, r.threads, r.keep_alive),
            (Some(100), None, Some(false))
        );
    }

    #[test]
    fn lua_strings_escape_every_byte_that_could_end_them() {
        let body = b"a\"b'c\\d\ne\0f\x7f\xff9";
        assert_eq!(lua_string(body), r#""a\034b\039c\092d\010e\000f\127\2559""#);
        // Three digits always: `\0` followed by `9` would otherwise read as `\09`.
        assert_eq!(lua_string(b"\x009"), r#""\0009""#);
        assert_eq!(lua_string(b""), r#""""#);
    }

    #[test]
    fn wrk_sends_the_request_from_its_script() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut request = post();
        request
            .headers
            .insert("X-Note".to_owned(), "say \"hi\"\\".to_owned());
        let s = LoadSpec {
            request: &request,
            ..spec(true, None)
        };
        let args = strings(&argv(named("wrk"), Path::new("wrk"), &s, dir.path()).expect("argv"));
        assert!(!args.iter().any(|a| a.contains("Alice")), "{args:?}");
        let script = std::fs::read_to_string(dir.path().join(WRK_SCRIPT_NAME)).expect("script");
        let top: Vec<&str> = script.lines().skip(1).take(4).collect();
        assert_eq!(
            top,
            [
                r#"wrk.method = "POST""#,
                r#"wrk.headers["Content-Type"] = "application/json""#,
                r#"wrk.headers["X-Note"] = "say \034hi\034\092""#,
                r#"wrk.body = "{\034name\034:\034Alice\034,\034age\034:28,\034adult\034:true}""#,
            ]
        );
        assert!(!script.contains("request = function"), "{script}");
        // A plain GET sets nothing: wrk's defaults are the request.
        argv(
            named("wrk"),
            Path::new("wrk"),
            &spec(true, None),
            dir.path(),
        )
        .expect("argv");
        let script = std::fs::read_to_string(dir.path().join(WRK_SCRIPT_NAME)).expect("script");
        assert!(!script.contains("wrk."), "{script}");
    }

    #[test]
    fn oha_sends_the_body_from_a_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut request = post();
        request.headers.insert("X-Run".to_owned(), "7".to_owned());
        let s = LoadSpec {
            request: &request,
            ..spec(true, None)
        };
        let args = strings(&argv(named("oha"), Path::new("oha"), &s, dir.path()).expect("argv"));
        let body = dir.path().join(BODY_NAME).to_string_lossy().into_owned();
        assert_eq!(
            args[11..],
            [
                "-m",
                "POST",
                "-H",
                "X-Run: 7",
                "-T",
                "application/json",
                "-D",
                &body,
                "http://127.0.0.1:8080/"
            ]
        );
        assert_eq!(std::fs::read(&body).expect("body"), JSON.as_bytes());
    }

    #[test]
    fn ab_argv() {
        let dir = tempfile::tempdir().expect("tempdir");
        let csv = dir.path().join(ab::CSV_NAME);
        std::fs::write(&csv, "older run").expect("stale csv");
        let ab = Path::new("/usr/bin/ab");
        let on = strings(&argv(named("ab"), ab, &spec(true, None), dir.path()).expect("argv"));
        let csv_arg = csv.to_string_lossy().into_owned();
        assert_eq!(
            on,
            [
                "/usr/bin/ab",
                "-c",
                "4",
                "-k",
                "-t",
                "3",
                "-n",
                "4000000",
                "-s",
                "2",
                "-r",
                "-q",
                "-e",
                &csv_arg,
                "http://127.0.0.1:8080/",
            ]
        );
        assert!(!csv.exists(), "an older CSV is removed before the run");
        let off = strings(&argv(named("ab"), ab, &spec(false, None), dir.path()).expect("argv"));
        assert_eq!(off.len(), on.len() - 1);
        assert!(!off.iter().any(|a| a == "-k"));

        let mut request = post();
        request.headers.insert("X-Run".to_owned(), "7".to_owned());
        let s = LoadSpec {
            request: &request,
            ..spec(true, None)
        };
        let post = strings(&argv(named("ab"), ab, &s, dir.path()).expect("argv"));
        let body = dir.path().join(BODY_NAME).to_string_lossy().into_owned();
        assert_eq!(
            post[14..],
            [
                "-p",
                &body,
                "-T",
                "application/json",
                "-H",
                "X-Run: 7",
                "http://127.0.0.1:8080/"
            ]
        );
        assert_eq!(std::fs::read(&body).expect("body"), JSON.as_bytes());
        request.method = Method::Put;
        let s = LoadSpec {
            request: &request,
            ..spec(true, None)
        };
        let put = strings(&argv(named("ab"), ab, &s, dir.path()).expect("argv"));
        assert_eq!(put[14], "-u");
        let head = LoadRequest {
            method: Method::Head,
            ..LoadRequest::get().clone()
        };
        let s = LoadSpec {
            request: &head,
            ..spec(true, None)
        };
        let head = strings(&argv(named("ab"), ab, &s, dir.path()).expect("argv"));
        assert_eq!(head[14], "-i");
    }

    #[test]
    fn ab_refuses_what_it_cannot_do() {
        let dir = tempfile::tempdir().expect("tempdir");
        let ab = Path::new("ab");
        let try_ab = |s: &LoadSpec| {
            argv(named("ab"), ab, s, dir.path())
                .expect_err("refused")
                .to_string()
        };
        assert!(try_ab(&spec(true, Some(100))).contains("use oha"));
        let half = LoadSpec {
            timeout: Duration::from_millis(1500),
            ..spec(true, None)
        };
        assert!(try_ab(&half).contains("whole seconds"));
        let with = |method: Method, body: Option<&str>| LoadRequest {
            method,
            headers: BTreeMap::from([("Content-Type".to_owned(), "text/plain".to_owned())]),
            body: body.map(|b| b.as_bytes().to_vec()),
        };
        for (request, want) in [
            (
                with(Method::Delete, None),
                "send DELETE: it sends GET, HEAD, POST and PUT only",
            ),
            (with(Method::Get, Some("x")), "send a body with GET"),
            (with(Method::Post, None), "send POST without a body"),
        ] {
            let s = LoadSpec {
                request: &request,
                ..spec(true, None)
            };
            let msg = try_ab(&s);
            assert!(msg.starts_with("ab cannot ") && msg.contains(want), "{msg}");
            // wrk and oha send them.
            for tool in [named("wrk"), named("oha")] {
                argv(tool, Path::new("x"), &s, dir.path()).expect("sent");
            }
        }
    }

    #[test]
    fn requests_every_tool_refuses() {
        let dir = tempfile::tempdir().expect("tempdir");
        let header = |name: &str, value: &str| LoadRequest {
            headers: BTreeMap::from([(name.to_owned(), value.to_owned())]),
            ..LoadRequest::get().clone()
        };
        let cases = [
            (header("X Y", "1"), "is not an HTTP token"),
            (header("X-Y", "a\r\nHost: evil"), "only printable ASCII"),
            (header("X-Y", "caf\u{e9}"), "only printable ASCII"),
            (header("content-length", "3"), "the load generator's own"),
            (header("Connection", "close"), "the load generator's own"),
            (
                LoadRequest {
                    headers: BTreeMap::from([
                        ("X-A".to_owned(), "1".to_owned()),
                        ("x-a".to_owned(), "2".to_owned()),
                    ]),
                    ..LoadRequest::get().clone()
                },
                "given twice",
            ),
            (
                LoadRequest {
                    method: Method::Post,
                    headers: BTreeMap::new(),
                    body: Some(b"{}".to_vec()),
                },
                "a body needs a Content-Type header",
            ),
        ];
        for (request, want) in &cases {
            let s = LoadSpec {
                request,
                ..spec(true, None)
            };
            for tool in [named("wrk"), named("oha"), named("ab")] {
                let err = argv(tool, Path::new("x"), &s, dir.path()).expect_err(want);
                assert!(matches!(err, LoadError::Request(_)), "{err:?}");
                assert!(err.to_string().contains(want), "{want}: {err}");
            }
        }
        assert!(
            std::fs::read_dir(dir.path()).expect("dir").next().is_none(),
            "nothing written"
        );
    }
}
