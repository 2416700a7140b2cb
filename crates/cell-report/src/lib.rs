//! Reports people read, generated from the wire types only: `RESULTS.md` of a job and of a
//! cell, and the plain-text tables `cell local` prints. Markdown and text share one
//! [`Table`], so the two never disagree on a figure.

pub mod gate;
pub mod report;
pub mod suite;
mod table;

use std::collections::BTreeMap;
use std::fmt::Write as _;

use cell_schema::store::{CellDir, JobDir};
use cell_schema::{
    AnyJob, CellResult, Clock, Facts, JobResult, Phase, RatioCi, RowResult, Status, ToolchainName,
};

pub use table::{Align, Table};

/// A job dir of any suite, rendered: its result, `RESULTS.md`, and the charts beside it.
pub fn job_dir(job: &AnyJob) -> JobDir<'_> {
    let (markdown, charts) = match job {
        AnyJob::Workload(j) => (job_markdown(j), BTreeMap::new()),
        AnyJob::Http(j) => (suite::http_job_markdown(j), BTreeMap::new()),
        AnyJob::Soak(j) => (suite::soak_job_markdown(j), suite::soak_job_charts(j)),
    };
    JobDir {
        result: job,
        markdown,
        charts,
    }
}

/// A cell of a run dir, rendered: its result, its jobs' facts, `RESULTS.md`, and the soak
/// charts beside it.
pub fn cell_dir<'a>(
    cell: &'a CellResult,
    facts: &'a BTreeMap<ToolchainName, Facts>,
) -> CellDir<'a> {
    CellDir {
        result: cell,
        facts,
        markdown: cell_markdown(cell),
        charts: suite::soak_chart_files(cell),
    }
}

/// The terminal text of a job of any suite.
pub fn any_job_text(job: &AnyJob) -> String {
    match job {
        AnyJob::Workload(j) => job_text(j),
        AnyJob::Http(j) => suite::http_job_text(j),
        AnyJob::Soak(j) => suite::soak_job_text(j),
    }
}

/// The ratio a verdict reads: the row's own clock.
pub fn verdict_ratio<'a>(row: &'a RowResult, phase: &Phase) -> Option<&'a RatioCi> {
    let r = row.phases.get(phase)?.ratio.as_ref()?;
    Some(match row.verdict_clock {
        Clock::Cpu => &r.cpu,
        Clock::Wall => &r.wall,
    })
}

/// Median seconds on the row's verdict clock.
pub fn verdict_median(row: &RowResult, phase: &Phase) -> Option<f64> {
    let s = row.phases.get(phase)?.stats.as_ref()?;
    Some(match row.verdict_clock {
        Clock::Cpu => s.cpu.median,
        Clock::Wall => s.wall.median,
    })
}

fn clock_name(c: Clock) -> &'static str {
    match c {
        Clock::Cpu => "cpu",
        Clock::Wall => "wall",
    }
}

fn status_name(s: Status) -> &'static str {
    match s {
        Status::Ok => "ok",
        Status::Noisy => "noisy (inconclusive)",
        Status::Failed => "FAILED",
    }
}

fn ci(r: &RatioCi) -> String {
    format!("{:.4}–{:.4}", r.lo, r.hi)
}

/// One line per row for a phase: the columns every table shows.
fn phase_table<'a>(rows: impl Iterator<Item = (&'a str, &'a RowResult)>, phase: &Phase) -> Table {
    let mut t = Table::new(&[
        ("row", Align::Left),
        ("job", Align::Left),
        ("clock", Align::Left),
        ("median s", Align::Right),
        ("ratio", Align::Right),
        ("CI", Align::Right),
        ("cpu ratio", Align::Right),
        ("wall ratio", Align::Right),
        ("n", Align::Right),
        ("answer", Align::Left),
    ]);
    for (job, row) in rows {
        let Some(pr) = row.phases.get(phase) else {
            continue;
        };
        let (ratio, ci_s, cpu, wall, n) = match (verdict_ratio(row, phase), pr.ratio.as_ref()) {
            (Some(v), Some(r)) => (
                format!("{:.4}", v.median),
                ci(v),
                format!("{:.4}", r.cpu.median),
                format!("{:.4}", r.wall.median),
                v.n.to_string(),
            ),
            _ => ("–".into(), "–".into(), "–".into(), "–".into(), "0".into()),
        };
        t.row(vec![
            String::new(),
            job.to_owned(),
            clock_name(row.verdict_clock).to_owned(),
            verdict_median(row, phase).map_or("–".into(), |m| format!("{m:.4}")),
            ratio,
            ci_s,
            cpu,
            wall,
            n,
            if pr.answer_ok {
                "ok".into()
            } else {
                "WRONG".into()
            },
        ]);
    }
    t
}

/// The rows of a phase table, named.
fn named_phase_table<'a>(
    rows: impl Iterator<Item = (&'a str, &'a str, &'a RowResult)>,
    phase: &Phase,
) -> Table {
    let rows: Vec<_> = rows.collect();
    let mut t = phase_table(rows.iter().map(|(_, job, r)| (*job, *r)), phase);
    let names: Vec<&str> = rows
        .iter()
        .filter(|(_, _, r)| r.phases.contains_key(phase))
        .map(|(n, _, _)| *n)
        .collect();
    t.set_column(0, names.iter().map(|s| (*s).to_owned()).collect());
    t
}

/// `RESULTS.md` of one job.
pub fn job_markdown(job: &JobResult) -> String {
    let mut md = String::new();
    let _ = writeln!(md, "# cell run: `{}` on `{}`\n", job.toolchain, job.cell.id);
    let _ = writeln!(md, "Verdict: **{}**", status_name(job.verdict.status));
    for r in &job.verdict.reasons {
        let _ = writeln!(md, "- {r}");
    }
    let _ = writeln!(
        md,
        "\nRatios are the median of per-round ratios to `{}` timed in this job, with a distribution-free confidence interval (level {} from 6 rounds on; below that `[min, max]`, whose level results.json gives); the verdict clock is each row's own.\n",
        job.protocol.reference, job.protocol.ci_level
    );
    for phase in &job.protocol.phases {
        let _ = writeln!(md, "## {phase}\n");
        let rows = job
            .rows
            .iter()
            .map(|(n, r)| (n.as_str(), job.toolchain.as_str(), r));
        md.push_str(&named_phase_table(rows, phase).markdown());
        md.push('\n');
    }
    tooth_md(&mut md, job.tooth.as_ref());
    skipped_md(&mut md, &job.skipped);
    let _ = writeln!(md, "## Machine\n");
    machine_md(&mut md, &job.machine, job.contention.as_ref());
    let _ = writeln!(md, "## Versions\n");
    for (tool, v) in &job.versions {
        let _ = writeln!(
            md,
            "- `{tool}` ({}): {}",
            v.path,
            v.printed.lines().next().unwrap_or("")
        );
    }
    let p = &job.protocol;
    let _ = writeln!(
        md,
        "\n## Protocol\n\n{} measured rounds + {} warm-up ({}; seed {}), verdict clock {} by default, CI level {}, CI target ±{}, tolerance ±{}. Cost: {:.1} s ({:.1} s building, {:.1} s timing).",
        p.measured_rounds,
        p.warmup_rounds,
        p.stopped,
        p.seed,
        clock_name(p.default_clock),
        p.ci_level,
        p.ci_target,
        p.tolerance,
        job.cost.total_s,
        job.cost.build_s,
        job.cost.timing_s
    );
    md
}

/// `RESULTS.md` of a cell of a run.
pub fn cell_markdown(cell: &CellResult) -> String {
    let mut md = String::new();
    let _ = writeln!(
        md,
        "# `{}`, run {} ({})\n",
        cell.cell.id, cell.run.id, cell.run.date
    );
    let _ = writeln!(md, "Verdict: **{}**", status_name(cell.verdict.status));
    for r in &cell.verdict.reasons {
        let _ = writeln!(md, "- {r}");
    }
    if cell.run.partial {
        let _ = writeln!(md, "- partial: some jobs left no result");
    }
    // A cell of the http or soak suite only has no ratios to explain.
    let workload = !cell.jobs.is_empty() || !cell.rows.is_empty();
    if workload {
        let _ = writeln!(
            md,
            "\nEach row's ratio was measured against the reference timed in its own job (column `job`).\n"
        );
    } else {
        md.push('\n');
    }
    let phases: Vec<Phase> = cell
        .jobs
        .values()
        .next()
        .map(|j| j.protocol.phases.clone())
        .unwrap_or_default();
    for phase in &phases {
        let _ = writeln!(md, "## {phase}\n");
        let rows = cell
            .rows
            .iter()
            .map(|(n, r)| (n.as_str(), r.job.as_str(), &r.row));
        md.push_str(&named_phase_table(rows, phase).markdown());
        md.push('\n');
    }
    md.push_str(&suite::cell_suites_markdown(cell));
    if workload {
        jobs_md(&mut md, cell);
    }
    skipped_md(&mut md, &cell.skipped);
    if !cell.missing.is_empty() {
        let _ = writeln!(md, "\n## Missing jobs\n");
        for m in &cell.missing {
            let _ = writeln!(md, "- `{}`: {}", m.toolchain, m.conclusion);
        }
    }
    if !cell.jobs.is_empty() {
        let _ = writeln!(md, "\n## Versions\n");
    }
    for (job, j) in &cell.jobs {
        for (tool, v) in &j.versions {
            let _ = writeln!(
                md,
                "- `{job}` / `{tool}`: {}",
                v.printed.lines().next().unwrap_or("")
            );
        }
    }
    let _ = writeln!(md, "\nTotal cost: {:.1} s of jobs.", cell.cost.total_s);
    md
}

fn jobs_md(md: &mut String, cell: &CellResult) {
    let _ = writeln!(md, "## Jobs\n");
    let mut t = Table::new(&[
        ("job", Align::Left),
        ("verdict", Align::Left),
        ("reference median s (per phase)", Align::Left),
        ("control ratio (per phase)", Align::Left),
        ("tooth", Align::Right),
        ("contention", Align::Right),
        ("cpu", Align::Left),
        ("cost s", Align::Right),
    ]);
    for (name, j) in &cell.jobs {
        let refs: Vec<String> = j
            .reference
            .phases
            .keys()
            .map(|p| {
                format!(
                    "{p} {}",
                    verdict_median(&j.reference, p).map_or("–".into(), |m| format!("{m:.4}"))
                )
            })
            .collect();
        let ctrl: Vec<String> = j
            .control
            .as_ref()
            .map(|c| {
                c.phases
                    .keys()
                    .map(|p| {
                        format!(
                            "{p} {}",
                            verdict_ratio(c, p)
                                .map_or("–".into(), |r| format!("{:.4}", r.median))
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        t.row(vec![
            name.to_string(),
            status_name(j.verdict.status).to_owned(),
            refs.join(", "),
            ctrl.join(", "),
            j.tooth
                .as_ref()
                .and_then(|t| t.ratio.as_ref())
                .map_or("–".into(), |r| format!("{:.4}", r.median)),
            j.contention
                .as_ref()
                .map_or("–".into(), |c| format!("{:.4}", c.median)),
            j.machine.cpu_model.clone(),
            format!("{:.1}", j.cost.total_s),
        ]);
    }
    md.push_str(&t.markdown());
}

fn tooth_md(md: &mut String, tooth: Option<&cell_schema::Tooth>) {
    let _ = writeln!(md, "## Tooth\n");
    match tooth {
        Some(t) => {
            let fig = t.ratio.as_ref().map_or("no measurement".into(), |r| {
                format!("{:.4} (CI {})", r.median, ci(r))
            });
            let _ = writeln!(
                md,
                "`{}` / `{}` on {} ({}): {fig}, floor {} → {}\n",
                t.slow,
                t.fast,
                t.phase,
                clock_name(t.clock),
                t.floor,
                if t.ok { "seen" } else { "NOT SEEN" }
            );
        }
        None => {
            let _ = writeln!(md, "not measured in this job\n");
        }
    }
}

fn skipped_md(md: &mut String, skipped: &[cell_schema::Skipped]) {
    if skipped.is_empty() {
        return;
    }
    let _ = writeln!(md, "\n## Skipped\n");
    for s in skipped {
        let _ = writeln!(md, "- `{}` ({}): {}", s.row, s.toolchain, s.message);
        if !s.log_tail.is_empty() {
            let _ = writeln!(
                md,
                "\n  ```\n{}\n  ```",
                s.log_tail
                    .iter()
                    .map(|l| format!("  {l}"))
                    .collect::<Vec<_>>()
                    .join("\n")
            );
        }
    }
    md.push('\n');
}

fn machine_md(md: &mut String, m: &cell_schema::Machine, c: Option<&cell_schema::Contention>) {
    let _ = writeln!(
        md,
        "- CPU: {} ({} logical, timed on CPU {})",
        m.cpu_model,
        m.nproc,
        m.pinned_cpu.map_or("unpinned".into(), |c| c.to_string())
    );
    let _ = writeln!(
        md,
        "- memory: {:.1} GiB",
        m.memory_bytes as f64 / f64::from(1u32 << 30)
    );
    let _ = writeln!(md, "- kernel: {}", m.kernel);
    let _ = writeln!(md, "- OS: {}", m.os_release);
    if let Some(i) = &m.runner_image {
        let _ = writeln!(md, "- runner image: {} {}", i.os, i.version);
    }
    if let Some(c) = c {
        let _ = writeln!(
            md,
            "- contention (wall/cpu): median {:.4}, max {:.4}{}",
            c.median,
            c.max,
            if c.contended { " — CONTENDED" } else { "" }
        );
    }
    md.push('\n');
}

/// The plain-text tables `cell local` prints: per phase, every row of every cell.
pub fn text_summary(cells: &[CellResult]) -> String {
    let mut out = String::new();
    for cell in cells {
        let _ = writeln!(
            out,
            "{} ({}): {}",
            cell.cell.id,
            cell.run.id,
            status_name(cell.verdict.status)
        );
        for r in &cell.verdict.reasons {
            let _ = writeln!(out, "  {r}");
        }
        let phases: Vec<Phase> = cell
            .jobs
            .values()
            .next()
            .map(|j| j.protocol.phases.clone())
            .unwrap_or_default();
        for phase in &phases {
            let _ = writeln!(out, "\n{phase}");
            let rows = cell
                .rows
                .iter()
                .map(|(n, r)| (n.as_str(), r.job.as_str(), &r.row));
            out.push_str(&named_phase_table(rows, phase).text());
        }
        if !cell.http.is_empty() || !cell.soak.is_empty() {
            out.push('\n');
        }
        for (name, h) in &cell.http {
            let _ = writeln!(out, "  {}", suite::http_summary_line(name, h));
        }
        for (name, s) in &cell.soak {
            let _ = writeln!(out, "  {}", suite::soak_summary_line(name, s));
        }
        for s in &cell.skipped {
            let _ = writeln!(out, "skipped {}: {}", s.row, s.message);
        }
        for m in &cell.missing {
            let _ = writeln!(out, "not run: {}: {}", m.toolchain, m.conclusion);
        }
        out.push('\n');
    }
    out
}

/// The plain-text tables `cell run` prints for its job.
pub fn job_text(job: &JobResult) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} / {}: {}",
        job.cell.id,
        job.toolchain,
        status_name(job.verdict.status)
    );
    for r in &job.verdict.reasons {
        let _ = writeln!(out, "  {r}");
    }
    for phase in &job.protocol.phases {
        let _ = writeln!(out, "\n{phase}");
        let rows = job
            .rows
            .iter()
            .map(|(n, r)| (n.as_str(), job.toolchain.as_str(), r));
        out.push_str(&named_phase_table(rows, phase).text());
    }
    if let Some(t) = &job.tooth {
        let fig = t.ratio.as_ref().map_or("no measurement".into(), |r| {
            format!("{:.4} (CI {})", r.median, ci(r))
        });
        let _ = writeln!(
            out,
            "\ntooth {}/{} on {}: {fig}, floor {}",
            t.slow, t.fast, t.phase, t.floor
        );
    }
    for s in &job.skipped {
        let _ = writeln!(out, "skipped {}: {}", s.row, s.message);
    }
    out
}
