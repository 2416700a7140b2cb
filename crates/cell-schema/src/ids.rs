//! Strongly typed identifiers: never a bare `String` across a crate boundary.

use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The longest identifier a results file may carry.
pub const MAX_ID_LEN: usize = 128;

/// Whether `s` may be an identifier read from a file: `[A-Za-z0-9._+-]`, at most
/// [`MAX_ID_LEN`] bytes, not empty, not starting with `.` or `-`, no `..`. Every identifier
/// becomes a path part, a table cell or a line of output somewhere: nothing else gets in.
pub fn is_safe_id(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= MAX_ID_LEN
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-' | b'+'))
        && !s.starts_with(['.', '-'])
        && !s.contains("..")
}

/// Declares a string newtype with the traits every identifier needs; reading one from a
/// file refuses anything [`is_safe_id`] does not accept.
macro_rules! string_id {
    ($(#[$meta:meta])* $name:ident) => {
        $(#[$meta])*
        #[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, JsonSchema)]
        #[serde(transparent)]
        pub struct $name(String);

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = String::deserialize(d)?;
                if is_safe_id(&s) {
                    Ok(Self(s))
                } else {
                    Err(serde::de::Error::custom(format!(
                        "`{}` is not a valid {}: use letters, digits, `.`, `_`, `+` and `-` (not first `.` or `-`, no `..`, at most {MAX_ID_LEN} bytes)",
                        crate::escape::one_line(&s.chars().take(MAX_ID_LEN).collect::<String>()),
                        stringify!($name)
                    )))
                }
            }
        }

        impl $name {
            /// Wraps a string; validation belongs to the config resolver, not here.
            pub fn new(s: impl Into<String>) -> Self {
                Self(s.into())
            }

            /// The identifier as written.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl From<&str> for $name {
            fn from(s: &str) -> Self {
                Self(s.to_owned())
            }
        }

        impl std::borrow::Borrow<str> for $name {
            fn borrow(&self) -> &str {
                &self.0
            }
        }
    };
}

string_id!(
    /// A cell id, `<os>-<arch>-<label>`, e.g. `linux-x86_64-ubuntu-24.04`.
    CellId
);
string_id!(
    /// A runner label as written in `cell/cell.toml` (`ubuntu-24.04`, `local`).
    CellLabel
);
string_id!(
    /// A server of the http and soak suites (`rust`, `go`, …).
    ServerName
);
string_id!(
    /// A request of the http suite (`plaintext`, `json`, `route`, `post-json`).
    WorkloadName
);
string_id!(
    /// A connection shape of the http suite (`keep-alive`, `one-conn`).
    ShapeName
);
string_id!(
    /// What one job installs: `clang`, `go`, `zig`, …
    ToolchainName
);
string_id!(
    /// One build recipe: `c-O2`, `zig-fast`.
    RowName
);
string_id!(
    /// One argument of the workload: `mix`, `primes`, `fib`.
    Phase
);
string_id!(
    /// A program a toolchain provides (`clang`, `go`, `mono`).
    ToolName
);

/// A GitHub workflow run id (or a local run's stamp, which is numeric too).
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(transparent)]
pub struct RunId(pub u64);

/// A run id that is not written as one: not the canonical decimal form of a `u64`.
#[derive(Debug, thiserror::Error)]
#[error(
    "`{0}` is not a run id: decimal digits, no sign, no leading zero, at most {max}",
    max = u64::MAX
)]
pub struct BadRunId(pub String);

impl RunId {
    /// Reads a run id as GitHub writes one: decimal digits, no sign, no leading zero, within
    /// `u64`. One run has one spelling, so it has one run dir (`0034783020976` would be a
    /// second dir for run 34783020976).
    pub fn parse(s: &str) -> Result<Self, BadRunId> {
        let canonical = s.bytes().all(|b| b.is_ascii_digit()) && (s == "0" || !s.starts_with('0'));
        match s.parse() {
            Ok(n) if canonical => Ok(Self(n)),
            _ => Err(BadRunId(crate::escape::one_line(
                &s.chars().take(MAX_ID_LEN).collect::<String>(),
            ))),
        }
    }
}

impl fmt::Display for RunId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// A SHA-256 digest: 64 lowercase hex digits.
#[derive(
    Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(try_from = "String", into = "String")]
#[schemars(with = "Sha256Repr")]
pub struct Sha256(String);

/// How a digest is written on the wire.
#[derive(JsonSchema)]
#[schemars(transparent)]
#[allow(dead_code, reason = "only describes the JSON form to schemars")]
struct Sha256Repr(#[schemars(regex(pattern = r"^[0-9a-f]{64}$"))] String);

/// A string that is not 64 hex digits.
#[derive(Debug, thiserror::Error)]
#[error("`{0}` is not a SHA-256 digest: expected 64 hex digits")]
pub struct BadSha256(pub String);

impl Sha256 {
    /// Parses 64 hex digits (either case; stored lowercase).
    pub fn parse(s: &str) -> Result<Self, BadSha256> {
        let t = s.trim();
        if t.len() == 64 && t.bytes().all(|b| b.is_ascii_hexdigit()) {
            Ok(Self(t.to_ascii_lowercase()))
        } else {
            Err(BadSha256(s.to_owned()))
        }
    }

    /// Builds a digest from raw bytes.
    pub fn from_bytes(bytes: &[u8]) -> Self {
        use fmt::Write as _;
        let mut s = String::with_capacity(64);
        for b in bytes {
            let _ = write!(s, "{b:02x}");
        }
        Self(s)
    }

    /// The lowercase hex form.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for Sha256 {
    type Error = BadSha256;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        Self::parse(&s)
    }
}

impl From<Sha256> for String {
    fn from(s: Sha256) -> Self {
        s.0
    }
}

impl fmt::Display for Sha256 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha256_accepts_upper_and_stores_lower() {
        let d = Sha256::parse(&"AB".repeat(32)).unwrap();
        assert_eq!(d.as_str(), "ab".repeat(32));
        assert!(Sha256::parse("abc").is_err());
        assert!(Sha256::parse(&"zz".repeat(32)).is_err());
    }

    /// `0034783020976` and a 300-digit id were taken as run ids: only the canonical decimal
    /// form of a `u64` is one.
    #[test]
    fn a_run_id_is_one_canonical_number() {
        assert_eq!(RunId::parse("34783020976").unwrap(), RunId(34_783_020_976));
        assert_eq!(RunId::parse("0").unwrap(), RunId(0));
        assert_eq!(
            RunId::parse(&u64::MAX.to_string()).unwrap(),
            RunId(u64::MAX)
        );
        for bad in [
            "0034783020976",
            "00",
            "+7",
            "-7",
            " 7",
            "7 ",
            "7a",
            "",
            "18446744073709551616",
            &"9".repeat(300),
        ] {
            assert!(RunId::parse(bad).is_err(), "{bad}");
        }
        let long = RunId::parse(&"9".repeat(300)).unwrap_err().to_string();
        assert!(
            long.len() < 300,
            "the message shows a bounded prefix: {long}"
        );
    }

    #[test]
    fn sha256_from_bytes_is_hex() {
        assert_eq!(Sha256::from_bytes(&[0xab; 32]).as_str(), "ab".repeat(32));
    }
}
