//! The footprint as people read it: per row its compile seconds (the median of its builds),
//! binary bytes and text bytes, per toolchain its installed size and how that was measured.
//! The same two tables stand in a job's and a cell's `RESULTS.md`, the terminal texts and the
//! report page; a figure an older results file lacks is `–`, never 0.

use std::collections::{BTreeMap, BTreeSet};

use cell_schema::{
    Build, CellResult, Installed, JobResult, Role, RowName, RowResult, SizeMethod, ToolchainName,
};
use serde::Serialize;

use crate::doc::{Align, Block, Cell, Table, code, text, verbatim_heading};
use crate::figures::or_dash;

/// One row's footprint.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FootprintRow {
    /// The row.
    pub row: RowName,
    /// The job that built it.
    pub job: ToolchainName,
    /// Its toolchain.
    pub toolchain: ToolchainName,
    /// Row, reference or tooth (the control is a copy and is left out).
    pub role: Role,
    /// Median wall seconds of its builds (one build's, in older files).
    pub compile_s: f64,
    /// Every build's seconds; empty in files written before builds were repeated.
    pub compile_runs_s: Vec<f64>,
    /// Its binary's size.
    pub binary_bytes: u64,
    /// Its code section's size, when measured.
    pub text_bytes: Option<u64>,
    /// Whether its builds wrote the same binary, when it was built more than once.
    pub reproducible: Option<bool>,
}

impl FootprintRow {
    fn new(name: &RowName, job: &ToolchainName, row: &RowResult) -> Self {
        let b: &Build = &row.build;
        Self {
            row: name.clone(),
            job: job.clone(),
            toolchain: row.toolchain.clone(),
            role: row.role,
            compile_s: b.compile_s,
            compile_runs_s: b.compile_runs_s.clone(),
            binary_bytes: b.binary_bytes,
            text_bytes: b.text_bytes,
            reproducible: b.reproducible,
        }
    }
}

/// One toolchain's installed size, from the job that measured it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ToolchainSize {
    /// The toolchain.
    pub toolchain: ToolchainName,
    /// The job whose measurement this is (the toolchain's own job when it has one).
    pub job: Option<ToolchainName>,
    /// The measurement; none in files written before it was recorded.
    pub installed: Option<Installed>,
}

/// The footprint of a job's rows (the control left out) and of its toolchains.
pub fn of_job(job: &JobResult) -> (Vec<FootprintRow>, Vec<ToolchainSize>) {
    let rows: Vec<FootprintRow> = job
        .rows
        .iter()
        .filter(|(_, r)| r.role != Role::Control)
        .map(|(n, r)| FootprintRow::new(n, &job.toolchain, r))
        .collect();
    let mut toolchains: BTreeSet<ToolchainName> = job.installed.keys().cloned().collect();
    toolchains.insert(job.toolchain.clone());
    toolchains.extend(rows.iter().map(|r| r.toolchain.clone()));
    let sizes = toolchains
        .into_iter()
        .map(|tc| ToolchainSize {
            installed: job.installed.get(&tc).cloned(),
            job: Some(job.toolchain.clone()),
            toolchain: tc,
        })
        .collect();
    (rows, sizes)
}

/// The footprint of a merged cell: every row as its own job built it; each toolchain's size
/// from its own job, else from the first job (by name) that measured it.
pub fn of_cell(cell: &CellResult) -> (Vec<FootprintRow>, Vec<ToolchainSize>) {
    let rows: Vec<FootprintRow> = cell
        .rows
        .iter()
        .filter(|(_, r)| r.row.role != Role::Control)
        .map(|(n, r)| FootprintRow::new(n, &r.job, &r.row))
        .collect();
    let mut toolchains: BTreeSet<ToolchainName> = cell.jobs.keys().cloned().collect();
    toolchains.extend(rows.iter().map(|r| r.toolchain.clone()));
    for j in cell.jobs.values() {
        toolchains.extend(j.installed.keys().cloned());
    }
    let measured: BTreeMap<&ToolchainName, (&ToolchainName, &Installed)> = toolchains
        .iter()
        .filter_map(|tc| {
            let own = cell
                .jobs
                .get_key_value(tc)
                .and_then(|(n, j)| Some((n, j.installed.get(tc)?)));
            let any = || {
                cell.jobs
                    .iter()
                    .find_map(|(n, j)| Some((n, j.installed.get(tc)?)))
            };
            Some((tc, own.or_else(any)?))
        })
        .collect();
    let sizes = toolchains
        .iter()
        .map(|tc| ToolchainSize {
            toolchain: tc.clone(),
            job: measured
                .get(tc)
                .map(|(j, _)| (*j).clone())
                .or_else(|| cell.jobs.contains_key(tc).then(|| tc.clone())),
            installed: measured.get(tc).map(|(_, i)| (*i).clone()),
        })
        .collect();
    (rows, sizes)
}

/// Bytes in a readable unit: `812 B`, `15.7 KiB`, `409.8 MiB`, `1.21 GiB`.
pub(crate) fn bytes(n: u64) -> String {
    const KIB: f64 = 1024.0;
    let v = n as f64;
    if v < KIB {
        format!("{n} B")
    } else if v < KIB * KIB {
        format!("{:.1} KiB", v / KIB)
    } else if v < KIB * KIB * KIB {
        format!("{:.1} MiB", v / (KIB * KIB))
    } else {
        format!("{:.2} GiB", v / (KIB * KIB * KIB))
    }
}

/// `tree`, `dpkg`, `none`.
pub(crate) fn method_name(m: SizeMethod) -> &'static str {
    match m {
        SizeMethod::Tree => "tree",
        SizeMethod::Dpkg => "dpkg",
        SizeMethod::None => "none",
    }
}

/// The figures of a row: compile s, builds, binary bytes, text bytes, reproducible.
fn row_figures(r: &FootprintRow) -> [String; 5] {
    let builds = (!r.compile_runs_s.is_empty()).then_some(r.compile_runs_s.len());
    [
        format!("{:.3}", r.compile_s),
        or_dash(builds),
        r.binary_bytes.to_string(),
        or_dash(r.text_bytes),
        or_dash(r.reproducible.map(|ok| if ok { "yes" } else { "NO" })),
    ]
}

/// The table of rows.
pub(crate) fn rows_table(rows: &[FootprintRow]) -> Table {
    let mut t = Table::titled(
        [
            ("row", Align::Left),
            ("job", Align::Left),
            ("toolchain", Align::Left),
            ("compile s (median of builds)", Align::Right),
            ("builds", Align::Right),
            ("binary bytes", Align::Right),
            ("text bytes", Align::Right),
            ("reproducible", Align::Left),
        ]
        .map(|(h, a)| (text(h), a)),
    );
    for r in rows {
        let mut cells: Vec<Cell> = vec![
            vec![text(r.row.to_string())],
            vec![text(r.job.to_string())],
            vec![text(r.toolchain.to_string())],
        ];
        cells.extend(row_figures(r).map(|f| vec![text(f)]));
        t.push(cells);
    }
    t
}

/// The figures of a toolchain: installed size, method, how.
fn size_figures(s: &ToolchainSize) -> [String; 3] {
    match &s.installed {
        Some(i) => [
            or_dash(i.bytes.map(bytes)),
            method_name(i.method).to_owned(),
            i.how.clone(),
        ],
        None => ["–".into(), "–".into(), "–".into()],
    }
}

/// The table of toolchains.
pub(crate) fn sizes_table(sizes: &[ToolchainSize]) -> Table {
    let mut t = Table::titled(
        [
            ("toolchain", Align::Left),
            ("measured in job", Align::Left),
            ("installed", Align::Right),
            ("method", Align::Left),
            ("how measured", Align::Left),
        ]
        .map(|(h, a)| (text(h), a)),
    );
    for s in sizes {
        let [size, method, how] = size_figures(s);
        t.push(vec![
            vec![text(s.toolchain.to_string())],
            vec![text(or_dash(s.job.as_ref()))],
            vec![text(size)],
            vec![text(method)],
            vec![text(how)],
        ]);
    }
    t
}

/// What the figures are, under the heading.
fn about() -> Block {
    Block::Para(vec![
        text("Compile seconds are the median of each row's builds ("),
        code("BUILD_REPS"),
        text("), the binary timed is the last build's; text bytes are its code section (ELF "),
        code(".text"),
        text(", Mach-O "),
        code("__TEXT,__text"),
        text(", PE "),
        code(".text"),
        text("). A figure the results do not record is –."),
    ])
}

/// `## Footprint`, what it means, the rows and the toolchains, each followed by an empty line:
/// the section of a job's and a cell's `RESULTS.md`.
pub(crate) fn markdown_section(rows: &[FootprintRow], sizes: &[ToolchainSize]) -> Vec<Block> {
    vec![
        verbatim_heading(2, "Footprint"),
        Block::Blank,
        about(),
        Block::Blank,
        Block::Table(rows_table(rows)),
        Block::Blank,
        Block::Table(sizes_table(sizes)),
        Block::Blank,
    ]
}

/// The footprint in a terminal text, after an empty line.
pub(crate) fn text_section(rows: &[FootprintRow], sizes: &[ToolchainSize]) -> Vec<Block> {
    vec![
        Block::Blank,
        verbatim_heading(2, "footprint"),
        Block::Table(rows_table(rows)),
        Block::Blank,
        Block::Table(sizes_table(sizes)),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_read_in_the_unit_that_fits() {
        assert_eq!(bytes(812), "812 B");
        assert_eq!(bytes(16_056), "15.7 KiB");
        assert_eq!(bytes(429_744_128), "409.8 MiB");
        assert_eq!(bytes(1_295_123_540), "1.21 GiB");
    }
}
