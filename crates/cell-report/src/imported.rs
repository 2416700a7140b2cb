//! `RESULTS.md` of an imported cell: the old tool's figures as it wrote them, headed by where
//! they came from and how they were made. Every string came from another tool's file, so all
//! of it is escaped text ([`Span::Text`], [`Span::Code`]), never verbatim.

use cell_schema::{CellResult, Imported, Phase};

use crate::doc::{self, Align, Block, Cell, Span, code, text, text_heading, text_table};
use crate::figures::or_dash;

fn fig(v: f64) -> String {
    format!("{v:.4}")
}

/// `RESULTS.md` of a cell whose `imported` is `imp`.
pub fn imported_markdown(cell: &CellResult, imp: &Imported) -> String {
    let mut d = vec![
        Block::heading(
            1,
            vec![
                code(cell.cell.id.to_string()),
                text(format!(
                    ", run {} ({}), imported",
                    cell.run.id, cell.run.date
                )),
            ],
        ),
        Block::Para(vec![
            text("Imported by "),
            code("cell import"),
            text(" from "),
            code(imp.source.path.clone()),
            text(" (SHA-256 "),
            code(imp.source.sha256.to_string()),
            text(") of the Python cell. "),
            text(format!(
                "How its numbers were made: {}.",
                imp.method.summary
            )),
        ]),
        Block::Para(vec![
            text(
                "Each ratio is the old tool's median(row) / median(reference) of the same job: a point, not an interval. ",
            ),
            text("Old verdict: "),
            Span::Status(cell.verdict.status),
        ]),
    ];
    if let Some(old) = &imp.source.old_cell_id {
        d.push(Block::Para(vec![
            text("The old file named this cell "),
            code(old.clone()),
            text("."),
        ]));
    }
    if !cell.verdict.reasons.is_empty() {
        d.push(Block::list(
            cell.verdict.reasons.iter().map(|r| vec![text(r.clone())]),
        ));
    }
    for phase in imp.phases() {
        d.push(text_heading(2, format!("Phase {phase}")));
        d.push(phase_table(imp, phase));
    }
    d.push(text_heading(2, "Jobs"));
    d.push(jobs_table(imp));
    d.push(text_heading(2, "Machine and tools"));
    d.push(machine_list(imp));
    if !imp.skipped.is_empty() {
        d.push(text_heading(2, "Skipped"));
        d.push(Block::list(imp.skipped.iter().map(|s| {
            vec![
                code(s.row.to_string()),
                text(format!(" ({}): {}", s.toolchain, s.reason)),
            ]
        })));
    }
    doc::markdown::render(&doc::spaced(d))
}

fn phase_table(imp: &Imported, phase: &Phase) -> Block {
    let head = [
        ("row", Align::Left),
        ("job", Align::Left),
        ("label", Align::Left),
        ("median s", Align::Right),
        ("best s", Align::Right),
        ("max s", Align::Right),
        ("kept / reps", Align::Right),
        ("point ratio (wall)", Align::Right),
        ("RSS B", Align::Right),
        ("compile s", Align::Right),
        ("binary B", Align::Right),
        ("text B", Align::Right),
        ("answer", Align::Left),
    ];
    let rows: Vec<Vec<Cell>> = imp
        .rows
        .iter()
        .filter_map(|(name, r)| r.phases.get(phase).map(|p| (name, r, p)))
        .map(|(name, r, p)| {
            let mut row_name = vec![code(name.to_string())];
            if *name == imp.reference {
                row_name.push(text(" (reference)"));
            }
            vec![
                row_name,
                vec![text(r.toolchain.to_string())],
                vec![text(r.label.clone())],
                vec![text(fig(p.median_s))],
                vec![text(fig(p.best_s))],
                vec![text(fig(p.max_s))],
                vec![text(format!(
                    "{} / {}",
                    p.run_s.len().saturating_sub(p.dropped as usize),
                    p.run_s.len()
                ))],
                vec![Span::Strong(fig(p.point_ratio))],
                vec![text(p.rss_bytes.to_string())],
                vec![text(fig(r.build.compile_s))],
                vec![text(r.build.binary_bytes.to_string())],
                vec![text(or_dash(r.build.text_bytes))],
                vec![text(if p.stdout_ok { "ok" } else { "WRONG" })],
            ]
        })
        .collect();
    text_table(&head, rows)
}

fn jobs_table(imp: &Imported) -> Block {
    let head = [
        ("job", Align::Left),
        ("verdict", Align::Left),
        ("reference median s (wall, per phase)", Align::Left),
        ("tooth", Align::Right),
        ("minutes", Align::Right),
    ];
    let rows = imp
        .jobs
        .iter()
        .map(|(name, j)| {
            let refs: Vec<String> = j
                .reference_median_s
                .iter()
                .map(|(p, m)| format!("{p} {}", fig(*m)))
                .collect();
            vec![
                vec![text(name.to_string())],
                vec![Span::Status(j.status)],
                vec![text(refs.join(", "))],
                vec![text(j.tooth.map_or("–".into(), fig))],
                vec![text(or_dash(j.job_minutes))],
            ]
        })
        .collect();
    text_table(&head, rows)
}

fn machine_list(imp: &Imported) -> Block {
    let m = &imp.machine;
    let mut items = vec![
        vec![text(format!("CPU: {}", or_dash(m.cpu_model.as_deref())))],
        vec![text(format!(
            "nproc {}, memory {} B",
            or_dash(m.nproc),
            or_dash(m.memory_bytes)
        ))],
        vec![text(format!("kernel: {}", or_dash(m.kernel.as_deref())))],
        vec![text(format!(
            "runner image: {}",
            m.runner_image
                .as_ref()
                .map_or("–".into(), |i| format!("{} {}", i.os, i.version))
        ))],
        vec![text(format!(
            "tolerance {}, tooth floor {} on {} ({}), tooth {}",
            imp.tolerance,
            imp.tooth.floor,
            imp.tooth.phase,
            if imp.tooth.gated {
                "gated"
            } else {
                "not gated"
            },
            imp.tooth.ratio.map_or("–".into(), fig)
        ))],
    ];
    if let Some(s) = &imp.subject {
        items.push(vec![
            text("release under test: "),
            code(s.tag.clone()),
            text(", asset "),
            code(s.asset.clone()),
            text(" (SHA-256 "),
            code(s.sha256.to_string()),
            text(format!(
                "), binary {} B, prints {}",
                or_dash(s.binary_bytes),
                or_dash(s.printed.as_deref())
            )),
        ]);
    }
    for (tool, v) in &imp.versions {
        items.push(vec![code(tool.to_string()), text(format!(": {v}"))]);
    }
    for (k, v) in &imp.pins {
        items.push(vec![text("pin "), code(format!("{k}={v}"))]);
    }
    Block::list(items)
}
