//! `cell plan`: the resolved [`Plan`] → a typed GitHub Actions workflow → deterministic YAML.
//!
//! One render feeds both writing `.github/workflows/cell.yml` and `--check` (which prints a
//! unified diff and the command that fixes it). `--matrix` turns a run's chosen cells and
//! toolchains (or suite jobs) into the matrices of the workflow's jobs. Same inputs, same bytes: every map is
//! ordered, and nothing from the machine (paths, time) reaches the text.

mod build;
mod error;
mod getter;
mod header;
pub mod layout;
pub mod pins;
mod pull_request;
mod release;
mod render;
mod side;
pub mod workflow;

use std::path::{Path, PathBuf};

use cell_model::{Install, Plan};

pub use build::HOST_RUNNER;
pub use error::PlanError;
pub use getter::{own_repository, release_platforms};
pub use layout::{Entry, Layout, MAX_MATRIX, MatrixJob, Selection, Suite};
pub use pull_request::{PR_ARTIFACT, PR_PATH, PR_WORKFLOW, REPORT_PATH, pull_request_plan};
pub use release::{RELEASE_PACKAGED, RELEASE_PATH};
pub use side::{HOST_PLATFORM, bin_artifact, build_job_id};

/// The generated workflow, relative to the project root.
pub const WORKFLOW_PATH: &str = ".github/workflows/cell.yml";
/// What `allow_dirty` must name to let the workflow differ from the render.
pub const DIRTY_NAME: &str = "workflow";

/// The typed workflow of a plan.
pub fn workflow(plan: &Plan) -> Result<workflow::Workflow, PlanError> {
    build::workflow(plan, &Layout::of(plan)?)
}

/// The workflow file's text.
pub fn render(plan: &Plan) -> Result<String, PlanError> {
    let layout = Layout::of(plan)?;
    let wf = build::workflow(plan, &layout)?;
    render::to_yaml(&wf, &header::header(plan, &layout))
}

/// The release workflow's text, when `[workflow] release` asks for it.
pub fn render_release(plan: &Plan) -> Result<Option<String>, PlanError> {
    if !plan.workflow.release {
        return Ok(None);
    }
    let rust = getter::build_rust(plan, true)?;
    render::to_yaml_with(
        &release::workflow(&rust),
        &release::header(),
        &release::NOTES,
    )
    .map(Some)
}

/// The pull request workflow and its reporter, when `[workflow.pull_requests]` asks for them.
pub fn render_pull_requests(plan: &Plan) -> Result<Vec<(&'static str, String)>, PlanError> {
    let mut out = Vec::new();
    if let Some((wf, header)) = pull_request::pr_workflow(plan)? {
        out.push((
            pull_request::PR_PATH,
            render::to_yaml_with(&wf, &header, &pull_request::PR_NOTES)?,
        ));
    }
    if let Some((wf, header)) = pull_request::report_workflow(plan)? {
        out.push((
            pull_request::REPORT_PATH,
            render::to_yaml_with(&wf, &header, &pull_request::REPORT_NOTES)?,
        ));
    }
    Ok(out)
}

/// Every file `cell plan` writes: (path relative to the root, text).
pub fn render_all(plan: &Plan) -> Result<Vec<(&'static str, String)>, PlanError> {
    let mut out = vec![(WORKFLOW_PATH, render(plan)?)];
    if let Some(text) = render_release(plan)? {
        out.push((RELEASE_PATH, text));
    }
    out.extend(render_pull_requests(plan)?);
    Ok(out)
}

/// Where the workflow of a plan lives.
pub fn workflow_path(plan: &Plan) -> PathBuf {
    plan.root.join(WORKFLOW_PATH)
}

/// What `--check` found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Check {
    /// The file is what `cell plan` writes.
    Current,
    /// It differs (or is missing): the unified diff from the file to the render.
    Stale {
        /// `--- a/… +++ b/…` diff.
        diff: String,
    },
}

/// Compares the generated files with the render; the diffs of those that differ, joined.
pub fn check(plan: &Plan) -> Result<Check, PlanError> {
    let mut diff = String::new();
    for (rel, want) in render_all(plan)? {
        let path = plan.root.join(rel);
        let have = match std::fs::read_to_string(&path) {
            Ok(text) => Some(text),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(source) => return Err(PlanError::Io { path, source }),
        };
        if have.as_deref() == Some(want.as_str()) {
            continue;
        }
        let old_label = if have.is_some() {
            format!("a/{rel}")
        } else {
            "/dev/null".to_owned()
        };
        diff.push_str(&unified_diff(
            have.as_deref().unwrap_or(""),
            &want,
            &old_label,
            &format!("b/{rel} (as `cell plan` writes it)"),
        ));
    }
    Ok(if diff.is_empty() {
        Check::Current
    } else {
        Check::Stale { diff }
    })
}

/// Whether `allow_dirty` lets the workflow differ from the render.
pub fn allows_dirty(plan: &Plan) -> bool {
    plan.allow_dirty.iter().any(|f| f == DIRTY_NAME)
}

/// Writes the generated files (atomically, each only when it changes); returns whether any
/// changed.
pub fn write(plan: &Plan) -> Result<bool, PlanError> {
    let mut changed = false;
    for (rel, text) in render_all(plan)? {
        let path = plan.root.join(rel);
        if std::fs::read_to_string(&path).is_ok_and(|have| have == text) {
            continue;
        }
        write_atomic(&path, &text)?;
        changed = true;
    }
    Ok(changed)
}

fn write_atomic(path: &Path, text: &str) -> Result<(), PlanError> {
    // A fresh temporary name and a rename: nothing is written through a link planted at a
    // fixed name, and a failure leaves the old file.
    cell_schema::write_atomic(path, text.as_bytes()).map_err(|source| PlanError::Io {
        path: path.to_owned(),
        source,
    })
}

/// A unified diff (3 lines of context) from `old` to `new`.
pub fn unified_diff(old: &str, new: &str, old_label: &str, new_label: &str) -> String {
    similar::TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(3)
        .header(old_label, new_label)
        .to_string()
}

/// Checks a run's `--subject`: blank passes; otherwise every toolchain a selected job installs
/// from a tarball (a release under test; a server's toolchain too) must pin exactly that
/// version, because only a pinned version comes with a verified SHA-256.
pub fn check_subject(plan: &Plan, selection: &Selection, subject: &str) -> Result<(), PlanError> {
    let subject = subject.trim();
    if subject.is_empty() {
        return Ok(());
    }
    let err = |msg: String| PlanError::Subject {
        subject: subject.to_owned(),
        msg,
    };
    let mut seen = false;
    for name in selection
        .per_job
        .iter()
        .flat_map(|(_, entries)| entries)
        .map(|e| e.toolchain.as_str())
        .collect::<std::collections::BTreeSet<_>>()
    {
        let tc = &plan.toolchains[name];
        let Install::Tarball(def) = &tc.install else {
            continue;
        };
        seen = true;
        if def.version.as_deref() != Some(subject) {
            let pinned = def.version.as_deref().unwrap_or("no version");
            let keys: Vec<String> = def
                .version_key
                .iter()
                .cloned()
                .chain(
                    def.url_key
                        .iter()
                        .chain(&def.sha256_key)
                        .map(|k| format!("{k}_*")),
                )
                .collect();
            return Err(err(format!(
                "toolchain `{name}` is pinned to {pinned} in versions.env; to test {subject}, set {} there, run `cell plan` and commit",
                keys.join(", ")
            )));
        }
    }
    if seen {
        Ok(())
    } else {
        Err(err(
            "no selected toolchain is installed from a tarball (a release under test): leave subject empty"
                .into(),
        ))
    }
}
