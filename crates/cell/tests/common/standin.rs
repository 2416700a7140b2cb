//! A loopback HTTP/1.1 server standing in for the GitHub API (and, on a second port, for the
//! blob store an artifact download redirects to). Routes are a closure; every request is
//! logged with its headers so tests can assert what was and was not sent.
#![allow(dead_code, reason = "each test binary uses a different part")]

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

/// A request as the server saw it.
#[derive(Clone, Debug)]
pub struct Req {
    pub path: String,
    pub headers: BTreeMap<String, String>,
}

/// A response to send.
pub struct Resp {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Resp {
    pub fn json(status: u16, v: &serde_json::Value) -> Self {
        Self {
            status,
            headers: vec![("content-type".into(), "application/json".into())],
            body: serde_json::to_vec(v).unwrap(),
        }
    }
    pub fn bytes(body: Vec<u8>) -> Self {
        Self {
            status: 200,
            headers: vec![("content-type".into(), "application/zip".into())],
            body,
        }
    }
    pub fn status(status: u16) -> Self {
        Self {
            status,
            headers: vec![],
            body: Vec::new(),
        }
    }
    pub fn header(mut self, k: &str, v: &str) -> Self {
        self.headers.push((k.into(), v.into()));
        self
    }
}

pub type Handler = dyn Fn(&Req) -> Resp + Send + Sync;

/// A running server; it stops when the test process ends.
pub struct Server {
    pub port: u16,
    pub log: Arc<Mutex<Vec<Req>>>,
}

impl Server {
    pub fn start(handler: Arc<Handler>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let log = Arc::new(Mutex::new(Vec::new()));
        let log2 = Arc::clone(&log);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let handler = Arc::clone(&handler);
                let log = Arc::clone(&log2);
                std::thread::spawn(move || {
                    let mut reader = BufReader::new(stream.try_clone().unwrap());
                    let mut line = String::new();
                    if reader.read_line(&mut line).is_err() {
                        return;
                    }
                    let path = line.split(' ').nth(1).unwrap_or("/").to_owned();
                    let mut headers = BTreeMap::new();
                    let mut len = 0usize;
                    loop {
                        let mut h = String::new();
                        if reader.read_line(&mut h).is_err() || h.trim().is_empty() {
                            break;
                        }
                        if let Some((k, v)) = h.split_once(':') {
                            let k = k.trim().to_ascii_lowercase();
                            if k == "content-length" {
                                len = v.trim().parse().unwrap_or(0);
                            }
                            headers.insert(k, v.trim().to_owned());
                        }
                    }
                    let mut body = vec![0; len];
                    let _ = reader.read_exact(&mut body);
                    let req = Req { path, headers };
                    log.lock().unwrap().push(req.clone());
                    let resp = handler(&req);
                    let mut head = format!(
                        "HTTP/1.1 {} X\r\ncontent-length: {}\r\nconnection: close\r\n",
                        resp.status,
                        resp.body.len()
                    );
                    for (k, v) in &resp.headers {
                        let _ = write!(head, "{k}: {v}\r\n");
                    }
                    head.push_str("\r\n");
                    let _ = stream.write_all(head.as_bytes());
                    let _ = stream.write_all(&resp.body);
                });
            }
        });
        Self { port, log }
    }

    pub fn requests(&self) -> Vec<Req> {
        self.log.lock().unwrap().clone()
    }
}
