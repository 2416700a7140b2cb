//! The cell definition: `versions.env` + `cell/cell.toml` → one validated, resolved [`Plan`].
//!
//! Parsing ([`raw`], [`env`]) is syntax only; [`Plan::load`] validates every cross-reference once,
//! and every later stage takes the resolved `Plan`, never the raw files.

pub mod env;
mod error;
pub mod import;
pub mod raw;
pub mod runners;
mod safe;
mod settings;
mod suite;
pub mod tarball;
pub mod template;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub use cell_schema::{
    CellId, CellLabel, Clock, Phase, RowName, ServerName, ToolName, ToolchainName,
};
pub use env::VersionsEnv;
pub use error::{ConfigError, FieldError, LookupError, NameError, TarballError};
use safe::Kind;
pub use safe::{Kind as ValueKind, UnsafeValue};
pub use settings::{DEFAULTS, MAX_REPS, MAX_ROWS_PER_REFERENCE, MAX_SECONDS, Settings, UnpackCaps};
pub use suite::{
    CpuSets, DEFAULT_OHA_KEY, Expect, ExpectBody, HttpDef, LOAD_TOOLS, Server, SessionDef, Shape,
    SoakDef, TOOL_HEADERS, Workload, names_in, parse_mode, request_problem,
};
pub use tarball::{TarballDef, TarballSource, Verification};
pub use template::{Arg, Piece, TemplateError, Vars};

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

/// A runner: label, OS, architecture.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cell {
    /// The runner label jobs ask for (`runs-on`).
    pub label: CellLabel,
    /// `linux`, `macos`, `windows`.
    pub os: String,
    /// `x86_64`, `aarch64`.
    pub arch: String,
}

impl Cell {
    /// `<os>-<arch>-<label>`.
    pub fn id(&self) -> CellId {
        CellId::new(format!("{}-{}-{}", self.os, self.arch, self.label))
    }

    /// The cell as a job result records it.
    pub fn info(&self) -> cell_schema::CellInfo {
        cell_schema::CellInfo {
            id: self.id(),
            label: self.label.clone(),
            os: self.os.clone(),
            arch: self.arch.clone(),
        }
    }

    /// The machine this process runs on, as the `local` cell.
    pub fn local() -> Self {
        Self {
            label: CellLabel::from(LOCAL_LABEL),
            os: std::env::consts::OS.to_owned(),
            arch: std::env::consts::ARCH.to_owned(),
        }
    }
}

/// A program a toolchain provides.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tool {
    /// The tool's name in templates.
    pub name: ToolName,
    /// The program looked up on PATH.
    pub program: String,
    /// Arguments that print its version.
    pub version_args: Vec<String>,
}

/// How a job installs a toolchain, with `versions.env` keys resolved to values where fixed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Install {
    /// An apt package, optionally at a pinned version.
    Apt {
        /// The Debian/Ubuntu package that provides it.
        package: String,
        /// The package version `versions.env` pins, when it pins one.
        version: Option<String>,
    },
    /// A setup action.
    Setup {
        /// `owner/repo`.
        action: String,
        /// Its version input.
        input: String,
        /// The version the action installs, from `versions.env`.
        version: String,
    },
    /// A tarball verified by SHA-256: keys are resolved per architecture by [`Plan::tarball`].
    Tarball(TarballDef),
    /// On the runner image already.
    Preinstalled,
}

/// A toolchain: what one job installs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Toolchain {
    /// The name jobs and rows use (`[toolchains.<name>]`).
    pub name: ToolchainName,
    /// How it is installed.
    pub install: Install,
    /// The programs its rows name as `{tool:<name>}`.
    pub tools: BTreeMap<ToolName, Tool>,
    /// Its rows, sorted.
    pub rows: Vec<RowName>,
    /// What to do where it is missing.
    pub hint: String,
    /// `versions.env` keys recorded as its pins.
    pub pin_keys: Vec<String>,
    /// The release under test.
    pub subject: bool,
}

/// A build recipe.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    /// The name results use (`[rows.<name>]`).
    pub name: RowName,
    /// The toolchain that builds it, and so the job it belongs to.
    pub toolchain: ToolchainName,
    /// A human label.
    pub label: String,
    /// Absolute source directory.
    pub source: PathBuf,
    /// The build command, a template with `{src}`, `{out}`, `{tool:…}`.
    pub build: Vec<Arg>,
    /// The timed command, a template with `{bin}` and `{phase}`.
    pub run: Vec<Arg>,
    /// Its own verdict clock, when it sets one.
    pub clock: Option<Clock>,
}

impl Row {
    /// Tools its templates name, in order of first use.
    pub fn tools(&self) -> Vec<ToolName> {
        let mut out: Vec<ToolName> = Vec::new();
        for t in self.build.iter().chain(&self.run).flat_map(Arg::tools) {
            if !out.contains(t) {
                out.push(t.clone());
            }
        }
        out
    }
}

/// The positive control.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToothDef {
    /// The slow row.
    pub slow: RowName,
    /// The fast row.
    pub fast: RowName,
}

/// `[workflow]`: when the generated workflow runs, validated.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WorkflowDef {
    /// Cron lines of the `schedule` trigger, five fields each.
    pub schedule: Vec<String>,
    /// Branches of the `push` trigger; empty: every branch.
    pub branches: Vec<String>,
    /// Paths of the `push` trigger; empty: no push trigger.
    pub paths: Vec<String>,
    /// The `versions.env` key of the Rust that builds cell on a runner.
    pub rust_key: String,
    /// Its value, when `versions.env` has it (`cell plan` requires it; `cell run` does not).
    pub rust: Option<String>,
    /// The branch `collect` commits `results/` to (created on first use), for a repository
    /// whose checked-out branch is protected; `None`: the checked-out branch.
    pub results_branch: Option<String>,
}

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
        let workflow = resolve_workflow(&env, raw.workflow).map_err(at)?;
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

/// Validates `[workflow]`: five-field cron lines, no empty pattern, the Rust key it names.
fn resolve_workflow(env: &VersionsEnv, raw: raw::RawWorkflow) -> Result<WorkflowDef, FieldError> {
    for (i, cron) in raw.schedule.iter().enumerate() {
        safe_field(&format!("workflow.schedule[{i}]"), Kind::Cron, cron)?;
        let fields = cron.split_whitespace().count();
        if fields != 5 {
            return Err(FieldError::new(
                format!("workflow.schedule[{i}]"),
                format!(
                    "`{cron}` has {fields} fields: write five (minute hour day-of-month month day-of-week), e.g. \"17 4 * * 1\""
                ),
            ));
        }
    }
    for (list, name) in [(&raw.branches, "branches"), (&raw.paths, "paths")] {
        if let Some(i) = list.iter().position(|p| p.trim().is_empty()) {
            return Err(FieldError::new(
                format!("workflow.{name}[{i}]"),
                "empty pattern: write a glob such as \"cell/**\"",
            ));
        }
        for (i, pattern) in list.iter().enumerate() {
            safe_field(&format!("workflow.{name}[{i}]"), Kind::Glob, pattern)?;
        }
    }
    let rust_key = raw
        .rust
        .clone()
        .unwrap_or_else(|| DEFAULT_WORKFLOW_RUST.to_owned());
    let rust = env.get(&rust_key).map(str::to_owned);
    if raw.rust.is_some() && rust.is_none() {
        return Err(FieldError::new(
            "workflow.rust",
            format!("versions.env has no {rust_key}: add a line {rust_key}=<rust version>"),
        ));
    }
    if let Some(b) = &raw.results_branch
        && !is_branch_name(b)
    {
        return Err(FieldError::new(
            "workflow.results_branch",
            format!(
                "`{}`: write a branch name of letters, digits, `.`, `_`, `-` and `/` (not starting with `-` or `/`, no `..`, not ending in `/` or `.lock`)",
                cell_schema::escape::one_line(b)
            ),
        ));
    }
    Ok(WorkflowDef {
        schedule: raw.schedule,
        branches: raw.branches,
        paths: raw.paths,
        rust_key,
        rust,
        results_branch: raw.results_branch,
    })
}

/// A branch name git takes and a shell, a YAML file and a refspec pass through unchanged.
fn is_branch_name(b: &str) -> bool {
    !b.is_empty()
        && b.len() <= 200
        && b.bytes()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'_' | b'-' | b'/'))
        && !b.starts_with(['-', '/', '.'])
        && !b.ends_with('/')
        && !b.to_ascii_lowercase().ends_with(".lock")
        && !b.contains("..")
        && !b.contains("//")
        && !b.contains("/.")
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

/// The value of the `versions.env` key that `field` names.
fn env_value(env: &VersionsEnv, field: &str, key: &str) -> Result<String, FieldError> {
    if !env::is_key(key) {
        return Err(FieldError::new(
            field,
            format!(
                "`{}` is not a versions.env key: name one of letters, digits and _ (e.g. GO_VERSION)",
                cell_schema::escape::one_line(key)
            ),
        ));
    }
    env.get(key).map(str::to_owned).ok_or_else(|| {
        FieldError::new(
            field,
            format!("versions.env has no {key}: add a line {key}=..."),
        )
    })
}

/// `[toolchains]`, each with no rows yet.
fn resolve_toolchains(
    raw: BTreeMap<String, raw::RawToolchain>,
    env: &VersionsEnv,
) -> Result<BTreeMap<ToolchainName, Toolchain>, FieldError> {
    raw.into_iter()
        .map(|(name, t)| {
            let tc = resolve_toolchain(&name, t, env)?;
            Ok((tc.name.clone(), tc))
        })
        .collect()
}

/// One toolchain: its install with the pins resolved, its tools, its hint.
fn resolve_toolchain(
    name: &str,
    raw: raw::RawToolchain,
    env: &VersionsEnv,
) -> Result<Toolchain, FieldError> {
    let f = |s: &str| format!("toolchains.{name}.{s}");
    check_name(name).map_err(|e| FieldError::new(format!("toolchains.{name}"), e.to_string()))?;
    let mut pin_keys = Vec::new();
    let install = resolve_install(&f("install"), raw.install, env, &mut pin_keys)?;
    for k in &raw.pins {
        env_value(env, &f("pins"), k)?;
        pin_keys.push(k.clone());
    }
    if raw.tools.is_empty() {
        return Err(FieldError::new(
            f("tools"),
            "a toolchain needs at least one tool",
        ));
    }
    if let Some(bad) = raw.tools.keys().find(|tn| check_name(tn).is_err()) {
        return Err(FieldError::new(
            f(&format!("tools.{bad}")),
            NameError(bad.clone()).to_string(),
        ));
    }
    let tools = raw
        .tools
        .into_iter()
        .map(|(tn, rt)| {
            let tool = Tool {
                program: rt.program.unwrap_or_else(|| tn.clone()),
                name: ToolName::from(tn.as_str()),
                version_args: rt.version,
            };
            (tool.name.clone(), tool)
        })
        .collect();
    let hint = raw.hint.unwrap_or_else(|| default_hint(&install));
    if raw.subject && !matches!(install, Install::Tarball(_)) {
        return Err(FieldError::new(
            f("subject"),
            "the release under test is installed from its tarball: give it `install = { tarball = { … } }`",
        ));
    }
    Ok(Toolchain {
        name: ToolchainName::from(name),
        install,
        tools,
        rows: Vec::new(),
        hint,
        pin_keys,
        subject: raw.subject,
    })
}

/// An install of any kind, its `versions.env` keys looked up; the keys it pins are added to
/// `pin_keys` (a tarball's URL and digest keys are resolved per architecture later).
fn resolve_install(
    field: &str,
    raw: raw::RawInstall,
    env: &VersionsEnv,
    pin_keys: &mut Vec<String>,
) -> Result<Install, FieldError> {
    Ok(match raw {
        raw::RawInstall::Apt { package, version } => {
            safe_field(&format!("{field}.apt.package"), Kind::AptPackage, &package)?;
            Install::Apt {
                package,
                version: optional_pin(env, &format!("{field}.apt.version"), version, pin_keys)?,
            }
        }
        raw::RawInstall::Setup {
            action,
            input,
            version,
        } => {
            safe_field(&format!("{field}.setup.action"), Kind::Action, &action)?;
            safe_field(&format!("{field}.setup.input"), Kind::InputName, &input)?;
            pin_keys.push(version.clone());
            Install::Setup {
                action,
                input,
                version: env_value(env, &format!("{field}.setup.version"), &version)?,
            }
        }
        raw::RawInstall::Tarball {
            url,
            template,
            spell,
            sha256,
            checksum,
            version,
            tag,
            strip,
            mirrors,
        } => {
            let f = format!("{field}.tarball");
            if url.is_some() == template.is_some() {
                return Err(FieldError::new(
                    &f,
                    "set exactly one of `url` (a versions.env key) and `template` (the URL with {version}, {os}, {arch})",
                ));
            }
            if sha256.is_none() && checksum.is_none() {
                return Err(FieldError::new(
                    &f,
                    "set `sha256` (a versions.env key of the pinned digest), `checksum` (the release's published checksum file, e.g. \"{url}.sha256\"), or both",
                ));
            }
            for (name, spelt) in &spell {
                if !cell_schema::ids::is_safe_id(spelt) || !cell_schema::ids::is_safe_id(name) {
                    return Err(FieldError::new(
                        format!("{f}.spell.{name}"),
                        "spell an OS or architecture with letters, digits, `.`, `_` and `-`",
                    ));
                }
            }
            let version_key = version.clone();
            Install::Tarball(TarballDef {
                url_key: url,
                template,
                spell,
                sha256_key: sha256,
                checksum,
                version: optional_pin(env, &format!("{f}.version"), version, pin_keys)?,
                version_key,
                tag,
                strip,
                mirrors: checked_mirrors(&format!("{f}.mirrors"), mirrors)?,
            })
        }
        raw::RawInstall::Preinstalled {} => Install::Preinstalled,
    })
}

/// Mirror prefixes: URLs of the URL character set (the digest is checked on whatever a mirror
/// serves, so plain http is allowed); at most 16.
fn checked_mirrors(field: &str, mirrors: Vec<String>) -> Result<Vec<String>, FieldError> {
    if mirrors.len() > 16 {
        return Err(FieldError::new(field, "list at most 16 mirrors"));
    }
    for (i, m) in mirrors.iter().enumerate() {
        safe::check(Kind::Url, m).map_err(|e| {
            FieldError::new(
                format!("{field}[{i}]"),
                format!("{e}; the archive's file name is appended to it"),
            )
        })?;
    }
    Ok(mirrors)
}

/// The value of a version key an install may name, which is then one of its pins.
fn optional_pin(
    env: &VersionsEnv,
    field: &str,
    key: Option<String>,
    pin_keys: &mut Vec<String>,
) -> Result<Option<String>, FieldError> {
    let Some(key) = key else {
        return Ok(None);
    };
    let value = env_value(env, field, &key)?;
    pin_keys.push(key);
    Ok(Some(value))
}

/// What to do where a toolchain is missing, when `hint` does not say.
fn default_hint(install: &Install) -> String {
    match install {
        Install::Apt { package, .. } => format!("apt-get install {package}"),
        Install::Setup { action, .. } => format!("install it (the workflow uses {action})"),
        Install::Tarball(_) => "cell run installs it from its tarball".to_owned(),
        Install::Preinstalled => "install it".to_owned(),
    }
}

/// `[rows]`, each added to the rows of its toolchain.
fn resolve_rows(
    workload: &Path,
    raw: BTreeMap<String, raw::RawRow>,
    toolchains: &mut BTreeMap<ToolchainName, Toolchain>,
) -> Result<BTreeMap<RowName, Row>, FieldError> {
    let mut rows = BTreeMap::new();
    for (name, r) in raw {
        let row = resolve_row(workload, &name, r, toolchains)?;
        toolchains
            .get_mut(&row.toolchain)
            .expect("resolve_row found the toolchain")
            .rows
            .push(row.name.clone());
        rows.insert(row.name.clone(), row);
    }
    Ok(rows)
}

/// One row: its toolchain, argv templates, source directory and clock.
fn resolve_row(
    workload: &Path,
    name: &str,
    raw: raw::RawRow,
    toolchains: &BTreeMap<ToolchainName, Toolchain>,
) -> Result<Row, FieldError> {
    let f = |s: &str| format!("rows.{name}.{s}");
    check_row_name(name)?;
    let tc_name = ToolchainName::from(raw.toolchain.as_str());
    let Some(tc) = toolchains.get(&tc_name) else {
        return Err(FieldError::new(
            f("toolchain"),
            format!(
                "unknown toolchain `{}`: known: {}",
                raw.toolchain,
                join(toolchains.keys())
            ),
        ));
    };
    let build = row_argv(&f("build"), &raw.build)?;
    let run = row_argv(&f("run"), &raw.run)?;
    check_row_templates(name, &build, &run)?;
    // A tool the run names is reported on `build` too, as it always was.
    check_tools(&f("build"), tc, build.iter().chain(&run))?;
    Ok(Row {
        name: RowName::from(name),
        toolchain: tc_name,
        label: raw.label,
        source: existing_dir(&f("source"), workload.join(&raw.source))?,
        build,
        run,
        clock: row_clock(&f("clock"), raw.clock.as_deref())?,
    })
}

/// A valid name, and not the A/A control's.
fn check_row_name(name: &str) -> Result<(), FieldError> {
    let field = || format!("rows.{name}");
    check_name(name).map_err(|e| FieldError::new(field(), e.to_string()))?;
    if name == CONTROL_ROW {
        return Err(FieldError::new(
            field(),
            format!("`{CONTROL_ROW}` is reserved for the A/A control: rename the row"),
        ));
    }
    Ok(())
}

/// A row's build or run argv: not empty, every argument parsed.
fn row_argv(field: &str, list: &[String]) -> Result<Vec<Arg>, FieldError> {
    if list.is_empty() {
        return Err(FieldError::new(field, "empty argv"));
    }
    list.iter()
        .map(|a| Arg::parse(a).map_err(|e| FieldError::new(field, e.to_string())))
        .collect()
}

/// The placeholders a row must name, and where: `{out}` in the build, `{bin}` and `{phase}`
/// in the run, `{port}` nowhere.
fn check_row_templates(name: &str, build: &[Arg], run: &[Arg]) -> Result<(), FieldError> {
    let f = |s: &str| format!("rows.{name}.{s}");
    let names = |args: &[Arg], p: &Piece| args.iter().any(|a| a.has(p));
    if !names(build, &Piece::Out) {
        return Err(FieldError::new(
            f("build"),
            "the build never names {out}: the binary must be written to {out}",
        ));
    }
    if (names(build, &Piece::Phase) || names(run, &Piece::Phase)) && !names(run, &Piece::Phase) {
        return Err(FieldError::new(
            f("build"),
            "{phase} belongs in run, not build",
        ));
    }
    if !names(run, &Piece::Bin) {
        return Err(FieldError::new(
            f("run"),
            "the run never names {bin}: it must run the built binary",
        ));
    }
    if !names(run, &Piece::Phase) {
        return Err(FieldError::new(
            f("run"),
            "the run never names {phase}: the workload needs it as argv[1]",
        ));
    }
    if names(build, &Piece::Port) || names(run, &Piece::Port) {
        return Err(FieldError::new(
            f("run"),
            "{port} belongs to servers of [http], not workload rows",
        ));
    }
    Ok(())
}

/// A row's own verdict clock, if it sets one.
fn row_clock(field: &str, raw: Option<&str>) -> Result<Option<Clock>, FieldError> {
    raw.map(|v| {
        Clock::parse(v)
            .map_err(|_| FieldError::new(field, format!("`{v}`: write {}", Clock::names())))
    })
    .transpose()
}

/// `REFERENCE` of `versions.env` is a row.
fn check_reference(
    env: &VersionsEnv,
    reference: &RowName,
    rows: &BTreeMap<RowName, Row>,
) -> Result<(), ConfigError> {
    if rows.contains_key(reference) {
        return Ok(());
    }
    Err(env.error_at(
        "REFERENCE",
        format!(
            "REFERENCE={reference} is not a row of cell/cell.toml: rows are {}",
            join(rows.keys())
        ),
    ))
}

/// `[tooth]`: two different rows.
fn resolve_tooth(
    raw: &raw::RawTooth,
    rows: &BTreeMap<RowName, Row>,
) -> Result<ToothDef, FieldError> {
    for (which, r) in [("slow", &raw.slow), ("fast", &raw.fast)] {
        if !rows.contains_key(r.as_str()) {
            return Err(FieldError::new(
                format!("tooth.{which}"),
                format!("unknown row `{r}`: rows are {}", join(rows.keys())),
            ));
        }
    }
    if raw.slow == raw.fast {
        return Err(FieldError::new("tooth", "slow and fast are the same row"));
    }
    Ok(ToothDef {
        slow: RowName::from(raw.slow.as_str()),
        fast: RowName::from(raw.fast.as_str()),
    })
}

/// `[cells]`.
fn resolve_cells(
    raw: BTreeMap<String, raw::RawCell>,
) -> Result<BTreeMap<CellLabel, Cell>, FieldError> {
    raw.into_iter()
        .map(|(label, c)| {
            let cell = resolve_cell(&label, c)?;
            Ok((cell.label.clone(), cell))
        })
        .collect()
}

/// One cell: its OS and architecture as written, else those of the GitHub-hosted label.
fn resolve_cell(label: &str, raw: raw::RawCell) -> Result<Cell, FieldError> {
    let f = format!("cells.{label}");
    check_name(label).map_err(|e| FieldError::new(f.clone(), e.to_string()))?;
    let known = runners::hosted(label);
    let os = raw.os.or_else(|| known.map(|k| k.0.to_owned()));
    let arch = raw.arch.or_else(|| known.map(|k| k.1.to_owned()));
    let (Some(os), Some(arch)) = (os, arch) else {
        return Err(FieldError::new(
            f,
            format!(
                "`{label}` is not a GitHub-hosted label cell knows: give its os and arch, e.g. os = \"linux\", arch = \"x86_64\""
            ),
        ));
    };
    if !matches!(os.as_str(), "linux" | "macos" | "windows") {
        return Err(FieldError::new(
            format!("{f}.os"),
            format!("`{os}`: write linux, macos or windows"),
        ));
    }
    if !matches!(arch.as_str(), "x86_64" | "aarch64") {
        return Err(FieldError::new(
            format!("{f}.arch"),
            format!("`{arch}`: write x86_64 or aarch64"),
        ));
    }
    Ok(Cell {
        label: CellLabel::from(label),
        os,
        arch,
    })
}

/// `allow_dirty` names generated files only.
fn check_allow_dirty(names: &[String]) -> Result<(), FieldError> {
    for (i, name) in names.iter().enumerate() {
        if !DIRTY_FILES.contains(&name.as_str()) {
            return Err(FieldError::new(
                format!("allow_dirty[{i}]"),
                format!(
                    "`{name}` is not a generated file: write {}",
                    join(DIRTY_FILES.iter().map(|f| format!("\"{f}\"")))
                ),
            ));
        }
    }
    Ok(())
}

/// A source directory of a row or server, which must exist.
fn existing_dir(field: &str, dir: PathBuf) -> Result<PathBuf, FieldError> {
    if dir.is_dir() {
        Ok(dir)
    } else {
        Err(FieldError::new(
            field,
            format!("{} is not a directory", dir.display()),
        ))
    }
}

/// Every `{tool:NAME}` of `args` is a tool of `tc`.
fn check_tools<'a>(
    field: &str,
    tc: &Toolchain,
    args: impl IntoIterator<Item = &'a Arg>,
) -> Result<(), FieldError> {
    for a in args {
        for t in a.tools() {
            if !tc.tools.contains_key(t) {
                return Err(FieldError::new(
                    field,
                    format!(
                        "{{tool:{t}}} is not a tool of toolchain `{}`: its tools are {}",
                        tc.name,
                        join(tc.tools.keys())
                    ),
                ));
            }
        }
    }
    Ok(())
}

impl Plan {
    /// Every `versions.env` key must be a setting or a pin something refers to: a typo such
    /// as `TOLERENCE=0.5` would otherwise be ignored while the default silently applies.
    fn check_env_keys(&self) -> Result<(), ConfigError> {
        let mut referenced: Vec<&str> = DEFAULTS.iter().map(|(k, _, _)| *k).collect();
        referenced.push(&self.workflow.rust_key);
        if let Some(h) = &self.http {
            referenced.push(&h.oha_key);
        }
        for tc in self.toolchains.values() {
            referenced.extend(tc.pin_keys.iter().map(String::as_str));
            if let Install::Tarball(def) = &tc.install {
                referenced.extend(
                    def.url_key
                        .iter()
                        .chain(&def.sha256_key)
                        .map(String::as_str),
                );
            }
        }
        for (key, entry) in &self.env.entries {
            let per_arch = |base: &str| {
                key.strip_prefix(base).is_some_and(|rest| {
                    let rest = ["_LINUX", "_MACOS", "_WINDOWS"]
                        .iter()
                        .find_map(|os| rest.strip_prefix(os))
                        .unwrap_or(rest);
                    matches!(rest, "_X86_64" | "_AARCH64")
                })
            };
            let known = referenced.iter().any(|r| key == r || per_arch(r))
                || key
                    .strip_prefix("TOOTH_MIN_")
                    .is_some_and(|a| matches!(a, "X86_64" | "AARCH64"))
                || key
                    .strip_prefix("CLOCK_")
                    .is_some_and(|o| matches!(o, "LINUX" | "MACOS" | "WINDOWS"));
            if !known {
                let hint = referenced
                    .iter()
                    .chain(&[
                        "TOOTH_MIN_X86_64",
                        "TOOTH_MIN_AARCH64",
                        "CLOCK_LINUX",
                        "CLOCK_MACOS",
                    ])
                    .map(|r| (edit_distance(key, r), *r))
                    .min()
                    .filter(|(d, _)| *d <= 2)
                    .map_or(String::new(), |(_, r)| format!(" (did you mean {r}?)"));
                return Err(ConfigError::Line {
                    path: self.env.path.clone(),
                    line: entry.line,
                    msg: format!(
                        "unknown key `{key}`{hint}: it is not a setting and nothing in cell/cell.toml refers to it; fix the name or remove the line"
                    ),
                });
            }
        }
        Ok(())
    }
}

/// A string of `cell/cell.toml` that the workflow is written with, checked for its kind.
fn safe_field(field: &str, kind: Kind, value: &str) -> Result<(), FieldError> {
    safe::check(kind, value).map_err(|e| FieldError::new(field, e.to_string()))
}

/// No `versions.env` key is set to nothing: a pin would reach the workflow empty (and install
/// whatever is newest), a threshold would not parse. `BASELINE=` alone means "the newest run".
fn check_no_empty_value(env: &VersionsEnv) -> Result<(), ConfigError> {
    for (key, entry) in &env.entries {
        if entry.value.is_empty() && key != "BASELINE" {
            return Err(ConfigError::Line {
                path: env.path.clone(),
                line: entry.line,
                msg: format!(
                    "{key} is empty: write its value after `=` (a setting may be left out to take its default)"
                ),
            });
        }
    }
    Ok(())
}

impl Plan {
    /// Every pin the workflow is written with is a value of its kind: the versions a
    /// toolchain, the Rust of cell and oha install, the URLs and digests of tarballs.
    fn check_pin_values(&self) -> Result<(), ConfigError> {
        let mut kinds: Vec<(&str, Kind)> = vec![(self.workflow.rust_key.as_str(), Kind::Version)];
        if let Some(h) = &self.http {
            kinds.push((&h.oha_key, Kind::Version));
        }
        for tc in self.toolchains.values() {
            // An install's version key, when it has one, is the first of its pin keys.
            let version_kind = match &tc.install {
                Install::Apt {
                    version: Some(_), ..
                } => Some(Kind::AptVersion),
                Install::Setup { .. } => Some(Kind::Version),
                Install::Tarball(def) if def.version.is_some() => Some(Kind::Version),
                _ => None,
            };
            if let Some(kind) = version_kind {
                kinds.extend(tc.pin_keys.first().map(|k| (k.as_str(), kind)));
            }
            if let Install::Tarball(def) = &tc.install {
                kinds.extend(def.url_key.as_deref().map(|k| (k, Kind::Url)));
                let digests = self.env.entries.iter().filter(|(k, _)| {
                    def.sha256_key
                        .as_deref()
                        .is_some_and(|base| per_arch_of(k, base))
                });
                for (key, entry) in digests {
                    cell_schema::Sha256::parse(&entry.value)
                        .map_err(|e| self.env.error_at(key, format!("{key}: {e}")))?;
                }
            }
        }
        for (base, kind) in kinds {
            for (key, entry) in self
                .env
                .entries
                .iter()
                .filter(|(k, _)| *k == base || (kind == Kind::Url && per_arch_of(k, base)))
            {
                safe::check(kind, &entry.value)
                    .map_err(|e| self.env.error_at(key, format!("{key}: {e}")))?;
            }
        }
        Ok(())
    }
}

/// `key` is `base` or `base` for one architecture (`<base>_X86_64`, `<base>_AARCH64`).
fn per_arch_of(key: &str, base: &str) -> bool {
    key.strip_prefix(base).is_some_and(|rest| {
        let rest = ["_LINUX", "_MACOS", "_WINDOWS"]
            .iter()
            .find_map(|os| rest.strip_prefix(os))
            .unwrap_or(rest);
        rest.is_empty() || matches!(rest, "_X86_64" | "_AARCH64")
    })
}

/// Levenshtein distance, for "did you mean".
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            cur.push(
                (prev[j] + usize::from(ca != *cb))
                    .min(prev[j + 1] + 1)
                    .min(cur[j] + 1),
            );
        }
        prev = cur;
    }
    prev[b.len()]
}

/// A name of a toolchain, row, cell or server: letters, digits, `.`, `_` and `-`, not
/// starting with `.` or `-`.
fn check_name(name: &str) -> Result<(), NameError> {
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

fn join<T: std::fmt::Display>(items: impl IntoIterator<Item = T>) -> String {
    let v: Vec<String> = items.into_iter().map(|t| t.to_string()).collect();
    if v.is_empty() {
        "none".to_owned()
    } else {
        v.join(", ")
    }
}
