//! The exact lane's settings (`INSTRUCTIONS`, `CACHE_I1`, `CACHE_D1`, `CACHE_LL`,
//! `CYCLES_TOLERANCE`, `INSTRUCTIONS_*`): every timed row but the control run under
//! cachegrind with a cache geometry pinned here, so the estimate is the same on every runner
//! and follows no host's caches.

use std::fmt;

use cell_schema::RowName;

/// One simulated cache: `size,associativity,line` in bytes, ways and bytes, as valgrind's
/// `--I1`, `--D1` and `--LL` take it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CacheLevel {
    /// Bytes in all.
    pub size: u64,
    /// Ways.
    pub assoc: u64,
    /// Bytes a line.
    pub line: u64,
}

/// The largest cache a key may describe: 1 GiB, far beyond any last level made.
pub const CACHE_MAX_BYTES: u64 = 1 << 30;

impl CacheLevel {
    /// Reads `size,associativity,line`: three whole numbers, each a power of two, the line
    /// 32 to 512 bytes and below the size, the sets (`size / (associativity · line)`) at least one. valgrind
    /// itself refuses a geometry whose sets are no power of two; the rest keeps a typo (a
    /// 32 MiB first level) from reading as a cache.
    pub fn parse(v: &str) -> Result<Self, String> {
        let parts: Vec<&str> = v.split(',').collect();
        let [size, assoc, line] = parts[..] else {
            return Err(format!(
                "`{v}` is not size,associativity,line: write e.g. 32768,8,64"
            ));
        };
        let num = |s: &str, what: &str| -> Result<u64, String> {
            let n = s
                .parse::<u64>()
                .ok()
                .filter(|n| s.bytes().all(|b| b.is_ascii_digit()) && *n > 0);
            match n {
                Some(n) if n.is_power_of_two() => Ok(n),
                _ => Err(format!(
                    "its {what} `{s}` is not a power of two: write e.g. 32768,8,64"
                )),
            }
        };
        let level = Self {
            size: num(size, "size")?,
            assoc: num(assoc, "associativity")?,
            line: num(line, "line size")?,
        };
        // valgrind refuses a line narrower than the host's widest vector register (32 bytes
        // with AVX), and a cache no larger than one line.
        if !(32..=512).contains(&level.line) {
            return Err(format!(
                "its line of {} bytes is outside 32 to 512 (valgrind refuses a line narrower than an AVX register)",
                level.line
            ));
        }
        if level.size <= level.line {
            return Err(format!(
                "its size {} is not larger than its line of {} bytes (valgrind refuses it)",
                level.size, level.line
            ));
        }
        if level.size > CACHE_MAX_BYTES {
            return Err(format!(
                "its size {} is above {CACHE_MAX_BYTES} bytes",
                level.size
            ));
        }
        if level.size < level.assoc.saturating_mul(level.line) {
            return Err(format!(
                "its size {} holds less than one set of {} ways of {} bytes",
                level.size, level.assoc, level.line
            ));
        }
        Ok(level)
    }
}

impl fmt::Display for CacheLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{},{},{}", self.size, self.assoc, self.line)
    }
}

/// The three simulated caches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CacheGeometry {
    /// First-level instruction cache (`CACHE_I1`).
    pub i1: CacheLevel,
    /// First-level data cache (`CACHE_D1`).
    pub d1: CacheLevel,
    /// Last-level cache (`CACHE_LL`).
    pub ll: CacheLevel,
}

impl CacheGeometry {
    /// valgrind's options for it, in this order.
    pub fn options(&self) -> [String; 3] {
        [
            format!("--I1={}", self.i1),
            format!("--D1={}", self.d1),
            format!("--LL={}", self.ll),
        ]
    }
}

/// How the exact lane runs.
#[derive(Clone, Debug, PartialEq)]
pub struct ExactLane {
    /// `INSTRUCTIONS=on` (the default): the lane runs after timing, on Linux cells.
    pub on: bool,
    /// The pinned cache geometry.
    pub cache: CacheGeometry,
    /// `CYCLES_TOLERANCE`: how far a row's estimated cycles, as a ratio to the reference's,
    /// may move against the baseline's before the code verdict calls it.
    pub cycles_tolerance: f64,
    /// `INSTRUCTIONS_SKIP`: rows the lane leaves out (a debug build that takes minutes).
    pub skip: Vec<RowName>,
    /// `INSTRUCTIONS_TIME_CAP_S`: the lane's own cap; rows not reached by then are skipped
    /// with the reason.
    pub time_cap_s: f64,
    /// `INSTRUCTIONS_RUN_TIMEOUT_S`: how long one run under valgrind may take.
    pub run_timeout_s: f64,
}
