//! `raw.csv` and `summary.csv` of the http and soak suites: one record per measured run, and
//! one per server × workload × shape × tool (a soak: one per server), every record naming its
//! run (or local session), the session's seed, the commit it tested (marked dirty when a
//! local checkout had uncommitted changes) and the version of the release under test.

use cell_schema::{
    CellHttpServer, CellId, CellSoakServer, Combo, ConcurrencyModel, HttpRun, HttpToolResult,
    RunInfo, ServerName,
};

use super::Report;
use super::csv::{Field, record};

/// One cell of one run, as far as its suites go.
#[derive(Clone, Debug, PartialEq)]
pub struct SuiteCell {
    /// Run directory name.
    pub run: String,
    /// The run as its cell records it (id, commit, dirty).
    pub info: RunInfo,
    /// The cell.
    pub cell: CellId,
    /// The release under test of the cell's jobs, when there is one.
    pub subject_version: Option<String>,
    /// Its http servers.
    pub http: Vec<(ServerName, CellHttpServer)>,
    /// Its soaked servers.
    pub soak: Vec<(ServerName, CellSoakServer)>,
}

/// The columns every record starts with.
const LEAD: [&str; 13] = [
    "suite",
    "run",
    "session",
    "date",
    "commit",
    "dirty",
    "subject_version",
    "seed",
    "cell",
    "job",
    "server",
    "model",
    "mode",
];

/// The columns of `raw.csv` after [`LEAD`].
const RAW: [&str; 26] = [
    "workload",
    "shape",
    "tool",
    "index",
    "seq",
    "connections",
    "threads",
    "keep_alive",
    "duration_s",
    "requests",
    "errors",
    "non_2xx",
    "rps",
    "p50_ms",
    "p90_ms",
    "p99_ms",
    "p99_9_ms",
    "max_ms",
    "server_cpu_s",
    "cpu_ms_per_1k",
    "peak_rss_kib",
    "peak_pss_kib",
    "rss_start_kib",
    "rss_end_kib",
    "startup_s",
    "contaminated",
];

/// The columns of `summary.csv` after [`LEAD`].
const SUMMARY: [&str; 15] = [
    "workload",
    "shape",
    "tool",
    "runs",
    "clean_runs",
    "rps_median",
    "rps_min",
    "rps_max",
    "p99_ms_median",
    "cpu_ms_per_1k_median",
    "peak_rss_kib",
    "peak_pss_kib",
    "errors",
    "non_2xx",
    "verdict",
];

/// The leading fields of a record of `c`'s server `name` (`model`: its concurrency model).
fn lead(
    c: &SuiteCell,
    suite: &str,
    (job, name, model): (&str, &ServerName, Option<ConcurrencyModel>),
    seed: Option<u64>,
    mode: &str,
) -> Vec<Field> {
    vec![
        Field::text(suite),
        Field::text(&c.run),
        Field::text(&c.info.id),
        Field::text(&c.info.date),
        Field::text(c.info.head_sha.as_deref().unwrap_or_default()),
        Field::opt(c.info.dirty),
        Field::text(c.subject_version.as_deref().unwrap_or_default()),
        Field::opt(seed),
        Field::text(c.cell.as_str()),
        Field::text(job),
        Field::text(name.as_str()),
        Field::text(model.map_or("", ConcurrencyModel::as_str)),
        Field::text(mode),
    ]
}

fn header(rest: &[&str]) -> String {
    let all: Vec<&str> = LEAD.iter().chain(rest).copied().collect();
    record(&super::csv::header(&all))
}

fn raw_fields(combo: &Combo, r: &HttpRun) -> Vec<Field> {
    let l = &r.load;
    vec![
        Field::text(&combo.workload),
        Field::text(&combo.shape),
        Field::text(&combo.tool),
        Field::figure(r.index),
        Field::figure(r.seq),
        Field::opt(l.connections),
        Field::opt(l.threads),
        Field::opt(l.keep_alive),
        Field::figure(l.duration_s),
        Field::figure(l.requests),
        Field::figure(l.errors.values().sum::<u64>()),
        Field::figure(l.non_2xx),
        Field::figure(l.rps),
        Field::figure(l.latency_ms.p50),
        Field::figure(l.latency_ms.p90),
        Field::figure(l.latency_ms.p99),
        Field::figure(l.latency_ms.p99_9),
        Field::figure(l.latency_ms.max),
        Field::figure(r.server_cpu_s),
        Field::figure(r.cpu_ms_per_1k),
        Field::figure(r.peak_rss_kib),
        Field::opt(r.peak_pss_kib),
        Field::opt(r.rss_start_kib),
        Field::opt(r.rss_end_kib),
        Field::figure(r.startup_s),
        Field::text(r.contaminated.join("; ")),
    ]
}

fn summary_fields(combo: &Combo, t: &HttpToolResult, verdict: &str) -> Vec<Field> {
    vec![
        Field::text(&combo.workload),
        Field::text(&combo.shape),
        Field::text(&combo.tool),
        Field::figure(t.runs.len()),
        Field::figure(t.clean_runs),
        Field::figure(t.rps),
        Field::figure(t.rps_range[0]),
        Field::figure(t.rps_range[1]),
        Field::figure(t.p99_ms),
        Field::figure(t.cpu_ms_per_1k),
        Field::figure(t.peak_rss_kib),
        Field::opt(t.peak_pss_kib),
        Field::figure(t.errors),
        Field::figure(t.non_2xx),
        Field::text(verdict),
    ]
}

/// `raw.csv`: the header, then one record per measured http run and per soak.
pub fn render_raw(report: &Report) -> String {
    let mut out = header(&RAW);
    for c in &report.suites {
        for (name, h) in &c.http {
            let s = &h.settings;
            for (combo, t) in crate::suite::measured_in_order(&h.settings, &h.result) {
                for r in &t.runs {
                    let mut f = lead(
                        c,
                        "http",
                        (&h.job, name, h.result.model),
                        Some(s.seed),
                        s.mode.name(),
                    );
                    f.extend(raw_fields(&combo, r));
                    out.push_str(&record(&f));
                }
            }
        }
        for (name, s) in &c.soak {
            let Some(l) = &s.result.load else { continue };
            let mut f = lead(c, "soak", (&s.job, name, None), None, "soak");
            let run = soak_as_run(s, l);
            f.extend(raw_fields(&soak_combo(s, l), &run));
            out.push_str(&record(&f));
        }
    }
    out
}

/// `summary.csv`: the header, then one record per http combination and per soaked server.
pub fn render_summary(report: &Report) -> String {
    let mut out = header(&SUMMARY);
    for c in &report.suites {
        for (name, h) in &c.http {
            let s = &h.settings;
            for (combo, t) in crate::suite::measured_in_order(&h.settings, &h.result) {
                let mut f = lead(
                    c,
                    "http",
                    (&h.job, name, h.result.model),
                    Some(s.seed),
                    s.mode.name(),
                );
                // A server that failed mid-session keeps what it measured, as failed.
                let verdict = match (&h.result.error, t.clean_runs) {
                    (Some(_), _) => "failed",
                    (None, 0) => "noisy",
                    (None, _) => "ok",
                };
                f.extend(summary_fields(&combo, t, verdict));
                out.push_str(&record(&f));
            }
            // A workload answered wrongly: one record, nothing measured, what differed.
            for (w, wr) in &h.result.workloads {
                let Some(e) = &wr.error else { continue };
                out.push_str(&unmeasured_record(
                    c,
                    (name, h),
                    (w.as_str(), ""),
                    &format!("failed: {e}"),
                ));
            }
            out.push_str(&summary_unmeasured(c, name, h));
        }
        for (name, s) in &c.soak {
            let Some(l) = &s.result.load else { continue };
            let mut f = lead(c, "soak", (&s.job, name, None), None, "soak");
            let run = soak_as_run(s, l);
            let t = HttpToolResult {
                clean_runs: 1,
                rps: l.rps,
                rps_range: [l.rps, l.rps],
                p99_ms: l.latency_ms.p99,
                cpu_ms_per_1k: s.result.cpu_ms_per_1k.unwrap_or(0.0),
                peak_rss_kib: s.result.peak_rss_kib,
                peak_pss_kib: None,
                errors: l.errors.values().sum(),
                non_2xx: l.non_2xx,
                runs: vec![run],
            };
            f.extend(summary_fields(
                &soak_combo(s, l),
                &t,
                crate::figures::drift_name(s.result.verdict),
            ));
            out.push_str(&record(&f));
        }
    }
    out
}

/// The workloads a server does not serve and the shapes it was left out of: one record each,
/// nothing measured, the verdict saying which (not a failure).
fn summary_unmeasured(c: &SuiteCell, name: &ServerName, h: &CellHttpServer) -> String {
    let not_served = h
        .result
        .not_served
        .iter()
        .map(|w| (w.as_str(), "", "not served".to_owned()));
    let left_out = h
        .result
        .shapes_left_out
        .iter()
        .map(|(shape, why)| ("", shape.as_str(), format!("left out: {why}")));
    not_served
        .chain(left_out)
        .map(|(workload, shape, verdict)| {
            unmeasured_record(c, (name, h), (workload, shape), &verdict)
        })
        .collect()
}

/// One `summary.csv` record of a server's workload or shape with nothing measured: its
/// figures empty, `verdict` saying why.
fn unmeasured_record(
    c: &SuiteCell,
    (name, h): (&ServerName, &CellHttpServer),
    (workload, shape): (&str, &str),
    verdict: &str,
) -> String {
    let s = &h.settings;
    let mut f = lead(
        c,
        "http",
        (&h.job, name, h.result.model),
        Some(s.seed),
        s.mode.name(),
    );
    f.extend([
        Field::text(workload),
        Field::text(shape),
        Field::text(""),
        Field::figure(0_u32),
        Field::figure(0_u32),
    ]);
    f.extend((0..9).map(|_| Field::opt(None::<f64>)));
    f.push(Field::text(verdict));
    record(&f)
}

/// A soak's load as the columns of a measured run.
fn soak_combo(s: &CellSoakServer, l: &cell_schema::LoadReport) -> Combo {
    Combo {
        workload: cell_schema::LEGACY_WORKLOAD.to_owned(),
        shape: crate::figures::soak_shape(&s.settings.config).to_owned(),
        tool: l.tool.clone(),
    }
}

/// A soak as one measured run: its load, the tree's figures over the whole soak.
fn soak_as_run(s: &CellSoakServer, l: &cell_schema::LoadReport) -> HttpRun {
    let r = &s.result;
    HttpRun {
        index: 0,
        seq: 0,
        startup_s: r.startup_s.unwrap_or(0.0),
        time_wait: cell_schema::TimeWait {
            before: 0,
            after: 0,
            waited_s: 0.0,
        },
        load: l.clone(),
        server_cpu_s: r.samples.last().map_or(0.0, |x| x.cpu_s),
        cpu_ms_per_1k: r.cpu_ms_per_1k.unwrap_or(0.0),
        peak_rss_kib: r.peak_rss_kib,
        peak_pss_kib: None,
        rss_start_kib: r.samples.first().map(|x| x.rss_kib),
        rss_end_kib: r.samples.last().map(|x| x.rss_kib),
        load_cpu_s: 0.0,
        load_cpu_share: 0.0,
        other_cpu_share: 0.0,
        contaminated: Vec::new(),
    }
}
