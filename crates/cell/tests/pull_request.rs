//! A pull request's verdict, walked as GitHub runs it: a repository made by `cell init` (its
//! cell a pinned release served on loopback), a run of `cell.yml` on main for the history, then
//! pull requests through `cell-pr.yml` (the `pull_request` event: the head timed read-only,
//! one artifact, nothing committed) and `cell-pr-report.yml` (the `workflow_run` event: the
//! default branch's files and cell only, one comment edited in place, one check run per head).

mod common;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use cell_testkit::git;
use cell_testkit::github::Writes;
use cell_testkit::http::{Response, Server};
use cell_testkit::walk::events::{self, PullRefs};
use cell_testkit::walk::{Attempt, Conclusion, Config, Options, Walk};
use common::cell;
use common::release::{VERSION, asset, release_tarball, sums};

const REPO: &str = "o/r";
const MARKER: &str = "<!-- cell:pr-report -->";

/// The repository: `cell init` with clang and gcc, few rounds and no exact lane (the walks
/// time every job), committed with a bare origin.
struct Repo {
    _tmp: tempfile::TempDir,
    dir: PathBuf,
    bare: PathBuf,
    /// Runs of this test get ids from here up.
    next_run: u64,
    writes: Arc<Writes>,
}

impl Repo {
    fn new(release_base: &str, sums_text: &str) -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("proj");
        let sums_file = tmp.path().join("SHA256SUMS");
        std::fs::write(&sums_file, sums_text).unwrap();
        cell()
            .args(["init", "--root"])
            .arg(&root)
            .args([
                "--cell-sums",
                &sums_file.display().to_string(),
                "--cell-url",
            ])
            .arg(format!(
                "{release_base}/v{{version}}/cell-{{version}}-{{target}}.tar.gz"
            ))
            .args(["--toolchains", "clang,gcc"])
            .assert()
            .success();
        let env = root.join("versions.env");
        let mut text = std::fs::read_to_string(&env).unwrap();
        text.push_str("REPS=8\nDROP=1\nREPS_MAX=8\nINSTRUCTIONS=off\n");
        std::fs::write(&env, text).unwrap();
        cell()
            .args(["plan", "-q", "--root"])
            .arg(&root)
            .assert()
            .success();
        git(&root, &["init", "-q", "-b", "main"]);
        cell_testkit::commit_all(&root, "cell init");
        let bare = tmp.path().join("origin.git");
        cell_testkit::bare_clone(&root, &bare);
        Repo {
            dir: tmp.path().to_path_buf(),
            _tmp: tmp,
            bare,
            next_run: 8_200_001,
            writes: Arc::new(Writes::default()),
        }
    }

    fn run_id(&mut self) -> u64 {
        self.next_run += 1;
        self.next_run
    }

    fn main_tip(&self) -> String {
        git(&self.bare, &["rev-parse", "main"])
    }

    fn main_log(&self) -> String {
        git(&self.bare, &["log", "--format=%H %s", "main"])
    }

    /// A fresh clone of the origin at `dir/name`, on `main`.
    fn clone(&self, name: &str) -> PathBuf {
        let to = self.dir.join(name);
        git(
            &self.dir,
            &[
                "clone",
                "-q",
                self.bare.to_str().unwrap(),
                to.to_str().unwrap(),
            ],
        );
        git(&to, &["config", "user.email", "dev@example.org"]);
        git(&to, &["config", "user.name", "dev"]);
        to
    }

    fn config(&mut self, workflow: String, sha: String, git_ref: String) -> Config {
        let run_id = self.run_id();
        Config {
            workflow,
            origin: self.bare.clone(),
            dir: self.dir.join(format!("walk-{run_id}")),
            run_id,
            sha,
            git_ref,
            repository: REPO.into(),
            // No job may build cell: every one installs the pinned release.
            cell_bin: PathBuf::from(env!("CARGO_BIN_EXE_cell")),
        }
    }

    /// `cell.yml` on main by hand: the history the pull requests are judged against.
    fn main_run(&mut self) -> Attempt {
        let workflow = self.file_on_main(".github/workflows/cell.yml");
        let config = self.config(workflow, self.main_tip(), "refs/heads/main".into());
        // No `reps` input: a by-hand count is another protocol than the adaptive budget a
        // pull request's run uses, and the two are not compared.
        Walk::new(config, options()).unwrap().run().unwrap()
    }

    fn file_on_main(&self, rel: &str) -> String {
        git(&self.bare, &["show", &format!("main:{rel}")])
    }

    /// `cell-pr.yml` for the pull request `pr` (as the merge commit holds it).
    fn pr_run(&mut self, pr: &PullRefs, head_ref: &str, fork: bool) -> (Walk, Attempt) {
        let workflow = git(
            &self.bare,
            &[
                "show",
                &format!("{}:.github/workflows/cell-pr.yml", pr.merge_sha),
            ],
        );
        let config = self.config(workflow, pr.merge_sha.clone(), pr.merge_ref());
        let event = events::pull_request_event(
            REPO,
            pr.number,
            &pr.head_sha,
            head_ref,
            &pr.base_sha,
            "main",
            fork,
        );
        let mut walk = Walk::new(
            config,
            Options {
                event_name: "pull_request".into(),
                event,
                ..options()
            },
        )
        .unwrap();
        let attempt = walk.run().unwrap();
        (walk, attempt)
    }

    /// `cell-pr-report.yml` on main's tip for the completed run of `pr_walk`; the API says
    /// pull request `pr.number`'s head is `pr.head_sha`.
    fn report(&mut self, pr_walk: &Walk, pr: &PullRefs, head_ref: &str, fork: bool) -> Attempt {
        let head = pr.head_sha.clone();
        self.report_with_head(pr_walk, pr, head_ref, fork, &head)
    }

    /// The same, the API saying the pull request's head is `api_head` now.
    fn report_with_head(
        &mut self,
        pr_walk: &Walk,
        pr: &PullRefs,
        head_ref: &str,
        fork: bool,
        api_head: &str,
    ) -> Attempt {
        self.writes.set_pull_head(REPO, pr.number, api_head);
        let workflow = self.file_on_main(".github/workflows/cell-pr-report.yml");
        let config = self.config(workflow, self.main_tip(), "refs/heads/main".into());
        let head_repository = if fork {
            events::fork_of(REPO)
        } else {
            REPO.to_owned()
        };
        // GitHub lists no pull request for a fork's run.
        let listed: Vec<(u64, &str)> = if fork {
            Vec::new()
        } else {
            vec![(pr.number, pr.head_sha.as_str())]
        };
        let run_id = pr_walk.view().state.lock().unwrap().run_id;
        let event = events::workflow_run_event(
            REPO,
            &head_repository,
            run_id,
            &pr.head_sha,
            head_ref,
            &listed,
            "success",
        );
        Walk::new(
            config,
            Options {
                event_name: "workflow_run".into(),
                event,
                other_runs: vec![pr_walk.view()],
                writes: Some(Arc::clone(&self.writes)),
                ..options()
            },
        )
        .unwrap()
        .run()
        .unwrap()
    }

    /// The comments of ours on pull request `n`.
    fn comments(&self, n: u64) -> Vec<String> {
        self.writes
            .comments_on(REPO, n)
            .into_iter()
            .filter(|c| c.body.contains(MARKER))
            .map(|c| c.body)
            .collect()
    }

    /// The check runs named `cell` on `sha`: their conclusions.
    fn checks(&self, sha: &str) -> Vec<String> {
        self.writes
            .check_runs()
            .into_iter()
            .filter(|c| c.fields["head_sha"] == sha && c.fields["name"] == "cell")
            .map(|c| {
                c.fields["conclusion"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned()
            })
            .collect()
    }
}

fn options() -> Options {
    Options {
        verbose: std::env::var_os("WALK_VERBOSE").is_some(),
        ..Options::default()
    }
}

fn story(a: &Attempt) -> String {
    format!("{}{}", a.table(), a.failed_logs())
}

/// Commits `edit` in `clone` on branch `branch` (created from main when new).
fn commit(clone: &Path, branch: &str, message: &str, edit: impl FnOnce(&Path)) -> String {
    if git(clone, &["branch", "--show-current"]) != branch {
        git(clone, &["checkout", "-q", "-B", branch]);
    }
    edit(clone);
    git(clone, &["add", "-A"]);
    git(clone, &["commit", "-q", "-m", message]);
    git(clone, &["rev-parse", "HEAD"])
}

fn append(path: &Path, text: &str) {
    let mut have = std::fs::read_to_string(path).unwrap();
    have.push_str(text);
    std::fs::write(path, have).unwrap();
}

/// The headline the comment gives: PASS, FAIL or INCONCLUSIVE.
fn headline(body: &str) -> &'static str {
    let title = body
        .lines()
        .find(|l| l.starts_with("## cell: "))
        .unwrap_or_else(|| panic!("no headline in the comment:\n{body}"));
    ["INCONCLUSIVE", "FAIL", "PASS"]
        .into_iter()
        .find(|w| title.contains(&format!("**{w}**")))
        .unwrap_or_else(|| panic!("no verdict in `{title}`"))
}

fn conclusion_of(headline: &str) -> &'static str {
    match headline {
        "PASS" => "success",
        "FAIL" => "failure",
        _ => "neutral",
    }
}

/// The PR run uploads `cell-pr` and nothing else of its own, commits nothing, and every job
/// ran on the head (the `pr` job on the base).
fn assert_read_only_run(r: &Repo, walk: &Walk, a: &Attempt, main_before: &str) {
    assert_eq!(a.conclusion, Conclusion::Success, "{}", story(a));
    assert_eq!(r.main_log(), main_before, "a pull request's run committed");
    let names: Vec<String> = walk
        .view()
        .store
        .list()
        .into_iter()
        .map(|art| art.name)
        .collect();
    assert!(names.iter().any(|n| n == "cell-pr"), "{names:?}");
    for j in &a.jobs {
        let log = j.log_text();
        assert!(
            !log.contains("walk stand-in: copied"),
            "{} built cell",
            j.name
        );
    }
}

#[test]
#[cfg_attr(
    not(all(target_os = "linux", target_arch = "x86_64")),
    ignore = "cell init's cell is ubuntu-24.04, an x86-64 runner"
)]
fn same_repository_and_fork_pull_requests_get_one_comment_and_a_check_per_head() {
    let tar = release_tarball();
    let release = Server::routes([(
        format!("/v{VERSION}/{}", asset()),
        Response::ok(tar.clone()),
    )]);
    let mut r = Repo::new(&release.base(), &sums(&tar));
    let main = r.main_run();
    assert_eq!(main.conclusion, Conclusion::Success, "{}", story(&main));
    let before = r.main_log();
    assert!(
        before.lines().count() >= 2,
        "main's run committed no history"
    );

    // A same-repository pull request that changes no code.
    let dev = r.clone("dev");
    commit(&dev, "docs", "a line of docs", |d| {
        append(&d.join("README.md"), "\nMore words.\n");
    });
    let pr1 = events::open_pull_request(&r.bare, &dev, "HEAD", 1, "main");
    let (w1, a) = r.pr_run(&pr1, "docs", false);
    assert_read_only_run(&r, &w1, &a, &before);
    let rep = r.report(&w1, &pr1, "docs", false);
    assert_eq!(rep.conclusion, Conclusion::Success, "{}", story(&rep));
    let first = r.comments(1);
    assert_eq!(first.len(), 1, "{first:?}");
    let first_id = r.writes.comments_on(REPO, 1)[0].id;
    let verdict = headline(&first[0]);
    assert_eq!(r.checks(&pr1.head_sha), [conclusion_of(verdict)]);

    // A second push: the same comment, edited; a check run on the new head.
    commit(&dev, "docs", "more docs", |d| {
        append(&d.join("README.md"), "\nEven more words.\n");
    });
    let pr1b = events::open_pull_request(&r.bare, &dev, "HEAD", 1, "main");
    let (w, a) = r.pr_run(&pr1b, "docs", false);
    assert_read_only_run(&r, &w, &a, &before);
    r.report(&w, &pr1b, "docs", false);
    let second = r.writes.comments_on(REPO, 1);
    assert_eq!(second.len(), 1, "a second comment: {second:?}");
    assert_eq!(second[0].id, first_id, "not the same comment");
    assert_eq!(r.checks(&pr1b.head_sha).len(), 1);

    // A fork's pull request that builds the gcc row at -O0: its event names no pull request,
    // the number comes from pr.json, the API confirms the head; a FAIL is a failure check.
    let fork = r.clone("fork");
    commit(&fork, "slower", "gcc at -O0", |d| {
        let toml = d.join("cell/cell.toml");
        let text = std::fs::read_to_string(&toml).unwrap();
        let slower = text.replace(
            "build = [\"{tool:gcc}\", \"-O2\"",
            "build = [\"{tool:gcc}\", \"-O0\"",
        );
        assert_ne!(slower, text, "no gcc row to slow down:\n{text}");
        std::fs::write(&toml, slower).unwrap();
    });
    let pr2 = events::open_pull_request(&r.bare, &fork, "HEAD", 2, "main");
    let (w, a) = r.pr_run(&pr2, "slower", true);
    assert_read_only_run(&r, &w, &a, &before);
    let rep = r.report(&w, &pr2, "slower", true);
    assert_eq!(rep.conclusion, Conclusion::Success, "{}", story(&rep));
    let on2 = r.comments(2);
    assert_eq!(on2.len(), 1, "{on2:?}");
    assert_eq!(
        headline(&on2[0]),
        "FAIL",
        "{}\n{}",
        on2[0],
        rep.job("report").log_text()
    );
    assert_eq!(r.checks(&pr2.head_sha), ["failure"]);
    // Nothing was written about pull request 1 by this report.
    assert_eq!(r.writes.comments_on(REPO, 1).len(), 1);

    // A stale report: the run measured an older head than the pull request has now.
    let checks_before = r.writes.check_runs().len();
    let body_before = r.writes.comments_on(REPO, 1)[0].body.clone();
    let rep = r.report_with_head(&w1, &pr1, "docs", false, &pr1b.head_sha);
    assert_eq!(rep.conclusion, Conclusion::Success, "{}", story(&rep));
    let log = rep.job("report").log_text();
    assert!(log.contains("stale or forged artifact"), "{log}");
    assert_eq!(r.writes.check_runs().len(), checks_before);
    assert_eq!(r.writes.comments_on(REPO, 1)[0].body, body_before);

    // comment = "on-fail" on main: a pull request that does not fail gets its check run and
    // no comment.
    git(&dev, &["checkout", "-q", "main"]);
    git(&dev, &["pull", "-q", "origin", "main"]);
    let toml = dev.join("cell/cell.toml");
    let text = std::fs::read_to_string(&toml).unwrap();
    std::fs::write(
        &toml,
        text.replace("comment = \"always\"", "comment = \"on-fail\""),
    )
    .unwrap();
    cell().arg("plan").current_dir(&dev).assert().success();
    git(&dev, &["commit", "-q", "-am", "comment on failures only"]);
    git(&dev, &["push", "-q", "origin", "main"]);
    let quiet = r.file_on_main(".github/workflows/cell-pr-report.yml");
    assert!(quiet.contains("POLICY: on-fail"), "{quiet}");
    commit(&dev, "typo", "a typo", |d| {
        append(&d.join("README.md"), "\nA typo fixed.\n");
    });
    let pr3 = events::open_pull_request(&r.bare, &dev, "HEAD", 3, "main");
    let (w, a) = r.pr_run(&pr3, "typo", false);
    assert_eq!(a.conclusion, Conclusion::Success, "{}", story(&a));
    r.report(&w, &pr3, "typo", false);
    let checks = r.checks(&pr3.head_sha);
    assert_eq!(checks.len(), 1);
    if checks[0] == "failure" {
        assert_eq!(r.comments(3).len(), 1, "a FAIL under on-fail must comment");
    } else {
        assert!(r.comments(3).is_empty(), "{:?}", r.comments(3));
    }
}
