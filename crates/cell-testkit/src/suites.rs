//! Hand-built results of the http and soak suites with fixed figures, for the tests of their
//! rendering and their gate: two servers under two tools, two soaked servers (one leaking),
//! and a merged cell of both suites.

use std::collections::BTreeMap;

use cell_schema::{
    CellHttpServer, CellInfo, CellResult, CellSoakServer, Drift, HttpJobResult, HttpKind, HttpRun,
    HttpServerResult, HttpSettings, HttpToolResult, Latency, LoadReport, Machine, RssFit,
    ServerName, SoakConfig, SoakJobResult, SoakKind, SoakSample, SoakServerResult, SoakSettings,
    Status, SuiteCost, TimeWait, ToolName, ToolVersion, ToolchainName, Verdict,
};
use serde_json::json;

/// The cell every suite result here ran in.
pub const CELL: &str = "linux-x86_64-ubuntu-24.04";

pub fn machine() -> Machine {
    Machine {
        cpu_model: "AMD EPYC 7763 64-Core Processor".into(),
        nproc: 4,
        memory_bytes: 17_179_869_184,
        kernel: "Linux 6.8.0-1017-azure #20-Ubuntu SMP x86_64".into(),
        os_release: "Ubuntu 24.04.1 LTS".into(),
        runner_image: None,
        pinned_cpu: None,
        timing: None,
    }
}

pub fn cell_info() -> CellInfo {
    serde_json::from_value(
        json!({ "id": CELL, "label": "ubuntu-24.04", "os": "linux", "arch": "x86_64" }),
    )
    .unwrap()
}

pub fn http_settings() -> HttpSettings {
    HttpSettings {
        tools: vec!["wrk".into(), "oha".into()],
        connections: 64,
        threads: 2,
        duration_s: 10.0,
        warmup_s: 2.0,
        runs: 3,
        keep_alive: true,
        server_cpu: Some(1),
        load_cpu: Some(2),
        server_cpus: vec![1],
        load_cpus: vec![2],
        seed: 7,
        startup_timeout_s: 10.0,
        stop_grace_s: 5.0,
        drain_timeout_s: 3.0,
        mode: cell_schema::HttpMode::Fresh,
        full: false,
        shapes: Vec::new(),
        workloads: BTreeMap::new(),
    }
}

pub fn load(tool: &str, rps: f64, p99: f64) -> LoadReport {
    LoadReport {
        tool: tool.into(),
        version: "1.0".into(),
        duration_s: 10.0,
        requests: (rps * 10.0) as u64,
        errors: BTreeMap::new(),
        non_2xx: 0,
        rps,
        latency_ms: Latency {
            p50: p99 / 4.0,
            p90: p99 / 2.0,
            p99,
            p99_9: p99 * 2.0,
            max: p99 * 5.0,
        },
        ..LoadReport::default()
    }
}

/// Three runs of one tool, the last contaminated when `dirty`.
pub fn tool(name: &str, rps: [f64; 3], dirty: bool) -> HttpToolResult {
    let runs: Vec<HttpRun> = rps
        .iter()
        .enumerate()
        .map(|(i, r)| HttpRun {
            index: i as u32,
            seq: i as u32 * 2,
            startup_s: 0.05,
            time_wait: TimeWait {
                before: 0,
                after: 0,
                waited_s: 0.0,
            },
            load: load(name, *r, 1.25),
            server_cpu_s: 4.5,
            cpu_ms_per_1k: 45.0,
            peak_rss_kib: 5_325,
            peak_pss_kib: Some(4_100),
            rss_start_kib: None,
            rss_end_kib: None,
            load_cpu_s: 9.0,
            load_cpu_share: 0.9,
            other_cpu_share: 0.01,
            contaminated: if dirty && i == 2 {
                vec![
                    "other CPU 35% > 10%".into(),
                    "load generator\nsaturated".into(),
                ]
            } else {
                Vec::new()
            },
        })
        .collect();
    let clean = runs.iter().filter(|r| r.contaminated.is_empty()).count() as u32;
    HttpToolResult {
        runs,
        clean_runs: clean,
        rps: rps[1],
        rps_range: [rps[0], rps[1]],
        p99_ms: 1.234,
        cpu_ms_per_1k: 0.045,
        peak_rss_kib: 5_325,
        peak_pss_kib: Some(4_100),
        errors: 2,
        non_2xx: 0,
    }
}

pub fn http_servers() -> BTreeMap<ServerName, HttpServerResult> {
    let mut m = BTreeMap::new();
    m.insert(
        ServerName::new("rust"),
        HttpServerResult {
            toolchain: ToolchainName::new("rust"),
            build: None,
            check: Some("ok".into()),
            tools: [
                (
                    "wrk".to_owned(),
                    tool("wrk", [12_000.0, 12_345.4, 9_000.0], true),
                ),
                (
                    "oha".to_owned(),
                    tool("oha", [11_000.0, 11_500.0, 11_800.0], false),
                ),
            ]
            .into_iter()
            .collect(),
            workloads: BTreeMap::new(),
            error: None,
            model: Some(cell_schema::ConcurrencyModel::RuntimeManaged),
            not_served: Vec::new(),
            shapes_left_out: BTreeMap::new(),
            release: None,
        },
    );
    m.insert(
        ServerName::new("go"),
        HttpServerResult {
            toolchain: ToolchainName::new("go"),
            build: None,
            check: None,
            tools: BTreeMap::new(),
            workloads: BTreeMap::new(),
            error: Some("build failed: exit 1\nmain.go:3: a|b undefined".into()),
            model: None,
            not_served: Vec::new(),
            shapes_left_out: BTreeMap::new(),
            release: None,
        },
    );
    m
}

pub fn soak_settings() -> SoakSettings {
    SoakSettings {
        config: SoakConfig {
            rate: 500,
            connections: 8,
            duration_s: 120.0,
            interval_s: 10.0,
            window_start_s: 30.0,
            minima_window_s: 30.0,
            drift_share: 0.05,
            min_r2: 0.8,
            fail_on_drift: true,
            keep_alive: true,
        },
        concurrent: 2,
        server_cpus: vec![3],
        load_cpus: vec![2],
    }
}

/// Samples every 10 s over 120 s: RSS from `base` KiB growing `slope` KiB per sample, a small
/// sawtooth on top; CPU at 40% of one CPU; threads and fds steady with a bump.
pub fn samples(base: u64, slope: u64) -> Vec<SoakSample> {
    (0..=12u32)
        .map(|i| SoakSample {
            t_s: f64::from(i) * 10.0,
            rss_kib: base + u64::from(i) * slope + u64::from(i % 3) * 64,
            cpu_s: f64::from(i) * 4.0 + if i == 6 { 1.0 } else { 0.0 },
            threads: 4 + u32::from(i == 6),
            fds: 12 + i % 2,
        })
        .collect()
}

pub fn soak_servers() -> BTreeMap<ServerName, SoakServerResult> {
    let mut m = BTreeMap::new();
    m.insert(
        ServerName::new("rust"),
        SoakServerResult {
            toolchain: ToolchainName::new("rust"),
            build: None,
            startup_s: Some(0.05),
            load: Some(LoadReport {
                errors: [("timeout".to_owned(), 1)].into_iter().collect(),
                ..load("oha", 500.0, 2.5)
            }),
            samples: samples(5_120, 2),
            fit: Some(RssFit {
                points: 10,
                slope_kib_per_min: 12.3,
                r2: 0.12,
                projected_kib: 18.45,
                mean_kib: 5_192.6,
                projected_share: 0.0036,
            }),
            fit_minima: Some(RssFit {
                points: 3,
                slope_kib_per_min: 1.2,
                r2: 0.05,
                projected_kib: 1.8,
                mean_kib: 5_180.0,
                projected_share: 0.0003,
            }),
            verdict: Drift::Flat,
            peak_rss_kib: 5_272,
            cpu_ms_per_1k: Some(0.8),
            error: None,
        },
    );
    m.insert(
        ServerName::new("python"),
        SoakServerResult {
            toolchain: ToolchainName::new("python"),
            build: None,
            startup_s: Some(0.4),
            load: Some(load("oha", 500.0, 4.0)),
            samples: samples(20_480, 800),
            fit: Some(RssFit {
                points: 10,
                slope_kib_per_min: 4_800.0,
                r2: 0.99,
                projected_kib: 7_200.0,
                mean_kib: 26_537.6,
                projected_share: 0.2713,
            }),
            fit_minima: Some(RssFit {
                points: 3,
                slope_kib_per_min: 4_790.0,
                r2: 0.98,
                projected_kib: 7_185.0,
                mean_kib: 27_900.0,
                projected_share: 0.2575,
            }),
            verdict: Drift::Drifted,
            peak_rss_kib: 30_208,
            cpu_ms_per_1k: Some(2.1),
            error: None,
        },
    );
    m.insert(
        ServerName::new("c"),
        SoakServerResult {
            toolchain: ToolchainName::new("clang"),
            build: None,
            startup_s: None,
            load: None,
            samples: Vec::new(),
            fit: None,
            fit_minima: None,
            verdict: Drift::Unknown,
            peak_rss_kib: 0,
            cpu_ms_per_1k: None,
            error: Some("no 200 within 10 s".into()),
        },
    );
    m
}

pub fn versions() -> BTreeMap<ToolName, ToolVersion> {
    [(
        ToolName::new("wrk"),
        ToolVersion {
            path: "/usr/bin/wrk".into(),
            resolved: "/usr/bin/wrk".into(),
            argv: vec!["/usr/bin/wrk".into(), "--version".into()],
            printed: "wrk 4.2.0 [epoll]\nCopyright (C) 2012 Will Glozer".into(),
            sha256: None,
            bytes: None,
        },
    )]
    .into_iter()
    .collect()
}

pub fn verdict() -> Verdict {
    Verdict::new(Status::Ok, Vec::new())
}

pub fn cost() -> SuiteCost {
    SuiteCost {
        build_s: 20.0,
        measure_s: 100.0,
        total_s: 121.0,
    }
}

pub fn http_job() -> HttpJobResult {
    HttpJobResult {
        schema_version: 1,
        kind: HttpKind::Http,
        job: "http".into(),
        cell: cell_info(),
        machine: machine(),
        pins: BTreeMap::new(),
        versions: versions(),
        settings: http_settings(),
        servers: http_servers(),
        verdict: Verdict::new(Status::Failed, vec!["go: build failed".into()]),
        cost: cost(),
        started_at: "2026-03-15T10:00:00Z".into(),
        github: None,
    }
}

pub fn soak_job() -> SoakJobResult {
    SoakJobResult {
        schema_version: 1,
        kind: SoakKind::Soak,
        job: "soak".into(),
        cell: cell_info(),
        machine: machine(),
        pins: BTreeMap::new(),
        versions: BTreeMap::new(),
        settings: soak_settings(),
        servers: soak_servers(),
        verdict: verdict(),
        cost: cost(),
        started_at: "2026-03-15T10:00:00Z".into(),
        github: None,
    }
}

/// A merged cell of the suites only (no workload job), run `k` of the history: the rust
/// server speeds up a little each run.
pub fn suite_cell(date: &str, id: &str, k: u32) -> CellResult {
    let mut cell: CellResult = serde_json::from_value(json!({
        "schema_version": 1, "kind": "cell",
        "run": { "id": id, "date": date, "source": "github", "head_sha": null, "attempt": 1, "partial": false },
        "cell": { "id": CELL, "label": "ubuntu-24.04", "os": "linux", "arch": "x86_64" },
        "jobs": {}, "rows": {}, "skipped": [], "missing": [], "failures": [],
        "verdict": { "status": "ok", "reasons": [] },
        "cost": { "jobs_s": {}, "total_s": 0.0 }
    }))
    .unwrap();
    for (name, mut r) in http_servers() {
        for t in r.tools.values_mut() {
            let up = f64::from(k) * 250.0;
            t.rps += up;
            t.rps_range = [t.rps_range[0] + up, t.rps_range[1] + up];
        }
        cell.http.insert(
            name.clone(),
            CellHttpServer {
                job: format!("http-{name}"),
                machine: machine(),
                settings: http_settings(),
                pins: BTreeMap::new(),
                versions: versions(),
                result: r,
            },
        );
    }
    for (name, r) in soak_servers() {
        cell.soak.insert(
            name.clone(),
            CellSoakServer {
                job: "soak".into(),
                machine: machine(),
                settings: soak_settings(),
                pins: BTreeMap::new(),
                versions: versions(),
                result: r,
            },
        );
    }
    cell
}

/// Scales every req/s figure of the cell's http servers.
pub fn scale_rps(cell: &mut CellResult, f: f64) {
    for s in cell.http.values_mut() {
        for t in s.result.tools.values_mut() {
            t.rps *= f;
            t.rps_range = [t.rps_range[0] * f, t.rps_range[1] * f];
            for r in &mut t.runs {
                r.load.rps *= f;
            }
        }
    }
}
