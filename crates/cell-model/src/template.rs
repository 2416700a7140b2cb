//! Argv templates: `{src}`, `{out}`, `{bin}`, `{work}`, `{phase}`, `{port}` and `{tool:NAME}`.

use std::fmt;

use cell_schema::ToolName;

/// One piece of an argument.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Piece {
    /// Text taken as is.
    Lit(String),
    /// Absolute source directory of the row.
    Src,
    /// Absolute path the build must write the binary to.
    Out,
    /// Absolute path of the built binary.
    Bin,
    /// Absolute scratch directory of the row.
    Work,
    /// The phase name.
    Phase,
    /// Absolute path of a tool of the row's toolchain.
    Tool(ToolName),
    /// The port a server listens on (servers of the http and soak suites only).
    Port,
}

/// One argument: pieces concatenated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Arg(pub Vec<Piece>);

/// Why a template argument does not parse.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TemplateError {
    /// A `{` with no `}` after it.
    #[error("`{arg}` opens `{{` without closing it")]
    Unclosed {
        /// The argument as written.
        arg: String,
    },
    /// A placeholder that is not one of the known ones.
    #[error(
        "unknown placeholder `{{{name}}}` in `{arg}`: use {{src}}, {{out}}, {{bin}}, {{work}}, {{phase}}, {{port}} or {{tool:NAME}}"
    )]
    UnknownPlaceholder {
        /// The text between the braces.
        name: String,
        /// The argument as written.
        arg: String,
    },
}

/// Values to substitute.
pub struct Vars<'a> {
    /// `{src}`.
    pub src: &'a str,
    /// `{out}` and `{bin}`.
    pub bin: &'a str,
    /// `{work}`.
    pub work: &'a str,
    /// `{phase}`.
    pub phase: &'a str,
    /// `{tool:NAME}` → path.
    pub tool: &'a dyn Fn(&ToolName) -> String,
    /// `{port}`.
    pub port: &'a str,
}

impl Arg {
    /// Parses one template argument; the error says which placeholder is unknown.
    pub fn parse(s: &str) -> Result<Self, TemplateError> {
        let mut pieces = Vec::new();
        let mut rest = s;
        while let Some(open) = rest.find('{') {
            if open > 0 {
                pieces.push(Piece::Lit(rest[..open].to_owned()));
            }
            let Some(close) = rest[open..].find('}') else {
                return Err(TemplateError::Unclosed { arg: s.to_owned() });
            };
            let name = &rest[open + 1..open + close];
            pieces.push(match name {
                "src" => Piece::Src,
                "out" => Piece::Out,
                "bin" => Piece::Bin,
                "work" => Piece::Work,
                "phase" => Piece::Phase,
                "port" => Piece::Port,
                _ => match name.strip_prefix("tool:") {
                    Some(t) if !t.is_empty() => Piece::Tool(ToolName::from(t)),
                    _ => {
                        return Err(TemplateError::UnknownPlaceholder {
                            name: name.to_owned(),
                            arg: s.to_owned(),
                        });
                    }
                },
            });
            rest = &rest[open + close + 1..];
        }
        if !rest.is_empty() {
            pieces.push(Piece::Lit(rest.to_owned()));
        }
        Ok(Self(pieces))
    }

    /// Whether a piece occurs.
    pub fn has(&self, p: &Piece) -> bool {
        self.0.contains(p)
    }

    /// Tools this argument names.
    pub fn tools(&self) -> impl Iterator<Item = &ToolName> {
        self.0.iter().filter_map(|p| match p {
            Piece::Tool(t) => Some(t),
            _ => None,
        })
    }

    /// The argument with every placeholder replaced by its value.
    pub fn render(&self, v: &Vars<'_>) -> String {
        self.0
            .iter()
            .map(|p| match p {
                Piece::Lit(s) => s.clone(),
                Piece::Src => v.src.to_owned(),
                Piece::Out | Piece::Bin => v.bin.to_owned(),
                Piece::Work => v.work.to_owned(),
                Piece::Phase => v.phase.to_owned(),
                Piece::Tool(t) => (v.tool)(t),
                Piece::Port => v.port.to_owned(),
            })
            .collect()
    }
}

impl fmt::Display for Arg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for p in &self.0 {
            match p {
                Piece::Lit(s) => f.write_str(s)?,
                Piece::Src => f.write_str("{src}")?,
                Piece::Out => f.write_str("{out}")?,
                Piece::Bin => f.write_str("{bin}")?,
                Piece::Work => f.write_str("{work}")?,
                Piece::Phase => f.write_str("{phase}")?,
                Piece::Tool(t) => write!(f, "{{tool:{t}}}")?,
                Piece::Port => f.write_str("{port}")?,
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_render() {
        let a = Arg::parse("-femit-bin={out}").unwrap();
        let tool = |t: &ToolName| format!("/usr/bin/{t}");
        let v = Vars {
            src: "/s",
            bin: "/b/x",
            work: "/w",
            phase: "mix",
            tool: &tool,
            port: "8080",
        };
        assert_eq!(a.render(&v), "-femit-bin=/b/x");
        assert_eq!(Arg::parse("{tool:zig}").unwrap().render(&v), "/usr/bin/zig");
        assert_eq!(a.to_string(), "-femit-bin={out}");
        assert!(
            Arg::parse("{nope}")
                .unwrap_err()
                .to_string()
                .contains("unknown placeholder `{nope}`")
        );
        assert!(Arg::parse("{src").is_err());
    }
}
