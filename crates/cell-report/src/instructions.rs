//! The instruction lane as people read it (`INSTRUCTIONS=on`): per row its instruction count on
//! each phase and why a row or phase was not counted, per job how the lane ran or why it did
//! not. The section stands in a job's and a cell's `RESULTS.md` and the terminal texts only
//! when a job ran the lane, so a results file without it reads as it always did. Every string
//! (a reason, a version valgrind printed) is escaped as text.

use cell_schema::{CellResult, InstructionLane, JobResult, Phase, Role, RowResult, ToolchainName};

use crate::doc::{Align, Block, Cell, Table, code, text, verbatim_heading};
use crate::figures::or_dash;

/// One row's counts, with the job that counted it.
pub(crate) struct CountRow<'a> {
    name: &'a str,
    job: &'a str,
    row: &'a RowResult,
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
        let rows = job
            .rows
            .iter()
            .filter(|(_, r)| r.role != Role::Control)
            .map(|(n, r)| CountRow {
                name: n.as_str(),
                job: job.toolchain.as_str(),
                row: r,
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
            .map(|(n, r)| CountRow {
                name: n.as_str(),
                job: r.job.as_str(),
                row: &r.row,
            })
            .collect();
        Some(Self {
            rows,
            phases,
            lanes,
        })
    }

    /// Rows × phases: the count, `–` where there is none, and why.
    fn table(&self) -> Table {
        let mut head = vec![(text("row"), Align::Left), (text("job"), Align::Left)];
        head.extend(
            self.phases
                .iter()
                .map(|p| (text(format!("{p} instructions")), Align::Right)),
        );
        head.push((text("not counted"), Align::Left));
        let mut t = Table::titled(head);
        for r in &self.rows {
            let mut cells: Vec<Cell> = vec![vec![text(r.name)], vec![text(r.job)]];
            cells.extend(self.phases.iter().map(|p| {
                vec![text(or_dash(
                    r.row.phases.get(p).and_then(|x| x.instructions),
                ))]
            }));
            cells.push(vec![text(or_dash(r.row.instructions_skipped.as_deref()))]);
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
            line
        }))
    }

    /// `## Instructions`, what the counts are, the table and the lanes: the section of a job's
    /// and a cell's `RESULTS.md`.
    pub(crate) fn markdown_section(&self) -> Vec<Block> {
        vec![
            verbatim_heading(2, "Instructions"),
            Block::Blank,
            Block::Para(vec![
                text("Instructions one run executed under cachegrind ("),
                code("INSTRUCTIONS=on"),
                text(", "),
                code("Ir"),
                text(
                    "): a tripwire for a change of a row's generated code against the same row of the baseline, never a comparison of toolchains. A count the lane did not take is –.",
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
            verbatim_heading(2, "instructions"),
            Block::Table(self.table()),
            self.lane_lines(),
        ]
    }
}
