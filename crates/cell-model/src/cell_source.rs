//! `[workflow] cell`: which `cell` the generated workflow runs. A pinned release (downloaded
//! and checked against its digest in `versions.env` before it runs), an exact git revision
//! (built once per platform), or the repository's own commit (`"source"`). No form follows a
//! moving name: a version, a full commit id or this commit.

use cell_schema::Sha256;

use crate::env::VersionsEnv;
use crate::safe::Kind;
use crate::{FieldError, safe_field};

/// Where the releases are published: `{version}` and `{target}` (`<os>-<arch>`) filled in.
pub const DEFAULT_RELEASE_URL: &str = "https://github.com/cell-bench/cell/releases/download/v{version}/cell-{version}-{target}.tar.gz";
/// The `versions.env` keys of a release's digests: `CELL_SHA256_<OS>_<ARCH>`.
pub const DIGEST_KEY_PREFIX: &str = "CELL_SHA256";

/// Which `cell` the workflow's jobs run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CellSource {
    /// Built from the repository's own commit (cell's own repository).
    Source,
    /// A published release, checked against its pinned digest in every job.
    Release(CellRelease),
    /// An exact revision of a git repository, built once per run and platform.
    Git {
        /// The repository, `https://…`.
        url: String,
        /// A full commit id (40 or 64 hex digits).
        rev: String,
    },
}

/// `cell = { version = "…", url = "…" }`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CellRelease {
    /// The release's version, as in its asset names.
    pub version: String,
    /// The asset URL template, of `{version}` and `{target}`.
    pub url: String,
}

impl CellRelease {
    /// The asset's file name for a platform: `cell-<version>-<os>-<arch>.tar.gz`.
    pub fn asset(&self, target: &str) -> String {
        format!("cell-{}-{target}.tar.gz", self.version)
    }

    /// The asset's URL for a platform.
    pub fn url_for(&self, target: &str) -> String {
        fill(&self.url, &self.version, target)
    }

    /// The pinned digest of a platform's asset, or what to write to pin it.
    pub fn digest(&self, env: &VersionsEnv, os: &str, arch: &str) -> Result<Sha256, FieldError> {
        let key = digest_key(os, arch);
        let target = format!("{os}-{arch}");
        let Some(value) = env.get(&key) else {
            return Err(FieldError::new(
                key.clone(),
                format!(
                    "versions.env has no {key}, the SHA-256 of {}: run `cell plan --cell-sums <URL or file of the release's SHA256SUMS>` to write it, or add {key}=<64 hex digits> by hand",
                    self.asset(&target)
                ),
            ));
        };
        Sha256::parse(value).map_err(|_| {
            FieldError::new(
                key.clone(),
                format!(
                    "`{}` is not a SHA-256: write the 64 hex digits of {}",
                    cell_schema::escape::one_line(value),
                    self.asset(&target)
                ),
            )
        })
    }
}

/// `CELL_SHA256_<OS>_<ARCH>`.
pub fn digest_key(os: &str, arch: &str) -> String {
    format!(
        "{DIGEST_KEY_PREFIX}_{}_{}",
        os.to_ascii_uppercase(),
        arch.to_ascii_uppercase()
    )
}

fn fill(template: &str, version: &str, target: &str) -> String {
    template
        .replace("{version}", version)
        .replace("{target}", target)
}

/// `[workflow] cell = { … }`: the forms are told apart by their keys.
#[derive(Debug, Default)]
struct RawCellTable {
    version: Option<String>,
    url: Option<String>,
    git: Option<String>,
    rev: Option<String>,
}

/// What to write, for every message about the key.
const FORMS: &str = "write \"source\", { version = \"X.Y.Z\" } (optionally with url = \"…{version}…{target}….tar.gz\") or { git = \"https://…\", rev = \"<full commit id>\" }";

/// Validates `[workflow] cell`; `None` when it is not set.
pub(crate) fn resolve_cell_source(
    raw: Option<toml::Value>,
) -> Result<Option<CellSource>, FieldError> {
    let Some(raw) = raw else { return Ok(None) };
    let source = match raw {
        toml::Value::String(w) if w == "source" => CellSource::Source,
        toml::Value::String(w) => {
            return Err(FieldError::new(
                "workflow.cell",
                format!("`{}`: {FORMS}", cell_schema::escape::one_line(&w)),
            ));
        }
        toml::Value::Table(t) => table(read_table(t)?)?,
        other => {
            return Err(FieldError::new(
                "workflow.cell",
                format!("{}: {FORMS}", a_type(&other)),
            ));
        }
    };
    Ok(Some(source))
}

fn read_table(t: toml::map::Map<String, toml::Value>) -> Result<RawCellTable, FieldError> {
    let mut out = RawCellTable::default();
    for (key, value) in t {
        let slot = match key.as_str() {
            "version" => &mut out.version,
            "url" => &mut out.url,
            "git" => &mut out.git,
            "rev" => &mut out.rev,
            _ => {
                return Err(FieldError::new(
                    format!("workflow.cell.{}", cell_schema::escape::one_line(&key)),
                    format!("unknown key: {FORMS}"),
                ));
            }
        };
        let toml::Value::String(v) = value else {
            return Err(FieldError::new(
                format!("workflow.cell.{key}"),
                format!("{}: write a string", a_type(&value)),
            ));
        };
        *slot = Some(v);
    }
    Ok(out)
}

fn table(t: RawCellTable) -> Result<CellSource, FieldError> {
    match (t.version, t.url, t.git, t.rev) {
        (Some(version), url, None, None) => {
            safe_field("workflow.cell.version", Kind::Version, &version)?;
            if version.eq_ignore_ascii_case("latest") {
                return Err(FieldError::new(
                    "workflow.cell.version",
                    "`latest` moves: write the version of a release, e.g. \"0.1.0\"",
                ));
            }
            let url = url.unwrap_or_else(|| DEFAULT_RELEASE_URL.to_owned());
            check_template(&url)?;
            Ok(CellSource::Release(CellRelease { version, url }))
        }
        (None, None, Some(url), Some(rev)) => {
            safe_field("workflow.cell.git", Kind::Url, &url)?;
            no_credentials("workflow.cell.git", &url)?;
            if !is_commit_id(&rev) {
                return Err(FieldError::new(
                    "workflow.cell.rev",
                    format!(
                        "`{}`: write a full commit id (40 hex digits), not a branch, tag or short id: a name that moves would build another cell on the next run",
                        cell_schema::escape::one_line(&rev)
                    ),
                ));
            }
            Ok(CellSource::Git {
                url,
                rev: rev.to_ascii_lowercase(),
            })
        }
        (None, None, Some(_), None) => Err(FieldError::new(
            "workflow.cell.rev",
            "missing: a git source builds one exact commit; add rev = \"<full commit id>\"",
        )),
        (None, url, None, rev) if url.is_some() || rev.is_some() => Err(FieldError::new(
            "workflow.cell",
            format!(
                "`{}` alone names no cell: {FORMS}",
                if url.is_some() { "url" } else { "rev" }
            ),
        )),
        (None, None, None, None) => {
            Err(FieldError::new("workflow.cell", format!("empty: {FORMS}")))
        }
        _ => Err(FieldError::new(
            "workflow.cell",
            format!("{FORMS}; not a mix of them"),
        )),
    }
}

/// "an integer", "a table": the value's TOML type for a message.
fn a_type(v: &toml::Value) -> String {
    let t = v.type_str();
    let article = if t.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    };
    format!("{article} {t}")
}

/// A URL once `{version}` and `{target}` are filled, which names the asset by both.
fn check_template(url: &str) -> Result<(), FieldError> {
    let filled = fill(url, "0.1.0", "linux-x86_64");
    safe_field("workflow.cell.url", Kind::Url, &filled).map_err(|e| {
        FieldError::new(
            e.field,
            format!("{} (placeholders: {{version}} and {{target}})", e.msg),
        )
    })?;
    for (placeholder, why) in [
        ("{target}", "every platform would download the same asset"),
        (
            "{version}",
            "another release would be downloaded once the pin moves",
        ),
    ] {
        if !url.contains(placeholder) {
            return Err(FieldError::new(
                "workflow.cell.url",
                format!(
                    "the URL has no {placeholder}: {why}; write …/cell-{{version}}-{{target}}.tar.gz"
                ),
            ));
        }
    }
    if url.contains("/latest/") {
        return Err(FieldError::new(
            "workflow.cell.url",
            "`/latest/` moves: name the release by {version}",
        ));
    }
    no_credentials("workflow.cell.url", url)
}

/// A URL written into the workflow file carries no user or password: the file is committed.
fn no_credentials(field: &str, url: &str) -> Result<(), FieldError> {
    let authority = url
        .split_once("://")
        .map_or("", |(_, rest)| rest.split('/').next().unwrap_or_default());
    if authority.contains('@') {
        return Err(FieldError::new(
            field,
            "the URL holds credentials (`user@` or `user:password@`), which would be committed in the workflow: serve it without them",
        ));
    }
    Ok(())
}

fn is_commit_id(rev: &str) -> bool {
    matches!(rev.len(), 40 | 64) && rev.bytes().all(|b| b.is_ascii_hexdigit())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(
        version: Option<&str>,
        url: Option<&str>,
        git: Option<&str>,
        rev: Option<&str>,
    ) -> Result<CellSource, FieldError> {
        let mut t = toml::map::Map::new();
        for (k, v) in [
            ("version", version),
            ("url", url),
            ("git", git),
            ("rev", rev),
        ] {
            if let Some(v) = v {
                t.insert(k.to_owned(), toml::Value::String(v.to_owned()));
            }
        }
        resolve_cell_source(Some(toml::Value::Table(t))).map(Option::unwrap)
    }

    #[test]
    fn a_release_fills_its_template_per_platform() {
        let CellSource::Release(r) = table(Some("0.2.0"), None, None, None).unwrap() else {
            panic!()
        };
        assert_eq!(
            r.url_for("macos-aarch64"),
            "https://github.com/cell-bench/cell/releases/download/v0.2.0/cell-0.2.0-macos-aarch64.tar.gz"
        );
        assert_eq!(r.asset("linux-x86_64"), "cell-0.2.0-linux-x86_64.tar.gz");
        assert_eq!(digest_key("linux", "x86_64"), "CELL_SHA256_LINUX_X86_64");
    }

    #[test]
    fn moving_names_and_mixed_forms_are_refused() {
        let e = table(
            None,
            None,
            Some("https://example.org/cell.git"),
            Some("main"),
        )
        .unwrap_err();
        assert_eq!(e.field, "workflow.cell.rev");
        assert!(e.msg.contains("full commit id"), "{e}");
        assert!(table(None, None, Some("https://example.org/c.git"), None).is_err());
        assert!(
            table(
                Some("0.2.0"),
                None,
                Some("https://x/c.git"),
                Some(&"a".repeat(40))
            )
            .is_err()
        );
        let e = table(Some("latest; rm -rf /"), None, None, None).unwrap_err();
        assert_eq!(e.field, "workflow.cell.version");
        let e = table(
            Some("0.2.0"),
            Some("https://mirror.example/cell.tar.gz"),
            None,
            None,
        )
        .unwrap_err();
        assert!(e.msg.contains("{target}"), "{e}");
        let e = table(
            Some("0.2.0"),
            Some("https://m.example/${{ secrets.X }}/{target}"),
            None,
            None,
        )
        .unwrap_err();
        assert_eq!(e.field, "workflow.cell.url");
        let e = table(Some("latest"), None, None, None).unwrap_err();
        assert!(e.msg.contains("moves"), "{e}");
        let e = table(
            Some("0.2.0"),
            Some("https://github.com/o/r/releases/latest/download/cell-{version}-{target}.tar.gz"),
            None,
            None,
        )
        .unwrap_err();
        assert!(e.msg.contains("/latest/"), "{e}");
        let e = table(
            Some("0.2.0"),
            Some("https://m.example/cell-{target}.tar.gz"),
            None,
            None,
        )
        .unwrap_err();
        assert!(e.msg.contains("{version}"), "{e}");
        let e = table(
            None,
            None,
            Some("https://u:pw@example.org/c.git"),
            Some(&"a".repeat(40)),
        )
        .unwrap_err();
        assert!(e.msg.contains("credentials"), "{e}");
        let e = resolve_cell_source(Some(toml::Value::String("latest".into()))).unwrap_err();
        assert!(e.msg.contains("\"source\""), "{e}");
        assert_eq!(
            resolve_cell_source(Some(toml::Value::String("source".into()))).unwrap(),
            Some(CellSource::Source)
        );
    }

    #[test]
    fn an_unknown_key_or_a_value_of_another_type_is_named() {
        let parse = |text: &str| {
            let v: toml::Table = toml::from_str(text).unwrap();
            resolve_cell_source(v.get("cell").cloned())
        };
        let e = parse("cell = { version = \"0.2.0\", sha = \"x\" }").unwrap_err();
        assert_eq!(e.field, "workflow.cell.sha");
        let e = parse("cell = { version = 2 }").unwrap_err();
        assert_eq!(e.field, "workflow.cell.version");
        assert!(e.msg.contains("an integer"), "{e}");
        let e = parse("cell = [\"source\"]").unwrap_err();
        assert!(e.msg.contains("array"), "{e}");
    }

    #[test]
    fn a_digest_is_read_per_platform_and_checked() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("versions.env");
        let text = format!(
            "CELL_SHA256_LINUX_X86_64={}\nCELL_SHA256_MACOS_AARCH64=nothex\n",
            "ab".repeat(32)
        );
        let env = VersionsEnv::parse(&path, &text).unwrap();
        let r = CellRelease {
            version: "0.2.0".into(),
            url: DEFAULT_RELEASE_URL.into(),
        };
        assert_eq!(
            r.digest(&env, "linux", "x86_64").unwrap().as_str(),
            "ab".repeat(32)
        );
        let e = r.digest(&env, "macos", "aarch64").unwrap_err();
        assert!(e.msg.contains("not a SHA-256"), "{e}");
        let e = r.digest(&env, "linux", "aarch64").unwrap_err();
        assert_eq!(e.field, "CELL_SHA256_LINUX_AARCH64");
        assert!(e.msg.contains("cell plan --cell-sums"), "{e}");
    }
}
