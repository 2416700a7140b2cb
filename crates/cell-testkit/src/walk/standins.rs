//! The programs a walk puts first on `PATH`: what a hosted runner can do and this machine
//! must not (install packages as root, reach the internet), and `cargo build --bin cell`.
//!
//! - `sudo`: runs its arguments (`VAR=value` ones through `env`), as the runner's
//!   passwordless sudo would, without root.
//! - `apt-get`: `update` does nothing; `install` succeeds for packages this machine already
//!   has (by `dpkg-query`, else a program of that name on `PATH`; a `=version` pin is not
//!   checked) and fails with apt's exit code 100 for the others and for every package named in
//!   the walk's `apt-fail` list, which is how a test makes "one job fails to install".
//! - `curl`, `wget`: fail (exit 6, "could not resolve host") for every URL that is not on
//!   loopback, and for any URL containing an entry of the `download-fail` list; loopback URLs
//!   go to the real program.
//! - `cargo`: see [`CARGO`].
//! - `rustup`: see [`RUSTUP`].

use std::path::{Path, PathBuf};

const SUDO: &str = r#"#!/bin/bash
# walk stand-in for sudo: runs its arguments without root.
while [[ $# -gt 0 && "$1" == -* ]]; do shift; done
exec env "$@"
"#;

const APT_GET: &str = r#"#!/bin/bash
# walk stand-in for apt-get: installs nothing; see crates/cell-testkit/src/walk/standins.rs.
fail_list="@DIR@/apt-fail"
cmd=""
pkgs=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    -o|-t|-c) shift 2; continue ;;
    -*) ;;
    *) if [[ -z "$cmd" ]]; then cmd="$1"; else pkgs+=("$1"); fi ;;
  esac
  shift
done
case "$cmd" in
  update) echo "Reading package lists... Done (walk stand-in)"; exit 0 ;;
  install) ;;
  *) echo "E: walk stand-in apt-get: '$cmd' is not stood in for" >&2; exit 100 ;;
esac
for p in "${pkgs[@]}"; do
  name="${p%%=*}"
  if [[ -f "$fail_list" ]] && grep -qxF "$name" "$fail_list"; then
    echo "E: Unable to locate package $name (the walk test fails this install)" >&2
    exit 100
  fi
  if dpkg-query -W -f='${Status}' "$name" 2>/dev/null | grep -q "install ok installed"; then
    echo "$name is already the newest version (walk stand-in)"
  elif command -v "$name" >/dev/null 2>&1; then
    echo "$name is on PATH (walk stand-in)"
  else
    echo "E: walk stand-in apt-get installs nothing, and $name is not on this machine" >&2
    exit 100
  fi
done
"#;

const DOWNLOAD: &str = r#"#!/bin/bash
# walk stand-in for @TOOL@: no internet; loopback URLs go to the real @TOOL@.
fail_list="@DIR@/download-fail"
for a in "$@"; do
  case "$a" in
    http://*|https://*|ftp://*) ;;
    *) continue ;;
  esac
  if [[ -f "$fail_list" ]]; then
    while IFS= read -r bad; do
      if [[ -n "$bad" && "$a" == *"$bad"* ]]; then
        echo "@TOOL@: (6) Could not resolve host (the walk test fails $a)" >&2
        exit 6
      fi
    done < "$fail_list"
  fi
  case "$a" in
    http://127.0.0.1[:/]*|http://localhost[:/]*) ;;
    *) echo "@TOOL@: (6) Could not resolve host: the walk has no internet ($a)" >&2; exit 6 ;;
  esac
done
PATH="@SYSPATH@" exec @TOOL@ "$@"
"#;

/// Why `cargo` is stood in for: every job of the workflow builds cell with
/// `cargo build --release --locked --bin cell` (43–78 s from a warm cache on this project's
/// 2-vCPU machine, minutes cold, per job: docs/workflow.md). A walk test runs against the
/// `cell` that its own `cargo test` built (`CARGO_BIN_EXE_cell`), so that the binary under test
/// is the one of this checkout and the walk takes seconds; this copies that binary where the
/// build would leave it (`$CARGO_TARGET_DIR` or `./target`, `/release` or `/debug`). Any other
/// cargo command fails, so a workflow that starts needing one shows here.
pub const CARGO: &str = r#"#!/bin/bash
# walk stand-in for cargo: see `CARGO` in crates/cell-testkit/src/walk/standins.rs.
if [[ "$1" == build ]]; then
  profile=debug
  pkg=""
  prev=""
  for a in "$@"; do
    [[ "$a" == --release ]] && profile=release
    [[ "$prev" == -p || "$prev" == --package || "$prev" == --bin ]] && pkg="$a"
    prev="$a"
  done
  if [[ "$pkg" == cell || "$pkg" == cell-bench ]]; then
    dir="${CARGO_TARGET_DIR:-$PWD/target}/$profile"
    mkdir -p "$dir"
    cp "@CELL@" "$dir/cell"
    echo "    Finished \`$profile\` (walk stand-in: copied the cell under test to $dir/cell)"
    exit 0
  fi
fi
echo "walk stand-in cargo: only \`cargo build --bin cell\` is stood in for, not: cargo $*" >&2
exit 101
"#;

/// Why `rustup` is stood in for: the build job installs the pinned Rust with rustup, as a
/// setup action would; like the setup actions, the walk takes the Rust already here (the one
/// that built the cell under test) instead of downloading one into the runner's fresh `HOME`,
/// and never changes this machine's default toolchain. `toolchain list` names the asked-for
/// toolchain as installed.
pub const RUSTUP: &str = r#"#!/bin/bash
# walk stand-in for rustup: see `RUSTUP` in crates/cell-testkit/src/walk/standins.rs.
case "$1 $2" in
  "toolchain list") echo "${RUST:-stable}-walk (default)"; exit 0 ;;
  "toolchain install"|"default "*) exit 0 ;;
esac
echo "walk stand-in rustup: not stood in for: rustup $*" >&2
exit 1
"#;

fn write_exec(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}

/// Writes the stand-ins into `dir/bin` and returns that directory; the fail lists are
/// `dir/apt-fail` and `dir/download-fail` ([`set_fail_lists`]).
pub fn install(dir: &Path, cell_bin: &Path, system_path: &str) -> PathBuf {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let fill = |t: &str| {
        t.replace("@DIR@", &dir.display().to_string())
            .replace("@CELL@", &cell_bin.display().to_string())
            .replace("@SYSPATH@", system_path)
    };
    write_exec(&bin.join("sudo"), &fill(SUDO));
    write_exec(&bin.join("apt-get"), &fill(APT_GET));
    write_exec(&bin.join("cargo"), &fill(CARGO));
    write_exec(&bin.join("rustup"), RUSTUP);
    for tool in ["curl", "wget"] {
        write_exec(&bin.join(tool), &fill(&DOWNLOAD.replace("@TOOL@", tool)));
    }
    bin
}

/// Writes the packages `apt-get install` fails for and the URLs downloads fail for.
pub fn set_fail_lists(dir: &Path, apt: &[String], downloads: &[String]) {
    let lines = |v: &[String]| v.iter().map(|s| s.clone() + "\n").collect::<String>();
    std::fs::write(dir.join("apt-fail"), lines(apt)).unwrap();
    std::fs::write(dir.join("download-fail"), lines(downloads)).unwrap();
}
