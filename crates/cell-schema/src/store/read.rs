//! The readers: one run dir (`load_run`), the whole history (`load_history`), and the
//! history by name alone with one cell read on demand (`HistoryIndex`); the checked-out
//! commit.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::naming::{IMPORTED_SOAK_JSON, RESULTS_JSON, RUN_JSON, RunDirName};
use super::{StoreError, io_at};
use crate::validate::{self, Problem};
use crate::{CellId, CellResult, ImportedSoakRun, RunRecord, SchemaError};

/// One run dir as read back.
#[derive(Clone, Debug)]
pub struct HistoryRun {
    /// Where it was read from.
    pub dir: PathBuf,
    /// `<date>-<run-id>`.
    pub name: RunDirName,
    /// The merged result of each cell, by cell id.
    pub cells: BTreeMap<CellId, CellResult>,
    /// Its `run.json`, when it has one and was read ([`load_run`] reads it; [`load_history`]
    /// does not, since what it serves compares cells only).
    pub record: Option<RunRecord>,
    /// Its `imported-soak.json`, when `cell import` wrote one.
    pub imported_soak: Option<ImportedSoakRun>,
}

impl HistoryRun {
    /// Whether the run was imported from another tool's history (every cell of it is, and an
    /// imported soak is): no measurement of this tool.
    pub fn imported(&self) -> bool {
        (self.imported_soak.is_some() || !self.cells.is_empty())
            && self.cells.values().all(CellResult::is_imported)
    }

    /// Whether any job of the run was timed by the scripted test executor.
    pub fn scripted(&self) -> bool {
        self.cells
            .values()
            .flat_map(|c| c.jobs.values())
            .any(|j| j.protocol.scripted)
    }

    /// What the run record says is missing (expired or corrupt artifacts, jobs with no
    /// result), one line each; empty without a record.
    pub fn missing(&self) -> &[String] {
        self.record.as_ref().map_or(&[], |r| r.missing.as_slice())
    }
}

/// Why one `<cell-id>/results.json` cannot serve as history.
#[derive(Debug, thiserror::Error)]
pub enum Unusable {
    /// The file cannot be read (permissions, not UTF-8).
    #[error("cannot be read: {0}")]
    Io(std::io::Error),
    /// Not JSON, not a cell results file, a newer schema, a missing or duplicate field.
    #[error("{0}")]
    Bad(SchemaError),
    /// It parses, but holds values no measurement can produce.
    #[error("{}", impossible_lines(.0))]
    Impossible(Vec<Problem>),
    /// It holds another cell than the one its directory names: the store writes a cell only
    /// under its own id, so the file was moved or edited by hand.
    #[error("it holds cell `{0}`, not the cell its directory names")]
    OtherCell(CellId),
}

pub(super) fn impossible_lines(problems: &[Problem]) -> String {
    const SHOWN: usize = 3;
    let mut s: Vec<String> = problems
        .iter()
        .take(SHOWN)
        .map(ToString::to_string)
        .collect();
    if problems.len() > SHOWN {
        s.push(format!("and {} more", problems.len() - SHOWN));
    }
    s.join("; ")
}

impl Unusable {
    fn into_store_error(self, path: PathBuf) -> StoreError {
        match self {
            Self::Io(error) => StoreError::Io { path, error },
            Self::Bad(error) => StoreError::Bad { path, error },
            Self::Impossible(problems) => StoreError::Impossible { path, problems },
            Self::OtherCell(id) => StoreError::OtherCell { path, id },
        }
    }
}

/// A results file of the history that was left out, and why.
#[derive(Debug)]
pub struct SkippedFile {
    /// The file.
    pub path: PathBuf,
    /// The run dir it sits in.
    pub run: RunDirName,
    /// The name of its cell dir (the cell id it would have had).
    pub cell: String,
    /// Why it was left out.
    pub reason: Unusable,
}

impl SkippedFile {
    /// `skipped <path>: <reason>; fix or remove the file`: the line commands print.
    pub fn notice(&self) -> String {
        format!(
            "skipped {}: {}; fix or remove the file",
            self.path.display(),
            self.reason
        )
    }
}

/// Every readable run of a results dir, oldest first, and the files left out.
#[derive(Debug, Default)]
pub struct History {
    /// The runs, each with the cells that could be read and passed [`validate::cell_result`].
    pub runs: Vec<HistoryRun>,
    /// Every `<cell-id>/results.json` left out, in the order of the runs.
    pub skipped: Vec<SkippedFile>,
}

fn read_text(path: &Path) -> Result<String, StoreError> {
    std::fs::read_to_string(path).map_err(io_at(path))
}

/// One cell's `results.json` in the cell dir named `dir_name`: readable, possible, and of
/// that cell.
fn read_cell_file(file: &Path, dir_name: &str) -> Result<CellResult, Unusable> {
    let text = std::fs::read_to_string(file).map_err(Unusable::Io)?;
    let cell = crate::read_cell(&text).map_err(Unusable::Bad)?;
    let problems = validate::cell_result(&cell);
    if !problems.is_empty() {
        return Err(Unusable::Impossible(problems));
    }
    if cell.cell.id.as_str() != dir_name {
        return Err(Unusable::OtherCell(cell.cell.id));
    }
    Ok(cell)
}

/// Reads one run dir: every `<cell-id>/results.json` under it, and `run.json`. Any file that
/// cannot be read or holds impossible values is an error naming it: the run is judged or
/// rewritten, so all of it must hold.
pub fn load_run(dir: &Path) -> Result<HistoryRun, StoreError> {
    let (run, mut skipped) = read_run(dir, true)?;
    match skipped.drain(..).next() {
        Some(s) => Err(s.reason.into_store_error(s.path)),
        None => Ok(run),
    }
}

/// One run dir, with the cell files that cannot serve left out and returned beside it.
fn read_run(dir: &Path, with_record: bool) -> Result<(HistoryRun, Vec<SkippedFile>), StoreError> {
    let file_name = dir.file_name().and_then(|n| n.to_str()).unwrap_or_default();
    let name = RunDirName::parse(file_name).map_err(|error| StoreError::NotARun {
        path: dir.to_owned(),
        error,
    })?;
    let mut subdirs: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(io_at(dir))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    subdirs.sort();
    let mut cells = BTreeMap::new();
    let mut skipped = Vec::new();
    for sub in subdirs {
        let file = sub.join(RESULTS_JSON);
        if !file.is_file() {
            continue;
        }
        let dir_name = sub
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        match read_cell_file(&file, &dir_name) {
            Ok(cell) => {
                cells.insert(cell.cell.id.clone(), cell);
            }
            Err(reason) => skipped.push(SkippedFile {
                cell: dir_name,
                path: file,
                run: name.clone(),
                reason,
            }),
        }
    }
    let record_path = dir.join(RUN_JSON);
    let record = if with_record && record_path.is_file() {
        let text = read_text(&record_path)?;
        Some(crate::read_record(&text).map_err(|error| StoreError::Bad {
            path: record_path,
            error,
        })?)
    } else {
        None
    };
    let soak_path = dir.join(IMPORTED_SOAK_JSON);
    let mut imported_soak = None;
    if soak_path.is_file() {
        let text = read_text(&soak_path)?;
        match crate::read_imported_soak(&text) {
            Ok(s) => imported_soak = Some(s),
            // The history leaves a bad record out by path, as it does a bad cell file.
            Err(error) if !with_record => skipped.push(SkippedFile {
                path: soak_path,
                run: name.clone(),
                cell: String::new(),
                reason: Unusable::Bad(error),
            }),
            Err(error) => {
                return Err(StoreError::Bad {
                    path: soak_path,
                    error,
                });
            }
        }
    }
    let run = HistoryRun {
        dir: dir.to_owned(),
        name,
        cells,
        record,
        imported_soak,
    };
    Ok((run, skipped))
}

/// Every run under `results`, oldest first. Directories whose names are not run names
/// (dot-directories of an interrupted write, stray folders) are passed over; a cell's
/// `results.json` that cannot be read or holds impossible values is left out of its run and
/// listed in [`History::skipped`] with the reason, so one bad file never costs the others.
pub fn load_history(results: &Path) -> Result<History, StoreError> {
    let index = HistoryIndex::open(results)?;
    let mut history = History::default();
    for name in index.runs() {
        let (run, skipped) = index.read_run(name)?;
        history.runs.extend(run);
        history.skipped.extend(skipped);
    }
    history
        .skipped
        .sort_by(|a, b| (&a.run, &a.path).cmp(&(&b.run, &b.path)));
    Ok(history)
}

/// The runs of a results dir by their names alone, oldest first ([`RunDirName`]'s order):
/// listed, never read. The history's order is the names' (no index file is committed: two
/// collects pushing at once would conflict on it), so a reader that needs a few runs reads
/// only those, through [`HistoryIndex::read_cell`] or [`HistoryIndex::read_run`].
#[derive(Clone, Debug)]
pub struct HistoryIndex {
    dir: PathBuf,
    runs: Vec<RunDirName>,
}

impl HistoryIndex {
    /// Lists the run dirs under `results`, passing over what [`load_history`] passes over
    /// (dot-directories of an interrupted write, names that are not run names, files). A
    /// `results` that does not exist is an empty history.
    pub fn open(results: &Path) -> Result<Self, StoreError> {
        let mut runs = Vec::new();
        if results.exists() {
            for e in std::fs::read_dir(results)
                .map_err(io_at(results))?
                .filter_map(Result::ok)
            {
                let name = e.file_name().to_string_lossy().into_owned();
                if name.starts_with('.') {
                    continue;
                }
                // The entry's own type needs no further call; a link is followed, as a
                // reader of the dir would.
                let is_dir = e
                    .file_type()
                    .is_ok_and(|t| t.is_dir() || (t.is_symlink() && e.path().is_dir()));
                if let Ok(run) = RunDirName::parse(&name)
                    && is_dir
                {
                    runs.push(run);
                }
            }
        }
        runs.sort();
        Ok(Self {
            dir: results.to_owned(),
            runs,
        })
    }

    /// The results dir listed.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Every run, oldest first.
    pub fn runs(&self) -> &[RunDirName] {
        &self.runs
    }

    /// The run named `name` (`<date>-<run-id>` as written), when it is one of the history.
    pub fn find(&self, name: &str) -> Option<&RunDirName> {
        self.runs.iter().find(|r| r.to_string() == name)
    }

    /// The directory of `run`.
    pub fn run_dir(&self, run: &RunDirName) -> PathBuf {
        self.dir.join(run.to_string())
    }

    /// The one file `<run>/<cell>/results.json`, read and checked as [`load_history`]
    /// checks every file: `None` when the run has no such cell (or `cell` could be no
    /// directory's name), else the cell or the file left out with its reason.
    pub fn read_cell(
        &self,
        run: &RunDirName,
        cell: &CellId,
    ) -> Option<Result<CellResult, SkippedFile>> {
        // A cell id from a file is safe already; one made in code is checked here, so no
        // name climbs out of the run dir.
        if !crate::ids::is_safe_id(cell.as_str()) {
            return None;
        }
        let file = self.run_dir(run).join(cell.as_str()).join(RESULTS_JSON);
        if !file.is_file() {
            return None;
        }
        Some(
            read_cell_file(&file, cell.as_str()).map_err(|reason| SkippedFile {
                path: file,
                run: run.clone(),
                cell: cell.to_string(),
                reason,
            }),
        )
    }

    /// One whole run as [`load_history`] reads it: the cells that serve, and the files left
    /// out; no run when every cell it has was left out (such a run is no run of the history).
    pub fn read_run(
        &self,
        run: &RunDirName,
    ) -> Result<(Option<HistoryRun>, Vec<SkippedFile>), StoreError> {
        let (read, skipped) = read_run(&self.run_dir(run), false)?;
        let kept = !read.cells.is_empty() || skipped.is_empty();
        Ok((kept.then_some(read), skipped))
    }
}

/// The commit checked out at `dir`, as `git rev-parse HEAD` prints it; `None` outside a git
/// work tree or without git. Where a job or a collect reads the commit it records.
pub fn checkout_commit(dir: &Path) -> Option<String> {
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["rev-parse", "--verify", "--quiet", "HEAD"])
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    let sha = String::from_utf8(out.stdout).ok()?.trim().to_owned();
    (out.status.success() && sha.len() >= 40 && sha.bytes().all(|b| b.is_ascii_hexdigit()))
        .then_some(sha)
}
