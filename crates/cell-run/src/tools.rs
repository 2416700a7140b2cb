//! Finding a toolchain's programs and recording their versions from the exact binary used.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use cell_model::{Tool, Toolchain};
use cell_schema::{ToolName, ToolVersion};

/// A toolchain whose every tool was found, with each tool's absolute path and version.
#[derive(Clone, Debug)]
pub struct Probed {
    /// Absolute path per tool: the path builds and runs invoke.
    pub paths: BTreeMap<ToolName, PathBuf>,
    /// Versions as printed.
    pub versions: BTreeMap<ToolName, ToolVersion>,
}

/// Why a toolchain is not usable here.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Missing {
    /// The first tool not found.
    pub tool: String,
    /// What to do about it.
    pub hint: String,
}

impl std::fmt::Display for Missing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "not installed: `{}` is not on PATH ({})",
            self.tool, self.hint
        )
    }
}

/// Looks a program up on PATH (or takes it as is when it holds a `/`).
pub fn which(program: &str) -> Option<PathBuf> {
    which_in(program, std::env::var_os("PATH").as_deref())
}

/// Looks a program up in the directories of `path`, a value shaped like PATH (or takes it as
/// is when it holds a `/`).
pub fn which_in(program: &str, path: Option<&std::ffi::OsStr>) -> Option<PathBuf> {
    if program.contains('/') {
        let p = PathBuf::from(program);
        return is_executable(&p).then(|| std::path::absolute(&p).unwrap_or(p));
    }
    std::env::split_paths(path?)
        .filter(|d| d.is_absolute())
        .map(|d| d.join(program))
        .find(|p| is_executable(p))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    p.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Finds every tool of a toolchain on PATH and asks each for its version.
pub fn probe(tc: &Toolchain) -> Result<Probed, Missing> {
    probe_in(tc, None)
}

/// Finds every tool of a toolchain, in `dir` only when given (an installed tarball's tree:
/// never a same-named program elsewhere on PATH), else on PATH.
pub fn probe_in(tc: &Toolchain, dir: Option<&Path>) -> Result<Probed, Missing> {
    let mut paths = BTreeMap::new();
    let mut versions = BTreeMap::new();
    for tool in tc.tools.values() {
        let found = match dir {
            Some(d) if !tool.program.contains('/') => {
                Some(d.join(&tool.program)).filter(|p| is_executable(p))
            }
            _ => which(&tool.program),
        };
        let Some(path) = found else {
            return Err(Missing {
                tool: tool.program.clone(),
                hint: tc.hint.clone(),
            });
        };
        versions.insert(tool.name.clone(), version(tool, &path));
        paths.insert(tool.name.clone(), path);
    }
    Ok(Probed { paths, versions })
}

/// Runs the version command of `tool` at `path`: stdout if it printed any, else stderr.
fn version(tool: &Tool, path: &Path) -> ToolVersion {
    let out = Command::new(path)
        .args(&tool.version_args)
        .stdin(Stdio::null())
        .output();
    let printed = match out {
        Ok(o) => {
            let stdout = String::from_utf8_lossy(&o.stdout).trim().to_owned();
            if stdout.is_empty() {
                String::from_utf8_lossy(&o.stderr).trim().to_owned()
            } else {
                stdout
            }
        }
        Err(e) => format!("(version command failed: {e})"),
    };
    let mut argv = vec![path.display().to_string()];
    argv.extend(tool.version_args.iter().cloned());
    let resolved = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_owned());
    let (bytes, sha256) = identity(&resolved);
    ToolVersion {
        path: path.display().to_string(),
        resolved: resolved.display().to_string(),
        argv,
        printed,
        sha256,
        bytes,
    }
}

/// Size and SHA-256 of a tool's resolved binary: which program it was, beyond what it says.
pub fn identity(resolved: &Path) -> (Option<u64>, Option<cell_schema::Sha256>) {
    match cell_fetch::hash_file(resolved) {
        Ok((bytes, sha)) => (Some(bytes), Some(sha)),
        Err(_) => (None, None),
    }
}
