//! The Python cell's committed history (`bench/cell/cell.py` and its soak script), read: the
//! typed form of what it wrote, checked, and mapped onto [`Imported`] (a workload cell) and
//! [`ImportedSoakRun`] (a soak, which names no cell).
//!
//! Every name goes through the typed ids (one safe segment each), so a row named `../x` is
//! refused where it is read. A field the old file lacks stays absent. Figures that do not
//! hold together (a median that is not the median of the kept repetitions, a ratio that is not
//! the row's median over its job's reference) are refused: an import keeps numbers, it does
//! not repair them.

mod soak;
mod workload;

use std::path::{Path, PathBuf};

#[cfg(doc)]
use crate::Imported;
use crate::store::{RunDirName, StoreError};
use crate::time::Date;
use crate::{CellResult, ImportSource, ImportedFile, ImportedSoakRun, ImportedTool, RunId, Sha256};
use soak::{OldSoak, soak};
use workload::{OldWorkload, workload};

/// The largest old results file read; the largest committed one is 48 KB.
pub const MAX_FILE_BYTES: u64 = 16 << 20;

/// How deep under the directory imported a `results.json` is looked for
/// (`results/<run>/<cell>/results.json` is three levels).
const MAX_DEPTH: usize = 6;

/// A `results.json` found under the directory imported.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Found {
    /// Where it is.
    pub path: PathBuf,
    /// Its path relative to the directory imported, `/`-separated (its file name when a file
    /// was named).
    pub rel: String,
}

/// Every `results.json` under `dir` (or `dir` itself when it is a file), sorted by path.
/// Dot-directories and symbolic links are passed over: an import reads the history as
/// committed, never what a link points at.
pub fn find(dir: &Path) -> Result<Vec<Found>, StoreError> {
    let io = |path: &Path| {
        let path = path.to_owned();
        move |error| StoreError::Io { path, error }
    };
    let meta = std::fs::metadata(dir).map_err(io(dir))?;
    if meta.is_file() {
        let rel = dir
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        return Ok(vec![Found {
            path: dir.to_owned(),
            rel,
        }]);
    }
    let mut out = Vec::new();
    let mut stack = vec![(dir.to_owned(), String::new(), 0)];
    while let Some((d, prefix, depth)) = stack.pop() {
        for e in std::fs::read_dir(&d).map_err(io(&d))? {
            let e = e.map_err(io(&d))?;
            let name = e.file_name().to_string_lossy().into_owned();
            let kind = e.file_type().map_err(io(&e.path()))?;
            let rel = format!("{prefix}{name}");
            if name.starts_with('.') || kind.is_symlink() {
                continue;
            }
            if kind.is_dir() && depth < MAX_DEPTH {
                stack.push((e.path(), format!("{rel}/"), depth + 1));
            } else if kind.is_file() && name == crate::store::RESULTS_JSON {
                out.push(Found {
                    path: e.path(),
                    rel,
                });
            }
        }
    }
    out.sort_by(|a, b| a.rel.cmp(&b.rel));
    Ok(out)
}

/// What one old file becomes.
#[derive(Clone, Debug, PartialEq)]
pub enum Import {
    /// A workload cell of a run.
    Cell {
        /// The run dir it belongs in, from the file's own date and run id.
        name: RunDirName,
        /// The cell, marked imported.
        result: Box<CellResult>,
    },
    /// The soak of a run.
    Soak {
        /// The run dir it belongs in, from the file's own date and run id.
        name: RunDirName,
        /// The record, beside the run's cells.
        record: Box<ImportedSoakRun>,
    },
}

impl Import {
    /// The run dir it belongs in.
    pub fn name(&self) -> &RunDirName {
        match self {
            Self::Cell { name, .. } | Self::Soak { name, .. } => name,
        }
    }
}

/// Why a file of the old history cannot be imported.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// Not JSON, a key given twice, a number out of range, a name that is not a safe id, a
    /// field of the wrong type.
    #[error("{0}")]
    Json(#[from] serde_json::Error),
    /// JSON, but not a file of the Python cell.
    #[error("{0}")]
    Shape(String),
    /// Parses, but its figures or names do not hold together.
    #[error("{0}")]
    Inconsistent(String),
    /// A date that is no UTC day of the calendar, or a run id that is not one: the run dir it
    /// would name is not the run's.
    #[error("{0}")]
    Field(String),
}

/// The run dir of the run the file names: its UTC date (from `date`, a date or a date and
/// time with its zone, read at `date_field`) and its run id (`run_id`, at `id_field`).
fn run_dir_name(
    date: &str,
    date_field: &str,
    run_id: &str,
    id_field: &str,
) -> Result<RunDirName, ImportError> {
    let date = Date::of_timestamp(date).ok_or_else(|| {
        ImportError::Field(format!(
            "{date_field} `{}` is no UTC day: write a calendar date (YYYY-MM-DD) or a date and time with its zone (2026-09-13T21:11:02Z, +02:00)",
            shown(date)
        ))
    })?;
    let id = RunId::parse(run_id).map_err(|e| ImportError::Field(format!("{id_field} {e}")))?;
    RunDirName::new(&date.to_string(), &id.to_string())
        .map_err(|e| ImportError::Field(format!("{date_field} and {id_field}: {e}")))
}

/// At most 64 characters of `s`, on one line: what a message quotes of a value from a file.
fn shown(s: &str) -> String {
    let mut out: String = crate::escape::one_line(s).chars().take(64).collect();
    if out.len() < s.len() {
        out.push('…');
    }
    out
}

fn inconsistent(msg: String) -> ImportError {
    ImportError::Inconsistent(msg)
}

/// Reads one old `results.json` (`text`, found at `rel` with digest `sha256`): a workload cell
/// or a soak, told apart by their keys.
pub fn read(text: &str, rel: &str, sha256: &Sha256) -> Result<Import, ImportError> {
    let value: serde_json::Value = crate::read::from_str_unique(text)?;
    let Some(obj) = value.as_object() else {
        return Err(ImportError::Shape(
            "not a JSON object: not a results.json of the Python cell".into(),
        ));
    };
    let source = |file, old_cell_id| ImportSource {
        tool: ImportedTool::PythonCell,
        file,
        path: rel.to_owned(),
        sha256: sha256.clone(),
        old_cell_id,
    };
    if obj.contains_key("schema_version") {
        Err(ImportError::Shape(
            "it has a schema_version: already a results file of this tool, nothing to import"
                .into(),
        ))
    } else if obj.contains_key("cell") && obj.contains_key("rows") {
        let old: OldWorkload = serde_json::from_str(text)?;
        workload(old, source)
    } else if obj.contains_key("conditions") && obj.contains_key("results") {
        let old: OldSoak = serde_json::from_str(text)?;
        soak(&old, source(ImportedFile::Soak, None))
    } else {
        Err(ImportError::Shape(
            "neither a workload results.json (keys cell, rows) nor a soak results.json (keys conditions, results) of the Python cell".into(),
        ))
    }
}
