//! Every output of the crate with hostile text in the free-text fields a results file, a
//! config or a tool's output fills (reasons, versions, machine lines, labels, messages, log
//! tails, load tools, run dates and sources): each output must escape it for its target.
//!
//! - HTML and SVG: every tag one of the page's or chart's own, every attribute value quoted
//!   and free of quotes, every `&` one of the five entities, the hostile text present escaped.
//! - Markdown: every table row as many cells as its header, no line opening a heading, a
//!   quote or a workflow command out of hostile text, no raw HTML outside code, no code block
//!   closed by the log it holds.
//! - Terminals (as the commands print them) and annotations: no workflow command but ours.

use std::path::PathBuf;

use cell_report::report::{self, Output, Report, ReportOptions};
use cell_report::suite;
use cell_schema::store::{HistoryRun, RunDirName};
use cell_schema::{
    AnyJob, CellResult, GateReport, HttpServerResult, HttpSettings, JobResult, ToolVersion,
};
use cell_testkit::suites::{http_job, soak_job, suite_cell};
use serde_json::{Value, json};

/// A script, to be shown, never run.
const SCRIPT: &str = "<script>alert(1)</script>";
/// A quote that would end an attribute value and open a handler.
const ATTR: &str = "\"onmouseover='x'";
/// Bars that would split a table cell, the second after a backslash of its own.
const BARS: &str = "a|b c\\|d";
/// Backticks that would end a code span.
const TICKS: &str = "`x` ``y";
/// A line break and a heading.
const HEADING: &str = "\n## injected";
/// A Windows line break and a workflow command.
const COMMAND: &str = "\r\n::warning::x";
/// An entity, to be shown as written.
const ENTITY: &str = "&amp;";

const PARTS: [&str; 7] = [SCRIPT, ATTR, BARS, TICKS, HEADING, COMMAND, ENTITY];

/// Every hostile part in one value.
fn hostile() -> String {
    PARTS.join(" ")
}

/// Every hostile part on its own, then all of them: what a list of reasons gets, so each
/// one starts a line.
fn hostile_list() -> Vec<String> {
    PARTS
        .iter()
        .map(|p| (*p).to_owned())
        .chain([hostile()])
        .collect()
}

/// A log's tail that tries to close the code block holding it.
fn hostile_log() -> Vec<String> {
    vec![
        "```".into(),
        "## injected".into(),
        "````".into(),
        format!("two{HEADING}"),
        hostile(),
    ]
}

// ---------------------------------------------------------------- inputs

fn workload() -> PathBuf {
    cell_testkit::fixtures().join("workload")
}

const RUNS: [&str; 2] = ["2026-12-01-local-093937", "2026-12-01-local-093940"];
const CELL: &str = "linux-x86_64-local";

/// The recorded clang job of the newest run, edited, read back as a results file is.
fn job(edit: impl FnOnce(&mut Value)) -> JobResult {
    let mut v = cell_testkit::read_json(&workload().join(format!(
        "jobs/{}/cell-{CELL}-clang-a1/results.json",
        RUNS[1]
    )));
    edit(&mut v);
    cell_schema::read_job(&cell_schema::to_json(&v)).expect("the reader takes free text")
}

/// The recorded cell of run `run`, edited, read back as a results file is.
fn cell(run: &str, edit: impl FnOnce(&mut Value)) -> CellResult {
    let mut v =
        cell_testkit::read_json(&workload().join(format!("history/{run}/{CELL}/results.json")));
    edit(&mut v);
    cell_schema::read_cell(&cell_schema::to_json(&v)).expect("the reader takes free text")
}

/// A machine with hostile text in every line.
fn hostile_machine(m: &mut Value) {
    for key in ["cpu_model", "kernel", "os_release"] {
        m[key] = json!(hostile());
    }
    m["runner_image"] = json!({ "os": hostile(), "version": hostile() });
}

/// Hostile versions: the path and the first line printed (after a lone CR, which Markdown
/// reads as a line break too).
fn hostile_versions(vs: &mut Value) {
    for v in vs.as_object_mut().unwrap().values_mut() {
        v["path"] = json!(format!("/usr/bin/{SCRIPT}"));
        v["printed"] = json!(format!("{}\rnext\nsecond line", hostile()));
    }
}

/// A skipped row whose message and log are hostile.
fn hostile_skipped(v: &mut Value) {
    v["skipped"] = json!([{
        "row": "c-broken", "toolchain": "clang", "reason": "build_failed",
        "message": hostile(), "exit_code": 1, "log_tail": hostile_log()
    }]);
}

/// A workload cell with hostile text in every free-text field a cell has.
fn hostile_cell(v: &mut Value) {
    v["verdict"]["reasons"] = json!(hostile_list());
    v["run"]["source"] = json!(hostile());
    v["run"]["head_sha"] = json!(hostile());
    v["cell"]["os"] = json!(hostile());
    v["cell"]["arch"] = json!(hostile());
    v["missing"] = json!([{ "toolchain": "ghost", "conclusion": hostile() }]);
    hostile_skipped(v);
    for j in v["jobs"].as_object_mut().unwrap().values_mut() {
        hostile_machine(&mut j["machine"]);
        hostile_versions(&mut j["versions"]);
        j["verdict"]["reasons"] = json!(hostile_list());
        j["reference"]["label"] = json!(hostile());
    }
    for r in v["rows"].as_object_mut().unwrap().values_mut() {
        r["label"] = json!(hostile());
    }
}

/// A printed version, hostile.
fn hostile_version(v: &mut ToolVersion) {
    v.path = format!("/usr/bin/{SCRIPT}");
    v.printed = format!("{}\rnext", hostile());
}

/// The load tool `oha` renamed to hostile text, in the settings and in each server's results;
/// the servers' contaminated runs, response checks and errors hostile too.
fn hostile_tool<'a>(
    settings: &mut HttpSettings,
    servers: impl IntoIterator<Item = &'a mut HttpServerResult>,
) {
    for t in &mut settings.tools {
        if t == "oha" {
            *t = hostile();
        }
    }
    for s in servers {
        if let Some(r) = s.tools.remove("oha") {
            s.tools.insert(hostile(), r);
        }
        if let Some(w) = s.tools.get_mut("wrk") {
            w.runs[2].contaminated = hostile_list();
        }
        if s.check.is_some() {
            s.check = Some(hostile());
        }
        if s.error.is_some() {
            s.error = Some(hostile());
        }
    }
}

/// A suite cell (http and soak) with hostile text in every free-text field it has.
fn hostile_suite_cell(date: &str, id: &str, k: u32) -> CellResult {
    let mut c = suite_cell(date, id, k);
    for h in c.http.values_mut() {
        h.job = format!("http {}", hostile());
        hostile_machine_struct(&mut h.machine);
        h.versions.values_mut().for_each(hostile_version);
        hostile_tool(&mut h.settings, [&mut h.result]);
    }
    for s in c.soak.values_mut() {
        s.job = format!("soak {}", hostile());
        hostile_machine_struct(&mut s.machine);
        s.versions.values_mut().for_each(hostile_version);
        if s.result.error.is_some() {
            s.result.error = Some(hostile());
        }
    }
    c
}

fn hostile_machine_struct(m: &mut cell_schema::Machine) {
    m.cpu_model = hostile();
    m.kernel = hostile();
    m.os_release = hostile();
}

/// The report of two runs, each with the hostile workload cell and the hostile suite cell.
fn hostile_report() -> Vec<Output> {
    let runs: Vec<HistoryRun> = RUNS
        .iter()
        .enumerate()
        .map(|(k, name)| {
            let workload = cell(name, hostile_cell);
            let parsed = RunDirName::parse(name).unwrap();
            let suites = hostile_suite_cell(parsed.date(), parsed.id(), k as u32);
            HistoryRun {
                dir: PathBuf::new(),
                name: parsed,
                cells: [
                    (workload.cell.id.clone(), workload),
                    (suites.cell.id.clone(), suites),
                ]
                .into_iter()
                .collect(),
                record: None,
                imported_soak: None,
            }
        })
        .collect();
    report::render(&Report::build(&runs, &ReportOptions::EVERYTHING))
}

fn file<'a>(files: &'a [Output], path: &str) -> &'a str {
    let f = files
        .iter()
        .find(|f| f.path == path)
        .unwrap_or_else(|| panic!("no {path}"));
    std::str::from_utf8(&f.bytes).unwrap()
}

/// A gate report whose run, baseline, failures, notices and messages are hostile.
fn hostile_gate() -> GateReport {
    let ratio = json!({ "median": 1.0, "lo": 0.99, "hi": 1.01 });
    let verdict = |status: &str| {
        json!({
            "row": "c-fast", "phase": "mix", "clock": "cpu", "status": status,
            "old": ratio, "new": ratio, "band": [0.98, 1.02], "message": hostile()
        })
    };
    serde_json::from_value(json!({
        "schema_version": 1, "kind": "gate", "run": hostile(), "tolerance": 0.02,
        "cells": [{
            "cell": CELL, "baseline": hostile(), "failures": hostile_list(),
            "notices": hostile_list(),
            "verdicts": [verdict("fail"), verdict("inconclusive"), verdict("pass")]
        }],
        "summary": { "pass": 1, "fail": 1, "inconclusive": 1, "failures": 8, "notices": 8 },
        "exit": 1
    }))
    .unwrap()
}

// ---------------------------------------------------------------- checks

/// Tags an HTML page of the report may hold.
const HTML_TAGS: [&str; 26] = [
    "!DOCTYPE", "html", "head", "meta", "title", "style", "body", "h1", "h2", "h3", "h4", "p",
    "ul", "li", "pre", "code", "img", "table", "thead", "tbody", "tr", "th", "td", "a", "span",
    "strong",
];
/// Tags a chart may hold.
const SVG_TAGS: [&str; 10] = [
    "svg", "title", "rect", "text", "tspan", "g", "line", "path", "circle", "polyline",
];
/// What `escape::html` writes.
const ENTITIES: [&str; 5] = ["&amp;", "&lt;", "&gt;", "&quot;", "&#39;"];

/// One tag's attributes: ` name="value"` each, values free of quotes and `<`.
fn assert_attributes(what: &str, tag: &str) {
    let mut rest = tag.trim_end_matches('/').trim_end();
    while !rest.is_empty() {
        rest = rest
            .strip_prefix(' ')
            .unwrap_or_else(|| panic!("{what}: attributes of <{tag}> not separated"));
        let eq = rest
            .find("=\"")
            .unwrap_or_else(|| panic!("{what}: an attribute of <{tag}> without a quoted value"));
        let name = &rest[..eq];
        assert!(
            !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-:".contains(c)),
            "{what}: attribute `{name}` in <{tag}>"
        );
        let value = &rest[eq + 2..];
        let end = value
            .find('"')
            .unwrap_or_else(|| panic!("{what}: an unclosed value in <{tag}>"));
        assert!(!value[..end].contains(['<', '\'']), "{what}: <{tag}>");
        rest = &value[end + 1..];
    }
}

/// HTML or SVG: only our tags, attribute values closed where they should be, every `&` an
/// entity.
fn assert_markup_safe(what: &str, xml: &str, tags: &[&str]) {
    assert!(
        !xml.to_ascii_lowercase().contains("<script"),
        "{what}: a raw <script"
    );
    assert!(
        !xml.to_ascii_lowercase().contains("</script"),
        "{what}: a raw </script"
    );
    let mut rest = xml;
    while let Some(start) = rest.find('<') {
        let end = rest[start..].find('>').expect("an unclosed tag") + start;
        let tag = &rest[start + 1..end];
        rest = &rest[end + 1..];
        let body = tag.strip_prefix('/').unwrap_or(tag);
        let name: String = body
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '!')
            .collect();
        assert!(tags.contains(&name.as_str()), "{what}: a <{tag}> tag");
        if name != "!DOCTYPE" {
            assert_attributes(what, &body[name.len()..]);
        }
    }
    for (i, _) in xml.match_indices('&') {
        assert!(
            ENTITIES.iter().any(|e| xml[i..].starts_with(e)),
            "{what}: a raw `&` at {}",
            &xml[i..(i + 12).min(xml.len())]
        );
    }
}

/// HTML or SVG with hostile text in it: safe, and the hostile text there, escaped.
fn assert_hostile_escaped(what: &str, xml: &str, tags: &[&str]) {
    assert_markup_safe(what, xml, tags);
    for escaped in [
        "&lt;script&gt;alert(1)&lt;/script&gt;",
        "&quot;onmouseover=&#39;x&#39;",
        "&amp;amp;",
    ] {
        assert!(xml.contains(escaped), "{what}: no `{escaped}`:\n{xml}");
    }
}

/// The `|` of a table row that split it: those after an even run of backslashes.
fn cells(row: &str) -> usize {
    let b = row.as_bytes();
    let splits = (0..b.len())
        .filter(|&i| {
            b[i] == b'|' && b[..i].iter().rev().take_while(|c| **c == b'\\').count() % 2 == 0
        })
        .count();
    splits - 1
}

/// A line with its code spans taken out (backslash escapes kept as they are).
fn outside_code(line: &str) -> String {
    let c: Vec<char> = line.chars().collect();
    let run = |i: usize| c[i..].iter().take_while(|x| **x == '`').count();
    let mut out = String::new();
    let mut i = 0;
    while i < c.len() {
        if c[i] == '\\' && i + 1 < c.len() {
            out.extend(&c[i..i + 2]);
            i += 2;
        } else if c[i] == '`' {
            let n = run(i);
            let close = (i + n..c.len())
                .find(|&j| c[j] == '`' && (j == 0 || c[j - 1] != '`') && run(j) == n);
            if let Some(j) = close {
                i = j + n;
            } else {
                out.extend(&c[i..i + n]);
                i += n;
            }
        } else {
            out.push(c[i]);
            i += 1;
        }
    }
    out
}

/// One line outside a code block: no block opened from hostile text, no raw HTML.
fn assert_line(what: &str, line: &str) {
    let trimmed = line.trim_start();
    assert!(
        !trimmed.starts_with("::"),
        "{what}: a workflow command line: {line:?}"
    );
    if line.starts_with('#') {
        let text = line.trim_start_matches('#').trim_start();
        assert!(
            !text.starts_with("injected"),
            "{what}: an injected heading: {line:?}"
        );
    } else {
        assert!(
            !trimmed.starts_with(['#', '>']),
            "{what}: a block opened: {line:?}"
        );
    }
    if let Some(item) = trimmed.strip_prefix("- ") {
        let item = item.trim_start();
        assert!(
            !item.starts_with(['#', '>']) && !item.starts_with("```"),
            "{what}: a list item opening a block: {line:?}"
        );
    }
    let text = outside_code(line);
    for (i, _) in text.match_indices('<') {
        assert!(text[..i].ends_with('\\'), "{what}: raw HTML in {line:?}");
    }
    for (i, _) in text.match_indices(ENTITY) {
        assert!(
            text[..i].ends_with('\\'),
            "{what}: an entity read as one in {line:?}"
        );
    }
}

/// Markdown with hostile text in it: tables whole, no block opened, no raw HTML outside
/// code, code blocks closed only by their own fence, and the hostile text there.
fn assert_markdown_safe(what: &str, md: &str) {
    assert!(
        md.contains("alert(1)"),
        "{what}: the hostile text never got in:\n{md}"
    );
    assert!(
        !md.contains('\r'),
        "{what}: a CR, which Markdown reads as a line break"
    );
    let lines: Vec<&str> = md.split('\n').collect();
    let mut fence: Option<usize> = None;
    let mut table: Option<usize> = None;
    for (n, line) in lines.iter().enumerate() {
        let trimmed = line.trim_start();
        let ticks = trimmed.chars().take_while(|c| *c == '`').count();
        if let Some(open) = fence {
            if ticks >= open && trimmed.len() == ticks {
                fence = None;
            }
            continue;
        }
        if let Some(head) = table {
            if trimmed.starts_with('|') {
                assert_eq!(
                    cells(trimmed),
                    head,
                    "{what}: a row of another width: {line:?}"
                );
            } else {
                assert!(
                    trimmed.is_empty() || trimmed.starts_with("- ") || line.starts_with('#'),
                    "{what}: a line breaking into a table: {line:?}"
                );
                table = None;
            }
        } else if trimmed.starts_with('|')
            && lines
                .get(n + 1)
                .is_some_and(|l| l.trim_start().starts_with("|---"))
        {
            table = Some(cells(trimmed));
        }
        // A fence: three backticks or more, no backtick after them (else a code span).
        if ticks >= 3 && !trimmed[ticks..].contains('`') {
            fence = Some(ticks);
            continue;
        }
        assert_line(what, line);
    }
    assert!(fence.is_none(), "{what}: a code block left open:\n{md}");
}

/// Terminal text as the commands print it (`escape::terminal`): no workflow command.
fn assert_terminal_safe(what: &str, text: &str) {
    let shown = cell_schema::escape::terminal(text);
    assert!(
        shown.contains("alert(1)"),
        "{what}: the hostile text never got in:\n{shown}"
    );
    for line in shown.lines() {
        assert!(
            !line.trim_start().starts_with("::"),
            "{what}: a workflow command: {line:?}"
        );
    }
}

// ---------------------------------------------------------------- job RESULTS.md

#[test]
fn a_reason_with_markup_stays_on_its_line_in_the_job_results_md() {
    let j = job(|v| v["verdict"]["reasons"] = json!(hostile_list()));
    assert_markdown_safe("job RESULTS.md", &cell_report::job_markdown(&j));
}

#[test]
fn a_machine_line_with_markup_is_escaped_in_the_job_results_md() {
    let j = job(|v| hostile_machine(&mut v["machine"]));
    assert_markdown_safe("job RESULTS.md", &cell_report::job_markdown(&j));
}

/// `protocol.clock_chosen` (issue 24) and `mode_chosen` are free text of the job's file.
#[test]
fn why_a_clock_or_protocol_was_chosen_with_markup_is_escaped_in_the_job_results_md() {
    let j = job(|v| {
        v["protocol"]["clock_chosen"] = json!(hostile());
        v["protocol"]["mode_chosen"] = json!(hostile());
    });
    let md = cell_report::job_markdown(&j);
    assert_markdown_safe("job RESULTS.md", &md);
    assert_eq!(md.matches("alert(1)").count(), 2, "both printed:\n{md}");
}

#[test]
fn a_version_with_markup_is_escaped_in_the_job_results_md() {
    let j = job(|v| hostile_versions(&mut v["versions"]));
    let md = cell_report::job_markdown(&j);
    assert_markdown_safe("job RESULTS.md", &md);
    assert!(!md.contains("second line"), "only the first line printed");
}

#[test]
fn a_skipped_rows_log_cannot_close_its_code_block_in_the_job_results_md() {
    let j = job(hostile_skipped);
    let md = cell_report::job_markdown(&j);
    assert_markdown_safe("job RESULTS.md", &md);
    assert!(
        md.contains("\n  `````\n  ```\n  ## injected\n  ````\n  two\n  ## injected\n"),
        "{md}"
    );
}

#[test]
fn hostile_text_in_a_job_dir_is_escaped_in_every_file() {
    let j = job(|v| {
        v["verdict"]["reasons"] = json!(hostile_list());
        hostile_machine(&mut v["machine"]);
        hostile_versions(&mut v["versions"]);
        hostile_skipped(v);
    });
    let any = AnyJob::from(j);
    let dir = cell_report::job_dir(&any);
    assert_markdown_safe("job dir RESULTS.md", &dir.markdown);
    assert_terminal_safe("cell run", &cell_report::any_job_text(&any));
}

/// An instruction lane whose version and command are hostile, and rows whose reasons for not
/// being counted are: of a job (`rows`, `instructions`) or of each job and row of a cell.
fn hostile_lane(lane: &mut Value, rows: &mut Value) {
    *lane = json!({
        "valgrind": hostile(), "version": hostile(), "argv": [hostile(), TICKS],
        "timeout_s": 6000.0, "seconds": 1.5,
        "cache": {"i1": hostile(), "d1": TICKS, "ll": hostile()},
        "env_bytes": 2048, "rows_skipped": [hostile(), TICKS]
    });
    for r in rows.as_object_mut().unwrap().values_mut() {
        r["instructions_skipped"] = json!(hostile());
        for p in r["phases"].as_object_mut().unwrap().values_mut() {
            p["instructions"] = json!(32_626_227_u64);
            p["estimated_cycles"] = json!(32_797_593_u64);
        }
    }
}

#[test]
fn an_instruction_lane_with_markup_is_escaped_in_every_results_md_and_terminal_text() {
    let j = job(|v| {
        let mut rows = v["rows"].take();
        hostile_lane(&mut v["instructions"], &mut rows);
        v["rows"] = rows;
    });
    let md = cell_report::job_markdown(&j);
    assert_markdown_safe("job RESULTS.md", &md);
    assert!(
        md.contains("## Exact lane") && md.contains("| 32797593 ×1.0000 | 32626227 ×1.0000 |"),
        "{md}"
    );
    assert_terminal_safe("cell run", &cell_report::job_text(&j));
    let c = cell(RUNS[1], |v| {
        let mut rows = v["rows"].take();
        for (k, j) in v["jobs"].as_object_mut().unwrap().values_mut().enumerate() {
            hostile_lane(&mut j["instructions"], &mut rows);
            // The other job's lane did not run, for a hostile reason.
            if k == 1 {
                j["instructions"]["skipped"] = json!(hostile());
            }
        }
        v["rows"] = rows;
    });
    let md = cell_report::cell_markdown(&c);
    assert_markdown_safe("cell RESULTS.md", &md);
    assert!(
        md.contains("## Exact lane") && md.contains(": not run: "),
        "{md}"
    );
    assert_terminal_safe("cell local", &cell_report::text_summary(&[c]));
}

#[test]
fn without_a_lane_no_results_md_has_an_exact_lane_section() {
    let md = cell_report::job_markdown(&job(|_| {}));
    assert!(!md.contains("Exact lane"), "{md}");
    let md = cell_report::cell_markdown(&cell(RUNS[1], |_| {}));
    assert!(!md.contains("Exact lane"), "{md}");
}

// ---------------------------------------------------------------- cell RESULTS.md

#[test]
fn a_cpu_model_with_bars_keeps_the_jobs_table_of_the_cell_results_md() {
    let c = cell(RUNS[1], |v| {
        for j in v["jobs"].as_object_mut().unwrap().values_mut() {
            j["machine"]["cpu_model"] = json!(hostile());
        }
    });
    assert_markdown_safe("cell RESULTS.md", &cell_report::cell_markdown(&c));
}

#[test]
fn a_run_date_reason_missing_job_and_version_with_markup_are_escaped_in_the_cell_results_md() {
    let c = cell(RUNS[1], |v| {
        hostile_cell(v);
        v["run"]["date"] = json!(hostile());
    });
    let md = cell_report::cell_markdown(&c);
    assert_markdown_safe("cell RESULTS.md", &md);
    assert!(
        md.lines().next().unwrap().contains("alert(1)"),
        "the date in the heading"
    );
}

#[test]
fn hostile_text_in_the_terminal_tables_issues_no_workflow_command() {
    let c = cell(RUNS[1], hostile_cell);
    assert_terminal_safe("cell local", &cell_report::text_summary(&[c]));
    let j = job(|v| {
        v["verdict"]["reasons"] = json!(hostile_list());
        hostile_skipped(v);
    });
    assert_terminal_safe("cell run", &cell_report::job_text(&j));
    let suites = hostile_suite_cell("2026-12-01", "local-093940", 0);
    assert_terminal_safe("cell local, suites", &cell_report::text_summary(&[suites]));
}

// ---------------------------------------------------------------- http and soak

#[test]
fn a_load_tool_and_server_error_with_markup_are_escaped_in_the_http_job_results_md() {
    let mut j = http_job();
    j.job = format!("http {TICKS}");
    j.verdict.reasons = hostile_list();
    hostile_machine_struct(&mut j.machine);
    j.versions.values_mut().for_each(hostile_version);
    hostile_tool(&mut j.settings, j.servers.values_mut());
    let any = AnyJob::Http(Box::new(j));
    assert_markdown_safe("http RESULTS.md", &cell_report::job_dir(&any).markdown);
    assert_terminal_safe("cell run --suite http", &cell_report::any_job_text(&any));
}

#[test]
fn a_soak_error_with_markup_is_escaped_in_the_soak_job_results_md_and_charts() {
    let mut j = soak_job();
    j.verdict.reasons = hostile_list();
    hostile_machine_struct(&mut j.machine);
    for s in j.servers.values_mut().filter(|s| s.error.is_some()) {
        s.error = Some(hostile());
    }
    let any = AnyJob::Soak(Box::new(j));
    let dir = cell_report::job_dir(&any);
    assert_markdown_safe("soak RESULTS.md", &dir.markdown);
    let failed = dir
        .charts
        .iter()
        .find(|(_, svg)| svg.contains("no samples"))
        .map(|(_, svg)| svg.as_str())
        .expect("the failed server's chart");
    assert_hostile_escaped("soak chart of a failed server", failed, &SVG_TAGS);
    assert_terminal_safe("cell run --suite soak", &cell_report::any_job_text(&any));
}

#[test]
fn hostile_text_in_a_merged_suite_cell_is_escaped_in_its_results_md_and_charts() {
    let c = hostile_suite_cell("2026-12-01", "local-093940", 0);
    let md = cell_report::cell_markdown(&c);
    assert_markdown_safe("suite cell RESULTS.md", &md);
    assert_markdown_safe("suite sections", &suite::cell_suites_markdown(&c));
    // Its charts show ids and figures only: the hostile text does not reach them.
    let charts = suite::soak_chart_files(&c);
    assert!(!charts.is_empty());
    for (name, svg) in charts {
        assert!(!svg.contains("alert(1)"), "{name:?}");
        assert_markup_safe(&format!("{name:?}"), &svg, &SVG_TAGS);
    }
}

// ---------------------------------------------------------------- gate

#[test]
fn a_gate_message_issues_no_annotation_but_its_own() {
    let g = hostile_gate();
    let out = cell_report::gate::annotations(&g, 10);
    let lines: Vec<&str> = out.lines().collect();
    // 8 failures and the FAIL verdict, the INCONCLUSIVE one, 8 notices.
    assert_eq!(lines.len(), 18, "{out}");
    for l in &lines {
        let rest = ["::error title=", "::warning title=", "::notice title="]
            .iter()
            .find_map(|k| l.strip_prefix(k))
            .unwrap_or_else(|| panic!("not an annotation: {l:?}"));
        let (title, message) = rest.split_once("::").expect("title::message");
        assert!(!title.contains([':', ',']), "{l:?}");
        assert!(!message.contains(['\r', '\n']), "{l:?}");
    }
    assert!(out.contains("%0A## injected"), "{out}");
}

#[test]
fn a_gate_failure_or_notice_with_markup_stays_on_its_line_in_the_step_summary() {
    let md = cell_report::gate::step_summary(&hostile_gate(), 1 << 20);
    assert_markdown_safe("step summary", &md);
}

#[test]
fn a_gate_message_issues_no_workflow_command_in_the_gate_lines() {
    assert_terminal_safe("cell gate", &cell_report::gate::human(&hostile_gate()));
}

// ---------------------------------------------------------------- report

#[test]
fn a_version_with_markup_is_escaped_in_the_report_html() {
    let files = hostile_report();
    assert_hostile_escaped("index.html", file(&files, report::INDEX_HTML), &HTML_TAGS);
}

#[test]
fn a_label_with_markup_is_escaped_in_the_report_markdown() {
    let files = hostile_report();
    assert_markdown_safe("README.md", file(&files, report::README_MD));
}

#[test]
fn a_reference_label_with_markup_is_escaped_in_the_phase_charts() {
    let files = hostile_report();
    for phase in ["mix", "fib"] {
        let path = report::chart_path(CELL, phase);
        assert_hostile_escaped(&path, file(&files, &path), &SVG_TAGS);
    }
}

#[test]
fn a_load_tool_with_markup_is_escaped_in_the_http_chart() {
    let files = hostile_report();
    let path = report::http_chart_path(cell_testkit::suites::CELL);
    let svg = file(&files, &path);
    assert!(svg.contains("data-tool=\"&lt;script&gt;"), "{svg}");
    assert_hostile_escaped(&path, svg, &SVG_TAGS);
}

#[test]
fn the_report_soak_charts_stay_well_formed_around_hostile_runs() {
    let files = hostile_report();
    let soak: Vec<&Output> = files.iter().filter(|f| f.path.contains("/soak-")).collect();
    assert!(!soak.is_empty());
    // Ids and figures only: the hostile text does not reach them.
    for f in soak {
        let svg = std::str::from_utf8(&f.bytes).unwrap();
        assert!(!svg.contains("alert(1)"), "{}", f.path);
        assert_markup_safe(&f.path, svg, &SVG_TAGS);
    }
}

/// Fifteen since `user_s` joined `wall_s` and `cpu_s`: a column per metric.
#[test]
fn the_samples_csv_holds_records_of_fifteen_fields_and_no_free_text() {
    let files = hostile_report();
    let csv = file(&files, report::SAMPLES_CSV);
    assert!(
        !csv.contains("alert(1)"),
        "free text is not a sample's field"
    );
    let records: Vec<&str> = csv.strip_suffix("\r\n").unwrap().split("\r\n").collect();
    assert!(records.len() > 1);
    for r in records {
        assert!(!r.contains(['"', '\n', '\r']), "{r:?}");
        assert_eq!(r.split(',').count(), 15, "{r:?}");
    }
}

#[test]
fn the_report_json_carries_hostile_text_as_data() {
    let files = hostile_report();
    let text = file(&files, report::REPORT_JSON);
    let v: Value = serde_json::from_str(text).unwrap();
    let mut all = Vec::new();
    strings(&v, &mut all);
    assert!(all.contains(&hostile()), "the hostile label, as it was");
    assert!(
        !text.contains('\r'),
        "line breaks inside strings are escaped"
    );
}

/// Every string in a JSON value.
fn strings(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) => out.push(s.clone()),
        Value::Array(a) => a.iter().for_each(|x| strings(x, out)),
        Value::Object(o) => o.values().for_each(|x| strings(x, out)),
        _ => {}
    }
}
