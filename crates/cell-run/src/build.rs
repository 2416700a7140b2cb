//! Building a row's binary (or a server) with its toolchain: one command, its output in a
//! log, killed after `BUILD_TIMEOUT_S`, the binary hashed as it is recorded; a row is built
//! `BUILD_REPS` times and the size of its code section read from the last binary.

use std::io::{Read as _, Seek as _, SeekFrom};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use cell_fetch::hash_file;
use cell_model::{Plan, Row, Vars};
use cell_schema::{Build, Sha256, ToolName, round_time};
use cell_stats::median;

use crate::code_size::text_bytes;
use crate::tools::Probed;

/// A build that did not produce a binary.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct BuildFailure {
    /// One line a person can act on.
    pub message: String,
    /// The build command's exit code, when it exited.
    pub exit_code: Option<i32>,
    /// The last lines it printed.
    pub log_tail: Vec<String>,
}

impl BuildFailure {
    fn before_start(message: String) -> Self {
        Self {
            message,
            exit_code: None,
            log_tail: vec![],
        }
    }
}

/// Builds `row` into `<out>/build/bin/<row>`, working in `<out>/build/<row>`, `BUILD_REPS`
/// times: the compile seconds are their median, the binary recorded (and timed) is the last
/// build's, and builds whose binaries differ are recorded as not reproducible.
pub fn build_row(
    plan: &Plan,
    row: &Row,
    probe: &Probed,
    out: &Path,
) -> Result<Build, BuildFailure> {
    let work = out.join("build").join(row.name.as_str());
    let bin = out.join("build").join("bin").join(row.name.as_str());
    let (src, binary, workdir) = (
        row.source.display().to_string(),
        bin.display().to_string(),
        work.display().to_string(),
    );
    let tool = |n: &ToolName| probe.paths[n].display().to_string();
    let vars = Vars {
        src: &src,
        bin: &binary,
        work: &workdir,
        phase: "",
        tool: &tool,
        port: "",
    };
    let argv: Vec<String> = row.build.iter().map(|a| a.render(&vars)).collect();
    let reps = plan.settings.build_reps.max(1);
    let mut runs = Vec::new();
    let mut digests: Vec<Sha256> = Vec::new();
    let mut bytes = 0;
    for _ in 0..reps {
        // Every build starts from an empty work dir and no binary: a toolchain that caches
        // in `{work}` builds cold each time, and each build must write its own binary.
        let _ = std::fs::remove_dir_all(&work);
        std::fs::create_dir_all(&work)
            .map_err(|e| BuildFailure::before_start(format!("creating {}: {e}", work.display())))?;
        let _ = std::fs::remove_file(&bin);
        let seconds = run_build(
            &format!("`{}`", row.name),
            &argv,
            &work,
            plan.settings.build_timeout_s,
        )?;
        let (size, sha256) = hash_file(&bin).map_err(|e| BuildFailure {
            message: format!(
                "build of `{}` exited 0 but wrote no binary at {}: {e}",
                row.name,
                bin.display()
            ),
            exit_code: Some(0),
            log_tail: log_tail(&work.join("build.log")),
        })?;
        runs.push(round_time(seconds));
        digests.push(sha256);
        bytes = size;
    }
    let sha256 = digests.last().expect("at least one build").clone();
    Ok(Build {
        argv,
        cwd: workdir,
        compile_s: round_time(median(&runs)),
        compile_runs_s: runs,
        binary,
        binary_bytes: bytes,
        text_bytes: text_bytes(&bin),
        reproducible: (digests.len() > 1).then(|| digests.iter().all(|d| *d == sha256)),
        sha256,
    })
}

/// Runs one build command in `work`, its output in `work/build.log`, killed after
/// `timeout_s`. Returns the wall seconds it took; `what` names it in messages.
pub fn run_build(
    what: &str,
    argv: &[String],
    work: &Path,
    timeout_s: f64,
) -> Result<f64, BuildFailure> {
    let fail = BuildFailure::before_start;
    let log_path = work.join("build.log");
    let log = std::fs::File::create(&log_path)
        .map_err(|e| fail(format!("creating {}: {e}", log_path.display())))?;
    let t = Instant::now();
    let mut child = Command::new(&argv[0])
        .args(&argv[1..])
        .current_dir(work)
        .stdin(Stdio::null())
        .stdout(log.try_clone().map_err(|e| fail(e.to_string()))?)
        .stderr(log)
        .spawn()
        .map_err(|e| fail(format!("could not start {}: {e}", argv[0])))?;
    let deadline = t + Duration::from_secs_f64(timeout_s);
    let status = loop {
        if let Some(s) = child.try_wait().map_err(|e| fail(e.to_string()))? {
            break Some(s);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let compile_s = t.elapsed().as_secs_f64();
    match status {
        None => Err(BuildFailure {
            message: format!("build of {what} killed after BUILD_TIMEOUT_S={timeout_s}"),
            exit_code: None,
            log_tail: log_tail(&log_path),
        }),
        Some(s) if !s.success() => Err(BuildFailure {
            message: format!("build of {what} failed with {s}: {}", argv.join(" ")),
            exit_code: s.code(),
            log_tail: log_tail(&log_path),
        }),
        Some(_) => Ok(compile_s),
    }
}

/// The last 20 lines of a build log, from at most its last 64 KiB: a build that prints a
/// gigabyte costs no more to report than one that prints a line.
pub fn log_tail(path: &Path) -> Vec<String> {
    const TAIL: u64 = 64 * 1024;
    let mut bytes = Vec::new();
    let _ = std::fs::File::open(path).and_then(|mut f| {
        let len = f.metadata()?.len();
        f.seek(SeekFrom::Start(len.saturating_sub(TAIL)))?;
        f.take(TAIL).read_to_end(&mut bytes)
    });
    let text = String::from_utf8_lossy(&bytes);
    let lines: Vec<String> = text.lines().map(str::to_owned).collect();
    lines[lines.len().saturating_sub(20)..].to_vec()
}

/// The A/A control: a byte-identical copy of the reference's binary at `to`, recorded as a
/// build.
pub fn copy_control(reference: &Build, to: &Path) -> std::io::Result<Build> {
    std::fs::copy(&reference.binary, to)?;
    let (bytes, sha256) = hash_file(to)?;
    Ok(Build {
        argv: vec![
            "copy".into(),
            reference.binary.clone(),
            to.display().to_string(),
        ],
        cwd: reference.cwd.clone(),
        compile_s: 0.0,
        compile_runs_s: Vec::new(),
        binary: to.display().to_string(),
        binary_bytes: bytes,
        text_bytes: reference.text_bytes,
        sha256,
        reproducible: None,
    })
}
