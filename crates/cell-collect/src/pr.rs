//! The `cell-pr` artifact of a `pull_request` run, read by the reporter as hostile: fetched
//! as every artifact is (listed, size-capped, digest-checked, unpacked within caps), or taken
//! from a directory; its `pr.json` bounded and checked field by field; its job results
//! collected and recomputed from their samples like any run's ([`crate::collect`]). Its
//! `gate.md` is never read: the verdict is the reporter's own.

use std::io::Read as _;
use std::path::{Path, PathBuf};

use cell_github::{Github, GithubError};
use cell_schema::{MAX_PR_JSON_BYTES, PR_JSON, PrRecord, RunId};

use crate::collect::{CollectError, Collected, Options, Source, collect};

/// The artifact's name.
pub const PR_ARTIFACT: &str = "cell-pr";

/// The folder of job results inside it (`jobs/<artifact-name>/…`, the layout
/// `actions/download-artifact` writes and `cell collect --from-dir` reads).
pub const JOBS_DIR: &str = "jobs";

/// The most jobs a plan runs in one matrix; with three files each and their folders, the
/// artifact's entries are bounded by this.
const MAX_JOBS: usize = 256;

/// Why a `cell-pr` artifact could not be used.
#[derive(Debug, thiserror::Error)]
pub enum PrArtifactError {
    /// Talking to GitHub (listing, downloading, the digest).
    #[error(transparent)]
    Github(#[from] GithubError),
    /// The run has no artifact of that name (expired, or the `pr` job never uploaded it).
    #[error(
        "run {run} has no `{PR_ARTIFACT}` artifact (expired, or its `pr` job did not upload one)"
    )]
    Absent {
        /// The run.
        run: RunId,
    },
    /// The run has it twice: which one is meant cannot be told.
    #[error("run {run} has {count} artifacts named `{PR_ARTIFACT}`: refused")]
    Several {
        /// The run.
        run: RunId,
        /// How many.
        count: usize,
    },
    /// The artifact does not unpack within its caps.
    #[error("artifact `{PR_ARTIFACT}`: {0}")]
    Unpack(#[from] cell_fetch::FetchError),
    /// `pr.json` is missing, not a regular file, too large or not the record.
    #[error("{}: {msg}", path.display())]
    PrJson {
        /// Where it was looked for.
        path: PathBuf,
        /// What is wrong.
        msg: String,
    },
    /// No `jobs/` folder.
    #[error("{}: no {JOBS_DIR}/ folder of job results", .0.display())]
    NoJobs(PathBuf),
    /// Collecting the job results.
    #[error(transparent)]
    Collect(#[from] CollectError),
    /// A file system error.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The OS error.
        source: std::io::Error,
    },
}

/// The unpack caps of the `cell-pr` artifact from those of one job's: the same bytes, room
/// for every job's files.
pub fn artifact_caps(job: &cell_fetch::UnpackOptions) -> cell_fetch::UnpackOptions {
    cell_fetch::UnpackOptions {
        max_entries: job.max_entries.max(8).saturating_mul(MAX_JOBS).min(1 << 14),
        ..job.clone()
    }
}

/// Downloads run `run`'s one `cell-pr` artifact and unpacks it into `into` (which must not
/// exist), through the same client, caps and digest check as `cell collect`.
pub fn fetch(
    github: &Github,
    repo: &str,
    run: RunId,
    into: &Path,
    caps: &cell_fetch::UnpackOptions,
) -> Result<(), PrArtifactError> {
    let artifacts = github.artifacts(repo, run)?;
    let ours: Vec<&cell_github::Artifact> =
        artifacts.iter().filter(|a| a.name == PR_ARTIFACT).collect();
    let a = match ours.as_slice() {
        [] => return Err(PrArtifactError::Absent { run }),
        [one] => *one,
        many => {
            return Err(PrArtifactError::Several {
                run,
                count: many.len(),
            });
        }
    };
    let staging = tempfile::tempdir().map_err(|source| PrArtifactError::Io {
        what: "creating a staging directory".into(),
        source,
    })?;
    let zip = staging.path().join("cell-pr.zip");
    github.download(a, &zip)?;
    cell_fetch::unpack(
        &zip,
        cell_fetch::ArchiveKind::Zip,
        into,
        &artifact_caps(caps),
    )?;
    Ok(())
}

/// `pr.json` under `dir`: a regular file (no link), at most [`MAX_PR_JSON_BYTES`], the
/// record with every field checked ([`cell_schema::read_pr`]).
pub fn read_pr_json(dir: &Path) -> Result<PrRecord, PrArtifactError> {
    let path = dir.join(PR_JSON);
    let refuse = |msg: String| PrArtifactError::PrJson {
        path: path.clone(),
        msg,
    };
    let meta = std::fs::symlink_metadata(&path).map_err(|e| refuse(e.to_string()))?;
    if !meta.is_file() {
        return Err(refuse("not a regular file".into()));
    }
    if meta.len() > MAX_PR_JSON_BYTES as u64 {
        return Err(refuse(format!(
            "{} bytes, more than the {MAX_PR_JSON_BYTES} a pull request's record can need: refused",
            meta.len()
        )));
    }
    let mut text = String::new();
    std::fs::File::open(&path)
        .and_then(|f| {
            f.take(MAX_PR_JSON_BYTES as u64 + 1)
                .read_to_string(&mut text)
        })
        .map_err(|e| refuse(e.to_string()))?;
    cell_schema::read_pr(&text).map_err(|e| refuse(e.to_string()))
}

/// What a `cell-pr` artifact holds, read: the record and the job results, collected as run
/// `run` (every figure recomputed from its samples with `opts.config`).
#[derive(Debug)]
pub struct PrRun {
    /// `pr.json`.
    pub record: PrRecord,
    /// The job results, merged.
    pub collected: Collected,
}

/// Reads what the artifact unpacked to at `dir`: [`read_pr_json`] first (a bad record is
/// refused before any job result is read), then `jobs/` collected.
pub fn read(dir: &Path, run: RunId, opts: &Options) -> Result<PrRun, PrArtifactError> {
    let record = read_pr_json(dir)?;
    let jobs = dir.join(JOBS_DIR);
    let is_dir = std::fs::symlink_metadata(&jobs).is_ok_and(|m| m.is_dir());
    if !is_dir {
        return Err(PrArtifactError::NoJobs(dir.to_owned()));
    }
    let collected = collect(run, &Source::Dir(jobs), opts)?;
    Ok(PrRun { record, collected })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_large_or_linked_pr_json_is_refused_before_it_is_read() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join(PR_JSON), " ".repeat(2 << 20)).unwrap();
        let e = read_pr_json(tmp.path()).unwrap_err().to_string();
        assert!(e.contains("2097152 bytes, more than the 4096"), "{e}");
        std::fs::remove_file(tmp.path().join(PR_JSON)).unwrap();
        std::os::unix::fs::symlink("/etc/hostname", tmp.path().join(PR_JSON)).unwrap();
        let e = read_pr_json(tmp.path()).unwrap_err().to_string();
        assert!(e.contains("not a regular file"), "{e}");
    }

    /// A `results.json` that was a link was followed when the job results were walked: to a
    /// file outside the artifact, or to another job's result, read a second time.
    #[test]
    fn a_results_json_that_is_a_link_is_named_not_followed() {
        let tmp = tempfile::tempdir().unwrap();
        let secret = tmp.path().join("secret");
        std::fs::write(&secret, "{\"token\": \"x\"}").unwrap();
        let jobs = tmp.path().join(JOBS_DIR);
        let job = jobs.join("cell-a-gcc-a1");
        std::fs::create_dir_all(&job).unwrap();
        std::os::unix::fs::symlink(&secret, job.join(cell_schema::store::RESULTS_JSON)).unwrap();
        let (found, failures) = crate::collect::discover(&jobs).unwrap();
        assert!(found.is_empty());
        assert_eq!(failures.len(), 1, "{failures:?}");
        assert!(
            failures[0].contains("not a regular file (a link?): not read"),
            "{failures:?}"
        );
    }

    #[test]
    fn the_caps_leave_room_for_every_job() {
        let caps = artifact_caps(&Options::artifact_caps());
        assert!(caps.max_entries >= 3 * MAX_JOBS + 2);
        assert_eq!(
            caps.max_unpacked_bytes,
            Options::artifact_caps().max_unpacked_bytes
        );
    }
}
