//! `[toolchains]`: what one job installs, its pins looked up in `versions.env`.

use std::collections::BTreeMap;

use crate::safe::{self, Kind};
use crate::{
    FieldError, NameError, TarballDef, ToolName, ToolchainName, VersionsEnv, check_name, env, raw,
    safe_field,
};
use cell_schema::RowName;

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
pub(crate) fn resolve_toolchains(
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
