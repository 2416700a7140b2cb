//! Projects the planning tests render workflows of: frozen pins, the reference toolchain and
//! tooth, one piece per toolchain (each with a row, except [`PYTHON`]), the `[http]` and
//! `[soak]` suites, cells, and a [`Project`] on disk. Loading one into a plan is left to the
//! tests, which have the model crate.

use std::fmt::Write as _;
use std::path::PathBuf;

use crate::snippets::{CLANG, Snippet, apt_toolchain as toolchain, c_row};

pub use crate::snippets::{GCC, PYTHON};

/// Pins of the fixtures: the real, verified values of the repository's versions.env, frozen
/// here so that a change to versions.env does not move these snapshots.
pub const VERSIONS: &str = "\
PHASES=mix
TOOTH_PHASE=mix
REFERENCE=c-O2
RUST_VERSION=1.95.0
GO_VERSION=1.26.7
DOTNET_VERSION=9.0.x
ZIG_VERSION=0.16.0
ZIG_URL_X86_64=https://ziglang.org/download/0.16.0/zig-x86_64-linux-0.16.0.tar.xz
ZIG_SHA256_X86_64=70e49664a74374b48b51e6f3fdfbf437f6395d42509050588bd49abe52ba3d00
ZIG_URL_AARCH64=https://ziglang.org/download/0.16.0/zig-aarch64-linux-0.16.0.tar.xz
ZIG_SHA256_AARCH64=ea4b09bfb22ec6f6c6ceac57ab63efb6b46e17ab08d21f69f3a48b38e1534f17
OHA_VERSION=1.16.0
";

/// The lines of [`VERSIONS`] a config refers to (cell refuses a key nothing uses): the protocol
/// keys, the Rust that builds cell, and every pin the TOML names (per-architecture ones too).
pub fn versions_for(toml: &str) -> String {
    let mut out = String::new();
    for line in VERSIONS.lines() {
        let key = line.split_once('=').unwrap().0;
        let base = key
            .strip_suffix("_X86_64")
            .or_else(|| key.strip_suffix("_AARCH64"))
            .unwrap_or(key);
        if matches!(key, "PHASES" | "TOOTH_PHASE" | "REFERENCE" | "RUST_VERSION")
            || toml.contains(&format!("\"{base}\""))
        {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// The part every fixture shares: the reference toolchain (clang, rows `c-O2` and `c-O0`),
/// the tooth and the workflow triggers.
pub static BASE: Snippet = Snippet::new(|| {
    let head = r#"
workload = "bench/workload"

[expect]
mix = "42"

[tooth]
slow = "c-O0"
fast = "c-O2"

[workflow]
cell = "source"
schedule = ["17 4 * * 1"]
branches = ["main"]
paths = ["versions.env", "cell/**", "bench/**", "crates/**", "Cargo.lock"]
"#;
    let o2 = c_row("c-O2", "clang", "clang -O2", "clang", &["-O2"]);
    let o0 = c_row("c-O0", "clang", "clang -O0", "clang", &["-O0"]);
    format!("{head}{CLANG}{o2}{o0}")
});

// Every toolchain fixture has a row: a toolchain without rows gets no workload job.

pub const RUST: &str = r#"
[toolchains.rust]
install = { setup = { action = "dtolnay/rust-toolchain", input = "toolchain", version = "RUST_VERSION" } }
tools.rustc = { version = ["--version", "--verbose"] }

[rows.rust-O3]
toolchain = "rust"
label = "rustc -C opt-level=3"
source = "rust"
build = ["{tool:rustc}", "-C", "opt-level=3", "-o", "{out}", "{src}/main.rs"]
run = ["{bin}", "{phase}"]
"#;

pub const GO: &str = r#"
[toolchains.go]
install = { setup = { action = "actions/setup-go", input = "go-version", version = "GO_VERSION" } }
tools.go = { version = ["version"] }

[rows.go]
toolchain = "go"
label = "go build"
source = "go"
build = ["{tool:go}", "build", "-o", "{out}", "{src}/main.go"]
run = ["{bin}", "{phase}"]
clock = "wall"
"#;

pub const ZIG: &str = r#"
[toolchains.zig]
install = { tarball = { url = "ZIG_URL", sha256 = "ZIG_SHA256", version = "ZIG_VERSION", strip = 1 } }
tools.zig = { version = ["version"] }

[rows.zig-fast]
toolchain = "zig"
label = "zig -O ReleaseFast"
source = "zig"
build = ["{tool:zig}", "build-exe", "-O", "ReleaseFast", "-femit-bin={out}", "{src}/main.zig"]
run = ["{bin}", "{phase}"]
"#;

/// Mono: one apt package, two tools.
pub static CS: Snippet = Snippet::new(|| {
    let row = r#"
[rows.cs-mono]
toolchain = "cs"
label = "mcs / mono"
source = "cs"
build = ["{tool:mcs}", "-optimize+", "-out:{out}", "{src}/main.cs"]
run = ["{tool:mono}", "{bin}", "{phase}"]
"#;
    toolchain("cs", "mono-mcs", &["mcs", "mono"]) + row
});

pub const DOTNET: &str = r#"
[toolchains.dotnet]
install = { setup = { action = "actions/setup-dotnet", input = "dotnet-version", version = "DOTNET_VERSION" } }
tools.dotnet = { version = ["--version"] }

[rows.dotnet]
toolchain = "dotnet"
label = "dotnet"
source = "dotnet"
build = ["{tool:dotnet}", "build", "-c", "Release", "-o", "{out}", "{src}"]
run = ["{tool:dotnet}", "{bin}", "{phase}"]
"#;

/// `[http]` with a server on each of clang ([`BASE`]), [`GO`], [`ZIG`] and [`PYTHON`]; its
/// source directories sit under `bench/http` (the default `[http] source`).
pub const HTTP: &str = r#"
[http]
tools = ["wrk", "oha"]
runs = 5
duration = 10
warmup = 2
startup_timeout = 10
stop_grace = 5
drain_timeout = 10
oha = "OHA_VERSION"

[http.servers.c]
toolchain = "clang"
label = "C epoll"
source = "c"
build = ["{tool:clang}", "-O2", "-o", "{out}", "{src}/main.c"]
run = ["{bin}", "{port}"]
port = 18083

[http.servers.go]
toolchain = "go"
label = "Go net/http"
source = "go"
build = ["{tool:go}", "build", "-o", "{out}", "{src}/main.go"]
run = ["{bin}", "{port}"]
port = 18082

[http.servers.python]
toolchain = "python"
label = "Python http.server"
source = "python"
run = ["{tool:python3}", "{src}/server.py", "{port}"]
port = 18084

[http.servers.zig]
toolchain = "zig"
label = "Zig std.http"
source = "zig"
build = ["{tool:zig}", "build-exe", "-O", "ReleaseFast", "-femit-bin={out}", "{src}/main.zig"]
run = ["{bin}", "{port}"]
port = 18085
"#;

/// `[soak]` of two servers of [`HTTP`], for half an hour.
pub const SOAK: &str = r#"
[soak]
servers = ["c", "python"]
rate = 200
duration = 1800
"#;

/// `[cells."<label>"]` for hosted labels.
pub fn hosted(labels: &[&str]) -> String {
    let mut out = String::new();
    for l in labels {
        let _ = write!(out, "\n[cells.\"{l}\"]\n");
    }
    out
}

/// A self-hosted cell.
pub fn self_hosted(label: &str, os: &str, arch: &str) -> String {
    format!("\n[cells.\"{label}\"]\nos = \"{os}\"\narch = \"{arch}\"\n")
}

/// An apt toolchain named `name` (package and tool of that name too) with one row of that
/// name, for plans with many toolchains.
pub fn apt_toolchain(name: &str) -> String {
    toolchain(name, name, &[name]) + &c_row(name, name, name, name, &[])
}

/// The three fixtures the snapshots show.
pub fn three_by_six() -> String {
    format!(
        "{BASE}{}{GCC}{RUST}{GO}{ZIG}{CS}",
        hosted(&["ubuntu-24.04", "ubuntu-24.04-arm", "ubuntu-22.04"])
    )
}

/// A release under test (Zig from its official tarball) on a self-hosted runner and a hosted one.
pub fn self_hosted_subject() -> String {
    format!(
        "{BASE}{}{}{ZIG}",
        self_hosted("bench-box", "linux", "x86_64"),
        hosted(&["ubuntu-24.04-arm"])
    )
}

/// Two hosted cells, the workload of clang and Go, Zig with a row, Python without, and the
/// http suite on all four with two soaked.
pub fn with_suites() -> String {
    format!(
        "{BASE}{}{GO}{ZIG}{PYTHON}{HTTP}{SOAK}",
        hosted(&["ubuntu-24.04", "ubuntu-24.04-arm"])
    )
}

/// [`with_suites`] without `[http]` and `[soak]`.
pub fn without_suites() -> String {
    format!(
        "{BASE}{}{GO}{ZIG}{PYTHON}",
        hosted(&["ubuntu-24.04", "ubuntu-24.04-arm"])
    )
}

/// A project under a temporary directory, removed when dropped.
pub struct Project {
    _tmp: tempfile::TempDir,
    /// The project's directory (versions.env, cell/cell.toml, bench/workload/c).
    pub root: PathBuf,
}

impl Project {
    /// A project of `toml` with the pins of [`VERSIONS`] it refers to.
    pub fn of(toml: &str) -> Self {
        Self::new(&versions_for(toml), toml)
    }

    /// Writes `versions.env`, `cell/cell.toml` and every row and server source directory the
    /// TOML names (rows under `bench/workload`, servers under `bench/http`).
    pub fn new(versions: &str, toml: &str) -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("proj");
        std::fs::create_dir_all(root.join("cell")).unwrap();
        std::fs::write(root.join("versions.env"), versions).unwrap();
        std::fs::write(root.join("cell/cell.toml"), toml).unwrap();
        let mut table = "";
        for line in toml.lines() {
            if line.starts_with('[') {
                table = line;
            }
            if let Some(src) = line
                .strip_prefix("source = \"")
                .and_then(|s| s.strip_suffix('"'))
            {
                let under = if table.starts_with("[http.servers.") {
                    "bench/http"
                } else if table == "[http]" {
                    continue;
                } else {
                    "bench/workload"
                };
                std::fs::create_dir_all(root.join(under).join(src)).unwrap();
            }
        }
        Self { _tmp: tmp, root }
    }
}
