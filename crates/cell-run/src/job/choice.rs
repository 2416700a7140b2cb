//! What a job chooses when `versions.env` leaves it to the job: the protocol for
//! `PROTOCOL=auto` (or when a duet cannot run) and the clock for `CLOCK=auto`.

use super::{CalibrationFile, Cell, Clock, Plan, auto_mode};

/// The protocol a job times with: `PROTOCOL`, or for `auto` the one the cell's calibration
/// found quieter, else sequential; a duet needs two CPUs to time on. With the reason, when
/// the protocol is not simply the one `PROTOCOL` named.
pub(crate) fn resolve_mode(
    plan: &Plan,
    cell: &Cell,
    cpus: usize,
) -> (cell_schema::ProtocolMode, Option<String>) {
    use cell_schema::ProtocolMode;
    let (wanted, why) = match plan.settings.protocol {
        Some(m) => (m, None),
        None => auto_mode(plan, cell),
    };
    if wanted == ProtocolMode::Duet && cpus < 2 {
        return (
            ProtocolMode::Sequential,
            Some(format!(
                "duet needs two CPUs to time on and this job has {cpus}: sequential"
            )),
        );
    }
    (wanted, why)
}

/// `CLOCK=auto`: the clock `cell calibrate` found quieter on this cell, else CPU time (no
/// calibration, or one that is ignored); with why, as the job records it.
pub(super) fn calibrated_clock(plan: &Plan, cell: &Cell) -> (Clock, Option<String>) {
    let (clock, why) = match cell_verdict::calibration_of(plan, &cell.id()) {
        CalibrationFile::Usable(c) => (
            c.quieter_clock,
            "the quieter in this cell's calibration".to_owned(),
        ),
        CalibrationFile::Absent => (Clock::Cpu, "no calibration for this cell".to_owned()),
        CalibrationFile::Ignored(notice) => (Clock::Cpu, notice),
    };
    (clock, Some(format!("CLOCK=auto: {}, {why}", clock.name())))
}
