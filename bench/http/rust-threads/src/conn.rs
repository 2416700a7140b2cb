//! One connection, served by its own thread with blocking reads and writes.
//!
//! Input accumulates in `buf[start..end]`; each complete request at `start`
//! is answered into `out` and consumed, so pipelined requests that arrive in
//! one read are all answered, and a request split across reads waits for
//! the rest. `out` is written only before the thread blocks on a read (or
//! once it holds `FLUSH_AT` bytes), so a pipelined batch costs one write.
//!
//! Bodies are framed by `Content-Length`. A route that binds one (`POST
//! /users`, `POST /minimal/users/{id}`) reads it whole (at most 64 KiB, else
//! 413 and close); every other request has its body skipped as it arrives,
//! without buffering it, so the connection stays in sync. A request with
//! `Transfer-Encoding` is answered 501 and the connection closed, as the C
//! server does.

use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::time::{Duration, Instant};

use crate::app::{self, MAX_BODY, Route};
use crate::http::{self, CONTINUE, Connection, Head, HeadError, Response, Status};

/// The input buffer's usual size: a whole head (`http::HEAD_MAX`) plus room
/// for a read. It grows to hold a head and a body, and shrinks back after.
const BUF_SIZE: usize = 16 * 1024;
/// Move unread input to the front when less than this is free behind it.
const MIN_READ: usize = 4 * 1024;
/// Write `out` once it holds this much, even with more input to parse.
const FLUSH_AT: usize = 64 * 1024;
/// After a response that closes the connection, input is drained (and
/// thrown away) for at most this long or this many bytes, so that a client
/// still sending (a refused body, pipelined requests) gets the response
/// instead of a reset.
const LINGER_TIME: Duration = Duration::from_millis(500);
const LINGER_BYTES: usize = 1024 * 1024;

/// Serves `stream` until either side closes it. I/O errors just end it.
pub fn serve(stream: TcpStream) {
    let mut conn = Conn {
        stream,
        buf: vec![0; BUF_SIZE],
        start: 0,
        end: 0,
        out: Vec::with_capacity(1024),
        scratch: Vec::with_capacity(256),
    };
    if let Ok(End::Closing) = conn.run() {
        conn.close();
    }
}

struct Conn {
    stream: TcpStream,
    buf: Vec<u8>,
    start: usize,
    end: usize,
    /// Responses not yet written.
    out: Vec<u8>,
    /// JSON bodies are built here, then copied behind their head.
    scratch: Vec<u8>,
}

/// How `run` ended without an I/O error.
enum End {
    /// The peer closed its side.
    Eof,
    /// A response said `Connection: close`; it is still in `out`.
    Closing,
}

/// What a request gets, decided from its head alone.
enum Plan {
    /// A fixed `text/plain` answer (`Allow` for a 405).
    Text(Status, &'static [u8], Option<&'static str>),
    /// A route that reads no body.
    Serve(Route),
    /// A route that binds the JSON body, of this many bytes.
    Bind(Route, usize),
}

impl Conn {
    fn run(&mut self) -> io::Result<End> {
        loop {
            match http::parse_head(&self.buf[self.start..self.end]) {
                Ok(Some(head)) => {
                    if !self.request(&head)? {
                        return Ok(End::Closing);
                    }
                    if self.out.len() >= FLUSH_AT {
                        self.flush()?;
                    }
                }
                Ok(None) => {
                    if self.fill()? == 0 {
                        return Ok(End::Eof);
                    }
                }
                Err(e) => {
                    let (status, body) = match e {
                        HeadError::Bad => (Status::BadRequest, app::BAD_REQUEST),
                        HeadError::TooLarge => (Status::HeaderFieldsTooLarge, app::HEAD_TOO_LARGE),
                        HeadError::Version => (Status::VersionNotSupported, app::BAD_VERSION),
                    };
                    self.text(status, body, None, Connection::Close, false);
                    return Ok(End::Closing);
                }
            }
        }
    }

    /// Answers the request whose head is at `start` and consumes it, body
    /// included. Returns whether the connection stays open.
    fn request(&mut self, head: &Head) -> io::Result<bool> {
        let at = |r: &std::ops::Range<usize>| self.start + r.start..self.start + r.end;
        let method = &self.buf[at(&head.method)];
        let head_only = method == b"HEAD";
        let keep = head.keep_alive();
        let connection = if keep { head.kept() } else { Connection::Close };
        let length = head.content_length.unwrap_or(0);

        if head.transfer_encoding {
            let body = app::NOT_IMPLEMENTED;
            self.text(Status::NotImplemented, body, None, Connection::Close, head_only);
            return Ok(false);
        }
        let plan = match Route::of(&self.buf[at(&head.path)]) {
            None => Plan::Text(Status::NotFound, app::NOT_FOUND, None),
            Some(route) if method != route.method().as_bytes() => Plan::Text(
                Status::MethodNotAllowed,
                app::NOT_ALLOWED,
                Some(route.method()),
            ),
            Some(route) if route.reads_body() => match usize::try_from(length) {
                Ok(n) if length <= MAX_BODY => {
                    if head.json {
                        Plan::Bind(route, n)
                    } else {
                        Plan::Text(Status::UnsupportedMediaType, app::UNSUPPORTED, None)
                    }
                }
                _ => {
                    // Not read: the connection cannot carry another request.
                    let body = app::TOO_LARGE;
                    self.text(Status::ContentTooLarge, body, None, Connection::Close, head_only);
                    return Ok(false);
                }
            },
            Some(route) => Plan::Serve(route),
        };

        // Body bytes already buffered, and still to come.
        let here = self.end - self.start - head.len;
        let used = usize::try_from(length).map_or(here, |n| n.min(here));
        let missing = length - used as u64;
        let continue_first = missing > 0 && head.expect_continue && head.minor >= 1;
        match plan {
            Plan::Bind(route, length) => {
                let total = head.len + length;
                if continue_first {
                    self.out.extend_from_slice(CONTINUE);
                }
                self.read_to(total)?;
                let body = &self.buf[self.start + head.len..self.start + total];
                let (status, content_type, body) = route.serve(body, &mut self.scratch);
                Response {
                    status,
                    content_type,
                    allow: None,
                    connection,
                    body,
                    head_only,
                }
                .write(&mut self.out);
                self.start += total;
            }
            Plan::Text(..) | Plan::Serve(_) => {
                // A closing connection need not read the body at all.
                let skip = keep && missing > 0;
                if skip && continue_first {
                    self.out.extend_from_slice(CONTINUE);
                }
                match plan {
                    Plan::Text(status, body, allow) => {
                        self.text(status, body, allow, connection, head_only);
                    }
                    Plan::Serve(route) => {
                        let (status, content_type, body) = route.serve(&[], &mut self.scratch);
                        Response {
                            status,
                            content_type,
                            allow: None,
                            connection,
                            body,
                            head_only,
                        }
                        .write(&mut self.out);
                    }
                    Plan::Bind(..) => unreachable!("handled above"),
                }
                self.start += head.len + used;
                if skip {
                    self.skip(missing)?;
                }
            }
        }
        Ok(keep)
    }

    /// Appends a `text/plain` response.
    fn text(
        &mut self,
        status: Status,
        body: &'static [u8],
        allow: Option<&'static str>,
        connection: Connection,
        head_only: bool,
    ) {
        Response {
            status,
            content_type: app::TEXT,
            allow,
            connection,
            body,
            head_only,
        }
        .write(&mut self.out);
    }

    /// Writes out every pending response.
    fn flush(&mut self) -> io::Result<()> {
        if !self.out.is_empty() {
            self.stream.write_all(&self.out)?;
            self.out.clear();
        }
        Ok(())
    }

    /// Flushes, then blocks for more input behind `end`. Returns the bytes
    /// read: 0 at end of stream.
    fn fill(&mut self) -> io::Result<usize> {
        self.flush()?;
        if self.start == self.end {
            self.start = 0;
            self.end = 0;
            if self.buf.len() > BUF_SIZE {
                self.buf.truncate(BUF_SIZE);
                self.buf.shrink_to_fit();
            }
        } else if self.start > 0 && self.buf.len() - self.end < MIN_READ {
            self.compact();
        }
        if self.end == self.buf.len() {
            // Not reached: heads are bounded by HEAD_MAX and bodies are read
            // by `read_to`, which sizes the buffer first. Grow rather than
            // read nothing.
            self.buf.resize(self.buf.len() * 2, 0);
        }
        loop {
            match self.stream.read(&mut self.buf[self.end..]) {
                Ok(n) => {
                    self.end += n;
                    return Ok(n);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    fn compact(&mut self) {
        self.buf.copy_within(self.start..self.end, 0);
        self.end -= self.start;
        self.start = 0;
    }

    /// Reads until `buf[start..]` holds `total` bytes.
    fn read_to(&mut self, total: usize) -> io::Result<()> {
        if self.end - self.start >= total {
            return Ok(());
        }
        if self.buf.len() - self.start < total {
            self.compact();
            if self.buf.len() < total {
                self.buf.resize(total, 0);
            }
        }
        while self.end - self.start < total {
            if self.fill()? == 0 {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
        }
        Ok(())
    }

    /// Reads and drops the `n` bytes of a body not buffered yet (all input
    /// buffered so far has been consumed).
    fn skip(&mut self, mut n: u64) -> io::Result<()> {
        while n > 0 {
            let got = self.fill()?;
            if got == 0 {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
            let take = usize::try_from(n).map_or(got, |n| n.min(got));
            self.start += take;
            n -= take as u64;
        }
        Ok(())
    }

    /// Sends what is pending, then closes without a reset: shut the write
    /// side (the client sees the end of the response), then read and drop
    /// what the client still sends until it closes too, for a bounded time.
    fn close(&mut self) {
        if self.flush().is_err() || self.stream.shutdown(Shutdown::Write).is_err() {
            return;
        }
        let deadline = Instant::now() + LINGER_TIME;
        let mut drained = 0;
        while drained <= LINGER_BYTES {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() || self.stream.set_read_timeout(Some(left)).is_err() {
                return;
            }
            match self.stream.read(&mut self.buf) {
                Ok(0) | Err(_) => return,
                Ok(n) => drained += n,
            }
        }
    }
}
