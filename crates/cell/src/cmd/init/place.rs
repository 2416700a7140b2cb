//! Moving what `cell init` staged into the repository: every destination checked first (no
//! link on the way, nothing but a regular file replaced), then all of it or none.

use std::path::Path;

use anyhow::{Context as _, bail};

/// Refuses a destination `cell init` must not write: a part of its path under `root` that is
/// a link or not a directory, or the file itself a link or not a regular file. Writing
/// through a link could land outside the repository.
pub fn check_destination(root: &Path, rel: &str) -> anyhow::Result<()> {
    let parts: Vec<&str> = rel.split('/').collect();
    let mut at = root.to_path_buf();
    for (i, part) in parts.iter().enumerate() {
        at.push(part);
        let last = i + 1 == parts.len();
        let meta = match std::fs::symlink_metadata(&at) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(e).with_context(|| format!("reading {}", at.display())),
            Ok(m) => m,
        };
        if meta.file_type().is_symlink() {
            bail!(
                "{} is a symbolic link: cell init writes nothing through a link (replace it with a plain {}, or write the files by hand)",
                at.display(),
                if last { "file" } else { "directory" }
            );
        }
        if !last && !meta.is_dir() {
            bail!(
                "{} is not a directory: cell init writes {rel} under it",
                at.display()
            );
        }
        if last && !meta.is_file() {
            bail!(
                "{} is not a regular file: cell init would write {rel} there",
                at.display()
            );
        }
    }
    Ok(())
}

/// Moves each of `rels` from `stage` to `root`. A file that exists is first set aside in the
/// stage; when any move fails, what was moved is taken back and what was set aside returns.
pub fn place(stage: &Path, root: &Path, rels: &[&str]) -> anyhow::Result<()> {
    let aside = stage.join(".replaced");
    let mut done: Vec<(&str, bool)> = Vec::new();
    let mut moved = || -> anyhow::Result<()> {
        for rel in rels {
            let to = root.join(rel);
            let parent = to.parent().expect("a file under the root");
            std::fs::create_dir_all(parent)
                .with_context(|| format!("creating {}", parent.display()))?;
            let had = to.symlink_metadata().is_ok();
            if had {
                let kept = aside.join(rel);
                std::fs::create_dir_all(kept.parent().expect("a file under the stage"))?;
                std::fs::rename(&to, &kept)
                    .with_context(|| format!("setting {} aside", to.display()))?;
            }
            done.push((rel, had));
            std::fs::rename(stage.join(rel), &to)
                .with_context(|| format!("writing {}", to.display()))?;
        }
        Ok(())
    };
    let result = moved();
    if result.is_err() {
        for (rel, had) in done.iter().rev() {
            let to = root.join(rel);
            // The new file, if it got there; then the old one back.
            let _ = std::fs::remove_file(&to);
            if *had {
                let _ = std::fs::rename(aside.join(rel), &to);
            }
        }
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_and_non_files_on_the_way_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::os::unix::fs::symlink("/tmp", root.join(".github")).unwrap();
        let e = check_destination(root, ".github/workflows/cell.yml").unwrap_err();
        assert!(e.to_string().contains("symbolic link"), "{e}");
        std::fs::write(root.join("bench"), "x").unwrap();
        let e = check_destination(root, "bench/workload/c/main.c").unwrap_err();
        assert!(e.to_string().contains("not a directory"), "{e}");
        std::fs::create_dir(root.join("versions.env")).unwrap();
        let e = check_destination(root, "versions.env").unwrap_err();
        assert!(e.to_string().contains("not a regular file"), "{e}");
        check_destination(root, "cell/cell.toml").unwrap();
    }

    #[test]
    fn a_move_that_fails_puts_everything_back() {
        let dir = tempfile::tempdir().unwrap();
        let (stage, root) = (dir.path().join("stage"), dir.path().join("root"));
        for d in [&stage, &root] {
            std::fs::create_dir_all(d).unwrap();
        }
        std::fs::write(stage.join("a"), "new a").unwrap();
        std::fs::write(root.join("a"), "old a").unwrap();
        // `b` was never staged: its move fails after `a` moved.
        let e = place(&stage, &root, &["a", "b"]).unwrap_err();
        assert!(e.to_string().contains("writing"), "{e}");
        assert_eq!(std::fs::read_to_string(root.join("a")).unwrap(), "old a");
        assert!(!root.join("b").exists());
    }
}
