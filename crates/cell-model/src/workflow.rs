//! `[workflow]` and `allow_dirty`: when the generated workflow runs and which generated files
//! a user may edit.

use crate::cell_source::{CellSource, resolve_cell_source};
use crate::safe::Kind;
use crate::{DEFAULT_WORKFLOW_RUST, DIRTY_FILES, FieldError, VersionsEnv, join, raw, safe_field};

/// `[workflow]`: when the generated workflow runs, validated.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WorkflowDef {
    /// Cron lines of the `schedule` trigger, five fields each.
    pub schedule: Vec<String>,
    /// Branches of the `push` trigger; empty: every branch.
    pub branches: Vec<String>,
    /// Paths of the `push` trigger; empty: no push trigger.
    pub paths: Vec<String>,
    /// The `versions.env` key of the Rust that builds cell on a runner.
    pub rust_key: String,
    /// Its value, when `versions.env` has it (`cell plan` requires it; `cell run` does not).
    pub rust: Option<String>,
    /// The branch `collect` commits `results/` to (created on first use), for a repository
    /// whose checked-out branch is protected; `None`: the checked-out branch.
    pub results_branch: Option<String>,
    /// `cell`: which cell the jobs run; `None` when not set (`cell plan` decides).
    pub cell: Option<CellSource>,
    /// `release`: `cell plan` also writes the workflow that publishes cell's releases.
    pub release: bool,
    /// `[workflow.pull_requests]`: the PR workflow and its reporter, when set.
    pub pull_requests: Option<crate::PullRequests>,
}

/// Validates `[workflow]`: five-field cron lines, no empty pattern, the Rust key it names.
pub(crate) fn resolve_workflow(
    env: &VersionsEnv,
    raw: raw::RawWorkflow,
) -> Result<WorkflowDef, FieldError> {
    for (i, cron) in raw.schedule.iter().enumerate() {
        safe_field(&format!("workflow.schedule[{i}]"), Kind::Cron, cron)?;
        let fields = cron.split_whitespace().count();
        if fields != 5 {
            return Err(FieldError::new(
                format!("workflow.schedule[{i}]"),
                format!(
                    "`{cron}` has {fields} fields: write five (minute hour day-of-month month day-of-week), e.g. \"17 4 * * 1\""
                ),
            ));
        }
    }
    for (list, name) in [(&raw.branches, "branches"), (&raw.paths, "paths")] {
        if let Some(i) = list.iter().position(|p| p.trim().is_empty()) {
            return Err(FieldError::new(
                format!("workflow.{name}[{i}]"),
                "empty pattern: write a glob such as \"cell/**\"",
            ));
        }
        for (i, pattern) in list.iter().enumerate() {
            safe_field(&format!("workflow.{name}[{i}]"), Kind::Glob, pattern)?;
        }
    }
    let rust_key = raw
        .rust
        .clone()
        .unwrap_or_else(|| DEFAULT_WORKFLOW_RUST.to_owned());
    let rust = env.get(&rust_key).map(str::to_owned);
    if raw.rust.is_some() && rust.is_none() {
        return Err(FieldError::new(
            "workflow.rust",
            format!("versions.env has no {rust_key}: add a line {rust_key}=<rust version>"),
        ));
    }
    if let Some(b) = &raw.results_branch
        && !is_branch_name(b)
    {
        return Err(FieldError::new(
            "workflow.results_branch",
            format!(
                "`{}`: write a branch name of letters, digits, `.`, `_`, `-` and `/` (not starting with `-` or `/`, no `..`, not ending in `/` or `.lock`)",
                cell_schema::escape::one_line(b)
            ),
        ));
    }
    Ok(WorkflowDef {
        schedule: raw.schedule,
        branches: raw.branches,
        paths: raw.paths,
        rust_key,
        rust,
        results_branch: raw.results_branch,
        cell: resolve_cell_source(raw.cell)?,
        release: raw.release,
        pull_requests: None,
    })
}

/// A branch name git takes and a shell, a YAML file and a refspec pass through unchanged.
fn is_branch_name(b: &str) -> bool {
    !b.is_empty()
        && b.len() <= 200
        && b.bytes()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'_' | b'-' | b'/'))
        && !b.starts_with(['-', '/', '.'])
        && !b.ends_with('/')
        && !b.to_ascii_lowercase().ends_with(".lock")
        && !b.contains("..")
        && !b.contains("//")
        && !b.contains("/.")
}

/// `allow_dirty` names generated files only.
pub(crate) fn check_allow_dirty(names: &[String]) -> Result<(), FieldError> {
    for (i, name) in names.iter().enumerate() {
        if !DIRTY_FILES.contains(&name.as_str()) {
            return Err(FieldError::new(
                format!("allow_dirty[{i}]"),
                format!(
                    "`{name}` is not a generated file: write {}",
                    join(DIRTY_FILES.iter().map(|f| format!("\"{f}\"")))
                ),
            ));
        }
    }
    Ok(())
}
