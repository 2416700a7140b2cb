//! The `versions.env` parser on generated hostile input: it never panics, every value it
//! accepts is the text of its line after `KEY=` (so `sh` sources the same value), and a value
//! holding `${{`, a CR or a NUL is never accepted.

use std::path::Path;

use cell_model::VersionsEnv;
use proptest::prelude::*;

/// Pieces a hostile file is made of: separators, what sh or GitHub would interpret, line
/// endings of other systems, a BOM, non-ASCII.
const PIECES: &[&str] = &[
    "=",
    "\n",
    "\r",
    "\r\n",
    "\0",
    "$",
    "${{",
    "}}",
    "{",
    "}",
    "#",
    " ",
    "\t",
    "\"",
    "'",
    "`",
    "\\",
    "\u{feff}",
    "é",
    "\u{2028}",
    ";",
    "|",
    "&",
    "(",
    ")",
    "A",
    "KEY",
    "_",
    "9",
    "1.2.3",
    "https://x.org/a",
    ".",
    "-",
    "+",
    ",",
    ":",
    "/",
    "@",
    "%",
    "^",
    "~",
];

fn hostile() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(PIECES), 0..60).prop_map(|v| v.concat())
}

fn parse(text: &str) -> Result<VersionsEnv, cell_model::ConfigError> {
    VersionsEnv::parse(Path::new("versions.env"), text)
}

/// A key the parser takes.
fn key() -> impl Strategy<Value = String> {
    "[A-Z_][A-Z0-9_]{0,12}"
}

/// A value the parser takes: the characters sh reads literally.
fn literal_value() -> impl Strategy<Value = String> {
    "[A-Za-z0-9._+,:/@%=^~-]{0,24}"
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 2000,
        rng_seed: proptest::test_runner::RngSeed::Fixed(0x00ce_11ed),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn hostile_text_never_panics_and_what_it_accepts_is_literal(text in hostile()) {
        if let Ok(env) = parse(&text) {
            let body = text.strip_prefix('\u{feff}').unwrap_or(&text);
            let lines: Vec<&str> = body.split('\n').collect();
            for (key, entry) in &env.entries {
                // The value is the rest of its line, byte for byte.
                prop_assert_eq!(lines[entry.line - 1], format!("{key}={}", entry.value));
                prop_assert!(!entry.value.contains("${{"));
                prop_assert!(!entry.value.contains(['\r', '\0', '\n']));
            }
        }
    }

    #[test]
    fn accepted_values_round_trip(pairs in prop::collection::btree_map(key(), literal_value(), 0..12)) {
        let text = pairs.iter().map(|(k, v)| format!("# {k}\n{k}={v}\n")).collect::<Vec<_>>().concat();
        let env = parse(&text).expect("literal values are accepted");
        prop_assert_eq!(env.entries.len(), pairs.len());
        for (k, v) in &pairs {
            prop_assert_eq!(env.get(k), Some(v.as_str()));
        }
        // Written back in line order, it parses to the same entries.
        let mut lines: Vec<_> = env.entries.iter().collect();
        lines.sort_by_key(|(_, e)| e.line);
        let again = lines.iter().map(|(k, e)| format!("{k}={}\n", e.value)).collect::<Vec<_>>().concat();
        let env2 = parse(&again).expect("what was accepted is accepted again");
        for (k, v) in &pairs {
            prop_assert_eq!(env2.get(k), Some(v.as_str()));
        }
    }

    #[test]
    fn a_value_with_an_expression_cr_or_nul_is_never_accepted(
        before in "[a-z0-9\n=#]{0,20}",
        k in key(),
        head in literal_value(),
        bad in prop::sample::select(&["${{", "\r", "\0", "${{ github.token }}", "\r\n"][..]),
        tail in literal_value(),
        after in "[a-z0-9\n=#]{0,20}",
    ) {
        let text = format!("{before}\n{k}={head}{bad}{tail}\n{after}");
        prop_assert!(parse(&text).is_err(), "accepted {:?}", text);
    }
}
