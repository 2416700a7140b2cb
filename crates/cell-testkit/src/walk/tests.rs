//! The walk on small hand-written workflows shaped like the generator's (a build job whose
//! binary later jobs download and verify, step ids and outcomes, `continue-on-error`, a
//! collect job that keeps credentials), so each rule of the runner is checked without `cell`.

use std::path::{Path, PathBuf};

use sha2::Digest as _;

use super::{Conclusion, Config, Options, Walk};
use crate::git;

/// A repository with two commits on `main` and its bare origin: (the work tree, the origin,
/// the tip).
fn origin(tmp: &Path) -> (PathBuf, PathBuf, String) {
    let src = tmp.join("src");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::write(src.join("README"), "hello\n").unwrap();
    git(&src, &["init", "-q", "-b", "main"]);
    crate::commit_all(&src, "init");
    std::fs::write(src.join("second"), "2\n").unwrap();
    let sha = crate::commit_all(&src, "second");
    let bare = tmp.join("origin.git");
    crate::bare_clone(&src, &bare);
    (src, bare, sha)
}

/// The run `run_id` of `workflow` on `origin`, at `sha` on `git_ref`.
fn config(tmp: &Path, workflow: &str, origin: &Path, run_id: u64, at: (&str, &str)) -> Config {
    Config {
        workflow: workflow.to_owned(),
        origin: origin.to_path_buf(),
        dir: tmp.join("walk"),
        run_id,
        sha: at.0.to_owned(),
        git_ref: at.1.to_owned(),
        repository: "o/r".into(),
        // Any file stands for the binary the cargo stand-in copies.
        cell_bin: PathBuf::from("/bin/sh"),
    }
}

/// A repository with two commits, its bare origin, and a walk of `workflow` on it.
fn walk(tmp: &Path, workflow: &str, options: Options) -> Walk {
    let (_, bare, sha) = origin(tmp);
    let config = config(tmp, workflow, &bare, 77, (&sha, "refs/heads/main"));
    Walk::new(config, options).unwrap()
}

const PIPELINE: &str = r#"
name: synth
on:
  workflow_dispatch:
    inputs:
      who: {type: string, default: world}
env:
  TOP: top
defaults:
  run:
    shell: bash
jobs:
  build-linux:
    runs-on: ubuntu-24.04
    outputs:
      sha256: ${{ steps.hash.outputs.sha256 }}
    steps:
    - uses: actions/checkout@0123456789012345678901234567890123456789 # v9
      with: {persist-credentials: false}
    - run: cargo build --release --locked --bin cell
    - id: hash
      run: echo "sha256=$(sha256sum target/release/cell | cut -d' ' -f1)" >> "$GITHUB_OUTPUT"
    - uses: actions/upload-artifact@v4
      with: {name: cell-linux, path: target/release/cell}
  plan:
    needs: build-linux
    runs-on: ubuntu-24.04
    outputs:
      matrix: ${{ steps.m.outputs.matrix }}
      note: ${{ steps.m.outputs.note }}
    steps:
    - id: m
      env: {WHO: "${{ inputs.who }}"}
      run: |
        echo 'matrix={"include":[{"tc":"a"},{"tc":"b"}]}' >> "$GITHUB_OUTPUT"
        { echo 'note<<EOF'; echo "hello $WHO $TOP"; echo 'line 2'; echo 'EOF'; } >> "$GITHUB_OUTPUT"
        echo "FROM_ENV=yes" >> "$GITHUB_ENV"
        mkdir -p "$RUNNER_TEMP/tools"
        printf '#!/bin/sh\necho hi-from-path\n' > "$RUNNER_TEMP/tools/hello"
        chmod +x "$RUNNER_TEMP/tools/hello"
        echo "$RUNNER_TEMP/tools" >> "$GITHUB_PATH"
    - run: test "$FROM_ENV" = yes && hello | grep -q hi-from-path && test "$CI" = true
  run:
    name: job ${{ matrix.tc }}
    needs: [build-linux, plan]
    runs-on: ubuntu-24.04
    strategy:
      fail-fast: false
      matrix: ${{ fromJSON(needs.plan.outputs.matrix) }}
    steps:
    - uses: actions/download-artifact@v4
      with: {name: cell-linux, path: bin}
    - env: {SHA: "${{ needs.build-linux.outputs.sha256 }}"}
      run: |
        test ! -x bin/cell
        chmod +x bin/cell
        echo "$SHA  bin/cell" | sha256sum -c -
    - id: work
      continue-on-error: true
      env: {TC: "${{ matrix.tc }}"}
      run: |
        mkdir -p "out/$TC"
        echo "$TC" > "out/$TC/r.txt"
        test "$TC" != b
    - if: steps.work.outcome == 'failure'
      run: echo "work failed, conclusion ${{ steps.work.conclusion }}" >> "$GITHUB_STEP_SUMMARY"
    - uses: actions/upload-artifact@v4
      with: {name: 'r-${{ matrix.tc }}-a${{ github.run_attempt }}', path: out/*/r.txt}
  collect:
    needs: [plan, run]
    if: always() && needs.plan.result == 'success'
    runs-on: ubuntu-24.04
    concurrency: {group: 'c-${{ github.ref }}', cancel-in-progress: false}
    steps:
    - uses: actions/checkout@v4
    - uses: actions/download-artifact@v4
      with: {pattern: 'r-*', path: got, merge-multiple: true}
    - env: {GITHUB_TOKEN: "${{ github.token }}"}
      run: |
        curl -sf -H "Authorization: Bearer $GITHUB_TOKEN" "$GITHUB_API_URL/repos/o/r/actions/runs/$GITHUB_RUN_ID/artifacts?per_page=2" > arts.json
        curl -sf -H "Authorization: Bearer $GITHUB_TOKEN" "$GITHUB_API_URL/repos/o/r/actions/runs/$GITHUB_RUN_ID/jobs?per_page=100" > jobs.json
        ! curl -sf "$GITHUB_API_URL/repos/o/r/actions/runs/$GITHUB_RUN_ID"
        ! curl -sf https://example.com/
        find got -type f | sort > got.txt
"#;

#[test]
fn a_pipeline_of_build_plan_matrix_and_collect() {
    let tmp = tempfile::tempdir().unwrap();
    let mut w = walk(tmp.path(), PIPELINE, Options::default());
    let a = w.run().unwrap();
    assert_eq!(
        a.conclusion,
        Conclusion::Success,
        "{}{}",
        a.table(),
        a.failed_logs()
    );
    let names: Vec<&str> = a.jobs.iter().map(|j| j.name.as_str()).collect();
    assert_eq!(names, ["build-linux", "plan", "job a", "job b", "collect"]);
    assert_eq!(a.job("plan").outputs["note"], "hello world top\nline 2");
    let b = a.job("job b");
    let work = b
        .steps
        .iter()
        .find(|s| s.id.as_deref() == Some("work"))
        .unwrap();
    assert_eq!(
        (work.outcome, work.conclusion),
        (Conclusion::Failure, Conclusion::Success)
    );
    assert_eq!(b.summary, "work failed, conclusion success\n");
    assert_eq!(a.job("job a").summary, "");

    let ws = |name: &str| a.job(name).workspace.clone().unwrap();
    let config = |name: &str| std::fs::read_to_string(ws(name).join(".git/config")).unwrap();
    assert!(!config("build-linux").contains("extraheader"));
    let header = super::actions::extraheader(&w.token);
    assert!(config("collect").contains(&header), "{}", config("collect"));
    assert_eq!(
        std::fs::read_to_string(ws("collect").join("got.txt")).unwrap(),
        "got/a/r.txt\ngot/b/r.txt\n"
    );
    let arts: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(ws("collect").join("arts.json")).unwrap())
            .unwrap();
    assert_eq!(arts["total_count"], 3, "{arts:#}");
    assert_eq!(
        arts["artifacts"].as_array().unwrap().len(),
        2,
        "a page of per_page"
    );
    let jobs: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(ws("collect").join("jobs.json")).unwrap())
            .unwrap();
    let listed: Vec<(&str, &str)> = jobs["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| (j["name"].as_str().unwrap(), j["status"].as_str().unwrap()))
        .collect();
    assert_eq!(
        listed,
        [
            ("build-linux", "completed"),
            ("plan", "completed"),
            ("job a", "completed"),
            ("job b", "completed"),
            ("collect", "in_progress")
        ]
    );
    assert_eq!(w.artifacts().len(), 3);
}

const CANCEL: &str = r"
on: {workflow_dispatch: {}}
jobs:
  first:
    runs-on: x
    steps: [{run: 'true'}]
  sibling:
    runs-on: x
    steps:
    - run: echo ran > ../sibling-step
    - if: always()
      run: echo always > ../sibling-always
  second:
    needs: first
    runs-on: x
    steps: [{run: 'true'}]
  last:
    needs: [second, sibling]
    if: always()
    runs-on: x
    steps:
    - run: echo last
    - if: cancelled()
      run: echo saw-cancel > ../last-cancelled
  not-if-cancelled:
    needs: second
    if: ${{ !cancelled() }}
    runs-on: x
    steps: [{run: 'true'}]
";

#[test]
fn a_cancel_stops_what_had_not_started_and_runs_what_asks_always() {
    let tmp = tempfile::tempdir().unwrap();
    let opts = Options {
        cancel_after: Some("first".into()),
        ..Options::default()
    };
    let mut w = walk(tmp.path(), CANCEL, opts);
    let a = w.run().unwrap();
    assert_eq!(a.conclusion, Conclusion::Cancelled);
    let c = |n: &str| a.job(n).conclusion;
    assert_eq!(c("first"), Conclusion::Success);
    assert_eq!(
        c("sibling"),
        Conclusion::Cancelled,
        "it was running in parallel"
    );
    assert_eq!(c("second"), Conclusion::Cancelled);
    assert_eq!(c("last"), Conclusion::Success);
    assert_eq!(c("not-if-cancelled"), Conclusion::Cancelled);
    let sib = a.job("sibling").workspace.clone().unwrap();
    assert!(
        !sib.join("../sibling-step").exists(),
        "a success() step of a cancelled job"
    );
    assert!(
        sib.join("../sibling-always").exists(),
        "an always() step of a cancelled job"
    );
    let last = a.job("last").workspace.clone().unwrap();
    assert!(last.join("../last-cancelled").exists());
}

const RERUN: &str = r#"
on: {workflow_dispatch: {}}
jobs:
  ok:
    runs-on: x
    outputs: {x: "${{ steps.s.outputs.x }}"}
    steps:
    - id: s
      run: echo "x=$GITHUB_RUN_ATTEMPT" >> "$GITHUB_OUTPUT"
  flaky:
    runs-on: x
    steps:
    - run: sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -q bash
  after:
    needs: [ok, flaky]
    runs-on: x
    steps:
    - env: {X: "${{ needs.ok.outputs.x }}", A: "${{ github.run_attempt }}"}
      run: test "$X" = 1 && test "$A" = 2
    - env: {T: "${{ github.token }}"}
      run: |
        curl -sf -H "Authorization: Bearer $T" "$GITHUB_API_URL/repos/o/r/actions/runs/$GITHUB_RUN_ID/jobs" > jobs.json
        curl -sf -H "Authorization: Bearer $T" "$GITHUB_API_URL/repos/o/r/actions/runs/$GITHUB_RUN_ID" > run.json
"#;

#[test]
fn a_rerun_runs_the_failed_jobs_and_their_dependants_only() {
    let tmp = tempfile::tempdir().unwrap();
    let opts = Options {
        apt_fail: vec!["bash".into()],
        ..Options::default()
    };
    let mut w = walk(tmp.path(), RERUN, opts);
    let first = w.run().unwrap();
    assert_eq!(first.job("flaky").conclusion, Conclusion::Failure);
    assert_eq!(first.job("after").conclusion, Conclusion::Skipped);
    assert!(
        first
            .job("flaky")
            .log_text()
            .contains("Unable to locate package bash")
    );
    w.options.apt_fail.clear();
    let second = w.rerun_failed().unwrap();
    assert_eq!(
        second.conclusion,
        Conclusion::Success,
        "{}",
        second.failed_logs()
    );
    let at = |n: &str| second.job(n).attempt;
    assert_eq!((at("ok"), at("flaky"), at("after")), (1, 2, 2));
    let ws = second.job("after").workspace.clone().unwrap();
    let read = |f: &str| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(ws.join(f)).unwrap()).unwrap()
    };
    let jobs = read("jobs.json");
    let listed: Vec<(&str, u64)> = jobs["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| {
            (
                j["name"].as_str().unwrap(),
                j["run_attempt"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(listed, [("ok", 1), ("flaky", 2), ("after", 2)]);
    let run = read("run.json");
    assert_eq!(run["run_attempt"], 2);
    assert_eq!(run["status"], "in_progress");
    assert_ne!(run["created_at"], serde_json::Value::Null);
}

#[test]
fn unknown_actions_oversized_summaries_and_timeouts() {
    let tmp = tempfile::tempdir().unwrap();
    let unknown = "on: [push, workflow_dispatch]\njobs:\n  a:\n    runs-on: x\n    steps: [{uses: someone/thing@v1}]\n";
    let err = walk(&tmp.path().join("u"), unknown, Options::default())
        .run()
        .unwrap_err();
    assert!(
        err.contains("does not know the action `someone/thing@v1`"),
        "{err}"
    );

    let misc = r#"
on: [push, workflow_dispatch]
jobs:
  big:
    runs-on: x
    steps:
    - run: head -c 1100000 /dev/zero | tr '\0' x >> "$GITHUB_STEP_SUMMARY"
  clones:
    runs-on: x
    steps:
    - uses: actions/checkout@v4
      with: {path: shallow}
    - uses: actions/checkout@v4
      with: {path: full, fetch-depth: 0, ref: main}
    - run: |
        test "$(git -C shallow rev-parse --is-shallow-repository)" = true
        test "$(git -C shallow rev-parse HEAD)" = "$GITHUB_SHA"
        test "$(git -C shallow rev-parse --abbrev-ref HEAD)" = main
        test "$(git -C full rev-list --count HEAD)" = 2
        echo "h=${{ hashFiles('full/README', 'full/sec*') }}" >> "$GITHUB_OUTPUT"
        echo "none=${{ hashFiles('nothing/**') }}" >> "$GITHUB_OUTPUT"
      id: c
    outputs: {h: "${{ steps.c.outputs.h }}", none: "${{ steps.c.outputs.none }}"}
  ff:
    runs-on: x
    strategy:
      matrix: {n: "${{ fromJSON('[1, 2]') }}"}
    steps: [{run: exit 1}]
  slow:
    runs-on: x
    timeout-minutes: 0.02
    steps:
    - run: sleep 20
  slow-step:
    runs-on: x
    steps:
    - run: sleep 20
      timeout-minutes: 0.02
    - if: always()
      run: 'true'
"#;
    let a = walk(&tmp.path().join("m"), misc, Options::default())
        .run()
        .unwrap();
    assert_eq!(a.problems.len(), 1, "{:?}", a.problems);
    assert!(a.problems[0].contains("supports content up to a size of 1024k"));
    assert_eq!(a.job("slow").conclusion, Conclusion::Failure);
    assert!(a.job("slow").seconds < 10.0);
    let step = a.job("slow-step");
    assert_eq!(step.conclusion, Conclusion::Failure);
    assert!(step.seconds < 10.0);
    assert_eq!(
        step.steps[1].conclusion,
        Conclusion::Success,
        "the job's deadline is back"
    );
    assert!(
        a.job("slow")
            .log_text()
            .contains("exceeded its timeout-minutes")
    );
    let clones = a.job("clones");
    assert_eq!(
        clones.conclusion,
        Conclusion::Success,
        "{}",
        clones.log_text()
    );
    let mut hashes = sha2::Sha256::new();
    for content in ["hello\n", "2\n"] {
        hashes.update(sha2::Sha256::digest(content.as_bytes()));
    }
    let want = cell_schema::Sha256::from_bytes(&hashes.finalize()).to_string();
    assert_eq!(clones.outputs["h"], want);
    assert_eq!(clones.outputs["none"], "");
    let ff: Vec<(&str, Conclusion)> = a
        .jobs("ff")
        .iter()
        .map(|j| (j.name.as_str(), j.conclusion))
        .collect();
    assert_eq!(
        ff,
        [
            ("ff (1)", Conclusion::Failure),
            ("ff", Conclusion::Cancelled)
        ]
    );
}

const PULL_REQUEST: &str = r#"
on:
  pull_request:
    branches: [main]
jobs:
  bench:
    runs-on: x
    strategy:
      matrix: {n: [1, 2]}
    steps:
    - uses: actions/checkout@v4
      with: {ref: "${{ github.event.pull_request.head.sha }}", persist-credentials: false}
    - uses: actions/checkout@v4
      with: {path: merge}
    - env:
        NUMBER: ${{ github.event.pull_request.number }}
        HEAD: ${{ github.event.pull_request.head.sha }}
        FORK: ${{ github.event.pull_request.head.repo.fork }}
        HEAD_REF: ${{ github.head_ref }}
        WHO: ${{ inputs.who }}
      run: |
        test "$NUMBER" = 7 && test "$FORK" = true && test -z "$WHO"
        test "$(git rev-parse HEAD)" = "$HEAD" && test -f from-fork
        test "$(git -C merge rev-parse HEAD)" = "$GITHUB_SHA"
        test -f merge/from-fork && test -f merge/on-main
        test "$HEAD_REF" = feature && test "$GITHUB_HEAD_REF" = feature
        test "$GITHUB_BASE_REF" = main
        test "$GITHUB_REF" = refs/pull/7/merge && test "$GITHUB_REF_NAME" = 7/merge
        test "$(jq .pull_request.number "$GITHUB_EVENT_PATH")" = 7
        mkdir -p out && echo "${{ matrix.n }}" > "out/n${{ matrix.n }}"
    - uses: actions/upload-artifact@v4
      with: {name: 'cell-pr-${{ matrix.n }}', path: out}
"#;

const REPORTER: &str = r#"
on:
  workflow_run:
    workflows: [pr]
    types: [completed]
jobs:
  report:
    runs-on: x
    steps:
    - uses: actions/checkout@v4
    - env:
        RUN_ID: ${{ github.event.workflow_run.id }}
        HEAD_SHA: ${{ github.event.workflow_run.head_sha }}
        API: ${{ github.api_url }}
        TOKEN: ${{ github.token }}
      run: |
        test "$(git rev-parse HEAD)" = "$GITHUB_SHA" && test "$GITHUB_REF" = refs/heads/main
        auth="Authorization: Bearer $TOKEN"
        curl -sf -H "$auth" "$API/repos/o/r/actions/runs/$RUN_ID" > run.json
        test "$(jq -r .head_sha run.json)" = "$HEAD_SHA"
        curl -sf -H "$auth" "$API/repos/o/r/actions/runs/$RUN_ID/artifacts" > arts.json
        url=$(jq -r '.artifacts[] | select(.name == "cell-pr-2") | .archive_download_url' arts.json)
        blob=$(curl -s -o /dev/null -w '%{redirect_url}' -H "$auth" "$url")
        curl -sf "$blob" -o pr.zip && unzip -p pr.zip n2 > n2
        comments="$API/repos/o/r/issues/7/comments"
        id=$(curl -sf -H "$auth" "$comments" | jq '.[0].id // empty')
        body=$(jq -n --arg b "run $RUN_ID: $(cat n2)" '{body: $b}')
        if [ -n "$id" ]; then
          curl -sf -X PATCH -H "$auth" "$API/repos/o/r/issues/comments/$id" -d "$body"
        else
          curl -sf -X POST -H "$auth" "$comments" -d "$body"
        fi
"#;

/// A fork's commit on `feature`, pushed to the origin as pull request 7 only.
fn fork_pull_request(tmp: &Path, bare: &Path, src: &Path) -> super::events::PullRefs {
    let fork = tmp.join("fork");
    git(
        tmp,
        &[
            "clone",
            "-q",
            bare.to_str().unwrap(),
            fork.to_str().unwrap(),
        ],
    );
    git(&fork, &["checkout", "-q", "-b", "feature"]);
    std::fs::write(fork.join("from-fork"), "f\n").unwrap();
    crate::commit_all(&fork, "from a fork");
    // The base moved on since the fork was made: the test merge holds both.
    std::fs::write(src.join("on-main"), "m\n").unwrap();
    crate::commit_all(src, "on main");
    git(src, &["push", "-q", bare.to_str().unwrap(), "main"]);
    super::events::open_pull_request(bare, &fork, "HEAD", 7, "main")
}

#[test]
fn a_fork_pull_request_run_then_its_workflow_run_reporter_twice() {
    use super::events::{fork_of, pull_request_event, workflow_run_event};
    let tmp = tempfile::tempdir().unwrap();
    let (src, bare, _) = origin(tmp.path());
    let pr = fork_pull_request(tmp.path(), &bare, &src);
    assert!(
        git(&bare, &["branch", "--contains", &pr.head_sha]).is_empty(),
        "no branch of the origin holds the head"
    );
    let event = pull_request_event(
        "o/r",
        7,
        &pr.head_sha,
        "feature",
        &pr.base_sha,
        "main",
        true,
    );
    let options = Options {
        event_name: "pull_request".into(),
        event,
        ..Options::default()
    };
    let at = (pr.merge_sha.as_str(), "refs/pull/7/merge");
    let wrong = config(
        tmp.path(),
        PULL_REQUEST,
        &bare,
        501,
        (&pr.head_sha, "refs/pull/7/merge"),
    );
    let err = Walk::new(wrong, options.clone()).err().unwrap();
    assert!(err.contains("github.sha"), "{err}");
    let mut a = Walk::new(config(tmp.path(), PULL_REQUEST, &bare, 501, at), options).unwrap();
    let first = a.run().unwrap();
    assert_eq!(
        first.conclusion,
        Conclusion::Success,
        "{}",
        first.failed_logs()
    );
    assert_eq!(a.artifacts().len(), 2);

    let main = git(&bare, &["rev-parse", "main"]);
    let report = |run_id: u64, writes| {
        let options = Options {
            event_name: "workflow_run".into(),
            event: workflow_run_event(
                "o/r",
                &fork_of("o/r"),
                501,
                &pr.head_sha,
                "feature",
                &[],
                "success",
            ),
            other_runs: vec![a.view()],
            writes,
            ..Options::default()
        };
        let config = config(
            tmp.path(),
            REPORTER,
            &bare,
            run_id,
            (&main, "refs/heads/main"),
        );
        let mut b = Walk::new(config, options).unwrap();
        let got = b.run().unwrap();
        assert_eq!(got.conclusion, Conclusion::Success, "{}", got.failed_logs());
        b
    };
    let b = report(502, None);
    let comments = b.writes().comments_on("o/r", 7);
    assert_eq!(comments.len(), 1);
    assert_eq!(comments[0].body, "run 501: 2");
    // The reporter's token reads the pull request run; that run's own token is not this API's.
    let arts = format!("{}/repos/o/r/actions/runs/501/artifacts", b.api_url());
    let status = |token: &str| {
        let out = std::process::Command::new("curl")
            .args(["-s", "-o", "/dev/null", "-w", "%{http_code}", "-H"])
            .arg(format!("Authorization: Bearer {token}"))
            .arg(&arts)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    assert_eq!(
        (status(&b.token), status(&a.token)),
        ("200".into(), "401".into())
    );
    let run: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(
            b.attempts[0]
                .job("report")
                .workspace
                .clone()
                .unwrap()
                .join("run.json"),
        )
        .unwrap(),
    )
    .unwrap();
    assert_eq!(run["event"], "pull_request");
    assert_eq!(run["head_branch"], "feature");
    assert_eq!(run["pull_requests"], serde_json::json!([]), "a fork's");

    // A second reporter run (the next push) edits the comment the first one made.
    let again = report(503, Some(b.writes()));
    let comments = again.writes().comments_on("o/r", 7);
    assert_eq!(comments.len(), 1, "{comments:?}");
    assert_eq!(comments[0].body, "run 501: 2");
    assert_eq!(comments[0].id, b.writes().comments()[0].id);
}

#[test]
fn an_event_the_workflow_is_not_on_and_a_ref_github_would_not_give_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let (_, bare, sha) = origin(tmp.path());
    let on_pr = config(
        tmp.path(),
        PULL_REQUEST,
        &bare,
        601,
        (&sha, "refs/heads/main"),
    );
    let err = Walk::new(on_pr, Options::default()).err().unwrap();
    assert!(err.contains("has no `workflow_dispatch`"), "{err}");
    let options = Options {
        event_name: "workflow_run".into(),
        event: super::events::workflow_run_event("o/r", "o/r", 1, &sha, "main", &[], "success"),
        ..Options::default()
    };
    let on_tag = config(tmp.path(), REPORTER, &bare, 602, (&sha, "refs/tags/v1"));
    let err = Walk::new(on_tag, options).err().unwrap();
    assert!(err.contains("github.ref `refs/heads/main`"), "{err}");
}
