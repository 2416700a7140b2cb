//! `[rows]` and `[tooth]`: the build recipes and the positive control.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::{
    Arg, CONTROL_ROW, Clock, ConfigError, FieldError, Piece, RowName, ToolName, Toolchain,
    ToolchainName, VersionsEnv, check_name, join, raw,
};

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

/// `[rows]`, each added to the rows of its toolchain.
pub(crate) fn resolve_rows(
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
pub(crate) fn check_reference(
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
pub(crate) fn resolve_tooth(
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

/// A source directory of a row or server, which must exist.
pub(crate) fn existing_dir(field: &str, dir: PathBuf) -> Result<PathBuf, FieldError> {
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
pub(crate) fn check_tools<'a>(
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
