//! The exact lane as people read it (`INSTRUCTIONS=on`): per row its estimated cycles and
//! instruction count on each phase, each with its ratio to the job's reference, and why a row
//! or phase was not counted; per job how the lane ran (valgrind, the simulated caches) or why
//! it did not. The section stands in a job's and a cell's `RESULTS.md` and the terminal texts only
//! when a job ran the lane, so a results file without it reads as it always did. Every string
//! (a reason, a version valgrind printed) is escaped as text.

use cell_schema::{
    CellResult, InstructionLane, JobResult, Phase, PhaseResult, Role, RowResult, ToolchainName,
};

use crate::doc::{Align, Block, Cell, Table, code, text, verbatim_heading};
use crate::figures::or_dash;

/// One row's counts, with the job that counted it and that job's reference.
pub(crate) struct CountRow<'a> {
    name: &'a str,
    job: &'a str,
    row: &'a RowResult,
    reference: Option<&'a RowResult>,
}

/// What the section shows: the rows, the phases in order, each job's lane.
pub(crate) struct Counts<'a> {
    rows: Vec<CountRow<'a>>,
    phases: &'a [Phase],
    lanes: Vec<(&'a ToolchainName, &'a InstructionLane)>,
}

impl<'a> Counts<'a> {
    /// A job's rows (the control is a copy of the reference and never counted), when the job
    /// ran the lane.
    pub(crate) fn of_job(job: &'a JobResult) -> Option<Self> {
        let lane = job.instructions.as_ref()?;
        let reference = job.rows.values().find(|r| r.role == Role::Reference);
        let rows = job
            .rows
            .iter()
            .filter(|(_, r)| !matches!(r.role, Role::Control | Role::Previous))
            .map(|(n, r)| CountRow {
                name: n.as_str(),
                job: job.toolchain.as_str(),
                row: r,
                reference,
            })
            .collect();
        Some(Self {
            rows,
            phases: &job.protocol.phases,
            lanes: vec![(&job.toolchain, lane)],
        })
    }

    /// A merged cell's rows, each from its own job, when any job ran the lane.
    pub(crate) fn of_cell(cell: &'a CellResult, phases: &'a [Phase]) -> Option<Self> {
        let lanes: Vec<_> = cell
            .jobs
            .iter()
            .filter_map(|(tc, j)| Some((tc, j.instructions.as_ref()?)))
            .collect();
        if lanes.is_empty() {
            return None;
        }
        let rows = cell
            .rows
            .iter()
            .filter(|(_, r)| r.row.role != Role::Control)
            .map(|(n, r)| CountRow {
                name: n.as_str(),
                job: r.job.as_str(),
                row: &r.row,
                reference: cell.jobs.get(&r.job).map(|j| &j.reference),
            })
            .collect();
        Some(Self {
            rows,
            phases,
            lanes,
        })
    }

    /// Rows × phases: estimated cycles and instructions, each with its ratio to the job's
    /// reference (`×1.0312`), `–` where there is none; then why, and any repeat that moved.
    fn table(&self) -> Table {
        let mut head = vec![(text("row"), Align::Left), (text("job"), Align::Left)];
        for p in self.phases {
            head.push((text(format!("{p} est. cycles")), Align::Right));
            head.push((text(format!("{p} instructions")), Align::Right));
        }
        head.push((text("notes"), Align::Left));
        let mut t = Table::titled(head);
        for r in &self.rows {
            let mut cells: Vec<Cell> = vec![vec![text(r.name)], vec![text(r.job)]];
            for p in self.phases {
                let of = |row: Option<&RowResult>, pick: fn(&PhaseResult) -> Option<u64>| {
                    row.and_then(|x| x.phases.get(p)).and_then(pick)
                };
                for pick in [
                    (|x: &PhaseResult| x.estimated_cycles) as fn(&PhaseResult) -> Option<u64>,
                    |x: &PhaseResult| x.instructions,
                ] {
                    cells.push(vec![text(with_ratio(
                        of(Some(r.row), pick),
                        of(r.reference, pick),
                    ))]);
                }
            }
            cells.push(vec![text(notes(r.row, self.phases))]);
            t.push(cells);
        }
        t
    }

    /// One line per job: the valgrind that counted and its budget, or why the lane did not run.
    fn lane_lines(&self) -> Block {
        Block::list(self.lanes.iter().map(|(tc, lane)| {
            let mut line = vec![text("job "), code(tc.to_string()), text(": ")];
            if let Some(why) = &lane.skipped {
                line.push(text(format!("not run: {why}")));
                return line;
            }
            line.extend([
                text(lane.version.clone().unwrap_or_default()),
                text(" ("),
                code(lane.argv.join(" ")),
                text(format!(
                    "), at most {:.0} s a run, {:.1} s in all",
                    lane.timeout_s, lane.seconds
                )),
            ]);
            if let Some(c) = &lane.cache {
                line.push(text(format!(
                    "; caches I1 {} D1 {} LL {} (size,ways,line)",
                    c.i1, c.d1, c.ll
                )));
            }
            if let Some(b) = lane.env_bytes {
                line.push(text(format!("; environment {b} bytes")));
            }
            if !lane.rows_skipped.is_empty() {
                line.push(text(format!(
                    "; left out: {}",
                    lane.rows_skipped.join("; ")
                )));
            }
            line
        }))
    }

    /// `## Instructions`, what the counts are, the table and the lanes: the section of a job's
    /// and a cell's `RESULTS.md`.
    pub(crate) fn markdown_section(&self) -> Vec<Block> {
        vec![
            verbatim_heading(2, "Exact lane"),
            Block::Blank,
            Block::Para(vec![
                text(
                    "Estimated cycles and instructions of a run under cachegrind on pinned simulated caches (",
                ),
                code("INSTRUCTIONS=on"),
                text(", "),
                code("L1 hits + 5·LL hits + 35·RAM"),
                text(
                    "), each with its ratio to the job's reference: the same binary counts the same on any runner, so a moved ratio is a change of the generated code (the gate's code verdict). A count is not a time. A count the lane did not take is –.",
                ),
            ]),
            Block::Blank,
            Block::Table(self.table()),
            Block::Blank,
            self.lane_lines(),
            Block::Blank,
        ]
    }

    /// The section in a terminal text, after an empty line.
    pub(crate) fn text_section(&self) -> Vec<Block> {
        vec![
            Block::Blank,
            verbatim_heading(2, "exact lane"),
            Block::Table(self.table()),
            self.lane_lines(),
        ]
    }
}

/// `2850123456 ×1.0312`: a count and its ratio to the reference's, or the count alone, or `–`.
fn with_ratio(count: Option<u64>, reference: Option<u64>) -> String {
    match (count, reference) {
        (Some(c), Some(r)) if r > 0 => format!("{c} ×{:.4}", c as f64 / r as f64),
        (Some(c), _) => c.to_string(),
        (None, _) => "–".into(),
    }
}

/// Why the lane did not count a row, and each phase whose repeated runs differed.
fn notes(row: &RowResult, phases: &[Phase]) -> String {
    let mut out: Vec<String> = row.instructions_skipped.iter().cloned().collect();
    for p in phases {
        if let Some(r) = row.phases.get(p).and_then(|x| x.exact_repeat.as_ref())
            && r.spread > 0.0
        {
            out.push(format!(
                "{p}: {} runs, spread {}%",
                r.runs,
                cell_schema::percent(r.spread)
            ));
        }
    }
    or_dash((!out.is_empty()).then(|| out.join("; ")))
}
