//! `cell import`: the Python cell's committed history → run dirs under `results/`, each cell
//! marked imported (`cell_schema::upstream` reads the old files, the store writes); and
//! `--versions-env OLD`, its `versions.env` in this tool's keys (`cell_model::import`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use cell_schema::store::{self, RunDirName, StoreError, Written};
use cell_schema::upstream::{self, Found, Import};
use cell_schema::{CellResult, ImportedSoakRun};
use clap::Args;

use crate::cli::{Cli, Format};
use crate::exit::Exit;

/// `cell import DIR [--results DIR]`, `cell import --versions-env OLD`.
#[derive(Debug, Args)]
pub struct ImportArgs {
    /// The old history: a directory holding `results/<date>-<run-id>/<cell-id>/results.json`
    /// and `soak/<date>-<run-id>/results.json`, one run directory, or one `results.json`.
    #[arg(required_unless_present = "versions_env")]
    pub dir: Option<PathBuf>,
    /// Where the run dirs are written.
    #[arg(long, value_name = "DIR", default_value = "results")]
    pub results: PathBuf,
    /// Print the old `versions.env` in this tool's keys, with every key it cannot map and
    /// why (nothing is written).
    #[arg(long, value_name = "OLD", conflicts_with = "dir")]
    pub versions_env: Option<PathBuf>,
}

/// One run dir to write: its cells and its soak, with the files they came from.
#[derive(Default)]
struct Group {
    cells: Vec<CellResult>,
    soak: Option<ImportedSoakRun>,
    from: Vec<String>,
}

/// Runs `cell import`.
pub fn run(args: &ImportArgs, cli: &Cli) -> anyhow::Result<Exit> {
    if let Some(old) = &args.versions_env {
        return versions_env(old);
    }
    let dir = args
        .dir
        .as_deref()
        .context("name the old history: cell import DIR")?;
    let found = upstream::find(dir).context("reading the old history")?;
    anyhow::ensure!(
        !found.is_empty(),
        "{}: no results.json under it: name the old history (its results/ and soak/), a run directory or one results.json",
        dir.display()
    );
    // Every file is read before anything is written: one refused file leaves results/ as it was.
    let mut groups: BTreeMap<RunDirName, Group> = BTreeMap::new();
    let mut refused = Vec::new();
    for f in &found {
        match read_one(f) {
            Ok(import) => {
                if let Err(e) = add(&mut groups, import, &f.rel) {
                    refused.push(format!("  {}: {e}", f.path.display()));
                }
            }
            Err(e) => refused.push(format!("  {}: {e:#}", f.path.display())),
        }
    }
    anyhow::ensure!(
        refused.is_empty(),
        "{} file(s) cannot be imported; nothing was written:\n{}",
        refused.len(),
        refused.join("\n")
    );
    write(&groups, &args.results, cli)
}

/// One old file, read once: its digest is of the bytes parsed.
fn read_one(f: &Found) -> anyhow::Result<Import> {
    let mut bytes = Vec::new();
    let file = std::fs::File::open(&f.path)?;
    std::io::Read::read_to_end(
        &mut std::io::Read::take(file, upstream::MAX_FILE_BYTES + 1),
        &mut bytes,
    )?;
    anyhow::ensure!(
        bytes.len() as u64 <= upstream::MAX_FILE_BYTES,
        "larger than {} MiB: no results.json of the Python cell is",
        upstream::MAX_FILE_BYTES >> 20
    );
    let sha = cell_fetch::hash_bytes(&bytes);
    let text = String::from_utf8(bytes).map_err(|_| anyhow::anyhow!("not UTF-8: not JSON"))?;
    let import = upstream::read(&text, &f.rel, &sha)?;
    if let Import::Cell { result, .. } = &import {
        let problems = cell_schema::validate::cell_result(result);
        anyhow::ensure!(
            problems.is_empty(),
            "{}",
            problems
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("; ")
        );
    }
    Ok(import)
}

/// Files `import` into its run's group; two files for one cell (or two soaks) of one run
/// are an error, since neither may hide the other.
fn add(groups: &mut BTreeMap<RunDirName, Group>, import: Import, rel: &str) -> anyhow::Result<()> {
    let g = groups.entry(import.name().clone()).or_default();
    match import {
        Import::Cell { name, result } => {
            if let Some(c) = g.cells.iter().find(|c| c.cell.id == result.cell.id) {
                anyhow::bail!(
                    "cell {} of run {name} is also in {}: one file per cell and run",
                    c.cell.id,
                    c.imported.as_ref().map_or("", |i| i.source.path.as_str())
                );
            }
            g.cells.push(*result);
        }
        Import::Soak { name, record } => {
            if let Some(s) = &g.soak {
                anyhow::bail!(
                    "the soak of run {name} is also in {}: one soak file per run",
                    s.source.path
                );
            }
            g.soak = Some(*record);
        }
    }
    g.from.push(rel.to_owned());
    Ok(())
}

/// Checks every run dir (its names, the length of every path it takes, what stands there
/// already), then writes the new ones: a run dir that cannot be written stops the import
/// before anything is written.
fn write(groups: &BTreeMap<RunDirName, Group>, results: &Path, cli: &Cli) -> anyhow::Result<Exit> {
    let no_facts = BTreeMap::new();
    let dirs: Vec<(store::RunDir<'_>, &Group)> = groups
        .iter()
        .map(|(name, g)| {
            let dir = store::RunDir {
                name: name.clone(),
                cells: g
                    .cells
                    .iter()
                    .map(|c| cell_report::cell_dir(c, &no_facts))
                    .collect(),
                record: None,
                imported_soak: g.soak.as_ref(),
            };
            (dir, g)
        })
        .collect();
    let mut states = Vec::new();
    let mut refused = Vec::new();
    for (d, _) in &dirs {
        match store::check_run_dir(results, d) {
            Ok(state) => states.push(state),
            Err(e @ StoreError::Exists(_)) => refused.push(format!(
                "  {}: only an identical import may stand there: {e}",
                d.name
            )),
            Err(e) => refused.push(format!("  {}: {e}", d.name)),
        }
    }
    anyhow::ensure!(
        refused.is_empty(),
        "{} run dir(s) cannot be written; nothing was written:\n{}",
        refused.len(),
        refused.join("\n")
    );
    let mut report = Vec::new();
    for ((d, g), state) in dirs.iter().zip(states) {
        if state == Written::New {
            // Past the checks, a failure (a full disk) leaves this run dir out whole; the ones
            // before it stay, each an identical import that the next `cell import` passes over.
            store::write_run_dir(results, d, store::Replace::Never).with_context(|| {
                format!(
                    "writing {} (the run dirs before it are written, each whole: fix this and run the same import again, which passes over them)",
                    results.join(d.name.to_string()).display()
                )
            })?;
        }
        report.push((results.join(d.name.to_string()), state, &g.from));
    }
    print_report(&report, cli);
    Ok(Exit::Ok)
}

fn print_report(report: &[(PathBuf, Written, &Vec<String>)], cli: &Cli) {
    let new = report.iter().filter(|(_, s, _)| *s == Written::New).count();
    match cli.format {
        Format::Json => {
            let runs: Vec<serde_json::Value> = report
                .iter()
                .map(|(path, state, from)| {
                    serde_json::json!({
                        "run_dir": path.display().to_string(),
                        "written": *state == Written::New,
                        "from": from,
                    })
                })
                .collect();
            print!(
                "{}",
                cell_schema::to_json(&serde_json::json!({ "runs": runs }))
            );
        }
        Format::Human => {
            for (path, state, from) in report {
                let what = if *state == Written::New {
                    "imported"
                } else {
                    "already imported, nothing written:"
                };
                let line = format!("{what} {} ← {}", path.display(), from.join(", "));
                println!("{}", cell_schema::escape::terminal(&line));
            }
        }
    }
    if !cli.quiet {
        if new == 0 {
            eprintln!("nothing new: every run dir already holds this import");
        } else {
            eprintln!(
                "{new} run dir(s) written, {} already there",
                report.len() - new
            );
        }
    }
}

/// `--versions-env OLD`: the lines on stdout, checked the way this tool reads them.
fn versions_env(old: &Path) -> anyhow::Result<Exit> {
    let text =
        std::fs::read_to_string(old).with_context(|| format!("reading {}", old.display()))?;
    let t = cell_model::import::translate_versions_env(&text);
    let name = old.file_name().map_or_else(
        || old.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    print!("{}", cell_schema::escape::terminal(&t.render(&name)));
    t.settings()
        .context("the translated lines are not settings this tool accepts")?;
    if !t.unmapped.is_empty() {
        eprintln!(
            "{} key(s) not mapped, each named with why at the end",
            t.unmapped.len()
        );
    }
    Ok(Exit::Ok)
}
