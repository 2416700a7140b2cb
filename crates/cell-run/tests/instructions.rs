//! The instruction lane on real programs under the real valgrind: a count, the same count
//! again, an instruction valgrind does not know, a wrong answer and valgrind missing.
//!
//! valgrind and clang must be installed (`scripts/setup --test`): a missing one fails the
//! test with how to install it, because a silently skipped test would let a broken lane
//! through.
#![cfg(target_os = "linux")]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use cell_model::exact::{CacheGeometry, CacheLevel};
use cell_run::instructions::{LaneRow, Setup, find_valgrind, run};
use cell_schema::{Phase, RowName};

/// Prints 42, after a loop long enough that start-up is not all it counts.
const ANSWER: &str = r#"#include <stdio.h>
int main(void) {
    volatile unsigned long h = 1;
    for (unsigned long i = 0; i < 200000; i++) h = (h ^ i) * 1099511628211UL;
    puts("42");
    return 0;
}
"#;

/// Executes an AVX-512 instruction before it answers: valgrind 3.19 does not know AVX-512,
/// so under valgrind it dies of SIGILL whatever the host CPU has.
const AVX512: &str = r#"#include <stdio.h>
int main(void) {
    __asm__ volatile("vpaddd %%zmm0, %%zmm1, %%zmm2" ::: "xmm2");
    puts("42");
    return 0;
}
"#;

/// Prints 42 after a loop whose length follows the process id: its count moves from run to
/// run, as a runtime's with its own threads or GC does.
const MOVING: &str = r#"#include <stdio.h>
#include <unistd.h>
int main(void) {
    volatile unsigned long h = 1;
    unsigned long n = 200000 + (unsigned long)(getpid() % 997) * 100;
    for (unsigned long i = 0; i < n; i++) h = (h ^ i) * 1099511628211UL;
    puts("42");
    return 0;
}
"#;

/// Answers 41.
const WRONG: &str = "#include <stdio.h>\nint main(void) { puts(\"41\"); return 0; }\n";

fn build(dir: &Path, name: &str, source: &str) -> PathBuf {
    let src = dir.join(format!("{name}.c"));
    std::fs::write(&src, source).unwrap();
    let bin = dir.join(name);
    let status = Command::new("clang")
        .args(["-O2", "-o"])
        .arg(&bin)
        .arg(&src)
        .status()
        .expect("clang is needed (apt-get install clang)");
    assert!(status.success(), "clang failed on {name}");
    bin
}

fn valgrind() -> PathBuf {
    find_valgrind(std::env::var_os("PATH").as_deref())
        .expect("valgrind is needed (apt-get install valgrind)")
}

fn expect() -> BTreeMap<Phase, String> {
    BTreeMap::from([(Phase::from("mix"), "42\n".to_owned())])
}

fn row(name: &str, bin: &Path) -> LaneRow {
    LaneRow {
        name: RowName::from(name),
        phases: vec![(Phase::from("mix"), vec![bin.display().to_string()])],
    }
}

fn setup<'a>(work: &'a Path, expect: &'a BTreeMap<Phase, String>) -> Setup<'a> {
    Setup {
        valgrind: Some(valgrind()),
        work,
        timeout: Duration::from_mins(2),
        cache: GEOMETRY,
        skip: &[],
        time_cap: Duration::from_mins(10),
        expect,
        engine: cell_run::timing::EngineOptions::default(),
    }
}

/// The default geometry of versions.env.
const GEOMETRY: CacheGeometry = CacheGeometry {
    i1: CacheLevel {
        size: 32768,
        assoc: 8,
        line: 64,
    },
    d1: CacheLevel {
        size: 32768,
        assoc: 8,
        line: 64,
    },
    ll: CacheLevel {
        size: 8_388_608,
        assoc: 16,
        line: 64,
    },
};

#[test]
fn a_real_program_is_counted_and_the_same_binary_gives_the_same_count() {
    let dir = tempfile::tempdir().unwrap();
    let bin = build(dir.path(), "answer", ANSWER);
    let expect = expect();
    let lane = run(
        &setup(dir.path(), &expect),
        &[row("a", &bin), row("b", &bin)],
    );
    assert_eq!(lane.record.skipped, None);
    assert!(
        lane.record
            .version
            .as_deref()
            .is_some_and(|v| v.starts_with("valgrind-")),
        "{:?}",
        lane.record
    );
    assert_eq!(
        lane.record.argv[1..],
        [
            "--tool=cachegrind",
            "--cache-sim=yes",
            "--branch-sim=no",
            "--I1=32768,8,64",
            "--D1=32768,8,64",
            "--LL=8388608,16,64",
            "--cachegrind-out-file=<scratch file>",
            "<the row's argv>"
        ]
    );
    let cache = lane.record.cache.as_ref().unwrap();
    assert_eq!(
        (cache.i1.as_str(), cache.d1.as_str(), cache.ll.as_str()),
        ("32768,8,64", "32768,8,64", "8388608,16,64")
    );
    assert!(lane.record.env_bytes.unwrap() > 0);
    let mix = Phase::from("mix");
    let count = |r: &str| lane.rows[&RowName::from(r)].phases[&mix];
    let (a, b) = (count("a"), count("b"));
    // The loop alone is 200000 iterations of several instructions each.
    assert!(a.instructions > 1_000_000, "{a:?}");
    assert!(a.estimated_cycles >= a.instructions, "{a:?}");
    // A C program is deterministic: each row's two runs counted the same, and so did the
    // two rows of one binary and one argv.
    for c in [a, b] {
        assert_eq!((c.runs, c.spread), (2, 0.0), "{c:?}");
    }
    assert_eq!(
        (a.instructions, a.estimated_cycles),
        (b.instructions, b.estimated_cycles)
    );
    assert!(lane.rows.values().all(|r| r.skipped.is_none()));
    // The out files are scratch: none is left behind.
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().starts_with("cachegrind-"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn an_instruction_valgrind_does_not_know_skips_that_row_and_the_others_still_count() {
    if !cfg!(target_arch = "x86_64") {
        println!("skipped: the AVX-512 instruction is x86-64 only");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let avx = build(dir.path(), "avx512", AVX512);
    let ok = build(dir.path(), "answer", ANSWER);
    let wrong = build(dir.path(), "wrong", WRONG);
    let expect = expect();
    let mut avx_row = row("avx", &avx);
    // A second phase is not tried once the row is ruled out.
    avx_row
        .phases
        .push((Phase::from("fib"), vec![avx.display().to_string()]));
    let lane = run(
        &setup(dir.path(), &expect),
        &[avx_row, row("ok", &ok), row("wrong", &wrong)],
    );
    let avx = &lane.rows[&RowName::from("avx")];
    assert!(avx.phases.is_empty(), "{avx:?}");
    let why = avx.skipped.as_deref().unwrap();
    println!("{why}");
    assert!(
        why.starts_with("mix: valgrind does not know an instruction of this binary (SIGILL"),
        "{why}"
    );
    assert!(why.contains("AVX-512"), "{why}");
    assert!(!why.contains("fib"), "{why}");
    let ok = &lane.rows[&RowName::from("ok")];
    assert!(
        ok.phases[&Phase::from("mix")].instructions > 1_000_000,
        "{ok:?}"
    );
    assert_eq!(ok.skipped, None);
    // A wrong answer under valgrind is the lane's reason, with what it printed.
    let wrong = &lane.rows[&RowName::from("wrong")];
    assert!(wrong.phases.is_empty());
    assert_eq!(
        wrong.skipped.as_deref(),
        Some(r#"mix: printed "41\n" under valgrind, expected "42\n""#)
    );
}

#[test]
fn valgrind_missing_skips_the_lane_naming_the_package() {
    let dir = tempfile::tempdir().unwrap();
    let empty = tempfile::tempdir().unwrap();
    // A PATH of one directory without valgrind in it.
    let found = find_valgrind(Some(empty.path().as_os_str()));
    assert_eq!(found, None);
    let expect = expect();
    let lane = run(
        &Setup {
            valgrind: found,
            work: dir.path(),
            timeout: Duration::from_mins(2),
            cache: GEOMETRY,
            skip: &[],
            time_cap: Duration::from_mins(10),
            expect: &expect,
            engine: cell_run::timing::EngineOptions::default(),
        },
        &[row("a", Path::new("/bin/true"))],
    );
    assert_eq!(
        lane.record.skipped.as_deref(),
        Some("valgrind not found (apt-get install valgrind)")
    );
    assert!(lane.rows.is_empty());
    assert!(lane.record.version.is_none() && lane.record.argv.is_empty());
}

/// A row's cheapest phase runs twice; equal counts make the row deterministic and its other
/// phases run once. A program whose count moves runs every phase three times, the median
/// written with its spread.
#[test]
fn a_deterministic_row_repeats_one_phase_and_a_moving_one_repeats_every_phase() {
    let dir = tempfile::tempdir().unwrap();
    let fixed = build(dir.path(), "answer", ANSWER);
    let moving = build(dir.path(), "moving", MOVING);
    let expect = BTreeMap::from([
        (Phase::from("mix"), "42\n".to_owned()),
        (Phase::from("fib"), "42\n".to_owned()),
    ]);
    let two = |name: &str, bin: &Path| LaneRow {
        name: RowName::from(name),
        phases: ["mix", "fib"]
            .map(|p| (Phase::from(p), vec![bin.display().to_string()]))
            .to_vec(),
    };
    let lane = run(
        &setup(dir.path(), &expect),
        &[two("fixed", &fixed), two("moving", &moving)],
    );
    let fixed = &lane.rows[&RowName::from("fixed")];
    assert_eq!(fixed.skipped, None);
    let mut runs: Vec<_> = fixed.phases.values().map(|c| (c.runs, c.spread)).collect();
    runs.sort_by_key(|r| r.0);
    assert_eq!(runs, [(1, 0.0), (2, 0.0)], "{fixed:?}");
    let moving = &lane.rows[&RowName::from("moving")];
    assert_eq!(moving.skipped, None);
    for c in moving.phases.values() {
        assert_eq!(c.runs, 3, "{moving:?}");
        assert!(c.spread > 0.0 && c.spread < 0.5, "{moving:?}");
    }
}
