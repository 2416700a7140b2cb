//! The results store: the one owner of the on-disk layout of job dirs and run dirs.
//!
//! ```text
//! <job dir>/results.json facts.json RESULTS.md soak/<server>.svg soak/overlay.svg
//! results/<YYYY-MM-DD>-<run-id>/run.json gate.json imported-soak.json
//! results/<YYYY-MM-DD>-<run-id>/<cell-id>/results.json RESULTS.md facts/<toolchain>.json
//!                                        soak/<server>.svg soak/overlay.svg
//! ```
//!
//! Paths are built here only, from typed names ([`RunDirName`], [`CellId`], [`ChartName`]),
//! never from strings a caller glued together. A run dir and a job dir are each written
//! through a staging sibling and one rename, so a reader never sees half of one (a failed
//! write leaves the whole set or nothing); the same run dir again is a no-op.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use crate::ids::MAX_ID_LEN;
use crate::validate::{self, Problem};
use crate::{
    AnyJob, CellId, CellResult, Facts, ImportedSoakRun, RunRecord, SchemaError, ServerName,
    ToolchainName,
};

/// A job's or a cell's results.
pub const RESULTS_JSON: &str = "results.json";
/// A job's machine and tool facts.
pub const FACTS_JSON: &str = "facts.json";
/// The human-readable results beside `results.json`.
pub const RESULTS_MD: &str = "RESULTS.md";
/// The run-level record of a run dir.
pub const RUN_JSON: &str = "run.json";
/// What `cell gate` decided about a run dir.
pub const GATE_JSON: &str = "gate.json";
/// An imported soak of another tool's history, beside the cells of its run dir (the old soak
/// file names no cell).
pub const IMPORTED_SOAK_JSON: &str = "imported-soak.json";
/// A cell dir's folder of per-job facts, `facts/<toolchain>.json`.
pub const FACTS_DIR: &str = "facts";
/// The folder of soak charts beside `RESULTS.md`.
pub const SOAK_CHART_DIR: &str = "soak";
/// Where `cell local` keeps each run's job dirs, beside the run dirs.
pub const JOBS_DIR: &str = "jobs";
/// Where `cell local` writes the report, beside the run dirs.
pub const REPORT_DIR: &str = "report";

/// `cell-<cell-id>-<job>-a<attempt>`: the artifact of one matrix job, and the folder its files
/// sit in. The workflow passes GitHub expressions for the parts; `cell local` passes values.
pub fn job_artifact(cell: &str, job: &str, attempt: &str) -> String {
    format!("cell-{cell}-{job}-a{attempt}")
}

/// The attempt of a [`job_artifact`] name; `None` for any other name.
pub fn artifact_attempt(name: &str) -> Option<u32> {
    let (stem, n) = name.rsplit_once("-a")?;
    stem.starts_with("cell-").then_some(())?;
    if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    n.parse().ok()
}

/// The name of a run dir, `<YYYY-MM-DD>-<run-id>`: the run's own date and its id (a GitHub
/// run id, or `local-<stamp>`). Ordered as runs happened: by date, then numeric ids by value,
/// then local stamps.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RunDirName {
    date: String,
    id: String,
}

/// A string that is not a run dir name.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum BadRunDirName {
    /// Not `YYYY-MM-DD-<id>` of a day the calendar has.
    #[error(
        "`{0}` is not a run directory name: it must be <YYYY-MM-DD>-<run-id>, of a day the calendar has"
    )]
    Shape(String),
    /// The id would not be one path segment.
    #[error(
        "run id `{0}`: use letters, digits, `.`, `_` and `-` only, not starting with `.` or `-`, at most {MAX_ID_LEN} bytes"
    )]
    Id(String),
}

impl RunDirName {
    /// The name of run `id` on `date` (`YYYY-MM-DD`, a day the calendar has). The id is
    /// bounded like every identifier, so the name and its staging sibling fit in a file name.
    pub fn new(date: &str, id: &str) -> Result<Self, BadRunDirName> {
        let shown =
            |s: &str| crate::escape::one_line(&s.chars().take(MAX_ID_LEN).collect::<String>());
        if crate::time::Date::parse(date).is_none() {
            return Err(BadRunDirName::Shape(format!(
                "{}-{}",
                shown(date),
                shown(id)
            )));
        }
        let segment = !id.is_empty()
            && id.len() <= MAX_ID_LEN
            && !id.starts_with(['.', '-'])
            && id
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b));
        if !segment {
            return Err(BadRunDirName::Id(shown(id)));
        }
        Ok(Self {
            date: date.to_owned(),
            id: id.to_owned(),
        })
    }

    /// Splits `<YYYY-MM-DD>-<run-id>`.
    pub fn parse(name: &str) -> Result<Self, BadRunDirName> {
        let shape = || BadRunDirName::Shape(name.to_owned());
        let date = name.get(..10).ok_or_else(shape)?;
        let id = name
            .get(10..)
            .and_then(|r| r.strip_prefix('-'))
            .ok_or_else(shape)?;
        Self::new(date, id)
    }

    /// `YYYY-MM-DD`.
    pub fn date(&self) -> &str {
        &self.date
    }

    /// The run id as written (`4242001`, `local-194158`).
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Date, then numeric ids by value, then other ids (local stamps) by text. Two numeric
    /// ids of one value (`7`, `007`) are told apart by their text, so the order agrees with
    /// equality and a listing of run dirs has one order whatever the file system returns.
    fn order_key(&self) -> (&str, u8, u64, &str) {
        match self.id.parse::<u64>() {
            Ok(n) => (&self.date, 0, n, &self.id),
            Err(_) => (&self.date, 1, 0, &self.id),
        }
    }
}

impl fmt::Display for RunDirName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.date, self.id)
    }
}

impl PartialOrd for RunDirName {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for RunDirName {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.order_key().cmp(&other.order_key())
    }
}

/// A chart beside a `RESULTS.md`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum ChartName {
    /// One soak server's chart, `soak/<server>.svg`.
    Soak(ServerName),
    /// Every soak server's RSS on one chart, `soak/overlay.svg`.
    SoakOverlay,
}

impl ChartName {
    /// Its path, relative to the dir that holds `RESULTS.md`.
    pub fn path(&self) -> String {
        match self {
            Self::Soak(s) => format!("{SOAK_CHART_DIR}/{}.svg", segment(s.as_str())),
            Self::SoakOverlay => format!("{SOAK_CHART_DIR}/overlay.svg"),
        }
    }
}

/// Keeps `[A-Za-z0-9._-]`; anything else (and a leading dot) becomes `_`, so a name is always
/// one safe path segment.
pub fn segment(s: &str) -> String {
    let mut out: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if out.is_empty() || out.starts_with('.') {
        out.replace_range(0..0, "_");
    }
    out
}

/// One file to write: a `/`-separated path relative to a dir, and its bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Output {
    /// Path relative to the dir, `/`-separated.
    pub path: String,
    /// The bytes to write.
    pub bytes: Vec<u8>,
}

impl Output {
    /// A file at `path` (relative, `/`-separated).
    pub fn new(path: impl Into<String>, bytes: Vec<u8>) -> Self {
        Self {
            path: path.into(),
            bytes,
        }
    }
}

/// Everything a job dir holds, the results typed and the rest rendered.
#[derive(Clone, Debug)]
pub struct JobDir<'a> {
    /// The job's result (`results.json`; a workload job's `facts.json` is taken from it).
    pub result: &'a AnyJob,
    /// `RESULTS.md`.
    pub markdown: String,
    /// Charts beside it.
    pub charts: BTreeMap<ChartName, String>,
}

impl JobDir<'_> {
    /// The files, in the order they are written.
    pub fn files(&self) -> Vec<Output> {
        let mut out = vec![Output::new(
            RESULTS_JSON,
            crate::to_record_json(self.result).into_bytes(),
        )];
        if let AnyJob::Workload(j) = self.result {
            out.push(Output::new(
                FACTS_JSON,
                crate::to_record_json(&j.facts()).into_bytes(),
            ));
        }
        out.push(Output::new(RESULTS_MD, self.markdown.clone().into_bytes()));
        out.extend(
            self.charts
                .iter()
                .map(|(c, svg)| Output::new(c.path(), svg.clone().into_bytes())),
        );
        out
    }
}

/// One cell of a run dir.
#[derive(Clone, Debug)]
pub struct CellDir<'a> {
    /// The merged cell (`results.json`).
    pub result: &'a CellResult,
    /// `facts/<toolchain>.json` of each workload job.
    pub facts: &'a BTreeMap<ToolchainName, Facts>,
    /// `RESULTS.md`.
    pub markdown: String,
    /// Charts beside it.
    pub charts: BTreeMap<ChartName, String>,
}

impl CellDir<'_> {
    /// The files, paths relative to the run dir.
    pub fn files(&self) -> Vec<Output> {
        let dir = self.result.cell.id.as_str();
        let mut out = vec![
            Output::new(
                format!("{dir}/{RESULTS_JSON}"),
                crate::to_record_json(self.result).into_bytes(),
            ),
            Output::new(
                format!("{dir}/{RESULTS_MD}"),
                self.markdown.clone().into_bytes(),
            ),
        ];
        out.extend(
            self.charts.iter().map(|(c, svg)| {
                Output::new(format!("{dir}/{}", c.path()), svg.clone().into_bytes())
            }),
        );
        out.extend(self.facts.iter().map(|(tc, f)| {
            Output::new(
                format!("{dir}/{FACTS_DIR}/{tc}.json"),
                crate::to_record_json(f).into_bytes(),
            )
        }));
        out
    }
}

/// A store operation that failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// A file or directory cannot be read or written.
    #[error("{}: {error}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// What the OS said.
        error: std::io::Error,
    },
    /// A results file that is not one this build understands.
    #[error("{}: {error}", path.display())]
    Bad {
        /// The results file.
        path: PathBuf,
        /// Why it cannot be read (not a results file, or a newer schema).
        error: SchemaError,
    },
    /// A results file whose values no measurement can produce.
    #[error("{}: {}; fix or remove the file", path.display(), impossible_lines(problems))]
    Impossible {
        /// The results file.
        path: PathBuf,
        /// Every impossible value in it.
        problems: Vec<Problem>,
    },
    /// A cell's results file under the directory of another cell.
    #[error("{}: it holds cell `{id}`, not the cell its directory names; move or remove the file", path.display())]
    OtherCell {
        /// The results file.
        path: PathBuf,
        /// The cell id it holds.
        id: CellId,
    },
    /// A directory that is not a run dir.
    #[error("{}: {error}", path.display())]
    NotARun {
        /// The directory whose name is not `<YYYY-MM-DD>-<run-id>`.
        path: PathBuf,
        /// What is wrong with the name.
        error: BadRunDirName,
    },
    /// The run dir exists with other content.
    #[error(
        "{} already exists with different content: nothing was changed (pass --replace to overwrite it)",
        .0.display()
    )]
    Exists(PathBuf),
    /// A path built from a name that is not one safe segment (`[A-Za-z0-9._-]`, not starting
    /// with `.`): nothing was written.
    #[error("`{}`: a name in this path is not one safe segment ([A-Za-z0-9._-], not starting with `.`); nothing was written", crate::escape::one_line(.0))]
    BadName(String),
    /// A path the write needs, or one name in it, is longer than the system takes: nothing
    /// was written.
    #[error(
        "{}: longer than a path ({PATH_MAX} bytes) or a file name ({NAME_MAX} bytes) may be here, with its staging sibling; nothing was written: write to a directory with a shorter path",
        .0.display()
    )]
    TooLong(PathBuf),
    /// The same attempt of the run is there with other content: collecting one attempt again
    /// must give the same bytes, and only a strictly later attempt replaces it.
    #[error(
        "{}: holds attempt {attempt} ({there}), and this collect has attempt {attempt} too ({here}) with other content: nothing was changed. Only a later attempt of the run replaces it; if what is there is wrong, pass --replace to overwrite it",
        path.display()
    )]
    SameAttempt {
        /// The run dir.
        path: PathBuf,
        /// The attempt both hold.
        attempt: u32,
        /// The jobs and attempts the run dir holds.
        there: String,
        /// The jobs and attempts this collect has.
        here: String,
    },
    /// A later attempt of the run is already there: an older one never replaces it.
    #[error(
        "{}: holds {newer}, newer than what this collect has; nothing was changed (a later attempt's collect already wrote it)",
        path.display()
    )]
    Newer {
        /// The run dir.
        path: PathBuf,
        /// The jobs and attempts it holds that this collect does not match.
        newer: String,
    },
}

/// When a run dir that exists with other content is swapped for the new one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Replace {
    /// Never (`cell local`, and `cell collect` by default): different content is an error.
    Never,
    /// When the new run is a strictly later attempt than the old dir's and every job the old
    /// dir holds is in the new one from an attempt at least as new: a re-run's collect
    /// replaces what an earlier attempt wrote, never the reverse, and never the same attempt
    /// with other content ([`StoreError::SameAttempt`]).
    IfNewer,
    /// Always (`cell collect --replace`).
    Always,
}

fn io_at(path: &Path) -> impl FnOnce(std::io::Error) -> StoreError + '_ {
    move |error| StoreError::Io {
        path: path.to_owned(),
        error,
    }
}

/// Every part of every path is one safe segment: a name from a results file (a cell id, a
/// toolchain) can never climb out of the directory written. Every writer checks first.
fn check_names(files: &[Output]) -> Result<(), StoreError> {
    match files
        .iter()
        .find(|f| f.path.split('/').any(|seg| segment(seg) != seg))
    {
        Some(f) => Err(StoreError::BadName(f.path.clone())),
        None => Ok(()),
    }
}

/// Writes `files` under `dir`, each atomically.
pub fn write_files(dir: &Path, files: &[Output]) -> Result<(), StoreError> {
    check_names(files)?;
    for f in files {
        let path = f.path.split('/').fold(dir.to_path_buf(), |p, s| p.join(s));
        crate::write_atomic(&path, &f.bytes).map_err(io_at(&path))?;
    }
    Ok(())
}

/// Writes what the gate decided about a run dir into it, as `gate.json`.
pub fn write_gate(run_dir: &Path, report: &crate::GateReport) -> Result<(), StoreError> {
    write_files(
        run_dir,
        // As `cell gate --format json` prints it: the gate's own file, not the record's.
        &[Output::new(GATE_JSON, crate::to_json(report).into_bytes())],
    )
}

/// The top-level names of a job dir that are its set: a new set replaces all of them, so a
/// chart an older job left does not survive beside results that do not mention it.
const JOB_DIR_SET: [&str; 4] = [RESULTS_JSON, FACTS_JSON, RESULTS_MD, SOAK_CHART_DIR];

/// Writes a job dir as a set (see [`write_set`]): `results.json`, `facts.json`, `RESULTS.md`
/// and the charts all land together or not at all; the `build/` beside them stays.
pub fn write_job_dir(dir: &Path, job: &JobDir<'_>) -> Result<(), StoreError> {
    write_set(dir, &job.files(), &JOB_DIR_SET)
}

/// Writes `files` as `dir` through a staging sibling (`.<name>.XXXXXX`) and one rename, so a
/// failure (a full disk) leaves either the whole set or nothing, never a dir that only looks
/// complete, and never the stage. When `dir` exists, what it holds besides the top-level names
/// in `set` and those of `files` (the `build/` a job leaves there) is carried into the new dir,
/// and the old set is replaced as a whole: renamed aside, the new one renamed in, the old
/// removed; a failed swap puts the old dir back. An error names the file as it would have been
/// in `dir`.
fn write_set(dir: &Path, files: &[Output], set: &[&str]) -> Result<(), StoreError> {
    check_names(files)?;
    let dir = std::path::absolute(dir).map_err(io_at(dir))?;
    let (Some(parent), Some(name)) = (dir.parent(), dir.file_name()) else {
        return Err(io_at(&dir)(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a directory that can be written as a set",
        )));
    };
    let name = name.to_string_lossy().into_owned();
    std::fs::create_dir_all(parent).map_err(io_at(parent))?;
    let stage = crate::write::staging(0o777)
        .prefix(&format!(".{name}."))
        .tempdir_in(parent)
        .map_err(io_at(parent))?;
    for f in files {
        let staged = f
            .path
            .split('/')
            .fold(stage.path().to_path_buf(), |p, s| p.join(s));
        let path = f.path.split('/').fold(dir.clone(), |p, s| p.join(s));
        crate::write_atomic(&staged, &f.bytes).map_err(io_at(&path))?;
    }
    if !dir.exists() {
        let staged = stage.keep();
        return std::fs::rename(&staged, &dir).map_err(|e| {
            let _ = std::fs::remove_dir_all(&staged);
            io_at(&dir)(e)
        });
    }
    let own: Vec<&str> = files
        .iter()
        .filter_map(|f| f.path.split('/').next())
        .chain(set.iter().copied())
        .collect();
    swap_in(
        &dir,
        &stage.keep(),
        &own,
        &format!(".{name}.old-{}", std::process::id()),
    )
}

/// Replaces the existing `dir` with `stage`, carrying over the entries of `dir` not named in
/// `own`; on failure `dir` is as it was and `stage` is gone.
fn swap_in(dir: &Path, stage: &Path, own: &[&str], old_name: &str) -> Result<(), StoreError> {
    // Carried entries go back before the stage is removed: they are never lost with it.
    let undo = |carried: &[std::ffi::OsString]| {
        let back = carried
            .iter()
            .all(|n| std::fs::rename(stage.join(n), dir.join(n)).is_ok());
        if back {
            let _ = std::fs::remove_dir_all(stage);
        }
    };
    let mut carried = Vec::new();
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) => {
            undo(&carried);
            return Err(io_at(dir)(e));
        }
    };
    for entry in entries {
        let entry = match entry {
            Ok(entry) => entry,
            Err(e) => {
                undo(&carried);
                return Err(io_at(dir)(e));
            }
        };
        let n = entry.file_name();
        if own.iter().any(|o| n.as_os_str() == *o) {
            continue;
        }
        if let Err(e) = std::fs::rename(entry.path(), stage.join(&n)) {
            undo(&carried);
            return Err(io_at(&entry.path())(e));
        }
        carried.push(n);
    }
    let old = dir.with_file_name(old_name);
    if let Err(e) = std::fs::rename(dir, &old) {
        undo(&carried);
        return Err(io_at(dir)(e));
    }
    if let Err(e) = std::fs::rename(stage, dir) {
        // Put the old dir back, then what was carried out of it.
        let _ = std::fs::rename(&old, dir);
        undo(&carried);
        return Err(io_at(dir)(e));
    }
    std::fs::remove_dir_all(&old).map_err(io_at(&old))
}

/// How a run dir ended up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Written {
    /// It did not exist; now it does.
    New,
    /// It existed with the same bytes: nothing was written.
    Unchanged,
    /// It held attempt `old` of the run, and this strictly later attempt `new` replaced it
    /// ([`Replace::IfNewer`]).
    Superseded {
        /// The attempt it held.
        old: u32,
        /// The attempt that replaced it.
        new: u32,
    },
    /// It existed with other content and [`Replace::Always`] swapped it.
    Replaced,
}

/// Everything a run dir holds.
#[derive(Clone, Debug)]
pub struct RunDir<'a> {
    /// `<date>-<run-id>`.
    pub name: RunDirName,
    /// One directory per cell, named by its cell id.
    pub cells: Vec<CellDir<'a>>,
    /// `run.json`, when the run has a record (collected runs do, local runs do not).
    pub record: Option<&'a RunRecord>,
    /// `imported-soak.json`, when `cell import` read an old soak of this run.
    pub imported_soak: Option<&'a ImportedSoakRun>,
}

impl RunDir<'_> {
    /// The files, paths relative to the run dir.
    pub fn files(&self) -> Vec<Output> {
        let mut out: Vec<Output> = self.cells.iter().flat_map(CellDir::files).collect();
        if let Some(r) = self.record {
            out.push(Output::new(RUN_JSON, crate::to_record_json(r).into_bytes()));
        }
        if let Some(s) = self.imported_soak {
            out.push(Output::new(
                IMPORTED_SOAK_JSON,
                crate::to_record_json(s).into_bytes(),
            ));
        }
        out
    }
}

/// The longest file name Linux and macOS take (`NAME_MAX`).
const NAME_MAX: usize = 255;
/// The longest path a system call takes, less its NUL (`PATH_MAX`: 4096 on Linux, 1024 on
/// macOS).
const PATH_MAX: usize = if cfg!(target_os = "macos") {
    1023
} else {
    4095
};
/// What an atomic write's temporary file (`.tmpXXXXXX` beside the file) may add to a path.
const TEMP_SLACK: usize = 16;

/// Every path writing `files` as run dir `name` under `results` takes (through its staging
/// sibling `.<name>.XXXXXX`, and each file's temporary file) fits the system's limits: checked
/// before anything is written, so a name too long cannot fail a write halfway.
fn check_lengths(results: &Path, name: &RunDirName, files: &[Output]) -> Result<(), StoreError> {
    let results = std::path::absolute(results).map_err(io_at(results))?;
    let stage = format!(".{name}.XXXXXX");
    for f in files {
        let parts: Vec<&str> = std::iter::once(stage.as_str())
            .chain(f.path.split('/'))
            .collect();
        let path = parts.iter().fold(results.clone(), |p, s| p.join(s));
        if path.as_os_str().len() + TEMP_SLACK > PATH_MAX
            || parts.iter().any(|s| s.len() > NAME_MAX)
        {
            let shown = f
                .path
                .split('/')
                .fold(results.join(name.to_string()), |p, s| p.join(s));
            return Err(StoreError::TooLong(shown));
        }
    }
    Ok(())
}

/// What [`write_run_dir`] with [`Replace::Never`] would do, with nothing written under
/// `results`: [`Written::New`] when the dir is not there, [`Written::Unchanged`] when it holds
/// these bytes, [`StoreError::Exists`] when it holds others; every name and length checked
/// first, and a dir whose presence cannot be told is an error, not a new dir. A command that
/// writes several run dirs asks first, so a conflict in one leaves every one unwritten.
pub fn check_run_dir(results: &Path, run: &RunDir<'_>) -> Result<Written, StoreError> {
    let files = run.files();
    check_names(&files)?;
    check_lengths(results, &run.name, &files)?;
    let dest = results.join(run.name.to_string());
    match std::fs::symlink_metadata(&dest) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Written::New),
        Err(e) => return Err(io_at(&dest)(e)),
        Ok(_) => {}
    }
    let stage = tempfile::tempdir().map_err(io_at(results))?;
    write_files(stage.path(), &files)?;
    if same_tree(stage.path(), &dest, &[GATE_JSON]).map_err(io_at(&dest))? {
        Ok(Written::Unchanged)
    } else {
        Err(StoreError::Exists(dest))
    }
}

/// Writes `results/<name>/` through a staging sibling and a rename: readers never see half
/// of it; identical content is a no-op ([`Written::Unchanged`]); different content needs
/// `replace`. `gate.json` is the gate's, written beside the run afterwards, and not compared.
/// The check and the swap are one step only for a caller that excludes other writers of
/// `results` (`cell collect` holds a lock for it).
pub fn write_run_dir(
    results: &Path,
    run: &RunDir<'_>,
    replace: Replace,
) -> Result<Written, StoreError> {
    let name = run.name.to_string();
    let files = run.files();
    check_names(&files)?;
    check_lengths(results, &run.name, &files)?;
    std::fs::create_dir_all(results).map_err(io_at(results))?;
    let stage = crate::write::staging(0o777)
        .prefix(&format!(".{name}."))
        .tempdir_in(results)
        .map_err(io_at(results))?;
    write_files(stage.path(), &files)?;
    let dest = results.join(&name);
    if dest.exists() {
        if same_tree(stage.path(), &dest, &[GATE_JSON]).map_err(io_at(&dest))? {
            return Ok(Written::Unchanged);
        }
        let written = match replace {
            Replace::Never => return Err(StoreError::Exists(dest)),
            Replace::IfNewer => supersedes(run, &dest)?,
            Replace::Always => Written::Replaced,
        };
        let old = results.join(format!(".{name}.old-{}", std::process::id()));
        std::fs::rename(&dest, &old).map_err(io_at(&dest))?;
        // The gate's verdict was about the old content: it does not carry over.
        let staged = stage.keep();
        if let Err(e) = std::fs::rename(&staged, &dest) {
            // Put the old run back: a failed replace leaves what was there, and no stage.
            let _ = std::fs::rename(&old, &dest);
            let _ = std::fs::remove_dir_all(&staged);
            return Err(io_at(&dest)(e));
        }
        std::fs::remove_dir_all(&old).map_err(io_at(&old))?;
        return Ok(written);
    }
    std::fs::rename(stage.keep(), &dest).map_err(io_at(&dest))?;
    Ok(Written::New)
}

/// Whether `run` may replace the run dir at `dest`: every (cell, job) there is in `run` from
/// an attempt at least as new, and `run` is a strictly later attempt of the run.
fn supersedes(run: &RunDir<'_>, dest: &Path) -> Result<Written, StoreError> {
    let old = load_run(dest)?;
    let mut newer = Vec::new();
    for (cell, result) in &old.cells {
        let now = run.cells.iter().find(|c| &c.result.cell.id == cell);
        for (job, summary) in &result.jobs {
            let attempt = now.and_then(|c| c.result.jobs.get(job)).map(|j| j.attempt);
            if attempt.is_none_or(|a| a < summary.attempt) {
                newer.push(format!("{cell} {job} attempt {}", summary.attempt));
            }
        }
    }
    let there = attempt_of(old.record.as_ref(), old.cells.values());
    let here = attempt_of(run.record, run.cells.iter().map(|c| c.result));
    if here < there {
        newer.push(format!("attempt {there} of the run"));
    }
    if !newer.is_empty() {
        return Err(StoreError::Newer {
            path: dest.to_owned(),
            newer: newer.join(", "),
        });
    }
    if here == there {
        return Err(StoreError::SameAttempt {
            path: dest.to_owned(),
            attempt: here,
            there: jobs_line(old.cells.values()),
            here: jobs_line(run.cells.iter().map(|c| c.result)),
        });
    }
    Ok(Written::Superseded {
        old: there,
        new: here,
    })
}

/// A run's attempt: its record's, else the newest of its jobs' (0 when nothing says).
fn attempt_of<'a>(record: Option<&RunRecord>, cells: impl Iterator<Item = &'a CellResult>) -> u32 {
    let jobs = cells.flat_map(|c| c.jobs.values().map(|j| j.attempt)).max();
    record.and_then(|r| r.run.attempt).or(jobs).unwrap_or(0)
}

/// `<cell> <job> a<attempt>, …`: which attempt of each job a run holds.
fn jobs_line<'a>(cells: impl Iterator<Item = &'a CellResult>) -> String {
    let jobs: Vec<String> = cells
        .flat_map(|c| {
            c.jobs
                .iter()
                .map(|(job, s)| format!("{} {job} a{}", c.cell.id, s.attempt))
        })
        .collect();
    if jobs.is_empty() {
        "no jobs".to_owned()
    } else {
        jobs.join(", ")
    }
}

/// Same files with the same bytes, recursively; top-level names in `ignore` do not count.
fn same_tree(a: &Path, b: &Path, ignore: &[&str]) -> std::io::Result<bool> {
    let list = |d: &Path| -> std::io::Result<Vec<(std::ffi::OsString, bool)>> {
        let mut v: Vec<_> = std::fs::read_dir(d)?
            .map(|e| e.map(|e| (e.file_name(), e.path().is_dir())))
            .filter(|e| {
                e.as_ref()
                    .map_or(true, |(n, _)| !ignore.iter().any(|i| n == *i))
            })
            .collect::<Result<_, _>>()?;
        v.sort();
        Ok(v)
    };
    let (la, lb) = (list(a)?, list(b)?);
    if la != lb {
        return Ok(false);
    }
    for (name, is_dir) in la {
        let (pa, pb) = (a.join(&name), b.join(&name));
        let same = if is_dir {
            same_tree(&pa, &pb, &[])?
        } else {
            std::fs::read(&pa)? == std::fs::read(&pb)?
        };
        if !same {
            return Ok(false);
        }
    }
    Ok(true)
}

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

fn impossible_lines(problems: &[Problem]) -> String {
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

#[cfg(test)]
mod tests {
    #[test]
    fn a_path_part_that_is_not_one_safe_segment_writes_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        for bad in [
            "x/../../escaped/results.json",
            "../evil.json",
            ".hidden/a",
            "a b/c",
        ] {
            let files = [
                Output::new("ok/results.json", b"{}".to_vec()),
                Output::new(bad, b"{}".to_vec()),
            ];
            let e = write_files(tmp.path(), &files).unwrap_err();
            assert!(matches!(e, StoreError::BadName(_)), "{bad}: {e}");
            assert!(
                std::fs::read_dir(tmp.path()).unwrap().next().is_none(),
                "{bad}"
            );
        }
    }

    #[test]
    fn attempts_from_artifact_names() {
        let name = job_artifact("linux-x86_64-ubuntu-24.04", "clang", "2");
        assert_eq!(name, "cell-linux-x86_64-ubuntu-24.04-clang-a2");
        assert_eq!(artifact_attempt(&name), Some(2));
        assert_eq!(
            artifact_attempt("cell-linux-x86_64-local-rust-nightly-a13"),
            Some(13)
        );
        assert_eq!(artifact_attempt("results-a2"), None);
        assert_eq!(artifact_attempt("cell-x-clang"), None);
        assert_eq!(artifact_attempt("cell-x-clang-a+2"), None);
    }

    use super::*;

    #[test]
    fn run_dir_names() {
        let n = RunDirName::parse("2026-11-29-4242001").unwrap();
        assert_eq!((n.date(), n.id()), ("2026-11-29", "4242001"));
        assert_eq!(n.to_string(), "2026-11-29-4242001");
        let l = RunDirName::parse("2026-11-29-local-194158").unwrap();
        assert_eq!(l.id(), "local-194158");
        assert!(RunDirName::parse("2026-11-29").is_err());
        assert!(RunDirName::parse("notes").is_err());
        assert!(RunDirName::parse("2026-1x-29-5").is_err());
        assert!(RunDirName::new("2026-11-29", "../x").is_err());
        assert!(RunDirName::new("2026-11-29", "a/b").is_err());
    }

    /// A run dir whose paths the system cannot take failed with `ENAMETOOLONG` after other
    /// run dirs of the same import were written: the lengths are checked before any write,
    /// and a dir whose presence cannot be told is no new dir.
    #[test]
    fn a_path_too_long_for_the_system_is_refused_before_anything_is_written() {
        let tmp = tempfile::tempdir().unwrap();
        let name = RunDirName::parse("2026-09-13-34783020976").unwrap();
        let file = |p: &str| [Output::new(p, b"{}".to_vec())];
        check_lengths(tmp.path(), &name, &file("cell/results.json")).unwrap();
        let e =
            check_lengths(tmp.path(), &name, &file(&format!("{}/x", "c".repeat(256)))).unwrap_err();
        assert!(matches!(e, StoreError::TooLong(_)), "{e}");
        let deep = tmp
            .path()
            .join("d".repeat(PATH_MAX - tmp.path().as_os_str().len() - 40));
        let e = check_lengths(&deep, &name, &file("cell/results.json")).unwrap_err();
        assert!(e.to_string().contains("nothing was written"), "{e}");
        let run = RunDir {
            name,
            cells: Vec::new(),
            record: None,
            imported_soak: None,
        };
        let not_a_dir = tmp.path().join("results");
        std::fs::write(&not_a_dir, "a file").unwrap();
        let e = check_run_dir(&not_a_dir, &run).unwrap_err();
        assert!(matches!(e, StoreError::Io { .. }), "{e}");
    }

    #[test]
    fn numeric_ids_order_by_value_within_a_date() {
        let mut names: Vec<RunDirName> = [
            "2026-11-29-100",
            "2026-11-29-99",
            "2026-11-28-500",
            "2026-11-29-local-1",
        ]
        .iter()
        .map(|n| RunDirName::parse(n).unwrap())
        .collect();
        names.sort();
        let shown: Vec<String> = names.iter().map(ToString::to_string).collect();
        assert_eq!(
            shown,
            [
                "2026-11-28-500",
                "2026-11-29-99",
                "2026-11-29-100",
                "2026-11-29-local-1"
            ]
        );
    }

    /// Two numeric ids of one value are two names, ordered by their text: the order agrees
    /// with equality, so a listing sorts the same whatever order the directory returns.
    #[test]
    fn numeric_ids_of_one_value_order_by_text() {
        let a = RunDirName::parse("2026-11-29-007").unwrap();
        let b = RunDirName::parse("2026-11-29-7").unwrap();
        assert_ne!(a, b);
        assert_eq!(a.cmp(&b), std::cmp::Ordering::Less);
        assert!(RunDirName::parse("2026-11-29-6").unwrap() < a);
    }

    #[test]
    fn chart_paths_are_one_segment_per_name() {
        assert_eq!(
            ChartName::Soak(ServerName::new("rust")).path(),
            "soak/rust.svg"
        );
        assert_eq!(ChartName::SoakOverlay.path(), "soak/overlay.svg");
        assert_eq!(segment("a/b c"), "a_b_c");
        assert_eq!(segment("../x"), "_.._x");
        assert_eq!(segment(""), "_");
    }

    #[test]
    fn the_commit_of_a_checkout() {
        let tmp = tempfile::tempdir().unwrap();
        assert_eq!(checkout_commit(tmp.path()), None);
        let git = |args: &[&str]| {
            let ok = std::process::Command::new("git")
                .arg("-C")
                .arg(tmp.path())
                .args(args)
                .output()
                .is_ok_and(|o| o.status.success());
            assert!(ok, "git {args:?}");
        };
        git(&["init", "-q"]);
        assert_eq!(checkout_commit(tmp.path()), None, "no commit yet");
        git(&[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "x",
        ]);
        let sha = checkout_commit(tmp.path()).expect("a commit");
        assert_eq!(sha.len(), 40);
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    /// A write that fails halfway (here a path through a file, on a full disk `EFBIG`) leaves
    /// no dir, no stage: nothing that could pass for a job dir.
    #[test]
    fn a_failed_set_write_leaves_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("job");
        let files = [
            Output::new(RESULTS_JSON, b"{}".to_vec()),
            Output::new(FACTS_JSON, b"{}".to_vec()),
            Output::new(format!("{RESULTS_JSON}/{RESULTS_MD}"), b"# no".to_vec()),
        ];
        let err = write_set(&dir, &files, &JOB_DIR_SET).unwrap_err();
        assert!(
            err.to_string().contains("job/results.json/RESULTS.md"),
            "{err}"
        );
        assert!(names(tmp.path()).is_empty(), "{:?}", names(tmp.path()));
    }

    /// An existing job dir keeps what is not the set's (`build/`), loses the old set whole
    /// (a stale chart goes with it), and a failed write leaves it as it was.
    #[test]
    fn a_set_replaces_the_old_set_and_keeps_the_rest() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("job");
        std::fs::create_dir_all(dir.join("build/run")).unwrap();
        std::fs::write(dir.join("build/bin"), "binary").unwrap();
        write_set(
            &dir,
            &[
                Output::new(RESULTS_JSON, b"old".to_vec()),
                Output::new("soak/old.svg", b"<svg/>".to_vec()),
            ],
            &JOB_DIR_SET,
        )
        .unwrap();
        assert_eq!(names(&dir), ["build", "results.json", "soak"]);
        let bad = [
            Output::new(RESULTS_JSON, b"new".to_vec()),
            Output::new("results.json/x", b"".to_vec()),
        ];
        write_set(&dir, &bad, &JOB_DIR_SET).unwrap_err();
        assert_eq!(names(&dir), ["build", "results.json", "soak"]);
        assert_eq!(std::fs::read(dir.join(RESULTS_JSON)).unwrap(), b"old");
        let good = [
            Output::new(RESULTS_JSON, b"new".to_vec()),
            Output::new(RESULTS_MD, b"# new".to_vec()),
        ];
        write_set(&dir, &good, &JOB_DIR_SET).unwrap();
        assert_eq!(names(&dir), ["RESULTS.md", "build", "results.json"]);
        assert_eq!(std::fs::read(dir.join(RESULTS_JSON)).unwrap(), b"new");
        assert_eq!(std::fs::read(dir.join("build/bin")).unwrap(), b"binary");
        assert_eq!(names(tmp.path()), ["job"], "no stage and no old dir left");
    }
}
