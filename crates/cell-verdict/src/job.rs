//! What a job says about itself, `ok`, `noisy` or `failed`, for each suite; and the per-run
//! rules a suite job applies while it measures (contamination, drift).

use std::collections::BTreeMap;

use cell_schema::{
    Clock, Contention, Drift, HttpRun, HttpServerResult, HttpSettings, Phase, ProtocolMode,
    RatioCi, Role, RowName, RowResult, RssFit, ServerName, SoakConfig, SoakServerResult, Status,
    Tooth, Verdict,
};

use crate::GateConfig;
use crate::rules::ToothMissed;

/// What a workload job measured, as its verdict reads it.
#[derive(Clone, Copy, Debug)]
pub struct WorkloadJob<'a> {
    /// Every timed row in the order it was timed (reference, control, rows, tooth rows).
    pub rows: &'a [(&'a RowName, &'a RowResult)],
    /// The control row's name.
    pub control: &'a RowName,
    /// The tooth, when the job could build its rows.
    pub tooth: Option<&'a Tooth>,
    /// Contention over the job.
    pub contention: Option<&'a Contention>,
    /// The reference, when it hit the per-process timeout.
    pub reference_timed_out: Option<&'a RowName>,
    /// The clock verdicts read unless a row sets its own.
    pub default_clock: Clock,
    /// The cell's architecture (the tooth floor is per architecture).
    pub arch: &'a str,
    /// How its rows were paired with the reference (the control's per-round ratios are read
    /// as the rows' are).
    pub mode: ProtocolMode,
}

/// A workload job's verdict: `failed` on a wrong answer, a reference that timed out or a
/// tooth below its floor. The A/A control is read per phase: a phase whose control is biased
/// (its interval misses 1.0) on a clock some row's verdict reads is inconclusive on its own,
/// the other phases are judged (`judged`, `inconclusive`); the job is `noisy` only when no
/// phase could be judged, else `ok`. Each phase carries its resolution: the widest interval
/// of its rows. Contention is noted, never a verdict.
pub fn workload_verdict(job: &WorkloadJob<'_>, config: &GateConfig) -> Verdict {
    let mut failed = wrong_answers(job.rows);
    if let Some(r) = job.reference_timed_out {
        failed.push(format!("the reference `{r}` hit RUN_TIMEOUT_S"));
    }
    if let Some(t) = job.tooth {
        let floor = config.floor(job.arch);
        if let Some(m) = ToothMissed::check(
            (&t.slow, &t.fast, t.phase.as_str()),
            t.ratio.as_ref(),
            floor,
            job.arch,
        ) {
            failed.push(m.job_reason());
        }
    }
    let phases = crate::control::by_phase(
        job.rows,
        job.control,
        crate::control::Clocks {
            default: job.default_clock,
            also: None,
        },
        job.mode,
        config.settings.ci_level,
    );
    let (judged, inconclusive): (Vec<_>, Vec<_>) = phases.iter().partition(|p| p.judged());
    let status = if !failed.is_empty() {
        Status::Failed
    } else if judged.is_empty() && !inconclusive.is_empty() {
        Status::Noisy
    } else {
        Status::Ok
    };
    // A failed job's reasons are its failures alone: `cell collect` reads each as one.
    let mut reasons = failed;
    if status != Status::Failed {
        reasons.extend(inconclusive.iter().flat_map(|p| p.reasons.iter().cloned()));
    }
    if let Some(c) = job
        .contention
        .filter(|c| crate::rules::contended(c.median, config.settings.contention_max))
    {
        reasons.push(format!(
            "contended: median wall/cpu {:.4} exceeds {}",
            c.median, config.settings.contention_max
        ));
    }
    Verdict {
        status,
        reasons,
        judged: judged.iter().map(|p| p.phase.clone()).collect(),
        inconclusive: inconclusive.iter().map(|p| p.phase.clone()).collect(),
        resolution: resolution(job.rows),
    }
}

/// Per phase, the widest relative half-width of a row's ratio interval on its verdict clock
/// (the control's and the reference's aside): what the job's ratios there are known to.
fn resolution(rows: &[(&RowName, &RowResult)]) -> BTreeMap<Phase, f64> {
    let mut out: BTreeMap<Phase, f64> = BTreeMap::new();
    for (_, r) in rows.iter().filter(|(_, r)| r.role == Role::Row) {
        for (p, pr) in &r.phases {
            if let Some(ci) = pr.ratio.as_ref().and_then(|x| x.on(r.verdict_clock)) {
                let w = cell_schema::round_ratio(ci.resolution());
                let e = out.entry(p.clone()).or_insert(w);
                *e = e.max(w);
            }
        }
    }
    out
}

fn wrong_answers(rows: &[(&RowName, &RowResult)]) -> Vec<String> {
    let mut out = Vec::new();
    // The previous release's builds are not the job's: a wrong answer of one leaves its
    // same-job verdict without a call (the gate says so), never fails the job.
    for (name, row) in rows.iter().filter(|(_, r)| r.role != Role::Previous) {
        for (p, pr) in &row.phases {
            if !pr.answer_ok {
                out.push(format!(
                    "wrong answer: row `{name}` on phase `{p}`: {}",
                    pr.wrong.clone().unwrap_or_default()
                ));
            }
        }
    }
    out
}

/// Whether a measured tooth ratio is at or above the floor of the cell's architecture.
pub fn tooth_ok(ratio: Option<&RatioCi>, arch: &str, config: &GateConfig) -> bool {
    crate::rules::tooth_seen(ratio, config.floor(arch))
}

/// An http job's verdict: `failed` when the server failed (build, check, startup, death),
/// `noisy` when every run under some tool was contaminated; errors and non-2xx are noted.
pub fn http_verdict(name: &ServerName, r: &HttpServerResult, settings: &HttpSettings) -> Verdict {
    if let Some(e) = &r.error {
        return Verdict::new(Status::Failed, vec![format!("server {name}: {e}")]);
    }
    // A workload answered wrongly fails the job; the server's other workloads were measured.
    let wrong: Vec<String> = r
        .workloads
        .values()
        .filter_map(|w| w.error.as_ref().map(|e| format!("server {name}: {e}")))
        .collect();
    if !wrong.is_empty() {
        return Verdict::new(Status::Failed, wrong);
    }
    let mut reasons: Vec<String> = r
        .not_served
        .iter()
        .map(|w| format!("server {name} does not serve {w}: not measured, not failed"))
        .collect();
    reasons.extend(
        r.shapes_left_out
            .iter()
            .map(|(shape, why)| format!("server {name}: shape {shape} left out: {why}")),
    );
    let measured = r.measured(settings);
    if measured.is_empty() {
        reasons.push(format!("server {name}: nothing measured in this session"));
    }
    let mut status = Status::Ok;
    for (combo, t) in measured {
        if t.clean_runs == 0 {
            status = Status::Noisy;
            reasons.push(format!(
                "server {name}, {combo}: every run contaminated ({}), figures are from all runs",
                t.runs
                    .first()
                    .map(|x| x.contaminated.join(", "))
                    .unwrap_or_default()
            ));
        }
        if t.errors > 0 || t.non_2xx > 0 {
            reasons.push(format!(
                "server {name}, {combo}: {} errors and {} non-2xx responses over {} runs",
                t.errors,
                t.non_2xx,
                t.runs.len()
            ));
        }
    }
    Verdict::new(status, reasons)
}

/// The limits of one http run's contamination rule (`HTTP_LOAD_CPU_MAX`,
/// `HTTP_OTHER_CPU_MAX`).
#[derive(Clone, Copy, Debug)]
pub struct Contamination {
    /// Load generator CPU share above which a run is contaminated.
    pub load_cpu_max: f64,
    /// Machine CPU share charged to neither side above which a run is contaminated.
    pub other_cpu_max: f64,
}

impl Contamination {
    /// The rule as `versions.env` sets it.
    pub fn of_settings(s: &cell_model::Settings) -> Self {
        Self {
            load_cpu_max: s.http_load_cpu_max,
            other_cpu_max: s.http_other_cpu_max,
        }
    }

    /// Why `run` does not count, read from the CPU shares it records as written (4 decimals),
    /// so a file read back gives the job's own answer.
    pub fn of_run(&self, run: &HttpRun) -> Vec<String> {
        self.reasons(run.load_cpu_share, run.other_cpu_share)
    }

    /// Why a run with these CPU shares does not count (empty: it counts).
    pub fn reasons(&self, load_cpu_share: f64, other_cpu_share: f64) -> Vec<String> {
        let mut out = Vec::new();
        if load_cpu_share > self.load_cpu_max {
            out.push(format!(
                "load generator at {:.0}% of its CPU (limit {:.0}%)",
                load_cpu_share * 100.0,
                self.load_cpu_max * 100.0
            ));
        }
        if other_cpu_share > self.other_cpu_max {
            out.push(format!(
                "{:.1}% of machine CPU went to neither server nor load generator (limit {:.0}%)",
                other_cpu_share * 100.0,
                self.other_cpu_max * 100.0
            ));
        }
        out
    }
}

/// The drift rule: drifted only when the fit over the samples and the fit over the minima
/// both move by at least the share threshold with R² at or above its threshold (a sawtooth
/// allocator moves the samples, not the minima); unknown when either cannot be fitted.
pub fn drift(fit: Option<&RssFit>, minima: Option<&RssFit>, settings: &SoakConfig) -> Drift {
    let trips = |f: &RssFit| f.projected_share >= settings.drift_share && f.r2 >= settings.min_r2;
    match (fit, minima) {
        (Some(f), Some(m)) if trips(f) && trips(m) => Drift::Drifted,
        (Some(_), Some(_)) => Drift::Flat,
        _ => Drift::Unknown,
    }
}

/// A soak job's verdict: `failed` when the server failed, or drifted with `fail_on_drift`;
/// `noisy` when too few samples fell in the fit window to call it.
pub fn soak_verdict(name: &ServerName, r: &SoakServerResult, settings: &SoakConfig) -> Verdict {
    if let Some(e) = &r.error {
        return Verdict::new(Status::Failed, vec![format!("server {name}: {e}")]);
    }
    match (r.verdict, &r.fit) {
        (Drift::Drifted, Some(f)) => Verdict::new(
            if settings.fail_on_drift {
                Status::Failed
            } else {
                Status::Ok
            },
            vec![format!(
                "server {name} drifted: RSS {:+.1} KiB/min (R² {:.3}), {:+.1}% of the window mean over the window",
                f.slope_kib_per_min,
                f.r2,
                f.projected_share * 100.0
            )],
        ),
        (Drift::Unknown, _) => Verdict::new(
            Status::Noisy,
            vec![format!(
                "server {name}: too few samples in the fit window to call flat or drifted"
            )],
        ),
        _ => Verdict::new(Status::Ok, Vec::new()),
    }
}
