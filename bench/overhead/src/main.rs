//! The timing overhead of one repetition: a trivial C program (`return 0`) run through the
//! timing engine (pinned CPU, spawn, `wait4`, stdout to a file), against a plain
//! `Command::status()` loop, interleaved in one run.
//!
//! `cargo run --release -p cell-bench-overhead -- [N]` (default N = 2000).

use std::process::Command;
use std::time::{Duration, Instant};

use cell_run::timing::Engine;
use cell_stats::{median, median_ci};

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(2000);
    let dir = tempfile::tempdir().expect("temp dir");
    let src = dir.path().join("true.c");
    let bin = dir.path().join("true");
    std::fs::write(&src, "int main(void) { return 0; }\n").expect("write");
    let st = Command::new("clang")
        .args(["-O2", "-o"])
        .arg(&bin)
        .arg(&src)
        .status()
        .expect("clang is needed: apt-get install clang");
    assert!(st.success(), "clang failed");
    let argv = vec![bin.display().to_string()];

    let mut engine = Engine::new(dir.path()).expect("engine");
    let (mut eng_wall, mut eng_cpu, mut plain) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..n {
        let m = engine
            .run(&argv, dir.path(), Duration::from_secs(10), b"")
            .expect("run");
        eng_wall.push(m.wall_s * 1e6);
        eng_cpu.push(m.cpu_s * 1e6);
        let t = Instant::now();
        Command::new(&bin).status().expect("run");
        plain.push(t.elapsed().as_secs_f64() * 1e6);
    }
    let ci = |xs: &[f64]| {
        let c = median_ci(xs, 0.95);
        format!("{:8.1} µs (95% CI {:.1}–{:.1})", c.median, c.lo, c.hi)
    };
    println!(
        "spawn→reap of a trivial program, {n} runs each, interleaved, pinned to CPU {:?}",
        engine.pinned_cpu()
    );
    println!("  cell engine, wall      {}", ci(&eng_wall));
    println!("  cell engine, child cpu {}", ci(&eng_cpu));
    println!("  Command::status, wall  {}", ci(&plain));
    println!(
        "  ratio engine/plain (wall medians): {:.3}",
        median(&eng_wall) / median(&plain)
    );
}
