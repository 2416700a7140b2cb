//! `pr.json`: which pull request a `pull_request` run measured, written by that run's `pr` job
//! beside the job results it uploads (`cell-pr`), read by the reporter (`cell comment`), which
//! treats it as hostile: every field is checked where it is read, the file is bounded
//! ([`MAX_PR_JSON_BYTES`]), and its head SHA is compared with the event's and the pull
//! request's own before anything is posted.

use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[cfg(doc)]
use crate::SCHEMA_VERSION;
use crate::SchemaError;

/// The most bytes a `pr.json` may hold: five short fields fit in a few hundred.
pub const MAX_PR_JSON_BYTES: usize = 4096;

/// The file name inside the `cell-pr` artifact.
pub const PR_JSON: &str = "pr.json";

/// Marks a pull request record.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PrKind {
    /// `"pr"`
    Pr,
}

/// A pull request's number: a positive integer.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(try_from = "u64", into = "u64")]
#[schemars(with = "PrNumberRepr")]
pub struct PrNumber(u64);

#[derive(JsonSchema)]
#[schemars(transparent)]
#[allow(dead_code, reason = "only describes the JSON form to schemars")]
struct PrNumberRepr(#[schemars(range(min = 1))] u64);

/// A value that is not a pull request's number.
#[derive(Debug, thiserror::Error)]
#[error("`{0}` is not a pull request number: write a positive whole number")]
pub struct BadPrNumber(pub String);

impl PrNumber {
    /// Reads a number as GitHub writes one: decimal digits, no sign, no leading zero, not 0.
    pub fn parse(s: &str) -> Result<Self, BadPrNumber> {
        let canonical =
            !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) && !s.starts_with('0');
        match s.parse::<u64>() {
            Ok(n) if canonical => Ok(Self(n)),
            _ => Err(BadPrNumber(crate::escape::one_line(
                &s.chars().take(40).collect::<String>(),
            ))),
        }
    }

    /// The number.
    pub fn get(self) -> u64 {
        self.0
    }
}

impl TryFrom<u64> for PrNumber {
    type Error = BadPrNumber;
    fn try_from(n: u64) -> Result<Self, Self::Error> {
        if n == 0 {
            Err(BadPrNumber("0".into()))
        } else {
            Ok(Self(n))
        }
    }
}

impl From<PrNumber> for u64 {
    fn from(n: PrNumber) -> Self {
        n.0
    }
}

impl fmt::Display for PrNumber {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// A full git commit id: 40 lowercase hex digits (a SHA-1 repository's, as GitHub's events
/// give it).
#[derive(
    Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(try_from = "String", into = "String")]
#[schemars(with = "CommitShaRepr")]
pub struct CommitSha(String);

#[derive(JsonSchema)]
#[schemars(transparent)]
#[allow(dead_code, reason = "only describes the JSON form to schemars")]
struct CommitShaRepr(#[schemars(regex(pattern = r"^[0-9a-f]{40}$"))] String);

/// A value that is not a full commit id.
#[derive(Debug, thiserror::Error)]
#[error("`{0}` is not a full commit id: expected 40 lowercase hex digits")]
pub struct BadCommitSha(pub String);

impl CommitSha {
    /// Parses 40 lowercase hex digits, nothing around them.
    pub fn parse(s: &str) -> Result<Self, BadCommitSha> {
        if s.len() == 40 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
            Ok(Self(s.to_owned()))
        } else {
            Err(BadCommitSha(crate::escape::one_line(
                &s.chars().take(80).collect::<String>(),
            )))
        }
    }

    /// The hex form.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for CommitSha {
    type Error = BadCommitSha;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        Self::parse(&s)
    }
}

impl From<CommitSha> for String {
    fn from(s: CommitSha) -> Self {
        s.0
    }
}

impl fmt::Display for CommitSha {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A branch name as git allows one (`git check-ref-format --branch`), at most 255 bytes:
/// printable ASCII without space, `~^:?*[\`, no `..`, `@{`, `//`, no leading `-` or `/`, no
/// trailing `/`, `.` or `.lock`.
#[derive(
    Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(try_from = "String", into = "String")]
#[schemars(with = "BranchRepr")]
pub struct BranchName(String);

#[derive(JsonSchema)]
#[schemars(transparent)]
#[allow(dead_code, reason = "only describes the JSON form to schemars")]
struct BranchRepr(#[schemars(length(min = 1, max = 255))] String);

/// A value that is not a branch name.
#[derive(Debug, thiserror::Error)]
#[error(
    "`{0}` is not a branch name: printable ASCII without spaces or any of ~^:?*[\\, no `..`, `@{{` or `//`, at most 255 bytes"
)]
pub struct BadBranchName(pub String);

impl BranchName {
    /// Checks `s` against git's rules for a branch name.
    pub fn parse(s: &str) -> Result<Self, BadBranchName> {
        let chars_ok = s
            .bytes()
            .all(|b| b.is_ascii_graphic() && !b"~^:?*[\\".contains(&b));
        let shape_ok = !s.is_empty()
            && s.len() <= 255
            && !s.starts_with(['-', '/', '.'])
            && !s.ends_with(['/', '.'])
            && !s.to_ascii_lowercase().ends_with(".lock")
            && !s.contains("..")
            && !s.contains("@{")
            && !s.contains("//")
            && !s.contains("/.")
            && s != "@";
        if chars_ok && shape_ok {
            Ok(Self(s.to_owned()))
        } else {
            Err(BadBranchName(crate::escape::one_line(
                &s.chars().take(80).collect::<String>(),
            )))
        }
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for BranchName {
    type Error = BadBranchName;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        Self::parse(&s)
    }
}

impl From<BranchName> for String {
    fn from(s: BranchName) -> Self {
        s.0
    }
}

impl fmt::Display for BranchName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// `pr.json`: the pull request a `pull_request` run measured.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PrRecord {
    /// Always [`SCHEMA_VERSION`] when written by this build.
    #[serde(serialize_with = "crate::write::current_version")]
    pub schema_version: u32,
    /// `"pr"`.
    pub kind: PrKind,
    /// The pull request's number (`github.event.pull_request.number`).
    pub number: PrNumber,
    /// The commit the run measured: the pull request's head
    /// (`github.event.pull_request.head.sha`).
    pub head_sha: CommitSha,
    /// The base branch's commit when the run started (`github.event.pull_request.base.sha`).
    pub base_sha: CommitSha,
    /// The base branch (`github.base_ref`).
    pub base_ref: BranchName,
}

impl PrRecord {
    /// A record of this build's version.
    pub fn new(
        number: PrNumber,
        head_sha: CommitSha,
        base_sha: CommitSha,
        base_ref: BranchName,
    ) -> Self {
        Self {
            schema_version: crate::SCHEMA_VERSION,
            kind: PrKind::Pr,
            number,
            head_sha,
            base_sha,
            base_ref,
        }
    }
}

/// Why a `pr.json` was refused.
#[derive(Debug, thiserror::Error)]
pub enum PrError {
    /// Larger than [`MAX_PR_JSON_BYTES`].
    #[error(
        "pr.json holds {0} bytes, more than the {MAX_PR_JSON_BYTES} a pull request's record can need: refused"
    )]
    TooLarge(u64),
    /// Not the record: not JSON, a key twice, a field missing, unknown or out of its range.
    #[error("pr.json: {0}")]
    Schema(#[from] SchemaError),
    /// Another kind of file.
    #[error("pr.json: kind {0} is not \"pr\"")]
    Kind(String),
}

/// Reads `pr.json`'s text: at most [`MAX_PR_JSON_BYTES`], no key twice, a version this build
/// reads, `kind` `"pr"`, every field checked, no other field.
pub fn read_pr(text: &str) -> Result<PrRecord, PrError> {
    if text.len() > MAX_PR_JSON_BYTES {
        return Err(PrError::TooLarge(text.len() as u64));
    }
    match crate::probe(text)?.as_deref() {
        Some("pr") => {}
        other => {
            return Err(PrError::Kind(format!(
                "{:?}",
                crate::escape::one_line(other.unwrap_or("missing"))
            )));
        }
    }
    serde_json::from_str(text).map_err(|e| PrError::Schema(SchemaError::Parse(e)))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHA: &str = "328faa0536e6fef19753d9d91dc96a9931694ce3";

    fn record() -> PrRecord {
        PrRecord::new(
            PrNumber::parse("42").unwrap(),
            CommitSha::parse(SHA).unwrap(),
            CommitSha::parse(&"a".repeat(40)).unwrap(),
            BranchName::parse("main").unwrap(),
        )
    }

    #[test]
    fn a_record_round_trips_in_a_stable_order() {
        let text = crate::to_json(&record());
        assert_eq!(
            text,
            format!(
                "{{\n  \"schema_version\": {},\n  \"kind\": \"pr\",\n  \"number\": 42,\n  \"head_sha\": \"{SHA}\",\n  \"base_sha\": \"{}\",\n  \"base_ref\": \"main\"\n}}\n",
                crate::SCHEMA_VERSION,
                "a".repeat(40)
            )
        );
        assert_eq!(read_pr(&text).unwrap(), record());
    }

    #[test]
    fn hostile_records_are_refused() {
        let good = crate::to_json(&record());
        for (bad, why) in [
            (good.replace("42", "0"), "pull request number"),
            (good.replace("42", "\"42\""), "invalid type"),
            (good.replace("42", "-1"), "invalid value"),
            (good.replace(SHA, &SHA.to_uppercase()), "full commit id"),
            (good.replace(SHA, &SHA[..39]), "full commit id"),
            (good.replace("\"main\"", "\"-x\""), "branch name"),
            (good.replace("\"main\"", "\"a..b\""), "branch name"),
            (good.replace("\"main\"", "\"a\\u001b[31m\""), "branch name"),
            (good.replace("\"pr\"", "\"gate\""), "is not \"pr\""),
            (
                good.replace("\"number\"", "\"extra\": 1, \"number\""),
                "unknown field",
            ),
            (
                good.replace(
                    "\"base_ref\": \"main\"",
                    "\"base_ref\": \"main\", \"number\": 7",
                ),
                "duplicate key",
            ),
            (
                good.replace(
                    &format!("\"schema_version\": {}", crate::SCHEMA_VERSION),
                    "\"schema_version\": 99",
                ),
                "newer cell",
            ),
            (
                format!("{good}{}", " ".repeat(2 << 20)),
                "more than the 4096",
            ),
        ] {
            let e = read_pr(&bad).unwrap_err().to_string();
            assert!(e.contains(why), "{why}: {e}");
        }
    }

    #[test]
    fn numbers_are_read_as_github_writes_them() {
        assert_eq!(PrNumber::parse("7").unwrap().get(), 7);
        for bad in [
            "0",
            "07",
            "-7",
            "+7",
            "7a",
            "",
            " 7",
            "18446744073709551616",
        ] {
            assert!(PrNumber::parse(bad).is_err(), "{bad}");
        }
    }
}
