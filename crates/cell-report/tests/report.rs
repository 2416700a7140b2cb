//! The report pipeline on a small synthetic history with fixed figures (no timing): the data
//! model, the SVG charts, the CSV, and snapshots of both pages.

use std::path::Path;

use cell_report::report::{self, Output, Report, ReportOptions};
use cell_schema::store::load_history;
use serde_json::{Value, json};

const LINUX: &str = "linux-x86_64-ubuntu-24.04";
const MAC: &str = "macos-aarch64-macos-15";

/// A ratio with its interval.
fn ci(median: f64, half: f64) -> Value {
    json!({ "n": 3, "median": median, "lo": median - half, "hi": median + half, "level": 0.75 })
}

/// A row timed on `phases` (`(phase, cpu ratio, wall ratio, CI half-width)`), its reference
/// taking `base` seconds: a warm-up round and three measured rounds each.
fn row(
    label: &str,
    toolchain: &str,
    role: &str,
    clock: &str,
    tool: &str,
    phases: &[(&str, f64, f64, f64)],
) -> Value {
    let base = 0.01;
    let mut ps = serde_json::Map::new();
    for (i, (phase, cpu, wall, half)) in phases.iter().enumerate() {
        let runs: Vec<Value> = (0..4u32)
            .map(|round| {
                let k = 1.0 + f64::from(round) * 0.001 + i as f64 * 0.01;
                json!({
                    "round": round, "seq": round % 2, "warmup": round == 0,
                    "wall_s": base * wall * k, "cpu_s": base * cpu * k,
                    "maxrss_kib": 1024 + round, "ok": true, "paired_with": null
                })
            })
            .collect();
        let stat = |m: f64| json!({ "n": 3, "min": m * 0.99, "median": m, "max": m * 1.01, "mad": m * 0.005 });
        ps.insert(
            (*phase).to_owned(),
            json!({
                "expected": "42\n", "answer_ok": true, "wrong": null, "runs": runs,
                "stats": { "cpu": stat(base * cpu), "wall": stat(base * wall) },
                "ratio": { "cpu": ci(*cpu, *half), "wall": ci(*wall, *half) },
                "contention": 1.01
            }),
        );
    }
    json!({
        "label": label, "toolchain": toolchain, "role": role, "verdict_clock": clock,
        "build": {
            "argv": [format!("/usr/bin/{tool}"), "-o", "/w/bin/x", "/w/src/main"],
            "cwd": "/w", "compile_s": 0.5, "binary": "/w/bin/x", "binary_bytes": 16384,
            "sha256": "0".repeat(64)
        },
        "phases": ps
    })
}

fn version(tool: &str, printed: &str) -> Value {
    json!({ "path": format!("/usr/bin/{tool}"), "resolved": format!("/usr/lib/{tool}"), "argv": [format!("/usr/bin/{tool}"), "--version"], "printed": printed })
}

fn job(cell_os: &str, versions: &Value, status: &str, phases: &[&str]) -> Value {
    let unit: Vec<(&str, f64, f64, f64)> = phases.iter().map(|p| (*p, 1.0, 1.0, 0.0)).collect();
    let control: Vec<(&str, f64, f64, f64)> =
        phases.iter().map(|p| (*p, 1.001, 0.999, 0.004)).collect();
    json!({
        "attempt": 1,
        "machine": {
            "cpu_model": if cell_os == "linux" { "AMD EPYC 7763 64-Core Processor" } else { "Apple M1 (Virtual)" },
            "nproc": 4, "memory_bytes": 17_179_869_184_u64,
            "kernel": if cell_os == "linux" { "Linux 6.8.0-1017-azure #20-Ubuntu SMP x86_64" } else { "Darwin 24.1.0 arm64" },
            "os_release": if cell_os == "linux" { "Ubuntu 24.04.1 LTS" } else { "macOS 15.1" },
            "runner_image": { "os": if cell_os == "linux" { "ubuntu24" } else { "macos15" }, "version": "20250105.1.0" },
            "pinned_cpu": 1
        },
        "pins": {},
        "versions": versions,
        "subject": null,
        "protocol": {
            "reference": "c-O2", "control": "c-O2-copy", "phases": phases,
            "warmup_rounds": 1, "measured_rounds": 3, "min_rounds": 3, "max_rounds": 3,
            "step_rounds": 1, "adaptive": false, "stopped": "fixed", "seed": 7,
            "rows_per_reference": 3, "tolerance": 0.02, "ci_target": 0.007, "ci_level": 0.95,
            "contention_max": 1.1, "time_cap_s": 900.0, "default_clock": "cpu"
        },
        "reference": row("clang -O2", "clang", "reference", "cpu", "clang", &unit),
        "control": row("clang -O2", "clang", "control", "cpu", "clang", &control),
        "tooth": null, "contention": null,
        "verdict": { "status": status, "reasons": if status == "ok" { json!([]) } else { json!(["the A/A control on fib is 1.0210 (CI 1.0110–1.0310)"]) } },
        "cost": { "probe_s": 0.1, "build_s": 2.0, "timing_s": 10.0, "total_s": 12.1 }
    })
}

/// Run `k` (0-based) of the Linux cell: c-O0 slows down a little each run; go keeps still.
fn linux_cell(date: &str, id: &str, k: u32) -> Value {
    let k = f64::from(k);
    let phases = ["mix", "fib"];
    json!({
        "schema_version": 1, "kind": "cell",
        "run": { "id": id, "date": date, "source": "github", "head_sha": "0123456789abcdef0123456789abcdef01234567", "attempt": 1, "partial": false },
        "cell": { "id": LINUX, "label": "ubuntu-24.04", "os": "linux", "arch": "x86_64" },
        "jobs": {
            "clang": job("linux", &json!({ "clang": version("clang", "Ubuntu clang version 18.1.3 (1ubuntu1)\nTarget: x86_64-pc-linux-gnu") }), "ok", &phases),
            "go": job("linux", &json!({
                "clang": version("clang", "Ubuntu clang version 18.1.3 (1ubuntu1)"),
                "go": version("go", "go version go1.23.4 linux/amd64")
            }), if k > 1.5 { "noisy" } else { "ok" }, &phases)
        },
        "rows": {
            "c-O0": with_job("clang", row("clang -O0 \"debug\" <slow> & co", "clang", "row", "cpu", "clang", &[("mix", 3.1 + 0.1 * k, 3.2, 0.05), ("fib", 2.4, 2.45 + 0.01 * k, 0.04)])),
            "c-O2": with_job("clang", row("clang -O2", "clang", "reference", "cpu", "clang", &[("mix", 1.0, 1.0, 0.0), ("fib", 1.0, 1.0, 0.0)])),
            "go": with_job("go", row("go build", "go", "row", "wall", "go", &[("mix", 1.35, 1.21 - 0.01 * k, 0.03), ("fib", 1.62, 1.48, 0.02)]))
        },
        "skipped": [], "missing": [], "failures": [],
        "verdict": { "status": if k > 1.5 { "noisy" } else { "ok" }, "reasons": if k > 1.5 { json!(["go: the A/A control on fib is 1.0210 (CI 1.0110–1.0310)"]) } else { json!([]) } },
        "cost": { "jobs_s": { "clang": 12.1, "go": 12.1 }, "total_s": 24.2 }
    })
}

/// The macOS cell, only in the newest run: one row, one run, so error bars.
fn mac_cell(date: &str, id: &str) -> Value {
    json!({
        "schema_version": 1, "kind": "cell",
        "run": { "id": id, "date": date, "source": "github", "head_sha": null, "attempt": 1, "partial": true },
        "cell": { "id": MAC, "label": "macos-15", "os": "macos", "arch": "aarch64" },
        "jobs": { "clang": job("macos", &json!({ "clang": version("clang", "Apple clang version 16.0.0") }), "ok", &["mix"]) },
        "rows": { "c-O0": with_job("clang", row("clang -O0", "clang", "row", "cpu", "clang", &[("mix", 2.05, 2.07, 0.06)])) },
        "skipped": [{ "row": "zig-fast", "toolchain": "zig", "reason": "not_installed", "message": "`zig` is not on PATH", "exit_code": null, "log_tail": [] }],
        "missing": [{ "toolchain": "go", "conclusion": "cancelled" }],
        "failures": [],
        "verdict": { "status": "ok", "reasons": [] },
        "cost": { "jobs_s": { "clang": 12.1 }, "total_s": 12.1 }
    })
}

/// A cell row: the row as its job wrote it, plus `job`.
fn with_job(job: &str, mut row: Value) -> Value {
    row.as_object_mut()
        .unwrap()
        .insert("job".into(), json!(job));
    row
}

/// The newest Linux run as a build that records the footprint writes it: go's row with its
/// builds, text bytes and a compiler that did not reproduce; both jobs' installed sizes.
/// `c-O0` keeps the older form, without text bytes.
fn with_footprint(cell: &mut Value) {
    let build = &mut cell["rows"]["go"]["build"];
    build["compile_runs_s"] = json!([1.25, 1.5, 1.0]);
    build["compile_s"] = json!(1.25);
    build["binary_bytes"] = json!(2_345_678);
    build["text_bytes"] = json!(1_048_576);
    build["reproducible"] = json!(false);
    cell["jobs"]["go"]["installed"] = json!({
        "clang": { "bytes": 429_744_128_u64, "method": "dpkg", "how": "dpkg Installed-Size of 61 packages (clang, and the installed packages it depends on)", "packages": 61 },
        "go": { "bytes": 254_803_968_u64, "method": "tree", "how": "files under /opt/hostedtoolcache/go/1.23.4/x64 (14000 files)", "root": "/opt/hostedtoolcache/go/1.23.4/x64" }
    });
}

/// The synthetic history on disk, in the committed layout.
fn history(dir: &Path) {
    let runs = [
        ("2026-03-01", "9001"),
        ("2026-03-08", "9002"),
        ("2026-03-15", "9003"),
    ];
    for (k, (date, id)) in runs.iter().enumerate() {
        let run = dir.join(format!("{date}-{id}"));
        let mut linux = linux_cell(date, id, k as u32);
        if k == 2 {
            with_footprint(&mut linux);
        }
        let mut cells = vec![(LINUX, linux)];
        if k == 2 {
            cells.push((MAC, mac_cell(date, id)));
        }
        for (cell, v) in cells {
            std::fs::create_dir_all(run.join(cell)).unwrap();
            std::fs::write(
                run.join(cell).join("results.json"),
                cell_schema::to_json(&v),
            )
            .unwrap();
        }
    }
}

fn build() -> Report {
    let tmp = tempfile::tempdir().unwrap();
    history(tmp.path());
    let runs = load_history(tmp.path()).unwrap().runs;
    Report::build(&runs, &ReportOptions::EVERYTHING)
}

fn file<'a>(files: &'a [Output], path: &str) -> &'a str {
    let f = files
        .iter()
        .find(|f| f.path == path)
        .unwrap_or_else(|| panic!("no {path}"));
    std::str::from_utf8(&f.bytes).unwrap()
}

/// HTML elements that have no end tag.
const VOID: [&str; 4] = ["meta", "img", "br", "hr"];

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
        if VOID.contains(&name.as_str()) {
            continue;
        }
        if tag.starts_with('/') {
            assert_eq!(
                stack.pop().as_deref(),
                Some(name.as_str()),
                "unbalanced </{name}>"
            );
        } else {
            stack.push(name);
        }
    }
    assert!(stack.is_empty(), "unclosed: {stack:?}");
}

#[test]
fn the_model_holds_every_row_per_phase_over_the_runs_that_measured_it() {
    let r = build();
    assert_eq!(
        r.runs.iter().map(|r| r.name.as_str()).collect::<Vec<_>>(),
        ["2026-03-01-9001", "2026-03-08-9002", "2026-03-15-9003"]
    );
    let linux = &r.cells[LINUX];
    assert_eq!(
        linux
            .phases
            .iter()
            .map(|p| p.phase.as_str())
            .collect::<Vec<_>>(),
        ["mix", "fib"],
        "protocol order"
    );
    assert_eq!(linux.reference.as_str(), "c-O2");
    assert_eq!(linux.reference_label, "clang -O2");
    let mix = &linux.phases[0];
    // The reference (ratio 1 by construction) is the dashed line, not a series.
    assert_eq!(
        mix.rows
            .keys()
            .map(cell_schema::RowName::as_str)
            .collect::<Vec<_>>(),
        ["c-O0", "go"]
    );
    let go = &mix.rows["go"];
    assert_eq!(go.points.len(), 3);
    // go reads wall time; the other clock's median rides along.
    assert_eq!(go.clock, cell_schema::Clock::Wall);
    assert!((go.points[2].median - 1.19).abs() < 1e-9);
    assert!((go.points[2].other_median - 1.35).abs() < 1e-9);
    // Its own median seconds, on its clock (wall): what a dashboard gets beside the ratio.
    assert!((go.points[2].median_s.unwrap() - 0.01 * 1.19).abs() < 1e-12);
    assert_eq!(
        go.tools
            .iter()
            .map(cell_schema::ToolName::as_str)
            .collect::<Vec<_>>(),
        ["go"]
    );
    let newest = &linux.newest;
    assert_eq!(newest.run, "2026-03-15-9003");
    assert_eq!(
        newest.jobs["go"].versions["go"],
        "go version go1.23.4 linux/amd64"
    );
    assert_eq!(
        newest.jobs["clang"].versions["clang"], "Ubuntu clang version 18.1.3 (1ubuntu1)",
        "first line only"
    );
    assert_eq!(
        newest.jobs["go"].machine.runner_image.as_deref(),
        Some("ubuntu24 20250105.1.0")
    );
    assert!((newest.jobs["clang"].reference["mix"].median_s - 0.01).abs() < 1e-12);
    let mac = &r.cells[MAC];
    assert_eq!(mac.runs, ["2026-03-15-9003"]);
    // Samples: per run and cell, each job's reference and control and the rows it measured.
    // Linux: 2 jobs × (ref + control) × 2 phases × 4 + (c-O0 + go) × 2 phases × 4 = 48 per run.
    // macOS: (ref + control + c-O0) × 1 phase × 4 = 12.
    assert_eq!(r.samples.as_ref().map_or(0, Vec::len), 3 * 48 + 12);
}

#[test]
fn svg_has_axes_a_legend_and_one_line_and_band_per_row() {
    let r = build();
    let files = report::render(&r);
    let svg = file(&files, "charts/linux-x86_64-ubuntu-24.04/mix.svg");
    assert!(
        svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""),
        "{svg}"
    );
    assert_balanced(svg);
    assert_eq!(svg.matches("class=\"line\"").count(), 2, "one line per row");
    assert_eq!(
        svg.matches("class=\"band\"").count(),
        2,
        "one CI band per row"
    );
    assert_eq!(
        svg.matches("<circle cx").count(),
        2 * 3 + 2,
        "a point per row and run, legend marks"
    );
    assert!(svg.contains("class=\"axis x\"") && svg.contains("class=\"axis y\""));
    assert!(
        svg.contains("class=\"reference\""),
        "the reference line at 1"
    );
    assert!(
        svg.contains("× clang -O2 (log scale)"),
        "y axis says its unit and scale"
    );
    assert!(
        svg.contains(">2026-03-01<") && svg.contains(">9003<"),
        "x axis labels runs"
    );
    for entry in ["c-O0 (cpu)", "go (wall)", "c-O2 = 1 (reference)"] {
        assert!(
            svg.contains(&format!(">{entry}</text>")),
            "legend lacks {entry}"
        );
    }
    assert!(
        svg.contains("<title>linux-x86_64-ubuntu-24.04 · mix: ratio to c-O2 over runs</title>")
    );
    // Escaped, never raw.
    assert!(!svg.contains("<slow>"));
}

#[test]
fn a_single_run_gets_error_bars_instead_of_bands() {
    let r = build();
    let files = report::render(&r);
    let svg = file(&files, "charts/macos-aarch64-macos-15/mix.svg");
    assert_balanced(svg);
    assert_eq!(svg.matches("class=\"band\"").count(), 0);
    assert_eq!(svg.matches("class=\"errorbar\"").count(), 1);
    assert_eq!(svg.matches("class=\"line\"").count(), 1);
    assert!(svg.contains("bars: confidence interval"));
    // Narrow range: a linear axis.
    assert!(svg.contains(">× clang -O2</text>"), "{svg}");
}

#[test]
fn same_history_same_bytes() {
    let a = report::render(&build());
    let b = report::render(&build());
    assert_eq!(a, b);
    let paths: Vec<&str> = a.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "charts/linux-x86_64-ubuntu-24.04/mix.svg",
            "charts/linux-x86_64-ubuntu-24.04/fib.svg",
            "charts/linux-x86_64-ubuntu-24.04/footprint.svg",
            "charts/macos-aarch64-macos-15/mix.svg",
            "charts/macos-aarch64-macos-15/footprint.svg",
            "index.html",
            "README.md",
            "samples.csv",
            "footprint.csv",
            "report.json",
        ]
    );
}

#[test]
fn csv_has_a_header_and_one_record_per_sample() {
    let r = build();
    let files = report::render(&r);
    let csv = file(&files, "samples.csv");
    let lines: Vec<&str> = csv.split_terminator("\r\n").collect();
    assert_eq!(
        lines[0],
        "run,date,cell,job,row,role,phase,round,seq,warmup,wall_s,cpu_s,user_s,maxrss_kib,ok"
    );
    assert_eq!(lines.len(), 1 + r.samples.as_ref().map_or(0, Vec::len));
    assert!(csv.ends_with("\r\n") && !csv.replace("\r\n", "").contains('\n'));
    assert_eq!(
        lines[1],
        "2026-03-01-9001,2026-03-01,linux-x86_64-ubuntu-24.04,clang,c-O2,reference,fib,0,0,true,0.0101,0.0101,,1024,true"
    );
    assert!(lines.iter().all(|l| l.split(',').count() == 15));
}

#[test]
fn the_newest_footprint_is_a_table_a_bar_chart_and_every_run_a_csv_record() {
    let r = build();
    let linux = &r.cells[LINUX].newest;
    assert_eq!(linux.footprint_run.as_deref(), Some("2026-03-15-9003"));
    let rows: Vec<&str> = linux.footprint.iter().map(|f| f.row.as_str()).collect();
    assert_eq!(rows, ["c-O0", "c-O2", "go"]);
    let sizes: Vec<(&str, Option<u64>)> = linux
        .installed
        .iter()
        .map(|s| {
            (
                s.toolchain.as_str(),
                s.installed.as_ref().and_then(|i| i.bytes),
            )
        })
        .collect();
    assert_eq!(
        sizes,
        [("clang", Some(429_744_128)), ("go", Some(254_803_968))],
        "clang's size from the go job, the only one that measured it"
    );
    let files = report::render(&r);
    let svg = file(&files, "charts/linux-x86_64-ubuntu-24.04/footprint.svg");
    assert_balanced(svg);
    assert_eq!(
        svg.matches("class=\"bar\"").count(),
        3 + 2,
        "a bar per row and toolchain"
    );
    assert_eq!(
        svg.matches("class=\"inner\"").count(),
        1,
        "text bytes only where recorded"
    );
    assert!(svg.contains(">go · go</text>") && svg.contains(">2.2 MiB · text 1.0 MiB</text>"));
    assert!(
        svg.contains(">16.0 KiB · text –</text>"),
        "an older row: –, never 0"
    );
    assert!(svg.contains(">409.8 MiB (dpkg)</text>"));
    // An older run has no installed sizes at all: every toolchain's bar is a dash.
    let mac = file(&files, "charts/macos-aarch64-macos-15/footprint.svg");
    assert!(mac.contains(">– (not recorded)</text>"), "{mac}");
    assert!(!mac.contains("class=\"inner\""));
    let md = file(&files, "README.md");
    assert!(
        md.contains("64-ubuntu-24.04 · Footprint in 2026-03-15-9003"),
        "{md}"
    );
    assert!(
        md.contains("| go | go | go | 1.250 | 3 | 2345678 | 1048576 | NO |"),
        "{md}"
    );
    assert!(
        md.contains("| c-O0 | clang | clang | 0.500 | – | 16384 | – | – |"),
        "{md}"
    );
    let csv = file(&files, "footprint.csv");
    let lines: Vec<&str> = csv.split_terminator("\r\n").collect();
    assert_eq!(
        lines[0],
        "run,date,cell,job,row,role,toolchain,compile_s,builds,compile_runs_s,binary_bytes,text_bytes,reproducible,installed_bytes,installed_method"
    );
    // Three rows of the Linux cell in each of three runs, one row of the macOS cell.
    assert_eq!(lines.len(), 1 + 3 * 3 + 1);
    assert!(lines.contains(&"2026-03-15-9003,2026-03-15,linux-x86_64-ubuntu-24.04,go,go,row,go,1.25,3,1.25;1.5;1,2345678,1048576,false,254803968,tree"));
    assert!(lines.contains(
        &"2026-03-01-9001,2026-03-01,linux-x86_64-ubuntu-24.04,go,go,row,go,0.5,,,16384,,,,"
    ));
    assert!(lines.iter().all(|l| l.split(',').count() == 15));
}

#[test]
fn pages_link_only_to_files_the_report_has() {
    let files = report::render(&build());
    let html = file(&files, "index.html");
    assert_balanced(html);
    assert!(
        !html.contains("http://") && !html.contains("https://") && !html.contains("<script"),
        "self-contained"
    );
    for target in links(html, "src=\"", '"')
        .into_iter()
        .chain(links(html, "href=\"", '"'))
    {
        if let Some(anchor) = target.strip_prefix('#') {
            assert!(
                html.contains(&format!("id=\"{anchor}\"")),
                "no anchor {anchor}"
            );
        } else {
            assert!(
                files.iter().any(|f| f.path == target),
                "index.html links to missing {target}"
            );
        }
    }
    let md = file(&files, "README.md");
    for target in links(md, "](", ')') {
        if !target.starts_with('#') {
            assert!(
                files.iter().any(|f| f.path == target),
                "README.md links to missing {target}"
            );
        }
    }
    assert!(html.contains("clang -O0 &quot;debug&quot; &lt;slow&gt; &amp; co"));
    assert!(md.contains("clang -O0 \"debug\" \\<slow\\> & co"));
}

fn links(text: &str, open: &str, close: char) -> Vec<String> {
    text.match_indices(open)
        .map(|(i, _)| {
            let rest = &text[i + open.len()..];
            rest[..rest.find(close).unwrap()].to_owned()
        })
        .collect()
}

#[test]
fn snapshot_readme() {
    let files = report::render(&build());
    insta::assert_snapshot!("readme", file(&files, "README.md"));
}

#[test]
fn snapshot_index_html() {
    let files = report::render(&build());
    insta::assert_snapshot!("index_html", file(&files, "index.html"));
}

#[test]
fn writing_replaces_the_files_and_drops_charts_a_previous_report_left() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("report");
    let stale_cell = out.join("charts/linux-x86_64-gone");
    std::fs::create_dir_all(&stale_cell).unwrap();
    std::fs::write(stale_cell.join("mix.svg"), "<svg/>").unwrap();
    let keep = out.join("charts/notes.txt");
    std::fs::write(&keep, "mine").unwrap();
    let stale_phase = out.join("charts/linux-x86_64-ubuntu-24.04/primes.svg");
    std::fs::create_dir_all(stale_phase.parent().unwrap()).unwrap();
    std::fs::write(&stale_phase, "<svg/>").unwrap();

    let r = build();
    let written = report::write(&r, &out).unwrap();
    assert_eq!(written.len(), report::render(&r).len());
    assert!(written.iter().all(|p| p.is_file()));
    assert!(!stale_cell.exists(), "an emptied chart folder goes");
    assert!(!stale_phase.exists(), "a phase no longer timed goes");
    assert!(keep.is_file(), "files that are not charts stay");
    assert!(
        out.join("charts/linux-x86_64-ubuntu-24.04/mix.svg")
            .is_file()
    );
}

#[test]
fn snapshot_every_chart() {
    for f in report::render(&build()) {
        if f.path.starts_with("charts/") {
            insta::assert_snapshot!(
                format!("chart_{}", f.path.replace('/', "_")),
                std::str::from_utf8(&f.bytes).unwrap()
            );
        }
    }
}

#[test]
fn a_window_keeps_each_cells_newest_runs_and_counts_the_rest() {
    let tmp = tempfile::tempdir().unwrap();
    history(tmp.path());
    let runs = load_history(tmp.path()).unwrap().runs;
    let all = Report::build(&runs, &ReportOptions::EVERYTHING);
    let two = ReportOptions {
        last: std::num::NonZeroUsize::new(2),
        samples: true,
    };
    let r = Report::build(&runs, &two);
    let linux = &r.cells[LINUX];
    assert_eq!(linux.runs, ["2026-03-08-9002", "2026-03-15-9003"]);
    assert_eq!(
        linux.left_out,
        Some(report::LeftOut {
            last: 2,
            runs: 3,
            left_out: 1,
            oldest: "2026-03-01-9001".into(),
            newest: "2026-03-01-9001".into(),
        })
    );
    assert_eq!(linux.run_count(), 3);
    for p in &linux.phases {
        for s in p.rows.values() {
            assert!(
                s.points.iter().all(|q| q.run != "2026-03-01-9001"),
                "{}",
                p.phase
            );
        }
    }
    assert_eq!(linux.phases[0].rows["go"].points.len(), 2);
    // A cell with fewer runs than the window keeps them all and notes nothing.
    assert_eq!(r.cells[MAC].runs, ["2026-03-15-9003"]);
    assert_eq!(r.cells[MAC].left_out, None);
    // The newest-run sections read every run: the same as with no window.
    assert_eq!(linux.newest, all.cells[LINUX].newest);
    assert_eq!(r.comparison, all.comparison);
    // Over the history: the runs of some window, the rest counted.
    let names: Vec<&str> = r.runs.iter().map(|x| x.name.as_str()).collect();
    assert_eq!(names, ["2026-03-08-9002", "2026-03-15-9003"]);
    assert_eq!(r.run_count(), 3);
    assert_eq!(r.oldest_run(), Some("2026-03-01-9001"));
    assert_eq!(r.left_out.as_ref().map(|l| l.left_out), Some(1));
    // Every per-run record comes from the window.
    let samples = r.samples.as_ref().unwrap();
    assert_eq!(samples.len(), 2 * 48 + 12);
    assert!(samples.iter().all(|s| s.run != "2026-03-01-9001"));
    assert!(!r.footprint.is_empty());
    assert!(r.footprint.iter().all(|f| f.run != "2026-03-01-9001"));
    // The pages say so, on both.
    let files = report::render(&r);
    for page in ["index.html", "README.md"] {
        let text = file(&files, page);
        assert!(
            text.contains("Charts show the last 2 of 3 runs (2026-03-08 to 2026-03-15);"),
            "{page}"
        );
        assert!(text.contains("from 3 committed runs (oldest "), "{page}");
        assert!(
            text.contains("1 older run (2026-03-01) is left out"),
            "{page}"
        );
    }
    let fib = file(&files, "charts/linux-x86_64-ubuntu-24.04/fib.svg");
    assert!(!fib.contains(">9001<") && fib.contains(">9002<"), "{fib}");
}

#[test]
fn without_samples_no_samples_csv_and_the_page_says_how_to_get_it() {
    let tmp = tempfile::tempdir().unwrap();
    history(tmp.path());
    let runs = load_history(tmp.path()).unwrap().runs;
    let r = Report::build(&runs, &ReportOptions::default());
    assert_eq!(r.samples, None);
    let files = report::render(&r);
    assert!(files.iter().all(|f| f.path != report::SAMPLES_CSV));
    let md = file(&files, "README.md");
    assert!(md.contains("Every sample: `samples.csv`, which `cell report --samples` writes;"));
    // A history shorter than the window: every file as without a window.
    let whole = ReportOptions {
        last: None,
        samples: false,
    };
    assert_eq!(files, report::render(&Report::build(&runs, &whole)));
}

/// A stale samples.csv (or suites' CSV) a previous report left is removed by one that does
/// not write it; a file of another name stays.
#[test]
fn a_report_without_samples_removes_a_stale_samples_csv() {
    let tmp = tempfile::tempdir().unwrap();
    history(tmp.path());
    let runs = load_history(tmp.path()).unwrap().runs;
    let out = tmp.path().join("out");
    report::write(&Report::build(&runs, &ReportOptions::EVERYTHING), &out).unwrap();
    assert!(out.join(report::SAMPLES_CSV).is_file());
    std::fs::write(out.join(report::RAW_CSV), "stale").unwrap();
    std::fs::write(out.join("notes.txt"), "mine").unwrap();
    let written = report::write(&Report::build(&runs, &ReportOptions::default()), &out).unwrap();
    assert!(!out.join(report::SAMPLES_CSV).exists());
    assert!(
        !out.join(report::RAW_CSV).exists(),
        "this history has no suites"
    );
    assert!(out.join("notes.txt").is_file());
    assert!(written.iter().all(|p| p.is_file()));
}
