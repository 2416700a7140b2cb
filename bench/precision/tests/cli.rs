//! The bench's refusals, through the binary.

use std::process::Command;

fn bench() -> Command {
    Command::new(env!("CARGO_BIN_EXE_cell-bench-precision"))
}

#[test]
fn without_hyperfine_it_names_the_package_and_exits_2() {
    let empty = tempfile::tempdir().unwrap();
    let out = bench()
        .args(["--protocols", "cell,hyperfine", "--repeats", "1"])
        .env("PATH", empty.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("hyperfine is not installed: `apt-get install -y hyperfine`"),
        "{stderr}"
    );
    assert!(out.stdout.is_empty(), "nothing was timed");
}

#[test]
fn an_unknown_protocol_is_refused_with_the_known_ones() {
    let out = bench()
        .args(["--protocols", "plain,duet"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("no protocol \"duet\"; known: plain, cell, hyperfine"),
        "{stderr}"
    );
}

#[test]
fn a_protocol_named_twice_is_refused() {
    let out = bench()
        .args(["--protocols", "cell,plain,cell"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--protocols names cell twice"), "{stderr}");
}

#[test]
fn the_gate_mode_refuses_an_unknown_load_or_phase_and_the_options_it_does_not_read() {
    for (args, says) in [
        (
            &["--gate", "--conditions", "none,busy"][..],
            "invalid value 'busy' for '--conditions",
        ),
        (
            &["--gate", "--phases", "mix,fob"][..],
            "invalid value 'fob' for '--phases",
        ),
        (
            &["--gate", "--budget", "10"][..],
            "'--gate' cannot be used with '--budget",
        ),
    ] {
        let out = bench().args(args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
        assert!(out.stdout.is_empty(), "{args:?}: nothing was timed");
    }
}
