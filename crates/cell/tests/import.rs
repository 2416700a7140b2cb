//! `cell import` through the binary, on the author's own committed history of the Python cell
//! (`fixtures/upstream-cell`, copied from that repository unchanged): the run dirs it writes,
//! a second import that writes nothing, hostile copies refused by path with nothing written,
//! `cell report` and `cell gate` over the imported history, and `--versions-env`.

mod common;

use std::path::{Path, PathBuf};

use cell_testkit::scripted::Timings;
use cell_testkit::snippets::{CLANG, c_row};
use common::{assert_valid, cell, project, read_json};
use predicates::prelude::*;

const RUN: &str = "2026-09-13-34783020976";
const SOAK_RUN: &str = "2026-09-06-34062566194";
const CELL: &str = "linux-x86_64-ubuntu-latest";
const OLD_CELL_FILE: &str =
    "results/2026-09-13-34783020976/linux-x86_64-ubuntu-latest/results.json";

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/upstream-cell")
}

/// A copy of the old history under `tmp/upstream`, to import or to spoil.
fn upstream(tmp: &Path) -> PathBuf {
    let dir = tmp.join("upstream");
    cell_testkit::copy_dir(&fixture(), &dir);
    dir
}

fn import(from: &Path, results: &Path) -> assert_cmd::assert::Assert {
    cell()
        .arg("import")
        .arg(from)
        .arg("--results")
        .arg(results)
        .assert()
}

fn stdout(a: &assert_cmd::assert::Assert) -> String {
    String::from_utf8_lossy(&a.get_output().stdout).into_owned()
}

fn stderr(a: &assert_cmd::assert::Assert) -> String {
    String::from_utf8_lossy(&a.get_output().stderr).into_owned()
}

#[test]
fn import_writes_one_run_dir_per_old_run_each_marked_imported() {
    let tmp = tempfile::tempdir().unwrap();
    let old = upstream(tmp.path());
    let results = tmp.path().join("results");
    import(&old, &results).success();
    assert_eq!(cell_testkit::names(&results), [SOAK_RUN, RUN]);

    let cell_dir = results.join(RUN).join(CELL);
    assert_eq!(
        cell_testkit::names(&cell_dir),
        ["RESULTS.md", "results.json"]
    );
    let j = read_json(&cell_dir.join("results.json"));
    assert_valid("results", &j);
    assert_eq!(j["kind"], "cell");
    // Nothing reads an imported point as a measured interval: the measured maps are empty.
    assert_eq!(j["rows"], serde_json::json!({}));
    assert_eq!(j["jobs"], serde_json::json!({}));
    assert!(
        j.get("cost").is_none(),
        "the old job minutes are another measure"
    );
    let imp = &j["imported"];
    assert_eq!(imp["source"]["path"], OLD_CELL_FILE);
    let bytes = std::fs::read(old.join(OLD_CELL_FILE)).unwrap();
    assert_eq!(
        imp["source"]["sha256"],
        cell_testkit::sha256(&bytes).to_string()
    );
    assert!(
        imp["method"]["summary"]
            .as_str()
            .unwrap()
            .ends_with("wall clock (time.monotonic), pinned to CPU 0 (taskset -c 0); no per-round pairs, so no interval"),
        "{}",
        imp["method"]["summary"]
    );
    let mix = &imp["rows"]["c-O0"]["phases"]["mix"];
    assert_eq!(mix["point_ratio"], 2.7743);
    assert_eq!(mix["run_s"].as_array().unwrap().len(), 7);
    assert_eq!(mix["dropped"], 1);
    assert!(
        mix.get("lo").is_none() && mix.get("ratio").is_none(),
        "no interval"
    );
    assert_eq!(imp["subject"]["binary_bytes"], 1_446_104);
    let md = cell_testkit::read(&cell_dir.join("RESULTS.md"));
    assert!(md.contains("Imported by `cell import` from"), "{md}");

    // The soak names no cell: a record beside the cells of its run, with no hostname.
    let soak_file = results.join(SOAK_RUN).join("imported-soak.json");
    let soak = read_json(&soak_file);
    assert_valid("imported-soak", &soak);
    assert_eq!(soak["kind"], "imported_soak");
    assert_eq!(soak["servers"]["php-builtin"]["drift"], "drifted");
    assert!(!cell_testkit::read(&soak_file).contains("runnervm"));
}

#[test]
fn a_second_import_writes_nothing_and_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    let old = upstream(tmp.path());
    let results = tmp.path().join("results");
    import(&old, &results).success();
    let before = cell_testkit::files(&results);
    let again = import(&old, &results).success();
    assert!(
        stderr(&again).contains("nothing new: every run dir already holds this import"),
        "{}",
        stderr(&again)
    );
    assert!(stdout(&again).contains("already imported, nothing written"));
    assert_eq!(cell_testkit::files(&results), before);
    // One run dir named straight, or one file, imports the same cell; its source path is
    // relative to what was named, so over the first import it is another import, refused.
    let whole = read_json(&results.join(RUN).join(CELL).join("results.json"));
    for (from, rel) in [
        (
            old.join("results").join(RUN),
            format!("{CELL}/results.json"),
        ),
        (old.join(OLD_CELL_FILE), "results.json".to_owned()),
    ] {
        let elsewhere = tmp.path().join(format!("elsewhere-{}", rel.len()));
        import(&from, &elsewhere).success();
        let mut j = read_json(&elsewhere.join(RUN).join(CELL).join("results.json"));
        assert_eq!(j["imported"]["source"]["path"], rel.as_str());
        j["imported"]["source"]["path"] = whole["imported"]["source"]["path"].clone();
        assert_eq!(j, whole);
        let a = import(&from, &results).code(2);
        assert!(stderr(&a).contains("only an identical import may stand there"));
    }
    assert_eq!(cell_testkit::files(&results), before);
}

#[test]
fn an_import_never_overwrites_a_run_dir_that_is_not_the_same_import() {
    let tmp = tempfile::tempdir().unwrap();
    let old = upstream(tmp.path());
    let results = tmp.path().join("results");
    let other = results.join(RUN).join(CELL).join("results.json");
    std::fs::create_dir_all(other.parent().unwrap()).unwrap();
    std::fs::write(&other, "{}").unwrap();
    let a = import(&old, &results).code(2);
    assert!(
        stderr(&a).contains("already exists with different content"),
        "{}",
        stderr(&a)
    );
    assert_eq!(std::fs::read_to_string(&other).unwrap(), "{}");
    assert_eq!(
        cell_testkit::names(&results),
        [RUN],
        "the soak's run dir was not written either"
    );
}

/// Spoils the copy's workload file as `how` says.
fn spoil(old: &Path, how: &str) {
    let file = old.join(OLD_CELL_FILE);
    let text = std::fs::read_to_string(&file).unwrap();
    let spoiled = match how {
        "a row named ../x" => text.replacen("\"row\": \"c-O0\"", "\"row\": \"../x\"", 1),
        "a huge number" => text.replacen("\"rss_bytes\": 51625984", "\"rss_bytes\": 1e400", 1),
        "not JSON" => "<html>not JSON</html>".to_owned(),
        other => panic!("{other}"),
    };
    std::fs::write(&file, spoiled).unwrap();
}

#[test]
fn a_hostile_copy_is_refused_by_path_with_exit_2_and_nothing_written() {
    for (how, says) in [
        ("a row named ../x", "`../x` is not a valid RowName"),
        ("a huge number", "out of range"),
        ("not JSON", "expected value"),
    ] {
        let tmp = tempfile::tempdir().unwrap();
        let old = upstream(tmp.path());
        spoil(&old, how);
        let results = tmp.path().join("results");
        let a = import(&old, &results).code(2);
        let err = stderr(&a);
        assert!(err.contains(OLD_CELL_FILE), "{how}: names the file:\n{err}");
        assert!(err.contains(says), "{how}: {says}:\n{err}");
        assert!(err.contains("nothing was written"), "{how}:\n{err}");
        assert!(
            !results.exists(),
            "{how}: nothing written, not even the soak"
        );
    }
}

/// A results dir that already holds a history: what a refused import must leave as it was.
fn results_with_history(tmp: &Path) -> PathBuf {
    let results = tmp.join("results");
    cell_testkit::copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../cell-testkit/fixtures/workload/history"),
        &results,
    );
    results
}

/// Every directory and every byte under `dir`.
fn snapshot(dir: &Path) -> (Vec<String>, std::collections::BTreeMap<String, String>) {
    (cell_testkit::tree(dir), cell_testkit::files(dir))
}

/// A second old run beside the good one: the good cell file with its date and run id
/// replaced, at `results/<dir>/…`.
fn add_run(old: &Path, dir: &str, date: &str, run_id: &str) -> String {
    let text = std::fs::read_to_string(old.join(OLD_CELL_FILE)).unwrap();
    let text = text
        .replacen("\"2026-09-13T21:11:02Z\"", &format!("\"{date}\""), 1)
        .replacen(
            "\"run_id\": \"34783020976\"",
            &format!("\"run_id\": \"{run_id}\""),
            1,
        );
    let rel = format!("results/{dir}/{CELL}/results.json");
    std::fs::create_dir_all(old.join(&rel).parent().unwrap()).unwrap();
    std::fs::write(old.join(&rel), text).unwrap();
    rel
}

/// Issue 24, case 6: one good old run and one whose `run_id` is 300 digits wrote the good run
/// dir, then exited 2 on `ENAMETOOLONG`. Case 8: a date the calendar lacks, a date with a path
/// after it and a run id with leading zeros became run dirs. Every run is checked before any
/// is written: exit 2 naming the file and field, and the results dir byte for byte as it was.
#[test]
fn one_bad_run_among_good_ones_is_refused_naming_it_and_nothing_is_written() {
    let long = "9".repeat(300);
    for (date, run_id, says) in [
        ("2026-09-14T08:00:00Z", long.as_str(), "cell.run_id `999"),
        (
            "2026-09-14T08:00:00Z",
            "0034783020976",
            "cell.run_id `0034783020976` is not a run id",
        ),
        (
            "2026-02-31T08:00:00Z",
            "34800000000",
            "cell.date `2026-02-31T08:00:00Z` is no UTC day",
        ),
        (
            "2026-09-13/../../x",
            "34800000000",
            "cell.date `2026-09-13/../../x` is no UTC day",
        ),
    ] {
        let tmp = tempfile::tempdir().unwrap();
        let old = upstream(tmp.path());
        let rel = add_run(&old, "2026-09-14-bad", date, run_id);
        let results = results_with_history(tmp.path());
        let before = snapshot(&results);
        let a = import(&old, &results).code(2);
        let err = stderr(&a);
        assert!(err.contains(&rel), "{says}: names the file:\n{err}");
        assert!(err.contains(says), "{says}:\n{err}");
        assert!(err.contains("nothing was written"), "{says}:\n{err}");
        assert!(err.len() < 2000, "a bounded message:\n{err}");
        assert_eq!(snapshot(&results), before, "{says}: results/ as it was");
    }
}

/// Case 8: a time with an offset was filed under its local date; it is filed under its UTC
/// date, and a run id of one value has one run dir.
#[test]
fn a_time_with_an_offset_is_imported_under_its_utc_date() {
    let tmp = tempfile::tempdir().unwrap();
    let old = upstream(tmp.path());
    add_run(
        &old,
        "2026-09-14-x",
        "2026-09-14T23:30:00-05:00",
        "34800000000",
    );
    let results = tmp.path().join("results");
    import(&old, &results).success();
    assert_eq!(
        cell_testkit::names(&results),
        [SOAK_RUN, RUN, "2026-09-15-34800000000"]
    );
    let j = read_json(
        &results
            .join("2026-09-15-34800000000")
            .join(CELL)
            .join("results.json"),
    );
    assert_eq!(j["run"]["date"], "2026-09-15");
}

/// Case 6 where the names are good but the paths are not: under a results dir so deep that
/// the soak's run dir fits and the cell's does not (Linux's `PATH_MAX`), the soak was written
/// and the cell failed with `ENAMETOOLONG`. The lengths are checked with everything else
/// before anything is written.
#[cfg(target_os = "linux")]
#[test]
fn a_run_dir_whose_paths_the_system_cannot_take_stops_the_import_before_any_write() {
    let tmp = tempfile::tempdir().unwrap();
    let old = upstream(tmp.path());
    // The cell's longest path is 71 bytes past the results dir, the soak's 50: at 4027 the
    // soak's files fit in 4095 bytes and the cell's do not.
    let mut results = std::path::absolute(tmp.path()).unwrap().join("deep");
    while results.as_os_str().len() < 4027 {
        let room = 4027 - results.as_os_str().len() - 1;
        results.push("d".repeat(room.clamp(1, 200)));
    }
    assert_eq!(results.as_os_str().len(), 4027);
    std::fs::create_dir_all(&results).unwrap();
    let a = import(&old, &results).code(2);
    let err = stderr(&a);
    assert!(err.contains("longer than a path (4095 bytes)"), "{err}");
    assert!(err.contains("nothing was written"), "{err}");
    assert!(
        cell_testkit::names(&results).is_empty(),
        "not even the soak's run dir"
    );
}

#[test]
fn report_draws_the_imported_run_marked() {
    let tmp = tempfile::tempdir().unwrap();
    let results = tmp.path().join("results");
    import(&upstream(tmp.path()), &results).success();
    let out = tmp.path().join("report");
    cell()
        .args(["report", "-q", "--history"])
        .arg(&results)
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    let svg = cell_testkit::read(&out.join(format!("charts/{CELL}/mix.svg")));
    assert!(svg.contains("class=\"imported\""), "{svg}");
    assert!(svg.contains("imported (wall clock, point ratio)"), "{svg}");
    assert!(
        svg.contains("c-O0 in 2026-09-13-34783020976 (imported): 2.7743"),
        "{svg}"
    );
    assert!(!svg.contains("class=\"band\"") && !svg.contains("class=\"errorbar\""));
    let page = cell_testkit::read(&out.join("README.md"));
    assert!(page.contains("imported only: 2.7743"), "{page}");
    assert!(
        page.contains(&format!("Imported soak {SOAK_RUN}")),
        "{page}"
    );
    assert!(page.contains("| `php-builtin` | drifted |"), "{page}");
}

const VERSIONS: &str = "REPS=13\nDROP=1\nREPS_MAX=13\nPHASES=mix,fib\nTOOTH_PHASE=mix\nTOOTH_MIN=2\nREFERENCE=c-O2\nTOLERANCE=0.05\nCI_TARGET=0.01\n";

/// The tiny project with the old history's reference and slow row, `c-O2` and `c-O0`, and a
/// row the old history does not have, `c-O1`.
fn old_rows_project(tmp: &Path) -> PathBuf {
    let root = project(tmp, VERSIONS, "");
    let toml = format!(
        "workload = \"bench/workload\"\n\n[expect]\nmix = \"42\"\nfib = \"7\"\n\n[tooth]\nslow = \"c-O0\"\nfast = \"c-O2\"\n{CLANG}{}{}{}",
        c_row("c-O2", "clang", "clang -O2", "clang", &["-O2"]),
        c_row("c-O0", "clang", "clang -O0", "clang", &["-O0"]),
        c_row("c-O1", "clang", "clang -O1", "clang", &["-O1"]),
    );
    std::fs::write(root.join("cell/cell.toml"), toml).unwrap();
    root
}

/// One `cell local` run of `root` on scripted timings — `c-O0` at the old ratio on `mix` and
/// well off it on `fib` — its cell renamed to the old history's cell, moved into `history`.
fn local_run_as_old_cell(root: &Path, tmp: &Path, history: &Path) -> PathBuf {
    local_run_as_old_cell_timed(root, tmp, history, |t| t)
}

/// [`local_run_as_old_cell`] with its timings changed by `change`.
fn local_run_as_old_cell_timed(
    root: &Path,
    tmp: &Path,
    history: &Path,
    change: impl Fn(Timings) -> Timings,
) -> PathBuf {
    let out = tmp.join("local");
    std::fs::create_dir_all(&out).unwrap();
    let timings = change(
        Timings::new(7)
            .row("c-O2", 0.05)
            .row("c-O1", 0.06)
            .phase("c-O0", "mix", 0.05 * 2.7743)
            .phase("c-O0", "fib", 0.05 * 2.5),
    )
    .write(&tmp.join("timings.json"));
    cell()
        .args(["local", "-q", "--seed", "3", "--scripted-timings"])
        .arg(&timings)
        .arg("--root")
        .arg(root)
        .arg("--out")
        .arg(&out)
        .assert()
        .code(predicate::in_iter([0, 1]));
    let run = cell_testkit::names(&out)
        .into_iter()
        .find(|n| n.contains("-local-"))
        .expect("a run dir");
    let local_cell = format!("{}-{}-local", std::env::consts::OS, std::env::consts::ARCH);
    let dest = history.join(&run);
    std::fs::create_dir_all(&dest).unwrap();
    std::fs::rename(out.join(&run).join(&local_cell), dest.join(CELL)).unwrap();
    let file = dest.join(CELL).join("results.json");
    let mut j = read_json(&file);
    j["cell"]["id"] = CELL.into();
    j["cell"]["label"] = "ubuntu-latest".into();
    std::fs::write(&file, serde_json::to_string_pretty(&j).unwrap()).unwrap();
    dest
}

fn gate(
    root: &Path,
    run: &Path,
    history: &Path,
    baseline: Option<&str>,
) -> assert_cmd::assert::Assert {
    let mut c = cell();
    c.env_remove("GITHUB_ACTIONS")
        .env_remove("GITHUB_STEP_SUMMARY")
        .args(["gate", "--allow-scripted"])
        .arg(run)
        .arg("--root")
        .arg(root)
        .arg("--history")
        .arg(history);
    if let Some(b) = baseline {
        c.args(["--baseline", b]);
    }
    c.assert()
}

#[test]
fn gate_against_an_imported_baseline_reads_the_wall_clock_against_its_point_ratio() {
    let tmp = tempfile::tempdir().unwrap();
    let history = tmp.path().join("history");
    import(&upstream(tmp.path()), &history).success();
    let root = old_rows_project(tmp.path());
    let run = local_run_as_old_cell(&root, tmp.path(), &history);

    let a = gate(&root, &run, &history, Some(RUN)).code(1);
    let text = stdout(&a);
    let report = read_json(&run.join("gate.json"));
    assert_valid("gate", &report);
    let verdicts = report["cells"][0]["verdicts"].as_array().unwrap();
    let seen: Vec<(&str, &str, &str)> = verdicts
        .iter()
        .map(|v| {
            (
                v["row"].as_str().unwrap(),
                v["phase"].as_str().unwrap(),
                v["status"].as_str().unwrap(),
            )
        })
        .collect();
    // Only c-O0 is in both: mix at the old ratio passes, fib 24% off it fails.
    assert_eq!(
        seen,
        [("c-O0", "fib", "fail"), ("c-O0", "mix", "pass")],
        "{text}"
    );
    for v in verdicts {
        assert_eq!(v["clock"], "wall");
        assert_eq!(v["against_imported_point"], true);
        assert_eq!(v["old"]["lo"], v["old"]["hi"], "a point, no interval");
        assert!(
            v["message"]
                .as_str()
                .unwrap()
                .contains("against an imported point ratio on the wall clock"),
            "{v}"
        );
    }
    for line in [
        format!("PASS {CELL} c-O0 mix (wall): "),
        format!("FAIL {CELL} c-O0 fib (wall): "),
        "rows not compared: only in this run: c-O1; only in the imported baseline: cs-aot, cs-jit, go, mc-opt, mc-plain, rust-O0, rust-O3, zig-debug, zig-fast".to_owned(),
        "phases not compared: c-O0 all, primes (imported only)".to_owned(),
        format!("baseline {RUN} is imported ({OLD_CELL_FILE})"),
    ] {
        assert!(text.contains(&line), "{line}:\n{text}");
    }
}

/// Regression: against an imported baseline every row is read on the wall clock, but its
/// job's control was checked only on the rows' own clocks, so a control biased on the wall
/// clock alone judged nothing.
#[test]
fn against_an_imported_baseline_a_control_biased_on_the_wall_clock_makes_no_call() {
    let tmp = tempfile::tempdir().unwrap();
    let history = tmp.path().join("history");
    import(&upstream(tmp.path()), &history).success();
    let root = old_rows_project(tmp.path());
    let run =
        local_run_as_old_cell_timed(&root, tmp.path(), &history, |t| t.row_wall("control", 1.05));
    let job = read_json(&run.join(CELL).join("results.json"));
    for (name, j) in job["jobs"].as_object().unwrap() {
        assert_eq!(j["verdict"]["status"], "ok", "{name}: judged on cpu time");
    }
    let a = gate(&root, &run, &history, Some(RUN)).success();
    let report = read_json(&run.join("gate.json"));
    let verdicts = report["cells"][0]["verdicts"].as_array().unwrap();
    assert!(!verdicts.is_empty(), "{}", stdout(&a));
    for v in verdicts {
        assert_eq!(v["status"], "inconclusive", "{v}");
        let message = v["message"].as_str().unwrap();
        assert!(
            message.contains("the A/A control (wall time) is 1.03"),
            "{message}"
        );
    }
}

#[test]
fn the_newest_baseline_is_a_measured_run_and_an_imported_one_only_when_there_is_none() {
    let tmp = tempfile::tempdir().unwrap();
    let history = tmp.path().join("history");
    import(&upstream(tmp.path()), &history).success();
    let root = old_rows_project(tmp.path());
    let first = local_run_as_old_cell(&root, tmp.path(), &history);
    let first_name = first.file_name().unwrap().to_str().unwrap().to_owned();

    // No measured run of the cell but this one: the imported run is the baseline.
    let a = gate(&root, &first, &history, None).code(1);
    let report = read_json(&first.join("gate.json"));
    assert_eq!(report["cells"][0]["baseline"], RUN, "{}", stdout(&a));

    // A second measured run: the first, not the imported one, is its baseline.
    std::fs::remove_file(first.join("gate.json")).unwrap();
    let second_tmp = tmp.path().join("second");
    std::fs::create_dir_all(&second_tmp).unwrap();
    // A local run is named by its second: two in one second would be one run dir of history.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let second = local_run_as_old_cell(&root, &second_tmp, &history);
    gate(&root, &second, &history, None).success();
    let report = read_json(&second.join("gate.json"));
    assert_eq!(report["cells"][0]["baseline"], first_name.as_str());
    assert!(
        report["cells"][0]["verdicts"]
            .as_array()
            .unwrap()
            .iter()
            .all(|v| v.get("against_imported_point").is_none()),
        "interval against interval"
    );
}

#[test]
fn an_imported_run_is_a_baseline_not_a_run_to_gate() {
    let tmp = tempfile::tempdir().unwrap();
    let history = tmp.path().join("history");
    import(&upstream(tmp.path()), &history).success();
    let root = old_rows_project(tmp.path());
    let a = gate(&root, &history.join(RUN), &history, None).code(2);
    assert!(
        stderr(&a).contains("an imported run (cell import)"),
        "{}",
        stderr(&a)
    );
}

#[test]
fn versions_env_in_this_tools_keys() {
    let a = cell()
        .arg("import")
        .arg("--versions-env")
        .arg(fixture().join("versions.env"))
        .assert()
        .success();
    let out = stdout(&a);
    assert!(stderr(&a).contains("1 key(s) not mapped"), "{}", stderr(&a));
    insta::assert_snapshot!("versions_env", out);
}
