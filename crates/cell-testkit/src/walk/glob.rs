//! The globs of `actions/upload-artifact` paths, `download-artifact` patterns and
//! `hashFiles`: `*` and `?` within one path component, `[abc]` classes, `**` for any number of
//! components; a leading `!` excludes (upload paths only).

use std::path::{Path, PathBuf};

use sha2::Digest as _;

/// Whether one path component matches one pattern component.
fn component_matches(pat: &[u8], name: &[u8]) -> bool {
    match (pat.first(), name.first()) {
        (None, None) => true,
        (Some(b'*'), _) => {
            component_matches(&pat[1..], name)
                || (!name.is_empty() && component_matches(pat, &name[1..]))
        }
        (Some(b'?'), Some(_)) => component_matches(&pat[1..], &name[1..]),
        (Some(b'['), Some(c)) => match pat.iter().position(|&b| b == b']') {
            Some(end) => {
                let class = &pat[1..end];
                let (negate, class) = match class.first() {
                    Some(b'!' | b'^') => (true, &class[1..]),
                    _ => (false, class),
                };
                let hit = class
                    .windows(3)
                    .any(|w| w[1] == b'-' && (w[0]..=w[2]).contains(c))
                    || class.contains(c);
                hit != negate && component_matches(&pat[end + 1..], &name[1..])
            }
            None => *c == b'[' && component_matches(&pat[1..], &name[1..]),
        },
        (Some(p), Some(c)) => p == c && component_matches(&pat[1..], &name[1..]),
        _ => false,
    }
}

fn parts_match(pat: &[&str], path: &[&str]) -> bool {
    match pat.first() {
        None => path.is_empty(),
        Some(&"**") => (0..=path.len()).any(|skip| parts_match(&pat[1..], &path[skip..])),
        Some(p) => {
            !path.is_empty()
                && component_matches(p.as_bytes(), path[0].as_bytes())
                && parts_match(&pat[1..], &path[1..])
        }
    }
}

/// Whether the `/`-separated `path` matches `pattern`.
pub fn matches(pattern: &str, path: &str) -> bool {
    let pat: Vec<&str> = pattern
        .split('/')
        .filter(|c| !c.is_empty() && *c != ".")
        .collect();
    let path: Vec<&str> = path.split('/').filter(|c| !c.is_empty()).collect();
    parts_match(&pat, &path)
}

/// The part of `pattern` before its first component with a wildcard: where a search starts.
pub fn search_root(pattern: &str) -> String {
    let literal: Vec<&str> = pattern
        .split('/')
        .take_while(|c| !c.contains(['*', '?', '[']))
        .collect();
    match literal.join("/") {
        s if s.is_empty() && pattern.starts_with('/') => "/".to_owned(),
        s => s,
    }
}

/// Every file (not directory) under `dir`, by path, sorted; symlinks are not followed.
pub fn walk_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            match e.file_type() {
                Ok(t) if t.is_dir() => stack.push(p),
                Ok(_) => out.push(p),
                Err(_) => {}
            }
        }
    }
    out.sort();
    out
}

/// The files under `base` matching `pattern` (relative to `base`, or absolute).
pub fn expand(base: &Path, pattern: &str) -> Vec<PathBuf> {
    let pattern_abs = if Path::new(pattern).is_absolute() {
        pattern.to_owned()
    } else {
        format!("{}/{}", base.display(), pattern.trim_start_matches("./"))
    };
    let root = PathBuf::from(search_root(&pattern_abs));
    if root.is_file() {
        return vec![root];
    }
    // A matched directory brings every file under it (`@actions/glob`'s implicit
    // descendants): `path: out` uploads what `out` holds.
    walk_files(&root)
        .into_iter()
        .filter(|p| {
            p.ancestors()
                .take_while(|a| a.starts_with(&root))
                .any(|a| matches(&pattern_abs, &a.to_string_lossy()))
        })
        .collect()
}

/// `hashFiles(patterns…)`: the SHA-256 of the SHA-256s of every matching file under the
/// workspace, in path order; `''` when nothing matches.
pub fn hash_files(workspace: &Path, patterns: &[String]) -> String {
    let mut files: Vec<PathBuf> = patterns.iter().flat_map(|p| expand(workspace, p)).collect();
    files.sort();
    files.dedup();
    if files.is_empty() {
        return String::new();
    }
    let mut all = sha2::Sha256::new();
    for f in files {
        let bytes = std::fs::read(&f).unwrap_or_default();
        all.update(sha2::Sha256::digest(&bytes));
    }
    cell_schema::Sha256::from_bytes(&all.finalize()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn components_stars_and_globstars() {
        assert!(matches("job/*/results.json", "job/cell-a1/results.json"));
        assert!(!matches("job/*/results.json", "job/a/b/results.json"));
        assert!(matches("job/**/results.json", "job/a/b/results.json"));
        assert!(matches("job/**/results.json", "job/results.json"));
        assert!(matches("cell-*-a?", "cell-x-a2"));
        assert!(matches("f[0-9].txt", "f7.txt"));
        assert!(!matches("f[!0-9].txt", "f7.txt"));
        assert_eq!(search_root("/w/job/*/results.json"), "/w/job");
        assert_eq!(search_root("/w/job/results.json"), "/w/job/results.json");
    }

    #[test]
    fn a_matched_directory_brings_its_files() {
        let tmp = tempfile::tempdir().unwrap();
        let ws = tmp.path();
        for f in ["out/a", "out/sub/b", "outer/c"] {
            std::fs::create_dir_all(ws.join(f).parent().unwrap()).unwrap();
            std::fs::write(ws.join(f), f).unwrap();
        }
        let rel = |pattern: &str| -> Vec<String> {
            expand(ws, pattern)
                .iter()
                .map(|p| p.strip_prefix(ws).unwrap().display().to_string())
                .collect()
        };
        assert_eq!(rel("out"), ["out/a", "out/sub/b"]);
        assert_eq!(rel("out/s*"), ["out/sub/b"]);
        assert_eq!(rel("out*/c"), ["outer/c"]);
    }
}
