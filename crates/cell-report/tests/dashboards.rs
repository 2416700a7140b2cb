//! The dashboards' exports (`cell report --export FORMAT FILE`) of the recorded history of two
//! `cell local` runs (`crates/cell-testkit/fixtures/workload/history`): each format's file
//! snapshotted and validated against its JSON Schema (`crates/cell-report/schemas/`), which in
//! turn refuses malformed files; every figure the model's; one BMF file per cell; and nothing
//! non-finite, unmeasured or holding a control character ever written.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use cell_report::report::{
    self, BmfExporter, CELL_PLACEHOLDER, ExportError, ExportFile, ExportFormat, Exporter,
    GithubActionBenchmarkExporter, Point, Report, ReportOptions,
};
use cell_schema::store::load_history;
use cell_schema::{CellId, RowName};
use serde_json::{Value, json};

const LINUX: &str = "linux-x86_64-local";
const MAC: &str = "macos-aarch64-local";
const OLDER: &str = "2026-12-01-local-093937";
const NEWEST: &str = "2026-12-01-local-093940";

/// The recorded history, with a macOS copy of its cell in each run of `mac_in`: the Linux
/// results under another id, its ratios scaled by 1.1 so the two cells' figures differ.
fn build(mac_in: &[&str]) -> Report {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("history");
    cell_testkit::copy_dir(&cell_testkit::fixtures().join("workload/history"), &dir);
    for run in mac_in {
        add_mac(&dir.join(run));
    }
    let history = load_history(&dir).unwrap();
    assert!(history.skipped.is_empty(), "{:?}", history.skipped);
    Report::build(&history.runs, &ReportOptions::default())
}

fn add_mac(run: &Path) {
    let mut v = cell_testkit::read_json(&run.join(LINUX).join("results.json"));
    v["cell"]["id"] = json!(MAC);
    v["cell"]["os"] = json!("macos");
    v["cell"]["arch"] = json!("aarch64");
    for row in v["rows"].as_object_mut().unwrap().values_mut() {
        if row["role"] == "reference" {
            continue;
        }
        for phase in row["phases"].as_object_mut().unwrap().values_mut() {
            for ci in phase["ratio"].as_object_mut().unwrap().values_mut() {
                for k in ["median", "lo", "hi"] {
                    let x = ci[k].as_f64().unwrap() * 1.1;
                    ci[k] = json!(cell_schema::round_ratio(x));
                }
            }
        }
    }
    std::fs::create_dir_all(run.join(MAC)).unwrap();
    std::fs::write(run.join(MAC).join("results.json"), cell_schema::to_json(&v)).unwrap();
}

/// The one file of an export.
fn one(files: Vec<ExportFile>) -> String {
    assert_eq!(files.len(), 1, "{files:?}");
    String::from_utf8(files.into_iter().next().unwrap().bytes).unwrap()
}

fn schema(name: &str) -> jsonschema::Validator {
    let path: PathBuf = [env!("CARGO_MANIFEST_DIR"), "schemas", name]
        .iter()
        .collect();
    let text = std::fs::read_to_string(&path).unwrap();
    let schema: Value = serde_json::from_str(&text).unwrap();
    jsonschema::validator_for(&schema).expect("the schema compiles")
}

fn bmf_schema() -> jsonschema::Validator {
    schema("bmf.schema.json")
}

fn gab_schema() -> jsonschema::Validator {
    schema("github-action-benchmark.schema.json")
}

/// Parses an exported file (which fails on a `NaN` or `inf` written as a number) and
/// validates it, naming every error.
fn valid(validator: &jsonschema::Validator, text: &str) -> Value {
    assert!(text.ends_with("}\n") || text.ends_with("]\n"), "{text}");
    let v: Value = serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}:\n{text}"));
    let errors: Vec<String> = validator
        .iter_errors(&v)
        .map(|e| format!("{e} at {}", e.instance_path))
        .collect();
    assert!(errors.is_empty(), "{}\n{text}", errors.join("\n"));
    assert_no_control(&v);
    v
}

/// No string of the document, key or value, holds a control character.
fn assert_no_control(v: &Value) {
    let check = |s: &str| assert!(!s.chars().any(char::is_control), "{s:?}");
    match v {
        Value::String(s) => check(s),
        Value::Array(a) => a.iter().for_each(assert_no_control),
        Value::Object(o) => {
            for (k, x) in o {
                check(k);
                assert_no_control(x);
            }
        }
        _ => {}
    }
}

/// The model's point of `row` on `phase` in the newest run.
fn point<'a>(r: &'a Report, cell: &str, row: &str, phase: &str) -> &'a Point {
    let p = r.cells[cell]
        .phases
        .iter()
        .find(|p| p.phase.as_str() == phase)
        .unwrap();
    p.rows[row].points.iter().find(|q| q.run == NEWEST).unwrap()
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap()
}

#[test]
fn bmf_is_one_benchmark_per_row_and_phase_with_the_models_figures() {
    let r = build(&[]);
    let text = one(report::export_files(&r, ExportFormat::Bmf, "bmf.json").unwrap());
    insta::assert_snapshot!("bmf", text);
    let v = valid(&bmf_schema(), &text);
    let names: Vec<&String> = v.as_object().unwrap().keys().collect();
    // c-wrong printed the wrong answer on mix: not a measurement; the reference has no ratio.
    assert_eq!(
        names,
        [
            "c-slow/fib",
            "c-slow/mix",
            "c-wrong/fib",
            "gcc-O2/fib",
            "gcc-O2/mix"
        ]
    );
    for (name, measures) in v.as_object().unwrap() {
        let (row, phase) = name.split_once('/').unwrap();
        let p = point(&r, LINUX, row, phase);
        let ratio = &measures["ratio"];
        assert_eq!(
            (
                f(&ratio["value"]),
                f(&ratio["lower_value"]),
                f(&ratio["upper_value"])
            ),
            (p.median, p.lo, p.hi),
            "{name}"
        );
        assert!(p.lo <= p.median && p.median <= p.hi);
        assert_eq!(measures["seconds"], json!({ "value": p.median_s.unwrap() }));
    }
    // The exporter itself: the same bytes under a name of its own.
    let files = BmfExporter::new(CellId::from(LINUX)).export(&r);
    assert_eq!(files[0].path, "bmf-linux-x86_64-local.json");
    assert_eq!(files[0].bytes, text.as_bytes());
}

#[test]
fn github_action_benchmark_is_a_ratio_and_a_seconds_entry_per_row_and_phase() {
    let r = build(&[]);
    let text =
        one(report::export_files(&r, ExportFormat::GithubActionBenchmark, "gab.json").unwrap());
    insta::assert_snapshot!("github_action_benchmark", text);
    let v = valid(&gab_schema(), &text);
    let entries = v.as_array().unwrap();
    let names: Vec<&str> = entries
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    let mut sorted = names.clone();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(names, sorted, "sorted, each name once");
    assert_eq!(names.len(), 2 * 5);
    for e in entries {
        let name = e["name"].as_str().unwrap();
        let parts: Vec<&str> = name.split('/').collect();
        let [cell, row, phase, what] = parts[..] else {
            panic!("{name}");
        };
        let p = point(&r, cell, row, phase);
        match what {
            "ratio" => {
                assert_eq!(
                    (f(&e["value"]), e["unit"].as_str()),
                    (p.median, Some("ratio"))
                );
                let half = e["range"].as_str().unwrap().strip_prefix("± ").unwrap();
                let half: f64 = half.parse().unwrap();
                assert!((half - (p.hi - p.lo) / 2.0).abs() <= 5e-5, "{name}: {half}");
                let extra = e["extra"].as_str().unwrap();
                assert!(
                    extra.contains(&format!("run {NEWEST}, job {}", p.job))
                        && extra.contains(&format!("{:.4}–{:.4}", p.lo, p.hi))
                        && extra.starts_with("ratio to c-fast on the "),
                    "{extra}"
                );
            }
            "seconds" => {
                assert_eq!(
                    (f(&e["value"]), e["unit"].as_str()),
                    (p.median_s.unwrap(), Some("s"))
                );
                assert!(e.get("range").is_none());
            }
            _ => panic!("{name}"),
        }
    }
}

#[test]
fn a_malformed_document_fails_each_schema() {
    let bmf = bmf_schema();
    let good = json!({ "c-slow/mix": { "ratio": { "value": 3.8, "lower_value": 3.7, "upper_value": 3.9 }, "seconds": { "value": 0.05 } } });
    assert!(bmf.is_valid(&good));
    for bad in [
        json!([]),
        json!({ "c-slow/mix": { "ratio": { "value": "3.8" } } }),
        json!({ "c-slow/mix": { "ratio": { "lower_value": 3.7 } } }),
        json!({ "c-slow/mix": { "ratio": { "value": 3.8, "lower_value": null } } }),
        json!({ "c-slow/mix": { "ratio": { "value": 3.8, "median": 3.8 } } }),
        json!({ "c-slow/mix": { "Ratio": { "value": 3.8 } } }),
        json!({ "c-slow/mix": { "ratio_median": { "value": 3.8 } } }),
        json!({ "c-slow/mix": {} }),
        json!({ "c-slow/mix": { "ratio": 3.8 } }),
        json!({ "c-slow\n/mix": { "ratio": { "value": 3.8 } } }),
        json!({ "": { "ratio": { "value": 3.8 } } }),
    ] {
        assert!(!bmf.is_valid(&bad), "BMF schema took {bad}");
    }
    let gab = gab_schema();
    let good = json!([
        { "name": "c/r/p/ratio", "unit": "ratio", "value": 1.0, "range": "± 0.01", "extra": "x" },
        { "name": "c/r/p/seconds", "unit": "s", "value": 0.5 }
    ]);
    assert!(gab.is_valid(&good));
    for bad in [
        json!({ "name": "c/r/p/ratio", "unit": "ratio", "value": 1.0 }),
        json!([{ "name": "c/r/p/ratio", "value": 1.0 }]),
        json!([{ "unit": "ratio", "value": 1.0 }]),
        json!([{ "name": "c/r/p/ratio", "unit": "ratio" }]),
        json!([{ "name": "c/r/p/ratio", "unit": "ratio", "value": "1.0" }]),
        json!([{ "name": "c/r/p/ratio", "unit": "ratio", "value": null }]),
        json!([{ "name": "", "unit": "ratio", "value": 1.0 }]),
        json!([{ "name": "c/r/p/ratio", "unit": "ratio", "value": 1.0, "range": 0.01 }]),
        json!([{ "name": "c/r/p/ratio", "unit": "ratio", "value": 1.0, "extra": "a\nb" }]),
        json!([{ "name": "c/r\u{1b}[31m", "unit": "ratio", "value": 1.0 }]),
        json!([{ "name": "c/r/p/ratio", "unit": "ratio", "value": 1.0, "lo": 0.9 }]),
    ] {
        assert!(
            !gab.is_valid(&bad),
            "github-action-benchmark schema took {bad}"
        );
    }
}

#[test]
fn bmf_is_one_file_per_cell_and_github_action_benchmark_one_for_all() {
    let r = build(&[OLDER, NEWEST]);
    // A BMF file is one testbed: two cells in one file would share benchmark names.
    let err = report::export_files(&r, ExportFormat::Bmf, "bmf.json").unwrap_err();
    assert!(matches!(err, ExportError::SeveralCells { .. }));
    let msg = err.to_string();
    for part in [
        LINUX,
        MAC,
        "bmf.json",
        NEWEST,
        CELL_PLACEHOLDER,
        "bmf/{cell}.json",
    ] {
        assert!(msg.contains(part), "{msg} lacks {part}");
    }
    let files = report::export_files(&r, ExportFormat::Bmf, "out/{cell}.json").unwrap();
    let paths: Vec<&str> = files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(
        paths,
        [format!("out/{LINUX}.json"), format!("out/{MAC}.json")]
    );
    // Each cell's file is its own figures: the Linux one is the one-cell history's, byte for
    // byte; the macOS one has its own ratios.
    let alone = one(report::export_files(&build(&[]), ExportFormat::Bmf, "-").unwrap());
    let linux = String::from_utf8(files[0].bytes.clone()).unwrap();
    let mac = String::from_utf8(files[1].bytes.clone()).unwrap();
    assert_eq!(linux, alone);
    let mac_v = valid(&bmf_schema(), &mac);
    let p = point(&r, MAC, "c-slow", "mix");
    assert_eq!(mac_v["c-slow/mix"]["ratio"]["value"], json!(p.median));
    assert!((p.median - point(&r, LINUX, "c-slow", "mix").median).abs() > 0.1);

    // One github-action-benchmark file holds every cell, each name once.
    let all =
        one(report::export_files(&r, ExportFormat::GithubActionBenchmark, "gab.json").unwrap());
    let v = valid(&gab_schema(), &all);
    let names: Vec<&str> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    let unique: BTreeSet<&str> = names.iter().copied().collect();
    assert_eq!((names.len(), unique.len()), (4 * 5, 4 * 5));
    // … or one per cell, each with its cell's entries only.
    let per_cell =
        report::export_files(&r, ExportFormat::GithubActionBenchmark, "gab-{cell}.json").unwrap();
    assert_eq!(per_cell.len(), 2);
    for (file, cell) in per_cell.iter().zip([LINUX, MAC]) {
        assert_eq!(file.path, format!("gab-{cell}.json"));
        let v = valid(&gab_schema(), std::str::from_utf8(&file.bytes).unwrap());
        let entries = v.as_array().unwrap();
        assert_eq!(entries.len(), 2 * 5);
        assert!(
            entries
                .iter()
                .all(|e| e["name"].as_str().unwrap().starts_with(&format!("{cell}/")))
        );
    }
    let only_mac = GithubActionBenchmarkExporter::new(Some(CellId::from(MAC))).export(&r);
    assert_eq!(
        only_mac[0].path,
        format!("github-action-benchmark-{MAC}.json")
    );
    assert_eq!(only_mac[0].bytes, per_cell[1].bytes);
}

#[test]
fn a_cell_the_newest_run_does_not_have_is_left_out_not_sent_again() {
    // The macOS cell ran only in the older run: its figures went to the dashboard then.
    let r = build(&[OLDER]);
    assert_eq!(r.cells[MAC].runs, [OLDER]);
    let m = report::measurements(&r, None);
    assert_eq!(m.run, Some(NEWEST));
    assert_eq!(m.cells(), [&CellId::from(LINUX)]);
    assert!(
        m.left_out
            .contains(&format!("{MAC}: not in run {NEWEST}; left out")),
        "{:?}",
        m.left_out
    );
    // So one BMF file is enough.
    let text = one(report::export_files(&r, ExportFormat::Bmf, "bmf.json").unwrap());
    assert_eq!(
        text,
        one(report::export_files(&build(&[]), ExportFormat::Bmf, "b").unwrap())
    );
}

/// The point of `row` on `phase` in the newest run, to edit.
fn point_mut<'a>(r: &'a mut Report, row: &str, phase: &str) -> &'a mut Point {
    let p = r
        .cells
        .get_mut(LINUX)
        .unwrap()
        .phases
        .iter_mut()
        .find(|p| p.phase.as_str() == phase)
        .unwrap();
    let s = p.rows.get_mut(row).unwrap();
    s.points.iter_mut().find(|q| q.run == NEWEST).unwrap()
}

#[test]
fn what_a_dashboard_cannot_take_is_left_out_and_said() {
    let mut r = build(&[]);
    point_mut(&mut r, "c-slow", "mix").median = f64::NAN;
    point_mut(&mut r, "c-slow", "fib").hi = f64::INFINITY;
    point_mut(&mut r, "gcc-O2", "fib").median_s = None;
    point_mut(&mut r, "gcc-O2", "mix").median_s = Some(f64::NAN);
    // A row the newest run did not measure keeps only older points.
    let mix = &mut r.cells.get_mut(LINUX).unwrap().phases[0];
    assert_eq!(mix.phase.as_str(), "mix");
    let mut stale = mix.rows["gcc-O2"].clone();
    stale.points.retain(|q| q.run != NEWEST);
    mix.rows.insert(RowName::from("c-gone"), stale);
    // A name built in code, not read from a file (which would refuse it).
    let hostile = mix.rows["gcc-O2"].clone();
    mix.rows
        .insert(RowName::new("x\u{1b}[31m\n::error::y"), hostile);

    let m = report::measurements(&r, None);
    let exported: Vec<String> = m
        .measured
        .iter()
        .map(|x| format!("{}/{}", x.row, x.phase))
        .collect();
    assert_eq!(exported, ["gcc-O2/mix", "c-wrong/fib", "gcc-O2/fib"]);
    let said: Vec<&str> = m.left_out.iter().map(String::as_str).collect();
    assert_eq!(
        said,
        [
            format!("{LINUX}: c-gone on mix: not measured in run {NEWEST}; left out").as_str(),
            format!("{LINUX}: c-slow on mix: its ratio is not a finite number; left out").as_str(),
            format!("{LINUX}: c-wrong on mix: wrong answer; left out").as_str(),
            format!("{LINUX}: gcc-O2 on mix: no seconds recorded; the ratio only").as_str(),
            format!("\"{LINUX}: x\\u{{1b}}[31m\\n::error::y on mix\": not a safe name; left out")
                .as_str(),
            format!("{LINUX}: c-slow on fib: its ratio is not a finite number; left out").as_str(),
            format!("{LINUX}: gcc-O2 on fib: no seconds recorded; the ratio only").as_str(),
        ]
    );

    let bmf = valid(
        &bmf_schema(),
        &one(report::export_files(&r, ExportFormat::Bmf, "bmf.json").unwrap()),
    );
    assert_eq!(
        bmf.as_object().unwrap().keys().collect::<Vec<_>>(),
        ["c-wrong/fib", "gcc-O2/fib", "gcc-O2/mix"]
    );
    assert!(bmf["gcc-O2/mix"].get("seconds").is_none());
    assert!(bmf["gcc-O2/mix"].get("ratio").is_some());
    let gab = valid(
        &gab_schema(),
        &one(report::export_files(&r, ExportFormat::GithubActionBenchmark, "g").unwrap()),
    );
    assert_eq!(gab.as_array().unwrap().len(), 3 + 1);
}

#[test]
fn a_history_without_a_workload_run_has_nothing_to_export() {
    let mut r = build(&[]);
    // As a history of suite runs only has it: no run with workload jobs.
    r.comparison = None;
    for format in ExportFormat::ALL {
        let err = report::export_files(&r, format, "x.json").unwrap_err();
        assert!(
            matches!(err, ExportError::Nothing { run: None, .. }),
            "{err}"
        );
        assert!(
            err.to_string().contains("no run timed workload jobs"),
            "{err}"
        );
    }
    // A run whose every row is left out, likewise, naming it.
    let mut r = build(&[]);
    for p in &mut r.cells.get_mut(LINUX).unwrap().phases {
        for s in p.rows.values_mut() {
            for q in &mut s.points {
                q.answer_ok = false;
            }
        }
    }
    let err = report::export_files(&r, ExportFormat::Bmf, "x.json").unwrap_err();
    assert!(err.to_string().contains(&format!("run {NEWEST}")), "{err}");
}

#[test]
fn same_report_same_bytes_and_format_names_read_back() {
    let (a, b) = (build(&[OLDER, NEWEST]), build(&[OLDER, NEWEST]));
    for format in ExportFormat::ALL {
        assert_eq!(ExportFormat::parse(format.name()), Some(format));
        let file = format!("{}-{CELL_PLACEHOLDER}.json", format.name());
        assert_eq!(
            report::export_files(&a, format, &file).unwrap(),
            report::export_files(&b, format, &file).unwrap()
        );
    }
    assert_eq!(ExportFormat::parse("bencher"), None);
}
