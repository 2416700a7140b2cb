//! Nothing on the machine is believed because of where it lies, through the binary: a
//! toolchain tree planted in the cache by another user (or where the cache used to fall back
//! to, `$TMPDIR/cell-cache`) never runs; a tree of ours changed after its install is named and
//! installed again; an untouched one is used without a download; and a CPU lock dir that is a
//! link is not followed, the job timing without the lock and saying why in results.json.

mod common;

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

use cell_testkit::http::Server;
use common::tcc::{ASSET, hex, release, tarball};
use common::{VERSIONS, cell, project, read_json};

const NOBODY: u32 = 65534;

/// The release on loopback, with its `.sha256`, and the tiny project with tcc as the release
/// under test, pinned to it.
struct Release {
    tar: Vec<u8>,
    server: Server,
    root: PathBuf,
}

impl Release {
    fn new(dir: &Path) -> Self {
        let tar = tarball();
        let server = release(tar.clone(), &tar);
        let versions = common::tcc::versions(&hex(&tar));
        let toml = common::tcc_subject_toml(&server.base());
        let root = project(dir, &versions, &toml);
        Self { tar, server, root }
    }

    fn digest(&self) -> String {
        hex(&self.tar)
    }

    /// Downloads of the tarball itself (the checksum file aside).
    fn downloads(&self) -> usize {
        self.server.hits(&format!("/releases/{ASSET}"))
    }

    /// `cell <args> --root <project>`, the cache where `cache` says (`None`: no cache dir
    /// named by the environment at all, and `$TMPDIR` set to `tmpdir`).
    fn cell(&self, cache: Option<&Path>, tmpdir: &Path, args: &[&str]) -> assert_cmd::Command {
        let mut c = cell();
        for k in ["CELL_CACHE", "RUNNER_TEMP", "XDG_CACHE_HOME", "HOME"] {
            c.env_remove(k);
        }
        if let Some(cache) = cache {
            c.env("CELL_CACHE", cache);
        }
        c.env("TMPDIR", tmpdir)
            .args(args)
            .arg("--root")
            .arg(&self.root);
        c
    }
}

/// `cell run` of the tcc job into `out`, three rounds.
fn run_args(out: &Path) -> Vec<String> {
    [
        "run",
        "--cell",
        "local",
        "--toolchain",
        "tcc",
        "--reps",
        "3",
        "--seed",
        "1",
        "-q",
        "--out",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .chain([out.display().to_string()])
    .collect()
}

fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

/// Plants `<cache>/toolchains/<digest>/bin/tcc`: a script that writes `marker` and then runs
/// the real tcc, with a marker of the kind the cache once believed. Returns the tree.
fn plant(cache: &Path, digest: &str, marker: &Path) -> PathBuf {
    let tree = cache.join("toolchains").join(digest);
    std::fs::create_dir_all(tree.join("bin")).unwrap();
    let script = format!(
        "#!/bin/sh\nid > '{}'\nexec /usr/bin/tcc \"$@\"\n",
        marker.display()
    );
    std::fs::write(tree.join("bin/tcc"), script).unwrap();
    std::fs::set_permissions(tree.join("bin/tcc"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let old = serde_json::json!({ "url": "http://127.0.0.1/x", "sha256": digest });
    std::fs::write(tree.join(".cell-installed.json"), old.to_string()).unwrap();
    tree
}

/// Plants a tree's way into the cache `(cache, tree)`: the path the refusal names, and why.
type Planting = fn(&Path, &Path) -> (PathBuf, &'static str);

fn chown_tree(path: &Path) {
    let status = std::process::Command::new("chown")
        .args(["-R", &format!("{NOBODY}:{NOBODY}")])
        .arg(path)
        .status()
        .unwrap();
    assert!(status.success());
}

fn as_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    if !root {
        println!("skipped: only root can hand a planted tree to another user");
    }
    root
}

/// Regression: a tree planted in the cache by an unprivileged user (its `bin/tcc` a script
/// recording `id`) was run by root's `cell run` as the verified release, because its marker
/// parsed. Now a tree, or a cache root, that is not this user's alone is refused by name
/// before anything of it runs, by `cell run`, `cell install` and `cell local` alike.
#[test]
#[cfg_attr(
    not(all(target_os = "linux", target_arch = "x86_64")),
    ignore = "the packaged tcc is the x86-64 Linux one"
)]
fn a_planted_tree_is_refused_before_anything_of_it_runs() {
    if !as_root() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let release = Release::new(tmp.path());
    let marker = tmp.path().join("planted-ran");
    let out = tmp.path().join("job");
    let run = run_args(&out);
    let runs = tmp.path().join("runs");
    let local = [
        "local",
        "--toolchains",
        "tcc",
        "--reps",
        "3",
        "-q",
        "--out",
        runs.to_str().unwrap(),
    ];
    let install = ["install", "--toolchain", "tcc"];
    // Three ways to plant: the tree another user's, the cache root another user's, the tree
    // writable by everyone.
    let plantings: [Planting; 3] = [
        |_, tree| {
            chown_tree(tree);
            (tree.to_owned(), "owned by another user than root")
        },
        |cache, _| {
            chown_tree(cache);
            (cache.to_owned(), "owned by another user than root")
        },
        |_, tree| {
            std::fs::set_permissions(tree, std::fs::Permissions::from_mode(0o777)).unwrap();
            (tree.to_owned(), "writable by group or others")
        },
    ];
    for (i, planting) in plantings.iter().enumerate() {
        for args in [strs(&run), local.to_vec(), install.to_vec()] {
            let cache = tmp.path().join(format!("cache-{i}-{}", args[0]));
            std::fs::create_dir(&cache).unwrap();
            std::fs::set_permissions(&cache, std::fs::Permissions::from_mode(0o700)).unwrap();
            let tree = plant(&cache, &release.digest(), &marker);
            let (named, why) = planting(&cache, &tree);
            let a = release
                .cell(Some(&cache), tmp.path(), &args)
                .assert()
                .code(2);
            let err = String::from_utf8_lossy(&a.get_output().stderr).into_owned();
            assert!(
                err.contains(&format!("{}: {why}", named.display()))
                    && err.contains("remove it, or point CELL_CACHE at a directory of your own"),
                "cell {}: {err}",
                args[0]
            );
            assert!(!marker.exists(), "cell {}: the planted tcc ran", args[0]);
            assert!(tree.join("bin/tcc").exists(), "left for its owner to see");
        }
    }
    assert_eq!(
        release.downloads(),
        0,
        "nothing was downloaded in its place"
    );
    assert!(!out.join("results.json").exists());
}

/// Regression: only a directory above the cache that everyone may write to without the
/// sticky bit was refused. A parent owned by another user, or writable by a group, let its
/// owner rename the verified cache away after the check and put a planted tree in its place
/// (root's `cell run` then ran it); a path through another user's link let them re-point it.
/// Now each is refused by name before anything is installed or run.
#[test]
fn a_cache_below_another_user_s_directory_or_link_is_refused_by_name() {
    if !as_root() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let release = Release::new(tmp.path());
    let theirs = tmp.path().join("theirs");
    std::fs::create_dir(&theirs).unwrap();
    chown_tree(&theirs);
    let group = tmp.path().join("group");
    std::fs::create_dir(&group).unwrap();
    std::fs::set_permissions(&group, std::fs::Permissions::from_mode(0o775)).unwrap();
    let mine = tmp.path().join("mine");
    std::fs::create_dir(&mine).unwrap();
    let link = tmp.path().join("link");
    std::os::unix::fs::symlink(&mine, &link).unwrap();
    // SAFETY: lchown on a path we made; the link becomes another user's.
    let c = std::ffi::CString::new(link.as_os_str().as_encoded_bytes()).unwrap();
    assert_eq!(unsafe { libc::lchown(c.as_ptr(), 65534, 65534) }, 0);
    for (cache, named, why) in [
        (
            theirs.join("cache"),
            &theirs,
            "above the toolchain cache, owned by another user",
        ),
        (
            group.join("cache"),
            &group,
            "above the toolchain cache, writable by group or others without the sticky bit",
        ),
        (
            link.join("cache"),
            &link,
            "above the toolchain cache, owned by another user",
        ),
    ] {
        let a = release
            .cell(Some(&cache), tmp.path(), &["install", "--toolchain", "tcc"])
            .assert()
            .code(2);
        let err = String::from_utf8_lossy(&a.get_output().stderr).into_owned();
        assert!(
            err.contains(&format!("{}: {why}", named.display())),
            "{err}"
        );
        assert!(!cache.join("toolchains").exists(), "{}", cache.display());
    }
    assert_eq!(release.downloads(), 0);
}

/// Regression: with `HOME` unset (and no other cache dir named), the cache was
/// `$TMPDIR/cell-cache`, a path any user can create first; a tree planted there ran as
/// root's release. Now that path is never read: the job installs into a private directory of
/// its own, gone when it ends, and `cell install`, whose cache would be gone, says so.
#[test]
#[cfg_attr(
    not(all(target_os = "linux", target_arch = "x86_64")),
    ignore = "the packaged tcc is the x86-64 Linux one"
)]
fn with_home_unset_a_tree_planted_in_the_old_tmpdir_cache_never_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let release = Release::new(tmp.path());
    let tmpdir = tmp.path().join("tmp");
    std::fs::create_dir(&tmpdir).unwrap();
    let marker = tmp.path().join("planted-ran");
    let planted = plant(&tmpdir.join("cell-cache"), &release.digest(), &marker);
    if as_root() {
        chown_tree(&tmpdir.join("cell-cache"));
    }
    let out = tmp.path().join("job");
    release
        .cell(None, &tmpdir, &strs(&run_args(&out)))
        .assert()
        .success();
    assert!(!marker.exists(), "the planted tcc ran");
    assert_eq!(
        release.downloads(),
        1,
        "the release was fetched and verified"
    );
    let job = read_json(&out.join("results.json"));
    assert_eq!(job["subject"]["sha256"], release.digest());
    let resolved = job["subject"]["tools"]["tcc"]["resolved"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        resolved.starts_with(tmpdir.join("cell-cache-").to_str().unwrap()),
        "built with a private tree, not the planted one: {resolved}"
    );
    let left: Vec<String> = cell_testkit::names(&tmpdir);
    assert_eq!(
        left,
        ["cell-cache"],
        "the private cache went with the process"
    );
    assert!(planted.join("bin/tcc").exists());
    release
        .cell(None, &tmpdir, &["install", "--toolchain", "tcc"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "none of CELL_CACHE, RUNNER_TEMP, XDG_CACHE_HOME or HOME is set",
        ));
    assert!(!marker.exists());
}

/// Regression: a cached tree's files were never checked again, so code that rewrote
/// `toolchains/<digest>/bin/tcc` (the code under test itself, on a self-hosted runner with a
/// shared `CELL_CACHE`) was timed as the release by every later job. Now the tree is checked
/// against the manifest its install wrote: the changed file is named with both digests, the
/// tree removed and installed again, and the job verifies the pinned digest.
#[test]
#[cfg_attr(
    not(all(target_os = "linux", target_arch = "x86_64")),
    ignore = "the packaged tcc is the x86-64 Linux one"
)]
fn one_changed_byte_of_a_cached_binary_is_named_and_installed_again() {
    let tmp = tempfile::tempdir().unwrap();
    let release = Release::new(tmp.path());
    let cache = tmp.path().join("cache");
    release
        .cell(Some(&cache), tmp.path(), &["install", "--toolchain", "tcc"])
        .assert()
        .success();
    let tcc = cache
        .join("toolchains")
        .join(release.digest())
        .join("bin/tcc");
    let good = std::fs::read(&tcc).unwrap();
    let mut bad = good.clone();
    let mid = bad.len() / 2;
    bad[mid] ^= 1;
    std::fs::write(&tcc, &bad).unwrap();

    let out = tmp.path().join("job");
    let a = release
        .cell(Some(&cache), tmp.path(), &strs(&run_args(&out)))
        .assert()
        .success();
    let err = String::from_utf8_lossy(&a.get_output().stderr).into_owned();
    assert!(
        err.contains(&format!(
            "`bin/tcc`: sha256 {} where the manifest has {}",
            hex(&bad),
            hex(&good)
        )) && err.contains("removed and installed again"),
        "{err}"
    );
    assert_eq!(release.downloads(), 2, "downloaded and verified again");
    assert_eq!(
        std::fs::read(&tcc).unwrap(),
        good,
        "the release's bytes are back"
    );
    let job = read_json(&out.join("results.json"));
    assert_eq!(job["subject"]["sha256"], release.digest());
    assert_eq!(job["subject"]["tools"]["tcc"]["sha256"], hex(&good));
}

/// A tree left as its install left it is used as it is: no second download, `cached` said.
#[test]
#[cfg_attr(
    not(all(target_os = "linux", target_arch = "x86_64")),
    ignore = "the packaged tcc is the x86-64 Linux one"
)]
fn an_untouched_cached_tree_is_used_without_a_download() {
    let tmp = tempfile::tempdir().unwrap();
    let release = Release::new(tmp.path());
    let cache = tmp.path().join("cache");
    let json = |args: &[&str]| {
        let out = release
            .cell(Some(&cache), tmp.path(), args)
            .args(["--format", "json"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()
    };
    let first = json(&["install", "--toolchain", "tcc"]);
    assert_eq!(first["cached"], false);
    let mode = std::fs::metadata(&cache).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o700, "a new cache root is private");
    let again = json(&["install", "--toolchain", "tcc"]);
    assert_eq!(again["cached"], true);
    let out = tmp.path().join("job");
    release
        .cell(Some(&cache), tmp.path(), &strs(&run_args(&out)))
        .assert()
        .success();
    assert_eq!(release.downloads(), 1, "one download for all three");
    let job = read_json(&out.join("results.json"));
    assert_eq!(job["subject"]["sha256"], release.digest());
}

/// Regression: the CPU lock dir was trusted whoever owned it and its lock files opened
/// `O_CREAT` through links, so a link planted as `/tmp/cell-cpus` made a root job create files
/// in a root-only directory. Now the link is not followed, nothing is created, and the job
/// times without the lock with the reason in results.json and RESULTS.md.
#[test]
fn a_lock_dir_that_is_a_symlink_is_not_followed_and_the_reason_is_recorded() {
    let tmp = tempfile::tempdir().unwrap();
    let root = project(tmp.path(), VERSIONS, "");
    let private = tmp.path().join("root-only");
    std::fs::create_dir(&private).unwrap();
    std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o700)).unwrap();
    let link = tmp.path().join("cell-cpus");
    std::os::unix::fs::symlink(&private, &link).unwrap();
    let out = tmp.path().join("job");
    cell()
        .env("CELL_CPU_LOCKS", &link)
        .args(["run", "-q", "--cell", "local", "--toolchain", "clang"])
        .arg("--root")
        .arg(&root)
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    assert_eq!(
        std::fs::read_dir(&private).unwrap().count(),
        0,
        "a lock file was created through the link"
    );
    let timing = &read_json(&out.join("results.json"))["machine"]["timing"];
    let why = timing["lock_error"].as_str().unwrap_or_default();
    assert_eq!(
        why,
        format!("lock dir {}: a symbolic link, not followed", link.display()),
        "{timing}"
    );
    assert_eq!(timing["shared"], true, "{timing}");
    let md = std::fs::read_to_string(out.join("RESULTS.md")).unwrap();
    assert!(md.contains(&format!("no lock: {why}")), "{md}");
}
