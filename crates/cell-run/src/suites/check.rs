//! The response check before any load: one `GET /` on loopback, compared with what the
//! config expects, then a second request on the same connection (keep-alive).

use std::io::{Read as _, Write as _};
use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use cell_model::Expect;

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
    let req = format!(
        "GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUser-Agent: cell\r\nAccept: */*\r\n\r\n"
    );
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
    if r.body != e.body.as_bytes() {
        diffs.push(format!(
            "body {:?} (expected {:?})",
            String::from_utf8_lossy(&r.body[..r.body.len().min(200)]),
            e.body
        ));
    }
    if diffs.is_empty() {
        Ok(())
    } else {
        Err(Mismatch(diffs))
    }
}

/// The check before any load: two `GET /` on one connection, both as expected.
pub fn verify(port: u16, e: &Expect, timeout: Duration) -> Result<(), CheckError> {
    let mut s = connect(port, timeout)?;
    let first = get(&mut s, port)?;
    compare(&first, e).map_err(CheckError::WrongFirst)?;
    if first
        .header("connection")
        .is_some_and(|v| v.eq_ignore_ascii_case("close"))
    {
        return Err(CheckError::ConnectionClose);
    }
    let second = get(&mut s, port).map_err(CheckError::SecondFailed)?;
    compare(&second, e).map_err(CheckError::WrongSecond)?;
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

/// Polls until the server answers `GET /` with any complete response, or `deadline`.
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
            Ok(r) if r.status == 200 => return Ok(()),
            Ok(r) => format!("it answered status {}", r.status),
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
            body: "hello, world\n".into(),
        }
    }

    #[test]
    fn a_right_answer_passes_twice_on_one_connection() {
        let port = serve_once(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 13\r\n\r\nhello, world\n",
        );
        verify(port, &expect(), Duration::from_secs(2)).unwrap();
    }

    #[test]
    fn a_chunked_answer_is_read() {
        let port = serve_once(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n8\r\n, world\n\r\n0\r\n\r\n",
        );
        verify(port, &expect(), Duration::from_secs(2)).unwrap();
    }

    #[test]
    fn every_difference_is_named() {
        let port = serve_once(
            b"HTTP/1.1 201 Created\r\nContent-Type: text/html\r\nContent-Length: 8\r\n\r\ngoodbye\n",
        );
        let e = verify(port, &expect(), Duration::from_secs(2))
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
}
