//! Which matrix jobs the workflow has, and which of their entries a run selects.
//!
//! Every toolchain gets its own matrix job over the cells (its install steps are fixed, so the
//! job installs exactly that toolchain). A matrix holds at most [`MAX_MATRIX`] entries, so a
//! toolchain with more cells is split into parts. The `plan` job of a run then fills each matrix
//! job with the selected entries (`cell plan --matrix --outputs`); an empty one is skipped.

use cell_model::{Cell, CellLabel, Plan, ToolchainName, runners};
use serde::Serialize;

use crate::PlanError;
use crate::workflow::RunsOn;

/// GitHub's limit of jobs one matrix may generate.
pub const MAX_MATRIX: usize = 256;

/// One matrix job of the workflow: one toolchain on some cells.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MatrixJob {
    /// The job id, `run-<toolchain>` (`-part<N>` when split); also the `plan` output's name.
    pub id: String,
    /// The toolchain it installs and runs.
    pub toolchain: ToolchainName,
    /// The cells it may run on, in plan order.
    pub cells: Vec<CellLabel>,
    /// 1-based part number.
    pub part: usize,
    /// How many parts the toolchain's cells were split into.
    pub parts: usize,
}

/// The matrix jobs of a plan, in workflow order (toolchains sorted, then parts).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Matrix jobs.
    pub jobs: Vec<MatrixJob>,
}

/// One entry of a matrix: one (cell, toolchain) job.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Entry {
    /// The cell's label.
    pub cell: String,
    /// `<os>-<arch>-<label>`.
    #[serde(rename = "cell-id")]
    pub cell_id: String,
    /// `linux`, `macos`, `windows`.
    pub os: String,
    /// `x86_64`, `aarch64`.
    pub arch: String,
    /// Runner labels: the label of a hosted runner, `[self-hosted, <label>]` otherwise.
    #[serde(rename = "runs-on")]
    pub runs_on: RunsOn,
    /// The toolchain.
    pub toolchain: String,
}

impl Entry {
    fn new(cell: &Cell, toolchain: &ToolchainName) -> Self {
        Self {
            cell: cell.label.to_string(),
            cell_id: cell.id().to_string(),
            os: cell.os.clone(),
            arch: cell.arch.clone(),
            runs_on: runs_on(cell),
            toolchain: toolchain.to_string(),
        }
    }
}

/// Where a cell's jobs run.
pub fn runs_on(cell: &Cell) -> RunsOn {
    let label = cell.label.to_string();
    if runners::hosted(&label).is_some() {
        RunsOn::Label(label)
    } else {
        RunsOn::Labels(vec!["self-hosted".to_owned(), label])
    }
}

/// `{"include":[…]}`.
#[derive(Serialize)]
struct Include<'a> {
    include: &'a [Entry],
}

/// The entries one run selected, in total and per matrix job.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Selection {
    /// Every selected entry, in workflow order.
    pub include: Vec<Entry>,
    /// Per matrix job (every job of the layout, in order): its selected entries.
    pub per_job: Vec<(String, Vec<Entry>)>,
}

impl Selection {
    /// `{"include":[…]}` of every selected entry, on one line.
    pub fn matrix_json(&self) -> String {
        include_json(&self.include)
    }

    /// `<job>=<matrix>` lines for `$GITHUB_OUTPUT`, one per matrix job with entries; a job
    /// without a line is skipped by its `if:`.
    pub fn github_output(&self) -> String {
        let mut out = String::new();
        for (job, entries) in &self.per_job {
            if !entries.is_empty() {
                out.push_str(job);
                out.push('=');
                out.push_str(&include_json(entries));
                out.push('\n');
            }
        }
        out
    }
}

fn include_json(entries: &[Entry]) -> String {
    serde_json::to_string(&Include { include: entries }).expect("entries serialize")
}

impl Layout {
    /// The matrix jobs of `plan`.
    pub fn of(plan: &Plan) -> Result<Self, PlanError> {
        let toml = plan.root.join(cell_model::CELL_TOML);
        if plan.cells.is_empty() {
            return Err(PlanError::Config {
                path: toml,
                field: "cells".into(),
                msg: "no cell to run on: add one, e.g. [cells.\"ubuntu-24.04\"]".into(),
            });
        }
        let cells: Vec<CellLabel> = plan.cells.keys().cloned().collect();
        let parts = cells.len().div_ceil(MAX_MATRIX);
        let mut jobs: Vec<MatrixJob> = Vec::new();
        for name in plan.toolchains.keys() {
            let base = format!("run-{}", slug(name.as_str()));
            for (i, chunk) in cells.chunks(MAX_MATRIX).enumerate() {
                let id = if parts == 1 {
                    base.clone()
                } else {
                    format!("{base}-part{}", i + 1)
                };
                if let Some(other) = jobs.iter().find(|j| j.id == id) {
                    return Err(PlanError::Config {
                        path: toml,
                        field: format!("toolchains.{name}"),
                        msg: format!(
                            "its job id `{id}` is also toolchain `{}`'s (`.` becomes `_`): rename one of them",
                            other.toolchain
                        ),
                    });
                }
                jobs.push(MatrixJob {
                    id,
                    toolchain: name.clone(),
                    cells: chunk.to_vec(),
                    part: i + 1,
                    parts,
                });
            }
        }
        Ok(Self { jobs })
    }

    /// How many (cell, toolchain) jobs the whole plan has.
    pub fn total(&self) -> usize {
        self.jobs.iter().map(|j| j.cells.len()).sum()
    }

    /// The entries of the cells and toolchains named (comma-separated, blank: all); an unknown
    /// name is an error listing the known ones.
    pub fn select(
        &self,
        plan: &Plan,
        cells: Option<&str>,
        toolchains: Option<&str>,
    ) -> Result<Selection, PlanError> {
        let want_cells = names(cells);
        let want_tcs = names(toolchains);
        let unknown = |what, want: &[String], known: Vec<String>| {
            let unknown: Vec<String> = want
                .iter()
                .filter(|n| !known.contains(n))
                .cloned()
                .collect();
            if unknown.is_empty() {
                Ok(())
            } else {
                Err(PlanError::Unknown {
                    what,
                    unknown,
                    known,
                })
            }
        };
        unknown(
            "cell",
            &want_cells,
            plan.cells.keys().map(ToString::to_string).collect(),
        )?;
        unknown(
            "toolchain",
            &want_tcs,
            plan.toolchains.keys().map(ToString::to_string).collect(),
        )?;
        let picked =
            |want: &[String], name: &str| want.is_empty() || want.iter().any(|w| w == name);
        let mut include = Vec::new();
        let mut per_job = Vec::new();
        for job in &self.jobs {
            let mut entries = Vec::new();
            if picked(&want_tcs, job.toolchain.as_str()) {
                for label in &job.cells {
                    if picked(&want_cells, label.as_str()) {
                        entries.push(Entry::new(&plan.cells[label], &job.toolchain));
                    }
                }
            }
            include.extend(entries.iter().cloned());
            per_job.push((job.id.clone(), entries));
        }
        Ok(Selection { include, per_job })
    }
}

/// A comma-separated list, trimmed, blanks dropped, first occurrence kept.
fn names(list: Option<&str>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for n in list.unwrap_or("").split(',').map(str::trim) {
        if !n.is_empty() && !out.iter().any(|o| o == n) {
            out.push(n.to_owned());
        }
    }
    out
}

/// A toolchain name as a job id part: `.` (allowed in names, not in ids) becomes `_`.
fn slug(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_trims_dedups_and_drops_blanks() {
        assert_eq!(names(Some(" go, ,rust,go ")), vec!["go", "rust"]);
        assert!(names(Some("")).is_empty());
        assert!(names(None).is_empty());
    }

    #[test]
    fn slug_keeps_id_characters() {
        assert_eq!(slug("zig-0.16"), "zig-0_16");
        assert_eq!(slug("c_O2"), "c_O2");
    }
}
