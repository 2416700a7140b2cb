//! What both suites share: the load tools found and asked their versions, servers built and
//! checked, one load generator run timed with its own rusage.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use cell_model::{Expect, HttpDef, Plan, Server, Vars, Workload};
use cell_schema::{LoadReport, ServerBuild, ToolName, ToolVersion, round_time};

use super::check;
use super::error::{BuildError, LoadRunError, NotReady, StartError};
use super::load::{self, LoadSpec, LoadTool};
use super::server::{CpuSet, Running, pin};
use cell_fetch::hash_file;

use crate::build::{log_tail, run_build};
use crate::tools::{self, Probed};

/// Why a suite cannot run at all (exit 2): a missing tool, an unwritable directory.
#[derive(Debug, thiserror::Error)]
pub enum SuiteError {
    /// A load generator or a server's toolchain is not installed.
    #[error("{0}")]
    Missing(String),
    /// A directory or file of the session could not be made or written.
    #[error("{what}: {error}")]
    Io {
        /// What was being done.
        what: String,
        /// What the OS said.
        #[source]
        error: std::io::Error,
    },
    /// A bad request (unknown server, no suite configured).
    #[error("{0}")]
    Usage(String),
    /// The load generator failed against a server that still answers as expected.
    #[error("the load generator failed, not the server: {0}")]
    Load(String),
}

impl From<super::error::CpuNotAllowed> for SuiteError {
    fn from(e: super::error::CpuNotAllowed) -> Self {
        Self::Usage(e.to_string())
    }
}

impl From<cell_model::LookupError> for SuiteError {
    fn from(e: cell_model::LookupError) -> Self {
        Self::Usage(e.to_string())
    }
}

/// Why a measured run ended early: the server's fault, or the load generator's.
#[derive(Debug)]
pub enum RunError {
    /// The server died, stopped answering, or answered wrong: its result says so.
    Server(String),
    /// The load generator failed while the server still answered as expected.
    Tool(String),
}

impl From<String> for RunError {
    fn from(m: String) -> Self {
        Self::Server(m)
    }
}

impl From<StartError> for RunError {
    fn from(e: StartError) -> Self {
        Self::Server(e.to_string())
    }
}

/// Whose fault a failed load run was: a dead server, a server that no longer answers as
/// expected, or else the load generator.
pub fn blame(
    running: &mut Running,
    p: &Prepared,
    (w, e): (&Workload, &Expect),
    what: &str,
    failure: &LoadRunError,
) -> RunError {
    if let Err(e) = running.alive() {
        return RunError::Server(format!("{e} during {what}"));
    }
    match super::check::verify(
        p.server.port,
        w,
        e,
        p.server.keep_alive,
        Duration::from_secs(2),
    ) {
        Ok(()) => RunError::Tool(format!(
            "{what}: {failure} (the server still answers {} {} as expected)",
            w.method, w.path
        )),
        Err(v) => RunError::Server(format!(
            "{what}: {failure}; the server no longer answers as expected: {v}"
        )),
    }
}

/// A workload's request as the load tools send it (the config checked its headers and body;
/// the method is one the tools know).
pub fn load_request(w: &Workload) -> Result<super::load::LoadRequest, SuiteError> {
    use super::load::{LoadRequest, Method};
    let method = Method::parse(&w.method).ok_or_else(|| {
        SuiteError::Usage(format!(
            "workload {}: the load tools cannot send method {}: use one of {}",
            w.name,
            w.method,
            Method::ALL.map(Method::as_str).join(", ")
        ))
    })?;
    Ok(LoadRequest {
        method,
        headers: w.headers.clone(),
        body: w.body.clone().map(String::into_bytes),
    })
}

/// The workload a soak drives: `plaintext` when the server serves it, else its first.
pub fn default_workload<'a>(
    http: &'a HttpDef,
    s: &'a Server,
) -> Option<(&'a Workload, &'a Expect)> {
    let (name, e) = cell_schema::lead_workload(&s.workloads, |(n, _)| n.as_str())?;
    Some((http.workloads.get(name)?, e))
}

pub(crate) fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> SuiteError {
    let what = what.into();
    move |error| SuiteError::Io { what, error }
}

/// A load generator found on PATH.
#[derive(Clone, Debug)]
pub struct Generator {
    /// Which load generator it is.
    pub tool: LoadTool,
    /// The program found on PATH, absolute: what every run invokes.
    pub path: PathBuf,
    /// Its version as printed.
    pub version: ToolVersion,
}

/// Finds a load generator and asks its version.
pub fn find_generator(name: &str) -> Result<Generator, SuiteError> {
    let tool = LoadTool::parse(name).ok_or_else(|| {
        SuiteError::Usage(format!("`{name}` is not a load generator cell drives"))
    })?;
    let hint = tool.def().hint();
    let path = tools::which(name).ok_or_else(|| {
        SuiteError::Missing(format!("not installed: `{name}` is not on PATH ({hint})"))
    })?;
    generator_at(tool, path)
}

/// The load generator `tool` at `path`: its version as printed, its identity.
pub fn generator_at(tool: LoadTool, path: PathBuf) -> Result<Generator, SuiteError> {
    let out = Command::new(&path)
        .args(tool.version_args())
        .stdin(Stdio::null())
        .output()
        .map_err(io(format!(
            "running {} {}",
            path.display(),
            tool.version_args().join(" ")
        )))?;
    let printed = load::version_line(
        tool,
        &String::from_utf8_lossy(&out.stdout),
        &String::from_utf8_lossy(&out.stderr),
    );
    let resolved = std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone());
    let (bytes, sha256) = crate::tools::identity(&resolved);
    Ok(Generator {
        tool,
        version: ToolVersion {
            path: path.display().to_string(),
            resolved: resolved.display().to_string(),
            argv: tool
                .version_args()
                .iter()
                .map(|a| (*a).to_owned())
                .collect(),
            printed,
            sha256,
            bytes,
        },
        path,
    })
}

/// A server ready to start: its toolchain probed and its build done.
pub struct Prepared {
    /// The server as configured.
    pub server: Server,
    /// Its toolchain's tools.
    pub probed: Probed,
    /// Build and program.
    pub build: ServerBuild,
    /// Its scratch directory (cwd and HOME of every start).
    pub work: PathBuf,
}

/// Probes a server's toolchain on PATH (`Err(Missing)` when absent). A server built by the
/// release under test is refused: its tools come only from the verified release, which the
/// http suite installs (`http::prepare`); the soak does not, so it cannot soak one.
pub fn probe_server(plan: &Plan, server: &Server) -> Result<Probed, SuiteError> {
    let tc = &plan.toolchains[&server.toolchain];
    if cell_model::built_by_release(plan, server) {
        return Err(SuiteError::Missing(format!(
            "server `{}` is built by the release under test {}: only the http suite installs and verifies it; a program named like it on PATH is never used",
            server.name, tc.name
        )));
    }
    tools::probe(tc).map_err(|m| {
        SuiteError::Missing(format!(
            "server `{}` needs toolchain `{}`: {m}",
            server.name, tc.name
        ))
    })
}

/// Builds a server into `work`; the error says what failed (exit code, last lines).
pub fn build_server(
    plan: &Plan,
    server: &Server,
    probed: Probed,
    work: &Path,
) -> Result<Prepared, BuildError> {
    std::fs::create_dir_all(work).map_err(|source| BuildError::Dir {
        path: work.display().to_string(),
        source,
    })?;
    // Absolute: builds and servers run in directories of their own, where a relative `--out`
    // (`cell run --out job/<artifact>` in the workflow, `cell local`'s `cell-local`) would name
    // another place. Every path of the server below derives from this one.
    let work = &std::path::absolute(work).map_err(|source| BuildError::Dir {
        path: work.display().to_string(),
        source,
    })?;
    let bin = work.join("server");
    let (src, binary, workdir) = (
        server.source.display().to_string(),
        bin.display().to_string(),
        work.display().to_string(),
    );
    let port = server.port.to_string();
    let tool = |n: &ToolName| probed.paths[n].display().to_string();
    let vars = Vars {
        src: &src,
        bin: &binary,
        work: &workdir,
        phase: "",
        tool: &tool,
        port: &port,
    };
    let argv: Vec<String> = server.build.iter().map(|a| a.render(&vars)).collect();
    let build_s = if argv.is_empty() {
        0.0
    } else {
        run_build(
            &format!("server `{}`", server.name),
            &argv,
            work,
            plan.settings.build_timeout_s,
        )
        .map_err(|f| BuildError::Build {
            message: f.message,
            log_tail: f.log_tail,
        })?
    };
    let run_argv: Vec<String> = server.run.iter().map(|a| a.render(&vars)).collect();
    let program = tools::which(&run_argv[0]).ok_or_else(|| BuildError::NotExecutable {
        server: server.name.to_string(),
        program: run_argv[0].clone(),
        after_build: !argv.is_empty(),
    })?;
    let (program_bytes, sha256) = hash_file(&program).map_err(|source| BuildError::Hash {
        path: program.display().to_string(),
        source,
    })?;
    Ok(Prepared {
        server: server.clone(),
        probed,
        build: ServerBuild {
            argv,
            build_s: round_time(build_s),
            run_argv,
            program: program.display().to_string(),
            program_bytes,
            sha256,
        },
        work: work.to_owned(),
    })
}

impl Prepared {
    /// Starts a fresh server and waits for its first 200 (bounded); the seconds it took.
    pub fn start(
        &self,
        cpus: CpuSet,
        startup_timeout: Duration,
    ) -> Result<(Running, f64), StartError> {
        super::server::port_free(self.server.port)?;
        let mut running = Running::start(
            &self.build.run_argv,
            &self.work,
            cpus,
            &self.work.join("server.log"),
        )
        .map_err(|source| StartError::Spawn {
            program: self.build.run_argv[0].clone(),
            source,
        })?;
        let deadline = Instant::now() + startup_timeout;
        match check::wait_ready(self.server.port, deadline, &mut || running.alive()) {
            Ok(()) => {
                let s = running.age_s();
                Ok((running, s))
            }
            Err(last) => {
                let alive = running.alive();
                let tail = log_tail(&self.work.join("server.log")).join("\n");
                let why = match alive {
                    Err(ended) => NotReady::Ended(ended),
                    Ok(()) => NotReady::Timeout {
                        port: self.server.port,
                        timeout_s: startup_timeout.as_secs_f64(),
                        last: last.to_string(),
                    },
                };
                let _ = running.stop(Duration::from_secs(1));
                Err(StartError::NotReady { why, tail })
            }
        }
    }
}

/// One load generator run: what it reported, its own CPU seconds and wall seconds.
pub struct LoadRun {
    /// The parsed report.
    pub report: LoadReport,
    /// User+sys of the load generator (`wait4` rusage).
    pub cpu_s: f64,
    /// Wall seconds, spawn to reap.
    pub wall_s: f64,
}

/// Runs a load generator to completion, pinned to `load_cpus`, killed if it outlives its
/// duration by 30 s (every load loop is bounded). `scratch` is the run's own directory: the
/// tool's output and the files it reads or writes go there. The report says what ran: the
/// argv, the connections and threads the tool really used, the connection shape.
pub fn run_load(
    g: &Generator,
    spec: &LoadSpec,
    load_cpus: CpuSet,
    scratch: &Path,
) -> Result<LoadRun, LoadRunError> {
    let argv: Vec<OsString> = load::argv(g.tool, &g.path, spec, scratch)?;
    let out_path = scratch.join(format!("{}.out", g.tool.name()));
    let err_path = scratch.join(format!("{}.err", g.tool.name()));
    let stdout = std::fs::File::create(&out_path).map_err(LoadRunError::Scratch)?;
    let stderr = std::fs::File::create(&err_path).map_err(LoadRunError::Scratch)?;
    let mut cmd = Command::new(&argv[0]);
    cmd.args(&argv[1..])
        .current_dir(scratch)
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(stderr);
    pin(&mut cmd, load_cpus);
    super::server::die_with_parent(&mut cmd);
    let t = Instant::now();
    let child = cmd.spawn().map_err(|source| LoadRunError::Spawn {
        program: g.path.display().to_string(),
        source,
    })?;
    let pid = i32::try_from(child.id()).unwrap_or(i32::MAX);
    let deadline = t + spec.duration + Duration::from_secs(30);
    let (status, cpu_s) = loop {
        let mut status = 0;
        // SAFETY: rusage is plain data; wait4 on our own child.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: as above.
        let r = unsafe { libc::wait4(pid, &raw mut status, libc::WNOHANG, &raw mut ru) };
        if r == pid {
            let secs = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 / 1e6;
            break (status, secs(ru.ru_utime) + secs(ru.ru_stime));
        }
        if r < 0 {
            return Err(LoadRunError::Wait {
                tool: g.tool.name(),
                source: std::io::Error::last_os_error(),
            });
        }
        if Instant::now() > deadline {
            // SAFETY: our own child, not yet reaped.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
                libc::waitpid(pid, &raw mut status, 0);
            }
            return Err(LoadRunError::Overran(g.tool.name()));
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    // The Child handle must not reap again.
    std::mem::forget(child);
    let wall_s = t.elapsed().as_secs_f64();
    if !(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0) {
        // Only the end of the log is read: its last line is all the message shows.
        let last = crate::build::log_tail(&err_path)
            .into_iter()
            .rev()
            .find(|l| !l.trim().is_empty());
        return Err(LoadRunError::Failed {
            tool: g.tool.name(),
            status,
            last: last.map_or_else(|| "no output".to_owned(), |l| l.trim().to_owned()),
        });
    }
    let text = load::read_stdout(g.tool, &out_path)?;
    let report = load::parse(g.tool, &text, scratch, &g.version.printed)?;
    let report = load::record(report, g.tool, spec, &argv)?;
    Ok(LoadRun {
        report,
        cpu_s,
        wall_s,
    })
}

/// Pins of the servers' toolchains and the oha key, as written.
pub fn suite_pins(plan: &Plan, servers: &[&Server]) -> BTreeMap<String, String> {
    let mut pins = BTreeMap::new();
    for s in servers {
        pins.extend(plan.pins(&plan.toolchains[&s.toolchain]));
    }
    if let Some(h) = &plan.http
        && let Some(v) = &h.oha_version
    {
        pins.insert(h.oha_key.clone(), v.clone());
    }
    pins
}
