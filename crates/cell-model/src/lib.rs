//! The cell definition: `versions.env` + `cell/cell.toml` → one validated, resolved [`Plan`].
//!
//! Parsing ([`raw`], [`env`]) is syntax only; [`Plan::load`] validates every cross-reference once,
//! and every later stage takes the resolved `Plan`, never the raw files.

pub mod env;
mod error;
pub mod raw;
pub mod runners;
mod settings;
mod suite;
pub mod template;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub use cell_schema::{
    CellId, CellLabel, Clock, Phase, RowName, ServerName, ToolName, ToolchainName,
};
pub use env::VersionsEnv;
pub use error::ConfigError;
pub use settings::{DEFAULTS, Settings};
pub use suite::{DEFAULT_OHA_KEY, Expect, HttpDef, LOAD_TOOLS, Server, SoakDef};
pub use template::{Arg, Piece, Vars};

/// Where the config lives relative to the project root.
pub const VERSIONS_ENV: &str = "versions.env";
/// The cell definition, relative to the project root.
pub const CELL_TOML: &str = "cell/cell.toml";
/// The label of the machine `cell local` runs on.
pub const LOCAL_LABEL: &str = "local";
/// The A/A control row's name (reserved).
pub const CONTROL_ROW: &str = "control";
/// Generated files `allow_dirty` may name.
pub const DIRTY_FILES: &[&str] = &["workflow"];
/// The `versions.env` key of the Rust that builds cell on a runner, unless `[workflow] rust` says.
pub const DEFAULT_WORKFLOW_RUST: &str = "RUST_VERSION";

/// A runner: label, OS, architecture.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cell {
    /// The label.
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
        /// Package name.
        package: String,
        /// Pinned version.
        version: Option<String>,
    },
    /// A setup action.
    Setup {
        /// `owner/repo`.
        action: String,
        /// Its version input.
        input: String,
        /// The version.
        version: String,
    },
    /// A tarball verified by SHA-256: keys are resolved per architecture by [`Plan::tarball`].
    Tarball {
        /// URL key.
        url_key: String,
        /// SHA-256 key.
        sha256_key: String,
        /// Version, if pinned.
        version: Option<String>,
        /// Components to strip.
        strip: u32,
    },
    /// On the runner image already.
    Preinstalled,
}

/// A toolchain: what one job installs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Toolchain {
    /// Its name.
    pub name: ToolchainName,
    /// How it is installed.
    pub install: Install,
    /// Its programs.
    pub tools: BTreeMap<ToolName, Tool>,
    /// Its rows, sorted.
    pub rows: Vec<RowName>,
    /// What to do where it is missing.
    pub hint: String,
    /// `versions.env` keys recorded as its pins.
    pub pin_keys: Vec<String>,
}

/// A build recipe.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    /// Its name.
    pub name: RowName,
    /// Its toolchain.
    pub toolchain: ToolchainName,
    /// A human label.
    pub label: String,
    /// Absolute source directory.
    pub source: PathBuf,
    /// Build argv.
    pub build: Vec<Arg>,
    /// Run argv.
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
}

/// Everything `cell` needs, validated.
#[derive(Clone, Debug)]
pub struct Plan {
    /// The project root.
    pub root: PathBuf,
    /// The raw pins (every key of `versions.env`).
    pub env: VersionsEnv,
    /// Thresholds.
    pub settings: Settings,
    /// Expected stdout per phase, newline-terminated.
    pub expect: BTreeMap<Phase, String>,
    /// Toolchains.
    pub toolchains: BTreeMap<ToolchainName, Toolchain>,
    /// Rows.
    pub rows: BTreeMap<RowName, Row>,
    /// Cells declared in `cell.toml`.
    pub cells: BTreeMap<CellLabel, Cell>,
    /// The tooth.
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
        let raw: raw::RawConfig = toml::from_str(&text).map_err(|e| ConfigError::Toml {
            path: toml_path.clone(),
            msg: e.to_string().trim_end().to_owned(),
        })?;
        Self::resolve(root, env, &toml_path, raw)
    }

    #[expect(
        clippy::too_many_lines,
        reason = "one linear list of checks, each with its own message"
    )]
    fn resolve(
        root: &Path,
        env: VersionsEnv,
        toml_path: &Path,
        raw: raw::RawConfig,
    ) -> Result<Self, ConfigError> {
        let field = |field: String, msg: String| ConfigError::Field {
            path: toml_path.to_owned(),
            field,
            msg,
        };
        let settings = Settings::from_env(&env)?;
        let key = |f: &str, k: &str| -> Result<String, ConfigError> {
            env.get(k).map(str::to_owned).ok_or_else(|| {
                field(
                    f.to_owned(),
                    format!("versions.env has no {k}: add a line {k}=..."),
                )
            })
        };

        let mut expect = BTreeMap::new();
        for (phase, answer) in &raw.expect {
            if !settings.phases.iter().any(|p| p.as_str() == phase) {
                return Err(field(
                    format!("expect.{phase}"),
                    format!(
                        "`{phase}` is not in PHASES of versions.env ({})",
                        join(&settings.phases)
                    ),
                ));
            }
            expect.insert(
                Phase::from(phase.as_str()),
                format!("{}\n", answer.trim_end()),
            );
        }
        for p in &settings.phases {
            if !expect.contains_key(p) {
                return Err(field(
                    format!("expect.{p}"),
                    format!(
                        "no expected answer for phase `{p}`: add `{p} = \"...\"` under [expect]"
                    ),
                ));
            }
        }

        let mut toolchains = BTreeMap::new();
        for (name, t) in raw.toolchains {
            let f = |s: &str| format!("toolchains.{name}.{s}");
            check_name(&name).map_err(|m| field(format!("toolchains.{name}"), m))?;
            let mut pin_keys = Vec::new();
            let install = match t.install {
                raw::RawInstall::Apt { package, version } => {
                    let version = match version {
                        Some(k) => {
                            pin_keys.push(k.clone());
                            Some(key(&f("install.apt.version"), &k)?)
                        }
                        None => None,
                    };
                    Install::Apt { package, version }
                }
                raw::RawInstall::Setup {
                    action,
                    input,
                    version,
                } => {
                    pin_keys.push(version.clone());
                    Install::Setup {
                        action,
                        input,
                        version: key(&f("install.setup.version"), &version)?,
                    }
                }
                raw::RawInstall::Tarball {
                    url,
                    sha256,
                    version,
                    strip,
                } => {
                    let version = match version {
                        Some(k) => {
                            pin_keys.push(k.clone());
                            Some(key(&f("install.tarball.version"), &k)?)
                        }
                        None => None,
                    };
                    Install::Tarball {
                        url_key: url,
                        sha256_key: sha256,
                        version,
                        strip,
                    }
                }
                raw::RawInstall::Preinstalled {} => Install::Preinstalled,
            };
            for k in &t.pins {
                key(&f("pins"), k)?;
                pin_keys.push(k.clone());
            }
            if t.tools.is_empty() {
                return Err(field(
                    f("tools"),
                    "a toolchain needs at least one tool".into(),
                ));
            }
            let tools = t
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
            let hint = t.hint.unwrap_or_else(|| match &install {
                Install::Apt { package, .. } => format!("apt-get install {package}"),
                Install::Setup { action, .. } => format!("install it (the workflow uses {action})"),
                Install::Tarball { url_key, .. } => {
                    format!("cell fetch the tarball at {url_key} in versions.env")
                }
                Install::Preinstalled => "install it".to_owned(),
            });
            let tname = ToolchainName::from(name.as_str());
            toolchains.insert(
                tname.clone(),
                Toolchain {
                    name: tname,
                    install,
                    tools,
                    rows: Vec::new(),
                    hint,
                    pin_keys,
                },
            );
        }

        let workload = root.join(&raw.workload);
        let mut rows = BTreeMap::new();
        for (name, r) in raw.rows {
            let f = |s: &str| format!("rows.{name}.{s}");
            check_name(&name).map_err(|m| field(format!("rows.{name}"), m))?;
            if name == CONTROL_ROW {
                return Err(field(
                    format!("rows.{name}"),
                    format!("`{CONTROL_ROW}` is reserved for the A/A control: rename the row"),
                ));
            }
            let tc_name = ToolchainName::from(r.toolchain.as_str());
            let Some(tc) = toolchains.get_mut(&tc_name) else {
                return Err(field(
                    f("toolchain"),
                    format!(
                        "unknown toolchain `{}`: known: {}",
                        r.toolchain,
                        join(toolchains.keys())
                    ),
                ));
            };
            let parse = |list: &[String], which: &str| -> Result<Vec<Arg>, ConfigError> {
                if list.is_empty() {
                    return Err(field(f(which), "empty argv".into()));
                }
                list.iter()
                    .map(|a| Arg::parse(a).map_err(|m| field(f(which), m)))
                    .collect()
            };
            let build = parse(&r.build, "build")?;
            let run = parse(&r.run, "run")?;
            if !build.iter().any(|a| a.has(&Piece::Out)) {
                return Err(field(
                    f("build"),
                    "the build never names {out}: the binary must be written to {out}".into(),
                ));
            }
            if build.iter().chain(&run).any(|a| a.has(&Piece::Phase))
                && !run.iter().any(|a| a.has(&Piece::Phase))
            {
                return Err(field(
                    f("build"),
                    "{phase} belongs in run, not build".into(),
                ));
            }
            if !run.iter().any(|a| a.has(&Piece::Bin)) {
                return Err(field(
                    f("run"),
                    "the run never names {bin}: it must run the built binary".into(),
                ));
            }
            if !run.iter().any(|a| a.has(&Piece::Phase)) {
                return Err(field(
                    f("run"),
                    "the run never names {phase}: the workload needs it as argv[1]".into(),
                ));
            }
            if build.iter().chain(&run).any(|a| a.has(&Piece::Port)) {
                return Err(field(
                    f("run"),
                    "{port} belongs to servers of [http], not workload rows".into(),
                ));
            }
            for a in build.iter().chain(&run) {
                for t in a.tools() {
                    if !tc.tools.contains_key(t) {
                        return Err(field(
                            f("build"),
                            format!(
                                "{{tool:{t}}} is not a tool of toolchain `{}`: its tools are {}",
                                tc.name,
                                join(tc.tools.keys())
                            ),
                        ));
                    }
                }
            }
            let source = workload.join(&r.source);
            if !source.is_dir() {
                return Err(field(
                    f("source"),
                    format!("{} is not a directory", source.display()),
                ));
            }
            let clock = match r.clock.as_deref() {
                None => None,
                Some("cpu") => Some(Clock::Cpu),
                Some("wall") => Some(Clock::Wall),
                Some(other) => {
                    return Err(field(
                        f("clock"),
                        format!("`{other}`: write \"cpu\" or \"wall\""),
                    ));
                }
            };
            let rname = RowName::from(name.as_str());
            tc.rows.push(rname.clone());
            rows.insert(
                rname.clone(),
                Row {
                    name: rname,
                    toolchain: tc_name,
                    label: r.label,
                    source,
                    build,
                    run,
                    clock,
                },
            );
        }
        if !rows.contains_key(&settings.reference) {
            return Err(env.error_at(
                "REFERENCE",
                format!(
                    "REFERENCE={} is not a row of cell/cell.toml: rows are {}",
                    settings.reference,
                    join(rows.keys())
                ),
            ));
        }
        for (which, r) in [("slow", &raw.tooth.slow), ("fast", &raw.tooth.fast)] {
            if !rows.contains_key(r.as_str()) {
                return Err(field(
                    format!("tooth.{which}"),
                    format!("unknown row `{r}`: rows are {}", join(rows.keys())),
                ));
            }
        }
        if raw.tooth.slow == raw.tooth.fast {
            return Err(field(
                "tooth".into(),
                "slow and fast are the same row".into(),
            ));
        }

        let mut cells = BTreeMap::new();
        for (label, c) in raw.cells {
            let f = format!("cells.{label}");
            check_name(&label).map_err(|m| field(f.clone(), m))?;
            let known = runners::hosted(&label);
            let os = c.os.or_else(|| known.map(|k| k.0.to_owned()));
            let arch = c.arch.or_else(|| known.map(|k| k.1.to_owned()));
            let (Some(os), Some(arch)) = (os, arch) else {
                return Err(field(
                    f,
                    format!(
                        "`{label}` is not a GitHub-hosted label cell knows: give its os and arch, e.g. os = \"linux\", arch = \"x86_64\""
                    ),
                ));
            };
            if !matches!(os.as_str(), "linux" | "macos" | "windows") {
                return Err(field(
                    format!("{f}.os"),
                    format!("`{os}`: write linux, macos or windows"),
                ));
            }
            if !matches!(arch.as_str(), "x86_64" | "aarch64") {
                return Err(field(
                    format!("{f}.arch"),
                    format!("`{arch}`: write x86_64 or aarch64"),
                ));
            }
            let cl = CellLabel::from(label.as_str());
            cells.insert(
                cl.clone(),
                Cell {
                    label: cl,
                    os,
                    arch,
                },
            );
        }

        for (i, name) in raw.allow_dirty.iter().enumerate() {
            if !DIRTY_FILES.contains(&name.as_str()) {
                return Err(field(
                    format!("allow_dirty[{i}]"),
                    format!(
                        "`{name}` is not a generated file: write {}",
                        join(DIRTY_FILES.iter().map(|f| format!("\"{f}\"")))
                    ),
                ));
            }
        }
        let workflow = resolve_workflow(&env, raw.workflow).map_err(|(f, m)| field(f, m))?;
        let http = raw
            .http
            .map(|h| suite::resolve_http(root, h, &toolchains, &env))
            .transpose()
            .map_err(|(f, m)| field(f, m))?;
        let soak = raw
            .soak
            .map(|s| suite::resolve_soak(s, http.as_ref()))
            .transpose()
            .map_err(|(f, m)| field(f, m))?;

        let plan = Self {
            root: root.to_owned(),
            env,
            settings,
            expect,
            toolchains,
            rows,
            cells,
            tooth: ToothDef {
                slow: RowName::from(raw.tooth.slow.as_str()),
                fast: RowName::from(raw.tooth.fast.as_str()),
            },
            allow_dirty: raw.allow_dirty,
            workflow,
            http,
            soak,
        };
        plan.check_env_keys()?;
        for cell in plan.cells.values() {
            for tc in plan.toolchains.values() {
                if matches!(tc.install, Install::Tarball { .. }) {
                    plan.tarball(tc, &cell.arch).map_err(|m| {
                        field(
                            format!("toolchains.{}.install.tarball", tc.name),
                            format!("cell `{}`: {m}", cell.label),
                        )
                    })?;
                }
            }
        }
        Ok(plan)
    }

    /// A cell by label; `local` is always there.
    pub fn cell(&self, label: &str) -> Result<Cell, String> {
        if label == LOCAL_LABEL {
            return Ok(Cell::local());
        }
        self.cells.get(label).cloned().ok_or_else(|| {
            format!("unknown cell `{label}`: cell/cell.toml has {}, and `{LOCAL_LABEL}` is always there", join(self.cells.keys()))
        })
    }

    /// A toolchain by name.
    pub fn toolchain(&self, name: &str) -> Result<&Toolchain, String> {
        self.toolchains.get(name).ok_or_else(|| {
            format!(
                "unknown toolchain `{name}`: cell/cell.toml has {}",
                join(self.toolchains.keys())
            )
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

    /// URL and SHA-256 of a tarball install on an architecture (`<KEY>_<ARCH>`, else `<KEY>`).
    pub fn tarball(
        &self,
        tc: &Toolchain,
        arch: &str,
    ) -> Result<(String, cell_schema::Sha256), String> {
        let Install::Tarball {
            url_key,
            sha256_key,
            ..
        } = &tc.install
        else {
            return Err(format!(
                "toolchain `{}` is not installed from a tarball",
                tc.name
            ));
        };
        let look = |k: &str| {
            let arch_key = format!("{k}_{}", arch.to_ascii_uppercase());
            self.env
                .get(&arch_key)
                .or_else(|| self.env.get(k))
                .map(str::to_owned)
                .ok_or_else(|| {
                    format!("versions.env has neither {arch_key} nor {k}: add {arch_key}=...")
                })
        };
        let url = look(url_key)?;
        let sha = look(sha256_key)?;
        let sha = cell_schema::Sha256::parse(&sha).map_err(|e| format!("{sha256_key}: {e}"))?;
        Ok((url, sha))
    }

    /// The `versions.env` pins of a toolchain, as written (arch-specific keys included).
    pub fn pins(&self, tc: &Toolchain) -> BTreeMap<String, String> {
        let mut keys = tc.pin_keys.clone();
        if let Install::Tarball {
            url_key,
            sha256_key,
            ..
        } = &tc.install
        {
            keys.push(url_key.clone());
            keys.push(sha256_key.clone());
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

    /// The tooth floor for an architecture.
    pub fn tooth_floor(&self, arch: &str) -> f64 {
        self.settings.tooth_min(arch)
    }
}

/// Validates `[workflow]`; an error is (field, message).
fn resolve_workflow(
    env: &VersionsEnv,
    raw: raw::RawWorkflow,
) -> Result<WorkflowDef, (String, String)> {
    for (i, cron) in raw.schedule.iter().enumerate() {
        let fields = cron.split_whitespace().count();
        if fields != 5 {
            return Err((
                format!("workflow.schedule[{i}]"),
                format!(
                    "`{cron}` has {fields} fields: write five (minute hour day-of-month month day-of-week), e.g. \"17 4 * * 1\""
                ),
            ));
        }
    }
    for (list, name) in [(&raw.branches, "branches"), (&raw.paths, "paths")] {
        if let Some(i) = list.iter().position(|p| p.trim().is_empty()) {
            return Err((
                format!("workflow.{name}[{i}]"),
                "empty pattern: write a glob such as \"cell/**\"".into(),
            ));
        }
    }
    let rust_key = raw
        .rust
        .clone()
        .unwrap_or_else(|| DEFAULT_WORKFLOW_RUST.to_owned());
    let rust = env.get(&rust_key).map(str::to_owned);
    if raw.rust.is_some() && rust.is_none() {
        return Err((
            "workflow.rust".into(),
            format!("versions.env has no {rust_key}: add a line {rust_key}=<rust version>"),
        ));
    }
    Ok(WorkflowDef {
        schedule: raw.schedule,
        branches: raw.branches,
        paths: raw.paths,
        rust_key,
        rust,
    })
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
            if let Install::Tarball {
                url_key,
                sha256_key,
                ..
            } = &tc.install
            {
                referenced.push(url_key);
                referenced.push(sha256_key);
            }
        }
        for (key, entry) in &self.env.entries {
            let per_arch = |base: &str| {
                key.strip_prefix(base)
                    .is_some_and(|rest| matches!(rest, "_X86_64" | "_AARCH64"))
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

fn check_name(name: &str) -> Result<(), String> {
    if !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
        && !name.starts_with(['.', '-'])
    {
        Ok(())
    } else {
        Err(format!(
            "`{name}`: names use letters, digits, `.`, `_` and `-` only"
        ))
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
