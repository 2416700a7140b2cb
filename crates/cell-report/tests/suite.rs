//! The http and soak suites as people read them, on small hand-built results with fixed
//! figures: the Markdown sections, the terminal text, the soak charts, and a cell report
//! whose newest run has both suites.

use std::collections::BTreeMap;
use std::path::Path;

use cell_report::history::load_history;
use cell_report::report::{self, Output, Report};
use cell_report::suite;
use cell_schema::{
    CellHttpServer, CellInfo, CellResult, CellSoakServer, Drift, HttpJobResult, HttpKind, HttpRun,
    HttpServerResult, HttpSettings, HttpToolResult, Latency, LoadReport, Machine, RssFit,
    ServerName, SoakJobResult, SoakKind, SoakSample, SoakServerResult, SoakSettings, Status,
    SuiteCost, TimeWait, ToolName, ToolVersion, ToolchainName, Verdict,
};
use serde_json::json;

const CELL: &str = "linux-x86_64-ubuntu-24.04";

fn machine() -> Machine {
    Machine {
        cpu_model: "AMD EPYC 7763 64-Core Processor".into(),
        nproc: 4,
        memory_bytes: 17_179_869_184,
        kernel: "Linux 6.8.0-1017-azure #20-Ubuntu SMP x86_64".into(),
        os_release: "Ubuntu 24.04.1 LTS".into(),
        runner_image: None,
        pinned_cpu: None,
    }
}

fn cell_info() -> CellInfo {
    serde_json::from_value(
        json!({ "id": CELL, "label": "ubuntu-24.04", "os": "linux", "arch": "x86_64" }),
    )
    .unwrap()
}

fn http_settings() -> HttpSettings {
    HttpSettings {
        tools: vec!["wrk".into(), "oha".into()],
        connections: 64,
        threads: 2,
        duration_s: 10.0,
        warmup_s: 2.0,
        runs: 3,
        keep_alive: true,
        server_cpu: Some(1),
        load_cpu: Some(2),
        seed: 7,
        startup_timeout_s: 10.0,
        stop_grace_s: 5.0,
        drain_timeout_s: 3.0,
    }
}

fn load(tool: &str, rps: f64, p99: f64) -> LoadReport {
    LoadReport {
        tool: tool.into(),
        version: "1.0".into(),
        duration_s: 10.0,
        requests: (rps * 10.0) as u64,
        errors: BTreeMap::new(),
        non_2xx: 0,
        rps,
        latency_ms: Latency {
            p50: p99 / 4.0,
            p90: p99 / 2.0,
            p99,
            p99_9: p99 * 2.0,
            max: p99 * 5.0,
        },
    }
}

/// Three runs of one tool, the last contaminated when `dirty`.
fn tool(name: &str, rps: [f64; 3], dirty: bool) -> HttpToolResult {
    let runs: Vec<HttpRun> = rps
        .iter()
        .enumerate()
        .map(|(i, r)| HttpRun {
            index: i as u32,
            seq: i as u32 * 2,
            startup_s: 0.05,
            time_wait: TimeWait {
                before: 0,
                after: 0,
                waited_s: 0.0,
            },
            load: load(name, *r, 1.25),
            server_cpu_s: 4.5,
            cpu_ms_per_1k: 45.0,
            peak_rss_kib: 5_325,
            load_cpu_s: 9.0,
            load_cpu_share: 0.9,
            other_cpu_share: 0.01,
            contaminated: if dirty && i == 2 {
                vec![
                    "other CPU 35% > 10%".into(),
                    "load generator\nsaturated".into(),
                ]
            } else {
                Vec::new()
            },
        })
        .collect();
    let clean = runs.iter().filter(|r| r.contaminated.is_empty()).count() as u32;
    HttpToolResult {
        runs,
        clean_runs: clean,
        rps: rps[1],
        rps_range: [rps[0], rps[1]],
        p99_ms: 1.234,
        cpu_ms_per_1k: 0.045,
        peak_rss_kib: 5_325,
        errors: 2,
        non_2xx: 0,
    }
}

fn http_servers() -> BTreeMap<ServerName, HttpServerResult> {
    let mut m = BTreeMap::new();
    m.insert(
        ServerName::new("rust"),
        HttpServerResult {
            toolchain: ToolchainName::new("rust"),
            build: None,
            check: Some("ok".into()),
            tools: [
                (
                    "wrk".to_owned(),
                    tool("wrk", [12_000.0, 12_345.4, 9_000.0], true),
                ),
                (
                    "oha".to_owned(),
                    tool("oha", [11_000.0, 11_500.0, 11_800.0], false),
                ),
            ]
            .into_iter()
            .collect(),
            error: None,
        },
    );
    m.insert(
        ServerName::new("go"),
        HttpServerResult {
            toolchain: ToolchainName::new("go"),
            build: None,
            check: None,
            tools: BTreeMap::new(),
            error: Some("build failed: exit 1\nmain.go:3: a|b undefined".into()),
        },
    );
    m
}

fn soak_settings() -> SoakSettings {
    SoakSettings {
        rate: 500,
        connections: 8,
        duration_s: 120.0,
        interval_s: 10.0,
        window_start_s: 30.0,
        minima_window_s: 30.0,
        drift_share: 0.05,
        min_r2: 0.8,
        fail_on_drift: true,
        concurrent: 2,
    }
}

/// Samples every 10 s over 120 s: RSS from `base` KiB growing `slope` KiB per sample, a small
/// sawtooth on top; CPU at 40% of one CPU; threads and fds steady with a bump.
fn samples(base: u64, slope: u64) -> Vec<SoakSample> {
    (0..=12u32)
        .map(|i| SoakSample {
            t_s: f64::from(i) * 10.0,
            rss_kib: base + u64::from(i) * slope + u64::from(i % 3) * 64,
            cpu_s: f64::from(i) * 4.0 + if i == 6 { 1.0 } else { 0.0 },
            threads: 4 + u32::from(i == 6),
            fds: 12 + i % 2,
        })
        .collect()
}

fn soak_servers() -> BTreeMap<ServerName, SoakServerResult> {
    let mut m = BTreeMap::new();
    m.insert(
        ServerName::new("rust"),
        SoakServerResult {
            toolchain: ToolchainName::new("rust"),
            build: None,
            startup_s: Some(0.05),
            load: Some(LoadReport {
                errors: [("timeout".to_owned(), 1)].into_iter().collect(),
                ..load("oha", 500.0, 2.5)
            }),
            samples: samples(5_120, 2),
            fit: Some(RssFit {
                points: 10,
                slope_kib_per_min: 12.3,
                r2: 0.12,
                projected_kib: 18.45,
                mean_kib: 5_192.6,
                projected_share: 0.0036,
            }),
            fit_minima: Some(RssFit {
                points: 3,
                slope_kib_per_min: 1.2,
                r2: 0.05,
                projected_kib: 1.8,
                mean_kib: 5_180.0,
                projected_share: 0.0003,
            }),
            verdict: Drift::Flat,
            peak_rss_kib: 5_272,
            cpu_ms_per_1k: Some(0.8),
            error: None,
        },
    );
    m.insert(
        ServerName::new("python"),
        SoakServerResult {
            toolchain: ToolchainName::new("python"),
            build: None,
            startup_s: Some(0.4),
            load: Some(load("oha", 500.0, 4.0)),
            samples: samples(20_480, 800),
            fit: Some(RssFit {
                points: 10,
                slope_kib_per_min: 4_800.0,
                r2: 0.99,
                projected_kib: 7_200.0,
                mean_kib: 26_537.6,
                projected_share: 0.2713,
            }),
            fit_minima: Some(RssFit {
                points: 3,
                slope_kib_per_min: 4_790.0,
                r2: 0.98,
                projected_kib: 7_185.0,
                mean_kib: 27_900.0,
                projected_share: 0.2575,
            }),
            verdict: Drift::Drifted,
            peak_rss_kib: 30_208,
            cpu_ms_per_1k: Some(2.1),
            error: None,
        },
    );
    m.insert(
        ServerName::new("c"),
        SoakServerResult {
            toolchain: ToolchainName::new("clang"),
            build: None,
            startup_s: None,
            load: None,
            samples: Vec::new(),
            fit: None,
            fit_minima: None,
            verdict: Drift::Unknown,
            peak_rss_kib: 0,
            cpu_ms_per_1k: None,
            error: Some("no 200 within 10 s".into()),
        },
    );
    m
}

fn versions() -> BTreeMap<ToolName, ToolVersion> {
    [(
        ToolName::new("wrk"),
        ToolVersion {
            path: "/usr/bin/wrk".into(),
            resolved: "/usr/bin/wrk".into(),
            argv: vec!["/usr/bin/wrk".into(), "--version".into()],
            printed: "wrk 4.2.0 [epoll]\nCopyright (C) 2012 Will Glozer".into(),
        },
    )]
    .into_iter()
    .collect()
}

fn verdict() -> Verdict {
    Verdict {
        status: Status::Ok,
        reasons: Vec::new(),
    }
}

fn cost() -> SuiteCost {
    SuiteCost {
        build_s: 20.0,
        measure_s: 100.0,
        total_s: 121.0,
    }
}

fn http_job() -> HttpJobResult {
    HttpJobResult {
        schema_version: 1,
        kind: HttpKind::Http,
        job: "http".into(),
        cell: cell_info(),
        machine: machine(),
        pins: BTreeMap::new(),
        versions: versions(),
        settings: http_settings(),
        servers: http_servers(),
        verdict: Verdict {
            status: Status::Failed,
            reasons: vec!["go: build failed".into()],
        },
        cost: cost(),
        started_at: "2026-03-15T10:00:00Z".into(),
        github: None,
    }
}

fn soak_job() -> SoakJobResult {
    SoakJobResult {
        schema_version: 1,
        kind: SoakKind::Soak,
        job: "soak".into(),
        cell: cell_info(),
        machine: machine(),
        pins: BTreeMap::new(),
        versions: BTreeMap::new(),
        settings: soak_settings(),
        servers: soak_servers(),
        verdict: verdict(),
        cost: cost(),
        started_at: "2026-03-15T10:00:00Z".into(),
        github: None,
    }
}

/// A merged cell of the suites only (no workload job), run `k` of the history: the rust
/// server speeds up a little each run.
fn suite_cell(date: &str, id: &str, k: u32) -> CellResult {
    let mut cell: CellResult = serde_json::from_value(json!({
        "schema_version": 1, "kind": "cell",
        "run": { "id": id, "date": date, "source": "github", "head_sha": null, "attempt": 1, "partial": false },
        "cell": { "id": CELL, "label": "ubuntu-24.04", "os": "linux", "arch": "x86_64" },
        "jobs": {}, "rows": {}, "skipped": [], "missing": [], "failures": [],
        "verdict": { "status": "ok", "reasons": [] },
        "cost": { "jobs_s": {}, "total_s": 0.0 }
    }))
    .unwrap();
    for (name, mut r) in http_servers() {
        for t in r.tools.values_mut() {
            let up = f64::from(k) * 250.0;
            t.rps += up;
            t.rps_range = [t.rps_range[0] + up, t.rps_range[1] + up];
        }
        cell.http.insert(
            name.clone(),
            CellHttpServer {
                job: format!("http-{name}"),
                machine: machine(),
                settings: http_settings(),
                pins: BTreeMap::new(),
                versions: versions(),
                result: r,
            },
        );
    }
    for (name, r) in soak_servers() {
        cell.soak.insert(
            name.clone(),
            CellSoakServer {
                job: "soak".into(),
                machine: machine(),
                settings: soak_settings(),
                pins: BTreeMap::new(),
                versions: versions(),
                result: r,
            },
        );
    }
    cell
}

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
    let wrk = md.find("| `rust` | rust | wrk |").expect("wrk row");
    let oha = md.find("| `rust` | rust | oha |").expect("oha row");
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
    assert!(md.contains("- `rust` / wrk run 2: other CPU 35% \\> 10%; load generator saturated"));
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
    assert!(text.contains("rust / wrk run 2 contaminated"));
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
    let names: Vec<&str> = files.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(
        names,
        ["soak/python.svg", "soak/rust.svg", "soak/overlay.svg"]
    );
    for (path, svg) in &files {
        assert_balanced(svg);
        assert!(md.contains(&format!("]({path})")), "{path} linked");
    }
    insta::assert_snapshot!("cell_markdown", md);
    let text = cell_report::text_summary(std::slice::from_ref(&cell));
    assert!(
        text.contains("http rust (rust): wrk 12345 req/s, oha 11500 req/s"),
        "{text}"
    );
    assert!(text.contains("http go (go): FAILED: build failed"));
    assert!(text.contains("soak python (python): drifted, RSS slope +4800.0 KiB/min (R² 0.990)"));
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
    let r = Report::build(&load_history(tmp.path()).unwrap());
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
        md.contains("| `rust` | rust | wrk | **12595** |"),
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

/// Scales every req/s figure of the cell's http servers.
fn scale_rps(cell: &mut CellResult, f: f64) {
    for s in cell.http.values_mut() {
        for t in s.result.tools.values_mut() {
            t.rps *= f;
            t.rps_range = [t.rps_range[0] * f, t.rps_range[1] * f];
            for r in &mut t.runs {
                r.load.rps *= f;
            }
        }
    }
}

#[test]
fn the_suite_gate_passes_a_steady_server_and_fails_a_broken_one_and_a_leak() {
    let old = suite_cell("2026-11-01", "1", 0);
    let new = suite_cell("2026-11-02", "2", 1);
    let f = cell_report::gate_suite::gate_suites(&new, &[("2026-11-01-1", &old)], 0.2);
    let rust_oha = f
        .verdicts
        .iter()
        .find(|v| v.row.as_str() == "http-rust" && v.phase.as_str() == "oha")
        .unwrap();
    assert_eq!(
        rust_oha.status,
        cell_schema::GateStatus::Pass,
        "{}",
        rust_oha.message
    );
    assert!(
        rust_oha.message.contains("in 2026-11-01-1; band"),
        "{}",
        rust_oha.message
    );
    // A server that failed is a failure, whatever its baseline; so is a drift when the
    // settings say so.
    assert!(
        f.failures
            .iter()
            .any(|m| m.starts_with("http server go (job http-go): build failed")),
        "{:?}",
        f.failures
    );
    assert!(
        f.failures
            .iter()
            .any(|m| m.starts_with("soak server python drifted")),
        "{:?}",
        f.failures
    );
    // First run of a server and tool: a notice, no verdict.
    let none = cell_report::gate_suite::gate_suites(&new, &[], 0.2);
    assert!(none.verdicts.is_empty());
    assert!(
        none.notices
            .iter()
            .any(|n| n.contains("first run, baseline recorded"))
    );
}

#[test]
fn a_stored_baseline_alone_cannot_fail_an_http_run() {
    let old = suite_cell("2026-11-01", "1", 0);
    let mut new = suite_cell("2026-11-02", "2", 0);
    scale_rps(&mut new, 0.5);
    let f = cell_report::gate_suite::gate_suites(&new, &[("2026-11-01-1", &old)], 0.2);
    let v = f
        .verdicts
        .iter()
        .find(|v| v.row.as_str() == "http-rust" && v.phase.as_str() == "oha")
        .unwrap();
    assert_eq!(v.status, cell_schema::GateStatus::Inconclusive);
    assert!(
        v.message.starts_with("INCONCLUSIVE") && v.message.contains("stored baseline"),
        "{}",
        v.message
    );
    assert!(
        f.verdicts
            .iter()
            .all(|v| v.status != cell_schema::GateStatus::Fail)
    );
}

#[test]
fn a_drift_is_a_notice_when_the_settings_do_not_fail_it_and_p99_is_read_at_2x() {
    let old = suite_cell("2026-11-01", "1", 0);
    let mut new = suite_cell("2026-11-02", "2", 0);
    for s in new.soak.values_mut() {
        s.settings.fail_on_drift = false;
    }
    for s in new.http.values_mut() {
        for t in s.result.tools.values_mut() {
            t.p99_ms *= 3.0;
        }
    }
    let f = cell_report::gate_suite::gate_suites(&new, &[("2026-11-01-1", &old)], 0.2);
    assert!(
        !f.failures.iter().any(|m| m.contains("drifted")),
        "{:?}",
        f.failures
    );
    assert!(
        f.notices
            .iter()
            .any(|m| m.starts_with("soak server python drifted"))
    );
    assert!(
        f.notices
            .iter()
            .any(|m| m.contains("p99 3.70 ms vs 1.23 ms") && m.contains("(3.0×)")),
        "{:?}",
        f.notices
    );
}

#[test]
fn snapshot_every_file_of_the_suite_report() {
    let tmp = tempfile::tempdir().unwrap();
    history(tmp.path());
    let r = Report::build(&load_history(tmp.path()).unwrap());
    for f in report::render(&r) {
        insta::assert_snapshot!(
            format!("report_{}", f.path.replace('/', "_")),
            std::str::from_utf8(&f.bytes).unwrap()
        );
    }
}
