//! The `http` and `soak` suites of `cell/cell.toml`, resolved.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use cell_schema::{ServerName, SoakConfig, ToolchainName};

use crate::raw::{RawExpect, RawHttp, RawSoak};
use crate::template::{Arg, Piece};
use crate::{Toolchain, check_name, join};

/// Load generators cell drives.
pub const LOAD_TOOLS: &[&str] = &["wrk", "oha"];

/// What a server must answer to `GET /`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expect {
    /// Status code.
    pub status: u16,
    /// Headers (lower-case names) that must be present with exactly these values.
    pub headers: BTreeMap<String, String>,
    /// The body, byte for byte.
    pub body: String,
}

/// One server under test.
#[derive(Clone, Debug, PartialEq)]
pub struct Server {
    /// Its name.
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
    /// Loopback port.
    pub port: u16,
    /// The response it must give.
    pub expect: Expect,
}

/// `[http]`, resolved.
#[derive(Clone, Debug, PartialEq)]
pub struct HttpDef {
    /// Load generators, in the order each round runs them.
    pub tools: Vec<String>,
    /// Open connections.
    pub connections: u32,
    /// Load generator threads (wrk).
    pub threads: u32,
    /// Seconds of each measured run.
    pub duration_s: f64,
    /// Seconds of load before each measured run.
    pub warmup_s: f64,
    /// Measured runs per server and tool.
    pub runs: u32,
    /// Keep-alive on.
    pub keep_alive: bool,
    /// Bound on the wait for the first 200.
    pub startup_timeout_s: f64,
    /// Seconds between SIGTERM and SIGKILL.
    pub stop_grace_s: f64,
    /// Bound on the wait for `TIME_WAIT` sockets to drain before a run.
    pub drain_timeout_s: f64,
    /// `versions.env` key of the oha version a workflow installs.
    pub oha_key: String,
    /// Its value, when set.
    pub oha_version: Option<String>,
    /// The servers.
    pub servers: BTreeMap<ServerName, Server>,
}

/// `[soak]`, resolved: the servers soaked and the soak every one of them gets (the schema's
/// own type, so a job records exactly what was configured).
#[derive(Clone, Debug, PartialEq)]
pub struct SoakDef {
    /// Servers soaked.
    pub servers: Vec<ServerName>,
    /// Rate, duration, sampling and the drift rule.
    pub config: SoakConfig,
}

impl HttpDef {
    /// A server by name; the error lists the servers there are.
    pub fn server(&self, name: &str) -> Result<&Server, String> {
        self.servers.get(name).ok_or_else(|| {
            format!(
                "unknown server `{name}`: [http.servers] has {}",
                join(self.servers.keys())
            )
        })
    }

    /// What the load settings must satisfy, checked on the config and again after a command
    /// line changed them; an error is (field, message).
    pub fn validate(&self) -> Result<(), (String, String)> {
        positive("http.duration", self.duration_s)?;
        if !(self.warmup_s.is_finite() && self.warmup_s >= 0.0) {
            return Err((
                "http.warmup".into(),
                format!("{}: write 0 or more seconds", self.warmup_s),
            ));
        }
        if self.tools.is_empty() {
            return Err((
                "http.tools".into(),
                "empty: write [\"wrk\", \"oha\"] or one of them".into(),
            ));
        }
        for (i, t) in self.tools.iter().enumerate() {
            if !LOAD_TOOLS.contains(&t.as_str()) {
                return Err((
                    format!("http.tools[{i}]"),
                    format!(
                        "`{t}` is not a load generator cell drives: write {}",
                        join(LOAD_TOOLS)
                    ),
                ));
            }
            if self.tools[..i].contains(t) {
                return Err((format!("http.tools[{i}]"), format!("`{t}` is listed twice")));
            }
        }
        if self.tools.iter().any(|t| t == "wrk") {
            // wrk counts whole seconds and spreads connections evenly over its threads.
            for (f, v) in [("duration", self.duration_s), ("warmup", self.warmup_s)] {
                if v.fract() != 0.0 {
                    return Err((
                        format!("http.{f}"),
                        format!("{v}: wrk counts whole seconds; write a whole number"),
                    ));
                }
            }
            #[expect(
                clippy::manual_is_multiple_of,
                reason = "is_multiple_of is newer than the workspace's rust-version (1.85)"
            )]
            if self.connections % self.threads != 0 {
                return Err((
                    "http.connections".into(),
                    format!(
                        "{} connections over {} wrk threads: wrk needs a multiple of threads",
                        self.connections, self.threads
                    ),
                ));
            }
        }
        Ok(())
    }
}

impl SoakDef {
    /// What the soak settings must satisfy (config and command line alike).
    pub fn validate(&self) -> Result<(), (String, String)> {
        let c = &self.config;
        positive("soak.duration", c.duration_s)?;
        positive("soak.interval", c.interval_s)?;
        positive("soak.minima_window", c.minima_window_s)?;
        if !(c.window_start_s.is_finite()
            && c.window_start_s >= 0.0
            && c.window_start_s < c.duration_s)
        {
            return Err((
                "soak.window_start".into(),
                format!(
                    "{}: write a number of seconds from 0 up to the duration ({})",
                    c.window_start_s, c.duration_s
                ),
            ));
        }
        // At least three minima windows, or the sawtooth guard has nothing to fit.
        if (c.duration_s - c.window_start_s) / c.minima_window_s < 3.0 {
            return Err((
                "soak.minima_window".into(),
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

/// Default `versions.env` key of the oha version.
pub const DEFAULT_OHA_KEY: &str = "OHA_VERSION";

type FieldError = (String, String);

fn positive(field: &str, v: f64) -> Result<f64, FieldError> {
    if v.is_finite() && v > 0.0 {
        Ok(v)
    } else {
        Err((field.to_owned(), format!("{v}: write a number above 0")))
    }
}

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
        return Err((
            format!("{field}.status"),
            format!("{status}: write an HTTP status code (100–599)"),
        ));
    }
    let mut headers = base.headers.clone();
    for (k, v) in raw.headers.unwrap_or_default() {
        if k.is_empty() || !k.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-') {
            return Err((
                format!("{field}.headers"),
                format!("`{k}` is not a header name"),
            ));
        }
        headers.insert(k.to_ascii_lowercase(), v);
    }
    Ok(Expect {
        status,
        headers,
        body: raw.body.unwrap_or_else(|| base.body.clone()),
    })
}

/// Resolves `[http]`: every server's toolchain and tools exist, templates parse, `{port}`
/// is named, ports are distinct.
#[expect(
    clippy::too_many_lines,
    reason = "one linear list of checks, each with its own message"
)]
pub(crate) fn resolve_http(
    root: &Path,
    raw: RawHttp,
    toolchains: &BTreeMap<ToolchainName, Toolchain>,
    env: &crate::VersionsEnv,
) -> Result<HttpDef, FieldError> {
    let tools = raw
        .tools
        .unwrap_or_else(|| LOAD_TOOLS.iter().map(|t| (*t).to_owned()).collect());
    let count = |f: &str, v: Option<u32>, d: u32| -> Result<u32, FieldError> {
        match v.unwrap_or(d) {
            0 => Err((
                format!("http.{f}"),
                "0: write a whole number above 0".into(),
            )),
            n => Ok(n),
        }
    };
    let secs = |f: &str, v: Option<f64>, d: f64| positive(&format!("http.{f}"), v.unwrap_or(d));
    let warmup_s = raw.warmup.unwrap_or(2.0);
    if !(warmup_s.is_finite() && warmup_s >= 0.0) {
        return Err((
            "http.warmup".into(),
            format!("{warmup_s}: write 0 or more seconds"),
        ));
    }
    let base = Expect {
        status: 200,
        headers: BTreeMap::from([("content-type".to_owned(), "text/plain".to_owned())]),
        body: "hello, world\n".to_owned(),
    };
    let base = resolve_expect("http.expect", &base, raw.expect)?;
    let source_dir = root.join(&raw.source);
    let mut servers = BTreeMap::new();
    let mut ports: BTreeMap<u16, String> = BTreeMap::new();
    for (name, s) in raw.servers {
        let f = |x: &str| format!("http.servers.{name}.{x}");
        check_name(&name).map_err(|m| (format!("http.servers.{name}"), m))?;
        if name == "overlay" {
            // soak/overlay.svg is the chart of every server together.
            return Err((
                format!("http.servers.{name}"),
                "`overlay` is reserved (soak/overlay.svg): pick another name".into(),
            ));
        }
        let Some(tc) = toolchains.get(s.toolchain.as_str()) else {
            return Err((
                f("toolchain"),
                format!(
                    "unknown toolchain `{}`: toolchains are {}",
                    s.toolchain,
                    join(toolchains.keys())
                ),
            ));
        };
        let parse = |which: &str, args: &[String]| -> Result<Vec<Arg>, FieldError> {
            args.iter()
                .map(|a| Arg::parse(a).map_err(|m| (f(which), m)))
                .collect()
        };
        let build = parse("build", s.build.as_deref().unwrap_or_default())?;
        let run = parse("run", &s.run)?;
        if run.is_empty() {
            return Err((
                f("run"),
                "empty: write the command that starts the server".into(),
            ));
        }
        if !run.iter().any(|a| a.has(&Piece::Port)) {
            return Err((
                f("run"),
                "the run never names {port}: the server must be told where to listen".into(),
            ));
        }
        for (which, args) in [("build", &build), ("run", &run)] {
            for a in args {
                if a.has(&Piece::Phase) {
                    return Err((
                        f(which),
                        "{phase} belongs to workload rows, not servers".into(),
                    ));
                }
                for t in a.tools() {
                    if !tc.tools.contains_key(t) {
                        return Err((
                            f(which),
                            format!(
                                "{{tool:{t}}} is not a tool of toolchain `{}`: its tools are {}",
                                tc.name,
                                join(tc.tools.keys())
                            ),
                        ));
                    }
                }
            }
        }
        if s.port < 1024 {
            return Err((
                f("port"),
                format!("{}: use a port of 1024 or above", s.port),
            ));
        }
        if let Some(other) = ports.insert(s.port, name.clone()) {
            return Err((
                f("port"),
                format!(
                    "{} is also the port of server `{other}`: give each its own",
                    s.port
                ),
            ));
        }
        let source = source_dir.join(&s.source);
        if !source.is_dir() {
            return Err((
                f("source"),
                format!("{} is not a directory", source.display()),
            ));
        }
        let expect = resolve_expect(&f("expect"), &base, s.expect)?;
        let sname = ServerName::from(name.as_str());
        servers.insert(
            sname.clone(),
            Server {
                name: sname,
                toolchain: tc.name.clone(),
                label: s.label.unwrap_or_else(|| name.clone()),
                source,
                build,
                run,
                port: s.port,
                expect,
            },
        );
    }
    if servers.is_empty() {
        return Err((
            "http.servers".into(),
            "no servers: add a [http.servers.<name>] table".into(),
        ));
    }
    let oha_key = raw.oha.unwrap_or_else(|| DEFAULT_OHA_KEY.to_owned());
    let oha_version = env.get(&oha_key).map(str::to_owned);
    let def = HttpDef {
        tools,
        connections: count("connections", raw.connections, 64)?,
        threads: count("threads", raw.threads, 1)?,
        duration_s: secs("duration", raw.duration, 10.0)?,
        warmup_s,
        runs: count("runs", raw.runs, 5)?,
        keep_alive: raw.keep_alive.unwrap_or(true),
        startup_timeout_s: secs("startup_timeout", raw.startup_timeout, 10.0)?,
        stop_grace_s: secs("stop_grace", raw.stop_grace, 5.0)?,
        drain_timeout_s: secs("drain_timeout", raw.drain_timeout, 3.0)?,
        oha_key,
        oha_version,
        servers,
    };
    def.validate()?;
    Ok(def)
}

/// Resolves `[soak]` against the resolved `[http]` (its servers are soaked).
pub(crate) fn resolve_soak(raw: RawSoak, http: Option<&HttpDef>) -> Result<SoakDef, FieldError> {
    let Some(http) = http else {
        return Err((
            "soak".into(),
            "the soak suite soaks the servers of [http]: add an [http] table with servers".into(),
        ));
    };
    let servers = match raw.servers {
        None => http.servers.keys().cloned().collect(),
        Some(list) => {
            let mut out = Vec::new();
            for (i, s) in list.iter().enumerate() {
                let server = http
                    .server(s)
                    .map_err(|m| (format!("soak.servers[{i}]"), m))?;
                out.push(server.name.clone());
            }
            out
        }
    };
    let secs = |f: &str, v: Option<f64>, d: f64| positive(&format!("soak.{f}"), v.unwrap_or(d));
    let duration_s = secs("duration", raw.duration, 3600.0)?;
    let window_start_s = raw.window_start.unwrap_or(600.0);
    if !(window_start_s.is_finite() && window_start_s >= 0.0 && window_start_s < duration_s) {
        return Err((
            "soak.window_start".into(),
            format!(
                "{window_start_s}: write a number of seconds from 0 up to the duration ({duration_s})"
            ),
        ));
    }
    let drift_share = secs("drift_share", raw.drift_share, 0.05)?;
    let min_r2 = raw.min_r2.unwrap_or(0.5);
    if !(0.0..=1.0).contains(&min_r2) {
        return Err((
            "soak.min_r2".into(),
            format!("{min_r2}: write a number from 0 to 1"),
        ));
    }
    let rate = raw.rate.unwrap_or(200);
    if rate == 0 {
        return Err((
            "soak.rate".into(),
            "0: write requests per second above 0".into(),
        ));
    }
    let connections = raw.connections.unwrap_or(4);
    if connections == 0 {
        return Err((
            "soak.connections".into(),
            "0: write a whole number above 0".into(),
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
        },
    };
    def.validate()?;
    Ok(def)
}
