//! `raw.csv` and `summary.csv` of the http and soak suites: one record per measured run, and
//! one per server × workload × shape × tool (a soak: one per server), every record naming its
//! run (or local session), the session's seed, the commit it tested (marked dirty when a
//! local checkout had uncommitted changes) and the version of the release under test.

use cell_schema::{
    CellHttpServer, CellId, CellSoakServer, Combo, HttpRun, HttpToolResult, RunInfo, ServerName,
};

use super::Report;
use super::csv::record;

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
const LEAD: [&str; 12] = [
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
    "mode",
];

/// The columns of `raw.csv` after [`LEAD`].
const RAW: [&str; 25] = [
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
    "rss_start_kib",
    "rss_end_kib",
    "startup_s",
    "contaminated",
];

/// The columns of `summary.csv` after [`LEAD`].
const SUMMARY: [&str; 14] = [
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
    "errors",
    "non_2xx",
    "verdict",
];

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map_or_else(String::new, |v| v.to_string())
}

/// The leading fields of a record of `c`'s server `name`.
fn lead(
    c: &SuiteCell,
    suite: &str,
    job: &str,
    name: &ServerName,
    seed: Option<u64>,
    mode: &str,
) -> Vec<String> {
    vec![
        suite.to_owned(),
        c.run.clone(),
        c.info.id.clone(),
        c.info.date.clone(),
        opt(c.info.head_sha.clone()),
        opt(c.info.dirty),
        opt(c.subject_version.clone()),
        opt(seed),
        c.cell.to_string(),
        job.to_owned(),
        name.to_string(),
        mode.to_owned(),
    ]
}

fn header(rest: &[&str]) -> String {
    let all: Vec<&str> = LEAD.iter().chain(rest).copied().collect();
    record(&all)
}

fn raw_fields(combo: &Combo, r: &HttpRun) -> Vec<String> {
    let l = &r.load;
    vec![
        combo.workload.clone(),
        combo.shape.clone(),
        combo.tool.clone(),
        r.index.to_string(),
        r.seq.to_string(),
        opt(l.connections),
        opt(l.threads),
        opt(l.keep_alive),
        l.duration_s.to_string(),
        l.requests.to_string(),
        l.errors.values().sum::<u64>().to_string(),
        l.non_2xx.to_string(),
        l.rps.to_string(),
        l.latency_ms.p50.to_string(),
        l.latency_ms.p90.to_string(),
        l.latency_ms.p99.to_string(),
        l.latency_ms.p99_9.to_string(),
        l.latency_ms.max.to_string(),
        r.server_cpu_s.to_string(),
        r.cpu_ms_per_1k.to_string(),
        r.peak_rss_kib.to_string(),
        opt(r.rss_start_kib),
        opt(r.rss_end_kib),
        r.startup_s.to_string(),
        r.contaminated.join("; "),
    ]
}

fn summary_fields(combo: &Combo, t: &HttpToolResult, verdict: &str) -> Vec<String> {
    vec![
        combo.workload.clone(),
        combo.shape.clone(),
        combo.tool.clone(),
        t.runs.len().to_string(),
        t.clean_runs.to_string(),
        t.rps.to_string(),
        t.rps_range[0].to_string(),
        t.rps_range[1].to_string(),
        t.p99_ms.to_string(),
        t.cpu_ms_per_1k.to_string(),
        t.peak_rss_kib.to_string(),
        t.errors.to_string(),
        t.non_2xx.to_string(),
        verdict.to_owned(),
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
                    let mut f = lead(c, "http", &h.job, name, Some(s.seed), s.mode.name());
                    f.extend(raw_fields(&combo, r));
                    out.push_str(&record(&f));
                }
            }
        }
        for (name, s) in &c.soak {
            let Some(l) = &s.result.load else { continue };
            let mut f = lead(c, "soak", &s.job, name, None, "soak");
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
                let mut f = lead(c, "http", &h.job, name, Some(s.seed), s.mode.name());
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
                let mut f = lead(c, "http", &h.job, name, Some(s.seed), s.mode.name());
                f.extend([
                    w.to_string(),
                    String::new(),
                    String::new(),
                    "0".into(),
                    "0".into(),
                ]);
                f.extend((0..8).map(|_| String::new()));
                f.push(format!("failed: {e}"));
                out.push_str(&record(&f));
            }
        }
        for (name, s) in &c.soak {
            let Some(l) = &s.result.load else { continue };
            let mut f = lead(c, "soak", &s.job, name, None, "soak");
            let run = soak_as_run(s, l);
            let t = HttpToolResult {
                clean_runs: 1,
                rps: l.rps,
                rps_range: [l.rps, l.rps],
                p99_ms: l.latency_ms.p99,
                cpu_ms_per_1k: s.result.cpu_ms_per_1k.unwrap_or(0.0),
                peak_rss_kib: s.result.peak_rss_kib,
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
        rss_start_kib: r.samples.first().map(|x| x.rss_kib),
        rss_end_kib: r.samples.last().map(|x| x.rss_kib),
        load_cpu_s: 0.0,
        load_cpu_share: 0.0,
        other_cpu_share: 0.0,
        contaminated: Vec::new(),
    }
}
