//! The tiny C project of `cell-testkit` for CLI tests (built and timed by the real `cell` with
//! real clang), and what only works inside this package's tests: `cell` as a command.
#![allow(
    dead_code,
    unused_imports,
    reason = "each test binary uses a different part; `expect` would fail in those that use all"
)]

pub mod release;
pub mod tcc;

pub use cell_testkit::tiny::*;
pub use cell_testkit::{read_json, repo_root};

/// `cell` as a command, with a CPU lock dir of its own ([`cpu_locks`]).
pub fn cell() -> assert_cmd::Command {
    let mut c = assert_cmd::Command::cargo_bin("cell").unwrap();
    c.env_remove("CELL_ROOT").env("CELL_CPU_LOCKS", cpu_locks());
    c
}

/// A fresh CPU lock dir (`CELL_CPU_LOCKS`) for one `cell` command: the tests run many real
/// timings at once, and with one dir they would wait for each other's CPUs. `cell` creates
/// it; it lives under the target dir, so it outlives the command and goes with `cargo clean`.
pub fn cpu_locks() -> std::path::PathBuf {
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("cpu-locks-{}-{n}", std::process::id()))
}

/// Validates a JSON value against the schema `cell schema` prints.
pub fn assert_valid(kind: &str, value: &serde_json::Value) {
    let out = cell().args(["schema", kind]).output().unwrap();
    assert!(out.status.success());
    let schema: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let validator = jsonschema::validator_for(&schema).expect("the emitted schema compiles");
    let errors: Vec<String> = validator
        .iter_errors(value)
        .map(|e| format!("{} at {}", e, e.instance_path))
        .collect();
    assert!(
        errors.is_empty(),
        "{kind} does not validate:\n{}",
        errors.join("\n")
    );
}

/// A way to spoil a cell's `results.json`, as a bad commit or a hand edit would.
#[derive(Clone, Copy, Debug)]
pub enum Corruption {
    /// Not JSON at all.
    NotJson,
    /// `schema_version` 999.
    NewerSchema,
    /// A row's ratio of 0.
    ZeroRatio,
    /// A row's ratio of -1.
    NegativeRatio,
    /// A row's interval with `lo > hi`.
    LoAboveHi,
    /// A negative time of a timed run.
    NegativeTime,
}

impl Corruption {
    /// Every way.
    pub const ALL: [Self; 6] = [
        Self::NotJson,
        Self::NewerSchema,
        Self::ZeroRatio,
        Self::NegativeRatio,
        Self::LoAboveHi,
        Self::NegativeTime,
    ];
}

/// Spoils the cell `results.json` at `file` and returns what the reason must say.
pub fn corrupt(file: &std::path::Path, how: Corruption) -> String {
    let mut j = read_json(file);
    let rows = j["rows"].as_object_mut().expect("a cell with rows");
    let (row, cell_row) = rows.iter_mut().next().expect("a row");
    let phases = cell_row["phases"].as_object_mut().expect("phases");
    let (phase, p) = phases
        .iter_mut()
        .find(|(_, p)| p["ratio"].is_object())
        .expect("a phase with a ratio");
    let at = format!("row {row} on phase {phase}");
    let wall = &mut p["ratio"]["wall"];
    let expect = match how {
        Corruption::NotJson => {
            std::fs::write(file, "{\"schema_version\": 2, \"kind\": \"cell\"").unwrap();
            return "not a cell results file".into();
        }
        Corruption::NewerSchema => {
            j["schema_version"] = 999.into();
            "written by a newer cell (schema_version 999".to_owned()
        }
        Corruption::ZeroRatio => {
            wall["median"] = 0.into();
            format!("wall ratio of {at} is 0 (impossible)")
        }
        Corruption::NegativeRatio => {
            wall["median"] = (-1).into();
            format!("wall ratio of {at} is -1 (impossible)")
        }
        Corruption::LoAboveHi => {
            let hi = wall["hi"].as_f64().unwrap();
            wall["lo"] = (hi + 1.0).into();
            format!("wall ratio of {at} is")
                + &format!(" {}", wall["median"].as_f64().unwrap())
                + " with interval"
        }
        Corruption::NegativeTime => {
            // Version 2 writes whole microseconds, which the reader takes as unsigned.
            p["samples"]["wall_us"][0] = (-500_000).into();
            "invalid value: integer `-500000`, expected u64".to_owned()
        }
    };
    std::fs::write(file, serde_json::to_string_pretty(&j).unwrap()).unwrap();
    expect
}

/// The run dirs `cell local` wrote under `out` (`<date>-local-<time>`), in name order.
pub fn local_runs(out: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut v: Vec<std::path::PathBuf> = std::fs::read_dir(out)
        .map(|d| {
            d.map(|e| e.unwrap().path())
                .filter(|p| p.file_name().unwrap().to_str().unwrap().contains("-local-"))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// `cell local` of `root` on scripted `timings` (seed 1) with `--out out` and `args`, outside
/// GitHub Actions: what it printed and the run dir it added.
pub fn scripted_local(
    root: &std::path::Path,
    out: &std::path::Path,
    timings: &cell_testkit::scripted::Timings,
    args: &[&str],
) -> (std::process::Output, std::path::PathBuf) {
    std::fs::create_dir_all(out).unwrap();
    let file = timings.write(&out.join("timings.json"));
    let before = local_runs(out);
    let a = cell()
        .env_remove("GITHUB_ACTIONS")
        .env_remove("GITHUB_STEP_SUMMARY")
        .args(["local", "-q", "--seed", "1", "--scripted-timings"])
        .arg(&file)
        .arg("--root")
        .arg(root)
        .arg("--out")
        .arg(out)
        .args(args)
        .assert()
        .code(predicates::iter::in_iter([0, 1]));
    let dir = local_runs(out)
        .into_iter()
        .find(|p| !before.contains(p))
        .expect("a new run dir");
    (a.get_output().clone(), dir)
}

/// tcc declared the release under test, installed from `<base>/releases/` by the pins
/// `TCC_VERSION` and `TCC_SHA256_<OS>_<ARCH>` with its published `.sha256`, and its row
/// `tcc-O2`.
pub fn tcc_subject_toml(base: &str) -> String {
    format!(
        r#"
[toolchains.tcc]
subject = true
install = {{ tarball = {{ template = "{base}/releases/tcc-{{version}}-{{os}}-{{arch}}.tar.gz", sha256 = "TCC_SHA256", checksum = "{{url}}.sha256", version = "TCC_VERSION", tag = "release-{{version}}", strip = 1 }} }}
tools.tcc = {{ version = ["-v"] }}

[rows.tcc-O2]
toolchain = "tcc"
label = "tcc -O2"
source = "c"
build = ["{{tool:tcc}}", "-O2", "-o", "{{out}}", "{{src}}/main.c"]
run = ["{{bin}}", "{{phase}}"]
"#
    )
}
