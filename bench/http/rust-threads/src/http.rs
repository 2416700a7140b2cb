//! HTTP/1.1 message syntax: parsing a request head out of the bytes received
//! so far, and writing a response.
//!
//! The head is parsed in place: `Head` records offsets into the buffer it was
//! parsed from, so nothing is copied or allocated per request. Lines end with
//! CRLF or a bare LF (RFC 9112 §2.2 lets a recipient accept the latter), and
//! empty lines before the request line are skipped (§2.2 again).

use std::ops::Range;

/// The largest request head accepted (request line and header fields); a
/// longer one is answered with 431 and the connection closed.
pub const HEAD_MAX: usize = 8 * 1024;

/// A parsed request head. Ranges are offsets into the slice given to
/// [`parse_head`].
pub struct Head {
    /// Bytes the head spans, blank line included: the body starts here.
    pub len: usize,
    pub method: Range<usize>,
    /// The request target's path: without its query or fragment.
    pub path: Range<usize>,
    /// `HTTP/1.<minor>`; every minor above 1 is treated as 1.
    pub minor: u8,
    pub content_length: Option<u64>,
    /// A `Transfer-Encoding` field was present (bodies are only read by length).
    pub transfer_encoding: bool,
    /// `Connection` carried the `close` token.
    pub close: bool,
    /// `Connection` carried the `keep-alive` token.
    pub keep_alive_token: bool,
    /// `Content-Type` is `application/json`, any case, parameters allowed.
    pub json: bool,
    /// `Expect: 100-continue`.
    pub expect_continue: bool,
}

impl Head {
    /// Whether the connection may carry another request after this one:
    /// HTTP/1.1 unless `Connection: close`; HTTP/1.0 only with
    /// `Connection: keep-alive`.
    pub fn keep_alive(&self) -> bool {
        !self.close && (self.minor >= 1 || self.keep_alive_token)
    }

    /// The `Connection` field the response carries if it keeps the
    /// connection open.
    pub fn kept(&self) -> Connection {
        if self.minor == 0 {
            Connection::KeepAlive
        } else {
            Connection::Default
        }
    }
}

/// Why a head cannot be served; each is answered and the connection closed.
#[derive(Debug, PartialEq, Eq)]
pub enum HeadError {
    /// Malformed: 400.
    Bad,
    /// Longer than `HEAD_MAX`: 431.
    TooLarge,
    /// Not HTTP/1.x: 505.
    Version,
}

/// Parses the request head at the start of `buf`: `Ok(None)` while it is
/// still incomplete.
pub fn parse_head(buf: &[u8]) -> Result<Option<Head>, HeadError> {
    let first = buf
        .iter()
        .position(|&b| b != b'\r' && b != b'\n')
        .unwrap_or(buf.len());
    let Some(end) = find_end(buf, first) else {
        return if buf.len() > HEAD_MAX {
            Err(HeadError::TooLarge)
        } else {
            Ok(None)
        };
    };
    if end - first > HEAD_MAX {
        return Err(HeadError::TooLarge);
    }
    let mut lines = Lines { buf, pos: first };
    let request_line = lines.next().ok_or(HeadError::Bad)?;
    let mut head = request_line_of(buf, request_line)?;
    head.len = end;
    for line in lines {
        if line.is_empty() {
            break;
        }
        field(&mut head, &buf[line])?;
    }
    Ok(Some(head))
}

/// The end of the head (just past its blank line), searching from `from`.
fn find_end(buf: &[u8], from: usize) -> Option<usize> {
    let mut i = from;
    while let Some(p) = buf[i..].iter().position(|&b| b == b'\n') {
        let next = i + p + 1;
        match buf.get(next..next + 2) {
            Some([b'\n', _]) => return Some(next + 1),
            Some([b'\r', b'\n']) => return Some(next + 2),
            Some(_) => {}
            None => {
                if buf.get(next) == Some(&b'\n') {
                    return Some(next + 1);
                }
                return None;
            }
        }
        i = next;
    }
    None
}

/// Lines of a complete head, as ranges without their CR LF or LF.
struct Lines<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl Iterator for Lines<'_> {
    type Item = Range<usize>;

    fn next(&mut self) -> Option<Range<usize>> {
        let start = self.pos;
        let nl = start + self.buf.get(start..)?.iter().position(|&b| b == b'\n')?;
        self.pos = nl + 1;
        let end = if nl > start && self.buf[nl - 1] == b'\r' {
            nl - 1
        } else {
            nl
        };
        Some(start..end)
    }
}

/// `tchar` of RFC 9110 §5.6.2.
fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// `method SP request-target SP HTTP-version`.
fn request_line_of(buf: &[u8], line: Range<usize>) -> Result<Head, HeadError> {
    let bytes = &buf[line.clone()];
    let sp1 = bytes.iter().position(|&b| b == b' ').ok_or(HeadError::Bad)?;
    let rest = &bytes[sp1 + 1..];
    let sp2 = rest.iter().position(|&b| b == b' ').ok_or(HeadError::Bad)?;
    let method = &bytes[..sp1];
    let target = &rest[..sp2];
    let version = &rest[sp2 + 1..];
    if method.is_empty() || !method.iter().all(|&b| is_tchar(b)) {
        return Err(HeadError::Bad);
    }
    if target.is_empty() || target.iter().any(|&b| b <= b' ' || b == 0x7f) {
        return Err(HeadError::Bad);
    }
    let minor = match version {
        [b'H', b'T', b'T', b'P', b'/', major, b'.', minor]
            if major.is_ascii_digit() && minor.is_ascii_digit() =>
        {
            if *major != b'1' {
                return Err(HeadError::Version);
            }
            u8::from(*minor != b'0')
        }
        _ => return Err(HeadError::Bad),
    };
    let target_start = line.start + sp1 + 1;
    let path = path_of(target);
    Ok(Head {
        len: 0,
        method: line.start..line.start + sp1,
        path: target_start + path.start..target_start + path.end,
        minor,
        content_length: None,
        transfer_encoding: false,
        close: false,
        keep_alive_token: false,
        json: false,
        expect_continue: false,
    })
}

/// The path inside a request target: origin form (`/p?q`) or absolute form
/// (`http://host/p?q`). Anything else (`*`, an authority) is returned whole
/// and simply matches no route.
fn path_of(target: &[u8]) -> Range<usize> {
    let mut start = 0;
    if target.first() != Some(&b'/') {
        let scheme_end = target.windows(3).position(|w| w == b"://");
        if let Some(se) = scheme_end {
            let authority = se + 3;
            match target[authority..].iter().position(|&b| b == b'/') {
                Some(p) => start = authority + p,
                None => return 0..target.len(),
            }
        }
    }
    let end = target[start..]
        .iter()
        .position(|&b| b == b'?' || b == b'#')
        .map_or(target.len(), |p| start + p);
    start..end
}

/// One header field line, folded into `head`.
fn field(head: &mut Head, line: &[u8]) -> Result<(), HeadError> {
    // Obsolete line folding, whitespace before the colon and a missing name
    // are all errors (RFC 9112 §5.1, §5.2).
    let colon = line.iter().position(|&b| b == b':').ok_or(HeadError::Bad)?;
    let name = &line[..colon];
    if name.is_empty() || !name.iter().all(|&b| is_tchar(b)) {
        return Err(HeadError::Bad);
    }
    let value = trim(&line[colon + 1..]);
    if value.iter().any(|&b| b == b'\r' || b == 0) {
        return Err(HeadError::Bad);
    }
    if name.eq_ignore_ascii_case(b"content-length") {
        let n = parse_u64(value).ok_or(HeadError::Bad)?;
        // Repeated with the same value is tolerated; differing is not.
        if head.content_length.is_some_and(|old| old != n) {
            return Err(HeadError::Bad);
        }
        head.content_length = Some(n);
    } else if name.eq_ignore_ascii_case(b"connection") {
        for token in value.split(|&b| b == b',') {
            let token = trim(token);
            if token.eq_ignore_ascii_case(b"close") {
                head.close = true;
            } else if token.eq_ignore_ascii_case(b"keep-alive") {
                head.keep_alive_token = true;
            }
        }
    } else if name.eq_ignore_ascii_case(b"content-type") {
        let media = value.split(|&b| b == b';').next().unwrap_or(value);
        head.json = trim(media).eq_ignore_ascii_case(b"application/json");
    } else if name.eq_ignore_ascii_case(b"transfer-encoding") {
        head.transfer_encoding = true;
    } else if name.eq_ignore_ascii_case(b"expect") {
        head.expect_continue = value.eq_ignore_ascii_case(b"100-continue");
    }
    Ok(())
}

fn trim(mut s: &[u8]) -> &[u8] {
    while let [b' ' | b'\t', rest @ ..] = s {
        s = rest;
    }
    while let [rest @ .., b' ' | b'\t'] = s {
        s = rest;
    }
    s
}

/// ASCII digits only (no sign, no space), fitting a `u64`.
pub fn parse_u64(s: &[u8]) -> Option<u64> {
    if s.is_empty() {
        return None;
    }
    s.iter().try_fold(0u64, |n, &b| {
        if b.is_ascii_digit() {
            n.checked_mul(10)?.checked_add(u64::from(b - b'0'))
        } else {
            None
        }
    })
}

/// Response status lines used here.
#[derive(Clone, Copy)]
pub enum Status {
    Ok,
    BadRequest,
    NotFound,
    MethodNotAllowed,
    ContentTooLarge,
    UnsupportedMediaType,
    HeaderFieldsTooLarge,
    NotImplemented,
    VersionNotSupported,
}

impl Status {
    fn line(self) -> &'static [u8] {
        match self {
            Status::Ok => b"200 OK",
            Status::BadRequest => b"400 Bad Request",
            Status::NotFound => b"404 Not Found",
            Status::MethodNotAllowed => b"405 Method Not Allowed",
            Status::ContentTooLarge => b"413 Content Too Large",
            Status::UnsupportedMediaType => b"415 Unsupported Media Type",
            Status::HeaderFieldsTooLarge => b"431 Request Header Fields Too Large",
            Status::NotImplemented => b"501 Not Implemented",
            Status::VersionNotSupported => b"505 HTTP Version Not Supported",
        }
    }
}

/// The `Connection` field of a response.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Connection {
    /// None: HTTP/1.1 keeps the connection open by default.
    Default,
    /// `keep-alive`, for an HTTP/1.0 client that asked for it.
    KeepAlive,
    /// `close`: the connection closes after this response.
    Close,
}

/// An interim `100 Continue`.
pub const CONTINUE: &[u8] = b"HTTP/1.1 100 Continue\r\n\r\n";

/// A response, appended to `out`. Every response carries `Content-Length`;
/// `head_only` (the request was `HEAD`) leaves the body out.
pub struct Response<'a> {
    pub status: Status,
    pub content_type: &'static str,
    pub allow: Option<&'static str>,
    pub connection: Connection,
    pub body: &'a [u8],
    pub head_only: bool,
}

impl Response<'_> {
    pub fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(b"HTTP/1.1 ");
        out.extend_from_slice(self.status.line());
        out.extend_from_slice(b"\r\nContent-Type: ");
        out.extend_from_slice(self.content_type.as_bytes());
        out.extend_from_slice(b"\r\nContent-Length: ");
        crate::json::write_u64(out, self.body.len() as u64);
        if let Some(allow) = self.allow {
            out.extend_from_slice(b"\r\nAllow: ");
            out.extend_from_slice(allow.as_bytes());
        }
        match self.connection {
            Connection::Default => {}
            Connection::KeepAlive => out.extend_from_slice(b"\r\nConnection: keep-alive"),
            Connection::Close => out.extend_from_slice(b"\r\nConnection: close"),
        }
        out.extend_from_slice(b"\r\n\r\n");
        if !self.head_only {
            out.extend_from_slice(self.body);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head(s: &str) -> Head {
        parse_head(s.as_bytes()).unwrap().unwrap()
    }

    #[test]
    fn request_line_and_fields() {
        let raw = "\r\nPOST /users?x=1 HTTP/1.1\r\nHost: a\r\nContent-Type: Application/JSON; charset=utf-8\r\n\
                   content-length:  5 \r\nConnection: Keep-Alive, close\r\n\r\nhello";
        let h = head(raw);
        assert_eq!(&raw.as_bytes()[h.method.clone()], b"POST");
        assert_eq!(&raw.as_bytes()[h.path.clone()], b"/users");
        assert_eq!(h.len, raw.len() - 5);
        assert_eq!(h.content_length, Some(5));
        assert!(h.json && h.close && h.keep_alive_token && !h.keep_alive());
    }

    #[test]
    fn incomplete_bare_lf_and_errors() {
        assert!(parse_head(b"GET / HTTP/1.1\r\nHost: a\r\n").unwrap().is_none());
        assert!(parse_head(b"GET / HTTP/1.1\r\nHost: a\r\n\r").unwrap().is_none());
        let h = head("GET /json HTTP/1.0\nHost: a\n\n");
        assert!(h.minor == 0 && !h.keep_alive());
        assert_eq!(h.len, 28);
        for bad in [
            "GET  / HTTP/1.1\r\n\r\n",
            "GET / HTTP/1.1 x\r\n\r\n",
            "GET / HTTP/1.1\r\nHost : a\r\n\r\n",
            "GET / HTTP/1.1\r\nHost: a\r\n folded\r\n\r\n",
            "GET / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
            "GET / HTTP/1.1\r\nContent-Length: -1\r\n\r\n",
            "GET / HTTP/1.1\r\nContent-Length: 99999999999999999999\r\n\r\n",
        ] {
            assert_eq!(parse_head(bad.as_bytes()).err(), Some(HeadError::Bad), "{bad:?}");
        }
        assert_eq!(
            parse_head(b"GET / HTTP/2.0\r\n\r\n").err(),
            Some(HeadError::Version)
        );
        let long = format!("GET /{} HTTP/1.1\r\n", "a".repeat(HEAD_MAX));
        assert_eq!(parse_head(long.as_bytes()).err(), Some(HeadError::TooLarge));
    }

    #[test]
    fn targets() {
        let raw = "GET http://h:1/users/7?q HTTP/1.1\r\n\r\n";
        let h = head(raw);
        assert_eq!(&raw.as_bytes()[h.path], b"/users/7");
        let raw = "OPTIONS * HTTP/1.1\r\n\r\n";
        assert_eq!(&raw.as_bytes()[head(raw).path], b"*");
    }

    #[test]
    fn response_bytes() {
        let mut out = Vec::new();
        Response {
            status: Status::MethodNotAllowed,
            content_type: "text/plain",
            allow: Some("POST"),
            connection: Connection::KeepAlive,
            body: b"x",
            head_only: false,
        }
        .write(&mut out);
        assert_eq!(
            out,
            b"HTTP/1.1 405 Method Not Allowed\r\nContent-Type: text/plain\r\nContent-Length: 1\r\n\
              Allow: POST\r\nConnection: keep-alive\r\n\r\nx"
        );
        assert_eq!(parse_u64(b"18446744073709551615"), Some(u64::MAX));
        assert_eq!(parse_u64(b"18446744073709551616"), None);
    }
}
