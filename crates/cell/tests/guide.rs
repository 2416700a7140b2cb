//! docs/own-compiler.md followed literally: its `cell init` command run as written by `sh` (the
//! release URLs pointed at a loopback server that serves a tcc tarball and a cell release),
//! then its `cell local` and `cell plan --check`. The page breaks when this does.

mod common;

use std::path::Path;

use cell_testkit::archive::{Entry, tar_gz};
use cell_testkit::http::{Response, Server};
use common::{read_json, repo_root};

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

/// Runs a block of the guide with `sh -e` in `dir`, the cell under test first on PATH.
fn sh(dir: &Path, script: &str, cache: &Path) {
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_cell")).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = std::process::Command::new("sh")
        .arg("-ec")
        .arg(script)
        .current_dir(dir)
        .env("PATH", path)
        .env("CELL_CACHE", cache)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "the guide's block failed:\n{script}\n--- stdout\n{}\n--- stderr\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
#[cfg_attr(
    not(all(target_os = "linux", target_arch = "x86_64")),
    ignore = "the packaged tcc is the x86-64 Linux one"
)]
fn the_own_compiler_guide_works_as_written() {
    let guide = std::fs::read_to_string(repo_root().join("docs/own-compiler.md")).unwrap();
    let init = block(&guide, "## 2. A repository with `cell init`", "sh");
    let subject_toml = block(&guide, "The subject's lines of `cell/cell.toml`:", "toml");
    let local = block(&guide, "## 3. Try it here", "sh");
    let workflow = block(&guide, "## 4. The workflow", "sh");
    let server = block(&guide, "## 6. A server built by your release", "sh");
    assert!(init.contains("cell init"), "{init}");

    let tcc = std::fs::read("/usr/bin/tcc").expect("tcc is installed (scripts/setup --test)");
    let asset = "tcc-0.9.27-linux-x86_64.tar.gz";
    let tar = tar_gz(&[
        Entry::Dir("tcc-0.9.27/"),
        Entry::Dir("tcc-0.9.27/bin/"),
        Entry::File("tcc-0.9.27/bin/tcc", &tcc, 0o755),
    ]);
    let digest = cell_testkit::sha256(&tar).to_string();
    let version = env!("CARGO_PKG_VERSION");
    let cell_asset = format!("cell-{version}-linux-x86_64.tar.gz");
    let sums = format!("{}  {cell_asset}\n", "ab".repeat(32));
    let releases = Server::routes([
        (format!("/{asset}"), Response::ok(tar.clone())),
        (
            format!("/{asset}.sha256"),
            Response::ok(format!("{digest} *{asset}\n")),
        ),
        (format!("/v{version}/SHA256SUMS"), Response::ok(sums)),
    ]);

    let tmp = tempfile::tempdir().unwrap();
    let script = init
        .replace("https://releases.example.org", &releases.base())
        .replace(
            "https://github.com/cell-bench/cell/releases/download",
            &releases.base(),
        )
        .replace("v0.1.0", &format!("v{version}"));
    sh(tmp.path(), &script, &tmp.path().join("cache"));
    let root = tmp.path().join("mybench");
    let toml = std::fs::read_to_string(root.join("cell/cell.toml")).unwrap();
    let shown = subject_toml.replace("https://releases.example.org", &releases.base());
    assert!(
        toml.contains(&shown),
        "cell init does not write the lines the guide shows:\n{shown}\n--- wrote\n{toml}"
    );
    let versions = std::fs::read_to_string(root.join("versions.env")).unwrap();
    assert!(
        versions.contains(&format!("TCC_SHA256_LINUX_X86_64={digest}")),
        "{versions}"
    );
    assert!(
        versions.contains(&format!("CELL_SHA256_LINUX_X86_64={}", "ab".repeat(32))),
        "{versions}"
    );

    sh(&root, &local, &tmp.path().join("cache"));
    let out = cell_testkit::local_run_dir(&root.join("cell-local"));
    let cell_dir = cell_testkit::first_dir(&out);
    let merged = read_json(&cell_dir.join("results.json"));
    assert_eq!(merged["jobs"]["tcc"]["subject"]["sha256"], digest);
    assert_eq!(merged["jobs"]["tcc"]["subject"]["verified"], "both");
    let md = std::fs::read_to_string(cell_dir.join("RESULTS.md")).unwrap();
    assert!(md.contains("Release under test: `tcc` 0.9.27"), "{md}");
    assert!(merged["rows"]["tcc"].is_object(), "the row was timed");

    // `cell plan --check` passes on what init wrote; the commit needs an identity.
    let commit = workflow.replace(
        "git add -A && git commit",
        "git add -A && git -c user.name=guide -c user.email=guide@example.org commit -q",
    );
    sh(&root, &commit, &tmp.path().join("cache"));
    let workflow = std::fs::read_to_string(root.join(".github/workflows/cell.yml")).unwrap();
    assert!(
        workflow.contains("install the release under test tcc 0.9.27"),
        "{workflow}"
    );
    assert!(
        workflow.contains(&format!("install cell {version} (the pinned release")),
        "{workflow}"
    );

    // Section 6: the C fork-per-connection server built by the release, measured, recorded.
    let cell_checkout = repo_root().display().to_string();
    sh(
        &root,
        &server.replace("/path/to/cell", &cell_checkout),
        &tmp.path().join("cache"),
    );
    // The newest run under cell-local: section 3's came first.
    let mut runs: Vec<_> = std::fs::read_dir(root.join("cell-local"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().contains("-local-"))
        .collect();
    runs.sort();
    let newest = runs.last().expect("the server's run");
    let merged = read_json(&cell_testkit::first_dir(newest).join("results.json"));
    let s = &merged["http"]["c-fork-conn"];
    assert_eq!(s["release"]["sha256"], digest, "{s}");
    assert_eq!(s["model"], "process-per-connection");
    for w in ["plaintext", "minimal"] {
        assert_eq!(s["workloads"][w]["check"], "ok", "{s}");
    }
    let workflow = std::fs::read_to_string(root.join(".github/workflows/cell.yml")).unwrap();
    assert!(workflow.contains("http-c-fork-conn"), "{workflow}");
}
