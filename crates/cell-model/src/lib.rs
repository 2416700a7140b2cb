//! The cell definition: `versions.env` + `cell/cell.toml` → one validated, resolved [`Plan`].
//!
//! Parsing ([`raw`], [`env`]) is syntax only; [`Plan::load`] validates every cross-reference once,
//! and every later stage takes the resolved `Plan`, never the raw files.

pub mod cell_source;
mod cells;
pub mod env;
mod env_checks;
mod error;
pub mod exact;
pub mod import;
mod load_tools;
pub mod pull_requests;
pub mod raw;
mod rows;
pub mod runners;
mod safe;
mod settings;
mod suite;
pub mod tarball;
pub mod template;
mod toolchains;
mod workflow;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub use cell_schema::{
    CellId, CellLabel, Clock, Phase, RowName, ServerName, ToolName, ToolchainName,
};
pub use cell_source::{CellRelease, CellSource};
pub use cells::Cell;
use cells::resolve_cells;
pub use env::VersionsEnv;
use env_checks::check_no_empty_value;
pub use error::{ConfigError, FieldError, LookupError, NameError, TarballError};
pub use load_tools::{
    Body, Durations, LOAD_TOOLS, LoadInstall, LoadToolDef, load_tool, load_tool_names, soak_tool,
    whole_seconds_tool,
};
pub use pull_requests::{CommentPolicy, PullRequests};
pub use rows::{Row, ToothDef};
use rows::{check_reference, resolve_rows, resolve_tooth};
pub(crate) use rows::{check_tools, existing_dir};
use safe::Kind;
pub use safe::{Kind as ValueKind, UnsafeValue, check as check_value};
pub use settings::{DEFAULTS, MAX_REPS, MAX_ROWS_PER_REFERENCE, MAX_SECONDS, Settings, UnpackCaps};
pub use suite::{
    CpuSets, DEFAULT_OHA_KEY, Expect, ExpectBody, HttpDef, Server, SessionDef, Shape, SoakDef,
    TOOL_HEADERS, Workload, names_in, parse_mode, request_problem,
};
pub use tarball::{TarballDef, TarballSource, Verification};
pub use template::{Arg, Piece, TemplateError, Vars};
use toolchains::resolve_toolchains;
pub use toolchains::{Install, Tool, Toolchain};
pub use workflow::WorkflowDef;
use workflow::{check_allow_dirty, resolve_workflow};

/// Where the config lives relative to the project root.
pub const VERSIONS_ENV: &str = "versions.env";
/// The cell definition, relative to the project root.
pub const CELL_TOML: &str = "cell/cell.toml";
/// The label of the machine `cell local` runs on.
pub const LOCAL_LABEL: &str = "local";
/// The A/A control row's name (reserved).
pub const CONTROL_ROW: &str = "control";
/// The apt package of valgrind, which the instruction lane (`INSTRUCTIONS=on`) runs under: the
/// workflow installs it and a job without it says to.
pub const VALGRIND_PACKAGE: &str = "valgrind";
/// Generated files `allow_dirty` may name.
pub const DIRTY_FILES: &[&str] = &["workflow"];
/// The `versions.env` key of the Rust that builds cell on a runner, unless `[workflow] rust` says.
pub const DEFAULT_WORKFLOW_RUST: &str = "RUST_VERSION";

/// Everything `cell` needs, validated.
#[derive(Clone, Debug)]
pub struct Plan {
    /// The project root.
    pub root: PathBuf,
    /// The raw pins (every key of `versions.env`).
    pub env: VersionsEnv,
    /// The protocol's parameters and the verdict's thresholds from `versions.env`.
    pub settings: Settings,
    /// Expected stdout per phase, newline-terminated.
    pub expect: BTreeMap<Phase, String>,
    /// Every toolchain, by name.
    pub toolchains: BTreeMap<ToolchainName, Toolchain>,
    /// Every row, by name.
    pub rows: BTreeMap<RowName, Row>,
    /// Cells declared in `cell.toml`.
    pub cells: BTreeMap<CellLabel, Cell>,
    /// The positive control's slow and fast rows.
    pub tooth: ToothDef,
    /// Generated files a user edits by hand.
    pub allow_dirty: Vec<String>,
    /// When the generated workflow runs.
    pub workflow: WorkflowDef,
    /// The http suite, when `cell/cell.toml` has one.
    pub http: Option<HttpDef>,
    /// The soak suite, when `cell/cell.toml` has one.
    pub soak: Option<SoakDef>,
}

/// Whether a server is built by the release under test: its toolchain is the subject and
/// installs from a tarball, so its tools come from the verified tree, never from PATH.
#[must_use]
pub fn built_by_release(plan: &Plan, s: &Server) -> bool {
    let tc = &plan.toolchains[&s.toolchain];
    tc.subject && matches!(tc.install, Install::Tarball(_))
}

impl Plan {
    /// Loads `versions.env` and `cell/cell.toml` under `root`, validates, resolves.
    pub fn load(root: &Path) -> Result<Self, ConfigError> {
        // Every path the plan hands out is absolute, so builds work from any cwd.
        let root = &std::path::absolute(root).map_err(|error| ConfigError::Io {
            path: root.to_owned(),
            error,
        })?;
        let env = VersionsEnv::load(&root.join(VERSIONS_ENV))?;
        let toml_path = root.join(CELL_TOML);
        let text = std::fs::read_to_string(&toml_path).map_err(|error| ConfigError::Io {
            path: toml_path.clone(),
            error,
        })?;
        // A BOM some editors write is not part of the first key.
        let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
        let toml_error = |e: toml::de::Error| ConfigError::Toml {
            path: toml_path.clone(),
            msg: e.to_string().trim_end().to_owned(),
        };
        let value: toml::Table = toml::from_str(text).map_err(toml_error)?;
        if let Some((field, c)) = safe::invisible_in(&value) {
            return Err(ConfigError::Field {
                path: toml_path,
                field,
                msg: format!(
                    "holds the invisible character U+{:04X}: a name, command or label is read by people and by shells alike, so write it without",
                    u32::from(c)
                ),
            });
        }
        let raw: raw::RawConfig = toml::from_str(text).map_err(toml_error)?;
        Self::resolve(root, env, &toml_path, raw)
    }

    /// Validates and resolves the parsed files, one stage after the other; the stages run in
    /// this order so that a file with several mistakes always reports the same one first.
    fn resolve(
        root: &Path,
        env: VersionsEnv,
        toml_path: &Path,
        raw: raw::RawConfig,
    ) -> Result<Self, ConfigError> {
        let at = |e: FieldError| e.in_file(toml_path);
        check_no_empty_value(&env)?;
        let settings = Settings::from_env(&env)?;
        let expect = expected_answers(&raw.expect, &settings.phases).map_err(at)?;
        let mut toolchains = resolve_toolchains(raw.toolchains, &env).map_err(at)?;
        let workload = root.join(&raw.workload);
        let rows = resolve_rows(&workload, raw.rows, &mut toolchains).map_err(at)?;
        check_reference(&env, &settings.reference, &rows)?;
        let tooth = resolve_tooth(&raw.tooth, &rows).map_err(at)?;
        let cells = resolve_cells(raw.cells).map_err(at)?;
        check_allow_dirty(&raw.allow_dirty).map_err(at)?;
        let mut raw_workflow = raw.workflow;
        let raw_pull_requests = raw_workflow.pull_requests.take();
        let mut workflow = resolve_workflow(&env, raw_workflow).map_err(at)?;
        workflow.pull_requests =
            pull_requests::resolve_pull_requests(raw_pull_requests, &cells, &toolchains)
                .map_err(at)?;
        let http = raw
            .http
            .map(|h| suite::resolve_http(root, h, &toolchains, &env))
            .transpose()
            .map_err(at)?;
        let soak = raw
            .soak
            .as_ref()
            .map(|s| suite::resolve_soak(s, http.as_ref()))
            .transpose()
            .map_err(at)?;
        let plan = Self {
            root: root.to_owned(),
            env,
            settings,
            expect,
            toolchains,
            rows,
            cells,
            tooth,
            allow_dirty: raw.allow_dirty,
            workflow,
            http,
            soak,
        };
        plan.check_env_keys()?;
        plan.check_pin_values()?;
        plan.check_tarballs().map_err(at)?;
        Ok(plan)
    }

    /// Every tarball install has its URL and digest on every cell's architecture.
    fn check_tarballs(&self) -> Result<(), FieldError> {
        let subjects: Vec<&str> = self
            .toolchains
            .values()
            .filter(|t| t.subject)
            .map(|t| t.name.as_str())
            .collect();
        if subjects.len() > 1 {
            return Err(FieldError::new(
                format!("toolchains.{}.subject", subjects[1]),
                format!(
                    "one release is under test, and {} are declared: keep `subject = true` on one",
                    subjects.join(", ")
                ),
            ));
        }
        for cell in self.cells.values() {
            for tc in self.toolchains.values() {
                if matches!(tc.install, Install::Tarball(_)) {
                    let bad = |msg: String| {
                        FieldError::new(
                            format!("toolchains.{}.install.tarball", tc.name),
                            format!("cell `{}`: {msg}", cell.label),
                        )
                    };
                    let src = self
                        .tarball_source(tc, &cell.os, &cell.arch)
                        .map_err(|e| bad(e.to_string()))?;
                    for url in src.urls.iter().chain(&src.checksum_url) {
                        safe::check(Kind::Url, url).map_err(|e| bad(e.to_string()))?;
                    }
                    if !cell_schema::ids::is_safe_id(&src.tag) {
                        return Err(bad(format!(
                            "tag `{}` is not letters, digits, `.`, `_`, `+` and `-`",
                            cell_schema::escape::one_line(&src.tag)
                        )));
                    }
                }
            }
        }
        Ok(())
    }

    /// A cell by label; `local` is always there.
    pub fn cell(&self, label: &str) -> Result<Cell, LookupError> {
        if label == LOCAL_LABEL {
            return Ok(Cell::local());
        }
        self.cells
            .get(label)
            .cloned()
            .ok_or_else(|| LookupError::Cell {
                label: label.to_owned(),
                known: self.cells.keys().map(ToString::to_string).collect(),
            })
    }

    /// A toolchain by name.
    pub fn toolchain(&self, name: &str) -> Result<&Toolchain, LookupError> {
        self.toolchains
            .get(name)
            .ok_or_else(|| LookupError::Toolchain {
                name: name.to_owned(),
                known: self.toolchains.keys().map(ToString::to_string).collect(),
            })
    }

    /// The reference row.
    pub fn reference(&self) -> &Row {
        &self.rows[&self.settings.reference]
    }

    /// The toolchain of the reference row.
    pub fn reference_toolchain(&self) -> &Toolchain {
        &self.toolchains[&self.reference().toolchain]
    }

    /// A tarball install resolved for one platform (see [`tarball`] for the key lookup).
    pub fn tarball_source(
        &self,
        tc: &Toolchain,
        os: &str,
        arch: &str,
    ) -> Result<TarballSource, TarballError> {
        let Install::Tarball(def) = &tc.install else {
            return Err(TarballError::NotTarball(tc.name.clone()));
        };
        tarball::resolve(&self.env, def, os, arch)
    }

    /// The release under test, when a toolchain is declared one.
    pub fn subject(&self) -> Option<&Toolchain> {
        self.toolchains.values().find(|tc| tc.subject)
    }

    /// The http servers `cell local` runs without `--servers` and the workflow gives a job:
    /// every one with `full`, else `[http.default] servers` (all without it), and always
    /// every server built by the release under test, whose record the gate checks. Sorted.
    #[must_use]
    pub fn http_default_servers(&self, full: bool) -> Vec<ServerName> {
        let Some(http) = &self.http else {
            return Vec::new();
        };
        let mut out: std::collections::BTreeSet<ServerName> =
            http.default_servers(full).into_iter().collect();
        out.extend(
            http.servers
                .values()
                .filter(|s| built_by_release(self, s))
                .map(|s| s.name.clone()),
        );
        out.into_iter().collect()
    }

    /// The `versions.env` pins of a toolchain, as written (arch-specific keys included).
    pub fn pins(&self, tc: &Toolchain) -> BTreeMap<String, String> {
        let mut keys = tc.pin_keys.clone();
        if let Install::Tarball(def) = &tc.install {
            keys.extend(def.url_key.iter().chain(&def.sha256_key).cloned());
        }
        let mut out = BTreeMap::new();
        for (k, e) in &self.env.entries {
            if keys.iter().any(|p| {
                k == p
                    || k.strip_prefix(p.as_str())
                        .is_some_and(|s| s.starts_with('_'))
            }) {
                out.insert(k.clone(), e.value.clone());
            }
        }
        out
    }

    /// Where `cell calibrate` writes, and the gate and `CLOCK=auto` read, a cell's A/A noise.
    pub fn calibration_path(&self, cell_id: &CellId) -> PathBuf {
        self.root
            .join("cell")
            .join("calibration")
            .join(format!("{cell_id}.json"))
    }
}

/// `[expect]`: an answer for every phase of `PHASES` and for no other, newline-terminated.
fn expected_answers(
    raw: &BTreeMap<String, String>,
    phases: &[Phase],
) -> Result<BTreeMap<Phase, String>, FieldError> {
    let mut expect = BTreeMap::new();
    for (phase, answer) in raw {
        if !phases.iter().any(|p| p.as_str() == phase) {
            return Err(FieldError::new(
                format!("expect.{phase}"),
                format!(
                    "`{phase}` is not in PHASES of versions.env ({})",
                    join(phases)
                ),
            ));
        }
        expect.insert(
            Phase::from(phase.as_str()),
            format!("{}\n", answer.trim_end()),
        );
    }
    for p in phases {
        if !expect.contains_key(p) {
            return Err(FieldError::new(
                format!("expect.{p}"),
                format!("no expected answer for phase `{p}`: add `{p} = \"...\"` under [expect]"),
            ));
        }
    }
    Ok(expect)
}

/// A string of `cell/cell.toml` that the workflow is written with, checked for its kind.
pub(crate) fn safe_field(field: &str, kind: Kind, value: &str) -> Result<(), FieldError> {
    safe::check(kind, value).map_err(|e| FieldError::new(field, e.to_string()))
}

/// A name of a toolchain, row, cell or server: letters, digits, `.`, `_` and `-`, not
/// starting with `.` or `-`.
pub(crate) fn check_name(name: &str) -> Result<(), NameError> {
    if !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
        && !name.starts_with(['.', '-'])
    {
        Ok(())
    } else {
        Err(NameError(name.to_owned()))
    }
}

pub(crate) fn join<T: std::fmt::Display>(items: impl IntoIterator<Item = T>) -> String {
    let v: Vec<String> = items.into_iter().map(|t| t.to_string()).collect();
    if v.is_empty() {
        "none".to_owned()
    } else {
        v.join(", ")
    }
}
