//! A typed model of the part of GitHub Actions' workflow syntax that cell writes.
//!
//! Field order is declaration order and every map keeps insertion order ([`Map`]), so one
//! value always serializes to the same bytes. Optional and empty fields are left out.

use std::collections::BTreeMap;

use serde::ser::SerializeMap as _;
use serde::{Serialize, Serializer};

use crate::pins::Pin;

/// `${{ EXPR }}`: the one place an expression is spelled.
pub fn expr(inner: &str) -> String {
    format!("${{{{ {inner} }}}}")
}

/// A map that serializes in insertion order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Map<V>(Vec<(String, V)>);

impl<V> Default for Map<V> {
    fn default() -> Self {
        Self(Vec::new())
    }
}

impl<V> Map<V> {
    /// An empty map.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a key; a repeated key is a bug in the caller.
    pub fn insert(&mut self, key: impl Into<String>, value: V) {
        let key = key.into();
        assert!(
            self.get(&key).is_none(),
            "key `{key}` inserted twice into a workflow map"
        );
        self.0.push((key, value));
    }

    /// Adds a key, builder style.
    #[must_use]
    pub fn with(mut self, key: impl Into<String>, value: V) -> Self {
        self.insert(key, value);
        self
    }

    /// The value of a key.
    pub fn get(&self, key: &str) -> Option<&V> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// No keys.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Keys and values in order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &V)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// Keys and values in order, the values to change.
    pub fn iter_mut(&mut self) -> impl Iterator<Item = (&str, &mut V)> {
        self.0.iter_mut().map(|(k, v)| (k.as_str(), v))
    }

    /// Sets a key, added when new.
    pub fn set(&mut self, key: &str, value: V) {
        match self.0.iter_mut().find(|(k, _)| k == key) {
            Some((_, v)) => *v = value,
            None => self.0.push((key.to_owned(), value)),
        }
    }
}

impl<V: Serialize> Serialize for Map<V> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

/// A whole workflow file.
#[derive(Clone, Debug, Serialize)]
pub struct Workflow {
    /// Shown in the Actions tab.
    pub name: String,
    /// Triggers.
    pub on: On,
    /// Token permissions of every job, unless a job says otherwise.
    pub permissions: Permissions,
    /// Runs of the workflow in one group wait for (or cancel) each other.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub concurrency: Option<Concurrency>,
    /// Defaults of `run` steps.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub defaults: Option<Defaults>,
    /// Jobs in order.
    pub jobs: Map<Job>,
}

/// `on:`.
#[derive(Clone, Debug, Default, Serialize)]
pub struct On {
    /// Manual runs with inputs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workflow_dispatch: Option<WorkflowDispatch>,
    /// Cron triggers.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub schedule: Vec<Cron>,
    /// Pushes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub push: Option<Filters>,
    /// Pull requests.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pull_request: Option<Filters>,
    /// Another workflow's runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workflow_run: Option<WorkflowRunTrigger>,
}

/// `workflow_run:`: when runs of the named workflows reach one of `types`.
#[derive(Clone, Debug, Default, Serialize)]
pub struct WorkflowRunTrigger {
    /// Workflow names (their `name:`).
    pub workflows: Vec<String>,
    /// `completed`, `requested`, `in_progress`.
    pub types: Vec<String>,
}

/// `workflow_dispatch:`.
#[derive(Clone, Debug, Default, Serialize)]
pub struct WorkflowDispatch {
    /// Its inputs.
    #[serde(skip_serializing_if = "Map::is_empty")]
    pub inputs: Map<Input>,
}

/// One `workflow_dispatch` input.
#[derive(Clone, Debug, Serialize)]
pub struct Input {
    /// Shown in the run form.
    pub description: String,
    /// Must be filled in.
    pub required: bool,
    /// Its type.
    #[serde(rename = "type")]
    pub kind: InputType,
    /// Its default.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
}

/// Input types cell uses.
#[derive(Clone, Copy, Debug, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum InputType {
    /// Free text.
    String,
}

/// `- cron: "…"`.
#[derive(Clone, Debug, Serialize)]
pub struct Cron {
    /// Five cron fields, UTC.
    pub cron: String,
}

/// Branch and path filters of `push` / `pull_request`.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Filters {
    /// Branch globs; empty: every branch.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub branches: Vec<String>,
    /// Tag globs (a push of a tag); empty: none asked for.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// Path globs; empty: any change.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub paths: Vec<String>,
}

/// Permissions of the `GITHUB_TOKEN`: each scope named once with its level; a scope not
/// named is `none`. Written in [`Scope`]'s order.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct Permissions(pub BTreeMap<Scope, Level>);

impl Permissions {
    /// These scopes at these levels.
    pub fn of(scopes: impl IntoIterator<Item = (Scope, Level)>) -> Self {
        Self(scopes.into_iter().collect())
    }

    /// The level of `scope`, `None` when it is not named (GitHub reads that as `none`).
    pub fn get(&self, scope: Scope) -> Option<Level> {
        self.0.get(&scope).copied()
    }
}

/// A scope of the `GITHUB_TOKEN`'s permissions, as GitHub spells it in workflow YAML. The
/// order of the variants is the order they are written in (`contents` first, as the workflow
/// has always listed it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Scope {
    /// Repository contents, commits, branches, releases.
    Contents,
    /// Workflow runs and artifacts.
    Actions,
    /// Artifact attestations.
    Attestations,
    /// Check runs and check suites.
    Checks,
    /// Deployments.
    Deployments,
    /// Discussions.
    Discussions,
    /// OIDC tokens (`id-token`, `write` or `none` only).
    IdToken,
    /// Issues and their comments.
    Issues,
    /// Packages.
    Packages,
    /// GitHub Pages builds.
    Pages,
    /// Pull requests and their comments.
    PullRequests,
    /// Repository projects.
    RepositoryProjects,
    /// Code scanning alerts.
    SecurityEvents,
    /// Commit statuses.
    Statuses,
}

impl Scope {
    /// Every scope, in the order they are written.
    pub const ALL: [Self; 14] = [
        Self::Contents,
        Self::Actions,
        Self::Attestations,
        Self::Checks,
        Self::Deployments,
        Self::Discussions,
        Self::IdToken,
        Self::Issues,
        Self::Packages,
        Self::Pages,
        Self::PullRequests,
        Self::RepositoryProjects,
        Self::SecurityEvents,
        Self::Statuses,
    ];

    /// The key in workflow YAML (`pull-requests`, `id-token`, …).
    pub fn key(self) -> &'static str {
        match self {
            Self::Contents => "contents",
            Self::Actions => "actions",
            Self::Attestations => "attestations",
            Self::Checks => "checks",
            Self::Deployments => "deployments",
            Self::Discussions => "discussions",
            Self::IdToken => "id-token",
            Self::Issues => "issues",
            Self::Packages => "packages",
            Self::Pages => "pages",
            Self::PullRequests => "pull-requests",
            Self::RepositoryProjects => "repository-projects",
            Self::SecurityEvents => "security-events",
            Self::Statuses => "statuses",
        }
    }
}

impl Serialize for Scope {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.key())
    }
}

/// A permission level.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// Read.
    Read,
    /// Read and write.
    Write,
}

/// `defaults:`.
#[derive(Clone, Debug, Serialize)]
pub struct Defaults {
    /// Of `run` steps.
    pub run: RunDefaults,
}

/// `defaults.run:`.
#[derive(Clone, Debug, Serialize)]
pub struct RunDefaults {
    /// The shell (`bash` runs with `-eo pipefail`).
    pub shell: String,
}

/// `concurrency:`.
#[derive(Clone, Debug, Serialize)]
pub struct Concurrency {
    /// Runs in one group wait for each other.
    pub group: String,
    /// Whether a new run cancels the one in progress.
    #[serde(rename = "cancel-in-progress")]
    pub cancel_in_progress: bool,
    /// How many runs may wait (`max`: none is dropped).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queue: Option<String>,
}

/// `runs-on:`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum RunsOn {
    /// One label (or an expression).
    Label(String),
    /// Every label must match (self-hosted runners).
    Labels(Vec<String>),
}

/// One job.
#[derive(Clone, Debug, Serialize)]
pub struct Job {
    /// Shown in the run.
    pub name: String,
    /// Jobs this one waits for.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub needs: Vec<String>,
    /// Condition.
    #[serde(rename = "if", skip_serializing_if = "Option::is_none")]
    pub cond: Option<String>,
    /// Where it runs.
    #[serde(rename = "runs-on")]
    pub runs_on: RunsOn,
    /// Overrides the workflow's permissions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub permissions: Option<Permissions>,
    /// Its concurrency group.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub concurrency: Option<Concurrency>,
    /// Cancel it after this long.
    #[serde(rename = "timeout-minutes")]
    pub timeout_minutes: u32,
    /// Its matrix.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub strategy: Option<Strategy>,
    /// Environment of every step.
    #[serde(skip_serializing_if = "Map::is_empty")]
    pub env: Map<String>,
    /// Values later jobs read through `needs`.
    #[serde(skip_serializing_if = "Map::is_empty")]
    pub outputs: Map<String>,
    /// Steps.
    pub steps: Vec<Step>,
}

/// `strategy:`.
#[derive(Clone, Debug, Serialize)]
pub struct Strategy {
    /// One failing cell must not cancel the others.
    #[serde(rename = "fail-fast")]
    pub fail_fast: bool,
    /// The matrix.
    pub matrix: Matrix,
}

/// A matrix.
#[derive(Clone, Debug)]
pub enum Matrix {
    /// `${{ fromJSON(EXPR) }}`: a `{"include":[…]}` computed by an earlier job.
    FromJson(String),
}

impl Serialize for Matrix {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::FromJson(e) => s.serialize_str(&expr(&format!("fromJSON({e})"))),
        }
    }
}

/// One step: either `uses` an action or `run`s a script.
#[derive(Clone, Debug, Serialize)]
pub struct Step {
    /// Shown in the log.
    pub name: String,
    /// For `steps.<id>.outputs`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Condition.
    #[serde(rename = "if", skip_serializing_if = "Option::is_none")]
    pub cond: Option<String>,
    /// A failure is recorded in `steps.<id>.outcome` and the job goes on.
    #[serde(
        rename = "continue-on-error",
        skip_serializing_if = "std::ops::Not::not"
    )]
    pub continue_on_error: bool,
    /// The action, pinned.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uses: Option<Uses>,
    /// Its inputs.
    #[serde(skip_serializing_if = "Map::is_empty")]
    pub with: Map<Value>,
    /// Environment; the only way values reach a script.
    #[serde(skip_serializing_if = "Map::is_empty")]
    pub env: Map<String>,
    /// The script. Never holds `${{`: see [`Step::run`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run: Option<String>,
    /// Why the step is there, written as a comment above it.
    #[serde(skip)]
    pub comment: Option<String>,
}

impl Step {
    /// A step that runs `script` (lines joined with newlines).
    pub fn run(name: impl Into<String>, script: &[&str]) -> Self {
        let mut text = script.join("\n");
        if script.len() > 1 {
            text.push('\n');
        }
        Self {
            name: name.into(),
            id: None,
            cond: None,
            continue_on_error: false,
            uses: None,
            with: Map::new(),
            env: Map::new(),
            run: Some(text),
            comment: None,
        }
    }

    /// A step that uses a pinned action.
    pub fn uses(name: impl Into<String>, pin: &'static Pin) -> Self {
        Self {
            name: name.into(),
            id: None,
            cond: None,
            continue_on_error: false,
            uses: Some(Uses(pin)),
            with: Map::new(),
            env: Map::new(),
            run: None,
            comment: None,
        }
    }

    /// Sets the condition.
    #[must_use]
    pub fn when(mut self, cond: impl Into<String>) -> Self {
        self.cond = Some(cond.into());
        self
    }

    /// Adds an input.
    #[must_use]
    pub fn input(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.with.insert(key, value.into());
        self
    }

    /// Adds an environment variable.
    #[must_use]
    pub fn env(mut self, key: &str, value: impl Into<String>) -> Self {
        self.env.insert(key, value.into());
        self
    }

    /// Sets the id.
    #[must_use]
    pub fn id(mut self, id: &str) -> Self {
        self.id = Some(id.to_owned());
        self
    }

    /// Lets the job go on after this step fails (its outcome stays `failure`).
    #[must_use]
    pub fn continue_on_error(mut self) -> Self {
        self.continue_on_error = true;
        self
    }

    /// Sets the comment written above the step.
    #[must_use]
    pub fn comment(mut self, text: &str) -> Self {
        self.comment = Some(text.to_owned());
        self
    }
}

/// `uses: owner/repo@<commit>`; the tag comment is added after serialization.
#[derive(Clone, Copy, Debug)]
pub struct Uses(pub &'static Pin);

impl Serialize for Uses {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format!("{}@{}", self.0.action, self.0.sha))
    }
}

/// An input value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value {
    /// Text.
    Str(String),
    /// A boolean.
    Bool(bool),
}

impl Serialize for Value {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Str(v) => s.serialize_str(v),
            Self::Bool(b) => s.serialize_bool(*b),
        }
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Self {
        Self::Str(s.to_owned())
    }
}

impl From<String> for Value {
    fn from(s: String) -> Self {
        Self::Str(s)
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Self {
        Self::Bool(b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A scope spelled in Rust's way (`pull_requests`) would be ignored by GitHub and leave
    /// the token without the permission.
    #[test]
    fn every_scope_is_written_as_github_spells_it_in_declaration_order() {
        let all = Permissions::of(Scope::ALL.map(|s| (s, Level::Read)));
        let yaml = serde_norway::to_string(&all).unwrap();
        let keys: Vec<&str> = yaml
            .lines()
            .filter_map(|l| l.strip_suffix(": read"))
            .collect();
        assert_eq!(
            keys,
            [
                "contents",
                "actions",
                "attestations",
                "checks",
                "deployments",
                "discussions",
                "id-token",
                "issues",
                "packages",
                "pages",
                "pull-requests",
                "repository-projects",
                "security-events",
                "statuses",
            ]
        );
        assert_eq!(all.get(Scope::PullRequests), Some(Level::Read));
        assert_eq!(Permissions::default().get(Scope::Contents), None);
    }

    /// The collect job's permissions are written as they always were: `contents` before
    /// `actions`, whatever order they are given in.
    #[test]
    fn permissions_are_written_in_scope_order_not_insertion_order() {
        let p = Permissions::of([
            (Scope::Actions, Level::Read),
            (Scope::Contents, Level::Write),
        ]);
        assert_eq!(
            serde_norway::to_string(&p).unwrap(),
            "contents: write\nactions: read\n"
        );
    }
}
