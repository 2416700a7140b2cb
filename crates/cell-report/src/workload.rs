//! The workload suite as people read it: `RESULTS.md` of a job and of a merged cell, and the
//! terminal tables of `cell run` and `cell local`. Markdown and text are built from the same
//! phase tables, so the two never disagree on a figure.
//!
//! These pages have always printed names, reasons, versions and machine lines with their own
//! markup: their text is [`Span::Verbatim`] (held on its line, so a reason or a version a
//! tool printed opens no heading, table row or HTML), and their blank lines are placed one
//! by one ([`Block::Blank`]) where they always were.

use std::fmt::Write as _;

use cell_schema::{CellResult, Clock, JobResult, Phase, RatioCi, RowResult, Skipped};

use crate::doc::{
    self, Align, Block, Item, Span, Table, verbatim, verbatim_code, verbatim_heading, verbatim_para,
};
use crate::figures::{status_name, verdict_name};
use crate::instructions::Counts;
use crate::{footprint, suite, verdict_median, verdict_ratio};

fn ci(r: &RatioCi) -> String {
    format!("{:.4}–{:.4}", r.lo, r.hi)
}

/// A figure with four decimals, `–` when there is none.
fn fig4(v: Option<f64>) -> String {
    v.map_or("–".into(), |m| format!("{m:.4}"))
}

/// The metrics whose ratios a phase table shows beside the verdict's: the ones every file
/// holds. An optional metric a row is judged on is already its `ratio` and `CI` (and
/// `clock` says which), so the table reads as it always has.
fn table_metrics() -> Vec<Clock> {
    Clock::ALL.into_iter().filter(|m| m.required()).collect()
}

/// The figures of one row on a phase: ratio, CI, the ratio on each of `metrics`, rounds.
fn ratio_cells(row: &RowResult, phase: &Phase, metrics: &[Clock]) -> Vec<String> {
    let ratio = row.phases.get(phase).and_then(|p| p.ratio.as_ref());
    let (Some(v), Some(r)) = (verdict_ratio(row, phase), ratio) else {
        let mut none = vec!["–".to_owned(); 3 + metrics.len()];
        none.push("0".into());
        return none;
    };
    let mut cells = vec![
        format!("{:.4}", v.median),
        ci(v),
        format!("±{}%", cell_schema::percent(v.resolution())),
    ];
    cells.extend(metrics.iter().map(|m| fig4(r.on(*m).map(|x| x.median))));
    cells.push(v.n.to_string());
    cells
}

/// Why a row's rounds on a phase stopped (`futile`), `–` where the file does not say.
fn stopped_cell(pr: &cell_schema::PhaseResult) -> String {
    pr.stopped
        .as_ref()
        .map_or_else(|| "–".to_owned(), |s| s.reason.as_str().to_owned())
}

/// One line per row for a phase: the columns every table shows.
fn phase_table<'a>(rows: impl Iterator<Item = (&'a str, &'a RowResult)>, phase: &Phase) -> Table {
    let rows: Vec<(&str, &RowResult)> = rows.collect();
    let metrics = table_metrics();
    let titles: Vec<String> = metrics.iter().map(|m| format!("{m} ratio")).collect();
    let mut head = vec![
        ("row", Align::Left),
        ("job", Align::Left),
        ("clock", Align::Left),
        ("median s", Align::Right),
        ("ratio", Align::Right),
        ("CI", Align::Right),
        ("resolves", Align::Right),
    ];
    head.extend(titles.iter().map(|t| (t.as_str(), Align::Right)));
    head.extend([
        ("n", Align::Right),
        ("stopped", Align::Left),
        ("answer", Align::Left),
    ]);
    let mut t = Table::new(&head);
    for (job, row) in rows {
        let Some(pr) = row.phases.get(phase) else {
            continue;
        };
        let mut cells = vec![
            String::new(),
            job.to_owned(),
            row.verdict_clock.name().to_owned(),
            fig4(verdict_median(row, phase)),
        ];
        cells.extend(ratio_cells(row, phase, &metrics));
        cells.push(stopped_cell(pr));
        cells.push(if pr.answer_ok { "ok" } else { "WRONG" }.into());
        t.row(cells);
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

fn job_phase_table(job: &JobResult, phase: &Phase) -> Table {
    let rows = job
        .rows
        .iter()
        .map(|(n, r)| (n.as_str(), job.toolchain.as_str(), r));
    named_phase_table(rows, phase)
}

fn cell_phase_table(cell: &CellResult, phase: &Phase) -> Table {
    let rows = cell
        .rows
        .iter()
        .map(|(n, r)| (n.as_str(), r.job.as_str(), &r.row));
    named_phase_table(rows, phase)
}

/// The phases of a merged cell: its first job's protocol order.
fn cell_phases(cell: &CellResult) -> Vec<Phase> {
    cell.jobs
        .values()
        .next()
        .map(|j| j.protocol.phases.clone())
        .unwrap_or_default()
}

/// `Verdict: **ok**` and the reasons listed right under it.
fn verdict_blocks(out: &mut Vec<Block>, verdict: &cell_schema::Verdict, reasons: &[String]) {
    out.push(Block::Para(vec![
        verbatim("Verdict: "),
        Span::Strong(verdict_name(verdict)),
    ]));
    out.push(Block::list(reasons.iter().map(|r| vec![verbatim(r)])));
}

/// `Release under test: …`: what was verified before unpacking, and the binary that built the
/// rows, so a reader of RESULTS.md can check both digests against the release.
fn subject_blocks(out: &mut Vec<Block>, subjects: &[&cell_schema::Subject]) {
    for s in subjects {
        let how = s
            .verified
            .map_or(String::new(), |v| format!(" (verified by {})", v.phrase()));
        let mut line = vec![Span::Text("Release under test: ".into())];
        if let Some(tc) = &s.toolchain {
            line.extend([Span::Code(tc.to_string()), Span::Text(" ".into())]);
        }
        line.extend([
            Span::Text(format!("{}, ", s.tag)),
            Span::Code(s.asset.clone()),
            Span::Text(" sha256 ".into()),
            Span::Code(s.sha256.to_string()),
            Span::Text(how),
        ]);
        for (tool, v) in &s.tools {
            line.push(Span::Text("; ".into()));
            line.push(Span::Code(tool.to_string()));
            if let (Some(d), Some(b)) = (&v.sha256, v.bytes) {
                line.extend([
                    Span::Text(" sha256 ".into()),
                    Span::Code(d.to_string()),
                    Span::Text(format!(" ({b} bytes)")),
                ]);
            }
            line.push(Span::Text(format!(
                ", printed {}",
                v.printed.lines().next().unwrap_or("")
            )));
        }
        out.extend([Block::Blank, Block::Para(line)]);
    }
}

/// `## <phase>` and its table, for each phase.
fn phase_sections(out: &mut Vec<Block>, phases: &[Phase], table: impl Fn(&Phase) -> Table) {
    for phase in phases {
        out.extend([
            verbatim_heading(2, phase.to_string()),
            Block::Blank,
            Block::Table(table(phase)),
            Block::Blank,
        ]);
    }
}

/// `RESULTS.md` of one job.
pub fn job_markdown(job: &JobResult) -> String {
    let mut d = vec![
        Block::heading(
            1,
            vec![
                verbatim("cell run: "),
                verbatim_code(job.toolchain.to_string()),
                verbatim(" on "),
                verbatim_code(job.cell.id.to_string()),
            ],
        ),
        Block::Blank,
    ];
    verdict_blocks(&mut d, &job.verdict, &job.verdict.reasons);
    subject_blocks(&mut d, &job.subject.iter().collect::<Vec<_>>());
    d.extend([
        Block::Blank,
        Block::Para(vec![
            verbatim("Ratios are the median of per-round ratios to "),
            verbatim_code(job.protocol.reference.to_string()),
            verbatim(format!(
                " timed in this job, with a distribution-free confidence interval (level {} from 6 rounds on; below that ",
                job.protocol.ci_level
            )),
            verbatim_code("[min, max]"),
            verbatim(
                ", whose level results.json gives); the verdict clock is each row's own.",
            ),
        ]),
        Block::Blank,
    ]);
    phase_sections(&mut d, &job.protocol.phases, |p| job_phase_table(job, p));
    let (rows, sizes) = footprint::of_job(job);
    d.extend(footprint::markdown_section(&rows, &sizes));
    if let Some(c) = Counts::of_job(job) {
        d.extend(c.markdown_section());
    }
    tooth_blocks(&mut d, job.tooth.as_ref());
    skipped_blocks(&mut d, &job.skipped);
    d.extend([verbatim_heading(2, "Machine"), Block::Blank]);
    d.push(machine_list(&job.machine, job.contention.as_ref()));
    d.extend([Block::Blank, verbatim_heading(2, "Versions"), Block::Blank]);
    d.push(Block::list(job.versions.iter().map(|(tool, v)| {
        vec![
            verbatim_code(tool.to_string()),
            verbatim(format!(
                " ({}): {}",
                v.path,
                v.printed.lines().next().unwrap_or("")
            )),
        ]
    })));
    d.extend([
        Block::Blank,
        verbatim_heading(2, "Protocol"),
        Block::Blank,
        protocol_para(job),
    ]);
    doc::markdown::render(&d)
}

fn protocol_para(job: &JobResult) -> Block {
    let p = &job.protocol;
    // A sequential job without a reason says nothing of its protocol, as before the duet.
    let mode = match (&p.mode_chosen, p.mode) {
        (Some(why), m) => format!("{} protocol ({why}): ", m.as_str()),
        (None, cell_schema::ProtocolMode::Duet) => "duet protocol: ".to_owned(),
        (None, cell_schema::ProtocolMode::Sequential) => String::new(),
    };
    let mut text = format!(
        "{mode}{} measured rounds + {} warm-up ({}; seed {}), verdict clock {} by default{}, CI level {}, CI target ±{}, tolerance ±{}. Cost: {:.1} s ({:.1} s building, {:.1} s timing{}).",
        p.measured_rounds,
        p.warmup_rounds,
        p.stopped,
        p.seed,
        p.default_clock.name(),
        p.clock_chosen
            .as_ref()
            .map_or_else(String::new, |why| format!(" ({why})")),
        p.ci_level,
        p.ci_target,
        p.tolerance,
        job.cost.total_s,
        job.cost.build_s,
        job.cost.timing_s,
        job.cost
            .exact_s
            .map_or_else(String::new, |s| format!(", {s:.1} s in the exact lane"))
    );
    match (&p.baseline, &p.no_baseline) {
        (Some(b), _) => {
            let _ = write!(
                text,
                " Each row's rounds stopped once its verdict against {b} (the baseline the gate would use when the job ran) was settled, or could not be."
            );
        }
        (None, Some(why)) => {
            let _ = write!(text, " No baseline: {why}.");
        }
        (None, None) => {}
    }
    if let Some(f) = &p.futility {
        text.push(' ');
        text.push_str(&crate::figures::futility_line(f));
    }
    verbatim_para(text)
}

/// `RESULTS.md` of a cell of a run.
pub fn cell_markdown(cell: &CellResult) -> String {
    if let Some(imp) = &cell.imported {
        return crate::imported::imported_markdown(cell, imp);
    }
    let mut d = vec![
        Block::heading(
            1,
            vec![
                verbatim_code(cell.cell.id.to_string()),
                verbatim(format!(", run {} ({})", cell.run.id, cell.run.date)),
            ],
        ),
        Block::Blank,
    ];
    let mut reasons = cell.verdict.reasons.clone();
    if cell.run.partial {
        reasons.push("partial: some jobs left no result".into());
    }
    verdict_blocks(&mut d, &cell.verdict, &reasons);
    // One line per distinct release the jobs verified (one, unless they disagree).
    let mut subjects: Vec<&cell_schema::Subject> = Vec::new();
    for s in cell.jobs.values().filter_map(|j| j.subject.as_ref()) {
        if !subjects
            .iter()
            .any(|k| k.sha256 == s.sha256 && k.asset == s.asset)
        {
            subjects.push(s);
        }
    }
    subject_blocks(&mut d, &subjects);
    // A cell of the http or soak suite only has no ratios to explain.
    let workload = !cell.jobs.is_empty() || !cell.rows.is_empty();
    d.push(Block::Blank);
    if workload {
        d.extend([
            Block::Para(vec![
                verbatim(
                    "Each row's ratio was measured against the reference timed in its own job (column ",
                ),
                verbatim_code("job"),
                verbatim(")."),
            ]),
            Block::Blank,
        ]);
    }
    phase_sections(&mut d, &cell_phases(cell), |p| cell_phase_table(cell, p));
    if workload {
        let (rows, sizes) = footprint::of_cell(cell);
        d.extend(footprint::markdown_section(&rows, &sizes));
        let phases = cell_phases(cell);
        if let Some(c) = Counts::of_cell(cell, &phases) {
            d.extend(c.markdown_section());
        }
        d.extend(crate::same_job::markdown_section(cell));
    }
    d.extend(doc::spaced(suite::cell_suites_blocks(cell)));
    if workload {
        d.extend([
            verbatim_heading(2, "Jobs"),
            Block::Blank,
            Block::Table(jobs_table(cell)),
        ]);
    }
    skipped_blocks(&mut d, &cell.skipped);
    cell_footer(&mut d, cell);
    doc::markdown::render(&d)
}

/// Missing jobs, every job's versions, the cost.
fn cell_footer(d: &mut Vec<Block>, cell: &CellResult) {
    if !cell.missing.is_empty() {
        d.extend([
            Block::Blank,
            verbatim_heading(2, "Missing jobs"),
            Block::Blank,
        ]);
        d.push(Block::list(cell.missing.iter().map(|m| {
            vec![
                verbatim_code(m.toolchain.to_string()),
                verbatim(format!(": {}", m.conclusion)),
            ]
        })));
    }
    if !cell.jobs.is_empty() {
        d.extend([Block::Blank, verbatim_heading(2, "Versions"), Block::Blank]);
    }
    d.push(Block::list(cell.jobs.iter().flat_map(|(job, j)| {
        j.versions.iter().map(move |(tool, v)| {
            vec![
                verbatim_code(job.to_string()),
                verbatim(" / "),
                verbatim_code(tool.to_string()),
                verbatim(format!(": {}", v.printed.lines().next().unwrap_or(""))),
            ]
        })
    })));
    if let Some(cost) = &cell.cost {
        d.extend([
            Block::Blank,
            verbatim_para(format!("Total cost: {:.1} s of jobs.", cost.total_s)),
        ]);
    }
}

fn jobs_table(cell: &CellResult) -> Table {
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
            .map(|p| format!("{p} {}", fig4(verdict_median(&j.reference, p))))
            .collect();
        let ctrl: Vec<String> = j
            .control
            .as_ref()
            .map(|c| {
                c.phases
                    .keys()
                    .map(|p| format!("{p} {}", fig4(verdict_ratio(c, p).map(|r| r.median))))
                    .collect()
            })
            .unwrap_or_default();
        t.row(vec![
            name.to_string(),
            verdict_name(&j.verdict),
            refs.join(", "),
            ctrl.join(", "),
            fig4(
                j.tooth
                    .as_ref()
                    .and_then(|t| t.ratio.as_ref())
                    .map(|r| r.median),
            ),
            fig4(j.contention.as_ref().map(|c| c.median)),
            j.machine.cpu_model.clone(),
            format!("{:.1}", j.cost.total_s),
        ]);
    }
    t
}

/// The tooth's figure: median and CI, or that there is none.
fn tooth_figure(t: &cell_schema::Tooth) -> String {
    t.ratio.as_ref().map_or("no measurement".into(), |r| {
        format!("{:.4} (CI {})", r.median, ci(r))
    })
}

fn tooth_blocks(d: &mut Vec<Block>, tooth: Option<&cell_schema::Tooth>) {
    d.extend([verbatim_heading(2, "Tooth"), Block::Blank]);
    d.push(match tooth {
        Some(t) => Block::Para(vec![
            verbatim_code(t.slow.to_string()),
            verbatim(" / "),
            verbatim_code(t.fast.to_string()),
            verbatim(format!(
                " on {} ({}): {}, floor {} → {}",
                t.phase,
                t.clock.name(),
                tooth_figure(t),
                t.floor,
                if t.ok { "seen" } else { "NOT SEEN" }
            )),
        ]),
        None => verbatim_para("not measured in this job"),
    });
    d.push(Block::Blank);
}

/// `## Skipped`: one entry per row, its log's tail in a code block under it.
fn skipped_blocks(d: &mut Vec<Block>, skipped: &[Skipped]) {
    if skipped.is_empty() {
        return;
    }
    d.extend([Block::Blank, verbatim_heading(2, "Skipped"), Block::Blank]);
    d.push(Block::List(
        skipped
            .iter()
            .map(|s| Item {
                spans: vec![
                    verbatim_code(s.row.to_string()),
                    verbatim(format!(" ({}): {}", s.toolchain, s.message)),
                ],
                blocks: if s.log_tail.is_empty() {
                    Vec::new()
                } else {
                    vec![Block::Blank, Block::Code(s.log_tail.clone())]
                },
            })
            .collect(),
    ));
    d.push(Block::Blank);
}

fn machine_list(m: &cell_schema::Machine, c: Option<&cell_schema::Contention>) -> Block {
    let mut lines = vec![
        format!(
            "CPU: {} ({} logical, timed on CPU {})",
            m.cpu_model,
            m.nproc,
            m.pinned_cpu.map_or("unpinned".into(), |c| c.to_string())
        ),
        format!(
            "memory: {:.1} GiB",
            m.memory_bytes as f64 / f64::from(1u32 << 30)
        ),
        format!("kernel: {}", m.kernel),
        format!("OS: {}", m.os_release),
    ];
    if let Some(i) = &m.runner_image {
        lines.push(format!("runner image: {} {}", i.os, i.version));
    }
    if let Some(t) = &m.timing {
        lines.push(timing_line(t));
    }
    if let Some(c) = c {
        lines.push(format!(
            "contention (wall/cpu): median {:.4}, max {:.4}{}",
            c.median,
            c.max,
            if c.contended { " — CONTENDED" } else { "" }
        ));
    }
    Block::list(lines.into_iter().map(|l| vec![verbatim(l)]))
}

/// How the job came by its CPUs: `CPU lock: cpu1 (waited 3.2 s for it)`.
fn timing_line(t: &cell_schema::TimingCpus) -> String {
    let cpus = t
        .cpus
        .iter()
        .map(|c| format!("cpu{c}"))
        .collect::<Vec<_>>()
        .join(" and ");
    let mut notes = Vec::new();
    // Under a twentieth of a second is taking a free lock, not waiting for one.
    if t.waited_s >= 0.05 {
        let it = if t.cpus.len() == 1 { "it" } else { "them" };
        notes.push(format!("waited {:.1} s for {it}", t.waited_s));
    }
    if t.last_resort {
        notes.push("cpu0 as the last resort".to_owned());
    }
    if let Some(e) = &t.lock_error {
        notes.push(format!("no lock: {e}"));
    } else if t.shared {
        notes.push("not all locked: another cell process may have timed there too".to_owned());
    }
    if notes.is_empty() {
        format!("CPU lock: {cpus}")
    } else {
        format!("CPU lock: {cpus} ({})", notes.join("; "))
    }
}

/// A line and the reasons indented under it: the head of a terminal text.
fn verdict_text(d: &mut Vec<Block>, line: String, reasons: &[String]) {
    d.push(verbatim_para(line));
    d.push(Block::list(reasons.iter().map(|r| vec![verbatim(r)])));
}

/// `<phase>` and its table, each after an empty line.
fn phase_text(d: &mut Vec<Block>, phases: &[Phase], table: impl Fn(&Phase) -> Table) {
    for phase in phases {
        d.extend([
            Block::Blank,
            verbatim_heading(2, phase.to_string()),
            Block::Table(table(phase)),
        ]);
    }
}

/// The plain-text tables `cell local` prints: per phase, every row of every cell.
pub fn text_summary(cells: &[CellResult]) -> String {
    let mut d = Vec::new();
    for cell in cells {
        verdict_text(
            &mut d,
            format!(
                "{} ({}): {}",
                cell.cell.id,
                cell.run.id,
                status_name(cell.verdict.status)
            ),
            &cell.verdict.reasons,
        );
        for (name, j) in &cell.jobs {
            if let Some(f) = &j.protocol.futility {
                d.push(verbatim_para(format!(
                    "{name}: {}",
                    crate::figures::futility_line(f)
                )));
            }
        }
        phase_text(&mut d, &cell_phases(cell), |p| cell_phase_table(cell, p));
        if !cell.jobs.is_empty() || !cell.rows.is_empty() {
            let (rows, sizes) = footprint::of_cell(cell);
            d.extend(footprint::text_section(&rows, &sizes));
            let phases = cell_phases(cell);
            if let Some(c) = Counts::of_cell(cell, &phases) {
                d.extend(c.text_section());
            }
        }
        if !cell.http.is_empty() || !cell.soak.is_empty() {
            d.push(Block::Blank);
        }
        let http = cell
            .http
            .iter()
            .map(|(name, h)| suite::http_summary_line(name, h));
        let soak = cell
            .soak
            .iter()
            .map(|(name, s)| suite::soak_summary_line(name, s));
        d.push(Block::list(http.chain(soak).map(|l| vec![verbatim(l)])));
        for s in &cell.skipped {
            d.push(verbatim_para(format!("skipped {}: {}", s.row, s.message)));
        }
        for m in &cell.missing {
            d.push(verbatim_para(format!(
                "not run: {}: {}",
                m.toolchain, m.conclusion
            )));
        }
        d.push(Block::Blank);
    }
    doc::text::render(&d)
}

/// The plain-text tables `cell run` prints for its job.
pub fn job_text(job: &JobResult) -> String {
    let mut d = Vec::new();
    verdict_text(
        &mut d,
        format!(
            "{} / {}: {}",
            job.cell.id,
            job.toolchain,
            verdict_name(&job.verdict)
        ),
        &job.verdict.reasons,
    );
    if let Some(f) = &job.protocol.futility {
        d.push(verbatim_para(crate::figures::futility_line(f)));
    }
    phase_text(&mut d, &job.protocol.phases, |p| job_phase_table(job, p));
    let (rows, sizes) = footprint::of_job(job);
    d.extend(footprint::text_section(&rows, &sizes));
    if let Some(c) = Counts::of_job(job) {
        d.extend(c.text_section());
    }
    if let Some(t) = &job.tooth {
        d.extend([
            Block::Blank,
            verbatim_para(format!(
                "tooth {}/{} on {}: {}, floor {}",
                t.slow,
                t.fast,
                t.phase,
                tooth_figure(t),
                t.floor
            )),
        ]);
    }
    for s in &job.skipped {
        d.push(verbatim_para(format!("skipped {}: {}", s.row, s.message)));
    }
    doc::text::render(&d)
}

#[cfg(test)]
mod tests {
    use cell_schema::TimingCpus;

    use super::timing_line;

    fn timing(cpus: &[u32], waited_s: f64, shared: bool, lock_error: Option<&str>) -> TimingCpus {
        TimingCpus {
            cpus: cpus.to_vec(),
            waited_s,
            last_resort: cpus.contains(&0),
            shared,
            lock_error: lock_error.map(str::to_owned),
        }
    }

    #[test]
    fn the_cpu_lock_line_says_what_it_waited_and_what_it_shared() {
        let line = |t| timing_line(&t);
        assert_eq!(line(timing(&[1], 0.0001, false, None)), "CPU lock: cpu1");
        assert_eq!(
            line(timing(&[1], 3.24, false, None)),
            "CPU lock: cpu1 (waited 3.2 s for it)"
        );
        assert_eq!(
            line(timing(&[1, 0], 0.0, false, None)),
            "CPU lock: cpu1 and cpu0 (cpu0 as the last resort)"
        );
        assert_eq!(
            line(timing(&[3], 900.0, true, None)),
            "CPU lock: cpu3 (waited 900.0 s for it; not all locked: another cell process may have timed there too)"
        );
        assert_eq!(
            line(timing(
                &[2],
                0.0,
                true,
                Some("lock dir /x: Not a directory (os error 20)")
            )),
            "CPU lock: cpu2 (no lock: lock dir /x: Not a directory (os error 20))"
        );
    }
}
