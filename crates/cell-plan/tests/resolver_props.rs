//! The cell.toml resolver on generated hostile input: one string of a rich, valid project
//! (a value or a table name) replaced by text made of what YAML, sh or GitHub would
//! interpret. Whatever it accepts renders to a workflow that parses, holds no expression the
//! valid project did not, no control character, and only safe identifiers.

use std::collections::BTreeSet;
use std::path::Path;

use cell_schema::ids::is_safe_id;
use cell_testkit::planning::{Project, three_by_six, versions_for, with_suites};
use proptest::prelude::*;

const PIECES: &[&str] = &[
    "${{",
    "}}",
    "${{ secrets.GITHUB_TOKEN }}",
    "\n",
    "\r",
    "\t",
    "\u{0}",
    "\u{1b}[31m",
    "\"",
    "'",
    "`",
    "\\",
    "$(",
    ")",
    "$",
    ";",
    "&&",
    "|",
    "#",
    ": ",
    "- ",
    "*",
    "&a",
    "!!",
    "%",
    "@",
    "/",
    "..",
    "../",
    ".",
    "-",
    "{out}",
    "{tool:clang}",
    "{src}",
    "{bin}",
    "{phase}",
    "\u{202e}",
    "\u{feff}",
    "é",
    " ",
    "a",
    "Z",
    "0",
    "x86_64",
    "linux",
    "ubuntu-24.04",
];

fn hostile() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(PIECES), 0..8).prop_map(|v| v.concat())
}

/// TOML's basic-string escape, so the hostile text itself reaches the resolver.
fn toml_escape(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            '"' => "\\\"".to_owned(),
            '\\' => "\\\\".to_owned(),
            c if c.is_control() => format!("\\u{:04X}", u32::from(c)),
            c => c.to_string(),
        })
        .collect()
}

/// Byte ranges of the contents of every `"…"` on lines that are not comments.
fn strings(toml: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut at = 0;
    for line in toml.split_inclusive('\n') {
        if !line.trim_start().starts_with('#') {
            let mut open = None;
            for (i, c) in line.char_indices() {
                if c == '"' {
                    match open.take() {
                        None => open = Some(i + 1),
                        Some(o) => out.push((at + o, at + i)),
                    }
                }
            }
        }
        at += line.len();
    }
    out
}

/// The name of every table header (`[rows.c-O2]` → `c-O2`), as byte ranges.
fn table_names(toml: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut at = 0;
    for line in toml.split_inclusive('\n') {
        let t = line.trim_end();
        if t.starts_with('[')
            && !t.starts_with("[[")
            && t.ends_with(']')
            && let Some(dot) = t.rfind('.')
        {
            out.push((at + dot + 1, at + t.len() - 1));
        }
        at += line.len();
    }
    out
}

/// An expression with every identifier-like token collapsed: a cell renamed to another safe
/// label changes job ids, not the shape of any expression.
fn skeleton(expr: &str) -> String {
    let mut out = String::new();
    let mut in_token = false;
    for c in expr.chars() {
        if c.is_ascii_alphanumeric() || "_.+-".contains(c) {
            if !in_token {
                out.push('X');
            }
            in_token = true;
        } else {
            out.push(c);
            in_token = false;
        }
    }
    out
}

fn expressions(yaml: &str) -> BTreeSet<String> {
    yaml.match_indices("${{")
        .map(|(i, _)| {
            let rest = &yaml[i..];
            rest[..rest.find("}}").map_or(rest.len(), |e| e + 2)].to_owned()
        })
        .collect()
}

struct Base {
    project: Project,
    toml: String,
    skeletons: BTreeSet<String>,
    secrets: BTreeSet<String>,
}

fn secrets(exprs: &BTreeSet<String>) -> BTreeSet<String> {
    exprs
        .iter()
        .filter(|e| e.contains("secrets"))
        .cloned()
        .collect()
}

fn base(toml: String) -> Base {
    let project = Project::new(&versions_for(&toml), &toml);
    let plan = cell_model::Plan::load(&project.root).expect("the base project is valid");
    let yaml = cell_plan::render(&plan).expect("the base project renders");
    let exprs = expressions(&yaml);
    Base {
        project,
        skeletons: exprs.iter().map(|e| skeleton(e)).collect(),
        secrets: secrets(&exprs),
        toml,
    }
}

/// Loads `toml` into the base project's root; what it accepts must hold the properties.
fn check(base: &Base, toml: &str, text: &str) -> Result<(), TestCaseError> {
    let root: &Path = &base.project.root;
    std::fs::write(root.join("cell/cell.toml"), toml).unwrap();
    let Ok(plan) = cell_model::Plan::load(root) else {
        return Ok(());
    };
    for id in plan.toolchains.keys() {
        prop_assert!(is_safe_id(id.as_str()), "toolchain {id:?}");
    }
    for id in plan.rows.keys() {
        prop_assert!(is_safe_id(id.as_str()), "row {id:?}");
    }
    for id in plan.http.iter().flat_map(|h| h.servers.keys()) {
        prop_assert!(is_safe_id(id.as_str()), "server {id:?}");
    }
    for cell in plan.cells.values() {
        prop_assert!(is_safe_id(cell.id().as_str()), "cell {:?}", cell.id());
    }
    let Ok(yaml) = cell_plan::render(&plan) else {
        return Ok(());
    };
    prop_assert!(serde_norway::from_str::<serde_norway::Value>(&yaml).is_ok());
    let exprs = expressions(&yaml);
    let shapes: Vec<_> = exprs
        .iter()
        .filter(|e| !base.skeletons.contains(&skeleton(e)))
        .collect();
    prop_assert!(
        shapes.is_empty(),
        "expressions of a new shape {shapes:?} from\n{toml}"
    );
    prop_assert_eq!(&secrets(&exprs), &base.secrets);
    if text.contains("${{") {
        prop_assert!(!yaml.contains(text), "the hostile text is in the workflow");
    }
    prop_assert!(
        !yaml.chars().any(|c| c.is_control() && c != '\n'),
        "a control character in the workflow"
    );
    prop_assert!(
        !yaml.contains('\u{202e}'),
        "a bidi override in the workflow"
    );
    Ok(())
}

fn splice(toml: &str, (from, to): (usize, usize), with: &str) -> String {
    format!("{}{with}{}", &toml[..from], &toml[to..])
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 400,
        rng_seed: proptest::test_runner::RngSeed::Fixed(0x00ce_11ed),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn a_hostile_value_never_panics_and_never_reaches_the_workflow_live(
        pick in any::<prop::sample::Index>(),
        text in hostile(),
        suites in any::<bool>(),
    ) {
        thread_local! {
            static BASES: [Base; 2] = [base(three_by_six()), base(with_suites())];
        }
        BASES.with(|b| {
            let base = &b[usize::from(suites)];
            let at = strings(&base.toml);
            let toml = splice(&base.toml, at[pick.index(at.len())], &toml_escape(&text));
            check(base, &toml, &text)
        })?;
    }

    #[test]
    fn a_hostile_table_name_never_panics_and_never_reaches_the_workflow_live(
        pick in any::<prop::sample::Index>(),
        text in hostile(),
    ) {
        thread_local! {
            static BASE: Base = base(with_suites());
        }
        BASE.with(|base| {
            let at = table_names(&base.toml);
            let quoted = format!("\"{}\"", toml_escape(&text));
            let toml = splice(&base.toml, at[pick.index(at.len())], &quoted);
            check(base, &toml, &text)
        })?;
    }
}
