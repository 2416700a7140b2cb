//! `cell init`: a new benchmark repository in one command. Writes `cell/cell.toml`,
//! `versions.env`, a starter C workload with its `[expect]` answers computed by running the
//! reference's build of it, the workflow (`cell plan`) and a section of README.md. Everything
//! is written and checked in a staging directory first (the plan must load and render), then
//! moved in place: a refused config leaves the repository as it was.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail, ensure};
use clap::Args;

mod pins;
mod place;

use pins::AptPin;

use crate::cli::Cli;
use crate::exit::Exit;

/// The starter workload: two phases, one number each.
const STARTER_C: &str = include_str!("init/main.c");
/// The phases the starter workload has.
const PHASES: [&str; 2] = ["mix", "fib"];
/// The Rust a build job compiles cell with, when the workflow builds it from a commit.
pub const RUST_VERSION: &str = "1.95.0";
/// Where the releases and the source of cell live.
const CELL_REPOSITORY: &str = "https://github.com/cell-bench/cell";
/// How long the reference's build of one phase may run to give its answer.
const ANSWER_TIMEOUT: Duration = Duration::from_mins(1);
/// The toolchains `cell init` can find on a machine, the reference's first.
const KNOWN: [&str; 2] = ["clang", "gcc"];
/// The heading of the README section; present means written.
const README_HEADING: &str = "## Benchmarks (cell)";

/// `cell init`.
#[derive(Debug, Args)]
pub struct InitArgs {
    /// Toolchains to compare, comma-separated, of clang and gcc (default: those on PATH); the
    /// first is the reference (`c-O2`).
    #[arg(long, value_name = "L")]
    pub toolchains: Option<String>,
    /// The release under test: a toolchain of this name, installed from a tarball per platform
    /// and verified by its digest.
    #[arg(long, value_name = "NAME", requires_all = ["subject_version", "template"])]
    pub subject: Option<String>,
    /// Its version (`{version}` of the template).
    #[arg(long, value_name = "V", requires = "subject")]
    pub subject_version: Option<String>,
    /// Its asset URL, of `{version}`, `{os}` and `{arch}`.
    #[arg(long, value_name = "URL", requires = "subject")]
    pub template: Option<String>,
    /// Its published checksum file (may use `{url}`, e.g. "{url}.sha256"): the Linux x86-64
    /// digest is pinned from it, and every job checks both.
    #[arg(
        long,
        value_name = "URL",
        requires = "subject",
        conflicts_with = "sha256"
    )]
    pub checksum: Option<String>,
    /// Its Linux x86-64 tarball's SHA-256, when it publishes no checksum file.
    #[arg(long, value_name = "HEX", requires = "subject")]
    pub sha256: Option<String>,
    /// Leading path components of the subject's tarball to strip.
    #[arg(long, value_name = "N", default_value_t = 1, requires = "subject")]
    pub strip: u32,
    /// The workflow installs this release of cell (default: this binary's version); needs
    /// --cell-sums.
    #[arg(long, value_name = "V", requires = "cell_sums")]
    pub cell_version: Option<String>,
    /// The release's asset URL template, of `{version}` and `{target}` (a mirror or a fork).
    #[arg(long, value_name = "URL", requires = "cell_sums")]
    pub cell_url: Option<String>,
    /// The release's SHA256SUMS (URL or file): the workflow installs that release, checked
    /// against the digests pinned from it. Without it the workflow builds this binary's commit.
    #[arg(long, value_name = "URL|FILE")]
    pub cell_sums: Option<String>,
    /// Pin a toolchain's apt package version, TOOL=VERSION (repeatable; default: the version
    /// installed here when this machine runs the cell's image, else the image's own).
    #[arg(long, value_name = "TOOL=VERSION")]
    pub pin: Vec<String>,
    /// Overwrite the files that exist.
    #[arg(long)]
    pub force: bool,
}

/// The files `cell init` writes (besides appending to README.md).
const FILES: [&str; 6] = [
    "cell/cell.toml",
    "versions.env",
    "bench/workload/c/main.c",
    cell_plan::WORKFLOW_PATH,
    cell_plan::PR_PATH,
    cell_plan::REPORT_PATH,
];

/// Runs `cell init`.
pub fn run(args: &InitArgs, cli: &Cli) -> anyhow::Result<Exit> {
    let root = &cli.root;
    check_arguments(args)?;
    if root.symlink_metadata().is_ok_and(|m| !m.is_dir()) {
        bail!("--root {}: not a directory", root.display());
    }
    let existing: Vec<&str> = FILES
        .iter()
        .copied()
        .filter(|f| root.join(f).symlink_metadata().is_ok())
        .collect();
    if !existing.is_empty() && !args.force {
        eprintln!(
            "Error: cell init writes nothing over what exists: {} (pass --force to overwrite)",
            existing.join(", ")
        );
        return Ok(Exit::Infra);
    }
    for rel in FILES.iter().chain(&APPENDED) {
        place::check_destination(root, rel)?;
    }
    let toolchains = toolchains(args.toolchains.as_deref())?;
    let pins = pins::resolve(&toolchains, pins::parse_given(&args.pin, &toolchains)?);
    let subject = subject(args)?;
    let source = cell_source(args)?;
    std::fs::create_dir_all(root).with_context(|| format!("creating {}", root.display()))?;
    // Registered: a stopping signal removes the stage, so nothing half-made is left to commit.
    let (staging, _registered) = cell_fetch::cleanup::create(
        || {
            tempfile::Builder::new()
                .prefix(".cell-init-")
                .tempdir_in(root)
        },
        tempfile::TempDir::path,
    )
    .with_context(|| format!("creating a staging directory in {}", root.display()))?;
    let stage = staging.path();
    let staged = stage_files(stage, &toolchains, &pins, subject.as_ref(), &source)
        .map_err(|e| anyhow::anyhow!(naming_root(&e, stage, root)))?;
    let mut rels: Vec<&str> = FILES.to_vec();
    let mut readme = None;
    for (rel, what) in appended(root, stage)? {
        rels.push(rel);
        if rel == "README.md" {
            readme = Some(what);
        }
    }
    place::place(stage, root, &rels)?;
    if !cli.quiet {
        report(
            &toolchains,
            &pins,
            subject.as_ref(),
            &source,
            &staged,
            readme,
        );
    }
    Ok(Exit::Ok)
}

/// An error about a staged file, told about the repository's file of the same name.
fn naming_root(e: &anyhow::Error, stage: &Path, root: &Path) -> String {
    format!("{e:#}").replace(&stage.display().to_string(), &root.display().to_string())
}

/// Writes the configuration, the workload and the workflow into `stage`, checked by loading
/// and rendering them as `cell plan` does; returns the answers.
fn stage_files(
    stage: &Path,
    toolchains: &[String],
    pins: &BTreeMap<String, AptPin>,
    subject: Option<&Subject>,
    source: &Source,
) -> anyhow::Result<Vec<(String, String)>> {
    write(stage, "bench/workload/c/main.c", STARTER_C)?;
    let answers = answers(&toolchains[0], stage)?;
    write(
        stage,
        "cell/cell.toml",
        &cell_toml(toolchains, pins, subject, source, &answers),
    )?;
    write(stage, "versions.env", &versions_env(pins, subject, source))?;
    let plan = cell_model::Plan::load(stage).context("the configuration cell init wrote")?;
    if let Some(s) = subject.filter(|s| s.sha256.is_none()) {
        pin_subject_digest(&plan, s)?;
    }
    if let Source::Release { sums, .. } = source {
        super::plan::pin_release_digests(&plan, sums)?;
    }
    let plan = cell_model::Plan::load(stage).context("the configuration cell init wrote")?;
    cell_plan::write(&plan)?;
    Ok(answers)
}

/// The files `cell init` adds to rather than writes.
const APPENDED: [&str; 2] = ["README.md", ".gitignore"];

/// README.md and .gitignore as they will be, staged when they change: the bytes that are
/// there kept as they are (whatever their encoding), the section or the line appended.
fn appended(root: &Path, stage: &Path) -> anyhow::Result<Vec<(&'static str, bool)>> {
    let mut out = Vec::new();
    for rel in APPENDED {
        let path = root.join(rel);
        let have = match std::fs::read(&path) {
            Ok(bytes) => Some(bytes),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
        };
        let add = if rel == "README.md" {
            readme_section()
        } else {
            "cell-local/\n".to_owned()
        };
        let present = have.as_deref().is_some_and(|h| {
            if rel == "README.md" {
                contains(h, README_HEADING.as_bytes())
            } else {
                h.split(|b| *b == b'\n')
                    .any(|l| matches!(l.trim_ascii(), b"cell-local/" | b"/cell-local/"))
            }
        });
        if present {
            continue;
        }
        let mut text = have.clone().unwrap_or_default();
        if !text.is_empty() {
            if !text.ends_with(b"\n") {
                text.push(b'\n');
            }
            if rel == "README.md" {
                text.push(b'\n');
            }
        }
        text.extend_from_slice(add.as_bytes());
        std::fs::write(stage.join(rel), text).with_context(|| format!("staging {rel}"))?;
        out.push((rel, have.is_none()));
    }
    Ok(out)
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

/// Every value that reaches a file checked before anything is written, each error naming
/// its argument.
fn check_arguments(args: &InitArgs) -> anyhow::Result<()> {
    use cell_model::{ValueKind, check_value};
    let version = |flag: &str, v: &str| -> anyhow::Result<()> {
        check_value(ValueKind::Version, v).map_err(|e| anyhow::anyhow!("{flag}: {e}"))?;
        ensure!(
            v.len() <= 64 && !v.eq_ignore_ascii_case("latest"),
            "{flag} `{v}`: write the version of one release (at most 64 characters), not latest"
        );
        Ok(())
    };
    let url = |flag: &str, v: &str, placeholders: &[&str]| -> anyhow::Result<()> {
        // `{url}` stands for a whole URL (`{url}.sha256`); the others for one word.
        let mut filled = v.replace("{url}", "https://example.org/x");
        for p in placeholders {
            filled = filled.replace(p, "x");
        }
        check_value(ValueKind::Url, &filled).map_err(|e| {
            anyhow::anyhow!("{flag}: {e} (placeholders: {})", placeholders.join(", "))
        })?;
        ensure!(v.len() <= 2048, "{flag}: longer than 2048 characters");
        Ok(())
    };
    if let Some(v) = &args.subject_version {
        version("--subject-version", v)?;
    }
    if let Some(v) = &args.cell_version {
        version("--cell-version", v)?;
    }
    if let Some(t) = &args.template {
        url("--template", t, &["{version}", "{os}", "{arch}"])?;
    }
    if let Some(c) = &args.checksum {
        url("--checksum", c, &["{url}", "{version}", "{os}", "{arch}"])?;
    }
    if let Some(u) = &args.cell_url {
        url("--cell-url", u, &["{version}", "{target}"])?;
    }
    ensure!(
        args.strip <= 8,
        "--strip {}: at most 8 leading path components",
        args.strip
    );
    Ok(())
}

/// How the generated workflow gets cell.
enum Source {
    /// A release, its digests pinned from `sums`.
    Release {
        version: String,
        url: Option<String>,
        sums: String,
    },
    /// The commit this binary was built from.
    Git { rev: String, dirty: bool },
}

fn cell_source(args: &InitArgs) -> anyhow::Result<Source> {
    if let Some(sums) = &args.cell_sums {
        return Ok(Source::Release {
            version: args
                .cell_version
                .clone()
                .unwrap_or_else(|| env!("CARGO_PKG_VERSION").to_owned()),
            url: args.cell_url.clone(),
            sums: sums.clone(),
        });
    }
    match crate::version::commit() {
        Some(c) => Ok(Source::Git {
            rev: c.sha().to_owned(),
            dirty: c.dirty(),
        }),
        None => bail!(
            "this cell does not know the commit it was built from, so the workflow cannot build the same one: pass --cell-sums <URL or file of the SHA256SUMS of a cell release>"
        ),
    }
}

/// A tarball release under test, as declared on the command line.
struct Subject {
    name: String,
    key: String,
    version: String,
    template: String,
    checksum: Option<String>,
    sha256: Option<String>,
    strip: u32,
}

fn subject(args: &InitArgs) -> anyhow::Result<Option<Subject>> {
    let Some(name) = &args.subject else {
        return Ok(None);
    };
    ensure!(
        !name.is_empty()
            && name.len() <= 40
            && name.starts_with(|c: char| c.is_ascii_lowercase())
            && name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'),
        "--subject `{}`: write a toolchain name of lower-case letters, digits and `-`, starting with a letter",
        cell_schema::escape::one_line(name)
    );
    ensure!(
        !name.starts_with("cell"),
        "--subject {name}: names starting with `cell` are cell's own (its CELL_* keys in versions.env); name the release under test another way"
    );
    ensure!(
        !KNOWN.contains(&name.as_str()),
        "--subject {name}: that name is one of the toolchains cell init finds; name the release under test another way"
    );
    let key = name.to_ascii_uppercase().replace('-', "_");
    let sha256 = match (&args.sha256, &args.checksum) {
        (Some(hex), _) => Some(
            cell_schema::Sha256::parse(hex)
                .map_err(|_| anyhow::anyhow!("--sha256: write the 64 hex digits of the tarball"))?
                .to_string(),
        ),
        (None, Some(_)) => None,
        (None, None) => bail!(
            "--subject {name}: say how its tarball is verified: --checksum <URL of its checksum file> or --sha256 <hex>"
        ),
    };
    let s = Subject {
        name: name.clone(),
        key,
        version: args.subject_version.clone().unwrap_or_default(),
        template: args.template.clone().unwrap_or_default(),
        checksum: args.checksum.clone(),
        sha256,
        strip: args.strip,
    };
    Ok(Some(s))
}

/// Pins the subject's Linux x86-64 digest from its published checksum file, the URLs
/// resolved by the configuration's own rules (`cell_model::tarball::resolve`).
fn pin_subject_digest(plan: &cell_model::Plan, s: &Subject) -> anyhow::Result<()> {
    let tc = plan
        .toolchains
        .values()
        .find(|t| t.name.as_str() == s.name)
        .expect("the subject was written");
    let cell_model::Install::Tarball(def) = &tc.install else {
        unreachable!("the subject is written as a tarball toolchain")
    };
    let source = cell_model::tarball::resolve(&plan.env, def, "linux", "x86_64")?;
    let checksum = source
        .checksum_url
        .as_deref()
        .expect("written with --checksum");
    let digest = cell_fetch::published_digest(
        checksum,
        &source.asset,
        cell_fetch::Timeouts::default(),
        Duration::from_mins(2),
    )
    .with_context(|| {
        format!(
            "pinning {}'s digest from {}",
            s.name,
            cell_schema::escape::one_line(checksum)
        )
    })?;
    let key = format!("{}_SHA256_LINUX_X86_64", s.key);
    cell_model::env::set_keys(&plan.env.path, &[(key, digest.to_string())])?;
    Ok(())
}

/// The toolchains asked for (or found), each on PATH.
fn toolchains(asked: Option<&str>) -> anyhow::Result<Vec<String>> {
    let names: Vec<String> = match asked {
        Some(list) => list
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect(),
        None => KNOWN
            .iter()
            .filter(|t| on_path(t))
            .map(|t| (*t).to_owned())
            .collect(),
    };
    ensure!(
        !names.is_empty(),
        "{}",
        if asked.is_some() {
            "--toolchains names none: write clang, gcc or both, comma-separated"
        } else {
            "neither clang nor gcc is on PATH: install one (scripts/setup, or apt-get install clang)"
        }
    );
    for n in &names {
        ensure!(
            KNOWN.contains(&n.as_str()),
            "--toolchains: `{}` is not one cell init knows: write clang and/or gcc, then add others to cell/cell.toml by hand",
            cell_schema::escape::one_line(n)
        );
        ensure!(on_path(n), "--toolchains: {n} is not on PATH");
    }
    let mut seen = std::collections::BTreeSet::new();
    Ok(names
        .into_iter()
        .filter(|n| seen.insert(n.clone()))
        .collect())
}

fn on_path(program: &str) -> bool {
    cell_run::tools::which(program).is_some()
}

/// Each phase's answer, from the reference's `-O2` build of the starter workload.
fn answers(reference: &str, stage: &Path) -> anyhow::Result<Vec<(String, String)>> {
    let bin = stage.join("starter");
    let status = Command::new(reference)
        .args(["-O2", "-o"])
        .arg(&bin)
        .arg(stage.join("bench/workload/c/main.c"))
        .stdin(Stdio::null())
        .status()
        .with_context(|| format!("running {reference}"))?;
    ensure!(
        status.success(),
        "{reference} -O2 could not build the starter workload ({status})"
    );
    let mut out = Vec::new();
    for phase in PHASES {
        out.push((phase.to_owned(), answer(&bin, phase)?));
    }
    std::fs::remove_file(&bin).ok();
    Ok(out)
}

/// The one line a phase prints, within [`ANSWER_TIMEOUT`].
fn answer(bin: &Path, phase: &str) -> anyhow::Result<String> {
    let mut child = Command::new(bin)
        .arg(phase)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .with_context(|| format!("running the starter workload's {phase}"))?;
    let started = Instant::now();
    loop {
        if child.try_wait()?.is_some() {
            break;
        }
        if started.elapsed() > ANSWER_TIMEOUT {
            child.kill().ok();
            child.wait().ok();
            bail!("the starter workload's {phase} ran past {ANSWER_TIMEOUT:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output()?;
    let text = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    // It goes into a TOML string as it is: printable ASCII without quotes or backslashes.
    ensure!(
        out.status.success()
            && !text.is_empty()
            && text.len() <= 200
            && text
                .bytes()
                .all(|b| b.is_ascii_graphic() && b != b'"' && b != b'\\' || b == b' '),
        "the starter workload's {phase} did not print one answer ({})",
        out.status
    );
    Ok(text)
}

fn cell_toml(
    toolchains: &[String],
    pins: &BTreeMap<String, AptPin>,
    subject: Option<&Subject>,
    source: &Source,
    answers: &[(String, String)],
) -> String {
    let reference = &toolchains[0];
    let mut t = String::from(
        "# What cell measures: rows (a build of the workload with a toolchain), toolchains, cells\n\
         # (runners). Pins and thresholds live in ../versions.env. Written by `cell init`.\n\n\
         workload = \"bench/workload\"\n\n\
         # Each phase's answer: every repetition is checked against it.\n[expect]\n",
    );
    for (phase, answer) in answers {
        let _ = writeln!(t, "{phase} = \"{answer}\"");
    }
    t.push_str(
        "\n# The positive control: a job that cannot see -O0 is slower than -O2 is invalid.\n\
         [tooth]\nslow = \"c-O0\"\nfast = \"c-O2\"\n\n\
         # When the workflow runs besides by hand (cron in UTC) and which cell it runs.\n\
         [workflow]\nschedule = [\"17 4 * * 1\"]\nbranches = [\"main\"]\n\
         paths = [\"versions.env\", \"cell/**\", \"bench/**\", \".github/workflows/cell.yml\"]\n",
    );
    let cell_line = match source {
        Source::Release { version, url, .. } => match url {
            Some(u) => format!("cell = {{ version = \"{version}\", url = \"{u}\" }}\n"),
            None => format!("cell = {{ version = \"{version}\" }}\n"),
        },
        Source::Git { rev, .. } => {
            format!("cell = {{ git = \"{CELL_REPOSITORY}\", rev = \"{rev}\" }}\n")
        }
    };
    t.push_str(&cell_line);
    t.push_str(
        "\n# A verdict on each pull request: its head timed read-only on one hosted cell, reported\n\
         # by a workflow that never runs its code (advisory: never a required check).\n\
         [workflow.pull_requests]\ncomment = \"always\"\n",
    );
    let _ = write!(
        t,
        "\n# One cell per runner label.\n[cells.\"{}\"]\n",
        pins::CELL_LABEL
    );
    for tc in toolchains {
        let version = match pins.get(tc).and_then(AptPin::version) {
            Some(_) => format!(", version = \"{}\"", pins::key(tc)),
            None => String::new(),
        };
        let _ = write!(
            t,
            "\n[toolchains.{tc}]\ninstall = {{ apt = {{ package = \"{tc}\"{version} }} }}\ntools.{tc} = {{ version = [\"--version\"] }}\n"
        );
    }
    if let Some(s) = subject {
        let checksum = s
            .checksum
            .as_ref()
            .map_or(String::new(), |c| format!("checksum = \"{c}\", "));
        let _ = write!(
            t,
            "\n# The release under test: every job downloads it and checks its digest before unpacking.\n\
             [toolchains.{n}]\nsubject = true\n\
             install = {{ tarball = {{ template = \"{tpl}\", {checksum}sha256 = \"{k}_SHA256\", version = \"{k}_VERSION\", strip = {strip} }} }}\n\
             tools.{n} = {{ version = [\"--version\"] }}\n",
            n = s.name,
            tpl = s.template,
            k = s.key,
            strip = s.strip,
        );
    }
    t.push_str(&row("c-O2", reference, "-O2"));
    t.push_str(&row("c-O0", reference, "-O0"));
    for tc in &toolchains[1..] {
        t.push_str(&row(&format!("{tc}-O2"), tc, "-O2"));
    }
    if let Some(s) = subject {
        t.push_str(&row(&s.name, &s.name, "-O2"));
    }
    t
}

fn row(name: &str, toolchain: &str, flag: &str) -> String {
    format!(
        "\n[rows.{name}]\ntoolchain = \"{toolchain}\"\nlabel = \"{toolchain} {flag}\"\nsource = \"c\"\n\
         build = [\"{{tool:{toolchain}}}\", \"{flag}\", \"-o\", \"{{out}}\", \"{{src}}/main.c\"]\n\
         run = [\"{{bin}}\", \"{{phase}}\"]\n"
    )
}

fn versions_env(
    pins: &BTreeMap<String, AptPin>,
    subject: Option<&Subject>,
    source: &Source,
) -> String {
    let mut v = format!(
        "# Every pin and threshold cell reads (KEY=value, no quoting). Written by `cell init`.\n\
         PHASES={}\nTOOTH_PHASE=mix\nTOOTH_MIN=1.5\nREFERENCE=c-O2\n",
        PHASES.join(",")
    );
    v.push_str(&pins::env_lines(pins));
    if let Source::Git { .. } = source {
        let _ = write!(
            v,
            "# The Rust the workflow builds cell with.\nRUST_VERSION={RUST_VERSION}\n"
        );
    }
    if let Some(s) = subject {
        let _ = writeln!(v, "{}_VERSION={}", s.key, s.version);
        if let Some(d) = &s.sha256 {
            let _ = writeln!(v, "{}_SHA256_LINUX_X86_64={d}", s.key);
        }
    }
    v
}

fn write(root: &Path, rel: &str, text: &str) -> anyhow::Result<PathBuf> {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().expect("a file under the root"))?;
    std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
    Ok(path)
}

/// The section `cell init` adds to README.md.
fn readme_section() -> String {
    format!(
        "{README_HEADING}\n\n\
         [cell]({CELL_REPOSITORY}) times this repository's workload (`bench/workload/`) built by each\n\
         toolchain of `cell/cell.toml` against the reference `c-O2`, with the pins and thresholds of\n\
         `versions.env`. `.github/workflows/cell.yml` (written by `cell plan`) runs it on every runner\n\
         listed and commits each run under `results/`, with its verdict against the runs before.\n\n\
         ```sh\n\
         cell local --reps 3   # the whole matrix on this machine\n\
         cell plan --check     # the workflow is what the configuration says\n\
         ```\n"
    )
}

fn report(
    toolchains: &[String],
    pins: &BTreeMap<String, AptPin>,
    subject: Option<&Subject>,
    source: &Source,
    answers: &[(String, String)],
    readme: Option<bool>,
) {
    for f in FILES {
        eprintln!("wrote {f}");
    }
    match readme {
        Some(true) => eprintln!("wrote README.md"),
        Some(false) => eprintln!("appended a section to README.md"),
        None => {}
    }
    let shown: Vec<String> = answers.iter().map(|(p, a)| format!("{p} = {a}")).collect();
    eprintln!(
        "reference c-O2 ({} -O2); toolchains {}; answers {}",
        toolchains[0],
        toolchains.join(", "),
        shown.join(", ")
    );
    for (tool, pin) in pins {
        match pin {
            AptPin::Given(v) | AptPin::Found(v) => eprintln!("{tool}: apt version {v} pinned"),
            AptPin::Unpinned { why, .. } => {
                eprintln!("{tool}: apt version not pinned ({why}): --pin {tool}=VERSION pins it");
            }
        }
    }
    if let Some(s) = subject {
        eprintln!(
            "release under test: {} {} ({}_SHA256_LINUX_X86_64 pinned)",
            s.name, s.version, s.key
        );
    }
    match source {
        Source::Release { version, .. } => {
            eprintln!(
                "the workflow installs cell {version}, checked against CELL_SHA256_<OS>_<ARCH>"
            );
        }
        Source::Git { rev, dirty } => {
            eprintln!(
                "the workflow builds cell at commit {rev} (this binary's); for a release: cell init --cell-sums <its SHA256SUMS> --force"
            );
            if *dirty {
                eprintln!(
                    "note: this binary was built with uncommitted changes beside {rev}: the workflow builds the commit, not them"
                );
            }
        }
    }
    eprintln!("next: cell local --reps 3, then commit and push");
}
