//! `cell-http-rust-threads PORT` — an HTTP/1.1 server written against the
//! standard library alone: one OS thread per accepted connection, blocking
//! I/O, a hand-written request parser and a hand-written JSON reader/writer.
//!
//! It serves the workloads shared with the other servers in `bench/http/`
//! (see its README): `GET /` (plain text), `GET /json` (a serialised message),
//! `GET /users/{id}` (a `u64` echoed), `POST /users` (a JSON body bound to a
//! typed record and echoed) and `POST /minimal/users/{id}` (both at once).
//! Binds 127.0.0.1 only, keeps connections alive, exits 0 on SIGTERM (or
//! SIGINT), writes nothing to stdout and one line to stderr.
//!
//! Threads: `main` blocks SIGTERM/SIGINT, binds, spawns the `accept` thread
//! and then waits for a signal (see `signal.rs`); returning from `main` ends
//! the process with every connection thread in it.

mod app;
mod conn;
mod http;
mod json;
mod signal;

use std::ffi::c_int;
use std::net::{Ipv4Addr, TcpListener};
use std::os::fd::AsRawFd;
use std::process::ExitCode;
use std::thread;
use std::time::Duration;

const NAME: &str = "cell-http-rust-threads";

/// Stack of a connection thread. Its buffers live on the heap and the JSON
/// reader's recursion is bounded (`json::MAX_DEPTH`), so 256 KiB is ample.
const CONN_STACK: usize = 256 * 1024;

/// Listen backlog. std's `TcpListener::bind` listens with 128; a second
/// `listen(2)` on the bound socket raises it (the kernel caps it at
/// `net.core.somaxconn`), as the hyper server's 1024.
const BACKLOG: c_int = 1024;

unsafe extern "C" {
    fn listen(fd: c_int, backlog: c_int) -> c_int;
}

/// Raises the backlog of a listening socket; on failure it stays at 128.
fn raise_backlog(listener: &TcpListener) {
    // SAFETY: the fd is a valid listening socket owned by `listener`.
    let _ = unsafe { listen(listener.as_raw_fd(), BACKLOG) };
}

fn usage() -> ExitCode {
    eprintln!("usage: {NAME} PORT");
    ExitCode::from(2)
}

/// The one positional argument: ASCII digits, 1–65535.
fn parse_port() -> Result<u16, ExitCode> {
    let mut args = std::env::args_os().skip(1);
    let (Some(arg), None) = (args.next(), args.next()) else {
        return Err(usage());
    };
    let port = arg
        .to_str()
        .filter(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|s| s.parse::<u16>().ok())
        .filter(|&p| p != 0);
    port.ok_or_else(|| {
        eprintln!("{NAME}: invalid port {arg:?}");
        usage()
    })
}

/// Accepts forever, one thread per connection. Accept and spawn failures
/// (EMFILE, ECONNABORTED, EAGAIN from clone, ...) drop that one connection
/// and back off briefly; they never end the server.
fn accept_loop(listener: &TcpListener) {
    let backoff = Duration::from_millis(5);
    loop {
        let Ok((stream, _peer)) = listener.accept() else {
            thread::sleep(backoff);
            continue;
        };
        // A failure here leaves Nagle on for this connection; still served.
        let _ = stream.set_nodelay(true);
        let spawned = thread::Builder::new()
            .stack_size(CONN_STACK)
            .spawn(move || conn::serve(stream));
        if spawned.is_err() {
            // The closure, and with it the stream, was dropped: closed.
            thread::sleep(backoff);
        }
    }
}

fn main() -> ExitCode {
    let port = match parse_port() {
        Ok(p) => p,
        Err(code) => return code,
    };
    // Before any thread exists, so that all of them inherit the mask.
    if let Err(e) = signal::block() {
        eprintln!("{NAME}: cannot block SIGTERM/SIGINT: {e}");
        return ExitCode::FAILURE;
    }
    // std's TcpListener::bind sets SO_REUSEADDR before bind(2) on Unix.
    let listener = match TcpListener::bind((Ipv4Addr::LOCALHOST, port)) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("{NAME}: cannot listen on 127.0.0.1:{port}: {e}");
            return ExitCode::FAILURE;
        }
    };
    raise_backlog(&listener);
    let acceptor = thread::Builder::new()
        .name("accept".into())
        .spawn(move || accept_loop(&listener));
    if let Err(e) = acceptor {
        eprintln!("{NAME}: cannot start the accept thread: {e}");
        return ExitCode::FAILURE;
    }
    eprintln!("listening on 127.0.0.1:{port}");
    signal::wait();
    // Open connections are not waited for: exit(3) ends every thread and the
    // kernel closes their sockets.
    ExitCode::SUCCESS
}
