//! `cell plan`: write `.github/workflows/cell.yml`, check it, or print a run's matrix.

use std::io::Write as _;
use std::path::PathBuf;

use anyhow::Context as _;
use cell_plan::{Check, Layout, WORKFLOW_PATH};
use clap::Args;

use crate::cli::Cli;
use crate::exit::Exit;

/// `cell plan [--check | --matrix [--cells L] [--toolchains L] [--subject V] [--outputs FILE]]`.
#[derive(Debug, Args)]
pub struct PlanArgs {
    /// Do not write: compare the workflow with what `cell plan` writes; exit 1 with a unified
    /// diff when they differ (0 when cell/cell.toml lists "workflow" as allowed to be dirty).
    #[arg(long, conflicts_with = "matrix")]
    pub check: bool,
    /// Do not write: print the matrix {"include":[…]} of the selected cells and toolchains.
    #[arg(long)]
    pub matrix: bool,
    /// With --matrix: the matrices of the pull request workflow (`[workflow.pull_requests]`:
    /// its cells, no suites); exits 2 when cell/cell.toml has none.
    #[arg(long, requires = "matrix")]
    pub pull_request: bool,
    /// With --matrix: cell labels, comma-separated (blank: all); an unknown one exits 2.
    #[arg(long, value_name = "L", requires = "matrix")]
    pub cells: Option<String>,
    /// With --matrix: toolchain names (their workload jobs) and suite jobs (`http-<server>`,
    /// `soak-<server>`), comma-separated (blank: all, suite jobs too); an unknown name, or a
    /// toolchain without rows, exits 2.
    #[arg(long, value_name = "L", requires = "matrix")]
    pub toolchains: Option<String>,
    /// With --matrix: the version of the release under test the run expects (blank: as
    /// pinned); exits 2 unless every selected tarball toolchain pins exactly this version.
    #[arg(long, value_name = "VERSION", requires = "matrix")]
    pub subject: Option<String>,
    /// With --matrix: the run's `reps` input, checked as the jobs will read it (blank: the
    /// adaptive budget; else a whole number of measured rounds, at least 1); exits 2 otherwise.
    #[arg(
        long,
        value_name = "N",
        requires = "matrix",
        allow_hyphen_values = true
    )]
    pub reps: Option<String>,
    /// With --matrix: also append `<job>=<matrix>` for every matrix job of the workflow that
    /// has entries to FILE (the workflow passes its step output file).
    #[arg(long, value_name = "FILE", requires = "matrix")]
    pub outputs: Option<PathBuf>,
    /// Before writing: pin the digests of the release `[workflow] cell = { version }` names,
    /// for every platform the cells run on, from its `SHA256SUMS` (an http(s) URL or a file),
    /// as `CELL_SHA256_<OS>_<ARCH>` lines of versions.env.
    #[arg(long, value_name = "URL|FILE", conflicts_with_all = ["matrix", "check"])]
    pub cell_sums: Option<String>,
}

/// Runs `cell plan`.
pub fn run(args: &PlanArgs, cli: &Cli) -> anyhow::Result<Exit> {
    let mut plan = super::load_plan(cli)?;
    if let Some(sums) = &args.cell_sums {
        // The digests are kept only with the workflow they pin: a render that fails puts
        // versions.env back as it was.
        let before = std::fs::read(&plan.env.path)
            .with_context(|| format!("reading {}", plan.env.path.display()))?;
        let pinned = pin_release_digests(&plan, sums)?;
        let rendered = super::load_plan(cli).and_then(|p| {
            cell_plan::render_all(&p)?;
            Ok(p)
        });
        match rendered {
            Ok(p) => plan = p,
            Err(e) => {
                cell_schema::write_atomic(&plan.env.path, &before)
                    .with_context(|| format!("restoring {}", plan.env.path.display()))?;
                return Err(e.context(format!("{} is left as it was", plan.env.path.display())));
            }
        }
        if !cli.quiet {
            for (key, value) in &pinned {
                eprintln!("versions.env: {key}={value}");
            }
        }
    }
    if args.matrix {
        return matrix(args, &plan);
    }
    if !cli.quiet {
        warn_other_version(&plan);
    }
    if args.check {
        return match cell_plan::check(&plan)? {
            Check::Current => Ok(Exit::Ok),
            Check::Stale { diff } if cell_plan::allows_dirty(&plan) => {
                if !cli.quiet {
                    eprintln!(
                        "note: {WORKFLOW_PATH} differs from what `cell plan` writes ({} changed lines); allowed by allow_dirty = [\"workflow\"] in cell/cell.toml",
                        changed_lines(&diff)
                    );
                }
                Ok(Exit::Ok)
            }
            Check::Stale { diff } => {
                print!("{diff}");
                std::io::stdout().flush()?;
                eprintln!(
                    "Error: {WORKFLOW_PATH} is not what `cell plan` writes from versions.env and cell/cell.toml (diff above).\nfix: {}",
                    fix_command(cli)
                );
                Ok(Exit::Gate)
            }
        };
    }
    let changed = cell_plan::write(&plan)?;
    if !cli.quiet {
        let layout = Layout::of(&plan)?;
        let split = layout.jobs.iter().any(|j| j.parts > 1);
        // Matrix jobs over (toolchain with rows | http server | soaked server), each over the cells.
        let kinds = layout
            .jobs
            .iter()
            .map(|j| {
                (
                    j.suite.as_str(),
                    j.suite.server().map(ToString::to_string),
                    j.toolchain.to_string(),
                )
            })
            .collect::<std::collections::BTreeSet<_>>()
            .len();
        eprintln!(
            "{WORKFLOW_PATH} {}: {} jobs ({} cells × {} workload, http and soak jobs, as the cells allow) in {} matrix jobs{}",
            if changed { "written" } else { "unchanged" },
            layout.total(),
            plan.cells.len(),
            kinds,
            layout.jobs.len(),
            if split {
                format!(
                    ", split because GitHub runs at most {} jobs per matrix",
                    cell_plan::MAX_MATRIX
                )
            } else {
                String::new()
            }
        );
        for note in &layout.notes {
            eprintln!("note: {note}");
        }
    }
    Ok(Exit::Ok)
}

/// A workflow that installs another release than this binary: it is rendered by this version,
/// so it holds what this version's jobs do, and the pinned one's `--check` may find it stale.
fn warn_other_version(plan: &cell_model::Plan) {
    let Some(cell_model::CellSource::Release(release)) = &plan.workflow.cell else {
        return;
    };
    let here = env!("CARGO_PKG_VERSION");
    if release.version != here {
        eprintln!(
            "warning: [workflow] cell pins cell {}, and this is cell {here}: the workflow is what {here} writes, and the jobs' `cell plan --check` (run by {}) may find it stale; install cell {} and run cell plan with it",
            cell_schema::escape::one_line(&release.version),
            cell_schema::escape::one_line(&release.version),
            cell_schema::escape::one_line(&release.version),
        );
    }
}

/// Writes `CELL_SHA256_<OS>_<ARCH>` of the pinned release into versions.env, for the host and
/// every cell's platform, from the release's `SHA256SUMS`; returns the pairs written.
pub fn pin_release_digests(
    plan: &cell_model::Plan,
    sums: &str,
) -> anyhow::Result<Vec<(String, String)>> {
    let Some(cell_model::CellSource::Release(release)) = &plan.workflow.cell else {
        anyhow::bail!(
            "--cell-sums pins a release's digests, and [workflow] cell of cell/cell.toml names no release: write cell = {{ version = \"X.Y.Z\" }} first"
        );
    };
    let lower = sums.to_ascii_lowercase();
    let text = if lower.starts_with("http://") || lower.starts_with("https://") {
        cell_fetch::published_file(
            sums,
            cell_fetch::Timeouts::default(),
            std::time::Duration::from_mins(2),
        )
        .with_context(|| format!("downloading {}", cell_schema::escape::one_line(sums)))?
    } else if sums.is_empty() || lower.contains("://") {
        anyhow::bail!(
            "--cell-sums `{}`: give an http:// or https:// URL or the path of a file",
            cell_schema::escape::one_line(sums)
        );
    } else {
        read_bounded(std::path::Path::new(sums))?
    };
    let mut pairs = Vec::new();
    for (os, arch) in cell_plan::release_platforms(plan, release)? {
        let asset = release.asset(&format!("{os}-{arch}"));
        let shown = cell_schema::escape::one_line(sums);
        let digest = cell_fetch::listed_digest(&text, &asset).map_err(|e| match e {
            // A bare digest names no file: it cannot say which platform it is for.
            cell_fetch::DigestFileError::Empty
            | cell_fetch::DigestFileError::NotListed { .. }
            | cell_fetch::DigestFileError::OtherFile { .. } => anyhow::anyhow!(
                "{shown} names no {asset}: is it the SHA256SUMS of cell {}?",
                release.version
            ),
            other => anyhow::Error::new(other).context(format!("reading {shown}")),
        })?;
        pairs.push((
            cell_model::cell_source::digest_key(&os, &arch),
            digest.as_str().to_owned(),
        ));
    }
    cell_model::env::set_keys(&plan.env.path, &pairs)?;
    Ok(pairs)
}

/// A local checksum file, refused past the size a checksum file can have.
fn read_bounded(path: &std::path::Path) -> anyhow::Result<String> {
    use std::io::Read as _;
    let meta = std::fs::metadata(path).with_context(|| format!("reading {}", path.display()))?;
    // A FIFO or a device would be read forever (or block): a checksum list is a file.
    anyhow::ensure!(
        meta.is_file(),
        "{} is not a regular file: give the SHA256SUMS file or its URL",
        path.display()
    );
    let file = std::fs::File::open(path).with_context(|| format!("reading {}", path.display()))?;
    let mut text = String::new();
    file.take(cell_fetch::MAX_DIGEST_FILE as u64 + 1)
        .read_to_string(&mut text)
        .with_context(|| format!("reading {}", path.display()))?;
    anyhow::ensure!(
        text.len() <= cell_fetch::MAX_DIGEST_FILE,
        "{} is larger than {} bytes: is it really a SHA256SUMS file?",
        path.display(),
        cell_fetch::MAX_DIGEST_FILE
    );
    Ok(text)
}

fn matrix(args: &PlanArgs, plan: &cell_model::Plan) -> anyhow::Result<Exit> {
    let narrowed;
    let plan = if args.pull_request {
        let Some(p) = cell_plan::pull_request_plan(plan) else {
            eprintln!(
                "Error: --pull-request: cell/cell.toml has no [workflow.pull_requests], so there is no pull request workflow to plan"
            );
            return Ok(Exit::Infra);
        };
        narrowed = p;
        &narrowed
    } else {
        plan
    };
    let layout = Layout::of(plan)?;
    let selection = match layout.select(plan, args.cells.as_deref(), args.toolchains.as_deref()) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("Error: {e}");
            return Ok(Exit::Infra);
        }
    };
    if let Some(subject) = &args.subject
        && let Err(e) = cell_plan::check_subject(plan, &selection, subject)
    {
        eprintln!("Error: {e}");
        return Ok(Exit::Infra);
    }
    if let Some(reps) = &args.reps
        && let Err(e) = check_reps(reps)
    {
        eprintln!("Error: {e}");
        return Ok(Exit::Infra);
    }
    if let Some(path) = &args.outputs {
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .with_context(|| format!("opening {}", path.display()))?;
        f.write_all(selection.github_output().as_bytes())
            .with_context(|| format!("writing {}", path.display()))?;
    }
    writeln!(std::io::stdout().lock(), "{}", selection.matrix_json())?;
    Ok(Exit::Ok)
}

/// The `reps` input as `cell run --reps` takes it: blank, or a whole number from 1 to 100000.
fn check_reps(reps: &str) -> anyhow::Result<()> {
    // Not trimmed: the jobs pass the input to `cell run --reps` as it is.
    let digits = !reps.is_empty() && reps.bytes().all(|b| b.is_ascii_digit());
    if reps.is_empty()
        || (digits
            && reps
                .parse::<u32>()
                .is_ok_and(|n| (1..=cell_model::MAX_REPS).contains(&n)))
    {
        return Ok(());
    }
    Err(anyhow::anyhow!(
        "input reps `{}`: write a whole number of measured rounds from 1 to {}, or leave it blank for the adaptive budget of versions.env",
        cell_schema::escape::one_line(reps),
        cell_model::MAX_REPS
    ))
}

/// The command that rewrites the workflow, with `--root` when it is not the current directory.
fn fix_command(cli: &Cli) -> String {
    if cli.root == std::path::Path::new(".") {
        "cell plan".to_owned()
    } else {
        format!("cell plan --root {}", cli.root.display())
    }
}

fn changed_lines(diff: &str) -> usize {
    diff.lines()
        .filter(|l| {
            (l.starts_with('+') || l.starts_with('-'))
                && !l.starts_with("+++")
                && !l.starts_with("---")
        })
        .count()
}
