//! [`Workflow`] → YAML text. Serde writes the data; one deterministic pass over its output then
//! adds what serde cannot: the header comment, `# <tag>` after every `uses:`, a comment on every
//! permission, and blank lines between top-level keys, jobs and steps.

use std::fmt::Write as _;

use crate::PlanError;
use crate::pins;
use crate::workflow::Workflow;

/// Why each permission is granted (zizmor's `undocumented-permissions` asks for this too).
const PERMISSION_REASONS: &[(&str, &str)] = &[
    ("contents: read", "check out the repository"),
    ("contents: write", "commit and push results/"),
    ("actions: read", "list and download this run's artifacts"),
];

/// zizmor findings the generated file keeps on purpose, each with its reason, written as an
/// inline suppression on the line zizmor points at: (line, audit, reason).
const SUPPRESSIONS: &[(&str, &str, &str)] = &[(
    "on:",
    "concurrency-limits",
    "runs must not cancel each other (each is a measurement); collect has its own group",
)];

/// A job whose `runs-on:` is a list names self-hosted labels (hosted runners are one label):
/// cell's cells may be self-hosted machines on purpose, so zizmor's audit is answered there.
const SELF_HOSTED_REASON: &str = "# zizmor: ignore[self-hosted-runner] a cell of cell/cell.toml names this self-hosted platform; its build job runs there";

/// How wide a step's comment may run before it wraps.
const COMMENT_WIDTH: usize = 92;

/// The reasons written beside a workflow's permissions and zizmor suppressions.
pub struct Notes {
    /// (permission line, why).
    pub permissions: &'static [(&'static str, &'static str)],
    /// (top-level line, audit, why).
    pub suppressions: &'static [(&'static str, &'static str, &'static str)],
}

/// Those of `cell.yml`.
pub const CELL_NOTES: Notes = Notes {
    permissions: PERMISSION_REASONS,
    suppressions: SUPPRESSIONS,
};

/// Serializes `wf` and adds the comments and spacing of `cell.yml`.
pub fn to_yaml(wf: &Workflow, header: &[String]) -> Result<String, PlanError> {
    to_yaml_with(wf, header, &CELL_NOTES)
}

/// Serializes `wf` and adds the comments (`notes`' reasons) and spacing.
pub fn to_yaml_with(wf: &Workflow, header: &[String], notes: &Notes) -> Result<String, PlanError> {
    let body = serde_norway::to_string(wf).map_err(|e| PlanError::Render(e.to_string()))?;
    let comments = step_comments(wf);
    let mut out = String::new();
    for line in header {
        out.push('#');
        if !line.is_empty() {
            out.push(' ');
            out.push_str(line);
        }
        out.push('\n');
    }
    let mut job_id = String::new();
    let mut first_top = true;
    let mut in_jobs = false;
    let mut first_job = true;
    let mut in_steps = false;
    let mut first_step = true;
    let mut permissions_indent: Option<usize> = None;
    for line in body.lines() {
        let indent = line.len() - line.trim_start().len();
        let content = line.trim_start();
        if indent == 0 && !content.starts_with("- ") {
            // A top-level key.
            if !first_top || !header.is_empty() {
                out.push('\n');
            }
            first_top = false;
            in_jobs = content == "jobs:";
            in_steps = false;
        } else if in_jobs && indent == 2 {
            // A job id.
            if !first_job {
                out.push('\n');
            }
            first_job = false;
            in_steps = false;
            content.trim_end_matches(':').clone_into(&mut job_id);
        } else if in_jobs && indent == 4 {
            if content == "steps:" {
                in_steps = true;
                first_step = true;
            } else if in_steps && content.starts_with("- ") {
                if !first_step {
                    out.push('\n');
                }
                first_step = false;
                if let Some(text) = comment_for(&comments, &job_id, content) {
                    push_comment(&mut out, indent, text);
                }
            } else if !content.starts_with("- ") {
                in_steps = false;
            }
        }
        if permissions_indent.is_some_and(|p| indent <= p) {
            permissions_indent = None;
        }
        out.push_str(line);
        if indent == 0
            && let Some((_, audit, reason)) =
                notes.suppressions.iter().find(|(l, _, _)| *l == content)
        {
            let _ = write!(out, " # zizmor: ignore[{audit}] {reason}");
        }
        if in_jobs && indent == 4 && content == "runs-on:" {
            out.push(' ');
            out.push_str(SELF_HOSTED_REASON);
        }
        if let Some(p) = permissions_indent
            && indent > p
        {
            let reason = notes
                .permissions
                .iter()
                .find(|(k, _)| *k == content)
                .map(|(_, r)| *r)
                .ok_or_else(|| {
                    PlanError::Render(format!("no reason written for permission `{content}`"))
                })?;
            out.push_str(" # ");
            out.push_str(reason);
        }
        if content == "permissions:" {
            permissions_indent = Some(indent);
        }
        if let Some(value) = content
            .strip_prefix("- ")
            .unwrap_or(content)
            .strip_prefix("uses: ")
        {
            let pin = value
                .split_once('@')
                .and_then(|(_, sha)| pins::by_sha(sha))
                .ok_or_else(|| PlanError::Render(format!("`uses: {value}` is not a pin")))?;
            out.push_str(" # ");
            out.push_str(pin.tag);
        }
        out.push('\n');
    }
    Ok(out)
}

/// (job id, step name, comment) of every step that has a comment.
fn step_comments(wf: &Workflow) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    for (id, job) in wf.jobs.iter() {
        for step in &job.steps {
            if let Some(c) = &step.comment {
                out.push((id.to_owned(), step.name.clone(), c.clone()));
            }
        }
    }
    out
}

/// The comment of the step whose first line (`- name: …`) this is.
fn comment_for<'a>(
    comments: &'a [(String, String, String)],
    job: &str,
    line: &str,
) -> Option<&'a str> {
    let name = line.strip_prefix("- name: ")?;
    let name = name.trim_matches(|c| c == '\'' || c == '"');
    comments
        .iter()
        .find(|(j, n, _)| j == job && n == name)
        .map(|(_, _, c)| c.as_str())
}

/// `# `-lines at `indent`, wrapped at word boundaries.
fn push_comment(out: &mut String, indent: usize, text: &str) {
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && indent + 2 + line.len() + 1 + word.len() > COMMENT_WIDTH {
            let _ = writeln!(out, "{:indent$}# {line}", "");
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        let _ = writeln!(out, "{:indent$}# {line}", "");
    }
}
