//! Runs a workflow's attempts: jobs in `needs` order, each job's `if:` (default `success()`)
//! against its needs' results, matrices expanded and their entries run one after the other,
//! and in each job the steps in order (`step.rs` runs one), as the GitHub runner does:
//!
//! - a `run:` step is a script file run by `bash --noprofile --norc -eo pipefail {0}` (the
//!   workflow's `defaults.run.shell: bash`; `sh` is `sh -e {0}`), in a clean environment: the
//!   runner's variables (`GITHUB_*`, `RUNNER_*`, `CI`), the workflow's, job's and step's `env`,
//!   what earlier steps wrote to `$GITHUB_ENV`, and `PATH` = the stand-ins, what earlier steps
//!   wrote to `$GITHUB_PATH` (newest first), this machine's `PATH`;
//! - `$GITHUB_OUTPUT` and `$GITHUB_ENV` are read as `name=value` lines and `name<<DELIM`
//!   heredocs (a missing delimiter fails the step, as on GitHub); a `$GITHUB_STEP_SUMMARY`
//!   over 1 MiB is recorded as a problem (GitHub refuses to upload it);
//! - `continue-on-error` turns a failed outcome into a successful conclusion;
//!   `timeout-minutes` (job and step) kills the step;
//! - a job's result for `needs.<id>.result` is `failure` if any entry failed, `cancelled` if
//!   any was cancelled, `skipped` if none ran, else `success`; its outputs are the entries'
//!   outputs, the last non-empty value winning.
//!
//! Cancel ([`super::Options::cancel_after`]): once that job ends, `cancelled()` is true for
//! the rest; a job whose `if:` then holds (`always()`) runs, the others are cancelled.
//! "Re-run failed jobs" ([`Walk::rerun_failed`]): the failed and cancelled jobs (matrix entries)
//! and every job that needs one of them run again as the next attempt; the others keep their
//! earlier outcome and outputs.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::api::{Api, ApiJob, RunState, RunView};
use super::artifacts::Store;
use super::context::{check_ref, contexts};
use super::events::Trigger;
use super::expr::{self, Scope, Status};
use super::workflow::{Job, Matrix, Workflow, expand_matrix};
use super::{Attempt, Conclusion, Config, JobRecord, Options, Walk, standins};
use crate::github::Writes;

/// GitHub's limit on one step's summary.
pub const SUMMARY_LIMIT: usize = 1024 * 1024;

/// Concurrency groups shared by walks: a job with `concurrency:` holds its group while it
/// runs, and a second one waits (`cancel-in-progress: false`).
#[derive(Default, Debug)]
pub struct Groups {
    held: Mutex<BTreeSet<String>>,
    freed: Condvar,
}

impl Groups {
    fn acquire(&self, group: &str) {
        let mut held = self.held.lock().unwrap();
        while held.contains(group) {
            held = self.freed.wait(held).unwrap();
        }
        held.insert(group.to_owned());
    }

    fn release(&self, group: &str) {
        self.held.lock().unwrap().remove(group);
        self.freed.notify_all();
    }
}

fn now() -> String {
    cell_schema::time::format_utc(cell_schema::time::now_secs())
}

/// What one job (matrix entry) carries from step to step.
pub(super) struct JobState {
    pub(super) env: BTreeMap<String, String>,
    pub(super) github_env: BTreeMap<String, String>,
    pub(super) path: Vec<String>,
    pub(super) steps: serde_json::Map<String, Value>,
    pub(super) failed: bool,
    /// Cancelled while it ran: `success()` is false, `always()` steps still run.
    pub(super) cancelled: bool,
    pub(super) log: std::fs::File,
    pub(super) summary: String,
    pub(super) deadline: Instant,
}

/// A job's result over its entries.
fn aggregate(entries: &[&JobRecord]) -> Conclusion {
    let has = |c| entries.iter().any(|r| r.conclusion == c);
    if has(Conclusion::Failure) {
        Conclusion::Failure
    } else if has(Conclusion::Cancelled) {
        Conclusion::Cancelled
    } else if entries.iter().all(|r| r.conclusion == Conclusion::Skipped) {
        Conclusion::Skipped
    } else {
        Conclusion::Success
    }
}

impl Walk {
    /// Sets up a run: parses the workflow, checks the event against its `on:` and the
    /// [`Config`]'s `sha` and `git_ref` against what GitHub gives a run of that event, lets the
    /// origin serve any commit by id (as GitHub does), installs the stand-ins and starts the
    /// API stand-in.
    pub fn new(config: Config, options: Options) -> Result<Self, String> {
        let workflow = Workflow::parse(&config.workflow)?;
        let event = &options.event_name;
        if !workflow.events.is_empty() && !workflow.events.contains(event) {
            return Err(format!(
                "the workflow's `on:` has no `{event}` (it has {})",
                workflow.events.join(", ")
            ));
        }
        let trigger = Trigger::of(event, &options.event, &config.repository)?;
        let ok = Command::new("git")
            .arg("--git-dir")
            .arg(&config.origin)
            .args(["config", "uploadpack.allowAnySHA1InWant", "true"])
            .status()
            .map_err(|e| e.to_string())?;
        if !ok.success() {
            return Err(format!("{}: not a git repository", config.origin.display()));
        }
        if let Some(want) = &trigger.git_ref {
            check_ref(&config, event, want)?;
        }
        let base = config.dir.join(format!("run-{}", config.run_id));
        let standins_dir = base.join("standins");
        std::fs::create_dir_all(&standins_dir).map_err(|e| e.to_string())?;
        let system_path = std::env::var("PATH").unwrap_or_default();
        let standins = standins::install(&standins_dir, &config.cell_bin, &system_path);
        // Artifact ids are unique across the repository's runs.
        let first_id = config.run_id.saturating_mul(1000).saturating_add(1);
        let store = Arc::new(Store::with_first_id(&base.join("artifacts"), first_id));
        let token = format!("ghs_walk{}Token0123456789", config.run_id);
        let (sha, branch, head_repository) = match &trigger.head {
            Some((sha, branch, repo)) => (sha.clone(), branch.clone(), repo.clone()),
            None => (
                config.sha.clone(),
                config
                    .git_ref
                    .strip_prefix("refs/heads/")
                    .unwrap_or("")
                    .to_owned(),
                config.repository.clone(),
            ),
        };
        let state = Arc::new(Mutex::new(RunState {
            run_id: config.run_id,
            repo: config.repository.clone(),
            sha,
            branch,
            created_at: now(),
            attempt: 0,
            run_started_at: now(),
            status: "queued".into(),
            conclusion: None,
            jobs: Vec::new(),
            event: event.clone(),
            head_repository,
            pull_requests: trigger.pull_requests.clone(),
        }));
        let own = RunView {
            state: Arc::clone(&state),
            store: Arc::clone(&store),
        };
        let writes = options.writes.clone().unwrap_or_default();
        let api = Api::start(own, writes, token.clone());
        let walk = Self {
            workflow,
            config,
            options,
            token,
            store,
            state,
            api,
            trigger,
            standins,
            seq: std::sync::atomic::AtomicUsize::new(0),
            attempts: Vec::new(),
        };
        walk.show_other_runs()?;
        Ok(walk)
    }

    /// Puts [`Options::other_runs`] in the API, refusing a run whose artifact ids this one's
    /// could meet.
    fn show_other_runs(&self) -> Result<(), String> {
        for other in &self.options.other_runs {
            let id = other.state.lock().unwrap().run_id;
            if id == self.config.run_id {
                return Err(format!("run {id} is this run; other_runs holds other ones"));
            }
        }
        self.options
            .other_runs
            .clone_into(&mut self.api.others.lock().unwrap());
        Ok(())
    }

    /// This run as another walk's API shows it ([`Options::other_runs`]): its state and its
    /// artifacts, as they are then.
    pub fn view(&self) -> RunView {
        RunView {
            state: Arc::clone(&self.state),
            store: Arc::clone(&self.store),
        }
    }

    /// The write endpoints' state: what the steps wrote (comments, check runs), to assert on or
    /// to hand to the next walk ([`Options::writes`]).
    pub fn writes(&self) -> Arc<Writes> {
        Arc::clone(&self.api.writes)
    }

    /// The event payload file (`GITHUB_EVENT_PATH`).
    pub(super) fn event_path(&self) -> PathBuf {
        self.config
            .dir
            .join(format!("run-{}/event.json", self.config.run_id))
    }

    /// The API stand-in's base URL (`GITHUB_API_URL`).
    pub fn api_url(&self) -> String {
        self.api.base()
    }

    /// Every artifact the run uploaded so far.
    pub fn artifacts(&self) -> Vec<super::artifacts::Artifact> {
        self.store.list()
    }

    /// Attempt 1.
    pub fn run(&mut self) -> Result<Attempt, String> {
        assert!(
            self.attempts.is_empty(),
            "run() is attempt 1; use rerun_failed()"
        );
        self.attempt(false)
    }

    /// The next attempt, re-running the failed and cancelled jobs and their dependants.
    pub fn rerun_failed(&mut self) -> Result<Attempt, String> {
        assert!(!self.attempts.is_empty(), "nothing to re-run before run()");
        self.attempt(true)
    }

    fn attempt(&mut self, rerun: bool) -> Result<Attempt, String> {
        let number = self.attempts.len() as u32 + 1;
        let previous = if rerun {
            self.attempts.last().map(|a| a.jobs.clone())
        } else {
            None
        };
        standins::set_fail_lists(
            self.standins.parent().unwrap(),
            &self.options.apt_fail,
            &self.options.download_fail,
        );
        self.show_other_runs()?;
        let event = serde_json::to_string_pretty(&self.event()).map_err(|e| e.to_string())?;
        std::fs::write(self.event_path(), event).map_err(|e| e.to_string())?;
        {
            let mut s = self.state.lock().unwrap();
            s.attempt = number;
            s.run_started_at = now();
            s.status = "in_progress".into();
            s.conclusion = None;
        }
        let mut walked = Walked {
            number,
            previous,
            records: Vec::new(),
            rerun: BTreeSet::new(),
            cancelled: false,
            ended_at_cancel: BTreeSet::new(),
            problems: Vec::new(),
        };
        let order: Vec<Job> = self.workflow.ordered()?.into_iter().cloned().collect();
        for job in &order {
            self.walk_job(job, &mut walked)?;
        }
        let all: Vec<&JobRecord> = walked.records.iter().collect();
        // A cancelled run is `cancelled`, whatever its jobs did after.
        let conclusion = match aggregate(&all) {
            _ if walked.cancelled => Conclusion::Cancelled,
            Conclusion::Skipped => Conclusion::Success,
            c => c,
        };
        {
            let mut s = self.state.lock().unwrap();
            s.status = "completed".into();
            s.conclusion = Some(conclusion.as_str().into());
        }
        let attempt = Attempt {
            number,
            jobs: walked.records,
            conclusion,
            problems: walked.problems,
        };
        println!("walk of run {}:\n{}", self.config.run_id, attempt.table());
        self.attempts.push(attempt.clone());
        Ok(attempt)
    }
}

/// One attempt in progress.
pub(super) struct Walked {
    pub(super) number: u32,
    pub(super) previous: Option<Vec<JobRecord>>,
    pub(super) records: Vec<JobRecord>,
    /// Jobs of which this attempt ran an entry again (re-runs only).
    pub(super) rerun: BTreeSet<String>,
    pub(super) cancelled: bool,
    /// The jobs that had ended when the run was cancelled: a job needing only these was
    /// already running on GitHub (in parallel), so it is cancelled while it runs.
    pub(super) ended_at_cancel: BTreeSet<String>,
    pub(super) problems: Vec<String>,
}

impl Walked {
    fn entries(&self, id: &str) -> Vec<&JobRecord> {
        self.records.iter().filter(|r| r.id == id).collect()
    }

    /// `needs` as the expression context: each need's result and outputs.
    fn needs_context(&self, job: &Job) -> Value {
        let mut needs = serde_json::Map::new();
        for n in &job.needs {
            let entries = self.entries(n);
            let mut outputs = serde_json::Map::new();
            for e in &entries {
                for (k, v) in &e.outputs {
                    if !v.is_empty() || !outputs.contains_key(k) {
                        outputs.insert(k.clone(), Value::String(v.clone()));
                    }
                }
            }
            let result = aggregate(&entries).as_str();
            needs.insert(n.clone(), json!({ "result": result, "outputs": outputs }));
        }
        Value::Object(needs)
    }

    /// (all ancestors succeeded, some ancestor failed) of the job `id`, itself included.
    fn chain(&self, wf: &Workflow, id: &str) -> (bool, bool) {
        let result = aggregate(&self.entries(id));
        let job = wf.job(id).unwrap();
        let (mut ok, mut failed) = (result == Conclusion::Success, result == Conclusion::Failure);
        for n in &job.needs {
            let (o, f) = self.chain(wf, n);
            ok &= o;
            failed |= f;
        }
        (ok, failed)
    }

    fn job_status(&self, wf: &Workflow, job: &Job, cancelled: bool) -> Status {
        let chains: Vec<(bool, bool)> = job.needs.iter().map(|n| self.chain(wf, n)).collect();
        Status {
            success: !cancelled && chains.iter().all(|c| c.0),
            failure: chains.iter().any(|c| c.1),
            cancelled,
        }
    }

    /// The earlier attempt's records of `job` when a re-run keeps them: none of its needs ran
    /// again and none of its entries failed or was cancelled.
    fn kept(&self, job: &Job) -> Option<Vec<JobRecord>> {
        let prev = self.previous.as_ref()?;
        if job.needs.iter().any(|n| self.rerun.contains(n)) {
            return None;
        }
        let old: Vec<JobRecord> = prev.iter().filter(|r| r.id == job.id).cloned().collect();
        let fine =
            |r: &JobRecord| matches!(r.conclusion, Conclusion::Success | Conclusion::Skipped);
        (!old.is_empty() && old.iter().all(fine)).then_some(old)
    }

    /// An earlier successful record of one matrix entry a re-run keeps.
    fn kept_entry(&self, job: &Job, matrix: &Value) -> Option<JobRecord> {
        let prev = self.previous.as_ref()?;
        if job.needs.iter().any(|n| self.rerun.contains(n)) {
            return None;
        }
        prev.iter()
            .find(|r| r.id == job.id && &r.matrix == matrix && r.conclusion == Conclusion::Success)
            .cloned()
    }
}

/// A literal matrix whose values may be expressions (`os: ${{ fromJSON(…) }}`): each string
/// value evaluated, one level deep.
fn matrix_literal(
    lit: &serde_json::Map<String, Value>,
    scope: &Scope<'_>,
) -> Result<Value, String> {
    let mut out = serde_json::Map::new();
    for (k, v) in lit {
        let v = match v {
            Value::String(s) if s.contains("${{") => expr::render_value(s, scope)?,
            other => other.clone(),
        };
        out.insert(k.clone(), v);
    }
    Ok(Value::Object(out))
}

/// GitHub's name of a job without `name:`: its id, and a matrix entry's values.
fn default_name(job: &Job, matrix: &Value) -> String {
    match matrix.as_object() {
        Some(m) if !m.is_empty() => {
            let vals: Vec<String> = m.values().map(expr::to_text).collect();
            format!("{} ({})", job.id, vals.join(", "))
        }
        _ => job.id.clone(),
    }
}

fn not_run(job: &Job, attempt: u32, conclusion: Conclusion, name: String) -> JobRecord {
    let t = now();
    JobRecord {
        id: job.id.clone(),
        name,
        matrix: Value::Null,
        attempt,
        conclusion,
        outputs: BTreeMap::new(),
        steps: Vec::new(),
        seconds: 0.0,
        started_at: t.clone(),
        completed_at: t,
        labels: Vec::new(),
        log: None,
        workspace: None,
        summary: String::new(),
        api_id: 0,
    }
}

impl Walk {
    /// One job of the attempt: kept, skipped, cancelled, or its entries run.
    fn walk_job(&self, job: &Job, w: &mut Walked) -> Result<(), String> {
        if let Some(old) = w.kept(job) {
            w.records.extend(old);
            return Ok(());
        }
        let needs = w.needs_context(job);
        let ws = self.config.dir.join("no-workspace");
        let ctx = contexts(&[
            ("github", self.github_context(w.number, &job.id, &ws)),
            ("needs", needs.clone()),
            ("inputs", self.inputs()),
            ("vars", json!({})),
        ]);
        let decide = |status: Status| -> Result<bool, String> {
            let scope = Scope {
                contexts: &ctx,
                status,
                workspace: None,
            };
            expr::eval_if(job.condition.as_deref().unwrap_or(""), &scope)
                .map_err(|e| format!("jobs.{}.if: {e}", job.id))
        };
        let template = job.name.clone().unwrap_or_else(|| job.id.clone());
        // A job whose needs had all ended before the cancel was already running.
        let was_running = w.cancelled
            && job.needs.iter().all(|n| w.ended_at_cancel.contains(n))
            && decide(w.job_status(&self.workflow, job, false))?;
        let started_before_cancel = !w.cancelled || was_running;
        if !was_running && !decide(w.job_status(&self.workflow, job, w.cancelled))? {
            let c = if w.cancelled {
                Conclusion::Cancelled
            } else {
                Conclusion::Skipped
            };
            w.records.push(not_run(job, w.number, c, template));
            self.publish(&w.records);
            return Ok(());
        }
        let entries = match &job.matrix {
            None => vec![Value::Null],
            Some(m) => {
                let scope = Scope {
                    contexts: &ctx,
                    status: Status::OK,
                    workspace: None,
                };
                let value = match m {
                    Matrix::Literal(lit) => matrix_literal(lit, &scope),
                    Matrix::Expr(e) => expr::render_value(e, &scope),
                }
                .map_err(|e| format!("jobs.{}.strategy.matrix: {e}", job.id))?;
                let obj = value.as_object().ok_or_else(|| {
                    format!("jobs.{}.strategy.matrix: not a mapping: {value}", job.id)
                })?;
                expand_matrix(obj)?
            }
        };
        if entries.is_empty() {
            w.problems
                .push(format!("jobs.{}: the matrix has no entries", job.id));
            w.records
                .push(not_run(job, w.number, Conclusion::Failure, template));
            return Ok(());
        }
        let total = entries.len();
        for (index, matrix) in entries.into_iter().enumerate() {
            if let Some(old) = w.kept_entry(job, &matrix) {
                w.records.push(old);
                continue;
            }
            // `fail-fast`: GitHub cancels the entries still to come once one failed.
            if job.fail_fast
                && w.entries(&job.id)
                    .iter()
                    .any(|r| r.conclusion == Conclusion::Failure)
            {
                w.records.push(not_run(
                    job,
                    w.number,
                    Conclusion::Cancelled,
                    template.clone(),
                ));
                continue;
            }
            let cancelled_mode = w.cancelled && started_before_cancel;
            if let Some((id, barrier)) = &self.options.before_job
                && *id == job.id
                && index == 0
            {
                barrier.wait();
            }
            let rec = self.run_entry(job, &matrix, (index, total), &needs, cancelled_mode, w)?;
            w.rerun.insert(job.id.clone());
            let stop = self
                .options
                .cancel_after
                .as_ref()
                .is_some_and(|c| *c == rec.id || *c == rec.name);
            w.records.push(rec);
            self.publish(&w.records);
            if stop && !w.cancelled {
                w.cancelled = true;
                w.ended_at_cancel = w.records.iter().map(|r| r.id.clone()).collect();
                if index + 1 < total {
                    w.ended_at_cancel.remove(&job.id);
                }
            }
        }
        Ok(())
    }

    /// Shows the attempt's jobs so far to the API stand-in.
    fn publish(&self, records: &[JobRecord]) {
        let mut s = self.state.lock().unwrap();
        let attempt = s.attempt;
        s.jobs.retain(|j| j.attempt != attempt);
        let mut kept: Vec<ApiJob> = Vec::new();
        for (i, r) in records.iter().enumerate() {
            let job = ApiJob {
                id: if r.api_id == 0 {
                    90_000 + u64::from(attempt) * 1000 + i as u64
                } else {
                    r.api_id
                },
                name: r.name.clone(),
                attempt: r.attempt,
                status: "completed".into(),
                conclusion: Some(r.conclusion.as_str().into()),
                started_at: r.started_at.clone(),
                completed_at: Some(r.completed_at.clone()),
                labels: r.labels.clone(),
            };
            if r.attempt == attempt {
                kept.push(job);
            }
        }
        s.jobs.extend(kept);
    }

    /// Adds the job now running to the jobs API (`in_progress`).
    fn publish_running(&self, name: &str, labels: &[String], id: u64) {
        let mut s = self.state.lock().unwrap();
        let attempt = s.attempt;
        s.jobs.push(ApiJob {
            id,
            name: name.to_owned(),
            attempt,
            status: "in_progress".into(),
            conclusion: None,
            started_at: now(),
            completed_at: None,
            labels: labels.to_vec(),
        });
    }
}

impl Walk {
    /// A fresh runner directory for one entry (workspace, temp, home, tool cache) and the
    /// expression contexts of its job.
    fn prepare_entry(
        &self,
        job: &Job,
        matrix: &Value,
        (index, total): (usize, usize),
        needs: &Value,
        seq: usize,
        number: u32,
    ) -> Result<(PathBuf, PathBuf, serde_json::Map<String, Value>), String> {
        let dir = self.config.dir.join(format!(
            "run-{}/a{}/{seq:02}-{}",
            self.config.run_id, number, job.id
        ));
        let repo_name = self.config.repository.rsplit('/').next().unwrap_or("repo");
        let ws = dir.join("work").join(repo_name);
        for d in [
            &ws,
            &dir.join("temp"),
            &dir.join("home"),
            &dir.join("tool-cache"),
        ] {
            std::fs::create_dir_all(d).map_err(|e| format!("{}: {e}", d.display()))?;
        }
        let ctx = contexts(&[
            ("github", self.github_context(number, &job.id, &ws)),
            ("needs", needs.clone()),
            ("inputs", self.inputs()),
            ("vars", json!({})),
            ("secrets", json!({ "GITHUB_TOKEN": self.token })),
            (
                "matrix",
                if matrix.is_null() {
                    json!({})
                } else {
                    matrix.clone()
                },
            ),
            (
                "strategy",
                json!({"fail-fast": job.fail_fast, "job-index": index, "job-total": total, "max-parallel": 1}),
            ),
            (
                "runner",
                json!({"os": "Linux", "arch": "X64", "name": "walk", "environment": "github-hosted",
                "temp": dir.join("temp").display().to_string(),
                "tool_cache": dir.join("tool-cache").display().to_string()}),
            ),
            ("job", json!({"status": "success"})),
            ("env", json!({})),
            ("steps", json!({})),
        ]);
        Ok((dir, ws, ctx))
    }

    /// Runs one matrix entry of `job` on a fresh runner directory (`cancelled`: the run was
    /// cancelled while it ran).
    #[allow(
        clippy::too_many_arguments,
        reason = "the entry and the attempt, spelled out"
    )]
    fn run_entry(
        &self,
        job: &Job,
        matrix: &Value,
        (index, total): (usize, usize),
        needs: &Value,
        cancelled: bool,
        w: &mut Walked,
    ) -> Result<JobRecord, String> {
        let seq = self.seq.fetch_add(1, Ordering::SeqCst);
        let (dir, ws, mut ctx) =
            self.prepare_entry(job, matrix, (index, total), needs, seq, w.number)?;
        let render = |ctx: &serde_json::Map<String, Value>, text: &str| {
            let scope = Scope {
                contexts: ctx,
                status: Status::OK,
                workspace: Some(&ws),
            };
            expr::render(text, &scope).map_err(|e| format!("jobs.{}: {e}", job.id))
        };
        let name = match &job.name {
            Some(n) => render(&ctx, n)?,
            None => default_name(job, matrix),
        };
        let labels = match &job.runs_on {
            Value::Array(a) => a
                .iter()
                .map(|v| render(&ctx, &expr::to_text(v)))
                .collect::<Result<Vec<_>, _>>()?,
            v => vec![render(&ctx, &expr::to_text(v))?],
        };
        let mut env = BTreeMap::new();
        for (k, v) in self.workflow.env.iter().chain(&job.env) {
            ctx.insert("env".into(), json!(env));
            env.insert(k.clone(), render(&ctx, v)?);
        }
        ctx.insert("env".into(), json!(env));
        let group = match &job.concurrency {
            Some(c) if self.options.groups.is_some() => Some(render(&ctx, &c.group)?),
            _ => None,
        };
        if let (Some(g), Some(groups)) = (&group, &self.options.groups) {
            groups.acquire(g);
        }
        let api_id = 80_000 + seq as u64;
        self.publish_running(&name, &labels, api_id);
        let minutes: f64 = match &job.timeout_minutes {
            Some(t) => render(&ctx, t)?
                .trim()
                .parse()
                .map_err(|e| format!("jobs.{}.timeout-minutes: {e}", job.id))?,
            None => 360.0,
        };
        let log_path = dir.join("log.txt");
        let mut js = JobState {
            env,
            github_env: BTreeMap::new(),
            path: Vec::new(),
            steps: serde_json::Map::new(),
            failed: false,
            cancelled,
            log: std::fs::File::create(&log_path).map_err(|e| e.to_string())?,
            summary: String::new(),
            deadline: Instant::now() + Duration::from_secs_f64(minutes * 60.0),
        };
        let started_at = now();
        let t0 = Instant::now();
        let mut steps = Vec::new();
        for (i, step) in job.steps.iter().enumerate() {
            steps.push(self.run_step(job, step, i, &mut ctx, &mut js, &dir, &ws, w)?);
        }
        if let (Some(g), Some(groups)) = (&group, &self.options.groups) {
            groups.release(g);
        }
        ctx.insert("steps".into(), Value::Object(js.steps.clone()));
        let mut outputs = BTreeMap::new();
        for (k, v) in &job.outputs {
            outputs.insert(k.clone(), render(&ctx, v)?);
        }
        let failed_job = js.failed && job.continue_on_error.as_deref() != Some("true");
        let rec = JobRecord {
            id: job.id.clone(),
            name,
            matrix: matrix.clone(),
            attempt: w.number,
            conclusion: if cancelled {
                Conclusion::Cancelled
            } else if failed_job {
                Conclusion::Failure
            } else {
                Conclusion::Success
            },
            outputs,
            steps,
            seconds: t0.elapsed().as_secs_f64(),
            started_at,
            completed_at: now(),
            labels,
            log: Some(log_path),
            workspace: Some(ws),
            summary: js.summary,
            api_id,
        };
        if self.options.verbose {
            println!(
                "===== {} ({})\n{}",
                rec.name,
                rec.conclusion.as_str(),
                rec.log_text()
            );
        }
        Ok(rec)
    }
}
