//! `cell init`: a new repository that `cell local` and `cell plan --check` accept with no
//! edit, that refuses to be written over, and whose generated workflow installs the pinned
//! release of cell in every job (walked as a runner would, the release served on loopback),
//! failing at that step, with nothing timed and nothing committed, when one byte differs.

mod common;

use std::path::{Path, PathBuf};

use cell_testkit::git;
use cell_testkit::http::{Response, Server};
use cell_testkit::walk::{Conclusion, Config, Options, Walk};
use common::cell;

use common::release::{VERSION, asset, release_tarball, sums};

fn init(root: &Path, extra: &[&str]) -> assert_cmd::assert::Assert {
    cell()
        .arg("init")
        .arg("--root")
        .arg(root)
        .args(extra)
        .assert()
}

#[test]
#[cfg_attr(
    not(all(target_os = "linux", target_arch = "x86_64")),
    ignore = "cell init's cell is ubuntu-24.04, an x86-64 runner"
)]
fn init_then_local_and_plan_check_pass_and_a_second_init_refuses_naming_the_files() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("mybench");
    let sums_file = tmp.path().join("SHA256SUMS");
    std::fs::write(&sums_file, sums(&release_tarball())).unwrap();
    let sums_arg = sums_file.display().to_string();
    init(&root, &["--cell-sums", &sums_arg]).success();
    let toml = std::fs::read_to_string(root.join("cell/cell.toml")).unwrap();
    assert!(
        toml.contains(&format!("cell = {{ version = \"{VERSION}\" }}")),
        "{toml}"
    );
    let versions = std::fs::read_to_string(root.join("versions.env")).unwrap();
    assert!(versions.contains("CELL_SHA256_LINUX_X86_64="), "{versions}");
    // A verdict on each pull request is on from the start.
    assert!(toml.contains("[workflow.pull_requests]"), "{toml}");
    for wf in ["cell-pr.yml", "cell-pr-report.yml"] {
        let text = std::fs::read_to_string(root.join(".github/workflows").join(wf)).unwrap();
        cell_testkit::lint::lint_text(&text);
    }
    // The answers are the reference build's, so every row of the first run answers right.
    let out = tmp.path().join("out");
    cell()
        .current_dir(&root)
        .env("CELL_CACHE", tmp.path().join("cache"))
        .args(["local", "--reps", "3", "-q", "--out"])
        .arg(&out)
        .assert()
        .success();
    cell()
        .current_dir(&root)
        .args(["plan", "--check"])
        .assert()
        .success();
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    assert!(readme.contains("cell local --reps 3"), "{readme}");

    let again = init(&root, &["--cell-sums", &sums_arg]).code(2);
    let err = String::from_utf8_lossy(&again.get_output().stderr).into_owned();
    for f in [
        "cell/cell.toml",
        "versions.env",
        "bench/workload/c/main.c",
        ".github/workflows/cell.yml",
        ".github/workflows/cell-pr.yml",
        ".github/workflows/cell-pr-report.yml",
    ] {
        assert!(err.contains(f), "the refusal does not name {f}: {err}");
    }
    assert_eq!(
        std::fs::read_to_string(root.join("cell/cell.toml")).unwrap(),
        toml,
        "a refused init changed the config"
    );
    init(
        &root,
        &["--cell-sums", &sums_arg, "--force", "--toolchains", "gcc"],
    )
    .success();
    let toml = std::fs::read_to_string(root.join("cell/cell.toml")).unwrap();
    assert!(!toml.contains("[toolchains.clang]"), "{toml}");
    let readme_after = std::fs::read_to_string(root.join("README.md")).unwrap();
    assert_eq!(readme_after, readme, "the README section was added twice");
}

#[test]
fn bad_arguments_write_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("r");
    init(
        &root,
        &["--toolchains", "icc", "--cell-sums", "/nonexistent"],
    )
    .code(2);
    let sums_file = tmp.path().join("SHA256SUMS");
    // Another release's list.
    let other = format!("{}  cell-9.9.9-linux-x86_64.tar.gz\n", "ab".repeat(32));
    std::fs::write(&sums_file, other).unwrap();
    let e = init(&root, &["--cell-sums", &sums_file.display().to_string()]).code(2);
    let err = String::from_utf8_lossy(&e.get_output().stderr).into_owned();
    assert!(err.contains(&format!("names no {}", asset())), "{err}");
    // A line that is no checksum line is named by its number.
    std::fs::write(&sums_file, "00  cell-9.9.9-linux-x86_64.tar.gz\n").unwrap();
    let e = init(&root, &["--cell-sums", &sums_file.display().to_string()]).code(2);
    let err = String::from_utf8_lossy(&e.get_output().stderr).into_owned();
    assert!(err.contains("SHA256SUMS: line 1"), "{err}");
    let e = init(
        &root,
        &[
            "--subject",
            "x",
            "--subject-version",
            "1",
            "--template",
            "https://e/x-{version}.tgz",
        ],
    )
    .code(2);
    let err = String::from_utf8_lossy(&e.get_output().stderr).into_owned();
    assert!(
        err.contains("--checksum") && err.contains("--sha256"),
        "{err}"
    );
    let left: Vec<_> = std::fs::read_dir(&root)
        .map(|d| d.map(|e| e.unwrap().file_name()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "a refused init left {left:?}");
}

/// `--pin clang=VERSION`: the key in versions.env, the apt install naming it, the workflow
/// installing exactly that version; a pin of a toolchain init does not write is refused.
#[test]
#[cfg_attr(
    not(all(target_os = "linux", target_arch = "x86_64")),
    ignore = "cell init's cell is ubuntu-24.04, an x86-64 runner"
)]
fn a_given_pin_reaches_versions_env_and_the_apt_install() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("r");
    init(&root, &["--toolchains", "clang", "--pin", "gcc=1.0"]).code(2);
    assert!(!root.join("versions.env").exists());
    init(
        &root,
        &["--toolchains", "clang", "--pin", "clang=1:18.0-59~exp2"],
    )
    .success();
    let env = std::fs::read_to_string(root.join("versions.env")).unwrap();
    assert!(env.contains("\nCLANG_VERSION=1:18.0-59~exp2\n"), "{env}");
    let toml = std::fs::read_to_string(root.join("cell/cell.toml")).unwrap();
    assert!(
        toml.contains("install = { apt = { package = \"clang\", version = \"CLANG_VERSION\" } }"),
        "{toml}"
    );
    let workflow = std::fs::read_to_string(root.join(".github/workflows/cell.yml")).unwrap();
    assert!(workflow.contains("clang=1:18.0-59~exp2"), "{workflow}");
}

/// A fresh repository of `cell init` whose release URL is `base`, committed with a bare origin.
struct Repo {
    _tmp: tempfile::TempDir,
    dir: PathBuf,
    bare: PathBuf,
    sha: String,
}

fn repo(url_base: &str, sums_text: &str) -> Repo {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("proj");
    let sums_file = tmp.path().join("SHA256SUMS");
    std::fs::write(&sums_file, sums_text).unwrap();
    init(
        &root,
        &[
            "--cell-sums",
            &sums_file.display().to_string(),
            "--cell-url",
            &format!("{url_base}/v{{version}}/cell-{{version}}-{{target}}.tar.gz"),
            "--toolchains",
            "clang",
        ],
    )
    .success();
    git(&root, &["init", "-q", "-b", "main"]);
    let sha = cell_testkit::commit_all(&root, "cell init");
    let bare = tmp.path().join("origin.git");
    cell_testkit::bare_clone(&root, &bare);
    Repo {
        dir: tmp.path().to_path_buf(),
        _tmp: tmp,
        bare,
        sha,
    }
}

fn walk(r: &Repo, run_id: u64) -> Walk {
    let workflow = std::fs::read_to_string(r.dir.join("proj/.github/workflows/cell.yml")).unwrap();
    let mut options = Options {
        verbose: std::env::var_os("WALK_VERBOSE").is_some(),
        ..Options::default()
    };
    options.inputs.insert("reps".into(), "3".into());
    let config = Config {
        workflow,
        origin: r.bare.clone(),
        dir: r.dir.join("walk"),
        run_id,
        sha: r.sha.clone(),
        git_ref: "refs/heads/main".into(),
        repository: "o/r".into(),
        // No job may build cell: a `cargo build` would find this and still fail the test
        // below, which asserts that no step compiles.
        cell_bin: PathBuf::from(env!("CARGO_BIN_EXE_cell")),
    };
    Walk::new(config, options).unwrap()
}

fn main_log(r: &Repo) -> Vec<String> {
    git(&r.bare, &["log", "--format=%s", "main"])
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
#[cfg_attr(
    not(all(target_os = "linux", target_arch = "x86_64")),
    ignore = "cell init's cell is ubuntu-24.04, an x86-64 runner"
)]
fn every_job_installs_the_pinned_release_and_one_changed_byte_fails_it_before_anything_runs() {
    let tar = release_tarball();
    let path = format!("/v{VERSION}/{}", asset());
    let good = Server::routes([(path.clone(), Response::ok(tar.clone()))]);
    let r = repo(&good.base(), &sums(&tar));
    let mut w = walk(&r, 7_100_001);
    let a = w.run().unwrap();
    let story = format!("{}{}", a.table(), a.failed_logs());
    assert_eq!(a.conclusion, Conclusion::Success, "{story}");
    assert!(
        a.jobs.iter().all(|j| !j.id.starts_with("build-")),
        "{story}"
    );
    for j in &a.jobs {
        let install = j
            .steps
            .iter()
            .find(|s| {
                s.name
                    .starts_with(&format!("install cell {VERSION} (the pinned release"))
            })
            .unwrap_or_else(|| panic!("{} does not install the release\n{story}", j.name));
        assert_eq!(install.conclusion, Conclusion::Success, "{story}");
        let log = j.log_text();
        assert!(
            !log.contains("walk stand-in: copied"),
            "{} built cell\n{log}",
            j.name
        );
    }
    assert_eq!(main_log(&r).len(), 2, "{:?}\n{story}", main_log(&r));

    // The same repository served a release with one byte changed.
    let mut bad = tar.clone();
    let at = bad.len() / 2;
    bad[at] ^= 1;
    let tampered = Server::routes([(path, Response::ok(bad))]);
    let r = repo(&tampered.base(), &sums(&tar));
    let before = main_log(&r);
    let mut w = walk(&r, 7_100_002);
    let a = w.run().unwrap();
    let story = format!("{}{}", a.table(), a.failed_logs());
    assert_eq!(a.conclusion, Conclusion::Failure, "{story}");
    let plan = a.job("plan");
    assert_eq!(plan.conclusion, Conclusion::Failure, "{story}");
    let failed: Vec<&str> = plan
        .steps
        .iter()
        .filter(|s| s.conclusion == Conclusion::Failure)
        .map(|s| s.name.as_str())
        .collect();
    assert_eq!(failed.len(), 1, "{story}");
    assert!(failed[0].starts_with("install cell"), "{failed:?}\n{story}");
    assert!(plan.log_text().contains("nothing of it was run"), "{story}");
    for j in &a.jobs {
        assert_ne!(j.conclusion, Conclusion::Success, "{} ran\n{story}", j.name);
        assert!(
            !j.log_text().contains("cell run"),
            "{} timed\n{story}",
            j.name
        );
    }
    assert_eq!(main_log(&r), before, "the record changed\n{story}");
}

/// The files of a directory, recursively, relative to it (dot files too).
fn files_under(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.symlink_metadata().unwrap().is_dir() {
                stack.push(p.clone());
            }
            out.push(p.strip_prefix(dir).unwrap().display().to_string());
        }
    }
    out.sort();
    out
}

fn sums_file(dir: &Path) -> String {
    let f = dir.join("SHA256SUMS");
    std::fs::write(&f, format!("{}  {}\n", "ab".repeat(32), asset())).unwrap();
    f.display().to_string()
}

/// Puts something in a repository's way (the repository, a directory outside it).
type Plant = fn(&Path, &Path);

#[test]
fn init_writes_nothing_through_a_link_nor_over_what_is_not_a_file() {
    let tmp = tempfile::tempdir().unwrap();
    let sums = sums_file(tmp.path());
    let outside = tmp.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("victim"), "untouched\n").unwrap();
    let cases: [(&str, Plant); 4] = [
        ("README.md", |root, out| {
            std::os::unix::fs::symlink(out.join("victim"), root.join("README.md")).unwrap();
        }),
        (".gitignore", |root, out| {
            std::os::unix::fs::symlink(out.join("victim"), root.join(".gitignore")).unwrap();
        }),
        (".github", |root, out| {
            std::os::unix::fs::symlink(out, root.join(".github")).unwrap();
        }),
        ("bench", |root, _| {
            std::fs::write(root.join("bench"), "a file").unwrap();
        }),
    ];
    for (name, plant) in cases {
        let root = tmp
            .path()
            .join(format!("r-{}", name.trim_start_matches('.')));
        std::fs::create_dir_all(&root).unwrap();
        plant(&root, &outside);
        let before = files_under(&root);
        let e = init(&root, &["--cell-sums", &sums]).code(2);
        let err = String::from_utf8_lossy(&e.get_output().stderr).into_owned();
        assert!(err.contains(name), "{name}: {err}");
        assert_eq!(files_under(&root), before, "{name}: something was written");
        assert_eq!(files_under(&outside), ["victim"], "{name}");
        assert_eq!(
            std::fs::read_to_string(outside.join("victim")).unwrap(),
            "untouched\n",
            "{name}: written through the link"
        );
    }
}

#[test]
fn a_gitignore_that_is_not_utf8_keeps_every_byte_and_gets_its_line() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("r");
    std::fs::create_dir_all(&root).unwrap();
    let mine = b"build/\n# caf\xe9\nsecret.key\n".to_vec();
    std::fs::write(root.join(".gitignore"), &mine).unwrap();
    init(&root, &["--cell-sums", &sums_file(tmp.path())]).success();
    let mut want = mine;
    want.extend_from_slice(b"cell-local/\n");
    assert_eq!(std::fs::read(root.join(".gitignore")).unwrap(), want);
}

#[test]
fn a_value_that_would_add_a_line_or_a_key_is_refused_before_anything_is_written() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("r");
    let sums = sums_file(tmp.path());
    let hex = "cd".repeat(32);
    let subject = |name: &str, version: &str, template: &str| {
        let e = init(
            &root,
            &[
                "--cell-sums",
                &sums,
                "--subject",
                name,
                "--subject-version",
                version,
                "--template",
                template,
                "--sha256",
                &hex,
            ],
        )
        .code(2);
        String::from_utf8_lossy(&e.get_output().stderr).into_owned()
    };
    let tpl = "https://x.example/t-{version}-{os}-{arch}.tar.gz";
    let err = subject("tcc", "0.9.27\nTOLERANCE=0.99", tpl);
    assert!(err.contains("--subject-version"), "{err}");
    let err = subject("cell", "1.0", tpl);
    assert!(err.contains("cell's own"), "{err}");
    let err = subject(
        "tcc",
        "0.9.27",
        "https://x.example/t-{version}-{os}-{arch}.tar.gz\", strip = 7 } } #",
    );
    assert!(err.contains("--template"), "{err}");
    let e = init(&root, &["--cell-sums", &sums, "--cell-version", "latest"]).code(2);
    let err = String::from_utf8_lossy(&e.get_output().stderr).into_owned();
    assert!(err.contains("--cell-version"), "{err}");
    assert!(!root.exists(), "a refused init created {}", root.display());
}

#[test]
fn cell_sums_needs_a_line_naming_each_asset_and_a_failed_render_leaves_versions_env_as_it_was() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("r");
    init(&root, &["--cell-sums", &sums_file(tmp.path())]).success();
    let versions = std::fs::read(root.join("versions.env")).unwrap();
    // A comment naming the asset over a bare digest names no file.
    let bare = tmp.path().join("bare");
    std::fs::write(&bare, format!("# {}\n{}\n", asset(), "ef".repeat(32))).unwrap();
    let e = cell()
        .arg("--root")
        .arg(&root)
        .args(["plan", "--cell-sums"])
        .arg(&bare)
        .assert()
        .code(2);
    let err = String::from_utf8_lossy(&e.get_output().stderr).into_owned();
    assert!(err.contains(&format!("names no {}", asset())), "{err}");
    assert_eq!(std::fs::read(root.join("versions.env")).unwrap(), versions);
    // The release workflow asked for without the Rust it builds with: no render, no new digest.
    let toml = std::fs::read_to_string(root.join("cell/cell.toml")).unwrap();
    std::fs::write(
        root.join("cell/cell.toml"),
        toml.replace("[workflow]\n", "[workflow]\nrelease = true\n"),
    )
    .unwrap();
    let other = tmp.path().join("other");
    std::fs::write(&other, format!("{}  {}\n", "01".repeat(32), asset())).unwrap();
    // A link planted where a fixed temporary name used to be is never written through.
    let victim = tmp.path().join("victim");
    std::fs::write(&victim, "untouched").unwrap();
    std::os::unix::fs::symlink(&victim, root.join("versions.env.tmp")).unwrap();
    let e = cell()
        .arg("--root")
        .arg(&root)
        .args(["plan", "--cell-sums"])
        .arg(&other)
        .assert()
        .code(2);
    let err = String::from_utf8_lossy(&e.get_output().stderr).into_owned();
    assert!(err.contains("release workflow builds cell"), "{err}");
    assert!(err.contains("left as it was"), "{err}");
    assert_eq!(std::fs::read(root.join("versions.env")).unwrap(), versions);
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "untouched");
}

/// Without a release to install, the workflow builds the commit this cell names in
/// `--version`, with the Rust this repository pins; a cell that names none refuses instead.
#[test]
fn init_without_a_release_pins_the_commit_cell_was_built_from() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("r");
    let version = cell().arg("--version").assert().success();
    let printed = String::from_utf8_lossy(&version.get_output().stdout).into_owned();
    if printed.contains("unknown commit") {
        let e = init(&root, &[]).code(2);
        let err = String::from_utf8_lossy(&e.get_output().stderr).into_owned();
        assert!(err.contains("--cell-sums"), "{err}");
        return;
    }
    init(&root, &[]).success();
    let toml = std::fs::read_to_string(root.join("cell/cell.toml")).unwrap();
    let rev = toml
        .split("rev = \"")
        .nth(1)
        .and_then(|r| r.split('"').next())
        .unwrap_or_else(|| panic!("no rev: {toml}"));
    assert_eq!(rev.len(), 40, "{toml}");
    let after = printed
        .split("(commit ")
        .nth(1)
        .unwrap_or_else(|| panic!("{printed}"));
    let short = &after[..12];
    assert!(
        rev.starts_with(short),
        "{rev} is not the commit of {printed}"
    );
    let pinned = std::fs::read_to_string(common::repo_root().join("versions.env")).unwrap();
    let versions = std::fs::read_to_string(root.join("versions.env")).unwrap();
    let rust = |t: &str| {
        t.lines()
            .find(|l| l.starts_with("RUST_VERSION="))
            .map(str::to_owned)
    };
    assert_eq!(rust(&versions), rust(&pinned), "{versions}");
    cell()
        .current_dir(&root)
        .args(["plan", "--check"])
        .assert()
        .success();
}
