//! hyperfine as a peer, run as a user runs it:
//! `hyperfine -N -w 1 -r N --export-json FILE '<reference> <phase>' '<candidate> <phase>'`.
//!
//! Budget: one warm-up and `N` timed runs of each of the two commands, `2(N + 1)` process
//! runs, so `N = budget/2 - 1` spends what the plain protocol (`budget/2` each, the first
//! dropped) and cell's (one warm-up round and `budget/2 - 1` measured rounds of two runs) do.
//!
//! Verdict: the ratio of the two means (candidate over reference). Its ± error is one
//! standard error of that ratio, the two standard errors of the means (`stddev/√N` each)
//! propagated: `ratio · √((se_c/mean_c)² + (se_r/mean_r)²)`.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use anyhow::{Context as _, Result, bail, ensure};
use serde::Deserialize;

use crate::protocols::{PER_PROCESS, Trial, Verdict, read_prefix, run_bounded};

/// The Debian package that installs it.
pub const PACKAGE: &str = "hyperfine";

/// An export file of two commands is a few KiB; anything past this is not one.
const EXPORT_MAX: u64 = 1 << 20;

/// The part of `--export-json` the bench reads.
#[derive(Debug, Deserialize)]
struct Export {
    results: Vec<Timed>,
}

/// One command's figures in the export.
#[derive(Debug, Deserialize)]
pub struct Timed {
    /// The command as hyperfine ran it.
    pub command: String,
    /// Mean wall seconds.
    pub mean: f64,
    /// Standard deviation of the runs (absent with a single run).
    pub stddev: Option<f64>,
    /// Every timed run, warm-ups excluded.
    pub times: Vec<f64>,
}

/// The version line of the installed hyperfine, or what to install.
pub fn version() -> Result<String> {
    let out = tempfile::NamedTempFile::new().context("a temp file for hyperfine --version")?;
    let mut cmd = Command::new("hyperfine");
    cmd.arg("--version")
        .stdin(Stdio::null())
        .stdout(out.reopen()?)
        .stderr(Stdio::null());
    match run_bounded(&mut cmd, Duration::from_secs(30)) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => bail!(
            "hyperfine is not installed: `apt-get install -y {PACKAGE}` (Debian package \
             `{PACKAGE}`, or scripts/setup --bench), or leave it out of --protocols"
        ),
        Err(e) => Err(e).context("hyperfine --version"),
        Ok(ended) if !ended.status.success() => {
            bail!("hyperfine --version ended with {}", ended.status)
        }
        Ok(_) => Ok(read_prefix(out.path(), 4096)?.trim().to_owned()),
    }
}

/// Timed runs of each command for a budget of process runs per verdict.
pub fn runs_each(budget: u32) -> u32 {
    budget / 2 - 1
}

/// The two command strings hyperfine is given, reference first.
fn commands(reference: &str, candidate: &str, phase: &str) -> [String; 2] {
    [
        format!("{reference} {phase}"),
        format!("{candidate} {phase}"),
    ]
}

/// hyperfine's argv: one warm-up and `runs` timed runs of each of the two commands.
pub fn argv(commands: &[String; 2], runs: u32, export: &Path) -> Vec<String> {
    let [reference, candidate] = commands.clone();
    vec![
        "-N".into(),
        "-w".into(),
        "1".into(),
        "-r".into(),
        runs.to_string(),
        "--export-json".into(),
        export.display().to_string(),
        reference,
        candidate,
    ]
}

/// One trial through hyperfine.
pub fn verdict(t: &Trial<'_>) -> Result<Verdict> {
    let [reference, candidate] = time(
        t.reference,
        t.candidate,
        t.phase,
        runs_each(t.budget),
        t.dir,
    )?;
    Ok(ratio_of_means(&reference, &candidate))
}

/// `reference` and `candidate` on `phase` through hyperfine, one warm-up and `runs` timed runs
/// each, in `dir` (its export and stderr go there too): the two results, checked.
pub fn time(
    reference: &str,
    candidate: &str,
    phase: &str,
    runs: u32,
    dir: &Path,
) -> Result<[Timed; 2]> {
    let export = dir.join("hyperfine.json");
    let stderr = dir.join("hyperfine.stderr");
    let asked = commands(reference, candidate, phase);
    let mut cmd = Command::new("hyperfine");
    cmd.args(argv(&asked, runs, &export))
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&stderr).context("hyperfine's stderr file")?);
    let ended = run_bounded(&mut cmd, PER_PROCESS * 2 * (runs + 1)).context("running hyperfine")?;
    if !ended.status.success() {
        bail!(
            "hyperfine ended with {}: {}",
            ended.status,
            read_prefix(&stderr, 4096)?.trim()
        );
    }
    let text = read_prefix(&export, EXPORT_MAX)?;
    read_export(&text, &asked, runs)
}

/// The two results of an export, checked to be the commands asked for with `runs` timed runs.
pub fn read_export(text: &str, commands: &[String; 2], runs: u32) -> Result<[Timed; 2]> {
    let export: Export = serde_json::from_str(text).context("hyperfine's --export-json")?;
    let Ok([reference, candidate]) = <[Timed; 2]>::try_from(export.results) else {
        bail!("hyperfine's export does not hold exactly the two commands asked for");
    };
    for (got, want) in [&reference, &candidate].into_iter().zip(commands) {
        ensure!(
            &got.command == want,
            "hyperfine timed `{}` where `{want}` was asked for",
            got.command
        );
        ensure!(
            got.times.len() == runs as usize,
            "hyperfine timed `{want}` {} times, not {runs}",
            got.times.len()
        );
    }
    Ok([reference, candidate])
}

/// Candidate mean over reference mean, ± one propagated standard error (none with one run).
pub fn ratio_of_means(reference: &Timed, candidate: &Timed) -> Verdict {
    let ratio = candidate.mean / reference.mean;
    let rel_se = |x: &Timed| {
        x.stddev
            .map(|sd| sd / (x.times.len() as f64).sqrt() / x.mean)
    };
    let interval = rel_se(reference).zip(rel_se(candidate)).map(|(r, c)| {
        let e = ratio * r.hypot(c);
        (ratio - e, ratio + e)
    });
    let runs = reference.times.len() + candidate.times.len() + 2;
    Verdict {
        ratio,
        interval,
        runs: u32::try_from(runs).unwrap_or(u32::MAX),
        clocks: BTreeMap::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shape hyperfine 1.15 writes (trimmed of the fields the bench does not read).
    fn export(second: &str) -> String {
        format!(
            r#"{{"results": [
              {{"command": "/t/ref/workload mix", "mean": 0.4, "stddev": 0.004,
                "median": 0.4, "user": 0.4, "system": 0.0, "min": 0.39, "max": 0.41,
                "times": [0.396, 0.4, 0.404, 0.4], "exit_codes": [0, 0, 0, 0]}},
              {{"command": "{second}", "mean": 0.412, "stddev": 0.0,
                "times": [0.412, 0.412, 0.412, 0.412], "exit_codes": [0, 0, 0, 0]}}
            ]}}"#
        )
    }

    fn asked() -> [String; 2] {
        ["/t/ref/workload mix".into(), "/t/mix/workload mix".into()]
    }

    #[test]
    fn the_verdict_is_the_ratio_of_means_with_the_standard_errors_propagated() {
        let [r, c] = read_export(&export("/t/mix/workload mix"), &asked(), 4).unwrap();
        let v = ratio_of_means(&r, &c);
        assert!((v.ratio - 1.03).abs() < 1e-12, "{v:?}");
        // The reference's standard error of the mean is 0.004/√4 = 0.002, 0.5% of 0.4; the
        // candidate's is 0: ±0.5% of 1.03.
        let (lo, hi) = v.interval.unwrap();
        assert!((hi - 1.03 - 0.00515).abs() < 1e-9, "{lo} {hi}");
        assert!((1.03 - lo - 0.00515).abs() < 1e-9, "{lo} {hi}");
        assert_eq!(v.runs, 10);
    }

    #[test]
    fn an_export_of_another_command_or_run_count_is_refused() {
        let e = read_export(&export("/t/a-a/workload mix"), &asked(), 4).unwrap_err();
        assert!(
            format!("{e}").contains("timed `/t/a-a/workload mix` where `/t/mix/workload mix`"),
            "{e}"
        );
        let e = read_export(&export("/t/mix/workload mix"), &asked(), 6).unwrap_err();
        assert!(format!("{e}").contains("4 times, not 6"), "{e}");
    }

    #[test]
    fn its_budget_equals_the_other_protocols() {
        for budget in [4, 14, 20] {
            assert_eq!(2 * (runs_each(budget) + 1), budget);
        }
    }
}
