//! What can go wrong with a server under test and around it. The message of a server's error
//! is what its job records (`servers.<name>.error`), so each `Display` is written for that
//! record: what happened, and where.

use std::io;

use super::load::LoadError;

/// A configured CPU (`[http] cpus`, `--server-cpus`) this process may not run on.
#[derive(Debug, thiserror::Error)]
#[error(
    "{field}: CPU {cpu} is not allowed on this machine (this process may run on CPUs {allowed}): write CPUs of those"
)]
pub struct CpuNotAllowed {
    /// Where the CPU was written: `http.cpus.server`, `--load-cpus`, …
    pub field: String,
    /// The CPU.
    pub cpu: u32,
    /// The CPUs allowed, as ranges (`0-3`).
    pub allowed: String,
}

/// Why a response to `GET /` could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ResponseError {
    /// Writing the request failed.
    #[error("sending GET /: {0}")]
    Send(io::Error),
    /// No connection.
    #[error("connecting to 127.0.0.1:{port}: {source}")]
    Connect {
        /// The loopback port tried.
        port: u16,
        /// What the OS said.
        source: io::Error,
    },
    /// The connection's timeouts could not be set.
    #[error("{0}")]
    Socket(io::Error),
    /// Reading failed.
    #[error("reading the response: {0}")]
    Read(io::Error),
    /// A head past the cap.
    #[error("response head larger than 1 MiB")]
    HeadTooLarge,
    /// Closed before a byte of the answer.
    #[error("the server closed the connection without answering")]
    ClosedBeforeAnswer,
    /// Closed halfway through the head.
    #[error("the server closed the connection in the middle of the response head")]
    ClosedInHead,
    /// Not `HTTP/1.x <code> …`.
    #[error("malformed status line `{0}`")]
    MalformedStatus(String),
    /// Another protocol.
    #[error("not an HTTP/1.x response: `{0}`")]
    NotHttp1(String),
    /// A body past the cap.
    #[error("body larger than 1 MiB")]
    BodyTooLarge,
    /// Reading the body failed.
    #[error("reading the body: {0}")]
    ReadBody(io::Error),
    /// Closed before the body was complete.
    #[error("the server closed the connection after {got} of {want} body bytes")]
    ClosedInBody {
        /// Body bytes received.
        got: usize,
        /// Body bytes announced.
        want: usize,
    },
    /// A `Content-Length` that is not a number.
    #[error("Content-Length `{0}` is not a number")]
    BadLength(String),
    /// A chunk size that is not hexadecimal.
    #[error("bad chunk size `{0}`")]
    BadChunk(String),
    /// No way to tell where the body ends.
    #[error(
        "the response has neither Content-Length nor chunked encoding: it cannot keep the connection alive"
    )]
    NoFraming,
}

/// Every way a response differed from the expected one (status, headers, body).
#[derive(Debug, thiserror::Error)]
#[error("{}", .0.join("; "))]
pub struct Mismatch(pub Vec<String>);

/// The response check before any load failed.
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    /// The first response could not be read.
    #[error(transparent)]
    Unreadable(#[from] ResponseError),
    /// The first response was not the expected one (the request, what differed).
    #[error("wrong response to {0}: {1}")]
    WrongFirst(String, Mismatch),
    /// The server will not keep the connection.
    #[error("the server answered `Connection: close`: it must keep connections alive")]
    ConnectionClose,
    /// The second request on the connection failed.
    #[error("a second {0} on the same connection failed (no keep-alive?): {1}")]
    SecondFailed(String, ResponseError),
    /// The second response was not the expected one.
    #[error("wrong response to a second {0}: {1}")]
    WrongSecond(String, Mismatch),
}

/// A server process that is gone.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Gone {
    /// It exited: its exit status or signal.
    #[error("the server exited ({0})")]
    Exited(String),
    /// It could not even be waited for.
    #[error("waiting for the server: {0}")]
    Wait(String),
}

/// A server that would not start and answer.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// Its port is taken.
    #[error(
        "127.0.0.1:{0} is already taken by another process (a server left over from an earlier run?): stop it or give this server another port"
    )]
    PortTaken(u16),
    /// It could not be spawned.
    #[error("could not start `{program}`: {source}")]
    Spawn {
        /// `run[0]`.
        program: String,
        /// What the OS said.
        source: io::Error,
    },
    /// It ended, or never answered 200 within the startup timeout; with its last output.
    #[error("{why}{}", tail_of(.tail))]
    NotReady {
        /// Whether it ended or kept silent.
        why: NotReady,
        /// The last lines of its output.
        tail: String,
    },
}

/// How a start failed to reach a 200.
#[derive(Debug, thiserror::Error)]
pub enum NotReady {
    /// It ended first.
    #[error("{0} before answering GET /")]
    Ended(Gone),
    /// It kept running without answering 200.
    #[error(
        "no answer to GET / on 127.0.0.1:{port} within the startup timeout of {timeout_s} s (last attempt: {last})"
    )]
    Timeout {
        /// The loopback port it was to answer on.
        port: u16,
        /// The bound, seconds.
        timeout_s: f64,
        /// What the last attempt saw.
        last: String,
    },
}

fn tail_of(tail: &str) -> String {
    if tail.is_empty() {
        String::new()
    } else {
        format!("; its output ends:\n{tail}")
    }
}

/// A server that could not be built or found.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// Its scratch directory.
    #[error("creating {path}: {source}")]
    Dir {
        /// The scratch directory that could not be made.
        path: String,
        /// What the OS said.
        source: io::Error,
    },
    /// Its build command failed; with its last lines.
    #[error("{message}{}", last_lines(.log_tail))]
    Build {
        /// One line on what failed.
        message: String,
        /// The build's last lines.
        log_tail: Vec<String>,
    },
    /// `run[0]` is not a program.
    #[error("server `{server}`: `{program}` (run[0]) is not an executable file{}", if *.after_build { " after the build" } else { "" })]
    NotExecutable {
        /// The server's name.
        server: String,
        /// What `run[0]` says.
        program: String,
        /// It had a build.
        after_build: bool,
    },
    /// The program could not be hashed.
    #[error("hashing {path}: {source}")]
    Hash {
        /// The program that could not be read.
        path: String,
        /// What the OS said.
        source: io::Error,
    },
}

fn last_lines(tail: &[String]) -> String {
    if tail.is_empty() {
        String::new()
    } else {
        format!("; last lines:\n{}", tail.join("\n"))
    }
}

/// A load generator run that failed.
#[derive(Debug, thiserror::Error)]
pub enum LoadRunError {
    /// Its command line or its report.
    #[error(transparent)]
    Load(#[from] LoadError),
    /// Its output files.
    #[error("{0}")]
    Scratch(io::Error),
    /// It could not be spawned.
    #[error("could not start {program}: {source}")]
    Spawn {
        /// The load generator's path.
        program: String,
        /// What the OS said.
        source: io::Error,
    },
    /// It could not be waited for.
    #[error("waiting for {tool}: {source}")]
    Wait {
        /// The load generator (`wrk`, `oha`, `ab`).
        tool: &'static str,
        /// What the OS said.
        source: io::Error,
    },
    /// It outlived its bound.
    #[error("{0} ran 30 s past its duration and was killed")]
    Overran(&'static str),
    /// It exited non-zero; the last line it printed.
    #[error("{tool} failed (wait status {status}): {last}")]
    Failed {
        /// The load generator (`wrk`, `oha`, `ab`).
        tool: &'static str,
        /// Its wait status.
        status: i32,
        /// The last line of its stderr (or `no output`).
        last: String,
    },
}

/// A server that failed before any load: it would not start, answered wrong, or died.
#[derive(Debug, thiserror::Error)]
pub enum NotServing {
    /// It would not start and answer.
    #[error(transparent)]
    Start(#[from] StartError),
    /// It answered `GET /` wrong.
    #[error(transparent)]
    Check(#[from] CheckError),
    /// It died after answering.
    #[error(transparent)]
    Gone(#[from] Gone),
}
