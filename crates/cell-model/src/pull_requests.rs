//! `[workflow.pull_requests]`: a pull request's verdict. Its presence makes `cell plan` write
//! the read-only PR workflow and its reporter; it names the cells and toolchains a PR runs (a
//! smaller matrix than main's) and when the reporter comments.

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::{Cell, CellLabel, FieldError, Toolchain, ToolchainName, runners};

/// `[workflow.pull_requests]` as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawPullRequests {
    /// Cell labels a PR runs on (default: one GitHub-hosted cell, Linux x86-64 when there is).
    pub cells: Option<Vec<String>>,
    /// Toolchains a PR times (default: every toolchain with rows).
    pub toolchains: Option<Vec<String>>,
    /// Lets a self-hosted cell run a PR's code (a fork's too).
    #[serde(default)]
    pub self_hosted: bool,
    /// `always`, `on-change` or `on-fail`.
    pub comment: Option<String>,
}

/// When the reporter writes the PR's comment. An existing comment is updated whatever the
/// policy, so it never shows a verdict the latest push no longer has.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CommentPolicy {
    /// On every report.
    #[default]
    Always,
    /// When the verdict is not PASS (a change was seen, or the run could not tell).
    OnChange,
    /// When the verdict is FAIL.
    OnFail,
}

impl CommentPolicy {
    /// As written in the config and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            CommentPolicy::Always => "always",
            CommentPolicy::OnChange => "on-change",
            CommentPolicy::OnFail => "on-fail",
        }
    }

    /// The policy written `text`.
    pub fn parse(text: &str) -> Option<Self> {
        [Self::Always, Self::OnChange, Self::OnFail]
            .into_iter()
            .find(|p| p.as_str() == text)
    }
}

/// `[workflow.pull_requests]`, validated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PullRequests {
    /// The cells a PR runs on, each in `[cells]`.
    pub cells: Vec<CellLabel>,
    /// The toolchains it times, each with rows.
    pub toolchains: Vec<ToolchainName>,
    /// Whether a self-hosted cell was allowed explicitly.
    pub self_hosted: bool,
    /// When the reporter comments.
    pub comment: CommentPolicy,
}

impl PullRequests {
    /// Whether any of its cells is self-hosted.
    pub fn has_self_hosted(&self) -> bool {
        self.cells
            .iter()
            .any(|c| runners::hosted(c.as_str()).is_none())
    }
}

/// Validates `[workflow.pull_requests]` against the resolved cells and toolchains.
pub(crate) fn resolve_pull_requests(
    raw: Option<RawPullRequests>,
    cells: &BTreeMap<CellLabel, Cell>,
    toolchains: &BTreeMap<ToolchainName, Toolchain>,
) -> Result<Option<PullRequests>, FieldError> {
    let Some(raw) = raw else { return Ok(None) };
    let field = |f: &str| format!("workflow.pull_requests.{f}");
    let comment = match raw.comment.as_deref() {
        None => CommentPolicy::default(),
        Some(text) => CommentPolicy::parse(text).ok_or_else(|| {
            FieldError::new(
                field("comment"),
                format!(
                    "`{}`: write \"always\", \"on-change\" or \"on-fail\"",
                    cell_schema::escape::one_line(text)
                ),
            )
        })?,
    };
    let pr_cells = match raw.cells {
        Some(list) => named_cells(&list, cells, raw.self_hosted)?,
        None => vec![default_cell(cells)?],
    };
    let timed: Vec<&ToolchainName> = toolchains
        .values()
        .filter(|t| !t.rows.is_empty())
        .map(|t| &t.name)
        .collect();
    let pr_toolchains = match raw.toolchains {
        Some(list) => named_toolchains(&list, &timed)?,
        None => timed.into_iter().cloned().collect(),
    };
    Ok(Some(PullRequests {
        cells: pr_cells,
        toolchains: pr_toolchains,
        self_hosted: raw.self_hosted,
        comment,
    }))
}

fn named_cells(
    list: &[String],
    cells: &BTreeMap<CellLabel, Cell>,
    self_hosted: bool,
) -> Result<Vec<CellLabel>, FieldError> {
    let mut out: Vec<CellLabel> = Vec::new();
    for (i, name) in list.iter().enumerate() {
        let f = format!("workflow.pull_requests.cells[{i}]");
        let Some(cell) = cells.get(name.as_str()) else {
            return Err(FieldError::new(
                f,
                format!(
                    "`{}` is not a cell of [cells]: name one of {}",
                    cell_schema::escape::one_line(name),
                    cells
                        .keys()
                        .map(CellLabel::as_str)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        };
        if runners::hosted(cell.label.as_str()).is_none() && !self_hosted {
            return Err(FieldError::new(
                f,
                format!(
                    "`{}` is self-hosted: a pull request's code (a fork's too) would run on that machine; drop it, or set self_hosted = true in [workflow.pull_requests] if that machine may run anyone's code",
                    cell.label
                ),
            ));
        }
        if out.contains(&cell.label) {
            return Err(FieldError::new(
                f,
                format!("`{}` is named twice", cell.label),
            ));
        }
        out.push(cell.label.clone());
    }
    if out.is_empty() {
        return Err(FieldError::new(
            "workflow.pull_requests.cells",
            "empty: name a cell, or leave the key out for one GitHub-hosted cell",
        ));
    }
    Ok(out)
}

/// One hosted cell: Linux x86-64 first (the cheapest minutes), else the first hosted.
fn default_cell(cells: &BTreeMap<CellLabel, Cell>) -> Result<CellLabel, FieldError> {
    let hosted: Vec<&Cell> = cells
        .values()
        .filter(|c| runners::hosted(c.label.as_str()).is_some())
        .collect();
    hosted
        .iter()
        .find(|c| c.os == "linux" && c.arch == "x86_64")
        .or_else(|| hosted.first())
        .map(|c| c.label.clone())
        .ok_or_else(|| {
            FieldError::new(
                "workflow.pull_requests.cells",
                "no cell is GitHub-hosted, and a pull request's code runs only on hosted cells by default: name a cell and set self_hosted = true if that machine may run anyone's code",
            )
        })
}

fn named_toolchains(
    list: &[String],
    timed: &[&ToolchainName],
) -> Result<Vec<ToolchainName>, FieldError> {
    let mut out: Vec<ToolchainName> = Vec::new();
    for (i, name) in list.iter().enumerate() {
        let f = format!("workflow.pull_requests.toolchains[{i}]");
        let Some(tc) = timed.iter().find(|t| t.as_str() == name) else {
            return Err(FieldError::new(
                f,
                format!(
                    "`{}` is not a toolchain with rows: name one of {}",
                    cell_schema::escape::one_line(name),
                    timed
                        .iter()
                        .map(|t| t.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        };
        if out.contains(tc) {
            return Err(FieldError::new(f, format!("`{tc}` is named twice")));
        }
        out.push((*tc).clone());
    }
    if out.is_empty() {
        return Err(FieldError::new(
            "workflow.pull_requests.toolchains",
            "empty: name a toolchain, or leave the key out for every toolchain with rows",
        ));
    }
    Ok(out)
}
