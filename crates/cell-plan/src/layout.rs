//! Which matrix jobs the workflow has, and which of their entries a run selects.
//!
//! Every toolchain with rows gets its own matrix job over the cells (its install steps are
//! fixed, so the job installs exactly that toolchain); a toolchain without rows (one that only
//! runs a server) gets none. With `[http]`, every server gets a matrix job of its own over the
//! cells (`http-<server>`), and with `[soak]` every soaked server too (`soak-<server>`): they
//! never share a toolchain's workload job. A matrix holds at most [`MAX_MATRIX`] entries, so a
//! job with more cells is split into parts. The `plan` job of a run then fills each matrix job
//! with the selected entries (`cell plan --matrix --outputs`); an empty one is skipped.

use cell_model::{Cell, CellLabel, Plan, ServerName, ToolchainName, runners};
use serde::Serialize;

use crate::PlanError;
use crate::workflow::RunsOn;

/// GitHub's limit of jobs one matrix may generate.
pub const MAX_MATRIX: usize = 256;

/// What a matrix job runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Suite {
    /// The toolchain's rows against the reference (`cell run --toolchain`).
    Workload,
    /// One server under the load generators (`cell run --suite http --server`).
    Http(ServerName),
    /// One server at a fixed rate for a long window (`cell run --suite soak --server`).
    Soak(ServerName),
}

impl Suite {
    /// The server of a suite job.
    pub fn server(&self) -> Option<&ServerName> {
        match self {
            Self::Workload => None,
            Self::Http(s) | Self::Soak(s) => Some(s),
        }
    }

    /// `http` or `soak` (`cell run --suite`); `workload` otherwise.
    pub fn as_str(&self) -> &'static str {
        match self {
            Self::Workload => "workload",
            Self::Http(_) => "http",
            Self::Soak(_) => "soak",
        }
    }
}

/// One matrix job of the workflow: one toolchain's rows, or one server, on some cells.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MatrixJob {
    /// The job id, `run-<toolchain>`, `http-<server>` or `soak-<server>` (`-part<N>` when
    /// split); also the `plan` output's name.
    pub id: String,
    /// What it runs.
    pub suite: Suite,
    /// The toolchain it installs: the one under test, or the server's.
    pub toolchain: ToolchainName,
    /// The cells it may run on, in plan order.
    pub cells: Vec<CellLabel>,
    /// 1-based part number.
    pub part: usize,
    /// How many parts the job's cells were split into.
    pub parts: usize,
}

impl MatrixJob {
    /// Its name within a cell, the last word of the job's display name `cell <cell-id> <name>`
    /// (how `cell collect` tells which jobs left no result): the toolchain of a workload job,
    /// `http-<server>` or `soak-<server>` of a suite job.
    pub fn name(&self) -> String {
        match &self.suite {
            Suite::Workload => self.toolchain.to_string(),
            Suite::Http(s) | Suite::Soak(s) => format!("{}-{s}", self.suite.as_str()),
        }
    }
}

/// The matrix jobs of a plan, in workflow order: workload jobs (toolchains sorted), then http
/// jobs (servers sorted), then soak jobs (servers as `[soak]` lists them); parts in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Matrix jobs.
    pub jobs: Vec<MatrixJob>,
    /// What the plan left out and why (a cell a suite cannot run on).
    pub notes: Vec<String>,
}

/// One entry of a matrix: one job on one cell.
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
    /// The toolchain the job installs.
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
    /// Every selected entry of a workload job (one per cell and toolchain), in workflow order.
    pub include: Vec<Entry>,
    /// Per matrix job (every job of the layout, suite jobs too, in order): its selected entries.
    pub per_job: Vec<(String, Vec<Entry>)>,
}

impl Selection {
    /// `{"include":[…]}` of every selected workload entry, on one line.
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
        // (id base, what, its toolchain, the config field that names it)
        let mut wanted: Vec<(String, Suite, ToolchainName, String)> = Vec::new();
        for (name, tc) in &plan.toolchains {
            // A toolchain without rows has nothing to time: it only builds or runs servers.
            if !tc.rows.is_empty() {
                wanted.push((
                    format!("run-{}", slug(name.as_str())),
                    Suite::Workload,
                    name.clone(),
                    format!("toolchains.{name}"),
                ));
            }
        }
        if let Some(http) = &plan.http {
            // The workflow measures what `cell local` does by default: `[http.default] servers`
            // and every server the release under test builds.
            for name in plan.http_default_servers(false) {
                let server = &http.servers[&name];
                wanted.push((
                    format!("http-{}", slug(name.as_str())),
                    Suite::Http(name.clone()),
                    server.toolchain.clone(),
                    format!("http.servers.{name}"),
                ));
            }
            if let Some(soak) = &plan.soak {
                for name in &soak.servers {
                    wanted.push((
                        format!("soak-{}", slug(name.as_str())),
                        Suite::Soak(name.clone()),
                        http.servers[name].toolchain.clone(),
                        format!("http.servers.{name}"),
                    ));
                }
            }
        }
        // The server suites read /proc (process-tree CPU and RSS) and install wrk with apt.
        let linux: Vec<CellLabel> = plan
            .cells
            .iter()
            .filter(|(_, c)| c.os == "linux")
            .map(|(l, _)| l.clone())
            .collect();
        let mut notes = Vec::new();
        let other: Vec<&str> = plan
            .cells
            .iter()
            .filter(|(_, c)| c.os != "linux")
            .map(|(l, _)| l.as_str())
            .collect();
        if plan.http.is_some() && !other.is_empty() {
            notes.push(format!(
                "no http or soak job on {}: the server suites read /proc for the process tree's CPU and RSS and install wrk with apt, which only Linux cells have",
                other.join(", ")
            ));
        }
        let mut jobs: Vec<MatrixJob> = Vec::new();
        for (base, suite, toolchain, field) in wanted {
            let cells = if suite == Suite::Workload {
                &cells
            } else {
                &linux
            };
            let parts = cells.len().div_ceil(MAX_MATRIX);
            for (i, chunk) in cells.chunks(MAX_MATRIX).enumerate() {
                let id = if parts == 1 {
                    base.clone()
                } else {
                    format!("{base}-part{}", i + 1)
                };
                let job = MatrixJob {
                    id,
                    suite: suite.clone(),
                    toolchain: toolchain.clone(),
                    cells: chunk.to_vec(),
                    part: i + 1,
                    parts,
                };
                if let Some(other) = jobs
                    .iter()
                    .find(|j| j.id == job.id || (j.part == job.part && j.name() == job.name()))
                {
                    let (clash, why) = if other.id == job.id {
                        (format!("its job id `{}`", job.id), " (`.` becomes `_`)")
                    } else {
                        (format!("its job name `cell <cell-id> {}`", job.name()), "")
                    };
                    return Err(PlanError::Config {
                        path: toml,
                        field,
                        msg: format!(
                            "{clash} is also {}'s{why}: rename one of them",
                            describe(other)
                        ),
                    });
                }
                jobs.push(job);
            }
        }
        Ok(Self { jobs, notes })
    }

    /// How many (cell, job) pairs the whole plan has.
    pub fn total(&self) -> usize {
        self.jobs.iter().map(|j| j.cells.len()).sum()
    }

    /// The entries of the cells and jobs named (comma-separated, blank: all). `toolchains`
    /// names toolchains (their workload jobs) and suite jobs by their name within a cell
    /// (`http-<server>`, `soak-<server>`); blank selects every job, and a non-blank list
    /// without suite names selects none of them. An unknown name is an error listing the known
    /// ones, and so is a toolchain that has no workload job.
    pub fn select(
        &self,
        plan: &Plan,
        cells: Option<&str>,
        toolchains: Option<&str>,
    ) -> Result<Selection, PlanError> {
        let want_cells = names(cells);
        let want_jobs = names(toolchains);
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
        let mut suite_names: Vec<String> = Vec::new();
        for job in self.jobs.iter().filter(|j| j.suite != Suite::Workload) {
            if !suite_names.contains(&job.name()) {
                suite_names.push(job.name());
            }
        }
        let is_toolchain = |n: &String| plan.toolchains.contains_key(n.as_str());
        let (want_suites, want_tcs): (Vec<String>, Vec<String>) = want_jobs
            .iter()
            .cloned()
            .partition(|n| !is_toolchain(n) && (n.starts_with("http-") || n.starts_with("soak-")));
        if suite_names.is_empty() {
            // No suite jobs: every name is a toolchain's, as before suites existed.
            unknown("toolchain", &want_jobs, toolchain_names(plan))?;
        } else {
            unknown("toolchain", &want_tcs, toolchain_names(plan))?;
            unknown("suite job", &want_suites, suite_names)?;
        }
        for name in &want_tcs {
            let tc = &plan.toolchains[name.as_str()];
            if tc.rows.is_empty() {
                let mut servers: Vec<String> = Vec::new();
                for j in &self.jobs {
                    if j.suite != Suite::Workload
                        && j.toolchain == tc.name
                        && !servers.contains(&j.name())
                    {
                        servers.push(j.name());
                    }
                }
                let hint = if servers.is_empty() {
                    String::new()
                } else {
                    format!(": its servers run in {}", servers.join(", "))
                };
                return Err(PlanError::Select(format!(
                    "toolchain `{name}` has no rows, so no workload job{hint}"
                )));
            }
        }
        let picked =
            |want: &[String], name: &str| want.is_empty() || want.iter().any(|w| w == name);
        let mut include = Vec::new();
        let mut per_job = Vec::new();
        for job in &self.jobs {
            let mut entries = Vec::new();
            if picked(&want_jobs, &job.name()) {
                for label in &job.cells {
                    if picked(&want_cells, label.as_str()) {
                        entries.push(Entry::new(&plan.cells[label], &job.toolchain));
                    }
                }
            }
            if job.suite == Suite::Workload {
                include.extend(entries.iter().cloned());
            }
            per_job.push((job.id.clone(), entries));
        }
        Ok(Selection { include, per_job })
    }
}

fn toolchain_names(plan: &Plan) -> Vec<String> {
    plan.toolchains.keys().map(ToString::to_string).collect()
}

/// A job as an error message names it.
fn describe(job: &MatrixJob) -> String {
    match &job.suite {
        Suite::Workload => format!("toolchain `{}`", job.toolchain),
        Suite::Http(s) => format!("the http job of server `{s}`"),
        Suite::Soak(s) => format!("the soak job of server `{s}`"),
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

/// A toolchain or server name as a job id part: `.` (allowed in names, not in ids) becomes `_`.
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
