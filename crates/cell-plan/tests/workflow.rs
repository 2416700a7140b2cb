//! The generated workflow: snapshots, the rules of docs/workflow.md checked on the text, the 256-job
//! split, diff locality, determinism, the http and soak suite jobs, and the real linters on
//! every render.

mod support;

use cell_plan::{Layout, MAX_MATRIX, PlanError};
use cell_testkit::lint::lint_text;
use cell_testkit::planning::{
    BASE, CS, DOTNET, GCC, GO, HTTP, PYTHON, Project, RUST, SOAK, ZIG, apt_toolchain, hosted,
    self_hosted, self_hosted_subject, three_by_six, versions_for, with_suites, without_suites,
};
use serde_norway::Value;
use support::PlanOf as _;

fn render(toml: &str) -> String {
    cell_plan::render(&Project::of(toml).plan()).unwrap()
}

fn yaml(text: &str) -> Value {
    serde_norway::from_str(text).unwrap()
}

fn jobs(doc: &Value) -> &serde_norway::Mapping {
    doc["jobs"].as_mapping().unwrap()
}

fn steps(job: &Value) -> &[Value] {
    job["steps"].as_sequence().unwrap()
}

fn key(k: &Value) -> &str {
    k.as_str().unwrap()
}

/// The rules every generated workflow keeps (docs/workflow.md), checked on the text a user commits.
fn assert_rules(text: &str) {
    // Every `uses:` is owner/repo@<40 hex> # <tag>.
    for line in text.lines().filter(|l| l.contains("uses:")) {
        let value = line.split_once("uses: ").unwrap().1;
        let (action, rest) = value.split_once('@').unwrap();
        let (sha, tag) = rest
            .split_once(" # ")
            .unwrap_or_else(|| panic!("no tag: {line}"));
        assert_eq!(action.split('/').count(), 2, "{line}");
        assert!(
            sha.len() == 40 && sha.bytes().all(|b| b.is_ascii_hexdigit()),
            "{line}"
        );
        let pin = cell_plan::pins::by_sha(sha).unwrap_or_else(|| panic!("unknown SHA: {line}"));
        assert_eq!((pin.action, pin.tag), (action, tag), "{line}");
    }
    let doc = yaml(text);
    assert_eq!(
        serde_norway::to_string(&doc["permissions"]).unwrap(),
        "contents: read\n"
    );
    for (id, job) in jobs(&doc) {
        let id = key(id);
        if id == "collect" {
            assert_eq!(
                serde_norway::to_string(&job["permissions"]).unwrap(),
                "contents: write\nactions: read\n"
            );
        } else {
            assert!(job.get("permissions").is_none(), "{id} widens permissions");
        }
        for step in steps(job) {
            if let Some(run) = step.get("run") {
                assert!(
                    !run.as_str().unwrap().contains("${{"),
                    "{id}: expression in run: {run:?}"
                );
            }
            let uses = step.get("uses").and_then(Value::as_str).unwrap_or("");
            if uses.starts_with("actions/checkout@") {
                // No checkout keeps a token in .git/config; collect's push gets it by env.
                let persist = step["with"]["persist-credentials"].as_bool();
                assert_eq!(persist, Some(false), "{id}: persist-credentials");
            }
        }
    }
}

/// Matrix job ids of a rendered workflow.
fn run_jobs(doc: &Value) -> Vec<String> {
    jobs(doc)
        .keys()
        .map(|k| key(k).to_owned())
        .filter(|k| k.starts_with("run-"))
        .collect()
}

#[test]
fn snapshot_repository_default() {
    let plan = cell_model::Plan::load(&cell_testkit::repo_root()).unwrap();
    let text = cell_plan::render(&plan).unwrap();
    assert_rules(&text);
    lint_text(&text);
    insta::assert_snapshot!("repository_default", text);
}

#[test]
fn snapshot_three_cells_by_six_toolchains() {
    let text = render(&three_by_six());
    assert_rules(&text);
    let doc = yaml(&text);
    assert_eq!(
        run_jobs(&doc),
        [
            "run-clang",
            "run-cs",
            "run-gcc",
            "run-go",
            "run-rust",
            "run-zig"
        ]
    );
    lint_text(&text);
    insta::assert_snapshot!("three_cells_by_six_toolchains", text);
}

#[test]
fn snapshot_release_under_test_on_a_self_hosted_runner() {
    let project = Project::of(&self_hosted_subject());
    let plan = project.plan();
    let text = cell_plan::render(&plan).unwrap();
    assert_rules(&text);
    // Both architectures get their own verified tarball, each from its own keys.
    assert!(text.contains(
        "# zig-x86_64-linux-0.16.0.tar.xz: ZIG_URL_X86_64 and ZIG_SHA256_X86_64 of versions.env"
    ));
    assert!(
        text.contains("zig-aarch64-linux-0.16.0.tar.xz: ZIG_URL_AARCH64 and ZIG_SHA256_AARCH64")
    );
    assert!(text.contains("if: matrix.os == 'linux' && matrix.arch == 'x86_64'"));
    assert!(text.contains("run: cell install --cell \"$CELL\" --toolchain \"$INSTALL\""));
    // The self-hosted label runs on [self-hosted, label].
    let sel = Layout::of(&plan)
        .unwrap()
        .select(&plan, Some("bench-box"), Some("zig"))
        .unwrap();
    assert_eq!(
        sel.matrix_json(),
        r#"{"include":[{"cell":"bench-box","cell-id":"linux-x86_64-bench-box","os":"linux","arch":"x86_64","runs-on":["self-hosted","bench-box"],"toolchain":"zig"}]}"#
    );
    lint_text(&text);
    insta::assert_snapshot!("release_under_test_self_hosted", text);
}

/// A macOS cell reads its own keys, never the Linux tarball: without them the plan is refused
/// naming the keys it tried.
#[test]
fn a_macos_cell_installs_its_own_tarball_or_the_plan_says_which_key_is_missing() {
    let toml = format!("{}\n[cells.\"macos-15\"]\n", self_hosted_subject());
    let err = cell_model::Plan::load(&Project::of(&toml).root).unwrap_err();
    assert!(
        err.to_string()
            .contains("versions.env has none of ZIG_URL_MACOS_AARCH64, ZIG_URL for macos-aarch64"),
        "{err}"
    );
    let versions = format!(
        "{}ZIG_URL_MACOS_AARCH64=https://ziglang.org/download/0.16.0/zig-aarch64-macos-0.16.0.tar.xz\nZIG_SHA256_MACOS_AARCH64=b23d70deaa879b5c2d486ed3316f7eaa53e84acf6fc9cc747de152450d401489\n",
        versions_for(&toml)
    );
    let text = cell_plan::render(&Project::new(&versions, &toml).plan()).unwrap();
    assert!(text.contains("# zig-aarch64-macos-0.16.0.tar.xz: ZIG_URL_MACOS_AARCH64 and ZIG_SHA256_MACOS_AARCH64 of"), "{text}");
    assert!(text.contains("if: matrix.os == 'macos' && matrix.arch == 'aarch64'"));
    lint_text(&text);
}

#[test]
fn apt_installs_are_linux_only_when_a_cell_is_not_linux() {
    let toml = format!("{BASE}{}{GCC}", hosted(&["ubuntu-24.04", "macos-15"]));
    let text = render(&toml);
    assert!(text.contains("    - name: install gcc (apt gcc)\n      if: matrix.os == 'linux'\n"));
    lint_text(&text);
    let linux_only = render(&format!("{BASE}{}{GCC}", hosted(&["ubuntu-24.04"])));
    assert!(!linux_only.contains("matrix.os"));
}

/// `INSTRUCTIONS=on` (the default): every workload job with a Linux cell installs valgrind with
/// apt before it times, on Linux runners only when the job has other cells, and its
/// `timeout-minutes` counts the lane's cap (`INSTRUCTIONS_TIME_CAP_S`, 600 s: 10 minutes) on top
/// of the timing's, so the lane's own cap stops it before the runner kills the job; off, or on
/// macOS cells only, there is no valgrind and no lane minutes.
#[test]
fn the_exact_lane_installs_valgrind_on_linux_jobs_by_default_and_not_when_off() {
    let toml = format!("{BASE}{}{GCC}", hosted(&["ubuntu-24.04", "macos-15"]));
    // On by default: versions.env need not say it.
    let on = versions_for(&toml);
    let text = cell_plan::render(&Project::new(&on, &toml).plan()).unwrap();
    let doc = yaml(&text);
    for id in run_jobs(&doc) {
        let job = &jobs(&doc)[id.as_str()];
        let names: Vec<&str> = steps(job)
            .iter()
            .map(|s| s["name"].as_str().unwrap())
            .collect();
        let at = names
            .iter()
            .position(|n| *n == "install valgrind for the exact lane (apt valgrind)")
            .unwrap_or_else(|| panic!("{id}: {names:?}"));
        let timing = names.iter().position(|n| n.starts_with("time ")).unwrap();
        assert!(at < timing, "{id}: {names:?}");
        let step = &steps(job)[at];
        assert_eq!(step["if"].as_str(), Some("matrix.os == 'linux'"), "{id}");
        assert_eq!(step["env"]["PACKAGE"].as_str(), Some("valgrind"), "{id}");
    }
    lint_text(&text);
    let macos_only = format!("{BASE}{}{GCC}", hosted(&["macos-15"]));
    let on = versions_for(&macos_only);
    let text = cell_plan::render(&Project::new(&on, &macos_only).plan()).unwrap();
    assert!(!text.contains("valgrind"), "{text}");
    let macos_minutes = timeout_of(&text, "run-gcc");
    let off = format!("{}INSTRUCTIONS=off\n", versions_for(&toml));
    let text = cell_plan::render(&Project::new(&off, &toml).plan()).unwrap();
    assert!(!text.contains("valgrind"), "{text}");
    let off_minutes = timeout_of(&text, "run-gcc");
    assert_eq!(macos_minutes, off_minutes);
    let on_text = cell_plan::render(&Project::new(&versions_for(&toml), &toml).plan()).unwrap();
    assert_eq!(timeout_of(&on_text, "run-gcc"), off_minutes + 10);
    let capped = format!("{}INSTRUCTIONS_TIME_CAP_S=61\n", versions_for(&toml));
    let text = cell_plan::render(&Project::new(&capped, &toml).plan()).unwrap();
    assert_eq!(timeout_of(&text, "run-gcc"), off_minutes + 2);
}

fn timeout_of(text: &str, job: &str) -> u64 {
    yaml(text)["jobs"][job]["timeout-minutes"].as_u64().unwrap()
}

#[test]
fn same_inputs_same_bytes_wherever_the_project_lives() {
    let toml = three_by_six();
    let a = render(&toml);
    let b = render(&toml);
    assert_eq!(a, b);
    // Nothing from the machine: no temp path, no absolute path.
    assert!(!a.contains("/tmp"), "a path leaked into the workflow");
}

/// The 256-entry limit: a 300-job plan spread over many cells of one toolchain is split in
/// parts, `collect` needs every part, every matrix a run can produce stays within the limit,
/// and the result lints clean.
#[test]
fn three_hundred_jobs_split_into_matrices_of_at_most_256() {
    let cells: String = (0..300)
        .map(|i| self_hosted(&format!("bench-{i:03}"), "linux", "x86_64"))
        .collect();
    let project = Project::of(&format!("{BASE}{cells}"));
    let plan = project.plan();
    let layout = Layout::of(&plan).unwrap();
    assert_eq!(layout.total(), 300);
    let ids: Vec<&str> = layout.jobs.iter().map(|j| j.id.as_str()).collect();
    assert_eq!(ids, ["run-clang-part1", "run-clang-part2"]);
    let sel = layout.select(&plan, None, None).unwrap();
    assert_eq!(sel.include.len(), 300);
    for (job, entries) in &sel.per_job {
        assert!(entries.len() <= MAX_MATRIX, "{job}: {}", entries.len());
    }
    let output = sel.github_output();
    let lines: Vec<&str> = output.lines().collect();
    assert_eq!(lines.len(), 2);
    for line in lines {
        let (_, json) = line.split_once('=').unwrap();
        let v: serde_json::Value = serde_json::from_str(json).unwrap();
        assert!(v["include"].as_array().unwrap().len() <= MAX_MATRIX);
    }
    let text = cell_plan::render(&plan).unwrap();
    assert_rules(&text);
    assert!(text.contains("300 jobs: each toolchain's cells are split into 2 matrix jobs"));
    let doc = yaml(&text);
    let needs: Vec<&str> = doc["jobs"]["collect"]["needs"]
        .as_sequence()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(
        needs,
        [
            "plan",
            "build-linux-x86_64",
            "run-clang-part1",
            "run-clang-part2"
        ]
    );
    lint_text(&text);
}

/// 300 jobs as 50 cells × 6 toolchains: one matrix job per toolchain, 50 entries each.
#[test]
fn three_hundred_jobs_over_many_toolchains() {
    let cells: String = (0..50)
        .map(|i| self_hosted(&format!("box-{i:02}"), "linux", "aarch64"))
        .collect();
    let tcs: String = ["tc-a", "tc-b", "tc-c", "tc-d", "tc-e"]
        .iter()
        .map(|n| apt_toolchain(n))
        .collect();
    let project = Project::of(&format!("{BASE}{cells}{tcs}"));
    let plan = project.plan();
    let layout = Layout::of(&plan).unwrap();
    assert_eq!(layout.total(), 300);
    assert_eq!(layout.jobs.len(), 6);
    let sel = layout.select(&plan, None, None).unwrap();
    assert!(sel.per_job.iter().all(|(_, e)| e.len() == 50));
    let text = cell_plan::render(&plan).unwrap();
    assert_rules(&text);
    assert_eq!(
        yaml(&text)["jobs"]["collect"]["needs"]
            .as_sequence()
            .unwrap()
            .len(),
        8,
        "plan, the host's build job and the six matrix jobs"
    );
    lint_text(&text);
}

/// Adding one toolchain to cell.toml changes only the lines of its own job, plus the lines
/// that name that job (the plan job's output, collect's needs): for each install method.
#[test]
fn adding_a_toolchain_changes_only_its_own_lines() {
    let cells = hosted(&["ubuntu-24.04", "ubuntu-24.04-arm"]);
    let base = format!("{BASE}{cells}{GCC}{RUST}{CS}");
    let before = render(&base);
    for (snippet, name) in [(GO, "go"), (ZIG, "zig"), (DOTNET, "dotnet")] {
        let after = render(&format!("{base}{snippet}"));
        let job = format!("run-{name}");
        let new_lines: Vec<&str> = after.lines().collect();
        let header = format!("  {job}:");
        let start = new_lines.iter().position(|l| *l == header).unwrap() - 1;
        let end = start
            + 2
            + new_lines[start + 2..]
                .iter()
                .position(|l| l.starts_with("  ") && !l.starts_with("   ") && l.ends_with(':'))
                .unwrap();
        let mut added = 0;
        for change in similar::TextDiff::from_lines(&before, &after).iter_all_changes() {
            match change.tag() {
                similar::ChangeTag::Equal => {}
                similar::ChangeTag::Delete => panic!("adding {name} removed a line: {change}"),
                similar::ChangeTag::Insert => {
                    added += 1;
                    let i = change.new_index().unwrap();
                    assert!(
                        (start..end).contains(&i) || new_lines[i].contains(&job),
                        "adding {name} changed line {} outside its job: {:?}",
                        i + 1,
                        new_lines[i]
                    );
                }
            }
        }
        assert!(
            added > 20,
            "the {name} job itself was added ({added} lines)"
        );
        lint_text(&after);
    }
}

#[test]
fn selection_names_unknown_cells_and_toolchains_with_the_known_ones() {
    let project = Project::of(&three_by_six());
    let plan = project.plan();
    let layout = Layout::of(&plan).unwrap();
    let e = layout
        .select(&plan, Some("ubuntu-24.04, macos-15"), None)
        .unwrap_err();
    assert!(matches!(e, PlanError::Unknown { .. }));
    assert_eq!(
        e.to_string(),
        "unknown cell `macos-15`: cell/cell.toml has ubuntu-22.04, ubuntu-24.04, ubuntu-24.04-arm"
    );
    let e = layout.select(&plan, None, Some("zig,swift")).unwrap_err();
    assert_eq!(
        e.to_string(),
        "unknown toolchain `swift`: cell/cell.toml has clang, cs, gcc, go, rust, zig"
    );
    let sel = layout
        .select(&plan, Some("ubuntu-24.04-arm"), Some(" go ,rust"))
        .unwrap();
    assert_eq!(sel.include.len(), 2);
    assert_eq!(
        sel.github_output(),
        "run-go={\"include\":[{\"cell\":\"ubuntu-24.04-arm\",\"cell-id\":\"linux-aarch64-ubuntu-24.04-arm\",\"os\":\"linux\",\"arch\":\"aarch64\",\"runs-on\":\"ubuntu-24.04-arm\",\"toolchain\":\"go\"}]}\n\
         run-rust={\"include\":[{\"cell\":\"ubuntu-24.04-arm\",\"cell-id\":\"linux-aarch64-ubuntu-24.04-arm\",\"os\":\"linux\",\"arch\":\"aarch64\",\"runs-on\":\"ubuntu-24.04-arm\",\"toolchain\":\"rust\"}]}\n"
    );
}

#[test]
fn subject_must_be_the_pinned_release() {
    let project = Project::of(&three_by_six());
    let plan = project.plan();
    let layout = Layout::of(&plan).unwrap();
    let all = layout.select(&plan, None, None).unwrap();
    cell_plan::check_subject(&plan, &all, "").unwrap();
    cell_plan::check_subject(&plan, &all, "0.16.0").unwrap();
    let e = cell_plan::check_subject(&plan, &all, "0.15.2").unwrap_err();
    assert!(
        e.to_string().starts_with(
            "--subject 0.15.2: toolchain `zig` is pinned to 0.16.0 in versions.env; to test 0.15.2, set ZIG_VERSION, ZIG_URL_*, ZIG_SHA256_* there"
        ),
        "{e}"
    );
    let go_only = layout.select(&plan, None, Some("go")).unwrap();
    assert!(cell_plan::check_subject(&plan, &go_only, "0.16.0").is_err());
}

#[test]
fn a_setup_action_without_a_pin_is_refused_with_what_to_do() {
    let toml = format!(
        "{BASE}{}\n[toolchains.node]\ninstall = {{ setup = {{ action = \"actions/setup-node\", input = \"node-version\", version = \"GO_VERSION\" }} }}\ntools.node = {{ version = [\"--version\"] }}\n\
         \n[rows.node]\ntoolchain = \"node\"\nlabel = \"node\"\nsource = \"node\"\nbuild = [\"{{tool:node}}\", \"{{src}}/build.js\", \"{{out}}\"]\nrun = [\"{{tool:node}}\", \"{{bin}}\", \"{{phase}}\"]\n",
        hosted(&["ubuntu-24.04"])
    );
    let e = cell_plan::render(&Project::of(&toml).plan()).unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.contains("cell/cell.toml: toolchains.node.install.setup.action: `actions/setup-node` has no verified commit in crates/cell-plan/src/pins.rs"),
        "{msg}"
    );
}

#[test]
fn a_plan_without_cells_or_without_the_rust_pin_says_what_to_add() {
    let e = cell_plan::render(&Project::of(&BASE).plan()).unwrap_err();
    assert!(
        e.to_string()
            .ends_with("cells: no cell to run on: add one, e.g. [cells.\"ubuntu-24.04\"]"),
        "{e}"
    );
    let toml = format!("{BASE}{}", hosted(&["ubuntu-24.04"]));
    let versions = versions_for(&toml).replace("RUST_VERSION=1.95.0\n", "");
    let e = cell_plan::render(&Project::new(&versions, &toml).plan()).unwrap_err();
    assert!(
        e.to_string().contains("versions.env: RUST_VERSION: the workflow builds cell with the Rust this key pins, and versions.env has no RUST_VERSION: add RUST_VERSION=<version>"),
        "{e}"
    );
}

#[test]
fn dotnet_and_the_setup_inputs_come_from_the_pin_table() {
    let toml = format!("{BASE}{}{DOTNET}{GO}", hosted(&["ubuntu-24.04"]));
    let text = render(&toml);
    assert!(text.contains("      with:\n        dotnet-version: 9.0.x\n"));
    // setup-go's cache stays off: it wants a go.sum and would carry state between runs.
    assert!(text.contains("      with:\n        go-version: 1.26.7\n        cache: false\n"));
    lint_text(&text);
}

#[test]
fn rust_toolchain_always_gets_its_toolchain_input() {
    let toml = format!(
        "{BASE}{}{}",
        hosted(&["ubuntu-24.04"]),
        RUST.replace("input = \"toolchain\"", "input = \"version\"")
    );
    let e = cell_plan::render(&Project::of(&toml).plan()).unwrap_err();
    assert!(
        e.to_string().ends_with("toolchains.rust.install.setup.input: `version`: dtolnay/rust-toolchain is pinned to a master commit, which installs only the toolchain passed as `toolchain`: write input = \"toolchain\""),
        "{e}"
    );
    // rustup is on every runner: the pinned action's one input becomes a rustup call
    // (zizmor's superfluous-actions), and Rust is installed once per job.
    let text = render(&format!("{BASE}{}{RUST}", hosted(&["ubuntu-24.04"])));
    assert!(text.contains("    - name: install rust 1.95.0 (rustup)\n      env:\n        RUST: 1.95.0\n      run: |\n        if ! rustup toolchain list | grep -q \"^$RUST-\"; then rustup toolchain install \"$RUST\" --profile minimal --no-self-update; fi\n"), "{text}");
    assert!(!text.contains("dtolnay/rust-toolchain@"));
    let rust_job = yaml(&text)["jobs"]["run-rust"]["steps"].clone();
    let installs = rust_job
        .as_sequence()
        .unwrap()
        .iter()
        .filter(|s| {
            s["run"]
                .as_str()
                .is_some_and(|r| r.contains("rustup toolchain install"))
        })
        .count();
    assert_eq!(installs, 1, "Rust installed more than once in the rust job");
}

// --- the http and soak suites ---

/// Job ids of a rendered workflow, in order.
fn job_ids(doc: &Value) -> Vec<String> {
    jobs(doc).keys().map(|k| key(k).to_owned()).collect()
}

/// The step of a job whose name starts with `prefix`.
fn step<'a>(job: &'a Value, prefix: &str) -> &'a Value {
    steps(job)
        .iter()
        .find(|s| s["name"].as_str().unwrap().starts_with(prefix))
        .unwrap_or_else(|| panic!("no step `{prefix}…` in {:?}", job["name"]))
}

fn is_suite_job(id: &str) -> bool {
    id.starts_with("http-") || id.starts_with("soak-")
}

#[test]
fn snapshot_http_and_soak_suites() {
    let text = render(&with_suites());
    assert_rules(&text);
    let doc = yaml(&text);
    // python has no rows: no workload job, but its servers get theirs.
    assert_eq!(
        job_ids(&doc),
        [
            "build-linux-x86_64",
            "build-linux-aarch64",
            "plan",
            "run-clang",
            "run-go",
            "run-zig",
            "http-c",
            "http-go",
            "http-python",
            "http-zig",
            "soak-c",
            "soak-python",
            "collect"
        ]
    );
    lint_text(&text);
    insta::assert_snapshot!("http_and_soak_suites", text);
}

/// A toolchain without rows (one that only runs a server) gets no workload job, and nothing
/// installs it unless a server needs it.
#[test]
fn a_toolchain_without_rows_gets_no_workload_job() {
    let text = render(&without_suites());
    let doc = yaml(&text);
    assert_eq!(run_jobs(&doc), ["run-clang", "run-go", "run-zig"]);
    assert!(!text.contains("python"), "python is installed somewhere");
    lint_text(&text);
}

/// Without `[http]` and `[soak]` nothing of the suites appears, and the workload part is the
/// bytes it was before suites existed: the snapshot of three cells by six toolchains, taken
/// before, is still what renders; adding the suites to a plan only adds their own jobs, their
/// `plan` outputs and `collect` needs, and the longer description of the `toolchains` input.
#[test]
fn a_plan_without_suites_has_no_suite_jobs_and_an_unchanged_workload_part() {
    let before = include_str!("snapshots/workflow__three_cells_by_six_toolchains.snap");
    let before = before.splitn(3, "---\n").nth(2).unwrap();
    let now = render(&three_by_six());
    assert_eq!(now.trim_end(), before.trim_end(), "the workload part moved");
    for toml in [three_by_six(), without_suites()] {
        let text = render(&toml);
        assert!(!job_ids(&yaml(&text)).iter().any(|id| is_suite_job(id)));
        for word in [
            "--suite", "--server", "oha", "wrk", "soak", "http-", "server",
        ] {
            assert!(!text.contains(word), "`{word}` in a plan without suites");
        }
    }

    let without = render(&without_suites());
    let with = render(&with_suites());
    let new_lines: Vec<&str> = with.lines().collect();
    // Line ranges of the suite jobs in `with`.
    let mut suite_ranges = Vec::new();
    let mut open: Option<usize> = None;
    for (i, line) in new_lines.iter().enumerate() {
        let is_job = line.starts_with("  ") && !line.starts_with("   ") && line.ends_with(':');
        if is_job {
            if let Some(start) = open.take() {
                suite_ranges.push(start..i);
            }
            if is_suite_job(line.trim().trim_end_matches(':')) {
                open = Some(i);
            }
        }
    }
    assert!(suite_ranges.len() == 6, "{suite_ranges:?}");
    let mut deleted = Vec::new();
    for change in similar::TextDiff::from_lines(&without, &with).iter_all_changes() {
        match change.tag() {
            similar::ChangeTag::Equal => {}
            similar::ChangeTag::Delete => deleted.push(change.to_string()),
            similar::ChangeTag::Insert => {
                let i = change.new_index().unwrap();
                let line = new_lines[i];
                let names_a_suite_job = ["http-", "soak-"].iter().any(|p| {
                    line.trim_start().starts_with(&format!("- {p}"))
                        || line.trim_start().starts_with(p)
                });
                assert!(
                    suite_ranges.iter().any(|r| r.contains(&i))
                        || names_a_suite_job
                        || line.contains("description: 'Jobs to run per cell"),
                    "the suites changed line {} outside their jobs: {line:?}",
                    i + 1
                );
            }
        }
    }
    assert_eq!(
        deleted,
        [
            "        description: 'Toolchains to run: names from cell/cell.toml, comma-separated (empty: all)'\n"
        ]
    );
    // Every workload job is the same value with and without the suites.
    let (a, b) = (yaml(&without), yaml(&with));
    for id in run_jobs(&a) {
        assert_eq!(a["jobs"][&id], b["jobs"][&id], "{id}");
    }
}

/// `cell collect` finds the jobs that left no result by the last word of `cell <cell-id>
/// <name>`, and reads the artifacts named like the workload's: both are fixed here, with the
/// command each job runs and the upload that runs even when the job failed.
#[test]
fn suite_jobs_are_named_for_the_collector_and_upload_like_workload_jobs() {
    let doc = yaml(&render(&with_suites()));
    let workload_upload = step(&doc["jobs"]["run-go"], "upload the job result").clone();
    let mut seen = 0;
    for (id, job) in jobs(&doc) {
        let id = key(id);
        let Some((suite, server)) = id.split_once('-').filter(|_| is_suite_job(id)) else {
            continue;
        };
        seen += 1;
        let name = format!("{suite}-{server}");
        assert_eq!(
            job["name"].as_str(),
            Some(format!("cell ${{{{ matrix.cell-id }}}} {name}").as_str()),
            "{id}"
        );
        let artifact =
            format!("cell-${{{{ matrix.cell-id }}}}-{name}-a${{{{ env.CELL_ATTEMPT }}}}");
        assert_eq!(
            job["env"]["CELL_ATTEMPT"].as_str(),
            Some("${{ github.run_attempt }}")
        );
        let run = steps(job)
            .iter()
            .find(|s| {
                s["run"]
                    .as_str()
                    .is_some_and(|r| r.starts_with("cell run "))
            })
            .unwrap();
        assert_eq!(
            run["run"].as_str(),
            Some(
                format!(
                    "cell run --suite {suite} --cell \"$CELL\" --server \"$SERVER\" --out \"job/$ARTIFACT\""
                )
                .as_str()
            ),
            "{id}"
        );
        assert_eq!(run["env"]["ARTIFACT"].as_str(), Some(artifact.as_str()));
        assert_eq!(run["env"]["SERVER"].as_str(), Some(server));
        assert_eq!(run["env"]["CELL"].as_str(), Some("${{ matrix.cell }}"));
        let upload = step(job, "upload the job result");
        assert_eq!(upload["if"].as_str(), Some("always()"), "{id}");
        assert_eq!(upload["with"]["name"].as_str(), Some(artifact.as_str()));
        assert_eq!(upload["with"]["path"], workload_upload["with"]["path"]);
        assert_eq!(upload["uses"], workload_upload["uses"]);
        assert_eq!(step(job, "add RESULTS.md")["if"].as_str(), Some("always()"));
        assert_eq!(
            job["strategy"]["matrix"].as_str(),
            Some(format!("${{{{ fromJSON(needs.plan.outputs.{id}) }}}}").as_str())
        );
        // Load generators: http drives wrk and oha, soak only oha; oha's version comes from
        // versions.env through env:, never an expression in run:.
        let names: Vec<&str> = steps(job)
            .iter()
            .map(|s| s["name"].as_str().unwrap())
            .collect();
        assert_eq!(
            names.contains(&"install the load generator wrk (apt)"),
            suite == "http",
            "{id}"
        );
        let oha = step(job, "install the load generator oha 1.16.0");
        assert_eq!(oha["env"]["OHA_VERSION"].as_str(), Some("1.16.0"));
        assert!(
            oha["run"]
                .as_str()
                .unwrap()
                .contains("cargo install oha --locked --version \"$OHA_VERSION\""),
            "{id}"
        );
        let cache = step(job, "restore oha 1.16.0 from the cache");
        assert_eq!(
            cache["with"]["key"].as_str(),
            Some("oha-1.16.0-${{ matrix.cell-id }}")
        );
    }
    assert_eq!(seen, 6);
}

/// A server's job installs its toolchain with exactly the steps of that toolchain's workload
/// job (apt, setup action, tarball per architecture), and not the reference compiler.
#[test]
fn a_suite_job_installs_its_servers_toolchain_as_the_workload_job_does() {
    let doc = yaml(&render(&with_suites()));
    let installs = |id: &str, tc: &str| -> Vec<Value> {
        steps(&doc["jobs"][id])
            .iter()
            .filter(|s| {
                s["name"]
                    .as_str()
                    .unwrap()
                    .starts_with(&format!("install {tc} "))
            })
            .cloned()
            .collect()
    };
    for (suite_job, run_job, tc, count) in [
        ("http-go", "run-go", "go", 1),
        ("http-zig", "run-zig", "zig", 2),
        ("http-c", "run-clang", "clang", 1),
        ("soak-c", "run-clang", "clang", 1),
    ] {
        let ours = installs(suite_job, tc);
        assert_eq!(ours.len(), count, "{suite_job}");
        assert_eq!(ours, installs(run_job, tc), "{suite_job}");
    }
    assert_eq!(installs("http-python", "python").len(), 1);
    assert!(installs("http-go", "the reference compiler").is_empty());
    assert!(installs("http-go", "clang").is_empty());
}

/// Soak jobs run for the soak plus an hour, and only on schedule and by hand: an hour per
/// server on every push costs too much. http jobs run on every trigger.
#[test]
fn soak_jobs_run_on_schedule_and_by_hand_for_the_soak_plus_an_hour() {
    let doc = yaml(&render(&with_suites()));
    for id in ["soak-c", "soak-python"] {
        let job = &doc["jobs"][id];
        assert_eq!(
            job["if"].as_str(),
            Some(
                format!("(github.event_name == 'schedule' || github.event_name == 'workflow_dispatch') && !cancelled() && needs.plan.result == 'success' && needs.plan.outputs.{id} != ''")
                    .as_str()
            )
        );
        // [soak] duration = 1800 s: 30 minutes + 60.
        assert_eq!(job["timeout-minutes"].as_u64(), Some(90), "{id}");
        assert_eq!(
            step(job, "soak server ")["name"].as_str(),
            Some(format!("soak server {} at 200 req/s for 30 min", &id[5..]).as_str())
        );
    }
    let http = &doc["jobs"]["http-c"];
    assert_eq!(
        http["if"].as_str(),
        Some("!cancelled() && needs.plan.result == 'success' && needs.plan.outputs.http-c != ''")
    );
    // 45 minutes of installing and building, plus 2 tools × 5 runs × (10 s start + 2 s warm-up
    // + 10 s load + 5 s stop + 10 s drain) = 370 s, rounded up to 7 minutes.
    assert_eq!(http["timeout-minutes"].as_u64(), Some(52));
    // The default soak is an hour: two hours in all.
    let default_soak = render(&with_suites().replace("duration = 1800\n", ""));
    assert_eq!(
        yaml(&default_soak)["jobs"]["soak-c"]["timeout-minutes"].as_u64(),
        Some(120)
    );
}

#[test]
fn collect_and_the_plan_outputs_cover_every_job() {
    let doc = yaml(&render(&with_suites()));
    let ids = job_ids(&doc);
    let first = ids.iter().position(|id| id == "plan").unwrap() + 1;
    let matrix_jobs = &ids[first..ids.len() - 1];
    let needs: Vec<&str> = doc["jobs"]["collect"]["needs"]
        .as_sequence()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(needs[..2], ["plan", "build-linux-x86_64"]);
    assert_eq!(needs[2..], *matrix_jobs);
    let outputs: Vec<&str> = doc["jobs"]["plan"]["outputs"]
        .as_mapping()
        .unwrap()
        .keys()
        .map(key)
        .collect();
    assert_eq!(outputs, *matrix_jobs);
    for id in matrix_jobs {
        assert_eq!(
            doc["jobs"]["plan"]["outputs"][id.as_str()].as_str(),
            Some(format!("${{{{ steps.matrix.outputs.{id} }}}}").as_str())
        );
    }
}

/// A run's cells select the suite jobs' cells too; the `toolchains` input names workload
/// toolchains and suite jobs (`http-<server>`, `soak-<server>`), blank selecting all.
#[test]
fn suite_jobs_follow_the_cell_selection_and_are_named_in_the_toolchains_input() {
    let project = Project::of(&with_suites());
    let plan = project.plan();
    let layout = Layout::of(&plan).unwrap();
    let lines = |sel: &cell_plan::Selection| -> Vec<String> {
        sel.github_output()
            .lines()
            .map(|l| l.split_once('=').unwrap().0.to_owned())
            .collect()
    };
    // Everything, on one cell: every job, with only that cell.
    let arm = layout
        .select(&plan, Some("ubuntu-24.04-arm"), Some(""))
        .unwrap();
    assert_eq!(
        lines(&arm),
        [
            "run-clang",
            "run-go",
            "run-zig",
            "http-c",
            "http-go",
            "http-python",
            "http-zig",
            "soak-c",
            "soak-python"
        ]
    );
    for (job, entries) in &arm.per_job {
        assert_eq!(entries.len(), 1, "{job}");
        assert_eq!(entries[0].cell, "ubuntu-24.04-arm");
    }
    // The printed matrix holds the workload entries only.
    assert_eq!(arm.include.len(), 3);
    let http_go = &arm.per_job.iter().find(|(j, _)| j == "http-go").unwrap().1[0];
    assert_eq!(http_go.toolchain, "go");
    assert_eq!(http_go.cell_id, "linux-aarch64-ubuntu-24.04-arm");
    // Toolchains alone: their workload jobs, no suite job.
    let go = layout.select(&plan, None, Some("go")).unwrap();
    assert_eq!(lines(&go), ["run-go"]);
    // Suite jobs by name, mixed with a toolchain.
    let some = layout
        .select(
            &plan,
            Some("ubuntu-24.04"),
            Some("http-go, soak-python,zig"),
        )
        .unwrap();
    assert_eq!(lines(&some), ["run-zig", "http-go", "soak-python"]);
    assert_eq!(
        some.github_output().lines().nth(1).unwrap(),
        r#"http-go={"include":[{"cell":"ubuntu-24.04","cell-id":"linux-x86_64-ubuntu-24.04","os":"linux","arch":"x86_64","runs-on":"ubuntu-24.04","toolchain":"go"}]}"#
    );
    // Unknown names list what there is; a toolchain without rows says where its servers run.
    let e = layout
        .select(&plan, None, Some("http-rust,soak-go"))
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "unknown suite job `http-rust`, `soak-go`: cell/cell.toml has http-c, http-go, http-python, http-zig, soak-c, soak-python"
    );
    let e = layout.select(&plan, None, Some("rust")).unwrap_err();
    assert_eq!(
        e.to_string(),
        "unknown toolchain `rust`: cell/cell.toml has clang, go, python, zig"
    );
    let e = layout.select(&plan, None, Some("python")).unwrap_err();
    assert_eq!(
        e.to_string(),
        "toolchain `python` has no rows, so no workload job: its servers run in http-python, soak-python"
    );
    // --subject covers the toolchains the selected suite jobs install.
    let zig = layout.select(&plan, None, Some("http-zig")).unwrap();
    cell_plan::check_subject(&plan, &zig, "0.16.0").unwrap();
    assert!(cell_plan::check_subject(&plan, &zig, "0.15.2").is_err());
    let c = layout.select(&plan, None, Some("http-c")).unwrap();
    assert!(cell_plan::check_subject(&plan, &c, "0.16.0").is_err());
}

#[test]
fn a_toolchain_named_like_a_suite_job_is_refused() {
    let toml = format!("{BASE}{}{PYTHON}{HTTP}", hosted(&["ubuntu-24.04"]))
        .replace("[http.servers.go]", "[http.servers.c-go]")
        .replace(
            "[http.servers.zig]\ntoolchain = \"zig\"",
            "[http.servers.zig]\ntoolchain = \"clang\"",
        )
        .replace(
            "[http.servers.c-go]\ntoolchain = \"go\"",
            "[http.servers.c-go]\ntoolchain = \"clang\"",
        )
        .replace("{tool:go}", "{tool:clang}")
        .replace("{tool:zig}", "{tool:clang}")
        + &apt_toolchain("http-c");
    let e = cell_plan::render(&Project::of(&toml).plan()).unwrap_err();
    assert!(
        e.to_string().ends_with(
            "http.servers.c: its job name `cell <cell-id> http-c` is also toolchain `http-c`'s: rename one of them"
        ),
        "{e}"
    );
}

#[test]
fn a_missing_oha_pin_says_what_to_add() {
    let toml = with_suites();
    let versions = versions_for(&toml).replace("OHA_VERSION=1.16.0\n", "");
    let toml = toml.replace("oha = \"OHA_VERSION\"\n", "");
    let e = cell_plan::render(&Project::new(&versions, &toml).plan()).unwrap_err();
    assert!(
        e.to_string().ends_with(
            "versions.env: OHA_VERSION: the http and soak jobs install oha at the version this key pins, and versions.env has no OHA_VERSION: add OHA_VERSION=<version> (or name another key in [http] oha of cell/cell.toml)"
        ),
        "{e}"
    );
    // An http suite of wrk alone and no soak needs no oha.
    let wrk_only = toml.replace("tools = [\"wrk\", \"oha\"]", "tools = [\"wrk\"]");
    let wrk_only = &wrk_only[..wrk_only.find("\n[soak]").unwrap()];
    let text = cell_plan::render(&Project::new(&versions, wrk_only).plan()).unwrap();
    assert!(!text.contains("oha"));
    assert!(text.contains("install the load generator wrk (apt)"));
}

/// Past 256 cells the suite jobs split like the workload's.
#[test]
fn suite_jobs_split_past_256_cells() {
    let cells: String = (0..300)
        .map(|i| self_hosted(&format!("bench-{i:03}"), "linux", "x86_64"))
        .collect();
    let project = Project::of(&format!("{BASE}{cells}{GO}{ZIG}{PYTHON}{HTTP}{SOAK}"));
    let plan = project.plan();
    let layout = Layout::of(&plan).unwrap();
    let ids: Vec<&str> = layout.jobs.iter().map(|j| j.id.as_str()).collect();
    assert!(ids.contains(&"http-c-part1") && ids.contains(&"soak-python-part2"));
    assert_eq!(layout.jobs.len(), 9 * 2);
    let sel = layout.select(&plan, None, None).unwrap();
    assert!(sel.per_job.iter().all(|(_, e)| e.len() <= MAX_MATRIX));
    let text = cell_plan::render(&plan).unwrap();
    assert!(
        text.contains(
            "# 2700 jobs: each toolchain's and server's cells are split into 2 matrix jobs"
        )
    );
    let doc = yaml(&text);
    assert_eq!(
        doc["jobs"]["http-c-part2"]["name"].as_str(),
        Some("cell ${{ matrix.cell-id }} http-c")
    );
}

/// ab was installed by a step of its own written apart from the load tool table: a suite job
/// of every load generator installs each the way the table says, apt ones before builds.
#[test]
fn a_suite_job_installs_every_load_generator_as_the_table_says() {
    let toml = with_suites();
    let all: Vec<String> = cell_model::LOAD_TOOLS
        .iter()
        .map(|t| format!("\"{}\"", t.name))
        .collect();
    let toml = toml.replace(
        "tools = [\"wrk\", \"oha\"]",
        &format!("tools = [{}]", all.join(", ")),
    );
    let text = cell_plan::render(&Project::new(&versions_for(&toml), &toml).plan()).unwrap();
    let doc = yaml(&text);
    let job = &jobs(&doc)["http-c"];
    let names: Vec<&str> = steps(job)
        .iter()
        .filter_map(|s| s["name"].as_str())
        .filter(|n| n.starts_with("install the load generator"))
        .collect();
    let mut apt = Vec::new();
    let mut built = Vec::new();
    let mut fetched = Vec::new();
    for t in cell_model::LOAD_TOOLS {
        match t.install {
            cell_model::LoadInstall::Apt { package } => {
                let run = step(job, &format!("install the load generator {} (apt", t.name))["run"]
                    .as_str()
                    .unwrap();
                assert!(
                    run.contains(&format!("--no-install-recommends {package}\n")),
                    "{run}"
                );
                apt.push(t.name);
            }
            cell_model::LoadInstall::Crate { krate, .. } => {
                let run = step(
                    job,
                    &format!("install the load generator {} 1.16.0", t.name),
                )["run"]
                    .as_str()
                    .unwrap();
                assert!(
                    run.contains(&format!("cargo install {krate} --locked")),
                    "{run}"
                );
                built.push(t.name);
            }
            cell_model::LoadInstall::Tarball { .. } => {
                let run = step(
                    job,
                    &format!("install the load generator {} (tarball", t.name),
                )["run"]
                    .as_str()
                    .unwrap();
                assert!(
                    run.contains("cell fetch --url \"$URL\" --sha256 \"$SHA256\""),
                    "{run}"
                );
                fetched.push(t.name);
            }
        }
    }
    let order: Vec<&str> = names
        .iter()
        .map(|n| {
            n["install the load generator ".len()..]
                .split(' ')
                .next()
                .unwrap()
        })
        .collect();
    assert_eq!(order, [apt, built, fetched].concat(), "{names:?}");
    lint_text(&text);
}

/// The release under test's job checks out the whole history: it reads the baseline commit's
/// pins (`git archive <commit>`) to time the previous release beside the new one, which a
/// shallow checkout does not hold. Every other job keeps the shallow checkout.
#[test]
fn the_subjects_job_checks_out_the_history_to_find_the_previous_release() {
    let toml = self_hosted_subject().replacen(
        "[toolchains.zig]\n",
        "[toolchains.zig]\nsubject = true\n",
        1,
    );
    assert!(toml.contains("subject = true"), "{toml}");
    let text = render(&toml);
    let doc = yaml(&text);
    for id in run_jobs(&doc) {
        let checkout = &steps(&jobs(&doc)[id.as_str()])[0];
        assert_eq!(checkout["name"].as_str(), Some("check out the repository"));
        let depth = checkout["with"]["fetch-depth"].as_str();
        assert_eq!(depth, (id == "run-zig").then_some("0"), "{id}");
    }
    lint_text(&text);
    // A server's job never times a previous release: its checkout stays shallow.
    let suites = with_suites().replacen(
        "[toolchains.zig]\n",
        "[toolchains.zig]\nsubject = true\n",
        1,
    );
    let doc = yaml(&render(&suites));
    let first = |id: &str| steps(&jobs(&doc)[id])[0]["with"]["fetch-depth"].clone();
    assert_eq!(first("run-zig").as_str(), Some("0"));
    assert!(first("http-zig").is_null(), "http-zig");
}
