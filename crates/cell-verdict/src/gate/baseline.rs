//! Which older run a cell's workload is judged against.

use cell_schema::CellResult;

/// What a cell's workload is judged against.
#[derive(Clone, Copy)]
pub(crate) enum Baseline<'a> {
    /// A first run: nothing.
    None,
    /// A measured run of this tool: interval against interval.
    Measured(&'a str, &'a CellResult),
    /// An imported run of another tool's history: interval against its point ratio.
    Imported(&'a str, &'a cell_schema::Imported),
}

/// The baseline among `older` (oldest first; only the pinned run when one is pinned): the
/// newest measured run, else the newest imported one. An imported run is judged against only
/// when it is pinned or no measured run of the cell exists: its points are a weaker baseline
/// than any interval.
pub(crate) fn baseline<'a>(older: &[(&'a str, &'a CellResult)]) -> Baseline<'a> {
    if let Some((name, c)) = older.iter().rev().find(|(_, c)| is_measured(c)) {
        return Baseline::Measured(name, c);
    }
    older
        .iter()
        .rev()
        .find_map(|(name, c)| c.imported.as_ref().map(|i| Baseline::Imported(name, i)))
        .unwrap_or(Baseline::None)
}

/// Whether an older run's cell is a measured baseline of the workload: it has jobs (a
/// suite-only or an imported cell has none).
pub(crate) fn is_measured(cell: &CellResult) -> bool {
    !cell.jobs.is_empty()
}
