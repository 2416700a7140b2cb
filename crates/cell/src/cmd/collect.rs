//! `cell collect`: a run's artifacts → `results/<run-date>-<run-id>/`, optionally committed
//! and pushed.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context as _;
use cell_collect::{Options, Source, collect, git};
use cell_fetch::Timeouts;
use cell_github::{Github, GithubError, Settings};
use cell_schema::store::{self, Replace, Written};
use cell_schema::{RunId, Status, escape};
use clap::Args;

use super::commit::{Push, commit_run};
use crate::cli::{Cli, Format};
use crate::exit::Exit;

/// `cell collect RUN_ID [--repo OWNER/NAME] [--from-dir DIR] [--results DIR] [--commit] [--push]`.
#[derive(Debug, Args)]
#[expect(
    clippy::struct_excessive_bools,
    reason = "each bool is a command-line flag"
)]
pub struct CollectArgs {
    /// The workflow run id.
    pub run_id: u64,
    /// `owner/name` (default: `GITHUB_REPOSITORY`, else the `origin` remote).
    #[arg(long)]
    pub repo: Option<String>,
    /// Merge artifacts already downloaded into DIR instead of calling the GitHub API.
    #[arg(long, value_name = "DIR")]
    pub from_dir: Option<PathBuf>,
    /// The results directory (committed history).
    #[arg(long, default_value = "results")]
    pub results: PathBuf,
    /// With --from-dir: the run's date (YYYY-MM-DD); default the earliest job's start date.
    #[arg(long, value_name = "YYYY-MM-DD", value_parser = run_date)]
    pub date: Option<String>,
    /// Overwrite an existing run dir whose content differs, whatever attempts it holds
    /// (without it, only a strictly later attempt of the run replaces it, and only when every
    /// job it holds is in this collect from an attempt at least as new).
    #[arg(long)]
    pub replace: bool,
    /// Write nothing unless every job left a result (by default missing, expired or corrupt
    /// artifacts make the run partial, listed in run.json, and the rest is written).
    #[arg(long)]
    pub complete: bool,
    /// Accepted for older workflows: writing a partial run is the default now.
    #[arg(long, hide = true)]
    pub allow_partial: bool,
    /// Append `run-dir=<path>` to FILE once the run dir is written (the workflow passes its
    /// step output file).
    #[arg(long, value_name = "FILE")]
    pub outputs: Option<PathBuf>,
    /// Commit the run dir (one commit naming the run, its cells and its verdict).
    #[arg(long)]
    pub commit: bool,
    /// Push the commit, rebasing and retrying when the remote moved on.
    #[arg(long, requires = "commit")]
    pub push: bool,
    /// The remote to push to.
    #[arg(long, default_value = "origin")]
    pub remote: String,
    /// Give up on the GitHub API after this many seconds for the whole collect (exit 2, naming
    /// the request that was still waiting).
    #[arg(long, value_name = "SECONDS", default_value_t = 900)]
    pub timeout: u64,
    /// Check every job's figures and answers with the configuration of this commit (the run's
    /// own, as `cell gate --config-rev`), not the checkout's.
    #[arg(long, value_name = "REV")]
    pub config_rev: Option<String>,
    /// Seconds a request may receive nothing before it is retried (tests shorten it).
    #[arg(long, hide = true, value_name = "SECONDS", default_value_t = 60)]
    pub idle_timeout: u64,
}

/// A `--date` that is not a calendar day: the run dir would be named so that gate and report
/// never find it.
#[derive(Debug)]
pub struct BadDate;

impl std::fmt::Display for BadDate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("write a calendar date as YYYY-MM-DD, e.g. 2026-03-09")
    }
}

impl std::error::Error for BadDate {}

/// `--date`: `YYYY-MM-DD` of a day the calendar has (no 2026-02-30).
fn run_date(s: &str) -> Result<String, BadDate> {
    cell_schema::time::Date::parse(s)
        .map(|d| d.to_string())
        .ok_or(BadDate)
}

/// Runs `cell collect`.
pub fn run(args: &CollectArgs, cli: &Cli) -> anyhow::Result<Exit> {
    let run_id = RunId(args.run_id);
    let github;
    let source = if let Some(dir) = &args.from_dir {
        Source::Dir(dir.clone())
    } else {
        github = match client(args, cli) {
            Ok(g) => g,
            Err(e) => {
                eprintln!("Error: {e}");
                return Ok(Exit::Infra);
            }
        };
        Source::Api {
            github: &github,
            repo: repo(args.repo.as_deref())?,
        }
    };
    let scratch = tempfile::tempdir().context("creating a scratch directory")?;
    let plan = match &args.config_rev {
        Some(rev) => super::load_plan_at(cli, rev, scratch.path())?,
        None => super::load_plan(cli).context(
            "collect checks every job's figures and answers against the project's configuration: run it in the project's checkout, or pass --root",
        )?,
    };
    let opts = Options {
        allow_partial: !args.complete,
        date: args.date.clone(),
        unpack: cell_run::install::unpack_options(&plan.settings.artifact_unpack),
        config: cell_verdict::GateConfig::from_plan(&plan, None, []),
    };
    let collected = match collect(run_id, &source, &opts) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("Error: {e}");
            return Ok(if e.is_integrity() {
                Exit::Gate
            } else {
                Exit::Infra
            });
        }
    };
    // One collect at a time per checkout (from the write to the push), or per results dir
    // outside one: the check of what the run dir holds and its replacement are one step.
    let checkout = results_checkout(&args.results);
    let _lock = match &checkout {
        Some(repo) => git::lock(repo)?,
        None => cell_collect::lock::results(&args.results)?,
    };
    let Some(dir) = write(args, cli, &collected) else {
        return Ok(Exit::Infra);
    };
    if let Some(path) = &args.outputs {
        append(path, &format!("run-dir={}\n", dir.display()))?;
    }
    summarize_missing(&collected)?;
    if args.commit {
        let repo = checkout
            .as_deref()
            .context("--commit needs the results directory inside a git work tree")?;
        let run = store::load_run(&dir)?;
        let push = args.push.then(|| Push {
            remote: &args.remote,
            branch: None,
        });
        commit_run(repo, &std::path::absolute(&dir)?, &run, push.as_ref(), cli)?;
    }
    print_cells(&collected, &dir, cli);
    Ok(exit_of(&collected, cli))
}

/// The git work tree the results directory is in, if any.
fn results_checkout(results: &Path) -> Option<PathBuf> {
    let probe = if results.exists() {
        results.to_path_buf()
    } else {
        results
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
    };
    let abs = std::path::absolute(probe).ok()?;
    git::toplevel(&abs).ok()
}

/// Writes the run dir; `None` (after saying why) when the store refused.
fn write(args: &CollectArgs, cli: &Cli, collected: &cell_collect::Collected) -> Option<PathBuf> {
    let run_dir = super::run_dir(
        collected.name.clone(),
        &collected.cells,
        Some(&collected.record),
    );
    let policy = if args.replace {
        Replace::Always
    } else {
        Replace::IfNewer
    };
    let written = match store::write_run_dir(&args.results, &run_dir, policy) {
        Ok(w) => w,
        Err(e @ store::StoreError::SameAttempt { .. }) => {
            eprintln!("Error: {e} (this collect read {})", source_of(args));
            return None;
        }
        Err(e) => {
            eprintln!("Error: {e}");
            return None;
        }
    };
    let dir = args.results.join(collected.name.to_string());
    if !cli.quiet {
        let dir = dir.display();
        match written {
            Written::New => eprintln!("wrote {dir}"),
            Written::Unchanged => {
                eprintln!("unchanged (identical content already there): {dir}");
            }
            Written::Superseded { old, new } => {
                eprintln!("replaced {dir}: it held attempt {old}, this collect attempt {new}");
            }
            Written::Replaced => {
                eprintln!("replaced {dir} with other content (--replace)");
            }
        }
        for m in &collected.record.missing {
            eprintln!("warning: partial run: {}", escape::terminal(m));
        }
    }
    Some(dir)
}

/// Where this collect's artifacts came from, for a message about them.
fn source_of(args: &CollectArgs) -> String {
    match &args.from_dir {
        Some(dir) => format!("--from-dir {}", dir.display()),
        None => format!(
            "the artifacts of run {} through the GitHub API",
            args.run_id
        ),
    }
}

/// A partial run, said in the step summary too: which jobs left no result, and why.
fn summarize_missing(collected: &cell_collect::Collected) -> anyhow::Result<()> {
    let Some(path) = std::env::var_os("GITHUB_STEP_SUMMARY").filter(|p| !p.is_empty()) else {
        return Ok(());
    };
    if collected.record.missing.is_empty() {
        return Ok(());
    }
    let mut text = format!(
        "### Partial run {}\n\nThe rest of the run is committed; these jobs left no result:\n\n",
        collected.name
    );
    for m in &collected.record.missing {
        text.push_str("- ");
        text.push_str(&escape::markdown(m));
        text.push('\n');
    }
    text.push('\n');
    append(Path::new(&path), &text)
}

fn append(path: &Path, text: &str) -> anyhow::Result<()> {
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .with_context(|| format!("opening {}", path.display()))?;
    f.write_all(text.as_bytes())
        .with_context(|| format!("writing {}", path.display()))
}

fn print_cells(collected: &cell_collect::Collected, dir: &Path, cli: &Cli) {
    if cli.format == Format::Json {
        let cells: Vec<_> = collected.cells.iter().map(|c| &c.result).collect();
        print!(
            "{}",
            cell_schema::to_json(
                &serde_json::json!({ "dir": dir, "run": collected.record, "cells": cells })
            )
        );
    } else {
        let cells: Vec<_> = collected.cells.iter().map(|c| c.result.clone()).collect();
        print!("{}", escape::terminal(&cell_report::text_summary(&cells)));
    }
}

/// The GitHub client from the environment, with the deadline of `--timeout` and the idle
/// timeout of `--idle-timeout`.
fn client(args: &CollectArgs, cli: &Cli) -> Result<Github, GithubError> {
    client_of(args.timeout, args.idle_timeout, cli)
}

/// The GitHub client from the environment, with a deadline of `timeout` seconds on all of its
/// requests and an idle timeout of `idle` seconds on each.
pub(super) fn client_of(timeout: u64, idle: u64, cli: &Cli) -> Result<Github, GithubError> {
    let settings = Settings {
        timeouts: Timeouts {
            idle: Duration::from_secs(idle),
            ..Timeouts::default()
        },
        deadline: Some(Duration::from_secs(timeout)),
        verbose: cli.verbose,
        ..Settings::default()
    };
    Github::from_env(settings)
}

/// 1 when a collected job failed, a job failed without a result, or an artifact failed its
/// digest (each named); else 0, a partial run included (what is missing is listed above).
fn exit_of(collected: &cell_collect::Collected, cli: &Cli) -> Exit {
    let failed: Vec<String> = collected
        .cells
        .iter()
        .filter(|c| c.result.verdict.status == Status::Failed)
        .map(|c| c.result.cell.id.to_string())
        .collect();
    if failed.is_empty() && collected.tripped.is_empty() {
        return Exit::Ok;
    }
    if !cli.quiet {
        if !failed.is_empty() {
            eprintln!("a job failed in: {} (written; exit 1)", failed.join(", "));
        }
        for t in &collected.tripped {
            eprintln!(
                "failed: {} (the rest is written; exit 1)",
                escape::terminal(t)
            );
        }
    }
    Exit::Gate
}

/// `--repo`, else `GITHUB_REPOSITORY`, else the `origin` remote's `owner/name`.
pub(super) fn repo(flag: Option<&str>) -> anyhow::Result<String> {
    if let Some(r) = flag.map(str::to_owned).or_else(|| {
        std::env::var("GITHUB_REPOSITORY")
            .ok()
            .filter(|s| !s.is_empty())
    }) {
        anyhow::ensure!(
            r.split('/').count() == 2 && !r.starts_with('/') && !r.ends_with('/'),
            "--repo {r}: write OWNER/NAME"
        );
        return Ok(r);
    }
    let out = std::process::Command::new("git")
        .args(["remote", "get-url", "origin"])
        .output()
        .context("running git")?;
    let url = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    owner_name(&url).ok_or_else(|| anyhow::anyhow!("no --repo, no GITHUB_REPOSITORY, and the origin remote `{url}` names no OWNER/NAME: pass --repo OWNER/NAME"))
}

fn owner_name(url: &str) -> Option<String> {
    let path = url.trim_end_matches('/').trim_end_matches(".git");
    let mut parts = path.rsplit(['/', ':']);
    let name = parts.next()?;
    let owner = parts.next()?;
    (!owner.is_empty() && !name.is_empty() && !owner.contains('@'))
        .then(|| format!("{owner}/{name}"))
}

#[cfg(test)]
mod tests {
    use super::owner_name;

    #[test]
    fn remotes() {
        assert_eq!(
            owner_name("https://github.com/o/r.git").as_deref(),
            Some("o/r")
        );
        assert_eq!(owner_name("git@github.com:o/r.git").as_deref(), Some("o/r"));
        assert_eq!(owner_name("").as_deref(), None);
    }
}
