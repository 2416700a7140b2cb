//! The apt toolchains' package versions `cell init` pins: given with `--pin TOOL=VERSION`, or
//! found on this machine when it runs the image of the cell init writes (so the version exists
//! there); otherwise left to the image, with what this machine has written beside it, since a
//! version from another distribution would make every job's install fail.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Read as _;
use std::process::{Command, Stdio};

use anyhow::{bail, ensure};
use cell_model::{ValueKind, check_value};
use cell_schema::escape;

/// The runner label of the one cell init writes, and the distribution its image runs.
pub const CELL_LABEL: &str = "ubuntu-24.04";
const IMAGE: (&str, &str) = ("ubuntu", "24.04");

/// One apt toolchain's pin.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AptPin {
    /// `--pin TOOL=VERSION`.
    Given(String),
    /// This machine runs the cell's image and has this version installed.
    Found(String),
    /// Left to the image; what this machine has, when dpkg knows, and why it is not pinned.
    Unpinned { here: Option<String>, why: String },
}

impl AptPin {
    /// The pinned version, if any.
    pub fn version(&self) -> Option<&str> {
        match self {
            AptPin::Given(v) | AptPin::Found(v) => Some(v),
            AptPin::Unpinned { .. } => None,
        }
    }
}

/// The `versions.env` key of a toolchain's package version: `CLANG_VERSION`.
pub fn key(toolchain: &str) -> String {
    format!("{}_VERSION", toolchain.to_ascii_uppercase())
}

/// Each `--pin TOOL=VERSION`, checked: a toolchain init writes, a Debian version, once each.
pub fn parse_given(
    given: &[String],
    toolchains: &[String],
) -> anyhow::Result<BTreeMap<String, String>> {
    let mut out = BTreeMap::new();
    for g in given {
        let shown = escape::one_line(g);
        let Some((tool, version)) = g.split_once('=') else {
            bail!("--pin `{shown}`: write TOOL=VERSION, e.g. clang=1:18.0-59~exp2");
        };
        ensure!(
            toolchains.iter().any(|t| t == tool),
            "--pin `{shown}`: {} is not a toolchain cell init writes ({})",
            escape::one_line(tool),
            toolchains.join(", ")
        );
        check_value(ValueKind::AptVersion, version)
            .map_err(|e| anyhow::anyhow!("--pin `{shown}`: {e}"))?;
        ensure!(
            version.len() <= 100,
            "--pin `{shown}`: a package version of at most 100 characters"
        );
        ensure!(
            out.insert(tool.to_owned(), version.to_owned()).is_none(),
            "--pin {}: given twice",
            escape::one_line(tool)
        );
    }
    Ok(out)
}

/// The pin of every toolchain: given, else found when this machine is the cell's image.
pub fn resolve(
    toolchains: &[String],
    mut given: BTreeMap<String, String>,
) -> BTreeMap<String, AptPin> {
    let image = os_release();
    toolchains
        .iter()
        .map(|t| {
            let pin = match given.remove(t) {
                Some(v) => AptPin::Given(v),
                None => found(t, image.as_ref()),
            };
            (t.clone(), pin)
        })
        .collect()
}

fn found(package: &str, image: Option<&(String, String)>) -> AptPin {
    let here = installed_version(package);
    match (image, &here) {
        (Some((id, v)), Some(version)) if (id.as_str(), v.as_str()) == IMAGE => {
            AptPin::Found(version.clone())
        }
        (Some((id, v)), _) => AptPin::Unpinned {
            why: format!(
                "this machine runs {} {}, not the {CELL_LABEL} image the jobs run on",
                escape::one_line(id),
                escape::one_line(v)
            ),
            here,
        },
        (None, _) => AptPin::Unpinned {
            why: "this machine's /etc/os-release does not name its distribution".into(),
            here,
        },
    }
}

/// `ID` and `VERSION_ID` of `/etc/os-release`.
fn os_release() -> Option<(String, String)> {
    let mut text = String::new();
    std::fs::File::open("/etc/os-release")
        .ok()?
        .take(64 * 1024)
        .read_to_string(&mut text)
        .ok()?;
    let field = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix('='))
            .map(|v| v.trim().trim_matches('"').to_owned())
    };
    Some((field("ID")?, field("VERSION_ID")?))
}

/// The installed package's version, as dpkg records it; `None` without dpkg or the package.
fn installed_version(package: &str) -> Option<String> {
    let out = Command::new("dpkg-query")
        .args(["-W", "-f=${Status}\t${Version}", package])
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    let (status, version) = text.split_once('\t')?;
    (out.status.success()
        && status.ends_with(" installed")
        && check_value(ValueKind::AptVersion, version).is_ok()
        && version.len() <= 100)
        .then(|| version.to_owned())
}

/// The lines of `versions.env` for the toolchains' pins.
pub fn env_lines(pins: &BTreeMap<String, AptPin>) -> String {
    let mut v = String::from(
        "# The toolchains' apt package versions. A job installs the pinned one (and fails if its\n\
         # image cannot), or the image's own when unpinned; every job records what each prints.\n",
    );
    for (tool, pin) in pins {
        let k = key(tool);
        match pin {
            AptPin::Given(version) => {
                let _ = writeln!(v, "{k}={version}");
            }
            AptPin::Found(version) => {
                let _ = writeln!(
                    v,
                    "# found installed on this {CELL_LABEL} machine\n{k}={version}"
                );
            }
            AptPin::Unpinned { here, why } => {
                let had = here
                    .as_ref()
                    .map_or(String::new(), |h| format!(" (it has {h})"));
                let _ = writeln!(
                    v,
                    "# {tool}: not pinned, {why}{had}; to pin it, add {k}=<the version on {CELL_LABEL}> and\n\
                     # version = \"{k}\" to its apt install in cell/cell.toml (cell init --pin {tool}=VERSION does both)"
                );
            }
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tools() -> Vec<String> {
        vec!["clang".into(), "gcc".into()]
    }

    #[test]
    fn a_given_pin_is_checked_and_kept() {
        let p = parse_given(&["clang=1:18.0-59~exp2".into()], &tools()).unwrap();
        assert_eq!(p["clang"], "1:18.0-59~exp2");
        for bad in [
            "clang",
            "tcc=1.0",
            "clang=1.0;rm",
            "clang=",
            "clang=\u{1b}[31m",
        ] {
            let e = parse_given(&[bad.into()], &tools())
                .unwrap_err()
                .to_string();
            // The binary passes every error through escape::terminal when it prints it.
            assert!(e.starts_with("--pin"), "{bad}: {e}");
        }
        let twice = parse_given(&["gcc=1".into(), "gcc=2".into()], &tools()).unwrap_err();
        assert!(twice.to_string().contains("given twice"));
    }

    #[test]
    fn another_distribution_leaves_the_version_to_the_image_and_says_why() {
        let debian = ("debian".to_owned(), "12".to_owned());
        let AptPin::Unpinned { why, .. } = found("gcc", Some(&debian)) else {
            panic!("a Debian version pinned for an Ubuntu runner");
        };
        assert!(why.contains("debian 12"), "{why}");
        let lines = env_lines(&BTreeMap::from([(
            "gcc".to_owned(),
            AptPin::Unpinned {
                here: Some("4:12.2.0-3".into()),
                why,
            },
        )]));
        assert!(lines.contains("(it has 4:12.2.0-3)"), "{lines}");
        assert!(
            !lines.lines().any(|l| l.starts_with("GCC_VERSION")),
            "{lines}"
        );
    }
}
