//! cell's own release as release.yml packages it, for the walks that install it from loopback.

use cell_testkit::archive::{Entry, tar_gz};

pub const VERSION: &str = env!("CARGO_PKG_VERSION");

pub fn target() -> String {
    format!("linux-{}", std::env::consts::ARCH)
}

pub fn asset() -> String {
    format!("cell-{VERSION}-{}.tar.gz", target())
}

/// The release of the cell under test as release.yml packages it: `cell-<version>-<target>/`
/// holding `cell`, the README and the licence texts (the install step unpacks `cell` alone).
pub fn release_tarball() -> Vec<u8> {
    let bin = std::fs::read(env!("CARGO_BIN_EXE_cell")).unwrap();
    let top = format!("cell-{VERSION}-{}/", target());
    let file = format!("{top}cell");
    let others: Vec<String> = cell_plan::RELEASE_PACKAGED
        .iter()
        .map(|f| format!("{top}{f}"))
        .collect();
    let mut entries = vec![Entry::Dir(&top), Entry::File(&file, &bin, 0o755)];
    entries.extend(
        others
            .iter()
            .map(|path| Entry::File(path, b"text\n", 0o644)),
    );
    tar_gz(&entries)
}

/// A SHA256SUMS naming the release's asset for every platform a fresh repository runs on.
pub fn sums(tar: &[u8]) -> String {
    let d = cell_testkit::sha256(tar).to_string();
    format!("{d}  {}\n", asset())
}
