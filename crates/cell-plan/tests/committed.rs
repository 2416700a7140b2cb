//! The workflows committed in this repository: cell.yml, release.yml and the pull request
//! pair are exactly what
//! `cell plan` writes, ci.yml keeps the same rules by hand, and all of them lint clean.

use cell_testkit::lint::lint;
use cell_testkit::repo_root;

/// A file of the repository by its relative path.
fn read(rel: &str) -> String {
    cell_testkit::read(&repo_root().join(rel))
}

#[test]
fn committed_generated_workflows_are_what_cell_plan_writes() {
    let plan = cell_model::Plan::load(&repo_root()).unwrap();
    let files = cell_plan::render_all(&plan).unwrap();
    let paths: Vec<&str> = files.iter().map(|(p, _)| *p).collect();
    assert_eq!(
        paths,
        [
            cell_plan::WORKFLOW_PATH,
            cell_plan::RELEASE_PATH,
            cell_plan::PR_PATH,
            cell_plan::REPORT_PATH
        ]
    );
    for (rel, want) in files {
        let have = read(rel);
        assert!(
            have == want,
            "{rel} is stale: run `cargo run --bin cell -- plan` and commit it\n{}",
            cell_plan::unified_diff(&have, &want, "committed", "rendered")
        );
    }
}

/// The release's package step copies these from the root; a missing one fails the tag's build.
#[test]
fn every_file_the_release_packages_is_in_the_repository() {
    for f in cell_plan::RELEASE_PACKAGED {
        assert!(
            repo_root().join(f).is_file(),
            "{f} is packaged by release.yml and missing"
        );
    }
}

#[test]
fn committed_workflows_lint_clean() {
    for rel in [
        cell_plan::WORKFLOW_PATH,
        cell_plan::RELEASE_PATH,
        cell_plan::PR_PATH,
        cell_plan::REPORT_PATH,
        ".github/workflows/ci.yml",
    ] {
        lint(&repo_root().join(rel));
    }
}

/// ci.yml is written by hand: it must still pin every action to a commit of the table with
/// its tag, read only contents, keep expressions out of `run:` and not persist credentials.
#[test]
fn ci_yml_follows_the_generated_workflow_rules() {
    let text = read(".github/workflows/ci.yml");
    let mut uses = 0;
    for line in text.lines().filter(|l| l.trim_start().starts_with("uses:")) {
        uses += 1;
        let value = line.split_once("uses: ").unwrap().1;
        let (action, rest) = value.split_once('@').unwrap();
        let (sha, tag) = rest
            .split_once(" # ")
            .unwrap_or_else(|| panic!("no tag: {line}"));
        let pin = cell_plan::pins::pin(action).unwrap_or_else(|| panic!("not in pins.rs: {line}"));
        assert_eq!((pin.sha, pin.tag), (sha, tag), "{line}");
    }
    assert!(uses > 0);
    let doc: serde_norway::Value = serde_norway::from_str(&text).unwrap();
    assert_eq!(
        serde_norway::to_string(&doc["permissions"]).unwrap(),
        "contents: read\n"
    );
    for (id, job) in doc["jobs"].as_mapping().unwrap() {
        assert!(
            job.get("permissions").is_none(),
            "{id:?} widens permissions"
        );
        for step in job["steps"].as_sequence().unwrap() {
            if let Some(run) = step.get("run").and_then(serde_norway::Value::as_str) {
                assert!(!run.contains("${{"), "expression in run: {run}");
            }
            if step
                .get("uses")
                .and_then(serde_norway::Value::as_str)
                .is_some_and(|u| u.starts_with("actions/checkout@"))
            {
                assert_eq!(step["with"]["persist-credentials"].as_bool(), Some(false));
            }
        }
    }
}
