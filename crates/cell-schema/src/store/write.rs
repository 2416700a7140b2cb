//! The writers: a set of files, a job dir, a run dir, each staged in a sibling and renamed
//! in, so a failure leaves the whole set or nothing; the same run dir again is a no-op.

use std::path::Path;

use super::naming::{
    CellDir, FACTS_JSON, GATE_JSON, IMPORTED_SOAK_JSON, JobDir, Output, RESULTS_JSON, RESULTS_MD,
    RUN_JSON, RunDirName, SOAK_CHART_DIR, segment,
};
use super::read::load_run;
use super::{StoreError, io_at};
use crate::{CellResult, ImportedSoakRun, RunRecord};

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
pub(super) const JOB_DIR_SET: [&str; 4] = [RESULTS_JSON, FACTS_JSON, RESULTS_MD, SOAK_CHART_DIR];

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
pub(super) fn write_set(dir: &Path, files: &[Output], set: &[&str]) -> Result<(), StoreError> {
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
pub(super) const NAME_MAX: usize = 255;
/// The longest path a system call takes, less its NUL (`PATH_MAX`: 4096 on Linux, 1024 on
/// macOS).
pub(super) const PATH_MAX: usize = if cfg!(target_os = "macos") {
    1023
} else {
    4095
};
/// What an atomic write's temporary file (`.tmpXXXXXX` beside the file) may add to a path.
const TEMP_SLACK: usize = 16;

/// Every path writing `files` as run dir `name` under `results` takes (through its staging
/// sibling `.<name>.XXXXXX`, and each file's temporary file) fits the system's limits: checked
/// before anything is written, so a name too long cannot fail a write halfway.
pub(super) fn check_lengths(
    results: &Path,
    name: &RunDirName,
    files: &[Output],
) -> Result<(), StoreError> {
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
