//! The store's reading of history: impossible values found by `validate::cell_result`, and
//! a bad file left out by path with its reason while the other runs are kept (issue 12).

use std::path::{Path, PathBuf};

use cell_schema::store::{self, StoreError, Unusable};
use cell_schema::{CellResult, RowName, ToolchainName, validate};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../cell-testkit/fixtures/workload/history")
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &to.join(e.file_name()));
        } else {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

fn first_cell() -> CellResult {
    let h = store::load_history(&fixtures()).unwrap();
    h.runs[0].cells.values().next().unwrap().clone()
}

fn messages(cell: &CellResult) -> Vec<String> {
    validate::cell_result(cell)
        .iter()
        .map(ToString::to_string)
        .collect()
}

#[test]
fn the_recorded_history_holds_no_impossible_value() {
    let h = store::load_history(&fixtures()).unwrap();
    assert_eq!(h.runs.len(), 2);
    assert!(h.skipped.is_empty(), "{:?}", h.skipped);
}

/// What a case is called, how it spoils a cell, and what a problem must say.
type Case = (&'static str, fn(&mut CellResult), &'static str);

/// Issue 12: a ratio of 0, a negative ratio, `lo > hi` and negative times were used as a
/// baseline. Each is a problem naming where it sits.
#[test]
fn impossible_values_are_named_where_they_sit() {
    let cases: [Case; 7] = [
        (
            "zero",
            |c| ratio(c).median = 0.0,
            "wall ratio of row gcc-O2 on phase fib is 0 (impossible)",
        ),
        (
            "negative",
            |c| ratio(c).lo = -1.0,
            "wall ratio of row gcc-O2 on phase fib lower bound is -1 (impossible)",
        ),
        (
            "not finite",
            |c| ratio(c).hi = f64::INFINITY,
            "upper bound is inf (impossible)",
        ),
        (
            "lo above hi",
            |c| ratio(c).lo = ratio(c).hi + 1.0,
            "lo ≤ median ≤ hi does not hold",
        ),
        (
            "negative time",
            |c| phase(c).runs[0].cpu_s = -0.25,
            "cpu time of row gcc-O2 on phase fib, round",
        ),
        (
            "negative cost",
            |c| c.cost.as_mut().unwrap().total_s = -1.0,
            "total cost is -1 s (impossible)",
        ),
        (
            "no reference",
            |c| {
                c.jobs.remove(&ToolchainName::new("gcc"));
            },
            "row gcc-O2 names job gcc, which has no summary and so no reference (impossible)",
        ),
    ];
    for (what, spoil, want) in cases {
        let mut c = first_cell();
        spoil(&mut c);
        let got = messages(&c);
        assert!(got.iter().any(|m| m.contains(want)), "{what}: {got:?}");
    }
}

/// Regression: `validate` checked the cpu and wall figures by name and never the user ones,
/// so a NaN or negative user time, summary or ratio reached the gate. Every metric a file
/// holds is checked, each problem naming the metric.
#[test]
fn an_impossible_user_figure_is_refused_by_name() {
    use cell_schema::Clock;
    fn summary(median: f64) -> cell_schema::Summary {
        cell_schema::Summary {
            n: 3,
            min: 0.1,
            median,
            max: 0.3,
            mad: 0.0,
        }
    }
    let cases: [Case; 4] = [
        (
            "NaN user time of a run",
            |c| phase(c).runs[1].user_s = Some(f64::NAN),
            "user time of row gcc-O2 on phase fib, round",
        ),
        (
            "negative user time of a run",
            |c| phase(c).runs[1].user_s = Some(-0.5),
            "user time of row gcc-O2 on phase fib, round",
        ),
        (
            "negative user ratio",
            |c| {
                let r = phase(c).ratio.as_mut().unwrap();
                let mut user = r.clocks[&Clock::Wall].clone();
                user.median = -1.0;
                r.clocks.insert(Clock::User, user);
            },
            "user ratio of row gcc-O2 on phase fib is -1 (impossible)",
        ),
        (
            "NaN user summary",
            |c| {
                let s = phase(c).stats.as_mut().unwrap();
                s.clocks.insert(Clock::User, summary(f64::NAN));
            },
            "median user time of row gcc-O2 on phase fib is NaN s (impossible)",
        ),
    ];
    for (what, spoil, want) in cases {
        let mut c = first_cell();
        assert!(messages(&c).is_empty());
        spoil(&mut c);
        let got = messages(&c);
        assert!(got.iter().any(|m| m.contains(want)), "{what}: {got:?}");
    }
}

/// `gcc-O2`'s first phase, where the cases spoil a value.
fn phase(c: &mut CellResult) -> &mut cell_schema::PhaseResult {
    c.rows
        .get_mut(&RowName::new("gcc-O2"))
        .unwrap()
        .row
        .phases
        .values_mut()
        .next()
        .unwrap()
}

fn ratio(c: &mut CellResult) -> &mut cell_schema::RatioCi {
    phase(c)
        .ratio
        .as_mut()
        .and_then(|r| r.clocks.get_mut(&cell_schema::Clock::Wall))
        .unwrap()
}

/// Issue 12: one bad file stopped every reader of the history. Now it is left out by path
/// with the reason, and the other runs are read; the run itself, read to be judged, is an
/// error naming the file.
#[test]
fn a_bad_file_is_skipped_by_path_and_the_other_runs_are_kept() {
    let tmp = tempfile::tempdir().unwrap();
    copy_dir(&fixtures(), tmp.path());
    let bad_run = tmp.path().join("2026-12-01-local-093937");
    let file = bad_run.join("linux-x86_64-local").join("results.json");
    let text = std::fs::read_to_string(&file).unwrap();
    for (spoiled, want) in [
        ("not json".to_owned(), "not a cell results file"),
        (
            text.replacen("\"schema_version\": 1", "\"schema_version\": 999", 1),
            "written by a newer cell (schema_version 999",
        ),
        (
            text.replacen("\"kind\": \"cell\",", "", 1),
            "missing field `kind`",
        ),
        (
            text.replacen(
                "\"kind\": \"cell\",",
                "\"kind\": \"cell\", \"kind\": \"cell\",",
                1,
            ),
            "duplicate key \"kind\"",
        ),
        (
            // A map's key given twice: serde would keep the last one silently.
            text.replacen("\"rows\": {", "\"rows\": {\"x\": 1, \"x\": 2,", 1),
            "duplicate key \"x\"",
        ),
        (
            text.replacen("\"median\": 1.0", "\"median\": -1.0", 1),
            "is -1 (impossible)",
        ),
    ] {
        std::fs::write(&file, &spoiled).unwrap();
        let h = store::load_history(tmp.path()).unwrap();
        let names: Vec<String> = h.runs.iter().map(|r| r.name.to_string()).collect();
        assert_eq!(names, ["2026-12-01-local-093940"], "{want}");
        assert_eq!(h.skipped.len(), 1);
        let s = &h.skipped[0];
        assert_eq!(s.path, file);
        assert_eq!(s.cell, "linux-x86_64-local");
        assert_eq!(s.run.to_string(), "2026-12-01-local-093937");
        let notice = s.notice();
        assert!(notice.contains(want), "{notice}");
        assert!(notice.ends_with("; fix or remove the file"), "{notice}");
        assert!(!matches!(s.reason, Unusable::Io(_)), "{notice}");
        let err = store::load_run(&bad_run).unwrap_err();
        assert!(
            matches!(err, StoreError::Bad { .. } | StoreError::Impossible { .. }),
            "{err}"
        );
        assert!(
            err.to_string().contains(&file.display().to_string()),
            "{err}"
        );
    }
}

/// The index lists run dirs by name, oldest first, passing over what `load_history` passes
/// over (a dot-dir of an interrupted write, a stray folder, a file), and reads nothing.
#[test]
fn the_index_lists_run_names_only_in_history_order() {
    let tmp = tempfile::tempdir().unwrap();
    copy_dir(&fixtures(), tmp.path());
    for stray in [
        ".2026-12-02-9.abc123",
        "notes",
        "2026-12-02-100",
        "2026-12-02-99",
        "2026-11-30-local-1",
    ] {
        std::fs::create_dir_all(tmp.path().join(stray)).unwrap();
    }
    std::fs::write(tmp.path().join("2026-12-03-1"), "a file, not a run").unwrap();
    // Unreadable contents do not matter: nothing under a run dir is opened.
    std::fs::write(
        tmp.path()
            .join("2026-12-01-local-093937/linux-x86_64-local/results.json"),
        "not json",
    )
    .unwrap();
    let index = store::HistoryIndex::open(tmp.path()).unwrap();
    let names: Vec<String> = index.runs().iter().map(ToString::to_string).collect();
    assert_eq!(
        names,
        [
            "2026-11-30-local-1",
            "2026-12-01-local-093937",
            "2026-12-01-local-093940",
            "2026-12-02-99",
            "2026-12-02-100"
        ]
    );
    assert_eq!(
        index.find("2026-12-02-99").map(ToString::to_string),
        Some("2026-12-02-99".to_owned())
    );
    assert!(index.find("notes").is_none());
    let full: Vec<String> = store::load_history(tmp.path())
        .unwrap()
        .runs
        .iter()
        .map(|r| r.name.to_string())
        .collect();
    // The history keeps the index's order (less the run whose one file was left out, and
    // the empty ones, which hold no cell).
    let listed: Vec<&String> = names.iter().filter(|n| full.contains(n)).collect();
    assert_eq!(listed, full.iter().collect::<Vec<_>>());
    assert!(
        store::HistoryIndex::open(&tmp.path().join("none"))
            .unwrap()
            .runs()
            .is_empty()
    );
}

/// One run's one cell, read alone with the checks `load_history` makes: the cell, the file
/// left out with the reason it would have had there, or nothing when the run has no such
/// cell; a cell id that is no one path segment reads nothing.
#[test]
fn one_cell_of_one_run_is_read_alone_with_the_same_checks() {
    let tmp = tempfile::tempdir().unwrap();
    copy_dir(&fixtures(), tmp.path());
    let index = store::HistoryIndex::open(tmp.path()).unwrap();
    let [old, new] = index.runs() else {
        panic!("two runs")
    };
    let id = cell_schema::CellId::new("linux-x86_64-local");
    let cell = index.read_cell(new, &id).unwrap().unwrap();
    let full = store::load_history(tmp.path()).unwrap();
    assert_eq!(cell, full.runs[1].cells[&id]);
    assert!(
        index
            .read_cell(new, &cell_schema::CellId::new("linux-x86_64-other"))
            .is_none()
    );
    for bad in ["../2026-12-01-local-093937/linux-x86_64-local", ".", ""] {
        assert!(
            index
                .read_cell(new, &cell_schema::CellId::new(bad))
                .is_none(),
            "{bad}"
        );
    }
    let file = tmp
        .path()
        .join(old.to_string())
        .join("linux-x86_64-local/results.json");
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(
        &file,
        text.replacen("\"median\": 1.0", "\"median\": -1.0", 1),
    )
    .unwrap();
    let s = index.read_cell(old, &id).unwrap().unwrap_err();
    let full = store::load_history(tmp.path()).unwrap();
    assert_eq!(
        (&s.path, &s.run, &s.cell, s.notice()),
        (
            &full.skipped[0].path,
            &full.skipped[0].run,
            &full.skipped[0].cell,
            full.skipped[0].notice()
        )
    );
    assert!(s.notice().contains("is -1 (impossible)"), "{}", s.notice());
}

/// A cell's file under another cell's directory is left out, by both readers, naming the
/// cell it holds: the store writes a cell under its own id only.
#[test]
fn a_cell_file_under_another_cells_directory_is_left_out() {
    let tmp = tempfile::tempdir().unwrap();
    copy_dir(&fixtures(), tmp.path());
    let run = tmp.path().join("2026-12-01-local-093937");
    std::fs::rename(
        run.join("linux-x86_64-local"),
        run.join("linux-x86_64-moved"),
    )
    .unwrap();
    let h = store::load_history(tmp.path()).unwrap();
    assert_eq!(h.runs.len(), 1);
    let notice = h.skipped[0].notice();
    assert!(
        notice.contains("it holds cell `linux-x86_64-local`, not the cell its directory names"),
        "{notice}"
    );
    let index = store::HistoryIndex::open(tmp.path()).unwrap();
    let moved = cell_schema::CellId::new("linux-x86_64-moved");
    let s = index
        .read_cell(&index.runs()[0], &moved)
        .unwrap()
        .unwrap_err();
    assert!(matches!(s.reason, Unusable::OtherCell(_)), "{}", s.notice());
    let err = store::load_run(&run).unwrap_err();
    assert!(matches!(err, StoreError::OtherCell { .. }), "{err}");
}

/// A run dir named `2026-02-31-…` was read as a run of the history (every day 1–31 passed):
/// a name whose date is no day of the calendar is no run dir, for the index, the history
/// and a run read alone.
#[test]
fn a_run_dir_named_by_a_day_the_calendar_lacks_is_no_run() {
    let tmp = tempfile::tempdir().unwrap();
    let run = fixtures().join("2026-12-01-local-093937");
    for name in [
        "2026-02-31-7",
        "2026-02-29-8",
        "2026-13-01-9",
        "2026-02-28-7",
    ] {
        copy_dir(&run, &tmp.path().join(name));
    }
    let index = store::HistoryIndex::open(tmp.path()).unwrap();
    let names: Vec<String> = index.runs().iter().map(ToString::to_string).collect();
    assert_eq!(names, ["2026-02-28-7"]);
    let history = store::load_history(tmp.path()).unwrap();
    assert_eq!(history.runs.len(), 1);
    assert!(history.skipped.is_empty(), "{:?}", history.skipped);
    let e = store::load_run(&tmp.path().join("2026-02-31-7")).unwrap_err();
    assert!(matches!(e, StoreError::NotARun { .. }), "{e}");
    assert!(e.to_string().contains("of a day the calendar has"), "{e}");
    assert!(store::RunDirName::new("2026-02-28", &"7".repeat(129)).is_err());
}

/// The exact lane's figures: what no cachegrind run gives is a problem naming the row, phase
/// and figure, so a forged count or spread never reaches the code verdict.
#[test]
fn an_exact_lane_figure_no_run_gives_is_refused() {
    fn repeat(runs: u32, spread: f64) -> cell_schema::ExactRepeat {
        cell_schema::ExactRepeat { runs, spread }
    }
    let cases: [Case; 9] = [
        (
            "zero cycles",
            |c| phase(c).estimated_cycles = Some(0),
            "estimated cycles of row gcc-O2 on phase fib are 0 (impossible)",
        ),
        (
            "fewer cycles than instructions",
            |c| {
                phase(c).instructions = Some(1_000);
                phase(c).estimated_cycles = Some(999);
            },
            "estimated cycles of row gcc-O2 on phase fib are 999, fewer than its 1000 instructions",
        ),
        (
            "cycles alone",
            |c| phase(c).estimated_cycles = Some(5_000),
            "without its instruction count",
        ),
        (
            "no run",
            |c| phase(c).exact_repeat = Some(repeat(0, 0.0)),
            "0 run(s)",
        ),
        (
            "four runs",
            |c| phase(c).exact_repeat = Some(repeat(4, 0.0)),
            "4 run(s)",
        ),
        (
            "NaN spread",
            |c| phase(c).exact_repeat = Some(repeat(3, f64::NAN)),
            "3 run(s) with spread NaN",
        ),
        (
            "a planted spread",
            |c| phase(c).exact_repeat = Some(repeat(3, 1000.0)),
            "3 run(s) with spread 1000",
        ),
        (
            "a spread of two runs",
            |c| phase(c).exact_repeat = Some(repeat(2, 0.01)),
            "2 run(s) with spread 0.01",
        ),
        (
            "a forged reference",
            |c| {
                let row = c.rows.get_mut(&RowName::from("gcc-O2")).unwrap();
                row.row.role = cell_schema::Role::Reference;
            },
            "row gcc-O2 says it is a reference, but job gcc's reference is",
        ),
    ];
    for (what, spoil, want) in cases {
        let mut c = first_cell();
        spoil(&mut c);
        let got = messages(&c);
        assert!(got.iter().any(|m| m.contains(want)), "{what}: {got:?}");
    }
    let mut c = first_cell();
    c.jobs
        .get_mut(&ToolchainName::new("gcc"))
        .unwrap()
        .instructions = Some(cell_schema::InstructionLane {
        valgrind: None,
        version: None,
        argv: Vec::new(),
        timeout_s: 600.0,
        seconds: 1.0,
        cache: Some(cell_schema::CacheRecord {
            i1: "32768,8,64".into(),
            d1: "1,2,3 ![x](https://example.invalid/p.png)".into(),
            ll: "8388608,16,64".into(),
        }),
        env_bytes: None,
        rows_skipped: Vec::new(),
        skipped: None,
    });
    let got = messages(&c);
    assert!(
        got.iter()
            .any(|m| m.starts_with("exact-lane cache D1 of job gcc is `1,2,3 ![x]")),
        "{got:?}"
    );
}

/// A `<row>.prev` row is the previous release's build of a row of its own job, kept only
/// where that release was installed: a row planted under another name, another role, beside
/// a row of another job or with no installed release would put a same-job ratio beside a
/// row it never ran with.
#[test]
fn a_previous_row_that_is_not_the_previous_releases_build_of_its_jobs_row_is_refused() {
    fn planted(c: &mut CellResult, name: &str, role: cell_schema::Role, installed: bool) {
        let gcc = ToolchainName::new("gcc");
        let mut row = c.rows[&RowName::new("gcc-O2")].row.clone();
        row.role = role;
        let subject = cell_schema::Subject {
            tag: "v1".into(),
            asset: "gcc-1.tar.gz".into(),
            sha256: cell_schema::Sha256::parse(&"ab".repeat(32)).unwrap(),
            toolchain: None,
            version: Some("1".into()),
            url: None,
            verified: None,
            tools: std::collections::BTreeMap::default(),
            binary_sha256: None,
            binary_bytes: None,
            printed: None,
        };
        let job = c.jobs.get_mut(&gcc).unwrap();
        job.subject = Some(cell_schema::Subject {
            tag: "v2".into(),
            sha256: cell_schema::Sha256::parse(&"cd".repeat(32)).unwrap(),
            ..subject.clone()
        });
        job.previous = Some(cell_schema::PreviousRelease {
            baseline_run: "2026-01-01-1".into(),
            commit: None,
            recorded: subject.clone(),
            installed: installed.then_some(subject),
            skipped: None,
            not_built: std::collections::BTreeMap::default(),
        });
        job.previous_rows.insert(RowName::new(name), row);
    }
    fn previous(c: &mut CellResult) -> &mut cell_schema::PreviousRelease {
        c.jobs
            .get_mut(&ToolchainName::new("gcc"))
            .unwrap()
            .previous
            .as_mut()
            .unwrap()
    }
    use cell_schema::Role::{Previous, Row};
    let want = "is not `<row>.prev` of a row of job gcc built by an installed previous release";
    for (what, name, role, installed) in [
        ("no suffix", "gcc-O2", Previous, true),
        ("another role", "gcc-O2.prev", Row, true),
        ("a row no job has", "nothing.prev", Previous, true),
        ("no installed release", "gcc-O2.prev", Previous, false),
    ] {
        let mut c = first_cell();
        planted(&mut c, name, role, installed);
        let got = messages(&c);
        assert!(got.iter().any(|m| m.contains(want)), "{what}: {got:?}");
    }
    let mut c = first_cell();
    planted(&mut c, "gcc-O2.prev", Previous, true);
    let got = messages(&c);
    assert!(
        !got.iter()
            .any(|m| m.contains(want) || m.contains("previous release")),
        "{got:?}"
    );
    // The release itself: what a job never writes.
    let cases: [Case; 4] = [
        (
            "installed and skipped",
            |c| {
                planted(c, "gcc-O2.prev", Previous, true);
                previous(c).skipped = Some("x".into());
            },
            "the previous release of job gcc is both installed and skipped",
        ),
        (
            "neither",
            |c| planted(c, "gcc-O2.prev", Previous, false),
            "is neither installed nor skipped with a reason",
        ),
        (
            "another digest installed",
            |c| {
                planted(c, "gcc-O2.prev", Previous, true);
                previous(c).installed.as_mut().unwrap().sha256 =
                    cell_schema::Sha256::parse(&"ef".repeat(32)).unwrap();
            },
            "not the recorded",
        ),
        (
            "the job's own release",
            |c| {
                planted(c, "gcc-O2.prev", Previous, true);
                let own = previous(c).recorded.clone();
                c.jobs.get_mut(&ToolchainName::new("gcc")).unwrap().subject = Some(own);
            },
            "is not another release than the job's release under test",
        ),
    ];
    for (what, spoil, want) in cases {
        let mut c = first_cell();
        spoil(&mut c);
        let got = messages(&c);
        assert!(got.iter().any(|m| m.contains(want)), "{what}: {got:?}");
    }
}
