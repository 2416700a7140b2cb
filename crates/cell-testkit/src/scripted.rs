//! Timings files for the scripted executor of `cell run` and `cell local`
//! (`--scripted-timings FILE`, hidden from `--help`): what each row takes, so a test of the
//! gate or the report gets the same numbers on a quiet machine and a busy one.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

/// A timings file being built.
#[derive(Clone, Debug)]
pub struct Timings {
    value: Value,
}

impl Timings {
    /// Rows not listed take 10 ms; runs jitter by ±0.1% around their row's time.
    pub fn new(seed: u64) -> Self {
        Self {
            value: json!({ "seed": seed, "jitter": 0.002, "rows": {}, "wrong": {}, "row_jitter": {}, "row_wall_factor": {} }),
        }
    }

    /// Relative spread of a run around its row's time (0: every run exact).
    #[must_use]
    pub fn jitter(mut self, jitter: f64) -> Self {
        self.value["jitter"] = json!(jitter);
        self
    }

    /// `row` jitters by `jitter` (relative spread) instead of the file's.
    #[must_use]
    pub fn row_jitter(mut self, row: &str, jitter: f64) -> Self {
        self.value["row_jitter"][row] = json!(jitter);
        self
    }

    /// `row` jitters by `jitter` on `phase` alone (`*`: on the phases not named).
    #[must_use]
    pub fn phase_jitter(mut self, row: &str, phase: &str, jitter: f64) -> Self {
        if !self.value["row_jitter"][row].is_object() {
            self.value["row_jitter"][row] = json!({});
        }
        self.value["row_jitter"][row][phase] = json!(jitter);
        self
    }

    /// `row`'s wall time is `factor` times its CPU time (the file's `wall_factor` for the
    /// others).
    #[must_use]
    pub fn row_wall(mut self, row: &str, factor: f64) -> Self {
        self.value["row_wall_factor"][row] = json!(factor);
        self
    }

    /// `row` takes `seconds` of CPU time on every phase.
    #[must_use]
    pub fn row(self, row: &str, seconds: f64) -> Self {
        self.phase(row, "*", seconds)
    }

    /// `row` takes `seconds` of CPU time on `phase`.
    #[must_use]
    pub fn phase(mut self, row: &str, phase: &str, seconds: f64) -> Self {
        self.value["rows"][row][phase] = json!(seconds);
        self
    }

    /// `row` prints the wrong answer on `phase`.
    #[must_use]
    pub fn wrong(mut self, row: &str, phase: &str) -> Self {
        let list = self.value["wrong"][row]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let mut list = list;
        list.push(json!(phase));
        self.value["wrong"][row] = Value::Array(list);
        self
    }

    /// Writes the file at `path` and returns the path.
    pub fn write(&self, path: &Path) -> PathBuf {
        std::fs::write(path, serde_json::to_string_pretty(&self.value).unwrap())
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        path.to_owned()
    }
}
