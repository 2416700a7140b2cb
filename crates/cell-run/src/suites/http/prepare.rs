//! Before any load: which servers the session can measure at all, each server's toolchain
//! found (a release under test installed and verified first), its build, and its answer to
//! every workload of the session checked.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use cell_model::{Cell, Expect, HttpDef, Plan, Server, Workload};
use cell_schema::{HttpServerResult, HttpWorkloadResult, Subject};

use super::super::error::NotServing;
use super::super::server::Cpus;
use super::super::session::{Prepared, SuiteError, build_server, probe_server};
use super::Session;
use crate::cache::Cache;
use crate::tools::{self, Probed};
use cell_model::built_by_release;

/// Splits the chosen servers into those with something to measure in this session and those
/// left out of it (they serve none of its workloads, or none of its shapes suits them), each
/// said so: a left-out server is listed, not failed. A session with nothing at all to
/// measure is a usage error.
pub(super) fn serving<'a>(
    d: &HttpDef,
    chosen: Vec<&'a Server>,
    on: &mut dyn FnMut(String),
) -> Result<(Vec<&'a Server>, Vec<&'a Server>), SuiteError> {
    let (keep, out): (Vec<&Server>, Vec<&Server>) = chosen.into_iter().partition(|s| {
        !served(d, s).is_empty() && d.shapes.iter().any(|x| s.left_out_of(x).is_none())
    });
    if keep.is_empty() {
        let why: Vec<String> = out
            .iter()
            .map(|s| format!("{}: {}", s.name, nothing_measured(d, s)))
            .collect();
        return Err(SuiteError::Usage(format!(
            "nothing to measure in this session: {}",
            why.join("; ")
        )));
    }
    for s in &out {
        on(format!(
            "[http {}] left out: {}",
            s.name,
            nothing_measured(d, s)
        ));
    }
    Ok((keep, out))
}

/// Why a left-out server has nothing to measure in the session.
fn nothing_measured(d: &HttpDef, s: &Server) -> String {
    if served(d, s).is_empty() {
        let names: Vec<String> = d.workloads.keys().map(ToString::to_string).collect();
        return format!(
            "it serves none of this session's workloads ({})",
            names.join(", ")
        );
    }
    let why: Vec<String> = d
        .shapes
        .iter()
        .filter_map(|x| Some(format!("shape {}: {}", x.name, s.left_out_of(x)?)))
        .collect();
    why.join("; ")
}

/// A server's result before anything ran: what it is, what of the session it does not
/// serve, which shapes it is not measured in.
pub(super) fn server_result(d: &HttpDef, s: &Server) -> HttpServerResult {
    HttpServerResult {
        toolchain: s.toolchain.clone(),
        build: None,
        check: None,
        tools: BTreeMap::new(),
        workloads: BTreeMap::new(),
        error: None,
        model: s.model,
        not_served: d
            .workloads
            .keys()
            .filter(|w| !s.workloads.contains_key(*w))
            .cloned()
            .collect(),
        shapes_left_out: d
            .shapes
            .iter()
            .filter_map(|x| Some((x.name.clone(), s.left_out_of(x)?)))
            .collect(),
        release: None,
    }
}

/// Where and for which platform a release under test is installed (no cache: no server of
/// the session is built by it).
pub(super) struct Install<'a> {
    pub(super) cell: &'a Cell,
    pub(super) cache: Option<&'a Cache>,
}

/// Builds and checks every server first: a wrong answer fails before any load.
pub(super) fn prepare(
    plan: &Plan,
    def: &HttpDef,
    (chosen, install): (&[&Server], &Install<'_>),
    work: &Path,
    cpus: Cpus,
    on: &mut dyn FnMut(String),
) -> Result<Session, SuiteError> {
    let mut session = Session {
        results: BTreeMap::new(),
        ready: BTreeMap::new(),
        build_s: BTreeMap::new(),
        versions: BTreeMap::new(),
    };
    for s in chosen {
        let mut result = server_result(def, s);
        let probed = match probe(plan, s, install, on) {
            Ok((probed, release)) => {
                result.release = release;
                probed
            }
            Err(Probe::Suite(e)) => return Err(e),
            Err(Probe::Integrity(m)) => {
                on(format!("[http {}] FAILED: {m}", s.name));
                result.error = Some(m);
                session.results.insert(s.name.clone(), result);
                continue;
            }
        };
        session
            .versions
            .insert(s.name.clone(), probed.versions.clone());
        on(format!("[http {}] building", s.name));
        let build_t = Instant::now();
        let built = build_server(plan, s, probed, &work.join(s.name.as_str()));
        session
            .build_s
            .insert(s.name.clone(), build_t.elapsed().as_secs_f64());
        match built {
            Err(e) => result.error = Some(e.to_string()),
            Ok(p) => {
                result.build = Some(p.build.clone());
                check_server(def, &p, cpus, &mut result, on);
                if result.error.is_none() {
                    session.ready.insert(s.name.clone(), p);
                }
            }
        }
        session.results.insert(s.name.clone(), result);
    }
    Ok(session)
}

/// Why a server's toolchain could not be had.
enum Probe {
    /// Missing, or the release could not be fetched: the session cannot run (exit 2).
    Suite(SuiteError),
    /// The release's bytes are not the pinned ones: this server fails (exit 1).
    Integrity(String),
}

/// A server's toolchain: the release under test installed and verified (the record of how),
/// or else its tools on PATH.
fn probe(
    plan: &Plan,
    s: &Server,
    install: &Install<'_>,
    on: &mut dyn FnMut(String),
) -> Result<(Probed, Option<Subject>), Probe> {
    if !built_by_release(plan, s) {
        return Ok((probe_server(plan, s).map_err(Probe::Suite)?, None));
    }
    let tc = &plan.toolchains[&s.toolchain];
    let Some(cache) = install.cache else {
        return Err(Probe::Suite(SuiteError::Usage(format!(
            "server `{}` is built by the release under test {}, but no cache was given to install it in",
            s.name, tc.name
        ))));
    };
    on(format!(
        "[http {}] installing the release under test {}",
        s.name, tc.name
    ));
    let cell = install.cell;
    let installed =
        crate::install::install(plan, tc, &cell.os, &cell.arch, cache).map_err(|e| {
            let m = format!("the release under test {}: {e}", tc.name);
            if e.is_integrity() {
                Probe::Integrity(m)
            } else {
                Probe::Suite(SuiteError::Missing(m))
            }
        })?;
    if let Some(why) = &installed.replaced {
        on(format!(
            "[http {}] the cached {} was changed ({why}): installed again",
            s.name, tc.name
        ));
    }
    let probed = tools::probe_in(tc, Some(&installed.bin)).map_err(|m| {
        Probe::Suite(SuiteError::Missing(format!(
            "server `{}`: the release under test {} holds no {m}",
            s.name, tc.name
        )))
    })?;
    let record = crate::install::subject_record(tc, &installed, &probed.versions);
    Ok((probed, Some(record)))
}

/// A fresh start and every workload's check. A wrong answer fails that workload (its
/// others are still measured); a server that does not start, dies or answers no workload
/// fails as a whole.
fn check_server(
    d: &HttpDef,
    p: &Prepared,
    cpus: Cpus,
    result: &mut HttpServerResult,
    on: &mut dyn FnMut(String),
) {
    let fail = |result: &mut HttpServerResult, m: String, on: &mut dyn FnMut(String)| {
        on(format!(
            "[http {}] FAILED before any load: {m}",
            p.server.name
        ));
        result.check = Some(m.clone());
        result.error = Some(m);
    };
    // `serving` left out every server that serves none of the session's workloads.
    let workloads = served(d, &p.server);
    let mut running = match p.start(cpus.server, Duration::from_secs_f64(d.startup_timeout_s)) {
        Ok((r, _)) => r,
        Err(e) => return fail(result, NotServing::from(e).to_string(), on),
    };
    for (w, e) in &workloads {
        let checked = super::super::check::verify(
            p.server.port,
            w,
            e,
            p.server.keep_alive,
            Duration::from_secs(5),
        );
        let (check, error) = match checked {
            Ok(()) => ("ok".to_owned(), None),
            Err(m) => {
                let m = format!("{}: {m}", w.name);
                on(format!("[http {}] {m}: not measured", p.server.name));
                (m.clone(), Some(m))
            }
        };
        let wr = HttpWorkloadResult {
            check,
            error,
            shapes: BTreeMap::new(),
        };
        result.workloads.insert(w.name.clone(), wr);
    }
    let alive = running.alive();
    running.stop(Duration::from_secs_f64(d.stop_grace_s));
    if let Err(e) = alive {
        return fail(result, NotServing::from(e).to_string(), on);
    }
    let wrong: Vec<&str> = result
        .workloads
        .values()
        .filter_map(|w| w.error.as_deref())
        .collect();
    if wrong.len() == result.workloads.len() {
        let m = wrong.join("; ");
        return fail(result, m, on);
    }
    let mut check = if wrong.is_empty() {
        "ok".to_owned()
    } else {
        format!("ok but {}", wrong.join("; "))
    };
    if !p.server.keep_alive {
        // Its keep-alive shapes measure reconnects: the tables must not read as keep-alive.
        check.push_str("; it closes every connection after one response (keep_alive = false)");
    }
    result.check = Some(check);
}

/// The workloads of the session a server serves, with what it must answer to each.
pub(super) fn served<'a>(d: &'a HttpDef, s: &'a Server) -> Vec<(&'a Workload, &'a Expect)> {
    s.workloads
        .iter()
        .filter_map(|(name, e)| Some((d.workloads.get(name)?, e)))
        .collect()
}
