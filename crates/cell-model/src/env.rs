//! `versions.env`: `KEY=value` lines that stay sourceable by POSIX sh.
//!
//! No quoting and no substitution: a value is taken literally, so it may only hold characters
//! that sh also takes literally. That keeps `. ./versions.env` in a workflow step and this
//! parser in exact agreement.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::ConfigError;

/// One `KEY=value` with the line it came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The value as written.
    pub value: String,
    /// 1-based line number.
    pub line: usize,
}

/// A parsed `versions.env`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VersionsEnv {
    /// The file it was read from.
    pub path: PathBuf,
    /// Every key, sorted.
    pub entries: BTreeMap<String, Entry>,
}

/// Characters sh takes literally in an unquoted word (besides alphanumerics).
const LITERAL_PUNCT: &str = "._-+,:/@%=^~";

impl VersionsEnv {
    /// Reads and parses a file.
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|error| ConfigError::Io {
            path: path.to_owned(),
            error,
        })?;
        Self::parse(path, &text)
    }

    /// Parses text that came from `path` (used in messages only).
    pub fn parse(path: &Path, text: &str) -> Result<Self, ConfigError> {
        let err = |line: usize, msg: String| ConfigError::Line {
            path: path.to_owned(),
            line,
            msg,
        };
        let mut entries: BTreeMap<String, Entry> = BTreeMap::new();
        // A BOM some editors write is not part of the first key.
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        for (i, raw) in text.split_terminator('\n').enumerate() {
            let line = i + 1;
            if raw.ends_with('\r') {
                return Err(err(
                    line,
                    format!(
                        "line {line} ends in CR: save the file with LF line endings (sh would keep the CR in the value)"
                    ),
                ));
            }
            if let Some(bad) = raw.chars().find(|c| matches!(c, '\r' | '\0')) {
                return Err(err(
                    line,
                    format!(
                        "the line holds `{}`: remove it (sh and this parser would read it differently)",
                        bad.escape_default()
                    ),
                ));
            }
            let trimmed = raw.trim();
            if trimmed.is_empty() || trimmed.starts_with('#') {
                continue;
            }
            let Some((key, value)) = raw.split_once('=') else {
                return Err(err(
                    line,
                    format!(
                        "`{trimmed}` has no `=`: write KEY=value (or start the line with # for a comment)"
                    ),
                ));
            };
            if key.is_empty() {
                return Err(err(line, "empty key before `=`: write KEY=value".into()));
            }
            if !is_key(key) {
                return Err(err(
                    line,
                    format!(
                        "`{key}` is not a key: use letters, digits and _ only, not starting with a digit, with no spaces around `=` (e.g. REPS=11)"
                    ),
                ));
            }
            if let Some(bad) = value
                .chars()
                .find(|c| !c.is_ascii_alphanumeric() && !LITERAL_PUNCT.contains(*c))
            {
                return Err(err(
                    line,
                    format!(
                        "{key}: the value has `{}`, which sh would not take literally: write a bare value with no quotes, spaces, `$` or `#` (allowed: letters, digits and {LITERAL_PUNCT})",
                        bad.escape_default()
                    ),
                ));
            }
            if let Some(prev) = entries.get(key) {
                return Err(err(
                    line,
                    format!(
                        "{key} is already set on line {}: keep one of the two lines",
                        prev.line
                    ),
                ));
            }
            entries.insert(
                key.to_owned(),
                Entry {
                    value: value.to_owned(),
                    line,
                },
            );
        }
        Ok(Self {
            path: path.to_owned(),
            entries,
        })
    }

    /// A value, if the key is set.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.entries.get(key).map(|e| e.value.as_str())
    }

    /// An error pointing at `key`'s line (or at the file when the default was used).
    pub fn error_at(&self, key: &str, msg: String) -> ConfigError {
        match self.entries.get(key) {
            Some(e) => ConfigError::Line {
                path: self.path.clone(),
                line: e.line,
                msg,
            },
            None => ConfigError::Field {
                path: self.path.clone(),
                field: key.to_owned(),
                msg: format!("{msg} (the default is used: set {key}= to change it)"),
            },
        }
    }
}

/// Sets `KEY=value` lines of the file at `path`: a key's line is replaced where it stands,
/// a new key is appended; every other line is kept byte for byte. Written through a temporary
/// file of a fresh name and a rename, so a failure leaves the file as it was. Keys and values must be what
/// [`VersionsEnv::parse`] takes back.
pub fn set_keys(path: &Path, pairs: &[(String, String)]) -> Result<(), ConfigError> {
    let io = |error| ConfigError::Io {
        path: path.to_owned(),
        error,
    };
    let text = std::fs::read_to_string(path).map_err(io)?;
    let mut left: Vec<&(String, String)> = pairs.iter().collect();
    let mut out = String::with_capacity(text.len() + 100);
    for line in text.split_inclusive('\n') {
        let key = line.split_once('=').map(|(k, _)| k.trim());
        match left.iter().position(|(k, _)| Some(k.as_str()) == key) {
            Some(i) => {
                let (k, v) = left.remove(i);
                let _ = writeln!(out, "{k}={v}");
            }
            None => out.push_str(line),
        }
    }
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    for (k, v) in left {
        let _ = writeln!(out, "{k}={v}");
    }
    VersionsEnv::parse(path, &out)?;
    // A fresh temporary name (never a path something may already point elsewhere from).
    cell_schema::write_atomic(path, out.as_bytes()).map_err(io)
}

pub(crate) fn is_key(key: &str) -> bool {
    let mut chars = key.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    #[test]
    fn set_keys_replaces_in_place_appends_the_rest_and_keeps_every_other_byte() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("versions.env");
        std::fs::write(&path, "# pins\nA=1\n\nCELL_SHA256_LINUX_X86_64=old\nB=2").unwrap();
        let pairs = [
            ("CELL_SHA256_LINUX_X86_64".to_owned(), "new".to_owned()),
            ("CELL_SHA256_MACOS_AARCH64".to_owned(), "mac".to_owned()),
        ];
        set_keys(&path, &pairs).unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "# pins\nA=1\n\nCELL_SHA256_LINUX_X86_64=new\nB=2\nCELL_SHA256_MACOS_AARCH64=mac\n"
        );
        let bad = [("X".to_owned(), "a b".to_owned())];
        assert!(set_keys(&path, &bad).is_err());
        assert!(
            std::fs::read_to_string(&path).unwrap().ends_with("=mac\n"),
            "a refused value changed the file"
        );
    }

    use super::*;

    fn parse(text: &str) -> Result<VersionsEnv, String> {
        VersionsEnv::parse(Path::new("versions.env"), text).map_err(|e| e.to_string())
    }

    #[test]
    fn comments_blanks_and_values() {
        let env = parse("# pins\n\nREPS=11\nZIG_URL=https://x.org/a-b_c.tar.xz\n").unwrap();
        assert_eq!(env.get("REPS"), Some("11"));
        assert_eq!(env.entries["ZIG_URL"].line, 4);
    }

    #[test]
    fn errors_name_file_and_line() {
        assert!(
            parse("A=1\nnope\n")
                .unwrap_err()
                .starts_with("versions.env:2: `nope` has no `=`")
        );
        assert!(
            parse("A=1\n=2\n")
                .unwrap_err()
                .starts_with("versions.env:2: empty key")
        );
        let dup = parse("A=1\nB=2\nA=3\n").unwrap_err();
        assert!(
            dup.starts_with("versions.env:3: A is already set on line 1"),
            "{dup}"
        );
        assert!(
            parse("A=\"x\"\n")
                .unwrap_err()
                .starts_with("versions.env:1: A: the value has `\\\"`")
        );
        assert!(
            parse("A = 1\n")
                .unwrap_err()
                .starts_with("versions.env:1: `A ` is not a key")
        );
        assert!(parse("A=$HOME\n").unwrap_err().contains("`$`"));
    }

    #[test]
    fn a_bom_is_stripped_and_cr_and_nul_are_refused() {
        let env = parse("\u{feff}REPS=11\n").unwrap();
        assert_eq!(env.get("REPS"), Some("11"));
        let crlf = parse("A=1\nB=2\r\n").unwrap_err();
        assert!(
            crlf.starts_with(
                "versions.env:2: line 2 ends in CR: save the file with LF line endings"
            ),
            "{crlf}"
        );
        assert!(parse("# a\rb\n").unwrap_err().contains("`\\r`"));
        assert!(parse("# a\0b\n").unwrap_err().contains("`\\u{0}`"));
        assert!(parse("A=x\0\n").is_err());
    }
}
