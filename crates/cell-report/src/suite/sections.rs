//! The HTTP and Soak sections, of a job's and a merged cell's `RESULTS.md` and of the
//! report: a settings line, one table row per server (and tool), the runs left out, and for
//! the soak the charts. Text is escaped fully ([`Span::Text`], [`Span::Code`]).

use std::collections::{BTreeMap, BTreeSet};

use cell_schema::escape::one_line;
use cell_schema::store::SOAK_CHART_DIR;
use cell_schema::{
    CellHttpServer, CellResult, CellSoakServer, Drift, HttpServerResult, HttpSettings,
    HttpToolResult, Machine, ServerName, SoakServerResult, SoakSettings, ToolName,
};

use super::servers::{by_model, model_cell, server_notes};
use super::verdict::verdict_spans;
use super::{combos, load_errors};
use crate::chart::soak::{overlay_size, server_size};
use crate::doc::{
    self, Align, Block, Span, code, text, text_heading as heading, text_table as table,
};
use crate::figures::{
    drift_name, dur, mib_kib, pinned, plural, short, signed, soak_shape, version_line,
};
use crate::report::segment;

fn dash() -> Vec<Span> {
    vec![text("–")]
}

fn http_settings_spans(s: &HttpSettings) -> Vec<Span> {
    vec![text(format!(
        "Load: {} in each round; {}; mode {}{}; {} measured after {} of warm-up; {} per combination; server {}, load generator {}; order seed {}.",
        if s.tools.is_empty() {
            "no tool".to_owned()
        } else {
            s.tools.join(", ")
        },
        shapes_phrase(s),
        s.mode.name(),
        if s.full { " (the whole matrix)" } else { "" },
        dur(s.duration_s),
        dur(s.warmup_s),
        plural(u64::from(s.runs), "run", "runs"),
        pinned(&s.server_cpus, s.server_cpu),
        pinned(&s.load_cpus, s.load_cpu),
        s.seed
    ))]
}

/// The connection shapes asked, e.g. `shapes keep-alive (64 connections, keep-alive),
/// one-conn (1 connection, a new one per request)`.
pub fn shapes_phrase(s: &HttpSettings) -> String {
    let one = |name: &str, connections: u32, keep_alive: bool, threads: u32| {
        format!(
            "{name} ({} asked, {}, {} of wrk)",
            plural(u64::from(connections), "connection", "connections"),
            if keep_alive {
                "keep-alive"
            } else {
                "a new one per request"
            },
            plural(u64::from(threads), "thread", "threads"),
        )
    };
    if s.shapes.is_empty() {
        return format!(
            "shape {}",
            one(s.legacy_shape(), s.connections, s.keep_alive, s.threads)
        );
    }
    let all: Vec<String> = s
        .shapes
        .iter()
        .map(|x| one(x.name.as_str(), x.connections, x.keep_alive, x.threads))
        .collect();
    format!(
        "{} {}",
        if all.len() == 1 { "shape" } else { "shapes" },
        all.join(", ")
    )
}

const HTTP_HEAD: [(&str, Align); 15] = [
    ("server", Align::Left),
    ("toolchain", Align::Left),
    ("model", Align::Left),
    ("shape", Align::Left),
    ("tool", Align::Left),
    ("req/s (median)", Align::Right),
    ("req/s range (min–max)", Align::Right),
    ("p99 ms (median)", Align::Right),
    ("CPU ms / 1k req", Align::Right),
    ("peak RSS MiB", Align::Right),
    ("peak PSS MiB", Align::Right),
    ("connections used", Align::Right),
    ("runs (clean/all)", Align::Right),
    ("errors", Align::Right),
    ("non-2xx", Align::Right),
];

fn http_tool_cells(t: Option<&HttpToolResult>) -> [Vec<Span>; 10] {
    let Some(t) = t else {
        return [
            vec![text("no result")],
            dash(),
            dash(),
            dash(),
            dash(),
            dash(),
            dash(),
            vec![text("0/0")],
            dash(),
            dash(),
        ];
    };
    [
        vec![Span::Strong(format!("{:.0}", t.rps))],
        vec![text(format!("{:.0}–{:.0}", t.rps_range[0], t.rps_range[1]))],
        vec![text(format!("{:.2}", t.p99_ms))],
        vec![text(format!("{:.3}", t.cpu_ms_per_1k))],
        vec![text(mib_kib(t.peak_rss_kib))],
        vec![text(t.peak_pss_kib.map_or_else(|| "–".to_owned(), mib_kib))],
        vec![text(crate::figures::connections_used(t))],
        vec![text(format!("{}/{}", t.clean_runs, t.runs.len()))],
        vec![text(t.errors.to_string())],
        vec![text(t.non_2xx.to_string())],
    ]
}

/// Columns of [`HTTP_HEAD`] shown only when some server has them: the model when a config
/// states one, the peak PSS when a run read one. Results written before either existed
/// render as they always did. Each with whether it is shown.
fn optional_columns(servers: &[(&ServerName, &HttpServerResult)]) -> [(usize, bool); 2] {
    let model = servers.iter().any(|(_, s)| s.model.is_some());
    let pss = servers.iter().any(|(_, s)| {
        s.tools
            .values()
            .chain(
                s.workloads
                    .values()
                    .flat_map(|w| w.shapes.values().flat_map(|t| t.values())),
            )
            .any(|t| t.peak_pss_kib.is_some())
    });
    let at = |name: &str| {
        HTTP_HEAD
            .iter()
            .position(|(h, _)| *h == name)
            .expect("a column of HTTP_HEAD")
    };
    [(at("model"), model), (at("peak PSS MiB"), pss)]
}

/// The http table, without the optional columns no server has.
fn http_table(rows: Vec<Vec<Vec<Span>>>, columns: [(usize, bool); 2]) -> Block {
    let keep = |i: usize| columns.iter().all(|&(c, shown)| c != i || shown);
    let head: Vec<(&str, Align)> = HTTP_HEAD
        .iter()
        .enumerate()
        .filter(|(i, _)| keep(*i))
        .map(|(_, h)| *h)
        .collect();
    let rows = rows
        .into_iter()
        .map(|r| {
            r.into_iter()
                .enumerate()
                .filter(|(i, _)| keep(*i))
                .map(|(_, c)| c)
                .collect()
        })
        .collect();
    table(&head, rows)
}

/// A server that failed as a whole: one row saying why.
fn failed_row(name: &ServerName, s: &HttpServerResult, e: &str) -> Vec<Vec<Span>> {
    let mut row = vec![
        vec![code(name.as_str())],
        vec![text(s.toolchain.as_str())],
        model_cell(s),
        dash(),
        vec![
            Span::Strong("FAILED".into()),
            text(format!(": {}", one_line(e))),
        ],
    ];
    row.extend((5..HTTP_HEAD.len()).map(|_| dash()));
    row
}

/// Rows per workload: every server's combinations of that workload, servers grouped by
/// concurrency model.
fn rows_by_workload(
    servers: &[(&ServerName, &HttpServerResult)],
    settings: &HttpSettings,
) -> BTreeMap<String, Vec<Vec<Vec<Span>>>> {
    let mut by: BTreeMap<String, Vec<Vec<Vec<Span>>>> = BTreeMap::new();
    for (name, s) in by_model(servers) {
        if let Some(e) = &s.error {
            by.entry(String::new())
                .or_default()
                .push(failed_row(name, s, e));
            continue;
        }
        for (c, t) in combos(settings, s) {
            let mut row = vec![
                vec![code(name.as_str())],
                vec![text(s.toolchain.as_str())],
                model_cell(s),
                vec![text(c.shape.as_str())],
                vec![text(c.tool.as_str())],
            ];
            row.extend(http_tool_cells(t));
            by.entry(c.workload).or_default().push(row);
        }
    }
    by
}

/// A workload's request as the settings recorded it (`GET /users/42`).
fn request_line(settings: &HttpSettings, workload: &str) -> String {
    settings.workloads.get(workload).map_or_else(
        || "GET /".to_owned(),
        |r| format!("{} {}", r.method, r.path),
    )
}

/// The settings line, one table per workload, and the runs the medians leave out.
fn http_body(servers: &[(&ServerName, &HttpServerResult)], settings: &HttpSettings) -> Vec<Block> {
    let mut out = vec![Block::Para(http_settings_spans(settings))];
    let mut by = rows_by_workload(servers, settings);
    let columns = optional_columns(servers);
    if let Some(failed) = by.remove("") {
        out.push(http_table(failed, columns));
    }
    for (workload, rows) in by {
        out.push(Block::Para(vec![
            Span::Strong(workload.clone()),
            text(": "),
            code(request_line(settings, &workload)),
        ]));
        out.push(http_table(rows, columns));
    }
    let mut notes = Vec::new();
    for (name, s) in by_model(servers) {
        notes.extend(server_notes(name, s));
    }
    if !notes.is_empty() {
        out.push(Block::list(notes));
    }
    let mut dirty = Vec::new();
    for (name, s) in servers {
        for (c, t) in combos(settings, s) {
            let Some(t) = t else { continue };
            for r in t.runs.iter().filter(|r| !r.contaminated.is_empty()) {
                let why: Vec<String> = r.contaminated.iter().map(|c| one_line(c)).collect();
                dirty.push(vec![
                    code(name.as_str()),
                    text(format!(" / {c} run {}: {}", r.index, why.join("; "))),
                ]);
            }
        }
    }
    if !dirty.is_empty() {
        out.push(Block::Para(vec![text(
            "Contaminated runs, left out of the medians:",
        )]));
        out.push(Block::list(dirty));
    }
    out.extend(sustained_blocks(servers, settings));
    out
}

const SUSTAINED_HEAD: [(&str, Align); 10] = [
    ("server", Align::Left),
    ("workload", Align::Left),
    ("shape", Align::Left),
    ("tool", Align::Left),
    ("requests", Align::Right),
    ("req/s", Align::Right),
    ("p99 ms", Align::Right),
    ("errors", Align::Right),
    ("non-2xx", Align::Right),
    ("RSS start → end MiB", Align::Right),
];

/// In the sustained mode, each long run's totals: requests, req/s, p99, errors and the RSS
/// it started and ended with.
fn sustained_blocks(
    servers: &[(&ServerName, &HttpServerResult)],
    settings: &HttpSettings,
) -> Vec<Block> {
    if settings.mode != cell_schema::HttpMode::Sustained {
        return Vec::new();
    }
    let mut rows = Vec::new();
    for (name, s) in servers {
        for (c, t) in combos(settings, s) {
            for r in t.map(|t| t.runs.as_slice()).unwrap_or_default() {
                let rss = match (r.rss_start_kib, r.rss_end_kib) {
                    (Some(a), Some(b)) => format!("{} → {}", mib_kib(a), mib_kib(b)),
                    _ => "–".into(),
                };
                rows.push(vec![
                    vec![code(name.as_str())],
                    vec![text(c.workload.as_str())],
                    vec![text(c.shape.as_str())],
                    vec![text(c.tool.as_str())],
                    vec![text(crate::figures::thousands(r.load.requests))],
                    vec![text(format!("{:.0}", r.load.rps))],
                    vec![text(format!("{:.2}", r.load.latency_ms.p99))],
                    vec![text(r.load.errors.values().sum::<u64>().to_string())],
                    vec![text(r.load.non_2xx.to_string())],
                    vec![text(rss)],
                ]);
            }
        }
    }
    vec![
        Block::Para(vec![text(
            "Sustained runs (errors are in the tables above):",
        )]),
        table(&SUSTAINED_HEAD, rows),
    ]
}

/// `## HTTP` of a set of servers that got the same load: the load, then one row per server
/// and tool (tools in the order of `settings.tools`), then the contaminated runs.
pub fn http_markdown<'a>(
    servers: impl IntoIterator<Item = (&'a ServerName, &'a HttpServerResult)>,
    settings: &HttpSettings,
) -> String {
    doc::markdown::render(&doc::spaced(http_section(servers, settings)))
}

/// The blocks of [`http_markdown`].
pub(super) fn http_section<'a>(
    servers: impl IntoIterator<Item = (&'a ServerName, &'a HttpServerResult)>,
    settings: &HttpSettings,
) -> Vec<Block> {
    let servers: Vec<_> = servers.into_iter().collect();
    let mut blocks = vec![heading(2, "HTTP")];
    blocks.extend(http_body(&servers, settings));
    blocks
}

/// Items grouped by equal settings, groups in the order their first item comes.
fn by_settings<'a, T: 'a, S: PartialEq + 'a>(
    items: impl IntoIterator<Item = (&'a ServerName, &'a T)>,
    settings: impl Fn(&'a T) -> &'a S,
) -> Vec<(&'a S, Vec<(&'a ServerName, &'a T)>)> {
    let mut groups: Vec<(&S, Vec<(&ServerName, &T)>)> = Vec::new();
    for (name, item) in items {
        let s = settings(item);
        match groups.iter_mut().find(|(g, _)| *g == s) {
            Some((_, v)) => v.push((name, item)),
            None => groups.push((s, vec![(name, item)])),
        }
    }
    groups
}

/// `CPU model (n logical CPUs)` of each distinct machine.
fn machines<'a>(ms: impl Iterator<Item = &'a Machine>) -> String {
    let set: BTreeSet<String> = ms
        .map(|m| {
            format!(
                "{} ({} logical CPU{})",
                m.cpu_model,
                m.nproc,
                if m.nproc == 1 { "" } else { "s" }
            )
        })
        .collect();
    set.into_iter().collect::<Vec<_>>().join("; ")
}

/// The distinct jobs, sorted.
fn jobs_of<'a>(jobs: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    let set: BTreeSet<&str> = jobs.collect();
    set.into_iter().collect()
}

/// `Job `a`` or `Jobs `a`, `b``.
fn jobs_spans(jobs: &[&str]) -> Vec<Span> {
    let mut out = vec![text(if jobs.len() == 1 { "Job " } else { "Jobs " })];
    for (i, j) in jobs.iter().enumerate() {
        if i > 0 {
            out.push(text(", "));
        }
        out.push(code(*j));
    }
    out
}

/// The HTTP section of a cell: one settings line and table per distinct load (the servers
/// of one job share theirs), the machines and the load tools' versions.
pub(crate) fn cell_http_blocks(
    http: &BTreeMap<ServerName, CellHttpServer>,
    level: u8,
    title: &str,
) -> Vec<Block> {
    let mut out = vec![heading(level, title)];
    let groups = by_settings(http, |h: &CellHttpServer| &h.settings);
    let several = groups.len() > 1;
    for (settings, servers) in &groups {
        let jobs = jobs_of(servers.iter().map(|(_, h)| h.job.as_str()));
        if several {
            out.push(heading(level + 1, format!("{title} · {}", jobs.join(", "))));
        }
        let mut versions: BTreeMap<&ToolName, BTreeSet<&str>> = BTreeMap::new();
        for (_, h) in servers {
            for (tool, v) in &h.versions {
                versions.entry(tool).or_default().insert(version_line(v));
            }
        }
        let mut about = jobs_spans(&jobs);
        about.push(text(format!(
            " on {}.",
            machines(servers.iter().map(|(_, h)| &h.machine))
        )));
        if !versions.is_empty() {
            about.push(text(" Versions: "));
            for (i, (tool, v)) in versions.iter().enumerate() {
                if i > 0 {
                    about.push(text("; "));
                }
                about.push(code(tool.as_str()));
                about.push(text(format!(
                    " {}",
                    v.iter().copied().collect::<Vec<_>>().join(" / ")
                )));
            }
            about.push(text("."));
        }
        out.push(Block::Para(about));
        let servers: Vec<(&ServerName, &HttpServerResult)> =
            servers.iter().map(|(n, h)| (*n, &h.result)).collect();
        out.extend(http_body(&servers, settings));
    }
    out
}

fn soak_settings_spans(s: &SoakSettings) -> Vec<Span> {
    // An older file records no CPUs (its servers were pinned, its machine says to which).
    let cpus = if s.server_cpus.is_empty() && s.load_cpus.is_empty() {
        String::new()
    } else {
        format!(
            "; servers {}, load generators {}",
            pinned(&s.server_cpus, None),
            pinned(&s.load_cpus, None)
        )
    };
    vec![text(format!(
        "Load: {} req/s offered over {}, {}, for {}, {} at a time{cpus}; sampled every {}; the fit starts {} into the load. A server drifted when its fitted RSS line moves by at least {}% of the window's mean RSS with R² ≥ {}, on both the samples and the minima of each {} window; a drift {} the gate.",
        s.config.rate,
        plural(u64::from(s.config.connections), "connection", "connections"),
        soak_shape(&s.config),
        dur(s.config.duration_s),
        plural(u64::from(s.concurrent), "server", "servers"),
        dur(s.config.interval_s),
        dur(s.config.window_start_s),
        short(s.config.drift_share * 100.0, 2),
        short(s.config.min_r2, 3),
        dur(s.config.minima_window_s),
        if s.config.fail_on_drift {
            "fails"
        } else {
            "does not fail"
        },
    ))]
}

const SOAK_HEAD: [(&str, Align); 8] = [
    ("server", Align::Left),
    ("toolchain", Align::Left),
    ("verdict", Align::Left),
    ("slope KiB/min", Align::Right),
    ("R²", Align::Right),
    ("projected move", Align::Right),
    ("minima fit", Align::Right),
    ("peak RSS MiB", Align::Right),
];

/// The load each soaked server got and how it answered, beside its RSS.
const SOAK_LOAD_HEAD: [(&str, Align); 10] = [
    ("server", Align::Left),
    ("requests", Align::Right),
    ("req/s achieved", Align::Right),
    ("req/s offered", Align::Right),
    ("p50 ms", Align::Right),
    ("p99 ms", Align::Right),
    ("errors", Align::Right),
    ("non-2xx", Align::Right),
    ("start-up s", Align::Right),
    ("CPU ms / 1k req", Align::Right),
];

fn verdict_span(d: Drift) -> Span {
    match d {
        Drift::Drifted => Span::Strong(drift_name(d).into()),
        _ => text(drift_name(d)),
    }
}

fn soak_row(name: &ServerName, s: &SoakServerResult) -> Vec<Vec<Span>> {
    let mut row = vec![vec![code(name.as_str())], vec![text(s.toolchain.as_str())]];
    if let Some(e) = &s.error {
        row.push(vec![
            Span::Strong("FAILED".into()),
            text(format!(": {}", one_line(e))),
        ]);
        row.extend((3..SOAK_HEAD.len()).map(|_| dash()));
        return row;
    }
    row.push(vec![verdict_span(s.verdict)]);
    match &s.fit {
        Some(f) => {
            row.push(vec![text(signed(f.slope_kib_per_min, 1))]);
            row.push(vec![text(format!("{:.3}", f.r2))]);
            row.push(vec![text(format!(
                "{} KiB ({}%)",
                signed(f.projected_kib, 0),
                signed(f.projected_share * 100.0, 1)
            ))]);
        }
        None => row.extend([dash(), dash(), dash()]),
    }
    row.push(s.fit_minima.as_ref().map_or_else(dash, |f| {
        vec![text(format!(
            "{} KiB/min, R² {:.3}",
            signed(f.slope_kib_per_min, 1),
            f.r2
        ))]
    }));
    row.push(vec![text(mib_kib(s.peak_rss_kib))]);
    row
}

/// A server's row of [`SOAK_LOAD_HEAD`]: what its load generator reported (dashes where it
/// reported nothing: a server that failed before or during the soak), its start-up and CPU.
fn soak_load_row(name: &ServerName, s: &SoakServerResult, offered: u32) -> Vec<Vec<Span>> {
    let fig = |v: Option<String>| v.map_or_else(dash, |v| vec![text(v)]);
    let l = s.load.as_ref();
    vec![
        vec![code(name.as_str())],
        fig(l.map(|l| l.requests.to_string())),
        fig(l.map(|l| format!("{:.1}", l.rps))),
        fig(l.map(|_| offered.to_string())),
        fig(l.map(|l| format!("{:.2}", l.latency_ms.p50))),
        fig(l.map(|l| format!("{:.2}", l.latency_ms.p99))),
        fig(load_errors(s).map(|e| e.to_string())),
        fig(l.map(|l| l.non_2xx.to_string())),
        fig(s.startup_s.map(|t| format!("{t:.3}"))),
        fig(s.cpu_ms_per_1k.map(|c| format!("{c:.3}"))),
    ]
}

/// Where a soak section's charts are: `None` for the overlay, else the server's.
type ChartPath<'a> = &'a dyn Fn(Option<&ServerName>) -> String;

/// The settings line and the table; with `charts`, each server's chart under it.
fn soak_body(
    servers: &[(&ServerName, &SoakServerResult)],
    settings: &SoakSettings,
    charts: Option<ChartPath<'_>>,
) -> Vec<Block> {
    let mut out = vec![Block::Para(soak_settings_spans(settings))];
    out.push(table(
        &SOAK_HEAD,
        servers.iter().map(|(n, s)| soak_row(n, s)).collect(),
    ));
    out.extend(
        servers
            .iter()
            .map(|(n, s)| Block::Para(verdict_spans(n, s, &settings.config))),
    );
    out.push(table(
        &SOAK_LOAD_HEAD,
        servers
            .iter()
            .map(|(n, s)| soak_load_row(n, s, settings.config.rate))
            .collect(),
    ));
    if let Some(path) = charts {
        let (width, height) = server_size();
        for (name, s) in servers.iter().filter(|(_, s)| !s.samples.is_empty()) {
            out.push(Block::Image {
                src: path(Some(name)),
                alt: format!(
                    "soak of {name}: RSS, CPU, threads and fds over time ({})",
                    drift_name(s.verdict)
                ),
                width,
                height,
            });
        }
    }
    out
}

fn overlay_image<'a>(
    servers: impl Iterator<Item = (&'a ServerName, &'a SoakServerResult)>,
    path: ChartPath<'_>,
) -> Option<Block> {
    overlay_size(servers).map(|(width, height)| Block::Image {
        src: path(None),
        alt: "soak: RSS of every server over time".into(),
        width,
        height,
    })
}

/// `## Soak` of a set of servers that got the same soak: the settings, one row per server,
/// and, given `charts` (a path prefix such as `soak/`), the overlay and every server's chart
/// as `<prefix>overlay.svg` and `<prefix><server>.svg`.
pub fn soak_markdown<'a>(
    servers: impl IntoIterator<Item = (&'a ServerName, &'a SoakServerResult)>,
    settings: &SoakSettings,
    charts: Option<&str>,
) -> String {
    doc::markdown::render(&doc::spaced(soak_section(servers, settings, charts)))
}

/// The blocks of [`soak_markdown`].
pub(super) fn soak_section<'a>(
    servers: impl IntoIterator<Item = (&'a ServerName, &'a SoakServerResult)>,
    settings: &SoakSettings,
    charts: Option<&str>,
) -> Vec<Block> {
    let servers: Vec<_> = servers.into_iter().collect();
    let path = |server: Option<&ServerName>| prefixed_chart(charts.unwrap_or(""), server);
    let mut blocks = vec![heading(2, "Soak")];
    let body = soak_body(&servers, settings, charts.map(|_| &path as ChartPath<'_>));
    let (head, images): (Vec<Block>, Vec<Block>) = body
        .into_iter()
        .partition(|b| !matches!(b, Block::Image { .. }));
    blocks.extend(head);
    if charts.is_some() {
        blocks.extend(overlay_image(servers.iter().copied(), &path));
    }
    blocks.extend(images);
    blocks
}

fn prefixed_chart(prefix: &str, server: Option<&ServerName>) -> String {
    match server {
        Some(s) => format!("{prefix}{}.svg", segment(s.as_str())),
        None => format!("{prefix}overlay.svg"),
    }
}

/// The Soak section of a cell: the overlay chart, then per distinct soak (the servers of one
/// job share theirs) the job and machine, the settings, the table and each server's chart.
pub(crate) fn cell_soak_blocks(
    soak: &[(&ServerName, &CellSoakServer)],
    level: u8,
    title: &str,
    charts: Option<ChartPath<'_>>,
) -> Vec<Block> {
    let mut out = vec![heading(level, title)];
    if let Some(path) = charts {
        out.extend(overlay_image(
            soak.iter().map(|(n, s)| (*n, &s.result)),
            path,
        ));
    }
    let groups = by_settings(soak.iter().copied(), |s: &CellSoakServer| &s.settings);
    let several = groups.len() > 1;
    for (settings, members) in &groups {
        let jobs = jobs_of(members.iter().map(|(_, s)| s.job.as_str()));
        if several {
            out.push(heading(level + 1, format!("{title} · {}", jobs.join(", "))));
        }
        let mut about = jobs_spans(&jobs);
        about.push(text(format!(
            " on {}.",
            machines(members.iter().map(|(_, s)| &s.machine))
        )));
        out.push(Block::Para(about));
        let servers: Vec<(&ServerName, &SoakServerResult)> =
            members.iter().map(|(n, s)| (*n, &s.result)).collect();
        out.extend(soak_body(&servers, settings, charts));
    }
    out
}

fn cell_soak_section(soak: &BTreeMap<ServerName, CellSoakServer>, level: u8) -> Vec<Block> {
    let path = |server: Option<&ServerName>| prefixed_chart(&format!("{SOAK_CHART_DIR}/"), server);
    let items: Vec<_> = soak.iter().collect();
    cell_soak_blocks(&items, level, "Soak", Some(&path))
}

/// The HTTP and Soak sections of a merged cell's `RESULTS.md` (empty for a cell without
/// them), soak charts linked as `soak/<server>.svg` and `soak/overlay.svg`: the files
/// [`soak_chart_files`] makes.
pub fn cell_suites_markdown(cell: &CellResult) -> String {
    doc::markdown::render(&doc::spaced(cell_suites_blocks(cell)))
}

/// The blocks of [`cell_suites_markdown`].
pub(crate) fn cell_suites_blocks(cell: &CellResult) -> Vec<Block> {
    let mut blocks = Vec::new();
    if !cell.http.is_empty() {
        blocks.extend(cell_http_blocks(&cell.http, 2, "HTTP"));
    }
    if !cell.soak.is_empty() {
        blocks.extend(cell_soak_section(&cell.soak, 2));
    }
    blocks
}

#[cfg(test)]
mod tests {
    use super::*;
    use cell_schema::ToolchainName;

    #[test]
    fn servers_are_grouped_by_equal_settings_in_first_seen_order() {
        let (a, b, c) = (
            ServerName::new("a"),
            ServerName::new("b"),
            ServerName::new("c"),
        );
        let items = [(&a, &1), (&b, &2), (&c, &1)];
        let groups = by_settings(items.iter().copied(), |x: &i32| x);
        assert_eq!(groups.len(), 2);
        assert_eq!(*groups[0].0, 1);
        assert_eq!(
            groups[0]
                .1
                .iter()
                .map(|(n, _)| n.as_str())
                .collect::<Vec<_>>(),
            ["a", "c"]
        );
    }

    #[test]
    fn a_failed_server_is_one_row_saying_so() {
        let s = HttpServerResult {
            toolchain: ToolchainName::new("go"),
            build: None,
            check: None,
            tools: BTreeMap::new(),
            workloads: BTreeMap::new(),
            error: Some("startup:\nno 200".into()),
            model: None,
            not_served: Vec::new(),
            shapes_left_out: BTreeMap::new(),
            release: None,
        };
        let settings = HttpSettings {
            tools: vec!["wrk".into(), "oha".into()],
            connections: 1,
            threads: 1,
            duration_s: 1.0,
            warmup_s: 0.0,
            runs: 1,
            keep_alive: false,
            server_cpu: None,
            load_cpu: None,
            server_cpus: Vec::new(),
            load_cpus: Vec::new(),
            seed: 0,
            startup_timeout_s: 10.0,
            stop_grace_s: 5.0,
            drain_timeout_s: 3.0,
            mode: cell_schema::HttpMode::Fresh,
            full: false,
            shapes: Vec::new(),
            workloads: BTreeMap::new(),
        };
        let name = ServerName::new("go");
        let md = http_markdown([(&name, &s)], &settings);
        let rows: Vec<&str> = md.lines().filter(|l| l.starts_with("| `go`")).collect();
        assert_eq!(rows.len(), 1, "{md}");
        assert!(
            rows[0].contains("**FAILED**: startup: no 200"),
            "{}",
            rows[0]
        );
        assert!(
            md.contains(
                "shape no-keep-alive (1 connection asked, a new one per request, 1 thread of wrk)"
            ),
            "{md}"
        );
        assert!(
            md.contains("server unpinned, load generator unpinned"),
            "{md}"
        );
    }
}
