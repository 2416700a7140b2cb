//! `cell comment`: a pull request's verdict, reported by a `workflow_run` workflow that never
//! runs the pull request's code. The `cell-pr` artifact of the `pull_request` run is hostile
//! input: its job results are recomputed from their samples and gated here against the
//! default branch's history with its thresholds; its own gate report is never read. One
//! marked comment per pull request and one check run named `cell` on its head carry the
//! verdict. And `cell pr-json`, which the `pull_request` run's `pr` job writes `pr.json` with.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use cell_collect::pr::{PrArtifactError, PrRun};
use cell_github::{ACTIONS_BOT, CheckOutput, NewCheckRun};
use cell_report::pr::{GITHUB_TEXT_LIMIT, PrView};
use cell_schema::store::{self, Replace};
use cell_schema::{BranchName, CommitSha, PrNumber, PrRecord, RunId, escape};
use cell_verdict::pr::{CommentPolicy, check_conclusion, headline, writes_comment};
use clap::{Args, ValueEnum};

use crate::cli::Cli;
use crate::exit::Exit;

/// The hidden mark the comment is found by.
pub const MARKER: &str = "<!-- cell:pr-report -->";

/// The check run's name.
const CHECK_NAME: &str = "cell";

/// Our id for the check run: a retried report finds and updates it.
const CHECK_EXTERNAL_ID: &str = "cell-pr-report";

/// The step summary's limit (GitHub's, per step).
const STEP_SUMMARY_LIMIT: usize = 1 << 20;

/// When the comment is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum CommentWhen {
    /// Every time.
    Always,
    /// When the verdict is FAIL or INCONCLUSIVE (an existing comment is always updated).
    OnChange,
    /// When the verdict is FAIL (an existing comment is always updated).
    OnFail,
}

impl From<CommentWhen> for CommentPolicy {
    fn from(w: CommentWhen) -> Self {
        match w {
            CommentWhen::Always => Self::Always,
            CommentWhen::OnChange => Self::OnChange,
            CommentWhen::OnFail => Self::OnFail,
        }
    }
}

/// `cell comment RUN_ID --head-sha SHA [--repo OWNER/NAME] [--results DIR] [--comment WHEN]
/// [--details-url URL] [--dry-run] [--from-dir DIR] [--author LOGIN]`.
#[derive(Debug, Args)]
pub struct CommentArgs {
    /// The `pull_request` workflow run whose `cell-pr` artifact is judged.
    #[arg(value_parser = |s: &str| RunId::parse(s))]
    pub run_id: RunId,
    /// The head commit the `workflow_run` event names (`github.event.workflow_run.head_sha`):
    /// the artifact's pr.json and the pull request's current head must both be it.
    #[arg(long, value_name = "SHA", value_parser = |s: &str| CommitSha::parse(s))]
    pub head_sha: CommitSha,
    /// `owner/name` (default: `GITHUB_REPOSITORY`, else the `origin` remote).
    #[arg(long)]
    pub repo: Option<String>,
    /// The default branch's committed results: the history the pull request is judged
    /// against (read, never written).
    #[arg(long, default_value = "results")]
    pub results: PathBuf,
    /// When to write the comment (an existing one is always brought up to date).
    #[arg(long, value_enum, default_value_t = CommentWhen::Always)]
    pub comment: CommentWhen,
    /// The reporter run's page: linked when the table is cut, and the check run's details.
    #[arg(long, value_name = "URL")]
    pub details_url: Option<String>,
    /// Print the comment and the check run's text; write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Read what the `cell-pr` artifact unpacks to from DIR instead of downloading it.
    #[arg(long, value_name = "DIR")]
    pub from_dir: Option<PathBuf>,
    /// The login the comment is written by (the token's): `github-actions[bot]` for the
    /// workflow token; set it for a personal access token.
    #[arg(long, value_name = "LOGIN", default_value = ACTIONS_BOT)]
    pub author: String,
    /// Give up on the GitHub API after this many seconds for the whole command (exit 2).
    #[arg(long, value_name = "SECONDS", default_value_t = 600)]
    pub timeout: u64,
    /// Seconds a request may receive nothing before it is retried (tests shorten it).
    #[arg(long, hide = true, value_name = "SECONDS", default_value_t = 60)]
    pub idle_timeout: u64,
}

/// `cell pr-json --out FILE --number N --head-sha SHA --base-sha SHA --base-ref BRANCH`.
#[derive(Debug, Args)]
pub struct PrJsonArgs {
    /// Where to write pr.json.
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// The pull request's number (`github.event.pull_request.number`).
    #[arg(long, value_parser = |s: &str| PrNumber::parse(s))]
    pub number: PrNumber,
    /// Its head commit (`github.event.pull_request.head.sha`).
    #[arg(long, value_name = "SHA", value_parser = |s: &str| CommitSha::parse(s))]
    pub head_sha: CommitSha,
    /// The base branch's commit (`github.event.pull_request.base.sha`).
    #[arg(long, value_name = "SHA", value_parser = |s: &str| CommitSha::parse(s))]
    pub base_sha: CommitSha,
    /// The base branch (`github.base_ref`).
    #[arg(long, value_name = "BRANCH", value_parser = |s: &str| BranchName::parse(s))]
    pub base_ref: BranchName,
}

/// Runs `cell pr-json`.
pub fn write_pr_json(args: &PrJsonArgs, cli: &Cli) -> anyhow::Result<Exit> {
    let record = PrRecord::new(
        args.number,
        args.head_sha.clone(),
        args.base_sha.clone(),
        args.base_ref.clone(),
    );
    cell_schema::write_atomic(&args.out, cell_schema::to_json(&record).as_bytes())
        .with_context(|| format!("writing {}", args.out.display()))?;
    if !cli.quiet {
        eprintln!("wrote {}", args.out.display());
    }
    Ok(Exit::Ok)
}

/// Runs `cell comment`. Exit 0 whatever the verdict (the check run carries it) and when the
/// artifact is stale or forged (nothing is posted); 2 when the artifact cannot be had or
/// read, or GitHub cannot be reached.
pub fn run(args: &CommentArgs, cli: &Cli) -> anyhow::Result<Exit> {
    let plan = super::load_plan(cli).context(
        "cell comment judges with the default branch's configuration: run it in that checkout, or pass --root",
    )?;
    let offline = args.from_dir.is_some() && args.dry_run;
    let github = if offline {
        None
    } else {
        Some(super::collect::client_of(
            args.timeout,
            args.idle_timeout,
            cli,
        )?)
    };
    let repo = if offline {
        None
    } else {
        Some(checked_repo(args.repo.as_deref())?)
    };
    let scratch = tempfile::tempdir().context("creating a scratch directory")?;
    let job_caps = cell_run::install::unpack_options(&plan.settings.artifact_unpack);
    let dir = match (&args.from_dir, &github, &repo) {
        (Some(d), _, _) => d.clone(),
        (None, Some(g), Some(r)) => {
            let into = scratch.path().join("artifact");
            if let Err(e) = cell_collect::pr::fetch(g, r, args.run_id, &into, &job_caps) {
                eprintln!("Error: {}", escape::terminal(&e.to_string()));
                return Ok(Exit::Infra);
            }
            into
        }
        _ => unreachable!("a client and a repository unless offline"),
    };
    let opts = cell_collect::Options {
        allow_partial: true,
        date: None,
        unpack: job_caps,
        config: cell_verdict::GateConfig::from_plan(&plan, None, []),
    };
    let pr = match cell_collect::pr::read(&dir, args.run_id, &opts) {
        Ok(pr) => pr,
        Err(e) => return Ok(refused(&e)),
    };
    if pr.record.head_sha != args.head_sha {
        println!(
            "stale or forged artifact: pr.json names head {}, the event {}; nothing posted",
            pr.record.head_sha, args.head_sha
        );
        return Ok(Exit::Ok);
    }
    let number = pr.record.number.get();
    match (&github, &repo) {
        (Some(g), Some(r)) => {
            let pull = match g.pull_request(r, number) {
                Ok(p) => p,
                // No such pull request (an issue's number, or none): nothing to report on.
                Err(cell_github::GithubError::Status { status: 404, .. }) => {
                    println!(
                        "stale or forged artifact: pr.json names #{number}, which is no pull request of {r}; nothing posted"
                    );
                    return Ok(Exit::Ok);
                }
                Err(e) => return Err(e.into()),
            };
            if pull.head.sha != args.head_sha.as_str() {
                println!(
                    "stale or forged artifact: pull request #{number}'s head is {}, the run measured {}; nothing posted",
                    escape::terminal(&escape::one_line(&pull.head.sha)),
                    args.head_sha
                );
                return Ok(Exit::Ok);
            }
            if pull.base.branch != pr.record.base_ref.as_str() {
                println!(
                    "stale or forged artifact: pull request #{number} merges into {}, pr.json says {}; nothing posted",
                    escape::terminal(&escape::one_line(&pull.base.branch)),
                    pr.record.base_ref
                );
                return Ok(Exit::Ok);
            }
        }
        _ => eprintln!(
            "notice: --from-dir with --dry-run: pull request #{number}'s current head was not checked"
        ),
    }
    let report = gate(&pr, &args.results, &plan, scratch.path())?;
    let head = headline(&report, pr.collected.tripped.len());
    let view = PrView {
        number,
        head_sha: args.head_sha.as_str(),
        base_ref: pr.record.base_ref.as_str(),
        run_id: args.run_id.0,
        headline: head,
        report: &report,
        unusable: &pr.collected.record.missing,
        details_url: args.details_url.as_deref(),
    };
    let comment = cell_report::pr::body(&view, Some(MARKER), GITHUB_TEXT_LIMIT);
    let check = NewCheckRun {
        name: CHECK_NAME.into(),
        head_sha: args.head_sha.to_string(),
        status: Some("completed".into()),
        conclusion: Some(check_conclusion(head).into()),
        details_url: args.details_url.clone(),
        external_id: Some(CHECK_EXTERNAL_ID.into()),
        output: Some(CheckOutput {
            title: cell_report::pr::title(&view),
            summary: cell_report::pr::body(&view, None, GITHUB_TEXT_LIMIT),
            text: None,
        }),
    };
    step_summary(&view, &report)?;
    let (Some(g), Some(r), false) = (&github, &repo, args.dry_run) else {
        print_dry(&comment, &check);
        return Ok(Exit::Ok);
    };
    post(g, r, args, (number, head), &comment, &check)?;
    Ok(Exit::Ok)
}

/// The comment (by the policy) and the check run, each created or updated, and one line
/// saying what was done.
fn post(
    g: &cell_github::Github,
    r: &str,
    args: &CommentArgs,
    (number, head): (u64, cell_schema::GateStatus),
    comment: &str,
    check: &NewCheckRun,
) -> anyhow::Result<()> {
    let policy = CommentPolicy::from(args.comment);
    let exists = g
        .list_issue_comments(r, number)?
        .iter()
        .any(|c| c.is_by(&args.author) && c.body.contains(MARKER));
    let said = if writes_comment(policy, head, exists) {
        g.upsert_issue_comment(r, number, &args.author, MARKER, comment)?;
        if exists {
            "comment updated"
        } else {
            "comment posted"
        }
    } else {
        "no comment (--comment policy)"
    };
    let made = g.upsert_check_run(r, check)?;
    println!(
        "pull request #{number}: {} ({said}; check run `{CHECK_NAME}` {} on {})",
        head.word(),
        escape::terminal(&escape::one_line(made.conclusion.as_deref().unwrap_or("?"))),
        args.head_sha
    );
    Ok(())
}

/// `--repo` or the environment's, each half a safe name (it goes into API paths).
fn checked_repo(flag: Option<&str>) -> anyhow::Result<String> {
    let r = super::collect::repo(flag)?;
    let safe = r
        .split_once('/')
        .is_some_and(|(o, n)| cell_schema::ids::is_safe_id(o) && cell_schema::ids::is_safe_id(n));
    anyhow::ensure!(
        safe,
        "--repo {}: write OWNER/NAME",
        escape::terminal(&escape::one_line(&r))
    );
    Ok(r)
}

/// An artifact that cannot be used: said on one line, escaped; exit 2.
fn refused(e: &PrArtifactError) -> Exit {
    eprintln!(
        "Error: the cell-pr artifact was refused: {}",
        escape::terminal(&e.to_string())
    );
    Exit::Infra
}

/// The pull request's jobs as a run dir under `scratch` (never in `results`), gated against
/// `results` with the checkout's thresholds.
fn gate(
    pr: &PrRun,
    results: &Path,
    plan: &cell_model::Plan,
    scratch: &Path,
) -> anyhow::Result<cell_schema::GateReport> {
    let c = &pr.collected;
    let staged = scratch.join("run");
    let run_dir = super::run_dir(c.name.clone(), &c.cells, Some(&c.record));
    store::write_run_dir(&staged, &run_dir, Replace::Always).context("staging the run dir")?;
    let run = store::load_run(&staged.join(c.name.to_string()))?;
    let cfg = cell_verdict::GateConfig::from_plan(plan, None, run.cells.keys());
    let history = if results.is_dir() {
        super::needed_history(results, &run, &cfg)?
    } else {
        eprintln!(
            "notice: no history at {}: every cell is a first run",
            results.display()
        );
        let empty = scratch.join("no-history");
        std::fs::create_dir_all(&empty)?;
        super::needed_history(&empty, &run, &cfg)?
    };
    Ok(cell_verdict::gate_history(&run, &history, &cfg)?)
}

/// The whole report (every row) and the gate's own summary in `$GITHUB_STEP_SUMMARY`, within
/// its limit.
fn step_summary(view: &PrView<'_>, report: &cell_schema::GateReport) -> anyhow::Result<()> {
    let Some(path) = std::env::var_os("GITHUB_STEP_SUMMARY").filter(|p| !p.is_empty()) else {
        return Ok(());
    };
    let mut text = cell_report::pr::body(view, None, STEP_SUMMARY_LIMIT / 2);
    text.push('\n');
    text.push_str(&cell_report::gate::step_summary(
        report,
        STEP_SUMMARY_LIMIT - text.len() - 1,
    ));
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .context("opening $GITHUB_STEP_SUMMARY")?;
    f.write_all(text.as_bytes())
        .context("writing $GITHUB_STEP_SUMMARY")
}

/// `--dry-run`: both texts on stdout, as a terminal may show them.
fn print_dry(comment: &str, check: &NewCheckRun) {
    println!("--- comment ---");
    print!("{}", escape::terminal(comment));
    println!(
        "--- check run `{CHECK_NAME}`: {} ---",
        check.conclusion.as_deref().unwrap_or("")
    );
    if let Some(o) = &check.output {
        println!("{}", escape::terminal(&o.title));
        print!("{}", escape::terminal(&o.summary));
    }
}
