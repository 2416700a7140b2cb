//! `cell report` through the binary: a history of two `cell local` runs of the tiny project
//! (built for real, timed by the scripted executor) → the pages, the charts, the CSV; and the
//! errors a person meets first.

mod common;

use std::path::{Path, PathBuf};

use cell_testkit::scripted::Timings;
use common::{Corruption, GCC_TOML, VERSIONS, cell, corrupt, project, read_json};
use predicates::prelude::*;

/// Two scripted runs of the tiny project (clang + gcc), copied into `<tmp>/history` the way
/// `results/` holds them: run dirs only, never `jobs/`.
fn two_run_history(tmp: &Path) -> PathBuf {
    let root = project(tmp, VERSIONS, &GCC_TOML);
    let runs = tmp.join("runs");
    std::fs::create_dir_all(&runs).unwrap();
    for seed in [1, 2] {
        // Scripted timings: the second run is judged against the first, and must pass on a
        // busy machine too.
        let timings = Timings::new(seed)
            .row("c-fast", 0.02)
            .row("c-slow", 0.08)
            .row("gcc-O2", 0.021)
            .write(&tmp.join(format!("timings-{seed}.json")));
        cell()
            .args(["local", "-q", "--reps", "2", "--seed", &seed.to_string()])
            .arg("--scripted-timings")
            .arg(&timings)
            .arg("--root")
            .arg(&root)
            .arg("--out")
            .arg(&runs)
            .assert()
            .success();
        // Run dirs are stamped to the second (a second run in the same second gets `-2`).
    }
    let history = tmp.join("history");
    let mut names: Vec<String> = std::fs::read_dir(&runs)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.contains("-local-"))
        .collect();
    names.sort();
    assert_eq!(names.len(), 2, "{names:?}");
    for n in &names {
        cell_testkit::copy_dir(&runs.join(n), &history.join(n));
    }
    history
}

/// Every `results.json` under the history, by run dir name.
fn cell_results(history: &Path) -> Vec<(String, serde_json::Value)> {
    let mut out = Vec::new();
    for run in std::fs::read_dir(history).unwrap() {
        let run = run.unwrap();
        for c in std::fs::read_dir(run.path()).unwrap() {
            let file = c.unwrap().path().join("results.json");
            if file.is_file() {
                out.push((run.file_name().into_string().unwrap(), read_json(&file)));
            }
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// Timed processes in a cell result: each job's reference and control, and every row except
/// the reference (which is its job's reference again).
fn sample_count(cell: &serde_json::Value) -> usize {
    let runs = |row: &serde_json::Value| -> usize {
        row["phases"].as_object().map_or(0, |ps| {
            ps.values()
                .map(|p| p["samples"]["seq"].as_array().unwrap().len())
                .sum()
        })
    };
    let jobs: usize = cell["jobs"]
        .as_object()
        .unwrap()
        .values()
        .map(|j| runs(&j["reference"]) + runs(&j["control"]))
        .sum();
    let rows: usize = cell["rows"]
        .as_object()
        .unwrap()
        .values()
        .filter(|r| r["role"] != "reference")
        .map(runs)
        .sum();
    jobs + rows
}

/// HTML void elements and self-closing tags aside, every tag is closed in order.
fn assert_balanced(what: &str, xml: &str) {
    let mut stack: Vec<String> = Vec::new();
    let mut rest = xml;
    while let Some(start) = rest.find('<') {
        let end = rest[start..].find('>').expect("an unclosed <") + start;
        let tag = &rest[start + 1..end];
        rest = &rest[end + 1..];
        if tag.starts_with('!') || tag.starts_with('?') || tag.ends_with('/') {
            continue;
        }
        let name: String = tag
            .trim_start_matches('/')
            .chars()
            .take_while(char::is_ascii_alphanumeric)
            .collect();
        if ["meta", "img", "br", "hr"].contains(&name.as_str()) {
            continue;
        }
        if tag.starts_with('/') {
            assert_eq!(
                stack.pop().as_deref(),
                Some(name.as_str()),
                "{what}: </{name}>"
            );
        } else {
            stack.push(name);
        }
    }
    assert!(stack.is_empty(), "{what}: unclosed {stack:?}");
}

/// Link targets in `text` between `open` and `close`.
fn links(text: &str, open: &str, close: char) -> Vec<String> {
    text.match_indices(open)
        .map(|(i, _)| {
            let rest = &text[i + open.len()..];
            rest[..rest.find(close).unwrap()].to_owned()
        })
        .collect()
}

fn assert_links_resolve(out: &Path, page: &str, targets: Vec<String>) {
    assert!(!targets.is_empty(), "{page} links to nothing");
    for t in targets {
        if t.starts_with('#') {
            continue;
        }
        assert!(
            !t.starts_with('/') && !t.contains("://") && !t.contains(".."),
            "{page}: {t} is not a relative link inside the report"
        );
        assert!(out.join(&t).is_file(), "{page} links to missing {t}");
    }
}

#[test]
#[expect(
    clippy::too_many_lines,
    reason = "one report checked file by file, in the order a reader opens them"
)]
fn report_of_two_local_runs_writes_pages_charts_and_every_sample() {
    let tmp = tempfile::tempdir().unwrap();
    let history = two_run_history(tmp.path());
    let out = tmp.path().join("site").join("report");
    let assert = cell()
        .args(["report", "--samples", "--history"])
        .arg(&history)
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&assert.get_output().stdout).into_owned();
    let cell_id = format!("{}-{}-local", std::env::consts::OS, std::env::consts::ARCH);
    let charts = [
        format!("charts/{cell_id}/mix.svg"),
        format!("charts/{cell_id}/fib.svg"),
    ];
    for f in ["index.html", "README.md", "samples.csv", "report.json"]
        .iter()
        .map(|s| (*s).to_owned())
        .chain(charts.iter().cloned())
    {
        assert!(out.join(&f).is_file(), "no {f}");
        assert!(stdout.contains(&f), "stdout does not list {f}:\n{stdout}");
    }

    // samples.csv: one record per timed process of every run, counted from results.json.
    let results = cell_results(&history);
    assert_eq!(results.len(), 2);
    let csv = std::fs::read_to_string(out.join("samples.csv")).unwrap();
    let lines: Vec<&str> = csv.split_terminator("\r\n").collect();
    assert_eq!(
        lines[0],
        "run,date,cell,job,row,role,phase,round,seq,warmup,wall_s,cpu_s,user_s,maxrss_kib,ok"
    );
    for (run, cell) in &results {
        let expected = sample_count(cell);
        assert!(expected > 0);
        let got = lines
            .iter()
            .filter(|l| l.starts_with(&format!("{run},")))
            .count();
        assert_eq!(got, expected, "samples of {run}");
    }
    assert_eq!(
        lines.len() - 1,
        results.iter().map(|(_, c)| sample_count(c)).sum::<usize>()
    );
    for role in [",reference,", ",control,", ",row,"] {
        assert!(csv.contains(role), "no {role} sample");
    }

    // Pages: relative links that resolve, charts embedded, figures of the newest run.
    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    let md = std::fs::read_to_string(out.join("README.md")).unwrap();
    assert_balanced("index.html", &html);
    assert!(
        !html.contains("<script") && !html.contains("http"),
        "self-contained"
    );
    let mut html_links = links(&html, "src=\"", '"');
    html_links.extend(links(&html, "href=\"", '"'));
    assert_links_resolve(&out, "index.html", html_links);
    assert_links_resolve(&out, "README.md", links(&md, "](", ')'));
    for c in &charts {
        assert!(
            html.contains(&format!("<img src=\"{c}\"")),
            "index.html lacks {c}"
        );
        assert!(md.contains(&format!("]({c})")), "README.md lacks {c}");
    }
    for needle in [
        "c-slow",
        "gcc-O2",
        "clang -O2",
        "Debian clang version",
        "gcc (",
    ] {
        assert!(html.contains(needle), "index.html lacks {needle}");
        assert!(md.contains(needle), "README.md lacks {needle}");
    }

    // Charts: well-formed, one line per row, both runs on the x axis.
    for c in &charts {
        let svg = std::fs::read_to_string(out.join(c)).unwrap();
        assert_balanced(c, &svg);
        assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
        assert_eq!(
            svg.matches("class=\"line\"").count(),
            2,
            "{c}: c-slow, gcc-O2"
        );
        assert_eq!(svg.matches("class=\"band\"").count(), 2, "{c}");
        for (run, _) in &results {
            let id = run.rsplit_once("-local-").unwrap().1;
            assert!(
                svg.contains(&format!(">local-{id}<")),
                "{c} lacks run {run}"
            );
        }
    }

    // --format json: the data model on stdout, the same bytes as report.json; a second
    // report of the same history writes the same bytes.
    let before = std::fs::read(out.join("index.html")).unwrap();
    let json = cell()
        .args(["report", "--samples", "--format", "json", "-q", "--history"])
        .arg(&history)
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    let printed = String::from_utf8(json.get_output().stdout.clone()).unwrap();
    assert_eq!(
        printed,
        std::fs::read_to_string(out.join("report.json")).unwrap()
    );
    assert_eq!(std::fs::read(out.join("index.html")).unwrap(), before);
    let model: serde_json::Value = serde_json::from_str(&printed).unwrap();
    assert_eq!(model["kind"], "report");
    assert_eq!(model["runs"].as_array().unwrap().len(), 2);
    let mix = &model["cells"][&cell_id]["phases"][0];
    assert_eq!(mix["phase"], "mix");
    assert_eq!(mix["rows"]["gcc-O2"]["points"].as_array().unwrap().len(), 2);
    assert_eq!(
        model["cells"][&cell_id]["newest"]["jobs"]["gcc"]["machine"]["nproc"],
        results[1].1["jobs"]["gcc"]["machine"]["nproc"]
    );

    // Moved elsewhere, the folder still works: every link is relative.
    let moved = tmp.path().join("deeper/still/report");
    cell_testkit::copy_dir(&out, &moved);
    assert_links_resolve(&moved, "index.html (moved)", links(&html, "src=\"", '"'));
}

#[test]
fn an_empty_history_exits_2_naming_the_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let empty = tmp.path().join("results");
    std::fs::create_dir_all(empty.join("notes")).unwrap();
    cell()
        .args(["report", "--history"])
        .arg(&empty)
        .arg("--out")
        .arg(tmp.path().join("out"))
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains(empty.display().to_string())
                .and(predicate::str::contains("holds no run")),
        );
    assert!(!tmp.path().join("out").exists(), "nothing written");

    let missing = tmp.path().join("nowhere");
    cell()
        .args(["report", "--history"])
        .arg(&missing)
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains(missing.display().to_string())
                .and(predicate::str::contains("does not exist")),
        );
}

#[test]
fn an_unreadable_results_file_exits_2_naming_the_file() {
    let tmp = tempfile::tempdir().unwrap();
    let cell_dir = tmp
        .path()
        .join("results/2026-11-29-4242001/linux-x86_64-ubuntu-24.04");
    std::fs::create_dir_all(&cell_dir).unwrap();
    let file = cell_dir.join("results.json");
    std::fs::write(&file, "{\"schema_version\": 1, \"kind\": \"cell\"").unwrap();
    cell()
        .args(["report", "--history"])
        .arg(tmp.path().join("results"))
        .arg("--out")
        .arg(tmp.path().join("out"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains(file.display().to_string()));
}

/// The results file of the one cell of run dir `run`.
fn only_cell_file(run: &Path) -> PathBuf {
    let mut files: Vec<PathBuf> = std::fs::read_dir(run)
        .unwrap()
        .map(|e| e.unwrap().path().join("results.json"))
        .filter(|f| f.is_file())
        .collect();
    assert_eq!(files.len(), 1, "{}", run.display());
    files.remove(0)
}

fn run_dirs(history: &Path) -> Vec<PathBuf> {
    let mut runs: Vec<PathBuf> = std::fs::read_dir(history)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    runs.sort();
    runs
}

/// Issue 12: one bad file in an old run stopped `cell report` for every cell, without saying
/// to fix or remove it. Now it is left out, named with the reason, and the report written.
#[test]
fn a_corrupt_file_in_an_old_run_is_named_and_the_report_is_still_written() {
    let tmp = tempfile::tempdir().unwrap();
    let history = two_run_history(tmp.path());
    let runs = run_dirs(&history);
    let (old, new) = (&runs[0], &runs[1]);
    let file = only_cell_file(old);
    let pristine = std::fs::read(&file).unwrap();
    for how in Corruption::ALL {
        std::fs::write(&file, &pristine).unwrap();
        let reason = corrupt(&file, how);
        let out = tmp.path().join(format!("out-{how:?}"));
        let a = cell()
            .args(["report", "--history"])
            .arg(&history)
            .arg("--out")
            .arg(&out)
            .assert()
            .success();
        let stderr = String::from_utf8_lossy(&a.get_output().stderr).into_owned();
        let notice = format!("notice: skipped {}: ", file.display());
        let line = stderr
            .lines()
            .find(|l| l.starts_with(&notice))
            .unwrap_or_else(|| panic!("{how:?}: no notice naming the file:\n{stderr}"));
        assert!(line.contains(&reason), "{how:?}: {line}\nwants {reason}");
        assert!(line.ends_with("; fix or remove the file"), "{line}");
        // Written, from the good run only.
        let report = read_json(&out.join("report.json"));
        let names: Vec<&str> = report["runs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["name"].as_str().unwrap())
            .collect();
        let newest = new.file_name().unwrap().to_str().unwrap();
        assert_eq!(names, [newest], "{how:?}");
        assert!(out.join("index.html").is_file());

        // --strict: the same file is an error naming it, and nothing is written.
        let strict = tmp.path().join(format!("strict-{how:?}"));
        cell()
            .args(["report", "--strict", "--history"])
            .arg(&history)
            .arg("--out")
            .arg(&strict)
            .assert()
            .code(2)
            .stderr(
                predicate::str::contains(file.display().to_string())
                    .and(predicate::str::contains(reason.as_str())),
            );
        assert!(!strict.exists(), "--strict wrote a report");
    }
}

/// `runs` copies of the fixture run dir, one a day back from 2026-11-30, each under its own
/// numeric run id, as a long history holds them.
fn copied_history(tmp: &Path, runs: u32) -> (PathBuf, Vec<String>) {
    let from = cell_testkit::fixtures().join("workload/history/2026-12-01-local-093940");
    let history = tmp.join("history");
    let mut names = Vec::new();
    for i in 0..runs {
        let day = 30 - (runs - 1 - i);
        let name = format!("2026-11-{day:02}-{}", 5_000_001 + i);
        cell_testkit::copy_dir(&from, &history.join(&name));
        names.push(name);
    }
    (history, names)
}

/// The run ids on the x axis of a chart: the labels under its ticks.
fn x_labels(svg: &str) -> Vec<String> {
    let axis = &svg[svg.find("<g class=\"axis x\">").expect("an x axis")..];
    let axis = &axis[..axis.find("</g>").unwrap()];
    links(axis, "\">", '<')
        .into_iter()
        .filter(|l| !l.trim().is_empty() && !l.starts_with("2026-"))
        .collect()
}

fn report(history: &Path, out: &Path, flags: &[&str]) -> assert_cmd::assert::Assert {
    cell()
        .args(["report", "-q"])
        .args(flags)
        .arg("--history")
        .arg(history)
        .arg("--out")
        .arg(out)
        .assert()
}

#[test]
fn last_n_draws_the_newest_runs_and_says_what_it_left_out() {
    let tmp = tempfile::tempdir().unwrap();
    let (history, names) = copied_history(tmp.path(), 5);
    let out = tmp.path().join("report");
    report(&history, &out, &["--last", "3"]).success();
    let mix = std::fs::read_to_string(out.join("charts/linux-x86_64-local/mix.svg")).unwrap();
    let ids: Vec<&str> = names.iter().map(|n| &n[11..]).collect();
    assert_eq!(x_labels(&mix), ids[2..], "the x axis of the last 3 runs");
    let model = read_json(&out.join("report.json"));
    let cell = &model["cells"]["linux-x86_64-local"];
    assert_eq!(cell["runs"].as_array().unwrap().len(), 3);
    let rows = cell["phases"][0]["rows"].as_object().unwrap();
    assert_eq!(
        mix.matches("<title>").count(),
        1 + 3 * rows.len(),
        "the title and a point per row and run of the window"
    );
    for row in rows.values() {
        let points: Vec<&str> = row["points"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["run"].as_str().unwrap())
            .collect();
        assert_eq!(points, names[2..], "points of the window only");
    }
    assert_eq!(cell["left_out"]["runs"], 5);
    assert_eq!(cell["left_out"]["left_out"], 2);
    assert_eq!(cell["left_out"]["oldest"], names[0].as_str());
    assert_eq!(cell["left_out"]["newest"], names[1].as_str());
    assert_eq!(model["runs"].as_array().unwrap().len(), 3);
    assert_eq!(model["left_out"]["left_out"], 2);
    // footprint.csv: the rows of the window's runs only.
    let csv = std::fs::read_to_string(out.join("footprint.csv")).unwrap();
    for (i, n) in names.iter().enumerate() {
        assert_eq!(
            csv.contains(&format!("\r\n{n},")),
            i >= 2,
            "{n} in footprint.csv"
        );
    }
    // The page says what it left out, per cell and over the history, on both pages.
    for page in ["index.html", "README.md"] {
        let text = std::fs::read_to_string(out.join(page)).unwrap();
        assert!(
            text.contains("Charts show the last 3 of 5 runs (2026-11-28 to 2026-11-30);"),
            "{page}"
        );
        assert!(text.contains("cell report --all-runs"), "{page}");
        assert!(text.contains("from 5 committed runs"), "{page}");
        assert!(text.contains(&names[0]), "{page}: the oldest run named");
    }

    // --all-runs: every run, nothing said to be left out.
    report(&history, &out, &["--all-runs"]).success();
    let mix = std::fs::read_to_string(out.join("charts/linux-x86_64-local/mix.svg")).unwrap();
    assert_eq!(x_labels(&mix), ids);
    let model = read_json(&out.join("report.json"));
    assert!(model.get("left_out").is_none());
    assert!(
        model["cells"]["linux-x86_64-local"]
            .get("left_out")
            .is_none()
    );
    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(!html.contains("Charts show the last"));
    // So does a window wider than the history: the same bytes.
    let wide = tmp.path().join("wide");
    report(&history, &wide, &["--last", "5"]).success();
    for f in [
        "index.html",
        "report.json",
        "charts/linux-x86_64-local/mix.svg",
    ] {
        assert_eq!(
            std::fs::read(out.join(f)).unwrap(),
            std::fs::read(wide.join(f)).unwrap(),
            "{f}"
        );
    }
}

#[test]
fn samples_csv_is_written_only_when_asked_for_and_a_stale_one_removed() {
    let tmp = tempfile::tempdir().unwrap();
    let (history, _) = copied_history(tmp.path(), 2);
    let out = tmp.path().join("report");
    report(&history, &out, &[]).success();
    assert!(
        !out.join("samples.csv").exists(),
        "no samples.csv by default"
    );
    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(html.contains("<code>cell report --samples</code> writes"));
    assert!(
        !html.contains("href=\"samples.csv\""),
        "no link to a missing file"
    );

    let listed = report(&history, &out, &["--samples"]).success();
    let stdout = String::from_utf8_lossy(&listed.get_output().stdout).into_owned();
    assert!(stdout.contains("samples.csv"), "{stdout}");
    let csv = std::fs::read_to_string(out.join("samples.csv")).unwrap();
    assert!(csv.lines().count() > 1);
    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(html.contains("href=\"samples.csv\""));

    // A later report without the flag leaves no stale samples.csv behind.
    report(&history, &out, &[]).success();
    assert!(
        !out.join("samples.csv").exists(),
        "the stale samples.csv stays"
    );

    // Never inside the history, which is committed.
    let inside = history.join("report");
    report(&history, &inside, &["--samples"])
        .code(2)
        .stderr(predicate::str::contains("--samples").and(predicate::str::contains("--out")));
    assert!(!inside.exists());
}

#[test]
fn a_window_of_no_runs_or_two_windows_at_once_is_a_usage_error() {
    let tmp = tempfile::tempdir().unwrap();
    let (history, _) = copied_history(tmp.path(), 1);
    let out = tmp.path().join("report");
    report(&history, &out, &["--last", "0"])
        .code(2)
        .stderr(predicate::str::contains("--last"));
    report(&history, &out, &["--last", "3", "--all-runs"])
        .code(2)
        .stderr(predicate::str::contains("--last").and(predicate::str::contains("--all-runs")));
    assert!(!out.exists());
}

#[test]
fn cell_local_takes_the_reports_window_and_samples_flags() {
    let tmp = tempfile::tempdir().unwrap();
    let root = project(tmp.path(), VERSIONS, &GCC_TOML);
    let out = tmp.path().join("local");
    let timings = Timings::new(1)
        .row("c-fast", 0.02)
        .row("c-slow", 0.08)
        .row("gcc-O2", 0.021);
    let report = out.join("report");
    common::scripted_local(&root, &out, &timings, &["--reps", "2", "--samples"]);
    assert!(report.join("samples.csv").is_file());
    common::scripted_local(&root, &out, &timings, &["--reps", "2", "--last", "1"]);
    assert!(!report.join("samples.csv").exists(), "a stale samples.csv");
    let md = std::fs::read_to_string(report.join("README.md")).unwrap();
    assert!(md.contains("Charts show the last 1 of 2 runs"), "{md}");
}
