//! The comparison a compiler's authors used to write by hand: one table per phase of every row
//! against every cell of one run (its ratio to the reference, the interval, the verdict clock;
//! the release under test first and marked), and what the run cost in runner minutes. The
//! report page opens with it and the collect job's step summary carries it.

use std::collections::BTreeMap;

use cell_schema::{CellId, CellResult, Clock, Phase, Role, RowName, RunRecord, ToolchainName};
use serde::Serialize;

use crate::doc::{Align, Block, Cell, code, text, text_heading, text_table};

/// GitHub bills a macOS runner minute at ten Linux minutes (standard hosted runners).
pub const MACOS_MINUTE_FACTOR: u32 = 10;

/// One run's rows against its cells.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Comparison {
    /// The run (`<date>-<run-id>`).
    pub run: String,
    /// Its cells, in order.
    pub cells: Vec<CellId>,
    /// The reference every ratio divides by, and its label.
    pub reference: (RowName, String),
    /// The release under test, when the run's jobs verified one.
    pub subject: Option<ToolchainName>,
    /// What it was: `<tag> <asset> sha256 <digest>`, once per distinct digest.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub releases: Vec<String>,
    /// One table per phase.
    pub phases: Vec<ComparePhase>,
    /// What each cell cost.
    pub cost: Vec<CellMinutes>,
    /// The footprint across toolchains, from the first cell that recorded one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub footprint: Option<Footprint>,
}

/// Every row's compile time, binary and text bytes, and every toolchain's installed size, as
/// one cell measured them.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Footprint {
    /// The cell.
    pub cell: CellId,
    /// Per row.
    pub rows: Vec<crate::footprint::FootprintRow>,
    /// Per toolchain.
    pub installed: Vec<crate::footprint::ToolchainSize>,
}

/// One phase's rows.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ComparePhase {
    /// The phase.
    pub phase: Phase,
    /// The release under test's rows first, then the others by name.
    pub rows: Vec<CompareRow>,
}

/// One row across the cells.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CompareRow {
    /// The row.
    pub row: RowName,
    /// Its label.
    pub label: String,
    /// Its toolchain.
    pub toolchain: ToolchainName,
    /// Whether it is a row of the release under test.
    pub subject: bool,
    /// Its ratio per cell that measured it.
    pub cells: BTreeMap<CellId, CompareCell>,
}

/// A ratio as the row's verdict clock reads it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CompareCell {
    /// Median of per-round ratios.
    pub median: f64,
    /// Interval.
    pub lo: f64,
    /// Interval.
    pub hi: f64,
    /// The clock.
    pub clock: Clock,
}

/// A cell's cost.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CellMinutes {
    /// The cell.
    pub cell: CellId,
    /// Its OS.
    pub os: String,
    /// Minutes of its jobs: runner minutes (each job rounded up, as GitHub bills) when the run
    /// record has them, else the jobs' own `cell run` time.
    pub minutes: f64,
    /// Whether `minutes` are runner minutes.
    pub runner: bool,
    /// Linux minutes one of its minutes costs.
    pub factor: u32,
}

/// The comparison of one run's cells (`record`: its run.json, when there is one).
pub fn comparison(run: &str, cells: &[&CellResult], record: Option<&RunRecord>) -> Comparison {
    let subject = cells
        .iter()
        .flat_map(|c| c.jobs.values())
        .find_map(|j| j.subject.as_ref()?.toolchain.clone());
    let order = distinct(cells.iter().flat_map(|c| {
        c.jobs
            .values()
            .flat_map(|j| j.protocol.phases.iter().cloned())
    }));
    let reference = cells
        .iter()
        .flat_map(|c| c.jobs.values())
        .next()
        .map_or_else(
            || (RowName::from(""), String::new()),
            |j| (j.protocol.reference.clone(), j.reference.label.clone()),
        );
    Comparison {
        run: run.to_owned(),
        cells: cells.iter().map(|c| c.cell.id.clone()).collect(),
        phases: order
            .iter()
            .map(|p| phase_rows(cells, p, subject.as_ref()))
            .collect(),
        cost: cells.iter().map(|c| minutes(c, record)).collect(),
        footprint: cells.iter().find_map(|c| {
            let (rows, installed) = crate::footprint::of_cell(c);
            (!rows.is_empty()).then(|| Footprint {
                cell: c.cell.id.clone(),
                rows,
                installed,
            })
        }),
        releases: distinct(
            cells
                .iter()
                .flat_map(|c| c.jobs.values())
                .filter_map(|j| j.subject.as_ref())
                .map(cell_schema::Subject::summary),
        ),
        reference,
        subject,
    }
}

/// Each item once, in the order first seen.
fn distinct<T: PartialEq>(items: impl IntoIterator<Item = T>) -> Vec<T> {
    let mut out = Vec::new();
    for x in items {
        if !out.contains(&x) {
            out.push(x);
        }
    }
    out
}

fn phase_rows(
    cells: &[&CellResult],
    phase: &Phase,
    subject: Option<&ToolchainName>,
) -> ComparePhase {
    let mut rows: BTreeMap<RowName, CompareRow> = BTreeMap::new();
    for c in cells {
        for (name, r) in &c.rows {
            if r.row.role != Role::Row {
                continue;
            }
            let Some(ratio) = crate::verdict_ratio(&r.row, phase) else {
                continue;
            };
            let entry = rows.entry(name.clone()).or_insert_with(|| CompareRow {
                row: name.clone(),
                label: r.row.label.clone(),
                toolchain: r.row.toolchain.clone(),
                subject: subject == Some(&r.row.toolchain),
                cells: BTreeMap::new(),
            });
            entry.cells.insert(
                c.cell.id.clone(),
                CompareCell {
                    median: ratio.median,
                    lo: ratio.lo,
                    hi: ratio.hi,
                    clock: r.row.verdict_clock,
                },
            );
        }
    }
    let mut rows: Vec<CompareRow> = rows.into_values().collect();
    rows.sort_by_key(|r| !r.subject);
    ComparePhase {
        phase: phase.clone(),
        rows,
    }
}

fn minutes(c: &CellResult, record: Option<&RunRecord>) -> CellMinutes {
    let prefix = format!("cell {} ", c.cell.id);
    let runner: Vec<f64> = record
        .into_iter()
        .flat_map(|r| &r.jobs)
        .filter(|j| j.name.starts_with(&prefix))
        .filter_map(|j| j.seconds)
        .collect();
    let (minutes, is_runner) = if runner.is_empty() {
        let s = c.cost.as_ref().map_or(0.0, |k| k.total_s);
        (s / 60.0, false)
    } else {
        (runner.iter().map(|s| (s / 60.0).ceil()).sum(), true)
    };
    CellMinutes {
        cell: c.cell.id.clone(),
        os: c.cell.os.clone(),
        minutes,
        runner: is_runner,
        factor: if c.cell.os == "macos" {
            MACOS_MINUTE_FACTOR
        } else {
            1
        },
    }
}

fn ratio_cell(c: Option<&CompareCell>) -> Cell {
    match c {
        Some(c) => vec![text(format!(
            "{:.4} ({:.4}–{:.4}, {})",
            c.median,
            c.lo,
            c.hi,
            c.clock.name()
        ))],
        None => vec![text("–")],
    }
}

/// The comparison as a document: a heading, one table per phase, the cost.
pub fn blocks(c: &Comparison) -> Vec<Block> {
    let mut out = vec![
        text_heading(2, format!("Every row against every cell, run {}", c.run)),
        Block::Para(vec![
            text("Ratio to "),
            code(c.reference.0.to_string()),
            text(format!(
                " ({}) timed in the row's own job: median of per-round ratios (interval, the row's verdict clock); below 1 is faster.",
                c.reference.1
            )),
            match &c.subject {
                Some(s) => text(format!(
                    " Rows of the release under test ({s}) come first, marked ★."
                )),
                None => text(""),
            },
        ]),
    ];
    for r in &c.releases {
        out.push(Block::Para(vec![
            text("Release under test: "),
            code(r.clone()),
        ]));
    }
    let ids: Vec<String> = c.cells.iter().map(ToString::to_string).collect();
    let mut head: Vec<(&str, Align)> = vec![("row", Align::Left), ("toolchain", Align::Left)];
    head.extend(ids.iter().map(|i| (i.as_str(), Align::Right)));
    for p in &c.phases {
        let rows = p
            .rows
            .iter()
            .map(|r| {
                let mark = if r.subject { "★ " } else { "" };
                let mut cells: Vec<Cell> = vec![
                    vec![text(mark), code(r.row.to_string())],
                    vec![text(r.toolchain.to_string())],
                ];
                cells.extend(c.cells.iter().map(|id| ratio_cell(r.cells.get(id))));
                cells
            })
            .collect();
        out.push(text_heading(3, p.phase.as_str()));
        out.push(text_table(&head, rows));
    }
    if let Some(f) = &c.footprint {
        out.push(text_heading(3, "Footprint"));
        out.push(Block::Para(vec![
            text("Compile time (median of the builds), binary and text bytes per row, and installed size per toolchain, on "),
            code(f.cell.to_string()),
            text("."),
        ]));
        out.push(Block::Table(crate::footprint::rows_table(&f.rows)));
        out.push(Block::Table(crate::footprint::sizes_table(&f.installed)));
    }
    out.push(cost_block(c));
    out
}

fn cost_block(c: &Comparison) -> Block {
    let mut spans = vec![text("Cost: ")];
    let mut total = 0.0;
    for (i, m) in c.cost.iter().enumerate() {
        if i > 0 {
            spans.push(text(", "));
        }
        spans.push(code(m.cell.to_string()));
        let weighted = m.minutes * f64::from(m.factor);
        total += weighted;
        spans.push(text(if m.factor > 1 {
            format!(
                " {:.1} min (×{} on macOS: {:.1} Linux minutes)",
                m.minutes, m.factor, weighted
            )
        } else {
            format!(" {:.1} min", m.minutes)
        }));
    }
    spans.push(text(format!(
        "; {total:.1} Linux-equivalent minutes in all: "
    )));
    if c.cost.iter().all(|m| m.runner) {
        spans.push(text(
            "runner minutes as GitHub bills them, each job rounded up.",
        ));
    } else {
        spans.extend([
            text("the jobs' own "),
            code("cell run"),
            text(" time, installs excluded, where the run record has no runner seconds."),
        ]);
    }
    spans.push(text(format!(
        " A macOS minute costs {MACOS_MINUTE_FACTOR} Linux minutes."
    )));
    Block::Para(spans)
}

/// The comparison as Markdown, for a step summary.
pub fn markdown(c: &Comparison) -> String {
    crate::doc::markdown::render(&crate::doc::spaced(blocks(c)))
}
