//! A job entry's steps, as the GitHub runner executes them: each step's `if:`, its `uses:` or
//! its `run:` script in a clean environment built from the runner's variables and the
//! environment files earlier steps wrote, its timeout, and what it leaves behind (outputs,
//! `$GITHUB_ENV`, `$GITHUB_PATH`, the step summary). The job-level order lives in `runner.rs`.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::env_file::parse_env_file;
use super::expr::{self, Scope, Status};
use super::runner::{JobState, SUMMARY_LIMIT, Walked};
use super::workflow::{Job, Step};
use super::{Conclusion, StepRecord, Walk, actions};

/// How one step went before `continue-on-error`: success, outputs, env and path additions.
#[derive(Default)]
struct StepResult {
    ok: bool,
    outputs: Vec<(String, String)>,
}

impl Walk {
    #[allow(
        clippy::too_many_arguments,
        reason = "the step executor's whole state, spelled out"
    )]
    pub(super) fn run_step(
        &self,
        job: &Job,
        step: &Step,
        index: usize,
        ctx: &mut serde_json::Map<String, Value>,
        js: &mut JobState,
        dir: &Path,
        ws: &Path,
        w: &mut Walked,
    ) -> Result<StepRecord, String> {
        let mut env_ctx = js.env.clone();
        env_ctx.extend(js.github_env.clone());
        ctx.insert("env".into(), json!(env_ctx));
        ctx.insert("steps".into(), Value::Object(js.steps.clone()));
        let status = Status {
            success: !js.failed && !js.cancelled,
            failure: js.failed,
            cancelled: w.cancelled,
        };
        ctx.insert(
            "job".into(),
            json!({"status": if js.failed { "failure" } else { "success" }}),
        );
        let scope = Scope {
            contexts: ctx,
            status,
            workspace: Some(ws),
        };
        let what = format!("jobs.{}.steps[{index}]", job.id);
        let name = match (&step.name, &step.run, &step.uses) {
            (Some(n), _, _) => expr::render(n, &scope).map_err(|e| format!("{what}.name: {e}"))?,
            (None, Some(r), _) => format!("Run {}", r.lines().next().unwrap_or_default()),
            (None, None, Some(u)) => format!("Run {u}"),
            (None, None, None) => unreachable!("a step has run or uses"),
        };
        let cond = step.condition.as_deref().unwrap_or("");
        let runs = match expr::eval_if(cond, &scope) {
            Ok(r) => r,
            Err(e) => {
                let _ = writeln!(js.log, "##[error]{what}.if: {e}");
                js.failed = true;
                false
            }
        };
        let t0 = Instant::now();
        let _ = writeln!(
            js.log,
            "##[group]{name}{}",
            if runs { "" } else { " (skipped)" }
        );
        let result = if runs {
            self.step_body(step, &what, ctx, js, dir, ws, w)?
        } else {
            StepResult::default()
        };
        let coe = match &step.continue_on_error {
            Some(c) => {
                let scope = Scope {
                    contexts: ctx,
                    status,
                    workspace: Some(ws),
                };
                expr::truthy(&expr::render_value(c, &scope).map_err(|e| format!("{what}: {e}"))?)
                    || c.trim() == "true"
            }
            None => false,
        };
        let outcome = match (runs, result.ok) {
            (false, _) => Conclusion::Skipped,
            (true, true) => Conclusion::Success,
            (true, false) => Conclusion::Failure,
        };
        let conclusion = if outcome == Conclusion::Failure && coe {
            Conclusion::Success
        } else {
            outcome
        };
        if conclusion == Conclusion::Failure {
            js.failed = true;
        }
        let _ = writeln!(
            js.log,
            "##[endgroup] {} ({:.2} s)",
            outcome.as_str(),
            t0.elapsed().as_secs_f64()
        );
        if let Some(id) = &step.id {
            let outputs: serde_json::Map<String, Value> = result
                .outputs
                .iter()
                .map(|(k, v)| (k.clone(), Value::String(v.clone())))
                .collect();
            js.steps.insert(
                id.clone(),
                json!({"outcome": outcome.as_str(), "conclusion": conclusion.as_str(), "outputs": outputs}),
            );
        }
        Ok(StepRecord {
            name,
            id: step.id.clone(),
            outcome,
            conclusion,
            seconds: t0.elapsed().as_secs_f64(),
        })
    }

    /// A running step: its `env` rendered, then the script or the action.
    #[allow(
        clippy::too_many_arguments,
        reason = "the step executor's whole state, spelled out"
    )]
    fn step_body(
        &self,
        step: &Step,
        what: &str,
        ctx: &mut serde_json::Map<String, Value>,
        js: &mut JobState,
        dir: &Path,
        ws: &Path,
        w: &mut Walked,
    ) -> Result<StepResult, String> {
        let status = Status {
            success: !js.failed,
            failure: js.failed,
            cancelled: w.cancelled,
        };
        let mut env = js.env.clone();
        env.extend(js.github_env.clone());
        for (k, v) in &step.env {
            ctx.insert("env".into(), json!(env));
            let scope = Scope {
                contexts: ctx,
                status,
                workspace: Some(ws),
            };
            let value = expr::render(v, &scope).map_err(|e| format!("{what}.env.{k}: {e}"))?;
            env.insert(k.clone(), value);
        }
        ctx.insert("env".into(), json!(env));
        let scope = Scope {
            contexts: ctx,
            status,
            workspace: Some(ws),
        };
        let render = |t: &str| expr::render(t, &scope).map_err(|e| format!("{what}: {e}"));
        if let Some(uses) = &step.uses {
            let mut with = BTreeMap::new();
            for (k, v) in &step.with {
                with.insert(k.clone(), render(v)?);
            }
            let env = actions::Env {
                origin: &self.config.origin,
                workspace: ws,
                sha: &self.config.sha,
                git_ref: &self.config.git_ref,
                repository: &self.config.repository,
                token: &self.token,
                store: &self.store,
                attempt: w.number,
                home: &dir.join("home"),
            };
            return Ok(match actions::run(uses, &with, &env, &mut js.log)? {
                Ok(outputs) => StepResult { ok: true, outputs },
                Err(e) => {
                    let _ = writeln!(js.log, "##[error]{e}");
                    StepResult::default()
                }
            });
        }
        let script = render(step.run.as_deref().unwrap_or_default())?;
        let shell = step
            .shell
            .clone()
            .or_else(|| {
                self.workflow
                    .job(&job_id(what))
                    .and_then(|j| j.defaults.shell.clone())
            })
            .or_else(|| self.workflow.defaults.shell.clone());
        let wd = step
            .working_directory
            .as_deref()
            .map(render)
            .transpose()?
            .or_else(|| self.workflow.defaults.working_directory.clone());
        let cwd = wd.map_or_else(|| ws.to_path_buf(), |d| ws.join(d));
        // A step's `timeout-minutes` shortens the job's deadline for this step only.
        let job_deadline = js.deadline;
        if let Some(t) = &step.timeout_minutes {
            let minutes: f64 = render(t)?
                .trim()
                .parse()
                .map_err(|e| format!("{what}.timeout-minutes: {e}"))?;
            js.deadline =
                job_deadline.min(Instant::now() + Duration::from_secs_f64(minutes * 60.0));
        }
        let result = self.exec_script(&script, shell.as_deref(), &cwd, &env, js, dir, ws, w);
        js.deadline = job_deadline;
        result
    }
}

/// The job id in a `jobs.<id>.steps[i]` path.
fn job_id(what: &str) -> String {
    what.trim_start_matches("jobs.")
        .split(".steps")
        .next()
        .unwrap_or_default()
        .to_owned()
}

impl Walk {
    /// The runner's own variables for a step, with its environment files.
    fn runner_env(
        &self,
        ws: &Path,
        dir: &Path,
        files: &Path,
        w: &Walked,
        job: &str,
    ) -> Vec<(String, String)> {
        let c = &self.config;
        let d = |p: &Path| p.display().to_string();
        let mut v: Vec<(&str, String)> = vec![
            ("CI", "true".into()),
            ("GITHUB_ACTIONS", "true".into()),
            ("GITHUB_WORKSPACE", d(ws)),
            ("GITHUB_RUN_ID", c.run_id.to_string()),
            ("GITHUB_RUN_ATTEMPT", w.number.to_string()),
            ("GITHUB_RUN_NUMBER", "1".into()),
            ("GITHUB_REPOSITORY", c.repository.clone()),
            (
                "GITHUB_REPOSITORY_OWNER",
                c.repository.split('/').next().unwrap_or_default().into(),
            ),
            ("GITHUB_SHA", c.sha.clone()),
            ("GITHUB_REF", c.git_ref.clone()),
            (
                "GITHUB_REF_NAME",
                super::context::ref_name(&c.git_ref).into(),
            ),
            (
                "GITHUB_REF_TYPE",
                super::context::ref_type(&c.git_ref).into(),
            ),
            ("GITHUB_HEAD_REF", self.trigger.head_ref.clone()),
            ("GITHUB_BASE_REF", self.trigger.base_ref.clone()),
            ("GITHUB_EVENT_NAME", self.options.event_name.clone()),
            ("GITHUB_EVENT_PATH", d(&self.event_path())),
            ("GITHUB_API_URL", self.api_url()),
            ("GITHUB_SERVER_URL", "https://github.com".into()),
            ("GITHUB_ACTOR", "walk".into()),
            ("GITHUB_JOB", job.into()),
            ("GITHUB_WORKFLOW", self.workflow.name.clone()),
            ("RUNNER_OS", "Linux".into()),
            ("RUNNER_ARCH", "X64".into()),
            ("RUNNER_NAME", "walk".into()),
            ("RUNNER_ENVIRONMENT", "github-hosted".into()),
            ("RUNNER_TEMP", d(&dir.join("temp"))),
            ("RUNNER_TOOL_CACHE", d(&dir.join("tool-cache"))),
            ("HOME", d(&dir.join("home"))),
            ("LANG", "C.UTF-8".into()),
        ];
        for f in ["output", "env", "path", "step_summary", "state"] {
            let name = match f {
                "output" => "GITHUB_OUTPUT",
                "env" => "GITHUB_ENV",
                "path" => "GITHUB_PATH",
                "step_summary" => "GITHUB_STEP_SUMMARY",
                _ => "GITHUB_STATE",
            };
            v.push((name, d(&files.join(f))));
        }
        v.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()
    }

    #[allow(
        clippy::too_many_arguments,
        reason = "the step executor's whole state, spelled out"
    )]
    fn exec_script(
        &self,
        script: &str,
        shell: Option<&str>,
        cwd: &Path,
        env: &BTreeMap<String, String>,
        js: &mut JobState,
        dir: &Path,
        ws: &Path,
        w: &mut Walked,
    ) -> Result<StepResult, String> {
        let n = self.seq.fetch_add(1, Ordering::SeqCst);
        let files = dir.join(format!("temp/_runner_file_commands/{n}"));
        std::fs::create_dir_all(&files).map_err(|e| e.to_string())?;
        for f in ["output", "env", "path", "step_summary", "state"] {
            std::fs::write(files.join(f), "").map_err(|e| e.to_string())?;
        }
        let script_path: PathBuf = dir.join(format!("temp/_step_{n}.sh"));
        std::fs::write(&script_path, script).map_err(|e| e.to_string())?;
        let file = script_path.display().to_string();
        let argv: Vec<String> = match shell.unwrap_or("bash") {
            "bash" => ["bash", "--noprofile", "--norc", "-eo", "pipefail", &file]
                .map(String::from)
                .to_vec(),
            "sh" => ["sh", "-e", &file].map(String::from).to_vec(),
            custom => custom
                .split_whitespace()
                .map(|a| a.replace("{0}", &file))
                .collect(),
        };
        let system_path = std::env::var("PATH").unwrap_or_default();
        let mut path: Vec<String> = vec![self.standins.display().to_string()];
        path.extend(js.path.iter().rev().cloned());
        path.push(system_path);
        let mut cmd = Command::new(&argv[0]);
        cmd.args(&argv[1..])
            .env_clear()
            .envs(env)
            .env("PATH", path.join(":"));
        // The runner directory is `<seq>-<job id>`.
        let dir_name = dir.file_name().unwrap().to_string_lossy();
        let job = dir_name.split_once('-').map_or("", |(_, id)| id).to_owned();
        cmd.envs(self.runner_env(ws, dir, &files, w, &job));
        let log = js.log.try_clone().map_err(|e| e.to_string())?;
        let log2 = js.log.try_clone().map_err(|e| e.to_string())?;
        cmd.current_dir(cwd)
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(log2);
        let mut child = match cmd.spawn() {
            Ok(c) => c,
            Err(e) => {
                let _ = writeln!(
                    js.log,
                    "##[error]{}: {e} (working directory {})",
                    argv[0],
                    cwd.display()
                );
                return Ok(StepResult::default());
            }
        };
        let code = loop {
            if let Some(s) = child.try_wait().map_err(|e| e.to_string())? {
                break s.code();
            }
            if Instant::now() > js.deadline {
                let _ = child.kill();
                let _ = child.wait();
                let _ = writeln!(js.log, "##[error]The job has exceeded its timeout-minutes.");
                break None;
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        if code != Some(0) {
            let _ = writeln!(
                js.log,
                "##[error]Process completed with exit code {}.",
                code.unwrap_or(-1)
            );
        }
        let read = |f: &str| std::fs::read_to_string(files.join(f)).unwrap_or_default();
        let mut result = StepResult {
            ok: code == Some(0),
            outputs: Vec::new(),
        };
        match parse_env_file(&read("output"))
            .and_then(|o| parse_env_file(&read("env")).map(|e| (o, e)))
        {
            Ok((outputs, envs)) => {
                result.outputs = outputs;
                js.github_env.extend(envs);
            }
            Err(e) => {
                let _ = writeln!(js.log, "##[error]Unable to process file command: {e}");
                result.ok = false;
            }
        }
        js.path.extend(
            read("path")
                .lines()
                .filter(|l| !l.trim().is_empty())
                .map(str::to_owned),
        );
        let summary = read("step_summary");
        if summary.len() > SUMMARY_LIMIT {
            w.problems.push(format!(
                "{}: $GITHUB_STEP_SUMMARY upload aborted, supports content up to a size of 1024k, got {}k",
                dir.display(),
                summary.len() / 1024
            ));
        } else {
            js.summary.push_str(&summary);
        }
        Ok(result)
    }
}
