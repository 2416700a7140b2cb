//! tcc packaged as a compiler project would publish its release (a tarball and its
//! `.sha256`), served on loopback: the release under test of the subject tests.

use cell_testkit::archive::{Entry, tar_gz};
use cell_testkit::http::{Response, Server};

pub const ASSET: &str = "tcc-0.9.27-linux-x86_64.tar.gz";

pub fn hex(bytes: &[u8]) -> String {
    cell_testkit::sha256(bytes).to_string()
}

/// tcc as a release tarball: `tcc-0.9.27/bin/tcc`. Its library path is compiled in, so the
/// unpacked binary finds the system install's runtime; the test needs tcc installed.
pub fn tarball() -> Vec<u8> {
    let tcc = std::fs::read("/usr/bin/tcc").expect("tcc is installed (scripts/setup --test)");
    tar_gz(&[
        Entry::Dir("tcc-0.9.27/"),
        Entry::Dir("tcc-0.9.27/bin/"),
        Entry::File("tcc-0.9.27/bin/tcc", &tcc, 0o755),
        Entry::File("tcc-0.9.27/README", b"Tiny C Compiler\n", 0o644),
    ])
}

/// A release server: the tarball it is given, and the `.sha256` of `published`.
pub fn release(served: Vec<u8>, published: &[u8]) -> Server {
    let sums = format!("{}  {ASSET}\n", hex(published));
    Server::routes([
        (format!("/releases/{ASSET}"), Response::ok(served)),
        (format!("/releases/{ASSET}.sha256"), Response::ok(sums)),
    ])
}

/// The tiny project's `versions.env` with tcc 0.9.27 pinned to `pin` on Linux x86-64.
pub fn versions(pin: &str) -> String {
    format!(
        "{}TCC_VERSION=0.9.27\nTCC_SHA256_LINUX_X86_64={pin}\n",
        super::VERSIONS
    )
}
