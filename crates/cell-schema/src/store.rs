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
//!
//! By concern: `naming` (the file names, [`RunDirName`], [`ChartName`], the typed dirs and
//! the files they hold), `write` (the job-dir and run-dir writers) and `read` (a run, the
//! history and its index read back).

use std::path::{Path, PathBuf};

mod naming;
mod read;
mod write;

pub use naming::*;
pub use read::*;
pub use write::*;

use crate::validate::Problem;
use crate::{CellId, SchemaError};
use read::impossible_lines;
use write::{NAME_MAX, PATH_MAX};

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
fn io_at(path: &Path) -> impl FnOnce(std::io::Error) -> StoreError + '_ {
    move |error| StoreError::Io {
        path: path.to_owned(),
        error,
    }
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

    use super::write::{JOB_DIR_SET, check_lengths, write_set};
    use super::*;
    use crate::ServerName;

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
