//! A small project on disk for CLI tests: its own versions.env, cell.toml and a tiny C
//! workload whose rows take milliseconds, built and timed by the real `cell` with real clang.
#![allow(dead_code, reason = "each test binary uses a different part")]

use std::path::{Path, PathBuf};

pub const TINY_C: &str = r#"#include <stdio.h>
#ifndef ITER
#define ITER 10000000UL
#endif
static unsigned long work(unsigned long n) {
    unsigned long h = 1469598103934665603UL;
    for (unsigned long i = 0; i < n; i++) h = (h ^ i) * 1099511628211UL;
    return h;
}
int main(int argc, char **argv) {
    char p = argc > 1 ? argv[1][0] : 0;
    volatile unsigned long sink = work(ITER);
    (void)sink;
#ifdef WRONG
    if (p == 'm') { puts("41"); return 0; }
#endif
    if (p == 'm') puts("42");
    else if (p == 'f') puts("7");
    else { puts("42"); puts("7"); }
    return 0;
}
"#;

pub mod standin;

/// A second toolchain for the tiny project.
pub const GCC_TOML: &str = r#"
[toolchains.gcc]
install = { apt = { package = "gcc" } }
tools.gcc = { version = ["--version"] }

[rows.gcc-O2]
toolchain = "gcc"
label = "gcc -O2"
source = "c"
build = ["{tool:gcc}", "-O2", "-o", "{out}", "{src}/main.c"]
run = ["{bin}", "{phase}"]
"#;

/// A toolchain whose tool exists nowhere.
pub const GHOST_TOML: &str = r#"
[toolchains.ghost]
install = { apt = { package = "ghost-compiler" } }
tools.ghostc = { version = ["--version"] }

[rows.ghost-O2]
toolchain = "ghost"
label = "ghostc"
source = "c"
build = ["{tool:ghostc}", "-o", "{out}", "{src}/main.c"]
run = ["{bin}", "{phase}"]
"#;

pub const VERSIONS: &str =
    "REPS=4\nDROP=1\nREPS_MAX=4\nPHASES=mix,fib\nTOOTH_PHASE=mix\nTOOTH_MIN=2\nREFERENCE=c-fast\n";

pub const BASE_TOML: &str = r#"
workload = "bench/workload"

[expect]
mix = "42"
fib = "7"

[tooth]
slow = "c-slow"
fast = "c-fast"

[toolchains.clang]
install = { apt = { package = "clang" } }
tools.clang = { version = ["--version"] }

[rows.c-fast]
toolchain = "clang"
label = "clang -O2"
source = "c"
build = ["{tool:clang}", "-O2", "-o", "{out}", "{src}/main.c"]
run = ["{bin}", "{phase}"]

[rows.c-slow]
toolchain = "clang"
label = "clang -O2, 4x the work"
source = "c"
build = ["{tool:clang}", "-O2", "-DITER=40000000UL", "-o", "{out}", "{src}/main.c"]
run = ["{bin}", "{phase}"]
"#;

/// Writes a project under `dir` with `versions` and `BASE_TOML` + `extra_toml`.
pub fn project(dir: &Path, versions: &str, extra_toml: &str) -> PathBuf {
    let root = dir.join("proj");
    std::fs::create_dir_all(root.join("cell")).unwrap();
    std::fs::create_dir_all(root.join("bench/workload/c")).unwrap();
    std::fs::write(root.join("versions.env"), versions).unwrap();
    std::fs::write(
        root.join("cell/cell.toml"),
        format!("{BASE_TOML}\n{extra_toml}"),
    )
    .unwrap();
    std::fs::write(root.join("bench/workload/c/main.c"), TINY_C).unwrap();
    root
}

/// The repository root (two levels above this crate).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// `cell` as a command.
pub fn cell() -> assert_cmd::Command {
    let mut c = assert_cmd::Command::cargo_bin("cell").unwrap();
    c.env_remove("CELL_ROOT");
    c
}

/// Validates a JSON value against the schema `cell schema` prints.
pub fn assert_valid(kind: &str, value: &serde_json::Value) {
    let out = cell().args(["schema", kind]).output().unwrap();
    assert!(out.status.success());
    let schema: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let validator = jsonschema::validator_for(&schema).expect("the emitted schema compiles");
    let errors: Vec<String> = validator
        .iter_errors(value)
        .map(|e| format!("{} at {}", e, e.instance_path))
        .collect();
    assert!(
        errors.is_empty(),
        "{kind} does not validate:\n{}",
        errors.join("\n")
    );
}

pub fn read_json(path: &Path) -> serde_json::Value {
    serde_json::from_str(
        &std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())),
    )
    .unwrap()
}
