//! The generated workflow: snapshots, the rules of DESIGN §7 checked on the text, the 256-job
//! split, diff locality, determinism, and the real linters on every render.

mod support;

use cell_plan::{Layout, MAX_MATRIX, PlanError};
use serde_norway::Value;
use support::{
    BASE, CS, DOTNET, GCC, GO, Project, RUST, ZIG, apt_toolchain, hosted, lint_text, self_hosted,
    self_hosted_subject, three_by_six,
};

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

/// The rules every generated workflow keeps (DESIGN §7), checked on the text a user commits.
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
                let persist = step["with"]["persist-credentials"].as_bool();
                assert_eq!(persist, Some(id == "collect"), "{id}: persist-credentials");
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
    let plan = cell_model::Plan::load(&support::repo_root()).unwrap();
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
    // Both architectures get their own verified tarball; the subject input exists.
    assert!(text.contains("zig-x86_64-linux-0.16.0.tar.xz"));
    assert!(text.contains("70e49664a74374b48b51e6f3fdfbf437f6395d42509050588bd49abe52ba3d00"));
    assert!(text.contains("zig-aarch64-linux-0.16.0.tar.xz"));
    assert!(text.contains("--strip-components 1"));
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

#[test]
fn apt_installs_are_linux_only_when_a_cell_is_not_linux() {
    let toml = format!("{BASE}{}{GCC}", hosted(&["ubuntu-24.04", "macos-15"]));
    let text = render(&toml);
    assert!(text.contains("    - name: install gcc (apt gcc)\n      if: matrix.os == 'linux'\n"));
    lint_text(&text);
    let linux_only = render(&format!("{BASE}{}{GCC}", hosted(&["ubuntu-24.04"])));
    assert!(!linux_only.contains("matrix.os"));
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
    assert_eq!(needs, ["plan", "run-clang-part1", "run-clang-part2"]);
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
        7
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
            "--subject 0.15.2: toolchain `zig` is pinned to 0.16.0 in versions.env; to test 0.15.2, set its version, ZIG_URL_* and ZIG_SHA256_* there"
        ),
        "{e}"
    );
    let go_only = layout.select(&plan, None, Some("go")).unwrap();
    assert!(cell_plan::check_subject(&plan, &go_only, "0.16.0").is_err());
}

#[test]
fn a_setup_action_without_a_pin_is_refused_with_what_to_do() {
    let toml = format!(
        "{BASE}{}\n[toolchains.node]\ninstall = {{ setup = {{ action = \"actions/setup-node\", input = \"node-version\", version = \"GO_VERSION\" }} }}\ntools.node = {{ version = [\"--version\"] }}\n",
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
    let e = cell_plan::render(&Project::of(BASE).plan()).unwrap_err();
    assert!(
        e.to_string()
            .ends_with("cells: no cell to run on: add one, e.g. [cells.\"ubuntu-24.04\"]"),
        "{e}"
    );
    let toml = format!("{BASE}{}", hosted(&["ubuntu-24.04"]));
    let versions = support::versions_for(&toml).replace("RUST_VERSION=1.95.0\n", "");
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
    let text = render(&format!("{BASE}{}{RUST}", hosted(&["ubuntu-24.04"])));
    assert!(text.contains("    - name: install rust 1.95.0\n      uses: dtolnay/rust-toolchain@3c5f7ea28cd621ae0bf5283f0e981fb97b8a7af9 # master\n      with:\n        toolchain: 1.95.0\n"));
}
