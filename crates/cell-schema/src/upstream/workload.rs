//! The workload file: `results/<date>-<run-id>/<cell-id>/results.json`.

use std::collections::BTreeMap;

use serde::Deserialize;

use super::{Import, ImportError, inconsistent, run_dir_name};
use crate::ids::is_safe_id;
use crate::{
    CellId, CellInfo, CellKind, CellLabel, CellResult, Clock, ImportMethod, ImportSource, Imported,
    ImportedBuild, ImportedFile, ImportedJob, ImportedMachine, ImportedPhase, ImportedRow,
    ImportedSkipped, ImportedTooth, Phase, RowName, RunInfo, RunnerImage, SCHEMA_VERSION, Sha256,
    Status, Subject, ToolName, ToolchainName, Verdict,
};

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
pub(super) struct OldWorkload {
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

pub(super) fn workload(
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
