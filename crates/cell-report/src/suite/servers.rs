//! What the http tables say of each server beside its figures: its concurrency model (the
//! axis the rows are grouped by), what it does not serve, the shapes it is not measured in,
//! and the release under test that built it.

use cell_schema::escape::one_line;
use cell_schema::{ConcurrencyModel, HttpServerResult, ServerName};

use crate::doc::{Span, code, text};

/// The model's cell of a table row (`–` when the config states none).
pub(super) fn model_cell(s: &HttpServerResult) -> Vec<Span> {
    vec![text(s.model.map_or("–", ConcurrencyModel::as_str))]
}

/// Where a server's rows go: by model in [`ConcurrencyModel::ALL`]'s order (unstated last),
/// then by name.
pub(super) fn model_rank(s: &HttpServerResult) -> usize {
    s.model.map_or(ConcurrencyModel::ALL.len(), |m| {
        ConcurrencyModel::ALL
            .iter()
            .position(|x| *x == m)
            .unwrap_or(ConcurrencyModel::ALL.len())
    })
}

/// The servers sorted for the tables: grouped by model, then by name.
pub(super) fn by_model<'a>(
    servers: &[(&'a ServerName, &'a HttpServerResult)],
) -> Vec<(&'a ServerName, &'a HttpServerResult)> {
    let mut out = servers.to_vec();
    out.sort_by(|a, b| (model_rank(a.1), a.0).cmp(&(model_rank(b.1), b.0)));
    out
}

/// One line per thing a reader must know of a server beside its figures: a check that was
/// not plainly ok, then [`unmeasured_and_release`].
pub(super) fn server_notes(name: &ServerName, s: &HttpServerResult) -> Vec<Vec<Span>> {
    let check = s
        .check
        .as_deref()
        .filter(|c| *c != "ok")
        .map(|c| format!(": response check: {}", one_line(c)));
    check
        .into_iter()
        .chain(unmeasured_and_release(s))
        .map(|t| vec![code(name.as_str()), text(t)])
        .collect()
}

/// What a server left unmeasured (workloads it does not serve, shapes left out) and the
/// release under test that built it, each a line that follows the server's name (`: …`):
/// the one wording of the tables' notes and the terminal's.
pub(super) fn unmeasured_and_release(s: &HttpServerResult) -> Vec<String> {
    let mut notes = Vec::new();
    if !s.not_served.is_empty() {
        let names: Vec<&str> = s
            .not_served
            .iter()
            .map(cell_schema::WorkloadName::as_str)
            .collect();
        notes.push(format!(
            ": does not serve {} (not measured, not failed)",
            names.join(", ")
        ));
    }
    for (shape, why) in &s.shapes_left_out {
        notes.push(format!(": shape {shape} left out: {}", one_line(why)));
    }
    if let Some(r) = &s.release {
        let how = r
            .verified
            .as_ref()
            .map(|v| format!(", verified by {}", v.phrase()))
            .unwrap_or_default();
        notes.push(format!(
            ": built by the release under test {} ({}, sha256 {}{how})",
            one_line(r.version.as_deref().unwrap_or(&r.tag)),
            one_line(&r.asset),
            r.sha256
        ));
    }
    notes
}
