//! The footprint section on recorded results with the footprint's fields present or left out
//! field by field: a figure the file has is shown as it is, one it lacks (an older file) is
//! `–`, never 0, in `RESULTS.md` and in the terminal text alike.

use cell_testkit::{fixtures, read, split_section};
use proptest::prelude::*;

const ROW: &str = "gcc-O2";

fn job_json() -> serde_json::Value {
    let path = fixtures()
        .join("workload/jobs/2026-12-01-local-093937/cell-linux-x86_64-local-gcc-a1/results.json");
    serde_json::from_str(&read(&path)).unwrap()
}

/// The fields this change added, each set or left out.
#[derive(Clone, Debug)]
struct Fields {
    runs: Option<Vec<f64>>,
    text: Option<u64>,
    reproducible: Option<bool>,
    installed: Option<u64>,
}

fn with(fields: &Fields) -> cell_schema::JobResult {
    let mut v = job_json();
    let build = &mut v["rows"][ROW]["build"];
    if let Some(runs) = &fields.runs {
        build["compile_runs_s"] = serde_json::json!(runs);
    }
    if let Some(t) = fields.text {
        build["text_bytes"] = t.into();
    }
    if let Some(r) = fields.reproducible {
        build["reproducible"] = r.into();
    }
    if let Some(b) = fields.installed {
        v["installed"] = serde_json::json!({
            "gcc": {"bytes": b, "method": "dpkg", "how": "dpkg Installed-Size of 3 packages", "packages": 3}
        });
    }
    cell_schema::read_job(&serde_json::to_string(&v).unwrap()).unwrap()
}

/// The cells of the line of `first` in a Markdown table.
fn cells(md: &str, first: &str) -> Vec<String> {
    let line = md
        .lines()
        .find(|l| l.starts_with(&format!("| {first} |")))
        .unwrap_or_else(|| panic!("no line for {first}:\n{md}"));
    line.trim_matches('|')
        .split(" | ")
        .map(|c| c.trim().to_owned())
        .collect()
}

fn fields() -> impl Strategy<Value = Fields> {
    (
        proptest::option::of(prop::collection::vec(0.001f64..9.0, 1..5)),
        proptest::option::of(1u64..15_000),
        proptest::option::of(any::<bool>()),
        proptest::option::of(1u64..(1 << 34)),
    )
        .prop_map(|(runs, text, reproducible, installed)| Fields {
            runs,
            text,
            reproducible,
            installed,
        })
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 200,
        rng_seed: proptest::test_runner::RngSeed::Fixed(0x00f0_07f1),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn a_field_an_older_file_lacks_is_a_dash_and_one_it_has_is_shown(f in fields()) {
        let job = with(&f);
        let (_, md) = split_section(&cell_report::job_markdown(&job), "## Footprint");
        let row = cells(&md, ROW);
        // row, job, toolchain, compile s, builds, binary bytes, text bytes, reproducible
        prop_assert_eq!(&row[4], &f.runs.as_ref().map_or("–".into(), |r| r.len().to_string()));
        prop_assert_eq!(&row[5], "15960");
        prop_assert_eq!(&row[6], &f.text.map_or("–".into(), |t| t.to_string()));
        let rep = f.reproducible.map_or("–", |r| if r { "yes" } else { "NO" });
        prop_assert_eq!(&row[7], rep);
        let gcc = cells(&md, "gcc");
        prop_assert_eq!(gcc[2] == "–", f.installed.is_none(), "{:?}", gcc);
        prop_assert!(!gcc[2].starts_with('0'), "{:?}", gcc);
        // The reference's toolchain was measured by no one here: a dash, never 0.
        prop_assert_eq!(&cells(&md, "clang")[2..], &["–", "–", "–"]);
        let text = cell_report::job_text(&job);
        let line = text.lines().find(|l| l.trim_start().starts_with(ROW) && l.contains("15960")).unwrap();
        prop_assert_eq!(line.split_whitespace().nth(6).unwrap(), row[6].as_str());
    }
}

#[test]
fn a_new_file_shows_every_build_and_how_the_install_was_measured() {
    let job = with(&Fields {
        runs: Some(vec![0.061, 0.07]),
        text: Some(1_234),
        reproducible: Some(false),
        installed: Some(198_403_072),
    });
    let (_, md) = split_section(&cell_report::job_markdown(&job), "## Footprint");
    assert_eq!(
        cells(&md, ROW),
        ["gcc-O2", "gcc", "gcc", "0.061", "2", "15960", "1234", "NO"]
    );
    assert_eq!(
        cells(&md, "gcc"),
        [
            "gcc",
            "gcc",
            "189.2 MiB",
            "dpkg",
            "dpkg Installed-Size of 3 packages"
        ]
    );
}
