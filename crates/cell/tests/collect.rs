//! `cell collect` against a loopback stand-in for the GitHub API, with real job results from
//! a real `cell local` run, real zips, and a real git repository (and bare remote).

mod common;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use cell_testkit::archive::{self, Entry};
use cell_testkit::http::{Request, Response, Server};
use cell_testkit::{files, git, sha256};
use predicates::prelude::PredicateBooleanExt as _;

use common::{GCC_TOML, VERSIONS, cell, project, read_json};

const TOKEN: &str = "ghs_standInToken0123456789";
const RUN: u64 = 4_242_001;
const SHA: &str = "328faa0536e6fef19753d9d91dc96a9931694ce3";

/// A `cell local` run of the tiny project (clang + gcc): its merged run dir and its job dirs.
struct Local {
    /// The project the run was timed in: collect checks the artifacts against its config.
    root: PathBuf,
    run_dir: PathBuf,
    jobs: Vec<PathBuf>,
    cell_id: String,
}

impl Local {
    /// The job dir of toolchain `tc` (attempt 1).
    fn job(&self, tc: &str) -> &PathBuf {
        let suffix = format!("-{tc}-a1");
        self.jobs
            .iter()
            .find(|j| j.to_str().unwrap().ends_with(&suffix))
            .unwrap()
    }
}

fn local_run(tmp: &Path) -> Local {
    let root = project(tmp, VERSIONS, &GCC_TOML);
    let out = tmp.join("local");
    // As on a runner: the jobs record the run they belong to.
    cell()
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_REPOSITORY", "o/r")
        .env("GITHUB_RUN_ID", RUN.to_string())
        .env("GITHUB_RUN_ATTEMPT", "1")
        .env("GITHUB_SHA", SHA)
        .args(["local", "--seed", "1", "-q"])
        .arg("--root")
        .arg(&root)
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    let run = cell_testkit::local_run_dir(&out);
    let name = run.file_name().unwrap().to_owned();
    let jobs_root = out.join("jobs").join(name);
    let mut jobs: Vec<PathBuf> = std::fs::read_dir(&jobs_root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    jobs.sort();
    let cell_id = format!("{}-{}-local", std::env::consts::OS, std::env::consts::ARCH);
    Local {
        root,
        run_dir: run,
        jobs,
        cell_id,
    }
}

/// A zip of a job dir's three files, under a folder named like the artifact (as the
/// workflow uploads them).
fn zip_job(dir: &Path) -> Vec<u8> {
    let name = dir.file_name().unwrap().to_str().unwrap();
    let files: Vec<(String, Vec<u8>)> = ["results.json", "facts.json", "RESULTS.md"]
        .iter()
        .map(|f| (format!("{name}/{f}"), std::fs::read(dir.join(f)).unwrap()))
        .collect();
    let entries: Vec<Entry<'_>> = files
        .iter()
        .map(|(path, bytes)| Entry::File(path, bytes, 0o644))
        .collect();
    archive::zip(&entries)
}

#[derive(Clone)]
struct Art {
    id: u64,
    name: String,
    zip: Vec<u8>,
    digest: Option<String>,
    gone: bool,
}

/// The stand-in for the GitHub API and, on a second port, for the blob store an artifact
/// download redirects to.
struct GitHub {
    api: Server,
    blob: Server,
}

/// Serves a run, its artifacts over two pages and its jobs, after the faults to inject (path
/// prefix → the response to give first, in order; ahead of the token check, which every
/// request of a run with faults passes).
fn start(
    arts: Vec<Art>,
    jobs: Vec<(String, &'static str)>,
    started_at: String,
    faults: Vec<(&'static str, Response)>,
) -> GitHub {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/github");
    let run_tpl = read_json(&fixtures.join("official-workflow-run.json"));
    let art_tpl = read_json(&fixtures.join("official-artifacts-list.json"));
    let job_tpl = read_json(&fixtures.join("official-jobs-list.json"));

    let arts = Arc::new(arts);
    let blob_arts = Arc::clone(&arts);
    // The blob store refuses anything that carries the API token.
    let blob = Server::start(move |r: &Request| {
        if r.headers.contains_key("authorization") {
            return Response::status(400);
        }
        let id: u64 = r
            .path
            .trim_start_matches("/blob/")
            .split('?')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        let zip = &blob_arts.iter().find(|a| a.id == id).unwrap().zip;
        Response::ok(zip.clone()).header("content-type", "application/zip")
    });
    let blob_base = blob.base();
    let api = Server::new();
    for (prefix, response) in faults {
        api.once(prefix, response);
    }
    let base = api.url("/repos/o/r/actions");
    api.handle(move |r: &Request| {
        if r.headers.get("authorization").map(String::as_str) != Some(&format!("Bearer {TOKEN}")) {
            return Response::status(401);
        }
        let run_path = format!("/repos/o/r/actions/runs/{RUN}");
        if r.path == run_path {
            let mut run = run_tpl.clone();
            run["id"] = RUN.into();
            run["run_attempt"] = 1.into();
            run["created_at"] = started_at.clone().into();
            run["run_started_at"] = started_at.clone().into();
            run["status"] = "completed".into();
            run["head_sha"] = SHA.into();
            run["conclusion"] = "success".into();
            return Response::json(200, &run);
        }
        if r.path.starts_with(&format!("{run_path}/artifacts")) {
            let page2 = r.path.contains("page=2");
            let mut list: Vec<serde_json::Value> = Vec::new();
            let (from, to) = if page2 { (1, arts.len()) } else { (0, 1) };
            for a in &arts[from..to] {
                let mut v = art_tpl["artifacts"][0].clone();
                v["id"] = a.id.into();
                v["name"] = a.name.clone().into();
                v["size_in_bytes"] = a.zip.len().into();
                v["archive_download_url"] = format!("{base}/artifacts/{}/zip", a.id).into();
                v["digest"] = a.digest.clone().map_or(serde_json::Value::Null, Into::into);
                list.push(v);
            }
            if !page2 {
                // A foreign artifact on the same run is ignored.
                let mut v = art_tpl["artifacts"][1].clone();
                v["name"] = "coverage-report".into();
                list.push(v);
            }
            let body = serde_json::json!({ "total_count": arts.len() + 1, "artifacts": list });
            let resp = Response::json(200, &body);
            return if page2 {
                resp
            } else {
                resp.header("link", &format!("<{base}/runs/{RUN}/artifacts?per_page=100&page=2>; rel=\"next\", <{base}/runs/{RUN}/artifacts?per_page=100&page=2>; rel=\"last\""))
            };
        }
        if r.path.starts_with(&format!("{run_path}/jobs")) {
            let list: Vec<serde_json::Value> = jobs
                .iter()
                .map(|(name, conclusion)| {
                    let mut v = job_tpl["jobs"][0].clone();
                    v["name"] = name.clone().into();
                    v["conclusion"] = (*conclusion).into();
                    v
                })
                .collect();
            return Response::json(
                200,
                &serde_json::json!({ "total_count": list.len(), "jobs": list }),
            );
        }
        if let Some(rest) = r.path.strip_prefix("/repos/o/r/actions/artifacts/") {
            let id: u64 = rest.trim_end_matches("/zip").parse().unwrap();
            let a = arts.iter().find(|a| a.id == id).unwrap();
            if a.gone {
                return Response::status(410);
            }
            return Response::redirect(&format!(
                "{blob_base}/blob/{id}?sig=signed-and-short-lived"
            ));
        }
        Response::status(404)
    });
    GitHub { api, blob }
}

fn artifacts_of(local: &Local) -> Vec<Art> {
    local
        .jobs
        .iter()
        .enumerate()
        .map(|(i, d)| {
            let zip = zip_job(d);
            Art {
                id: 900 + i as u64,
                name: d.file_name().unwrap().to_str().unwrap().to_owned(),
                digest: Some(format!("sha256:{}", sha256(&zip))),
                zip,
                gone: false,
            }
        })
        .collect()
}

fn job_names(local: &Local) -> Vec<(String, &'static str)> {
    let mut v: Vec<(String, &'static str)> = ["clang", "gcc"]
        .iter()
        .map(|t| (format!("cell {} {t}", local.cell_id), "success"))
        .collect();
    v.push(("plan".into(), "success"));
    v
}

fn new_repo(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    git(dir, &["init", "-q", "-b", "main"]);
    git(dir, &["config", "user.email", "t@example.invalid"]);
    git(dir, &["config", "user.name", "t"]);
    std::fs::write(dir.join("README"), "x\n").unwrap();
    git(dir, &["add", "README"]);
    git(dir, &["commit", "-qm", "init"]);
}

/// `dir/origin.git`: a bare remote whose `main` has one commit.
fn bare_origin(dir: &Path) -> PathBuf {
    let seed = dir.join("seed");
    new_repo(&seed);
    let bare = dir.join("origin.git");
    git(
        dir,
        &[
            "clone",
            "-q",
            "--bare",
            seed.to_str().unwrap(),
            bare.to_str().unwrap(),
        ],
    );
    bare
}

/// `cell collect` of the stand-in's run in `repo`, checked against the project at `root`.
fn collect_cmd(gh: &GitHub, repo: &Path, root: &Path) -> assert_cmd::Command {
    let mut c = cell();
    c.current_dir(repo)
        .env("CELL_ROOT", root)
        .env("GITHUB_API_URL", gh.api.base())
        .env("GITHUB_TOKEN", TOKEN)
        .env_remove("GH_TOKEN")
        .env_remove("GITHUB_REPOSITORY");
    c.args([
        "collect",
        &RUN.to_string(),
        "--repo",
        "o/r",
        "--results",
        "results",
    ]);
    c
}

fn assert_same_files(a: &Path, b: &Path, what: &str) {
    let (fa, fb) = (files(a), files(b));
    assert_eq!(
        fa.keys().collect::<Vec<_>>(),
        fb.keys().collect::<Vec<_>>(),
        "{what}: different files"
    );
    for (name, x) in &fa {
        let y = &fb[name];
        if x != y {
            let line = x.lines().zip(y.lines()).find(|(l, r)| l != r);
            panic!("{what}: {name} differs, first at {line:?}");
        }
    }
}

fn started_at(local: &Local) -> String {
    read_json(&local.jobs[0].join("results.json"))["started_at"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[test]
fn collects_a_run_through_the_api_equal_to_the_local_merge_and_idempotently() {
    let tmp = tempfile::tempdir().unwrap();
    let local = local_run(tmp.path());
    let when = started_at(&local);
    let faults = vec![
        // A rate limit on the run record, then a bad gateway on the second page.
        ("/repos/o/r/actions/runs/4242001", Response::rate_limited(1)),
        (
            "/repos/o/r/actions/runs/4242001/artifacts?per_page=100&page=2",
            Response::status(502),
        ),
    ];
    let gh = start(
        artifacts_of(&local),
        job_names(&local),
        when.clone(),
        faults,
    );
    let repo = tmp.path().join("repo");
    new_repo(&repo);

    let first = collect_cmd(&gh, &repo, &local.root)
        .args(["--commit", "-v"])
        .assert()
        .success();
    let out = first.get_output();
    let printed = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(printed.contains("retrying in"), "{printed}");
    // Both injected faults were met and retried: the 403 on the run record, the 502 on page 2.
    assert_eq!(gh.api.hits(&format!("/repos/o/r/actions/runs/{RUN}")), 2);
    assert_eq!(
        gh.api.hits(&format!(
            "/repos/o/r/actions/runs/{RUN}/artifacts?per_page=100&page=2"
        )),
        2
    );
    assert!(!printed.contains(TOKEN), "the token leaked into the output");

    let dir = repo.join("results").join(format!("{}-{RUN}", &when[..10]));
    let merged = read_json(&dir.join(&local.cell_id).join("results.json"));
    common::assert_valid("results", &merged);
    let local_merged = read_json(&local.run_dir.join(&local.cell_id).join("results.json"));
    assert_eq!(
        merged["rows"], local_merged["rows"],
        "merged rows differ from the local run's"
    );
    assert_eq!(merged["jobs"], local_merged["jobs"]);
    assert_eq!(merged["run"]["id"], RUN.to_string());
    assert_eq!(merged["run"]["source"], "github");
    assert_eq!(merged["run"]["head_sha"], SHA);
    for tc in ["clang", "gcc"] {
        assert!(
            dir.join(&local.cell_id)
                .join("facts")
                .join(format!("{tc}.json"))
                .is_file()
        );
    }
    let record = read_json(&dir.join("run.json"));
    assert_eq!(record["jobs"].as_array().unwrap().len(), 3);
    assert_eq!(
        record["total_s"], 357.0,
        "3 jobs of 119 s each in the fixture"
    );
    assert_eq!(record["run"]["partial"], false);
    let commits = git(&repo, &["rev-list", "--count", "HEAD"]);
    assert_eq!(commits, "2");
    assert!(git(&repo, &["log", "-1", "--format=%s"]).contains(&format!("run {RUN}")));

    // Again: byte-identical files, no second commit.
    let before = files(&repo.join("results"));
    collect_cmd(&gh, &repo, &local.root)
        .args(["--commit"])
        .assert()
        .success()
        .stderr(predicates::str::contains("unchanged"));
    assert!(
        before == files(&repo.join("results")),
        "a second collect changed files"
    );
    assert_eq!(git(&repo, &["rev-list", "--count", "HEAD"]), commits);
    for (name, text) in &before {
        assert!(!text.contains(TOKEN), "token in {name}");
    }
    // The blob store never saw the token (it answers 400 if it does, so the run would fail).
    assert!(
        gh.blob
            .requests()
            .iter()
            .all(|r| !r.headers.contains_key("authorization"))
    );
    assert!(
        gh.api
            .requests()
            .iter()
            .any(|r| r.path.contains("per_page=100"))
    );

    // The same run from the directory layouts `actions/download-artifact` writes. Each artifact
    // holds `<artifact-name>/{results.json,…}` (the workflow uploads `job/*/…`), so the default
    // layout is `<dl>/<name>/<name>/…` and `merge-multiple: true` gives `<dl>/<name>/…`.
    let dl = tmp.path().join("download");
    for job in &local.jobs {
        let name = job.file_name().unwrap();
        // one folder per artifact (artifact name / artifact content)
        let into = dl.join("per-artifact").join(name).join(name);
        std::fs::create_dir_all(&into).unwrap();
        // merged: every artifact's content side by side
        let merged_into = dl.join("merged").join(name);
        std::fs::create_dir_all(&merged_into).unwrap();
        for f in ["results.json", "facts.json", "RESULTS.md"] {
            std::fs::copy(job.join(f), into.join(f)).unwrap();
            std::fs::copy(job.join(f), merged_into.join(f)).unwrap();
        }
    }
    for layout in ["per-artifact", "merged"] {
        let results = tmp.path().join(format!("from-{layout}"));
        cell()
            .env("CELL_ROOT", &local.root)
            .args(["collect", &RUN.to_string(), "--from-dir"])
            .arg(dl.join(layout))
            .arg("--results")
            .arg(&results)
            .assert()
            .success();
        let from_dir = results
            .join(format!("{}-{RUN}", &when[..10]))
            .join(&local.cell_id);
        assert_same_files(&from_dir, &dir.join(&local.cell_id), layout);
    }
}

#[test]
fn a_digest_mismatch_or_an_expired_artifact_fails_naming_it_and_is_written_as_partial() {
    let tmp = tempfile::tempdir().unwrap();
    let local = local_run(tmp.path());
    let when = started_at(&local);
    let repo = tmp.path().join("repo");
    new_repo(&repo);

    let mut bad = artifacts_of(&local);
    bad[1].digest = Some(format!("sha256:{}", "0".repeat(64)));
    let gh = start(bad, job_names(&local), when.clone(), vec![]);
    collect_cmd(&gh, &repo, &local.root)
        .arg("--complete")
        .assert()
        .code(1)
        .stderr(predicates::str::contains(format!(
            "artifact `{}`: SHA-256 mismatch",
            local.jobs[1].file_name().unwrap().to_str().unwrap()
        )));
    assert!(
        !repo.join("results").exists()
            || std::fs::read_dir(repo.join("results"))
                .unwrap()
                .next()
                .is_none(),
        "something was written"
    );

    let mut gone = artifacts_of(&local);
    gone[0].gone = true;
    let gh = start(gone, job_names(&local), when.clone(), vec![]);
    let name0 = local.jobs[0]
        .file_name()
        .unwrap()
        .to_str()
        .unwrap()
        .to_owned();
    collect_cmd(&gh, &repo, &local.root)
        .arg("--complete")
        .assert()
        .code(1)
        .stderr(predicates::str::contains(format!(
            "artifact `{name0}` has expired"
        )));
    assert!(
        !repo.join("results").exists()
            || std::fs::read_dir(repo.join("results"))
                .unwrap()
                .next()
                .is_none()
    );

    // By default the rest is written, marked partial, listing what is missing. An expired
    // artifact of a job that passed trips nothing: exit 0, the gap named.
    collect_cmd(&gh, &repo, &local.root)
        .assert()
        .success()
        .stderr(predicates::str::contains("partial run"))
        .stderr(predicates::str::contains("has expired"));
    let dir = repo.join("results").join(format!("{}-{RUN}", &when[..10]));
    let record = read_json(&dir.join("run.json"));
    assert_eq!(record["run"]["partial"], true);
    let missing = record["missing"].as_array().unwrap();
    assert!(
        missing.iter().any(|m| m.as_str().unwrap().contains(&name0)),
        "{missing:?}"
    );
    let merged = read_json(&dir.join(&local.cell_id).join("results.json"));
    assert_eq!(merged["run"]["partial"], true);
    assert_eq!(merged["missing"][0]["toolchain"], "clang");
}

#[test]
fn without_a_token_the_api_refusal_is_an_infrastructure_error() {
    let tmp = tempfile::tempdir().unwrap();
    let gh = start(vec![], vec![], "2026-01-01T00:00:00Z".into(), vec![]);
    let root = project(tmp.path(), VERSIONS, &GCC_TOML);
    let mut c = collect_cmd(&gh, tmp.path(), &root);
    c.env_remove("GITHUB_TOKEN")
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "HTTP 401: the token is missing or invalid",
        ));
}

#[test]
fn two_collectors_pushing_different_runs_race_and_both_land() {
    let tmp = tempfile::tempdir().unwrap();
    let local = local_run(tmp.path());
    let bare = tmp.path().join("remote.git");
    let seed = tmp.path().join("seed");
    new_repo(&seed);
    git(
        tmp.path(),
        &[
            "clone",
            "-q",
            "--bare",
            seed.to_str().unwrap(),
            bare.to_str().unwrap(),
        ],
    );
    let mut children = Vec::new();
    for (i, run) in [(0, 7_001u64), (1, 7_002u64)] {
        let clone = tmp.path().join(format!("clone{i}"));
        git(
            tmp.path(),
            &[
                "clone",
                "-q",
                bare.to_str().unwrap(),
                clone.to_str().unwrap(),
            ],
        );
        git(&clone, &["config", "user.email", "t@example.invalid"]);
        git(&clone, &["config", "user.name", "t"]);
        let jobs = tmp.path().join("local").join("jobs");
        let bin = assert_cmd::cargo::cargo_bin("cell");
        children.push(
            std::process::Command::new(bin)
                .current_dir(&clone)
                .env("CELL_ROOT", &local.root)
                .args(["collect", &run.to_string(), "--from-dir"])
                .arg(&jobs)
                .args(["--results", "results", "--commit", "--push"])
                .spawn()
                .unwrap(),
        );
    }
    for mut c in children {
        assert!(c.wait().unwrap().success());
    }
    let check = tmp.path().join("check");
    git(
        tmp.path(),
        &[
            "clone",
            "-q",
            bare.to_str().unwrap(),
            check.to_str().unwrap(),
        ],
    );
    let log = git(&check, &["log", "--format=%s"]);
    assert!(
        log.contains("run 7001") && log.contains("run 7002"),
        "{log}"
    );
    let names: Vec<String> = std::fs::read_dir(check.join("results"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
    for n in names {
        assert!(
            check
                .join("results")
                .join(n)
                .join(&local.cell_id)
                .join("results.json")
                .is_file()
        );
    }
}

/// `src` copied to `dst`, each job folder renamed for `attempt` when `rename(name)` says so.
fn copy_jobs(src: &[PathBuf], dst: &Path, attempt_of: impl Fn(&str) -> u32) {
    for job in src {
        let name = job.file_name().unwrap().to_str().unwrap();
        let stem = name.rsplit_once("-a").unwrap().0;
        let to = dst.join(format!("{stem}-a{}", attempt_of(stem)));
        std::fs::create_dir_all(&to).unwrap();
        for f in std::fs::read_dir(job).unwrap() {
            let f = f.unwrap().path();
            if f.is_file() {
                std::fs::copy(&f, to.join(f.file_name().unwrap())).unwrap();
            }
        }
    }
}

fn from_dir_cmd(repo: &Path, jobs: &Path, root: &Path) -> assert_cmd::Command {
    let mut c = cell();
    c.current_dir(repo)
        .env("CELL_ROOT", root)
        .args(["collect", &RUN.to_string(), "--from-dir"]);
    c.arg(jobs)
        .args(["--results", "results", "--date", "2026-12-01"]);
    c
}

fn job_attempts(run_dir: &Path, cell_id: &str) -> Vec<(String, u64)> {
    let merged = read_json(&run_dir.join(cell_id).join("results.json"));
    merged["jobs"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v["attempt"].as_u64().unwrap()))
        .collect()
}

/// A "re-run failed jobs" attempt 2 merges the newest attempt of every job and replaces the
/// directory attempt 1 wrote, in a new commit; a late collect of attempt 1 never replaces
/// attempt 2's, and says so.
#[test]
fn a_re_run_replaces_an_older_attempt_and_an_older_one_never_replaces_a_newer() {
    let tmp = tempfile::tempdir().unwrap();
    let local = local_run(tmp.path());
    let (a1, a2) = (tmp.path().join("a1"), tmp.path().join("a2"));
    copy_jobs(&local.jobs, &a1, |_| 1);
    // Attempt 2 re-ran only the gcc job; clang's artifact is still attempt 1's.
    copy_jobs(&local.jobs, &a2, |stem| {
        1 + u32::from(stem.ends_with("-gcc"))
    });
    let repo = tmp.path().join("repo");
    new_repo(&repo);
    let dir = repo.join("results").join(format!("2026-12-01-{RUN}"));

    from_dir_cmd(&repo, &a1, &local.root)
        .arg("--commit")
        .assert()
        .success();
    assert_eq!(
        job_attempts(&dir, &local.cell_id),
        [("clang".into(), 1), ("gcc".into(), 1)]
    );
    from_dir_cmd(&repo, &a2, &local.root)
        .arg("--commit")
        .assert()
        .success()
        .stderr(predicates::str::contains(
            "it held attempt 1, this collect attempt 2",
        ));
    assert_eq!(
        job_attempts(&dir, &local.cell_id),
        [("clang".into(), 1), ("gcc".into(), 2)]
    );
    let record = read_json(&dir.join("run.json"));
    assert_eq!(record["run"]["attempts"], serde_json::json!([1, 2]));
    let log = git(&repo, &["log", "--format=%s"]);
    assert_eq!(log.lines().count(), 3, "{log}");

    // Attempt 1 again (a late, slow collect): refused, nothing changed, nothing committed.
    from_dir_cmd(&repo, &a1, &local.root)
        .arg("--commit")
        .assert()
        .code(2)
        .stderr(predicates::str::contains("gcc attempt 2"))
        .stderr(predicates::str::contains("nothing was changed"));
    assert_eq!(
        job_attempts(&dir, &local.cell_id),
        [("clang".into(), 1), ("gcc".into(), 2)]
    );
    assert_eq!(git(&repo, &["log", "--format=%s"]), log);
    assert_eq!(git(&repo, &["status", "--porcelain"]), "");
}

/// Sets the CPU model every job under `jobs` records: other content of
/// the same jobs, as a second runner of the same attempt would have written.
fn retag_cpu(jobs: &Path, model: &str) {
    for dir in std::fs::read_dir(jobs).unwrap() {
        let path = dir.unwrap().path().join("results.json");
        let mut v = read_json(&path);
        v["machine"]["cpu_model"] = serde_json::Value::from(model);
        std::fs::write(&path, serde_json::to_string(&v).unwrap()).unwrap();
    }
}

/// Regression: `cell collect 600 --from-dir A`, then `--from-dir B` of the same attempt with
/// other content, printed "replaced (an earlier attempt's content)" (not true) and replaced
/// A's run dir without `--replace`. Now that is exit 2 naming the run dir, both attempts and
/// B, with A's dir byte for byte as it was; A again is a no-op; `--replace` still replaces.
#[test]
fn the_same_attempt_with_other_content_never_replaces_a_run_dir() {
    let tmp = tempfile::tempdir().unwrap();
    let local = local_run(tmp.path());
    let (a, b) = (tmp.path().join("A"), tmp.path().join("B"));
    copy_jobs(&local.jobs, &a, |_| 1);
    copy_jobs(&local.jobs, &b, |_| 1);
    retag_cpu(&b, "another runner's CPU");
    // Outside any git checkout: the results dir's own lock, no commit.
    let plain = tmp.path().join("plain");
    std::fs::create_dir_all(&plain).unwrap();
    let dir = plain.join("results").join(format!("2026-12-01-{RUN}"));

    from_dir_cmd(&plain, &a, &local.root)
        .assert()
        .success()
        .stderr(predicates::str::contains("wrote results/"));
    let before = files(&dir);
    from_dir_cmd(&plain, &b, &local.root)
        .assert()
        .code(2)
        .stderr(predicates::str::contains(format!(
            "results/2026-12-01-{RUN}: holds attempt 1 ("
        )))
        .stderr(predicates::str::contains(
            "and this collect has attempt 1 too (",
        ))
        .stderr(predicates::str::contains("nothing was changed"))
        .stderr(predicates::str::contains(format!(
            "this collect read --from-dir {}",
            b.display()
        )))
        .stderr(predicates::str::contains("replaced").not());
    assert_eq!(files(&dir), before, "the old dir is intact, byte for byte");

    from_dir_cmd(&plain, &a, &local.root)
        .assert()
        .success()
        .stderr(predicates::str::contains("unchanged (identical content"));
    assert_eq!(files(&dir), before);

    from_dir_cmd(&plain, &b, &local.root)
        .arg("--replace")
        .assert()
        .success()
        .stderr(predicates::str::contains(format!(
            "replaced results/2026-12-01-{RUN} with other content (--replace)"
        )));
    let merged = read_json(&dir.join(&local.cell_id).join("results.json"));
    assert!(merged.to_string().contains("another runner's CPU"));
    assert_eq!(
        cell_testkit::names(&plain.join("results")),
        [".cell-collect.lock".to_owned(), format!("2026-12-01-{RUN}")],
        "no stage and no old dir left beside it"
    );
}

/// Regression: six concurrent collects of one run outside a git checkout each checked the
/// run dir, then swapped theirs in: the last writer won. Now they hold the results dir's lock
/// across the check and the swap: six collects of attempt 2 (each with other content) over
/// attempt 1's dir end with one replacement and five refusals naming the attempt, and the dir
/// is exactly what the winner alone writes.
#[test]
fn six_concurrent_collects_of_one_run_leave_one_winner_and_five_named_refusals() {
    let tmp = tempfile::tempdir().unwrap();
    let local = local_run(tmp.path());
    let plain = tmp.path().join("plain");
    std::fs::create_dir_all(&plain).unwrap();
    let first = tmp.path().join("a1");
    copy_jobs(&local.jobs, &first, |_| 1);
    from_dir_cmd(&plain, &first, &local.root).assert().success();

    let sources: Vec<PathBuf> = (0..6)
        .map(|i| {
            let src = tmp.path().join(format!("a2-{i}"));
            copy_jobs(&local.jobs, &src, |_| 2);
            retag_cpu(&src, &format!("runner {i}"));
            src
        })
        .collect();
    // Another collect, as far as the six can tell, holds the lock while they start: all six
    // queue at it, then race for it the moment it is free.
    let lock_path = plain.join("results").join(".cell-collect.lock");
    let mut lock = std::fs::File::create(&lock_path).unwrap();
    std::io::Write::write_all(&mut lock, format!("{}\n", std::process::id()).as_bytes()).unwrap();
    lock.lock().unwrap();
    let stderr_of = |i: usize| tmp.path().join(format!("stderr-{i}"));
    let children: Vec<_> = sources
        .iter()
        .enumerate()
        .map(|(i, src)| {
            std::process::Command::new(assert_cmd::cargo::cargo_bin("cell"))
                .current_dir(&plain)
                .env("CELL_ROOT", &local.root)
                .args(["collect", &RUN.to_string(), "--from-dir"])
                .arg(src)
                .args(["--results", "results", "--date", "2026-12-01"])
                .stdout(std::process::Stdio::null())
                .stderr(std::fs::File::create(stderr_of(i)).unwrap())
                .spawn()
                .unwrap()
        })
        .collect();
    let waiting = format!(
        "waiting for another cell collect (pid {}) of this results dir to finish (lock results/.cell-collect.lock)",
        std::process::id()
    );
    let queued = (0..600).any(|_| {
        std::thread::sleep(std::time::Duration::from_millis(100));
        (0..6).all(|i| {
            std::fs::read_to_string(stderr_of(i))
                .unwrap()
                .contains(&waiting)
        })
    });
    assert!(queued, "{}", std::fs::read_to_string(stderr_of(0)).unwrap());
    lock.unlock().unwrap();
    let outcomes: Vec<(Option<i32>, String)> = children
        .into_iter()
        .enumerate()
        .map(|(i, mut c)| {
            let status = c.wait().unwrap();
            (
                status.code(),
                std::fs::read_to_string(stderr_of(i)).unwrap(),
            )
        })
        .collect();
    let winners: Vec<usize> = (0..6).filter(|&i| outcomes[i].0 == Some(0)).collect();
    assert_eq!(winners.len(), 1, "{outcomes:#?}");
    let winner = winners[0];
    assert!(
        outcomes[winner]
            .1
            .contains("it held attempt 1, this collect attempt 2"),
        "{outcomes:#?}"
    );
    for (i, (code, stderr)) in outcomes.iter().enumerate() {
        if i != winner {
            assert_eq!(*code, Some(2), "{stderr}");
            assert!(
                stderr.contains("holds attempt 2 (") && stderr.contains("nothing was changed"),
                "{stderr}"
            );
        }
    }
    // What the winner alone writes, collected into a results dir of its own.
    let alone = tmp.path().join("alone");
    std::fs::create_dir_all(&alone).unwrap();
    from_dir_cmd(&alone, &sources[winner], &local.root)
        .assert()
        .success();
    let name = format!("2026-12-01-{RUN}");
    assert_same_files(
        &plain.join("results").join(&name),
        &alone.join("results").join(&name),
        "the run dir after the race",
    );
    assert_eq!(
        cell_testkit::names(&plain.join("results")),
        [".cell-collect.lock".to_owned(), name],
        "no stage and no old dir left beside it"
    );
}

/// Regression: `cell commit` with a `.git/index.lock` left by another git said only "remove
/// the file manually to continue", naming no file. Now it names the lock file and says what to
/// do, exit 2, and nothing is committed.
#[test]
fn a_held_index_lock_is_named_with_what_to_do() {
    let tmp = tempfile::tempdir().unwrap();
    let local = local_run(tmp.path());
    let jobs = tmp.path().join("jobs");
    copy_jobs(&local.jobs, &jobs, |_| 1);
    let repo = tmp.path().join("repo");
    new_repo(&repo);
    from_dir_cmd(&repo, &jobs, &local.root).assert().success();
    let index_lock = repo.join(".git").join("index.lock");
    std::fs::write(&index_lock, "").unwrap();
    let log = git(&repo, &["log", "--format=%s"]);
    cell()
        .current_dir(&repo)
        .args(["commit", &format!("results/2026-12-01-{RUN}")])
        .assert()
        .code(2)
        .stderr(predicates::str::contains(format!(
            "{} exists: another git process is running in this checkout",
            index_lock.display()
        )))
        .stderr(predicates::str::contains(
            "if no git is running, remove the file",
        ));
    assert_eq!(git(&repo, &["log", "--format=%s"]), log);
    std::fs::remove_file(&index_lock).unwrap();
    cell()
        .current_dir(&repo)
        .args(["commit", &format!("results/2026-12-01-{RUN}")])
        .assert()
        .success();
}

/// Two collects in one checkout: the second waits for the first (a lock in the git dir) and
/// says so, writing nothing until it has the lock.
#[test]
fn a_second_collect_in_one_checkout_waits_for_the_first() {
    let tmp = tempfile::tempdir().unwrap();
    let local = local_run(tmp.path());
    let jobs = tmp.path().join("jobs");
    copy_jobs(&local.jobs, &jobs, |_| 1);
    let repo = tmp.path().join("repo");
    new_repo(&repo);
    // The first collect, as far as the second can tell: it holds the lock.
    let lock = std::fs::File::create(repo.join(".git").join("cell-collect.lock")).unwrap();
    lock.lock().unwrap();
    let stderr = tmp.path().join("stderr");
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("cell"))
        .current_dir(&repo)
        .env("CELL_ROOT", &local.root)
        .args(["collect", &RUN.to_string(), "--from-dir"])
        .arg(&jobs)
        .args(["--results", "results", "--date", "2026-12-01", "--commit"])
        .stderr(std::fs::File::create(&stderr).unwrap())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let waited = (0..600).any(|_| {
        std::thread::sleep(std::time::Duration::from_millis(100));
        std::fs::read_to_string(&stderr)
            .unwrap()
            .contains("waiting for another cell collect")
    });
    assert!(waited, "{}", std::fs::read_to_string(&stderr).unwrap());
    assert!(
        !repo
            .join("results")
            .join(format!("2026-12-01-{RUN}"))
            .exists()
    );
    lock.unlock().unwrap();
    assert!(child.wait().unwrap().success());
    assert!(
        repo.join("results")
            .join(format!("2026-12-01-{RUN}"))
            .is_dir()
    );
    assert_eq!(git(&repo, &["log", "--format=%s"]).lines().count(), 2);
}

/// `cell commit` commits a run dir (gate.json with it) as the Actions bot when the checkout
/// has no identity, pushes it, and leaves no credential in `.git/config`.
#[test]
fn cell_commit_commits_as_the_actions_bot_and_pushes_without_persisting_a_token() {
    let tmp = tempfile::tempdir().unwrap();
    let local = local_run(tmp.path());
    let jobs = tmp.path().join("jobs");
    copy_jobs(&local.jobs, &jobs, |_| 1);
    let bare = bare_origin(tmp.path());
    let clone = tmp.path().join("clone");
    git(
        tmp.path(),
        &[
            "clone",
            "-q",
            bare.to_str().unwrap(),
            clone.to_str().unwrap(),
        ],
    );
    // No identity anywhere: as on a fresh runner.
    let home = tmp.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    from_dir_cmd(&clone, &jobs, &local.root).assert().success();
    let run_dir = format!("results/2026-12-01-{RUN}");
    std::fs::write(clone.join(&run_dir).join("gate.json"), "{}\n").unwrap();
    cell()
        .current_dir(&clone)
        .env("HOME", &home)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GITHUB_TOKEN", TOKEN)
        .args(["commit", &run_dir, "--push"])
        .assert()
        .success()
        .stderr(predicates::str::contains("pushed to origin"))
        .stderr(predicates::str::contains(TOKEN).not());
    let author = git(&bare, &["log", "-1", "--format=%an <%ae>%n%s"]);
    assert!(
        author.starts_with(
            "github-actions[bot] <41898282+github-actions[bot]@users.noreply.github.com>"
        ),
        "{author}"
    );
    assert!(
        author.contains(&format!("results: run {RUN} (2026-12-01)")),
        "{author}"
    );
    let files = git(&bare, &["show", "--name-only", "--format=", "HEAD"]);
    assert!(files.contains(&format!("{run_dir}/gate.json")), "{files}");
    let config = std::fs::read_to_string(clone.join(".git").join("config")).unwrap();
    assert!(
        !config.contains(TOKEN) && !config.contains("extraheader"),
        "{config}"
    );
}

/// The collect job judges a run by the thresholds of the commit it ran (`--config-rev`), not
/// by the branch tip's, and gate.json records which.
#[test]
fn gate_reads_the_thresholds_of_the_run_s_own_commit() {
    let tmp = tempfile::tempdir().unwrap();
    let local = local_run(tmp.path());
    let root = tmp.path().join("proj");
    let env = std::fs::read_to_string(root.join("versions.env")).unwrap();
    let pinned = |tol: &str| -> String {
        let mut lines: Vec<String> = env
            .lines()
            .filter(|l| !l.starts_with("TOLERANCE="))
            .map(str::to_owned)
            .collect();
        lines.push(format!("TOLERANCE={tol}"));
        lines.join("\n") + "\n"
    };
    std::fs::write(root.join("versions.env"), pinned("0.07")).unwrap();
    git(&root, &["init", "-q", "-b", "main"]);
    let sha = cell_testkit::commit_all(&root, "pins");
    // The branch moved on: a looser tolerance in the work tree.
    std::fs::write(root.join("versions.env"), pinned("0.45")).unwrap();
    let committed = 0.07;
    let gate = |rev: Option<&str>| {
        let mut c = cell();
        c.arg("gate").arg(&local.run_dir).arg("--root").arg(&root);
        if let Some(r) = rev {
            c.args(["--config-rev", r]);
        }
        let out = c.output().unwrap();
        assert!(
            out.status.code() != Some(2),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        read_json(&local.run_dir.join("gate.json"))
    };
    let at_commit = gate(Some(&sha));
    assert_eq!(at_commit["tolerance"].as_f64(), Some(committed));
    assert_eq!(at_commit["config_rev"], sha.as_str());
    let at_tip = gate(None);
    assert_eq!(at_tip["tolerance"].as_f64(), Some(0.45));
    assert!(at_tip.get("config_rev").is_none());
    cell()
        .arg("gate")
        .arg(&local.run_dir)
        .arg("--root")
        .arg(&root)
        .args(["--config-rev", "no-such-commit"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("no-such-commit"));
}

/// `[workflow] results_branch`: the history lives on its own branch, created on first use;
/// the checked-out branch (a protected main) is never pushed to.
#[test]
fn results_go_to_their_own_branch_created_on_first_use() {
    let tmp = tempfile::tempdir().unwrap();
    let local = local_run(tmp.path());
    let jobs = tmp.path().join("jobs");
    copy_jobs(&local.jobs, &jobs, |_| 1);
    let bare = bare_origin(tmp.path());
    let main_before = git(&bare, &["rev-parse", "main"]);
    for (round, dates) in [(1, "2026-12-01"), (2, "2026-12-02")] {
        let clone = tmp.path().join(format!("clone{round}"));
        git(
            tmp.path(),
            &[
                "clone",
                "-q",
                bare.to_str().unwrap(),
                clone.to_str().unwrap(),
            ],
        );
        cell()
            .current_dir(&clone)
            .args(["results-branch", "cell-results", "--into", ".cell-results"])
            .assert()
            .success()
            .stderr(predicates::str::contains(if round == 1 {
                "started (no history yet)"
            } else {
                "checked out"
            }));
        cell()
            .current_dir(&clone)
            .env("CELL_ROOT", &local.root)
            .args(["collect", &RUN.to_string(), "--from-dir"])
            .arg(&jobs)
            .args(["--results", ".cell-results/results", "--date", dates])
            .assert()
            .success();
        cell()
            .current_dir(&clone)
            .args([
                "commit",
                &format!(".cell-results/results/{dates}-{RUN}"),
                "--push",
            ])
            .assert()
            .success();
    }
    assert_eq!(
        git(&bare, &["rev-parse", "main"]),
        main_before,
        "main moved"
    );
    let tree = git(&bare, &["ls-tree", "-r", "--name-only", "cell-results"]);
    for date in ["2026-12-01", "2026-12-02"] {
        assert!(
            tree.contains(&format!("results/{date}-{RUN}/run.json")),
            "{tree}"
        );
    }
    assert!(
        !tree.contains("README"),
        "the results branch shares main's files: {tree}"
    );
    assert_eq!(
        git(&bare, &["log", "--format=%s", "cell-results"])
            .lines()
            .count(),
        2
    );
}

#[test]
fn a_stalled_api_ends_at_the_deadline_naming_the_request() {
    let tmp = tempfile::tempdir().unwrap();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/github");
    let mut run = read_json(&fixtures.join("official-workflow-run.json"));
    run["id"] = 7.into();
    let empty_artifacts = serde_json::json!({ "total_count": 0, "artifacts": [] });
    let empty_jobs = serde_json::json!({ "total_count": 0, "jobs": [] });
    // The run record and the artifacts answer; the jobs list sends its head and a few bytes,
    // then nothing: well inside the idle timeout, so only the deadline ends the wait.
    let api = Server::routes([
        ("/repos/o/r/actions/runs/7", Response::json(200, &run)),
        (
            "/repos/o/r/actions/runs/7/artifacts?per_page=100",
            Response::json(200, &empty_artifacts),
        ),
        (
            "/repos/o/r/actions/runs/7/jobs?per_page=100",
            Response::json(200, &empty_jobs).stalled(5),
        ),
    ]);
    let root = project(tmp.path(), VERSIONS, &GCC_TOML);
    let started = std::time::Instant::now();
    cell()
        .current_dir(tmp.path())
        .env("CELL_ROOT", &root)
        .env("GITHUB_API_URL", api.base())
        .env("GITHUB_TOKEN", TOKEN)
        .env_remove("GH_TOKEN")
        .env_remove("GITHUB_REPOSITORY")
        .args(["collect", "7", "--repo", "o/r", "--results", "results"])
        .args(["--timeout", "3"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains(format!(
            "GET {}/repos/o/r/actions/runs/7/jobs?per_page=100: no answer within the 3 s \
             deadline of cell collect",
            api.base()
        )))
        .stderr(predicates::str::contains(TOKEN).not());
    assert!(
        started.elapsed() < std::time::Duration::from_mins(1),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(api.hits("/repos/o/r/actions/runs/7/jobs?per_page=100"), 1);
    assert!(
        !tmp.path().join("results").exists(),
        "something was written"
    );
}

/// A job whose latest attempt failed without an artifact is missing, even though attempt 1
/// left one: attempt 1's result is not merged as this attempt's, and the failure trips.
/// An artifact named outside the job-result pattern (here with a path in it) is listed and
/// never unpacked.
#[test]
fn a_job_that_failed_in_the_latest_attempt_drops_its_older_result() {
    let tmp = tempfile::tempdir().unwrap();
    let local = local_run(tmp.path());
    let when = started_at(&local);
    let repo = tmp.path().join("repo");
    new_repo(&repo);
    let mut arts = artifacts_of(&local);
    let mut hostile = arts[0].clone();
    hostile.id = 999;
    hostile.name = "cell-../../escaped-a1".into();
    arts.push(hostile);
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/github");
    let job_tpl = read_json(&fixtures.join("official-jobs-list.json"));
    let jobs: Vec<serde_json::Value> = [("clang", 1, "success"), ("gcc", 2, "failure")]
        .iter()
        .map(|(tc, attempt, conclusion)| {
            let mut v = job_tpl["jobs"][0].clone();
            v["name"] = format!("cell {} {tc}", local.cell_id).into();
            v["run_attempt"] = (*attempt).into();
            v["conclusion"] = (*conclusion).into();
            v
        })
        .collect();
    let jobs = serde_json::json!({ "total_count": jobs.len(), "jobs": jobs });
    let gh = start(
        arts,
        job_names(&local),
        when.clone(),
        vec![(
            "/repos/o/r/actions/runs/4242001/jobs",
            Response::json(200, &jobs),
        )],
    );
    collect_cmd(&gh, &repo, &local.root)
        .assert()
        .code(1)
        .stderr(predicates::str::contains("left no result (failure)"))
        .stderr(predicates::str::contains(
            "is not named cell-<cell-id>-<job>-a<attempt>",
        ));
    let dir = repo.join("results").join(format!("{}-{RUN}", &when[..10]));
    let merged = read_json(&dir.join(&local.cell_id).join("results.json"));
    let jobs: Vec<&String> = merged["jobs"].as_object().unwrap().keys().collect();
    assert_eq!(jobs, ["clang"]);
    assert_eq!(merged["missing"][0]["toolchain"], "gcc");
    assert!(!tmp.path().join("escaped").exists() && !repo.join("escaped").exists());
}

/// Rewrites one job's results.json under `jobs` (the folder whose name ends in `-<tc>-a1`).
fn tamper(jobs: &Path, tc: &str, edit: impl Fn(&mut serde_json::Value)) -> PathBuf {
    let dir = std::fs::read_dir(jobs)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_str()
                .unwrap()
                .ends_with(&format!("-{tc}-a1"))
        })
        .unwrap();
    let path = dir.join("results.json");
    let mut v = read_json(&path);
    edit(&mut v);
    std::fs::write(&path, serde_json::to_string(&v).unwrap()).unwrap();
    path
}

/// Every file under `dir` (the collect lock aside), for "nothing was written".
fn all_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() && !p.is_symlink() {
                todo.push(p);
            } else if !p.ends_with(".git/cell-collect.lock") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// Regression: `cell.id = "x/../../<run>/<cell>"` or `toolchain = "../../evil_tc"` inside a
/// job's results.json climbed out of results/ and replaced committed files. Now such a name
/// is refused where the file is read (a named failure, exit 1), wherever the job sits, and
/// nothing lands outside the run dir.
#[test]
fn a_name_inside_a_results_file_cannot_write_outside_results() {
    for (field, value) in [
        ("cell", "x/../../escaped/linux-x86_64-local"),
        ("toolchain", "../../../../evil_tc"),
    ] {
        let tmp = tempfile::tempdir().unwrap();
        let local = local_run(tmp.path());
        let jobs = tmp.path().join("jobs");
        // Not in an artifact-named folder: the typed id refuses the name as the file is read.
        let plain = jobs.join("plain");
        std::fs::create_dir_all(&plain).unwrap();
        let src = local.job("gcc");
        let mut v = read_json(&src.join("results.json"));
        if field == "cell" {
            v["cell"]["id"] = value.into();
        } else {
            v["toolchain"] = value.into();
        }
        std::fs::write(
            plain.join("results.json"),
            serde_json::to_string(&v).unwrap(),
        )
        .unwrap();
        let repo = tmp.path().join("repo");
        new_repo(&repo);
        let before = all_files(tmp.path());
        // The name is refused where the file is read: a named failure of that job.
        from_dir_cmd(&repo, &jobs, &local.root)
            .assert()
            .code(1)
            .stderr(predicates::str::contains("plain/results.json"))
            .stderr(predicates::str::contains(if field == "cell" {
                "is not a valid CellId"
            } else {
                "is not a valid ToolchainName"
            }));
        let run_dir = repo.join("results").join(format!("2026-12-01-{RUN}"));
        let written: Vec<PathBuf> = all_files(tmp.path())
            .into_iter()
            .filter(|p| !before.contains(p))
            .collect();
        assert!(
            written.iter().all(|p| p.starts_with(&run_dir)),
            "{field}: written outside the run dir: {written:?}"
        );
    }
}

/// Regression: an artifact carrying a nested `cell-…-clang-a99/results.json` replaced the
/// clang job's rows. Now nested artifact folders, or a job in a folder named for another, are
/// failures by path: the run is partial, exit 1, and clang's rows are attempt 1's.
#[test]
fn one_artifact_cannot_replace_another_jobs_results() {
    let tmp = tempfile::tempdir().unwrap();
    let local = local_run(tmp.path());
    let jobs = tmp.path().join("jobs");
    copy_jobs(&local.jobs, &jobs, |_| 1);
    let clang = local.job("clang");
    let gcc = jobs.join(local.job("gcc").file_name().unwrap());
    let clang_name = clang
        .file_name()
        .unwrap()
        .to_str()
        .unwrap()
        .replace("-a1", "-a99");
    let nested = gcc.join(&clang_name);
    std::fs::create_dir_all(&nested).unwrap();
    std::fs::copy(clang.join("results.json"), nested.join("results.json")).unwrap();
    // And a folder named for gcc that holds clang's job.
    let liar = jobs.join(
        gcc.file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .replace("-a1", "-a7"),
    );
    std::fs::create_dir_all(&liar).unwrap();
    std::fs::copy(clang.join("results.json"), liar.join("results.json")).unwrap();
    let repo = tmp.path().join("repo");
    new_repo(&repo);
    from_dir_cmd(&repo, &jobs, &local.root)
        .assert()
        .code(1)
        .stderr(predicates::str::contains("nested in each other"))
        .stderr(predicates::str::contains("not the one its folder says"));
    let dir = repo.join("results").join(format!("2026-12-01-{RUN}"));
    assert_eq!(
        job_attempts(&dir, &local.cell_id),
        [("clang".into(), 1), ("gcc".into(), 1)]
    );
    assert_eq!(read_json(&dir.join("run.json"))["run"]["partial"], true);
}

/// A results.json written by a newer cell, or not JSON at all, is a named failure of that
/// job: the run is written partial, the job named, exit 1 (it used to vanish with exit 0).
#[test]
fn an_unreadable_results_file_makes_the_run_partial_naming_the_job() {
    for (case, newer) in [("newer schema", true), ("not JSON", false)] {
        let tmp = tempfile::tempdir().unwrap();
        let local = local_run(tmp.path());
        let jobs = tmp.path().join("jobs");
        copy_jobs(&local.jobs, &jobs, |_| 1);
        let path = tamper(&jobs, "gcc", |v| v["schema_version"] = 999.into());
        if !newer {
            std::fs::write(&path, "{ this is not json").unwrap();
        }
        let repo = tmp.path().join("repo");
        new_repo(&repo);
        let expect = if newer {
            "written by a newer cell"
        } else {
            "not a cell results file"
        };
        from_dir_cmd(&repo, &jobs, &local.root)
            .assert()
            .code(1)
            .stderr(predicates::str::contains(expect))
            .stderr(predicates::str::contains("-gcc-a1/results.json"));
        let dir = repo.join("results").join(format!("2026-12-01-{RUN}"));
        let run = read_json(&dir.join("run.json"));
        assert_eq!(run["run"]["partial"], true, "{case}");
        assert!(
            run["missing"].to_string().contains(expect),
            "{case}: {run:#}"
        );
        assert_eq!(
            job_attempts(&dir, &local.cell_id),
            [("clang".into(), 1)],
            "{case}"
        );
    }
}

/// Regression: credentials inside URLs were printed. An API URL carrying them is refused
/// without echoing them; a git remote's are stripped from every message.
#[test]
fn credentials_inside_urls_are_never_printed() {
    let tmp = tempfile::tempdir().unwrap();
    let out = cell()
        .current_dir(tmp.path())
        .env("GITHUB_API_URL", "http://user:s3cret-pw@127.0.0.1:9")
        .env("GITHUB_TOKEN", TOKEN)
        .args(["-v", "collect", "7", "--repo", "o/r"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("carries credentials"), "{text}");
    assert!(
        !text.contains("s3cret-pw") && !text.contains(TOKEN),
        "{text}"
    );
    // A push to a remote whose URL holds a token: git's message names the remote, ours not
    // the token.
    let repo = tmp.path().join("repo");
    new_repo(&repo);
    git(
        &repo,
        &[
            "remote",
            "add",
            "origin",
            "https://x-access-token:ghs_leaky@127.0.0.1:9/o/r.git",
        ],
    );
    // A real run dir, so the commit is made and the push is what fails.
    let local = local_run(tmp.path());
    let jobs = tmp.path().join("jobs");
    copy_jobs(&local.jobs, &jobs, |_| 1);
    from_dir_cmd(&repo, &jobs, &local.root).assert().success();
    let out = cell()
        .current_dir(&repo)
        .args(["commit", &format!("results/2026-12-01-{RUN}"), "--push"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(text.contains("committed: results: run"), "{text}");
    assert!(text.contains("refused the push"), "{text}");
    assert!(!text.contains("ghs_leaky"), "{text}");
}

/// The artifact caps are the project's own: versions.env tightened to one entry refuses every
/// job's artifact (three files each) by name, and the run is partial, exit 1.
#[test]
fn the_artifact_caps_of_versions_env_refuse_an_artifact_by_name() {
    let tmp = tempfile::tempdir().unwrap();
    let local = local_run(tmp.path());
    let when = started_at(&local);
    let repo = tmp.path().join("repo");
    new_repo(&repo);
    // The project's config with the cap changed: collect reads both from --root.
    cell_testkit::copy_dir(&local.root, &repo);
    let versions = std::fs::read_to_string(local.root.join("versions.env")).unwrap();
    std::fs::write(
        repo.join("versions.env"),
        format!("{versions}ARTIFACT_MAX_ENTRIES=1\n"),
    )
    .unwrap();
    let gh = start(artifacts_of(&local), job_names(&local), when, vec![]);
    let name0 = local.jobs[0]
        .file_name()
        .unwrap()
        .to_str()
        .unwrap()
        .to_owned();
    collect_cmd(&gh, &repo, &repo)
        .arg("--complete")
        .assert()
        .code(1)
        .stderr(predicates::str::contains(format!("artifact `{name0}`")))
        .stderr(predicates::str::contains("entries"));
    std::fs::write(
        repo.join("versions.env"),
        format!("ARTIFACT_MAX_ENTRIES=x\n{versions}"),
    )
    .unwrap();
    collect_cmd(&gh, &repo, &repo)
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "versions.env:1: ARTIFACT_MAX_ENTRIES=x",
        ));
}

/// Regression: a cell whose every job failed vanished from the run dir (only run.json named
/// it). It is written, its RESULTS.md says what became of each job, collect trips (exit 1)
/// and the gate names the failed jobs; a job name that is not `cell <safe-id> <safe-id>`
/// never becomes a directory.
#[test]
fn a_cell_whose_every_job_failed_is_written_and_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    let local = local_run(tmp.path());
    let when = started_at(&local);
    let mut jobs = job_names(&local);
    jobs.push(("cell linux-aarch64-arm clang".into(), "failure"));
    jobs.push(("cell linux-aarch64-arm gcc".into(), "timed_out"));
    jobs.push(("cell ../../escape clang".into(), "failure"));
    let gh = start(artifacts_of(&local), jobs, when.clone(), vec![]);
    let repo = tmp.path().join("repo");
    new_repo(&repo);
    collect_cmd(&gh, &repo, &local.root)
        .assert()
        .code(1)
        .stderr(predicates::str::contains(
            "job `cell ../../escape clang` is not named `cell <cell-id> <toolchain>` with safe names: ignored",
        ));
    let dir = repo.join("results").join(format!("{}-{RUN}", &when[..10]));
    let arm = dir.join("linux-aarch64-arm");
    let merged = read_json(&arm.join("results.json"));
    assert_eq!(merged["verdict"]["status"], "failed");
    assert_eq!(merged["cell"]["label"], "arm");
    assert_eq!(merged["cell"]["arch"], "aarch64");
    let md = std::fs::read_to_string(arm.join("RESULTS.md")).unwrap();
    assert!(md.contains("clang: no result (failure)"), "{md}");
    assert!(md.contains("gcc: no result (timed_out)"), "{md}");
    // Regression: an empty sum of f64 is -0.0.
    assert!(md.contains("Total cost: 0.0 s"), "{md}");
    assert!(!tmp.path().join("escape").exists());
    assert!(!repo.join("escape").exists());
    // The other cell is whole. Collect's exit 1 is the trip (the workflow's last step fails
    // on it); the gate names the failed jobs under their cell.
    assert!(dir.join(&local.cell_id).join("RESULTS.md").is_file());
    // A job that left no result is the collect's failure; the gate lists it as a notice.
    let out = cell()
        .args(["gate", dir.to_str().unwrap(), "--root"])
        .arg(tmp.path().join("proj"))
        .assert()
        .success();
    let printed = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(
        printed.contains("linux-aarch64-arm against nothing (first run)\n  notice: job clang left no result (failure)"),
        "{printed}"
    );
}
