//! The samples are the record: every figure a judgement reads is computed again from the
//! per-round samples with the functions the job used ([`crate::figures`]), and every answer
//! is held against the configuration's `[expect]`. A stated figure that disagrees beyond
//! rounding is named; the recomputed one replaces it, so a verdict is never taken from a
//! figure the artifact merely states.
//!
//! "Beyond rounding" is what writing can explain: a ratio is written to 4 decimals and a time
//! to 0.1 µs, and the samples to whole microseconds, which moves a per-round ratio by at most
//! `1 µs / t` relative for the shortest time `t` it divides (a file written before jobs
//! computed from the samples as written). Nothing a forgery needs fits in that.

use std::collections::BTreeMap;

use cell_schema::{
    CellResult, Clock, Contention, JobResult, JobSummary, Phase, PhaseResult, Protocol, Role,
    RowName, RowResult, Run, Status, Stopped, Tooth, Verdict,
};

use crate::figures::{self, phase_figures};

mod agree;
pub mod suites;
use crate::{GateConfig, WorkloadJob, tooth_ok, workload_verdict};
use agree::{
    close_ci, close_contention, close_opt, quantum, ratios, seen, show_ci, show_contention,
    show_opt, stats,
};

/// A value with its figures recomputed, and every stated figure that disagreed.
#[derive(Clone, Debug)]
pub struct Recomputed<T> {
    /// The value, every figure as its samples give it.
    pub value: T,
    /// One line per stated figure that disagreed with its samples (empty: none did).
    pub disagreements: Vec<String>,
    /// What was judged otherwise than the file was written, for a reason that is no
    /// disagreement: the configuration changed since (another `CI_LEVEL`).
    pub notes: Vec<String>,
}

/// How a job's verdict names a stated figure that disagreed with its samples when it was
/// collected: the record keeps the samples' figures, and this reason keeps the failure.
pub const DISAGREES: &str =
    "its stated figures disagree with its samples (judged on the samples): ";

/// The reasons of `verdict` that record a disagreement found when the job was collected.
pub fn collected_disagreements(verdict: &Verdict) -> impl Iterator<Item = &str> {
    verdict
        .reasons
        .iter()
        .filter(|r| r.starts_with(DISAGREES))
        .map(String::as_str)
}

/// At most this many disagreements are named one by one; the rest are counted.
const NAMED: usize = 12;

/// The lines a failure names: the first [`NAMED`] disagreements, then how many more.
pub fn summarize(disagreements: &[String]) -> Vec<String> {
    let mut out: Vec<String> = disagreements.iter().take(NAMED).cloned().collect();
    if disagreements.len() > NAMED {
        out.push(format!(
            "and {} more disagreement(s)",
            disagreements.len() - NAMED
        ));
    }
    out
}

/// A job's result as its samples give it: every row's statistics, ratios, contention and
/// answers, the tooth, the job's contention and its verdict. `CI_LEVEL` is the
/// configuration's, and the job's protocol must say the same. A job whose stated figures
/// disagree is failed, naming them: what else it states cannot be believed either.
pub fn job(job: &JobResult, config: &GateConfig) -> Recomputed<JobResult> {
    let mut value = job.clone();
    let mut out = Vec::new();
    let level = config.settings.ci_level;
    if !same_setting(value.protocol.ci_level, level) {
        out.push(format!(
            "protocol: ci_level {} stated, CI_LEVEL is {level}",
            value.protocol.ci_level
        ));
        value.protocol.ci_level = level;
    }
    let JobResult {
        protocol,
        rows,
        tooth,
        contention,
        verdict,
        cell,
        ..
    } = &mut value;
    let rows: Vec<(RowName, &mut RowResult, bool)> = rows
        .iter_mut()
        .map(|(n, r)| (n.clone(), r, false))
        .collect();
    let mut view = JobView {
        what: String::new(),
        notes: Vec::new(),
        own_config: true,
        protocol,
        arch: &cell.arch,
        rows,
        tooth,
        contention,
        verdict,
    };
    view.recompute(config, level, &mut out);
    if !out.is_empty() {
        let mut reasons: Vec<String> = summarize(&out)
            .into_iter()
            .map(|d| format!("{DISAGREES}{d}"))
            .collect();
        if value.verdict.status == Status::Failed {
            reasons.append(&mut value.verdict.reasons);
        }
        value.verdict.status = Status::Failed;
        value.verdict.reasons = reasons;
    }
    Recomputed {
        value,
        disagreements: out,
        notes: Vec::new(),
    }
}

/// A merged cell as its samples give it: its workload ([`workload_cell`]) and its http and
/// soak servers ([`suites`]), with today's configuration.
pub fn cell(cell: &CellResult, config: &GateConfig) -> Recomputed<CellResult> {
    let mut r = workload_cell(cell, config);
    suites::cell(&mut r.value, config, &mut r.disagreements, &mut r.notes);
    r
}

/// A merged cell's workload as its samples give it: every job's reference, control, rows and
/// tooth rows, its tooth, contention and verdict, at `CI_LEVEL`. Its thresholds and verdicts are the
/// configuration's now, which may have changed since it was written: those are replaced, not
/// compared, and so are intervals a job computed at another `CI_LEVEL` (a note says so). An
/// imported cell has no samples: it is returned as it is (its figures are the other tool's,
/// and the gate says so).
pub fn workload_cell(cell: &CellResult, config: &GateConfig) -> Recomputed<CellResult> {
    let mut value = cell.clone();
    let mut out = Vec::new();
    let mut notes = Vec::new();
    let level = config.settings.ci_level;
    let CellResult {
        cell: info,
        jobs,
        rows,
        ..
    } = &mut value;
    let mut by_job: BTreeMap<cell_schema::ToolchainName, Vec<(RowName, &mut RowResult)>> =
        BTreeMap::new();
    for (name, r) in rows.iter_mut() {
        by_job
            .entry(r.job.clone())
            .or_default()
            .push((name.clone(), &mut r.row));
    }
    for (tc, j) in jobs.iter_mut() {
        if !same_setting(j.protocol.ci_level, level) {
            notes.push(format!(
                "job {tc} computed its intervals at CI_LEVEL {}: they are recomputed at {level}",
                j.protocol.ci_level
            ));
        }
        let theirs = by_job.remove(tc).unwrap_or_default();
        let mut view = JobView::of_summary(format!("job {tc}: "), &info.arch, j, theirs);
        view.recompute(config, level, &mut out);
        notes.append(&mut view.notes);
    }
    // Rows of a job the cell has no summary of: no reference to divide by.
    for (tc, rows) in by_job {
        for (name, row) in rows {
            let mut phases = std::mem::take(&mut row.phases);
            for (p, pr) in &mut phases {
                if pr.ratio.is_some() {
                    out.push(format!(
                        "row {name} on {p}: a ratio stated, but its job {tc} has no reference in the cell"
                    ));
                    pr.ratio = None;
                }
            }
            row.phases = phases;
        }
    }
    Recomputed {
        value,
        disagreements: out,
        notes,
    }
}

/// One job's timed rows, each once, with what the job states about them.
struct JobView<'a> {
    /// `job <tc>: ` in a cell, empty in a job's own result.
    what: String,
    /// Notes of what could not be recomputed (no disagreement).
    notes: Vec<String>,
    /// The configuration is the one the job ran with (collect, at the run's commit): its
    /// thresholds, `CI_LEVEL` and verdict must be what the job states. Else (a gate reading
    /// history) they are replaced by today's, and only the figures are compared.
    own_config: bool,
    protocol: &'a mut Protocol,
    arch: &'a str,
    /// Every row the job timed; `true` marks a second statement of a row already listed (the
    /// reference, which a cell holds under its job and among its rows).
    rows: Vec<(RowName, &'a mut RowResult, bool)>,
    tooth: &'a mut Option<Tooth>,
    contention: &'a mut Option<Contention>,
    verdict: &'a mut Verdict,
}

impl<'a> JobView<'a> {
    /// A cell's job: its reference and control, its rows among the cell's, its tooth rows.
    fn of_summary(
        what: String,
        arch: &'a str,
        j: &'a mut JobSummary,
        theirs: Vec<(RowName, &'a mut RowResult)>,
    ) -> Self {
        let JobSummary {
            protocol,
            reference,
            control,
            tooth_rows,
            previous_rows,
            tooth,
            contention,
            verdict,
            ..
        } = j;
        let mut rows = vec![(protocol.reference.clone(), reference, false)];
        if let Some(c) = control.as_mut() {
            rows.push((protocol.control.clone(), c, false));
        }
        for (name, row) in theirs {
            let again = name == protocol.reference;
            rows.push((name, row, again));
        }
        for (name, row) in tooth_rows.iter_mut().chain(previous_rows.iter_mut()) {
            rows.push((name.clone(), row, false));
        }
        Self {
            what,
            notes: Vec::new(),
            own_config: false,
            protocol,
            arch,
            rows,
            tooth,
            contention,
            verdict,
        }
    }

    fn recompute(&mut self, config: &GateConfig, level: f64, out: &mut Vec<String>) {
        let reference = self.reference_runs();
        // The metrics the job wrote: every required one, and each one a verdict of it reads.
        let metrics = Clock::written(
            std::iter::once(self.protocol.default_clock)
                .chain(self.rows.iter().map(|(_, r, _)| r.verdict_clock)),
        );
        let mut contentions = Vec::new();
        for (name, row, again) in &mut self.rows {
            let is_reference = *name == self.protocol.reference;
            let theirs = (!is_reference).then_some(&reference);
            let fig = Figures {
                mode: self.protocol.mode,
                level,
                metrics: metrics.clone(),
                intervals: self.own_config || same_setting(self.protocol.ci_level, level),
            };
            fig.row(&self.what, name, row, theirs, &config.expect, out);
            if !*again {
                contentions.extend(
                    row.phases
                        .values()
                        .flat_map(|p| figures::contentions(&p.runs)),
                );
            }
        }
        self.recompute_tooth(config, level, out);
        let c = figures::job_contention(&contentions, config.settings.contention_max);
        if close_contention(self.contention.as_ref(), c.as_ref(), self.own_config) {
            // Within rounding: the figures as written, judged by today's threshold.
            if let (Some(stated), Some(c)) = (self.contention.as_mut(), c) {
                stated.threshold = c.threshold;
                stated.contended = crate::rules::contended(stated.median, c.threshold);
            }
        } else {
            out.push(format!(
                "{}contention: {} stated, the samples give {}",
                self.what,
                show_contention(self.contention.as_ref()),
                show_contention(c.as_ref())
            ));
            *self.contention = c;
        }
        self.recompute_verdict(config, out);
    }

    /// The reference's runs per phase, as the rows divide by them.
    fn reference_runs(&self) -> BTreeMap<Phase, Vec<Run>> {
        self.rows
            .iter()
            .find(|(n, _, _)| *n == self.protocol.reference)
            .map(|(_, r, _)| {
                r.phases
                    .iter()
                    .map(|(p, pr)| (p.clone(), pr.runs.clone()))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The tooth's slow or fast row is not in the record at all, though a ratio is stated.
    fn tooth_unrecorded(&self, slow: &RowName, fast: &RowName) -> bool {
        let stated = self.tooth.as_ref().is_some_and(|t| t.ratio.is_some());
        let has = |r: &RowName| self.rows.iter().any(|(n, _, _)| n == r);
        stated && (!has(slow) || (fast != &self.protocol.reference && !has(fast)))
    }

    fn runs_of(&self, row: &RowName, phase: &Phase) -> Option<&[Run]> {
        self.rows
            .iter()
            .find(|(n, _, again)| n == row && !again)
            .and_then(|(_, r, _)| r.phases.get(phase))
            .map(|p| p.runs.as_slice())
    }

    /// The tooth: its rows and phase are the configuration's, its clock the job's default,
    /// its ratio the slow row's ratio over the fast row's in the same rounds, judged by the
    /// repository's floor.
    fn recompute_tooth(&mut self, config: &GateConfig, level: f64, out: &mut Vec<String>) {
        let (slow, fast, phase) = &config.tooth;
        let what = &self.what;
        let t = match self.tooth.clone() {
            Some(t) => t,
            // Every job times the tooth: one stated as none is taken from the samples.
            None if self.own_config => {
                out.push(format!(
                    "{what}tooth: none stated, the configuration's is {slow}/{fast} on {phase}"
                ));
                Tooth {
                    slow: slow.clone(),
                    fast: fast.clone(),
                    phase: phase.clone(),
                    clock: self.protocol.default_clock,
                    floor: config.floor(self.arch),
                    ratio: None,
                    ok: false,
                }
            }
            None => return,
        };
        if (&t.slow, &t.fast, &t.phase) != (slow, fast, phase) {
            out.push(format!(
                "{what}tooth: {}/{} on {} stated, the configuration's is {slow}/{fast} on {phase}",
                t.slow, t.fast, t.phase
            ));
        }
        if t.clock != self.protocol.default_clock {
            out.push(format!(
                "{what}tooth: read on {} stated, the job's clock is {}",
                t.clock.name(),
                self.protocol.default_clock.name()
            ));
        }
        let clock = self.protocol.default_clock;
        if !self.own_config && self.tooth_unrecorded(slow, fast) {
            // A cell merged before the tooth's rows were kept: its ratio cannot be recomputed,
            // only judged again by today's floor.
            self.notes.push(format!(
                "{what}tooth {slow}/{fast}: its ratio is as stated, not recomputed: the cell was merged before the tooth's rows were kept with their samples"
            ));
            let ok = tooth_ok(t.ratio.as_ref(), self.arch, config);
            *self.tooth = Some(Tooth {
                floor: config.floor(self.arch),
                ok,
                ..t
            });
            return;
        }
        let reference = self.runs_of(&self.protocol.reference.clone(), phase);
        let ratio = match (self.runs_of(slow, phase), reference) {
            (Some(s), Some(r)) => {
                let f = (fast != &self.protocol.reference)
                    .then(|| self.runs_of(fast, phase))
                    .flatten();
                if fast != &self.protocol.reference && f.is_none() {
                    None
                } else {
                    figures::ratio_ci(
                        &figures::ratio_of_ratios(s, f, r, clock, self.protocol.mode),
                        level,
                    )
                }
            }
            _ => None,
        };
        let floor = config.floor(self.arch);
        let ok = tooth_ok(ratio.as_ref(), self.arch, config);
        // Two ratios, each of two times written to the microsecond.
        let slack = 2.0
            * self.slack_of(
                &[slow, fast, &self.protocol.reference.clone()],
                phase,
                clock,
            );
        let intervals = self.own_config || same_setting(self.protocol.ci_level, level);
        let thresholds = self.own_config && (t.ok != ok || !same_setting(t.floor, floor));
        let agree = close_ci(t.ratio.as_ref(), ratio.as_ref(), slack, intervals);
        if !agree || thresholds {
            out.push(format!(
                "{what}tooth {slow}/{fast} on {phase}: {} ({}) stated, the samples give {} ({}) against the floor {floor}",
                show_ci(t.ratio.as_ref()),
                seen(t.ok),
                show_ci(ratio.as_ref()),
                seen(ok)
            ));
        }
        // Within rounding the ratio stays as written; the floor is always the configuration's.
        let ratio = if agree && intervals { t.ratio } else { ratio };
        let ok = tooth_ok(ratio.as_ref(), self.arch, config);
        *self.tooth = Some(Tooth {
            slow: slow.clone(),
            fast: fast.clone(),
            phase: phase.clone(),
            clock,
            floor,
            ratio,
            ok,
        });
    }

    /// The relative slack of the rows' runs on `phase`: 1 µs over each one's shortest time.
    fn slack_of(&self, rows: &[&RowName], phase: &Phase, clock: Clock) -> f64 {
        rows.iter()
            .filter_map(|r| self.runs_of(r, phase))
            .map(|runs| quantum(runs, clock))
            .sum()
    }

    fn recompute_verdict(&mut self, config: &GateConfig, out: &mut Vec<String>) {
        let mut timed: Vec<(&RowName, &RowResult)> = self
            .rows
            .iter()
            .filter(|(_, _, again)| !again)
            .map(|(n, r, _)| (n, &**r))
            .collect();
        // The order a job times them in: the reference, the control, its rows, the tooth.
        timed.sort_by_key(|(n, r)| (role_order(r.role), (*n).clone()));
        let reference_timed_out = (self.protocol.stopped == Stopped::ReferenceTimedOut)
            .then_some(&self.protocol.reference);
        let mut v = workload_verdict(
            &WorkloadJob {
                rows: &timed,
                control: &self.protocol.control,
                tooth: self.tooth.as_ref(),
                contention: self.contention.as_ref(),
                reference_timed_out,
                default_clock: self.protocol.default_clock,
                arch: self.arch,
                mode: self.protocol.mode,
            },
            config,
        );
        // A disagreement found at collect stays a failure of the job.
        let carried: Vec<String> = collected_disagreements(self.verdict)
            .map(str::to_owned)
            .collect();
        if !carried.is_empty() {
            let mut reasons = carried;
            if v.status == Status::Failed {
                reasons.append(&mut v.reasons);
            }
            v.status = Status::Failed;
            v.reasons = reasons;
        }
        if same_verdict(self.verdict, &v) {
            // What each phase resolved is a figure of the samples, never the file's word.
            self.verdict.resolution = v.resolution;
            return;
        }
        if self.own_config {
            out.push(format!(
                "{}verdict: {} stated, the samples give {}{}",
                self.what,
                self.verdict.status.as_str(),
                v.status.as_str(),
                v.reasons
                    .first()
                    .map_or(String::new(), |r| format!(" ({r})"))
            ));
        }
        *self.verdict = v;
    }
}

/// A setting as a job copied it from versions.env: the same decimal, so the same float.
fn same_setting(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12
}

fn role_order(role: Role) -> u8 {
    match role {
        Role::Reference => 0,
        Role::Control => 1,
        Role::Row => 2,
        Role::Tooth => 3,
        Role::Previous => 4,
    }
}

/// Two verdicts that say the same: status, and the same reasons and phases in any order (a
/// job lists them in the order it timed its rows, which a file does not keep).
fn same_verdict(a: &Verdict, b: &Verdict) -> bool {
    let set = |v: &[String]| {
        let mut v = v.to_vec();
        v.sort();
        v
    };
    let phases = |v: &[Phase]| {
        let mut v = v.to_vec();
        v.sort();
        v
    };
    // Files written before the phase lists were recorded have none.
    let listed = !a.judged.is_empty() || !a.inconclusive.is_empty();
    a.status == b.status
        && set(&a.reasons) == set(&b.reasons)
        && (!listed
            || (phases(&a.judged) == phases(&b.judged)
                && phases(&a.inconclusive) == phases(&b.inconclusive)))
}

/// How one job's rows are recomputed.
struct Figures {
    mode: cell_schema::ProtocolMode,
    level: f64,
    /// The metrics recomputed ([`Clock::written`]).
    metrics: Vec<Clock>,
    /// Compare the intervals' bounds and levels (not when the job computed them at another
    /// `CI_LEVEL` than the one they are recomputed at).
    intervals: bool,
}

impl Figures {
    /// Every phase of `row`: its figures from its runs (and the reference's, unless it is the
    /// reference), its answer against `[expect]`.
    fn row(
        &self,
        what: &str,
        name: &RowName,
        row: &mut RowResult,
        reference: Option<&BTreeMap<Phase, Vec<Run>>>,
        expect: &BTreeMap<Phase, String>,
        out: &mut Vec<String>,
    ) {
        for (p, pr) in &mut row.phases {
            let at = format!("{what}row {name} on {p}");
            let theirs = reference.map(|r| r.get(p).map_or(&[][..], Vec::as_slice));
            let f = phase_figures(&pr.runs, theirs, self.mode, self.level, &self.metrics);
            // A ratio divides two times, each written to the microsecond.
            let slack = |c: Clock| quantum(&pr.runs, c) + theirs.map_or(0.0, |r| quantum(r, c));
            // A stated figure within rounding of its samples' stays as written (a file of an
            // older cell computed from unrounded times); any other is replaced.
            if !stats(&at, pr.stats.as_ref(), f.stats.as_ref(), out) {
                pr.stats = f.stats;
            }
            let agree = ratios(
                &at,
                pr.ratio.as_ref(),
                f.ratio.as_ref(),
                slack,
                self.intervals,
                out,
            );
            if !agree || !self.intervals {
                pr.ratio = f.ratio;
            }
            let wall_cpu = quantum(&pr.runs, Clock::Wall) + quantum(&pr.runs, Clock::Cpu);
            if !close_opt(pr.contention, f.contention, 0.5e-4 + wall_cpu) {
                out.push(format!(
                    "{at}: contention {} stated, the samples give {}",
                    show_opt(pr.contention),
                    show_opt(f.contention)
                ));
                pr.contention = f.contention;
            }
            answer(&at, p, pr, f.all_ok, expect, out);
        }
    }
}

/// The answer: right only when every run was, and compared with the configuration's.
fn answer(
    at: &str,
    p: &Phase,
    pr: &mut PhaseResult,
    all_ok: bool,
    expect: &BTreeMap<Phase, String>,
    out: &mut Vec<String>,
) {
    if pr.answer_ok != all_ok {
        out.push(format!(
            "{at}: answer_ok {} stated, but {} of its runs say so",
            pr.answer_ok,
            if all_ok { "every one" } else { "not every one" }
        ));
        pr.answer_ok = all_ok;
        if !all_ok && pr.wrong.is_none() {
            pr.wrong = Some("a run's answer was wrong (its samples say so)".into());
        }
    }
    match expect.get(p) {
        Some(want) if *want != pr.expected => {
            out.push(format!(
                "{at}: compared with an expected answer of {} bytes that is not [expect]'s {p} ({} bytes)",
                pr.expected.len(),
                want.len()
            ));
            pr.answer_ok = false;
            pr.wrong = Some(format!(
                "compared with another answer than [expect]'s {p}: the run cannot vouch for it"
            ));
        }
        Some(_) => {}
        None => {
            out.push(format!("{at}: [expect] has no phase {p}"));
            pr.answer_ok = false;
            pr.wrong = Some(format!("[expect] has no phase {p}"));
        }
    }
}
