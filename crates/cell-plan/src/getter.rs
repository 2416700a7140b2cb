//! How the workflow's jobs get cell (`[workflow] cell`): a binary a build job of this run
//! compiled (from this commit or a pinned git revision), or a pinned release each job
//! downloads and checks against its digest in versions.env before running it.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Read as _;
use std::path::Path;

use cell_model::{CellRelease, CellSource, Plan};

use crate::PlanError;
use crate::side::{self, BIN_DIR, SHA256_OF, build_job_id, get_cell};
use crate::workflow::{Job, Map, Step, expr};

/// The getter of a plan; the build jobs it needs go into `jobs`.
pub fn of(plan: &Plan, jobs: &mut Map<Job>) -> Result<Getter, PlanError> {
    let source = match plan.workflow.cell.clone() {
        Some(source) => source,
        None if own_repository(&plan.root) => CellSource::Source,
        None => return Err(unset(plan)),
    };
    let getter = match &source {
        CellSource::Release(release) => release_getter(plan, release)?,
        CellSource::Source | CellSource::Git { .. } => {
            let rust = build_rust(plan, false)?;
            let from = match &source {
                CellSource::Git { url, rev } => side::BuildFrom::Git { url, rev },
                _ => side::BuildFrom::ThisCommit,
            };
            for platform in side::platforms(plan) {
                jobs.insert(platform.job(), side::build_job(&rust, &platform, from));
            }
            Getter::Built
        }
    };
    Ok(getter)
}

/// Whether `root` is cell's own repository (its binary's package is there), the one place an
/// unset `[workflow] cell` means "build this commit": elsewhere that build would fail, or build
/// something other than cell.
pub fn own_repository(root: &Path) -> bool {
    const MANIFEST_CAP: u64 = 64 * 1024;
    let Ok(file) = std::fs::File::open(root.join("crates/cell/Cargo.toml")) else {
        return false;
    };
    let mut text = String::new();
    file.take(MANIFEST_CAP).read_to_string(&mut text).is_ok()
        && text.lines().any(|l| l.trim() == "name = \"cell-bench\"")
}

/// An unset `[workflow] cell` outside cell's own repository: what to write.
fn unset(plan: &Plan) -> PlanError {
    PlanError::Config {
        path: plan.root.join(cell_model::CELL_TOML),
        field: "workflow.cell".into(),
        msg: format!(
            "not set, and this is not cell's own repository: pin the cell the jobs run, e.g. cell = {{ version = \"{}\" }} with `cell plan --cell-sums <URL of its SHA256SUMS>` (docs/own-compiler.md), or cell = {{ git = \"https://…\", rev = \"<full commit id>\" }}; cell = \"source\" builds this repository's own commit",
            env!("CARGO_PKG_VERSION")
        ),
    }
}

/// How the jobs get cell: the binary a build job of this run compiled, or a pinned release.
#[derive(Clone, Debug)]
pub enum Getter {
    /// `build-<platform>` compiled it; its digest comes through the job's outputs.
    Built,
    /// A published release: its version and, per platform, the asset's URL and pinned digest.
    Release {
        /// The release's version.
        version: String,
        /// `<os>-<arch>` → (URL, SHA-256).
        assets: BTreeMap<String, (String, String)>,
    },
}

impl Getter {
    /// The build jobs a job on `platforms` waits for.
    pub fn needs(&self, platforms: &[String]) -> Vec<String> {
        match self {
            Getter::Built => platforms.iter().map(|p| build_job_id(p)).collect(),
            Getter::Release { .. } => Vec::new(),
        }
    }

    /// The steps that put cell for the job's platform on PATH.
    pub fn steps(&self, platforms: &[String]) -> Vec<Step> {
        match self {
            Getter::Built => get_cell(platforms),
            Getter::Release { version, assets } => {
                vec![install_release(version, assets, platforms)]
            }
        }
    }
}

/// The job's platform: the one it runs on, or `matrix.os`-`matrix.arch` when there are several.
pub(crate) fn job_platform(platforms: &[String]) -> String {
    match platforms {
        [one] => one.clone(),
        _ => format!("{}-{}", expr("matrix.os"), expr("matrix.arch")),
    }
}

/// Downloads the pinned release for the job's platform, checks its SHA-256 against the one
/// versions.env pins before anything of it runs, unpacks the binary alone and checks it names
/// the pinned version.
fn install_release(
    version: &str,
    assets: &BTreeMap<String, (String, String)>,
    platforms: &[String],
) -> Step {
    let pick = |f: fn(&(String, String)) -> &String| {
        platforms
            .iter()
            .filter_map(|p| assets.get(p).map(|a| format!("{p}={}", f(a))))
            .collect::<Vec<_>>()
            .join("\n")
    };
    Step::run(
        format!("install cell {version} (the pinned release, its SHA-256 checked)"),
        &[
            SHA256_OF,
            "want=$(printf '%s\\n' \"$CELL_SHA256S\" | sed -n \"s/^$PLATFORM=//p\")",
            "url=$(printf '%s\\n' \"$CELL_URLS\" | sed -n \"s/^$PLATFORM=//p\")",
            "if [ -z \"$want\" ] || [ -z \"$url\" ]; then",
            "  echo \"::error::no cell $CELL_VERSION release is pinned for $PLATFORM: run cell plan --cell-sums\"",
            "  exit 1",
            "fi",
            &format!("dir=\"$RUNNER_TEMP/{BIN_DIR}\""),
            "mkdir -p \"$dir\"",
            "curl -fsSL --retry 3 --retry-delay 5 --connect-timeout 30 --max-time 600 --max-filesize 500000000 -o \"$dir/cell.tar.gz\" \"$url\"",
            "got=$(sha256_of \"$dir/cell.tar.gz\")",
            "if [ \"$got\" != \"$want\" ]; then",
            "  echo \"::error::$url has SHA-256 $got, not the $want versions.env pins for cell $CELL_VERSION on $PLATFORM: nothing of it was run\"",
            "  exit 1",
            "fi",
            "tar -xzf \"$dir/cell.tar.gz\" -C \"$dir\" --strip-components 1 \"cell-$CELL_VERSION-$PLATFORM/cell\"",
            "rm \"$dir/cell.tar.gz\"",
            "printed=$(\"$dir/cell\" --version)",
            "case \"$printed\" in",
            "  \"cell $CELL_VERSION \"*|\"cell $CELL_VERSION\") echo \"$printed\" ;;",
            "  *) echo \"::error::the cell $CELL_VERSION release for $PLATFORM prints: $printed\"; exit 1 ;;",
            "esac",
            "echo \"$dir\" >> \"$GITHUB_PATH\"",
        ],
    )
    .env("PLATFORM", job_platform(platforms))
    .env("CELL_VERSION", version)
    .env("CELL_URLS", pick(|a| &a.0))
    .env("CELL_SHA256S", pick(|a| &a.1))
    .comment("[workflow] cell of cell/cell.toml: a pinned release, never the latest; a digest that differs fails the job before anything runs.")
}

/// The Rust a build job compiles cell with: required when the workflow builds it. `release`:
/// asked for the release workflow, which always builds.
pub(crate) fn build_rust(plan: &Plan, release: bool) -> Result<String, PlanError> {
    let key = &plan.workflow.rust_key;
    let (what, otherwise) = if release {
        ("the release workflow builds cell", String::new())
    } else {
        (
            "the workflow builds cell",
            ", or install a release with [workflow] cell = { version = \"…\" }".to_owned(),
        )
    };
    plan.workflow.rust.clone().ok_or_else(|| PlanError::Config {
        path: plan.env.path.clone(),
        field: key.clone(),
        msg: format!(
            "{what} with the Rust this key pins, and versions.env has no {key}: add {key}=<version> (or name another key in [workflow] rust of cell/cell.toml{otherwise})"
        ),
    })
}

/// Every (os, arch) a job of the plan runs cell on: the host's (`plan` and `collect`) and each
/// cell's. A pinned release needs a digest for each, so a platform cell's own releases do not
/// build is refused here, naming the cells (a mirror's URL may serve more).
pub fn release_platforms(
    plan: &Plan,
    release: &CellRelease,
) -> Result<BTreeSet<(String, String)>, PlanError> {
    let mut targets = BTreeSet::from([("linux".to_owned(), "x86_64".to_owned())]);
    targets.extend(plan.cells.values().map(|c| (c.os.clone(), c.arch.clone())));
    if release.url != cell_model::cell_source::DEFAULT_RELEASE_URL {
        return Ok(targets);
    }
    let published: Vec<&str> = crate::release::TARGETS.iter().map(|(t, _)| *t).collect();
    let missing: Vec<String> = plan
        .cells
        .iter()
        .filter(|(_, c)| !published.contains(&format!("{}-{}", c.os, c.arch).as_str()))
        .map(|(id, c)| format!("{id} ({}-{})", c.os, c.arch))
        .collect();
    if missing.is_empty() {
        return Ok(targets);
    }
    Err(PlanError::Config {
        path: plan.root.join(cell_model::CELL_TOML),
        field: "workflow.cell".into(),
        msg: format!(
            "cell's releases are built for {} only, and these cells run on another platform: {}; build cell there instead with cell = {{ git = \"https://…\", rev = \"<full commit id>\" }}, serve your own build through url = \"…{{version}}…{{target}}…\", or drop those cells",
            published.join(", "),
            missing.join(", ")
        ),
    })
}

/// The pinned release's URL and digest for every platform a job runs on (the host's too).
fn release_getter(plan: &Plan, release: &CellRelease) -> Result<Getter, PlanError> {
    let mut assets = BTreeMap::new();
    for (os, arch) in release_platforms(plan, release)? {
        let digest = release
            .digest(&plan.env, &os, &arch)
            .map_err(|e| PlanError::Config {
                path: plan.env.path.clone(),
                field: e.field,
                msg: e.msg,
            })?;
        let target = format!("{os}-{arch}");
        assets.insert(
            target.clone(),
            (release.url_for(&target), digest.as_str().to_owned()),
        );
    }
    Ok(Getter::Release {
        version: release.version.clone(),
        assets,
    })
}
