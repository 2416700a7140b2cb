//! The release under test against the previous release, timed in the same job, as a cell's
//! RESULTS.md shows it: per row and phase the median of the per-round ratios new / old with its
//! interval and verdict (`cell-verdict`'s rule), and why a job did not time the previous
//! release. The section stands only where a job tried, so other results read as before.

use std::fmt::Write as _;

use cell_schema::CellResult;

use crate::doc::{Align, Block, Table, code, text, verbatim_heading};

/// `## Same job: the previous release`, when any job of `cell` timed it or said why not.
pub(crate) fn markdown_section(cell: &CellResult) -> Vec<Block> {
    let Some(job) = cell.jobs.values().find(|j| j.previous.is_some()) else {
        return Vec::new();
    };
    let (level, tolerance) = (job.protocol.ci_level, job.protocol.tolerance);
    let verdicts = cell_verdict::same_job_verdicts(cell, level, tolerance);
    let mut d = vec![
        verbatim_heading(2, "Same job: the previous release"),
        Block::Blank,
        Block::Para(vec![
            text(
                "Each row of the release under test was also built by the release the baseline run recorded (",
            ),
            code("<row>.prev"),
            text(format!(
                ") and timed in the same rounds: new / old per round cancels the machine and the hour. Judged against TOLERANCE ±{}%, each interval at {}% split over this cell's rows and phases (the gate splits it over the whole run); beside the history verdict, not instead of it.",
                cell_schema::percent(tolerance),
                crate::figures::short(level * 100.0, 4)
            )),
        ]),
        Block::Blank,
    ];
    if !verdicts.is_empty() {
        let mut t = Table::new(&[
            ("verdict", Align::Left),
            ("row", Align::Left),
            ("phase", Align::Left),
            ("new / old", Align::Right),
            ("CI", Align::Right),
            ("resolves", Align::Right),
            ("releases", Align::Left),
        ]);
        for v in &verdicts {
            let cells: Vec<String> = vec![
                v.status.word().to_owned(),
                v.row.to_string(),
                v.phase.to_string(),
                v.ratio
                    .as_ref()
                    .map_or_else(|| "–".to_owned(), |r| format!("{:.4}", r.median)),
                v.ratio
                    .as_ref()
                    .map_or_else(|| "–".to_owned(), |r| format!("{:.4}–{:.4}", r.lo, r.hi)),
                v.resolution.map_or_else(
                    || "–".to_owned(),
                    |x| format!("±{}%", cell_schema::percent(x)),
                ),
            ];
            let mut row: Vec<crate::doc::Cell> = cells
                .into_iter()
                .map(|c| vec![crate::doc::verbatim(c)])
                .collect();
            // A version is the record's own string: written as text, escaped.
            row.push(vec![crate::doc::text(format!(
                "{} against {}",
                v.new_version, v.old_version
            ))]);
            t.push(row);
        }
        d.extend([Block::Table(t), Block::Blank]);
    }
    let lines: Vec<Vec<crate::doc::Span>> = cell
        .jobs
        .iter()
        .filter_map(|(tc, j)| {
            let p = j.previous.as_ref()?;
            let old = p
                .recorded
                .version
                .clone()
                .unwrap_or_else(|| p.recorded.tag.clone());
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
            Some(vec![text(line)])
        })
        .collect();
    d.extend([Block::list(lines), Block::Blank]);
    d
}
