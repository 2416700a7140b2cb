//! The commit this binary was built from, as the build script found and checked it
//! (`build.rs`, `src/commit.rs`): the full id `cell init` pins a workflow to.

/// A commit id and whether the sources differed from it.
#[derive(Clone, Copy, Debug)]
pub struct Commit {
    sha: &'static str,
    dirty: bool,
}

impl Commit {
    /// The full commit id.
    pub fn sha(&self) -> &'static str {
        self.sha
    }

    /// The build had uncommitted changes beside it.
    pub fn dirty(&self) -> bool {
        self.dirty
    }
}

/// The commit, when the build knew it (`CELL_COMMIT_SHA` is empty otherwise).
pub fn commit() -> Option<Commit> {
    let sha = env!("CELL_COMMIT_SHA");
    (!sha.is_empty()).then_some(Commit {
        sha,
        dirty: env!("CELL_COMMIT_DIRTY") == "true",
    })
}
