//! The Actions calls `cell collect` makes: a run, its artifacts, its jobs, and an artifact's
//! zip through the redirect to the blob store.

use std::io::Write as _;
use std::path::Path;

use cell_fetch::http::describe;
use cell_schema::{RunId, Sha256};
use futures_util::StreamExt as _;
use reqwest::Method;
use serde::Deserialize;

use crate::client::{Github, Via, header};
use crate::error::{GithubError, status_error};
use crate::urls::{location, redact_query};

/// `GET /repos/{o}/{r}/actions/runs/{id}`, the fields we read.
#[derive(Clone, Debug, Deserialize)]
pub struct WorkflowRun {
    /// The run id (a u64: run ids outgrew 32 bits long ago).
    pub id: u64,
    /// The attempt this record describes (re-runs raise it).
    pub run_attempt: Option<u32>,
    /// When the run was created.
    pub created_at: String,
    /// When this attempt started.
    pub run_started_at: Option<String>,
    /// The commit the run tested.
    pub head_sha: String,
    /// `success`, `failure`, … or null while running.
    pub conclusion: Option<String>,
    /// `completed`, `in_progress`, `requested`, …
    pub status: Option<String>,
}

/// An artifact record.
#[derive(Clone, Debug, Deserialize)]
pub struct Artifact {
    /// Id.
    pub id: u64,
    /// Name, `cell-<cell-id>-<toolchain>-a<attempt>` for ours.
    pub name: String,
    /// Size of the zip in bytes, which bounds what the download may read.
    pub size_in_bytes: u64,
    /// Where to download the zip (answers 302); it must be on the API's origin.
    pub archive_download_url: String,
    /// Past its retention.
    pub expired: bool,
    /// `sha256:<hex>` of the zip, when GitHub recorded it.
    pub digest: Option<String>,
}

/// The most bytes one artifact's download writes, whatever size its record states: the
/// stated size is the uploader's, and a job's results are a few MiB.
pub const MAX_ARTIFACT_BYTES: u64 = 4 << 30;

#[derive(Deserialize)]
struct ArtifactPage {
    artifacts: Vec<Artifact>,
}

/// A job record.
#[derive(Clone, Debug, Deserialize)]
pub struct Job {
    /// Id.
    pub id: u64,
    /// Display name (`cell <cell-id> <toolchain>` for ours).
    pub name: String,
    /// `queued`, `in_progress`, `completed`, `requested`, … (kept as text: new values appear).
    pub status: String,
    /// Conclusion, null while running.
    pub conclusion: Option<String>,
    /// When its runner started it (RFC 3339).
    pub started_at: Option<String>,
    /// When it finished (RFC 3339), null while running.
    pub completed_at: Option<String>,
    /// Runner labels.
    #[serde(default)]
    pub labels: Vec<String>,
    /// The attempt of the run this record is from (a job kept from an earlier attempt keeps
    /// its number).
    #[serde(default)]
    pub run_attempt: Option<u32>,
}

impl Job {
    /// Seconds from start to completion, when both are known.
    pub fn seconds(&self) -> Option<f64> {
        let start = cell_schema::time::parse_utc(self.started_at.as_deref()?)?;
        let end = cell_schema::time::parse_utc(self.completed_at.as_deref()?)?;
        #[expect(
            clippy::cast_precision_loss,
            reason = "job durations are far below 2^52 s"
        )]
        Some((end - start).max(0) as f64)
    }
}

#[derive(Deserialize)]
struct JobPage {
    jobs: Vec<Job>,
}

impl Github {
    /// The run record.
    pub fn run(&self, repo: &str, run: RunId) -> Result<WorkflowRun, GithubError> {
        self.get(&format!("/repos/{repo}/actions/runs/{run}"))
    }

    /// Every artifact of the run, following `Link: rel="next"`.
    pub fn artifacts(&self, repo: &str, run: RunId) -> Result<Vec<Artifact>, GithubError> {
        let first = format!("/repos/{repo}/actions/runs/{run}/artifacts?per_page=100");
        self.get_paged(&first, |p: ArtifactPage| p.artifacts)
    }

    /// Every job of the run's latest attempt, following `Link: rel="next"`.
    pub fn jobs(&self, repo: &str, run: RunId) -> Result<Vec<Job>, GithubError> {
        let first = format!("/repos/{repo}/actions/runs/{run}/jobs?per_page=100");
        self.get_paged(&first, |p: JobPage| p.jobs)
    }

    /// Downloads an artifact's zip to `to`: the API answers 302 to a short-lived blob URL,
    /// which is fetched **without** the Authorization header; the zip's SHA-256 is checked
    /// against the artifact's digest when it has one.
    pub fn download(&self, a: &Artifact, to: &Path) -> Result<Sha256, GithubError> {
        self.runtime.block_on(self.download_one(a, to))
    }

    /// Downloads `artifacts`, at most `concurrency` at a time, each to `<dir>/<id>.zip`, as
    /// [`Github::download`] does; returns each artifact's name and outcome, in the order given.
    pub fn download_all<'a>(
        &self,
        artifacts: impl IntoIterator<Item = &'a Artifact>,
        dir: &Path,
        concurrency: usize,
    ) -> Vec<(String, Result<Sha256, GithubError>)> {
        let downloads = artifacts.into_iter().map(|a| async move {
            let to = dir.join(format!("{}.zip", a.id));
            (a.name.clone(), self.download_one(a, &to).await)
        });
        self.runtime.block_on(
            futures_util::stream::iter(downloads)
                .buffered(concurrency.max(1))
                .collect(),
        )
    }

    async fn download_one(&self, a: &Artifact, to: &Path) -> Result<Sha256, GithubError> {
        let expired = || GithubError::Expired {
            name: a.name.clone(),
        };
        if a.expired {
            return Err(expired());
        }
        if a.size_in_bytes > MAX_ARTIFACT_BYTES {
            return Err(GithubError::TooLarge {
                name: a.name.clone(),
                size: a.size_in_bytes,
                max: MAX_ARTIFACT_BYTES,
            });
        }
        let get = &Method::GET;
        let url = &a.archive_download_url;
        let reply = self
            .within(get, url, self.send(get, url, None, Via::Api))
            .await?;
        let blob = match reply.status().as_u16() {
            301 | 302 | 303 | 307 | 308 => location(url, header(&reply, "location").as_deref())
                .map_err(|msg| GithubError::Decode {
                    method: "GET",
                    url: url.clone(),
                    msg,
                })?,
            410 => return Err(expired()),
            200 => return self.within(get, url, save(a, reply, to)).await,
            s => return Err(status_error("GET", url, s)),
        };
        let shown = redact_query(&blob);
        self.within(get, &shown, async {
            let reply = self.send(get, &blob, None, Via::Blob).await?;
            match reply.status().as_u16() {
                200 => save(a, reply, to).await,
                410 => Err(expired()),
                s => Err(status_error("GET", &shown, s)),
            }
        })
        .await
    }
}

/// Streams an artifact's zip to `to` and checks its digest.
async fn save(
    a: &Artifact,
    mut reply: reqwest::Response,
    to: &Path,
) -> Result<Sha256, GithubError> {
    let io = |what: String| move |source| GithubError::Io { what, source };
    let file = std::fs::File::create(to).map_err(io(format!("creating {}", to.display())))?;
    // Room over the stated size (GitHub's figure may lag the blob), never past the ceiling.
    let cap = a
        .size_in_bytes
        .saturating_mul(2)
        .max(1 << 20)
        .saturating_add(1 << 30)
        .min(MAX_ARTIFACT_BYTES);
    let mut out = cell_fetch::HashingWriter::new(file, cap);
    let reading = format!("downloading artifact `{}`", a.name);
    while let Some(piece) = reply
        .chunk()
        .await
        .map_err(|e| io(reading.clone())(std::io::Error::other(describe(&e.without_url()))))?
    {
        out.write_all(&piece).map_err(io(reading.clone()))?;
    }
    let (_, actual, _) = out
        .finish()
        .map_err(io(format!("writing {}", to.display())))?;
    if let Some(d) = &a.digest {
        let expected = d.strip_prefix("sha256:").unwrap_or(d).to_ascii_lowercase();
        if expected != actual.as_str() {
            return Err(GithubError::Digest {
                name: a.name.clone(),
                expected,
                actual: actual.to_string(),
            });
        }
    }
    Ok(actual)
}
