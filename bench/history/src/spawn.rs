//! One run of a program, clocked from spawn to its `wait4` reap, with the CPU time and peak
//! memory the kernel accounted to it.

use std::ffi::OsStr;
use std::fs::File;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{Context as _, Result};

/// What one run cost, and what it printed.
pub struct Ran {
    /// Spawn to reap.
    pub wall_s: f64,
    /// User + system CPU seconds of the process.
    pub cpu_s: f64,
    /// Its peak resident set.
    pub max_rss_bytes: u64,
    /// Its exit code; 128 + the signal that ended it.
    pub code: i32,
    /// What it printed.
    pub stdout: String,
    /// What it printed on stderr.
    pub stderr: String,
}

fn seconds(t: libc::timeval) -> f64 {
    t.tv_sec as f64 + t.tv_usec as f64 * 1e-6
}

/// Runs `program args` in `cwd`, its output to files in `scratch`, outside GitHub Actions.
pub fn run(program: &Path, args: &[&OsStr], cwd: &Path, scratch: &Path) -> Result<Ran> {
    let (out, err) = (scratch.join("stdout"), scratch.join("stderr"));
    let file = |p: &Path| File::create(p).with_context(|| format!("{}", p.display()));
    let mut cmd = Command::new(program);
    cmd.args(args)
        .current_dir(cwd)
        .env_remove("GITHUB_ACTIONS")
        .env_remove("GITHUB_STEP_SUMMARY")
        .env_remove("CELL_ROOT")
        .stdin(Stdio::null())
        .stdout(file(&out)?)
        .stderr(file(&err)?);
    let start = Instant::now();
    let child = cmd
        .spawn()
        .with_context(|| format!("running {}", program.display()))?;
    let pid = libc::pid_t::try_from(child.id())?;
    let (status, usage) = cell_run::timing::wait4(pid)
        .with_context(|| format!("waiting for {}", program.display()))?;
    let wall_s = start.elapsed().as_secs_f64();
    // Reaped above: dropping the handle does not wait.
    drop(child);
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        128 + libc::WTERMSIG(status)
    };
    let read = |p: &Path| -> Result<String> {
        let b = std::fs::read(p).with_context(|| format!("{}", p.display()))?;
        Ok(String::from_utf8_lossy(&b).into_owned())
    };
    Ok(Ran {
        wall_s,
        cpu_s: seconds(usage.ru_utime) + seconds(usage.ru_stime),
        // Linux counts it in KiB.
        max_rss_bytes: u64::try_from(usage.ru_maxrss).unwrap_or(0) * 1024,
        code,
        stdout: read(&out)?,
        stderr: read(&err)?,
    })
}
