//! `cell run`: one job.

use anyhow::Context as _;

use crate::cli::{Cli, Format, RunArgs, Suite};
use crate::exit::Exit;
use crate::progress::Progress;

/// Where a workflow's job reads the baseline the gate will use: the checkout's committed
/// history (`--history`, else `results/`), which a run whose results live on another branch
/// does not hold. The run's gate judges every job of the plan's matrix.
fn baseline_source(plan: &cell_model::Plan, args: &RunArgs) -> cell_run::BaselineSource {
    if args.history.is_none()
        && let Some(branch) = &plan.workflow.results_branch
    {
        return cell_run::BaselineSource::None(format!(
            "the results live on the branch `{branch}` (workflow.results_branch), which a job does not fetch: each row aims at CI_TARGET"
        ));
    }
    let per_cell = cell_verdict::planned_units(plan, plan.toolchains.values());
    cell_run::BaselineSource::History {
        results: args
            .history
            .clone()
            .unwrap_or_else(|| plan.root.join(cell_schema::store::RESULTS_DIR)),
        run_units: per_cell * plan.cells.len().max(1),
    }
}

/// Runs one job and prints its table.
pub fn run(args: &RunArgs, cli: &Cli) -> anyhow::Result<Exit> {
    if args.suite != Suite::Workload {
        return super::suite::run(args, cli);
    }
    let Some(toolchain) = args.toolchain.clone() else {
        anyhow::bail!(
            "cell run needs --toolchain NAME for the workload suite (or --suite http|soak --server NAME)"
        );
    };
    let plan = super::load_plan(cli)?;
    super::with_rows(&plan, &toolchain)?;
    let opts = cell_run::JobOptions {
        out: args.out.clone(),
        reps: args.reps,
        seed: args.seed.unwrap_or_else(crate::clock::clock_seed),
        scripted: super::scripted_timings(args.scripted_timings.as_deref())?,
        cache: cell_run::cache::Cache::from_env()?,
        tarballs_always: true,
        baseline: baseline_source(&plan, args),
        // The baseline's release, when the subject is another one, by its commit's pins.
        previous_root: Some(plan.root.clone()),
    };
    let mut progress = Progress::new(cli, &toolchain);
    let result = match cell_run::run_job(&plan, &args.cell, &toolchain, &opts, &mut |e| {
        progress.event(&e);
    }) {
        Ok(r) => r,
        Err(cell_run::JobError::Install(e)) if e.is_integrity() => {
            progress.finish();
            eprintln!("Error: {}", cell_schema::escape::terminal(&e.to_string()));
            return Ok(Exit::Gate);
        }
        Err(e) => {
            return Err(e)
                .with_context(|| format!("cell run --cell {} --toolchain {toolchain}", args.cell));
        }
    };
    progress.finish();
    let result = cell_schema::AnyJob::from(result);
    super::write_job(&args.out, &result)?;
    match cli.format {
        Format::Json => print!("{}", cell_schema::to_json(&result)),
        Format::Human => print!(
            "{}",
            cell_schema::escape::terminal(&cell_report::any_job_text(&result))
        ),
    }
    if !cli.quiet {
        eprintln!(
            "wrote {}",
            std::path::absolute(&args.out)
                .unwrap_or_else(|_| args.out.clone())
                .display()
        );
    }
    Ok(if result.verdict().status == cell_schema::Status::Failed {
        Exit::Gate
    } else {
        Exit::Ok
    })
}
