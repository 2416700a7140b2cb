//! The load generators cell drives, one entry each: what a run may ask of it and how a job
//! installs it. Config validation, the workflow's install steps, the hint where one is
//! missing and `scripts/setup` (checked by a test) all read this table; cell-run has one
//! driver per entry.
//!
//! Last checked against wrk 4.1.0 (Debian), oha 1.16.0 and ab 2.3 (Debian's apache2-utils 2.4).

use crate::join;

/// How finely a tool counts the duration and timeout of a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Durations {
    /// Whole seconds only (`wrk -d 10s`, `ab -t 10`).
    WholeSeconds,
    /// Any duration (oha takes milliseconds).
    Fractional,
}

/// Whether a request of one method may, must or must not carry a body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Body {
    /// With or without one.
    Optional,
    /// Always with one (it may be empty).
    Required,
    /// Never with one.
    Never,
}

/// How a job installs a load generator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoadInstall {
    /// A Debian/Ubuntu package, at whatever version the runner's archive has.
    Apt {
        /// The package.
        package: &'static str,
    },
    /// `cargo install --locked` of a crate at the version a `versions.env` key pins.
    Crate {
        /// The crate.
        krate: &'static str,
        /// The `versions.env` key of its version, unless `[http] oha` names another
        /// ([`crate::HttpDef::version_key`]).
        version_key: &'static str,
    },
    /// A release tarball: downloaded by `cell fetch`, its SHA-256 checked before a byte is
    /// unpacked, its binary put on PATH.
    Tarball {
        /// The `versions.env` key of its URL.
        url_key: &'static str,
        /// The `versions.env` key of its SHA-256.
        sha256_key: &'static str,
        /// Leading path components dropped from every entry, as GNU tar counts them.
        strip: u32,
        /// The binary's path in the unpacked tree (after `strip`), e.g. `bin/tool`.
        bin: &'static str,
    },
}

/// One load generator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[expect(
    clippy::struct_excessive_bools,
    reason = "a table row: each flag is one independent fact of a tool, read by name"
)]
pub struct LoadToolDef {
    /// Its name in `[http] tools`, which is also its program on PATH.
    pub name: &'static str,
    /// Whether `[http]` measures it when `tools` is not written.
    pub by_default: bool,
    /// How finely it counts durations and timeouts.
    pub durations: Durations,
    /// Whether it can hold a fixed request rate (the soak suite needs one).
    pub fixed_rate: bool,
    /// Whether the soak suite drives it: exactly one entry, one with a fixed rate (a test
    /// holds the table to that), so a tool added above it never takes the soak over.
    pub soak: bool,
    /// Whether it takes a thread count (`[http] threads`).
    pub threads: bool,
    /// The methods it sends, each with what it does with a body.
    pub sends: &'static [(&'static str, Body)],
    /// Why it sends no other method, when the list alone does not say.
    pub other_methods: Option<&'static str>,
    /// Which methods carry a body, as its refusal of another says.
    pub bodies: Option<&'static str>,
    /// How a job installs it.
    pub install: LoadInstall,
}

/// Every method with a body or not, as wrk and oha send them.
const ANY: &[(&str, Body)] = &[
    ("GET", Body::Optional),
    ("HEAD", Body::Optional),
    ("POST", Body::Optional),
    ("PUT", Body::Optional),
    ("PATCH", Body::Optional),
    ("DELETE", Body::Optional),
    ("OPTIONS", Body::Optional),
];

/// The load generators, in the order `[http] tools` lists them when not written.
pub const LOAD_TOOLS: &[LoadToolDef] = &[
    LoadToolDef {
        name: "wrk",
        by_default: true,
        durations: Durations::WholeSeconds,
        fixed_rate: false,
        soak: false,
        threads: true,
        // wrk 4.1 waits for the body a HEAD response's `Content-Length` announces.
        sends: &[
            ("GET", Body::Optional),
            ("POST", Body::Optional),
            ("PUT", Body::Optional),
            ("PATCH", Body::Optional),
            ("DELETE", Body::Optional),
            ("OPTIONS", Body::Optional),
        ],
        other_methods: Some("wrk 4.1 waits for the body a HEAD response announces"),
        bodies: None,
        install: LoadInstall::Apt { package: "wrk" },
    },
    LoadToolDef {
        name: "oha",
        by_default: true,
        durations: Durations::Fractional,
        fixed_rate: true,
        soak: true,
        threads: false,
        sends: ANY,
        other_methods: None,
        bodies: None,
        install: LoadInstall::Crate {
            krate: "oha",
            version_key: crate::DEFAULT_OHA_KEY,
        },
    },
    LoadToolDef {
        name: "ab",
        // One thread, HTTP/1.0, no faster than one CPU lets it be: there only when asked for.
        by_default: false,
        durations: Durations::WholeSeconds,
        fixed_rate: false,
        soak: false,
        threads: false,
        sends: &[
            ("GET", Body::Never),
            ("HEAD", Body::Never),
            ("POST", Body::Required),
            ("PUT", Body::Required),
        ],
        other_methods: None,
        bodies: Some("only POST (-p) and PUT (-u) carry one"),
        install: LoadInstall::Apt {
            package: "apache2-utils",
        },
    },
];

/// The load generator named `name`.
pub fn load_tool(name: &str) -> Option<&'static LoadToolDef> {
    LOAD_TOOLS.iter().find(|t| t.name == name)
}

/// The load generator the soak suite drives: the entry marked `soak`.
pub fn soak_tool() -> &'static LoadToolDef {
    LOAD_TOOLS
        .iter()
        .find(|t| t.soak)
        .expect("the table marks one tool for the soak")
}

/// The names of every load generator, in table order.
pub fn load_tool_names() -> impl Iterator<Item = &'static str> + Clone {
    LOAD_TOOLS.iter().map(|t| t.name)
}

impl LoadToolDef {
    /// What it does with a body on `method`; `None`: it does not send `method`.
    pub fn body_of(&self, method: &str) -> Option<Body> {
        self.sends
            .iter()
            .find(|(m, _)| *m == method)
            .map(|&(_, b)| b)
    }

    /// Why `method` with a body or without (`has_body`) cannot be sent, after "`<tool>`
    /// cannot "; `None`: it can.
    pub fn refusal(&self, method: &str, has_body: bool) -> Option<String> {
        match (self.body_of(method), has_body) {
            (None, _) => {
                let why = self.other_methods.map_or_else(
                    || {
                        let m: Vec<&str> = self.sends.iter().map(|(m, _)| *m).collect();
                        format!("it sends {} only", and_list(&m))
                    },
                    str::to_owned,
                );
                let others: Vec<&str> = LOAD_TOOLS
                    .iter()
                    .filter(|t| t.name != self.name && t.body_of(method).is_some())
                    .map(|t| t.name)
                    .collect();
                Some(format!("send {method}: {why}; use {}", others.join(" or ")))
            }
            (Some(Body::Never), true) => {
                let carry: Vec<&str> = self
                    .sends
                    .iter()
                    .filter(|(_, b)| *b != Body::Never)
                    .map(|(m, _)| *m)
                    .collect();
                let which = self.bodies.map_or_else(
                    || format!("only {} carry one", and_list(&carry)),
                    str::to_owned,
                );
                Some(format!("send a body with {method}: {which}"))
            }
            (Some(Body::Required), false) => Some(format!(
                "send {method} without a body: give the request one (it may be empty)"
            )),
            _ => None,
        }
    }

    /// What to run where it is missing.
    pub fn hint(&self) -> String {
        match self.install {
            LoadInstall::Apt { package } => format!("apt-get install {package}"),
            LoadInstall::Crate { krate, .. } => format!("cargo install {krate} --locked"),
            LoadInstall::Tarball {
                url_key,
                sha256_key,
                strip,
                bin,
            } => format!(
                "cell fetch --url <{url_key}> --sha256 <{sha256_key}> --into DIR --strip-components {strip}, then put DIR/{bin} on PATH"
            ),
        }
    }
}

/// The first of `tools` that counts whole seconds only.
pub fn whole_seconds_tool<'a>(tools: impl IntoIterator<Item = &'a String>) -> Option<&'a str> {
    tools
        .into_iter()
        .find(|t| load_tool(t).is_some_and(|d| d.durations == Durations::WholeSeconds))
        .map(String::as_str)
}

/// The error of a name that is no load generator: the names there are.
pub(crate) fn known_tools() -> String {
    join(load_tool_names())
}

/// `a, b and c`.
fn and_list(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [one] => (*one).to_owned(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The refusals the drivers return read as they did before the table held them.
    #[test]
    fn refusals_read_as_the_drivers_wrote_them() {
        let wrk = load_tool("wrk").expect("wrk");
        let ab = load_tool("ab").expect("ab");
        let oha = load_tool("oha").expect("oha");
        assert_eq!(
            wrk.refusal("HEAD", false).as_deref(),
            Some("send HEAD: wrk 4.1 waits for the body a HEAD response announces; use oha or ab")
        );
        assert_eq!(
            ab.refusal("DELETE", false).as_deref(),
            Some("send DELETE: it sends GET, HEAD, POST and PUT only; use wrk or oha")
        );
        assert_eq!(
            ab.refusal("GET", true).as_deref(),
            Some("send a body with GET: only POST (-p) and PUT (-u) carry one")
        );
        assert_eq!(
            ab.refusal("PUT", false).as_deref(),
            Some("send PUT without a body: give the request one (it may be empty)")
        );
        assert_eq!(ab.refusal("POST", true), None);
        for (m, _) in ANY {
            assert_eq!(oha.refusal(m, true), None, "{m}");
            assert_eq!(oha.refusal(m, false), None, "{m}");
        }
    }

    /// The soak's tool was the first entry with a fixed rate: a fixed-rate tool added above
    /// oha would silently have become the soak's. It is marked now, once, on a tool that can
    /// hold the soak's rate.
    #[test]
    fn exactly_one_tool_is_the_soaks_and_it_holds_a_fixed_rate() {
        let marked: Vec<&str> = LOAD_TOOLS
            .iter()
            .filter(|t| t.soak)
            .map(|t| t.name)
            .collect();
        assert_eq!(marked.len(), 1, "the soak's tool: {marked:?}");
        assert!(
            soak_tool().fixed_rate,
            "{} holds no fixed rate",
            soak_tool().name
        );
        assert_eq!(soak_tool().name, marked[0]);
        assert_eq!(soak_tool().name, "oha");
    }

    /// Every method a tool lists is one the config accepts, each once.
    #[test]
    fn every_tool_sends_known_methods_once() {
        for t in LOAD_TOOLS {
            for (i, (m, _)) in t.sends.iter().enumerate() {
                assert!(crate::suite::matrix::METHODS.contains(m), "{}: {m}", t.name);
                assert!(
                    !t.sends[..i].iter().any(|(o, _)| o == m),
                    "{}: {m} twice",
                    t.name
                );
            }
        }
    }
}
