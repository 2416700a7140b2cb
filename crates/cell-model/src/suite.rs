//! The `http` and `soak` suites of `cell/cell.toml`, resolved.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use cell_schema::{
    ConcurrencyModel, HttpMode, ServerName, ShapeName, SoakConfig, ToolchainName, WorkloadName,
};

use crate::Toolchain;
use crate::error::{FieldError, LookupError};
use crate::load_tools::{self, known_tools};
use crate::raw::{
    RawCpus, RawExpect, RawHttp, RawHttpSession, RawServer, RawShape, RawSoak, RawWorkload,
};
use crate::template::Arg;

pub(crate) mod matrix;
mod servers;
mod soak;

pub use matrix::{TOOL_HEADERS, names_in, request_problem};
use matrix::{resolve_session, resolve_shapes, resolve_workloads};
use servers::resolve_servers;
pub(crate) use soak::resolve_soak;

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
    /// Load generator threads, for the tools that take a count.
    pub threads: u32,
}

/// The part of the matrix a session runs without `--full` (`[http.default]`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SessionDef {
    /// Servers by name (`None`: all of them): what `cell local` and the workflow's jobs run
    /// unless told otherwise.
    pub servers: Option<Vec<ServerName>>,
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
    /// How it serves concurrent connections, when the config says.
    pub model: Option<ConcurrencyModel>,
}

impl Server {
    /// Why `shape` is not measured on this server, when it is not (its model's rule).
    #[must_use]
    pub fn left_out_of(&self, shape: &Shape) -> Option<String> {
        self.model?.left_out_of(shape.connections)
    }
}

/// `[http]`, resolved.
#[derive(Clone, Debug, PartialEq)]
pub struct HttpDef {
    /// Load generators, in the order each round runs them.
    pub tools: Vec<String>,
    /// Load generator threads, for the tools that take a count (the load tool table says).
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
    /// `versions.env` key of the oha version a workflow installs ([`HttpDef::version_key`]
    /// reads it).
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
    /// The `versions.env` key of a crate-built load generator's version, given its table
    /// entry's `version_key`: the entry's own, except that `[http] oha` renames oha's
    /// ([`DEFAULT_OHA_KEY`]).
    pub fn version_key<'a>(&'a self, entry_key: &'a str) -> &'a str {
        if entry_key == DEFAULT_OHA_KEY {
            &self.oha_key
        } else {
            entry_key
        }
    }

    /// A server by name; the error lists the servers there are.
    pub fn server(&self, name: &str) -> Result<&Server, LookupError> {
        self.servers.get(name).ok_or_else(|| LookupError::Server {
            name: name.to_owned(),
            known: self.servers.keys().map(ToString::to_string).collect(),
        })
    }

    /// The servers `cell local` runs and the workflow gives a job when none is named: every
    /// server with `full`, else those `[http.default] servers` lists (all without it).
    #[must_use]
    pub fn default_servers(&self, full: bool) -> Vec<ServerName> {
        match self.default.as_ref().and_then(|d| d.servers.as_ref()) {
            Some(names) if !full => names.clone(),
            _ => self.servers.keys().cloned().collect(),
        }
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

    /// Some tools count whole seconds (the table says which). Connections that wrk cannot
    /// spread evenly over its threads are not refused: the run records what wrk really used.
    fn validate_whole_seconds(&self) -> Result<(), FieldError> {
        let Some(tool) = load_tools::whole_seconds_tool(&self.tools) else {
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

/// A list of load tools: known ones, each once.
fn validate_tools(field: &str, tools: &[String]) -> Result<(), FieldError> {
    if tools.is_empty() {
        return Err(FieldError::new(
            field,
            format!("empty: write one or more of {}", known_tools()),
        ));
    }
    for (i, t) in tools.iter().enumerate() {
        if load_tools::load_tool(t).is_none() {
            return Err(FieldError::new(
                format!("{field}[{i}]"),
                format!(
                    "`{t}` is not a load generator cell drives: write {}",
                    known_tools()
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
    let tools = raw.tools.unwrap_or_else(|| {
        load_tools::LOAD_TOOLS
            .iter()
            .filter(|t| t.by_default)
            .map(|t| t.name.to_owned())
            .collect()
    });
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
        .map(|d| resolve_session(d, &workloads, &shapes, &servers))
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

#[cfg(test)]
mod tests {
    use super::matrix::legacy_workload;
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
