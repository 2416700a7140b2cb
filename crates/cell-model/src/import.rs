//! The Python cell's `versions.env`, said in this tool's keys (`cell import --versions-env`).
//!
//! The old file is read as the old tool read it (`KEY=value` lines, `#` comments, both sides
//! trimmed, the last of a key given twice wins). A key whose meaning this tool has is written
//! under its name here, with what differs said beside it; a key it does not take is named with
//! why. A key the old file leaves out took the old tool's default, which is not this tool's:
//! it is written out too. Comments are not copied: they explained the old thresholds.

use std::fmt::Write as _;

use crate::{Settings, VersionsEnv};

/// The old tool's defaults (`bench/cell/cell.py`), for the keys this tool takes.
const OLD_DEFAULTS: &[(&str, &str)] = &[
    ("REPS", "7"),
    ("DROP", "1"),
    ("REFERENCE", "c-O2"),
    ("PHASES", "all"),
    ("TOLERANCE", "0.05"),
    ("REGRESS_MIN", "1.5"),
    ("REGRESS_PHASE", "all"),
];

/// One line of the translation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EnvLine {
    /// This tool's key.
    pub key: String,
    /// Its value.
    pub value: String,
    /// What differs from the old key, one line, when something does.
    pub note: Option<String>,
}

/// A key of the old file with no equivalent here.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unmapped {
    /// The old key.
    pub key: String,
    /// Its value.
    pub value: String,
    /// Why it has no equivalent, and where its meaning goes instead.
    pub why: String,
}

/// The old file in this tool's keys.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EnvTranslation {
    /// The lines of this tool's `versions.env`, settings first, then pins in the old order.
    pub lines: Vec<EnvLine>,
    /// Every old key that has no line above.
    pub unmapped: Vec<Unmapped>,
}

/// `KEY=value` pairs in file order with their lines, as the old tool read them; the last of a
/// key wins.
fn read_old(text: &str) -> Vec<(String, String, usize)> {
    let mut out: Vec<(String, String, usize)> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let Some((k, v)) = line.split_once('=') else {
            continue;
        };
        let (k, v) = (k.trim().to_owned(), v.trim().to_owned());
        out.retain(|(key, _, _)| *key != k);
        out.push((k, v, i + 1));
    }
    out
}

/// `REGRESS_MIN_<ARCH>` → `TOOTH_MIN_<ARCH>`, the architecture as this tool names it.
fn per_arch_floor(key: &str) -> Option<String> {
    let arch = key.strip_prefix("REGRESS_MIN_")?;
    let arch = match arch {
        "ARM64" | "AARCH64" => "AARCH64",
        "X86_64" | "AMD64" => "X86_64",
        _ => return None,
    };
    Some(format!("TOOTH_MIN_{arch}"))
}

/// The line of one old setting, or why it has none.
fn setting(key: &str, value: &str, reps: &str, drop: &str) -> Result<Vec<EnvLine>, String> {
    let line = |k: &str, note: Option<String>| EnvLine {
        key: k.to_owned(),
        value: value.to_owned(),
        note,
    };
    Ok(match key {
        "REPS" => vec![
            line(
                "REPS",
                Some(format!(
                    "counts rounds here, DROP of them warm-up: {reps} with DROP={drop} measures as many rounds as the old cell kept repetitions, but a round times the reference and every row once in a seeded random order, and each ratio pairs a row with its own round's reference"
                )),
            ),
            EnvLine {
                key: "REPS_MAX".into(),
                value: value.to_owned(),
                note: Some(format!(
                    "the old schedule was fixed; without REPS_MAX the adaptive budget adds rounds up to {} while an interval is wide",
                    crate::DEFAULTS
                        .iter()
                        .find(|(k, _, _)| *k == "REPS_MAX")
                        .map_or("", |(_, v, _)| *v)
                )),
            },
        ],
        "DROP" => vec![line("DROP", None)],
        "REFERENCE" => vec![line("REFERENCE", None)],
        "PHASES" => vec![line(
            "PHASES",
            Some("each phase needs its answer under [expect] in cell/cell.toml".into()),
        )],
        "TOLERANCE" => vec![line(
            "TOLERANCE",
            Some("the same band, read here against the interval of the median of per-round ratios rather than against a ratio of medians".into()),
        )],
        "REGRESS_MIN" => vec![line(
            "TOOTH_MIN",
            Some("the tooth's slow and fast rows are [tooth] slow and fast in cell/cell.toml (the old cell's were mc-plain and mc-opt)".into()),
        )],
        "REGRESS_PHASE" => vec![line("TOOTH_PHASE", None)],
        _ if per_arch_floor(key).is_some() => {
            vec![line(&per_arch_floor(key).unwrap_or_default(), None)]
        }
        "CLANG_APT" => {
            return Err(format!(
                "an apt package belongs in cell/cell.toml's toolchain install.apt: install = {{ apt = {{ package = \"{value}\" }} }}"
            ));
        }
        _ if key.ends_with("_VERSION") => vec![line(
            key,
            Some(format!(
                "a pin: a toolchain's install in cell/cell.toml refers to it by name (version = \"{key}\")"
            )),
        )],
        _ if crate::DEFAULTS.iter().any(|(k, _, _)| *k == key) => vec![line(key, None)],
        _ => {
            return Err(
                "no setting of this tool has its meaning, and it is no pin (a pin is a version, URL or SHA-256 that cell/cell.toml names): nothing to map it to".into(),
            );
        }
    })
}

/// The old `versions.env` in this tool's keys. Every line written is checked the way this
/// tool reads `versions.env`; a value it would refuse is named in `unmapped` instead.
pub fn translate_versions_env(text: &str) -> EnvTranslation {
    let mut old = read_old(text);
    for (k, v) in OLD_DEFAULTS {
        if !old.iter().any(|(key, _, _)| key == k) {
            old.push(((*k).to_owned(), (*v).to_owned(), 0));
        }
    }
    let get = |k: &str| {
        old.iter()
            .find(|(key, _, _)| key == k)
            .map_or("", |(_, v, _)| v.as_str())
    };
    let (reps, drop) = (get("REPS").to_owned(), get("DROP").to_owned());
    let mut lines = Vec::new();
    let mut unmapped = Vec::new();
    for (key, value, line) in &old {
        match setting(key, value, &reps, &drop) {
            Ok(mapped) => {
                for mut l in mapped {
                    if *line == 0 {
                        let default = "not in the old file: the old cell's default";
                        l.note = Some(l.note.map_or(default.into(), |n| format!("{default}; {n}")));
                    }
                    match check_value(&l) {
                        Ok(()) => lines.push(l),
                        Err(why) => unmapped.push(Unmapped {
                            key: key.clone(),
                            value: value.clone(),
                            why,
                        }),
                    }
                }
            }
            Err(why) => unmapped.push(Unmapped {
                key: key.clone(),
                value: value.clone(),
                why,
            }),
        }
    }
    // Settings first, in this tool's order of DEFAULTS; pins after, in the old file's order.
    let rank = |k: &str| {
        let d = crate::DEFAULTS.iter();
        d.clone()
            .position(|(d, _, _)| *d == k)
            .or_else(|| {
                d.clone()
                    .position(|(d, _, _)| k.strip_prefix(d).is_some_and(|r| r.starts_with('_')))
            })
            .unwrap_or(usize::MAX)
    };
    lines.sort_by_key(|l| rank(&l.key));
    EnvTranslation { lines, unmapped }
}

/// Whether this tool's `versions.env` takes `line` as written.
fn check_value(line: &EnvLine) -> Result<(), String> {
    let text = format!("{}={}\n", line.key, line.value);
    VersionsEnv::parse(std::path::Path::new("versions.env"), &text)
        .map(|_| ())
        .map_err(|e| {
            let msg = e.to_string();
            let msg = msg.split_once(": ").map_or(msg.as_str(), |(_, m)| m);
            format!("its value cannot be written in this tool's versions.env: {msg}")
        })
}

impl EnvTranslation {
    /// The lines as a `versions.env` (notes and unmapped keys as `#` comments), headed by
    /// where they came from.
    pub fn render(&self, from: &str) -> String {
        let mut out =
            format!("# cell import --versions-env {from}: the same settings in this tool's keys\n");
        for l in &self.lines {
            if let Some(n) = &l.note {
                let _ = writeln!(out, "# {}: {n}", l.key);
            }
            let _ = writeln!(out, "{}={}", l.key, l.value);
        }
        if !self.unmapped.is_empty() {
            out.push_str("# not mapped:\n");
            for u in &self.unmapped {
                let _ = writeln!(
                    out,
                    "#   {}={}: {}",
                    cell_schema::escape::one_line(&u.key),
                    cell_schema::escape::one_line(&u.value),
                    u.why
                );
            }
        }
        out
    }

    /// Whether the lines, read as this tool's `versions.env`, give valid settings: the
    /// translation is checked before anyone pastes it.
    pub fn settings(&self) -> Result<Settings, crate::ConfigError> {
        let mut text = String::new();
        for l in &self.lines {
            let _ = writeln!(text, "{}={}", l.key, l.value);
        }
        let env = VersionsEnv::parse(std::path::Path::new("versions.env"), &text)?;
        Settings::from_env(&env)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_left_out_takes_the_old_default_and_says_so() {
        let t = translate_versions_env("REPS=9\n");
        let tol = t.lines.iter().find(|l| l.key == "TOLERANCE").unwrap();
        assert_eq!(tol.value, "0.05");
        assert!(
            tol.note
                .as_deref()
                .unwrap()
                .starts_with("not in the old file")
        );
        let s = t.settings().unwrap();
        assert_eq!((s.reps, s.reps_max, s.drop), (9, 9, 1));
        assert_eq!(s.tooth_phase.as_str(), "all");
    }

    #[test]
    fn unknown_keys_and_values_this_tool_cannot_hold_are_named() {
        let t = translate_versions_env("FOO=1\nGO_VERSION=1 2\nREGRESS_MIN_ARM64=1.2\n");
        let named: Vec<&str> = t.unmapped.iter().map(|u| u.key.as_str()).collect();
        assert_eq!(named, ["FOO", "GO_VERSION"]);
        assert!(
            t.unmapped[1].why.contains("cannot be written"),
            "{:?}",
            t.unmapped[1]
        );
        assert!(t.lines.iter().any(|l| l.key == "TOOTH_MIN_AARCH64"));
    }
}
