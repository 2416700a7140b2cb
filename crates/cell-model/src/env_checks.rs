//! The checks of `versions.env` as a whole: no key unknown, none empty, every pin a value of
//! its kind.

use crate::safe::{self, Kind};
use crate::{ConfigError, DEFAULTS, Install, LOAD_TOOLS, LoadInstall, Plan, VersionsEnv};

impl Plan {
    /// Every `versions.env` key must be a setting or a pin something refers to: a typo such
    /// as `TOLERENCE=0.5` would otherwise be ignored while the default silently applies.
    pub(crate) fn check_env_keys(&self) -> Result<(), ConfigError> {
        let mut referenced: Vec<&str> = DEFAULTS.iter().map(|(k, _, _)| *k).collect();
        referenced.push(&self.workflow.rust_key);
        if let Some(crate::CellSource::Release(_)) = &self.workflow.cell {
            // CELL_SHA256_<OS>_<ARCH>: the pinned release's digests.
            referenced.push(crate::cell_source::DIGEST_KEY_PREFIX);
        }
        if let Some(h) = &self.http {
            for tool in LOAD_TOOLS {
                match tool.install {
                    LoadInstall::Apt { .. } => {}
                    LoadInstall::Crate { version_key, .. } => {
                        referenced.push(h.version_key(version_key));
                    }
                    LoadInstall::Tarball {
                        url_key,
                        sha256_key,
                        ..
                    } => referenced.extend([url_key, sha256_key]),
                }
            }
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

/// No `versions.env` key is set to nothing: a pin would reach the workflow empty (and install
/// whatever is newest), a threshold would not parse. `BASELINE=` alone means "the newest run".
pub(crate) fn check_no_empty_value(env: &VersionsEnv) -> Result<(), ConfigError> {
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
    pub(crate) fn check_pin_values(&self) -> Result<(), ConfigError> {
        let mut kinds: Vec<(&str, Kind)> = vec![(self.workflow.rust_key.as_str(), Kind::Version)];
        if let Some(h) = &self.http {
            // Each load generator's own keys: a crate's version (oha's as `[http] oha`
            // names it), a tarball's URL and digest.
            for tool in LOAD_TOOLS {
                match tool.install {
                    LoadInstall::Apt { .. } => {}
                    LoadInstall::Crate { version_key, .. } => {
                        kinds.push((h.version_key(version_key), Kind::Version));
                    }
                    LoadInstall::Tarball {
                        url_key,
                        sha256_key,
                        ..
                    } => {
                        kinds.push((url_key, Kind::Url));
                        if let Some(v) = self.env.get(sha256_key) {
                            cell_schema::Sha256::parse(v).map_err(|e| {
                                self.env.error_at(sha256_key, format!("{sha256_key}: {e}"))
                            })?;
                        }
                    }
                }
            }
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
