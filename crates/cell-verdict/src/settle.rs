//! What a job's adaptive budget judges each unit against: the baseline the gate will use
//! (docs/protocol.md, "Rounds go where they change a verdict"). The run is chosen by the
//! gate's own rule ([`crate::gate`]'s `baseline`: a pinned `BASELINE`, else the newest
//! measured run of the cell), its figures recomputed from its samples, and a row is compared
//! only where the gate would compare it: the same protocol, and a baseline control that
//! vouches for the phase.

use std::collections::BTreeMap;
use std::path::Path;

use cell_schema::store::{HistoryIndex, RunDirName};
use cell_schema::{CellId, CellResult, Clock, Phase, ProtocolMode, RowName, ToolchainName};

use crate::GateConfig;
use crate::control::{PhaseControl, blocked, of_cell_job};
use crate::gate::{Baseline, baseline};

/// The baseline of a job's cell, read before the job times anything.
#[derive(Clone, Debug)]
pub struct JobBaseline {
    /// The run, `<date>-<run-id>`.
    pub run: String,
    cell: CellResult,
    controls: BTreeMap<ToolchainName, Vec<PhaseControl>>,
}

impl JobBaseline {
    /// The baseline of cell `id` in the history under `results`, chosen by the gate's own rule
    /// ([`crate::gate`]'s `baseline`: the pinned `BASELINE`, else the newest measured run of the
    /// cell, else the newest imported one), runs of the same id as this job's (`run_id`: an
    /// earlier attempt of its own run) left out as the gate leaves them out. `Ok(None)` when
    /// there is none or it is imported (point ratios settle nothing); an error names what
    /// could not be read or found. A run of the scripted executor is a baseline only of
    /// another (`scripted`).
    pub fn find(
        results: &Path,
        id: &CellId,
        run_id: Option<&str>,
        config: &GateConfig,
        scripted: bool,
    ) -> Result<Option<Self>, String> {
        let index = HistoryIndex::open(results).map_err(|e| e.to_string())?;
        let names: Vec<&RunDirName> = match &config.baseline {
            Some(pinned) => vec![index.find(pinned).ok_or_else(|| {
                format!("the pinned baseline `{pinned}` is not a run of the history")
            })?],
            None => index
                .runs()
                .iter()
                .filter(|n| run_id.is_none_or(|own| n.id() != own))
                .collect(),
        };
        // Newest first, as the gate's walk reads them, until a measured one is read.
        let mut read: Vec<(String, CellResult)> = Vec::new();
        for name in names.iter().rev() {
            match index.read_cell(name, id) {
                // The newest file of the cell is its baseline, and unusable: the gate stops
                // there. Behind a readable one it is a notice there, and passed over here.
                Some(Err(s)) if read.is_empty() => return Err(s.notice()),
                None | Some(Err(_)) => {}
                Some(Ok(c)) => {
                    let measured = crate::gate::is_measured(&c);
                    read.push((name.to_string(), c));
                    if measured {
                        break;
                    }
                }
            }
        }
        read.reverse();
        let older: Vec<(&str, &CellResult)> = read.iter().map(|(n, c)| (n.as_str(), c)).collect();
        let Baseline::Measured(name, cell) = baseline(&older) else {
            return Ok(None);
        };
        if cell.jobs.values().any(|j| j.protocol.scripted) && !scripted {
            return Err(format!(
                "{name}: its timings come from the scripted test executor, so it is no baseline"
            ));
        }
        let cell = crate::recompute::workload_cell(cell, config).value;
        let level = config.settings.ci_level;
        let controls = cell
            .jobs
            .keys()
            .map(|tc| (tc.clone(), of_cell_job(&cell, tc, level, None)))
            .collect();
        Ok(Some(Self {
            run: name.to_owned(),
            cell,
            controls,
        }))
    }

    /// The baseline's cell as the gate reads it (recomputed from its samples).
    pub fn cell(&self) -> &CellResult {
        &self.cell
    }

    /// The per-round ratios of row `row` on `phase` and `clock` in the baseline, when the gate
    /// would compare this job's row with them: timed by the same protocol (`mode`), its
    /// job's control unbiased on the phase, and a ratio there.
    pub fn ratios(
        &self,
        row: &RowName,
        phase: &Phase,
        clock: Clock,
        mode: ProtocolMode,
    ) -> Option<Vec<f64>> {
        let old = self.cell.rows.get(row)?;
        let job = self.cell.jobs.get(&old.job)?;
        if job.protocol.mode != mode || blocked(self.controls.get(&old.job)?, phase).is_some() {
            return None;
        }
        let pr = old.row.phases.get(phase)?;
        // The gate compares a row only on a clock the baseline holds a ratio on.
        pr.ratio.as_ref()?.on(clock)?;
        let runs = &pr.runs;
        let reference = &job.reference.phases.get(phase)?.runs;
        let ratios = crate::figures::ratios(runs, reference, clock, mode);
        (!ratios.is_empty()).then_some(ratios)
    }
}

/// The (row, phase) units the gate judges of the jobs of `toolchains` in one cell: every row
/// of theirs but the reference, on every phase. A job bounds the family of its run with it:
/// its own toolchain alone (the fewest the run can judge), and every job of the run (the
/// most).
pub fn planned_units<'a>(
    plan: &cell_model::Plan,
    toolchains: impl IntoIterator<Item = &'a cell_model::Toolchain>,
) -> usize {
    let rows: usize = toolchains
        .into_iter()
        .map(|t| {
            t.rows
                .iter()
                .filter(|r| **r != plan.settings.reference)
                .count()
        })
        .sum();
    rows * plan.settings.phases.len()
}
