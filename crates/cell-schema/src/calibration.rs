//! `cell/calibration/<cell-id>.json`: the A/A noise `cell calibrate` measured on a machine.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[cfg(doc)]
use crate::SCHEMA_VERSION;
use crate::{CellInfo, Clock, Machine, Phase, ProtocolMode, RatioCi};

/// Marks a calibration file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CalibrationKind {
    /// `"calibration"`
    Calibration,
}

/// The A/A noise of one clock on one phase.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Noise {
    /// The control's ratio (median of per-round ratios) with its CI.
    pub ratio: RatioCi,
    /// Half the CI's width, as a fraction: the smallest change this machine can call.
    pub half_width: f64,
    /// MAD of the per-round ratios, as a fraction.
    pub mad: f64,
}

/// `cell/calibration/<cell-id>.json`: what `cell calibrate` measured on a machine.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Calibration {
    /// Always [`SCHEMA_VERSION`] when written by this build.
    #[serde(serialize_with = "crate::write::current_version")]
    pub schema_version: u32,
    /// `"calibration"`.
    pub kind: CalibrationKind,
    /// Where it ran: the cell id, runner label, OS and architecture.
    pub cell: CellInfo,
    /// The machine it ran on (CPU, memory, kernel, OS, runner image; never a hostname).
    pub machine: Machine,
    /// When, UTC.
    pub measured_at: String,
    /// Measured rounds of reference against control.
    pub rounds: u32,
    /// Seed of the order.
    pub seed: u64,
    /// Per phase, per clock (`cpu`, `wall`).
    pub phases: BTreeMap<Phase, BTreeMap<Clock, Noise>>,
    /// The clock with the smaller A/A noise over all phases.
    pub quieter_clock: Clock,
    /// The same A/A noise under the duet protocol, when the machine has two CPUs to time on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duet: Option<BTreeMap<Phase, BTreeMap<Clock, Noise>>>,
    /// The protocol with the smaller A/A noise on the quieter clock over all phases: what
    /// `PROTOCOL=auto` runs on this cell. Absent in older files (sequential).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quieter_protocol: Option<ProtocolMode>,
}
