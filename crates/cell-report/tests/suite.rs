//! The http and soak suites as people read them, on small hand-built results with fixed
//! figures: the Markdown sections, the terminal text, the soak charts, and a cell report
//! whose newest run has both suites.

use std::collections::BTreeMap;
use std::path::Path;

use cell_report::report::{self, Output, Report, ReportOptions};
use cell_report::suite;
use cell_schema::ServerName;
use cell_schema::store::{ChartName, load_history};
use cell_testkit::suites::*;

/// Every start tag has its end tag, in order; self-closing tags stand alone.
fn assert_balanced(xml: &str) {
    let mut stack: Vec<String> = Vec::new();
    let mut rest = xml;
    while let Some(start) = rest.find('<') {
        let end = rest[start..].find('>').expect("an unclosed tag") + start;
        let tag = &rest[start + 1..end];
        rest = &rest[end + 1..];
        if tag.starts_with('!') || tag.starts_with('?') || tag.ends_with('/') {
            continue;
        }
        let name: String = tag
            .trim_start_matches('/')
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
            .collect();
        if ["meta", "img"].contains(&name.as_str()) {
            continue;
        }
        if tag.starts_with('/') {
            assert_eq!(stack.pop().as_deref(), Some(name.as_str()), "</{name}>");
        } else {
            stack.push(name);
        }
    }
    assert!(stack.is_empty(), "unclosed: {stack:?}");
}

#[test]
fn http_markdown_has_a_row_per_server_and_tool_in_settings_order() {
    let md = suite::http_markdown(&http_servers(), &http_settings());
    assert!(md.starts_with("## HTTP\n"), "{md}");
    let wrk = md
        .find("| `rust` | rust | runtime-managed | keep-alive | wrk |")
        .expect("wrk row");
    let oha = md
        .find("| `rust` | rust | runtime-managed | keep-alive | oha |")
        .expect("oha row");
    assert!(md.contains("**plaintext**: `GET /`"), "{md}");
    assert!(wrk < oha, "tools in the settings' order");
    assert!(md.contains("**12345**"), "median req/s");
    assert!(md.contains("12000–12345"), "range");
    assert!(md.contains("| 2/3 |"), "clean/all");
    // A failure is one row, its message on one line, `|` escaped.
    let failed = md.lines().find(|l| l.starts_with("| `go`")).unwrap();
    assert!(
        failed.contains("**FAILED**: build failed: exit 1 main.go:3: a\\|b undefined"),
        "{failed}"
    );
    assert_eq!(md.matches("| `go`").count(), 1);
    assert!(md.contains(
        "- `rust` / plaintext over keep-alive under wrk run 2: other CPU 35% \\> 10%; load generator saturated"
    ));
    assert!(md.contains("server pinned to CPU 1, load generator pinned to CPU 2"));
}

#[test]
fn snapshot_http_markdown() {
    insta::assert_snapshot!(
        "http_markdown",
        suite::http_markdown(&http_servers(), &http_settings())
    );
}

#[test]
fn snapshot_soak_markdown() {
    insta::assert_snapshot!(
        "soak_markdown",
        suite::soak_markdown(&soak_servers(), &soak_settings(), Some("soak/"))
    );
}

#[test]
fn soak_markdown_bolds_a_drift_and_links_only_charts_that_exist() {
    let md = suite::soak_markdown(&soak_servers(), &soak_settings(), Some("soak/"));
    assert!(md.contains("| `python` | python | **drifted** |"), "{md}");
    assert!(md.contains("| `rust` | rust | flat |"));
    assert!(md.contains("(soak/overlay.svg)") && md.contains("(soak/rust.svg)"));
    assert!(!md.contains("soak/c.svg"), "no samples, no chart");
    assert!(md.contains("**FAILED**: no 200 within 10 s"));
    let bare = suite::soak_markdown(&soak_servers(), &soak_settings(), None);
    assert!(!bare.contains(".svg"));
}

#[test]
fn each_soaked_server_has_its_verdict_line_and_its_load_row() {
    let md = suite::soak_markdown(&soak_servers(), &soak_settings(), None);
    for line in [
        "\n• python: RSS 22880 -> 28544 KiB over minutes 0.5-2 (+24.8%), slope +4800.0 KiB/min (R^2 0.99), peak 30208 KiB: drifted\n",
        "\n• rust: RSS 5126 -> 5144 KiB over minutes 0.5-2 (+0.4%), slope +12.3 KiB/min (R^2 0.12), peak 5272 KiB: flat\n",
        "\n• c: failed: no 200 within 10 s\n",
        "| server | requests | req/s achieved | req/s offered | p50 ms | p99 ms | errors | non-2xx | start-up s | CPU ms / 1k req |",
        "| `rust` | 5000 | 500.0 | 500 | 0.62 | 2.50 | 1 | 0 | 0.050 | 0.800 |",
        // Failed before any load: nothing offered, nothing achieved.
        "| `c` | – | – | – | – | – | – | – | – | – |",
    ] {
        assert!(md.contains(line), "{line} in {md}");
    }
    // A name from the results is escaped where it reaches Markdown.
    let mut servers = soak_servers();
    let rust = servers.remove(&ServerName::new("rust")).unwrap();
    servers.insert(ServerName::new("my_rust"), rust);
    let md = suite::soak_markdown(&servers, &soak_settings(), None);
    assert!(md.contains("\n• my\\_rust: RSS 5126 -> 5144 KiB"), "{md}");
}

#[test]
fn a_churn_soak_is_named_so_wherever_its_settings_are() {
    let mut job = soak_job();
    assert!(suite::soak_job_text(&job).contains("8 connections, keep-alive, for"));
    job.settings.config.keep_alive = false;
    let md = suite::soak_markdown(&job.servers, &job.settings, None);
    assert!(
        md.contains("over 8 connections, churn (no keep-alive), for 120 s"),
        "{md}"
    );
    let text = suite::soak_job_text(&job);
    assert!(
        text.contains("connections, churn (no keep-alive), for"),
        "{text}"
    );
    // Written only when off, so an older file reads as kept-alive.
    let json = cell_schema::to_json(&job);
    assert!(json.contains("\"keep_alive\": false"), "{json}");
    job.settings.config.keep_alive = true;
    assert!(!cell_schema::to_json(&job).contains("keep_alive"));
}

#[test]
fn soak_svg_is_xml_with_three_panels_a_fit_and_a_caption() {
    let servers = soak_servers();
    let svg = suite::soak_svg(&ServerName::new("rust"), &servers["rust"], &soak_settings());
    assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"880\""));
    assert!(svg.contains("viewBox=\"0 0 880 "));
    assert!(svg.contains("<title>soak · rust (rust)</title>"));
    assert_balanced(&svg);
    for class in ["panel rss", "panel cpu", "panel counts"] {
        assert!(svg.contains(&format!("<g class=\"{class}\">")), "{class}");
    }
    for unit in ["RSS (MiB)", "CPU (% of one CPU)", "threads, fds (count)"] {
        assert!(svg.contains(&format!(">{unit}</text>")), "{unit}");
    }
    assert!(svg.contains("time since the load started (s)"));
    assert!(svg.contains("class=\"fit\""));
    assert!(svg.contains("class=\"before-window\""));
    assert!(svg.contains("RSS slope +12.3 KiB/min, R² 0.120"));
    assert_eq!(
        svg,
        suite::soak_svg(&ServerName::new("rust"), &servers["rust"], &soak_settings()),
        "same input, same bytes"
    );
    insta::assert_snapshot!("soak_svg", svg);
}

#[test]
fn a_soak_without_samples_says_so() {
    let servers = soak_servers();
    let svg = suite::soak_svg(&ServerName::new("c"), &servers["c"], &soak_settings());
    assert_balanced(&svg);
    assert!(svg.contains("no samples: no 200 within 10 s"), "{svg}");
    let none = BTreeMap::from([(ServerName::new("c"), servers["c"].clone())]);
    let overlay = suite::soak_overlay_svg(&none, &soak_settings());
    assert_balanced(&overlay);
    assert!(overlay.contains(">no samples</text>"));
}

#[test]
fn the_overlay_has_a_line_and_a_legend_entry_per_server_with_samples() {
    let svg = suite::soak_overlay_svg(&soak_servers(), &soak_settings());
    assert_balanced(&svg);
    assert_eq!(svg.matches("<g class=\"series\"").count(), 2);
    assert!(
        svg.contains(">python (drifted, +4800.0 KiB/min)</text>"),
        "{svg}"
    );
    assert!(svg.contains(">rust (flat, +12.3 KiB/min)</text>"));
}

#[test]
fn http_job_text_gives_each_figure_with_its_unit() {
    let text = suite::http_job_text(&http_job());
    for figure in [
        "12345 req/s",
        "p99 1.23 ms",
        "0.045 CPU ms/1k",
        "5.2 MiB",
        "11500 req/s",
    ] {
        assert!(text.contains(figure), "{figure} in\n{text}");
    }
    assert!(text.contains("go: FAILED: build failed: exit 1 main.go:3: a|b undefined"));
    assert!(text.contains("rust / plaintext over keep-alive under wrk run 2 contaminated"));
    assert!(text.starts_with("linux-x86_64-ubuntu-24.04 / http: FAILED\n  go: build failed\n"));
    insta::assert_snapshot!("http_job_text", text);
}

#[test]
fn soak_job_text_gives_verdict_slope_r2_and_peak() {
    let text = suite::soak_job_text(&soak_job());
    let python = text.lines().find(|l| l.contains("python")).unwrap();
    for figure in ["drifted", "+4800.0 KiB/min", "0.990", "29.5 MiB"] {
        assert!(python.contains(figure), "{figure} in {python}");
    }
    assert!(text.contains("c: FAILED: no 200 within 10 s"));
    insta::assert_snapshot!("soak_job_text", text);
}

#[test]
fn job_markdown_has_the_header_the_section_and_the_versions() {
    let md = suite::http_job_markdown(&http_job());
    assert!(md.starts_with("# cell run: `http` on `linux-x86_64-ubuntu-24.04`\n"));
    assert!(md.contains("Verdict: **FAILED**\n- go: build failed\n"));
    assert!(md.contains("Machine: AMD EPYC 7763 64-Core Processor (4 logical CPUs)"));
    assert!(md.contains("## HTTP\n"));
    assert!(md.contains("- `wrk` (/usr/bin/wrk): wrk 4.2.0 [epoll]\n"));
    let md = suite::soak_job_markdown(&soak_job());
    assert!(md.contains("## Soak\n") && !md.contains(".svg"));
}

#[test]
fn a_merged_cell_gets_both_sections_and_its_chart_files() {
    let cell = suite_cell("2026-03-15", "9003", 0);
    let md = cell_report::cell_markdown(&cell);
    assert!(md.contains("## HTTP\n") && md.contains("## Soak\n"), "{md}");
    assert!(!md.contains("## Jobs"), "no workload job, no jobs table");
    assert!(md.contains("![soak: RSS of every server over time](soak/overlay.svg)"));
    let files = suite::soak_chart_files(&cell);
    let names: Vec<String> = files.keys().map(ChartName::path).collect();
    assert_eq!(
        names,
        ["soak/python.svg", "soak/rust.svg", "soak/overlay.svg"]
    );
    for (chart, svg) in &files {
        let path = chart.path();
        assert_balanced(svg);
        assert!(md.contains(&format!("]({path})")), "{path} linked");
    }
    insta::assert_snapshot!("cell_markdown", md);
    let text = cell_report::text_summary(std::slice::from_ref(&cell));
    assert!(
        text.contains(
            "http rust (rust): plaintext over keep-alive: wrk 12345 req/s, oha 11500 req/s"
        ),
        "{text}"
    );
    assert!(text.contains("http go (go): FAILED: build failed"));
    // The verdict line, its ends the minima of the first and last 30 s of the fit window.
    assert!(
        text.contains("• python: RSS 22880 -> 28544 KiB over minutes 0.5-2 (+24.8%), slope +4800.0 KiB/min (R^2 0.99), peak 30208 KiB: drifted\n"),
        "{text}"
    );
    assert!(text.contains("• c: failed: no 200 within 10 s\n"), "{text}");
}

#[test]
fn a_workload_cell_is_untouched() {
    let mut cell = suite_cell("2026-03-15", "9003", 0);
    cell.http.clear();
    cell.soak.clear();
    assert!(suite::soak_chart_files(&cell).is_empty());
    assert_eq!(suite::cell_suites_markdown(&cell), "");
    let json = cell_schema::to_json(&cell);
    assert!(!json.contains("\"http\"") && !json.contains("\"soak\""));
}

fn history(dir: &Path) {
    for (k, (date, id)) in [("2026-03-08", "9002"), ("2026-03-15", "9003")]
        .into_iter()
        .enumerate()
    {
        let d = dir.join(format!("{date}-{id}")).join(CELL);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(
            d.join("results.json"),
            cell_schema::to_json(&suite_cell(date, id, k as u32)),
        )
        .unwrap();
    }
}

fn file<'a>(files: &'a [Output], path: &str) -> &'a str {
    let f = files
        .iter()
        .find(|f| f.path == path)
        .unwrap_or_else(|| panic!("no {path}"));
    std::str::from_utf8(&f.bytes).unwrap()
}

#[test]
fn the_report_shows_the_newest_suites_with_their_charts() {
    let tmp = tempfile::tempdir().unwrap();
    history(tmp.path());
    let r = Report::build(
        &load_history(tmp.path()).unwrap().runs,
        &ReportOptions::EVERYTHING,
    );
    let files = report::render(&r);
    let paths: Vec<&str> = files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "charts/linux-x86_64-ubuntu-24.04/http-rps.svg",
            "charts/linux-x86_64-ubuntu-24.04/soak-python.svg",
            "charts/linux-x86_64-ubuntu-24.04/soak-rust.svg",
            "charts/linux-x86_64-ubuntu-24.04/soak-overlay.svg",
            "index.html",
            "README.md",
            "samples.csv",
            "footprint.csv",
            "raw.csv",
            "summary.csv",
            "report.json",
        ]
    );
    for f in files.iter().filter(|f| f.path.starts_with("charts/")) {
        assert_balanced(std::str::from_utf8(&f.bytes).unwrap());
    }
    let http = file(&files, "charts/linux-x86_64-ubuntu-24.04/http-rps.svg");
    assert_eq!(http.matches("class=\"line\"").count(), 2, "rust × wrk, oha");
    assert!(http.contains(">rust · wrk</text>") && http.contains(">rust · oha</text>"));
    let md = file(&files, "README.md");
    let html = file(&files, "index.html");
    assert_balanced(html);
    for path in paths.iter().filter(|p| p.starts_with("charts/")) {
        assert!(
            md.contains(&format!("]({path})")),
            "README.md embeds {path}"
        );
        assert!(
            html.contains(&format!("src=\"{path}\"")),
            "index.html embeds {path}"
        );
    }
    assert!(md.contains("### linux-x86\\_64-ubuntu-24.04 · HTTP in 2026-03-15-9003"));
    assert!(md.contains("Jobs `http-go`, `http-rust` on AMD EPYC"));
    assert!(
        md.contains("| `rust` | rust | runtime-managed | keep-alive | wrk | **12595** |"),
        "newest run's figures"
    );
    assert!(md.contains("| `python` | python | **drifted** |"));
    assert!(!md.contains("Ratios are to"), "no workload, no ratios");
    let json: serde_json::Value = serde_json::from_str(file(&files, "report.json")).unwrap();
    let cell = &json["cells"][CELL];
    assert_eq!(cell["http"][0]["server"], "rust");
    assert_eq!(cell["http"][0]["tool"], "wrk", "settings order");
    assert_eq!(cell["http"][0]["points"].as_array().unwrap().len(), 2);
    assert!(cell["newest"]["http"]["rust"]["tools"]["wrk"]["rps"].is_number());
    let py = &cell["newest"]["soak"]["python"];
    assert_eq!(py["verdict"], "drifted");
    assert_eq!(py["samples"], 13, "a count, not the samples");
    assert!(py["fit"]["slope_kib_per_min"].is_number());
    insta::assert_snapshot!("report_readme", md);
}

#[test]
fn snapshot_every_file_of_the_suite_report() {
    let tmp = tempfile::tempdir().unwrap();
    history(tmp.path());
    let r = Report::build(
        &load_history(tmp.path()).unwrap().runs,
        &ReportOptions::EVERYTHING,
    );
    for f in report::render(&r) {
        insta::assert_snapshot!(
            format!("report_{}", f.path.replace('/', "_")),
            std::str::from_utf8(&f.bytes).unwrap()
        );
    }
}

#[test]
fn raw_and_summary_csv_name_the_run_the_seed_and_the_commit_of_every_record() {
    let tmp = tempfile::tempdir().unwrap();
    history(tmp.path());
    let runs = load_history(tmp.path()).unwrap().runs;
    let r = Report::build(&runs, &ReportOptions::EVERYTHING);
    let files = report::render(&r);
    let raw = file(&files, "raw.csv");
    let summary = file(&files, "summary.csv");
    let head: Vec<&str> = raw.lines().next().unwrap().split(',').collect();
    assert_eq!(
        &head[..13],
        [
            "suite",
            "run",
            "session",
            "date",
            "commit",
            "dirty",
            "subject_version",
            "seed",
            "cell",
            "job",
            "server",
            "model",
            "mode"
        ]
    );
    // Every run of the history: rust under wrk and oha (3 runs each), and two soaks (the
    // failed one has no load), per run of the history.
    let http_raw = raw.lines().filter(|l| l.starts_with("http,")).count();
    assert_eq!(http_raw, runs.len() * 2 * 3, "{raw}");
    let http_summary: Vec<&str> = summary.lines().filter(|l| l.starts_with("http,")).collect();
    assert_eq!(http_summary.len(), runs.len() * 2, "{summary}");
    let first: Vec<&str> = http_summary[0].split(',').collect();
    assert_eq!(first[7], "7", "the session's seed");
    assert_eq!(
        first[11], "runtime-managed",
        "the server's concurrency model"
    );
    assert_eq!(&first[13..16], ["plaintext", "keep-alive", "wrk"]);
    assert!(raw.ends_with("\r\n") && summary.ends_with("\r\n"));
}
