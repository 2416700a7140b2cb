//! A suite job's `RESULTS.md` (header, the suite's section, footer) and the terminal text of
//! `cell run --suite http|soak`, and the one-line summaries of a merge. The header, footer
//! and text are written as they always were ([`Span::Verbatim`](crate::doc::Span::Verbatim)).

use std::collections::BTreeMap;

use cell_schema::escape::one_line;
use cell_schema::{
    CellHttpServer, CellInfo, CellSoakServer, HttpJobResult, Machine, ServerName, SoakJobResult,
    SuiteCost, ToolName, ToolVersion, Verdict,
};

use super::sections::{http_section, soak_section};
use super::{combos, load_errors};
use crate::doc::{
    self, Align, Block, Span, Table, verbatim, verbatim_code, verbatim_heading, verbatim_para,
};
use crate::figures::{drift_name, dur, mib_kib, signed, soak_shape, status_name, version_line};

/// `# cell run: …`, the verdict and its reasons, the machine.
fn job_header(job: &str, cell: &CellInfo, machine: &Machine, verdict: &Verdict) -> Vec<Block> {
    vec![
        Block::heading(
            1,
            vec![
                verbatim("cell run: "),
                verbatim_code(job),
                verbatim(" on "),
                verbatim_code(cell.id.to_string()),
            ],
        ),
        Block::Blank,
        Block::Para(vec![
            verbatim("Verdict: "),
            Span::Strong(status_name(verdict.status).into()),
        ]),
        Block::list(verdict.reasons.iter().map(|r| vec![verbatim(one_line(r))])),
        Block::Blank,
        verbatim_para(format!(
            "Machine: {} ({} logical CPUs), {}, {}.",
            machine.cpu_model, machine.nproc, machine.os_release, machine.kernel
        )),
        Block::Blank,
    ]
}

/// The tools' versions and the cost.
fn job_footer(versions: &BTreeMap<ToolName, ToolVersion>, cost: &SuiteCost) -> Vec<Block> {
    let mut d = Vec::new();
    if !versions.is_empty() {
        d.extend([
            verbatim_heading(2, "Versions"),
            Block::Blank,
            Block::list(versions.iter().map(|(tool, v)| {
                vec![
                    verbatim_code(tool.to_string()),
                    verbatim(format!(" ({}): {}", v.path, version_line(v))),
                ]
            })),
            Block::Blank,
        ]);
    }
    d.push(verbatim_para(format!(
        "Cost: {:.1} s ({:.1} s building, {:.1} s measuring).",
        cost.total_s, cost.build_s, cost.measure_s
    )));
    d
}

/// `RESULTS.md` of an http job.
pub fn http_job_markdown(job: &HttpJobResult) -> String {
    let mut d = job_header(&job.job, &job.cell, &job.machine, &job.verdict);
    d.extend(doc::spaced(http_section(&job.servers, &job.settings)));
    d.extend(job_footer(&job.versions, &job.cost));
    doc::markdown::render(&d)
}

/// `RESULTS.md` of a soak job (its charts are not linked: a job writes none).
pub fn soak_job_markdown(job: &SoakJobResult) -> String {
    let mut d = job_header(&job.job, &job.cell, &job.machine, &job.verdict);
    d.extend(doc::spaced(soak_section(&job.servers, &job.settings, None)));
    d.extend(job_footer(&job.versions, &job.cost));
    doc::markdown::render(&d)
}

/// The head of a job's text: the verdict line, its reasons and the load indented under it,
/// then an empty line.
fn text_header(job: &str, cell: &CellInfo, v: &Verdict, load: String) -> Vec<Block> {
    let lines = v.reasons.iter().map(|r| one_line(r)).chain([load]);
    vec![
        verbatim_para(format!("{} / {job}: {}", cell.id, status_name(v.status))),
        Block::list(lines.map(|l| vec![verbatim(l)])),
        Block::Blank,
    ]
}

/// A job's table, then its notes (failures, contaminated runs) one per line.
fn table_and_notes(mut d: Vec<Block>, t: Table, below: Vec<String>) -> String {
    // A server that measured nothing (left out of every shape) has only its notes.
    if !t.rows().is_empty() {
        d.push(Block::Table(t));
    }
    if !below.is_empty() {
        d.push(Block::Blank);
    }
    d.push(Block::list(below.into_iter().map(|b| vec![verbatim(b)])));
    doc::text::render(&d)
}

/// The table `cell run --suite http` prints: per server and tool its median req/s, p99, CPU
/// per 1,000 requests and peak RSS, each with its unit; failures and contaminated runs below.
pub fn http_job_text(job: &HttpJobResult) -> String {
    let s = &job.settings;
    let head = text_header(
        &job.job,
        &job.cell,
        &job.verdict,
        format!(
            "load: {}; {}; mode {}; {} × {} runs after {} warm-up",
            s.tools.join(", "),
            super::sections::shapes_phrase(s),
            s.mode.name(),
            dur(s.duration_s),
            s.runs,
            dur(s.warmup_s)
        ),
    );
    let mut t = Table::new(&[
        ("server", Align::Left),
        ("workload", Align::Left),
        ("shape", Align::Left),
        ("tool", Align::Left),
        ("throughput", Align::Right),
        ("latency", Align::Right),
        ("server CPU", Align::Right),
        ("peak RSS", Align::Right),
        ("peak PSS", Align::Right),
        ("conns", Align::Right),
        ("runs", Align::Right),
        ("errors", Align::Right),
        ("non-2xx", Align::Right),
    ]);
    let mut below = Vec::new();
    for (name, srv) in &job.servers {
        if let Some(m) = srv.model {
            below.push(format!("{name}: concurrency model {m}"));
        }
        if let Some(e) = &srv.error {
            below.push(format!("{name}: FAILED: {}", one_line(e)));
            continue;
        }
        below.extend(
            super::servers::unmeasured_and_release(srv)
                .into_iter()
                .map(|t| format!("{name}{t}")),
        );
        for w in srv.workloads.values() {
            if let Some(e) = &w.error {
                below.push(format!("{name}: FAILED {}", one_line(e)));
            }
        }
        for (c, r) in combos(s, srv) {
            let Some(r) = r else {
                below.push(format!("{name} / {c}: no result"));
                continue;
            };
            t.row(vec![
                name.to_string(),
                c.workload.clone(),
                c.shape.clone(),
                c.tool.clone(),
                format!("{:.0} req/s", r.rps),
                format!("p99 {:.2} ms", r.p99_ms),
                format!("{:.3} CPU ms/1k", r.cpu_ms_per_1k),
                format!("{} MiB", mib_kib(r.peak_rss_kib)),
                r.peak_pss_kib
                    .map_or_else(|| "–".to_owned(), |k| format!("{} MiB", mib_kib(k))),
                crate::figures::connections_used(r),
                format!("{}/{}", r.clean_runs, r.runs.len()),
                r.errors.to_string(),
                r.non_2xx.to_string(),
            ]);
            for run in r.runs.iter().filter(|r| !r.contaminated.is_empty()) {
                let why: Vec<String> = run.contaminated.iter().map(|c| one_line(c)).collect();
                below.push(format!(
                    "{name} / {c} run {} contaminated: {}",
                    run.index,
                    why.join("; ")
                ));
            }
        }
    }
    table_and_notes(head, t, below)
}

/// The table `cell run --suite soak` prints: per server its verdict, RSS slope, R² and peak.
pub fn soak_job_text(job: &SoakJobResult) -> String {
    let s = &job.settings;
    let head = text_header(
        &job.job,
        &job.cell,
        &job.verdict,
        format!(
            "load: {} req/s over {} connections, {}, for {}; fit from {}",
            s.config.rate,
            s.config.connections,
            soak_shape(&s.config),
            dur(s.config.duration_s),
            dur(s.config.window_start_s)
        ),
    );
    let mut t = Table::new(&[
        ("server", Align::Left),
        ("verdict", Align::Left),
        ("RSS slope", Align::Right),
        ("R²", Align::Right),
        ("peak RSS", Align::Right),
        ("CPU", Align::Right),
        ("errors", Align::Right),
    ]);
    let mut below = Vec::new();
    for (name, srv) in &job.servers {
        if let Some(e) = &srv.error {
            below.push(format!("{name}: FAILED: {}", one_line(e)));
            continue;
        }
        t.row(vec![
            name.to_string(),
            drift_name(srv.verdict).to_owned(),
            srv.fit.as_ref().map_or_else(
                || "–".into(),
                |f| format!("{} KiB/min", signed(f.slope_kib_per_min, 1)),
            ),
            srv.fit
                .as_ref()
                .map_or_else(|| "–".into(), |f| format!("{:.3}", f.r2)),
            format!("{} MiB", mib_kib(srv.peak_rss_kib)),
            srv.cpu_ms_per_1k
                .map_or_else(|| "–".into(), |c| format!("{c:.3} CPU ms/1k")),
            load_errors(srv).map_or_else(|| "–".into(), |e| e.to_string()),
        ]);
    }
    table_and_notes(head, t, below)
}

/// One line of a merge's terminal summary for an http server: its median req/s per tool.
pub fn http_summary_line(name: &ServerName, h: &CellHttpServer) -> String {
    if let Some(e) = &h.result.error {
        return format!(
            "http {name} ({}): FAILED: {}",
            h.result.toolchain,
            one_line(e)
        );
    }
    // The plaintext workload's figures when there are many: one line per server stays short.
    let all = combos(&h.settings, &h.result);
    let first = cell_schema::lead_workload(&all, |(c, _)| c.workload.as_str())
        .map(|(c, _)| (c.workload.clone(), c.shape.clone()));
    let tools: Vec<String> = all
        .iter()
        .filter(|(c, _)| first.as_ref() == Some(&(c.workload.clone(), c.shape.clone())))
        .filter_map(|(c, r)| Some(format!("{} {:.0} req/s", c.tool, (*r)?.rps)))
        .collect();
    let lead = first.map_or_else(String::new, |(w, s)| {
        let more = all.len().saturating_sub(tools.len());
        let rest = if more > 0 {
            format!(" (+{more} more combinations)")
        } else {
            String::new()
        };
        format!("{w} over {s}{rest}: ")
    });
    format!(
        "http {name} ({}): {}{}",
        h.result.toolchain,
        if tools.is_empty() { "" } else { lead.as_str() },
        if tools.is_empty() {
            "no result".to_owned()
        } else {
            tools.join(", ")
        }
    )
}

/// One line of a merge's terminal summary for a soak server: its verdict line
/// ([`soak_verdict_line`](super::soak_verdict_line)).
pub fn soak_summary_line(name: &ServerName, s: &CellSoakServer) -> String {
    super::soak_verdict_line(name, &s.result, &s.settings.config)
}
