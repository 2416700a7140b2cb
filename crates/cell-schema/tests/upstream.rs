//! The Python cell's committed history (the fixture under `crates/cell/tests/fixtures/`)
//! read into the imported form: every figure kept, nothing added, names checked.

use std::path::PathBuf;

use cell_schema::upstream::{self, Import, ImportError};
use cell_schema::{Phase, RowName, Sha256};

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../cell/tests/fixtures/upstream-cell")
}

fn sha() -> Sha256 {
    Sha256::parse(&"ab".repeat(32)).unwrap()
}

fn workload_text() -> String {
    std::fs::read_to_string(
        fixture().join("results/2026-09-13-34783020976/linux-x86_64-ubuntu-latest/results.json"),
    )
    .unwrap()
}

#[test]
fn the_history_holds_one_workload_cell_and_one_soak() {
    let found = upstream::find(&fixture()).unwrap();
    let rels: Vec<&str> = found.iter().map(|f| f.rel.as_str()).collect();
    assert_eq!(
        rels,
        [
            "results/2026-09-13-34783020976/linux-x86_64-ubuntu-latest/results.json",
            "soak/2026-09-06-34062566194/results.json"
        ]
    );
}

#[test]
fn a_workload_cell_keeps_its_points_and_says_how_they_were_made() {
    let Import::Cell { name, result } = upstream::read(&workload_text(), "r.json", &sha()).unwrap()
    else {
        panic!("a cell");
    };
    assert_eq!(name.to_string(), "2026-09-13-34783020976");
    assert_eq!(result.cell.id.as_str(), "linux-x86_64-ubuntu-latest");
    assert!(
        result.jobs.is_empty() && result.rows.is_empty(),
        "no measured form"
    );
    assert!(
        result.cost.is_none(),
        "the old job minutes are another measure"
    );
    let imp = result.imported.as_ref().unwrap();
    assert_eq!(
        imp.method.summary,
        "ratio of medians of the kept repetitions (6 of 7, the first 1 dropped), wall clock (time.monotonic), pinned to CPU 0 (taskset -c 0); no per-round pairs, so no interval"
    );
    let p = &imp.rows[&RowName::new("c-O0")].phases[&Phase::new("mix")];
    assert!((p.point_ratio - 2.7743).abs() < 1e-12);
    assert_eq!((p.run_s.len(), p.dropped), (7, 1));
    assert!((p.median_s - 0.8402).abs() < 1e-12);
    let primes = &imp.rows[&RowName::new("c-O2")].phases[&Phase::new("primes")];
    assert!(
        (primes.median_s - 0.16495).abs() < 1e-12,
        "rounded at write"
    );
    assert_eq!(imp.rows.len(), 11);
    let subject = imp.subject.as_ref().unwrap();
    assert_eq!(subject.tag, "v0.15.34");
    assert_eq!(subject.binary_bytes, Some(1_446_104));
    assert!(cell_schema::validate::cell_result(&result).is_empty());
}

#[test]
fn a_soak_becomes_a_run_level_record() {
    let text = std::fs::read_to_string(fixture().join("soak/2026-09-06-34062566194/results.json"))
        .unwrap();
    let Import::Soak { name, record } = upstream::read(&text, "s.json", &sha()).unwrap() else {
        panic!("a soak");
    };
    assert_eq!(name.to_string(), "2026-09-06-34062566194");
    assert_eq!(record.servers.len(), 14);
    let php = &record.servers[&cell_schema::ServerName::new("php-builtin")];
    assert_eq!(php.drift, Some(cell_schema::ImportedDrift::Drifted));
    let uv = &record.servers[&cell_schema::ServerName::new("py-uvicorn")];
    assert!(uv.error.is_some() && uv.drift.is_none() && uv.rss_at_kib.is_empty());
    assert!(
        !cell_schema::to_json(&*record).contains("runnervm"),
        "no hostname"
    );
}

#[test]
fn hostile_names_and_numbers_are_refused() {
    let text = workload_text();
    let cases = [
        (
            text.replacen("\"row\": \"c-O0\"", "\"row\": \"../x\"", 1),
            "is not a valid RowName",
        ),
        (
            text.replacen("\"rss_bytes\": 51625984", "\"rss_bytes\": 1e400", 1),
            "out of range",
        ),
        (
            text.replacen("\"median\": 1.57595", "\"median\": 1.6", 1),
            "are not those of its kept repetitions",
        ),
        (
            text.replacen(
                "\"ratio_to_reference\": 2.7207",
                "\"ratio_to_reference\": 2.9",
                1,
            ),
            "is not its median over job c's reference median",
        ),
        ("not json".to_owned(), "expected"),
        (
            "{\"schema_version\": 1}".to_owned(),
            "already a results file",
        ),
    ];
    for (text, want) in cases {
        let e: ImportError = upstream::read(&text, "r.json", &sha()).unwrap_err();
        assert!(e.to_string().contains(want), "{want}: {e}");
    }
}

fn soak_text() -> String {
    std::fs::read_to_string(fixture().join("soak/2026-09-06-34062566194/results.json")).unwrap()
}

fn run_dir(text: &str) -> Result<String, ImportError> {
    upstream::read(text, "r.json", &sha()).map(|i| i.name().to_string())
}

/// Issue 24, case 8: `2026-02-31` became a run dir, `2026-09-13/../../x` was read as
/// 2026-09-13, a time with an offset was filed under its local date, and `0034783020976` made
/// a second dir for run 34783020976. Dates are UTC days of the calendar; run ids canonical.
#[test]
fn import_dates_are_utc_days_of_the_calendar_and_run_ids_canonical_numbers() {
    let text = workload_text();
    let date = |d: &str| text.replacen("\"2026-09-13T21:11:02Z\"", &format!("\"{d}\""), 1);
    let id = |i: &str| {
        text.replacen(
            "\"run_id\": \"34783020976\"",
            &format!("\"run_id\": \"{i}\""),
            1,
        )
    };
    assert_eq!(
        run_dir(&date("2026-09-13T23:30:00-05:00")).unwrap(),
        "2026-09-14-34783020976",
        "filed under its UTC date"
    );
    assert_eq!(
        run_dir(&date("2026-09-14T01:30:00+02:00")).unwrap(),
        "2026-09-13-34783020976"
    );
    assert_eq!(
        run_dir(&date("2026-09-13")).unwrap(),
        "2026-09-13-34783020976"
    );
    for bad in [
        "2026-02-31T21:11:02Z",
        "2026-09-13/../../x",
        "2026-09-13T21:11:02",
        "2026-09-13T21:11:02Zjunk",
        "13/09/2026",
    ] {
        let e = run_dir(&date(bad)).unwrap_err();
        assert!(matches!(e, ImportError::Field(_)), "{bad}: {e}");
        assert!(e.to_string().starts_with("cell.date `"), "{bad}: {e}");
        assert!(e.to_string().contains("is no UTC day"), "{bad}: {e}");
    }
    let long = "9".repeat(300);
    for bad in [
        "0034783020976",
        "+34783020976",
        "3478302097a",
        "",
        long.as_str(),
    ] {
        let e = run_dir(&id(bad)).unwrap_err();
        assert!(e.to_string().starts_with("cell.run_id `"), "{bad}: {e}");
        assert!(e.to_string().contains("no leading zero"), "{bad}: {e}");
        assert!(e.to_string().len() < 300, "a bounded message: {e}");
    }

    let soak = soak_text();
    let one_server = soak.replacen(
        "\"2026-09-06 21:57:30 UTC\"",
        "\"2026-09-31 21:57:30 UTC\"",
        1,
    );
    let e = run_dir(&one_server).unwrap_err();
    assert!(e.to_string().starts_with("conditions."), "{e}");
    assert!(
        e.to_string()
            .contains(".date_utc `2026-09-31 21:57:30 UTC` is no UTC day"),
        "{e}"
    );
    let padded = soak.replace("\"34062566194\"", "\"0034062566194\"");
    let e = run_dir(&padded).unwrap_err();
    assert!(
        e.to_string().starts_with("GITHUB_RUN_ID `0034062566194`"),
        "{e}"
    );
}
