//! `cell local`: every job this machine can run, merged into one run dir.

use std::collections::BTreeMap;

use std::path::Path;

use anyhow::Context as _;
use cell_collect::JobInput;
use cell_model::Cell;
use cell_schema::store::{self, RunDirName};
use cell_schema::{AnyJob, MissingJob, RunInfo, Status};
use cell_verdict::GateConfig;

use crate::cli::{Cli, Format, LocalArgs, Suite};
use crate::exit::Exit;
use crate::progress::Progress;

/// Runs the local matrix.
pub fn run(args: &LocalArgs, cli: &Cli) -> anyhow::Result<Exit> {
    let plan = super::load_plan(cli)?;
    let cell = Cell::local();
    let workload = args.suite == Suite::Workload;
    let names: Vec<String> = if !workload {
        Vec::new()
    } else if args.toolchains.is_empty() {
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
        super::with_rows(&plan, n)?;
    }
    // The reference must be here: without it no ratio exists.
    let ref_tc = plan.reference_toolchain();
    if workload && let Err(missing) = cell_run::tools::probe(ref_tc) {
        anyhow::bail!(
            "the reference row `{}` cannot be built: {missing}",
            plan.settings.reference
        );
    }

    let (date, stamp) = crate::clock::utc_now();
    let run_name = free_run_name(&args.out, &date, &stamp)?;
    let run_dir = args.out.join(run_name.to_string());
    let jobs_dir = args.out.join("jobs").join(run_name.to_string());
    let seed = args.seed.unwrap_or_else(crate::clock::clock_seed);
    let scripted = super::scripted_timings(args.scripted_timings.as_deref())?;

    let mut inputs = Vec::new();
    let mut missing = Vec::new();
    if !workload {
        (inputs, missing) = super::suite::local(&plan, args, cli, &jobs_dir, seed)?;
    }
    for name in &names {
        let tc = plan.toolchain(name).map_err(anyhow::Error::msg)?;
        if let Err(m) = cell_run::tools::probe(tc) {
            if !cli.quiet {
                eprintln!("[{name}] {m}");
            }
            missing.push(MissingJob {
                toolchain: tc.name.clone(),
                conclusion: m.to_string(),
            });
            continue;
        }
        let out = jobs_dir.join(format!("cell-{}-{name}-a1", cell.id()));
        let opts = cell_run::JobOptions {
            out: out.clone(),
            reps: args.reps,
            seed,
            scripted: scripted.clone(),
        };
        let mut progress = Progress::new(cli, name);
        let result = cell_run::run_job(&plan, cell_model::LOCAL_LABEL, name, &opts, &mut |e| {
            progress.event(&e);
        })
        .with_context(|| format!("job {name}"))?;
        progress.finish();
        let result = AnyJob::from(result);
        super::write_job(&out, &result)?;
        if !cli.quiet
            && let AnyJob::Workload(r) = &result
        {
            eprintln!(
                "[{name}] {:?} in {:.1} s ({} measured rounds)",
                r.verdict.status, r.cost.total_s, r.protocol.measured_rounds
            );
        }
        inputs.push(JobInput { result, attempt: 1 });
    }

    let run = RunInfo {
        id: run_name.id().to_owned(),
        date: run_name.date().to_owned(),
        source: "local".into(),
        head_sha: None,
        attempt: None,
        partial: false,
    };
    let missing_by_cell = BTreeMap::from([(cell.id(), missing)]);
    let cells = cell_collect::merge_run(&run, inputs, &missing_by_cell);
    let dir = super::run_dir(run_name, &cells, None);
    store::write_run_dir(&args.out, &dir, false)
        .with_context(|| format!("writing {}", run_dir.display()))?;
    let results: Vec<_> = cells.iter().map(|c| c.result.clone()).collect();
    // The gate against earlier local runs in the same --out, with the inputs `cell gate` takes.
    let history = store::load_history(&args.out)?;
    let this = store::load_run(&run_dir)?;
    let mut config = GateConfig::from_plan(&plan, None, this.cells.keys())?;
    config.allow_scripted = this.scripted();
    let report = cell_verdict::gate(&this, &history, &config)?;
    store::write_files(
        &run_dir,
        &[store::Output::new(
            store::GATE_JSON,
            cell_schema::to_json(&report).into_bytes(),
        )],
    )
    .context("writing gate.json")?;
    match cli.format {
        Format::Json => print!(
            "{}",
            cell_schema::to_json(&serde_json::json!({ "cells": results, "gate": report }))
        ),
        Format::Human => {
            print!("{}", cell_report::text_summary(&results));
            print!("{}", cell_report::gate::human(&report));
        }
    }
    // And the report over every local run in --out, as `cell report` would write it.
    let page = cell_report::report::Report::build(&history);
    let report_dir = args.out.join("report");
    cell_report::report::write(&page, &report_dir).context("writing the report")?;
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
    let failed = results.iter().any(|c| c.verdict.status == Status::Failed) || report.exit != 0;
    Ok(if failed { Exit::Gate } else { Exit::Ok })
}

/// `<date>-local-<stamp>`, with `-2`, `-3`, … when a run of the same second is there.
fn free_run_name(out: &Path, date: &str, stamp: &str) -> anyhow::Result<RunDirName> {
    let mut id = format!("local-{stamp}");
    for n in 2.. {
        let name = RunDirName::new(date, &id)?;
        if !out.join(name.to_string()).exists() && !out.join("jobs").join(name.to_string()).exists()
        {
            return Ok(name);
        }
        id = format!("local-{stamp}-{n}");
    }
    unreachable!("some suffix is free")
}
