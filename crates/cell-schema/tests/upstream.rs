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
