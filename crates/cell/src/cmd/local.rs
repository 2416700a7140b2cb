//! `cell local`: every job this machine can run, merged into one run dir.

use std::collections::BTreeMap;

use anyhow::Context as _;
use cell_collect::JobInput;
use cell_model::Cell;
use cell_schema::{MissingJob, RunInfo, Status};

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
    // Two runs in the same second must not share a directory.
    let mut stamp = stamp;
    let base = stamp.clone();
    for n in 2.. {
        if !args.out.join(format!("{date}-local-{stamp}")).exists()
            && !args
                .out
                .join("jobs")
                .join(format!("{date}-local-{stamp}"))
                .exists()
        {
            break;
        }
        stamp = format!("{base}-{n}");
    }
    let run_name = format!("{date}-local-{stamp}");
    let run_dir = args.out.join(&run_name);
    let jobs_dir = args.out.join("jobs").join(&run_name);
    let seed = args.seed.unwrap_or_else(crate::clock::clock_seed);

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
        };
        let mut progress = Progress::new(cli, name);
        let result = cell_run::run_job(&plan, cell_model::LOCAL_LABEL, name, &opts, &mut |e| {
            progress.event(&e);
        })
        .with_context(|| format!("job {name}"))?;
        progress.finish();
        if !cli.quiet {
            eprintln!(
                "[{name}] {:?} in {:.1} s ({} measured rounds)",
                result.verdict.status, result.cost.total_s, result.protocol.measured_rounds
            );
        }
        inputs.push(JobInput {
            result: result.into(),
            attempt: 1,
        });
    }

    let run = RunInfo {
        id: format!("local-{stamp}"),
        date,
        source: "local".into(),
        head_sha: None,
        attempt: None,
        partial: false,
    };
    let missing_by_cell = BTreeMap::from([(cell.id(), missing)]);
    let cells = cell_collect::merge_run(&run, inputs, &missing_by_cell);
    cell_collect::write_run_dir(&run_dir, &cells)
        .with_context(|| format!("writing {}", run_dir.display()))?;
    let results: Vec<_> = cells.iter().map(|c| c.result.clone()).collect();
    // The gate against earlier local runs in the same --out, as `cell gate` would.
    let history = cell_report::history::load_history(&args.out)?;
    let this = cell_report::history::load_run(&run_dir)?;
    let report = cell_report::gate::gate(&this, &history, &super::gate::config(&plan, None), &[])?;
    cell_schema::write_atomic(
        &run_dir.join("gate.json"),
        cell_schema::to_json(&report).as_bytes(),
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
