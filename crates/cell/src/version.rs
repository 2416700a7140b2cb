//! The commit this binary was built from, as the build script found it.

/// A commit id and whether the work tree had changes beside it.
#[derive(Clone, Copy, Debug)]
pub struct Commit {
    /// The full commit id.
    pub sha: &'static str,
    /// The build had uncommitted changes.
    pub dirty: bool,
}

/// The commit, when the build knew it.
pub fn commit() -> Option<Commit> {
    let raw = option_env!("CELL_BUILD_COMMIT")?;
    let (sha, dirty) = match raw.strip_suffix("-dirty") {
        Some(s) => (s, true),
        None => (raw, false),
    };
    (sha.len() == 40 && sha.bytes().all(|b| b.is_ascii_hexdigit())).then_some(Commit { sha, dirty })
}
