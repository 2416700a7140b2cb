//! The `http` and `soak` suites as people read them: the sections of `RESULTS.md` and of the
//! report, the terminal tables, and the soak charts (SVG).
//!
//! A section is built once as report blocks ([`Block`]) and written by the report's Markdown
//! and HTML writers, so `RESULTS.md`, `README.md` and `index.html` never disagree on a
//! figure. Charts are drawn by hand like the report's phase charts: coordinates rounded to
//! 0.1 px, the same input always gives the same bytes.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use cell_schema::store::{ChartName, SOAK_CHART_DIR};
use cell_schema::{
    CellHttpServer, CellResult, CellSoakServer, Drift, HttpJobResult, HttpServerResult,
    HttpSettings, HttpToolResult, Machine, ServerName, SoakJobResult, SoakServerResult,
    SoakSettings, ToolName, ToolVersion,
};

pub use crate::figures::drift_name;
use crate::figures::{dur, mib_kib, plural, short, signed, status_name, version_line};
use crate::report::svg::{
    LEFT, LEGEND_LINE, PALETTE, WIDTH, escape, legend_layout, linear_ticks, num, plot_w,
};
use crate::report::{Block, Span, segment};
use crate::{Align, Table};

// ---------------------------------------------------------------------------------------
// Figures as every output writes them.

use cell_schema::escape::one_line;

fn text(s: impl Into<String>) -> Span {
    Span::Text(s.into())
}

fn code(s: impl Into<String>) -> Span {
    Span::Code(s.into())
}

fn dash() -> Vec<Span> {
    vec![text("–")]
}

fn heading(level: u8, t: impl Into<String>) -> Block {
    crate::doc::text_heading(level, t)
}

fn table(head: &[(&str, Align)], rows: Vec<Vec<Vec<Span>>>) -> Block {
    crate::doc::text_table(head, rows)
}

/// A server's tools: the settings' order, then any it has that the settings do not list.
fn tool_order<'a>(settings: &'a HttpSettings, server: &'a HttpServerResult) -> Vec<&'a str> {
    let mut out: Vec<&str> = settings.tools.iter().map(String::as_str).collect();
    out.extend(
        server
            .tools
            .keys()
            .map(String::as_str)
            .filter(|t| !settings.tools.iter().any(|s| s == t)),
    );
    out
}

/// Errors of the soak's load, summed over kinds.
fn load_errors(s: &SoakServerResult) -> Option<u64> {
    s.load.as_ref().map(|l| l.errors.values().sum())
}

// ---------------------------------------------------------------------------------------
// HTTP sections.

fn http_settings_spans(s: &HttpSettings) -> Vec<Span> {
    let pin =
        |c: Option<u32>| c.map_or_else(|| "unpinned".to_owned(), |c| format!("pinned to CPU {c}"));
    vec![text(format!(
        "Load: {} in each round; {}, {} (wrk); {} measured after {} of warm-up; {} per server and tool; keep-alive {}; server {}, load generator {}; order seed {}.",
        if s.tools.is_empty() {
            "no tool".to_owned()
        } else {
            s.tools.join(", ")
        },
        plural(u64::from(s.connections), "connection", "connections"),
        plural(u64::from(s.threads), "thread", "threads"),
        dur(s.duration_s),
        dur(s.warmup_s),
        plural(u64::from(s.runs), "run", "runs"),
        if s.keep_alive { "on" } else { "off" },
        pin(s.server_cpu),
        pin(s.load_cpu),
        s.seed
    ))]
}

const HTTP_HEAD: [(&str, Align); 11] = [
    ("server", Align::Left),
    ("toolchain", Align::Left),
    ("tool", Align::Left),
    ("req/s (median)", Align::Right),
    ("req/s range (min–max)", Align::Right),
    ("p99 ms (median)", Align::Right),
    ("CPU ms / 1k req", Align::Right),
    ("peak RSS MiB", Align::Right),
    ("runs (clean/all)", Align::Right),
    ("errors", Align::Right),
    ("non-2xx", Align::Right),
];

fn http_tool_cells(t: Option<&HttpToolResult>) -> [Vec<Span>; 8] {
    let Some(t) = t else {
        return [
            vec![text("no result")],
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
        vec![text(format!("{}/{}", t.clean_runs, t.runs.len()))],
        vec![text(t.errors.to_string())],
        vec![text(t.non_2xx.to_string())],
    ]
}

/// The settings line, the table, and the runs the medians leave out.
fn http_body(servers: &[(&ServerName, &HttpServerResult)], settings: &HttpSettings) -> Vec<Block> {
    let mut out = vec![Block::Para(http_settings_spans(settings))];
    let mut rows = Vec::new();
    for (name, s) in servers {
        if let Some(e) = &s.error {
            let mut row = vec![
                vec![code(name.as_str())],
                vec![text(s.toolchain.as_str())],
                vec![
                    Span::Strong("FAILED".into()),
                    text(format!(": {}", one_line(e))),
                ],
            ];
            row.extend((3..HTTP_HEAD.len()).map(|_| dash()));
            rows.push(row);
            continue;
        }
        let tools = tool_order(settings, s);
        if tools.is_empty() {
            let mut row = vec![
                vec![code(name.as_str())],
                vec![text(s.toolchain.as_str())],
                vec![text("no tool")],
            ];
            row.extend((3..HTTP_HEAD.len()).map(|_| dash()));
            rows.push(row);
        }
        for tool in tools {
            let mut row = vec![
                vec![code(name.as_str())],
                vec![text(s.toolchain.as_str())],
                vec![text(tool)],
            ];
            row.extend(http_tool_cells(s.tools.get(tool)));
            rows.push(row);
        }
    }
    out.push(table(&HTTP_HEAD, rows));
    let mut notes = Vec::new();
    for (name, s) in servers {
        if let Some(c) = s.check.as_deref().filter(|c| *c != "ok") {
            notes.push(vec![
                code(name.as_str()),
                text(format!(": response check: {}", one_line(c))),
            ]);
        }
    }
    if !notes.is_empty() {
        out.push(Block::list(notes));
    }
    let mut dirty = Vec::new();
    for (name, s) in servers {
        for tool in tool_order(settings, s) {
            let Some(t) = s.tools.get(tool) else { continue };
            for r in t.runs.iter().filter(|r| !r.contaminated.is_empty()) {
                let why: Vec<String> = r.contaminated.iter().map(|c| one_line(c)).collect();
                dirty.push(vec![
                    code(name.as_str()),
                    text(format!(" / {tool} run {}: {}", r.index, why.join("; "))),
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
    out
}

/// `## HTTP` of a set of servers that got the same load: the load, then one row per server
/// and tool (tools in the order of `settings.tools`), then the contaminated runs.
pub fn http_markdown<'a>(
    servers: impl IntoIterator<Item = (&'a ServerName, &'a HttpServerResult)>,
    settings: &HttpSettings,
) -> String {
    let servers: Vec<_> = servers.into_iter().collect();
    let mut blocks = vec![heading(2, "HTTP")];
    blocks.extend(http_body(&servers, settings));
    crate::doc::markdown::render(&crate::doc::spaced(blocks))
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

// ---------------------------------------------------------------------------------------
// Soak sections.

fn soak_settings_spans(s: &SoakSettings) -> Vec<Span> {
    vec![text(format!(
        "Load: {} req/s offered over {} for {}, {} at a time; sampled every {}; the fit starts {} into the load. A server drifted when its fitted RSS line moves by at least {}% of the window's mean RSS with R² ≥ {}, on both the samples and the minima of each {} window; a drift {} the gate.",
        s.config.rate,
        plural(u64::from(s.config.connections), "connection", "connections"),
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

const SOAK_HEAD: [(&str, Align); 11] = [
    ("server", Align::Left),
    ("toolchain", Align::Left),
    ("verdict", Align::Left),
    ("slope KiB/min", Align::Right),
    ("R²", Align::Right),
    ("projected move", Align::Right),
    ("minima fit", Align::Right),
    ("peak RSS MiB", Align::Right),
    ("CPU ms / 1k req", Align::Right),
    ("requests", Align::Right),
    ("errors", Align::Right),
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
    row.push(
        s.cpu_ms_per_1k
            .map_or_else(dash, |c| vec![text(format!("{c:.3}"))]),
    );
    row.push(
        s.load
            .as_ref()
            .map_or_else(dash, |l| vec![text(l.requests.to_string())]),
    );
    row.push(s.load.as_ref().map_or_else(dash, |l| {
        let errors: u64 = l.errors.values().sum();
        vec![text(if l.non_2xx > 0 {
            format!("{errors} (+{} non-2xx)", l.non_2xx)
        } else {
            errors.to_string()
        })]
    }));
    row
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
    if let Some(path) = charts {
        for (name, s) in servers.iter().filter(|(_, s)| !s.samples.is_empty()) {
            out.push(Block::Image {
                src: path(Some(name)),
                alt: format!(
                    "soak of {name}: RSS, CPU, threads and fds over time ({})",
                    drift_name(s.verdict)
                ),
                width: WIDTH as u32,
                height: SOAK_H as u32,
            });
        }
    }
    out
}

fn overlay_image<'a>(
    servers: impl Iterator<Item = (&'a ServerName, &'a SoakServerResult)>,
    path: ChartPath<'_>,
) -> Option<Block> {
    let entries = overlay_entries(servers);
    (!entries.is_empty()).then(|| Block::Image {
        src: path(None),
        alt: "soak: RSS of every server over time".into(),
        width: WIDTH as u32,
        height: overlay_height(&entries).ceil() as u32,
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
    crate::doc::markdown::render(&crate::doc::spaced(blocks))
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
    crate::doc::markdown::render(&crate::doc::spaced(cell_suites_blocks(cell)))
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

/// The soak charts of a merged cell, for its writer to put next to `RESULTS.md`: one per
/// server with samples, then the overlay (none when no server has samples).
pub fn soak_chart_files(cell: &CellResult) -> BTreeMap<ChartName, String> {
    let mut out: BTreeMap<ChartName, String> = cell
        .soak
        .iter()
        .filter(|(_, s)| !s.result.samples.is_empty())
        .map(|(name, s)| {
            (
                ChartName::Soak(name.clone()),
                soak_svg(name, &s.result, &s.settings),
            )
        })
        .collect();
    if !out.is_empty() {
        out.insert(
            ChartName::SoakOverlay,
            cell_soak_overlay_svg(cell.soak.iter()),
        );
    }
    out
}

/// The charts of a soak job's dir: every server's, with samples or not, and the overlay.
pub fn soak_job_charts(job: &SoakJobResult) -> BTreeMap<ChartName, String> {
    let mut out: BTreeMap<ChartName, String> = job
        .servers
        .iter()
        .map(|(name, r)| {
            (
                ChartName::Soak(name.clone()),
                soak_svg(name, r, &job.settings),
            )
        })
        .collect();
    out.insert(
        ChartName::SoakOverlay,
        soak_overlay_svg(&job.servers, &job.settings),
    );
    out
}

// ---------------------------------------------------------------------------------------
// A job's RESULTS.md and terminal text.

fn job_header(
    md: &mut String,
    job: &str,
    cell: &cell_schema::CellInfo,
    machine: &Machine,
    verdict: &cell_schema::Verdict,
) {
    let _ = writeln!(md, "# cell run: `{job}` on `{}`\n", cell.id);
    let _ = writeln!(md, "Verdict: **{}**", status_name(verdict.status));
    for r in &verdict.reasons {
        let _ = writeln!(md, "- {}", one_line(r));
    }
    let _ = writeln!(
        md,
        "\nMachine: {} ({} logical CPUs), {}, {}.\n",
        machine.cpu_model, machine.nproc, machine.os_release, machine.kernel
    );
}

fn job_footer(
    md: &mut String,
    versions: &BTreeMap<ToolName, ToolVersion>,
    cost: &cell_schema::SuiteCost,
) {
    if !versions.is_empty() {
        let _ = writeln!(md, "## Versions\n");
        for (tool, v) in versions {
            let _ = writeln!(md, "- `{tool}` ({}): {}", v.path, version_line(v));
        }
        md.push('\n');
    }
    let _ = writeln!(
        md,
        "Cost: {:.1} s ({:.1} s building, {:.1} s measuring).",
        cost.total_s, cost.build_s, cost.measure_s
    );
}

/// `RESULTS.md` of an http job.
pub fn http_job_markdown(job: &HttpJobResult) -> String {
    let mut md = String::new();
    job_header(&mut md, &job.job, &job.cell, &job.machine, &job.verdict);
    md.push_str(&http_markdown(&job.servers, &job.settings));
    job_footer(&mut md, &job.versions, &job.cost);
    md
}

/// `RESULTS.md` of a soak job (its charts are not linked: a job writes none).
pub fn soak_job_markdown(job: &SoakJobResult) -> String {
    let mut md = String::new();
    job_header(&mut md, &job.job, &job.cell, &job.machine, &job.verdict);
    md.push_str(&soak_markdown(&job.servers, &job.settings, None));
    job_footer(&mut md, &job.versions, &job.cost);
    md
}

fn text_header(
    out: &mut String,
    job: &str,
    cell: &cell_schema::CellInfo,
    v: &cell_schema::Verdict,
) {
    let _ = writeln!(out, "{} / {job}: {}", cell.id, status_name(v.status));
    for r in &v.reasons {
        let _ = writeln!(out, "  {}", one_line(r));
    }
}

/// A job's table, then its notes (failures, contaminated runs) one per line.
fn table_and_notes(out: &mut String, t: &Table, below: &[String]) {
    out.push_str(&t.text());
    if !below.is_empty() {
        out.push('\n');
    }
    for b in below {
        let _ = writeln!(out, "  {b}");
    }
}

/// The table `cell run --suite http` prints: per server and tool its median req/s, p99, CPU
/// per 1,000 requests and peak RSS, each with its unit; failures and contaminated runs below.
pub fn http_job_text(job: &HttpJobResult) -> String {
    let mut out = String::new();
    text_header(&mut out, &job.job, &job.cell, &job.verdict);
    let s = &job.settings;
    let _ = writeln!(
        out,
        "  load: {}; {} connections; {} × {} runs after {} warm-up\n",
        s.tools.join(", "),
        s.connections,
        dur(s.duration_s),
        s.runs,
        dur(s.warmup_s)
    );
    let mut t = Table::new(&[
        ("server", Align::Left),
        ("tool", Align::Left),
        ("throughput", Align::Right),
        ("latency", Align::Right),
        ("server CPU", Align::Right),
        ("peak RSS", Align::Right),
        ("runs", Align::Right),
        ("errors", Align::Right),
        ("non-2xx", Align::Right),
    ]);
    let mut below = Vec::new();
    for (name, srv) in &job.servers {
        if let Some(e) = &srv.error {
            below.push(format!("{name}: FAILED: {}", one_line(e)));
            continue;
        }
        for tool in tool_order(s, srv) {
            let Some(r) = srv.tools.get(tool) else {
                below.push(format!("{name} / {tool}: no result"));
                continue;
            };
            t.row(vec![
                name.to_string(),
                tool.to_owned(),
                format!("{:.0} req/s", r.rps),
                format!("p99 {:.2} ms", r.p99_ms),
                format!("{:.3} CPU ms/1k", r.cpu_ms_per_1k),
                format!("{} MiB", mib_kib(r.peak_rss_kib)),
                format!("{}/{}", r.clean_runs, r.runs.len()),
                r.errors.to_string(),
                r.non_2xx.to_string(),
            ]);
            for run in r.runs.iter().filter(|r| !r.contaminated.is_empty()) {
                let why: Vec<String> = run.contaminated.iter().map(|c| one_line(c)).collect();
                below.push(format!(
                    "{name} / {tool} run {} contaminated: {}",
                    run.index,
                    why.join("; ")
                ));
            }
        }
    }
    table_and_notes(&mut out, &t, &below);
    out
}

/// The table `cell run --suite soak` prints: per server its verdict, RSS slope, R² and peak.
pub fn soak_job_text(job: &SoakJobResult) -> String {
    let mut out = String::new();
    text_header(&mut out, &job.job, &job.cell, &job.verdict);
    let s = &job.settings;
    let _ = writeln!(
        out,
        "  load: {} req/s over {} connections for {}; fit from {}\n",
        s.config.rate,
        s.config.connections,
        dur(s.config.duration_s),
        dur(s.config.window_start_s)
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
    table_and_notes(&mut out, &t, &below);
    out
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
    let tools: Vec<String> = tool_order(&h.settings, &h.result)
        .into_iter()
        .filter_map(|t| {
            let r = h.result.tools.get(t)?;
            Some(format!("{t} {:.0} req/s", r.rps))
        })
        .collect();
    format!(
        "http {name} ({}): {}",
        h.result.toolchain,
        if tools.is_empty() {
            "no result".to_owned()
        } else {
            tools.join(", ")
        }
    )
}

/// One line of a merge's terminal summary for a soak server: verdict and RSS slope.
pub fn soak_summary_line(name: &ServerName, s: &CellSoakServer) -> String {
    let r = &s.result;
    if let Some(e) = &r.error {
        return format!("soak {name} ({}): FAILED: {}", r.toolchain, one_line(e));
    }
    format!(
        "soak {name} ({}): {}{}",
        r.toolchain,
        drift_name(r.verdict),
        r.fit.as_ref().map_or_else(String::new, |f| format!(
            ", RSS slope {} KiB/min (R² {:.3})",
            signed(f.slope_kib_per_min, 1),
            f.r2
        ))
    )
}

// ---------------------------------------------------------------------------------------
// Charts.

/// Height of a server's soak chart.
const SOAK_H: f64 = TOP + 3.0 * (HEAD + PANEL_H) + 2.0 * GAP + X_FOOT;
/// Room for the title and three caption lines.
const TOP: f64 = 86.0;
/// A panel's title and legend row, above its plot.
const HEAD: f64 = 24.0;
const PANEL_H: f64 = 130.0;
const GAP: f64 = 16.0;
/// Under the last plot: tick labels and the axis title.
const X_FOOT: f64 = 52.0;
const OVERLAY_TOP: f64 = 62.0;
const OVERLAY_H: f64 = 300.0;
const INK: &str = "#1b1f24";
const MUTED: &str = "#57606a";
const GRID: &str = "#eaeef2";
const SHADE: &str = "#f1f3f5";
const RSS: &str = "#4e79a7";
const FIT: &str = "#e15759";
const CPU: &str = "#f28e2b";
const THREADS: &str = "#59a14f";
const FDS: &str = "#b07aa1";

/// A linear axis with round ticks, mapped onto pixels `p0` (at `lo`) to `p1` (at `hi`).
#[derive(Clone, Debug)]
struct Lin {
    lo: f64,
    hi: f64,
    ticks: Vec<f64>,
    p0: f64,
    p1: f64,
}

impl Lin {
    /// `[lo, hi]` widened to the nearest ticks at 1, 2, 2.5 or 5 × 10ᵏ.
    fn new(lo: f64, hi: f64, p0: f64, p1: f64) -> Self {
        Self::round(lo, hi, p0, p1, false)
    }

    /// As [`Lin::new`], for counts: whole steps, never 2.5.
    fn counts(lo: f64, hi: f64, p0: f64, p1: f64) -> Self {
        Self::round(lo, hi, p0, p1, true)
    }

    /// Exactly `[lo, hi]` (a time axis ends where the soak does), ticks inside it.
    fn exact(lo: f64, hi: f64, p0: f64, p1: f64) -> Self {
        Self {
            lo,
            hi,
            ticks: linear_ticks(lo, hi),
            p0,
            p1,
        }
    }

    fn round(lo: f64, hi: f64, p0: f64, p1: f64, whole: bool) -> Self {
        let (lo, hi) = if (hi - lo).abs() < 1e-9 {
            let pad = (lo.abs() * 0.05).max(0.5);
            (lo - pad, hi + pad)
        } else {
            (lo.min(hi), hi.max(lo))
        };
        let t = linear_ticks(lo, hi);
        let mut step = if t.len() >= 2 { t[1] - t[0] } else { hi - lo };
        if whole && step.fract() > 1e-9 {
            step = if step < 1.0 { 1.0 } else { step * 2.0 };
        }
        let a = (lo / step + 1e-9).floor() as i64;
        let b = (hi / step - 1e-9).ceil() as i64;
        Self {
            lo: a as f64 * step,
            hi: b as f64 * step,
            ticks: (a..=b).map(|k| k as f64 * step).collect(),
            p0,
            p1,
        }
    }

    fn px(&self, v: f64) -> f64 {
        self.p0 + (v - self.lo) / (self.hi - self.lo) * (self.p1 - self.p0)
    }
}

/// Seconds, or minutes for a soak longer than 15 minutes.
#[derive(Clone, Copy, Debug)]
struct TimeUnit {
    div: f64,
    name: &'static str,
}

impl TimeUnit {
    fn for_span(seconds: f64) -> Self {
        if seconds > 900.0 {
            Self {
                div: 60.0,
                name: "min",
            }
        } else {
            Self {
                div: 1.0,
                name: "s",
            }
        }
    }
}

/// The time axis of a soak: from 0 to the longer of the planned duration and the last sample.
fn time_axis<'a>(
    runs: impl Iterator<Item = (&'a SoakServerResult, &'a SoakSettings)>,
) -> (Lin, TimeUnit) {
    let end = runs
        .flat_map(|(s, set)| {
            s.samples
                .iter()
                .map(|x| x.t_s)
                .chain([set.config.duration_s, set.config.window_start_s])
        })
        .filter(|t| t.is_finite())
        .fold(0.0_f64, f64::max);
    let unit = TimeUnit::for_span(end);
    let end = if end > 0.0 { end } else { 1.0 };
    (Lin::exact(0.0, end / unit.div, LEFT, LEFT + plot_w()), unit)
}

/// The report's SVG opening at a size in (fractional) pixels.
fn svg_open(out: &mut String, width: f64, height: f64, title: &str) {
    crate::report::svg::svg_open(out, width as u32, height.ceil() as u32, title);
}

fn caption(out: &mut String, y: f64, size: f64, color: &str, spans: &[(String, bool)]) {
    let _ = write!(
        out,
        "<text class=\"caption\" x=\"{}\" y=\"{}\" font-size=\"{size}\" fill=\"{color}\">",
        num(LEFT),
        num(y)
    );
    for (s, strong) in spans {
        if *strong {
            let _ = write!(
                out,
                "<tspan font-weight=\"600\" fill=\"{FIT}\">{}</tspan>",
                escape(s)
            );
        } else {
            out.push_str(&escape(s));
        }
    }
    out.push_str("</text>\n");
}

fn polyline(out: &mut String, points: &[(f64, f64)], color: &str, width: f64, extra: &str) {
    if points.is_empty() {
        return;
    }
    let pts: Vec<String> = points
        .iter()
        .map(|(x, y)| format!("{},{}", num(*x), num(*y)))
        .collect();
    let _ = writeln!(
        out,
        "<polyline points=\"{}\" fill=\"none\" stroke=\"{color}\" stroke-width=\"{width}\" stroke-linejoin=\"round\"{extra}/>",
        pts.join(" ")
    );
}

/// Grid, ticks and tick labels of a plot; the y axis title rotated on the left.
fn frame(out: &mut String, x: &Lin, y: &Lin, y_title: &str) {
    let (top, bottom) = (y.p1, y.p0);
    out.push_str("<g class=\"axis\">\n");
    for t in &x.ticks {
        let px = num(x.px(*t));
        let _ = writeln!(
            out,
            "<line class=\"grid\" x1=\"{px}\" y1=\"{}\" x2=\"{px}\" y2=\"{}\" stroke=\"{GRID}\"/>",
            num(top),
            num(bottom)
        );
    }
    for t in &y.ticks {
        let py = num(y.px(*t));
        let _ = writeln!(
            out,
            "<line class=\"grid\" x1=\"{}\" y1=\"{py}\" x2=\"{}\" y2=\"{py}\" stroke=\"{GRID}\"/>",
            num(x.p0),
            num(x.p1)
        );
        let _ = writeln!(
            out,
            "<line class=\"tick\" x1=\"{}\" y1=\"{py}\" x2=\"{}\" y2=\"{py}\" stroke=\"{MUTED}\"/>",
            num(x.p0 - 5.0),
            num(x.p0)
        );
        let _ = writeln!(
            out,
            "<text x=\"{}\" y=\"{py}\" dy=\"4\" text-anchor=\"end\" fill=\"{INK}\">{}</text>",
            num(x.p0 - 8.0),
            short(*t, 4)
        );
    }
    let _ = writeln!(
        out,
        "<path class=\"axis-line\" d=\"M{x0},{t} L{x0},{b} L{x1},{b}\" fill=\"none\" stroke=\"{MUTED}\"/>",
        x0 = num(x.p0),
        x1 = num(x.p1),
        t = num(top),
        b = num(bottom)
    );
    let cy = num(f64::midpoint(top, bottom));
    let _ = writeln!(
        out,
        "<text class=\"axis-label\" x=\"18\" y=\"{cy}\" transform=\"rotate(-90 18 {cy})\" text-anchor=\"middle\" fill=\"{INK}\">{}</text>",
        escape(y_title)
    );
    out.push_str("</g>\n");
}

/// Tick labels and title of the time axis under a plot whose bottom is `bottom`.
fn time_labels(out: &mut String, x: &Lin, unit: TimeUnit, bottom: f64) {
    out.push_str("<g class=\"axis x\">\n");
    for t in &x.ticks {
        let px = num(x.px(*t));
        let _ = writeln!(
            out,
            "<line class=\"tick\" x1=\"{px}\" y1=\"{}\" x2=\"{px}\" y2=\"{}\" stroke=\"{MUTED}\"/>",
            num(bottom),
            num(bottom + 5.0)
        );
        let _ = writeln!(
            out,
            "<text x=\"{px}\" y=\"{}\" text-anchor=\"middle\" fill=\"{INK}\">{}</text>",
            num(bottom + 18.0),
            short(*t, 4)
        );
    }
    let _ = writeln!(
        out,
        "<text class=\"axis-label\" x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"{INK}\">time since the load started ({})</text>",
        num(f64::midpoint(x.p0, x.p1)),
        num(bottom + 38.0),
        unit.name
    );
    out.push_str("</g>\n");
}

/// The part of the time axis before the fit window, shaded, with a dashed line where the
/// window starts.
fn window_mark(out: &mut String, x: &Lin, y: &Lin, start: f64, label: bool) {
    let ws = x.px(start).clamp(x.p0, x.p1);
    if ws <= x.p0 {
        return;
    }
    let _ = writeln!(
        out,
        "<rect class=\"before-window\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{SHADE}\"/>",
        num(x.p0),
        num(y.p1),
        num(ws - x.p0),
        num(y.p0 - y.p1)
    );
    let _ = writeln!(
        out,
        "<line class=\"window-start\" x1=\"{w}\" y1=\"{}\" x2=\"{w}\" y2=\"{}\" stroke=\"{MUTED}\" stroke-dasharray=\"4 3\"/>",
        num(y.p1),
        num(y.p0),
        w = num(ws)
    );
    if label {
        let _ = writeln!(
            out,
            "<text x=\"{}\" y=\"{}\" font-size=\"11\" fill=\"{MUTED}\">fit window →</text>",
            num(ws + 4.0),
            num(y.p1 + 12.0)
        );
    }
}

/// A legend row: `(label, colour, dashed)` entries side by side from `x`.
fn legend_row(out: &mut String, x: f64, y: f64, entries: &[(&str, &str, bool)]) {
    let mut x = x;
    for (label, color, dashed) in entries {
        let _ = writeln!(
            out,
            "<line x1=\"{}\" y1=\"{y}\" x2=\"{}\" y2=\"{y}\" stroke=\"{color}\" stroke-width=\"2\"{}/>",
            num(x),
            num(x + 18.0),
            if *dashed {
                " stroke-dasharray=\"6 3\""
            } else {
                ""
            },
            y = num(y)
        );
        let _ = writeln!(
            out,
            "<text x=\"{}\" y=\"{}\" dy=\"4\" fill=\"{INK}\">{}</text>",
            num(x + 23.0),
            num(y),
            escape(label)
        );
        x += 23.0 + label.chars().count() as f64 * 7.0 + 18.0;
    }
}

fn empty_svg(title: &str, why: &str) -> String {
    let mut out = String::new();
    let (w, h) = (WIDTH, 160.0);
    svg_open(&mut out, w, h, title);
    let _ = writeln!(
        out,
        "<text x=\"{}\" y=\"90\" text-anchor=\"middle\" font-size=\"14\" fill=\"{MUTED}\">{}</text>",
        num(w / 2.0),
        escape(why)
    );
    out.push_str("</svg>\n");
    out
}

/// The fitted RSS line over the fit window, in (seconds, MiB): through the window's mean
/// at the mean time of the window's samples (where a least-squares line always passes),
/// with the fit's slope. The intercept is not stored; this is the same line.
fn fit_line(s: &SoakServerResult, settings: &SoakSettings) -> Option<[(f64, f64); 2]> {
    let fit = s.fit.as_ref()?;
    let end = s.samples.last()?.t_s;
    let start = settings.config.window_start_s;
    if end <= start || !fit.slope_kib_per_min.is_finite() {
        return None;
    }
    let inside: Vec<f64> = s
        .samples
        .iter()
        .map(|x| x.t_s)
        .filter(|t| *t >= start)
        .collect();
    let mid = if inside.is_empty() {
        f64::midpoint(start, end)
    } else {
        inside.iter().sum::<f64>() / inside.len() as f64
    };
    let at = |t: f64| (fit.mean_kib + fit.slope_kib_per_min * (t - mid) / 60.0) / 1024.0;
    Some([(start, at(start)), (end, at(end))])
}

/// The first caption line: verdict and fits.
fn verdict_caption(s: &SoakServerResult) -> Vec<(String, bool)> {
    let mut spans = vec![
        ("verdict: ".to_owned(), false),
        (
            drift_name(s.verdict).to_owned(),
            s.verdict == Drift::Drifted,
        ),
    ];
    match &s.fit {
        Some(f) => spans.push((
            format!(
                " · RSS slope {} KiB/min, R² {:.3} · projected move {} KiB ({}% of the window mean)",
                signed(f.slope_kib_per_min, 1),
                f.r2,
                signed(f.projected_kib, 0),
                signed(f.projected_share * 100.0, 1)
            ),
            false,
        )),
        None => spans.push((" · no fit".to_owned(), false)),
    }
    spans
}

/// The second caption line: the minima fit, the peak, the CPU cost.
fn figures_caption(s: &SoakServerResult) -> String {
    let mut parts = Vec::new();
    if let Some(m) = &s.fit_minima {
        parts.push(format!(
            "minima fit {} KiB/min, R² {:.3}",
            signed(m.slope_kib_per_min, 1),
            m.r2
        ));
    }
    parts.push(format!("peak RSS {} MiB", mib_kib(s.peak_rss_kib)));
    if let Some(c) = s.cpu_ms_per_1k {
        parts.push(format!("{c:.3} CPU ms per 1k requests"));
    }
    parts.join(" · ")
}

/// A server's soak as one SVG: RSS (samples, the fitted line over the fit window, the part
/// before the window shaded), CPU (% of one CPU, from consecutive samples) and threads and
/// fds, in three panels over one time axis; the verdict, slope and R² in the caption.
pub fn soak_svg(server: &ServerName, s: &SoakServerResult, settings: &SoakSettings) -> String {
    let title = format!("soak · {server} ({})", s.toolchain);
    if s.samples.is_empty() {
        let why = s.error.as_ref().map_or_else(
            || "no samples".to_owned(),
            |e| format!("no samples: {}", one_line(e)),
        );
        return empty_svg(&title, &why);
    }
    let (x, unit) = time_axis([(s, settings)].into_iter());
    let mut out = String::new();
    svg_open(&mut out, WIDTH, SOAK_H, &title);
    caption(&mut out, 42.0, 12.5, INK, &verdict_caption(s));
    caption(&mut out, 59.0, 11.5, MUTED, &[(figures_caption(s), false)]);
    caption(
        &mut out,
        75.0,
        11.5,
        MUTED,
        &[(
            format!(
                "{} req/s over {} connections for {}, sampled every {}; shaded: before the fit window ({})",
                settings.config.rate,
                settings.config.connections,
                dur(settings.config.duration_s),
                dur(settings.config.interval_s),
                dur(settings.config.window_start_s)
            ),
            false,
        )],
    );
    let panel_top = |k: usize| TOP + k as f64 * (HEAD + PANEL_H + GAP) + HEAD;
    let time = TimeAxis {
        x: &x,
        unit,
        start: settings.config.window_start_s / unit.div,
    };
    rss_panel(&mut out, &time, panel_top(0), s, settings);
    cpu_panel(&mut out, &time, panel_top(1), s);
    counts_panel(&mut out, &time, panel_top(2), s);
    time_labels(&mut out, &x, unit, panel_top(2) + PANEL_H);
    out.push_str("</svg>\n");
    out
}

/// The shared time axis of a soak chart's panels and where its fit window starts.
struct TimeAxis<'a> {
    x: &'a Lin,
    unit: TimeUnit,
    /// In `unit`.
    start: f64,
}

impl TimeAxis<'_> {
    fn px(&self, t_s: f64) -> f64 {
        self.x.px(t_s / self.unit.div)
    }
}

/// RSS: the samples, the fitted line over the fit window.
fn rss_panel(
    out: &mut String,
    time: &TimeAxis<'_>,
    top: f64,
    s: &SoakServerResult,
    settings: &SoakSettings,
) {
    let fit = fit_line(s, settings);
    let rss: Vec<f64> = s
        .samples
        .iter()
        .map(|x| x.rss_kib as f64 / 1024.0)
        .collect();
    let (mut lo, mut hi) = rss
        .iter()
        .chain(fit.iter().flat_map(|f| [&f[0].1, &f[1].1]))
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
            (a.min(*v), b.max(*v))
        });
    let span = (hi - lo).max(hi.abs() * 0.02).max(0.1);
    if hi - lo < span {
        let mid = f64::midpoint(lo, hi);
        (lo, hi) = (mid - span / 2.0, mid + span / 2.0);
    }
    let y = Lin::new(lo.max(0.0), hi, top + PANEL_H, top);
    out.push_str("<g class=\"panel rss\">\n");
    window_mark(out, time.x, &y, time.start, true);
    frame(out, time.x, &y, "RSS (MiB)");
    let pts: Vec<(f64, f64)> = s
        .samples
        .iter()
        .zip(&rss)
        .map(|(p, v)| (time.px(p.t_s), y.px(*v)))
        .collect();
    polyline(out, &pts, RSS, 1.5, " class=\"samples\"");
    if pts.len() <= 60 {
        for (px, py) in &pts {
            let _ = writeln!(
                out,
                "<circle cx=\"{}\" cy=\"{}\" r=\"2.5\" fill=\"{RSS}\"/>",
                num(*px),
                num(*py)
            );
        }
    }
    if let Some([a, b]) = fit {
        polyline(
            out,
            &[(time.px(a.0), y.px(a.1)), (time.px(b.0), y.px(b.1))],
            FIT,
            2.0,
            " class=\"fit\" stroke-dasharray=\"7 4\"",
        );
    }
    let mut entries = vec![("RSS of the process tree", RSS, false)];
    if fit.is_some() {
        entries.push(("least-squares fit over the window", FIT, true));
    }
    legend_row(out, LEFT, top - 12.0, &entries);
    out.push_str("</g>\n");
}

/// CPU, % of one CPU between consecutive samples.
fn cpu_panel(out: &mut String, time: &TimeAxis<'_>, top: f64, s: &SoakServerResult) {
    let cpu: Vec<(f64, f64)> = s
        .samples
        .windows(2)
        .filter_map(|w| {
            let dt = w[1].t_s - w[0].t_s;
            (dt > 0.0).then(|| (w[1].t_s, ((w[1].cpu_s - w[0].cpu_s) / dt * 100.0).max(0.0)))
        })
        .collect();
    let hi = cpu.iter().map(|c| c.1).fold(1.0_f64, f64::max) * 1.08;
    let y = Lin::new(0.0, hi, top + PANEL_H, top);
    out.push_str("<g class=\"panel cpu\">\n");
    window_mark(out, time.x, &y, time.start, false);
    frame(out, time.x, &y, "CPU (% of one CPU)");
    let pts: Vec<(f64, f64)> = cpu.iter().map(|(t, v)| (time.px(*t), y.px(*v))).collect();
    polyline(out, &pts, CPU, 1.5, " class=\"cpu\"");
    legend_row(
        out,
        LEFT,
        top - 12.0,
        &[("CPU of the process tree, user + system", CPU, false)],
    );
    out.push_str("</g>\n");
}

/// Threads and open file descriptors.
fn counts_panel(out: &mut String, time: &TimeAxis<'_>, top: f64, s: &SoakServerResult) {
    let hi = s
        .samples
        .iter()
        .map(|p| f64::from(p.threads.max(p.fds)))
        .fold(5.0_f64, f64::max)
        * 1.08;
    let y = Lin::counts(0.0, hi, top + PANEL_H, top);
    out.push_str("<g class=\"panel counts\">\n");
    window_mark(out, time.x, &y, time.start, false);
    frame(out, time.x, &y, "threads, fds (count)");
    let series = |f: fn(&cell_schema::SoakSample) -> u32| -> Vec<(f64, f64)> {
        s.samples
            .iter()
            .map(|p| (time.px(p.t_s), y.px(f64::from(f(p)))))
            .collect()
    };
    polyline(
        out,
        &series(|p| p.threads),
        THREADS,
        1.5,
        " class=\"threads\"",
    );
    polyline(
        out,
        &series(|p| p.fds),
        FDS,
        1.5,
        " class=\"fds\" stroke-dasharray=\"6 3\"",
    );
    legend_row(
        out,
        LEFT,
        top - 12.0,
        &[
            ("threads", THREADS, false),
            ("open file descriptors", FDS, true),
        ],
    );
    out.push_str("</g>\n");
}

/// Legend entries of the overlay, one per server with samples.
fn overlay_entries<'a>(
    servers: impl Iterator<Item = (&'a ServerName, &'a SoakServerResult)>,
) -> Vec<String> {
    servers
        .filter(|(_, s)| !s.samples.is_empty())
        .map(|(n, s)| {
            format!(
                "{n} ({}{})",
                drift_name(s.verdict),
                s.fit.as_ref().map_or_else(String::new, |f| format!(
                    ", {} KiB/min",
                    signed(f.slope_kib_per_min, 1)
                ))
            )
        })
        .collect()
}

fn overlay_height(entries: &[String]) -> f64 {
    let (cols, _) = legend_layout(entries);
    OVERLAY_TOP + OVERLAY_H + X_FOOT + entries.len().div_ceil(cols) as f64 * LEGEND_LINE + 12.0
}

/// Every server's RSS over time on one chart, one colour each (the order of the map), with
/// a legend giving each one's verdict and slope.
pub fn soak_overlay_svg(
    servers: &BTreeMap<ServerName, SoakServerResult>,
    settings: &SoakSettings,
) -> String {
    overlay_svg(
        &servers
            .iter()
            .map(|(n, s)| (n, s, settings))
            .collect::<Vec<_>>(),
    )
}

/// The overlay of a merged cell's soak servers, each drawn with its own job's settings.
pub(crate) fn cell_soak_overlay_svg<'a>(
    servers: impl Iterator<Item = (&'a ServerName, &'a CellSoakServer)>,
) -> String {
    overlay_svg(
        &servers
            .map(|(n, s)| (n, &s.result, &s.settings))
            .collect::<Vec<_>>(),
    )
}

fn overlay_svg(servers: &[(&ServerName, &SoakServerResult, &SoakSettings)]) -> String {
    let title = "soak · RSS of every server";
    let entries = overlay_entries(servers.iter().map(|(n, s, _)| (*n, *s)));
    if entries.is_empty() {
        return empty_svg(title, "no samples");
    }
    let height = overlay_height(&entries);
    let (x, unit) = time_axis(servers.iter().map(|(_, s, set)| (*s, *set)));
    let mut out = String::new();
    svg_open(&mut out, WIDTH, height, title);
    let starts: BTreeSet<String> = servers
        .iter()
        .map(|(_, _, set)| dur(set.config.window_start_s))
        .collect();
    let rates: BTreeSet<String> = servers
        .iter()
        .map(|(_, _, set)| format!("{} req/s", set.config.rate))
        .collect();
    caption(
        &mut out,
        42.0,
        11.5,
        MUTED,
        &[(
            format!(
                "resident set of each server's process tree at {}; shaded: before the fit window ({})",
                rates.into_iter().collect::<Vec<_>>().join(" / "),
                starts.into_iter().collect::<Vec<_>>().join(" / ")
            ),
            false,
        )],
    );
    let (lo, hi) = servers
        .iter()
        .flat_map(|(_, s, _)| s.samples.iter().map(|p| p.rss_kib as f64 / 1024.0))
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
            (a.min(v), b.max(v))
        });
    let y = Lin::new(
        0.0_f64.max(lo - (hi - lo) * 0.05),
        hi.max(lo + 0.1),
        OVERLAY_TOP + OVERLAY_H,
        OVERLAY_TOP,
    );
    let first_start = servers
        .iter()
        .map(|(_, _, set)| set.config.window_start_s)
        .fold(f64::INFINITY, f64::min);
    window_mark(&mut out, &x, &y, first_start / unit.div, true);
    frame(&mut out, &x, &y, "RSS (MiB)");
    let mut colours = Vec::new();
    for (i, (name, s, _)) in servers.iter().enumerate() {
        if s.samples.is_empty() {
            continue;
        }
        let color = PALETTE[i % PALETTE.len()];
        colours.push(color);
        let pts: Vec<(f64, f64)> = s
            .samples
            .iter()
            .map(|p| (x.px(p.t_s / unit.div), y.px(p.rss_kib as f64 / 1024.0)))
            .collect();
        let _ = writeln!(
            out,
            "<g class=\"series\" data-server=\"{}\">",
            escape(name.as_str())
        );
        polyline(&mut out, &pts, color, 1.8, "");
        out.push_str("</g>\n");
    }
    time_labels(&mut out, &x, unit, OVERLAY_TOP + OVERLAY_H);
    let (cols, col_w) = legend_layout(&entries);
    let top = OVERLAY_TOP + OVERLAY_H + X_FOOT;
    out.push_str("<g class=\"legend\">\n");
    for (i, (label, color)) in entries.iter().zip(&colours).enumerate() {
        let lx = LEFT + (i % cols) as f64 * col_w;
        let ly = top + (i / cols) as f64 * LEGEND_LINE + LEGEND_LINE / 2.0;
        legend_row(&mut out, lx, ly, &[(label.as_str(), color, false)]);
    }
    out.push_str("</g>\n</svg>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use cell_schema::{RssFit, SoakSample, ToolchainName};

    fn soak(samples: Vec<SoakSample>, fit: Option<RssFit>) -> SoakServerResult {
        SoakServerResult {
            toolchain: ToolchainName::new("rust"),
            build: None,
            startup_s: None,
            load: None,
            samples,
            fit,
            fit_minima: None,
            verdict: Drift::Flat,
            peak_rss_kib: 0,
            cpu_ms_per_1k: None,
            error: None,
        }
    }

    fn settings() -> SoakSettings {
        SoakSettings {
            config: cell_schema::SoakConfig {
                rate: 100,
                connections: 4,
                duration_s: 60.0,
                interval_s: 10.0,
                window_start_s: 20.0,
                minima_window_s: 20.0,
                drift_share: 0.05,
                min_r2: 0.8,
                fail_on_drift: false,
            },
            concurrent: 1,
        }
    }

    fn sample(t_s: f64, rss_kib: u64, cpu_s: f64) -> SoakSample {
        SoakSample {
            t_s,
            rss_kib,
            cpu_s,
            threads: 2,
            fds: 8,
        }
    }

    #[test]
    fn figures_have_fixed_decimals_and_no_negative_zero() {
        assert_eq!(short(10.0, 3), "10");
        assert_eq!(short(0.5, 3), "0.5");
        assert_eq!(short(-0.0001, 3), "0");
        assert_eq!(signed(12.34, 1), "+12.3");
        assert_eq!(signed(-0.01, 1), "0.0");
        assert_eq!(signed(-3.0, 0), "-3");
        assert_eq!(mib_kib(30_208), "29.5");
        assert_eq!(one_line("a\r\n  b|c\n\n"), "a b|c");
    }

    #[test]
    fn axes_widen_to_round_ticks_and_counts_take_whole_steps() {
        let y = Lin::new(5.0, 5.14, 100.0, 0.0);
        assert_eq!(
            y.ticks.iter().map(|t| short(*t, 4)).collect::<Vec<_>>(),
            ["5", "5.05", "5.1", "5.15"]
        );
        assert!((y.px(5.0) - 100.0).abs() < 1e-9 && (y.px(5.15) - 0.0).abs() < 1e-9);
        let c = Lin::counts(0.0, 12.0, 100.0, 0.0);
        assert!(c.ticks.iter().all(|t| t.fract() == 0.0), "{:?}", c.ticks);
        let t = Lin::exact(0.0, 120.0, 0.0, 100.0);
        assert_eq!(
            (t.lo, t.hi),
            (0.0, 120.0),
            "a time axis ends where the soak does"
        );
        let flat = Lin::new(7.0, 7.0, 100.0, 0.0);
        assert!(flat.lo < 7.0 && flat.hi > 7.0);
    }

    #[test]
    fn the_fit_line_passes_through_the_window_mean_with_the_fits_slope() {
        // 1 KiB per 10 s from 1024 KiB: 6 KiB/min; window from 20 s, samples at 20..=60 s.
        let samples: Vec<SoakSample> = (0..=6u32)
            .map(|i| sample(f64::from(i) * 10.0, 1024 + u64::from(i), 0.0))
            .collect();
        let fit = RssFit {
            points: 5,
            slope_kib_per_min: 6.0,
            r2: 1.0,
            projected_kib: 4.0,
            mean_kib: 1028.0,
            projected_share: 4.0 / 1028.0,
        };
        let [a, b] = fit_line(&soak(samples, Some(fit)), &settings()).unwrap();
        assert_eq!((a.0, b.0), (20.0, 60.0));
        assert!((a.1 * 1024.0 - 1026.0).abs() < 1e-9, "{a:?}");
        assert!((b.1 * 1024.0 - 1030.0).abs() < 1e-9, "{b:?}");
    }

    #[test]
    fn soak_svg_draws_cpu_from_consecutive_samples() {
        // 0.5 CPU s per 1 s: 50% of one CPU.
        let samples = vec![
            sample(0.0, 2048, 0.0),
            sample(10.0, 2048, 5.0),
            sample(20.0, 2048, 10.0),
        ];
        let svg = soak_svg(&ServerName::new("rust"), &soak(samples, None), &settings());
        assert!(svg.contains("class=\"panel cpu\""));
        assert!(!svg.contains("class=\"fit\""), "no fit, no line");
        let cpu = svg
            .lines()
            .find(|l| l.contains("class=\"cpu\""))
            .expect("a CPU line");
        // Two points (one per consecutive pair), both at the same height.
        let pts: Vec<&str> = cpu
            .split("points=\"")
            .nth(1)
            .unwrap()
            .split('"')
            .next()
            .unwrap()
            .split(' ')
            .collect();
        assert_eq!(pts.len(), 2);
        assert_eq!(pts[0].split(',').nth(1), pts[1].split(',').nth(1));
    }

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
            error: Some("startup:\nno 200".into()),
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
            seed: 0,
            startup_timeout_s: 10.0,
            stop_grace_s: 5.0,
            drain_timeout_s: 3.0,
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
        assert!(md.contains("keep-alive off; server unpinned, load generator unpinned"));
    }
}
