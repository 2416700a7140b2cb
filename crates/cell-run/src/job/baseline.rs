//! Where a job finds the baseline its rows are judged against while they are timed
//! (docs/protocol.md, "Rounds go where they change a verdict"), read by the gate's own rule
//! ([`cell_verdict::JobBaseline`]).

use std::path::PathBuf;

use cell_model::{Cell, Plan};
use cell_verdict::GateConfig;

use super::JobOptions;

/// Where a job finds the baseline its rows are judged against while they are timed.
#[derive(Clone, Debug)]
pub enum BaselineSource {
    /// Nowhere, and why: each row aims at `CI_TARGET`.
    None(String),
    /// The committed history under `results`, of a run whose gate judges at most
    /// `run_units` (row, phase) units ([`cell_verdict::planned_units`] of all its jobs).
    History {
        /// The results dir.
        results: PathBuf,
        /// The most units the run's gate can judge.
        run_units: usize,
    },
}

/// The baseline a job's rows are judged against while timed, or why there is none.
pub(super) struct Baseline {
    pub(super) found: Option<cell_verdict::JobBaseline>,
    pub(super) note: Option<String>,
    /// The most units the run's gate can judge.
    pub(super) run_units: usize,
}

pub(super) fn job_baseline(plan: &Plan, cell: &Cell, opts: &JobOptions) -> Baseline {
    let none = |why: String| Baseline {
        found: None,
        note: Some(why),
        run_units: 1,
    };
    let (results, run_units) = match &opts.baseline {
        BaselineSource::None(why) => return none(why.clone()),
        BaselineSource::History { results, run_units } => (results, *run_units),
    };
    let config = GateConfig::from_plan(plan, None, []);
    // An earlier attempt of this very run is no baseline of it, for the gate either.
    let run_id = super::github_context().map(|g| g.run_id.0.to_string());
    match cell_verdict::JobBaseline::find(
        results,
        &cell.id(),
        run_id.as_deref(),
        &config,
        opts.scripted.is_some(),
    ) {
        Ok(Some(b)) => Baseline {
            found: Some(b),
            note: None,
            run_units,
        },
        Ok(None) => none(format!(
            "no earlier measured run of {} in {}: each row aims at CI_TARGET",
            cell.id(),
            results.display()
        )),
        Err(e) => none(format!(
            "the history in {} could not be read ({e}): each row aims at CI_TARGET",
            results.display()
        )),
    }
}
