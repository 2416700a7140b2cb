//! [`Workflow`] → YAML text. Serde writes the data; one deterministic pass over its output then
//! adds what serde cannot: the header comment, `# <tag>` after every `uses:`, a comment on every
//! permission, and blank lines between top-level keys, jobs and steps.

use crate::PlanError;
use crate::pins;
use crate::workflow::Workflow;

/// Why each permission is granted (zizmor's `undocumented-permissions` asks for this too).
const PERMISSION_REASONS: &[(&str, &str)] = &[
    ("contents: read", "check out the repository"),
    ("contents: write", "commit and push results/"),
    ("actions: read", "list and download this run's artifacts"),
];

/// Serializes `wf` and adds the comments and spacing.
pub fn to_yaml(wf: &Workflow, header: &[String]) -> Result<String, PlanError> {
    let body = serde_norway::to_string(wf).map_err(|e| PlanError::Render(e.to_string()))?;
    let mut out = String::new();
    for line in header {
        out.push_str("# ");
        out.push_str(line);
        out.push('\n');
    }
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
        } else if in_jobs && indent == 4 {
            if content == "steps:" {
                in_steps = true;
                first_step = true;
            } else if in_steps && content.starts_with("- ") {
                if !first_step {
                    out.push('\n');
                }
                first_step = false;
            } else if !content.starts_with("- ") {
                in_steps = false;
            }
        }
        if permissions_indent.is_some_and(|p| indent <= p) {
            permissions_indent = None;
        }
        out.push_str(line);
        if let Some(p) = permissions_indent
            && indent > p
        {
            let reason = PERMISSION_REASONS
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
