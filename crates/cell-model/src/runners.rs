//! Hosted runner labels → (os, arch). Last checked 2026-11-29 against GitHub's list of
//! standard hosted runners; a label not here must say its os and arch in `cell.toml`.

/// `(label, os, arch)`.
pub const HOSTED_RUNNERS: &[(&str, &str, &str)] = &[
    ("ubuntu-latest", "linux", "x86_64"),
    ("ubuntu-24.04", "linux", "x86_64"),
    ("ubuntu-22.04", "linux", "x86_64"),
    ("ubuntu-24.04-arm", "linux", "aarch64"),
    ("ubuntu-22.04-arm", "linux", "aarch64"),
    ("macos-latest", "macos", "aarch64"),
    ("macos-15", "macos", "aarch64"),
    ("macos-14", "macos", "aarch64"),
    ("macos-15-intel", "macos", "x86_64"),
    ("macos-13", "macos", "x86_64"),
    ("windows-latest", "windows", "x86_64"),
    ("windows-2025", "windows", "x86_64"),
    ("windows-2022", "windows", "x86_64"),
    ("windows-11-arm", "windows", "aarch64"),
];

/// Looks a hosted label up.
pub fn hosted(label: &str) -> Option<(&'static str, &'static str)> {
    HOSTED_RUNNERS
        .iter()
        .find(|(l, _, _)| *l == label)
        .map(|(_, os, arch)| (*os, *arch))
}
