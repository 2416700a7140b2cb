//! Configuration errors: each names the file and the line or field, and what to write instead.

use std::path::{Path, PathBuf};

use cell_schema::{BadSha256, ToolchainName};

use crate::{LOCAL_LABEL, join};

/// A configuration that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file cannot be read.
    #[error("{}: {error} (run cell from the repository root, or pass --root DIR)", path.display())]
    Io {
        /// The configuration file it is about.
        path: PathBuf,
        /// What the OS said (not a `source`: the message already shows it once).
        error: std::io::Error,
    },
    /// A `versions.env` line is wrong.
    #[error("{}:{line}: {msg}", path.display())]
    Line {
        /// The configuration file it is about.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// What is wrong and what to write instead.
        msg: String,
    },
    /// `cell.toml` is not valid TOML or has a key we do not know.
    #[error("{}: {msg}", path.display())]
    Toml {
        /// The configuration file it is about.
        path: PathBuf,
        /// The parser's message (it names line and column).
        msg: String,
    },
    /// A field of `cell.toml` does not resolve.
    #[error("{}: {field}: {msg}", path.display())]
    Field {
        /// The configuration file it is about.
        path: PathBuf,
        /// Dotted path of the field, e.g. `rows.c-O2.toolchain`.
        field: String,
        /// What is wrong and what to write instead.
        msg: String,
    },
}

/// A field of `cell/cell.toml` whose value cannot be used, before the file is known: the
/// suites' settings are checked again after a command line changed them, with no file.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {msg}")]
pub struct FieldError {
    /// Dotted path of the field, e.g. `http.servers.go.port`.
    pub field: String,
    /// What is wrong and what to write instead.
    pub msg: String,
}

impl FieldError {
    /// An error of `field`.
    pub fn new(field: impl Into<String>, msg: impl Into<String>) -> Self {
        Self {
            field: field.into(),
            msg: msg.into(),
        }
    }

    /// The same error, in the file it was found in.
    pub fn in_file(self, path: &Path) -> ConfigError {
        ConfigError::Field {
            path: path.to_owned(),
            field: self.field,
            msg: self.msg,
        }
    }
}

/// A cell, toolchain or server asked for by name that the plan does not have; the message
/// lists the ones it has.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LookupError {
    /// No such cell (`local` always exists).
    #[error(
        "unknown cell `{label}`: cell/cell.toml has {}, and `{local}` is always there",
        join(.known),
        local = LOCAL_LABEL
    )]
    Cell {
        /// The label asked for.
        label: String,
        /// The labels of `[cells]`.
        known: Vec<String>,
    },
    /// No such toolchain.
    #[error("unknown toolchain `{name}`: cell/cell.toml has {}", join(.known))]
    Toolchain {
        /// The name asked for.
        name: String,
        /// The names of `[toolchains]`.
        known: Vec<String>,
    },
    /// No such server in `[http.servers]`.
    #[error("unknown server `{name}`: [http.servers] has {}", join(.known))]
    Server {
        /// The name asked for.
        name: String,
        /// The names of `[http.servers]`.
        known: Vec<String>,
    },
}

/// Why the URL and digest of a tarball install cannot be had on an architecture.
#[derive(Debug, thiserror::Error)]
pub enum TarballError {
    /// The toolchain is installed some other way.
    #[error("toolchain `{0}` is not installed from a tarball")]
    NotTarball(ToolchainName),
    /// None of the keys of a per-platform lookup is set.
    #[error("versions.env has none of {} for {platform}: add {}=...", tried.join(", "), tried[0])]
    MissingKey {
        /// The plain key, e.g. `ZIG_URL`.
        key: String,
        /// Every key tried, most specific first.
        tried: Vec<String>,
        /// `<os>-<arch>`.
        platform: String,
    },
    /// A platform's own URL key with a less specific digest key.
    #[error("{url_key} has no digest of its own: {sha256_key} is less specific; add {want}=...")]
    Unpaired {
        /// The URL key found.
        url_key: String,
        /// The digest key found.
        sha256_key: String,
        /// The digest key to add.
        want: String,
    },
    /// A URL template that cannot be filled, or neither a key nor a template.
    #[error("{0}")]
    Template(String),
    /// The digest is not 64 hex digits.
    #[error("{key}: {error}")]
    BadSha256 {
        /// The plain key of the digest, as `[toolchains]` names it.
        key: String,
        /// What is wrong with it (not a `source`: the message already shows it once).
        error: BadSha256,
    },
}

/// A name of `cell/cell.toml` (toolchain, row, cell, server) that is empty, starts with `.`
/// or `-`, or has a character other than letters, digits, `.`, `_` and `-`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("`{0}`: names use letters, digits, `.`, `_` and `-` only")]
pub struct NameError(pub String);
