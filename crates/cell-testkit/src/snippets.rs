//! The TOML of a toolchain installed by apt and of a row that builds `main.c`, each written
//! once, and the pieces several fixtures share. A piece is a [`Snippet`]: a static that reads
//! as a `&str` and formats inline (`format!("{BASE}{GCC}")`).

use std::fmt::{self, Write as _};
use std::ops::Deref;
use std::sync::LazyLock;

/// A piece of TOML built on first use from the functions below.
pub struct Snippet(LazyLock<String>);

impl Snippet {
    pub const fn new(build: fn() -> String) -> Self {
        Self(LazyLock::new(build))
    }
}

impl Deref for Snippet {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Snippet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self)
    }
}

impl fmt::Debug for Snippet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

/// `[toolchains.<name>]` installed by `apt-get install <package>`, each of `tools` asked for
/// its `--version`. Starts with a blank line, so pieces concatenate.
pub fn apt_toolchain(name: &str, package: &str, tools: &[&str]) -> String {
    let mut out = format!(
        "\n[toolchains.{name}]\ninstall = {{ apt = {{ package = {} }} }}\n",
        quote(package)
    );
    for tool in tools {
        let _ = writeln!(out, "tools.{tool} = {{ version = [\"--version\"] }}");
    }
    out
}

/// `[rows.<name>]` of `toolchain` that builds `{src}/main.c` of the `c` source with
/// `{tool:<tool>} <flags…> -o {out}` and runs `{bin} {phase}`. Starts with a blank line.
pub fn c_row(name: &str, toolchain: &str, label: &str, tool: &str, flags: &[&str]) -> String {
    let mut build = vec![format!("{{tool:{tool}}}")];
    build.extend(flags.iter().map(|f| (*f).to_owned()));
    build.extend(["-o", "{out}", "{src}/main.c"].map(str::to_owned));
    let build: Vec<String> = build.iter().map(|a| quote(a)).collect();
    format!(
        "\n[rows.{name}]\ntoolchain = {}\nlabel = {}\nsource = \"c\"\nbuild = [{}]\nrun = [\"{{bin}}\", \"{{phase}}\"]\n",
        quote(toolchain),
        quote(label),
        build.join(", ")
    )
}

/// A TOML basic string.
fn quote(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

/// The clang toolchain, the reference of every fixture.
pub static CLANG: Snippet = Snippet::new(|| apt_toolchain("clang", "clang", &["clang"]));

/// A second C toolchain and its row `gcc-O2`.
pub static GCC: Snippet = Snippet::new(|| {
    apt_toolchain("gcc", "gcc", &["gcc"]) + &c_row("gcc-O2", "gcc", "gcc -O2", "gcc", &["-O2"])
});

/// Python, a toolchain without rows: it only runs a server.
pub static PYTHON: Snippet = Snippet::new(|| apt_toolchain("python", "python3", &["python3"]));

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_read_as_toml_written_by_hand() {
        assert_eq!(
            &*GCC,
            r#"
[toolchains.gcc]
install = { apt = { package = "gcc" } }
tools.gcc = { version = ["--version"] }

[rows.gcc-O2]
toolchain = "gcc"
label = "gcc -O2"
source = "c"
build = ["{tool:gcc}", "-O2", "-o", "{out}", "{src}/main.c"]
run = ["{bin}", "{phase}"]
"#
        );
        assert_eq!(
            format!("{PYTHON}"),
            "\n[toolchains.python]\ninstall = { apt = { package = \"python3\" } }\ntools.python3 = { version = [\"--version\"] }\n"
        );
        assert!(c_row("r", "t", "say \"hi\"", "t", &[]).contains("label = \"say \\\"hi\\\"\"\n"));
    }
}
