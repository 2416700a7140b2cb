//! `cell plan` through the binary: write, `--check` (exit 1 with a diff and the fixing
//! command), restore byte for byte, `allow_dirty`, and `--matrix` with its exit-2 refusals.

mod common;

use std::path::{Path, PathBuf};

use common::{cell, repo_root};
use predicates::prelude::*;

const WORKFLOW: &str = ".github/workflows/cell.yml";

/// A copy of this repository's versions.env and cell/cell.toml (with `extra` appended) and the
/// row source directories they name.
fn copy_of_repo(dir: &Path, extra: &str) -> PathBuf {
    let root = dir.join("proj");
    std::fs::create_dir_all(root.join("cell")).unwrap();
    let repo = repo_root();
    std::fs::copy(repo.join("versions.env"), root.join("versions.env")).unwrap();
    let toml = std::fs::read_to_string(repo.join("cell/cell.toml")).unwrap();
    // Source directories must exist: the workload's rows and the http servers alike.
    for line in toml.lines() {
        if let Some(src) = line
            .strip_prefix("source = \"")
            .and_then(|s| s.strip_suffix('"'))
        {
            std::fs::create_dir_all(root.join("bench/workload").join(src)).unwrap();
            std::fs::create_dir_all(root.join("bench/http").join(src)).unwrap();
        }
    }
    std::fs::write(root.join("cell/cell.toml"), format!("{extra}{toml}")).unwrap();
    root
}

#[test]
fn one_edited_byte_fails_check_with_a_diff_and_cell_plan_restores_it() {
    let tmp = tempfile::tempdir().unwrap();
    let root = copy_of_repo(tmp.path(), "");
    cell()
        .arg("plan")
        .current_dir(&root)
        .assert()
        .success()
        .stderr(predicate::str::contains(
            ".github/workflows/cell.yml written: ",
        ));
    let path = root.join(WORKFLOW);
    let original = std::fs::read(&path).unwrap();
    // What `cell plan` writes for the repository's config is the committed file.
    assert_eq!(original, std::fs::read(repo_root().join(WORKFLOW)).unwrap());
    cell()
        .args(["plan", "--check"])
        .current_dir(&root)
        .assert()
        .code(0)
        .stdout("");

    let mut edited = original.clone();
    let at = edited
        .windows(12)
        .position(|w| w == b"timeout-minu")
        .unwrap();
    edited[at] = b'T';
    std::fs::write(&path, &edited).unwrap();
    cell()
        .args(["plan", "--check"])
        .current_dir(&root)
        .assert()
        .code(1)
        .stdout(
            predicate::str::contains("--- a/.github/workflows/cell.yml")
                .and(predicate::str::contains("+++ b/.github/workflows/cell.yml"))
                .and(predicate::str::contains("\n-    Timeout-minutes: 30\n"))
                .and(predicate::str::contains("\n+    timeout-minutes: 30\n")),
        )
        .stderr(predicate::str::contains(
            "is not what `cell plan` writes from versions.env and cell/cell.toml (diff above).\nfix: cell plan\n",
        ));

    cell().arg("plan").current_dir(&root).assert().success();
    assert_eq!(
        std::fs::read(&path).unwrap(),
        original,
        "restored byte for byte"
    );

    // With --root from elsewhere, the fixing command says where.
    std::fs::write(&path, &edited).unwrap();
    cell()
        .args(["plan", "--check", "--root"])
        .arg(&root)
        .assert()
        .code(1)
        .stderr(predicate::str::contains(format!(
            "fix: cell plan --root {}",
            root.display()
        )));
}

#[test]
fn a_missing_workflow_fails_check() {
    let tmp = tempfile::tempdir().unwrap();
    let root = copy_of_repo(tmp.path(), "");
    cell()
        .args(["plan", "--check"])
        .current_dir(&root)
        .assert()
        .code(1)
        .stdout(predicate::str::starts_with("--- /dev/null\n"));
}

#[test]
fn allow_dirty_workflow_lets_an_edited_file_pass_with_a_note() {
    let tmp = tempfile::tempdir().unwrap();
    let root = copy_of_repo(tmp.path(), "allow_dirty = [\"workflow\"]\n");
    cell().arg("plan").current_dir(&root).assert().success();
    let path = root.join(WORKFLOW);
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(
        &path,
        text.replace("timeout-minutes: 30", "timeout-minutes: 45"),
    )
    .unwrap();
    cell()
        .args(["plan", "--check"])
        .current_dir(&root)
        .assert()
        .code(0)
        .stderr(predicate::str::contains(
            "allowed by allow_dirty = [\"workflow\"] in cell/cell.toml",
        ));
}

#[test]
fn allow_dirty_names_only_files_cell_generates() {
    let tmp = tempfile::tempdir().unwrap();
    let root = copy_of_repo(tmp.path(), "allow_dirty = [\"workflows\"]\n");
    cell()
        .args(["plan", "--check"])
        .current_dir(&root)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "cell/cell.toml: allow_dirty[0]: `workflows` is not a generated file: write \"workflow\"",
        ));
}

#[test]
fn the_repository_workflow_is_current() {
    cell()
        .args(["plan", "--check"])
        .current_dir(repo_root())
        .assert()
        .code(0);
}

#[test]
fn matrix_prints_the_selected_entries() {
    let root = repo_root();
    let out = cell()
        .args([
            "plan",
            "--matrix",
            "--cells",
            "ubuntu-24.04-arm",
            "--toolchains",
            "zig",
        ])
        .current_dir(&root)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    assert_eq!(
        String::from_utf8(out).unwrap(),
        "{\"include\":[{\"cell\":\"ubuntu-24.04-arm\",\"cell-id\":\"linux-aarch64-ubuntu-24.04-arm\",\"os\":\"linux\",\"arch\":\"aarch64\",\"runs-on\":\"ubuntu-24.04-arm\",\"toolchain\":\"zig\"}]}\n"
    );
    // Blank lists (what schedule and push runs pass) mean everything.
    let out = cell()
        .args(["plan", "--matrix", "--cells", "", "--toolchains", ""])
        .current_dir(&root)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let plan = cell_model::Plan::load(&root).unwrap();
    // Toolchains with no row (a server's) have no workload job.
    let with_rows = plan
        .toolchains
        .values()
        .filter(|t| !t.rows.is_empty())
        .count();
    assert_eq!(
        v["include"].as_array().unwrap().len(),
        plan.cells.len() * with_rows
    );
    for e in v["include"].as_array().unwrap() {
        let keys: Vec<&str> = e.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            ["cell", "cell-id", "os", "arch", "runs-on", "toolchain"]
        );
    }
}

#[test]
fn matrix_outputs_one_line_per_selected_job() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("github_output");
    std::fs::write(&file, "earlier=1\n").unwrap();
    cell()
        .args(["plan", "--matrix", "--toolchains", "go,rust", "--outputs"])
        .arg(&file)
        .current_dir(repo_root())
        .assert()
        .success();
    let text = std::fs::read_to_string(&file).unwrap();
    let keys: Vec<&str> = text.lines().map(|l| l.split_once('=').unwrap().0).collect();
    assert_eq!(keys, ["earlier", "run-go", "run-rust"]);
}

#[test]
fn matrix_refuses_unknown_names_listing_the_known_ones() {
    let plan = cell_model::Plan::load(&repo_root()).unwrap();
    let list = |names: Vec<String>| names.join(", ");
    let cells = list(plan.cells.keys().map(ToString::to_string).collect());
    let toolchains = list(plan.toolchains.keys().map(ToString::to_string).collect());
    cell()
        .args(["plan", "--matrix", "--cells", "ubuntu-24.04,no-such-runner"])
        .current_dir(repo_root())
        .assert()
        .code(2)
        .stdout("")
        .stderr(predicate::str::contains(format!(
            "Error: unknown cell `no-such-runner`: cell/cell.toml has {cells}\n"
        )));
    cell()
        .args(["plan", "--matrix", "--toolchains", "swift,zig,kotlin"])
        .current_dir(repo_root())
        .assert()
        .code(2)
        .stderr(predicate::str::contains(format!(
            "Error: unknown toolchain `swift`, `kotlin`: cell/cell.toml has {toolchains}\n"
        )));
}

#[test]
fn matrix_refuses_a_subject_other_than_the_pinned_release() {
    let root = repo_root();
    let plan = cell_model::Plan::load(&root).unwrap();
    let pinned = plan.env.get("ZIG_VERSION").unwrap().to_owned();
    cell()
        .args(["plan", "--matrix", "--subject", &pinned])
        .current_dir(&root)
        .assert()
        .success();
    cell()
        .args(["plan", "--matrix", "--subject", "0.0.1"])
        .current_dir(&root)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(format!(
            "Error: --subject 0.0.1: toolchain `zig` is pinned to {pinned} in versions.env"
        )));
}

#[test]
fn matrix_flags_need_matrix() {
    cell()
        .args(["plan", "--cells", "ubuntu-24.04"])
        .current_dir(repo_root())
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--matrix"));
}

#[test]
fn workflow_table_errors_name_the_field_and_what_to_write() {
    let tmp = tempfile::tempdir().unwrap();
    let root = copy_of_repo(tmp.path(), "");
    let toml_path = root.join("cell/cell.toml");
    let toml = std::fs::read_to_string(&toml_path).unwrap();
    std::fs::write(
        &toml_path,
        toml.replace("schedule = [\"17 4 * * 1\"]", "schedule = [\"17 4 * *\"]"),
    )
    .unwrap();
    cell()
        .arg("plan")
        .current_dir(&root)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "cell/cell.toml: workflow.schedule[0]: `17 4 * *` has 4 fields: write five",
        ));
    std::fs::write(
        &toml_path,
        toml.replace("[workflow]\n", "[workflow]\npull_request = true\n"),
    )
    .unwrap();
    cell()
        .arg("plan")
        .current_dir(&root)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("unknown field `pull_request`"));
    assert!(!root.join(WORKFLOW).exists(), "a bad config writes nothing");
}

/// The `reps` input is checked where `cells` and `toolchains` are: in the plan job, before
/// any runner is taken; blank means the adaptive budget.
#[test]
fn matrix_refuses_reps_that_cell_run_would_not_take() {
    for ok in ["", "3", "100000"] {
        cell()
            .args(["plan", "--matrix", "--reps", ok])
            .current_dir(repo_root())
            .assert()
            .success();
    }
    for bad in [
        "0",
        "-1",
        "three",
        "3.5",
        " 3",
        "   ",
        "+3",
        "100001",
        "99999999999",
        "3; rm -rf /",
    ] {
        cell()
            .args(["plan", "--matrix", "--reps", bad])
            .current_dir(repo_root())
            .assert()
            .code(2)
            .stdout("")
            .stderr(predicate::str::contains("input reps"))
            .stderr(predicate::str::contains("whole number of measured rounds"));
    }
}

/// `[workflow] results_branch` adds a step that checks the branch out and collects there;
/// a name git or a shell would read otherwise is refused, naming the field.
#[test]
fn results_branch_moves_collect_to_its_own_branch_and_bad_names_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let root = copy_of_repo(tmp.path(), "");
    let toml_path = root.join("cell/cell.toml");
    let toml = std::fs::read_to_string(&toml_path).unwrap();
    for bad in ["-x", "a..b", "a b", "x.lock", "$(id)", "/abs"] {
        std::fs::write(
            &toml_path,
            toml.replace(
                "[workflow]\n",
                &format!("[workflow]\nresults_branch = \"{bad}\"\n"),
            ),
        )
        .unwrap();
        cell()
            .arg("plan")
            .current_dir(&root)
            .assert()
            .code(2)
            .stderr(predicate::str::contains("workflow.results_branch"));
    }
    std::fs::write(
        &toml_path,
        toml.replace(
            "[workflow]\n",
            "[workflow]\nresults_branch = \"cell-results\"\n",
        ),
    )
    .unwrap();
    cell().arg("plan").current_dir(&root).assert().success();
    let text = std::fs::read_to_string(root.join(WORKFLOW)).unwrap();
    assert!(text.contains("cell results-branch \"$BRANCH\" --into \"$RESULTS_CHECKOUT\""));
    assert!(text.contains("BRANCH: cell-results"));
    assert!(text.contains("--results \"$RESULTS_CHECKOUT/results\""));
    cell_testkit::lint::lint(&root.join(WORKFLOW));
}

/// A workflow pinned to another release than the `cell` rendering it: written, with a warning
/// naming both versions and what to install.
#[test]
fn a_pin_of_another_release_than_this_binary_is_warned_about() {
    let tmp = tempfile::tempdir().unwrap();
    let root = copy_of_repo(tmp.path(), "");
    let toml_path = root.join("cell/cell.toml");
    let toml = std::fs::read_to_string(&toml_path).unwrap();
    let toml = toml.replacen("cell = \"source\"", "cell = { version = \"9.9.9\" }", 1);
    let toml = toml.replace("release = true\n", "");
    std::fs::write(&toml_path, toml).unwrap();
    let mut env = std::fs::read_to_string(root.join("versions.env")).unwrap();
    let digest = "ab".repeat(32);
    for key in ["LINUX_X86_64", "LINUX_AARCH64", "MACOS_AARCH64"] {
        env.extend(["CELL_SHA256_", key, "=", &digest, "\n"]);
    }
    std::fs::write(root.join("versions.env"), env).unwrap();
    cell()
        .arg("plan")
        .current_dir(&root)
        .assert()
        .success()
        .stderr(predicate::str::contains(format!(
            "warning: [workflow] cell pins cell 9.9.9, and this is cell {}",
            env!("CARGO_PKG_VERSION")
        )))
        .stderr(predicate::str::contains("install cell 9.9.9"));
}
