//! The response check before any load: each workload's request on loopback, compared with
//! what the config expects, then the same request again on the same connection (keep-alive).

use std::fmt::Write as _;
use std::io::{Read as _, Write as _};
use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use cell_model::{Expect, ExpectBody, Workload};

use super::error::{CheckError, Gone, Mismatch, ResponseError};

/// A parsed HTTP/1.1 response.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Response {
    /// Status code.
    pub status: u16,
    /// Headers, names lower-cased, in order.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Vec<u8>,
}

impl Response {
    /// A header's value by lower-case name.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Loopback only: every request of the suites goes to 127.0.0.1.
pub fn loopback(port: u16) -> SocketAddr {
    SocketAddr::from((Ipv4Addr::LOCALHOST, port))
}

/// Sends `GET /` on `stream` and reads one response (Content-Length or chunked).
pub fn get(stream: &mut TcpStream, port: u16) -> Result<Response, ResponseError> {
    send(stream, port, "GET", "/", &[], None)
}

/// Sends one request (its headers, and its body with a Content-Length) and reads one
/// response.
pub fn send(
    stream: &mut TcpStream,
    port: u16,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<&str>,
) -> Result<Response, ResponseError> {
    let mut req = format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUser-Agent: cell\r\nAccept: */*\r\n"
    );
    for (k, v) in headers {
        let _ = write!(req, "{k}: {v}\r\n");
    }
    if let Some(b) = body {
        let _ = write!(req, "Content-Length: {}\r\n", b.len());
    }
    req.push_str("\r\n");
    req.push_str(body.unwrap_or_default());
    stream
        .write_all(req.as_bytes())
        .map_err(ResponseError::Send)?;
    read_response(stream)
}

/// Connects with a bound on each step.
pub fn connect(port: u16, timeout: Duration) -> Result<TcpStream, ResponseError> {
    let s = TcpStream::connect_timeout(&loopback(port), timeout)
        .map_err(|source| ResponseError::Connect { port, source })?;
    s.set_read_timeout(Some(timeout))
        .map_err(ResponseError::Socket)?;
    s.set_write_timeout(Some(timeout))
        .map_err(ResponseError::Socket)?;
    let _ = s.set_nodelay(true);
    Ok(s)
}

fn read_response(stream: &mut TcpStream) -> Result<Response, ResponseError> {
    const LIMIT: usize = 1 << 20;
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(i) = find(&buf, b"\r\n\r\n") {
            break i;
        }
        if buf.len() > LIMIT {
            return Err(ResponseError::HeadTooLarge);
        }
        let n = stream.read(&mut chunk).map_err(ResponseError::Read)?;
        if n == 0 {
            return Err(if buf.is_empty() {
                ResponseError::ClosedBeforeAnswer
            } else {
                ResponseError::ClosedInHead
            });
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap_or_default();
    let mut parts = status_line.splitn(3, ' ');
    let (Some(version), Some(code)) = (parts.next(), parts.next()) else {
        return Err(ResponseError::MalformedStatus(status_line.to_owned()));
    };
    if !version.starts_with("HTTP/1.") {
        return Err(ResponseError::NotHttp1(status_line.to_owned()));
    }
    let status: u16 = code
        .parse()
        .map_err(|_| ResponseError::MalformedStatus(status_line.to_owned()))?;
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let mut rest = buf[head_end + 4..].to_vec();
    let mut fill = |rest: &mut Vec<u8>, want: usize| -> Result<(), ResponseError> {
        while rest.len() < want {
            if rest.len() > LIMIT {
                return Err(ResponseError::BodyTooLarge);
            }
            let n = stream.read(&mut chunk).map_err(ResponseError::ReadBody)?;
            if n == 0 {
                return Err(ResponseError::ClosedInBody {
                    got: rest.len(),
                    want,
                });
            }
            rest.extend_from_slice(&chunk[..n]);
        }
        Ok(())
    };
    let header = |name: &str| {
        headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    };
    let body = if let Some(len) = header("content-length") {
        let len: usize = len
            .parse()
            .map_err(|_| ResponseError::BadLength(len.clone()))?;
        fill(&mut rest, len)?;
        rest.truncate(len);
        rest
    } else if header("transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked")) {
        let mut body = Vec::new();
        loop {
            let line_end = loop {
                if let Some(i) = find(&rest, b"\r\n") {
                    break i;
                }
                let want = rest.len() + 1;
                fill(&mut rest, want)?;
            };
            let size_text = String::from_utf8_lossy(&rest[..line_end]).into_owned();
            let size = usize::from_str_radix(size_text.split(';').next().unwrap_or("").trim(), 16)
                .map_err(|_| ResponseError::BadChunk(size_text.clone()))?;
            rest.drain(..line_end + 2);
            fill(&mut rest, size + 2)?;
            body.extend_from_slice(&rest[..size]);
            rest.drain(..size + 2);
            if size == 0 {
                break body;
            }
        }
    } else {
        return Err(ResponseError::NoFraming);
    };
    Ok(Response {
        status,
        headers,
        body,
    })
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Compares a response with the expectation; the error names every difference.
pub fn compare(r: &Response, e: &Expect) -> Result<(), Mismatch> {
    let mut diffs = Vec::new();
    if r.status != e.status {
        diffs.push(format!("status {} (expected {})", r.status, e.status));
    }
    for (name, want) in &e.headers {
        match r.header(name) {
            None => diffs.push(format!("no `{name}` header (expected `{want}`)")),
            Some(got) if got != want => {
                diffs.push(format!("header `{name}: {got}` (expected `{want}`)"));
            }
            Some(_) => {}
        }
    }
    match &e.body {
        ExpectBody::Exact(want) => {
            if r.body != want.as_bytes() {
                diffs.push(format!(
                    "body {:?} (expected {want:?})",
                    String::from_utf8_lossy(&r.body[..r.body.len().min(200)]),
                ));
            }
        }
        ExpectBody::Json(want) => match serde_json::from_slice::<serde_json::Value>(&r.body) {
            Ok(got) => json_diff("", &got, want, &mut diffs),
            Err(err) => diffs.push(format!(
                "body is not JSON ({err}): {:?}",
                String::from_utf8_lossy(&r.body[..r.body.len().min(200)]),
            )),
        },
    }
    if diffs.is_empty() {
        Ok(())
    } else {
        Err(Mismatch(diffs))
    }
}

/// At most this many differences of one JSON body are named.
const MAX_JSON_DIFFS: usize = 8;

/// The differences between two JSON values, each named by its path (`field `name``,
/// `field `items[2]``): objects key by key (missing and unexpected keys too), arrays item by
/// item, numbers by value (`28` and `28.0` are equal).
pub fn json_diff(
    at: &str,
    got: &serde_json::Value,
    want: &serde_json::Value,
    out: &mut Vec<String>,
) {
    use serde_json::Value;
    if out.len() >= MAX_JSON_DIFFS {
        return;
    }
    let name = |at: &str| {
        if at.is_empty() {
            "the body".to_owned()
        } else {
            format!("field `{at}`")
        }
    };
    let join = |k: &str| {
        if at.is_empty() {
            k.to_owned()
        } else {
            format!("{at}.{k}")
        }
    };
    match (got, want) {
        (Value::Object(g), Value::Object(w)) => {
            for (k, wv) in w {
                match g.get(k) {
                    Some(gv) => json_diff(&join(k), gv, wv, out),
                    None if out.len() < MAX_JSON_DIFFS => {
                        out.push(format!("no {} (expected {})", name(&join(k)), short(wv)));
                    }
                    None => {}
                }
            }
            for (k, gv) in g {
                if !w.contains_key(k) && out.len() < MAX_JSON_DIFFS {
                    out.push(format!("unexpected {}: {}", name(&join(k)), short(gv)));
                }
            }
        }
        (Value::Array(g), Value::Array(w)) if g.len() == w.len() => {
            for (i, (gv, wv)) in g.iter().zip(w).enumerate() {
                json_diff(&format!("{at}[{i}]"), gv, wv, out);
            }
        }
        // By value: 28 and 28.0 are equal; integers beyond 2^53 are compared exactly.
        (Value::Number(g), Value::Number(w)) if same_number(g, w) => {}
        _ if got == want => {}
        _ => out.push(format!(
            "{} is {} (expected {})",
            name(at),
            short(got),
            short(want)
        )),
    }
}

/// Two JSON numbers of the same value: exactly as integers when both are, else as doubles.
fn same_number(a: &serde_json::Number, b: &serde_json::Number) -> bool {
    match (a.as_i128(), b.as_i128()) {
        (Some(x), Some(y)) => x == y,
        _ => a.as_f64() == b.as_f64(),
    }
}

/// A JSON value for a message: compact, at most 80 characters.
fn short(v: &serde_json::Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 80 {
        format!("{}…", s.chars().take(80).collect::<String>())
    } else {
        s
    }
}

/// The check before any load of one workload: its request twice on one connection, both
/// answered as `e` says (on two connections, one each, for a server that does not keep
/// connections alive).
pub fn verify(
    port: u16,
    w: &Workload,
    e: &Expect,
    keep_alive: bool,
    timeout: Duration,
) -> Result<(), CheckError> {
    let headers: Vec<(&str, &str)> = w
        .headers
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let what = format!("{} {}", w.method, w.path);
    let mut s = connect(port, timeout)?;
    let ask = |s: &mut TcpStream| send(s, port, &w.method, &w.path, &headers, w.body.as_deref());
    let first = ask(&mut s)?;
    compare(&first, e).map_err(|m| CheckError::WrongFirst(what.clone(), m))?;
    let closes = first
        .header("connection")
        .is_some_and(|v| v.eq_ignore_ascii_case("close"));
    if closes && keep_alive {
        return Err(CheckError::ConnectionClose);
    }
    if !keep_alive {
        s = connect(port, timeout)?;
    }
    let second = ask(&mut s).map_err(|m| CheckError::SecondFailed(what.clone(), m))?;
    compare(&second, e).map_err(|m| CheckError::WrongSecond(what, m))?;
    Ok(())
}

/// Why a server did not reach its first 200.
#[derive(Debug, thiserror::Error)]
pub enum WaitError {
    /// It ended while waited for.
    #[error(transparent)]
    Gone(#[from] Gone),
    /// The deadline passed; what the last attempt saw.
    #[error("{0}")]
    Timeout(String),
}

/// Polls until the server answers `GET /` with any complete response (a 404 too), or
/// `deadline`.
/// `alive` is asked between attempts so a server that exits is reported at once.
pub fn wait_ready(
    port: u16,
    deadline: Instant,
    alive: &mut dyn FnMut() -> Result<(), Gone>,
) -> Result<(), WaitError> {
    loop {
        alive()?;
        let attempt = connect(port, Duration::from_millis(500)).and_then(|mut s| get(&mut s, port));
        let last = match attempt {
            // Any complete answer: a server need not serve `/` (its workloads say what).
            Ok(_) => return Ok(()),
            Err(m) => m.to_string(),
        };
        if Instant::now() >= deadline {
            return Err(WaitError::Timeout(last));
        }
        std::thread::sleep(Duration::from_millis(25));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;
    use std::net::TcpListener;

    fn serve_once(answer: &'static [u8]) -> u16 {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        std::thread::spawn(move || {
            let (mut s, _) = l.accept().unwrap();
            let mut buf = [0u8; 1024];
            for _ in 0..2 {
                let _ = s.read(&mut buf);
                let _ = s.write_all(answer);
            }
        });
        port
    }

    fn expect() -> Expect {
        Expect {
            status: 200,
            headers: BTreeMap::from([("content-type".into(), "text/plain".into())]),
            body: ExpectBody::Exact("hello, world\n".into()),
        }
    }

    fn root() -> Workload {
        Workload {
            name: "plaintext".into(),
            method: "GET".into(),
            path: "/".into(),
            headers: BTreeMap::new(),
            body: None,
            expect: expect(),
        }
    }

    #[test]
    fn a_right_answer_passes_twice_on_one_connection() {
        let port = serve_once(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 13\r\n\r\nhello, world\n",
        );
        verify(port, &root(), &expect(), true, Duration::from_secs(2)).unwrap();
    }

    #[test]
    fn a_chunked_answer_is_read() {
        let port = serve_once(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n8\r\n, world\n\r\n0\r\n\r\n",
        );
        verify(port, &root(), &expect(), true, Duration::from_secs(2)).unwrap();
    }

    #[test]
    fn every_difference_is_named() {
        let port = serve_once(
            b"HTTP/1.1 201 Created\r\nContent-Type: text/html\r\nContent-Length: 8\r\n\r\ngoodbye\n",
        );
        let e = verify(port, &root(), &expect(), true, Duration::from_secs(2))
            .unwrap_err()
            .to_string();
        assert!(e.contains("status 201 (expected 200)"), "{e}");
        assert!(
            e.contains("header `content-type: text/html` (expected `text/plain`)"),
            "{e}"
        );
        assert!(
            e.contains(r#"body "goodbye\n" (expected "hello, world\n")"#),
            "{e}"
        );
    }

    fn diffs(got: &str, want: &str) -> Vec<String> {
        let mut out = Vec::new();
        json_diff(
            "",
            &serde_json::from_str(got).unwrap(),
            &serde_json::from_str(want).unwrap(),
            &mut out,
        );
        out
    }

    #[test]
    fn json_is_compared_by_structure_and_each_difference_is_named() {
        let want = r#"{"name":"Alice","age":28,"adult":true}"#;
        assert!(diffs(r#"{ "adult": true, "age": 28.0, "name": "Alice" }"#, want).is_empty());
        assert_eq!(
            diffs(r#"{"name":"Bob","age":28,"adult":true}"#, want),
            [r#"field `name` is "Bob" (expected "Alice")"#]
        );
        assert_eq!(
            diffs(r#"{"name":"Alice","age":"28","extra":1}"#, want),
            [
                r#"field `age` is "28" (expected 28)"#,
                "no field `adult` (expected true)",
                "unexpected field `extra`: 1",
            ]
        );
        assert_eq!(diffs("[1,2]", "[1,3]"), ["field `[1]` is 2 (expected 3)"]);
        assert_eq!(
            diffs("[1]", r#"{"id":1}"#),
            [r#"the body is [1] (expected {"id":1})"#]
        );
    }

    #[test]
    fn a_post_is_sent_with_its_body_and_a_body_that_is_not_json_is_named() {
        let port = serve_once(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 5\r\n\r\nhello",
        );
        let w = Workload {
            name: "post-json".into(),
            method: "POST".into(),
            path: "/users".into(),
            headers: BTreeMap::from([("content-type".into(), "application/json".into())]),
            body: Some(r#"{"name":"Alice"}"#.into()),
            expect: Expect {
                status: 200,
                headers: BTreeMap::new(),
                body: ExpectBody::Json(serde_json::json!({"name": "Alice"})),
            },
        };
        let e = verify(port, &w, &w.expect, true, Duration::from_secs(2))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("wrong response to POST /users: body is not JSON"),
            "{e}"
        );
    }
}
