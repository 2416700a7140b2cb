//! `cell collect`: a run's artifacts → `results/<run-date>-<run-id>/`, optionally committed
//! and pushed.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context as _;
use cell_collect::github::{Github, GithubError, Settings};
use cell_collect::{Options, Source, collect, git};
use cell_fetch::Timeouts;
use cell_schema::store::{self, Written};
use cell_schema::{RunId, Status};
use clap::Args;

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
    #[arg(long)]
    pub date: Option<String>,
    /// Overwrite an existing run dir whose content differs.
    #[arg(long)]
    pub replace: bool,
    /// Write the run even if artifacts are missing, expired or corrupt, marked partial.
    #[arg(long)]
    pub allow_partial: bool,
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
    /// Seconds a request may receive nothing before it is retried (tests shorten it).
    #[arg(long, hide = true, value_name = "SECONDS", default_value_t = 60)]
    pub idle_timeout: u64,
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
            repo: repo(args)?,
        }
    };
    let opts = Options {
        allow_partial: args.allow_partial,
        date: args.date.clone(),
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
    let run_dir = super::run_dir(
        collected.name.clone(),
        &collected.cells,
        Some(&collected.record),
    );
    let written = match store::write_run_dir(&args.results, &run_dir, args.replace) {
        Ok(w) => w,
        Err(e) => {
            eprintln!("Error: {e}");
            return Ok(Exit::Infra);
        }
    };
    let dir = args.results.join(collected.name.to_string());
    let verdict = collected
        .cells
        .iter()
        .map(|c| c.result.verdict.status)
        .max()
        .unwrap_or(Status::Ok);
    if !cli.quiet {
        let what = match written {
            Written::New => "wrote",
            Written::Unchanged => "unchanged (identical content already there):",
            Written::Replaced => "replaced",
        };
        eprintln!("{what} {}", dir.display());
        for m in &collected.record.missing {
            eprintln!("warning: partial run: {m}");
        }
    }
    if args.commit {
        commit_and_push(args, cli, &collected, &dir, verdict)?;
    }
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
        print!("{}", cell_report::text_summary(&cells));
    }
    Ok(if verdict == Status::Failed {
        Exit::Gate
    } else {
        Exit::Ok
    })
}

/// The GitHub client from the environment, with the deadline of `--timeout` and the idle
/// timeout of `--idle-timeout`.
fn client(args: &CollectArgs, cli: &Cli) -> Result<Github, GithubError> {
    let settings = Settings {
        timeouts: Timeouts {
            idle: Duration::from_secs(args.idle_timeout),
            ..Timeouts::default()
        },
        deadline: Some(Duration::from_secs(args.timeout)),
        verbose: cli.verbose,
        ..Settings::default()
    };
    Github::from_env(settings)
}

/// Commits the run dir with a message naming the run, its cells and its verdict; pushes it
/// when asked, rebasing and retrying.
fn commit_and_push(
    args: &CollectArgs,
    cli: &Cli,
    collected: &cell_collect::Collected,
    dir: &std::path::Path,
    verdict: Status,
) -> anyhow::Result<()> {
    let dir = std::path::absolute(dir).context("resolving the run dir")?;
    let repo = git::toplevel(&dir)
        .context("--commit needs the results directory inside a git work tree")?;
    let cells: Vec<String> = collected
        .cells
        .iter()
        .map(|c| c.result.cell.id.to_string())
        .collect();
    let message = format!(
        "results: run {} ({}) {}: {}{}",
        collected.record.run.id,
        collected.record.run.date,
        cells.join(", "),
        match verdict {
            Status::Ok => "ok",
            Status::Noisy => "noisy",
            Status::Failed => "failed",
        },
        if collected.record.run.partial {
            " (partial)"
        } else {
            ""
        }
    );
    let made = git::commit(&repo, &dir, &message).context("committing the run")?;
    if !cli.quiet {
        eprintln!(
            "{}",
            if made {
                format!("committed: {message}")
            } else {
                "nothing new to commit".into()
            }
        );
    }
    if args.push {
        let tries = git::push(
            &repo,
            &args.remote,
            8,
            args.run_id ^ u64::from(std::process::id()),
        )
        .context("pushing the run")?;
        if !cli.quiet {
            eprintln!("pushed to {} ({tries} attempt(s))", args.remote);
        }
    }
    Ok(())
}

/// `--repo`, else `GITHUB_REPOSITORY`, else the `origin` remote's `owner/name`.
fn repo(args: &CollectArgs) -> anyhow::Result<String> {
    if let Some(r) = args.repo.clone().or_else(|| {
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
