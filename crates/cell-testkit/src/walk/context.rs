//! What a job sees of its run: the `github` context (its refs, the event and its payload, the
//! inputs of a `workflow_dispatch`), checked against what GitHub gives a run of that event.

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use super::{Config, Walk};

/// Refuses a [`Config`] whose `git_ref` is not `want`, the ref GitHub gives a run of `event`,
/// or whose `sha` is not where `want` points in the origin.
pub(super) fn check_ref(config: &Config, event: &str, want: &str) -> Result<(), String> {
    if config.git_ref != want {
        return Err(format!(
            "a {event} run has github.ref `{want}`; the Config says `{}`",
            config.git_ref
        ));
    }
    let out = Command::new("git")
        .arg("--git-dir")
        .arg(&config.origin)
        .args(["rev-parse", "--verify", "-q", &format!("{want}^{{commit}}")])
        .output()
        .map_err(|e| e.to_string())?;
    let at = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    if at != config.sha {
        let what = if at.is_empty() {
            "is not in the origin (events::open_pull_request writes a pull request's)".to_owned()
        } else {
            format!("is at {at}")
        };
        return Err(format!(
            "a {event} run has github.sha where `{want}` points, which {what}; the Config says {}",
            config.sha
        ));
    }
    Ok(())
}

/// `github.ref_name` of `git_ref`: the branch or tag, `<n>/merge` of a pull request's ref.
pub fn ref_name(git_ref: &str) -> &str {
    ["refs/heads/", "refs/tags/", "refs/pull/"]
        .iter()
        .find_map(|p| git_ref.strip_prefix(p))
        .unwrap_or(git_ref)
}

/// `github.ref_type` of `git_ref`.
pub fn ref_type(git_ref: &str) -> &'static str {
    if git_ref.starts_with("refs/tags/") {
        "tag"
    } else {
        "branch"
    }
}

pub(super) fn contexts(pairs: &[(&str, Value)]) -> serde_json::Map<String, Value> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), v.clone()))
        .collect()
}

impl Walk {
    pub(super) fn github_context(&self, attempt: u32, job: &str, workspace: &Path) -> Value {
        let c = &self.config;
        json!({
            "run_id": c.run_id.to_string(),
            "run_attempt": attempt.to_string(),
            "run_number": "1",
            "sha": c.sha,
            "ref": c.git_ref,
            "ref_name": ref_name(&c.git_ref),
            "ref_type": ref_type(&c.git_ref),
            "head_ref": self.trigger.head_ref,
            "base_ref": self.trigger.base_ref,
            "token": self.token,
            "repository": c.repository,
            "repository_owner": c.repository.split('/').next().unwrap_or_default(),
            "workspace": workspace.display().to_string(),
            "event_name": self.options.event_name,
            "event": self.event(),
            "event_path": self.event_path().display().to_string(),
            "actor": "walk",
            "job": job,
            "workflow": self.workflow.name,
            "server_url": "https://github.com",
            "api_url": self.api_url(),
            "action_path": "",
        })
    }

    /// `github.event`: the payload, with the inputs of a `workflow_dispatch`.
    pub(super) fn event(&self) -> Value {
        let mut event = match &self.options.event {
            Value::Object(m) => m.clone(),
            _ => serde_json::Map::new(),
        };
        if self.options.event_name == "workflow_dispatch" {
            event.insert("inputs".into(), self.inputs());
        }
        Value::Object(event)
    }

    /// The `inputs` context: a `workflow_dispatch`'s inputs, defaults filled in; empty for
    /// another event (GitHub fills in no defaults then).
    pub(super) fn inputs(&self) -> Value {
        if self.options.event_name != "workflow_dispatch" {
            assert!(
                self.options.inputs.is_empty(),
                "inputs are for a workflow_dispatch event, not {}",
                self.options.event_name
            );
            return json!({});
        }
        let mut m = serde_json::Map::new();
        for i in &self.workflow.inputs {
            let v = self.options.inputs.get(&i.name).unwrap_or(&i.default);
            m.insert(i.name.clone(), Value::String(v.clone()));
        }
        if let Some(k) = self.options.inputs.keys().find(|k| !m.contains_key(*k)) {
            panic!("the workflow has no input `{k}`");
        }
        Value::Object(m)
    }
}
