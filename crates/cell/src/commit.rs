//! The commit `cell` was built from, as `cell --version` prints it:
//! `cell 0.1.0 (commit 1a2b3c4d5e6f, 2026-12-05)`, `-dirty` after the 12 digits when the sources
//! differed from that commit, no date when it is not known (a packaged crate), and
//! `cell 0.1.0 (unknown commit)` when the commit cannot be known for sure.
//!
//! Compiled twice: into the build script (`build.rs`, which finds the commit and leaves the
//! text in `CELL_COMMIT`) and into the binary's unit tests. The binary itself only reads
//! `CELL_COMMIT`.

use std::io::Read;
use std::path::Path;

/// The file `cargo package` writes at the root of a packaged crate, naming the commit it was
/// packaged from.
pub const VCS_INFO: &str = ".cargo_vcs_info.json";

/// The most of [`VCS_INFO`] that is read: cargo writes about a hundred bytes, so anything
/// longer is not cargo's.
pub const VCS_INFO_MAX_BYTES: u64 = 4096;

/// What `--version` says when the commit cannot be known for sure.
pub const UNKNOWN: &str = "unknown commit";

/// How many hex digits of the commit `--version` prints.
pub const SHORT: usize = 12;

/// A commit `cell` was built from, checked: a full object name in lowercase hex.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Commit {
    sha: String,
    dirty: bool,
    date: Option<String>,
}

impl Commit {
    /// The commit `sha` (40 hex digits, or 64 in a SHA-256 repository), `dirty` when the
    /// sources differed from it, committed on `date` (`YYYY-MM-DD`, UTC). `None` for a `sha`
    /// that is not a full lowercase hex object name; a `date` of another shape is dropped.
    pub fn new(sha: &str, dirty: bool, date: Option<&str>) -> Option<Commit> {
        let hex = sha.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
        if !hex || !(sha.len() == 40 || sha.len() == 64) {
            return None;
        }
        Some(Commit {
            sha: sha.to_owned(),
            dirty,
            date: date.filter(|d| is_date(d)).map(str::to_owned),
        })
    }

    /// The full object name.
    pub fn sha(&self) -> &str {
        &self.sha
    }

    /// The sources differed from it.
    pub fn dirty(&self) -> bool {
        self.dirty
    }

    /// `commit 1a2b3c4d5e6f-dirty, 2026-12-05`: what `--version` prints in its parentheses.
    pub fn describe(&self) -> String {
        let mut out = format!("commit {}", &self.sha[..SHORT]);
        if self.dirty {
            out.push_str("-dirty");
        }
        if let Some(date) = &self.date {
            out.push_str(", ");
            out.push_str(date);
        }
        out
    }
}

/// What `--version` prints in its parentheses: the commit, or [`UNKNOWN`].
pub fn describe(commit: Option<&Commit>) -> String {
    commit.map_or_else(|| UNKNOWN.to_owned(), Commit::describe)
}

/// `YYYY-MM-DD`, digits where digits go.
fn is_date(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 10
        && b.iter().enumerate().all(|(i, c)| match i {
            4 | 7 => *c == b'-',
            _ => c.is_ascii_digit(),
        })
}

/// The commit a packaged crate names in its [`VCS_INFO`]:
/// `{"git":{"sha1":"…","dirty":true},"path_in_vcs":"crates/cell"}`. `None` for anything but
/// that shape: not JSON, no `git.sha1`, a `sha1` that is not a full hex object name, a `dirty`
/// that is not a boolean, a `path_in_vcs` that is not a relative path inside the repository.
pub fn from_vcs_info(text: &str) -> Option<Commit> {
    let value: serde_json::Value = serde_json::from_str(text).ok()?;
    let git = value.get("git")?;
    let sha = git.get("sha1")?.as_str()?;
    let dirty = match git.get("dirty") {
        None => false,
        Some(d) => d.as_bool()?,
    };
    if let Some(path) = value.get("path_in_vcs") {
        let path = path.as_str()?;
        let inside = !path.starts_with('/') && path.split('/').all(|part| part != "..");
        if !inside {
            return None;
        }
    }
    Commit::new(sha, dirty, None)
}

/// What a crate's [`VCS_INFO`] says.
#[derive(Debug, PartialEq, Eq)]
pub enum VcsInfo {
    /// There is none: the crate was not packaged.
    Absent,
    /// It names this commit.
    Names(Commit),
    /// It is there but names no commit: not a regular file, longer than
    /// [`VCS_INFO_MAX_BYTES`], unreadable, or not cargo's shape.
    Unusable,
}

/// [`VCS_INFO`] in `crate_dir`.
pub fn read_vcs_info(crate_dir: &Path) -> VcsInfo {
    let path = crate_dir.join(VCS_INFO);
    let Ok(meta) = std::fs::symlink_metadata(&path) else {
        return VcsInfo::Absent;
    };
    // A FIFO would block the build and a device never end: only a regular file is read.
    if !meta.is_file() {
        return VcsInfo::Unusable;
    }
    let mut text = String::new();
    let read = std::fs::File::open(&path)
        .and_then(|f| f.take(VCS_INFO_MAX_BYTES + 1).read_to_string(&mut text));
    match read {
        Ok(n) if n as u64 <= VCS_INFO_MAX_BYTES => {
            from_vcs_info(&text).map_or(VcsInfo::Unusable, VcsInfo::Names)
        }
        _ => VcsInfo::Unusable,
    }
}

/// Whether a `Cargo.toml` declares the package `name` in its `[package]` table: the check that
/// a git repository around the crate is the one it comes from, not one it merely sits in.
pub fn manifest_names_package(manifest: &str, name: &str) -> bool {
    let mut in_package = false;
    for line in manifest.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_package = line == "[package]";
            continue;
        }
        if in_package
            && let Some((key, value)) = line.split_once('=')
            && key.trim() == "name"
        {
            return value.trim() == format!("\"{name}\"");
        }
    }
    false
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_build_script_hands_on_the_full_id_and_whether_it_was_dirty() {
        let sha = "0123456789abcdef0123456789abcdef01234567";
        let c = super::Commit::new(sha, true, None).unwrap();
        assert_eq!((c.sha(), c.dirty()), (sha, true));
    }

    use super::*;

    const SHA: &str = "1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b";

    #[test]
    fn cargo_s_vcs_info_names_its_commit() {
        let clean = format!(r#"{{"git":{{"sha1":"{SHA}"}},"path_in_vcs":"crates/cell"}}"#);
        let commit = from_vcs_info(&clean).unwrap();
        assert_eq!(describe(Some(&commit)), "commit 1a2b3c4d5e6f");
        // As cargo writes it: pretty-printed, `dirty` only when true.
        let dirty = format!(
            "{{\n  \"git\": {{\n    \"sha1\": \"{SHA}\",\n    \"dirty\": true\n  }},\n  \"path_in_vcs\": \"crates/cell\"\n}}"
        );
        assert_eq!(
            describe(from_vcs_info(&dirty).as_ref()),
            "commit 1a2b3c4d5e6f-dirty"
        );
        // A SHA-256 repository's object names are 64 digits.
        let sha256 = format!(r#"{{"git":{{"sha1":"{SHA}{}"}}}}"#, &SHA[..24]);
        assert!(from_vcs_info(&sha256).is_some());
    }

    #[test]
    fn a_vcs_info_of_any_other_shape_names_no_commit() {
        let hostile = [
            String::new(),
            "not json".to_owned(),
            format!(r#"{{"git":{{"sha1":"{SHA}""#),
            "[]".to_owned(),
            r#"{"git":{}}"#.to_owned(),
            r#"{"git":"1a2b3c4d5e6f"}"#.to_owned(),
            r#"{"git":{"sha1":1234}}"#.to_owned(),
            // Not hex, upper case, short, long, a ref name, an injected newline.
            format!(r#"{{"git":{{"sha1":"{}"}}}}"#, SHA.replace('a', "g")),
            format!(r#"{{"git":{{"sha1":"{}"}}}}"#, SHA.to_uppercase()),
            r#"{"git":{"sha1":"1a2b3c4d5e6f"}}"#.to_owned(),
            format!(r#"{{"git":{{"sha1":"{SHA}0"}}}}"#),
            r#"{"git":{"sha1":"refs/heads/main"}}"#.to_owned(),
            format!(r#"{{"git":{{"sha1":"{}\n"}}}}"#, &SHA[..39]),
            format!(r#"{{"git":{{"sha1":"{SHA}","dirty":"no"}}}}"#),
            format!(r#"{{"git":{{"sha1":"{SHA}"}},"path_in_vcs":"../elsewhere"}}"#),
            format!(r#"{{"git":{{"sha1":"{SHA}"}},"path_in_vcs":"/abs"}}"#),
            format!(r#"{{"git":{{"sha1":"{SHA}"}},"path_in_vcs":7}}"#),
        ];
        for text in &hostile {
            assert_eq!(from_vcs_info(text), None, "{text}");
            assert_eq!(describe(from_vcs_info(text).as_ref()), UNKNOWN);
        }
    }

    #[test]
    fn a_vcs_info_file_is_read_only_when_it_is_a_small_regular_file() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(read_vcs_info(dir.path()), VcsInfo::Absent, "not packaged");

        let good = format!(r#"{{"git":{{"sha1":"{SHA}"}},"path_in_vcs":"crates/cell"}}"#);
        std::fs::write(dir.path().join(VCS_INFO), &good).unwrap();
        let commit = from_vcs_info(&good).unwrap();
        assert_eq!(read_vcs_info(dir.path()), VcsInfo::Names(commit));

        // The same JSON padded past the cap with whitespace (still valid JSON): refused for
        // its size alone, so a huge file is never read whole.
        let pad = " ".repeat(VCS_INFO_MAX_BYTES as usize);
        std::fs::write(dir.path().join(VCS_INFO), format!("{good}{pad}")).unwrap();
        assert_eq!(read_vcs_info(dir.path()), VcsInfo::Unusable);
        let huge = format!("{good}{}", " ".repeat(16 << 20));
        std::fs::write(dir.path().join(VCS_INFO), huge).unwrap();
        assert_eq!(read_vcs_info(dir.path()), VcsInfo::Unusable);

        // Bad JSON, and a commit that is not hex, as files.
        std::fs::write(dir.path().join(VCS_INFO), "{\"git\":").unwrap();
        assert_eq!(read_vcs_info(dir.path()), VcsInfo::Unusable);
        std::fs::write(dir.path().join(VCS_INFO), good.replace('a', "x")).unwrap();
        assert_eq!(read_vcs_info(dir.path()), VcsInfo::Unusable);

        // Not UTF-8.
        std::fs::write(dir.path().join(VCS_INFO), b"{\"git\":\xff}").unwrap();
        assert_eq!(read_vcs_info(dir.path()), VcsInfo::Unusable);

        // A directory, and a link to a device that never ends.
        std::fs::remove_file(dir.path().join(VCS_INFO)).unwrap();
        std::fs::create_dir(dir.path().join(VCS_INFO)).unwrap();
        assert_eq!(read_vcs_info(dir.path()), VcsInfo::Unusable);
        std::fs::remove_dir(dir.path().join(VCS_INFO)).unwrap();
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink("/dev/zero", dir.path().join(VCS_INFO)).unwrap();
            assert_eq!(read_vcs_info(dir.path()), VcsInfo::Unusable);
        }
    }

    #[test]
    fn a_commit_is_a_full_lowercase_hex_name_and_a_date_is_a_day() {
        assert!(Commit::new(SHA, false, None).is_some());
        assert_eq!(Commit::new(&SHA[..12], false, None), None);
        assert_eq!(Commit::new("", false, None), None);
        assert_eq!(Commit::new(&format!("{SHA} "), false, None), None);
        let dated = Commit::new(SHA, true, Some("2026-12-05")).unwrap();
        assert_eq!(dated.describe(), "commit 1a2b3c4d5e6f-dirty, 2026-12-05");
        for bad in [
            "2026-12-5",
            "20261205",
            "2026-12-05\n",
            "gpg: Signature",
            "",
        ] {
            let commit = Commit::new(SHA, false, Some(bad)).unwrap();
            assert_eq!(commit.describe(), "commit 1a2b3c4d5e6f", "{bad:?}");
        }
    }

    #[test]
    fn only_the_package_table_s_name_counts() {
        let ours = "[package]\nname = \"cell-bench\"\nversion = \"0.1.0\"\n";
        assert!(manifest_names_package(ours, "cell-bench"));
        assert!(manifest_names_package(
            "# x\n[package]\n  name=\"cell-bench\"\n",
            "cell-bench"
        ));
        assert!(!manifest_names_package(ours, "cell"));
        assert!(!manifest_names_package(
            "[package]\nname = \"other\"\n[dependencies]\nname = \"cell-bench\"\n",
            "cell-bench"
        ));
        assert!(!manifest_names_package(
            "[workspace]\nname = \"cell-bench\"\n",
            "cell-bench"
        ));
        assert!(!manifest_names_package("", "cell-bench"));
    }
}
