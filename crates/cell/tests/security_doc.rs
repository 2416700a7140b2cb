//! docs/security.md lists every class of input cell refuses with the test that proves it:
//! each row must name at least one test, and every test it names must exist.

mod common;

use std::path::Path;

/// Every `fn <name>` in the workspace's Rust sources.
fn functions(dir: &Path, out: &mut Vec<String>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_str().unwrap().to_owned();
        if p.is_dir() && name != "target" && !name.starts_with('.') {
            functions(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            let text = std::fs::read_to_string(&p).unwrap();
            for line in text.lines() {
                if let Some(rest) = line.trim_start().strip_prefix("fn ") {
                    let f: String = rest
                        .chars()
                        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                        .collect();
                    out.push(f);
                }
            }
        }
    }
}

#[test]
fn every_line_of_the_security_doc_names_a_test_that_exists() {
    let root = common::repo_root();
    let doc = std::fs::read_to_string(root.join("docs/security.md")).unwrap();
    let mut fns = Vec::new();
    functions(&root.join("crates"), &mut fns);
    let mut rows = 0;
    for line in doc
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| input"))
    {
        let cells: Vec<&str> = line.split(" | ").collect();
        let tests = cells.last().unwrap();
        // Test names: backticked snake_case words with at least two underscores.
        let named: Vec<&str> = tests
            .split('`')
            .skip(1)
            .step_by(2)
            .filter(|w| w.matches('_').count() >= 2 && !w.contains('/') && !w.contains('.'))
            .collect();
        assert!(!named.is_empty(), "a row names no test: {line}");
        for t in named {
            assert!(
                fns.iter().any(|f| f == t),
                "docs/security.md names `{t}`, which is no test"
            );
        }
        rows += 1;
    }
    assert!(rows >= 20, "only {rows} rows");
}
