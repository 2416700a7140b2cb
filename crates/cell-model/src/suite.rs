//! The `http` and `soak` suites of `cell/cell.toml`, resolved.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use cell_schema::{HttpMode, ServerName, ShapeName, SoakConfig, ToolchainName, WorkloadName};

use crate::error::{FieldError, LookupError};
use crate::raw::{
    RawCpus, RawExpect, RawHttp, RawHttpSession, RawServer, RawShape, RawSoak, RawWorkload,
};
use crate::template::{Arg, Piece};
use crate::{Toolchain, check_name, check_tools, existing_dir, join};

/// Load generators cell drives.
pub const LOAD_TOOLS: &[&str] = &["wrk", "oha", "ab"];

/// The load generators of `[http]` when `tools` is not written: ab is there only when asked
/// for (one thread, HTTP/1.0, no faster than one CPU lets it be).
const DEFAULT_LOAD_TOOLS: &[&str] = &["wrk", "oha"];

/// What a server must answer to a workload's request.
#[derive(Clone, Debug, PartialEq)]
pub struct Expect {
    /// Status code.
    pub status: u16,
    /// Headers (lower-case names) that must be present with exactly these values.
    pub headers: BTreeMap<String, String>,
    /// The body, byte for byte (or, with `json`, a JSON value compared structurally).
    pub body: ExpectBody,
}

/// How a response body is compared.
#[derive(Clone, Debug, PartialEq)]
pub enum ExpectBody {
    /// Byte for byte.
    Exact(String),
    /// Parsed as JSON and compared structurally (key order and spacing free, numbers by
    /// value).
    Json(serde_json::Value),
}

/// One request of the http suite and what every server serving it must answer.
#[derive(Clone, Debug, PartialEq)]
pub struct Workload {
    /// Its name.
    pub name: WorkloadName,
    /// The method, upper case.
    pub method: String,
    /// The path (and query), from `/`.
    pub path: String,
    /// Request headers, lower-case names.
    pub headers: BTreeMap<String, String>,
    /// The request body, if any.
    pub body: Option<String>,
    /// What must come back.
    pub expect: Expect,
}

/// How the load tool holds its connections.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Shape {
    /// Its name.
    pub name: ShapeName,
    /// Connections held at once (what each tool really used is recorded per run).
    pub connections: u32,
    /// Reuse connections; without it every request opens its own.
    pub keep_alive: bool,
    /// wrk threads.
    pub threads: u32,
}

/// The part of the matrix a session runs without `--full` (`[http.default]`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SessionDef {
    /// Load tools.
    pub tools: Option<Vec<String>>,
    /// Shapes by name.
    pub shapes: Option<Vec<ShapeName>>,
    /// Workloads by name.
    pub workloads: Option<Vec<WorkloadName>>,
    /// Measured runs per combination.
    pub runs: Option<u32>,
    /// Seconds per measured run.
    pub duration_s: Option<f64>,
    /// Seconds of warm-up.
    pub warmup_s: Option<f64>,
}

/// One server under test.
#[derive(Clone, Debug, PartialEq)]
pub struct Server {
    /// The name jobs use (`http-<name>`, `soak-<name>`).
    pub name: ServerName,
    /// The toolchain that builds or runs it.
    pub toolchain: ToolchainName,
    /// A human label.
    pub label: String,
    /// Absolute source directory.
    pub source: PathBuf,
    /// Build argv template (empty: nothing to build).
    pub build: Vec<Arg>,
    /// Run argv template.
    pub run: Vec<Arg>,
    /// The 127.0.0.1 port it listens on (`{port}`), distinct per server.
    pub port: u16,
    /// The workloads it serves, each with the answer it must give.
    pub workloads: BTreeMap<WorkloadName, Expect>,
    /// It keeps connections alive; when false its check sends one request per connection
    /// and accepts `Connection: close`.
    pub keep_alive: bool,
}

/// `[http]`, resolved.
#[derive(Clone, Debug, PartialEq)]
pub struct HttpDef {
    /// Load generators, in the order each round runs them.
    pub tools: Vec<String>,
    /// Load generator threads (wrk).
    pub threads: u32,
    /// Seconds of each measured run.
    pub duration_s: f64,
    /// Seconds of load before each measured run.
    pub warmup_s: f64,
    /// Measured runs per combination.
    pub runs: u32,
    /// How servers are run.
    pub mode: HttpMode,
    /// Seconds of each sustained run.
    pub sustained_duration_s: f64,
    /// The workloads, by name.
    pub workloads: BTreeMap<WorkloadName, Workload>,
    /// The connection shapes, in the order configured.
    pub shapes: Vec<Shape>,
    /// `[http.default]`, when written.
    pub default: Option<SessionDef>,
    /// Bound on the wait for the first 200.
    pub startup_timeout_s: f64,
    /// Seconds between SIGTERM and SIGKILL.
    pub stop_grace_s: f64,
    /// Bound on the wait for `TIME_WAIT` sockets to drain before a run.
    pub drain_timeout_s: f64,
    /// The CPUs servers and load generators are pinned to (none: one each, chosen at run time).
    pub cpus: Option<CpuSets>,
    /// `versions.env` key of the oha version a workflow installs.
    pub oha_key: String,
    /// Its value, when set.
    pub oha_version: Option<String>,
    /// The servers, by name.
    pub servers: BTreeMap<ServerName, Server>,
}

/// The CPUs of `[http] cpus` or of the command line: the servers' and the load generators',
/// each ascending, the two disjoint. Whether the machine allows them is known only where the
/// suite runs, so `fields` says where they were written for the error that finds out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CpuSets {
    /// The servers' CPUs.
    pub server: Vec<u32>,
    /// The load generators' CPUs.
    pub load: Vec<u32>,
    /// Where the two lists were written: `http.cpus.server` and `http.cpus.load`, or
    /// `--server-cpus` and `--load-cpus`.
    pub fields: [String; 2],
}

impl CpuSets {
    /// The two lists written at `fields` (server's, load generator's): both or neither, each
    /// with at least one CPU and none twice, no CPU in both.
    pub fn new(
        fields: [&str; 2],
        server: Option<Vec<u32>>,
        load: Option<Vec<u32>>,
    ) -> Result<Option<Self>, FieldError> {
        let [fs, fl] = fields;
        let (server, load) = match (server, load) {
            (None, None) => return Ok(None),
            (Some(s), Some(l)) => (s, l),
            (s, _) => {
                let missing = if s.is_none() { fs } else { fl };
                return Err(FieldError::new(
                    missing,
                    format!("missing: write both {fs} and {fl}, or neither"),
                ));
            }
        };
        let server = cpu_list(fs, server)?;
        let load = cpu_list(fl, load)?;
        if let Some(c) = load.iter().find(|c| server.contains(c)) {
            return Err(FieldError::new(
                fl,
                format!(
                    "CPU {c} is also in {fs}: a load generator must not share the servers' CPUs"
                ),
            ));
        }
        Ok(Some(Self {
            server,
            load,
            fields: [fs.to_owned(), fl.to_owned()],
        }))
    }
}

/// A list of CPUs, ascending: at least one, none twice.
fn cpu_list(field: &str, mut cpus: Vec<u32>) -> Result<Vec<u32>, FieldError> {
    if cpus.is_empty() {
        return Err(FieldError::new(field, "empty: write at least one CPU"));
    }
    cpus.sort_unstable();
    if let Some(&[c, _]) = cpus.windows(2).find(|w| w[0] == w[1]) {
        return Err(FieldError::new(field, format!("CPU {c} is listed twice")));
    }
    Ok(cpus)
}

fn resolve_cpus(raw: Option<RawCpus>) -> Result<Option<CpuSets>, FieldError> {
    let Some(raw) = raw else {
        return Ok(None);
    };
    CpuSets::new(["http.cpus.server", "http.cpus.load"], raw.server, raw.load)
}

/// `[soak]`, resolved: the servers soaked and the soak every one of them gets (the schema's
/// own type, so a job records exactly what was configured).
#[derive(Clone, Debug, PartialEq)]
pub struct SoakDef {
    /// The servers of `[http]` that are soaked (all by default).
    pub servers: Vec<ServerName>,
    /// Rate, duration, sampling and the drift rule.
    pub config: SoakConfig,
}

impl HttpDef {
    /// A server by name; the error lists the servers there are.
    pub fn server(&self, name: &str) -> Result<&Server, LookupError> {
        self.servers.get(name).ok_or_else(|| LookupError::Server {
            name: name.to_owned(),
            known: self.servers.keys().map(ToString::to_string).collect(),
        })
    }

    /// The session `cell local` and `cell run` measure: the whole matrix with `full`, else
    /// the part `[http.default]` names (all of it when there is no such table).
    #[must_use]
    pub fn session(&self, full: bool, mode: Option<HttpMode>) -> HttpDef {
        let mut d = self.narrowed(full);
        d.mode = mode.unwrap_or(d.mode);
        if d.mode == HttpMode::Sustained {
            // One long run per combination.
            d.runs = 1;
            d.duration_s = d.sustained_duration_s;
        }
        d
    }

    /// The matrix, or the part `[http.default]` names.
    fn narrowed(&self, full: bool) -> HttpDef {
        let mut d = self.clone();
        let Some(s) = self.default.as_ref().filter(|_| !full) else {
            return d;
        };
        if let Some(t) = &s.tools {
            d.tools.clone_from(t);
        }
        if let Some(names) = &s.shapes {
            d.shapes.retain(|x| names.contains(&x.name));
        }
        if let Some(names) = &s.workloads {
            d.workloads.retain(|k, _| names.contains(k));
        }
        d.runs = s.runs.unwrap_or(d.runs);
        d.duration_s = s.duration_s.unwrap_or(d.duration_s);
        d.warmup_s = s.warmup_s.unwrap_or(d.warmup_s);
        d
    }

    /// What the load settings must satisfy, checked on the config and again after a command
    /// line changed them.
    pub fn validate(&self) -> Result<(), FieldError> {
        positive("http.duration", self.duration_s)?;
        non_negative("http.warmup", self.warmup_s)?;
        validate_tools("http.tools", &self.tools)?;
        if self.shapes.is_empty() {
            return Err(FieldError::new("http.shapes", "no shape left to measure"));
        }
        if self.workloads.is_empty() {
            return Err(FieldError::new(
                "http.workloads",
                "no workload left to measure",
            ));
        }
        self.validate_whole_seconds()
    }

    /// wrk (`-d 10s`) and ab (`-t 10`) count whole seconds. Connections that wrk cannot
    /// spread evenly over its threads are not refused: the run records what wrk really used.
    fn validate_whole_seconds(&self) -> Result<(), FieldError> {
        let Some(tool) = self
            .tools
            .iter()
            .find(|t| matches!(t.as_str(), "wrk" | "ab"))
        else {
            return Ok(());
        };
        for (f, v) in [("duration", self.duration_s), ("warmup", self.warmup_s)] {
            if v.fract() != 0.0 {
                return Err(FieldError::new(
                    format!("http.{f}"),
                    format!("{v}: {tool} counts whole seconds; write a whole number"),
                ));
            }
        }
        Ok(())
    }
}

impl SoakDef {
    /// What the soak settings must satisfy (config and command line alike).
    pub fn validate(&self) -> Result<(), FieldError> {
        let c = &self.config;
        positive("soak.duration", c.duration_s)?;
        positive("soak.interval", c.interval_s)?;
        positive("soak.minima_window", c.minima_window_s)?;
        window_start("soak.window_start", c.window_start_s, c.duration_s)?;
        // At least three minima windows, or the sawtooth guard has nothing to fit.
        if (c.duration_s - c.window_start_s) / c.minima_window_s < 3.0 {
            return Err(FieldError::new(
                "soak.minima_window",
                format!(
                    "{} s windows over the {} s fit window give fewer than 3 minima: shorten it or start the fit earlier",
                    c.minima_window_s,
                    c.duration_s - c.window_start_s
                ),
            ));
        }
        Ok(())
    }
}

/// A list of load tools: known ones, each once.
fn validate_tools(field: &str, tools: &[String]) -> Result<(), FieldError> {
    if tools.is_empty() {
        return Err(FieldError::new(
            field,
            format!("empty: write one or more of {}", join(LOAD_TOOLS)),
        ));
    }
    for (i, t) in tools.iter().enumerate() {
        if !LOAD_TOOLS.contains(&t.as_str()) {
            return Err(FieldError::new(
                format!("{field}[{i}]"),
                format!(
                    "`{t}` is not a load generator cell drives: write {}",
                    join(LOAD_TOOLS)
                ),
            ));
        }
        if tools[..i].contains(t) {
            return Err(FieldError::new(
                format!("{field}[{i}]"),
                format!("`{t}` is listed twice"),
            ));
        }
    }
    Ok(())
}

/// Default `versions.env` key of the oha version.
pub const DEFAULT_OHA_KEY: &str = "OHA_VERSION";

fn positive(field: &str, v: f64) -> Result<f64, FieldError> {
    if v.is_finite() && v > 0.0 {
        Ok(v)
    } else {
        Err(FieldError::new(
            field,
            format!("{v}: write a number above 0"),
        ))
    }
}

fn non_negative(field: &str, v: f64) -> Result<f64, FieldError> {
    if v.is_finite() && v >= 0.0 {
        Ok(v)
    } else {
        Err(FieldError::new(
            field,
            format!("{v}: write 0 or more seconds"),
        ))
    }
}

/// The start of the soak's fit window: from 0 up to (not including) the duration.
fn window_start(field: &str, v: f64, duration_s: f64) -> Result<f64, FieldError> {
    if v.is_finite() && v >= 0.0 && v < duration_s {
        Ok(v)
    } else {
        Err(FieldError::new(
            field,
            format!("{v}: write a number of seconds from 0 up to the duration ({duration_s})"),
        ))
    }
}

/// A count of `[http]`: its default when not written, never 0.
fn http_count(field: &str, v: Option<u32>, default: u32) -> Result<u32, FieldError> {
    match v.unwrap_or(default) {
        0 => Err(FieldError::new(
            format!("http.{field}"),
            "0: write a whole number above 0",
        )),
        n => Ok(n),
    }
}

/// Seconds of `[http]`: its default when not written, above 0.
fn http_secs(field: &str, v: Option<f64>, default: f64) -> Result<f64, FieldError> {
    positive(&format!("http.{field}"), v.unwrap_or(default))
}

/// What every server must answer unless `[http.expect]` or its own `expect` says otherwise.
fn default_expect() -> Expect {
    Expect {
        status: 200,
        headers: BTreeMap::from([("content-type".to_owned(), "text/plain".to_owned())]),
        body: ExpectBody::Exact("hello, world\n".to_owned()),
    }
}

/// An `expect` table over `base`: what it sets replaces, headers are added.
fn resolve_expect(
    field: &str,
    base: &Expect,
    raw: Option<RawExpect>,
) -> Result<Expect, FieldError> {
    let Some(raw) = raw else {
        return Ok(base.clone());
    };
    let status = raw.status.unwrap_or(base.status);
    if !(100..=599).contains(&status) {
        return Err(FieldError::new(
            format!("{field}.status"),
            format!("{status}: write an HTTP status code (100–599)"),
        ));
    }
    let mut headers = base.headers.clone();
    for (k, v) in raw.headers.unwrap_or_default() {
        if k.is_empty() || !k.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-') {
            return Err(FieldError::new(
                format!("{field}.headers"),
                format!("`{k}` is not a header name"),
            ));
        }
        headers.insert(k.to_ascii_lowercase(), v);
    }
    let body = match (raw.body, raw.json) {
        (Some(_), Some(_)) => {
            return Err(FieldError::new(
                field,
                "both `body` and `json`: write the body byte for byte or as a JSON value, not both",
            ));
        }
        (Some(b), None) => ExpectBody::Exact(b),
        (None, Some(j)) => ExpectBody::Json(serde_json::to_value(j).map_err(|e| {
            FieldError::new(format!("{field}.json"), format!("not a JSON value: {e}"))
        })?),
        (None, None) => base.body.clone(),
    };
    Ok(Expect {
        status,
        headers,
        body,
    })
}

/// Resolves `[http]`: every server's toolchain and tools exist, templates parse, `{port}`
/// is named, ports are distinct.
pub(crate) fn resolve_http(
    root: &Path,
    raw: RawHttp,
    toolchains: &BTreeMap<ToolchainName, Toolchain>,
    env: &crate::VersionsEnv,
) -> Result<HttpDef, FieldError> {
    let threads = threads_of(&raw)?;
    let shapes = resolve_shapes(&raw, threads)?;
    let tools = raw
        .tools
        .unwrap_or_else(|| DEFAULT_LOAD_TOOLS.iter().map(|t| (*t).to_owned()).collect());
    let warmup_s = non_negative("http.warmup", raw.warmup.unwrap_or(2.0))?;
    let legacy = raw.workloads.is_none();
    if !legacy && raw.expect.is_some() {
        return Err(FieldError::new(
            "http.expect",
            "with [[http.workloads]] each workload says what it expects: move this into a workload's `expect`",
        ));
    }
    let base = resolve_expect("http.expect", &default_expect(), raw.expect)?;
    let workloads = resolve_workloads(raw.workloads, &base)?;
    let servers = resolve_servers(
        &root.join(&raw.source),
        raw.servers,
        &workloads,
        legacy,
        toolchains,
    )?;
    let oha_key = raw.oha.unwrap_or_else(|| DEFAULT_OHA_KEY.to_owned());
    let oha_version = env.get(&oha_key).map(str::to_owned);
    let mode = match raw.mode.as_deref() {
        None => HttpMode::Fresh,
        Some(m) => parse_mode(m).map_err(|e| FieldError::new("http.mode", e))?,
    };
    let default = raw
        .default
        .map(|d| resolve_session(d, &workloads, &shapes))
        .transpose()?;
    let def = HttpDef {
        tools,
        threads,
        duration_s: http_secs("duration", raw.duration, 10.0)?,
        warmup_s,
        runs: http_count("runs", raw.runs, 5)?,
        mode,
        sustained_duration_s: http_secs("sustained_duration", raw.sustained_duration, 600.0)?,
        workloads,
        shapes,
        default,
        startup_timeout_s: http_secs("startup_timeout", raw.startup_timeout, 10.0)?,
        stop_grace_s: http_secs("stop_grace", raw.stop_grace, 5.0)?,
        drain_timeout_s: http_secs("drain_timeout", raw.drain_timeout, 3.0)?,
        cpus: resolve_cpus(raw.cpus)?,
        oha_key,
        oha_version,
        servers,
    };
    def.validate()?;
    def.session(false, None)
        .validate()
        .map_err(|e| FieldError::new(format!("{} (with [http.default])", e.field), e.msg))?;
    Ok(def)
}

fn threads_of(raw: &RawHttp) -> Result<u32, FieldError> {
    http_count("threads", raw.threads, 1)
}

/// A mode as written in config or on the command line.
pub fn parse_mode(s: &str) -> Result<HttpMode, String> {
    [HttpMode::Fresh, HttpMode::SameProcess, HttpMode::Sustained]
        .into_iter()
        .find(|m| m.name() == s)
        .ok_or_else(|| format!("`{s}`: write fresh, same-process or sustained"))
}

/// The workload results written before workloads existed were: `GET /` answered as
/// `[http.expect]` says.
fn legacy_workload(base: &Expect) -> Workload {
    Workload {
        name: WorkloadName::from(cell_schema::LEGACY_WORKLOAD),
        method: "GET".to_owned(),
        path: "/".to_owned(),
        headers: BTreeMap::new(),
        body: None,
        expect: base.clone(),
    }
}

/// `[[http.workloads]]`: names unique and safe, methods and paths a request line can carry.
fn resolve_workloads(
    raw: Option<Vec<RawWorkload>>,
    base: &Expect,
) -> Result<BTreeMap<WorkloadName, Workload>, FieldError> {
    let Some(raw) = raw else {
        let w = legacy_workload(base);
        return Ok(BTreeMap::from([(w.name.clone(), w)]));
    };
    let mut out = BTreeMap::new();
    for (i, w) in raw.into_iter().enumerate() {
        let f = |x: &str| format!("http.workloads[{i}].{x}");
        check_name(&w.name).map_err(|e| FieldError::new(f("name"), e.to_string()))?;
        let method = w.method.unwrap_or_else(|| "GET".to_owned());
        if !METHODS.contains(&method.as_str()) {
            return Err(FieldError::new(
                f("method"),
                format!(
                    "`{method}`: write an HTTP method in capitals: {}",
                    METHODS.join(", ")
                ),
            ));
        }
        if !w.path.starts_with('/') || !w.path.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(FieldError::new(
                f("path"),
                format!(
                    "`{}`: write a path from `/` without spaces or control characters",
                    w.path
                ),
            ));
        }
        let headers = header_map(
            &f("headers"),
            w.headers.unwrap_or_default(),
            w.body.is_some(),
        )?;
        if w.expect.body.is_none() && w.expect.json.is_none() {
            return Err(FieldError::new(
                f("expect"),
                "says nothing of the body: write `body = \"...\"` (byte for byte) or `json = ...`",
            ));
        }
        // A workload's own answer: status 200 unless it says otherwise, only its headers.
        let base = Expect {
            status: 200,
            headers: BTreeMap::new(),
            body: ExpectBody::Exact(String::new()),
        };
        let expect = resolve_expect(&f("expect"), &base, Some(w.expect))?;
        let name = WorkloadName::from(w.name.as_str());
        let workload = Workload {
            name: name.clone(),
            method,
            path: w.path,
            headers,
            body: w.body,
            expect,
        };
        if out.insert(name, workload).is_some() {
            return Err(FieldError::new(
                f("name"),
                format!("`{}` is listed twice", w.name),
            ));
        }
    }
    if out.is_empty() {
        return Err(FieldError::new(
            "http.workloads",
            "empty: write at least one workload",
        ));
    }
    Ok(out)
}

/// Header names and values a request can carry, names lower-cased.
fn header_map(
    field: &str,
    raw: BTreeMap<String, String>,
    has_body: bool,
) -> Result<BTreeMap<String, String>, FieldError> {
    if let Some(p) = request_problem(raw.iter().map(|(k, v)| (k.as_str(), v.as_str())), has_body) {
        return Err(FieldError::new(field, p));
    }
    Ok(raw
        .into_iter()
        .map(|(k, v)| (k.to_ascii_lowercase(), v))
        .collect())
}

/// Headers a load generator writes itself (keep-alive is the shape's, the length the body's).
pub const TOOL_HEADERS: [&str; 4] = ["host", "content-length", "connection", "transfer-encoding"];

/// Methods the load generators can send.
pub const METHODS: [&str; 7] = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];

/// What every load generator requires of a request's headers and body, checked on the config
/// and again by the drivers: names are HTTP tokens, unique whatever their case, values
/// printable ASCII (a value goes on a command line, into a Lua string and onto the wire as
/// is), none of the tool's own headers, and a `Content-Type` with a body. `None`: fine.
pub fn request_problem<'a>(
    headers: impl Iterator<Item = (&'a str, &'a str)>,
    has_body: bool,
) -> Option<String> {
    let is_tchar = |b: u8| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b);
    let mut seen: Vec<String> = Vec::new();
    for (name, value) in headers {
        if name.is_empty() || !name.bytes().all(is_tchar) {
            return Some(format!("header name {name:?} is not an HTTP token"));
        }
        if !value
            .bytes()
            .all(|b| b == b'\t' || (b' '..=b'~').contains(&b))
        {
            return Some(format!(
                "header {name}: {value:?}: only printable ASCII, spaces and tabs"
            ));
        }
        let lower = name.to_ascii_lowercase();
        if TOOL_HEADERS.contains(&lower.as_str()) {
            return Some(format!(
                "header {name} is the load generator's own (keep-alive is the shape's)"
            ));
        }
        if seen.contains(&lower) {
            return Some(format!("header {name} is given twice"));
        }
        seen.push(lower);
    }
    (has_body && !seen.iter().any(|h| h == "content-type"))
        .then(|| "a body needs a Content-Type header".to_owned())
}

/// `[[http.shapes]]`, or the one shape `connections` and `keep_alive` of `[http]` describe.
fn resolve_shapes(raw: &RawHttp, threads: u32) -> Result<Vec<Shape>, FieldError> {
    let Some(list) = &raw.shapes else {
        let keep_alive = raw.keep_alive.unwrap_or(true);
        return Ok(vec![Shape {
            name: ShapeName::from(cell_schema::legacy_shape_name(keep_alive)),
            connections: http_count("connections", raw.connections, 64)?,
            keep_alive,
            threads,
        }]);
    };
    for (key, set) in [
        ("connections", raw.connections.is_some()),
        ("keep_alive", raw.keep_alive.is_some()),
    ] {
        if set {
            return Err(FieldError::new(
                format!("http.{key}"),
                "with [[http.shapes]] each shape says this: move it into a shape",
            ));
        }
    }
    let mut out: Vec<Shape> = Vec::new();
    for (i, s) in list.iter().enumerate() {
        out.push(resolve_shape(i, s, threads, &out)?);
    }
    if out.is_empty() {
        return Err(FieldError::new(
            "http.shapes",
            "empty: write at least one shape",
        ));
    }
    Ok(out)
}

fn resolve_shape(
    i: usize,
    s: &RawShape,
    threads: u32,
    before: &[Shape],
) -> Result<Shape, FieldError> {
    let f = |x: &str| format!("http.shapes[{i}].{x}");
    check_name(&s.name).map_err(|e| FieldError::new(f("name"), e.to_string()))?;
    if before.iter().any(|b| b.name.as_str() == s.name) {
        return Err(FieldError::new(
            f("name"),
            format!("`{}` is listed twice", s.name),
        ));
    }
    if s.connections == 0 {
        return Err(FieldError::new(
            f("connections"),
            "0: write a whole number above 0",
        ));
    }
    let threads = match s.threads {
        Some(0) => {
            return Err(FieldError::new(
                f("threads"),
                "0: write a whole number above 0",
            ));
        }
        Some(t) => t,
        None => threads,
    };
    Ok(Shape {
        name: ShapeName::from(s.name.as_str()),
        connections: s.connections,
        keep_alive: s.keep_alive,
        threads,
    })
}

/// `[http.default]`: names that exist, counts above 0.
fn resolve_session(
    raw: RawHttpSession,
    workloads: &BTreeMap<WorkloadName, Workload>,
    shapes: &[Shape],
) -> Result<SessionDef, FieldError> {
    let shapes = raw
        .shapes
        .map(|l| {
            names_in(
                "http.default.shapes",
                &l,
                &shapes.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(),
            )
            .map(|v| v.into_iter().map(ShapeName::from).collect())
        })
        .transpose()?;
    let workloads = raw
        .workloads
        .map(|l| {
            names_in(
                "http.default.workloads",
                &l,
                &workloads
                    .keys()
                    .map(WorkloadName::as_str)
                    .collect::<Vec<_>>(),
            )
            .map(|v| v.into_iter().map(WorkloadName::from).collect())
        })
        .transpose()?;
    if let Some(t) = &raw.tools {
        validate_tools("http.default.tools", t)?;
    }
    let count = |f: &str, v: Option<u32>| match v {
        Some(0) => Err(FieldError::new(
            format!("http.default.{f}"),
            "0: write a whole number above 0",
        )),
        v => Ok(v),
    };
    Ok(SessionDef {
        tools: raw.tools,
        shapes,
        workloads,
        runs: count("runs", raw.runs)?,
        duration_s: raw
            .duration
            .map(|v| positive("http.default.duration", v))
            .transpose()?,
        warmup_s: raw
            .warmup
            .map(|v| non_negative("http.default.warmup", v))
            .transpose()?,
    })
}

/// Each of `list` is one of `known` (listed once); the error names the known ones.
pub fn names_in<'a>(
    field: &str,
    list: &'a [String],
    known: &[&str],
) -> Result<Vec<&'a str>, FieldError> {
    let mut out: Vec<&str> = Vec::new();
    for (i, n) in list.iter().enumerate() {
        if !known.contains(&n.as_str()) {
            return Err(FieldError::new(
                format!("{field}[{i}]"),
                format!("`{n}` is not one of {}", join(known)),
            ));
        }
        if out.contains(&n.as_str()) {
            return Err(FieldError::new(
                format!("{field}[{i}]"),
                format!("`{n}` is listed twice"),
            ));
        }
        out.push(n);
    }
    if out.is_empty() {
        return Err(FieldError::new(field, "empty: name at least one"));
    }
    Ok(out)
}

/// Resolves `[http.servers]`: at least one server, each on a port of its own.
fn resolve_servers(
    source_dir: &Path,
    raw: BTreeMap<String, RawServer>,
    workloads: &BTreeMap<WorkloadName, Workload>,
    legacy: bool,
    toolchains: &BTreeMap<ToolchainName, Toolchain>,
) -> Result<BTreeMap<ServerName, Server>, FieldError> {
    let mut servers = BTreeMap::new();
    let mut ports: BTreeMap<u16, String> = BTreeMap::new();
    for (name, s) in raw {
        let answers = served_workloads(&name, &s, workloads, legacy)?;
        let server = resolve_server(source_dir, &name, s, answers, toolchains, &mut ports)?;
        servers.insert(server.name.clone(), server);
    }
    if servers.is_empty() {
        return Err(FieldError::new(
            "http.servers",
            "no servers: add a [http.servers.<name>] table",
        ));
    }
    Ok(servers)
}

/// The workloads a server serves (all by default) with what it must answer to each: the
/// workload's `expect`, or without `[[http.workloads]]` the server's own `expect` over
/// `[http.expect]`.
fn served_workloads(
    name: &str,
    raw: &RawServer,
    workloads: &BTreeMap<WorkloadName, Workload>,
    legacy: bool,
) -> Result<BTreeMap<WorkloadName, Expect>, FieldError> {
    let f = |x: &str| format!("http.servers.{name}.{x}");
    if !legacy && raw.expect.is_some() {
        return Err(FieldError::new(
            f("expect"),
            "with [[http.workloads]] each workload says what it expects: remove it, or drop the workload from this server's `workloads`",
        ));
    }
    let chosen: Vec<&str> = match &raw.workloads {
        None => workloads.keys().map(WorkloadName::as_str).collect(),
        Some(l) => names_in(
            &f("workloads"),
            l,
            &workloads
                .keys()
                .map(WorkloadName::as_str)
                .collect::<Vec<_>>(),
        )?,
    };
    chosen
        .into_iter()
        .map(|w| {
            let wl = &workloads[w];
            let e = if legacy {
                resolve_expect(&f("expect"), &wl.expect, raw.expect.clone())?
            } else {
                wl.expect.clone()
            };
            Ok((wl.name.clone(), e))
        })
        .collect()
}

/// Resolves one server; `ports` holds the ports of the servers before it.
fn resolve_server(
    source_dir: &Path,
    name: &str,
    raw: RawServer,
    workloads: BTreeMap<WorkloadName, Expect>,
    toolchains: &BTreeMap<ToolchainName, Toolchain>,
    ports: &mut BTreeMap<u16, String>,
) -> Result<Server, FieldError> {
    let f = |x: &str| format!("http.servers.{name}.{x}");
    check_server_name(name)?;
    let Some(tc) = toolchains.get(raw.toolchain.as_str()) else {
        return Err(FieldError::new(
            f("toolchain"),
            format!(
                "unknown toolchain `{}`: toolchains are {}",
                raw.toolchain,
                join(toolchains.keys())
            ),
        ));
    };
    let build = server_argv(&f("build"), raw.build.as_deref().unwrap_or_default())?;
    let run = server_argv(&f("run"), &raw.run)?;
    check_server_run(&f("run"), &run)?;
    for (which, args) in [("build", &build), ("run", &run)] {
        check_server_args(&f(which), tc, args)?;
    }
    claim_port(&f("port"), name, raw.port, ports)?;
    let source = existing_dir(&f("source"), source_dir.join(&raw.source))?;
    let sname = ServerName::from(name);
    Ok(Server {
        name: sname,
        toolchain: tc.name.clone(),
        label: raw.label.unwrap_or_else(|| name.to_owned()),
        source,
        build,
        run,
        port: raw.port,
        workloads,
        keep_alive: raw.keep_alive.unwrap_or(true),
    })
}

fn check_server_name(name: &str) -> Result<(), FieldError> {
    let field = || format!("http.servers.{name}");
    check_name(name).map_err(|e| FieldError::new(field(), e.to_string()))?;
    if name == "overlay" {
        // soak/overlay.svg is the chart of every server together.
        return Err(FieldError::new(
            field(),
            "`overlay` is reserved (soak/overlay.svg): pick another name",
        ));
    }
    Ok(())
}

/// A server's build or run argv, parsed (an empty build is allowed: nothing to build).
fn server_argv(field: &str, args: &[String]) -> Result<Vec<Arg>, FieldError> {
    args.iter()
        .map(|a| Arg::parse(a).map_err(|e| FieldError::new(field, e.to_string())))
        .collect()
}

/// A server's run starts something and tells it its port.
fn check_server_run(field: &str, run: &[Arg]) -> Result<(), FieldError> {
    if run.is_empty() {
        return Err(FieldError::new(
            field,
            "empty: write the command that starts the server",
        ));
    }
    if !run.iter().any(|a| a.has(&Piece::Port)) {
        return Err(FieldError::new(
            field,
            "the run never names {port}: the server must be told where to listen",
        ));
    }
    Ok(())
}

/// No `{phase}`, and only tools of the server's toolchain, checked argument by argument.
fn check_server_args(field: &str, tc: &Toolchain, args: &[Arg]) -> Result<(), FieldError> {
    for a in args {
        if a.has(&Piece::Phase) {
            return Err(FieldError::new(
                field,
                "{phase} belongs to workload rows, not servers",
            ));
        }
        check_tools(field, tc, std::iter::once(a))?;
    }
    Ok(())
}

/// A port of 1024 or above that no server before this one has.
fn claim_port(
    field: &str,
    name: &str,
    port: u16,
    ports: &mut BTreeMap<u16, String>,
) -> Result<(), FieldError> {
    if port < 1024 {
        return Err(FieldError::new(
            field,
            format!("{port}: use a port of 1024 or above"),
        ));
    }
    if let Some(other) = ports.insert(port, name.to_owned()) {
        return Err(FieldError::new(
            field,
            format!("{port} is also the port of server `{other}`: give each its own"),
        ));
    }
    Ok(())
}

/// Resolves `[soak]` against the resolved `[http]` (its servers are soaked).
pub(crate) fn resolve_soak(raw: &RawSoak, http: Option<&HttpDef>) -> Result<SoakDef, FieldError> {
    let Some(http) = http else {
        return Err(FieldError::new(
            "soak",
            "the soak suite soaks the servers of [http]: add an [http] table with servers",
        ));
    };
    let servers = soak_servers(raw.servers.as_deref(), http)?;
    let secs = |f: &str, v: Option<f64>, d: f64| positive(&format!("soak.{f}"), v.unwrap_or(d));
    let duration_s = secs("duration", raw.duration, 3600.0)?;
    let window_start_s = window_start(
        "soak.window_start",
        raw.window_start.unwrap_or(600.0),
        duration_s,
    )?;
    let drift_share = secs("drift_share", raw.drift_share, 0.05)?;
    let min_r2 = raw.min_r2.unwrap_or(0.5);
    if !(0.0..=1.0).contains(&min_r2) {
        return Err(FieldError::new(
            "soak.min_r2",
            format!("{min_r2}: write a number from 0 to 1"),
        ));
    }
    let rate = raw.rate.unwrap_or(200);
    if rate == 0 {
        return Err(FieldError::new(
            "soak.rate",
            "0: write requests per second above 0",
        ));
    }
    let connections = raw.connections.unwrap_or(4);
    if connections == 0 {
        return Err(FieldError::new(
            "soak.connections",
            "0: write a whole number above 0",
        ));
    }
    let def = SoakDef {
        servers,
        config: SoakConfig {
            rate,
            connections,
            duration_s,
            interval_s: raw.interval.unwrap_or(1.0),
            window_start_s,
            minima_window_s: raw.minima_window.unwrap_or(60.0),
            drift_share,
            min_r2,
            fail_on_drift: raw.fail_on_drift.unwrap_or(true),
            keep_alive: raw.keep_alive.unwrap_or(true),
        },
    };
    def.validate()?;
    Ok(def)
}

/// The servers `[soak]` names, each a server of `[http]`; none named: all of them.
fn soak_servers(raw: Option<&[String]>, http: &HttpDef) -> Result<Vec<ServerName>, FieldError> {
    let Some(list) = raw else {
        return Ok(http.servers.keys().cloned().collect());
    };
    list.iter()
        .enumerate()
        .map(|(i, s)| {
            http.server(s)
                .map(|server| server.name.clone())
                .map_err(|e| FieldError::new(format!("soak.servers[{i}]"), e.to_string()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn http(tools: &[&str], connections: u32, threads: u32) -> HttpDef {
        HttpDef {
            tools: tools.iter().map(|t| (*t).to_owned()).collect(),
            threads,
            duration_s: 10.0,
            warmup_s: 2.0,
            runs: 5,
            startup_timeout_s: 10.0,
            stop_grace_s: 5.0,
            drain_timeout_s: 3.0,
            oha_key: DEFAULT_OHA_KEY.to_owned(),
            oha_version: None,
            servers: BTreeMap::new(),
            mode: HttpMode::Fresh,
            sustained_duration_s: 600.0,
            workloads: BTreeMap::from([(
                WorkloadName::from("plaintext"),
                legacy_workload(&default_expect()),
            )]),
            shapes: vec![Shape {
                name: ShapeName::from("keep-alive"),
                connections,
                keep_alive: true,
                threads,
            }],
            default: None,
            cpus: None,
        }
    }

    #[test]
    fn uneven_wrk_connections_are_run_not_refused() {
        // wrk runs 96 of them over its 16 threads; the job records that.
        assert!(http(&["wrk"], 100, 16).validate().is_ok());
        assert!(http(&["wrk", "oha", "ab"], 3, 8).validate().is_ok());
    }

    #[test]
    fn wrk_and_ab_count_whole_seconds() {
        for tool in ["wrk", "ab"] {
            let half = HttpDef {
                duration_s: 1.5,
                ..http(&["oha", tool], 4, 1)
            };
            let err = half.validate().expect_err("1.5 s");
            assert_eq!(
                err.to_string(),
                format!("http.duration: 1.5: {tool} counts whole seconds; write a whole number")
            );
        }
        let oha = HttpDef {
            duration_s: 1.5,
            warmup_s: 0.5,
            ..http(&["oha"], 4, 1)
        };
        assert!(oha.validate().is_ok());
    }

    #[test]
    fn tools_are_the_three_cell_drives() {
        let err = http(&["siege"], 4, 1).validate().expect_err("siege");
        assert!(err.to_string().contains("write wrk, oha, ab"), "{err}");
        let err = http(&[], 4, 1).validate().expect_err("none");
        assert!(
            err.to_string().contains("one or more of wrk, oha, ab"),
            "{err}"
        );
        let err = http(&["ab", "ab"], 4, 1).validate().expect_err("twice");
        assert!(err.to_string().contains("`ab` is listed twice"), "{err}");
    }

    const FIELDS: [&str; 2] = ["http.cpus.server", "http.cpus.load"];

    fn sets(server: Option<&[u32]>, load: Option<&[u32]>) -> Result<Option<CpuSets>, FieldError> {
        CpuSets::new(
            FIELDS,
            server.map(<[u32]>::to_vec),
            load.map(<[u32]>::to_vec),
        )
    }

    fn http_without_servers() -> HttpDef {
        HttpDef {
            tools: vec!["oha".into()],
            threads: 1,
            duration_s: 1.0,
            warmup_s: 0.0,
            runs: 1,
            startup_timeout_s: 1.0,
            stop_grace_s: 1.0,
            drain_timeout_s: 1.0,
            cpus: None,
            oha_key: DEFAULT_OHA_KEY.into(),
            oha_version: None,
            servers: BTreeMap::new(),
            mode: HttpMode::Fresh,
            sustained_duration_s: 600.0,
            workloads: BTreeMap::new(),
            shapes: Vec::new(),
            default: None,
        }
    }

    fn soak(toml_text: &str) -> SoakDef {
        let raw: RawSoak = toml::from_str(toml_text).unwrap();
        resolve_soak(&raw, Some(&http_without_servers())).unwrap()
    }

    #[test]
    fn a_soak_keeps_connections_alive_unless_told_not_to() {
        assert!(soak("").config.keep_alive);
        assert!(soak("keep_alive = true").config.keep_alive);
        assert!(!soak("keep_alive = false").config.keep_alive);
    }

    #[test]
    fn cpu_sets_are_both_or_neither_each_sorted_and_disjoint() {
        assert_eq!(sets(None, None), Ok(None));
        let s = sets(Some(&[3, 2]), Some(&[1, 0])).unwrap().unwrap();
        assert_eq!((s.server, s.load), (vec![2, 3], vec![0, 1]));
        assert_eq!(s.fields, FIELDS.map(str::to_owned));
        for (server, load, field, msg) in [
            (
                Some(&[2][..]),
                None,
                "http.cpus.load",
                "missing: write both",
            ),
            (
                None,
                Some(&[0][..]),
                "http.cpus.server",
                "missing: write both",
            ),
            (Some(&[][..]), Some(&[0][..]), "http.cpus.server", "empty"),
            (
                Some(&[2, 2][..]),
                Some(&[0][..]),
                "http.cpus.server",
                "CPU 2 is listed twice",
            ),
            (
                Some(&[2, 3][..]),
                Some(&[0, 3][..]),
                "http.cpus.load",
                "CPU 3 is also in http.cpus.server",
            ),
        ] {
            let e = sets(server, load).unwrap_err();
            assert_eq!(e.field, field, "{e}");
            assert!(e.msg.contains(msg), "{e}");
        }
    }
}
