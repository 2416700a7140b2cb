//! The release workflow's Linux build job, walked as a runner would on a `v<version>` tag: it
//! checks the tag against the version the built cell prints, packages
//! `cell-<version>-linux-x86_64.tar.gz` with a `.sha256` that matches it, and that archive is
//! what a repository of `cell init` installs (its digest pinned from the `.sha256`). The
//! aarch64 and macOS jobs are the same steps on other runners: this machine cannot run them,
//! so only the rendering and the linters see those.

mod common;

use std::path::{Path, PathBuf};

use cell_testkit::git;
use cell_testkit::walk::{Conclusion, Config, Options, Walk};
use common::{cell, repo_root};

const VERSION: &str = env!("CARGO_PKG_VERSION");

/// release.yml with the Linux x86-64 build job alone.
fn linux_job_only() -> String {
    let text = std::fs::read_to_string(repo_root().join(cell_plan::RELEASE_PATH)).unwrap();
    let mut doc: serde_norway::Value = serde_norway::from_str(&text).unwrap();
    let jobs = doc["jobs"].as_mapping_mut().unwrap();
    jobs.retain(|k, _| k.as_str() == Some("build-linux-x86_64"));
    assert_eq!(jobs.len(), 1);
    serde_norway::to_string(&doc).unwrap()
}

/// A bare origin holding the files the package step copies (the README, the licence texts)
/// and the tag.
fn origin(dir: &Path, tag: &str) -> (PathBuf, String) {
    let work = dir.join("src");
    std::fs::create_dir_all(&work).unwrap();
    for f in cell_plan::RELEASE_PACKAGED {
        std::fs::write(work.join(f), format!("{f} of cell\n")).unwrap();
    }
    git(&work, &["init", "-q", "-b", "main"]);
    let sha = cell_testkit::commit_all(&work, "a release");
    git(&work, &["tag", tag]);
    let bare = dir.join("origin.git");
    cell_testkit::bare_clone(&work, &bare);
    (bare, sha)
}

fn walk_tag(dir: &Path, tag: &str) -> (Walk, cell_testkit::walk::Attempt) {
    let (bare, sha) = origin(dir, tag);
    let options = Options {
        event_name: "push".into(),
        verbose: std::env::var_os("WALK_VERBOSE").is_some(),
        ..Options::default()
    };
    let config = Config {
        workflow: linux_job_only(),
        origin: bare,
        dir: dir.join("walk"),
        run_id: 9_100_001,
        sha,
        git_ref: format!("refs/tags/{tag}"),
        repository: "cell-bench/cell".into(),
        cell_bin: PathBuf::from(env!("CARGO_BIN_EXE_cell")),
    };
    let mut w = Walk::new(config, options).unwrap();
    let a = w.run().unwrap();
    (w, a)
}

#[test]
#[cfg_attr(
    not(all(target_os = "linux", target_arch = "x86_64")),
    ignore = "the walked job is the linux-x86_64 one"
)]
fn the_linux_release_job_packages_what_a_pinned_workflow_installs() {
    let tmp = tempfile::tempdir().unwrap();
    let (_w, a) = walk_tag(tmp.path(), &format!("v{VERSION}"));
    let story = format!("{}{}", a.table(), a.failed_logs());
    assert_eq!(a.conclusion, Conclusion::Success, "{story}");
    let job = a.job("build-linux-x86_64");
    let dist = job.workspace.as_ref().unwrap().join("dist");
    let asset = format!("cell-{VERSION}-linux-x86_64.tar.gz");
    let tar = std::fs::read(dist.join(&asset)).unwrap();
    let sha_line = std::fs::read_to_string(dist.join(format!("{asset}.sha256"))).unwrap();
    assert_eq!(
        sha_line,
        format!("{}  {asset}\n", cell_testkit::sha256(&tar)),
        "the .sha256 does not match its archive"
    );
    // The archive holds the cell that was built and the licence texts beside it, under
    // cell-<version>-<target>/.
    let top = format!("cell-{VERSION}-linux-x86_64");
    let listed = std::process::Command::new("tar")
        .arg("-tzf")
        .arg(dist.join(&asset))
        .output()
        .unwrap();
    assert!(listed.status.success());
    let mut entries: Vec<String> = String::from_utf8(listed.stdout)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    entries.sort();
    let mut want: Vec<String> = ["", "LICENSE-APACHE", "LICENSE-MIT", "README.md", "cell"]
        .iter()
        .map(|f| format!("{top}/{f}"))
        .collect();
    want.sort();
    assert_eq!(entries, want);
    let unpacked = tmp.path().join("unpacked");
    std::fs::create_dir_all(&unpacked).unwrap();
    let ok = std::process::Command::new("tar")
        .arg("-xzf")
        .arg(dist.join(&asset))
        .arg("-C")
        .arg(&unpacked)
        .status()
        .unwrap();
    assert!(ok.success());
    let bin = unpacked.join(&top).join("cell");
    assert_eq!(
        std::fs::read(&bin).unwrap(),
        std::fs::read(env!("CARGO_BIN_EXE_cell")).unwrap()
    );
    for f in cell_plan::RELEASE_PACKAGED {
        assert_eq!(
            std::fs::read_to_string(unpacked.join(&top).join(f)).unwrap(),
            format!("{f} of cell\n")
        );
    }

    // `cell init` pins that archive's digest from the release's .sha256 lines.
    let root = tmp.path().join("adopter");
    let sums = tmp.path().join("SHA256SUMS");
    std::fs::write(&sums, &sha_line).unwrap();
    cell()
        .args(["init", "--toolchains", "clang", "--cell-sums"])
        .arg(&sums)
        .arg("--root")
        .arg(&root)
        .assert()
        .success();
    let versions = std::fs::read_to_string(root.join("versions.env")).unwrap();
    assert!(
        versions.contains(&format!(
            "CELL_SHA256_LINUX_X86_64={}",
            cell_testkit::sha256(&tar)
        )),
        "{versions}"
    );
}

#[test]
#[cfg_attr(
    not(all(target_os = "linux", target_arch = "x86_64")),
    ignore = "the walked job is the linux-x86_64 one"
)]
fn a_tag_that_is_not_the_version_cell_prints_fails_before_anything_is_packaged() {
    let tmp = tempfile::tempdir().unwrap();
    let (_w, a) = walk_tag(tmp.path(), "v99.0.0");
    let story = format!("{}{}", a.table(), a.failed_logs());
    let job = a.job("build-linux-x86_64");
    assert_eq!(job.conclusion, Conclusion::Failure, "{story}");
    let failed: Vec<&str> = job
        .steps
        .iter()
        .filter(|s| s.conclusion == Conclusion::Failure)
        .map(|s| s.name.as_str())
        .collect();
    assert_eq!(
        failed,
        ["check that the tag names the version cell prints"],
        "{story}"
    );
    assert!(
        !job.workspace.as_ref().unwrap().join("dist").exists(),
        "{story}"
    );
}
