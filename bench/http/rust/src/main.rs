//! `cell-http-rust PORT` — an HTTP/1.1 server built on hyper + tokio.
//!
//! It serves the five workloads shared with the other servers in `bench/http/`
//! (see its README): `GET /` (plain text), `GET /json` (a serialised message),
//! `GET /users/{id}` (a `u64` echoed), `POST /users` (a JSON body bound to a
//! typed record with serde and echoed) and `POST /minimal/users/{id}` (both:
//! the id merged into the bound record). Unknown paths are 404, a wrong method
//! on a known path is 405 with `Allow`. Binds 127.0.0.1 only, keeps connections
//! alive, exits 0 on SIGTERM (or SIGINT), logs nothing per request.

use std::convert::Infallible;
use std::net::{Ipv4Addr, SocketAddr};
use std::num::NonZeroUsize;
use std::process::ExitCode;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, LengthLimitError, Limited};
use hyper::body::{Body, Incoming};
use hyper::header::{ALLOW, CONNECTION, CONTENT_TYPE, HeaderMap, HeaderValue};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde::{Deserialize, Serialize};
use tokio::net::{TcpListener, TcpSocket};
use tokio::signal::unix::{SignalKind, signal};

const HELLO: &[u8] = b"hello, world\n";
const NOT_FOUND: &[u8] = b"not found\n";
const NOT_ALLOWED: &[u8] = b"method not allowed\n";
const BAD_REQUEST: &[u8] = b"bad request\n";
const TOO_LARGE: &[u8] = b"payload too large\n";
const UNSUPPORTED: &[u8] = b"unsupported media type\n";

/// The largest `POST /users` (or `/minimal/users/{id}`) body read; a larger
/// one is refused with 413.
const MAX_BODY: usize = 64 * 1024;

type Resp = Response<Full<Bytes>>;

#[derive(Serialize)]
struct Message {
    message: &'static str,
}

#[derive(Serialize)]
struct Id {
    id: u64,
}

/// The post-json record.
#[derive(Deserialize, Serialize)]
struct User {
    name: String,
    age: u64,
    adult: bool,
}

/// The minimal workload's reply: the routed id merged into the bound record.
#[derive(Serialize)]
struct Minimal {
    id: u64,
    #[serde(flatten)]
    user: User,
}

enum Route {
    Hello,
    Json,
    User(u64),
    Users,
    Minimal(u64),
}

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

fn reply(status: StatusCode, content_type: &'static str, body: Bytes) -> Resp {
    let mut resp = Response::new(Full::new(body));
    *resp.status_mut() = status;
    resp.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    resp
}

fn text(status: StatusCode, body: &'static [u8]) -> Resp {
    reply(status, "text/plain", Bytes::from_static(body))
}

/// Serialises `value` now, at request time.
fn json<T: Serialize>(value: &T) -> Resp {
    match serde_json::to_vec(value) {
        Ok(body) => reply(StatusCode::OK, "application/json", body.into()),
        Err(_) => text(StatusCode::INTERNAL_SERVER_ERROR, b"internal error\n"),
    }
}

/// The id of `/users/{id}` or `/minimal/users/{id}`: ASCII digits only
/// (`u64::from_str` would also take a leading `+`), fitting a `u64`.
fn parse_id(digits: &str) -> Option<u64> {
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// `application/json`, any case, parameters allowed.
fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|t| t.trim().eq_ignore_ascii_case("application/json"))
}

fn too_large() -> Resp {
    // The body is left unread, so the connection cannot carry another request.
    let mut resp = text(StatusCode::PAYLOAD_TOO_LARGE, TOO_LARGE);
    resp.headers_mut()
        .insert(CONNECTION, HeaderValue::from_static("close"));
    resp
}

/// `POST /users`: the body, read whole (bounded), bound to a `User` and echoed;
/// for `POST /minimal/users/{id}` (`id` given) the id is merged into the echo.
async fn post_user(req: Request<Incoming>, id: Option<u64>) -> Resp {
    if req.body().size_hint().lower() > MAX_BODY as u64 {
        return too_large();
    }
    let (parts, body) = req.into_parts();
    let body = match Limited::new(body, MAX_BODY).collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(e) if e.is::<LengthLimitError>() => return too_large(),
        Err(_) => return text(StatusCode::BAD_REQUEST, BAD_REQUEST),
    };
    if !is_json(&parts.headers) {
        return text(StatusCode::UNSUPPORTED_MEDIA_TYPE, UNSUPPORTED);
    }
    // from_str after a UTF-8 check: from_slice does not check the strings of
    // the fields it skips.
    let user = std::str::from_utf8(&body)
        .ok()
        .and_then(|s| serde_json::from_str::<User>(s).ok());
    match (user, id) {
        (Some(user), None) => json(&user),
        (Some(user), Some(id)) => json(&Minimal { id, user }),
        (None, _) => text(StatusCode::BAD_REQUEST, BAD_REQUEST),
    }
}

async fn handle(req: Request<Incoming>) -> Result<Resp, Infallible> {
    let path = req.uri().path();
    let (route, allow) = match path {
        "/" => (Route::Hello, "GET"),
        "/json" => (Route::Json, "GET"),
        "/users" => (Route::Users, "POST"),
        _ => {
            let route = if let Some(digits) = path.strip_prefix("/users/") {
                parse_id(digits).map(|id| (Route::User(id), "GET"))
            } else if let Some(digits) = path.strip_prefix("/minimal/users/") {
                parse_id(digits).map(|id| (Route::Minimal(id), "POST"))
            } else {
                None
            };
            // An unread body is drained by hyper when it is already buffered;
            // otherwise hyper closes the connection after the response.
            match route {
                Some(route) => route,
                None => return Ok(text(StatusCode::NOT_FOUND, NOT_FOUND)),
            }
        }
    };
    if req.method().as_str() != allow {
        let mut resp = text(StatusCode::METHOD_NOT_ALLOWED, NOT_ALLOWED);
        resp.headers_mut()
            .insert(ALLOW, HeaderValue::from_static(allow));
        return Ok(resp);
    }
    Ok(match route {
        Route::Hello => text(StatusCode::OK, HELLO),
        Route::Json => json(&Message {
            message: "Hello, World!",
        }),
        Route::User(id) => json(&Id { id }),
        Route::Users => post_user(req, None).await,
        Route::Minimal(id) => post_user(req, Some(id)).await,
    })
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
