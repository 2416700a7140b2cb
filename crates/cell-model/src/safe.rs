//! Values that `cell plan` writes into `.github/workflows/cell.yml`: each kind has a character
//! set that a shell, a YAML file and GitHub Actions all read as itself, so nothing in the
//! configuration can become a `${{ … }}` expression, a second command or a second line.
//!
//! The checks run when the plan is resolved, so `cell plan`, `cell run` and `cell local`
//! refuse the same configuration.

/// What a value is, and so which characters it may hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A Debian package name (Debian policy 5.6.1): `[a-z0-9][a-z0-9+.-]+`.
    AptPackage,
    /// A Debian package version: `[A-Za-z0-9.+~:-]`, starting with a digit or letter.
    AptVersion,
    /// A toolchain version: `[A-Za-z0-9._+~-]`, starting with a digit or letter.
    Version,
    /// A setup action, `owner/repo`: `[A-Za-z0-9._-]` on each side of one `/`.
    Action,
    /// The name of an action input: `[A-Za-z0-9_-]`, starting with a letter or `_`.
    InputName,
    /// A download URL: `http://` or `https://`, then `[A-Za-z0-9._~:/@%+=,-]`.
    Url,
    /// A cron line: `[A-Za-z0-9*/,-]` fields separated by spaces.
    Cron,
    /// A branch or path pattern of the push trigger: `[A-Za-z0-9._/*?!+~@=\[\]-]`.
    Glob,
}

impl Kind {
    /// What to write instead, for the message.
    fn what(self) -> &'static str {
        match self {
            Kind::AptPackage => {
                "a Debian package name: lower-case letters, digits, `+`, `-` and `.`, at least two characters, starting with a letter or digit (e.g. clang)"
            }
            Kind::AptVersion => {
                "a Debian package version: letters, digits, `.`, `+`, `~`, `:` and `-`, starting with a letter or digit (e.g. 1:18.1.3-1)"
            }
            Kind::Version => {
                "a version: letters, digits, `.`, `_`, `+`, `~` and `-`, starting with a letter or digit (e.g. 1.26.7)"
            }
            Kind::Action => {
                "an action as owner/repo: letters, digits, `.`, `_` and `-` on each side of one `/` (e.g. actions/setup-go)"
            }
            Kind::InputName => {
                "an input name: letters, digits, `_` and `-`, starting with a letter or `_` (e.g. go-version)"
            }
            Kind::Url => "an http:// or https:// URL of letters, digits and . _ ~ : / @ % + = , -",
            Kind::Cron => {
                "five cron fields of digits, letters and * / , - separated by spaces (e.g. \"17 4 * * 1\")"
            }
            Kind::Glob => {
                "a pattern of letters, digits and . _ / * ? ! + ~ @ = [ ] - (e.g. \"cell/**\")"
            }
        }
    }

    /// Whether `value` is one of this kind.
    fn accepts(self, value: &str) -> bool {
        let b = value.as_bytes();
        let alnum = |c: &u8| c.is_ascii_alphanumeric();
        let first_alnum = b.first().is_some_and(alnum);
        match self {
            Kind::AptPackage => {
                b.len() >= 2
                    && b.first()
                        .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
                    && b.iter()
                        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || b"+.-".contains(c))
            }
            Kind::AptVersion => first_alnum && b.iter().all(|c| alnum(c) || b".+~:-".contains(c)),
            Kind::Version => first_alnum && b.iter().all(|c| alnum(c) || b"._+~-".contains(c)),
            Kind::Action => value.split_once('/').is_some_and(|(owner, repo)| {
                [owner, repo].iter().all(|part| {
                    !part.is_empty()
                        && !part.starts_with('.')
                        && part
                            .bytes()
                            .all(|c| c.is_ascii_alphanumeric() || b"._-".contains(&c))
                })
            }),
            Kind::InputName => {
                b.first()
                    .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_')
                    && b.iter().all(|c| alnum(c) || b"_-".contains(c))
            }
            Kind::Url => ["https://", "http://"].iter().any(|scheme| {
                value.strip_prefix(scheme).is_some_and(|rest| {
                    rest.as_bytes().first().is_some_and(alnum)
                        && rest
                            .bytes()
                            .all(|c| alnum(&c) || b"._~:/@%+=,-".contains(&c))
                })
            }),
            Kind::Cron => {
                !value.trim().is_empty() && b.iter().all(|c| alnum(c) || b"*/,- ".contains(c))
            }
            Kind::Glob => {
                !b.is_empty() && b.iter().all(|c| alnum(c) || b"._/*?!+~@=[]-".contains(c))
            }
        }
    }
}

/// A value that cannot be written into the workflow as it is.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum UnsafeValue {
    /// It holds `${{`, which GitHub Actions would evaluate.
    #[error(
        "`{value}` holds `${{{{`, which GitHub Actions would evaluate as an expression in the generated workflow: write {what}"
    )]
    Expression {
        /// The value, escaped onto one line.
        value: String,
        /// What to write instead.
        what: &'static str,
    },
    /// It is empty.
    #[error("the value is empty: write {what}")]
    Empty {
        /// What to write instead.
        what: &'static str,
    },
    /// It has a character its kind does not allow.
    #[error("`{value}` is not {what}")]
    Chars {
        /// The value, escaped onto one line.
        value: String,
        /// What to write instead.
        what: &'static str,
    },
}

/// `value` as `kind` allows it, or what is wrong and what to write.
pub fn check(kind: Kind, value: &str) -> Result<(), UnsafeValue> {
    let what = kind.what();
    let shown = || cell_schema::escape::one_line(value);
    if value.contains("${{") {
        return Err(UnsafeValue::Expression {
            value: shown(),
            what,
        });
    }
    if value.is_empty() {
        return Err(UnsafeValue::Empty { what });
    }
    if kind.accepts(value) {
        Ok(())
    } else {
        Err(UnsafeValue::Chars {
            value: shown(),
            what,
        })
    }
}

/// A control character (a tab aside) or a bidirectional override: what makes text read one
/// way on screen and another to a shell or a parser.
fn invisible(c: char) -> bool {
    (c.is_control() && c != '\t') || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// Keys whose strings are data compared byte for byte (an expected answer, a response body),
/// never a name, a command or a label: line breaks belong there.
const DATA_KEYS: &[&str] = &["expect", "body"];

/// The first key or string of a TOML document holding an invisible character, as its dotted
/// path (`rows.c-O2.build[2]`) and the character; strings under [`DATA_KEYS`] are data.
pub fn invisible_in(table: &toml::Table) -> Option<(String, char)> {
    fn walk(path: &str, v: &toml::Value) -> Option<(String, char)> {
        match v {
            toml::Value::String(s) => s
                .chars()
                .find(|c| invisible(*c))
                .map(|c| (path.to_owned(), c)),
            toml::Value::Array(items) => items
                .iter()
                .enumerate()
                .find_map(|(i, v)| walk(&format!("{path}[{i}]"), v)),
            toml::Value::Table(t) => in_table(path, t),
            _ => None,
        }
    }
    fn in_table(path: &str, t: &toml::Table) -> Option<(String, char)> {
        t.iter().find_map(|(k, v)| {
            let here = if path.is_empty() {
                k.clone()
            } else {
                format!("{path}.{k}")
            };
            match k.chars().find(|c| invisible(*c)) {
                Some(c) => Some((here, c)),
                None if DATA_KEYS.contains(&k.as_str()) => None,
                None => walk(&here, v),
            }
        })
    }
    in_table("", table)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invisible_characters_are_found_by_path_but_not_in_data() {
        let t: toml::Table = toml::from_str(
            "[http.expect]\nbody = \"a\\nb\"\n[rows.x]\nbuild = [\"cc\", \"-O2\\u202e\"]\n",
        )
        .unwrap();
        assert_eq!(
            invisible_in(&t),
            Some(("rows.x.build[1]".into(), '\u{202e}'))
        );
        let t: toml::Table =
            toml::from_str("[expect]\nmix = \"1\\n2\"\n[\"a\\tb\"]\nc = \"\\t\"\n").unwrap();
        assert_eq!(invisible_in(&t), None);
    }

    #[test]
    fn the_repository_values_pass() {
        for (kind, v) in [
            (Kind::AptPackage, "mono-mcs"),
            (Kind::AptPackage, "g++"),
            (Kind::AptPackage, "python3"),
            (Kind::AptVersion, "1:18.1.3-1ubuntu1"),
            (Kind::Version, "1.95.0"),
            (Kind::Version, "nightly-2026-01-01"),
            (Kind::Action, "dtolnay/rust-toolchain"),
            (Kind::InputName, "go-version"),
            (
                Kind::Url,
                "https://ziglang.org/download/0.16.0/zig-x86_64-linux-0.16.0.tar.xz",
            ),
            (Kind::Cron, "17 4 * * 1"),
            (Kind::Cron, "0 */6 * * MON-FRI"),
            (Kind::Glob, "cell/**"),
            (Kind::Glob, ".github/workflows/cell.yml"),
            (Kind::Glob, "release/v[0-9]*"),
        ] {
            assert_eq!(check(kind, v), Ok(()), "{kind:?} {v}");
        }
    }

    #[test]
    fn hostile_values_are_refused() {
        for (kind, v) in [
            (Kind::AptPackage, "clang ${{ github.token }}"),
            (Kind::AptPackage, "Clang"),
            (Kind::AptPackage, "c"),
            (Kind::AptPackage, "-oops"),
            (Kind::Version, "-1"),
            (Kind::Version, "1.0\nx"),
            (Kind::Version, "1.0 x"),
            (Kind::Action, "a/b/c"),
            (Kind::Action, "a/../b"),
            (Kind::InputName, "go version"),
            (Kind::InputName, "9go"),
            (Kind::Url, "ftp://x"),
            (Kind::Url, "https://"),
            (Kind::Url, "https://x/$(id)"),
            (Kind::Cron, "17 4 * * 1\n"),
            (Kind::Glob, "cell/**\ttab"),
            (Kind::Glob, "a b"),
        ] {
            assert!(check(kind, v).is_err(), "{kind:?} {v:?} was accepted");
        }
        let e = check(Kind::InputName, "${{ secrets.X }}").unwrap_err();
        assert!(e.to_string().contains("holds `${{`"), "{e}");
        assert_eq!(
            check(Kind::Version, "").unwrap_err().to_string(),
            format!("the value is empty: write {}", Kind::Version.what())
        );
    }
}
