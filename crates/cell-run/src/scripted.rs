//! The scripted executor: timings read from a file instead of timed processes, so the tests
//! of the gate, `cell local` and the report run on numbers that do not depend on how busy the
//! machine is (hyperfine's `--debug-mode` idea). Rows are still probed and built for real;
//! only the timed runs are replaced. Results it produces carry `protocol.scripted: true`,
//! and `cell collect` and `cell gate` refuse them as history.
//!
//! The file (JSON):
//!
//! ```json
//! {
//!   "seed": 1,
//!   "jitter": 0.002,
//!   "default_s": 0.01,
//!   "wall_factor": 1.01,
//!   "rows": { "c-fast": { "*": 0.01 }, "gcc-O2": { "mix": 0.011, "fib": 0.02 } },
//!   "wrong": { "c-wrong": ["mix"] },
//!   "row_jitter": { "control": 0.08, "gcc-O2": { "fib": 0.3 } },
//!   "row_wall_factor": { "control": 1.05 }
//! }
//! ```
//!
//! A run of a row on a phase takes `rows[row][phase]` (else `rows[row]["*"]`, else the
//! reference's, else `default_s`) CPU seconds times `1 + jitter·(u − ½)` for a seeded `u` in
//! [0, 1) (`row_jitter[row]` instead of `jitter` when given: one number, or one per phase with
//! `*` for the rest), and `wall_factor` times that
//! in wall time (`row_wall_factor[row]` instead, when given). The A/A control (`control`) takes the
//! reference's timings unless it is listed itself. A row and phase under `wrong` prints the
//! wrong answer.

use std::collections::BTreeMap;
use std::path::Path;

use cell_schema::{Phase, RowName};
use cell_stats::SplitMix64;
use serde::Deserialize;

use crate::protocol::{Executor, Sample};

/// A timings file, as read.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptedTimings {
    /// Seed of the jitter.
    #[serde(default)]
    pub seed: u64,
    /// Relative spread of a run around its row's time (0: every run exact).
    #[serde(default)]
    pub jitter: f64,
    /// CPU seconds of a run whose row the file does not list.
    #[serde(default = "default_s")]
    pub default_s: f64,
    /// Wall time as a multiple of CPU time.
    #[serde(default = "wall_factor")]
    pub wall_factor: f64,
    /// CPU seconds per row and phase (`*`: every phase).
    #[serde(default)]
    pub rows: BTreeMap<String, BTreeMap<String, f64>>,
    /// Phases on which a row prints the wrong answer.
    #[serde(default)]
    pub wrong: BTreeMap<String, Vec<String>>,
    /// A row's own jitter instead of the file's (a noisy control, say), on every phase or
    /// per phase.
    #[serde(default)]
    pub row_jitter: BTreeMap<String, RowJitter>,
    /// A row's own wall time as a multiple of its CPU time instead of `wall_factor` (a
    /// control whose wall clock alone is biased, say).
    #[serde(default)]
    pub row_wall_factor: BTreeMap<String, f64>,
}

/// A row's jitter: one for every phase, or one per phase (`*`: the others).
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum RowJitter {
    /// The same on every phase.
    All(f64),
    /// Per phase.
    PerPhase(BTreeMap<String, f64>),
}

impl RowJitter {
    fn on(&self, phase: &str) -> Option<f64> {
        match self {
            Self::All(j) => Some(*j),
            Self::PerPhase(m) => m.get(phase).or_else(|| m.get("*")).copied(),
        }
    }

    fn values(&self) -> Vec<f64> {
        match self {
            Self::All(j) => vec![*j],
            Self::PerPhase(m) => m.values().copied().collect(),
        }
    }
}

fn default_s() -> f64 {
    0.01
}

fn wall_factor() -> f64 {
    1.01
}

/// A timings file that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ScriptedError {
    /// It cannot be read.
    #[error("{}: {error}", path.display())]
    Io {
        /// The timings file.
        path: std::path::PathBuf,
        /// What the OS said.
        error: std::io::Error,
    },
    /// It is not a timings file.
    #[error("{}: not a scripted timings file: {msg}", path.display())]
    Bad {
        /// The timings file.
        path: std::path::PathBuf,
        /// What is wrong.
        msg: String,
    },
}

impl ScriptedTimings {
    /// Reads and checks a timings file.
    pub fn load(path: &Path) -> Result<Self, ScriptedError> {
        let text = std::fs::read_to_string(path).map_err(|error| ScriptedError::Io {
            path: path.to_owned(),
            error,
        })?;
        let bad = |msg: String| ScriptedError::Bad {
            path: path.to_owned(),
            msg,
        };
        let t: Self = serde_json::from_str(&text).map_err(|e| bad(e.to_string()))?;
        let times = t.rows.values().flat_map(BTreeMap::values);
        if std::iter::once(&t.default_s)
            .chain(times)
            .any(|s| !(s.is_finite() && *s > 0.0))
        {
            return Err(bad("every time must be a number of seconds above 0".into()));
        }
        if std::iter::once(t.jitter)
            .chain(t.row_jitter.values().flat_map(RowJitter::values))
            .any(|j| !(j.is_finite() && (0.0..1.0).contains(&j)))
        {
            return Err(bad("jitter must be at least 0 and below 1".into()));
        }
        if std::iter::once(&t.wall_factor)
            .chain(t.row_wall_factor.values())
            .any(|w| !(w.is_finite() && *w > 0.0))
        {
            return Err(bad("wall_factor must be above 0".into()));
        }
        Ok(t)
    }

    fn seconds(&self, row: &str, reference: &str, phase: &str) -> f64 {
        let of = |r: &str| {
            let p = self.rows.get(r)?;
            p.get(phase).or_else(|| p.get("*")).copied()
        };
        of(row).or_else(|| of(reference)).unwrap_or(self.default_s)
    }
}

/// An [`Executor`] that answers from a [`ScriptedTimings`].
pub struct ScriptedExecutor<'a> {
    timings: &'a ScriptedTimings,
    /// The row of each unit, in the protocol's unit order (unit 0 the reference).
    units: Vec<RowName>,
    rng: SplitMix64,
}

impl<'a> ScriptedExecutor<'a> {
    /// An executor for `units` (row names in the protocol's unit order; the first is the
    /// reference).
    pub fn new(timings: &'a ScriptedTimings, units: Vec<RowName>) -> Self {
        Self {
            rng: SplitMix64::new(timings.seed),
            timings,
            units,
        }
    }
}

impl Executor for ScriptedExecutor<'_> {
    fn run(&mut self, unit: usize, phase: &Phase) -> Sample {
        let row = self.units[unit].as_str();
        let reference = self.units[0].as_str();
        let base = self.timings.seconds(row, reference, phase.as_str());
        let u = self.rng.below(1_000_000) as f64 / 1e6;
        let jitter = self
            .timings
            .row_jitter
            .get(row)
            .and_then(|j| j.on(phase.as_str()))
            .unwrap_or(self.timings.jitter);
        let cpu_s = base * (1.0 + jitter * (u - 0.5));
        let wrong = self
            .timings
            .wrong
            .get(row)
            .is_some_and(|ps| ps.iter().any(|p| p == phase.as_str()));
        let wall_factor = self
            .timings
            .row_wall_factor
            .get(row)
            .copied()
            .unwrap_or(self.timings.wall_factor);
        Sample {
            wall_s: cpu_s * wall_factor,
            cpu_s,
            user_s: cpu_s * 0.98,
            sys_s: cpu_s * 0.02,
            steal_s: None,
            maxrss_kib: 1024,
            ok: !wrong,
            wrong: wrong.then(|| "printed \"scripted wrong answer\\n\"".to_owned()),
            printed: None,
            timed_out: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn timings(json: &str) -> ScriptedTimings {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.json");
        std::fs::write(&p, json).unwrap();
        ScriptedTimings::load(&p).unwrap()
    }

    #[test]
    fn rows_phases_the_control_and_wrong_answers() {
        let t =
            timings(r#"{"rows": {"ref": {"*": 1.0}, "a": {"mix": 2.0}}, "wrong": {"a": ["fib"]}}"#);
        let units = ["ref", "control", "a", "b"].map(RowName::from).to_vec();
        let mut ex = ScriptedExecutor::new(&t, units);
        let (mix, fib) = (Phase::from("mix"), Phase::from("fib"));
        assert!((ex.run(0, &mix).cpu_s - 1.0).abs() < 1e-12);
        assert!(
            (ex.run(1, &mix).cpu_s - 1.0).abs() < 1e-12,
            "control = reference"
        );
        assert!((ex.run(2, &mix).cpu_s - 2.0).abs() < 1e-12);
        assert!(
            (ex.run(2, &fib).cpu_s - 1.0).abs() < 1e-12,
            "a row's unlisted phase"
        );
        assert!(!ex.run(2, &fib).ok);
        let s = ex.run(3, &mix);
        assert!(s.ok && (s.wall_s - 1.01).abs() < 1e-12);
    }

    #[test]
    fn bad_files_are_refused_with_the_reason() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.json");
        for (text, why) in [
            (r#"{"rows": {"a": {"*": -1}}}"#, "above 0"),
            (r#"{"jitter": 2}"#, "jitter"),
            (r#"{"row_jitter": {"control": {"fib": 1.5}}}"#, "jitter"),
            (r#"{"speed": 2}"#, "unknown field"),
        ] {
            std::fs::write(&p, text).unwrap();
            let e = ScriptedTimings::load(&p).unwrap_err().to_string();
            assert!(e.contains(why), "{e}");
        }
    }
}
