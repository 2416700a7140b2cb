//! The committed history: `results/<YYYY-MM-DD>-<run-id>/<cell-id>/results.json`, read in
//! run order (parsed date, then numeric run id), for the gate and the report.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use cell_schema::{CellId, CellResult};

/// One run directory of the history.
#[derive(Clone, Debug)]
pub struct HistoryRun {
    /// The directory.
    pub dir: PathBuf,
    /// Its name, `<date>-<run-id>`.
    pub name: String,
    /// `YYYY-MM-DD`.
    pub date: String,
    /// The run id as written (`4242001`, `local-194158`).
    pub run_id: String,
    /// Its cells.
    pub cells: BTreeMap<CellId, CellResult>,
}

impl HistoryRun {
    /// The order of runs: date, then numeric ids by value (local stamps after numbers of the
    /// same date, by stamp).
    pub fn order_key(&self) -> (String, u8, u64, String) {
        order_key(&self.date, &self.run_id)
    }
}

fn order_key(date: &str, id: &str) -> (String, u8, u64, String) {
    match id.parse::<u64>() {
        Ok(n) => (date.to_owned(), 0, n, String::new()),
        Err(_) => (date.to_owned(), 1, 0, id.to_owned()),
    }
}

/// A history that cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    /// The directory or a file cannot be read.
    #[error("{}: {error}", path.display())]
    Io {
        /// Where.
        path: PathBuf,
        /// Why.
        error: std::io::Error,
    },
    /// A results file that is not a cell result we understand.
    #[error("{}: {msg}", path.display())]
    Bad {
        /// The file.
        path: PathBuf,
        /// Why.
        msg: String,
    },
}

/// Splits `<YYYY-MM-DD>-<run-id>`.
pub fn parse_run_dir_name(name: &str) -> Option<(String, String)> {
    let date = name.get(..10)?;
    let rest = name.get(10..)?.strip_prefix('-')?;
    let ok = date.len() == 10
        && date.as_bytes()[4] == b'-'
        && date.as_bytes()[7] == b'-'
        && date
            .bytes()
            .enumerate()
            .all(|(i, b)| i == 4 || i == 7 || b.is_ascii_digit());
    (ok && !rest.is_empty()).then(|| (date.to_owned(), rest.to_owned()))
}

/// Reads one run directory.
pub fn load_run(dir: &Path) -> Result<HistoryRun, HistoryError> {
    let name = dir
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default()
        .to_owned();
    let (date, run_id) = parse_run_dir_name(&name).ok_or_else(|| HistoryError::Bad {
        path: dir.to_owned(),
        msg: "not a run directory: its name must be <YYYY-MM-DD>-<run-id>".into(),
    })?;
    let mut cells = BTreeMap::new();
    let entries = std::fs::read_dir(dir).map_err(|error| HistoryError::Io {
        path: dir.to_owned(),
        error,
    })?;
    let mut subdirs: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    subdirs.sort();
    for sub in subdirs {
        let file = sub.join("results.json");
        if !file.is_file() {
            continue;
        }
        let text = std::fs::read_to_string(&file).map_err(|error| HistoryError::Io {
            path: file.clone(),
            error,
        })?;
        let cell = cell_schema::read_cell(&text).map_err(|e| HistoryError::Bad {
            path: file.clone(),
            msg: e.to_string(),
        })?;
        cells.insert(cell.cell.id.clone(), cell);
    }
    Ok(HistoryRun {
        dir: dir.to_owned(),
        name,
        date,
        run_id,
        cells,
    })
}

/// Every run under `results`, oldest first. Directories whose names are not run names
/// (dot-directories of an interrupted write, stray folders) are skipped.
pub fn load_history(results: &Path) -> Result<Vec<HistoryRun>, HistoryError> {
    if !results.exists() {
        return Ok(Vec::new());
    }
    let entries = std::fs::read_dir(results).map_err(|error| HistoryError::Io {
        path: results.to_owned(),
        error,
    })?;
    let mut runs = Vec::new();
    for e in entries.filter_map(Result::ok) {
        let p = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        if p.is_dir() && !name.starts_with('.') && parse_run_dir_name(&name).is_some() {
            runs.push(load_run(&p)?);
        }
    }
    runs.sort_by_key(HistoryRun::order_key);
    Ok(runs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_dir_names() {
        assert_eq!(
            parse_run_dir_name("2026-11-29-4242001"),
            Some(("2026-11-29".into(), "4242001".into()))
        );
        assert_eq!(
            parse_run_dir_name("2026-11-29-local-194158"),
            Some(("2026-11-29".into(), "local-194158".into()))
        );
        assert_eq!(parse_run_dir_name("2026-11-29"), None);
        assert_eq!(parse_run_dir_name("notes"), None);
        assert_eq!(parse_run_dir_name("2026-1x-29-5"), None);
    }

    #[test]
    fn numeric_ids_order_by_value_within_a_date() {
        let mut keys = [
            order_key("2026-11-29", "100"),
            order_key("2026-11-29", "99"),
            order_key("2026-11-28", "500"),
            order_key("2026-11-29", "local-1"),
        ];
        keys.sort();
        let ids: Vec<String> = keys
            .iter()
            .map(|k| format!("{} {} {}", k.0, k.2, k.3))
            .collect();
        assert_eq!(
            ids,
            [
                "2026-11-28 500 ",
                "2026-11-29 99 ",
                "2026-11-29 100 ",
                "2026-11-29 0 local-1"
            ]
        );
    }
}
