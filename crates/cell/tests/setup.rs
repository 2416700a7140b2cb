//! `scripts/setup` run for real: one line per tool on stdout and nothing else, and when an
//! install fails, what the package manager printed. The package managers (`apt-get`, `sudo`,
//! `cargo`, `pip` through `python3 -m pip`) are stand-ins in front of PATH, so a test never
//! installs anything on the machine it runs on: a stand-in that must not run fails loudly and
//! leaves a mark the test reads.

mod common;

use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::repo_root;

/// The tools `scripts/setup --test` handles, in the order it prints them.
const TEST_TOOLS: &[&str] = &[
    "clang",
    "gcc",
    "go",
    "mcs",
    "mono",
    "valgrind",
    "tcc",
    "git",
    "wrk",
    "ab",
    "python3",
    "node",
    "php",
    "ruby",
    "webrick",
    "puma",
    "zig",
    "oha",
    "actionlint",
    "check-jsonschema",
    "zizmor",
    "shellcheck",
];

/// The tools `scripts/setup` handles without options.
const BASE_TOOLS: &[&str] = &["clang", "gcc", "go", "mcs", "mono", "valgrind", "zig"];

/// A line `setup: <tool> <version> (<state>)`: the tool, its version (dotted digits) and the
/// state (`already there` or `installed`, perhaps followed by `, in <dir>: put it on PATH`);
/// `None` for a line of any other shape.
fn parse(line: &str) -> Option<(&str, &str, &str)> {
    let rest = line.strip_prefix("setup: ")?;
    let (tool, rest) = rest.split_once(' ')?;
    let (version, state) = rest.split_once(' ')?;
    let state = state.strip_prefix('(')?.strip_suffix(')')?;
    let dotted = version.split('.').count() >= 2
        && version
            .split('.')
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    let base = state.split_once(", in ").map_or(state, |(s, _)| s);
    let known = matches!(base, "already there" | "installed");
    (dotted && known && !tool.is_empty()).then_some((tool, version, base))
}

/// The first `name` on this process's PATH.
fn on_path(name: &str) -> PathBuf {
    std::env::split_paths(&std::env::var_os("PATH").unwrap())
        .map(|d| d.join(name))
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("{name} is not on PATH (scripts/setup --test installs it)"))
}

fn write_script(path: &Path, body: &str) {
    std::fs::write(path, format!("#!/bin/sh\n{body}")).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// A stand-in that must never run: it says so on stderr, appends its command line to `mark`
/// and fails.
fn refusing(dir: &Path, name: &str, mark: &Path) {
    write_script(
        &dir.join(name),
        &format!(
            "echo \"stand-in {name} must not run: $*\" >&2\necho \"{name} $*\" >> '{}'\nexit 97\n",
            mark.display()
        ),
    );
}

fn setup(path: &std::ffi::OsStr, args: &[&str]) -> Output {
    Command::new("/bin/sh")
        .arg(repo_root().join("scripts/setup"))
        .args(args)
        .env("PATH", path)
        .output()
        .unwrap()
}

fn lines(out: &Output) -> Vec<String> {
    String::from_utf8(out.stdout.clone())
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// On a machine that has everything (the test lane runs after `scripts/setup --test`), the
/// script installs nothing and prints exactly one line per tool.
#[test]
fn on_a_machine_that_has_everything_setup_prints_one_line_per_tool_and_installs_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let bin = tmp.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let mark = tmp.path().join("called");
    for name in ["apt-get", "sudo", "cargo", "pip", "pip3"] {
        refusing(&bin, name, &mark);
    }
    // python3 stays itself for everything but `-m pip`.
    write_script(
        &bin.join("python3"),
        &format!(
            "if [ \"${{1:-}}\" = -m ] && [ \"${{2:-}}\" = pip ]; then\n  echo \"stand-in python3 -m pip must not run: $*\" >&2\n  echo \"python3 $*\" >> '{}'\n  exit 97\nfi\nexec '{}' \"$@\"\n",
            mark.display(),
            on_path("python3").display()
        ),
    );
    let mut dirs = vec![bin];
    dirs.extend(std::env::split_paths(&std::env::var_os("PATH").unwrap()));
    let path = std::env::join_paths(dirs).unwrap();

    let out = setup(&path, &["--test"]);
    let called = std::fs::read_to_string(&mark).unwrap_or_default();
    assert!(
        called.is_empty(),
        "scripts/setup --test tried to install on this machine:\n{called}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{out:?}");
    assert!(
        out.stderr.is_empty(),
        "nothing but the tools' lines: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines = lines(&out);
    let mut tools = Vec::new();
    for line in &lines {
        let (tool, _, state) = parse(line)
            .unwrap_or_else(|| panic!("not `setup: <tool> <version> (<state>)`: {line}"));
        assert_eq!(state, "already there", "{line}");
        tools.push(tool);
    }
    assert_eq!(lines.len(), TEST_TOOLS.len(), "{lines:#?}");
    assert_eq!(tools, TEST_TOOLS);
}

/// A PATH of one directory: links to the real programs `scripts/setup` runs (valgrind left
/// out, so it is missing), and `apt-get` and `sudo` stand-ins that `install` runs.
fn without_valgrind(dir: &Path, apt_get_install: &str) -> PathBuf {
    let bin = dir.join("bin");
    std::fs::create_dir(&bin).unwrap();
    for name in [
        "dirname", "id", "mktemp", "rm", "cat", "sed", "grep", "head", "env", "clang", "gcc", "go",
        "mcs", "mono", "zig",
    ] {
        symlink(on_path(name), bin.join(name)).unwrap();
    }
    // Runs its command as the caller, who may not be root: the stand-in apt-get needs no root.
    write_script(&bin.join("sudo"), "exec \"$@\"\n");
    write_script(
        &bin.join("apt-get"),
        &format!(
            "echo 'Reading package lists...'\n[ \"$1\" = update ] && exit 0\n{apt_get_install}"
        ),
    );
    bin
}

/// A failed `apt-get install` shows what apt-get printed, names the command and exits 1,
/// before a single tool line.
#[test]
fn a_failing_install_prints_what_the_package_manager_printed() {
    let tmp = tempfile::tempdir().unwrap();
    let bin = without_valgrind(
        tmp.path(),
        "for last; do :; done\necho \"E: Unable to locate package $last (stand-in apt-get)\" >&2\nexit 100\n",
    );

    let out = setup(bin.as_os_str(), &[]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let stderr = String::from_utf8(out.stderr.clone()).unwrap();
    assert!(
        stderr.starts_with("setup: apt-get install valgrind failed (exit 100); its output:\n"),
        "{stderr}"
    );
    assert!(stderr.contains("Reading package lists...\n"), "{stderr}");
    assert!(
        stderr.contains("E: Unable to locate package valgrind (stand-in apt-get)\n"),
        "{stderr}"
    );
    assert!(lines(&out).is_empty(), "{out:?}");
}

/// An install that works says `installed` with the version now there, and its log stays
/// hidden.
#[test]
fn a_tool_installed_says_so_with_its_version_and_nothing_else() {
    let tmp = tempfile::tempdir().unwrap();
    let valgrind = on_path("valgrind");
    // Installed as a program that runs the real one (Debian's valgrind runs `$0.bin`, so a
    // link to it would not).
    let bin = without_valgrind(
        tmp.path(),
        &format!(
            "echo 'Setting up valgrind (stand-in apt-get)'\nto=\"$(dirname \"$0\")/valgrind\"\nprintf '#!/bin/sh\\nexec %s \"$@\"\\n' '{}' > \"$to\"\nexec '{}' +x \"$to\"\n",
            valgrind.display(),
            on_path("chmod").display()
        ),
    );

    let out = setup(bin.as_os_str(), &[]);
    assert!(out.status.success(), "{out:?}");
    assert!(out.stderr.is_empty(), "{out:?}");
    let lines = lines(&out);
    let parsed: Vec<_> = lines.iter().filter_map(|l| parse(l)).collect();
    assert_eq!(parsed.len(), lines.len(), "{lines:#?}");
    let tools: Vec<&str> = parsed.iter().map(|(t, _, _)| *t).collect();
    assert_eq!(tools, BASE_TOOLS);
    let real = Command::new(&valgrind).arg("--version").output().unwrap();
    let real = String::from_utf8(real.stdout).unwrap();
    for (tool, version, state) in parsed {
        if tool == "valgrind" {
            assert_eq!(state, "installed");
            assert_eq!(format!("valgrind-{version}"), real.trim_end());
        } else {
            assert_eq!(state, "already there", "{tool}");
        }
    }
}
