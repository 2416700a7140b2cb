//! One loopback HTTP/1.1 server for every test that talks to the network: the GitHub API and
//! its blob store, download mirrors, digest files.
//!
//! It binds `127.0.0.1:0`, answers each connection on its own thread with one response and
//! `connection: close`, and logs every request (method, path with query, headers, body) so a
//! test can assert what was and was not sent. Responses come from a handler closure or a route
//! table; one-shot overrides ([`Server::once`]) put a fault in front of a path. The faults are
//! the ones a GitHub or download client must survive: any status, a redirect, `retry-after`
//! and rate-limit headers, a delay before answering, a body that stalls midway, a body that
//! trickles in a byte at a time, a body shorter than its content-length, and a connection
//! closed without a response.
//!
//! Requests are read by `content-length` only (no chunked uploads): what the clients under test
//! send. A body over [`MAX_REQUEST_BODY`] is answered 413 without being read or handed on.
//! Writes (POST, PATCH, PUT) are logged like every request and listed by [`Server::writes`]
//! with their JSON body parsed and whether they carried `Authorization`, so a test asserts a
//! comment as it asserts a commit. The server stops accepting when it is dropped; a test keeps
//! it alive as long as a client may connect.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{self, BufRead as _, BufReader, Read as _, Write as _};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

/// A request as the server saw it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    pub method: String,
    /// The request target: path and query, as sent.
    pub path: String,
    /// By lowercase name; a repeated header keeps its last value.
    pub headers: BTreeMap<String, String>,
    pub body: Vec<u8>,
}

impl Request {
    /// A header's value, by name in any case.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .get(&name.to_ascii_lowercase())
            .map(String::as_str)
    }
}

/// The largest request body read: a comment or a check run is a few KB.
pub const MAX_REQUEST_BODY: usize = 1 << 20;

/// A write (POST, PATCH or PUT) as the server saw it.
#[derive(Clone, Debug, PartialEq)]
pub struct Write {
    pub method: String,
    /// Path and query, as sent.
    pub path: String,
    /// The body parsed as JSON, `None` when it is not JSON.
    pub json: Option<serde_json::Value>,
    /// The `Authorization` header's value, when there was one.
    pub authorization: Option<String>,
}

impl Request {
    /// Whether this is a write: POST, PATCH or PUT.
    pub fn is_write(&self) -> bool {
        matches!(self.method.as_str(), "POST" | "PATCH" | "PUT")
    }

    /// The body as JSON, `None` when it is not JSON.
    pub fn json(&self) -> Option<serde_json::Value> {
        serde_json::from_slice(&self.body).ok()
    }
}

/// How a response goes wrong on the wire (its status and headers are any the test sets).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// No content-length: the body ends when the connection closes.
    Unsized,
    /// The full body's content-length, but only its first `n` bytes, then the connection
    /// closes.
    Truncate(usize),
    /// The full body's content-length and its first `n` bytes, then nothing more until the
    /// client hangs up (or ten minutes pass).
    Stall(usize),
    /// The full body's content-length, then the body one byte at a time with this pause
    /// before each: never silent for long enough to trip an idle timeout, never done soon.
    Trickle(Duration),
    /// The request is read, then the connection closes without a byte of response.
    HangUp,
}

/// A response to send.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Response {
    pub status: u16,
    /// Sent after `content-length` and `connection: close`, in order.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// How long to wait before sending anything.
    pub delay: Duration,
    pub fault: Option<Fault>,
}

impl Response {
    /// `status` with an empty body.
    pub fn status(status: u16) -> Self {
        Self {
            status,
            headers: Vec::new(),
            body: Vec::new(),
            delay: Duration::ZERO,
            fault: None,
        }
    }

    /// 200 with `body` as `application/octet-stream`.
    pub fn ok(body: impl Into<Vec<u8>>) -> Self {
        Self::status(200)
            .header("content-type", "application/octet-stream")
            .body(body)
    }

    /// `status` with `value` as JSON.
    pub fn json(status: u16, value: &serde_json::Value) -> Self {
        Self::status(status)
            .header("content-type", "application/json")
            .body(serde_json::to_vec(value).unwrap())
    }

    /// 404 with a short text.
    pub fn not_found() -> Self {
        Self::status(404).body("not found")
    }

    /// 302 to `location` (a path on the same server, or a full URL).
    pub fn redirect(location: &str) -> Self {
        Self::status(302).header("location", location)
    }

    /// GitHub's secondary rate limit: 403, `retry-after` in seconds and no requests left.
    pub fn rate_limited(retry_after_s: u64) -> Self {
        Self::status(403)
            .header("retry-after", &retry_after_s.to_string())
            .header("x-ratelimit-remaining", "0")
    }

    /// A connection closed without a response.
    pub fn hang_up() -> Self {
        Self::status(0).fault(Fault::HangUp)
    }

    /// Sets a header, replacing one of the same name.
    #[must_use]
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.retain(|(k, _)| !k.eq_ignore_ascii_case(name));
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    /// Replaces the body.
    #[must_use]
    pub fn body(mut self, body: impl Into<Vec<u8>>) -> Self {
        self.body = body.into();
        self
    }

    /// Waits `delay` before answering.
    #[must_use]
    pub fn delayed(mut self, delay: Duration) -> Self {
        self.delay = delay;
        self
    }

    /// Goes wrong on the wire as `fault` says.
    #[must_use]
    pub fn fault(mut self, fault: Fault) -> Self {
        self.fault = Some(fault);
        self
    }

    /// [`Fault::Unsized`]: no content-length.
    #[must_use]
    pub fn without_length(self) -> Self {
        self.fault(Fault::Unsized)
    }

    /// [`Fault::Truncate`]: only the first `sent` bytes of the promised body.
    #[must_use]
    pub fn truncated(self, sent: usize) -> Self {
        self.fault(Fault::Truncate(sent))
    }

    /// [`Fault::Trickle`]: one byte of the body every `every`.
    #[must_use]
    pub fn trickled(self, every: Duration) -> Self {
        self.fault(Fault::Trickle(every))
    }

    /// [`Fault::Stall`]: the first `sent` bytes, then silence on an open connection.
    #[must_use]
    pub fn stalled(self, sent: usize) -> Self {
        self.fault(Fault::Stall(sent))
    }
}

type Handler = dyn Fn(&Request) -> Response + Send + Sync;

/// What the accepting thread and the connections share with the test.
struct Shared {
    handler: RwLock<Arc<Handler>>,
    /// One-shot overrides: path prefix → response, the first match in order wins and is used
    /// up.
    once: Mutex<Vec<(String, Response)>>,
    log: Mutex<Vec<Request>>,
    stopped: AtomicBool,
}

/// A running server on 127.0.0.1; it stops accepting when dropped.
pub struct Server {
    addr: SocketAddr,
    shared: Arc<Shared>,
}

impl Default for Server {
    fn default() -> Self {
        Self::new()
    }
}

impl Server {
    /// Binds and starts answering 404 to everything until [`Server::handle`] says otherwise:
    /// for a handler that needs the server's own address.
    pub fn new() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
        let addr = listener.local_addr().unwrap();
        let shared = Arc::new(Shared {
            handler: RwLock::new(Arc::new(|_: &Request| Response::not_found())),
            once: Mutex::new(Vec::new()),
            log: Mutex::new(Vec::new()),
            stopped: AtomicBool::new(false),
        });
        let accepting = Arc::clone(&shared);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                if accepting.stopped.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(stream) = stream else { continue };
                let shared = Arc::clone(&accepting);
                std::thread::spawn(move || {
                    // A client that went away mid-exchange is the client's business.
                    let _ = answer(stream, &shared);
                });
            }
        });
        Self { addr, shared }
    }

    /// A server answering every request with `handler`.
    pub fn start(handler: impl Fn(&Request) -> Response + Send + Sync + 'static) -> Self {
        let server = Self::new();
        server.handle(handler);
        server
    }

    /// A server answering from `routes`, 404 to a path it does not name and 405 to a method
    /// it does not route for a path it names. A route is `"/path"` (a GET or HEAD of that path,
    /// with its query, exactly as requested) or `"METHOD /path"` (e.g. `"POST /x"`).
    pub fn routes<P: Into<String>>(routes: impl IntoIterator<Item = (P, Response)>) -> Self {
        let table: BTreeMap<(String, String), Response> = routes
            .into_iter()
            .map(|(p, r)| {
                let p = p.into();
                let (method, path) = match p.split_once(' ') {
                    Some((m, path)) => (m.to_ascii_uppercase(), path.to_owned()),
                    None => ("GET".to_owned(), p),
                };
                ((method, path), r)
            })
            .collect();
        Self::start(move |req| {
            let method = if req.method == "HEAD" {
                "GET"
            } else {
                req.method.as_str()
            };
            if let Some(r) = table.get(&(method.to_owned(), req.path.clone())) {
                return r.clone();
            }
            let allowed: Vec<&str> = table
                .keys()
                .filter(|(_, p)| *p == req.path)
                .map(|(m, _)| m.as_str())
                .collect();
            if allowed.is_empty() {
                Response::not_found()
            } else {
                Response::status(405).header("allow", &allowed.join(", "))
            }
        })
    }

    /// Answers from now on with `handler`.
    pub fn handle(&self, handler: impl Fn(&Request) -> Response + Send + Sync + 'static) {
        *self.shared.handler.write().unwrap() = Arc::new(handler);
    }

    /// Answers the next request whose path starts with `prefix` with `response` instead of the
    /// handler; several queued for one path are used in the order given.
    pub fn once(&self, prefix: &str, response: Response) {
        self.shared
            .once
            .lock()
            .unwrap()
            .push((prefix.to_owned(), response));
    }

    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// `http://127.0.0.1:<port>`.
    pub fn base(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// [`Server::base`] followed by `path`.
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base())
    }

    /// Every request so far, in the order they were read.
    pub fn requests(&self) -> Vec<Request> {
        self.shared.log.lock().unwrap().clone()
    }

    /// Every write (POST, PATCH, PUT) so far, in order, its body parsed as JSON.
    pub fn writes(&self) -> Vec<Write> {
        let log = self.shared.log.lock().unwrap();
        log.iter()
            .filter(|r| r.is_write())
            .map(|r| Write {
                method: r.method.clone(),
                path: r.path.clone(),
                json: r.json(),
                authorization: r.header("authorization").map(str::to_owned),
            })
            .collect()
    }

    /// How many requests asked for exactly `path` (with its query).
    pub fn hits(&self, path: &str) -> usize {
        let log = self.shared.log.lock().unwrap();
        log.iter().filter(|r| r.path == path).count()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.shared.stopped.store(true, Ordering::SeqCst);
        // Wakes the accepting thread so that it sees the flag.
        let _ = TcpStream::connect(self.addr);
    }
}

/// Reads one request, answers it, closes.
fn answer(mut stream: TcpStream, shared: &Shared) -> io::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let Some(request) = read_request(&mut reader)? else {
        return Ok(());
    };
    shared.log.lock().unwrap().push(request.clone());
    if request
        .header("content-length")
        .and_then(|v| v.parse::<usize>().ok())
        > Some(MAX_REQUEST_BODY)
    {
        let refused = Response::status(413).body("request body too large");
        stream.write_all(head(&refused).as_bytes())?;
        stream.write_all(&refused.body)?;
        return stream.flush();
    }
    let queued = {
        let mut once = shared.once.lock().unwrap();
        once.iter()
            .position(|(prefix, _)| request.path.starts_with(prefix.as_str()))
            .map(|i| once.remove(i).1)
    };
    let response = queued.unwrap_or_else(|| {
        let handler = Arc::clone(&shared.handler.read().unwrap());
        handler(&request)
    });
    std::thread::sleep(response.delay);
    if response.fault == Some(Fault::HangUp) {
        return stream.shutdown(Shutdown::Both);
    }
    stream.write_all(head(&response).as_bytes())?;
    let body = &response.body;
    match response.fault {
        Some(Fault::Truncate(n)) => {
            stream.write_all(&body[..n.min(body.len())])?;
            stream.shutdown(Shutdown::Both)
        }
        Some(Fault::Stall(n)) => {
            stream.write_all(&body[..n.min(body.len())])?;
            stream.flush()?;
            // Holds the connection open until the client gives up and closes its end.
            stream.set_read_timeout(Some(Duration::from_mins(10)))?;
            let mut sink = [0u8; 512];
            while reader.read(&mut sink)? > 0 {}
            Ok(())
        }
        Some(Fault::Trickle(every)) => {
            // Ends early when the client hangs up: the next write fails.
            for byte in body {
                std::thread::sleep(every);
                stream.write_all(std::slice::from_ref(byte))?;
                stream.flush()?;
            }
            Ok(())
        }
        _ => {
            stream.write_all(body)?;
            stream.flush()
        }
    }
}

/// The status line and headers of `response`, up to the blank line.
fn head(response: &Response) -> String {
    let mut head = format!(
        "HTTP/1.1 {} {}\r\n",
        response.status,
        reason(response.status)
    );
    if response.fault != Some(Fault::Unsized) {
        let _ = write!(head, "content-length: {}\r\n", response.body.len());
    }
    head.push_str("connection: close\r\n");
    for (k, v) in &response.headers {
        let _ = write!(head, "{k}: {v}\r\n");
    }
    head.push_str("\r\n");
    head
}

/// The request line, headers and a `content-length` body; `None` if the client closed first.
fn read_request(reader: &mut BufReader<TcpStream>) -> io::Result<Option<Request>> {
    let mut line = String::new();
    if reader.read_line(&mut line)? == 0 {
        return Ok(None);
    }
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or("").to_owned();
    let path = parts.next().unwrap_or("/").to_owned();
    let mut headers = BTreeMap::new();
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h)? == 0 || h.trim().is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_owned());
        }
    }
    let len = headers
        .get("content-length")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    // An oversized body is not read: the caller answers 413.
    let mut body = vec![0; if len > MAX_REQUEST_BODY { 0 } else { len }];
    reader.read_exact(&mut body)?;
    Ok(Some(Request {
        method,
        path,
        headers,
        body,
    }))
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        201 => "Created",
        204 => "No Content",
        301 => "Moved Permanently",
        302 => "Found",
        304 => "Not Modified",
        307 => "Temporary Redirect",
        308 => "Permanent Redirect",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        410 => "Gone",
        413 => "Content Too Large",
        422 => "Unprocessable Entity",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => "Status",
    }
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use super::*;

    /// Sends `raw` and reads until the server closes or `timeout` passes; returns what came
    /// back and whether the server closed.
    fn exchange(server: &Server, raw: &str, timeout: Duration) -> (Vec<u8>, bool) {
        let mut s = TcpStream::connect(("127.0.0.1", server.port())).unwrap();
        s.write_all(raw.as_bytes()).unwrap();
        s.set_read_timeout(Some(timeout)).unwrap();
        let mut out = Vec::new();
        let mut buf = [0u8; 4096];
        loop {
            match s.read(&mut buf) {
                Ok(0) => return (out, true),
                Ok(n) => out.extend_from_slice(&buf[..n]),
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                    ) =>
                {
                    return (out, false);
                }
                Err(e) => panic!("{e}"),
            }
        }
    }

    fn get(server: &Server, path: &str) -> (String, bool) {
        let (out, closed) = exchange(
            server,
            &format!("GET {path} HTTP/1.1\r\nhost: x\r\n\r\n"),
            Duration::from_secs(5),
        );
        (String::from_utf8(out).unwrap(), closed)
    }

    #[test]
    fn logs_method_path_headers_and_body() {
        let server = Server::start(|r| Response::ok(r.body.clone()));
        let (out, closed) = exchange(
            &server,
            "POST /x?y=1 HTTP/1.1\r\nAuthorization: Bearer t\r\ncontent-length: 3\r\n\r\nabc",
            Duration::from_secs(5),
        );
        assert!(closed);
        let out = String::from_utf8(out).unwrap();
        assert!(out.starts_with("HTTP/1.1 200 OK\r\n"), "{out}");
        assert!(out.contains("content-length: 3\r\n"), "{out}");
        assert!(out.ends_with("\r\n\r\nabc"), "{out}");
        let reqs = server.requests();
        assert_eq!(reqs.len(), 1);
        assert_eq!(reqs[0].method, "POST");
        assert_eq!(reqs[0].path, "/x?y=1");
        assert_eq!(reqs[0].header("AUTHORIZATION"), Some("Bearer t"));
        assert_eq!(reqs[0].body, b"abc");
        assert_eq!(server.hits("/x?y=1"), 1);
    }

    #[test]
    fn routes_redirects_and_404() {
        let server = Server::routes([
            ("/a", Response::redirect("/b")),
            ("/b", Response::ok("bee")),
        ]);
        let (a, _) = get(&server, "/a");
        assert!(a.starts_with("HTTP/1.1 302 Found\r\n"), "{a}");
        assert!(a.contains("location: /b\r\n"), "{a}");
        assert!(get(&server, "/b").0.ends_with("\r\n\r\nbee"));
        assert!(
            get(&server, "/c")
                .0
                .starts_with("HTTP/1.1 404 Not Found\r\n")
        );
    }

    #[test]
    fn once_overrides_in_order_then_the_handler_answers() {
        let server = Server::start(|_| Response::ok("fine"));
        server.once("/api", Response::rate_limited(7));
        server.once("/api", Response::status(502));
        let (first, _) = get(&server, "/api/run");
        assert!(first.starts_with("HTTP/1.1 403 "), "{first}");
        assert!(first.contains("retry-after: 7\r\n"), "{first}");
        assert!(first.contains("x-ratelimit-remaining: 0\r\n"), "{first}");
        assert!(get(&server, "/other").0.ends_with("fine"));
        assert!(get(&server, "/api").0.starts_with("HTTP/1.1 502 "));
        assert!(get(&server, "/api").0.ends_with("fine"));
    }

    /// The route table answered every method alike: a client that sent a POST where it
    /// should have sent a GET (or the reverse) passed its test.
    #[test]
    fn a_get_route_does_not_answer_a_post_and_a_post_route_not_a_get() {
        let server = Server::routes([
            ("/a", Response::ok("got")),
            ("POST /c", Response::status(201).body("made")),
        ]);
        let post = |path: &str| {
            let (out, _) = exchange(
                &server,
                &format!("POST {path} HTTP/1.1\r\ncontent-length: 2\r\n\r\n{{}}"),
                Duration::from_secs(5),
            );
            String::from_utf8(out).unwrap()
        };
        let refused = post("/a");
        assert!(refused.starts_with("HTTP/1.1 405 "), "{refused}");
        assert!(refused.contains("allow: GET\r\n"), "{refused}");
        assert!(post("/c").starts_with("HTTP/1.1 201 Created\r\n"));
        assert!(get(&server, "/c").0.starts_with("HTTP/1.1 405 "));
        assert!(get(&server, "/a").0.ends_with("got"));
        assert!(post("/elsewhere").starts_with("HTTP/1.1 404 "));
    }

    #[test]
    fn writes_are_listed_with_their_json_and_authorization() {
        let server = Server::start(|_| Response::status(201));
        let send = |raw: &str| exchange(&server, raw, Duration::from_secs(5));
        send(
            "PATCH /x HTTP/1.1\r\nauthorization: Bearer t\r\ncontent-length: 12\r\n\r\n{\"body\":\"b\"}",
        );
        send("GET /y HTTP/1.1\r\n\r\n");
        send("PUT /z HTTP/1.1\r\ncontent-length: 3\r\n\r\nnot");
        let writes = server.writes();
        assert_eq!(writes.len(), 2, "{writes:?}");
        assert_eq!(writes[0].method, "PATCH");
        assert_eq!(writes[0].json, Some(serde_json::json!({"body": "b"})));
        assert_eq!(writes[0].authorization.as_deref(), Some("Bearer t"));
        assert_eq!((writes[1].path.as_str(), &writes[1].json), ("/z", &None));
        assert_eq!(writes[1].authorization, None);
    }

    /// A client that streamed a huge body made the server allocate all of it.
    #[test]
    fn a_body_over_the_cap_is_refused_unread() {
        let server = Server::start(|_| Response::ok("handled"));
        let (out, _) = exchange(
            &server,
            &format!(
                "POST /x HTTP/1.1\r\ncontent-length: {}\r\n\r\n",
                MAX_REQUEST_BODY + 1
            ),
            Duration::from_secs(5),
        );
        let out = String::from_utf8(out).unwrap();
        assert!(out.starts_with("HTTP/1.1 413 "), "{out}");
        assert!(!out.contains("handled"), "{out}");
        assert!(server.requests()[0].body.is_empty());
    }

    #[test]
    fn header_replaces_one_of_the_same_name() {
        let r = Response::ok("x").header("Content-Type", "application/zip");
        assert_eq!(
            r.headers,
            [("Content-Type".to_owned(), "application/zip".to_owned())]
        );
    }

    #[test]
    fn delay_comes_before_the_answer() {
        let server = Server::start(|_| Response::ok("late").delayed(Duration::from_millis(300)));
        let t = Instant::now();
        assert!(get(&server, "/").0.ends_with("late"));
        assert!(t.elapsed() >= Duration::from_millis(300));
    }

    #[test]
    fn unsized_has_no_content_length_and_ends_at_close() {
        let server = Server::start(|_| Response::ok("all of it").without_length());
        let (out, closed) = get(&server, "/");
        assert!(closed);
        assert!(!out.contains("content-length"), "{out}");
        assert!(out.ends_with("\r\n\r\nall of it"));
    }

    #[test]
    fn truncated_promises_more_than_it_sends() {
        let server = Server::start(|_| Response::ok("0123456789").truncated(4));
        let (out, closed) = get(&server, "/");
        assert!(closed);
        assert!(out.contains("content-length: 10\r\n"), "{out}");
        assert!(out.ends_with("\r\n\r\n0123"), "{out}");
    }

    #[test]
    fn stalled_sends_part_and_holds_the_connection() {
        let server = Server::start(|_| Response::ok("0123456789").stalled(6));
        let (out, closed) = exchange(
            &server,
            "GET / HTTP/1.1\r\n\r\n",
            Duration::from_millis(500),
        );
        assert!(!closed, "the connection stays open");
        let out = String::from_utf8(out).unwrap();
        assert!(out.contains("content-length: 10\r\n"), "{out}");
        assert!(out.ends_with("\r\n\r\n012345"), "{out}");
    }

    #[test]
    fn trickled_sends_one_byte_at_a_time() {
        let server =
            Server::start(|_| Response::ok("0123456789").trickled(Duration::from_millis(300)));
        let mut s = TcpStream::connect(("127.0.0.1", server.port())).unwrap();
        s.write_all(b"GET / HTTP/1.1\r\n\r\n").unwrap();
        s.set_read_timeout(Some(Duration::from_millis(100)))
            .unwrap();
        // What arrives in the first 1.5 s; the whole body takes at least 3 s.
        let start = Instant::now();
        let mut out = Vec::new();
        let mut buf = [0u8; 64];
        while start.elapsed() < Duration::from_millis(1500) {
            match s.read(&mut buf) {
                Ok(0) => panic!("closed before the body was sent"),
                Ok(n) => out.extend_from_slice(&buf[..n]),
                Err(_) => {}
            }
        }
        let out = String::from_utf8(out).unwrap();
        assert!(out.contains("content-length: 10\r\n"), "{out}");
        let body = out.split("\r\n\r\n").nth(1).unwrap();
        assert!(!body.is_empty() && body.len() < 10, "{body:?}");
        assert!("0123456789".starts_with(body), "{body:?}");
    }

    #[test]
    fn hang_up_closes_without_a_byte() {
        let server = Server::start(|_| Response::hang_up());
        let (out, closed) = get(&server, "/");
        assert!(closed);
        assert!(out.is_empty(), "{out}");
        assert_eq!(server.requests().len(), 1, "the request was still read");
    }

    #[test]
    fn handler_can_name_its_own_address() {
        let server = Server::new();
        let base = server.base();
        server.handle(move |r| Response::redirect(&format!("{base}/next{}", r.path)));
        let (out, _) = get(&server, "/x");
        assert!(
            out.contains(&format!("location: {}/next/x\r\n", server.base())),
            "{out}"
        );
    }
}
