//! `cell report --export FORMAT FILE` through the binary, on the recorded history of two
//! `cell local` runs (`crates/cell-testkit/fixtures/workload/history`, nothing timed): the
//! dashboards' files beside the pages, valid against the schemas in
//! `crates/cell-report/schemas/`; one BMF file per cell; stdout; and the usage errors.

mod common;

use std::path::{Path, PathBuf};

use common::{cell, read_json, repo_root};
use predicates::prelude::*;
use serde_json::{Value, json};

const LINUX: &str = "linux-x86_64-local";
const MAC: &str = "macos-aarch64-local";
const NEWEST: &str = "2026-12-01-local-093940";

fn history() -> PathBuf {
    cell_testkit::fixtures().join("workload/history")
}

/// The recorded history with a second cell in its newest run: the Linux cell's results under
/// a macOS id.
fn two_cell_history(tmp: &Path) -> PathBuf {
    let dir = tmp.join("history");
    cell_testkit::copy_dir(&history(), &dir);
    let run = dir.join(NEWEST);
    let mut v = read_json(&run.join(LINUX).join("results.json"));
    v["cell"]["id"] = json!(MAC);
    v["cell"]["os"] = json!("macos");
    v["cell"]["arch"] = json!("aarch64");
    std::fs::create_dir_all(run.join(MAC)).unwrap();
    std::fs::write(run.join(MAC).join("results.json"), v.to_string()).unwrap();
    dir
}

/// Validates an exported file against the schema of its format, naming every error.
fn assert_valid(schema: &str, file: &Path) -> Value {
    let schema = read_json(&repo_root().join("crates/cell-report/schemas").join(schema));
    let validator = jsonschema::validator_for(&schema).expect("the schema compiles");
    let v = read_json(file);
    let errors: Vec<String> = validator
        .iter_errors(&v)
        .map(|e| format!("{e} at {}", e.instance_path))
        .collect();
    assert!(
        errors.is_empty(),
        "{}: {}",
        file.display(),
        errors.join("\n")
    );
    v
}

fn stdout(a: &assert_cmd::assert::Assert) -> String {
    String::from_utf8(a.get_output().stdout.clone()).unwrap()
}

fn stderr(a: &assert_cmd::assert::Assert) -> String {
    String::from_utf8(a.get_output().stderr.clone()).unwrap()
}

#[test]
fn both_exports_are_written_beside_the_pages_and_validate() {
    let tmp = tempfile::tempdir().unwrap();
    let (out, bmf, gab) = (
        tmp.path().join("report"),
        tmp.path().join("dash/bmf.json"),
        tmp.path().join("gab.json"),
    );
    let a = cell()
        .args(["report", "--last", "1", "--history"])
        .arg(history())
        .arg("--out")
        .arg(&out)
        .arg("--export")
        .arg("bmf")
        .arg(&bmf)
        .arg("--export")
        .arg("github-action-benchmark")
        .arg(&gab)
        .assert()
        .success();
    // The pages as ever, then the exports, each path on stdout.
    let listed = stdout(&a);
    assert!(out.join("index.html").is_file() && out.join("report.json").is_file());
    assert!(
        listed.ends_with(&format!("{}\n{}\n", bmf.display(), gab.display())),
        "{listed}"
    );
    // What is left out is said, once.
    let err = stderr(&a);
    assert_eq!(
        err.matches(&format!(
            "notice: export: {LINUX}: c-wrong on mix: wrong answer; left out\n"
        ))
        .count(),
        1,
        "{err}"
    );
    let b = assert_valid("bmf.schema.json", &bmf);
    assert_eq!(b.as_object().unwrap().len(), 5);
    assert_eq!(b["c-slow/mix"]["ratio"]["value"], json!(3.8457));
    let g = assert_valid("github-action-benchmark.schema.json", &gab);
    assert_eq!(g.as_array().unwrap().len(), 10);
    assert_eq!(
        g[0]["name"],
        json!(format!("{LINUX}/c-slow/fib/ratio")),
        "sorted by name"
    );

    // `-`: the export alone on stdout, the same bytes as its file.
    let a = cell()
        .args(["report", "--history"])
        .arg(history())
        .arg("--out")
        .arg(&out)
        .args(["--export", "github-action-benchmark", "-"])
        .assert()
        .success();
    assert_eq!(stdout(&a), std::fs::read_to_string(&gab).unwrap());
    // … which --format json has already.
    let other = tmp.path().join("other");
    cell()
        .args(["--format", "json", "report", "--history"])
        .arg(history())
        .arg("--out")
        .arg(&other)
        .args(["--export", "bmf", "-"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--format json; name a FILE"));
    assert!(!other.exists(), "nothing written");
}

#[test]
fn bmf_of_two_cells_is_one_file_per_cell() {
    let tmp = tempfile::tempdir().unwrap();
    let history = two_cell_history(tmp.path());
    let out = tmp.path().join("report");
    cell()
        .args(["report", "--history"])
        .arg(&history)
        .arg("--out")
        .arg(&out)
        .arg("--export")
        .arg("bmf")
        .arg(tmp.path().join("bmf.json"))
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains(format!("run {NEWEST} has 2 cells ({LINUX}, {MAC})"))
                .and(predicate::str::contains("put {cell} in FILE")),
        );
    assert!(!out.exists(), "nothing written");

    let pattern = tmp.path().join("bmf/{cell}.json");
    let a = cell()
        .args(["report", "--history"])
        .arg(&history)
        .arg("--out")
        .arg(&out)
        .arg("--export")
        .arg("bmf")
        .arg(&pattern)
        .assert()
        .success();
    let listed = stdout(&a);
    for c in [LINUX, MAC] {
        let file = tmp.path().join(format!("bmf/{c}.json"));
        assert!(
            listed.contains(&format!("{}\n", file.display())),
            "{listed}"
        );
        let v = assert_valid("bmf.schema.json", &file);
        assert_eq!(v.as_object().unwrap().len(), 5, "{c}");
    }
}

#[test]
fn an_unknown_format_a_lone_format_or_one_file_twice_is_a_usage_error() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("report");
    let report = |export: &[&str]| {
        let mut c = cell();
        c.args(["report", "--history"])
            .arg(history())
            .arg("--out")
            .arg(&out)
            .args(export);
        c.assert()
    };
    report(&["--export", "bencher", "x.json"])
        .code(2)
        .stderr(predicate::str::contains(
            "--export bencher: unknown format; use one of bmf, github-action-benchmark",
        ));
    report(&["--export", "bmf"])
        .code(2)
        .stderr(predicate::str::contains("FORMAT").and(predicate::str::contains("FILE")));
    let same = tmp.path().join("same.json");
    let same = same.to_str().unwrap();
    report(&[
        "--export",
        "bmf",
        same,
        "--export",
        "github-action-benchmark",
        same,
    ])
    .code(2)
    .stderr(predicate::str::contains("would be written twice"));
    assert!(!out.exists(), "nothing written");
}

/// Regression: `--export` echoed FORMAT and FILE into its messages as given, so an ESC (a
/// cleared screen, a window title) or a line break in an argument reached the terminal raw.
#[test]
fn an_esc_or_a_line_break_in_an_export_argument_never_reaches_the_terminal_raw() {
    const HOSTILE: &str = "\u{1b}[2J\u{1b}]0;title\u{7}\n::error::forged";
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("report");
    let report = |history: &Path, exports: &[(&str, &Path)]| {
        let mut c = cell();
        c.args(["report", "--history"])
            .arg(history)
            .arg("--out")
            .arg(&out);
        for (format, file) in exports {
            c.arg("--export").arg(format).arg(file);
        }
        c.assert()
    };
    let clean = |stream: &str, text: &str| {
        assert!(!text.contains('\u{1b}'), "{stream} holds an ESC: {text:?}");
        assert!(!text.contains('\u{7}'), "{stream} holds a BEL: {text:?}");
        assert!(
            text.lines().all(|l| !l.trim_start().starts_with("::")),
            "{stream} starts a line with a workflow command: {text:?}"
        );
    };
    // Notices, then the error on one line: FILE and FORMAT start no line of their own.
    let one_error = |err: &str| {
        clean("stderr", err);
        let lines: Vec<&str> = err.lines().collect();
        let (last, notices) = lines.split_last().unwrap();
        assert!(last.starts_with("Error: "), "{err:?}");
        assert!(notices.iter().all(|l| l.starts_with("notice: ")), "{err:?}");
    };
    let file = tmp.path().join(format!("bmf{HOSTILE}.json"));

    // An unknown FORMAT.
    let format = format!("bmf{HOSTILE}");
    let err = stderr(&report(&history(), &[(&format, Path::new("x.json"))]).code(2));
    one_error(&err);
    assert!(err.contains("unknown format"), "{err:?}");

    // A FILE a BMF export of two cells cannot take.
    let err = stderr(&report(&two_cell_history(tmp.path()), &[("bmf", &file)]).code(2));
    one_error(&err);
    assert!(err.contains("put {cell} in FILE"), "{err:?}");

    // One FILE twice.
    let both = [("bmf", file.as_path()), ("github-action-benchmark", &file)];
    let err = stderr(&report(&history(), &both).code(2));
    one_error(&err);
    assert!(err.contains("would be written twice"), "{err:?}");
    assert!(!out.exists(), "nothing written");

    // A FILE that is written: the list of what was written shows it escaped.
    let a = report(&history(), &[("bmf", &file)]).success();
    assert!(file.is_file(), "the export is written under the name given");
    clean("stdout", &stdout(&a));
    clean("stderr", &stderr(&a));
}
