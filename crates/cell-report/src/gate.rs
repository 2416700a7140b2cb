//! The verdict of a run against committed history: three-way per row and phase (PASS /
//! FAIL / INCONCLUSIVE, DESIGN §6), failures that always trip (wrong answers, checksums, the
//! tooth, missing rows), and notices that never do (health, machine changes, contention).
//!
//! Every threshold comes from the checked-in configuration ([`GateConfig`]), never from the
//! artifact being judged: a job that wrote a lenient floor into its own results is still
//! judged by the repository's floor.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use cell_schema::{
    CellResult, Clock, GateCell, GateKind, GateRatio, GateReport, GateStatus, GateSummary,
    GateVerdict, JobSummary, Phase, RatioCi, RowName, RowResult, SCHEMA_VERSION, ToolchainName,
};

use crate::history::HistoryRun;

/// What the gate needs from the checked-in configuration.
#[derive(Clone, Debug)]
pub struct GateConfig {
    /// `TOLERANCE`.
    pub tolerance: f64,
    /// `HTTP_TOLERANCE`.
    pub http_tolerance: f64,
    /// `HEALTH_THRESHOLD`.
    pub health_threshold: f64,
    /// The tooth's slow row, fast row and phase.
    pub tooth: (RowName, RowName, Phase),
    /// `TOOTH_MIN` per architecture (`x86_64` → floor); `default_floor` otherwise.
    pub tooth_floor: BTreeMap<String, f64>,
    /// `TOOTH_MIN`.
    pub default_floor: f64,
    /// Rows each toolchain is expected to produce.
    pub rows: BTreeMap<ToolchainName, Vec<RowName>>,
    /// Pinned digests: `versions.env` keys holding a SHA-256 and their values.
    pub digests: BTreeMap<String, String>,
    /// A run name (`<date>-<run-id>`) to compare against instead of the newest.
    pub baseline: Option<String>,
    /// `cell calibrate` results per cell id, when the repository has them.
    pub calibration: BTreeMap<String, cell_schema::Calibration>,
}

impl GateConfig {
    fn floor(&self, arch: &str) -> f64 {
        self.tooth_floor
            .get(arch)
            .copied()
            .unwrap_or(self.default_floor)
    }
}

/// A gate that could not run (exit 2).
#[derive(Debug, thiserror::Error)]
pub enum GateError {
    /// The pinned baseline is not in the history.
    #[error(
        "the pinned baseline `{0}` is not a run of the history: pick one of its run directories"
    )]
    NoBaseline(String),
}

fn pick(r: &cell_schema::Ratios, clock: Clock) -> &RatioCi {
    match clock {
        Clock::Cpu => &r.cpu,
        Clock::Wall => &r.wall,
    }
}

fn gr(r: &RatioCi) -> GateRatio {
    GateRatio {
        median: r.median,
        lo: r.lo,
        hi: r.hi,
    }
}

fn clock_name(c: Clock) -> &'static str {
    match c {
        Clock::Cpu => "cpu",
        Clock::Wall => "wall",
    }
}

/// The three-way rule of DESIGN §6 for a new interval against baseline ratio `b`.
pub fn three_way(b: f64, lo: f64, hi: f64, tolerance: f64) -> GateStatus {
    let (band_lo, band_hi) = (b / (1.0 + tolerance), b * (1.0 + tolerance));
    if lo >= band_lo && hi <= band_hi {
        GateStatus::Pass
    } else if hi < band_lo || lo > band_hi {
        GateStatus::Fail
    } else {
        GateStatus::Inconclusive
    }
}

/// The A/A rule of DESIGN §6, the one place it is written: a control ratio whose interval
/// misses 1.0, or whose median is off by more than `tolerance/2`, or whose half-width exceeds
/// `tolerance/2`, means the machine was too noisy to call anything.
pub fn control_is_off(r: &RatioCi, tolerance: f64) -> bool {
    let half_tol = tolerance / 2.0;
    r.lo > 1.0 || r.hi < 1.0 || (r.median - 1.0).abs() > half_tol || (r.hi - r.lo) / 2.0 > half_tol
}

/// Why a job's A/A control says its rows on `phase` (on `clock`) cannot be judged, if it does.
fn too_noisy(job: &JobSummary, phase: &Phase, clock: Clock, tolerance: f64) -> Option<String> {
    let control = job.control.as_ref()?;
    let Some(r) = control.phases.get(phase).and_then(|p| p.ratio.as_ref()) else {
        return Some(format!("the A/A control has no measurement on {phase}"));
    };
    let r = pick(r, clock);
    let half_tol = tolerance / 2.0;
    control_is_off(r, tolerance).then(|| {
        format!("too noisy to gate: the A/A control on {phase} ({} time) is {:.4} (CI {:.4}–{:.4}), beyond ±{half_tol:.4}", clock_name(clock), r.median, r.lo, r.hi)
    })
}

/// Judges `run` against `history` (which may contain it; the same run id is skipped).
pub fn gate(
    run: &HistoryRun,
    history: &[HistoryRun],
    config: &GateConfig,
    run_missing: &[String],
) -> Result<GateReport, GateError> {
    let pinned = match &config.baseline {
        Some(name) => Some(
            history
                .iter()
                .find(|h| &h.name == name)
                .ok_or_else(|| GateError::NoBaseline(name.clone()))?,
        ),
        None => None,
    };
    let mut cells = Vec::new();
    for (id, cell) in &run.cells {
        // Older runs of this cell, oldest first (only the pinned one when pinned).
        let older: Vec<(&str, &CellResult)> = match pinned {
            Some(p) => p
                .cells
                .get(id)
                .map(|c| (p.name.as_str(), c))
                .into_iter()
                .collect(),
            None => history
                .iter()
                .filter(|h| h.run_id != run.run_id)
                .filter_map(|h| h.cells.get(id).map(|c| (h.name.as_str(), c)))
                .collect(),
        };
        // The workload is compared with the newest run that had workload jobs.
        let baseline = older
            .iter()
            .rev()
            .find(|(_, c)| !c.jobs.is_empty())
            .copied();
        let suites = crate::gate_suite::gate_suites(cell, &older, config.http_tolerance);
        let mut g = if cell.jobs.is_empty() {
            // A suite-only run: nothing of the workload to judge.
            GateCell {
                cell: id.clone(),
                baseline: None,
                failures: Vec::new(),
                notices: cell
                    .missing
                    .iter()
                    .map(|m| format!("job {} left no result ({})", m.toolchain, m.conclusion))
                    .collect(),
                verdicts: Vec::new(),
            }
        } else {
            gate_cell(cell, baseline, config, run_missing)
        };
        g.failures.extend(suites.failures);
        g.notices.extend(suites.notices);
        g.verdicts.extend(suites.verdicts);
        cells.push(g);
    }
    let mut summary = GateSummary {
        pass: 0,
        fail: 0,
        inconclusive: 0,
        failures: 0,
        notices: 0,
    };
    for c in &cells {
        for v in &c.verdicts {
            match v.status {
                GateStatus::Pass => summary.pass += 1,
                GateStatus::Fail => summary.fail += 1,
                GateStatus::Inconclusive => summary.inconclusive += 1,
            }
        }
        summary.failures += u32::try_from(c.failures.len()).unwrap_or(u32::MAX);
        summary.notices += u32::try_from(c.notices.len()).unwrap_or(u32::MAX);
    }
    let exit = u8::from(summary.fail > 0 || summary.failures > 0);
    Ok(GateReport {
        schema_version: SCHEMA_VERSION,
        kind: GateKind::Gate,
        run: run.name.clone(),
        tolerance: config.tolerance,
        cells,
        summary,
        exit,
    })
}

#[expect(
    clippy::too_many_lines,
    reason = "the checks of one cell in the order a reader expects them"
)]
fn gate_cell(
    cell: &CellResult,
    baseline: Option<(&str, &CellResult)>,
    config: &GateConfig,
    run_missing: &[String],
) -> GateCell {
    let mut failures = Vec::new();
    let mut notices = Vec::new();
    let id = &cell.cell.id;

    // Wrong answers, in every row a job timed (reference and control included).
    let mut every_row: Vec<(String, &RowResult)> = cell
        .rows
        .iter()
        .map(|(n, r)| (format!("{n} (job {})", r.job), &r.row))
        .collect();
    for (tc, j) in &cell.jobs {
        every_row.push((
            format!("{} (reference, job {tc})", j.protocol.reference),
            &j.reference,
        ));
        if let Some(c) = &j.control {
            every_row.push((format!("{} (job {tc})", j.protocol.control), c));
        }
    }
    for (name, row) in &every_row {
        for (p, pr) in &row.phases {
            if !pr.answer_ok {
                failures.push(format!(
                    "wrong answer: row {name} on phase {p}: {}",
                    pr.wrong.clone().unwrap_or_default()
                ));
            }
        }
    }
    // Checksums: a job that ran with other digests than the repository pins, or an artifact
    // whose zip did not match its digest.
    for (tc, j) in &cell.jobs {
        for (k, v) in &j.pins {
            if let Some(pinned) = config.digests.get(k)
                && !pinned.eq_ignore_ascii_case(v)
            {
                failures.push(format!(
                    "checksum: job {tc} ran with {k}={v}, but versions.env pins {pinned}"
                ));
            }
        }
    }
    for m in run_missing.iter().filter(|m| m.contains("SHA-256")) {
        failures.push(format!("checksum: {m}"));
    }
    // The tooth, judged by the repository's floor, in every job.
    let (slow, fast, tphase) = &config.tooth;
    let floor = config.floor(&cell.cell.arch);
    for (tc, j) in &cell.jobs {
        match j.tooth.as_ref().and_then(|t| t.ratio.as_ref()) {
            None => failures.push(format!("tooth {slow}/{fast} on {tphase}: not measured in job {tc}: its rows were expected but are missing")),
            Some(r) if r.median < floor => failures.push(format!("tooth {slow}/{fast} on {tphase}: {:.4} (CI {:.4}–{:.4}) in job {tc} is below the floor {floor} for {}: the harness could not see a known difference", r.median, r.lo, r.hi, cell.cell.arch)),
            Some(_) => {}
        }
    }
    // Rows the configuration expects from every job that ran.
    for tc in cell.jobs.keys() {
        for row in config.rows.get(tc).into_iter().flatten() {
            if !cell.rows.contains_key(row) {
                let why = cell
                    .skipped
                    .iter()
                    .find(|s| &s.row == row)
                    .map_or(String::new(), |s| format!(": {}", s.message));
                let tooth = if row == slow || row == fast {
                    format!(
                        " (it is the tooth's {} row: tooth {slow}/{fast} cannot be read)",
                        if row == slow { "slow" } else { "fast" }
                    )
                } else {
                    String::new()
                };
                failures.push(format!(
                    "expected row {row} of job {tc} is missing{tooth}{why}"
                ));
            }
        }
    }
    for m in &cell.missing {
        notices.push(format!(
            "job {} left no result ({})",
            m.toolchain, m.conclusion
        ));
    }
    for (tc, j) in &cell.jobs {
        if let Some(c) = j.contention.as_ref().filter(|c| c.contended) {
            notices.push(format!(
                "job {tc} was contended: median wall/cpu {:.4} > {}",
                c.median, c.threshold
            ));
        }
    }

    // The machine's measured A/A noise, when calibrated: a tolerance below it cannot pass.
    if let Some(cal) = config.calibration.get(id.as_str()) {
        let mut used: Vec<(Phase, Clock)> = cell
            .rows
            .values()
            .flat_map(|r| {
                r.row
                    .phases
                    .keys()
                    .map(move |p| (p.clone(), r.row.verdict_clock))
            })
            .collect();
        used.sort();
        used.dedup();
        for (p, clock) in used {
            if let Some(n) = cal.phases.get(&p).and_then(|c| c.get(&clock))
                && n.half_width > config.tolerance / 2.0
            {
                notices.push(format!(
                        "this machine's A/A noise on {p} ({} time) is ±{:.2}% (cell calibrate, {} rounds, {}), wider than TOLERANCE/2 = ±{:.2}%: expect INCONCLUSIVE there",
                        clock_name(clock), n.half_width * 100.0, cal.rounds, cal.measured_at, config.tolerance * 50.0
                    ));
            }
        }
    }

    let Some((base_name, base)) = baseline else {
        notices.push("first run of this cell: baseline recorded".into());
        return GateCell {
            cell: id.clone(),
            baseline: None,
            failures,
            notices,
            verdicts: Vec::new(),
        };
    };

    // Health and machine notices, job by job.
    for (tc, j) in &cell.jobs {
        let Some(old) = base.jobs.get(tc) else {
            continue;
        };
        let clock = j.protocol.default_clock;
        for (p, pr) in &j.reference.phases {
            let (Some(new), Some(prev)) = (
                pr.stats.as_ref(),
                old.reference.phases.get(p).and_then(|x| x.stats.as_ref()),
            ) else {
                continue;
            };
            let (a, b) = match clock {
                Clock::Cpu => (new.cpu.median, prev.cpu.median),
                Clock::Wall => (new.wall.median, prev.wall.median),
            };
            if b > 0.0 && (a / b - 1.0).abs() > config.health_threshold {
                notices.push(format!("health: job {tc}'s reference on {p} took {a:.4} s, {:+.1}% from {b:.4} s in {base_name} (beyond ±{:.0}%): the machine changed, ratios still compare", (a / b - 1.0) * 100.0, config.health_threshold * 100.0));
            }
        }
        if j.machine.cpu_model != old.machine.cpu_model {
            notices.push(format!(
                "job {tc} ran on `{}`, the baseline on `{}`",
                j.machine.cpu_model, old.machine.cpu_model
            ));
        }
        if j.machine.runner_image != old.machine.runner_image {
            let describe = |image: &Option<cell_schema::RunnerImage>| {
                image
                    .as_ref()
                    .map_or("none".into(), |i| format!("{} {}", i.os, i.version))
            };
            notices.push(format!(
                "job {tc}'s runner image changed: {} → {}",
                describe(&old.machine.runner_image),
                describe(&j.machine.runner_image)
            ));
        }
    }

    let mut verdicts = Vec::new();
    for (name, row) in &cell.rows {
        if row.row.role == cell_schema::Role::Reference {
            continue;
        }
        let Some(old_row) = base.rows.get(name) else {
            notices.push(format!("new row {name}: baseline recorded"));
            continue;
        };
        let clock = row.row.verdict_clock;
        let job = cell.jobs.get(&row.job);
        for (p, pr) in &row.row.phases {
            let (Some(new), Some(old)) = (
                pr.ratio.as_ref().map(|r| pick(r, clock)),
                old_row
                    .row
                    .phases
                    .get(p)
                    .and_then(|x| x.ratio.as_ref())
                    .map(|r| pick(r, clock)),
            ) else {
                continue;
            };
            let band = [
                old.median / (1.0 + config.tolerance),
                old.median * (1.0 + config.tolerance),
            ];
            // Either side too noisy and there is no call: a noisy baseline is no firmer a
            // reference than a noisy new run.
            let noisy = job
                .and_then(|j| too_noisy(j, p, clock, config.tolerance))
                .or_else(|| {
                    base.jobs
                        .get(&old_row.job)
                        .and_then(|j| too_noisy(j, p, clock, config.tolerance))
                        .map(|why| format!("baseline {why}"))
                });
            let status = if noisy.is_some() {
                GateStatus::Inconclusive
            } else {
                three_way(old.median, new.lo, new.hi, config.tolerance)
            };
            let word = match status {
                GateStatus::Pass => "PASS",
                GateStatus::Fail => "FAIL",
                GateStatus::Inconclusive => "INCONCLUSIVE",
            };
            let mut message = format!(
                "{word} {id} {name} {p} ({}): {:.4} (CI {:.4}–{:.4}) vs {:.4} (CI {:.4}–{:.4}) in {base_name}; band {:.4}–{:.4}",
                clock_name(clock),
                new.median,
                new.lo,
                new.hi,
                old.median,
                old.lo,
                old.hi,
                band[0],
                band[1]
            );
            if let Some(n) = noisy {
                let _ = write!(message, "; {n}");
            }
            verdicts.push(GateVerdict {
                row: name.clone(),
                phase: p.clone(),
                clock,
                status,
                old: gr(old),
                new: gr(new),
                band,
                message,
            });
        }
    }
    for name in base.rows.keys() {
        if !cell.rows.contains_key(name) && !cell.jobs.contains_key(&base.rows[name].job) {
            notices.push(format!(
                "row {name} was not run this time (no job {})",
                base.rows[name].job
            ));
        }
    }
    GateCell {
        cell: id.clone(),
        baseline: Some(base_name.to_owned()),
        failures,
        notices,
        verdicts,
    }
}

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

/// Escapes a workflow-command message (`%`, CR, LF).
pub fn escape_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// Escapes a workflow-command property (also `:` and `,`).
pub fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
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
                escape_property(title),
                escape_data(msg)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_way_rule() {
        assert_eq!(three_way(1.0, 0.995, 1.005, 0.02), GateStatus::Pass);
        assert_eq!(three_way(1.0, 1.025, 1.04, 0.02), GateStatus::Fail);
        assert_eq!(three_way(1.0, 0.90, 0.97, 0.02), GateStatus::Fail);
        assert_eq!(three_way(1.0, 1.01, 1.03, 0.02), GateStatus::Inconclusive);
        assert_eq!(three_way(2.0, 1.97, 2.03, 0.02), GateStatus::Pass);
    }

    #[test]
    fn workflow_command_escaping() {
        assert_eq!(escape_data("50% off\nnext"), "50%25 off%0Anext");
        assert_eq!(escape_property("a: b, c"), "a%3A b%2C c");
    }
}
