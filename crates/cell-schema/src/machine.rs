//! Where a job ran: the cell, the machine (never its hostname), the CPUs it timed on, and the
//! `facts.json` a job writes beside its results.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::{
    CellId, CellLabel, Installed, JobResult, SCHEMA_VERSION, Subject, ToolName, ToolVersion,
    ToolchainName, ids,
};

/// Marks a facts file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FactsKind {
    /// `"facts"`
    Facts,
}

/// The cell a job ran in.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CellInfo {
    /// `<os>-<arch>-<label>`.
    pub id: CellId,
    /// The runner label.
    pub label: CellLabel,
    /// `linux`, `macos`, `windows`.
    pub os: String,
    /// `x86_64`, `aarch64`.
    pub arch: String,
}

impl CellInfo {
    /// The cell an id names (`<os>-<arch>-<label>`), for a cell known only by its id: one
    /// whose every job left no result.
    pub fn of_id(id: &CellId) -> Option<Self> {
        let mut parts = id.as_str().splitn(3, '-');
        let (os, arch, label) = (parts.next()?, parts.next()?, parts.next()?);
        if !ids::is_safe_id(label) {
            return None;
        }
        Some(Self {
            id: id.clone(),
            label: CellLabel::new(label),
            os: os.to_owned(),
            arch: arch.to_owned(),
        })
    }
}

/// Facts about the machine a job ran on; never its hostname.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Machine {
    /// CPU model as the OS names it (or implementer/part on arm64 Linux).
    pub cpu_model: String,
    /// Logical CPUs available to the job.
    pub nproc: u32,
    /// Physical memory in bytes.
    pub memory_bytes: u64,
    /// Kernel name, release, version and machine (no hostname).
    pub kernel: String,
    /// The OS release (`PRETTY_NAME` of `/etc/os-release`, or `sw_vers`).
    pub os_release: String,
    /// The hosted runner image, when the job ran on one.
    pub runner_image: Option<RunnerImage>,
    /// The CPU the timed processes were pinned to, when pinning took effect.
    pub pinned_cpu: Option<u32>,
    /// The CPUs the job timed on and how it came by them (the CPU lock); absent in files
    /// written before the lock, and where nothing was pinned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timing: Option<TimingCpus>,
}

/// The CPUs a job timed on: each one locked (`<dir>/cpu<N>.lock`) so that two `cell`
/// processes on one machine never time on the same CPU.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TimingCpus {
    /// The CPUs, in the order the engine uses them (the first is `pinned_cpu`).
    pub cpus: Vec<u32>,
    /// Seconds spent waiting for their locks.
    pub waited_s: f64,
    /// cpu0 is among them: it comes last in the order, as it takes most interrupts.
    pub last_resort: bool,
    /// At least one of them was timed on without its lock (the wait ran out, or the lock
    /// dir could not be used): another process may have timed on it too.
    pub shared: bool,
    /// Why no lock could be taken at all, when the lock dir could not be used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lock_error: Option<String>,
}

/// `ImageOS` and `ImageVersion` of a hosted runner.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RunnerImage {
    /// `ImageOS`, e.g. `ubuntu24`.
    pub os: String,
    /// `ImageVersion`, e.g. `20250105.1.0`.
    pub version: String,
}

/// What a job's `facts.json` holds: the machine and the tools, nothing timed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Facts {
    /// Always [`SCHEMA_VERSION`] when written by this build.
    #[serde(serialize_with = "crate::write::current_version")]
    pub schema_version: u32,
    /// `"facts"`.
    pub kind: FactsKind,
    /// Where it ran: the cell id, runner label, OS and architecture.
    pub cell: CellInfo,
    /// The toolchain of the job.
    pub toolchain: ToolchainName,
    /// The machine it ran on (CPU, memory, kernel, OS, runner image; never a hostname).
    pub machine: Machine,
    /// Pins as written.
    pub pins: BTreeMap<String, String>,
    /// Tool versions as printed.
    pub versions: BTreeMap<ToolName, ToolVersion>,
    /// The release under test, if any.
    pub subject: Option<Subject>,
    /// Installed sizes of the toolchains the job used.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub installed: BTreeMap<ToolchainName, Installed>,
}

impl JobResult {
    /// The facts part of a job result.
    pub fn facts(&self) -> Facts {
        Facts {
            schema_version: SCHEMA_VERSION,
            kind: FactsKind::Facts,
            cell: self.cell.clone(),
            toolchain: self.toolchain.clone(),
            machine: self.machine.clone(),
            pins: self.pins.clone(),
            versions: self.versions.clone(),
            subject: self.subject.clone(),
            installed: self.installed.clone(),
        }
    }
}
