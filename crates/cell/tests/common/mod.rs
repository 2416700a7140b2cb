//! The tiny C project of `cell-testkit` for CLI tests (built and timed by the real `cell` with
//! real clang), and what only works inside this package's tests: `cell` as a command.
#![allow(
    dead_code,
    unused_imports,
    reason = "each test binary uses a different part; `expect` would fail in those that use all"
)]

pub use cell_testkit::tiny::*;
pub use cell_testkit::{read_json, repo_root};

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
