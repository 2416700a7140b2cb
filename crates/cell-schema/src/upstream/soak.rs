//! The soak file: `soak/<date>-<run-id>/results.json`.

use std::collections::BTreeMap;

use serde::Deserialize;

use super::{Import, ImportError, inconsistent, run_dir_name};
use crate::store::RunDirName;
use crate::{
    Clock, ImportMethod, ImportSource, ImportedDrift, ImportedSoakKind, ImportedSoakRun,
    ImportedSoakServer, PrintedVersion, RunInfo, RunnerImage, SCHEMA_VERSION, ServerName,
};

#[derive(Deserialize)]
#[expect(
    non_snake_case,
    reason = "the runner's environment variables, as the old file names them"
)]
struct OldRunner {
    ImageOS: Option<String>,
    ImageVersion: Option<String>,
    GITHUB_RUN_ID: Option<String>,
    GITHUB_SHA: Option<String>,
}

#[derive(Deserialize)]
struct OldConditions {
    server: ServerName,
    toolchain: BTreeMap<String, String>,
    oha: Option<String>,
    minutes: f64,
    rate: u32,
    connections: u32,
    keepalive: bool,
    sample_every_s: f64,
    server_cpus: Option<String>,
    load_cpus: Option<String>,
    nproc: Option<u32>,
    runner: Option<OldRunner>,
    date_utc: String,
}

#[derive(Deserialize)]
struct OldSoakResult {
    server: ServerName,
    duration_min: f64,
    samples: u32,
    error: Option<String>,
    window_min: Option<[f64; 2]>,
    rss_at: BTreeMap<u32, Option<f64>>,
    rss_end: Option<f64>,
    rss_peak: Option<f64>,
    rss_slope_kib_per_min: Option<f64>,
    rss_slope_r2: Option<f64>,
    cpu_s: Option<f64>,
    requests: u64,
    non_200: u64,
    errors: u64,
    rps: Option<f64>,
    p50_ms: Option<f64>,
    p99_ms: Option<f64>,
    cpu_ms_per_1k_req: Option<f64>,
    drift: String,
}

#[derive(Deserialize)]
pub(super) struct OldSoak {
    conditions: BTreeMap<ServerName, OldConditions>,
    results: BTreeMap<ServerName, OldSoakResult>,
}

fn drift(s: &str, server: &ServerName) -> Result<Option<ImportedDrift>, ImportError> {
    match s {
        "flat" => Ok(Some(ImportedDrift::Flat)),
        "drifted" => Ok(Some(ImportedDrift::Drifted)),
        "n/a" => Ok(None),
        other => Err(inconsistent(format!(
            "server {server}: drift `{}` is none of flat, drifted, n/a",
            crate::escape::one_line(other)
        ))),
    }
}

fn soak_server(c: &OldConditions, r: &OldSoakResult) -> Result<ImportedSoakServer, ImportError> {
    let runner_image = c.runner.as_ref().and_then(|r| {
        Some(RunnerImage {
            os: r.ImageOS.clone()?,
            version: r.ImageVersion.clone().unwrap_or_default(),
        })
    });
    Ok(ImportedSoakServer {
        started_at: c.date_utc.clone(),
        versions: c
            .toolchain
            .iter()
            .map(|(command, printed)| PrintedVersion {
                command: command.clone(),
                printed: printed.clone(),
            })
            .collect(),
        load_tool: c.oha.clone(),
        minutes: c.minutes,
        rate: c.rate,
        connections: c.connections,
        keepalive: c.keepalive,
        sample_every_s: c.sample_every_s,
        server_cpus: c.server_cpus.clone(),
        load_cpus: c.load_cpus.clone(),
        nproc: c.nproc,
        runner_image,
        duration_min: r.duration_min,
        samples: r.samples,
        error: r.error.clone(),
        window_min: r.window_min,
        rss_at_kib: r
            .rss_at
            .iter()
            .filter_map(|(m, v)| v.map(|v| (*m, v)))
            .collect(),
        rss_end_kib: r.rss_end,
        rss_peak_kib: r.rss_peak,
        rss_slope_kib_per_min: r.rss_slope_kib_per_min,
        rss_slope_r2: r.rss_slope_r2,
        cpu_s: r.cpu_s,
        requests: r.requests,
        non_200: r.non_200,
        errors: r.errors,
        rps: r.rps,
        p50_ms: r.p50_ms,
        p99_ms: r.p99_ms,
        cpu_ms_per_1k_req: r.cpu_ms_per_1k_req,
        drift: drift(&r.drift, &r.server)?,
    })
}

/// The one value every server's conditions agree on, or an error naming `what`.
fn agreed<'a>(
    values: impl Iterator<Item = Option<&'a str>>,
    what: &str,
) -> Result<Option<&'a str>, ImportError> {
    let mut seen: Option<Option<&str>> = None;
    for v in values {
        match seen {
            None => seen = Some(v),
            Some(s) if s == v => {}
            Some(_) => {
                return Err(inconsistent(format!(
                    "the servers name different {what}s: one soak file is one run"
                )));
            }
        }
    }
    Ok(seen.flatten())
}

pub(super) fn soak(old: &OldSoak, source: ImportSource) -> Result<Import, ImportError> {
    if !old.conditions.keys().eq(old.results.keys()) {
        return Err(inconsistent(
            "conditions and results name different servers".into(),
        ));
    }
    let mut servers = BTreeMap::new();
    for ((name, c), r) in old.conditions.iter().zip(old.results.values()) {
        if c.server != *name || r.server != *name {
            return Err(inconsistent(format!(
                "server {name} is filed under another server's name"
            )));
        }
        servers.insert(name.clone(), soak_server(c, r)?);
    }
    let runner = |f: fn(&OldRunner) -> Option<&String>| {
        old.conditions
            .values()
            .map(move |c| c.runner.as_ref().and_then(f).map(String::as_str))
    };
    let run_id = agreed(runner(|r| r.GITHUB_RUN_ID.as_ref()), "GITHUB_RUN_ID")?
        .ok_or_else(|| inconsistent("no GITHUB_RUN_ID: the file names no run".into()))?;
    let head_sha = agreed(runner(|r| r.GITHUB_SHA.as_ref()), "GITHUB_SHA")?
        .filter(|s| s.len() == 40 && s.bytes().all(|b| b.is_ascii_hexdigit()))
        .map(str::to_owned);
    // The run's date is its first server's: a soak of servers one after another may cross
    // midnight. Every server's start must be a UTC day, not only the first.
    let mut first: Option<RunDirName> = None;
    for (server, c) in &old.conditions {
        let field = format!("conditions.{server}.date_utc");
        let name = run_dir_name(&c.date_utc, &field, run_id, "GITHUB_RUN_ID")?;
        if first.as_ref().is_none_or(|f| name < *f) {
            first = Some(name);
        }
    }
    let name = first.ok_or_else(|| inconsistent("no server: the file holds no soak".into()))?;
    let method = ImportMethod {
        summary: "the old soak: one server at a time at a fixed request rate, its RSS sampled and fitted by least squares over the file's window; figures as the file wrote them, no samples, so nothing is refitted".into(),
        clock: Clock::Wall,
        timing_method: None,
        reps: None,
        dropped: None,
        pinned_cpus: None,
    };
    let record = ImportedSoakRun {
        schema_version: SCHEMA_VERSION,
        kind: ImportedSoakKind::ImportedSoak,
        run: RunInfo {
            id: name.id().to_owned(),
            date: name.date().to_owned(),
            source: "github".into(),
            head_sha,
            dirty: None,
            attempt: None,
            attempts: Vec::new(),
            partial: false,
        },
        source,
        method,
        servers,
    };
    Ok(Import::Soak {
        name,
        record: Box::new(record),
    })
}
