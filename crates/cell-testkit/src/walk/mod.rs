//! A workflow walk: reads a generated workflow file and runs it as a GitHub runner would, on
//! this machine, with real `bash`, real `git` against a bare origin, and the real programs
//! the steps call — so a test can assert what a run leaves in the repository.
//!
//! - [`workflow`]: the YAML model; [`expr`]: the `${{ }}` evaluator; [`glob`]: the globs of
//!   artifact paths and `hashFiles`;
//! - [`runner`]: jobs ordered by `needs`, matrices expanded, `if:` evaluated, the steps of
//!   each job run in order under `bash --noprofile --norc -eo pipefail` with the runner's
//!   environment files; cancel and "re-run failed jobs";
//! - [`actions`]: the `uses:` steps, replaced by local equivalents; [`standins`]: the
//!   programs on `PATH` that would reach the internet or need root;
//! - [`artifacts`]: the run's artifact store; [`api`]: the GitHub REST API of the run on
//!   loopback (`GITHUB_API_URL` points there);
//! - [`events`]: the payloads of `pull_request` and `workflow_run` events, and a pull
//!   request's refs in the origin.
//!
//! One walk is one run id; [`Walk::run`] is attempt 1 and [`Walk::rerun_failed`] the next.
//! Matrix entries run one after the other (this machine has 2 cores).
//!
//! Two workflows that hand over through the API, a `pull_request` run whose artifacts a
//! `workflow_run` reporter reads, are two walks: the reporter's [`Options::other_runs`] holds
//! the first one's [`Walk::view`], and its [`Options::writes`] the comments and check runs of
//! the reporter walks before it.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::{Arc, Barrier, Mutex};

use serde_json::Value;

use crate::github::Writes;

pub mod actions;
pub mod api;
pub mod artifacts;
mod context;
pub mod env_file;
pub mod events;
pub mod expr;
pub mod glob;
pub mod runner;
pub mod standins;
mod step;
pub mod workflow;

pub use runner::Groups;

/// A job's or a step's result, as GitHub names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Conclusion {
    Success,
    Failure,
    Cancelled,
    Skipped,
}

impl Conclusion {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Success => "success",
            Self::Failure => "failure",
            Self::Cancelled => "cancelled",
            Self::Skipped => "skipped",
        }
    }
}

/// One step as it ran.
#[derive(Clone, Debug)]
pub struct StepRecord {
    pub name: String,
    pub id: Option<String>,
    /// Before `continue-on-error`.
    pub outcome: Conclusion,
    /// After it.
    pub conclusion: Conclusion,
    pub seconds: f64,
}

/// One job (one matrix entry) as it ran, or was skipped or cancelled.
#[derive(Clone, Debug)]
pub struct JobRecord {
    /// The job id in the workflow.
    pub id: String,
    /// The display name as rendered (the template, for a job that never started).
    pub name: String,
    /// The entry's matrix values (`null` without a matrix).
    pub matrix: Value,
    /// The attempt that ran it (an earlier one for a job a re-run kept).
    pub attempt: u32,
    pub conclusion: Conclusion,
    pub outputs: BTreeMap<String, String>,
    pub steps: Vec<StepRecord>,
    pub seconds: f64,
    pub started_at: String,
    pub completed_at: String,
    pub labels: Vec<String>,
    /// Every step's output, in order.
    pub log: Option<PathBuf>,
    pub workspace: Option<PathBuf>,
    /// What the steps wrote to `$GITHUB_STEP_SUMMARY`.
    pub summary: String,
    /// The id the jobs API gives it.
    pub api_id: u64,
}

impl JobRecord {
    /// The job's log, or a note that it has none.
    pub fn log_text(&self) -> String {
        self.log.as_ref().map_or_else(
            || "(no log: the job did not run)".into(),
            |p| std::fs::read_to_string(p).unwrap_or_default(),
        )
    }
}

/// What one attempt did.
#[derive(Clone, Debug)]
pub struct Attempt {
    pub number: u32,
    pub jobs: Vec<JobRecord>,
    pub conclusion: Conclusion,
    /// Rules of GitHub's that a step broke without failing (a step summary over 1 MiB).
    pub problems: Vec<String>,
}

impl Attempt {
    /// The jobs whose id or rendered name is `key`.
    pub fn jobs(&self, key: &str) -> Vec<&JobRecord> {
        self.jobs
            .iter()
            .filter(|j| j.id == key || j.name == key)
            .collect()
    }

    /// The one job whose id or name is `key`, or a panic listing the jobs.
    pub fn job(&self, key: &str) -> &JobRecord {
        match self.jobs(key).as_slice() {
            [one] => one,
            other => panic!(
                "{} jobs are `{key}`; the jobs: {:?}",
                other.len(),
                self.jobs.iter().map(|j| &j.name).collect::<Vec<_>>()
            ),
        }
    }

    /// Job, attempt, conclusion and wall seconds, one line per job.
    pub fn table(&self) -> String {
        let width = self
            .jobs
            .iter()
            .map(|j| j.name.len())
            .max()
            .unwrap_or(3)
            .max(3);
        let mut out = format!("{:width$}  attempt  conclusion  seconds\n", "job");
        for j in &self.jobs {
            let _ = writeln!(
                out,
                "{:width$}  {:>7}  {:10}  {:>7.2}",
                j.name,
                j.attempt,
                j.conclusion.as_str(),
                j.seconds
            );
        }
        let total: f64 = self
            .jobs
            .iter()
            .filter(|j| j.attempt == self.number)
            .map(|j| j.seconds)
            .sum();
        let _ = writeln!(
            out,
            "attempt {} {}: {total:.2} s of jobs",
            self.number,
            self.conclusion.as_str()
        );
        out
    }

    /// Each step of each job that ran: job, step, conclusion and wall seconds.
    pub fn step_table(&self) -> String {
        let mut out = String::new();
        for j in self.jobs.iter().filter(|j| j.attempt == self.number) {
            for s in &j.steps {
                let _ = writeln!(
                    out,
                    "{:40}  {:60}  {:10}  {:>7.2}",
                    j.name,
                    s.name,
                    s.conclusion.as_str(),
                    s.seconds
                );
            }
        }
        out
    }

    /// Every log of a job that did not succeed, for a failure message.
    pub fn failed_logs(&self) -> String {
        let mut out = String::new();
        for j in self
            .jobs
            .iter()
            .filter(|j| j.conclusion == Conclusion::Failure)
        {
            let _ = write!(
                out,
                "\n===== {} (attempt {})\n{}",
                j.name,
                j.attempt,
                j.log_text()
            );
        }
        out
    }
}

/// The run a walk is: where its repository is and what GitHub would tell it.
#[derive(Clone, Debug)]
pub struct Config {
    /// The workflow file's text.
    pub workflow: String,
    /// The bare repository `actions/checkout` clones and pushes go to.
    pub origin: PathBuf,
    /// Where runners' directories, the artifact store and the stand-ins go.
    pub dir: PathBuf,
    pub run_id: u64,
    /// The commit the run is for (`github.sha`): for a `pull_request` event the test merge
    /// ([`events::PullRefs::merge_sha`]), for `workflow_run` the default branch's tip.
    pub sha: String,
    /// `github.ref`, e.g. `refs/heads/main`; `refs/pull/<n>/merge` for a `pull_request` event
    /// and `refs/heads/<default branch>` for `workflow_run` ([`Walk::new`] checks both).
    pub git_ref: String,
    /// `owner/name`.
    pub repository: String,
    /// The `cell` binary the `cargo build --bin cell` stand-in puts in place.
    pub cell_bin: PathBuf,
}

/// What a test changes about a walk; may change between attempts.
#[derive(Clone, Debug)]
pub struct Options {
    /// `workflow_dispatch` inputs (the others take their defaults); another event has none.
    pub inputs: BTreeMap<String, String>,
    /// One of the events of the workflow's `on:`.
    pub event_name: String,
    /// The event's payload, `github.event` (with `inputs` for `workflow_dispatch`):
    /// [`events::pull_request_event`], [`events::workflow_run_event`]; `null` for none. Read
    /// by [`Walk::new`], which derives `github.head_ref`, `github.base_ref` and the run's API
    /// record from it.
    pub event: Value,
    /// Other runs of the repository whose routes (the run, its jobs, its artifacts and their
    /// zips) this run's API answers too, with this run's token, as GitHub lets a run's token
    /// read any run of its repository: e.g. the `pull_request` run a `workflow_run` reporter
    /// reads the artifacts of ([`Walk::view`]).
    pub other_runs: Vec<api::RunView>,
    /// The state of the API's write endpoints (comments, check runs): another walk's
    /// ([`Walk::writes`]) keeps what earlier walks wrote; `None`: a fresh one. Read by
    /// [`Walk::new`].
    pub writes: Option<Arc<Writes>>,
    /// Packages the `apt-get` stand-in fails to install.
    pub apt_fail: Vec<String>,
    /// URLs (substrings) the `curl`/`wget` stand-ins fail to download.
    pub download_fail: Vec<String>,
    /// Cancel the run once the first job whose id or rendered name this is has finished.
    pub cancel_after: Option<String>,
    /// Wait on the barrier before starting the job with this id (to run two walks' jobs at
    /// once).
    pub before_job: Option<(String, Arc<Barrier>)>,
    /// Concurrency groups shared between walks; without, `concurrency:` is not enforced.
    pub groups: Option<Arc<Groups>>,
    /// Print each job's log as it ends.
    pub verbose: bool,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            inputs: BTreeMap::new(),
            event_name: "workflow_dispatch".into(),
            event: Value::Null,
            other_runs: Vec::new(),
            writes: None,
            apt_fail: Vec::new(),
            download_fail: Vec::new(),
            cancel_after: None,
            before_job: None,
            groups: None,
            verbose: false,
        }
    }
}

/// One run id: its workflow, its artifact store, its API stand-in and its attempts.
pub struct Walk {
    pub workflow: workflow::Workflow,
    pub config: Config,
    pub options: Options,
    pub token: String,
    store: Arc<artifacts::Store>,
    state: Arc<Mutex<api::RunState>>,
    api: api::Api,
    /// What the event says about refs.
    trigger: events::Trigger,
    standins: PathBuf,
    seq: std::sync::atomic::AtomicUsize,
    /// The attempts so far.
    pub attempts: Vec<Attempt>,
}

#[cfg(test)]
mod tests;
