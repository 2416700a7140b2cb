//! One module per subcommand; each returns the exit it ends with.

pub mod calibrate;
pub mod collect;
pub mod comment;
pub mod commit;
pub mod fetch;
pub mod gate;
pub mod import;
pub mod init;
pub mod install;
pub mod local;
pub mod plan;
pub mod report;
pub mod run;
pub mod suite;

use anyhow::Context as _;
use cell_schema::store;

use crate::cli::{Cli, Command, SchemaKind};
use crate::exit::Exit;

/// Runs the chosen subcommand.
pub fn dispatch(cli: &Cli) -> anyhow::Result<Exit> {
    match &cli.command {
        Command::Fetch(args) => fetch::run(args, cli),
        Command::Run(args) => run::run(args, cli),
        Command::Install(args) => install::run(args, cli),
        Command::Local(args) => local::run(args, cli),
        Command::Plan(args) => plan::run(args, cli),
        Command::Init(args) => init::run(args, cli),
        Command::Collect(args) => collect::run(args, cli),
        Command::Comment(args) => comment::run(args, cli),
        Command::PrJson(args) => comment::write_pr_json(args, cli),
        Command::Commit(args) => commit::run(args, cli),
        Command::ResultsBranch(args) => commit::results_branch(args, cli),
        Command::Report(args) => report::run(args, cli),
        Command::Gate(args) => gate::run(args, cli),
        Command::Calibrate(args) => calibrate::run(args, cli),
        Command::Import(args) => import::run(args, cli),
        Command::Schema(args) => {
            let version = args.schema_version.unwrap_or(cell_schema::SCHEMA_VERSION);
            if version != cell_schema::SCHEMA_VERSION {
                let frozen = (args.kind == SchemaKind::Results)
                    .then(|| cell_schema::results_schema_of(version))
                    .flatten();
                let Some(text) = frozen else {
                    anyhow::bail!(
                        "--schema-version {version}: this cell writes version {} and reads results.json of version 1 too (cell schema results --schema-version 1); the other files have one version",
                        cell_schema::SCHEMA_VERSION
                    );
                };
                print!("{text}");
                return Ok(Exit::Ok);
            }
            let schema = match args.kind {
                SchemaKind::Results => cell_schema::results_schema(),
                SchemaKind::Facts => cell_schema::facts_schema(),
                SchemaKind::Gate => cell_schema::gate_schema(),
                SchemaKind::ImportedSoak => cell_schema::imported_soak_schema(),
                SchemaKind::Pr => cell_schema::pr_schema(),
            };
            print!("{}", cell_schema::to_json(&schema));
            Ok(Exit::Ok)
        }
    }
}

/// Reads the history under `dir`. A file the store left out is a notice on stderr naming it;
/// with `strict` (`--strict`), any such file is an error naming every one.
pub fn load_history(dir: &std::path::Path, strict: bool) -> anyhow::Result<store::History> {
    let history = store::load_history(dir).context("reading the history")?;
    if strict && !history.skipped.is_empty() {
        let files: Vec<String> = history
            .skipped
            .iter()
            .map(|s| format!("  {}: {}", s.path.display(), s.reason))
            .collect();
        anyhow::bail!(
            "--strict: {} history file(s) cannot be used; fix or remove each:\n{}",
            files.len(),
            files.join("\n")
        );
    }
    notice_skipped(&history);
    Ok(history)
}

/// The part of the history under `dir` the gate of `run` reads
/// ([`cell_verdict::needed_history`]): each file it read and left out is a notice on stderr,
/// as [`load_history`] prints them; the files it does not reach are not read.
pub fn needed_history(
    dir: &std::path::Path,
    run: &store::HistoryRun,
    config: &cell_verdict::GateConfig,
) -> anyhow::Result<store::History> {
    let index = store::HistoryIndex::open(dir).context("listing the history")?;
    let history =
        cell_verdict::needed_history(run, &index, config).context("reading the history")?;
    notice_skipped(&history);
    Ok(history)
}

fn notice_skipped(history: &store::History) {
    for s in &history.skipped {
        eprintln!("notice: {}", s.notice());
    }
}

/// Loads and resolves the plan under `--root`.
pub fn load_plan(cli: &Cli) -> anyhow::Result<cell_model::Plan> {
    cell_model::Plan::load(&cli.root)
        .with_context(|| format!("loading the cell definition under {}", cli.root.display()))
}

/// The plan as it was at commit `rev` of the checkout at `--root` (its tree without
/// `results/`, unpacked into `scratch`): a collect judges a run by the thresholds it ran with, not by
/// the branch tip's.
pub fn load_plan_at(
    cli: &Cli,
    rev: &str,
    scratch: &std::path::Path,
) -> anyhow::Result<cell_model::Plan> {
    anyhow::ensure!(
        !rev.is_empty() && !rev.starts_with('-') && rev.bytes().all(|b| b.is_ascii_graphic()),
        "--config-rev `{}`: name a commit (a SHA or a ref)",
        cell_schema::escape::one_line(rev)
    );
    cell_run::plan_at(&cli.root, rev, scratch).map_err(anyhow::Error::msg)
}

/// A toolchain that has workload rows; one without (a server's) says where its servers run.
pub fn with_rows<'a>(
    plan: &'a cell_model::Plan,
    name: &str,
) -> anyhow::Result<&'a cell_model::Toolchain> {
    let tc = plan.toolchain(name).map_err(anyhow::Error::msg)?;
    if tc.rows.is_empty() {
        let servers: Vec<String> = plan
            .http
            .iter()
            .flat_map(|h| h.servers.values())
            .filter(|s| s.toolchain == tc.name)
            .map(|s| format!("--suite http --server {}", s.name))
            .collect();
        anyhow::bail!(
            "toolchain `{name}` has no workload rows: it only builds or runs servers ({})",
            if servers.is_empty() {
                "none".into()
            } else {
                servers.join(", ")
            }
        );
    }
    Ok(tc)
}

/// Renders a job's files and writes its job dir.
pub fn write_job(dir: &std::path::Path, job: &cell_schema::AnyJob) -> anyhow::Result<()> {
    cell_schema::store::write_job_dir(dir, &cell_report::job_dir(job))
        .with_context(|| format!("writing the job dir {}", dir.display()))
}

/// A run dir of merged cells, rendered.
pub fn run_dir<'a>(
    name: cell_schema::store::RunDirName,
    cells: &'a [cell_collect::MergedCell],
    record: Option<&'a cell_schema::RunRecord>,
) -> cell_schema::store::RunDir<'a> {
    cell_schema::store::RunDir {
        name,
        cells: cells
            .iter()
            .map(|c| cell_report::cell_dir(&c.result, &c.facts))
            .collect(),
        record,
        imported_soak: None,
    }
}

/// The hidden `--scripted-timings FILE` of `cell run` and `cell local`, read.
pub fn scripted_timings(
    path: Option<&std::path::Path>,
) -> anyhow::Result<Option<cell_run::scripted::ScriptedTimings>> {
    path.map(cell_run::scripted::ScriptedTimings::load)
        .transpose()
        .map_err(anyhow::Error::from)
}

#[cfg(test)]
mod tests {
    /// The caps versions.env writes by default are the ones `cell fetch` and `cell collect`
    /// apply without it: one set of figures, told in two places that must agree.
    #[test]
    fn the_default_unpack_caps_agree_with_versions_env() {
        let env = cell_model::VersionsEnv::parse(std::path::Path::new("versions.env"), "").unwrap();
        let s = cell_model::Settings::from_env(&env).unwrap();
        assert_eq!(
            cell_run::install::unpack_options(&s.unpack),
            cell_fetch::UnpackOptions::default()
        );
        assert_eq!(
            cell_run::install::unpack_options(&s.artifact_unpack),
            cell_collect::Options::artifact_caps()
        );
    }
}
