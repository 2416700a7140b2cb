//! `cell-http-rust PORT` — a hello-world HTTP/1.1 server built on hyper + tokio.
//!
//! Contract (shared with the Go, C and Python servers in `bench/http/`):
//! `GET /` answers `200 OK`, `Content-Type: text/plain`, body `hello, world\n`;
//! any other path is 404, any other method on `/` is 405. Binds 127.0.0.1 only,
//! keeps connections alive, exits 0 on SIGTERM (or SIGINT), logs nothing per request.

use std::convert::Infallible;
use std::net::{Ipv4Addr, SocketAddr};
use std::num::NonZeroUsize;
use std::process::ExitCode;

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::header::{CONTENT_TYPE, HeaderValue};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::{TcpListener, TcpSocket};
use tokio::signal::unix::{SignalKind, signal};

const HELLO: &[u8] = b"hello, world\n";
const NOT_FOUND: &[u8] = b"not found\n";
const NOT_ALLOWED: &[u8] = b"method not allowed\n";

fn usage() -> ExitCode {
    eprintln!("usage: cell-http-rust PORT");
    ExitCode::from(2)
}

fn parse_port() -> Result<u16, ExitCode> {
    let mut args = std::env::args_os().skip(1);
    let (Some(port), None) = (args.next(), args.next()) else {
        return Err(usage());
    };
    match port.to_str().and_then(|s| s.parse::<u16>().ok()) {
        Some(p) if p != 0 => Ok(p),
        _ => {
            eprintln!("cell-http-rust: invalid port {port:?}");
            Err(usage())
        }
    }
}

fn text(status: StatusCode, body: &'static [u8]) -> Response<Full<Bytes>> {
    let mut resp = Response::new(Full::new(Bytes::from_static(body)));
    *resp.status_mut() = status;
    resp.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("text/plain"));
    resp
}

async fn handle(req: Request<Incoming>) -> Result<Response<Full<Bytes>>, Infallible> {
    let resp = if req.uri().path() != "/" {
        text(StatusCode::NOT_FOUND, NOT_FOUND)
    } else if req.method() != Method::GET {
        let mut r = text(StatusCode::METHOD_NOT_ALLOWED, NOT_ALLOWED);
        r.headers_mut()
            .insert(hyper::header::ALLOW, HeaderValue::from_static("GET"));
        r
    } else {
        text(StatusCode::OK, HELLO)
    };
    Ok(resp)
}

fn bind(port: u16) -> std::io::Result<TcpListener> {
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let socket = TcpSocket::new_v4()?;
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(1024)
}

async fn serve(listener: TcpListener) -> std::io::Result<()> {
    let mut term = signal(SignalKind::terminate())?;
    let mut int = signal(SignalKind::interrupt())?;
    let mut builder = http1::Builder::new();
    // half_close: a client that shuts down its write side after the request
    // still gets the response. (pipeline_flush is left off: with it, hyper
    // 1.12 answers nothing when a `Connection: close` request has more
    // pipelined requests behind it in the same read.)
    builder.keep_alive(true).half_close(true);
    loop {
        let accepted = tokio::select! {
            _ = term.recv() => return Ok(()),
            _ = int.recv() => return Ok(()),
            accepted = listener.accept() => accepted,
        };
        // Transient accept failures (EMFILE, ECONNABORTED, ...) must not kill
        // the server; back off briefly and keep accepting.
        let Ok((stream, _peer)) = accepted else {
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
            continue;
        };
        let _ = stream.set_nodelay(true);
        let conn = builder.serve_connection(TokioIo::new(stream), service_fn(handle));
        tokio::spawn(async move {
            // Client resets / malformed requests end just this connection.
            let _ = conn.await;
        });
    }
}

fn main() -> ExitCode {
    let port = match parse_port() {
        Ok(p) => p,
        Err(code) => return code,
    };
    let workers = std::thread::available_parallelism().map_or(1, NonZeroUsize::get);
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_io()
        .enable_time()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("cell-http-rust: cannot start runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(async {
        let listener = bind(port)?;
        eprintln!("listening on 127.0.0.1:{port}");
        serve(listener).await
    });
    // Open connections are simply dropped; do not wait for idle keep-alive clients.
    runtime.shutdown_background();
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("cell-http-rust: {e}");
            ExitCode::FAILURE
        }
    }
}
