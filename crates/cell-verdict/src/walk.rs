//! What of the history the gate reads: for each cell of the judged run, the cell's file of
//! each older run, newest first, until the gate holds everything it compares. The history's
//! order is its run dir names' ([`HistoryIndex`]), so the walk opens no file it does not
//! judge by, and the gate's time does not grow with the number of runs kept.
//!
//! The runs read make a [`History`] that [`gate_history`](crate::gate_history) judges as it
//! judges the whole one: the walk reads every file the verdict, its notices and its errors
//! depend on, so the report is the one the whole history gives, but for the files it never
//! reaches (an unreadable file older than every baseline is not noticed; a run of the
//! scripted executor older than them is not refused).

use std::collections::BTreeMap;

use cell_schema::store::{History, HistoryIndex, HistoryRun, RunDirName, StoreError};
use cell_schema::{CellId, CellResult};

use crate::GateConfig;
use crate::suite::{HttpBaseline, HttpCombo, http_baseline, http_combos};

/// What one cell of the judged run still compares with nothing.
struct Needs<'a> {
    /// The workload has jobs and no measured baseline was read yet.
    workload: bool,
    /// The http combinations with no comparable baseline read yet.
    http: Vec<HttpCombo<'a>>,
}

impl<'a> Needs<'a> {
    fn of(cell: &'a CellResult) -> Self {
        Self {
            workload: !cell.jobs.is_empty(),
            http: http_combos(cell),
        }
    }

    /// Crosses off what the older run `run`'s `cell` is a baseline of, by the rules the
    /// verdict applies ([`crate::gate::is_measured`], [`http_baseline`]).
    fn met_by(&mut self, run: &str, cell: &CellResult) {
        if crate::gate::is_measured(cell) {
            self.workload = false;
        }
        let one = [(run, cell)];
        self.http.retain(|(name, server, combo, _)| {
            matches!(
                http_baseline(&one, name.as_str(), server, combo),
                HttpBaseline::None { .. }
            )
        });
    }

    fn met(&self) -> bool {
        !self.workload && self.http.is_empty()
    }
}

/// The part of the history under `index` that the gate of `run` by `config` needs, read; the
/// rest is listed only. With a pinned baseline (`config.baseline`), that run alone, whole. Else,
/// per cell of `run`, the cell's file of each other run (a run of the same id is `run` itself),
/// newest first, until the cell holds a measured baseline for its workload (when it has
/// jobs) and a comparable baseline for every http server and combination it measured.
///
/// A file that cannot be used is returned in [`History::skipped`], as the whole history
/// would return it: when no readable file of its cell is newer it is that cell's baseline
/// (the gate stops there: exit 2), else a notice. Time grows with the history only where
/// something has no baseline: a cell or combination measured for the first time walks back
/// to the oldest run, and so does a cell judged against an imported run, which is its
/// baseline only when no measured run of the cell exists.
pub fn needed_history(
    run: &HistoryRun,
    index: &HistoryIndex,
    config: &GateConfig,
) -> Result<History, StoreError> {
    let mut history = History::default();
    if let Some(pinned) = &config.baseline {
        if let Some(name) = index.find(pinned) {
            let (read, skipped) = index.read_run(name)?;
            history.runs.extend(read);
            history.skipped = skipped;
        }
        sort_skipped(&mut history);
        return Ok(history);
    }
    let mut read: BTreeMap<RunDirName, BTreeMap<CellId, CellResult>> = BTreeMap::new();
    let older: Vec<&RunDirName> = index
        .runs()
        .iter()
        .rev()
        .filter(|n| n.id() != run.name.id())
        .collect();
    for (id, cell) in &run.cells {
        let mut needs = Needs::of(cell);
        let mut readable = false;
        for name in &older {
            if needs.met() {
                break;
            }
            match index.read_cell(name, id) {
                None => {}
                Some(Ok(c)) => {
                    readable = true;
                    needs.met_by(&name.to_string(), &c);
                    read.entry((*name).clone())
                        .or_default()
                        .insert(id.clone(), c);
                }
                Some(Err(s)) => {
                    history.skipped.push(s);
                    // The newest file of the cell is its baseline: the gate refuses it, and
                    // nothing older changes that.
                    if !readable {
                        break;
                    }
                }
            }
        }
    }
    history.runs = read
        .into_iter()
        .map(|(name, cells)| HistoryRun {
            dir: index.run_dir(&name),
            name,
            cells,
            record: None,
            imported_soak: None,
        })
        .collect();
    sort_skipped(&mut history);
    Ok(history)
}

/// In the order the whole history lists them.
fn sort_skipped(history: &mut History) {
    history
        .skipped
        .sort_by(|a, b| (&a.run, &a.path).cmp(&(&b.run, &b.path)));
}
