//! Configuration errors: each names the file and the line or field, and what to write instead.

use std::path::PathBuf;

/// A configuration that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file cannot be read.
    #[error("{}: {error} (run cell from the repository root, or pass --root DIR)", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What the OS said (not a `source`: the message already shows it once).
        error: std::io::Error,
    },
    /// A `versions.env` line is wrong.
    #[error("{}:{line}: {msg}", path.display())]
    Line {
        /// The file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// What is wrong and what to write instead.
        msg: String,
    },
    /// `cell.toml` is not valid TOML or has a key we do not know.
    #[error("{}: {msg}", path.display())]
    Toml {
        /// The file.
        path: PathBuf,
        /// The parser's message (it names line and column).
        msg: String,
    },
    /// A field of `cell.toml` does not resolve.
    #[error("{}: {field}: {msg}", path.display())]
    Field {
        /// The file.
        path: PathBuf,
        /// Dotted path of the field, e.g. `rows.c-O2.toolchain`.
        field: String,
        /// What is wrong and what to write instead.
        msg: String,
    },
}
