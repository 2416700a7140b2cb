//! The shape of the workspace, checked: crates import only the crates their line of
//! ARCHITECTURE.md allows, that file's dependency graph is what the manifests say, no
//! function outside tests is longer than 120 lines (from `fn` to its closing brace, comments
//! included), no source file of a library or binary is longer than 800 lines before its test
//! module, and every path the recipes of ARCHITECTURE.md name exists.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const MAX_FN_LINES: usize = 120;
const MAX_FILE_LINES: usize = 800;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// `cell-*` crates a manifest names under `[dependencies]` (normal dependencies only).
fn normal_deps(manifest: &Path) -> BTreeSet<String> {
    let text = std::fs::read_to_string(manifest).unwrap();
    let mut out = BTreeSet::new();
    let mut in_deps = false;
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_deps = line == "[dependencies]";
            continue;
        }
        if in_deps
            && let Some((name, _)) = line.split_once(['.', '=', ' '])
            && name.starts_with("cell-")
        {
            out.insert(name.to_owned());
        }
    }
    out
}

/// The graph ARCHITECTURE.md draws: every line `crate  → dep, dep` of its fenced block headed
/// "Dependencies".
fn documented_graph() -> BTreeMap<String, BTreeSet<String>> {
    let text = std::fs::read_to_string(workspace().join("ARCHITECTURE.md")).unwrap();
    let start = text
        .find("```text deps")
        .expect("ARCHITECTURE.md has a ```text deps block");
    let block = &text[start + "```text deps".len()..];
    let block = &block[..block.find("```").expect("the block ends")];
    let mut out = BTreeMap::new();
    for line in block.lines().filter(|l| !l.trim().is_empty()) {
        let (krate, deps) = line
            .split_once('→')
            .unwrap_or_else(|| panic!("`{line}`: write `crate → dep, dep` (or `→ nothing`)"));
        let deps: BTreeSet<String> = deps
            .split(',')
            .map(str::trim)
            .filter(|d| !d.is_empty() && *d != "nothing")
            .map(str::to_owned)
            .collect();
        out.insert(krate.trim().to_owned(), deps);
    }
    out
}

fn crate_dirs() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(workspace().join("crates"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("Cargo.toml").is_file())
        .collect();
    dirs.extend(
        ["bench/overhead", "bench/precision"]
            .iter()
            .map(|b| workspace().join(b)),
    );
    dirs.sort();
    dirs
}

fn crate_name(dir: &Path) -> String {
    let text = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix("name = \""))
        .and_then(|l| l.strip_suffix('"'))
        .unwrap()
        .to_owned()
}

#[test]
fn the_dependency_graph_is_the_one_architecture_md_draws() {
    let documented = documented_graph();
    let mut actual = BTreeMap::new();
    // The benches stand outside the graph; they are told apart by where they live, since the
    // binary's package is named `cell-bench` too.
    for dir in crate_dirs() {
        if dir.starts_with(workspace().join("bench")) {
            continue;
        }
        actual.insert(crate_name(&dir), normal_deps(&dir.join("Cargo.toml")));
    }
    assert_eq!(
        documented, actual,
        "ARCHITECTURE.md's dependency graph (left) differs from the manifests (right)"
    );
}

/// What each crate may import: the table of the target architecture. A crate may import
/// only crates earlier in the pipeline.
const ALLOWED: &[(&str, &[&str])] = &[
    ("cell-schema", &[]),
    ("cell-stats", &[]),
    ("cell-model", &["cell-schema"]),
    ("cell-plan", &["cell-model", "cell-schema"]),
    ("cell-fetch", &["cell-schema"]),
    ("cell-verdict", &["cell-schema", "cell-stats", "cell-model"]),
    (
        "cell-run",
        &[
            "cell-schema",
            "cell-stats",
            "cell-model",
            "cell-fetch",
            "cell-verdict",
        ],
    ),
    ("cell-github", &["cell-schema", "cell-stats", "cell-fetch"]),
    (
        "cell-collect",
        &[
            "cell-schema",
            "cell-stats",
            "cell-fetch",
            "cell-github",
            "cell-verdict",
        ],
    ),
    (
        "cell-report",
        &["cell-schema", "cell-stats", "cell-verdict"],
    ),
];

#[test]
fn every_crate_imports_only_what_its_place_in_the_pipeline_allows() {
    for dir in crate_dirs() {
        let name = crate_name(&dir);
        let deps = normal_deps(&dir.join("Cargo.toml"));
        assert!(
            !deps.contains("cell-testkit"),
            "{name} depends on cell-testkit outside [dev-dependencies]"
        );
        let Some((_, allowed)) = ALLOWED.iter().find(|(c, _)| *c == name) else {
            continue; // the binary and the benches may import every library
        };
        for d in &deps {
            assert!(
                allowed.contains(&d.as_str()),
                "{name} imports {d}, which stands later in the pipeline (allowed: {allowed:?})"
            );
        }
    }
}

/// Source with comments, strings and char literals blanked (same length, newlines kept), so
/// braces can be matched on what is left.
fn code_only(src: &str) -> Vec<u8> {
    let b = src.as_bytes();
    let mut out = b.to_vec();
    let blank = |out: &mut Vec<u8>, from: usize, to: usize| {
        for c in &mut out[from..to] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    };
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                let end = b[i..]
                    .iter()
                    .position(|&c| c == b'\n')
                    .map_or(b.len(), |p| i + p);
                blank(&mut out, i, end);
                i = end;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let (mut depth, mut j) = (1, i + 2);
                while j < b.len() && depth > 0 {
                    if b[j] == b'/' && b.get(j + 1) == Some(&b'*') {
                        depth += 1;
                        j += 1;
                    } else if b[j] == b'*' && b.get(j + 1) == Some(&b'/') {
                        depth -= 1;
                        j += 1;
                    }
                    j += 1;
                }
                blank(&mut out, i, j);
                i = j;
            }
            b'r' if matches!(b.get(i + 1), Some(b'#' | b'"'))
                && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_')) =>
            {
                let hashes = b[i + 1..].iter().take_while(|&&c| c == b'#').count();
                if b.get(i + 1 + hashes) != Some(&b'"') {
                    i += 1;
                    continue;
                }
                let close: Vec<u8> = std::iter::once(b'"')
                    .chain(std::iter::repeat_n(b'#', hashes))
                    .collect();
                let body = i + 2 + hashes;
                let end = b[body..]
                    .windows(close.len())
                    .position(|w| w == close.as_slice())
                    .map_or(b.len(), |p| body + p + close.len());
                blank(&mut out, i, end);
                i = end;
            }
            b'"' => {
                let mut j = i + 1;
                while j < b.len() && b[j] != b'"' {
                    j += if b[j] == b'\\' { 2 } else { 1 };
                }
                blank(&mut out, i, (j + 1).min(b.len()));
                i = j + 1;
            }
            b'\'' => {
                // A char literal ('x', '\n', '\u{..}'), or a lifetime ('a) left alone.
                let end = if b.get(i + 1) == Some(&b'\\') {
                    b[i + 2..]
                        .iter()
                        .position(|&c| c == b'\'')
                        .map(|p| i + 2 + p)
                } else {
                    std::str::from_utf8(&b[i + 1..(i + 6).min(b.len())])
                        .ok()
                        .or_else(|| std::str::from_utf8(&b[i + 1..]).ok())
                        .and_then(|s| s.chars().next())
                        .map(|c| i + 1 + c.len_utf8())
                        .filter(|&e| b.get(e) == Some(&b'\''))
                };
                match end {
                    Some(e) => {
                        blank(&mut out, i, e + 1);
                        i = e + 1;
                    }
                    None => i += 1,
                }
            }
            _ => i += 1,
        }
    }
    out
}

/// `(line of fn, lines, name)` of every function with a body in `src` that is not inside a
/// `#[cfg(test)]` item.
fn functions(src: &str) -> Vec<(usize, usize, String)> {
    let code = code_only(src);
    // Line starts, so a byte offset's line is a binary search.
    let starts: Vec<usize> = std::iter::once(0)
        .chain(
            code.iter()
                .enumerate()
                .filter(|(_, c)| **c == b'\n')
                .map(|(i, _)| i + 1),
        )
        .collect();
    let line_of = |at: usize| starts.partition_point(|&s| s <= at);
    let matching = |open: usize| -> usize {
        let mut depth = 0;
        for (k, &c) in code[open..].iter().enumerate() {
            match c {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        return open + k;
                    }
                }
                _ => {}
            }
        }
        code.len()
    };
    let text = String::from_utf8_lossy(&code).into_owned();
    // The spans of `#[cfg(test)]` items: everything inside them is test code.
    let mut test_spans = Vec::new();
    for (at, _) in text.match_indices("#[cfg(test)]") {
        if let Some(open) = text[at..].find('{') {
            test_spans.push((at, matching(at + open)));
        }
    }
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut out = Vec::new();
    for (at, _) in text.match_indices("fn ") {
        if at > 0 && ident(code[at - 1]) {
            continue;
        }
        let name: String = text[at + 3..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if name.is_empty() || test_spans.iter().any(|&(a, b)| at > a && at < b) {
            continue; // `fn(..)` types, and tests
        }
        // The body: the first `{` before any `;` (a declaration without body has none).
        let rest = &text[at..];
        let (Some(open), semi) = (rest.find('{'), rest.find(';')) else {
            continue;
        };
        if semi.is_some_and(|s| s < open) {
            continue;
        }
        let close = matching(at + open);
        out.push((line_of(at), line_of(close) - line_of(at) + 1, name));
    }
    out
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn the_function_counter_counts_what_it_should() {
    let src = r##"
fn short() {
    let s = "{ not a brace";
    let c = '{';
    // }
    /* { */
    let r = r#"}"#;
}
fn pointer(f: fn(i32) -> i32) -> i32 { f(1) }
trait T { fn declared(&self); }
#[cfg(test)]
mod tests {
    fn helper() {
    }
}
"##;
    let fns = functions(src);
    let names: Vec<&str> = fns.iter().map(|(_, _, n)| n.as_str()).collect();
    assert_eq!(names, ["short", "pointer"]);
    assert_eq!((fns[0].0, fns[0].1), (2, 7));
    assert_eq!(fns[1].1, 1);
}

#[test]
fn no_function_outside_tests_is_longer_than_120_lines() {
    let mut files = Vec::new();
    for dir in crate_dirs() {
        rust_files(&dir.join("src"), &mut files);
    }
    let mut long = Vec::new();
    for f in files {
        let src = std::fs::read_to_string(&f).unwrap();
        for (line, lines, name) in functions(&src) {
            if lines > MAX_FN_LINES {
                let rel = f.strip_prefix(workspace()).unwrap().display().to_string();
                long.push(format!("{rel}:{line} fn {name}: {lines} lines"));
            }
        }
    }
    assert!(
        long.is_empty(),
        "functions over {MAX_FN_LINES} lines (split them into named stages):\n{}",
        long.join("\n")
    );
}

/// Lines of a source file before its test module (the first `#[cfg(test)]` at the start of a
/// line): what a reader of the library meets.
fn lines_outside_tests(src: &str) -> usize {
    src.lines()
        .take_while(|l| !l.starts_with("#[cfg(test)]"))
        .count()
}

#[test]
fn the_file_counter_stops_at_the_test_module() {
    assert_eq!(lines_outside_tests("a\nb\n#[cfg(test)]\nmod tests {}\n"), 2);
    assert_eq!(lines_outside_tests("a\n    #[cfg(test)]\nb\n"), 3);
    assert_eq!(lines_outside_tests(""), 0);
}

/// Regression: files grew to 1,500 lines holding several concerns (every record of the schema in
/// one `lib.rs`); a file is split by concern before it passes 800 lines. `cell-testkit` is test
/// support and stands aside.
#[test]
fn no_source_file_outside_tests_is_longer_than_800_lines() {
    let mut files = Vec::new();
    for dir in crate_dirs() {
        if crate_name(&dir) != "cell-testkit" {
            rust_files(&dir.join("src"), &mut files);
        }
    }
    let mut long: Vec<String> = files
        .iter()
        .filter_map(|f| {
            let n = lines_outside_tests(&std::fs::read_to_string(f).unwrap());
            let rel = f.strip_prefix(workspace()).unwrap().display().to_string();
            (n > MAX_FILE_LINES).then(|| format!("{rel}: {n} lines"))
        })
        .collect();
    long.sort();
    assert!(
        long.is_empty(),
        "files over {MAX_FILE_LINES} lines outside their tests (split them by concern):\n{}",
        long.join("\n")
    );
}

/// The paths a recipe of "How to change things" names: every backticked word with a `/` or a
/// file extension, outside a code block.
fn recipe_paths(doc: &str) -> Vec<String> {
    let section = doc
        .split("\n## How to change things")
        .nth(1)
        .expect("ARCHITECTURE.md has a \"How to change things\" section");
    let section = section.split("\n## ").next().unwrap();
    let mut paths: Vec<String> = section
        .split('`')
        .skip(1)
        .step_by(2)
        .filter(|w| !w.contains(' ') && !w.contains('[') && !w.contains('='))
        .filter(|w| {
            w.contains('/')
                || [".rs", ".md", ".toml", ".env", ".yml"]
                    .iter()
                    .any(|x| w.ends_with(x))
        })
        .map(str::to_owned)
        .collect();
    paths.sort();
    paths.dedup();
    paths
}

/// Regression: a recipe that names a file the code has since moved sends a newcomer to
/// nothing; every path the recipes name exists.
#[test]
fn every_path_a_recipe_of_architecture_md_names_exists() {
    let doc = std::fs::read_to_string(workspace().join("ARCHITECTURE.md")).unwrap();
    let paths = recipe_paths(&doc);
    assert!(paths.len() >= 20, "too few paths found: {paths:?}");
    let missing: Vec<&String> = paths
        .iter()
        .filter(|p| !workspace().join(p).exists())
        .collect();
    assert!(
        missing.is_empty(),
        "ARCHITECTURE.md names paths that do not exist: {missing:?}"
    );
}
