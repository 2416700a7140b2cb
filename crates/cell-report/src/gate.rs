//! How a gate report reads: the lines `cell gate` prints, GitHub annotations, and the step
//! summary. The verdicts themselves are `cell-verdict`'s.

use std::fmt::Write as _;

use cell_schema::escape::{workflow_data, workflow_property};
use cell_schema::{GateReport, GateStatus, GateVerdict};

/// The lines a person reads, failures first.
pub fn human(report: &GateReport) -> String {
    let mut out = String::new();
    for c in &report.cells {
        let _ = writeln!(
            out,
            "{} against {}",
            c.cell,
            c.baseline.as_deref().unwrap_or("nothing (first run)")
        );
        for f in &c.failures {
            let _ = writeln!(out, "  FAILURE {f}");
        }
        let mut vs: Vec<&GateVerdict> = c.verdicts.iter().collect();
        vs.sort_by_key(|v| std::cmp::Reverse(v.status));
        for v in vs {
            let _ = writeln!(out, "  {}", v.message);
        }
        for n in &c.notices {
            let _ = writeln!(out, "  notice: {n}");
        }
    }
    let s = &report.summary;
    let _ = writeln!(
        out,
        "gate: {} pass, {} fail, {} inconclusive, {} failure(s), {} notice(s) → exit {}",
        s.pass, s.fail, s.inconclusive, s.failures, s.notices, report.exit
    );
    if s.inconclusive > 0 {
        let _ = writeln!(
            out,
            "warning: {} verdict(s) inconclusive: no call either way, not a pass",
            s.inconclusive
        );
    }
    out
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
    let mut md = format!(
        "## cell gate: {}\n\n**{}** — {} pass, {} fail, {} inconclusive, {} failure(s), {} notice(s); tolerance ±{}\n\n",
        report.run,
        if report.exit == 0 { "passed" } else { "FAILED" },
        s.pass,
        s.fail,
        s.inconclusive,
        s.failures,
        s.notices,
        report.tolerance
    );
    for c in &report.cells {
        let _ = writeln!(
            md,
            "### {} (baseline: {})\n",
            c.cell,
            c.baseline.as_deref().unwrap_or("none, first run")
        );
        for f in &c.failures {
            let _ = writeln!(md, "- :x: {}", f.replace('|', "\\|"));
        }
        if !c.verdicts.is_empty() {
            let mut t = crate::Table::new(&[
                ("verdict", crate::Align::Left),
                ("row", crate::Align::Left),
                ("phase", crate::Align::Left),
                ("new (CI)", crate::Align::Right),
                ("baseline (CI)", crate::Align::Right),
                ("band", crate::Align::Right),
            ]);
            for v in &c.verdicts {
                t.row(vec![
                    format!("{:?}", v.status).to_uppercase(),
                    v.row.to_string(),
                    v.phase.to_string(),
                    format!("{:.4} ({:.4}–{:.4})", v.new.median, v.new.lo, v.new.hi),
                    format!("{:.4} ({:.4}–{:.4})", v.old.median, v.old.lo, v.old.hi),
                    format!("{:.4}–{:.4}", v.band[0], v.band[1]),
                ]);
            }
            md.push('\n');
            md.push_str(&t.markdown());
        }
        for n in &c.notices {
            let _ = writeln!(md, "- {}", n.replace('|', "\\|"));
        }
        md.push('\n');
    }
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
