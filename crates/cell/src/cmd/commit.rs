//! `cell commit RUN_DIR [--push]`: one commit of a run dir (with its gate.json), pushed with
//! rebase-and-retry. The collect job's last write: it runs after a failed verdict and a
//! partial collect alike, so the record always shows what happened.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use cell_collect::git;
use cell_schema::Status;
use cell_schema::store::{self, HistoryRun};
use clap::Args;

use crate::cli::Cli;
use crate::exit::Exit;

/// How many times a push is tried against a remote that keeps moving.
const PUSH_TRIES: u32 = 8;

/// `cell commit RUN_DIR [--push] [--remote R] [--branch B]`.
#[derive(Debug, Args)]
pub struct CommitArgs {
    /// The run dir, `results/<date>-<run-id>`.
    pub run_dir: PathBuf,
    /// Push the commit, rebasing and retrying when the remote moved on.
    #[arg(long)]
    pub push: bool,
    /// The remote to push to.
    #[arg(long, default_value = "origin")]
    pub remote: String,
    /// The branch to push to (default: the checked-out one).
    #[arg(long, requires = "push")]
    pub branch: Option<String>,
}

/// Runs `cell commit`.
pub fn run(args: &CommitArgs, cli: &Cli) -> anyhow::Result<Exit> {
    let run = match store::load_run(&args.run_dir) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("Error: {e}");
            return Ok(Exit::Infra);
        }
    };
    let dir = std::path::absolute(&args.run_dir).context("resolving the run dir")?;
    let repo = git::toplevel(&dir).context("the run dir must be inside a git work tree")?;
    let _lock = git::lock(&repo)?;
    let push = args.push.then(|| Push {
        remote: &args.remote,
        branch: args.branch.as_deref(),
    });
    commit_run(&repo, &dir, &run, push.as_ref(), cli)?;
    Ok(Exit::Ok)
}

/// Where a commit is pushed.
pub struct Push<'a> {
    /// The remote.
    pub remote: &'a str,
    /// The branch, when not the checked-out one.
    pub branch: Option<&'a str>,
}

/// Commits `dir` (a run dir inside `repo`, whose lock the caller holds) with a message naming
/// the run, its cells and its verdict; pushes it when asked.
pub fn commit_run(
    repo: &Path,
    dir: &Path,
    run: &HistoryRun,
    push: Option<&Push<'_>>,
    cli: &Cli,
) -> anyhow::Result<()> {
    let message = message(run);
    let made = git::commit(repo, dir, &message)?;
    if !cli.quiet {
        if made {
            eprintln!("committed: {message}");
        } else {
            eprintln!("nothing new to commit");
        }
    }
    if let Some(p) = push {
        let seed = run
            .name
            .to_string()
            .bytes()
            .fold(u64::from(std::process::id()), |h, b| {
                h.rotate_left(5) ^ u64::from(b)
            });
        let tries = git::push(repo, p.remote, p.branch, PUSH_TRIES, seed)?;
        if !cli.quiet {
            eprintln!("pushed to {} ({tries} attempt(s))", p.remote);
        }
    }
    Ok(())
}

/// `results: run <id> (<date>) <cells>: <verdict>[ (partial)]`.
fn message(run: &HistoryRun) -> String {
    let verdict = run
        .cells
        .values()
        .map(|c| c.verdict.status)
        .max()
        .unwrap_or(Status::Ok);
    let partial = run.record.as_ref().is_some_and(|r| r.run.partial);
    let cells: Vec<&str> = run.cells.keys().map(cell_schema::CellId::as_str).collect();
    format!(
        "results: run {} ({}) {}: {}{}",
        run.name.id(),
        run.name.date(),
        cells.join(", "),
        match verdict {
            Status::Ok => "ok",
            Status::Noisy => "noisy",
            Status::Failed => "failed",
        },
        if partial { " (partial)" } else { "" }
    )
}

/// `cell results-branch BRANCH --into DIR`.
#[derive(Debug, Args)]
pub struct ResultsBranchArgs {
    /// The branch that keeps `results/` (`[workflow] results_branch`).
    pub branch: String,
    /// Where to check it out (a new git work tree of this checkout).
    #[arg(long, value_name = "DIR")]
    pub into: PathBuf,
    /// The remote that has (or will have) it.
    #[arg(long, default_value = "origin")]
    pub remote: String,
}

/// Runs `cell results-branch`: the results branch checked out beside the code, created with no
/// history when the remote has none yet, so collect writes and gates there.
pub fn results_branch(args: &ResultsBranchArgs, cli: &Cli) -> anyhow::Result<Exit> {
    let repo = git::toplevel(&std::path::absolute(&cli.root)?)
        .context("cell results-branch runs inside the repository's checkout")?;
    let into = std::path::absolute(&args.into)?;
    anyhow::ensure!(
        !into.exists(),
        "{}: already exists; name a new directory",
        into.display()
    );
    let existed = git::results_checkout(&repo, &args.remote, &args.branch, &into)?;
    if !cli.quiet {
        eprintln!(
            "{} {} in {}",
            if existed {
                "checked out"
            } else {
                "started (no history yet)"
            },
            args.branch,
            into.display()
        );
    }
    Ok(Exit::Ok)
}
