//! Every threshold of the protocol, read from `versions.env`, with one table of defaults.

use cell_schema::{Clock, Phase, RowName};

use crate::{ConfigError, VersionsEnv};

/// The defaults, defined once: key, default value, what it means. `docs/` and `cell` read
/// this table; nothing else in the code repeats a default.
pub const DEFAULTS: &[(&str, &str, &str)] = &[
    (
        "REPS",
        "11",
        "repetitions a job starts with for every row and phase, DROP of them warm-up",
    ),
    ("DROP", "1", "leading warm-up rounds, recorded and excluded"),
    (
        "REPS_MAX",
        "31",
        "repetitions the adaptive budget may reach",
    ),
    (
        "REPS_STEP",
        "5",
        "repetitions added while a CI is wider than CI_TARGET",
    ),
    (
        "ROWS_PER_REFERENCE",
        "3",
        "at most this many rows between two reference runs in a round",
    ),
    ("REFERENCE", "c-O2", "the row every ratio divides by"),
    ("PHASES", "mix,primes,fib", "phases timed, comma-separated"),
    (
        "TOOTH_PHASE",
        "mix",
        "phase the tooth (slow row / fast row) is read on",
    ),
    (
        "TOOTH_MIN",
        "1.5",
        "floor of the tooth ratio; TOOTH_MIN_<ARCH> overrides per architecture",
    ),
    (
        "TOLERANCE",
        "0.015",
        "gate band: a ratio may move this fraction before it can fail",
    ),
    (
        "CI_TARGET",
        "0.005",
        "CI half-width (fraction) the adaptive budget aims for",
    ),
    ("CI_LEVEL", "0.95", "confidence level of every interval"),
    (
        "HEALTH_THRESHOLD",
        "0.15",
        "reference median moving more than this fraction is a notice",
    ),
    (
        "CONTENTION_MAX",
        "1.10",
        "median wall/cpu above which a job is marked contended",
    ),
    (
        "CLOCK",
        "cpu",
        "verdict clock: cpu, wall, or auto (the quieter in the cell's calibration); CLOCK_<OS> overrides per OS",
    ),
    (
        "TIME_CAP_S",
        "900",
        "seconds of timing after which a job stops adding rounds",
    ),
    (
        "RUN_TIMEOUT_S",
        "300",
        "seconds one timed process may run before it is killed",
    ),
    (
        "BUILD_TIMEOUT_S",
        "600",
        "seconds one build may run before it is killed",
    ),
    (
        "HTTP_TOLERANCE",
        "0.20",
        "gate band of the http suite: median req/s may move this fraction before it can fail",
    ),
    (
        "HTTP_LOAD_CPU_MAX",
        "0.90",
        "a run whose load generator kept its CPU busier than this share is contaminated",
    ),
    (
        "HTTP_OTHER_CPU_MAX",
        "0.08",
        "a run where more than this share of machine CPU went to neither server nor load generator is contaminated",
    ),
    (
        "BASELINE",
        "",
        "run (<date>-<run-id>) the gate compares against; empty: the newest committed run",
    ),
];

/// The default of a key from [`DEFAULTS`].
fn default_of(key: &str) -> &'static str {
    DEFAULTS
        .iter()
        .find(|(k, _, _)| *k == key)
        .map(|(_, v, _)| *v)
        .expect("every setting has a default")
}

/// Thresholds and protocol parameters, validated.
#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    /// Repetitions a job starts with (warm-up included).
    pub reps: u32,
    /// Warm-up rounds.
    pub drop: u32,
    /// Repetitions the adaptive budget may reach (warm-up included).
    pub reps_max: u32,
    /// Repetitions added per adaptive step.
    pub reps_step: u32,
    /// Rows between two reference runs.
    pub rows_per_reference: u32,
    /// The reference row.
    pub reference: RowName,
    /// Phases in order.
    pub phases: Vec<Phase>,
    /// The tooth's phase.
    pub tooth_phase: Phase,
    /// Tolerance of the gate.
    pub tolerance: f64,
    /// Target CI half-width.
    pub ci_target: f64,
    /// Confidence level.
    pub ci_level: f64,
    /// Health notice threshold.
    pub health_threshold: f64,
    /// Contention threshold.
    pub contention_max: f64,
    /// Timing cap per job, seconds.
    pub time_cap_s: f64,
    /// Per-process timeout, seconds.
    pub run_timeout_s: f64,
    /// Per-build timeout, seconds.
    pub build_timeout_s: f64,
    /// The run the gate compares against, when pinned.
    pub baseline: Option<String>,
    /// Gate band of the http suite.
    pub http_tolerance: f64,
    /// Load generator CPU share above which a run is contaminated.
    pub http_load_cpu_max: f64,
    /// Machine CPU share charged to neither side above which a run is contaminated.
    pub http_other_cpu_max: f64,
    tooth_min: f64,
    tooth_min_arch: Vec<(String, f64)>,
    clock: Option<Clock>,
    clock_os: Vec<(String, Option<Clock>)>,
}

impl Settings {
    /// Reads every setting, falling back to [`DEFAULTS`].
    pub fn from_env(env: &VersionsEnv) -> Result<Self, ConfigError> {
        let raw = |key: &str| env.get(key).unwrap_or_else(|| default_of(key));
        let int = |key: &str| -> Result<u32, ConfigError> {
            raw(key).parse::<u32>().map_err(|_| {
                env.error_at(
                    key,
                    format!(
                        "{key}={} is not a whole number: write e.g. {key}={}",
                        raw(key),
                        default_of(key)
                    ),
                )
            })
        };
        let num = |key: &str, lo: f64, hi: f64| -> Result<f64, ConfigError> {
            let v = raw(key);
            match v.parse::<f64>() {
                Ok(x) if x.is_finite() && x > lo && x < hi => Ok(x),
                Ok(_) => Err(env.error_at(
                    key,
                    format!(
                        "{key}={v} is out of range: it must lie strictly between {lo} and {hi}"
                    ),
                )),
                Err(_) => Err(env.error_at(
                    key,
                    format!(
                        "{key}={v} is not a number: write e.g. {key}={}",
                        default_of(key)
                    ),
                )),
            }
        };
        // `None` is `auto`: the clock `cell calibrate` measured quieter on this cell.
        let clock = |key: &str, v: &str| -> Result<Option<Clock>, ConfigError> {
            match v {
                "cpu" => Ok(Some(Clock::Cpu)),
                "wall" => Ok(Some(Clock::Wall)),
                "auto" => Ok(None),
                _ => Err(env.error_at(key, format!("{key}={v}: write cpu, wall or auto"))),
            }
        };

        let reps = int("REPS")?;
        let drop = int("DROP")?;
        if reps <= drop {
            let key = if env.get("REPS").is_some() {
                "REPS"
            } else {
                "DROP"
            };
            return Err(env.error_at(
                key,
                format!("REPS={reps} with DROP={drop} leaves no measured repetition: REPS must exceed DROP (e.g. REPS={} for DROP={drop})", drop + 10),
            ));
        }
        if reps - drop < 2 {
            return Err(env.error_at("REPS", format!("REPS={reps} with DROP={drop} measures one repetition, which has no spread: measure at least 2")));
        }
        let reps_max = int("REPS_MAX")?;
        if reps_max < reps {
            return Err(env.error_at(
                "REPS_MAX",
                format!("REPS_MAX={reps_max} is below REPS={reps}: write REPS_MAX={reps} or more"),
            ));
        }
        let reps_step = int("REPS_STEP")?;
        if reps_step == 0 {
            return Err(env.error_at(
                "REPS_STEP",
                "REPS_STEP=0 never adds a repetition: write 1 or more".into(),
            ));
        }
        let rows_per_reference = int("ROWS_PER_REFERENCE")?;
        if rows_per_reference == 0 {
            return Err(env.error_at(
                "ROWS_PER_REFERENCE",
                "ROWS_PER_REFERENCE must be 1 or more".into(),
            ));
        }

        let phases: Vec<Phase> = raw("PHASES")
            .split(',')
            .filter(|p| !p.is_empty())
            .map(Phase::from)
            .collect();
        if phases.is_empty() {
            return Err(env.error_at(
                "PHASES",
                "PHASES is empty: list the phases, e.g. PHASES=mix,primes,fib".into(),
            ));
        }
        for (i, p) in phases.iter().enumerate() {
            if phases[..i].contains(p) {
                return Err(env.error_at("PHASES", format!("phase `{p}` is listed twice")));
            }
        }
        let tooth_phase = Phase::from(raw("TOOTH_PHASE"));
        if !phases.contains(&tooth_phase) {
            return Err(env.error_at(
                "TOOTH_PHASE",
                format!(
                    "TOOTH_PHASE={tooth_phase} is not one of PHASES ({})",
                    raw("PHASES")
                ),
            ));
        }

        let tooth_min = num("TOOTH_MIN", 1.0, f64::INFINITY)?;
        let mut tooth_min_arch = Vec::new();
        let mut clock_os = Vec::new();
        for key in env.entries.keys() {
            if let Some(arch) = key.strip_prefix("TOOTH_MIN_") {
                tooth_min_arch.push((arch.to_ascii_lowercase(), num(key, 1.0, f64::INFINITY)?));
            } else if let Some(os) = key.strip_prefix("CLOCK_") {
                clock_os.push((os.to_ascii_lowercase(), clock(key, raw(key))?));
            }
        }

        let settings = Self {
            reps,
            drop,
            reps_max,
            reps_step,
            rows_per_reference,
            reference: RowName::from(raw("REFERENCE")),
            phases,
            tooth_phase,
            tolerance: num("TOLERANCE", 0.0, 1.0)?,
            ci_target: num("CI_TARGET", 0.0, 1.0)?,
            ci_level: num("CI_LEVEL", 0.5, 1.0)?,
            health_threshold: num("HEALTH_THRESHOLD", 0.0, f64::INFINITY)?,
            contention_max: num("CONTENTION_MAX", 1.0, f64::INFINITY)?,
            time_cap_s: num("TIME_CAP_S", 0.0, f64::INFINITY)?,
            run_timeout_s: num("RUN_TIMEOUT_S", 0.0, f64::INFINITY)?,
            build_timeout_s: num("BUILD_TIMEOUT_S", 0.0, f64::INFINITY)?,
            baseline: Some(raw("BASELINE").to_owned()).filter(|b| !b.is_empty()),
            http_tolerance: num("HTTP_TOLERANCE", 0.0, 10.0)?,
            http_load_cpu_max: num("HTTP_LOAD_CPU_MAX", 0.0, 1.0 + 1e-9)?,
            http_other_cpu_max: num("HTTP_OTHER_CPU_MAX", 0.0, 1.0)?,
            tooth_min,
            tooth_min_arch,
            clock: clock("CLOCK", raw("CLOCK"))?,
            clock_os,
        };
        if settings.ci_target > settings.tolerance {
            return Err(env.error_at("CI_TARGET", format!("CI_TARGET={} is wider than TOLERANCE={}: the gate could never pass; write at most TOLERANCE/3", settings.ci_target, settings.tolerance)));
        }
        Ok(settings)
    }

    /// The tooth floor for an architecture (`TOOTH_MIN_<ARCH>`, else `TOOTH_MIN`).
    pub fn tooth_min(&self, arch: &str) -> f64 {
        self.tooth_min_arch
            .iter()
            .find(|(a, _)| a.eq_ignore_ascii_case(arch))
            .map_or(self.tooth_min, |(_, v)| *v)
    }

    /// The default verdict clock on an OS (`CLOCK_<OS>`, else `CLOCK`); `None` means `auto`:
    /// the clock with the smaller A/A noise in the cell's calibration, else CPU time.
    pub fn clock(&self, os: &str) -> Option<Clock> {
        self.clock_os
            .iter()
            .find(|(o, _)| o.eq_ignore_ascii_case(os))
            .map_or(self.clock, |(_, c)| *c)
    }

    /// Measured rounds a job starts with.
    pub fn min_rounds(&self) -> u32 {
        self.reps - self.drop
    }

    /// Measured rounds the adaptive budget may reach.
    pub fn max_rounds(&self) -> u32 {
        self.reps_max - self.drop
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    fn settings(text: &str) -> Result<Settings, String> {
        let env = VersionsEnv::parse(Path::new("versions.env"), text).map_err(|e| e.to_string())?;
        Settings::from_env(&env).map_err(|e| e.to_string())
    }

    #[test]
    fn defaults_are_valid() {
        let s = settings("").unwrap();
        assert_eq!(s.min_rounds(), 10);
        assert_eq!(s.max_rounds(), 30);
        assert_eq!(s.clock("linux"), Some(Clock::Cpu));
    }

    #[test]
    fn reps_not_above_drop_names_the_line() {
        let e = settings("# x\nREPS=2\nDROP=2\n").unwrap_err();
        assert!(e.starts_with("versions.env:2: REPS=2 with DROP=2"), "{e}");
    }

    #[test]
    fn threshold_not_a_number_names_the_line() {
        let e = settings("TOLERANCE=abc\n").unwrap_err();
        assert!(
            e.starts_with("versions.env:1: TOLERANCE=abc is not a number"),
            "{e}"
        );
    }

    #[test]
    fn per_arch_and_per_os_overrides() {
        let s = settings("TOOTH_MIN=1.4\nTOOTH_MIN_AARCH64=1.2\nCLOCK_MACOS=wall\n").unwrap();
        assert!((s.tooth_min("aarch64") - 1.2).abs() < 1e-12);
        assert!((s.tooth_min("x86_64") - 1.4).abs() < 1e-12);
        assert_eq!(s.clock("macos"), Some(Clock::Wall));
        assert_eq!(s.clock("linux"), Some(Clock::Cpu));
        let auto = settings("CLOCK=auto\n").unwrap();
        assert_eq!(auto.clock("linux"), None);
    }
}
