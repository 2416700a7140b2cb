//! The suites' samples are their record too. An http job's runs give its per-run CPU per 1,000
//! responses and contamination, every combination's medians and the job's verdict; a soak's
//! samples give its fits, drift, peak and CPU per 1,000 requests; each is computed again with
//! the job's own functions ([`crate::suite_figures`]). The job computes from the values as it
//! writes them, so an honest file recomputes to the bit and a figure is compared exactly; two
//! of a file written before that are allowed their rounding (a run's CPU per 1k divided the
//! unrounded CPU time, its contamination read the unrounded shares) and stay as written.

use std::collections::BTreeSet;

use cell_schema::{
    CellResult, Combo, Drift, HttpJobResult, HttpRun, HttpServerResult, HttpSettings,
    HttpToolResult, LEGACY_WORKLOAD, RssFit, ServerName, SoakConfig, SoakJobResult,
    SoakServerResult, SoakSettings, Status, Verdict,
};

use super::{DISAGREES, Recomputed, same_setting, same_verdict, summarize};
use crate::{Contamination, GateConfig, http_verdict, soak_verdict, suite_figures};

/// An http job as its runs give it: every run's CPU per 1k and contamination (by
/// `HTTP_LOAD_CPU_MAX`, `HTTP_OTHER_CPU_MAX`), every combination's figures, the verdict. A job
/// whose stated figures disagree is failed, naming each by server, combination and figure.
pub fn http_job(job: &HttpJobResult, config: &GateConfig) -> Recomputed<HttpJobResult> {
    let mut value = job.clone();
    let mut s = Suites::new(config, true);
    let HttpJobResult {
        servers, settings, ..
    } = &mut value;
    for (name, r) in servers.iter_mut() {
        s.http_server(name, r, settings);
    }
    let v = joined(servers.iter().map(|(n, r)| http_verdict(n, r, settings)));
    s.finish(value, |j| &mut j.verdict, v)
}

/// A soak job as its samples give it: each server's fits, drift (by the configuration's
/// `[soak]` rule over the job's window), peak and CPU per 1k, and the verdict.
pub fn soak_job(job: &SoakJobResult, config: &GateConfig) -> Recomputed<SoakJobResult> {
    let mut value = job.clone();
    let mut s = Suites::new(config, true);
    let SoakJobResult {
        servers, settings, ..
    } = &mut value;
    s.soak_rule_stated(&settings.config);
    let rule = soak_rule(config, &settings.config);
    for (name, r) in servers.iter_mut() {
        s.soak_server(name, r, settings);
    }
    let v = joined(servers.iter().map(|(n, r)| soak_verdict(n, r, &rule)));
    s.finish(value, |j| &mut j.verdict, v)
}

/// A merged cell's suites as their samples give them, with today's configuration: its
/// contamination rule and drift rule replace the stated ones (a note names a run whose
/// contamination they change), and only the figures are compared.
pub(super) fn cell(
    cell: &mut CellResult,
    config: &GateConfig,
    out: &mut Vec<String>,
    notes: &mut Vec<String>,
) {
    let mut s = Suites::new(config, false);
    for (name, srv) in &mut cell.http {
        s.http_server(name, &mut srv.result, &srv.settings);
    }
    for (name, srv) in &mut cell.soak {
        s.soak_server(name, &mut srv.result, &srv.settings);
    }
    out.append(&mut s.out);
    notes.append(&mut s.notes);
}

/// One combination of an http baseline as its runs give it (`at` names it), with today's
/// contamination rule.
pub fn baseline_tool(
    at: &str,
    t: &HttpToolResult,
    config: &GateConfig,
) -> Recomputed<HttpToolResult> {
    let mut value = t.clone();
    let mut s = Suites::new(config, false);
    s.http_tool(at, &mut value);
    Recomputed {
        value,
        disagreements: s.out,
        notes: s.notes,
    }
}

/// Every reason a suite job of `cell` was failed with at collect for disagreeing with its
/// samples, with the job: the merge keeps them among the cell's failures (`<job>: <reason>`).
pub fn collected(cell: &CellResult) -> Vec<(String, String)> {
    let jobs: BTreeSet<&str> = cell
        .http
        .values()
        .map(|s| s.job.as_str())
        .chain(cell.soak.values().map(|s| s.job.as_str()))
        .collect();
    let mut out = Vec::new();
    for line in &cell.failures {
        for job in &jobs {
            if let Some(reason) = line.strip_prefix(&format!("{job}: "))
                && reason.starts_with(DISAGREES)
            {
                out.push(((*job).to_owned(), reason.to_owned()));
            }
        }
    }
    out
}

/// The drift rule a soak is judged by: the configuration's `[soak]` thresholds (when it has
/// one) over the window the job ran (its duration and windows may be the command line's).
fn soak_rule(config: &GateConfig, job: &SoakConfig) -> SoakConfig {
    match &config.soak {
        Some(repo) => SoakConfig {
            drift_share: repo.drift_share,
            min_r2: repo.min_r2,
            fail_on_drift: repo.fail_on_drift,
            ..job.clone()
        },
        None => job.clone(),
    }
}

/// The verdicts of a job's servers as one: the worst status, every reason.
fn joined(verdicts: impl Iterator<Item = Verdict>) -> Verdict {
    let mut status = Status::Ok;
    let mut reasons = Vec::new();
    for v in verdicts {
        status = status.max(v.status);
        reasons.extend(v.reasons);
    }
    Verdict::new(status, reasons)
}

/// How one file's suites are recomputed.
struct Suites<'a> {
    config: &'a GateConfig,
    rule: Contamination,
    /// The configuration is the one the job ran with (collect, at the run's commit): the
    /// contamination, drift and verdict it states must be what that configuration gives. Else
    /// (a gate reading the record) they are replaced by today's, and only figures are compared.
    own: bool,
    out: Vec<String>,
    notes: Vec<String>,
}

impl<'a> Suites<'a> {
    fn new(config: &'a GateConfig, own: bool) -> Self {
        Self {
            config,
            rule: Contamination::of_settings(&config.settings),
            own,
            out: Vec::new(),
            notes: Vec::new(),
        }
    }

    /// The job's verdict as its recomputed figures give it, and a job whose stated figures
    /// disagreed failed by name: what else it states cannot be believed either.
    fn finish<T>(
        mut self,
        mut value: T,
        verdict: impl Fn(&mut T) -> &mut Verdict,
        mut v: Verdict,
    ) -> Recomputed<T> {
        let stated = verdict(&mut value);
        if !same_verdict(stated, &v) {
            self.out.push(format!(
                "verdict: {} stated, the samples give {}{}",
                stated.status.as_str(),
                v.status.as_str(),
                v.reasons
                    .first()
                    .map_or(String::new(), |r| format!(" ({r})"))
            ));
        }
        if !self.out.is_empty() {
            let mut reasons: Vec<String> = summarize(&self.out)
                .into_iter()
                .map(|d| format!("{DISAGREES}{d}"))
                .collect();
            if v.status == Status::Failed {
                reasons.append(&mut v.reasons);
            }
            v = Verdict::new(Status::Failed, reasons);
        }
        *stated = v;
        Recomputed {
            value,
            disagreements: self.out,
            notes: self.notes,
        }
    }

    /// Every combination of an http server, the older `tools` map as the legacy workload
    /// over the settings' one shape.
    fn http_server(
        &mut self,
        name: &ServerName,
        r: &mut HttpServerResult,
        settings: &HttpSettings,
    ) {
        let at = |c: Combo| format!("http server {name}, {c}");
        for (tool, t) in &mut r.tools {
            let c = Combo {
                workload: LEGACY_WORKLOAD.to_owned(),
                shape: settings.legacy_shape().to_owned(),
                tool: tool.clone(),
            };
            self.http_tool(&at(c), t);
        }
        for (w, wr) in &mut r.workloads {
            for (shape, tools) in &mut wr.shapes {
                for (tool, t) in tools {
                    let c = Combo {
                        workload: w.to_string(),
                        shape: shape.to_string(),
                        tool: tool.clone(),
                    };
                    self.http_tool(&at(c), t);
                }
            }
        }
    }

    /// One combination: its runs' own figures, its medians over the runs it states clean, then
    /// the runs' contamination; the figures written are the medians over the clean runs as
    /// the rule finds them.
    fn http_tool(&mut self, at: &str, t: &mut HttpToolResult) {
        for run in &mut t.runs {
            self.run_cpu(at, run);
        }
        let stated = suite_figures::http_tool(t.runs.clone());
        self.medians(at, t, &stated);
        for run in &mut t.runs {
            self.contamination(at, run);
        }
        *t = suite_figures::http_tool(std::mem::take(&mut t.runs));
    }

    fn run_cpu(&mut self, at: &str, run: &mut HttpRun) {
        let requests = run.load.requests;
        let got = suite_figures::run_cpu_ms_per_1k(run.server_cpu_s, requests);
        if same(run.cpu_ms_per_1k, got) {
            return;
        }
        let line = format!(
            "{at}: run {} (seq {}): cpu_ms_per_1k {} stated, its server CPU {} s over {requests} responses gives {got}",
            run.index, run.seq, run.cpu_ms_per_1k, run.server_cpu_s
        );
        // An older cell divided the unrounded CPU time: 0.05 µs over its responses, and the
        // two figures' 4 decimals.
        let slack = 1e-4 + 0.05 / requests.max(1) as f64 + 1e-9;
        if (run.cpu_ms_per_1k - got).abs() <= slack {
            self.notes.push(format!(
                "{line}: within the rounding of an older cell, kept"
            ));
        } else {
            self.out.push(line);
            run.cpu_ms_per_1k = got;
        }
    }

    /// The stated medians, sums and counts against the runs' own over the runs the file
    /// states clean.
    fn medians(&mut self, at: &str, t: &HttpToolResult, got: &HttpToolResult) {
        let range = |r: [f64; 2]| format!("{}–{}", r[0], r[1]);
        let pairs = [
            (
                "clean_runs",
                t.clean_runs == got.clean_runs,
                format!("{} of {} runs", t.clean_runs, t.runs.len()),
                got.clean_runs.to_string(),
            ),
            (
                "rps",
                same(t.rps, got.rps),
                t.rps.to_string(),
                got.rps.to_string(),
            ),
            (
                "rps_range",
                same(t.rps_range[0], got.rps_range[0]) && same(t.rps_range[1], got.rps_range[1]),
                range(t.rps_range),
                range(got.rps_range),
            ),
            (
                "p99_ms",
                same(t.p99_ms, got.p99_ms),
                t.p99_ms.to_string(),
                got.p99_ms.to_string(),
            ),
            (
                "cpu_ms_per_1k",
                same(t.cpu_ms_per_1k, got.cpu_ms_per_1k),
                t.cpu_ms_per_1k.to_string(),
                got.cpu_ms_per_1k.to_string(),
            ),
            (
                "peak_rss_kib",
                t.peak_rss_kib == got.peak_rss_kib,
                t.peak_rss_kib.to_string(),
                got.peak_rss_kib.to_string(),
            ),
            (
                "peak_pss_kib",
                t.peak_pss_kib == got.peak_pss_kib,
                format!("{:?}", t.peak_pss_kib),
                format!("{:?}", got.peak_pss_kib),
            ),
            (
                "errors",
                t.errors == got.errors,
                t.errors.to_string(),
                got.errors.to_string(),
            ),
            (
                "non_2xx",
                t.non_2xx == got.non_2xx,
                t.non_2xx.to_string(),
                got.non_2xx.to_string(),
            ),
        ];
        for (field, agree, stated, samples) in pairs {
            if !agree {
                self.out.push(format!(
                    "{at}: {field} {stated} stated, the samples give {samples}"
                ));
            }
        }
    }

    /// Whether the run counts, by the rule and the CPU shares it records.
    fn contamination(&mut self, at: &str, run: &mut HttpRun) {
        let got = self.rule.of_run(run);
        if got.is_empty() == run.contaminated.is_empty() {
            if !got.is_empty() {
                run.contaminated = got;
            }
            return;
        }
        let r = self.rule;
        let line = format!(
            "{at}: run {} (seq {}) {} stated, but its CPU shares {} (load generator {} of its CPU, HTTP_LOAD_CPU_MAX {}; other {} of the machine, HTTP_OTHER_CPU_MAX {})",
            run.index,
            run.seq,
            if run.contaminated.is_empty() {
                "clean".to_owned()
            } else {
                format!("contaminated ({})", run.contaminated.join("; "))
            },
            if got.is_empty() {
                "count it"
            } else {
                "contaminate it"
            },
            run.load_cpu_share,
            r.load_cpu_max,
            run.other_cpu_share,
            r.other_cpu_max
        );
        // An older cell read the unrounded shares: a share within its 4 decimals of a limit
        // may have fallen on either side.
        let near = |x: f64, max: f64| (x - max).abs() <= 0.5e-4 + 1e-12;
        if near(run.load_cpu_share, r.load_cpu_max) || near(run.other_cpu_share, r.other_cpu_max) {
            self.notes.push(format!(
                "{line}: within the rounding of an older cell, kept"
            ));
            return;
        }
        if self.own {
            self.out.push(line);
        } else {
            self.notes.push(format!(
                "{line}: judged by today's HTTP_LOAD_CPU_MAX and HTTP_OTHER_CPU_MAX"
            ));
        }
        run.contaminated = got;
    }

    /// At collect, the drift rule the job states must be the configuration's.
    fn soak_rule_stated(&mut self, job: &SoakConfig) {
        let Some(repo) = self.config.soak.as_ref().filter(|_| self.own) else {
            return;
        };
        if !same_setting(job.drift_share, repo.drift_share)
            || !same_setting(job.min_r2, repo.min_r2)
            || job.fail_on_drift != repo.fail_on_drift
        {
            self.out.push(format!(
                "soak settings: drift_share {}, min_r2 {}, fail_on_drift {} stated, [soak] says {}, {}, {}",
                job.drift_share,
                job.min_r2,
                job.fail_on_drift,
                repo.drift_share,
                repo.min_r2,
                repo.fail_on_drift
            ));
        }
    }

    /// A soaked server's fits, drift, peak and CPU per 1k from its samples.
    fn soak_server(
        &mut self,
        name: &ServerName,
        r: &mut SoakServerResult,
        settings: &SoakSettings,
    ) {
        let rule = soak_rule(self.config, &settings.config);
        let f = suite_figures::soak(&r.samples, &rule, r.load.as_ref().map(|l| l.requests));
        let at = format!("soak server {name}");
        let opt = |v: Option<f64>| v.map_or("none".into(), |v| v.to_string());
        let pairs = [
            (
                "fit",
                r.fit == f.fit,
                show_fit(r.fit.as_ref()),
                show_fit(f.fit.as_ref()),
            ),
            (
                "fit_minima",
                r.fit_minima == f.fit_minima,
                show_fit(r.fit_minima.as_ref()),
                show_fit(f.fit_minima.as_ref()),
            ),
            (
                "peak_rss_kib",
                r.peak_rss_kib == f.peak_rss_kib,
                r.peak_rss_kib.to_string(),
                f.peak_rss_kib.to_string(),
            ),
            (
                "cpu_ms_per_1k",
                r.cpu_ms_per_1k == f.cpu_ms_per_1k,
                opt(r.cpu_ms_per_1k),
                opt(f.cpu_ms_per_1k),
            ),
        ];
        for (field, agree, stated, samples) in pairs {
            if !agree {
                self.out.push(format!(
                    "{at}: {field} {stated} stated, the samples give {samples}"
                ));
            }
        }
        if self.own && r.verdict != f.verdict {
            self.out.push(format!(
                "{at}: verdict {} stated, the samples give {} (drift_share {}, min_r2 {})",
                drift_name(r.verdict),
                drift_name(f.verdict),
                rule.drift_share,
                rule.min_r2
            ));
        }
        r.fit = f.fit;
        r.fit_minima = f.fit_minima;
        r.verdict = f.verdict;
        r.peak_rss_kib = f.peak_rss_kib;
        r.cpu_ms_per_1k = f.cpu_ms_per_1k;
    }
}

/// Two figures computed from the same stored numbers: the same value.
#[expect(clippy::float_cmp, reason = "the same inputs give the same bits")]
fn same(a: f64, b: f64) -> bool {
    a == b
}

fn drift_name(d: Drift) -> &'static str {
    match d {
        Drift::Flat => "flat",
        Drift::Drifted => "drifted",
        Drift::Unknown => "unknown",
    }
}

fn show_fit(f: Option<&RssFit>) -> String {
    f.map_or("none".into(), |f| {
        format!(
            "{} KiB/min (R² {}, {} points, {} of the mean)",
            f.slope_kib_per_min, f.r2, f.points, f.projected_share
        )
    })
}
