//! `cell-http-axum PORT` — an HTTP/1.1 server built on axum + tokio.
//!
//! It serves the five workloads shared with the other servers in `bench/http/`
//! (see its README) through axum's router and typed extractors: `GET /`,
//! `GET /json`, `GET /users/{id}` (`Path<u64>`), `POST /users` (`Json<User>`)
//! and `POST /minimal/users/{id}` (`Path<u64>` plus `Json<User>`). axum's own
//! rejections are mapped onto the contract's statuses. Binds 127.0.0.1 only,
//! keeps connections alive, exits 0 on SIGTERM (or SIGINT), logs nothing per
//! request.

use std::future::IntoFuture;
use std::net::{Ipv4Addr, SocketAddr};
use std::num::NonZeroUsize;
use std::process::ExitCode;

use axum::extract::rejection::{JsonRejection, PathRejection};
use axum::extract::{DefaultBodyLimit, Path};
use axum::http::StatusCode;
use axum::http::header::{CONNECTION, CONTENT_TYPE};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::serve::ListenerExt;
use axum::{Json, Router};
use serde::{Deserialize, Serialize};
use tokio::net::{TcpListener, TcpSocket};
use tokio::signal::unix::{SignalKind, signal};

/// The largest `POST /users` (or `/minimal/users/{id}`) body read; a larger
/// one is refused with 413.
const MAX_BODY: usize = 64 * 1024;

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

/// A plain-text response. The explicit header replaces the
/// `text/plain; charset=utf-8` axum gives a `&str` body.
fn text(status: StatusCode, body: &'static str) -> Response {
    (status, [(CONTENT_TYPE, "text/plain")], body).into_response()
}

async fn hello() -> Response {
    text(StatusCode::OK, "hello, world\n")
}

async fn message() -> Json<Message> {
    Json(Message {
        message: "Hello, World!",
    })
}

/// A path segment that is not a `u64` is an unknown path (axum would say 400).
async fn user(id: Result<Path<u64>, PathRejection>) -> Response {
    match id {
        Ok(Path(id)) => Json(Id { id }).into_response(),
        Err(_) => not_found().await,
    }
}

/// The body bound to `User` and written back. axum rejects a missing or wrong
/// Content-Type with 415, an oversized body with 413, bad JSON with 400 and a
/// body that is JSON but not a `User` with 422: the contract says 400 for both.
async fn create_user(user: Result<Json<User>, JsonRejection>) -> Response {
    match user {
        Ok(user) => user.into_response(),
        Err(rejection) => json_rejected(&rejection),
    }
}

/// `Json<User>`'s rejection in the contract's terms.
fn json_rejected(rejection: &JsonRejection) -> Response {
    match rejection.status() {
        // The rest of the body is unread: the connection cannot be reused.
        StatusCode::PAYLOAD_TOO_LARGE => (
            [(CONNECTION, "close")],
            text(StatusCode::PAYLOAD_TOO_LARGE, "payload too large\n"),
        )
            .into_response(),
        StatusCode::UNSUPPORTED_MEDIA_TYPE => text(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported media type\n",
        ),
        _ => text(StatusCode::BAD_REQUEST, "bad request\n"),
    }
}

/// Both extractors run before the handler, so the body has been read (or
/// refused) whatever the id. A bad id wins over a bad body: it is an unknown
/// path, as for `GET /users/{id}`; if the body was too large to read, the
/// connection is closed after the 404.
async fn minimal(
    id: Result<Path<u64>, PathRejection>,
    user: Result<Json<User>, JsonRejection>,
) -> Response {
    match (id, user) {
        (Ok(Path(id)), Ok(Json(user))) => Json(Minimal { id, user }).into_response(),
        (Ok(_), Err(rejection)) => json_rejected(&rejection),
        (Err(_), Err(rejection)) if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE => {
            ([(CONNECTION, "close")], not_found().await).into_response()
        }
        (Err(_), _) => not_found().await,
    }
}

async fn not_found() -> Response {
    text(StatusCode::NOT_FOUND, "not found\n")
}

/// axum adds the `Allow` header to this response itself.
async fn method_not_allowed() -> Response {
    text(StatusCode::METHOD_NOT_ALLOWED, "method not allowed\n")
}

fn app() -> Router {
    Router::new()
        .route("/", get(hello))
        .route("/json", get(message))
        .route("/users/{id}", get(user))
        .route("/users", post(create_user))
        .route("/minimal/users/{id}", post(minimal))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(DefaultBodyLimit::max(MAX_BODY))
}

fn usage() -> ExitCode {
    eprintln!("usage: cell-http-axum PORT");
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
            eprintln!("cell-http-axum: invalid port {port:?}");
            Err(usage())
        }
    }
}

/// 127.0.0.1 with SO_REUSEADDR, which `TcpListener::bind` would not set explicitly.
fn bind(port: u16) -> std::io::Result<TcpListener> {
    let socket = TcpSocket::new_v4()?;
    socket.set_reuseaddr(true)?;
    socket.bind(SocketAddr::from((Ipv4Addr::LOCALHOST, port)))?;
    socket.listen(1024)
}

async fn serve(listener: TcpListener) -> std::io::Result<()> {
    let mut term = signal(SignalKind::terminate())?;
    let mut int = signal(SignalKind::interrupt())?;
    let listener = listener.tap_io(|stream| {
        let _ = stream.set_nodelay(true);
    });
    // No graceful shutdown: it would wait for idle keep-alive clients. The
    // signal ends serve(); main drops the open connections with the runtime.
    tokio::select! {
        _ = term.recv() => Ok(()),
        _ = int.recv() => Ok(()),
        served = axum::serve(listener, app()).into_future() => served,
    }
}

fn main() -> ExitCode {
    let port = match parse_port() {
        Ok(p) => p,
        Err(code) => return code,
    };
    // One worker per CPU this process may run on; set explicitly, so tokio
    // does not look at TOKIO_WORKER_THREADS.
    let workers = std::thread::available_parallelism().map_or(1, NonZeroUsize::get);
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_io()
        .enable_time() // axum::serve backs off with a timer after accept errors
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("cell-http-axum: cannot start runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(async {
        let listener = bind(port)?;
        eprintln!("listening on 127.0.0.1:{port}");
        serve(listener).await
    });
    runtime.shutdown_background();
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("cell-http-axum: {e}");
            ExitCode::FAILURE
        }
    }
}
