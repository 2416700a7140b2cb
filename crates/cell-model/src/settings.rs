//! Every threshold of the protocol, read from `versions.env`, with one table of defaults.

use cell_schema::{Clock, Phase, ProtocolMode, RowName};

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
        "gate band: a ratio may move this fraction between two runs before it can fail",
    ),
    (
        "CI_TARGET",
        "0.005",
        "CI half-width (fraction) a row aims for when its job has no baseline to be judged against",
    ),
    (
        "CI_LEVEL",
        "0.95",
        "confidence level of every interval, and of a run's verdicts together (an unchanged run fails any of its (row, phase) verdicts at most 1 - CI_LEVEL of the time)",
    ),
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
        "verdict clock: cpu, user, wall, or auto (the quieter in the cell's calibration); CLOCK_<OS> overrides per OS",
    ),
    (
        "PROTOCOL",
        "auto",
        "sequential (a row, then its reference, on one CPU), duet (both at once on two CPUs), or auto (the quieter in the cell's calibration, else sequential)",
    ),
    (
        "FUTILITY_MARGIN",
        "1.25",
        "stop a row's rounds on a phase when its interval, projected at REPS_MAX, stays wider than what would settle it times this; 0 never stops early",
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
        "CPU_WAIT_S",
        "900",
        "seconds a job waits for a CPU no other cell process is timing on; 0: never wait",
    ),
    (
        "BUILD_TIMEOUT_S",
        "600",
        "seconds one build may run before it is killed",
    ),
    (
        "BUILD_REPS",
        "3",
        "builds of every row: compile seconds are their median, the last build's binary is timed",
    ),
    (
        "INSTRUCTIONS",
        "on",
        "the exact lane: every timed row but the control runs under cachegrind with the pinned cache geometry below, its instructions and estimated cycles recorded per phase and gated as a code verdict (Linux cells where valgrind runs; off: never)",
    ),
    (
        "CACHE_I1",
        "32768,8,64",
        "the exact lane's simulated first-level instruction cache: size,associativity,line in bytes, ways, bytes (valgrind --I1), the same on every runner",
    ),
    (
        "CACHE_D1",
        "32768,8,64",
        "the exact lane's simulated first-level data cache (valgrind --D1)",
    ),
    (
        "CACHE_LL",
        "8388608,16,64",
        "the exact lane's simulated last-level cache (valgrind --LL)",
    ),
    (
        "CYCLES_TOLERANCE",
        "0.005",
        "code verdict: a row's estimated cycles over the reference's may move this fraction against the baseline's; beyond it, more is FAIL and fewer a PASS with a notice",
    ),
    (
        "INSTRUCTIONS_SKIP",
        "",
        "rows the exact lane leaves out, comma-separated (a debug build that takes minutes under valgrind)",
    ),
    (
        "INSTRUCTIONS_TIME_CAP_S",
        "600",
        "seconds the exact lane of one job may take; rows not reached by then are skipped with the reason",
    ),
    (
        "INSTRUCTIONS_RUN_TIMEOUT_S",
        "600",
        "seconds one run under cachegrind may take before it is killed (its cache simulation runs 17-23x slower than natively)",
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
        "UNPACK_MAX_RATIO",
        "20",
        "a toolchain archive may unpack to at most this many times its own size",
    ),
    (
        "UNPACK_RATIO_FLOOR_MIB",
        "64",
        "MiB a toolchain archive may always unpack to, however small it is",
    ),
    (
        "UNPACK_MAX_MIB",
        "8192",
        "MiB a toolchain archive may unpack to at most, whatever its size",
    ),
    (
        "UNPACK_MAX_ENTRIES",
        "200000",
        "entries a toolchain archive may hold at most",
    ),
    (
        "ARTIFACT_MAX_RATIO",
        "20",
        "a job's artifact may unpack to at most this many times its own size",
    ),
    (
        "ARTIFACT_RATIO_FLOOR_MIB",
        "16",
        "MiB a job's artifact may always unpack to, however small it is",
    ),
    (
        "ARTIFACT_MAX_MIB",
        "1024",
        "MiB a job's artifact may unpack to at most, whatever its size",
    ),
    (
        "ARTIFACT_MAX_ENTRIES",
        "64",
        "entries a job's artifact may hold at most",
    ),
    (
        "FETCH_TIMEOUT_S",
        "600",
        "seconds one download (a toolchain tarball, its checksum file, `cell fetch`) may take in all, however steadily bytes arrive; 1 to 86400",
    ),
    (
        "BASELINE",
        "",
        "run (<date>-<run-id>) the gate compares against; empty: the newest committed run",
    ),
];

/// The default of a key from [`DEFAULTS`]; a per-architecture or per-OS override
/// (`TOOTH_MIN_X86_64`, `CLOCK_MACOS`) takes its base key's.
fn default_of(key: &str) -> &'static str {
    let base = ["TOOTH_MIN_", "CLOCK_"]
        .iter()
        .find(|p| key.starts_with(*p))
        .map_or(key, |p| p.trim_end_matches('_'));
    DEFAULTS
        .iter()
        .find(|(k, _, _)| *k == base)
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
    /// `CI_LEVEL`: the coverage every interval aims for.
    pub ci_level: f64,
    /// Health notice threshold.
    pub health_threshold: f64,
    /// `CONTENTION_MAX`: median wall/cpu above which a job is contended.
    pub contention_max: f64,
    /// Timing cap per job, seconds.
    pub time_cap_s: f64,
    /// Per-process timeout, seconds.
    pub run_timeout_s: f64,
    /// `CPU_WAIT_S`: how long a job waits for a free CPU lock before it times without one
    /// (0: it never waits).
    pub cpu_wait_s: f64,
    /// Per-build timeout, seconds.
    pub build_timeout_s: f64,
    /// Builds of every row (`BUILD_REPS`, at least 1).
    pub build_reps: u32,
    /// The exact lane: `INSTRUCTIONS`, the cache geometry, `CYCLES_TOLERANCE`.
    pub exact: crate::exact::ExactLane,
    /// The run the gate compares against, when pinned.
    pub baseline: Option<String>,
    /// Gate band of the http suite.
    pub http_tolerance: f64,
    /// Load generator CPU share above which a run is contaminated.
    pub http_load_cpu_max: f64,
    /// Machine CPU share charged to neither side above which a run is contaminated.
    pub http_other_cpu_max: f64,
    /// Caps on unpacking a toolchain archive (`UNPACK_*`).
    pub unpack: UnpackCaps,
    /// Caps on unpacking a job's artifact in `cell collect` (`ARTIFACT_*`).
    pub artifact_unpack: UnpackCaps,
    /// `FETCH_TIMEOUT_S`: the deadline of one download, seconds.
    pub fetch_timeout_s: u64,
    tooth_min: f64,
    tooth_min_arch: Vec<(String, f64)>,
    clock: Option<Clock>,
    clock_os: Vec<(String, Option<Clock>)>,
    /// `PROTOCOL`; `None` is `auto`.
    pub protocol: Option<ProtocolMode>,
    /// `FUTILITY_MARGIN` (0: never stop early).
    pub futility_margin: f64,
}

impl Settings {
    /// Reads every setting, falling back to [`DEFAULTS`].
    pub fn from_env(env: &VersionsEnv) -> Result<Self, ConfigError> {
        let keys = Keys(env);
        let counts = protocol_counts(&keys)?;
        let (phases, tooth_phase) = phases(&keys)?;
        let tooth_min = keys.num("TOOTH_MIN", 1.0, f64::INFINITY)?;
        let overrides = overrides(&keys)?;
        let t = thresholds(&keys)?;
        let clock = keys.clock("CLOCK")?;
        let mut exact = keys.exact()?;
        // Left at its default, the lane's cap follows a shorter job cap; written, it must fit.
        if keys.0.get("INSTRUCTIONS_TIME_CAP_S").is_none() {
            exact.time_cap_s = exact.time_cap_s.min(t.time_cap_s);
        }
        if exact.time_cap_s > t.time_cap_s {
            return Err(keys.error_at("INSTRUCTIONS_TIME_CAP_S", format!("INSTRUCTIONS_TIME_CAP_S={} is longer than the job's TIME_CAP_S={}: the exact lane's cap lies within the job's; write at most TIME_CAP_S", exact.time_cap_s, t.time_cap_s)));
        }
        if t.ci_target > t.tolerance {
            return Err(keys.error_at("CI_TARGET", format!("CI_TARGET={} is wider than TOLERANCE={}: the gate could never pass; write at most TOLERANCE/3", t.ci_target, t.tolerance)));
        }
        Ok(Self {
            reps: counts.reps,
            drop: counts.drop,
            reps_max: counts.reps_max,
            reps_step: counts.reps_step,
            rows_per_reference: counts.rows_per_reference,
            reference: RowName::from(keys.raw("REFERENCE")),
            phases,
            tooth_phase,
            tolerance: t.tolerance,
            ci_target: t.ci_target,
            ci_level: t.ci_level,
            health_threshold: t.health_threshold,
            contention_max: t.contention_max,
            time_cap_s: t.time_cap_s,
            run_timeout_s: t.run_timeout_s,
            cpu_wait_s: t.cpu_wait_s,
            build_timeout_s: t.build_timeout_s,
            build_reps: keys.build_reps()?,
            exact,
            baseline: Some(keys.raw("BASELINE").to_owned()).filter(|b| !b.is_empty()),
            http_tolerance: t.http_tolerance,
            http_load_cpu_max: t.http_load_cpu_max,
            http_other_cpu_max: t.http_other_cpu_max,
            unpack: keys.caps("UNPACK")?,
            artifact_unpack: keys.caps("ARTIFACT")?,
            fetch_timeout_s: keys.fetch_timeout()?,
            tooth_min,
            tooth_min_arch: overrides.tooth_min_arch,
            clock,
            clock_os: overrides.clock_os,
            protocol: keys.protocol()?,
            futility_margin: keys.futility_margin()?,
        })
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

impl Default for Settings {
    /// Every setting at its default from [`DEFAULTS`], as an empty `versions.env` reads.
    fn default() -> Self {
        let env = VersionsEnv {
            path: "versions.env".into(),
            entries: std::collections::BTreeMap::new(),
        };
        Self::from_env(&env).expect("the defaults are valid (tested)")
    }
}

/// How far an archive may unpack: a multiple of its own size, never below a floor and never
/// above a ceiling, and a number of entries. A zip bomb is refused before it fills the disk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UnpackCaps {
    /// Unpacked bytes per byte of archive.
    pub max_ratio: u64,
    /// Unpacked bytes the ratio always allows.
    pub ratio_floor_bytes: u64,
    /// Unpacked bytes never exceeded.
    pub max_bytes: u64,
    /// Entries never exceeded.
    pub max_entries: u64,
}

/// The longest wait or timeout a key may set, in seconds: a day, beyond any real job (a
/// hosted runner stops one at six hours), and far within what a `Duration` holds.
pub const MAX_SECONDS: f64 = 86_400.0;

/// The most repetitions `REPS`, `DROP`, `REPS_MAX` and `REPS_STEP` may set: the bound the
/// workflow's `reps` input has.
pub const MAX_REPS: u32 = 100_000;

/// The most rows `ROWS_PER_REFERENCE` may set between two reference runs.
pub const MAX_ROWS_PER_REFERENCE: u32 = 1_000;

/// `versions.env` as settings see it: every key has a value, its own or its default.
struct Keys<'a>(&'a VersionsEnv);

impl<'a> Keys<'a> {
    fn raw(&self, key: &str) -> &'a str {
        self.0.get(key).unwrap_or_else(|| default_of(key))
    }

    fn error_at(&self, key: &str, msg: String) -> ConfigError {
        self.0.error_at(key, msg)
    }

    fn int(&self, key: &str) -> Result<u32, ConfigError> {
        self.raw(key).parse::<u32>().map_err(|_| {
            self.error_at(
                key,
                format!(
                    "{key}={} is not a whole number: write e.g. {key}={}",
                    self.raw(key),
                    default_of(key)
                ),
            )
        })
    }

    /// A whole number of at most `max`.
    fn count(&self, key: &str, max: u32) -> Result<u32, ConfigError> {
        match self.int(key)? {
            n if n <= max => Ok(n),
            n => Err(self.error_at(
                key,
                format!(
                    "{key}={n} is out of range: write at most {max} (default {})",
                    default_of(key)
                ),
            )),
        }
    }

    /// Seconds of a wait or a timeout: more than 0 (or 0 itself when `zero` is allowed, a
    /// wait that is not waited), at most [`MAX_SECONDS`].
    fn seconds(&self, key: &str, zero: bool) -> Result<f64, ConfigError> {
        let (in_range, range): (fn(f64) -> bool, _) = if zero {
            (|x| (0.0..=MAX_SECONDS).contains(&x), "it must be 0 or more")
        } else {
            (|x| x > 0.0 && x <= MAX_SECONDS, "it must be more than 0")
        };
        self.number(
            key,
            in_range,
            &format!("{range}, and at most {MAX_SECONDS} (a day)"),
        )
    }

    /// A whole number of at least 1.
    fn positive(&self, key: &str) -> Result<u64, ConfigError> {
        match self.int(key)? {
            0 => Err(self.error_at(
                key,
                format!(
                    "{key}=0 allows nothing: write at least 1 (default {})",
                    default_of(key)
                ),
            )),
            n => Ok(u64::from(n)),
        }
    }

    /// `BUILD_REPS`: 1 to 20 builds of every row (each build of a large row can take minutes).
    fn build_reps(&self) -> Result<u32, ConfigError> {
        match self.positive("BUILD_REPS")? {
            n @ 1..=20 => Ok(u32::try_from(n).unwrap_or(20)),
            n => Err(self.error_at(
                "BUILD_REPS",
                format!("BUILD_REPS={n} builds every row {n} times: write at most 20"),
            )),
        }
    }

    /// `FETCH_TIMEOUT_S`: whole seconds from 1 to a day. A job's `timeout-minutes` is at
    /// least 45 (`cell-plan`), so the default of 10 minutes stops a trickling download with
    /// its own message, leaving the job time for its other URLs and its timing.
    fn fetch_timeout(&self) -> Result<u64, ConfigError> {
        match self.positive("FETCH_TIMEOUT_S")? {
            n @ 1..=86_400 => Ok(n),
            n => Err(self.error_at(
                "FETCH_TIMEOUT_S",
                format!("FETCH_TIMEOUT_S={n} lets a download run past a day: write at most 86400"),
            )),
        }
    }

    /// `on` or `off`, nothing else: a `yes` or a `1` would leave a reader guessing.
    fn switch(&self, key: &str) -> Result<bool, ConfigError> {
        match self.raw(key) {
            "on" => Ok(true),
            "off" => Ok(false),
            v => Err(self.error_at(key, format!("{key}={v}: write on or off"))),
        }
    }

    /// The exact lane's keys.
    fn exact(&self) -> Result<crate::exact::ExactLane, ConfigError> {
        use crate::exact::{CacheGeometry, CacheLevel, ExactLane};
        let level = |key: &str| {
            CacheLevel::parse(self.raw(key))
                .map_err(|why| self.error_at(key, format!("{key}={}: {why}", self.raw(key))))
        };
        let skip = self
            .raw("INSTRUCTIONS_SKIP")
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(|s| {
                if cell_schema::ids::is_safe_id(s) {
                    Ok(RowName::from(s))
                } else {
                    let shown: String = s.chars().take(64).flat_map(char::escape_default).collect();
                    Err(self.error_at(
                        "INSTRUCTIONS_SKIP",
                        format!("INSTRUCTIONS_SKIP names `{shown}`, which is no row name: write row names of letters, digits, `.`, `_`, `+` and `-`, comma-separated"),
                    ))
                }
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(ExactLane {
            on: self.switch("INSTRUCTIONS")?,
            cache: CacheGeometry {
                i1: level("CACHE_I1")?,
                d1: level("CACHE_D1")?,
                ll: level("CACHE_LL")?,
            },
            cycles_tolerance: self.num("CYCLES_TOLERANCE", 0.0, 1.0)?,
            skip,
            time_cap_s: self.seconds("INSTRUCTIONS_TIME_CAP_S", false)?,
            run_timeout_s: self.seconds("INSTRUCTIONS_RUN_TIMEOUT_S", false)?,
        })
    }

    /// The four `<PREFIX>_*` unpack caps, the floor within the ceiling.
    fn caps(&self, prefix: &str) -> Result<UnpackCaps, ConfigError> {
        let floor = format!("{prefix}_RATIO_FLOOR_MIB");
        let max = format!("{prefix}_MAX_MIB");
        let caps = UnpackCaps {
            max_ratio: self.positive(&format!("{prefix}_MAX_RATIO"))?,
            ratio_floor_bytes: self.positive(&floor)? << 20,
            max_bytes: self.positive(&max)? << 20,
            max_entries: self.positive(&format!("{prefix}_MAX_ENTRIES"))?,
        };
        if caps.ratio_floor_bytes > caps.max_bytes {
            return Err(self.error_at(
                &floor,
                format!(
                    "{floor}={} is above {max}={}: the floor must lie within the ceiling",
                    self.raw(&floor),
                    self.raw(&max)
                ),
            ));
        }
        Ok(caps)
    }

    /// A number strictly between `lo` and `hi`.
    fn num(&self, key: &str, lo: f64, hi: f64) -> Result<f64, ConfigError> {
        self.number(
            key,
            |x| x > lo && x < hi,
            &format!("it must lie strictly between {lo} and {hi}"),
        )
    }

    /// A finite number that `in_range` accepts; `range` says which numbers those are.
    fn number(
        &self,
        key: &str,
        in_range: impl Fn(f64) -> bool,
        range: &str,
    ) -> Result<f64, ConfigError> {
        let v = self.raw(key);
        match v.parse::<f64>() {
            Ok(x) if x.is_finite() && in_range(x) => Ok(x),
            Ok(_) => Err(self.error_at(key, format!("{key}={v} is out of range: {range}"))),
            Err(_) => Err(self.error_at(
                key,
                format!(
                    "{key}={v} is not a number: write e.g. {key}={}",
                    default_of(key)
                ),
            )),
        }
    }

    /// A verdict clock; `None` is `auto`: the clock `cell calibrate` measured quieter on
    /// this cell.
    fn clock(&self, key: &str) -> Result<Option<Clock>, ConfigError> {
        match self.raw(key) {
            "auto" => Ok(None),
            v => Clock::parse(v).map(Some).map_err(|_| {
                self.error_at(
                    key,
                    format!("{key}={v}: write {}", Clock::names_with(&["auto"])),
                )
            }),
        }
    }

    /// `PROTOCOL`; `None` is `auto`: the protocol `cell calibrate` measured quieter.
    fn protocol(&self) -> Result<Option<ProtocolMode>, ConfigError> {
        match self.raw("PROTOCOL") {
            "sequential" => Ok(Some(ProtocolMode::Sequential)),
            "duet" => Ok(Some(ProtocolMode::Duet)),
            "auto" => Ok(None),
            v => Err(self.error_at(
                "PROTOCOL",
                format!("PROTOCOL={v}: write sequential, duet or auto"),
            )),
        }
    }

    /// `FUTILITY_MARGIN`: 0, or at least 1 (below 1 it would stop intervals that can reach
    /// the target).
    fn futility_margin(&self) -> Result<f64, ConfigError> {
        let v = self.raw("FUTILITY_MARGIN");
        match v.parse::<f64>() {
            Ok(x) if x == 0.0 || (x.is_finite() && (1.0..=100.0).contains(&x)) => Ok(x),
            _ => Err(self.error_at(
                "FUTILITY_MARGIN",
                format!("FUTILITY_MARGIN={v}: write 0 (never stop early) or a number from 1 to 100, e.g. 1.25"),
            )),
        }
    }
}

/// The repetition counts of the timing protocol.
struct Counts {
    reps: u32,
    drop: u32,
    reps_max: u32,
    reps_step: u32,
    rows_per_reference: u32,
}

/// `REPS`, `DROP`, `REPS_MAX`, `REPS_STEP`, `ROWS_PER_REFERENCE`: at least two measured
/// repetitions, a budget no smaller than the start, steps and rows of 1 or more.
fn protocol_counts(keys: &Keys<'_>) -> Result<Counts, ConfigError> {
    let reps = keys.count("REPS", MAX_REPS)?;
    let drop = keys.count("DROP", MAX_REPS)?;
    if reps <= drop {
        let key = if keys.0.get("REPS").is_some() {
            "REPS"
        } else {
            "DROP"
        };
        return Err(keys.error_at(
            key,
            format!("REPS={reps} with DROP={drop} leaves no measured repetition: REPS must exceed DROP (e.g. REPS={} for DROP={drop})", drop + 10),
        ));
    }
    if reps - drop < 2 {
        return Err(keys.error_at("REPS", format!("REPS={reps} with DROP={drop} measures one repetition, which has no spread: measure at least 2")));
    }
    let reps_max = keys.count("REPS_MAX", MAX_REPS)?;
    if reps_max < reps {
        return Err(keys.error_at(
            "REPS_MAX",
            format!("REPS_MAX={reps_max} is below REPS={reps}: write REPS_MAX={reps} or more"),
        ));
    }
    let reps_step = keys.count("REPS_STEP", MAX_REPS)?;
    if reps_step == 0 {
        return Err(keys.error_at(
            "REPS_STEP",
            "REPS_STEP=0 never adds a repetition: write 1 or more".into(),
        ));
    }
    let rows_per_reference = keys.count("ROWS_PER_REFERENCE", MAX_ROWS_PER_REFERENCE)?;
    if rows_per_reference == 0 {
        return Err(keys.error_at(
            "ROWS_PER_REFERENCE",
            "ROWS_PER_REFERENCE must be 1 or more".into(),
        ));
    }
    Ok(Counts {
        reps,
        drop,
        reps_max,
        reps_step,
        rows_per_reference,
    })
}

/// `PHASES` (not empty, no phase twice) and `TOOTH_PHASE`, one of them.
fn phases(keys: &Keys<'_>) -> Result<(Vec<Phase>, Phase), ConfigError> {
    let phases: Vec<Phase> = keys
        .raw("PHASES")
        .split(',')
        .filter(|p| !p.is_empty())
        .map(Phase::from)
        .collect();
    if phases.is_empty() {
        return Err(keys.error_at(
            "PHASES",
            "PHASES is empty: list the phases, e.g. PHASES=mix,primes,fib".into(),
        ));
    }
    for (i, p) in phases.iter().enumerate() {
        if phases[..i].contains(p) {
            return Err(keys.error_at("PHASES", format!("phase `{p}` is listed twice")));
        }
    }
    let tooth_phase = Phase::from(keys.raw("TOOTH_PHASE"));
    if !phases.contains(&tooth_phase) {
        return Err(keys.error_at(
            "TOOTH_PHASE",
            format!(
                "TOOTH_PHASE={tooth_phase} is not one of PHASES ({})",
                keys.raw("PHASES")
            ),
        ));
    }
    Ok((phases, tooth_phase))
}

/// `TOOTH_MIN_<ARCH>` and `CLOCK_<OS>`, architecture and OS lower-cased.
struct Overrides {
    tooth_min_arch: Vec<(String, f64)>,
    clock_os: Vec<(String, Option<Clock>)>,
}

/// The per-architecture tooth floors and per-OS clocks `versions.env` sets, in key order.
fn overrides(keys: &Keys<'_>) -> Result<Overrides, ConfigError> {
    let mut tooth_min_arch = Vec::new();
    let mut clock_os = Vec::new();
    for key in keys.0.entries.keys() {
        if let Some(arch) = key.strip_prefix("TOOTH_MIN_") {
            tooth_min_arch.push((
                arch.to_ascii_lowercase(),
                keys.num(key, 1.0, f64::INFINITY)?,
            ));
        } else if let Some(os) = key.strip_prefix("CLOCK_") {
            clock_os.push((os.to_ascii_lowercase(), keys.clock(key)?));
        }
    }
    Ok(Overrides {
        tooth_min_arch,
        clock_os,
    })
}

/// The numeric thresholds of the gate, the budget and the suites.
struct Thresholds {
    tolerance: f64,
    ci_target: f64,
    ci_level: f64,
    health_threshold: f64,
    contention_max: f64,
    time_cap_s: f64,
    run_timeout_s: f64,
    cpu_wait_s: f64,
    build_timeout_s: f64,
    http_tolerance: f64,
    http_load_cpu_max: f64,
    http_other_cpu_max: f64,
}

/// Every threshold, each within its range.
fn thresholds(keys: &Keys<'_>) -> Result<Thresholds, ConfigError> {
    Ok(Thresholds {
        tolerance: keys.num("TOLERANCE", 0.0, 1.0)?,
        ci_target: keys.num("CI_TARGET", 0.0, 1.0)?,
        ci_level: keys.num("CI_LEVEL", 0.5, 1.0)?,
        health_threshold: keys.num("HEALTH_THRESHOLD", 0.0, f64::INFINITY)?,
        contention_max: keys.num("CONTENTION_MAX", 1.0, f64::INFINITY)?,
        time_cap_s: keys.seconds("TIME_CAP_S", false)?,
        run_timeout_s: keys.seconds("RUN_TIMEOUT_S", false)?,
        cpu_wait_s: keys.seconds("CPU_WAIT_S", true)?,
        build_timeout_s: keys.seconds("BUILD_TIMEOUT_S", false)?,
        http_tolerance: keys.num("HTTP_TOLERANCE", 0.0, 10.0)?,
        // 1 itself is allowed: the upper bound is open, so it sits just above 1.
        http_load_cpu_max: keys.num("HTTP_LOAD_CPU_MAX", 0.0, 1.0 + 1e-9)?,
        http_other_cpu_max: keys.num("HTTP_OTHER_CPU_MAX", 0.0, 1.0)?,
    })
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
    fn cpu_wait_takes_zero_and_refuses_negatives() {
        assert!((settings("").unwrap().cpu_wait_s - 900.0).abs() < 1e-12);
        assert!((Settings::default().cpu_wait_s - 900.0).abs() < 1e-12);
        assert!(settings("CPU_WAIT_S=0\n").unwrap().cpu_wait_s.abs() < 1e-12);
        assert!((settings("CPU_WAIT_S=2.5\n").unwrap().cpu_wait_s - 2.5).abs() < 1e-12);
        let e = settings("CPU_WAIT_S=-1\n").unwrap_err();
        assert!(
            e.starts_with("versions.env:1: CPU_WAIT_S=-1 is out of range: it must be 0 or more"),
            "{e}"
        );
        let e = settings("CPU_WAIT_S=inf\n").unwrap_err();
        assert!(e.contains("CPU_WAIT_S=inf is out of range"), "{e}");
        let e = settings("CPU_WAIT_S=soon\n").unwrap_err();
        assert!(
            e.contains("CPU_WAIT_S=soon is not a number: write e.g. CPU_WAIT_S=900"),
            "{e}"
        );
    }

    #[test]
    fn a_wait_or_count_past_what_a_job_can_use_is_refused_naming_key_and_line() {
        // `CPU_WAIT_S=99999999999999` was accepted; past u64 seconds a `Duration` panics.
        let e = settings("# waits\nCPU_WAIT_S=99999999999999\n").unwrap_err();
        assert!(
            e.starts_with("versions.env:2: CPU_WAIT_S=99999999999999 is out of range: it must be 0 or more, and at most 86400 (a day)"),
            "{e}"
        );
        assert!((settings("CPU_WAIT_S=86400\n").unwrap().cpu_wait_s - MAX_SECONDS).abs() < 1e-9);
        for key in ["TIME_CAP_S", "RUN_TIMEOUT_S", "BUILD_TIMEOUT_S"] {
            let e = settings(&format!("{key}=86401\n")).unwrap_err();
            assert!(
                e.starts_with(&format!("versions.env:1: {key}=86401 is out of range: it must be more than 0, and at most 86400")),
                "{e}"
            );
            let e = settings(&format!("{key}=1e300\n")).unwrap_err();
            assert!(e.contains("is out of range"), "{e}");
            assert!(settings(&format!("{key}=86400\n")).is_ok(), "{key}");
        }
        let e = settings("REPS_MAX=4000000000\n").unwrap_err();
        assert!(
            e.starts_with("versions.env:1: REPS_MAX=4000000000 is out of range: write at most 100000 (default 31)"),
            "{e}"
        );
        for key in ["REPS", "DROP", "REPS_STEP"] {
            let e = settings(&format!("{key}=100001\n")).unwrap_err();
            assert!(
                e.starts_with(&format!(
                    "versions.env:1: {key}=100001 is out of range: write at most 100000"
                )),
                "{e}"
            );
        }
        assert_eq!(
            settings("REPS=100000\nREPS_MAX=100000\n").unwrap().reps_max,
            MAX_REPS
        );
        let e = settings("ROWS_PER_REFERENCE=1001\n").unwrap_err();
        assert!(
            e.contains("ROWS_PER_REFERENCE=1001 is out of range: write at most 1000"),
            "{e}"
        );
    }

    #[test]
    fn fetch_timeout_is_whole_seconds_from_one_to_a_day() {
        assert_eq!(settings("").unwrap().fetch_timeout_s, 600);
        assert_eq!(settings("FETCH_TIMEOUT_S=2\n").unwrap().fetch_timeout_s, 2);
        for (bad, says) in [
            ("0", "FETCH_TIMEOUT_S=0 allows nothing"),
            ("86401", "write at most 86400"),
            ("1.5", "is not a whole number"),
        ] {
            let e = settings(&format!("FETCH_TIMEOUT_S={bad}\n")).unwrap_err();
            assert!(e.starts_with("versions.env:1: ") && e.contains(says), "{e}");
        }
    }

    #[test]
    fn build_reps_is_at_least_one() {
        assert_eq!(settings("").unwrap().build_reps, 3);
        assert_eq!(settings("BUILD_REPS=1\n").unwrap().build_reps, 1);
        let e = settings("BUILD_REPS=0\n").unwrap_err();
        assert!(
            e.starts_with("versions.env:1: BUILD_REPS=0 allows nothing: write at least 1"),
            "{e}"
        );
        let e = settings("BUILD_REPS=21\n").unwrap_err();
        assert!(e.contains("write at most 20"), "{e}");
        let e = settings("BUILD_REPS=two\n").unwrap_err();
        assert!(e.contains("BUILD_REPS=two is not a whole number"), "{e}");
    }

    #[test]
    fn the_exact_lane_is_on_unless_switched_off() {
        let lane = settings("").unwrap().exact;
        assert!(lane.on);
        assert_eq!(
            lane.cache.options(),
            ["--I1=32768,8,64", "--D1=32768,8,64", "--LL=8388608,16,64"]
        );
        assert!((lane.cycles_tolerance - 0.005).abs() < 1e-12);
        assert!(lane.skip.is_empty());
        assert!(!settings("INSTRUCTIONS=off\n").unwrap().exact.on);
        let e = settings("\nINSTRUCTIONS=yes\n").unwrap_err();
        assert!(
            e.starts_with("versions.env:2: INSTRUCTIONS=yes: write on or off"),
            "{e}"
        );
        let skip = settings("INSTRUCTIONS_SKIP=c-O0,gcc-O0,\n")
            .unwrap()
            .exact
            .skip;
        assert_eq!(skip, [RowName::from("c-O0"), RowName::from("gcc-O0")]);
    }

    #[test]
    fn a_cache_geometry_valgrind_would_refuse_or_a_typo_is_refused_at_its_line() {
        for (bad, says) in [
            ("32768,8", "is not size,associativity,line"),
            ("32768,8,64,1", "is not size,associativity,line"),
            ("30000,8,64", "size `30000` is not a power of two"),
            ("32768,6,64", "associativity `6` is not a power of two"),
            ("32768,8,8", "line of 8 bytes is outside 32 to 512"),
            ("32768,8,16", "line of 16 bytes is outside 32 to 512"),
            ("64,1,64", "size 64 is not larger than its line of 64 bytes"),
            ("256,8,64", "holds less than one set"),
            ("2147483648,8,64", "is above 1073741824 bytes"),
            ("+32768,8,64", "size `+32768` is not a power of two"),
            ("0,8,64", "size `0` is not a power of two"),
            ("32768,08x,64", "associativity `08x` is not a power of two"),
        ] {
            let e = settings(&format!("\nCACHE_D1={bad}\n")).unwrap_err();
            assert!(
                e.starts_with(&format!("versions.env:2: CACHE_D1={bad}: ")) && e.contains(says),
                "{bad}: {e}"
            );
        }
        let e = settings("INSTRUCTIONS_SKIP=c-O0,a/b\n").unwrap_err();
        assert!(
            e.contains("INSTRUCTIONS_SKIP names `a/b`, which is no row name"),
            "{e}"
        );
        let e = settings("CYCLES_TOLERANCE=0\n").unwrap_err();
        assert!(e.contains("CYCLES_TOLERANCE=0 is out of range"), "{e}");
        let short = settings("TIME_CAP_S=300\n").unwrap();
        assert!((short.exact.time_cap_s - 300.0).abs() < 1e-9);
        let e = settings("TIME_CAP_S=300\nINSTRUCTIONS_TIME_CAP_S=301\n").unwrap_err();
        assert!(
            e.starts_with("versions.env:2: INSTRUCTIONS_TIME_CAP_S=301")
                && e.contains("longer than the job's TIME_CAP_S=300"),
            "{e}"
        );
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
    fn a_bad_per_arch_floor_is_an_error_naming_its_line() {
        // It panicked: the message quoted a default the per-arch key does not have.
        let e = settings("TOOTH_MIN_X86_64=abc\n").unwrap_err();
        assert!(
            e.starts_with("versions.env:1: TOOTH_MIN_X86_64=abc is not a number: write e.g. TOOTH_MIN_X86_64=1.5"),
            "{e}"
        );
        let e = settings("CLOCK_LINUX=fast\n").unwrap_err();
        assert!(e.starts_with("versions.env:1: CLOCK_LINUX=fast"), "{e}");
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

    #[test]
    fn unpack_caps_are_read_in_mib_with_the_floor_within_the_ceiling() {
        let s = settings("UNPACK_MAX_RATIO=5\nARTIFACT_MAX_MIB=32\n").unwrap();
        assert_eq!(s.unpack.max_ratio, 5);
        assert_eq!(s.unpack.ratio_floor_bytes, 64 << 20);
        assert_eq!(s.artifact_unpack.max_bytes, 32 << 20);
        assert_eq!(s.artifact_unpack.max_entries, 64);
        let e = settings("ARTIFACT_RATIO_FLOOR_MIB=64\nARTIFACT_MAX_MIB=32\n").unwrap_err();
        assert!(
            e.starts_with(
                "versions.env:1: ARTIFACT_RATIO_FLOOR_MIB=64 is above ARTIFACT_MAX_MIB=32"
            ),
            "{e}"
        );
        let e = settings("\nUNPACK_MAX_ENTRIES=0\n").unwrap_err();
        assert!(
            e.starts_with("versions.env:2: UNPACK_MAX_ENTRIES=0 allows nothing"),
            "{e}"
        );
    }
}
