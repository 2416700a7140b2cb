//! The matrix of `[http]`: its workloads (the requests and what every server must answer),
//! its connection shapes and the part `[http.default]` names.

use std::collections::BTreeMap;

use cell_schema::{ServerName, ShapeName, WorkloadName};

use super::{
    Expect, ExpectBody, RawHttp, RawHttpSession, RawShape, RawWorkload, Server, SessionDef, Shape,
    Workload, http_count, non_negative, positive, resolve_expect, validate_tools,
};
use crate::error::FieldError;
use crate::{check_name, join};

/// The workload results written before workloads existed were: `GET /` answered as
/// `[http.expect]` says.
pub(super) fn legacy_workload(base: &Expect) -> Workload {
    Workload {
        name: WorkloadName::from(cell_schema::LEGACY_WORKLOAD),
        method: "GET".to_owned(),
        path: "/".to_owned(),
        headers: BTreeMap::new(),
        body: None,
        expect: base.clone(),
    }
}

/// `[[http.workloads]]`: names unique and safe, methods and paths a request line can carry.
pub(super) fn resolve_workloads(
    raw: Option<Vec<RawWorkload>>,
    base: &Expect,
) -> Result<BTreeMap<WorkloadName, Workload>, FieldError> {
    let Some(raw) = raw else {
        let w = legacy_workload(base);
        return Ok(BTreeMap::from([(w.name.clone(), w)]));
    };
    let mut out = BTreeMap::new();
    for (i, w) in raw.into_iter().enumerate() {
        let f = |x: &str| format!("http.workloads[{i}].{x}");
        check_name(&w.name).map_err(|e| FieldError::new(f("name"), e.to_string()))?;
        let method = w.method.unwrap_or_else(|| "GET".to_owned());
        if !METHODS.contains(&method.as_str()) {
            return Err(FieldError::new(
                f("method"),
                format!(
                    "`{method}`: write an HTTP method in capitals: {}",
                    METHODS.join(", ")
                ),
            ));
        }
        if !w.path.starts_with('/') || !w.path.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(FieldError::new(
                f("path"),
                format!(
                    "`{}`: write a path from `/` without spaces or control characters",
                    w.path
                ),
            ));
        }
        let headers = header_map(
            &f("headers"),
            w.headers.unwrap_or_default(),
            w.body.is_some(),
        )?;
        if w.expect.body.is_none() && w.expect.json.is_none() {
            return Err(FieldError::new(
                f("expect"),
                "says nothing of the body: write `body = \"...\"` (byte for byte) or `json = ...`",
            ));
        }
        // A workload's own answer: status 200 unless it says otherwise, only its headers.
        let base = Expect {
            status: 200,
            headers: BTreeMap::new(),
            body: ExpectBody::Exact(String::new()),
        };
        let expect = resolve_expect(&f("expect"), &base, Some(w.expect))?;
        let name = WorkloadName::from(w.name.as_str());
        let workload = Workload {
            name: name.clone(),
            method,
            path: w.path,
            headers,
            body: w.body,
            expect,
        };
        if out.insert(name, workload).is_some() {
            return Err(FieldError::new(
                f("name"),
                format!("`{}` is listed twice", w.name),
            ));
        }
    }
    if out.is_empty() {
        return Err(FieldError::new(
            "http.workloads",
            "empty: write at least one workload",
        ));
    }
    Ok(out)
}

/// Header names and values a request can carry, names lower-cased.
fn header_map(
    field: &str,
    raw: BTreeMap<String, String>,
    has_body: bool,
) -> Result<BTreeMap<String, String>, FieldError> {
    if let Some(p) = request_problem(raw.iter().map(|(k, v)| (k.as_str(), v.as_str())), has_body) {
        return Err(FieldError::new(field, p));
    }
    Ok(raw
        .into_iter()
        .map(|(k, v)| (k.to_ascii_lowercase(), v))
        .collect())
}

/// Headers a load generator writes itself (keep-alive is the shape's, the length the body's).
pub const TOOL_HEADERS: [&str; 4] = ["host", "content-length", "connection", "transfer-encoding"];

/// Methods the load generators can send.
pub const METHODS: [&str; 7] = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];

/// What every load generator requires of a request's headers and body, checked on the config
/// and again by the drivers: names are HTTP tokens, unique whatever their case, values
/// printable ASCII (a value goes on a command line, into a Lua string and onto the wire as
/// is), none of the tool's own headers, and a `Content-Type` with a body. `None`: fine.
pub fn request_problem<'a>(
    headers: impl Iterator<Item = (&'a str, &'a str)>,
    has_body: bool,
) -> Option<String> {
    let is_tchar = |b: u8| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b);
    let mut seen: Vec<String> = Vec::new();
    for (name, value) in headers {
        if name.is_empty() || !name.bytes().all(is_tchar) {
            return Some(format!("header name {name:?} is not an HTTP token"));
        }
        if !value
            .bytes()
            .all(|b| b == b'\t' || (b' '..=b'~').contains(&b))
        {
            return Some(format!(
                "header {name}: {value:?}: only printable ASCII, spaces and tabs"
            ));
        }
        let lower = name.to_ascii_lowercase();
        if TOOL_HEADERS.contains(&lower.as_str()) {
            return Some(format!(
                "header {name} is the load generator's own (keep-alive is the shape's)"
            ));
        }
        if seen.contains(&lower) {
            return Some(format!("header {name} is given twice"));
        }
        seen.push(lower);
    }
    (has_body && !seen.iter().any(|h| h == "content-type"))
        .then(|| "a body needs a Content-Type header".to_owned())
}

/// `[[http.shapes]]`, or the one shape `connections` and `keep_alive` of `[http]` describe.
pub(super) fn resolve_shapes(raw: &RawHttp, threads: u32) -> Result<Vec<Shape>, FieldError> {
    let Some(list) = &raw.shapes else {
        let keep_alive = raw.keep_alive.unwrap_or(true);
        return Ok(vec![Shape {
            name: ShapeName::from(cell_schema::legacy_shape_name(keep_alive)),
            connections: http_count("connections", raw.connections, 64)?,
            keep_alive,
            threads,
        }]);
    };
    for (key, set) in [
        ("connections", raw.connections.is_some()),
        ("keep_alive", raw.keep_alive.is_some()),
    ] {
        if set {
            return Err(FieldError::new(
                format!("http.{key}"),
                "with [[http.shapes]] each shape says this: move it into a shape",
            ));
        }
    }
    let mut out: Vec<Shape> = Vec::new();
    for (i, s) in list.iter().enumerate() {
        out.push(resolve_shape(i, s, threads, &out)?);
    }
    if out.is_empty() {
        return Err(FieldError::new(
            "http.shapes",
            "empty: write at least one shape",
        ));
    }
    Ok(out)
}

fn resolve_shape(
    i: usize,
    s: &RawShape,
    threads: u32,
    before: &[Shape],
) -> Result<Shape, FieldError> {
    let f = |x: &str| format!("http.shapes[{i}].{x}");
    check_name(&s.name).map_err(|e| FieldError::new(f("name"), e.to_string()))?;
    if before.iter().any(|b| b.name.as_str() == s.name) {
        return Err(FieldError::new(
            f("name"),
            format!("`{}` is listed twice", s.name),
        ));
    }
    if s.connections == 0 {
        return Err(FieldError::new(
            f("connections"),
            "0: write a whole number above 0",
        ));
    }
    let threads = match s.threads {
        Some(0) => {
            return Err(FieldError::new(
                f("threads"),
                "0: write a whole number above 0",
            ));
        }
        Some(t) => t,
        None => threads,
    };
    Ok(Shape {
        name: ShapeName::from(s.name.as_str()),
        connections: s.connections,
        keep_alive: s.keep_alive,
        threads,
    })
}

/// `[http.default]`: names that exist, counts above 0.
pub(super) fn resolve_session(
    raw: RawHttpSession,
    workloads: &BTreeMap<WorkloadName, Workload>,
    shapes: &[Shape],
    servers: &BTreeMap<ServerName, Server>,
) -> Result<SessionDef, FieldError> {
    let servers = raw
        .servers
        .map(|l| {
            names_in(
                "http.default.servers",
                &l,
                &servers.keys().map(ServerName::as_str).collect::<Vec<_>>(),
            )
            .map(|v| v.into_iter().map(ServerName::from).collect())
        })
        .transpose()?;
    let shapes = raw
        .shapes
        .map(|l| {
            names_in(
                "http.default.shapes",
                &l,
                &shapes.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(),
            )
            .map(|v| v.into_iter().map(ShapeName::from).collect())
        })
        .transpose()?;
    let workloads = raw
        .workloads
        .map(|l| {
            names_in(
                "http.default.workloads",
                &l,
                &workloads
                    .keys()
                    .map(WorkloadName::as_str)
                    .collect::<Vec<_>>(),
            )
            .map(|v| v.into_iter().map(WorkloadName::from).collect())
        })
        .transpose()?;
    if let Some(t) = &raw.tools {
        validate_tools("http.default.tools", t)?;
    }
    let count = |f: &str, v: Option<u32>| match v {
        Some(0) => Err(FieldError::new(
            format!("http.default.{f}"),
            "0: write a whole number above 0",
        )),
        v => Ok(v),
    };
    Ok(SessionDef {
        servers,
        tools: raw.tools,
        shapes,
        workloads,
        runs: count("runs", raw.runs)?,
        duration_s: raw
            .duration
            .map(|v| positive("http.default.duration", v))
            .transpose()?,
        warmup_s: raw
            .warmup
            .map(|v| non_negative("http.default.warmup", v))
            .transpose()?,
    })
}

/// Each of `list` is one of `known` (listed once); the error names the known ones.
pub fn names_in<'a>(
    field: &str,
    list: &'a [String],
    known: &[&str],
) -> Result<Vec<&'a str>, FieldError> {
    let mut out: Vec<&str> = Vec::new();
    for (i, n) in list.iter().enumerate() {
        if !known.contains(&n.as_str()) {
            return Err(FieldError::new(
                format!("{field}[{i}]"),
                format!("`{n}` is not one of {}", join(known)),
            ));
        }
        if out.contains(&n.as_str()) {
            return Err(FieldError::new(
                format!("{field}[{i}]"),
                format!("`{n}` is listed twice"),
            ));
        }
        out.push(n);
    }
    if out.is_empty() {
        return Err(FieldError::new(field, "empty: name at least one"));
    }
    Ok(out)
}
