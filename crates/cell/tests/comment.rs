//! `cell comment` against a loopback stand-in for the GitHub API (the walk's run API with its
//! artifact store, comments, check runs and pull requests): job results of the tiny project
//! timed by the scripted executor (so every verdict is the same on a quiet machine and a busy
//! one), marked as timed processes' so collect takes them, a `cell-pr` artifact built as the
//! `pr` job uploads it, and hostile variants of it.

mod common;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use cell_testkit::scripted::Timings;
use cell_testkit::walk::api::{Api, RunState, RunView};
use cell_testkit::walk::artifacts::Store;
use common::{GCC_TOML, cell, project, read_json};
use serde_json::Value;

const VERSIONS: &str = "REPS=13\nDROP=1\nREPS_MAX=13\nPHASES=mix,fib\nTOOTH_PHASE=mix\nTOOTH_MIN=2\nREFERENCE=c-fast\nTOLERANCE=0.05\nCI_TARGET=0.01\n";
const TOKEN: &str = "ghs_standInToken0123456789";
const REPO: &str = "o/r";
const RUN: u64 = 5_151_001;
const PR: u64 = 12;
const HEAD: &str = "328faa0536e6fef19753d9d91dc96a9931694ce3";
const BASE: &str = "1111111111111111111111111111111111111111";
const MARKER: &str = "<!-- cell:pr-report -->";

fn timings(seed: u64) -> Timings {
    Timings::new(seed)
        .row("c-fast", 0.05)
        .row("c-slow", 0.2)
        .row("gcc-O2", 0.05)
}

/// `cell local` of `root` on `t` into `out`; its job dirs' parent, each job marked as timed
/// processes' (the scripted executor's results are refused by collect, as they must be).
fn jobs(root: &Path, out: &Path, t: &Timings) -> PathBuf {
    std::fs::create_dir_all(out).unwrap();
    let file = t.write(&out.join("timings.json"));
    cell()
        .args(["local", "-q", "--seed", "5", "--scripted-timings"])
        .arg(&file)
        .arg("--root")
        .arg(root)
        .arg("--out")
        .arg(out)
        .assert()
        .code(predicates::ord::lt(2));
    let jobs = cell_testkit::first_dir(&out.join("jobs"));
    for job in std::fs::read_dir(&jobs).unwrap() {
        edit(&job.unwrap().path().join("results.json"), |j| {
            j["protocol"]["scripted"] = Value::Bool(false);
        });
    }
    jobs
}

fn edit(file: &Path, f: impl Fn(&mut Value)) {
    let mut j = read_json(file);
    f(&mut j);
    std::fs::write(file, serde_json::to_string_pretty(&j).unwrap()).unwrap();
}

/// A project, its committed history (one run, collected) and a PR's job results.
struct Fixture {
    tmp: tempfile::TempDir,
    root: PathBuf,
    results: PathBuf,
}

fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let root = project(tmp.path(), VERSIONS, &GCC_TOML);
    let first = jobs(&root, &tmp.path().join("base"), &timings(1));
    let results = tmp.path().join("results");
    cell()
        .arg("--root")
        .arg(&root)
        .args(["collect", "101", "--date", "2026-01-01", "--from-dir"])
        .arg(&first)
        .arg("--results")
        .arg(&results)
        .assert()
        .code(0);
    Fixture { tmp, root, results }
}

impl Fixture {
    /// What the `pr` job uploads, from job results timed on `t`: pr.json, jobs/, gate.md.
    fn pr_dir(&self, t: &Timings, edit_jobs: impl Fn(&Path)) -> PathBuf {
        let jobs = jobs(&self.root, &self.tmp.path().join("head"), t);
        edit_jobs(&jobs);
        let dir = self.tmp.path().join("pr");
        cell_testkit::copy_dir(&jobs, &dir.join("jobs"));
        cell()
            .args(["pr-json", "--number", &PR.to_string(), "--head-sha", HEAD])
            .args(["--base-sha", BASE, "--base-ref", "main", "--out"])
            .arg(dir.join("pr.json"))
            .assert()
            .success();
        std::fs::write(dir.join("gate.md"), "## PASS (the artifact's own word)\n").unwrap();
        dir
    }

    /// The stand-in API serving run [`RUN`] with `dir` uploaded as `cell-pr`, the pull
    /// request's head at `head`.
    fn api(&self, dir: &Path, head: &str) -> Api {
        self.api_and_store(dir, head).0
    }

    /// [`Fixture::api`] and the artifact store it serves.
    fn api_and_store(&self, dir: &Path, head: &str) -> (Api, Arc<Store>) {
        let store = Arc::new(Store::new(&self.tmp.path().join("store")));
        let with = [
            ("name".to_owned(), "cell-pr".to_owned()),
            ("path".to_owned(), format!("{}/**", dir.display())),
        ]
        .into_iter()
        .collect();
        store.upload(self.tmp.path(), &with, 1).unwrap();
        let state = RunState {
            run_id: RUN,
            repo: REPO.into(),
            sha: HEAD.into(),
            branch: "topic".into(),
            created_at: "2026-02-01T10:00:00Z".into(),
            attempt: 1,
            run_started_at: "2026-02-01T10:00:00Z".into(),
            status: "completed".into(),
            conclusion: Some("success".into()),
            jobs: Vec::new(),
            event: "pull_request".into(),
            head_repository: REPO.into(),
            pull_requests: Vec::new(),
        };
        let own = RunView {
            state: Arc::new(Mutex::new(state)),
            store: Arc::clone(&store),
        };
        let api = Api::start(own, Arc::default(), TOKEN.into());
        api.writes.set_pull_head(REPO, PR, head);
        (api, store)
    }

    fn comment(&self, api: Option<&Api>, extra: &[&str]) -> assert_cmd::assert::Assert {
        let mut c = cell();
        c.env_remove("GITHUB_ACTIONS")
            .env_remove("GITHUB_STEP_SUMMARY")
            .env_remove("GITHUB_REPOSITORY")
            .env_remove("GH_TOKEN");
        match api {
            Some(a) => c.env("GITHUB_API_URL", a.base()).env("GITHUB_TOKEN", TOKEN),
            None => c
                .env("GITHUB_API_URL", "http://127.0.0.1:9")
                .env_remove("GITHUB_TOKEN"),
        };
        c.arg("--root")
            .arg(&self.root)
            .args([
                "comment",
                &RUN.to_string(),
                "--head-sha",
                HEAD,
                "--repo",
                REPO,
            ])
            .arg("--results")
            .arg(&self.results)
            .args(["--details-url", "https://github.com/o/r/actions/runs/9"])
            .args(["--idle-timeout", "5", "--timeout", "60"])
            .args(extra)
            .assert()
    }
}

fn stdout(a: &assert_cmd::assert::Assert) -> String {
    String::from_utf8_lossy(&a.get_output().stdout).into_owned()
}

fn stderr(a: &assert_cmd::assert::Assert) -> String {
    String::from_utf8_lossy(&a.get_output().stderr).into_owned()
}

fn conclusion(api: &Api) -> Vec<String> {
    api.writes
        .check_runs()
        .iter()
        .map(|c| c.fields["conclusion"].as_str().unwrap_or("").to_owned())
        .collect()
}

#[test]
fn a_pass_posts_one_comment_and_a_success_check_and_a_second_report_edits_them() {
    let fx = fixture();
    let dir = fx.pr_dir(&timings(2), |_| {});
    let api = fx.api(&dir, HEAD);
    let before = cell_testkit::files(&fx.results);
    let out = fx.comment(Some(&api), &[]).code(0);
    assert!(
        stdout(&out).contains("pull request #12: PASS (comment posted"),
        "{}",
        stdout(&out)
    );
    let comments = api.writes.comments_on(REPO, PR);
    assert_eq!(comments.len(), 1);
    assert!(comments[0].body.starts_with(MARKER));
    assert!(
        comments[0]
            .body
            .contains("## cell: **PASS** for pull request #12")
    );
    assert!(comments[0].body.contains("What the run could resolve"));
    assert_eq!(conclusion(&api), ["success"]);
    let check = &api.writes.check_runs()[0].fields;
    assert_eq!(check["name"], "cell");
    assert_eq!(check["head_sha"], HEAD);
    assert_eq!(check["status"], "completed");
    assert_eq!(
        check["details_url"],
        "https://github.com/o/r/actions/runs/9"
    );

    let out = fx.comment(Some(&api), &[]).code(0);
    assert!(stdout(&out).contains("comment updated"), "{}", stdout(&out));
    assert_eq!(api.writes.comments_on(REPO, PR).len(), 1);
    assert_eq!(conclusion(&api), ["success"], "updated, never a second");
    // Nothing was written into the history it judged by.
    assert_eq!(cell_testkit::files(&fx.results), before);
}

#[test]
fn a_slower_row_fails_the_check_and_the_reporter_still_exits_zero() {
    let fx = fixture();
    let dir = fx.pr_dir(&timings(3).row("gcc-O2", 0.055), |_| {});
    let api = fx.api(&dir, HEAD);
    fx.comment(Some(&api), &["--comment", "on-fail"]).code(0);
    assert_eq!(conclusion(&api), ["failure"]);
    let body = &api.writes.comments_on(REPO, PR)[0].body;
    assert!(
        body.contains("**FAIL**") && body.contains("`gcc-O2`"),
        "{body}"
    );
}

#[test]
fn a_biased_control_is_inconclusive_a_neutral_check() {
    let fx = fixture();
    let t = timings(2)
        .jitter(0.0)
        .row("control", 0.052)
        .row("gcc-O2", 0.055);
    let dir = fx.pr_dir(&t, |_| {});
    let api = fx.api(&dir, HEAD);
    // on-change posts for INCONCLUSIVE.
    fx.comment(Some(&api), &["--comment", "on-change"]).code(0);
    assert_eq!(conclusion(&api), ["neutral"]);
    assert_eq!(api.writes.comments_on(REPO, PR).len(), 1);
}

#[test]
fn on_fail_posts_nothing_for_a_pass_but_checks_it() {
    let fx = fixture();
    let dir = fx.pr_dir(&timings(2), |_| {});
    let api = fx.api(&dir, HEAD);
    let out = fx.comment(Some(&api), &["--comment", "on-fail"]).code(0);
    assert!(stdout(&out).contains("no comment"), "{}", stdout(&out));
    assert!(api.writes.comments().is_empty());
    assert_eq!(conclusion(&api), ["success"]);
}

#[test]
fn a_pull_request_whose_head_moved_on_gets_nothing() {
    let fx = fixture();
    let dir = fx.pr_dir(&timings(2), |_| {});
    let api = fx.api(&dir, &"e".repeat(40));
    let out = fx.comment(Some(&api), &[]).code(0);
    assert!(
        stdout(&out).contains("stale or forged artifact: pull request #12's head is eeee"),
        "{}",
        stdout(&out)
    );
    assert!(api.writes.comments().is_empty() && api.writes.check_runs().is_empty());
}

#[test]
fn a_pr_json_naming_another_head_gets_nothing() {
    let fx = fixture();
    let dir = fx.pr_dir(&timings(2), |_| {});
    edit(&dir.join("pr.json"), |j| {
        j["head_sha"] = "f".repeat(40).into();
    });
    let api = fx.api(&dir, HEAD);
    let out = fx.comment(Some(&api), &[]).code(0);
    assert!(stdout(&out).contains("stale or forged artifact: pr.json names head ffff"));
    assert!(api.writes.comments().is_empty() && api.writes.check_runs().is_empty());
}

#[test]
fn hostile_pr_json_is_refused_with_a_clear_error() {
    let fx = fixture();
    let dir = fx.pr_dir(&timings(2), |_| {});
    let good = std::fs::read_to_string(dir.join("pr.json")).unwrap();
    for (text, says) in [
        (
            format!("{good}{}", " ".repeat(2 << 20)),
            " bytes, more than the 4096 a pull request's record can need: refused",
        ),
        (
            good.replace("\"number\": 12", "\"number\": 0"),
            "not a pull request number",
        ),
        (
            good.replace("\"number\": 12", "\"number\": \"12\""),
            "invalid type",
        ),
        (
            good.replace("\"number\": 12", "\"number\": 1e3"),
            "invalid type",
        ),
    ] {
        std::fs::write(dir.join("pr.json"), &text).unwrap();
        let out = fx
            .comment(None, &["--from-dir", dir.to_str().unwrap(), "--dry-run"])
            .code(2);
        assert!(stderr(&out).contains(says), "{says}: {}", stderr(&out));
        assert!(stdout(&out).is_empty());
    }
    // Over the API: refused the same way, nothing posted.
    std::fs::write(
        dir.join("pr.json"),
        good.replace("\"number\": 12", "\"number\": 0"),
    )
    .unwrap();
    let api = fx.api(&dir, HEAD);
    fx.comment(Some(&api), &[]).code(2);
    assert!(api.writes.comments().is_empty() && api.writes.check_runs().is_empty());
    // The writer refuses what the reader would.
    for bad in [
        ["--number", "0"],
        ["--number", "x1"],
        ["--base-ref", "a..b"],
    ] {
        let mut args = vec!["--number", "3", "--base-ref", "main"];
        let at = args.iter().position(|a| *a == bad[0]).unwrap();
        args[at + 1] = bad[1];
        cell()
            .arg("pr-json")
            .args(&args)
            .args(["--head-sha", HEAD, "--base-sha", BASE, "--out"])
            .arg(fx.tmp.path().join("x.json"))
            .assert()
            .code(2);
    }
}

#[test]
fn markup_and_escapes_in_names_never_reach_the_comment_or_the_terminal_raw() {
    let fx = fixture();
    let nasty = "<img src=x>\u{1b}[31m\n::error::pwned|*b*";
    let dir = fx.pr_dir(&timings(2), |jobs| {
        let gcc = cell_testkit::names(jobs)
            .into_iter()
            .find(|n| n.contains("-gcc-"))
            .unwrap();
        edit(&jobs.join(gcc).join("results.json"), |j| {
            let rows = j["rows"].as_object_mut().unwrap();
            let row = rows.remove("gcc-O2").unwrap();
            rows.insert(nasty.to_owned(), row);
        });
    });
    let api = fx.api(&dir, HEAD);
    let out = fx.comment(Some(&api), &["--dry-run"]).code(0);
    let text = stdout(&out);
    assert!(api.writes.comments().is_empty() && api.writes.check_runs().is_empty());
    assert!(
        text.contains("--- comment ---") && text.contains("--- check run `cell`: failure ---"),
        "{text}"
    );
    assert!(!text.contains('\u{1b}'), "{text}");
    assert!(
        !text.lines().any(|l| l.trim_start().starts_with("::")),
        "{text}"
    );
    assert!(
        text.contains("Jobs whose result could not be used"),
        "{text}"
    );
    assert!(text.contains("\\<img src=x\\>"), "{text}");
    fx.comment(Some(&api), &[]).code(0);
    let body = &api.writes.comments_on(REPO, PR)[0].body;
    assert!(
        body.match_indices('<')
            .all(|(i, _)| body[..i].ends_with('\\') || body[i..].starts_with(MARKER)),
        "{body}"
    );
    assert!(!body.contains('\u{1b}') && !body.contains("|*b*"), "{body}");
    assert_eq!(conclusion(&api), ["failure"]);
}

#[test]
fn a_forged_statistic_is_recomputed_and_named_never_believed() {
    let fx = fixture();
    let dir = fx.pr_dir(&timings(2), |jobs| {
        let gcc = cell_testkit::names(jobs)
            .into_iter()
            .find(|n| n.contains("-gcc-"))
            .unwrap();
        edit(&jobs.join(gcc).join("results.json"), |j| {
            j["rows"]["gcc-O2"]["phases"]["mix"]["ratio"]["cpu"] =
                serde_json::json!({"n": 3, "median": 0.5, "lo": 0.49, "hi": 0.51, "level": 0.75});
        });
    });
    let out = fx
        .comment(None, &["--from-dir", dir.to_str().unwrap(), "--dry-run"])
        .code(0);
    let text = stdout(&out);
    assert!(
        stderr(&out).contains("current head was not checked"),
        "{}",
        stderr(&out)
    );
    assert!(text.contains("**FAIL**"), "{text}");
    assert!(text.contains("figures"), "{text}");
    assert!(
        !text.contains("-50.0%"),
        "judged on the samples, not on 0.5: {text}"
    );
}

/// A pr.json naming the right head but another base branch than the pull request's was
/// believed: the comment said it was judged against that branch's history.
#[test]
fn a_pr_json_naming_another_base_branch_gets_nothing() {
    let fx = fixture();
    let dir = fx.pr_dir(&timings(2), |_| {});
    edit(&dir.join("pr.json"), |j| {
        j["base_ref"] = "release-1".into();
    });
    let api = fx.api(&dir, HEAD);
    let out = fx.comment(Some(&api), &[]).code(0);
    assert!(
        stdout(&out).contains(
            "stale or forged artifact: pull request #12 merges into main, pr.json says release-1; nothing posted"
        ),
        "{}",
        stdout(&out)
    );
    assert!(api.writes.comments().is_empty() && api.writes.check_runs().is_empty());
}

/// The first pull request of a project has no committed history to be judged against: every
/// cell is a first run, reported, never an error.
#[test]
fn a_first_pull_request_without_history_is_reported_not_an_error() {
    let fx = fixture();
    let dir = fx.pr_dir(&timings(2), |_| {});
    std::fs::remove_dir_all(&fx.results).unwrap();
    let api = fx.api(&dir, HEAD);
    let out = fx.comment(Some(&api), &[]).code(0);
    assert!(
        stderr(&out).contains("no history at")
            && stderr(&out).contains("every cell is a first run"),
        "{}",
        stderr(&out)
    );
    assert_eq!(api.writes.comments_on(REPO, PR).len(), 1);
    assert_eq!(api.writes.check_runs().len(), 1);
    assert!(
        !fx.results.exists(),
        "the history it judged by is never written"
    );
}

/// A pull request with more than a page of comments had ours on the second page: it must be
/// found there and edited, never posted again; a stranger's comment carrying the marker on the
/// first page is left as it was.
#[test]
fn our_comment_on_the_second_page_is_edited_not_doubled() {
    let fx = fixture();
    let dir = fx.pr_dir(&timings(2), |_| {});
    let api = fx.api(&dir, HEAD);
    api.writes.set_author("mallory");
    let planted = format!("{MARKER}\nplanted");
    api.writes.add_comment(REPO, PR, &planted);
    for i in 0..120 {
        api.writes.add_comment(REPO, PR, &format!("comment {i}"));
    }
    api.writes.set_author(cell_testkit::github::ACTIONS_BOT);
    fx.comment(Some(&api), &[]).code(0);
    let ours = |api: &Api| -> Vec<cell_testkit::github::Comment> {
        api.writes
            .comments_on(REPO, PR)
            .into_iter()
            .filter(|c| c.author == cell_testkit::github::ACTIONS_BOT)
            .collect()
    };
    assert_eq!(ours(&api).len(), 1);
    let out = fx.comment(Some(&api), &[]).code(0);
    assert!(stdout(&out).contains("comment updated"), "{}", stdout(&out));
    assert_eq!(ours(&api).len(), 1, "edited on page 2, never doubled");
    assert_eq!(api.writes.comments_on(REPO, PR).len(), 122);
    assert_eq!(api.writes.comments_on(REPO, PR)[0].body, planted);
}

/// The `cell-pr` zip is the fork's to write: an entry climbing out with `..`, an absolute one,
/// a link out of the tree or a `results.json` linked to a runner's file must unpack nothing
/// and post nothing (and a link inside the tree is never read as a job's result).
#[test]
fn a_cell_pr_zip_climbing_or_linking_out_is_refused_and_nothing_posted() {
    use cell_testkit::archive::{Entry, zip};
    let fx = fixture();
    let dir = fx.pr_dir(&timings(2), |_| {});
    let pr_json = std::fs::read(dir.join("pr.json")).unwrap();
    let store = fx.tmp.path().join("store");
    for (entries, says) in [
        (vec![Entry::File("../escaped", b"x", 0o644)], "../escaped"),
        (
            vec![Entry::File("/tmp/abs-cell-pr", b"x", 0o644)],
            "/tmp/abs-cell-pr",
        ),
        (vec![Entry::Symlink("jobs", "/etc")], "jobs"),
        (
            vec![Entry::Symlink(
                "jobs/cell-a-gcc-a1/results.json",
                "../../../../etc/hostname",
            )],
            "results.json",
        ),
    ] {
        let mut all = vec![Entry::File("pr.json", &pr_json, 0o644)];
        all.extend(entries);
        let (api, store_of) = fx.api_and_store(&dir, HEAD);
        store_of.replace_zip("cell-pr", &zip(&all));
        let out = fx.comment(Some(&api), &[]).code(2);
        assert!(stderr(&out).contains(says), "{says}: {}", stderr(&out));
        assert!(api.writes.comments().is_empty() && api.writes.check_runs().is_empty());
        assert!(!fx.tmp.path().parent().unwrap().join("escaped").exists());
        assert!(!Path::new("/tmp/abs-cell-pr").exists());
        std::fs::remove_dir_all(&store).unwrap();
    }
}

/// A pr.json naming a number that is no pull request (an issue's, or none) ended the reporter
/// with an error (the API's 404) where a forged artifact is skipped with a line.
#[test]
fn a_pr_json_naming_no_pull_request_gets_nothing_and_is_no_error() {
    let fx = fixture();
    let dir = fx.pr_dir(&timings(2), |_| {});
    edit(&dir.join("pr.json"), |j| {
        j["number"] = 13.into();
    });
    let api = fx.api(&dir, HEAD);
    let out = fx.comment(Some(&api), &[]).code(0);
    assert!(
        stdout(&out).contains(
            "stale or forged artifact: pr.json names #13, which is no pull request of o/r; nothing posted"
        ),
        "{}",
        stdout(&out)
    );
    assert!(api.writes.comments().is_empty() && api.writes.check_runs().is_empty());
}
