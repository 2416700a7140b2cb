//! The report's data model, built once from the history and shared by every exporter.
//!
//! Everything here is derived from committed cell results only; nothing is measured or
//! averaged across jobs. Maps are `BTreeMap` and fields are declared in the order they are
//! written, so the same history always gives the same bytes.

mod cell;
mod newest;
mod records;

use std::collections::{BTreeMap, BTreeSet};

use cell_schema::{
    CellHttpServer, CellId, CellLabel, CellResult, CellSoakServer, Clock, Drift, ImportedSoakRun,
    Installed, LoadReport, MissingJob, Phase, Role, RowName, RssFit, ServerName, SoakSettings,
    Status, ToolName, ToolchainName,
};
use serde::Serialize;

use super::window::{LeftOut, ReportOptions, window};
pub use crate::footprint::{FootprintRow, ToolchainSize};

use cell_schema::store::{HistoryRun, RunDirName};

use cell::cell_report;
use records::{run_footprint, run_samples, suite_cells};

/// Version of `report.json` (and of `cell report --format json`).
pub const REPORT_VERSION: u32 = 1;

/// Marks a report.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ReportKind {
    /// `"report"`
    Report,
}

/// The comparison across every committed run, per cell, phase and row.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Report {
    /// Always [`REPORT_VERSION`].
    pub schema_version: u32,
    /// `"report"`.
    pub kind: ReportKind,
    /// The runs of the window, oldest first: those some cell's window holds, and the
    /// history's newest runs (every run when nothing was left out).
    pub runs: Vec<RunRef>,
    /// The runs of the history no window holds (not written when none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub left_out: Option<LeftOut>,
    /// What the page shows of each cell, by cell id.
    pub cells: BTreeMap<CellId, CellReport>,
    /// Every timed process of every cell and run of the window, for `samples.csv`; `None`
    /// unless asked for ([`ReportOptions::samples`]). Not part of the JSON form, which stays
    /// a summary: the samples of a long history run to megabytes. Imported runs have none:
    /// the old tool kept wall seconds only, in their cells' `RESULTS.md`.
    #[serde(skip)]
    pub samples: Option<Vec<Sample>>,
    /// The imported soaks of the history (`imported-soak.json`), by run.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub imported_soak: BTreeMap<String, ImportedSoakRun>,
    /// The newest run with workload jobs: every row against every cell, and its cost.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub comparison: Option<crate::compare::Comparison>,
    /// Every row's footprint in every cell and run of the window, for `footprint.csv`.
    #[serde(skip)]
    pub footprint: Vec<FootprintRecord>,
    /// The suites of every cell and run of the window, for `raw.csv` and `summary.csv`.
    #[serde(skip)]
    pub suites: Vec<super::SuiteCell>,
}

/// One row of one cell of one run, as `footprint.csv` writes it.
#[derive(Clone, Debug, PartialEq)]
pub struct FootprintRecord {
    /// Run directory name.
    pub run: String,
    /// The run's own date, `YYYY-MM-DD`.
    pub date: String,
    /// The cell.
    pub cell: CellId,
    /// The row's figures.
    pub row: FootprintRow,
    /// The installed size of the row's toolchain, as the cell records it.
    pub installed: Option<Installed>,
}

/// One run of the history.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RunRef {
    /// Its directory name, `<date>-<run-id>`.
    pub name: String,
    /// `YYYY-MM-DD`.
    pub date: String,
    /// The run id (`4242001`, `local-194158`).
    pub id: String,
    /// `github` or `local` (from its first cell).
    pub source: String,
    /// The commit the run tested, when known.
    pub head_sha: Option<String>,
    /// Some jobs were missing when it was written.
    pub partial: bool,
    /// Imported from another tool's history (`cell import`), not measured by this one.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub imported: bool,
}

/// One cell over the history.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CellReport {
    /// `linux`, `macos`, …
    pub os: String,
    /// `x86_64`, `aarch64`.
    pub arch: String,
    /// The runner label.
    pub label: CellLabel,
    /// Names of the runs of the window holding this cell, oldest first: the x axis of its
    /// charts.
    pub runs: Vec<String>,
    /// The cell's runs older than its window (not written when none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub left_out: Option<LeftOut>,
    /// The reference row every ratio divides by (as of the newest run).
    pub reference: RowName,
    /// Its label (`clang -O2`).
    pub reference_label: String,
    /// Per phase, in the newest run's protocol order (phases only older runs timed follow).
    pub phases: Vec<PhaseReport>,
    /// What the newest run of this cell says beyond ratios.
    pub newest: NewestRun,
    /// Median req/s of every http server and load tool over the runs that measured it (none
    /// for a cell without the http suite: then not written).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub http: Vec<HttpSeries>,
}

/// One http server under one load tool over the runs.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct HttpSeries {
    /// The http server the series follows.
    pub server: ServerName,
    /// The workload.
    pub workload: String,
    /// The connection shape.
    pub shape: String,
    /// The load tool.
    pub tool: String,
    /// One point per run that measured it, oldest first.
    pub points: Vec<HttpPoint>,
}

/// An http server's figures under one tool in one run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct HttpPoint {
    /// Run directory name.
    pub run: String,
    /// Median req/s over the clean runs.
    pub rps: f64,
    /// Median p99 latency, ms.
    pub p99_ms: f64,
    /// Measured runs counted in the median (not contaminated).
    pub clean_runs: u32,
}

/// A soak server of the newest run: every figure but the samples, which only its charts
/// carry.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SoakReport {
    /// The job that measured it.
    pub job: String,
    /// That job's soak.
    pub settings: SoakSettings,
    /// The toolchain that built it.
    pub toolchain: ToolchainName,
    /// The rule's outcome.
    pub verdict: Drift,
    /// Fit over the samples from the window start.
    pub fit: Option<RssFit>,
    /// Fit over the per-window minima.
    pub fit_minima: Option<RssFit>,
    /// Largest RSS sample, KiB.
    pub peak_rss_kib: u64,
    /// Server CPU ms per 1,000 responses.
    pub cpu_ms_per_1k: Option<f64>,
    /// The load as the tool reported it.
    pub load: Option<LoadReport>,
    /// Samples taken.
    pub samples: usize,
    /// Why it failed, when it did.
    pub error: Option<String>,
    /// The server as its job wrote it, samples included: what the charts draw.
    #[serde(skip)]
    pub server: CellSoakServer,
}

/// One phase of a cell: every row's series.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PhaseReport {
    /// The phase this part of the page is about.
    pub phase: Phase,
    /// Per row (the reference itself, at ratio 1 by construction, is left out).
    pub rows: BTreeMap<RowName, Series>,
}

/// One row's ratio over the runs that measured it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Series {
    /// Human label (as of its newest point).
    pub label: String,
    /// The job that measured it (as of its newest point).
    pub job: ToolchainName,
    /// Row, reference, control or tooth.
    pub role: Role,
    /// Its verdict clock (as of its newest point).
    pub clock: Clock,
    /// The tools of its job that built it (matched by path to its build command), as of its
    /// newest point: the versions to show beside it.
    pub tools: Vec<ToolName>,
    /// One point per run that measured a ratio, oldest first.
    pub points: Vec<Point>,
    /// One point per imported run that has the row, oldest first: another tool's ratio of
    /// medians on the wall clock, with no interval.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub imported: Vec<ImportedPoint>,
}

/// A row's point ratio in an imported run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ImportedPoint {
    /// Run directory name.
    pub run: String,
    /// The run's own date, `YYYY-MM-DD`.
    pub date: String,
    /// The old job that timed it.
    pub job: ToolchainName,
    /// `median(row) / median(reference)` of that job on the wall clock: a point.
    pub ratio: f64,
    /// Every repetition printed the expected answer.
    pub answer_ok: bool,
}

/// A row's ratio in one run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Point {
    /// Run directory name.
    pub run: String,
    /// The run's own date, `YYYY-MM-DD`.
    pub date: String,
    /// The run id as written (`4242001`, `local-194158`).
    pub run_id: String,
    /// The job that measured it.
    pub job: ToolchainName,
    /// The verdict clock the figures below are read on.
    pub clock: Clock,
    /// Median of per-round ratios.
    pub median: f64,
    /// Lower bound of its interval.
    pub lo: f64,
    /// Upper bound of its interval.
    pub hi: f64,
    /// The interval's actual coverage.
    pub level: f64,
    /// Per-round ratios behind it.
    pub n: u32,
    /// The median ratio on the other clock.
    pub other_median: f64,
    /// The row's own median seconds on its verdict clock, when the run recorded them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub median_s: Option<f64>,
    /// Estimated cycles over the job's reference's (the exact lane), when both were counted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cycles: Option<f64>,
    /// Every run printed the expected answer.
    pub answer_ok: bool,
}

/// The newest run of a cell: verdict, jobs, machines, versions.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct NewestRun {
    /// Run directory name.
    pub run: String,
    /// The run's own date, `YYYY-MM-DD`.
    pub date: String,
    /// The run id as written (`4242001`, `local-194158`).
    pub run_id: String,
    /// The cell's verdict.
    pub status: Status,
    /// Every reason behind it.
    pub reasons: Vec<String>,
    /// Each job of the newest run, by job name.
    pub jobs: BTreeMap<ToolchainName, JobReport>,
    /// Rows not timed, one line each.
    pub skipped: Vec<String>,
    /// Jobs that left no result.
    pub missing: Vec<MissingJob>,
    /// The newest run is an imported one (the cell has no measured run): its jobs and figures
    /// are in its `RESULTS.md`.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub imported: bool,
    /// The http suite's servers, each as its own job measured it, from the newest run that
    /// had the suite (not written when none).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub http: BTreeMap<ServerName, CellHttpServer>,
    /// The run `http` comes from: a run of one suite does not hide another suite's figures.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub http_run: Option<String>,
    /// The soak suite's servers, from the newest run that had the suite (not written when none).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub soak: BTreeMap<ServerName, SoakReport>,
    /// The run `soak` comes from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub soak_run: Option<String>,
    /// Every row's footprint in the newest run that had workload jobs (not written when
    /// none).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub footprint: Vec<FootprintRow>,
    /// Each toolchain's installed size in that run.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub installed: Vec<ToolchainSize>,
    /// The run `footprint` and `installed` come from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub footprint_run: Option<String>,
    /// The release under test against the previous release, timed in the same job, when a
    /// job of the newest run tried.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub same_job: Option<crate::same_job::SameJob>,
}

/// One job of the newest run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct JobReport {
    /// The job's verdict.
    pub status: Status,
    /// One line per reason behind the verdict.
    pub reasons: Vec<String>,
    /// The phases its A/A control could not vouch for: their rows are inconclusive.
    pub inconclusive: Vec<Phase>,
    /// What each phase's ratios resolved (the widest row interval's relative half-width).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub resolution: BTreeMap<Phase, f64>,
    /// The machine it ran on.
    pub machine: MachineReport,
    /// Every tool it used: the first line the tool printed for its version.
    pub versions: BTreeMap<ToolName, String>,
    /// Its reference's absolute medians, per phase (each job times its own).
    pub reference: BTreeMap<Phase, ReferenceMedian>,
}

/// The machine of a job.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MachineReport {
    /// CPU model.
    pub cpu_model: String,
    /// Logical CPUs.
    pub nproc: u32,
    /// Kernel (no hostname).
    pub kernel: String,
    /// OS release.
    pub os_release: String,
    /// `ImageOS ImageVersion` of a hosted runner.
    pub runner_image: Option<String>,
}

/// A reference's absolute medians on one phase.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ReferenceMedian {
    /// The reference's verdict clock.
    pub clock: Clock,
    /// Median seconds on that clock.
    pub median_s: f64,
    /// Median CPU seconds.
    pub cpu_s: f64,
    /// Median wall seconds.
    pub wall_s: f64,
}

/// One timed process, as `samples.csv` writes it.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    /// Run directory name.
    pub run: String,
    /// The run's own date, `YYYY-MM-DD`.
    pub date: String,
    /// The cell the sample was taken in.
    pub cell: CellId,
    /// The job that timed it.
    pub job: ToolchainName,
    /// The row timed.
    pub row: RowName,
    /// Row, reference, control or tooth.
    pub role: Role,
    /// The phase this part of the page is about.
    pub phase: Phase,
    /// Round (warm-up rounds included).
    pub round: u32,
    /// Position in the round.
    pub seq: u32,
    /// Excluded from statistics.
    pub warmup: bool,
    /// Each metric the run recorded (wall, cpu, user seconds), by metric.
    pub figures: BTreeMap<Clock, f64>,
    /// Peak RSS, KiB.
    pub maxrss_kib: u64,
    /// Right answer, exit 0.
    pub ok: bool,
}

pub(crate) use crate::figures::version_line;

/// `reference`, `control`, `row`, `tooth`.
pub fn role_name(r: Role) -> &'static str {
    match r {
        Role::Reference => "reference",
        Role::Control => "control",
        Role::Row => "row",
        Role::Tooth => "tooth",
        Role::Previous => "previous",
    }
}

impl Report {
    /// Builds the report from runs in history order (oldest first, as
    /// [`load_history`](cell_schema::store::load_history)
    /// returns them), over the window `options` sets: each cell's newest runs
    /// ([`window`]) feed its charts, series and CSV records; its newest-run sections read
    /// every run.
    pub fn build(runs: &[HistoryRun], options: &ReportOptions) -> Self {
        let mut cells: BTreeMap<&CellId, Vec<(&HistoryRun, &CellResult)>> = BTreeMap::new();
        for run in runs {
            for (id, cell) in &run.cells {
                cells.entry(id).or_default().push((run, cell));
            }
        }
        let windows: BTreeMap<&CellId, &[(&HistoryRun, &CellResult)]> = cells
            .iter()
            .map(|(id, seen)| (*id, window(seen, options.last)))
            .collect();
        let shown: BTreeSet<(&RunDirName, &CellId)> = windows
            .iter()
            .flat_map(|(id, w)| w.iter().map(|(r, _)| (&r.name, *id)))
            .collect();
        // A run some cell's window holds, or one of the history's newest (a run without
        // cells has no window of its own).
        let kept_names: BTreeSet<&RunDirName> = shown
            .iter()
            .map(|(r, _)| *r)
            .chain(window(runs, options.last).iter().map(|r| &r.name))
            .collect();
        // The runs of the window, each with those of its cells its window holds.
        let kept: Vec<(&HistoryRun, Vec<(&CellId, &CellResult)>)> = runs
            .iter()
            .filter(|r| kept_names.contains(&r.name))
            .map(|r| {
                let cells = r
                    .cells
                    .iter()
                    .filter(|(id, _)| shown.contains(&(&r.name, *id)))
                    .collect();
                (r, cells)
            })
            .collect();
        Self {
            schema_version: REPORT_VERSION,
            kind: ReportKind::Report,
            runs: kept.iter().map(|(r, _)| run_ref(r)).collect(),
            left_out: LeftOut::of(
                runs.iter()
                    .map(|r| (r.name.to_string(), kept_names.contains(&r.name))),
                options.last,
            ),
            cells: cells
                .iter()
                .map(|(id, seen)| ((*id).clone(), cell_report(seen, windows[id], options)))
                .collect(),
            samples: options
                .samples
                .then(|| kept.iter().flat_map(|(r, c)| run_samples(r, c)).collect()),
            suites: kept.iter().flat_map(|(r, c)| suite_cells(r, c)).collect(),
            imported_soak: kept
                .iter()
                .filter_map(|(r, _)| Some((r.name.to_string(), r.imported_soak.clone()?)))
                .collect(),
            comparison: runs.iter().rev().find_map(|r| {
                let cells: Vec<&CellResult> =
                    r.cells.values().filter(|c| !c.jobs.is_empty()).collect();
                (!cells.is_empty()).then(|| {
                    crate::compare::comparison(&r.name.to_string(), &cells, r.record.as_ref())
                })
            }),
            footprint: kept.iter().flat_map(|(r, c)| run_footprint(r, c)).collect(),
        }
    }

    /// The newest run's name, if any.
    pub fn newest_run(&self) -> Option<&RunRef> {
        self.runs.last()
    }

    /// The runs of the history, those the window left out included.
    pub fn run_count(&self) -> usize {
        self.left_out.as_ref().map_or(self.runs.len(), |l| l.runs)
    }

    /// The oldest run of the history, whether the window holds it or not.
    pub fn oldest_run(&self) -> Option<&str> {
        let shown = self.runs.first().map(|r| r.name.as_str());
        let left = self.left_out.as_ref().map(|l| l.oldest.as_str());
        shown.into_iter().chain(left).min()
    }
}

impl CellReport {
    /// The cell's runs in the history, those its window left out included.
    pub fn run_count(&self) -> usize {
        self.left_out.as_ref().map_or(self.runs.len(), |l| l.runs)
    }
}

fn run_ref(run: &HistoryRun) -> RunRef {
    let info = run
        .cells
        .values()
        .next()
        .map(|c| &c.run)
        .or(run.imported_soak.as_ref().map(|s| &s.run));
    RunRef {
        name: run.name.to_string(),
        date: run.name.date().to_owned(),
        id: run.name.id().to_owned(),
        source: info.map(|r| r.source.clone()).unwrap_or_default(),
        head_sha: info.and_then(|r| r.head_sha.clone()),
        partial: run.cells.values().any(|c| c.run.partial),
        imported: run.imported(),
    }
}
