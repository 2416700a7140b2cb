//! What can stop `cell plan`: each error says what to change.

use std::path::PathBuf;

/// A workflow that cannot be planned or written.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    /// A configuration value the workflow cannot use.
    #[error("{}: {field}: {msg}", path.display())]
    Config {
        /// The file (`cell/cell.toml` or `versions.env`).
        path: PathBuf,
        /// The field or key.
        field: String,
        /// What is wrong and what to write instead.
        msg: String,
    },
    /// `--cells` or `--toolchains` named something the plan does not have.
    #[error("unknown {what} {}: cell/cell.toml has {}", quote(unknown), known.join(", "))]
    Unknown {
        /// `cell`, `toolchain` or `suite job`.
        what: &'static str,
        /// The names not found.
        unknown: Vec<String>,
        /// The names there are.
        known: Vec<String>,
    },
    /// `--toolchains` named something that has no job to select.
    #[error("{0}")]
    Select(String),
    /// `--subject` does not match what `versions.env` pins.
    #[error("--subject {subject}: {msg}")]
    Subject {
        /// The version asked for.
        subject: String,
        /// Why it cannot be honoured and what to do.
        msg: String,
    },
    /// Reading or writing a file failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The workflow file that could not be read or written.
        path: PathBuf,
        /// What the OS said.
        source: std::io::Error,
    },
    /// The YAML writer failed (a bug).
    #[error("rendering the workflow: {0}")]
    Render(String),
}

fn quote(names: &[String]) -> String {
    names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}
