//! The actions a generated workflow may use, pinned by full commit SHA.
//!
//! Last checked 2026-11-29: each SHA read from a git snapshot of the action's repository (`git rev-parse <tag>^{commit}`, so annotated tags resolve to their
//! commit) and each `runs.using` from `action.yml` at that commit: all node24 or composite.
//! Never write a SHA here that was not verified that way. To move a pin: verify the new commit,
//! change its row, run `cell plan`, commit both.

/// One pinned action.
#[derive(Debug, PartialEq, Eq)]
pub struct Pin {
    /// `owner/repo`.
    pub action: &'static str,
    /// The full commit SHA (40 hex digits).
    pub sha: &'static str,
    /// The tag (or branch) the SHA was read from; written as a comment after `uses:`.
    pub tag: &'static str,
    /// Inputs cell always passes to it, besides the version.
    pub fixed_inputs: &'static [(&'static str, &'static str)],
}

/// When [`PINS`] was last checked.
pub const CHECKED: &str = "2026-11-29";

/// `actions/checkout`.
pub const CHECKOUT: &Pin = &PINS[0];
/// `actions/upload-artifact`.
pub const UPLOAD_ARTIFACT: &Pin = &PINS[1];
/// `actions/download-artifact`: every job but the build jobs takes cell from it.
pub const DOWNLOAD_ARTIFACT: &Pin = &PINS[2];
/// `dtolnay/rust-toolchain`: a master commit (its version branches are force-pushed), so
/// `toolchain:` is always passed.
pub const RUST_TOOLCHAIN: &Pin = &PINS[6];
/// `Swatinem/rust-cache`.
pub const RUST_CACHE: &Pin = &PINS[7];
/// `actions/setup-python`.
pub const SETUP_PYTHON: &Pin = &PINS[5];
/// `actions/cache`: keeps the load generator the suite jobs build (`cargo install oha`).
pub const CACHE: &Pin = &PINS[8];

/// Every pinned action.
pub const PINS: &[Pin] = &[
    Pin {
        action: "actions/checkout",
        sha: "3d3c42e5aac5ba805825da76410c181273ba90b1",
        tag: "v7.0.1",
        fixed_inputs: &[],
    },
    Pin {
        action: "actions/upload-artifact",
        sha: "bbbca2ddaa5d8feaa63e36b76fdaad77386f024f",
        tag: "v7.0.0",
        fixed_inputs: &[],
    },
    Pin {
        action: "actions/download-artifact",
        sha: "3e5f45b2cfb9172054b4087a40e8e0b5a5461e7c",
        tag: "v8.0.1",
        fixed_inputs: &[],
    },
    Pin {
        action: "actions/setup-go",
        sha: "b7ad1dad31e06c5925ef5d2fc7ad053ef454303e",
        tag: "v7.0.0",
        // Its cache wants a go.sum and would restore state from earlier runs into a timing job.
        fixed_inputs: &[("cache", "false")],
    },
    Pin {
        action: "actions/setup-dotnet",
        sha: "a98b56852c35b8e3190ac28c8c2271da59106c68",
        tag: "v6.0.0",
        fixed_inputs: &[],
    },
    Pin {
        action: "actions/setup-python",
        sha: "5fda3b95a4ea91299a34e894583c3862153e4b97",
        tag: "v7.0.0",
        fixed_inputs: &[],
    },
    Pin {
        action: "dtolnay/rust-toolchain",
        sha: "3c5f7ea28cd621ae0bf5283f0e981fb97b8a7af9",
        tag: "master",
        fixed_inputs: &[],
    },
    Pin {
        action: "Swatinem/rust-cache",
        sha: "6323deb102c322ba6fcbdcafc7e3dddab59af2b6",
        tag: "v2.9.2",
        fixed_inputs: &[],
    },
    Pin {
        action: "actions/cache",
        sha: "27d5ce7f107fe9357f9df03efb73ab90386fccae",
        tag: "v5.0.5",
        fixed_inputs: &[],
    },
];

/// The pin of an action (`owner/repo`).
pub fn pin(action: &str) -> Option<&'static Pin> {
    PINS.iter().find(|p| p.action == action)
}

/// The pin whose commit is `sha`.
pub fn by_sha(sha: &str) -> Option<&'static Pin> {
    PINS.iter().find(|p| p.sha == sha)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pin_is_a_full_lowercase_commit_and_unique() {
        for p in PINS {
            assert_eq!(p.sha.len(), 40, "{}", p.action);
            assert!(
                p.sha
                    .bytes()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)),
                "{}",
                p.action
            );
            assert_eq!(pin(p.action), Some(p), "{} listed twice", p.action);
            assert_eq!(by_sha(p.sha), Some(p), "{} shares a SHA", p.action);
        }
    }

    #[test]
    fn named_pins_point_at_their_action() {
        assert_eq!(CHECKOUT.action, "actions/checkout");
        assert_eq!(UPLOAD_ARTIFACT.action, "actions/upload-artifact");
        assert_eq!(RUST_TOOLCHAIN.action, "dtolnay/rust-toolchain");
        assert_eq!(RUST_CACHE.action, "Swatinem/rust-cache");
        assert_eq!(SETUP_PYTHON.action, "actions/setup-python");
        assert_eq!(CACHE.action, "actions/cache");
    }
}
