//! The tiny C project the CLI tests build and time for real with clang (and gcc): a workload
//! whose rows take milliseconds, its `versions.env` and `cell.toml`. The project frozen under
//! `fixtures/workload/project` (recorded by two real `cell local` runs) is this one with
//! [`GCC_TOML`], [`GHOST_TOML`], a broken row and [`WRONG_TOML`]; a test below keeps it so.

use std::path::{Path, PathBuf};

use crate::snippets::{CLANG, Snippet, apt_toolchain, c_row};

pub use crate::snippets::GCC as GCC_TOML;

/// The workload: `mix` prints 42, `fib` prints 7, no phase prints both; `-DITER=<n>` sets the
/// work, `-DWRONG` makes `mix` print 41.
pub const TINY_C: &str = include_str!("../fixtures/workload/project/bench/workload/c/main.c");

/// Four repetitions of which one is dropped, phases `mix` and `fib`, the tooth on `mix` with
/// at least 2×, `c-fast` the reference.
pub const VERSIONS: &str = include_str!("../fixtures/workload/project/versions.env");

/// The expected answers, the tooth and clang with its two rows: `c-fast` and `c-slow` (4× the
/// work).
pub static BASE_TOML: Snippet = Snippet::new(|| {
    let head = r#"
workload = "bench/workload"

[expect]
mix = "42"
fib = "7"

[tooth]
slow = "c-slow"
fast = "c-fast"
"#;
    let fast = c_row("c-fast", "clang", "clang -O2", "clang", &["-O2"]);
    let slow = c_row(
        "c-slow",
        "clang",
        "clang -O2, 4x the work",
        "clang",
        &["-O2", "-DITER=40000000UL"],
    );
    format!("{head}{CLANG}{fast}{slow}")
});

/// A toolchain whose tool exists nowhere, and its row.
pub static GHOST_TOML: Snippet = Snippet::new(|| {
    apt_toolchain("ghost", "ghost-compiler", &["ghostc"])
        + &c_row("ghost-O2", "ghost", "ghostc", "ghostc", &[])
});

/// A clang row whose `mix` answers 41.
pub static WRONG_TOML: Snippet = Snippet::new(|| {
    c_row(
        "c-wrong",
        "clang",
        "prints 41 for mix",
        "clang",
        &["-O2", "-DWRONG"],
    )
});

/// Writes the project under `dir/proj` with `versions` and [`BASE_TOML`] + `extra_toml`;
/// returns its root.
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_frozen_project_is_this_one() {
        // The broken row of the recording names a file that does not exist.
        let broken = r#"
[rows.c-broken]
toolchain = "clang"
label = "does not compile"
source = "c"
build = ["{tool:clang}", "-O2", "-DNOPE=", "-o", "{out}", "{src}/missing.c"]
run = ["{bin}", "{phase}"]
"#;
        let tmp = tempfile::tempdir().unwrap();
        let extra = format!("{GCC_TOML}{GHOST_TOML}{broken}{WRONG_TOML}");
        let written = crate::files(&project(tmp.path(), VERSIONS, &extra));
        let frozen = crate::files(&crate::fixtures().join("workload/project"));
        assert_eq!(written, frozen);
    }
}
