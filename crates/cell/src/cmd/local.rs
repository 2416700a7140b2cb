//! `cell local`: every job this machine can run, merged into one run dir, judged by the gate
//! `cell gate` would run, and the report over every local run.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use cell_collect::{JobInput, MergedCell};
use cell_model::{Cell, Plan};
use cell_schema::store::{self, RunDirName};
use cell_schema::{AnyJob, GateReport, MissingJob, RunInfo, Status};
use cell_verdict::GateConfig;

use crate::cli::{Cli, Format, LocalArgs, Suite};
use crate::exit::Exit;
use crate::progress::Progress;

/// Runs the local matrix.
pub fn run(args: &LocalArgs, cli: &Cli) -> anyhow::Result<Exit> {
    let plan = super::load_plan(cli)?;
    let cell = Cell::local();
    let names = workload_jobs(&plan, args)?;
    let (date, stamp) = crate::clock::utc_now();
    let run_name = free_run_name(&args.out, &date, &stamp)?;
    // The commit as it was when the run started (an edit during a long run is not what
    // was measured).
    let head = cell_collect::git::head_state(&plan.root);
    let jobs_dir = args.out.join(store::JOBS_DIR).join(run_name.to_string());
    let seed = args.seed.unwrap_or_else(crate::clock::clock_seed);
    let (mut inputs, mut missing) = if args.suite == Suite::Workload {
        (Vec::new(), Vec::new())
    } else {
        super::suite::local(&plan, args, cli, &jobs_dir, seed)?
    };
    let scripted = super::scripted_timings(args.scripted_timings.as_deref())?;
    // One cache for every job: each tree is checked once, and a private one is shared.
    let cache = cell_run::cache::Cache::from_env()?;
    for name in &names {
        match run_one(
            &plan,
            &cell,
            name,
            &jobs_dir,
            args,
            seed,
            &cache,
            scripted.as_ref(),
            cli,
        )? {
            Ran::Done(input) => inputs.push(input),
            Ran::Missing(m) => missing.push(m),
            Ran::Tampered(e) => {
                // Not the release's bytes: nothing of this run is timed or written.
                eprintln!("Error: {}", cell_schema::escape::terminal(&e.to_string()));
                return Ok(Exit::Gate);
            }
        }
    }
    let run = RunInfo {
        id: run_name.id().to_owned(),
        date: run_name.date().to_owned(),
        source: "local".into(),
        head_sha: head.as_ref().map(|h| h.0.clone()),
        dirty: head.map(|h| h.1),
        attempt: None,
        attempts: Vec::new(),
        partial: false,
    };
    let cells = cell_collect::merge_run(&run, inputs, &BTreeMap::from([(cell.id(), missing)]));
    let run_dir = args.out.join(run_name.to_string());
    store::write_run_dir(
        &args.out,
        &super::run_dir(run_name, &cells, None),
        store::Replace::Never,
    )
    .with_context(|| format!("writing {}", run_dir.display()))?;
    // One read of the history for the gate and the report.
    let history = super::load_history(&args.out, false)?;
    let report = gate(&plan, &history, &run_dir)?;
    print(&cells, &report, cli);
    let report_dir = write_report(&args.out, &history, &args.report.options())?;
    if !cli.quiet {
        eprintln!(
            "wrote {}",
            std::path::absolute(&run_dir).unwrap_or(run_dir).display()
        );
        eprintln!(
            "report: {}",
            report_dir.join(cell_report::report::INDEX_HTML).display()
        );
    }
    let failed = cells
        .iter()
        .any(|c| c.result.verdict.status == Status::Failed)
        || report.exit != 0;
    Ok(if failed { Exit::Gate } else { Exit::Ok })
}

/// The workload jobs asked for (every toolchain with rows by default), each checked to have
/// rows; and the reference, without which no ratio exists, must be here.
fn workload_jobs(plan: &Plan, args: &LocalArgs) -> anyhow::Result<Vec<String>> {
    if args.suite != Suite::Workload {
        return Ok(Vec::new());
    }
    let names: Vec<String> = if args.toolchains.is_empty() {
        // Toolchains with no row (a server's, say) have no workload job.
        plan.toolchains
            .values()
            .filter(|t| !t.rows.is_empty())
            .map(|t| t.name.to_string())
            .collect()
    } else {
        args.toolchains.clone()
    };
    for n in &names {
        super::with_rows(plan, n)?;
    }
    if let Err(missing) = cell_run::tools::probe(plan.reference_toolchain()) {
        anyhow::bail!(
            "the reference row `{}` cannot be built: {missing}",
            plan.settings.reference
        );
    }
    Ok(names)
}

/// One workload job, written where a workflow's artifact would put it; a toolchain that is
/// not installed is a missing job, not an error.
#[expect(
    clippy::too_many_arguments,
    reason = "the run's settings, handed to each of its jobs"
)]
fn run_one(
    plan: &Plan,
    cell: &Cell,
    name: &str,
    jobs_dir: &Path,
    args: &LocalArgs,
    seed: u64,
    cache: &cell_run::cache::Cache,
    scripted: Option<&cell_run::scripted::ScriptedTimings>,
    cli: &Cli,
) -> anyhow::Result<Ran> {
    let tc = plan.toolchain(name).map_err(anyhow::Error::msg)?;
    let missing = |conclusion: String| {
        if !cli.quiet {
            eprintln!("[{name}] {}", cell_schema::escape::terminal(&conclusion));
        }
        Ran::Missing(MissingJob {
            toolchain: tc.name.clone(),
            conclusion,
        })
    };
    // A tarball toolchain is installed by the job itself when it is not here.
    if !matches!(tc.install, cell_model::Install::Tarball(_))
        && let Err(m) = cell_run::tools::probe(tc)
    {
        return Ok(missing(m.to_string()));
    }
    let out = jobs_dir.join(store::job_artifact(cell.id().as_str(), name, "1"));
    let opts = cell_run::JobOptions {
        out: out.clone(),
        reps: args.reps,
        seed,
        scripted: scripted.cloned(),
        cache: cache.clone(),
        tarballs_always: false,
        // Earlier local runs in --out are what the gate judges this one against.
        baseline: cell_run::BaselineSource::History {
            results: args.out.clone(),
            run_units: run_units(plan, args),
        },
        // The baseline's release, when the subject is another one, by its commit's pins.
        previous_root: Some(plan.root.clone()),
    };
    let mut progress = Progress::new(cli, name);
    let result = match cell_run::run_job(plan, cell_model::LOCAL_LABEL, name, &opts, &mut |e| {
        progress.event(&e);
    }) {
        Ok(r) => r,
        Err(cell_run::JobError::Install(e)) if e.is_integrity() => {
            progress.finish();
            return Ok(Ran::Tampered(e));
        }
        // A toolchain that is not the release under test and cannot be fetched is missing;
        // the release itself, whichever job fetched it, stops the run (exit 2), as does a
        // cache someone else could have written to.
        Err(cell_run::JobError::Install(e))
            if !e.is_untrusted()
                && plan
                    .subject()
                    .is_none_or(|s| Some(s.name.as_str()) != e.toolchain()) =>
        {
            progress.finish();
            return Ok(missing(e.to_string()));
        }
        Err(e) => return Err(e).with_context(|| format!("job {name}")),
    };
    progress.finish();
    if !cli.quiet {
        eprintln!(
            "[{name}] {} in {:.1} s ({} measured rounds, {})",
            cell_report::verdict_name(&result.verdict),
            result.cost.total_s,
            result.protocol.measured_rounds,
            result.protocol.stopped
        );
    }
    let result = AnyJob::from(result);
    super::write_job(&out, &result)?;
    Ok(Ran::Done(JobInput { result, attempt: 1 }))
}

/// The most units the gate of a local run judges: every row of the toolchains asked for.
fn run_units(plan: &Plan, args: &LocalArgs) -> usize {
    let asked = |t: &&cell_model::Toolchain| {
        args.toolchains.is_empty() || args.toolchains.iter().any(|n| n == t.name.as_str())
    };
    cell_verdict::planned_units(plan, plan.toolchains.values().filter(asked))
}

/// What became of one local job.
enum Ran {
    Done(JobInput),
    Missing(MissingJob),
    /// A tarball whose bytes are not the release's.
    Tampered(cell_run::install::InstallError),
}

/// The gate against earlier local runs in the same `--out`, with the inputs `cell gate` takes,
/// its report written beside the run.
fn gate(plan: &Plan, history: &store::History, run_dir: &Path) -> anyhow::Result<GateReport> {
    let this = store::load_run(run_dir)?;
    let mut config = GateConfig::from_plan(plan, None, this.cells.keys());
    // A scripted run (tests only) may be judged against the runs before it in --out; a real
    // run keeps the gate's refusal of any scripted run in its history.
    config.allow_scripted = this.scripted();
    let report = cell_verdict::gate_history(&this, history, &config)?;
    store::write_gate(run_dir, &report).context("writing gate.json")?;
    Ok(report)
}

fn print(cells: &[MergedCell], report: &GateReport, cli: &Cli) {
    let results: Vec<_> = cells.iter().map(|c| c.result.clone()).collect();
    match cli.format {
        Format::Json => print!(
            "{}",
            cell_schema::to_json(&serde_json::json!({ "cells": results, "gate": report }))
        ),
        Format::Human => {
            print!(
                "{}",
                cell_schema::escape::terminal(&cell_report::text_summary(&results))
            );
            print!(
                "{}",
                cell_schema::escape::terminal(&cell_report::gate::human(report))
            );
        }
    }
}

/// The report over every local run in `out`, as `cell report` would write it.
fn write_report(
    out: &Path,
    history: &store::History,
    options: &cell_report::report::ReportOptions,
) -> anyhow::Result<PathBuf> {
    let page = cell_report::report::Report::build(&history.runs, options);
    let report_dir = out.join(store::REPORT_DIR);
    cell_report::report::write(&page, &report_dir).context("writing the report")?;
    Ok(report_dir)
}

/// `<date>-local-<stamp>`, with `-2`, `-3`, … when a run of the same second is there.
fn free_run_name(out: &Path, date: &str, stamp: &str) -> anyhow::Result<RunDirName> {
    let mut id = format!("local-{stamp}");
    for n in 2.. {
        let name = RunDirName::new(date, &id)?;
        if !out.join(name.to_string()).exists()
            && !out.join(store::JOBS_DIR).join(name.to_string()).exists()
        {
            return Ok(name);
        }
        id = format!("local-{stamp}-{n}");
    }
    unreachable!("some suffix is free")
}
