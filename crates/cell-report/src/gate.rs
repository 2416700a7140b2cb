//! How a gate report reads: the lines `cell gate` prints, GitHub annotations, and the step
//! summary. The verdicts themselves are `cell-verdict`'s.
//!
//! The lines and the step summary are documents ([`Block`]s) written as they always were:
//! text with its own markup, held on its line ([`Span::Verbatim`]), but for the step
//! summary's failures and notices, whose every `|` is escaped too ([`Span::PipeEscaped`]).
//! The annotations are workflow commands, their escaping [`cell_schema::escape`]'s
//! `workflow_*`.

use std::fmt::Write as _;

use cell_schema::escape::{workflow_data, workflow_property};
use cell_schema::{GateCell, GateReport, GateStatus, GateVerdict};

use crate::doc::{self, Align, Block, Span, Table, verbatim, verbatim_para};

/// The lines a person reads, failures first.
pub fn human(report: &GateReport) -> String {
    let mut d = Vec::new();
    for c in &report.cells {
        d.push(verbatim_para(format!(
            "{} against {}",
            c.cell,
            c.baseline.as_deref().unwrap_or("nothing (first run)")
        )));
        let mut vs: Vec<&GateVerdict> = c.verdicts.iter().collect();
        vs.sort_by_key(|v| std::cmp::Reverse(v.status));
        let lines = c
            .failures
            .iter()
            .map(|f| format!("FAILURE {f}"))
            .chain(vs.iter().map(|v| v.message.clone()))
            .chain(code_lines(c))
            .chain(same_job_lines(c))
            .chain(c.notices.iter().map(|n| format!("notice: {n}")));
        d.push(Block::list(lines.map(|l| vec![verbatim(l)])));
    }
    let s = &report.summary;
    d.push(verbatim_para(format!(
        "gate: {} pass, {} fail, {} inconclusive, {} failure(s), {} notice(s){}{} → exit {}",
        s.pass,
        s.fail,
        s.inconclusive,
        s.failures,
        s.notices,
        code_counts(s),
        same_job_counts(s),
        report.exit
    )));
    if let Some(f) = &report.family {
        d.push(verbatim_para(family_line(report, f)));
    }
    if s.inconclusive > 0 {
        d.push(verbatim_para(format!(
            "warning: {} verdict(s) inconclusive: no call either way, not a pass; each says what its run resolved",
            s.inconclusive
        )));
    }
    doc::text::render(&d)
}

/// How the run's false alarms are bounded, in one line: the workload's units, and what a
/// unit against an imported point leaves out.
fn family_line(report: &GateReport, f: &cell_schema::GateFamily) -> String {
    let mut line = format!(
        "{} workload unit(s) judged together: each interval at {}%, so an unchanged run fails somewhere at most {}% of the time",
        f.units,
        crate::figures::short(f.unit_level * 100.0, 4),
        crate::figures::short((1.0 - f.run_level) * 100.0, 2)
    );
    let points = report
        .cells
        .iter()
        .flat_map(|c| &c.verdicts)
        .filter(|v| v.against_imported_point)
        .count();
    if points > 0 {
        let _ = write!(
            line,
            " (of them, {points} against an imported point, whose own noise is not counted)"
        );
    }
    line
}

/// GitHub annotations: at most `per_kind` of each kind; the rest are counted in the last one.
pub fn annotations(report: &GateReport, per_kind: usize) -> String {
    let mut errors = Vec::new();
    let mut warnings = Vec::new();
    let mut notices = Vec::new();
    for c in &report.cells {
        for f in &c.failures {
            errors.push((format!("cell gate: {}", c.cell), f.clone()));
        }
        for v in &c.verdicts {
            match v.status {
                GateStatus::Fail => errors.push((
                    format!("cell gate: {} {} {}", c.cell, v.row, v.phase),
                    v.message.clone(),
                )),
                GateStatus::Inconclusive => warnings.push((
                    format!("cell gate: {} {} {}", c.cell, v.row, v.phase),
                    v.message.clone(),
                )),
                GateStatus::Pass => {}
            }
        }
        let code = c
            .code
            .iter()
            .map(|v| (&v.row, &v.phase, v.status, &v.message, "code"));
        let same = c
            .same_job
            .iter()
            .map(|v| (&v.row, &v.phase, v.status, &v.message, "same job"));
        for (row, phase, status, message, what) in code.chain(same) {
            let title = format!("cell gate: {} {row} {phase} ({what})", c.cell);
            match status {
                GateStatus::Fail => errors.push((title, message.clone())),
                GateStatus::Inconclusive => warnings.push((title, message.clone())),
                GateStatus::Pass => {}
            }
        }
        for n in &c.notices {
            notices.push((format!("cell gate: {}", c.cell), n.clone()));
        }
    }
    let mut out = String::new();
    for (kind, list) in [
        ("error", errors),
        ("warning", warnings),
        ("notice", notices),
    ] {
        for (title, msg) in list.iter().take(per_kind) {
            let _ = writeln!(
                out,
                "::{kind} title={}::{}",
                workflow_property(title),
                workflow_data(msg)
            );
        }
        if list.len() > per_kind {
            let _ = writeln!(
                out,
                "::{kind} title=cell gate::{} more {kind}(s) in the step summary",
                list.len() - per_kind
            );
        }
    }
    out
}

/// Markdown for `$GITHUB_STEP_SUMMARY`, cut below `limit` bytes with a note saying so.
pub fn step_summary(report: &GateReport, limit: usize) -> String {
    let s = &report.summary;
    let mut d = vec![
        Block::heading(2, vec![verbatim(format!("cell gate: {}", report.run))]),
        Block::Blank,
        Block::Para(vec![
            Span::Strong(if report.exit == 0 { "passed" } else { "FAILED" }.into()),
            verbatim(format!(
                " — {} pass, {} fail, {} inconclusive, {} failure(s), {} notice(s){}{}; tolerance ±{}",
                s.pass,
                s.fail,
                s.inconclusive,
                s.failures,
                s.notices,
                code_counts(s),
                same_job_counts(s),
                report.tolerance
            )),
        ]),
        Block::Blank,
    ];
    if let Some(f) = &report.family {
        d.extend([verbatim_para(family_line(report, f)), Block::Blank]);
    }
    for c in &report.cells {
        cell_summary(&mut d, c);
    }
    let mut md = doc::markdown::render(&d);
    if md.len() > limit {
        let note = "\n\n_…truncated: the step summary is limited to 1 MiB; the whole report is in gate.json._\n";
        let mut cut = limit.saturating_sub(note.len());
        while !md.is_char_boundary(cut) {
            cut -= 1;
        }
        md.truncate(cut);
        md.push_str(note);
    }
    md
}

/// A cell's heading, its failures, its verdicts' table and its notices.
fn cell_summary(d: &mut Vec<Block>, c: &GateCell) {
    d.extend([
        Block::heading(
            3,
            vec![verbatim(format!(
                "{} (baseline: {})",
                c.cell,
                c.baseline.as_deref().unwrap_or("none, first run")
            ))],
        ),
        Block::Blank,
    ]);
    d.push(Block::list(
        c.failures
            .iter()
            .map(|f| vec![verbatim(":x: "), Span::PipeEscaped(f.clone())]),
    ));
    if !c.verdicts.is_empty() {
        let mut t = Table::new(&[
            ("verdict", Align::Left),
            ("row", Align::Left),
            ("phase", Align::Left),
            ("new (CI)", Align::Right),
            ("baseline (CI)", Align::Right),
            ("change (CI)", Align::Right),
            ("resolves", Align::Right),
            ("band", Align::Right),
        ]);
        for v in &c.verdicts {
            let (change, resolves) = v.change.as_ref().map_or_else(
                || ("–".to_owned(), "–".to_owned()),
                |c| {
                    let pct = |x: f64| format!("{:+.1}%", (x - 1.0) * 100.0);
                    (
                        format!("{} ({} to {})", pct(c.median), pct(c.lo), pct(c.hi)),
                        format!("±{}%", cell_schema::percent(c.resolution)),
                    )
                },
            );
            t.row(vec![
                v.status.word().to_owned(),
                v.row.to_string(),
                v.phase.to_string(),
                format!("{:.4} ({:.4}–{:.4})", v.new.median, v.new.lo, v.new.hi),
                format!("{:.4} ({:.4}–{:.4})", v.old.median, v.old.lo, v.old.hi),
                change,
                resolves,
                format!("{:.4}–{:.4}", v.band[0], v.band[1]),
            ]);
        }
        d.extend([Block::Blank, Block::Table(t)]);
    }
    if !c.code.is_empty() {
        d.extend([
            Block::Blank,
            verbatim_para(
                "Code verdicts (estimated cycles under cachegrind, as a ratio to the reference; beside the time verdicts, not instead of them):",
            ),
            Block::Blank,
            Block::Table(code_table(&c.code)),
        ]);
    }
    if !c.same_job.is_empty() {
        d.extend([
            Block::Blank,
            verbatim_para(
                "The release under test against the previous release, timed in the same job (new / old per round; beside the history verdicts):",
            ),
            Block::Blank,
            Block::Table(crate::same_job::table(&c.same_job)),
        ]);
    }
    d.push(Block::list(
        c.notices.iter().map(|n| vec![Span::PipeEscaped(n.clone())]),
    ));
    d.push(Block::Blank);
}

/// `; same job: 2 pass, 1 fail` when a previous release was timed beside the new one.
fn same_job_counts(s: &cell_schema::GateSummary) -> String {
    if s.same_job_pass + s.same_job_fail + s.same_job_inconclusive == 0 {
        return String::new();
    }
    let mut line = format!(
        "; same job: {} pass, {} fail",
        s.same_job_pass, s.same_job_fail
    );
    if s.same_job_inconclusive > 0 {
        let _ = write!(line, ", {} inconclusive", s.same_job_inconclusive);
    }
    line
}

/// A cell's same-job verdicts as lines, failures first.
fn same_job_lines(c: &GateCell) -> impl Iterator<Item = String> + '_ {
    let mut vs: Vec<&cell_schema::SameJobVerdict> = c.same_job.iter().collect();
    vs.sort_by_key(|v| std::cmp::Reverse(v.status));
    vs.into_iter().map(|v| v.message.clone())
}

/// `; code: 3 pass, 1 fail` when the exact lane gave code verdicts, else nothing.
fn code_counts(s: &cell_schema::GateSummary) -> String {
    if s.code_pass + s.code_fail + s.code_inconclusive == 0 {
        return String::new();
    }
    let mut line = format!("; code: {} pass, {} fail", s.code_pass, s.code_fail);
    if s.code_inconclusive > 0 {
        let _ = write!(line, ", {} inconclusive", s.code_inconclusive);
    }
    line
}

/// A cell's code verdicts as lines, failures first: a shrink's line is already a notice.
fn code_lines(c: &GateCell) -> impl Iterator<Item = String> + '_ {
    let fails = c.code.iter().filter(|v| v.status == GateStatus::Fail);
    let rest = c.code.iter().filter(|v| v.status != GateStatus::Fail);
    fails.chain(rest).map(|v| v.message.clone())
}

/// The code verdicts' table of the step summary.
fn code_table(code: &[cell_schema::CodeVerdict]) -> Table {
    let mut t = Table::new(&[
        ("code", Align::Left),
        ("row", Align::Left),
        ("phase", Align::Left),
        ("cycles / ref", Align::Right),
        ("baseline", Align::Right),
        ("change", Align::Right),
        ("instructions", Align::Right),
        ("tolerance", Align::Right),
    ]);
    let pct = |x: f64| format!("{:+.2}%", (x - 1.0) * 100.0);
    for v in code {
        t.row(vec![
            v.status.word().to_owned(),
            v.row.to_string(),
            v.phase.to_string(),
            format!("{:.4}", v.new),
            format!("{:.4}", v.old),
            pct(v.change),
            pct(v.instructions_change),
            format!("±{}%", cell_schema::percent(v.tolerance)),
        ]);
    }
    t
}
