//! docs/own-compiler.md followed literally: its `cell/cell.toml` and `versions.env` blocks
//! written as they stand (the release URL pointed at a loopback server, the digest placeholder
//! filled in), its `cell local` and `cell plan` commands run. The page breaks when this does.

mod common;

use cell_testkit::archive::{Entry, tar_gz};
use cell_testkit::http::{Response, Server};
use common::{cell, read_json, repo_root};

/// The fenced block of `lang` that follows the line holding `after`.
fn block(doc: &str, after: &str, lang: &str) -> String {
    let from = doc
        .find(after)
        .unwrap_or_else(|| panic!("the guide has no {after}"));
    let open = format!("```{lang}\n");
    let start = doc[from..].find(&open).expect("a fenced block") + from + open.len();
    let end = doc[start..].find("```").expect("a closed block") + start;
    doc[start..end].to_owned()
}

#[test]
#[cfg_attr(
    not(all(target_os = "linux", target_arch = "x86_64")),
    ignore = "the packaged tcc is the x86-64 Linux one"
)]
fn the_own_compiler_guide_works_as_written() {
    let guide = std::fs::read_to_string(repo_root().join("docs/own-compiler.md")).unwrap();
    let toml = block(&guide, "`cell/cell.toml`:", "toml");
    let versions = block(&guide, "`versions.env` (keys", "sh");
    let main_c = block(&guide, "`bench/workload/c/main.c` prints", "c");

    let tcc = std::fs::read("/usr/bin/tcc").expect("tcc is installed (scripts/setup --test)");
    let asset = "tcc-0.9.27-linux-x86_64.tar.gz";
    let tar = tar_gz(&[
        Entry::Dir("tcc-0.9.27/"),
        Entry::Dir("tcc-0.9.27/bin/"),
        Entry::File("tcc-0.9.27/bin/tcc", &tcc, 0o755),
    ]);
    let digest = cell_testkit::sha256(&tar).to_string();
    let server = Server::routes([
        (format!("/{asset}"), Response::ok(tar.clone())),
        (
            format!("/{asset}.sha256"),
            Response::ok(format!("{digest} *{asset}\n")),
        ),
    ]);

    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("mybench");
    std::fs::create_dir_all(root.join("cell")).unwrap();
    std::fs::create_dir_all(root.join("bench/workload/c")).unwrap();
    std::fs::write(
        root.join("cell/cell.toml"),
        toml.replace("https://releases.example.org", &server.base()),
    )
    .unwrap();
    std::fs::write(
        root.join("versions.env"),
        versions.replace(&format!("<the SHA-256 of {asset}>"), &digest),
    )
    .unwrap();
    std::fs::write(root.join("bench/workload/c/main.c"), main_c).unwrap();

    let out = tmp.path().join("cell-local");
    cell()
        .current_dir(&root)
        .env("CELL_CACHE", tmp.path().join("cache"))
        .args(["local", "--toolchains", "tcc", "--reps", "5", "-q", "--out"])
        .arg(&out)
        .assert()
        .success();
    let cell_dir = cell_testkit::first_dir(&cell_testkit::local_run_dir(&out));
    let merged = read_json(&cell_dir.join("results.json"));
    assert_eq!(merged["jobs"]["tcc"]["subject"]["sha256"], digest);
    assert_eq!(merged["jobs"]["tcc"]["subject"]["verified"], "both");
    let md = std::fs::read_to_string(cell_dir.join("RESULTS.md")).unwrap();
    assert!(
        md.contains("Release under test: `tcc` release-0.9.27"),
        "{md}"
    );
    assert!(merged["rows"]["tcc"].is_object(), "the row was timed");

    cell().current_dir(&root).arg("plan").assert().success();
    let workflow = std::fs::read_to_string(root.join(".github/workflows/cell.yml")).unwrap();
    assert!(
        workflow.contains("install the release under test tcc 0.9.27"),
        "{workflow}"
    );
}
