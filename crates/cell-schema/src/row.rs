//! One row of a job: its part, how its binary was built, its runs and figures on each phase,
//! the instruction lane's counts, and the rows that were not timed.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::{Clock, ClockStats, Phase, Ratios, RowName, Samples, Sha256, ToolchainName, samples};

/// The part a row plays in a job.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// The row every ratio divides by.
    Reference,
    /// A byte-identical copy of the reference: the A/A control.
    Control,
    /// A row of the job's toolchain.
    Row,
    /// The tooth's slow row, timed on the tooth phase only.
    Tooth,
    /// A row of the release under test built by the release the baseline run recorded, timed
    /// in the same rounds as the row it is named after (`<row>.prev`).
    Previous,
}

/// The suffix of a row built by the previous release: `<row>.prev`.
pub const PREVIOUS_SUFFIX: &str = ".prev";

impl Role {
    /// The row a `<row>.prev` row was built from, when `name` has the suffix.
    pub fn previous_of(name: &RowName) -> Option<RowName> {
        name.as_str()
            .strip_suffix(PREVIOUS_SUFFIX)
            .filter(|b| !b.is_empty())
            .map(RowName::from)
    }
}

/// How one row's binary was built.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Build {
    /// The build command (absolute paths), or how the control copy was made.
    pub argv: Vec<String>,
    /// Working directory of the build.
    pub cwd: String,
    /// Wall seconds the build took: the median of `compile_runs_s` when the row was built
    /// more than once (`BUILD_REPS`).
    pub compile_s: f64,
    /// Wall seconds of every build of the row, in the order they ran. Absent in files written
    /// before builds were repeated, and for the control, which is a copy.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub compile_runs_s: Vec<f64>,
    /// The binary (absolute path): what the last build wrote.
    pub binary: String,
    /// Its size in bytes.
    pub binary_bytes: u64,
    /// Bytes of its executable code section (ELF `.text`, Mach-O `__TEXT,__text`, PE
    /// `.text`), read from its headers. Absent when the format could not be read, and in
    /// files written before it was measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text_bytes: Option<u64>,
    /// Its SHA-256.
    pub sha256: Sha256,
    /// Whether every build wrote a binary of the same SHA-256: `false` is a compiler whose
    /// output is not reproducible (the binary timed is the last one). Absent with one build.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reproducible: Option<bool>,
}

/// One timed process run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Run {
    /// Round number; round 0 (and any before `warmup_rounds`) is warm-up.
    pub round: u32,
    /// Position in the round's order.
    pub seq: u32,
    /// Excluded from statistics.
    pub warmup: bool,
    /// Wall seconds, spawn to reap.
    pub wall_s: f64,
    /// CPU seconds, user + system.
    pub cpu_s: f64,
    /// User CPU seconds (absent in files written before they were recorded apart).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_s: Option<f64>,
    /// System CPU seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sys_s: Option<f64>,
    /// Seconds the hypervisor stole from the CPUs it ran on (`/proc/stat`), where the kernel
    /// reports it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steal_s: Option<f64>,
    /// Peak resident set, KiB.
    pub maxrss_kib: u64,
    /// Its stdout equalled the expected answer and it exited 0.
    pub ok: bool,
    /// Position (`seq`) of the reference run this run's ratio pairs with.
    pub paired_with: Option<u32>,
}

/// One row on one phase.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PhaseResult {
    /// The expected stdout.
    pub expected: String,
    /// Every run printed the expected answer and exited 0.
    pub answer_ok: bool,
    /// What a wrong run printed first (or how it exited), when one did: of a long answer,
    /// only its start. Absent when every run was right (version 1 wrote `null`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wrong: Option<String>,
    /// How much that wrong run printed on stdout and its digest, when it exited 0 with a
    /// wrong answer: the whole answer is never kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub printed: Option<Printed>,
    /// Every run, warm-up included: written as columns (`samples`, one line per field),
    /// read from those or from version 1's list of run objects (`runs`).
    #[serde(rename = "samples", alias = "runs", with = "samples::runs")]
    #[schemars(with = "Samples")]
    pub runs: Vec<Run>,
    /// Statistics over the measured runs (none when no run was measured).
    pub stats: Option<ClockStats>,
    /// Ratio to the reference (none when no pair was measured).
    pub ratio: Option<Ratios>,
    /// Median wall/cpu of the measured runs.
    pub contention: Option<f64>,
    /// Instructions executed (cachegrind's `Ir`) by one run under valgrind, when the job ran
    /// the instruction lane (`INSTRUCTIONS=on`) and it counted this phase: a tripwire for a
    /// change of the generated code, never compared across toolchains.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<u64>,
    /// Estimated cycles of the same run under cachegrind's cache simulation, on the cache
    /// geometry the lane records: `L1 hits + 5 · LL hits + 35 · RAM accesses`
    /// (docs/protocol.md, "The exact lane"). The code verdict reads it as a ratio to the
    /// reference's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub estimated_cycles: Option<u64>,
    /// How many runs under cachegrind the lane took of this row and phase (1; 2 of the row's
    /// cheapest phase; 3 of every phase when those two differed) and the relative spread of
    /// their estimated cycles, `(max − min) / min`: 0 for a deterministic program.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exact_repeat: Option<ExactRepeat>,
    /// Why this row's rounds on this phase stopped: each row and phase goes on on its own
    /// while more rounds can change its verdict. Absent in files written before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<UnitStop>,
}

/// The repeated runs of one row and phase in the exact lane.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ExactRepeat {
    /// Runs under cachegrind.
    pub runs: u32,
    /// `(max − min) / min` of their estimated cycles: 0 when every run counted the same.
    pub spread: f64,
}

/// Why one row's rounds on one phase stopped.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct UnitStop {
    /// Why.
    pub reason: crate::Stopped,
    /// Its measured rounds.
    pub rounds: u32,
    /// Its interval's relative half-width when it stopped: its own ratio's, or, against the
    /// baseline, the change's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub half_width: Option<f64>,
    /// The half-width projected at `REPS_MAX`, when it stopped by futility.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub projected: Option<f64>,
    /// It was judged against the baseline's per-round ratios (`protocol.baseline`), not
    /// against `CI_TARGET`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub against_baseline: bool,
}

/// The size and digest of what a run printed, kept in place of the bytes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Printed {
    /// Bytes printed.
    pub bytes: u64,
    /// SHA-256 of every byte printed.
    pub sha256: Sha256,
}

/// One row of a job.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RowResult {
    /// How the report names it (`clang -O2`).
    pub label: String,
    /// The toolchain the row belongs to.
    pub toolchain: ToolchainName,
    /// Its part in the job.
    pub role: Role,
    /// The clock its verdict reads.
    pub verdict_clock: Clock,
    /// How its binary was made.
    pub build: Build,
    /// Its runs and figures on each phase it was timed on.
    pub phases: BTreeMap<Phase, PhaseResult>,
    /// Why the instruction lane counted this row on none or only some of its phases (an
    /// instruction valgrind does not know, a wrong answer under valgrind, a timeout); absent
    /// when it counted every phase or did not run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions_skipped: Option<String>,
}

/// The instruction lane of a job (`INSTRUCTIONS=on`): every timed row but the control run once
/// per phase under valgrind's cachegrind, its instruction count recorded per phase
/// ([`PhaseResult::instructions`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct InstructionLane {
    /// The valgrind that ran (absolute path), when one was found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub valgrind: Option<String>,
    /// What `valgrind --version` printed, trimmed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// The command every count was taken with: valgrind and its options, then
    /// `<the row's argv>`, the argv its timed runs use on that phase.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub argv: Vec<String>,
    /// Seconds one run under valgrind could take before it was killed.
    pub timeout_s: f64,
    /// Wall seconds the lane took in all.
    pub seconds: f64,
    /// The simulated caches every count was taken on (`CACHE_I1`, `CACHE_D1`, `CACHE_LL`),
    /// the same on every runner; absent in files of the instructions-only lane.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<CacheRecord>,
    /// Bytes of the environment every run under valgrind was given (names, values and their
    /// separators): a program's start-up copies it, so a larger one costs some hundreds of
    /// instructions — recorded so a count's change of that size can be told apart.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env_bytes: Option<u64>,
    /// Rows left out, each with why (`INSTRUCTIONS_SKIP`, the lane's time cap).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rows_skipped: Vec<String>,
    /// Why the lane did not run in this job at all (valgrind not found, not a Linux cell).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
}

/// The cache geometry of the exact lane, as valgrind's options spell it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CacheRecord {
    /// `--I1`: size,associativity,line.
    pub i1: String,
    /// `--D1`.
    pub d1: String,
    /// `--LL`.
    pub ll: String,
}

/// Why a row was not timed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SkipReason {
    /// A tool it needs is not on this machine.
    NotInstalled,
    /// Its build command failed.
    BuildFailed,
}

/// A row that was not timed, and why.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Skipped {
    /// The row that was not timed.
    pub row: RowName,
    /// The toolchain it belongs to.
    pub toolchain: ToolchainName,
    /// Not installed, or its build failed.
    pub reason: SkipReason,
    /// One line a person can act on.
    pub message: String,
    /// Exit code of a failed build.
    pub exit_code: Option<i32>,
    /// The last lines the failed build printed.
    pub log_tail: Vec<String>,
}
