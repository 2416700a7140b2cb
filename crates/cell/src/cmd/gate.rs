//! `cell gate`: a run against the committed history.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::PathBuf;

use anyhow::Context as _;
use cell_report::gate::{GateConfig, annotations, gate, human, step_summary};
use clap::Args;

use crate::cli::{Cli, Format};
use crate::exit::Exit;

/// `cell gate RUN_DIR [--history DIR]`.
#[derive(Debug, Args)]
pub struct GateArgs {
    /// The run directory to judge (`results/<date>-<run-id>`).
    pub run_dir: PathBuf,
    /// The committed history (default: the run directory's parent).
    #[arg(long)]
    pub history: Option<PathBuf>,
    /// Compare against this run (`<date>-<run-id>`) instead of the newest (overrides BASELINE).
    #[arg(long)]
    pub baseline: Option<String>,
}

/// The gate's view of the checked-in configuration.
pub fn config(plan: &cell_model::Plan, baseline: Option<String>) -> GateConfig {
    let s = &plan.settings;
    GateConfig {
        http_tolerance: plan.settings.http_tolerance,
        tolerance: s.tolerance,
        health_threshold: s.health_threshold,
        tooth: (
            plan.tooth.slow.clone(),
            plan.tooth.fast.clone(),
            s.tooth_phase.clone(),
        ),
        tooth_floor: ["x86_64", "aarch64"]
            .iter()
            .map(|a| ((*a).to_owned(), s.tooth_min(a)))
            .collect(),
        default_floor: s.tooth_min(""),
        rows: plan
            .toolchains
            .values()
            .map(|t| (t.name.clone(), t.rows.clone()))
            .collect(),
        digests: plan
            .env
            .entries
            .iter()
            .filter(|(k, _)| k.contains("SHA256"))
            .map(|(k, e)| (k.clone(), e.value.clone()))
            .collect::<BTreeMap<_, _>>(),
        baseline: baseline.or_else(|| s.baseline.clone()),
        calibration: BTreeMap::new(),
    }
}

/// Runs `cell gate`.
pub fn run(args: &GateArgs, cli: &Cli) -> anyhow::Result<Exit> {
    let plan = super::load_plan(cli)?;
    let run_dir = std::path::absolute(&args.run_dir).context("resolving the run directory")?;
    let run = cell_report::history::load_run(&run_dir)?;
    anyhow::ensure!(
        !run.cells.is_empty(),
        "{}: no <cell-id>/results.json under it: is it a run directory?",
        run_dir.display()
    );
    let history_dir = args.history.clone().unwrap_or_else(|| {
        run_dir
            .parent()
            .map_or_else(|| PathBuf::from("."), PathBuf::from)
    });
    let history = cell_report::history::load_history(&history_dir)?;
    let missing = read_missing(&run_dir.join("run.json"))?;
    let mut cfg = config(&plan, args.baseline.clone());
    for id in run.cells.keys() {
        let path = plan.calibration_path(id);
        if path.is_file() {
            let text = std::fs::read_to_string(&path)
                .with_context(|| format!("reading {}", path.display()))?;
            let cal: cell_schema::Calibration = serde_json::from_str(&text).with_context(|| {
                format!(
                    "{}: not a calibration file (rerun cell calibrate)",
                    path.display()
                )
            })?;
            cfg.calibration.insert(id.to_string(), cal);
        }
    }
    let report = gate(&run, &history, &cfg, &missing)?;
    cell_schema::write_atomic(
        &run_dir.join("gate.json"),
        cell_schema::to_json(&report).as_bytes(),
    )
    .context("writing gate.json")?;
    match cli.format {
        Format::Json => print!("{}", cell_schema::to_json(&report)),
        Format::Human => print!("{}", human(&report)),
    }
    if std::env::var("GITHUB_ACTIONS").as_deref() == Ok("true") {
        print!("{}", annotations(&report, 10));
    }
    if let Some(path) = std::env::var_os("GITHUB_STEP_SUMMARY").filter(|p| !p.is_empty()) {
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .context("opening $GITHUB_STEP_SUMMARY")?;
        f.write_all(step_summary(&report, 1 << 20).as_bytes())
            .context("writing $GITHUB_STEP_SUMMARY")?;
    }
    Ok(if report.exit == 0 {
        Exit::Ok
    } else {
        Exit::Gate
    })
}

fn read_missing(path: &std::path::Path) -> anyhow::Result<Vec<String>> {
    if !path.is_file() {
        return Ok(Vec::new());
    }
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let record: cell_schema::RunRecord = serde_json::from_str(&text)
        .with_context(|| format!("{}: not a run record", path.display()))?;
    Ok(record.missing)
}
