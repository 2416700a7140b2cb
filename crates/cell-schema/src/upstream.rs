//! The Python cell's committed history (`bench/cell/cell.py` and its soak script), read: the
//! typed form of what it wrote, checked, and mapped onto [`Imported`] (a workload cell) and
//! [`ImportedSoakRun`] (a soak, which names no cell).
//!
//! Every name goes through the typed ids (one safe segment each), so a row named `../x` is
//! refused where it is read. A field the old file lacks stays absent. Figures that do not
//! hold together (a median that is not the median of the kept repetitions, a ratio that is not
//! the row's median over its job's reference) are refused: an import keeps numbers, it does
//! not repair them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::ids::is_safe_id;
use crate::store::{RunDirName, StoreError};
use crate::time::Date;
use crate::{
    CellId, CellInfo, CellKind, CellLabel, CellResult, Clock, ImportMethod, ImportSource, Imported,
    ImportedBuild, ImportedDrift, ImportedFile, ImportedJob, ImportedMachine, ImportedPhase,
    ImportedRow, ImportedSkipped, ImportedSoakKind, ImportedSoakRun, ImportedSoakServer,
    ImportedTool, ImportedTooth, Phase, PrintedVersion, RowName, RunId, RunInfo, RunnerImage,
    SCHEMA_VERSION, ServerName, Sha256, Status, Subject, ToolName, ToolchainName, Verdict,
};

/// The largest old results file read; the largest committed one is 48 KB.
pub const MAX_FILE_BYTES: u64 = 16 << 20;

/// How deep under the directory imported a `results.json` is looked for
/// (`results/<run>/<cell>/results.json` is three levels).
const MAX_DEPTH: usize = 6;

/// A `results.json` found under the directory imported.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Found {
    /// Where it is.
    pub path: PathBuf,
    /// Its path relative to the directory imported, `/`-separated (its file name when a file
    /// was named).
    pub rel: String,
}

/// Every `results.json` under `dir` (or `dir` itself when it is a file), sorted by path.
/// Dot-directories and symbolic links are passed over: an import reads the history as
/// committed, never what a link points at.
pub fn find(dir: &Path) -> Result<Vec<Found>, StoreError> {
    let io = |path: &Path| {
        let path = path.to_owned();
        move |error| StoreError::Io { path, error }
    };
    let meta = std::fs::metadata(dir).map_err(io(dir))?;
    if meta.is_file() {
        let rel = dir
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        return Ok(vec![Found {
            path: dir.to_owned(),
            rel,
        }]);
    }
    let mut out = Vec::new();
    let mut stack = vec![(dir.to_owned(), String::new(), 0)];
    while let Some((d, prefix, depth)) = stack.pop() {
        for e in std::fs::read_dir(&d).map_err(io(&d))? {
            let e = e.map_err(io(&d))?;
            let name = e.file_name().to_string_lossy().into_owned();
            let kind = e.file_type().map_err(io(&e.path()))?;
            let rel = format!("{prefix}{name}");
            if name.starts_with('.') || kind.is_symlink() {
                continue;
            }
            if kind.is_dir() && depth < MAX_DEPTH {
                stack.push((e.path(), format!("{rel}/"), depth + 1));
            } else if kind.is_file() && name == crate::store::RESULTS_JSON {
                out.push(Found {
                    path: e.path(),
                    rel,
                });
            }
        }
    }
    out.sort_by(|a, b| a.rel.cmp(&b.rel));
    Ok(out)
}

/// What one old file becomes.
#[derive(Clone, Debug, PartialEq)]
pub enum Import {
    /// A workload cell of a run.
    Cell {
        /// The run dir it belongs in, from the file's own date and run id.
        name: RunDirName,
        /// The cell, marked imported.
        result: Box<CellResult>,
    },
    /// The soak of a run.
    Soak {
        /// The run dir it belongs in, from the file's own date and run id.
        name: RunDirName,
        /// The record, beside the run's cells.
        record: Box<ImportedSoakRun>,
    },
}

impl Import {
    /// The run dir it belongs in.
    pub fn name(&self) -> &RunDirName {
        match self {
            Self::Cell { name, .. } | Self::Soak { name, .. } => name,
        }
    }
}

/// Why a file of the old history cannot be imported.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// Not JSON, a key given twice, a number out of range, a name that is not a safe id, a
    /// field of the wrong type.
    #[error("{0}")]
    Json(#[from] serde_json::Error),
    /// JSON, but not a file of the Python cell.
    #[error("{0}")]
    Shape(String),
    /// Parses, but its figures or names do not hold together.
    #[error("{0}")]
    Inconsistent(String),
    /// A date that is no UTC day of the calendar, or a run id that is not one: the run dir it
    /// would name is not the run's.
    #[error("{0}")]
    Field(String),
}

/// The run dir of the run the file names: its UTC date (from `date`, a date or a date and
/// time with its zone, read at `date_field`) and its run id (`run_id`, at `id_field`).
fn run_dir_name(
    date: &str,
    date_field: &str,
    run_id: &str,
    id_field: &str,
) -> Result<RunDirName, ImportError> {
    let date = Date::of_timestamp(date).ok_or_else(|| {
        ImportError::Field(format!(
            "{date_field} `{}` is no UTC day: write a calendar date (YYYY-MM-DD) or a date and time with its zone (2026-09-13T21:11:02Z, +02:00)",
            shown(date)
        ))
    })?;
    let id = RunId::parse(run_id).map_err(|e| ImportError::Field(format!("{id_field} {e}")))?;
    RunDirName::new(&date.to_string(), &id.to_string())
        .map_err(|e| ImportError::Field(format!("{date_field} and {id_field}: {e}")))
}

/// At most 64 characters of `s`, on one line: what a message quotes of a value from a file.
fn shown(s: &str) -> String {
    let mut out: String = crate::escape::one_line(s).chars().take(64).collect();
    if out.len() < s.len() {
        out.push('…');
    }
    out
}

fn inconsistent(msg: String) -> ImportError {
    ImportError::Inconsistent(msg)
}

/// Reads one old `results.json` (`text`, found at `rel` with digest `sha256`): a workload cell
/// or a soak, told apart by their keys.
pub fn read(text: &str, rel: &str, sha256: &Sha256) -> Result<Import, ImportError> {
    let value: serde_json::Value = crate::read::from_str_unique(text)?;
    let Some(obj) = value.as_object() else {
        return Err(ImportError::Shape(
            "not a JSON object: not a results.json of the Python cell".into(),
        ));
    };
    let source = |file, old_cell_id| ImportSource {
        tool: ImportedTool::PythonCell,
        file,
        path: rel.to_owned(),
        sha256: sha256.clone(),
        old_cell_id,
    };
    if obj.contains_key("schema_version") {
        Err(ImportError::Shape(
            "it has a schema_version: already a results file of this tool, nothing to import"
                .into(),
        ))
    } else if obj.contains_key("cell") && obj.contains_key("rows") {
        let old: OldWorkload = serde_json::from_str(text)?;
        workload(old, source)
    } else if obj.contains_key("conditions") && obj.contains_key("results") {
        let old: OldSoak = serde_json::from_str(text)?;
        soak(&old, source(ImportedFile::Soak, None))
    } else {
        Err(ImportError::Shape(
            "neither a workload results.json (keys cell, rows) nor a soak results.json (keys conditions, results) of the Python cell".into(),
        ))
    }
}

// ---- the workload file: results/<date>-<run-id>/<cell-id>/results.json ----------------------

#[derive(Deserialize)]
struct OldCell {
    id: String,
    os: String,
    arch: String,
    runner: CellLabel,
    cpu_model: Option<String>,
    nproc: Option<u32>,
    mem_kb: Option<u64>,
    kernel: Option<String>,
    pinned_cpus: Option<String>,
    date: String,
    run_id: String,
    image: Option<String>,
}

#[derive(Deserialize)]
struct OldMc {
    version: Option<String>,
    tag: Option<String>,
    asset: Option<String>,
    asset_sha256: Option<Sha256>,
    binary_sha256: Option<Sha256>,
    binary_bytes: Option<u64>,
}

#[derive(Deserialize)]
struct OldRow {
    row: RowName,
    phase: Phase,
    label: String,
    compile_s: f64,
    binary_bytes: u64,
    text_bytes: Option<u64>,
    binary_sha256: Sha256,
    stdout_ok: bool,
    run_s: Vec<f64>,
    best: f64,
    median: f64,
    max: f64,
    rss_bytes: u64,
    ratio_to_reference: f64,
    toolchain: ToolchainName,
}

#[derive(Deserialize)]
struct OldSkipped {
    row: RowName,
    reason: String,
    toolchain: ToolchainName,
}

#[derive(Deserialize)]
struct OldVerdict {
    status: String,
    failures: Vec<String>,
    tooth: Option<f64>,
}

#[derive(Deserialize)]
struct OldJob {
    toolchain: ToolchainName,
    reference_absolute_median: BTreeMap<Phase, f64>,
    status: String,
    failures: Vec<String>,
    tooth: Option<f64>,
    job_minutes: Option<f64>,
}

#[derive(Deserialize)]
struct OldWorkload {
    cell: OldCell,
    mc: Option<OldMc>,
    toolchains: BTreeMap<ToolName, String>,
    pins: BTreeMap<String, String>,
    reference: RowName,
    reps: u32,
    dropped: u32,
    tolerance: f64,
    regress_min: f64,
    regress_gated: bool,
    tooth_phase: Phase,
    timing_method: String,
    rows: Vec<OldRow>,
    skipped: Vec<OldSkipped>,
    verdict: OldVerdict,
    /// Only a merged cell has it: a job's own file is not a cell of the history.
    jobs: Option<Vec<OldJob>>,
}

/// `ok` / `fail`, the old tool's two outcomes.
fn status(s: &str, of: &str) -> Result<Status, ImportError> {
    match s {
        "ok" => Ok(Status::Ok),
        "fail" => Ok(Status::Failed),
        other => Err(inconsistent(format!(
            "{of}: status `{}` is neither ok nor fail",
            crate::escape::one_line(other)
        ))),
    }
}

/// The architecture as this tool names it (the old cell id says `arm64`).
fn arch_name(arch: &str) -> &str {
    match arch {
        "arm64" | "aarch64" => "aarch64",
        "amd64" | "x86_64" => "x86_64",
        other => other,
    }
}

/// The cell, named `<os>-<arch>-<label>` as this tool names cells; the old id must be the
/// same three parts (its architecture possibly spelled `arm64`).
fn cell_info(c: &OldCell) -> Result<(CellInfo, Option<String>), ImportError> {
    for (what, v) in [("cell.os", &c.os), ("cell.arch", &c.arch)] {
        if !is_safe_id(v) || v.contains('-') {
            return Err(inconsistent(format!(
                "{what} `{}` is not one name of letters, digits, `.`, `_` and `+`",
                crate::escape::one_line(v)
            )));
        }
    }
    let arch = arch_name(&c.arch);
    let id = format!("{}-{arch}-{}", c.os, c.runner);
    let middle =
        c.id.strip_prefix(&format!("{}-", c.os))
            .and_then(|r| r.strip_suffix(&format!("-{}", c.runner)));
    if middle.is_none_or(|m| arch_name(m) != arch) {
        return Err(inconsistent(format!(
            "cell.id `{}` is not <os>-<arch>-<runner> of its own os `{}`, arch `{}` and runner `{}`",
            crate::escape::one_line(&c.id),
            c.os,
            c.arch,
            c.runner
        )));
    }
    let old = (c.id != id).then(|| c.id.clone());
    Ok((
        CellInfo {
            id: CellId::new(id),
            label: c.runner.clone(),
            os: c.os.clone(),
            arch: arch.to_owned(),
        },
        old,
    ))
}

fn machine(c: &OldCell) -> Result<ImportedMachine, ImportError> {
    let runner_image = c.image.as_deref().map(|i| match i.split_once(' ') {
        Some((os, version)) => RunnerImage {
            os: os.to_owned(),
            version: version.to_owned(),
        },
        None => RunnerImage {
            os: i.to_owned(),
            version: String::new(),
        },
    });
    let memory_bytes = c
        .mem_kb
        .map(|kb| {
            kb.checked_mul(1024)
                .ok_or_else(|| inconsistent(format!("cell.mem_kb {kb} is out of range")))
        })
        .transpose()?;
    Ok(ImportedMachine {
        cpu_model: c.cpu_model.clone(),
        nproc: c.nproc,
        memory_bytes,
        kernel: c.kernel.clone(),
        runner_image,
    })
}

/// The release under test: the old `mc` block, when it recorded the verified asset.
fn subject(mc: Option<&OldMc>) -> Option<Subject> {
    let mc = mc?;
    Some(Subject {
        tag: mc.tag.clone()?,
        asset: mc.asset.clone()?,
        sha256: mc.asset_sha256.clone()?,
        binary_sha256: mc.binary_sha256.clone(),
        binary_bytes: mc.binary_bytes,
        printed: mc.version.clone(),
        // What the old file did not record stays absent.
        toolchain: None,
        version: None,
        url: None,
        verified: None,
        tools: std::collections::BTreeMap::new(),
    })
}

/// How the numbers were made, in the file's own terms.
fn workload_method(old: &OldWorkload) -> ImportMethod {
    let kept = old.reps.saturating_sub(old.dropped);
    let clock = if old.timing_method.contains("time.monotonic") {
        "wall clock (time.monotonic)"
    } else {
        "wall clock"
    };
    let pin = match old.cell.pinned_cpus.as_deref() {
        Some(cpus) => format!("pinned to CPU {cpus} (taskset -c {cpus})"),
        None => "unpinned".to_owned(),
    };
    ImportMethod {
        summary: format!(
            "ratio of medians of the kept repetitions ({kept} of {}, the first {} dropped), {clock}, {pin}; no per-round pairs, so no interval",
            old.reps, old.dropped
        ),
        clock: Clock::Wall,
        timing_method: Some(old.timing_method.clone()),
        reps: Some(old.reps),
        dropped: Some(old.dropped),
        pinned_cpus: old.cell.pinned_cpus.clone(),
    }
}

fn jobs(old: &OldWorkload) -> Result<BTreeMap<ToolchainName, ImportedJob>, ImportError> {
    let Some(list) = &old.jobs else {
        return Err(ImportError::Shape(
            "it has no `jobs`: a job's own results.json, not a merged cell; import the merged results/<date>-<run-id>/<cell-id>/results.json".into(),
        ));
    };
    let mut out = BTreeMap::new();
    for j in list {
        let job = ImportedJob {
            status: status(&j.status, &format!("job {}", j.toolchain))?,
            failures: j.failures.clone(),
            reference_median_s: j
                .reference_absolute_median
                .iter()
                .map(|(p, m)| (p.clone(), crate::round_time(*m)))
                .collect(),
            tooth: j.tooth,
            job_minutes: j.job_minutes,
        };
        if out.insert(j.toolchain.clone(), job).is_some() {
            return Err(inconsistent(format!("job {} is listed twice", j.toolchain)));
        }
    }
    Ok(out)
}

/// The median of `v` as Python's `statistics.median` takes it.
fn median(v: &[f64]) -> Option<f64> {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(s[n / 2]),
        _ => Some(f64::midpoint(s[n / 2 - 1], s[n / 2])),
    }
}

/// One old row on one phase, checked against its repetitions and its job's reference.
fn phase(
    r: &OldRow,
    dropped: u32,
    jobs: &BTreeMap<ToolchainName, ImportedJob>,
) -> Result<ImportedPhase, ImportError> {
    let at = format!("row {} on phase {}", r.row, r.phase);
    let kept = r.run_s.get(dropped as usize..).unwrap_or_default();
    let (lo, hi) = kept
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), t| {
            (lo.min(*t), hi.max(*t))
        });
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b.abs().max(1.0);
    match median(kept) {
        Some(m) if close(m, r.median) && close(lo, r.best) && close(hi, r.max) => {}
        Some(m) => {
            return Err(inconsistent(format!(
                "{at}: median {} / best {} / max {} are not those of its kept repetitions ({m} / {lo} / {hi})",
                r.median, r.best, r.max
            )));
        }
        None => {
            return Err(inconsistent(format!(
                "{at}: {} repetitions with {dropped} dropped: none kept",
                r.run_s.len()
            )));
        }
    }
    let reference = jobs
        .get(&r.toolchain)
        .ok_or_else(|| {
            inconsistent(format!(
                "{at} names job {}, which the file does not list",
                r.toolchain
            ))
        })?
        .reference_median_s
        .get(&r.phase)
        .copied()
        .ok_or_else(|| {
            inconsistent(format!(
                "{at}: job {} has no reference median on {}",
                r.toolchain, r.phase
            ))
        })?;
    let expected = crate::round_ratio(r.median / reference);
    if !(reference > 0.0 && (expected - r.ratio_to_reference).abs() <= 1.5e-4) {
        return Err(inconsistent(format!(
            "{at}: ratio_to_reference {} is not its median over job {}'s reference median ({expected})",
            r.ratio_to_reference, r.toolchain
        )));
    }
    Ok(ImportedPhase {
        run_s: r.run_s.iter().map(|t| crate::round_time(*t)).collect(),
        dropped,
        median_s: crate::round_time(r.median),
        best_s: crate::round_time(r.best),
        max_s: crate::round_time(r.max),
        rss_bytes: r.rss_bytes,
        point_ratio: r.ratio_to_reference,
        stdout_ok: r.stdout_ok,
    })
}

/// Every row, one build each, every phase once.
fn rows(
    old: &OldWorkload,
    jobs: &BTreeMap<ToolchainName, ImportedJob>,
) -> Result<BTreeMap<RowName, ImportedRow>, ImportError> {
    let mut out: BTreeMap<RowName, ImportedRow> = BTreeMap::new();
    for r in &old.rows {
        let build = ImportedBuild {
            compile_s: crate::round_time(r.compile_s),
            binary_bytes: r.binary_bytes,
            text_bytes: r.text_bytes,
            sha256: r.binary_sha256.clone(),
        };
        let row = out.entry(r.row.clone()).or_insert_with(|| ImportedRow {
            label: r.label.clone(),
            toolchain: r.toolchain.clone(),
            build: build.clone(),
            phases: BTreeMap::new(),
        });
        if row.toolchain != r.toolchain || row.label != r.label || row.build != build {
            return Err(inconsistent(format!(
                "row {} has two jobs, labels or builds across its phases",
                r.row
            )));
        }
        let p = phase(r, old.dropped, jobs)?;
        if row.phases.insert(r.phase.clone(), p).is_some() {
            return Err(inconsistent(format!(
                "row {} on phase {} is listed twice",
                r.row, r.phase
            )));
        }
    }
    Ok(out)
}

fn workload(
    old: OldWorkload,
    source: impl Fn(ImportedFile, Option<String>) -> ImportSource,
) -> Result<Import, ImportError> {
    for key in old.pins.keys() {
        if !is_safe_id(key) {
            return Err(inconsistent(format!(
                "pin `{}` is not a key of letters, digits and _",
                crate::escape::one_line(key)
            )));
        }
    }
    let (cell, old_cell_id) = cell_info(&old.cell)?;
    let name = run_dir_name(&old.cell.date, "cell.date", &old.cell.run_id, "cell.run_id")?;
    let jobs = jobs(&old)?;
    let rows = rows(&old, &jobs)?;
    let status = status(&old.verdict.status, "the verdict")?;
    let imported = Imported {
        source: source(ImportedFile::Workload, old_cell_id),
        method: workload_method(&old),
        reference: old.reference.clone(),
        machine: machine(&old.cell)?,
        subject: subject(old.mc.as_ref()),
        versions: old.toolchains.clone(),
        pins: old.pins.clone(),
        tolerance: old.tolerance,
        tooth: ImportedTooth {
            floor: old.regress_min,
            phase: old.tooth_phase.clone(),
            gated: old.regress_gated,
            ratio: old.verdict.tooth,
        },
        jobs,
        rows,
        skipped: old
            .skipped
            .iter()
            .map(|s| ImportedSkipped {
                row: s.row.clone(),
                toolchain: s.toolchain.clone(),
                reason: s.reason.clone(),
            })
            .collect(),
    };
    let result = CellResult {
        schema_version: SCHEMA_VERSION,
        kind: CellKind::Cell,
        run: RunInfo {
            id: name.id().to_owned(),
            date: name.date().to_owned(),
            // A hosted runner sets the image; the old local road has none.
            source: if old.cell.image.is_some() {
                "github"
            } else {
                "local"
            }
            .to_owned(),
            head_sha: None,
            dirty: None,
            attempt: None,
            attempts: Vec::new(),
            partial: false,
        },
        cell,
        jobs: BTreeMap::new(),
        rows: BTreeMap::new(),
        skipped: Vec::new(),
        missing: Vec::new(),
        failures: old.verdict.failures.clone(),
        verdict: Verdict::new(status, old.verdict.failures),
        cost: None,
        http: BTreeMap::new(),
        soak: BTreeMap::new(),
        imported: Some(imported),
    };
    Ok(Import::Cell {
        name,
        result: Box::new(result),
    })
}

// ---- the soak file: soak/<date>-<run-id>/results.json ----------------------------------------

#[derive(Deserialize)]
#[expect(
    non_snake_case,
    reason = "the runner's environment variables, as the old file names them"
)]
struct OldRunner {
    ImageOS: Option<String>,
    ImageVersion: Option<String>,
    GITHUB_RUN_ID: Option<String>,
    GITHUB_SHA: Option<String>,
}

#[derive(Deserialize)]
struct OldConditions {
    server: ServerName,
    toolchain: BTreeMap<String, String>,
    oha: Option<String>,
    minutes: f64,
    rate: u32,
    connections: u32,
    keepalive: bool,
    sample_every_s: f64,
    server_cpus: Option<String>,
    load_cpus: Option<String>,
    nproc: Option<u32>,
    runner: Option<OldRunner>,
    date_utc: String,
}

#[derive(Deserialize)]
struct OldSoakResult {
    server: ServerName,
    duration_min: f64,
    samples: u32,
    error: Option<String>,
    window_min: Option<[f64; 2]>,
    rss_at: BTreeMap<u32, Option<f64>>,
    rss_end: Option<f64>,
    rss_peak: Option<f64>,
    rss_slope_kib_per_min: Option<f64>,
    rss_slope_r2: Option<f64>,
    cpu_s: Option<f64>,
    requests: u64,
    non_200: u64,
    errors: u64,
    rps: Option<f64>,
    p50_ms: Option<f64>,
    p99_ms: Option<f64>,
    cpu_ms_per_1k_req: Option<f64>,
    drift: String,
}

#[derive(Deserialize)]
struct OldSoak {
    conditions: BTreeMap<ServerName, OldConditions>,
    results: BTreeMap<ServerName, OldSoakResult>,
}

fn drift(s: &str, server: &ServerName) -> Result<Option<ImportedDrift>, ImportError> {
    match s {
        "flat" => Ok(Some(ImportedDrift::Flat)),
        "drifted" => Ok(Some(ImportedDrift::Drifted)),
        "n/a" => Ok(None),
        other => Err(inconsistent(format!(
            "server {server}: drift `{}` is none of flat, drifted, n/a",
            crate::escape::one_line(other)
        ))),
    }
}

fn soak_server(c: &OldConditions, r: &OldSoakResult) -> Result<ImportedSoakServer, ImportError> {
    let runner_image = c.runner.as_ref().and_then(|r| {
        Some(RunnerImage {
            os: r.ImageOS.clone()?,
            version: r.ImageVersion.clone().unwrap_or_default(),
        })
    });
    Ok(ImportedSoakServer {
        started_at: c.date_utc.clone(),
        versions: c
            .toolchain
            .iter()
            .map(|(command, printed)| PrintedVersion {
                command: command.clone(),
                printed: printed.clone(),
            })
            .collect(),
        load_tool: c.oha.clone(),
        minutes: c.minutes,
        rate: c.rate,
        connections: c.connections,
        keepalive: c.keepalive,
        sample_every_s: c.sample_every_s,
        server_cpus: c.server_cpus.clone(),
        load_cpus: c.load_cpus.clone(),
        nproc: c.nproc,
        runner_image,
        duration_min: r.duration_min,
        samples: r.samples,
        error: r.error.clone(),
        window_min: r.window_min,
        rss_at_kib: r
            .rss_at
            .iter()
            .filter_map(|(m, v)| v.map(|v| (*m, v)))
            .collect(),
        rss_end_kib: r.rss_end,
        rss_peak_kib: r.rss_peak,
        rss_slope_kib_per_min: r.rss_slope_kib_per_min,
        rss_slope_r2: r.rss_slope_r2,
        cpu_s: r.cpu_s,
        requests: r.requests,
        non_200: r.non_200,
        errors: r.errors,
        rps: r.rps,
        p50_ms: r.p50_ms,
        p99_ms: r.p99_ms,
        cpu_ms_per_1k_req: r.cpu_ms_per_1k_req,
        drift: drift(&r.drift, &r.server)?,
    })
}

/// The one value every server's conditions agree on, or an error naming `what`.
fn agreed<'a>(
    values: impl Iterator<Item = Option<&'a str>>,
    what: &str,
) -> Result<Option<&'a str>, ImportError> {
    let mut seen: Option<Option<&str>> = None;
    for v in values {
        match seen {
            None => seen = Some(v),
            Some(s) if s == v => {}
            Some(_) => {
                return Err(inconsistent(format!(
                    "the servers name different {what}s: one soak file is one run"
                )));
            }
        }
    }
    Ok(seen.flatten())
}

fn soak(old: &OldSoak, source: ImportSource) -> Result<Import, ImportError> {
    if !old.conditions.keys().eq(old.results.keys()) {
        return Err(inconsistent(
            "conditions and results name different servers".into(),
        ));
    }
    let mut servers = BTreeMap::new();
    for ((name, c), r) in old.conditions.iter().zip(old.results.values()) {
        if c.server != *name || r.server != *name {
            return Err(inconsistent(format!(
                "server {name} is filed under another server's name"
            )));
        }
        servers.insert(name.clone(), soak_server(c, r)?);
    }
    let runner = |f: fn(&OldRunner) -> Option<&String>| {
        old.conditions
            .values()
            .map(move |c| c.runner.as_ref().and_then(f).map(String::as_str))
    };
    let run_id = agreed(runner(|r| r.GITHUB_RUN_ID.as_ref()), "GITHUB_RUN_ID")?
        .ok_or_else(|| inconsistent("no GITHUB_RUN_ID: the file names no run".into()))?;
    let head_sha = agreed(runner(|r| r.GITHUB_SHA.as_ref()), "GITHUB_SHA")?
        .filter(|s| s.len() == 40 && s.bytes().all(|b| b.is_ascii_hexdigit()))
        .map(str::to_owned);
    // The run's date is its first server's: a soak of servers one after another may cross
    // midnight. Every server's start must be a UTC day, not only the first.
    let mut first: Option<RunDirName> = None;
    for (server, c) in &old.conditions {
        let field = format!("conditions.{server}.date_utc");
        let name = run_dir_name(&c.date_utc, &field, run_id, "GITHUB_RUN_ID")?;
        if first.as_ref().is_none_or(|f| name < *f) {
            first = Some(name);
        }
    }
    let name = first.ok_or_else(|| inconsistent("no server: the file holds no soak".into()))?;
    let method = ImportMethod {
        summary: "the old soak: one server at a time at a fixed request rate, its RSS sampled and fitted by least squares over the file's window; figures as the file wrote them, no samples, so nothing is refitted".into(),
        clock: Clock::Wall,
        timing_method: None,
        reps: None,
        dropped: None,
        pinned_cpus: None,
    };
    let record = ImportedSoakRun {
        schema_version: SCHEMA_VERSION,
        kind: ImportedSoakKind::ImportedSoak,
        run: RunInfo {
            id: name.id().to_owned(),
            date: name.date().to_owned(),
            source: "github".into(),
            head_sha,
            dirty: None,
            attempt: None,
            attempts: Vec::new(),
            partial: false,
        },
        source,
        method,
        servers,
    };
    Ok(Import::Soak {
        name,
        record: Box::new(record),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_is_pythons() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(&[]), None);
    }

    #[test]
    fn architectures_take_this_tools_names() {
        assert_eq!(arch_name("arm64"), "aarch64");
        assert_eq!(arch_name("x86_64"), "x86_64");
    }
}
