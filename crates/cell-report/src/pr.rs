//! A pull request's report: the comment the reporter keeps on the pull request and the check
//! run's summary, each within GitHub's 65,535 characters, and the whole of it for the step
//! summary. Every string that came from the artifact judged (failures, notices, the lines of
//! the jobs that could not be used) is escaped for Markdown after its control characters are
//! dropped; the names in the table are checked ids.

use std::fmt::Write as _;

use cell_schema::escape;
use cell_schema::{GateReport, GateStatus};

use crate::doc::{Align, Span, Table, code, text};

/// GitHub's limit on a comment's body and a check run's summary, in characters; the body is
/// measured in bytes, which are never fewer.
pub const GITHUB_TEXT_LIMIT: usize = 65_535;

/// The most failures, and jobs that could not be used, listed by name; the rest are counted.
const MAX_LISTED: usize = 20;

/// The most characters of one listed line.
const MAX_LINE: usize = 400;

/// What a pull request's report says.
#[derive(Clone, Debug)]
pub struct PrView<'a> {
    /// The pull request.
    pub number: u64,
    /// The commit measured.
    pub head_sha: &'a str,
    /// The base branch.
    pub base_ref: &'a str,
    /// The `pull_request` run whose artifact was judged.
    pub run_id: u64,
    /// PASS, FAIL or INCONCLUSIVE ([`cell_verdict::pr::headline`]).
    pub headline: GateStatus,
    /// The gate of the run against the default branch's history.
    pub report: &'a GateReport,
    /// The jobs whose result could not be used, each a line.
    pub unusable: &'a [String],
    /// Where the whole report is (the reporter run's page).
    pub details_url: Option<&'a str>,
}

/// External text in Markdown: control characters and escape sequences dropped, mentions and
/// issue references made inert, markup escaped, held on one line and cut to [`MAX_LINE`]
/// characters.
fn external(s: &str) -> Span {
    let one = escape::unmention(&escape::one_line(&escape::terminal(s)));
    let cut: String = one.chars().take(MAX_LINE).collect();
    let more = if cut.len() < one.len() { "…" } else { "" };
    text(format!("{cut}{more}"))
}

fn render_spans(spans: &[Span]) -> String {
    crate::doc::markdown::render(&[crate::doc::Block::Para(spans.to_vec())])
}

/// The headline, what the run resolved and the counts: the report's first lines.
fn head(v: &PrView<'_>, marker: Option<&str>) -> String {
    let mut out = String::new();
    if let Some(m) = marker {
        let _ = writeln!(out, "{m}");
    }
    let short: String = v.head_sha.chars().take(12).collect();
    let _ = writeln!(
        out,
        "## cell: **{}** for pull request #{}\n",
        v.headline.word(),
        v.number
    );
    out.push_str(&render_spans(&[
        text("Head "),
        code(short),
        text(" measured by run "),
        text(v.run_id.to_string()),
        text(" for a merge into "),
        code(v.base_ref),
        text(", judged against the default branch's history with its configuration (the artifact's own verdict is not read)."),
    ]));
    out.push('\n');
    let r = v.report;
    let s = &r.summary;
    let mut resolved = format!(
        "**What the run could resolve:** tolerance ±{}%",
        escape::markdown(&cell_schema::percent(r.tolerance))
    );
    let mut res: Vec<f64> = r
        .cells
        .iter()
        .flat_map(|c| &c.verdicts)
        .filter_map(|v| v.change.as_ref().map(|c| c.resolution))
        .filter(|x| x.is_finite())
        .collect();
    res.sort_by(f64::total_cmp);
    match (res.first(), res.last()) {
        (Some(lo), Some(hi)) => {
            let _ = write!(
                resolved,
                "; a change smaller than ±{}% to ±{}% (row by row) could not be told from none",
                cell_schema::percent(*lo),
                cell_schema::percent(*hi)
            );
        }
        _ => resolved.push_str("; no change was measured with an interval"),
    }
    if let Some(f) = &r.family {
        let _ = write!(
            resolved,
            "; {} unit(s) judged together, each interval at {}%",
            f.units,
            crate::figures::short(f.unit_level * 100.0, 4)
        );
    }
    let _ = writeln!(out, "{resolved}.\n");
    let _ = writeln!(
        out,
        "{} pass, {} fail, {} inconclusive, {} failure(s), {} notice(s); code: {} fail, {} inconclusive.\n",
        s.pass, s.fail, s.inconclusive, s.failures, s.notices, s.code_fail, s.code_inconclusive
    );
    out
}

/// The verdict table: one row per cell, row and phase, failures first.
fn table(report: &GateReport) -> Table {
    let mut t = Table::new(&[
        ("verdict", Align::Left),
        ("cell", Align::Left),
        ("row", Align::Left),
        ("phase", Align::Left),
        ("change (CI)", Align::Right),
        ("resolves", Align::Right),
    ]);
    let mut rows: Vec<(&cell_schema::GateCell, &cell_schema::GateVerdict)> = report
        .cells
        .iter()
        .flat_map(|c| c.verdicts.iter().map(move |v| (c, v)))
        .collect();
    rows.sort_by_key(|(_, v)| std::cmp::Reverse(v.status));
    let pct = |x: f64| format!("{:+.1}%", (x - 1.0) * 100.0);
    for (c, v) in rows {
        let (change, resolves) = v.change.as_ref().map_or_else(
            || ("–".to_owned(), "–".to_owned()),
            |ch| {
                (
                    format!("{} ({} to {})", pct(ch.median), pct(ch.lo), pct(ch.hi)),
                    format!("±{}%", cell_schema::percent(ch.resolution)),
                )
            },
        );
        t.push(vec![
            vec![Span::Strong(v.status.word().to_owned())],
            vec![code(c.cell.as_str())],
            vec![code(v.row.as_str())],
            vec![code(v.phase.as_str())],
            vec![text(change)],
            vec![text(resolves)],
        ]);
    }
    t
}

/// A list of lines under a title, at most [`MAX_LISTED`], the rest counted.
fn listed(out: &mut String, title: &str, lines: &[String]) {
    if lines.is_empty() {
        return;
    }
    let _ = writeln!(out, "**{title}**\n");
    for l in lines.iter().take(MAX_LISTED) {
        let _ = writeln!(out, "- {}", render_spans(&[external(l)]).trim_end());
    }
    if lines.len() > MAX_LISTED {
        let _ = writeln!(out, "- … and {} more", lines.len() - MAX_LISTED);
    }
    out.push('\n');
}

/// The failures and the unusable jobs: the report's last lines.
fn tail(v: &PrView<'_>) -> String {
    let mut out = String::new();
    let failures: Vec<String> = v
        .report
        .cells
        .iter()
        .flat_map(|c| c.failures.iter().map(move |f| format!("{}: {f}", c.cell)))
        .collect();
    listed(&mut out, "Failures", &failures);
    listed(&mut out, "Jobs whose result could not be used", v.unusable);
    // Why a row was not called either way: the reader's next question after INCONCLUSIVE.
    let undecided: Vec<String> = v
        .report
        .cells
        .iter()
        .flat_map(|c| &c.verdicts)
        .filter(|x| x.status == cell_schema::GateStatus::Inconclusive)
        .map(|x| x.message.clone())
        .collect();
    listed(&mut out, "Why not decided", &undecided);
    let notices: Vec<String> = v
        .report
        .cells
        .iter()
        .flat_map(|c| c.notices.iter().map(move |n| format!("{}: {n}", c.cell)))
        .collect();
    listed(&mut out, "Notices", &notices);
    out
}

/// The report within `limit` bytes: the table cut at a row boundary when it does not fit,
/// with how many rows were left out and a link to the full report. `marker` (the comment's
/// hidden mark) leads when given.
pub fn body(v: &PrView<'_>, marker: Option<&str>, limit: usize) -> String {
    let head = head(v, marker);
    let tail = tail(v);
    let t = table(v.report);
    if t.rows().is_empty() {
        return cut(format!("{head}No row was judged.\n\n{tail}"), limit);
    }
    let md = t.markdown();
    let lines: Vec<&str> = md.lines().collect();
    let (top, rows) = lines.split_at(2.min(lines.len()));
    let whole = format!("{head}{md}\n{tail}");
    if whole.len() <= limit {
        return whole;
    }
    let note = |left: usize| {
        let link = v.details_url.map_or_else(
            || " (the whole report is in the reporter run's step summary)".to_owned(),
            |u| format!(": [the full report]({})", escape::markdown_target(u)),
        );
        format!(
            "\n_{left} row(s) left out to stay within GitHub's {GITHUB_TEXT_LIMIT} characters{link}._\n\n"
        )
    };
    let mut out = head;
    for l in top {
        let _ = writeln!(out, "{l}");
    }
    let budget = limit.saturating_sub(tail.len() + note(rows.len()).len());
    let mut kept = 0;
    for l in rows {
        if out.len() + l.len() + 1 > budget {
            break;
        }
        let _ = writeln!(out, "{l}");
        kept += 1;
    }
    out.push_str(&note(rows.len() - kept));
    out.push_str(&tail);
    cut(out, limit)
}

/// The whole report, every row (for the step summary).
pub fn full(v: &PrView<'_>) -> String {
    body(v, None, usize::MAX)
}

/// The check run's title: one line.
pub fn title(v: &PrView<'_>) -> String {
    let s = &v.report.summary;
    format!(
        "{}: {} pass, {} fail, {} inconclusive, {} failure(s)",
        v.headline.word(),
        s.pass,
        s.fail,
        s.inconclusive,
        s.failures + u32::try_from(v.unusable.len()).unwrap_or(u32::MAX)
    )
}

/// A last guard: `s` within `limit` bytes, cut at a line.
fn cut(mut s: String, limit: usize) -> String {
    if s.len() <= limit {
        return s;
    }
    let note = "\n_…cut to stay within GitHub's limit._\n";
    let mut at = limit.saturating_sub(note.len());
    while !s.is_char_boundary(at) {
        at -= 1;
    }
    let at = s[..at].rfind('\n').map_or(at, |i| i + 1);
    s.truncate(at);
    s.push_str(note);
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A report of `n` verdicts on one cell, with a hostile failure line.
    fn report(n: usize) -> GateReport {
        let verdicts: Vec<serde_json::Value> = (0..n)
            .map(|i| {
                serde_json::json!({
                    "row": format!("row-with-a-long-name-{i:04}"), "phase": "mix", "clock": "cpu",
                    "status": if i % 3 == 0 { "fail" } else { "pass" },
                    "old": {"median": 1.0, "lo": 0.99, "hi": 1.01},
                    "new": {"median": 1.02, "lo": 1.01, "hi": 1.03},
                    "band": [0.95, 1.05], "message": "m",
                    "change": {"median": 1.02, "lo": 1.01, "hi": 1.03, "level": 0.99, "resolution": 0.01}
                })
            })
            .collect();
        serde_json::from_value(serde_json::json!({
            "schema_version": 2, "kind": "gate", "run": "2026-12-01-7", "tolerance": 0.05,
            "cells": [{"cell": "linux-x86_64-ubuntu-24.04", "baseline": "2026-11-30-6",
                "failures": ["<script>x</script> ::error::boom \u{1b}[31mred | *b*"], "notices": [],
                "verdicts": verdicts}],
            "summary": {"pass": 0, "fail": 1, "inconclusive": 0, "failures": 1, "notices": 0},
            "exit": 1
        }))
        .unwrap()
    }

    fn view<'a>(r: &'a GateReport, unusable: &'a [String]) -> PrView<'a> {
        PrView {
            number: 12,
            head_sha: "328faa0536e6fef19753d9d91dc96a9931694ce3",
            base_ref: "main",
            run_id: 7,
            headline: GateStatus::Fail,
            report: r,
            unusable,
            details_url: Some("https://github.com/o/r/actions/runs/8"),
        }
    }

    #[test]
    fn a_long_table_is_cut_at_a_row_with_a_count_and_the_link() {
        let r = report(3000);
        let unusable = vec!["<b>jobs/x</b>".to_owned(); 30];
        let v = view(&r, &unusable);
        let b = body(&v, Some("<!-- cell:pr-report -->"), GITHUB_TEXT_LIMIT);
        assert!(b.len() <= GITHUB_TEXT_LIMIT, "{}", b.len());
        assert!(b.starts_with("<!-- cell:pr-report -->\n"));
        assert!(b.contains("row(s) left out to stay within GitHub's 65535 characters: [the full report](https://github.com/o/r/actions/runs/8)."), "{b}");
        // Every table line is whole: the cut is at a row boundary.
        let rows: Vec<&str> = b.lines().filter(|l| l.starts_with("| ")).collect();
        assert!(rows.iter().all(|l| l.ends_with(" |")));
        let left: usize = b
            .split('_')
            .find_map(|s| s.strip_suffix(" row(s) left out to stay within GitHub's 65535 characters: [the full report](https://github.com/o/r/actions/runs/8)."))
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        assert_eq!(rows.len() - 1 + left, 3000);
        assert!(b.contains("… and 10 more"));
        assert!(full(&v).lines().filter(|l| l.starts_with("| ")).count() == 3001);
    }

    #[test]
    fn three_hundred_rows_stay_within_the_limit_with_the_link() {
        let r = report(300);
        let v = view(&r, &[]);
        let b = body(&v, Some("<!-- cell:pr-report -->"), GITHUB_TEXT_LIMIT);
        assert!(b.len() <= GITHUB_TEXT_LIMIT);
        let rows = b.lines().filter(|l| l.starts_with("| ")).count();
        if rows < 301 {
            assert!(b.contains("[the full report](https://github.com/o/r/actions/runs/8)"));
        }
        // With a smaller limit the cut is exercised for 300 rows too.
        let small = body(&v, Some("<!-- cell:pr-report -->"), 20_000);
        assert!(small.len() <= 20_000);
        assert!(small.contains("row(s) left out"), "{small}");
    }

    #[test]
    fn external_text_is_escaped() {
        let r = report(1);
        let unusable =
            vec!["jobs/<img src=x>: \u{1b}]8;;http://e\u{7}link ::warning::w".to_owned()];
        let b = body(&view(&r, &unusable), None, GITHUB_TEXT_LIMIT);
        // No tag opens: every `<` is escaped.
        assert!(
            b.match_indices('<').all(|(i, _)| b[..i].ends_with('\\')),
            "{b}"
        );
        assert!(!b.contains('\u{1b}') && !b.contains('\u{7}'), "{b}");
        assert!(!b.lines().any(|l| l.trim_start().starts_with("::")), "{b}");
        assert!(b.contains("\\<script\\>"), "{b}");
        assert!(b.contains("red \\| \\*b\\*"), "{b}");
    }

    /// A job folder or a name in an artifact's error saying `@org/team` notified that team
    /// when the comment was posted: Markdown escaping keeps `@` as it is.
    #[test]
    fn a_mention_in_external_text_notifies_no_one() {
        let r = report(1);
        let unusable = vec!["jobs/@org/team: see @admin and #1".to_owned()];
        let b = body(&view(&r, &unusable), None, GITHUB_TEXT_LIMIT);
        let line = b.lines().find(|l| l.contains("jobs/")).unwrap();
        for (i, _) in line.match_indices(['@', '#']) {
            assert!(line[i + 1..].starts_with('\u{200B}'), "{line}");
        }
        assert!(line.contains("@\u{200B}org/team"), "{line}");
    }
}
