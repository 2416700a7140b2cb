//! `cell collect`: a run's job results, from the GitHub API or a directory, merged into one
//! cell result per cell, named for `results/<run-date>-<run-id>/`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use cell_schema::store::RunDirName;
use cell_schema::{
    AnyJob, CellId, MissingJob, RunId, RunInfo, RunJob, RunKind, RunRecord, SCHEMA_VERSION,
    ToolchainName, round_time,
};

use crate::merge::{JobInput, MergedCell, merge_run};
use cell_github::{Github, GithubError};

/// Where the job results come from.
pub enum Source<'a> {
    /// The GitHub API: run record, artifacts, jobs.
    Api {
        /// The client, with its API base, token and retry policy.
        github: &'a Github,
        /// `owner/name`.
        repo: String,
    },
    /// A directory of artifacts already on disk, in either layout `actions/download-artifact`
    /// writes (one folder per artifact, or merged).
    Dir(PathBuf),
}

/// What to do with what was collected.
#[derive(Clone, Debug)]
pub struct Options {
    /// Write the run even when artifacts are missing, marked partial.
    pub allow_partial: bool,
    /// The run date (`YYYY-MM-DD`) for a directory source; default: the earliest job's start.
    pub date: Option<String>,
    /// Caps on unpacking each artifact (`ARTIFACT_*` in versions.env).
    pub unpack: cell_fetch::UnpackOptions,
    /// The configuration every job's figures and answers are recomputed and checked with (the
    /// run's own commit's, in the workflow).
    pub config: cell_verdict::GateConfig,
}

impl Options {
    /// A job's artifact is three small files: 20 times its zip, at least 16 MiB, at most
    /// 1 GiB, at most 64 entries (what versions.env says by default).
    pub fn artifact_caps() -> cell_fetch::UnpackOptions {
        cell_fetch::UnpackOptions {
            max_unpacked_bytes: 1 << 30,
            max_entries: 64,
            ratio_floor: 16 << 20,
            ..cell_fetch::UnpackOptions::default()
        }
    }
}

/// What was collected, merged, for the caller to render and write.
#[derive(Debug)]
pub struct Collected {
    /// The run dir's name, `<date>-<id>`.
    pub name: RunDirName,
    /// The merged cells.
    pub cells: Vec<MergedCell>,
    /// The run record.
    pub record: RunRecord,
    /// What trips the gate among what is missing: jobs that failed (or timed out) without a
    /// result, artifacts that fail their digest or do not unpack. Each also in
    /// `record.missing`; an expired artifact or a skipped job is missing without tripping.
    pub tripped: Vec<String>,
}

/// Why collecting failed.
#[derive(Debug, thiserror::Error)]
pub enum CollectError {
    /// Talking to GitHub.
    #[error(transparent)]
    Github(#[from] GithubError),
    /// Artifacts that could not be had, without `--allow-partial`.
    #[error("{} artifact(s) could not be collected; nothing was written (pass --allow-partial to write the rest, marked partial):\n  {}", .0.len(), .0.join("\n  "))]
    Missing(Vec<String>),
    /// Results of the test suite's scripted executor, which are no measurement.
    #[error("{} job result(s) came from the scripted test executor, not from timed processes: nothing was written\n  {}", .0.len(), .0.join("\n  "))]
    Scripted(Vec<String>),
    /// No job result at all.
    #[error("no job results found {0}")]
    Empty(String),
    /// A results file that cannot be read.
    #[error("{}: {msg}", path.display())]
    Read {
        /// The results file that could not be read.
        path: PathBuf,
        /// What is wrong with it.
        msg: String,
    },
    /// A file system error.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The OS error.
        source: std::io::Error,
    },
}

impl CollectError {
    /// A gate failure (exit 1) rather than infrastructure (exit 2).
    pub fn is_integrity(&self) -> bool {
        match self {
            Self::Github(g) => g.is_integrity(),
            Self::Missing(_) | Self::Scripted(_) => true,
            _ => false,
        }
    }
}

fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> CollectError {
    let what = what.into();
    move |source| CollectError::Io { what, source }
}

/// Collects run `run_id` from `source` and merges it, one cell result per cell.
pub fn collect(
    run_id: RunId,
    source: &Source<'_>,
    opts: &Options,
) -> Result<Collected, CollectError> {
    let staging = tempfile::tempdir().map_err(io("creating a staging directory"))?;
    let Gathered {
        mut record,
        jobs,
        missing,
        tripped,
    } = match source {
        Source::Api { github, repo } => {
            from_api(github, repo, run_id, staging.path(), &opts.unpack)?
        }
        Source::Dir(dir) => from_dir(run_id, dir, opts.date.as_deref())?,
    };
    refuse_scripted(&jobs)?;
    let jobs = recomputed(jobs, &opts.config);
    if !record.missing.is_empty() && !opts.allow_partial {
        return Err(CollectError::Missing(record.missing.clone()));
    }
    record.run.partial = !record.missing.is_empty();
    let cells = merge_run(&record.run, jobs, &missing);
    let attempts: std::collections::BTreeSet<u32> = cells
        .iter()
        .flat_map(|c| c.result.jobs.values().map(|j| j.attempt))
        .collect();
    record.run.attempts = attempts.into_iter().collect();
    let name =
        RunDirName::new(&record.run.date, &record.run.id).map_err(|e| CollectError::Read {
            path: PathBuf::from(format!("run {run_id}")),
            msg: e.to_string(),
        })?;
    Ok(Collected {
        name,
        cells,
        record,
        tripped,
    })
}

/// Results of the scripted executor are test data: they never enter the history.
fn refuse_scripted(jobs: &[JobInput]) -> Result<(), CollectError> {
    let scripted: Vec<String> = jobs
        .iter()
        .filter(|j| matches!(&j.result, AnyJob::Workload(w) if w.protocol.scripted))
        .map(|j| format!("job {} of {}", j.result.name(), j.result.cell().id))
        .collect();
    if scripted.is_empty() {
        Ok(())
    } else {
        Err(CollectError::Scripted(scripted))
    }
}

/// The samples are the record: every job as its samples give it
/// ([`cell_verdict::recompute::job`], and [`cell_verdict::recompute::suites`] for the http and
/// soak jobs), a job whose stated figures disagree failed by name.
fn recomputed(jobs: Vec<JobInput>, config: &cell_verdict::GateConfig) -> Vec<JobInput> {
    use cell_verdict::recompute;
    jobs.into_iter()
        .map(|j| JobInput {
            result: match j.result {
                AnyJob::Workload(w) => AnyJob::Workload(Box::new(recompute::job(&w, config).value)),
                AnyJob::Http(h) => {
                    AnyJob::Http(Box::new(recompute::suites::http_job(&h, config).value))
                }
                AnyJob::Soak(s) => {
                    AnyJob::Soak(Box::new(recompute::suites::soak_job(&s, config).value))
                }
            },
            attempt: j.attempt,
        })
        .collect()
}

/// What a source yields before the merge.
struct Gathered {
    record: RunRecord,
    jobs: Vec<JobInput>,
    missing: BTreeMap<CellId, Vec<MissingJob>>,
    tripped: Vec<String>,
}

/// A job conclusion that means the job itself failed (not skipped, not cancelled).
pub(crate) fn failed_conclusion(c: &str) -> bool {
    matches!(c, "failure" | "timed_out" | "startup_failure")
}

fn from_api(
    github: &Github,
    repo: &str,
    run_id: RunId,
    staging: &Path,
    caps: &cell_fetch::UnpackOptions,
) -> Result<Gathered, CollectError> {
    let run = github.run(repo, run_id)?;
    let artifacts = github.artifacts(repo, run_id)?;
    let jobs = github.jobs(repo, run_id)?;
    let (ours, mut missing_lines) = our_artifacts(&artifacts);

    let unpacked = staging.join("artifacts");
    let lost = download_all(github, &ours, staging, &unpacked, caps)?;
    let mut tripped: Vec<String> = lost.iter().filter(|l| l.1).map(|l| l.0.clone()).collect();
    missing_lines.extend(lost.into_iter().map(|l| l.0));

    let mut inputs = Vec::new();
    for a in ours.iter().filter(|a| unpacked.join(&a.name).is_dir()) {
        match read_artifact(&unpacked.join(&a.name), &a.name, run.run_attempt) {
            Ok(job) => inputs.push(job),
            Err(e) => {
                let line = format!("artifact `{}`: {e}", a.name);
                tripped.push(line.clone());
                missing_lines.push(line);
            }
        }
    }
    missing_lines.sort();
    inputs.sort_by(|a, b| {
        (&a.result.cell().id, a.result.name(), a.attempt).cmp(&(
            &b.result.cell().id,
            b.result.name(),
            b.attempt,
        ))
    });
    let missing = missing_jobs(&jobs, &mut inputs, &mut missing_lines, &mut tripped);
    if inputs.is_empty() && missing_lines.is_empty() {
        return Err(CollectError::Empty(format!(
            "in run {run_id} of {repo}: it has no `cell-*` artifacts"
        )));
    }
    // `created_at`, not `run_started_at`: a re-run resets the start, and every attempt of a
    // run must name the same directory.
    let date = cell_schema::time::date_of(&run.created_at);
    let date = date.ok_or_else(|| CollectError::Read {
        path: PathBuf::from(format!("run {run_id}")),
        msg: format!("unreadable run date `{}`", run.created_at),
    })?;
    let run_jobs: Vec<RunJob> = jobs
        .iter()
        .map(|j| RunJob {
            name: j.name.clone(),
            conclusion: j.conclusion.clone().unwrap_or_else(|| j.status.clone()),
            seconds: j.seconds(),
            labels: j.labels.clone(),
        })
        .collect();
    let record = RunRecord {
        schema_version: SCHEMA_VERSION,
        kind: RunKind::Run,
        run: RunInfo {
            id: run_id.to_string(),
            date: date.to_string(),
            source: "github".into(),
            head_sha: Some(run.head_sha.clone()),
            dirty: None,
            attempt: run.run_attempt,
            attempts: Vec::new(),
            partial: false,
        },
        conclusion: run.conclusion.clone(),
        artifacts: ours.iter().map(|a| a.name.clone()).collect(),
        total_s: round_time(run_jobs.iter().filter_map(|j| j.seconds).sum()),
        jobs: run_jobs,
        missing: missing_lines,
    };
    Ok(Gathered {
        record,
        jobs: inputs,
        missing,
        tripped,
    })
}

/// Our artifacts: named `cell-<cell-id>-<job>-a<N>` and one safe path segment (a name from
/// the API becomes a directory); any other `cell-` name is listed as missing, not unpacked.
fn our_artifacts(
    artifacts: &[cell_github::Artifact],
) -> (Vec<&cell_github::Artifact>, Vec<String>) {
    let mut ours = Vec::new();
    let mut refused = Vec::new();
    for a in artifacts.iter().filter(|a| a.name.starts_with("cell-")) {
        let safe = cell_schema::store::segment(&a.name) == a.name;
        if safe && cell_schema::store::artifact_attempt(&a.name).is_some() {
            ours.push(a);
        } else {
            refused.push(format!(
                "artifact `{}` is not named cell-<cell-id>-<job>-a<attempt>: skipped",
                cell_schema::escape::one_line(&a.name)
            ));
        }
    }
    (ours, refused)
}

/// Jobs named `cell <cell-id> <toolchain>` whose latest attempt left no result are missing,
/// with their conclusion; an older attempt's result of such a job is dropped, not merged as
/// if it were this attempt's. A job that failed trips the gate.
fn missing_jobs(
    jobs: &[cell_github::Job],
    inputs: &mut Vec<JobInput>,
    lines: &mut Vec<String>,
    tripped: &mut Vec<String>,
) -> BTreeMap<CellId, Vec<MissingJob>> {
    let mut missing: BTreeMap<CellId, Vec<MissingJob>> = BTreeMap::new();
    for j in jobs {
        let mut words = j.name.split(' ');
        let (Some("cell"), Some(cell), Some(tc), None) =
            (words.next(), words.next(), words.next(), words.next())
        else {
            continue;
        };
        // A job's name is the workflow's, but it reaches paths: only safe ids count.
        if !cell_schema::ids::is_safe_id(cell) || !cell_schema::ids::is_safe_id(tc) {
            lines.push(format!(
                "job `{}` is not named `cell <cell-id> <toolchain>` with safe names: ignored",
                cell_schema::escape::one_line(&j.name)
            ));
            continue;
        }
        let key = (CellId::from(cell), ToolchainName::from(tc));
        let is_key = |i: &JobInput| i.result.cell().id == key.0 && i.result.name() == key.1;
        let newest = inputs.iter().filter(|i| is_key(i)).map(|i| i.attempt).max();
        let latest = j.run_attempt.unwrap_or(1);
        if newest.is_some_and(|n| n >= latest) {
            continue;
        }
        inputs.retain(|i| !is_key(i));
        let conclusion = j.conclusion.clone().unwrap_or_else(|| j.status.clone());
        let line = format!("job `{}` left no result ({conclusion})", j.name);
        if failed_conclusion(&conclusion) {
            tripped.push(line.clone());
        }
        lines.push(line);
        missing.entry(key.0).or_default().push(MissingJob {
            toolchain: key.1,
            conclusion,
        });
    }
    missing
}

/// Downloads and unpacks artifacts, a few at a time, each into `unpacked/<name>/`. Returns
/// the artifacts that could not be had, as lines, each with whether it trips the gate (a
/// digest mismatch, an archive that does not unpack); an expired or unreachable artifact is
/// missing without tripping. Only the deadline and a client that cannot start are fatal: one
/// bad artifact never costs the others.
fn download_all(
    github: &Github,
    ours: &[&cell_github::Artifact],
    staging: &Path,
    unpacked: &Path,
    caps: &cell_fetch::UnpackOptions,
) -> Result<Vec<(String, bool)>, CollectError> {
    let zips = staging.join("zips");
    std::fs::create_dir_all(&zips).map_err(io("creating the staging directory"))?;
    let downloaded = github.download_all(ours.iter().copied(), &zips, 4);
    let mut lost = Vec::new();
    for (a, (_, result)) in ours.iter().zip(downloaded) {
        match result {
            Ok(_) => {}
            Err(e @ (GithubError::Deadline { .. } | GithubError::Setup { .. })) => {
                return Err(e.into());
            }
            Err(e) => {
                let tripped =
                    matches!(e, GithubError::Digest { .. } | GithubError::TooLarge { .. });
                lost.push((e.to_string(), tripped));
                continue;
            }
        }
        let zip = zips.join(format!("{}.zip", a.id));
        if let Err(e) = cell_fetch::unpack(
            &zip,
            cell_fetch::ArchiveKind::Zip,
            &unpacked.join(&a.name),
            caps,
        ) {
            lost.push((format!("artifact `{}`: {e}", a.name), true));
        }
    }
    Ok(lost)
}

fn from_dir(run_id: RunId, dir: &Path, date: Option<&str>) -> Result<Gathered, CollectError> {
    if !dir.is_dir() {
        return Err(CollectError::Read {
            path: dir.to_owned(),
            msg: "not a directory".into(),
        });
    }
    let (mut inputs, failures) = discover(dir)?;
    if inputs.is_empty() && failures.is_empty() {
        return Err(CollectError::Empty(format!("under {}", dir.display())));
    }
    inputs.sort_by(|a, b| {
        (&a.result.cell().id, a.result.name(), a.attempt).cmp(&(
            &b.result.cell().id,
            b.result.name(),
            b.attempt,
        ))
    });
    let date = match date {
        Some(d) => d.to_owned(),
        None => inputs
            .iter()
            .filter_map(|j| cell_schema::time::date_of(j.result.started_at()))
            .min()
            .map_or_else(|| "1970-01-01".to_owned(), |d| d.to_string()),
    };
    let gh = inputs.iter().find_map(|j| j.result.github().cloned());
    let record = RunRecord {
        schema_version: SCHEMA_VERSION,
        kind: RunKind::Run,
        run: RunInfo {
            id: run_id.to_string(),
            date,
            // A collected run is a workflow run, whichever way its artifacts arrived.
            source: "github".into(),
            head_sha: gh.map(|g| g.sha),
            dirty: None,
            attempt: inputs.iter().map(|j| j.attempt).max(),
            attempts: Vec::new(),
            partial: false,
        },
        conclusion: None,
        artifacts: Vec::new(),
        jobs: Vec::new(),
        total_s: 0.0,
        missing: failures.clone(),
    };
    Ok(Gathered {
        record,
        jobs: inputs,
        missing: BTreeMap::new(),
        tripped: failures,
    })
}

/// Why an artifact's content is not the one job its name says.
#[derive(Debug, thiserror::Error)]
pub enum ArtifactError {
    /// No job result in it.
    #[error("holds no results.json")]
    Empty,
    /// Its unpacked folder cannot be read.
    #[error("cannot be read: {0}")]
    Io(String),
    /// More than one results file: an artifact is one job.
    #[error("holds {0} results.json files; an artifact is exactly one job")]
    Several(usize),
    /// A results file that cannot be read.
    #[error("{path}: {error}")]
    Unreadable {
        /// Its path inside the artifact.
        path: String,
        /// Why (not JSON, a newer schema, a missing field).
        error: cell_schema::SchemaError,
    },
    /// A merged cell result, not a job's.
    #[error("holds a merged cell result, not a job's")]
    NotAJob,
    /// The job inside is another than the name says.
    #[error("holds the job `{inside}`, not the one its name says")]
    Mismatch {
        /// The artifact name the job inside would have.
        inside: String,
    },
    /// An attempt the run has not had.
    #[error("is from attempt {attempt}, but the run has had {run} attempt(s)")]
    FutureAttempt {
        /// The artifact's attempt.
        attempt: u32,
        /// The run's attempts.
        run: u32,
    },
}

/// The one job an artifact unpacked at `dir` holds, checked against its `name`
/// (`cell-<cell-id>-<job>-a<attempt>`) and, when known, the run's attempts. Anything else is
/// refused by name: one job's artifact can never carry or replace another's results.
pub fn read_artifact(
    dir: &Path,
    name: &str,
    run_attempts: Option<u32>,
) -> Result<JobInput, ArtifactError> {
    let mut files = Vec::new();
    walk(dir, 0, &mut |p| {
        files.push(p.to_owned());
        Ok(())
    })
    .map_err(|e| ArtifactError::Io(e.to_string()))?;
    let path = match files.as_slice() {
        [] => return Err(ArtifactError::Empty),
        [one] => one,
        many => return Err(ArtifactError::Several(many.len())),
    };
    let shown = path.strip_prefix(dir).unwrap_or(path).display().to_string();
    let unreadable = |error| ArtifactError::Unreadable {
        path: shown.clone(),
        error,
    };
    let text = std::fs::read_to_string(path)
        .map_err(|e| unreadable(cell_schema::SchemaError::Parse(serde::de::Error::custom(e))))?;
    let file = cell_schema::read_results(&text).map_err(unreadable)?;
    let result = AnyJob::from_file(file).ok_or(ArtifactError::NotAJob)?;
    let attempt = cell_schema::store::artifact_attempt(name).unwrap_or(0);
    let inside = cell_schema::store::job_artifact(
        result.cell().id.as_str(),
        result.name().as_str(),
        &attempt.to_string(),
    );
    if inside != name {
        return Err(ArtifactError::Mismatch { inside });
    }
    if let Some(run) = run_attempts
        && attempt > run
    {
        return Err(ArtifactError::FutureAttempt { attempt, run });
    }
    Ok(JobInput { result, attempt })
}

/// Every job `results.json` under `dir` (at most four levels down), with its attempt: from
/// the folder named like an artifact (`cell-<cell-id>-<job>-a<N>`) it sits in, else the job's
/// own record, else 1. A file that cannot be read, a job in a folder named for another job,
/// or artifact folders nested in each other come back as failures, by path, never dropped
/// silently; a merged cell's results.json is not a job and is passed over.
pub fn discover(dir: &Path) -> Result<(Vec<JobInput>, Vec<String>), CollectError> {
    let mut out = Vec::new();
    let mut failures = Vec::new();
    walk(dir, 0, &mut |path| {
        let shown = path.strip_prefix(dir).unwrap_or(path).display().to_string();
        // A link is never followed: it could name a file outside the artifact (a runner's
        // file) or another job's result, read twice.
        if !std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file()) {
            failures.push(format!("{shown}: not a regular file (a link?): not read"));
            return Ok(());
        }
        let text =
            std::fs::read_to_string(path).map_err(io(format!("reading {}", path.display())))?;
        let file = match cell_schema::read_results(&text) {
            Ok(f) => f,
            Err(e) => {
                failures.push(format!("{shown}: {e}"));
                return Ok(());
            }
        };
        let Some(result) = AnyJob::from_file(file) else {
            return Ok(());
        };
        // `download-artifact` puts each artifact in a folder of its name, and the upload kept
        // one of that name inside: the same name twice is one artifact; two names are not.
        let mut folders: Vec<&str> = path
            .parent()
            .into_iter()
            .flat_map(Path::ancestors)
            .take_while(|a| a.starts_with(dir) && *a != dir)
            .filter_map(|a| a.file_name()?.to_str())
            .filter(|n| cell_schema::store::artifact_attempt(n).is_some())
            .collect();
        folders.dedup();
        let attempt = match folders.as_slice() {
            [] => result.github().map_or(1, |g| g.run_attempt),
            [one] => {
                let attempt = cell_schema::store::artifact_attempt(one).unwrap_or(1);
                let inside = cell_schema::store::job_artifact(
                    result.cell().id.as_str(),
                    result.name().as_str(),
                    &attempt.to_string(),
                );
                if inside != *one {
                    failures.push(format!(
                        "{shown}: holds the job `{inside}`, not the one its folder says"
                    ));
                    return Ok(());
                }
                attempt
            }
            _ => {
                failures.push(format!(
                    "{shown}: artifact folders nested in each other; an artifact is exactly one job"
                ));
                return Ok(());
            }
        };
        out.push(JobInput { result, attempt });
        Ok(())
    })?;
    Ok((out, failures))
}

fn walk(
    dir: &Path,
    depth: u32,
    f: &mut dyn FnMut(&Path) -> Result<(), CollectError>,
) -> Result<(), CollectError> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .map_err(io(format!("reading {}", dir.display())))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() && !p.is_symlink() && depth < 4 {
            walk(&p, depth + 1, f)?;
        } else if p
            .file_name()
            .is_some_and(|n| n == cell_schema::store::RESULTS_JSON)
            && !p.is_dir()
        {
            f(&p)?;
        }
    }
    Ok(())
}
