//! The release under test against the previous release, timed in the same job, as a cell's
//! RESULTS.md and the report page show it: per row and phase the median of the per-round
//! ratios new / old with its interval and verdict (`cell-verdict`'s rule), and per job what was
//! installed or why the previous release was not timed. The section stands only where a job
//! tried, so other results read as before.

use std::fmt::Write as _;

use cell_schema::{CellResult, SameJobVerdict};
use serde::Serialize;

use crate::doc::{Align, Block, Cell, Table, code, text, verbatim};

/// What a cell's jobs found of the previous release.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SameJob {
    /// `CI_LEVEL` the jobs ran with, split over the cell's units.
    pub level: f64,
    /// `TOLERANCE` the jobs ran with.
    pub tolerance: f64,
    /// Per row and phase.
    pub verdicts: Vec<SameJobVerdict>,
    /// Per job: the release installed, or why not, and the rows it could not build.
    pub lines: Vec<String>,
}

impl SameJob {
    /// Of `cell`, when any of its jobs timed the previous release or said why not.
    pub fn of_cell(cell: &CellResult) -> Option<Self> {
        let job = cell.jobs.values().find(|j| j.previous.is_some())?;
        let (level, tolerance) = (job.protocol.ci_level, job.protocol.tolerance);
        Some(Self {
            level,
            tolerance,
            verdicts: cell_verdict::same_job_verdicts(cell, level, tolerance),
            lines: job_lines(cell),
        })
    }

    /// What the figures are, the table and the jobs' lines.
    pub(crate) fn blocks(&self) -> Vec<Block> {
        let mut d = vec![
            Block::Para(vec![
                text(
                    "Each row of the release under test was also built by the release the baseline run recorded (",
                ),
                code("<row>.prev"),
                text(format!(
                    ") and timed in the same rounds: new / old per round cancels the machine and the hour. Judged against TOLERANCE ±{}%, each interval at {}% split over this cell's rows and phases (the gate splits it over the whole run); beside the history verdict, not instead of it.",
                    cell_schema::percent(self.tolerance),
                    crate::figures::short(self.level * 100.0, 4)
                )),
            ]),
            Block::Blank,
        ];
        if !self.verdicts.is_empty() {
            d.extend([Block::Table(table(&self.verdicts)), Block::Blank]);
            d.extend([
                Block::list(self.verdicts.iter().map(|v| vec![text(v.message.clone())])),
                Block::Blank,
            ]);
        }
        d.extend([
            Block::list(self.lines.iter().map(|l| vec![text(l.clone())])),
            Block::Blank,
        ]);
        d
    }
}

/// `## Same job: the previous release` of a cell's RESULTS.md.
pub(crate) fn markdown_section(cell: &CellResult) -> Vec<Block> {
    let Some(s) = SameJob::of_cell(cell) else {
        return Vec::new();
    };
    let mut d = vec![
        crate::doc::verbatim_heading(2, "Same job: the previous release"),
        Block::Blank,
    ];
    d.extend(s.blocks());
    d
}

/// The verdicts' table: the figures as written, the releases' names as text (a record's own
/// strings, escaped).
pub(crate) fn table(verdicts: &[SameJobVerdict]) -> Table {
    let mut t = Table::new(&[
        ("verdict", Align::Left),
        ("row", Align::Left),
        ("phase", Align::Left),
        ("new / old", Align::Right),
        ("CI", Align::Right),
        ("resolves", Align::Right),
        ("releases", Align::Left),
    ]);
    let dash = || "–".to_owned();
    for v in verdicts {
        let figures = [
            v.status.word().to_owned(),
            v.row.to_string(),
            v.phase.to_string(),
            v.ratio
                .as_ref()
                .map_or_else(dash, |r| format!("{:.4}", r.median)),
            v.ratio
                .as_ref()
                .map_or_else(dash, |r| format!("{:.4}–{:.4}", r.lo, r.hi)),
            v.resolution
                .map_or_else(dash, |x| format!("±{}%", cell_schema::percent(x))),
        ];
        let mut row: Vec<Cell> = figures.into_iter().map(|c| vec![verbatim(c)]).collect();
        row.push(vec![text(format!(
            "{} against {}",
            v.new_version, v.old_version
        ))]);
        t.push(row);
    }
    t
}

/// One line per job that tried: what it installed, or why not, and the rows left out.
fn job_lines(cell: &CellResult) -> Vec<String> {
    cell.jobs
        .iter()
        .filter_map(|(tc, j)| {
            let p = j.previous.as_ref()?;
            let old = p.recorded.version_or_tag();
            let mut line = match &p.skipped {
                Some(why) => format!(
                    "{tc}: {old} (baseline {}) not timed: {why}; the history verdict stands alone",
                    p.baseline_run
                ),
                None => format!(
                    "{tc}: {old} (baseline {}, commit {}) installed and verified, sha256 {}",
                    p.baseline_run,
                    p.commit.as_deref().unwrap_or("–"),
                    p.recorded.sha256
                ),
            };
            for (row, why) in &p.not_built {
                let _ = write!(line, "; {row} not built: {why}");
            }
            Some(line)
        })
        .collect()
}
