//! Text a spreadsheet would evaluate, in every CSV file of the report: a row name, a version
//! and a commit that begin with `=`, `+`, `-`, `@`, a tab or a CR are written quoted after a
//! `'`, so a spreadsheet shows them as text; the numeric columns stay bare numbers, a
//! negative one too.

use std::path::PathBuf;

use cell_report::report::{self, Output, Report, ReportOptions};
use cell_schema::store::{HistoryRun, RunDirName};
use cell_schema::{CellResult, Clock, RowName};
use cell_testkit::suites::suite_cell;
use serde_json::Value;

/// Every start a spreadsheet takes for a formula (OWASP's list), each in a value.
const FORMULAS: [&str; 6] = ["+SUM+A1", "=1+1", "-2+3", "@SUM(A1)", "\t=1", "\r=1"];

const RUN: &str = "2026-12-01-local-093940";
const CELL: &str = "linux-x86_64-local";

/// The recorded workload cell with its row `gcc-O2` renamed `row`, read back as a results
/// file is.
fn workload_cell(row: &str) -> CellResult {
    let path = cell_testkit::fixtures().join(format!("workload/history/{RUN}/{CELL}/results.json"));
    let mut v = cell_testkit::read_json(&path);
    let rows = v["rows"].as_object_mut().unwrap();
    let gcc = rows.remove("gcc-O2").expect("the fixture has gcc-O2");
    rows.insert(row.to_owned(), gcc);
    cell_schema::read_cell(&cell_schema::to_json(&v)).expect("the reader takes the row")
}

/// The report of one run with the workload cell (row `row`) and a suite cell.
fn report(row: &str) -> Report {
    let workload = workload_cell(row);
    let name = RunDirName::parse(RUN).unwrap();
    let suites = suite_cell(name.date(), name.id(), 0);
    let run = HistoryRun {
        dir: PathBuf::new(),
        name,
        cells: [
            (workload.cell.id.clone(), workload),
            (suites.cell.id.clone(), suites),
        ]
        .into_iter()
        .collect(),
        record: None,
        imported_soak: None,
    };
    Report::build(&[run], &ReportOptions::EVERYTHING)
}

/// `report` with `text` as every sample's and footprint row's name, and as the commit and
/// the version of every suite record; `-1.5` in one numeric column of each file.
fn hostile(mut r: Report, text: &str) -> Report {
    let samples = r.samples.as_mut().expect("EVERYTHING keeps the samples");
    for s in samples.iter_mut() {
        s.row = RowName::new(text);
    }
    samples[0].figures.insert(Clock::Wall, -1.5);
    for f in &mut r.footprint {
        f.row.row = RowName::new(text);
    }
    r.footprint[0].row.compile_s = -1.5;
    for c in &mut r.suites {
        c.info.head_sha = Some(text.to_owned());
        c.subject_version = Some(text.to_owned());
        for (_, s) in &mut c.soak {
            s.result.startup_s = Some(-1.5);
            s.result.cpu_ms_per_1k = Some(-1.5);
        }
    }
    r
}

/// One field as read back: its value, and whether it was quoted.
#[derive(Debug, PartialEq)]
struct Read {
    value: String,
    quoted: bool,
}

/// The records of an RFC 4180 file (CRLF line ends, quoted fields may hold anything).
fn parse(text: &str) -> Vec<Vec<Read>> {
    let mut records = Vec::new();
    let mut fields = Vec::new();
    let mut chars = text.chars().peekable();
    loop {
        let mut value = String::new();
        let quoted = chars.peek() == Some(&'"');
        if quoted {
            chars.next();
            loop {
                match chars.next().expect("a quoted field is closed") {
                    '"' if chars.peek() == Some(&'"') => {
                        chars.next();
                        value.push('"');
                    }
                    '"' => break,
                    c => value.push(c),
                }
            }
        }
        while let Some(&c) = chars.peek() {
            if c == ',' || c == '\r' {
                break;
            }
            assert!(!quoted, "text after a closing quote: {c:?}");
            value.push(c);
            chars.next();
        }
        fields.push(Read { value, quoted });
        match chars.next() {
            Some(',') => {}
            Some('\r') => {
                assert_eq!(chars.next(), Some('\n'), "CRLF line ends");
                records.push(std::mem::take(&mut fields));
                if chars.peek().is_none() {
                    return records;
                }
            }
            other => panic!("a record ends in CRLF, found {other:?}"),
        }
    }
}

fn file<'a>(files: &'a [Output], path: &str) -> &'a str {
    let f = files
        .iter()
        .find(|f| f.path == path)
        .unwrap_or_else(|| panic!("no {path}"));
    std::str::from_utf8(&f.bytes).unwrap()
}

/// The values of column `name` of a parsed file, its header left out.
fn column<'a>(records: &'a [Vec<Read>], name: &str) -> Vec<&'a Read> {
    let at = records[0]
        .iter()
        .position(|h| h.value == name)
        .unwrap_or_else(|| panic!("no column {name}"));
    records[1..].iter().map(|r| &r[at]).collect()
}

/// Every value of `columns` in `path` is `text` behind a `'`, quoted.
fn assert_text(files: &[Output], path: &str, columns: &[&str], text: &str) {
    let records = parse(file(files, path));
    assert!(records.len() > 1, "{path} has records");
    for name in columns {
        for got in column(&records, name) {
            let want = Read {
                value: format!("'{text}"),
                quoted: true,
            };
            assert_eq!(got, &want, "{path} column {name}");
        }
    }
}

/// `-1.5` stands bare in column `name` of `path`.
fn assert_bare_negative(files: &[Output], path: &str, name: &str) {
    let records = parse(file(files, path));
    let want = Read {
        value: "-1.5".into(),
        quoted: false,
    };
    assert!(
        column(&records, name).contains(&&want),
        "{path} column {name}"
    );
}

#[test]
fn a_row_named_like_a_formula_is_text_in_samples_and_footprint_csv() {
    // `+SUM+A1` is a valid row name, and footprint.csv wrote it as a bare field that a
    // spreadsheet evaluated.
    let files = report::render(&report("+SUM+A1"));
    for path in [report::SAMPLES_CSV, report::FOOTPRINT_CSV] {
        let records = parse(file(&files, path));
        let rows = column(&records, "row");
        assert!(
            rows.iter().any(|r| r.value == "'+SUM+A1" && r.quoted),
            "{path}: {rows:?}"
        );
        assert!(rows.iter().all(|r| !r.value.starts_with('+')), "{path}");
    }
}

#[test]
fn every_formula_start_is_text_in_every_csv_file_and_figures_stay_numbers() {
    // samples.csv and footprint.csv have no version or commit column; raw.csv and
    // summary.csv have no row.
    for text in FORMULAS {
        let files = report::render(&hostile(report("gcc-O2"), text));
        assert_text(&files, report::SAMPLES_CSV, &["row"], text);
        assert_text(&files, report::FOOTPRINT_CSV, &["row"], text);
        for path in [report::RAW_CSV, report::SUMMARY_CSV] {
            assert_text(&files, path, &["commit", "subject_version"], text);
        }
        assert_bare_negative(&files, report::SAMPLES_CSV, "wall_s");
        assert_bare_negative(&files, report::FOOTPRINT_CSV, "compile_s");
        assert_bare_negative(&files, report::RAW_CSV, "startup_s");
        assert_bare_negative(&files, report::SUMMARY_CSV, "cpu_ms_per_1k_median");
    }
}

#[test]
fn the_report_json_keeps_the_name_as_it_was() {
    // The `'` is the spreadsheets' business: the data model carries the name unchanged.
    let files = report::render(&report("+SUM+A1"));
    let v: Value = serde_json::from_str(file(&files, report::REPORT_JSON)).unwrap();
    let text = v.to_string();
    assert!(text.contains("\"+SUM+A1\"") && !text.contains("'+SUM+A1"));
}
