//! The `http` and `soak` suites of `cell/cell.toml`, resolved.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use cell_schema::{ServerName, SoakConfig, ToolchainName};

use crate::error::{FieldError, LookupError};
use crate::raw::{RawCpus, RawExpect, RawHttp, RawServer, RawSoak};
use crate::template::{Arg, Piece};
use crate::{Toolchain, check_name, check_tools, existing_dir, join};

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

    /// What the load settings must satisfy, checked on the config and again after a command
    /// line changed them.
    pub fn validate(&self) -> Result<(), FieldError> {
        positive("http.duration", self.duration_s)?;
        non_negative("http.warmup", self.warmup_s)?;
        if self.tools.is_empty() {
            return Err(FieldError::new(
                "http.tools",
                "empty: write [\"wrk\", \"oha\"] or one of them",
            ));
        }
        for (i, t) in self.tools.iter().enumerate() {
            if !LOAD_TOOLS.contains(&t.as_str()) {
                return Err(FieldError::new(
                    format!("http.tools[{i}]"),
                    format!(
                        "`{t}` is not a load generator cell drives: write {}",
                        join(LOAD_TOOLS)
                    ),
                ));
            }
            if self.tools[..i].contains(t) {
                return Err(FieldError::new(
                    format!("http.tools[{i}]"),
                    format!("`{t}` is listed twice"),
                ));
            }
        }
        if self.tools.iter().any(|t| t == "wrk") {
            self.validate_for_wrk()?;
        }
        Ok(())
    }

    /// wrk counts whole seconds and spreads connections evenly over its threads.
    fn validate_for_wrk(&self) -> Result<(), FieldError> {
        for (f, v) in [("duration", self.duration_s), ("warmup", self.warmup_s)] {
            if v.fract() != 0.0 {
                return Err(FieldError::new(
                    format!("http.{f}"),
                    format!("{v}: wrk counts whole seconds; write a whole number"),
                ));
            }
        }
        if !self.connections.is_multiple_of(self.threads) {
            return Err(FieldError::new(
                "http.connections",
                format!(
                    "{} connections over {} wrk threads: wrk needs a multiple of threads",
                    self.connections, self.threads
                ),
            ));
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
        body: "hello, world\n".to_owned(),
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
    Ok(Expect {
        status,
        headers,
        body: raw.body.unwrap_or_else(|| base.body.clone()),
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
    let tools = raw
        .tools
        .unwrap_or_else(|| LOAD_TOOLS.iter().map(|t| (*t).to_owned()).collect());
    let warmup_s = non_negative("http.warmup", raw.warmup.unwrap_or(2.0))?;
    let base = resolve_expect("http.expect", &default_expect(), raw.expect)?;
    let servers = resolve_servers(&root.join(&raw.source), raw.servers, &base, toolchains)?;
    let oha_key = raw.oha.unwrap_or_else(|| DEFAULT_OHA_KEY.to_owned());
    let oha_version = env.get(&oha_key).map(str::to_owned);
    let def = HttpDef {
        tools,
        connections: http_count("connections", raw.connections, 64)?,
        threads: http_count("threads", raw.threads, 1)?,
        duration_s: http_secs("duration", raw.duration, 10.0)?,
        warmup_s,
        runs: http_count("runs", raw.runs, 5)?,
        keep_alive: raw.keep_alive.unwrap_or(true),
        startup_timeout_s: http_secs("startup_timeout", raw.startup_timeout, 10.0)?,
        stop_grace_s: http_secs("stop_grace", raw.stop_grace, 5.0)?,
        drain_timeout_s: http_secs("drain_timeout", raw.drain_timeout, 3.0)?,
        cpus: resolve_cpus(raw.cpus)?,
        oha_key,
        oha_version,
        servers,
    };
    def.validate()?;
    Ok(def)
}

/// Resolves `[http.servers]`: at least one server, each on a port of its own.
fn resolve_servers(
    source_dir: &Path,
    raw: BTreeMap<String, RawServer>,
    base: &Expect,
    toolchains: &BTreeMap<ToolchainName, Toolchain>,
) -> Result<BTreeMap<ServerName, Server>, FieldError> {
    let mut servers = BTreeMap::new();
    let mut ports: BTreeMap<u16, String> = BTreeMap::new();
    for (name, s) in raw {
        let server = resolve_server(source_dir, &name, s, base, toolchains, &mut ports)?;
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

/// Resolves one server; `ports` holds the ports of the servers before it.
fn resolve_server(
    source_dir: &Path,
    name: &str,
    raw: RawServer,
    base: &Expect,
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
    let expect = resolve_expect(&f("expect"), base, raw.expect)?;
    let sname = ServerName::from(name);
    Ok(Server {
        name: sname,
        toolchain: tc.name.clone(),
        label: raw.label.unwrap_or_else(|| name.to_owned()),
        source,
        build,
        run,
        port: raw.port,
        expect,
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
            connections: 1,
            threads: 1,
            duration_s: 1.0,
            warmup_s: 0.0,
            runs: 1,
            keep_alive: true,
            startup_timeout_s: 1.0,
            stop_grace_s: 1.0,
            drain_timeout_s: 1.0,
            cpus: None,
            oha_key: DEFAULT_OHA_KEY.into(),
            oha_version: None,
            servers: BTreeMap::new(),
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
