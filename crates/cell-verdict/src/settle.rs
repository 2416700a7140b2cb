//! What a job's adaptive budget judges each unit against: the baseline the gate will use
//! (docs/protocol.md, "Rounds go where they change a verdict"). The run is chosen by the
//! gate's own rule ([`crate::gate`]'s `baseline`: a pinned `BASELINE`, else the newest
//! measured run of the cell), its figures recomputed from its samples, and a row is compared
//! only where the gate would compare it: the same protocol, and a baseline control that
//! vouches for the phase.

use std::collections::BTreeMap;
use std::path::Path;

use cell_schema::store::HistoryIndex;
use cell_schema::{CellId, CellResult, Clock, Phase, ProtocolMode, RowName, ToolchainName};

use crate::GateConfig;
use crate::control::{PhaseControl, blocked, of_cell_job};

/// The baseline of a job's cell, read before the job times anything.
#[derive(Clone, Debug)]
pub struct JobBaseline {
    /// The run, `<date>-<run-id>`.
    pub run: String,
    cell: CellResult,
    controls: BTreeMap<ToolchainName, Vec<PhaseControl>>,
}

impl JobBaseline {
    /// The baseline of cell `id` in the history under `results`, by the gate's rule; `Ok(None)`
    /// when there is none (a first run, or only imported runs, whose point ratios settle
    /// nothing); an error names what could not be read. A run of the scripted executor is a
    /// baseline only of another (`scripted`).
    pub fn find(
        results: &Path,
        id: &CellId,
        config: &GateConfig,
        scripted: bool,
    ) -> Result<Option<Self>, String> {
        let index = HistoryIndex::open(results).map_err(|e| e.to_string())?;
        let runs: Vec<_> = match &config.baseline {
            Some(pinned) => index.find(pinned).into_iter().collect(),
            None => index.runs().iter().rev().collect(),
        };
        for name in runs {
            let cell = match index.read_cell(name, id) {
                None => continue,
                Some(Err(s)) => return Err(s.notice()),
                Some(Ok(c)) => c,
            };
            if !crate::gate::is_measured(&cell) {
                continue;
            }
            if cell.jobs.values().any(|j| j.protocol.scripted) && !scripted {
                return Err(format!(
                    "{name}: its timings come from the scripted test executor, so it is no baseline"
                ));
            }
            let cell = crate::recompute::workload_cell(&cell, config).value;
            let level = config.settings.ci_level;
            let controls = cell
                .jobs
                .keys()
                .map(|tc| (tc.clone(), of_cell_job(&cell, tc, level)))
                .collect();
            return Ok(Some(Self {
                run: name.to_string(),
                cell,
                controls,
            }));
        }
        Ok(None)
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
        let runs = &old.row.phases.get(phase)?.runs;
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
