//! The failures that always trip the gate: wrong answers, checksums, the release under test,
//! the tooth, missing rows.

use std::collections::BTreeMap;

use cell_schema::store::HistoryRun;
use cell_schema::{CellResult, RowResult};

use crate::GateConfig;
use crate::rules::ToothMissed;

/// Wrong answers, in every row a job timed (reference and control included).
pub(super) fn answer_failures(cell: &CellResult) -> Vec<String> {
    let mut every_row: Vec<(String, &RowResult)> = cell
        .rows
        .iter()
        .map(|(n, r)| (format!("{n} (job {})", r.job), &r.row))
        .collect();
    for (tc, j) in &cell.jobs {
        every_row.push((
            format!("{} (reference, job {tc})", j.protocol.reference),
            &j.reference,
        ));
        if let Some(c) = &j.control {
            every_row.push((format!("{} (job {tc})", j.protocol.control), c));
        }
    }
    let mut out = Vec::new();
    for (name, row) in &every_row {
        for (p, pr) in &row.phases {
            if !pr.answer_ok {
                out.push(format!(
                    "wrong answer: row {name} on phase {p}: {}",
                    pr.wrong.clone().unwrap_or_default()
                ));
            }
        }
    }
    out
}

/// A job that ran with other digests than the repository pins, or an artifact whose zip did
/// not match its digest.
pub(super) fn checksum_failures(
    cell: &CellResult,
    config: &GateConfig,
    run_missing: &[String],
) -> Vec<String> {
    let mut out = Vec::new();
    for (tc, j) in &cell.jobs {
        for (k, v) in &j.pins {
            if let Some(pinned) = config.digests.get(k)
                && !pinned.eq_ignore_ascii_case(v)
            {
                out.push(format!(
                    "checksum: job {tc} ran with {k}={v}, but versions.env pins {pinned}"
                ));
            }
        }
    }
    for m in run_missing.iter().filter(|m| m.contains("SHA-256")) {
        out.push(format!("checksum: {m}"));
    }
    out
}

/// Every digest the run's jobs verified for each asset of the release under test, with the
/// jobs (`<toolchain>@<cell>`) that verified it.
pub(super) fn subject_digests(run: &HistoryRun) -> BTreeMap<String, BTreeMap<String, Vec<String>>> {
    let mut out: BTreeMap<String, BTreeMap<String, Vec<String>>> = BTreeMap::new();
    for (id, cell) in &run.cells {
        for (job, s) in subject_records(cell) {
            out.entry(s.asset.clone())
                .or_default()
                .entry(s.sha256.to_string())
                .or_default()
                .push(format!("{job}@{id}"));
        }
    }
    out
}

/// Every record of the release under test in a cell: each workload job's, and each http
/// server's built by it (`http-<server>`).
pub(super) fn subject_records(cell: &CellResult) -> Vec<(String, &cell_schema::Subject)> {
    let jobs = cell
        .jobs
        .iter()
        .filter_map(|(tc, j)| Some((tc.to_string(), j.subject.as_ref()?)));
    let servers = cell
        .http
        .values()
        .filter_map(|s| Some((s.job.clone(), s.result.release.as_ref()?)));
    jobs.chain(servers).collect()
}

/// The release under test must be the pinned one in every job, and the same bytes in every
/// job of the run that fetched the same asset; a job that recorded none when one is declared
/// did not verify it.
pub(super) fn subject_failures(
    cell: &CellResult,
    digests: &BTreeMap<String, BTreeMap<String, Vec<String>>>,
    config: &GateConfig,
) -> Vec<String> {
    let Some((name, _)) = &config.subject else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (tc, j) in &cell.jobs {
        if j.subject.is_none() {
            out.push(format!(
                "subject: job {tc} recorded no release under test, though {name} is declared one"
            ));
        }
    }
    for (server, s) in &cell.http {
        out.extend(server_release_failures(server, s, name, config));
    }
    for (tc, s) in subject_records(cell) {
        if s.tools.is_empty() {
            out.push(format!(
                "subject: job {tc} verified {} but found none of {name}'s tools in it",
                s.asset
            ));
        }
        if let Some(pin) = config.subject_pin(&cell.cell.os, &cell.cell.arch)
            && *pin != s.sha256
        {
            out.push(format!(
                "subject: job {tc} verified {} as {}, but versions.env pins {pin}",
                s.asset, s.sha256
            ));
        }
        if let Some(seen) = digests.get(&s.asset).filter(|d| d.len() > 1) {
            let all: Vec<String> = seen
                .iter()
                .map(|(d, jobs)| format!("{d} ({})", jobs.join(", ")))
                .collect();
            out.push(format!(
                "subject: job {tc}'s {} differs between jobs of this run: {}",
                s.asset,
                all.join("; ")
            ));
        }
    }
    out
}

/// A server the config builds with the release under test must record which bytes built it
/// (unless it failed before a build); a server it does not build must record none; a record
/// must name the release's toolchain.
fn server_release_failures(
    server: &cell_schema::ServerName,
    s: &cell_schema::CellHttpServer,
    subject: &cell_schema::ToolchainName,
    config: &GateConfig,
) -> Vec<String> {
    let by_release = config.http_servers.get(server).map(|t| t.by_release);
    let mut out = Vec::new();
    match (&s.result.release, by_release) {
        (None, Some(true)) if s.result.error.is_none() => out.push(format!(
            "subject: job {} built server {server} with {subject} but recorded no release under test",
            s.job
        )),
        (Some(r), Some(false)) => out.push(format!(
            "subject: job {} records {} as the release that built server {server}, but its config does not build it with {subject}",
            s.job, r.asset
        )),
        _ => {}
    }
    if let Some(r) = &s.result.release
        && r.toolchain.as_ref() != Some(subject)
    {
        out.push(format!(
            "subject: job {} recorded release {} of toolchain {}, but {subject} is the one declared",
            s.job,
            r.asset,
            r.toolchain.as_ref().map_or("none".to_owned(), ToString::to_string)
        ));
    }
    out
}

/// The tooth, judged by the repository's floor, in every job.
pub(super) fn tooth_failures(cell: &CellResult, config: &GateConfig) -> Vec<String> {
    let (slow, fast, phase) = &config.tooth;
    let floor = config.floor(&cell.cell.arch);
    cell.jobs
        .iter()
        .filter_map(|(tc, j)| {
            let ratio = j.tooth.as_ref().and_then(|t| t.ratio.as_ref());
            ToothMissed::check((slow, fast, phase.as_str()), ratio, floor, &cell.cell.arch)
                .map(|m| m.gate_failure(tc.as_str()))
        })
        .collect()
}

/// Rows the configuration expects from every job that ran.
pub(super) fn expected_row_failures(cell: &CellResult, config: &GateConfig) -> Vec<String> {
    let (slow, fast, _) = &config.tooth;
    let mut out = Vec::new();
    for tc in cell.jobs.keys() {
        for row in config.rows.get(tc).into_iter().flatten() {
            if cell.rows.contains_key(row) {
                continue;
            }
            let why = cell
                .skipped
                .iter()
                .find(|s| &s.row == row)
                .map_or(String::new(), |s| format!(": {}", s.message));
            let tooth = if row == slow || row == fast {
                format!(
                    " (it is the tooth's {} row: tooth {slow}/{fast} cannot be read)",
                    if row == slow { "slow" } else { "fast" }
                )
            } else {
                String::new()
            };
            out.push(format!(
                "expected row {row} of job {tc} is missing{tooth}{why}"
            ));
        }
    }
    out
}
