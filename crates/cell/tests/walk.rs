//! The workflow walk (issue 11, item 4): `cell plan` generates the workflow of a tiny project
//! (clang and gcc on one cell, the tiny C workload, `reps` = 3), the workflow is committed into
//! a bare origin, and `cell_testkit::walk` runs it as a GitHub runner would — real `bash`,
//! real `git`, the real `cell` of this checkout, the GitHub API on loopback. Every case
//! asserts what landed on the origin's `main`: its commits and the files in them.

mod common;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Barrier};

use cell_testkit::git;
use cell_testkit::walk::{Attempt, Conclusion, Config, Options, Walk};

use common::{GCC_TOML, VERSIONS, WRONG_TOML, cell, project};

/// The hosted label whose architecture is this machine's.
fn cell_label() -> &'static str {
    if std::env::consts::ARCH == "aarch64" {
        "ubuntu-24.04-arm"
    } else {
        "ubuntu-24.04"
    }
}

fn cell_id() -> String {
    format!("linux-{}-{}", std::env::consts::ARCH, cell_label())
}

/// The tiny project with its generated workflow, committed, and its bare origin.
struct Origin {
    _tmp: tempfile::TempDir,
    dir: PathBuf,
    bare: PathBuf,
    sha: String,
}

fn origin(extra_toml: &str) -> Origin {
    let tmp = tempfile::tempdir().unwrap();
    let versions = format!("{VERSIONS}\nRUST_VERSION=1.95.0\n");
    // A fixture holds no cell source: the build job's stand-in builds this checkout's cell.
    let toml = format!(
        "\n[workflow]\ncell = \"source\"\n\n[cells.\"{}\"]\n{GCC_TOML}{extra_toml}",
        cell_label()
    );
    let root = project(tmp.path(), &versions, &toml);
    cell()
        .arg("plan")
        .arg("--root")
        .arg(&root)
        .assert()
        .success();
    git(&root, &["init", "-q", "-b", "main"]);
    let sha = cell_testkit::commit_all(&root, "the tiny project and its workflow");
    let bare = tmp.path().join("origin.git");
    cell_testkit::bare_clone(&root, &bare);
    Origin {
        dir: tmp.path().to_path_buf(),
        _tmp: tmp,
        bare,
        sha,
    }
}

fn walk(o: &Origin, run_id: u64, options: Options) -> Walk {
    let workflow =
        std::fs::read_to_string(Path::new(&o.dir).join("proj/.github/workflows/cell.yml")).unwrap();
    let config = Config {
        workflow,
        origin: o.bare.clone(),
        dir: o.dir.join("walk"),
        run_id,
        sha: o.sha.clone(),
        git_ref: "refs/heads/main".into(),
        repository: "o/r".into(),
        cell_bin: PathBuf::from(env!("CARGO_BIN_EXE_cell")),
    };
    Walk::new(config, options).unwrap()
}

/// `reps` = 3; `WALK_VERBOSE=1` prints every job's log as it ends.
fn options() -> Options {
    let mut o = Options {
        verbose: std::env::var_os("WALK_VERBOSE").is_some(),
        ..Options::default()
    };
    o.inputs.insert("reps".into(), "3".into());
    o
}

/// The subjects of `main` on the origin, newest first.
fn commits(o: &Origin) -> Vec<String> {
    let log = git(&o.bare, &["log", "--format=%s", "main"]);
    log.lines().map(str::to_owned).collect()
}

/// Every file of `main` on the origin.
fn tree(o: &Origin) -> Vec<String> {
    let t = git(&o.bare, &["ls-tree", "-r", "--name-only", "main"]);
    t.lines().map(str::to_owned).collect()
}

/// `results/<date>-<run-id>` on the origin's `main`, if there is one.
fn run_dir(o: &Origin, run_id: u64) -> Option<String> {
    let suffix = format!("-{run_id}/run.json");
    tree(o)
        .iter()
        .find(|f| f.starts_with("results/") && f.ends_with(&suffix))
        .map(|f| f.trim_end_matches("/run.json").to_owned())
}

fn json_at(o: &Origin, rev: &str, path: &str) -> serde_json::Value {
    serde_json::from_str(&git(&o.bare, &["show", &format!("{rev}:{path}")])).unwrap()
}

/// The toolchains and rows a committed cell result holds.
fn rows_of(o: &Origin, dir: &str) -> (Vec<String>, Vec<String>) {
    let r = json_at(o, "main", &format!("{dir}/{}/results.json", cell_id()));
    let keys = |k: &str| -> Vec<String> {
        r[k].as_object()
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default()
    };
    (keys("jobs"), keys("rows"))
}

/// The attempt's table and the logs of its failed jobs, for an assertion message.
fn story(a: &Attempt) -> String {
    format!("{}{}", a.table(), a.failed_logs())
}

/// That no step broke a rule of GitHub's without failing (a step summary over 1 MiB).
fn assert_no_problems(a: &Attempt) {
    assert!(a.problems.is_empty(), "{:?}", a.problems);
}

/// The committed run: `run.json`, `gate.json` and the cell's results.
fn assert_committed_run(o: &Origin, run_id: u64, a: &Attempt) -> String {
    let dir = run_dir(o, run_id).unwrap_or_else(|| panic!("no run dir on main\n{}", story(a)));
    let files = tree(o);
    for f in [
        "run.json",
        "gate.json",
        &format!("{}/results.json", cell_id()),
    ] {
        let path = format!("{dir}/{f}");
        assert!(
            files.contains(&path),
            "{path} is not on main: {files:?}\n{}",
            story(a)
        );
    }
    dir
}

/// Case 1: A clean run of two toolchains: one commit with both toolchains' rows and `gate.json`.
/// Also: no job keeps the checkout's credentials (collect's push gets the token by env), and
/// cell is built once, by the build job, for the whole run.
#[test]
fn a_clean_run_commits_both_toolchains_and_the_gate() {
    let o = origin("");
    let mut w = walk(&o, 5_100_001, options());
    let a = w.run().unwrap();
    assert_no_problems(&a);
    assert_eq!(a.conclusion, Conclusion::Success, "{}", story(&a));
    // Where a job's time goes (`--nocapture` shows it; the jobs' table is printed by the walk).
    println!("{}", a.step_table());
    assert_eq!(commits(&o).len(), 2, "{:?}\n{}", commits(&o), story(&a));
    let dir = assert_committed_run(&o, 5_100_001, &a);
    let (jobs, rows) = rows_of(&o, &dir);
    assert_eq!(jobs, ["clang", "gcc"]);
    assert_eq!(rows, ["c-fast", "c-slow", "gcc-O2"]);
    let run = json_at(&o, "main", &format!("{dir}/run.json"));
    assert_eq!(run["run"]["partial"], serde_json::json!(false), "{run:#}");
    assert_eq!(run["run"]["attempt"], serde_json::json!(1), "{run:#}");
    assert_eq!(run["missing"], serde_json::json!([]), "{run:#}");
    let builds: Vec<&str> = a
        .jobs
        .iter()
        .filter(|j| j.id.starts_with("build-"))
        .map(|j| j.id.as_str())
        .collect();
    assert_eq!(
        builds,
        [format!("build-linux-{}", std::env::consts::ARCH)],
        "{}",
        story(&a)
    );
    for j in &a.jobs {
        let config = j.workspace.as_ref().unwrap().join(".git/config");
        let text = std::fs::read_to_string(&config).unwrap_or_default();
        assert!(
            !text.contains("extraheader"),
            "{} keeps the token: {text}",
            j.name
        );
    }
}

/// Case 2: One job fails to install its toolchain: the other job's rows are committed, and
/// `run.json` says the run is partial and names the failed job.
#[test]
fn a_job_that_fails_to_install_leaves_a_partial_run_of_the_others() {
    let o = origin("");
    let mut opts = options();
    opts.apt_fail = vec!["gcc".into()];
    let mut w = walk(&o, 5_100_002, opts);
    let a = w.run().unwrap();
    assert_no_problems(&a);
    let gcc = format!("cell {} gcc", cell_id());
    assert_eq!(a.job(&gcc).conclusion, Conclusion::Failure, "{}", story(&a));
    assert_eq!(commits(&o).len(), 2, "{:?}\n{}", commits(&o), story(&a));
    let dir = assert_committed_run(&o, 5_100_002, &a);
    let (jobs, rows) = rows_of(&o, &dir);
    assert_eq!(jobs, ["clang"]);
    assert_eq!(rows, ["c-fast", "c-slow"]);
    let run = json_at(&o, "main", &format!("{dir}/run.json"));
    assert_eq!(run["run"]["partial"], serde_json::json!(true), "{run:#}");
    let missing = run["missing"].as_array().cloned().unwrap_or_default();
    assert!(
        missing
            .iter()
            .any(|m| m.as_str().is_some_and(|m| m.contains("gcc"))),
        "run.json's `missing` does not name gcc's job: {run:#}"
    );
    let job = run["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|j| j["name"] == gcc.as_str());
    assert_eq!(
        job.map(|j| &j["conclusion"]),
        Some(&serde_json::json!("failure")),
        "{run:#}"
    );
}

/// Case 3: A failed verdict (a clang row answers 41): `gate.json` is committed and the collect
/// job fails.
#[test]
fn a_failed_verdict_commits_the_gate_and_fails_collect() {
    let o = origin(&WRONG_TOML);
    let mut w = walk(&o, 5_100_003, options());
    let a = w.run().unwrap();
    assert_no_problems(&a);
    assert_eq!(commits(&o).len(), 2, "{:?}\n{}", commits(&o), story(&a));
    let dir = assert_committed_run(&o, 5_100_003, &a);
    let gate = json_at(&o, "main", &format!("{dir}/gate.json"));
    assert!(gate.to_string().contains("c-wrong"), "{gate:#}");
    assert_eq!(
        a.job("collect").conclusion,
        Conclusion::Failure,
        "{}",
        story(&a)
    );
}

/// Case 4: Attempt 1 loses gcc's job and is pushed; "re-run failed jobs" as attempt 2 makes a new
/// commit that replaces attempt 1's directory (same name), without a conflict.
#[test]
fn a_rerun_of_the_failed_job_replaces_attempt_one_in_a_new_commit() {
    let o = origin("");
    let mut opts = options();
    opts.apt_fail = vec!["gcc".into()];
    let mut w = walk(&o, 5_100_004, opts);
    let first = w.run().unwrap();
    assert_no_problems(&first);
    assert_eq!(
        commits(&o).len(),
        2,
        "attempt 1 pushed nothing\n{}",
        story(&first)
    );
    let dir1 = assert_committed_run(&o, 5_100_004, &first);

    w.options.apt_fail.clear();
    let second = w.rerun_failed().unwrap();
    assert_no_problems(&second);
    let clang = format!("cell {} clang", cell_id());
    let gcc = format!("cell {} gcc", cell_id());
    assert_eq!(second.job(&clang).attempt, 1, "the successful job is kept");
    assert_eq!(second.job(&gcc).attempt, 2);
    assert_eq!(
        second.job(&gcc).conclusion,
        Conclusion::Success,
        "{}",
        story(&second)
    );
    assert_eq!(
        second.job("collect").conclusion,
        Conclusion::Success,
        "{}",
        story(&second)
    );
    assert_eq!(
        commits(&o).len(),
        3,
        "{:?}\n{}",
        commits(&o),
        story(&second)
    );
    let dir2 = assert_committed_run(&o, 5_100_004, &second);
    assert_eq!(dir1, dir2, "attempt 2 writes attempt 1's directory");
    let run_files: Vec<String> = tree(&o)
        .iter()
        .filter(|f| f.ends_with("/run.json"))
        .cloned()
        .collect();
    assert_eq!(run_files.len(), 1, "{run_files:?}");
    let (jobs, _) = rows_of(&o, &dir2);
    assert_eq!(jobs, ["clang", "gcc"]);
    let run = json_at(&o, "main", &format!("{dir2}/run.json"));
    assert_eq!(run["run"]["attempt"], serde_json::json!(2), "{run:#}");
    assert_eq!(run["run"]["partial"], serde_json::json!(false), "{run:#}");
    let arts = run["artifacts"].to_string();
    assert!(
        arts.contains("clang-a1") && arts.contains("gcc-a2"),
        "{run:#}"
    );
    assert_eq!(run["run"]["attempts"], serde_json::json!([1, 2]), "{run:#}");
}

/// Case 5: A run cancelled after its first matrix job commits nothing, and leaves nothing
/// half-written on the origin.
#[test]
fn a_cancelled_run_commits_nothing() {
    let o = origin("");
    let before = git(&o.bare, &["for-each-ref"]);
    let mut opts = options();
    opts.cancel_after = Some("run-clang".into());
    let mut w = walk(&o, 5_100_005, opts);
    let a = w.run().unwrap();
    assert_no_problems(&a);
    assert_eq!(a.conclusion, Conclusion::Cancelled, "{}", story(&a));
    assert_eq!(
        a.job("run-gcc").conclusion,
        Conclusion::Cancelled,
        "{}",
        story(&a)
    );
    // collect runs on `!cancelled()`: after a cancel it does not start at all.
    assert!(
        matches!(
            a.job("collect").conclusion,
            Conclusion::Skipped | Conclusion::Cancelled
        ),
        "{}",
        story(&a)
    );
    assert_eq!(commits(&o).len(), 1, "{:?}\n{}", commits(&o), story(&a));
    assert!(
        !tree(&o).iter().any(|f| f.starts_with("results/")),
        "{:?}",
        tree(&o)
    );
    assert_eq!(
        git(&o.bare, &["for-each-ref"]),
        before,
        "no other ref was pushed"
    );
}

/// Case 6: Two runs of one origin whose collect jobs run at the same moment (each waits for the
/// other at a barrier; the concurrency group is not enforced, the harder case): both commits
/// land.
#[test]
fn two_runs_collecting_at_once_both_land() {
    let o = origin("");
    let barrier = Arc::new(Barrier::new(2));
    let mut walks: Vec<Walk> = [5_100_061, 5_100_062]
        .into_iter()
        .map(|id| {
            let mut opts = options();
            opts.before_job = Some(("collect".into(), Arc::clone(&barrier)));
            walk(&o, id, opts)
        })
        .collect();
    let attempts: Vec<Attempt> = std::thread::scope(|s| {
        let handles: Vec<_> = walks
            .iter_mut()
            .map(|w| s.spawn(move || w.run().unwrap()))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for a in &attempts {
        assert_no_problems(a);
        assert_eq!(
            a.job("collect").conclusion,
            Conclusion::Success,
            "{}",
            story(a)
        );
    }
    assert_eq!(commits(&o).len(), 3, "{:?}", commits(&o));
    assert_committed_run(&o, 5_100_061, &attempts[0]);
    assert_committed_run(&o, 5_100_062, &attempts[1]);
}
