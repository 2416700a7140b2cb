//! The previous release in the same job (docs/protocol.md): when the release under test is
//! not the one the baseline run recorded, the job also installs that one, by the URL and
//! digest of the baseline commit's own `versions.env` and `cell/cell.toml`, checked against
//! the digest the baseline run recorded and verified again, and builds each of the subject's
//! rows with it as `<row>.prev`, timed in the same rounds as the row. Anything that fails on
//! the way is recorded as the reason it was skipped: nothing of it is timed, and the job goes
//! on as it would have.

use std::path::Path;

use cell_model::{Cell, Install, Plan, Toolchain};
use cell_schema::{PREVIOUS_SUFFIX, PreviousRelease, Role, RowName, Subject};

use super::baseline::Baseline;
use super::{Clock, Event, JobOptions, Timed, build_row};
use crate::tools::{self, Probed};

/// The previous release as installed, with its tools, or the record of why not.
pub(super) struct Previous {
    pub(super) record: PreviousRelease,
    probe: Option<Probed>,
}

/// The previous release of `tc`'s job, when `tc` is the release under test and the baseline
/// recorded another release of it; `None` when there is nothing to compare (no baseline, the
/// same release, no checkout to read the baseline commit from).
pub(super) fn previous_release(
    plan: &Plan,
    cell: &Cell,
    tc: &Toolchain,
    opts: &JobOptions,
    baseline: &Baseline,
    subject: Option<&Subject>,
    on: &mut dyn FnMut(Event),
) -> Option<Previous> {
    let root = opts.previous_root.as_ref()?;
    let subject = subject.filter(|_| plan.subject().is_some_and(|s| s.name == tc.name))?;
    if tc.name == plan.reference_toolchain().name {
        return None;
    }
    let base = baseline.found.as_ref()?;
    let old_cell = base.cell();
    let recorded = recorded_release(old_cell, &tc.name)?;
    if recorded.sha256 == subject.sha256 {
        return None;
    }
    let mut record = PreviousRelease {
        baseline_run: base.run.clone(),
        commit: old_cell.run.head_sha.clone().filter(|s| is_commit(s)),
        recorded,
        installed: None,
        skipped: None,
        not_built: std::collections::BTreeMap::default(),
    };
    match install_previous(cell, tc, opts, root, &record, on) {
        Ok((installed, probe)) => {
            record.installed = Some(installed);
            Some(Previous {
                record,
                probe: Some(probe),
            })
        }
        Err(why) => {
            record.skipped = Some(why);
            Some(Previous {
                record,
                probe: None,
            })
        }
    }
}

/// The release of `tc` the baseline recorded: its own job's record first, else any job's
/// that names `tc` (every workload job records the release under test). A record of another
/// toolchain (the subject moved since) is no previous release of this one.
fn recorded_release(
    cell: &cell_schema::CellResult,
    tc: &cell_schema::ToolchainName,
) -> Option<Subject> {
    let names_tc = |s: &&Subject| s.toolchain.as_ref().is_none_or(|t| t == tc);
    cell.jobs
        .get(tc)
        .and_then(|j| j.subject.as_ref())
        .filter(names_tc)
        .or_else(|| {
            cell.jobs
                .values()
                .filter_map(|j| j.subject.as_ref())
                .find(|s| s.toolchain.as_ref() == Some(tc))
        })
        .cloned()
}

/// A full commit id as git prints it: 40 hex digits (a record's field is read, so checked).
fn is_commit(s: &str) -> bool {
    s.len() == 40 && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Installs the release the baseline recorded: the baseline commit's configuration resolves
/// its URL and pin for this cell, the tarball is verified as any release is, and the digest
/// must be the one the baseline run recorded.
fn install_previous(
    cell: &Cell,
    tc: &Toolchain,
    opts: &JobOptions,
    root: &Path,
    record: &PreviousRelease,
    on: &mut dyn FnMut(Event),
) -> Result<(Subject, Probed), String> {
    let commit = record
        .commit
        .as_deref()
        .ok_or("the baseline run recorded no commit to read its versions.env from")?;
    let scratch = tempfile::Builder::new()
        .prefix("cell-previous-")
        .tempdir()
        .map_err(|e| format!("making a scratch dir: {e}"))?;
    let old_plan = crate::plan_at(root, commit, scratch.path())?;
    let old_tc = old_plan
        .toolchain(tc.name.as_str())
        .map_err(|e| format!("commit {commit}: {e}"))?;
    if !matches!(old_tc.install, Install::Tarball(_)) {
        return Err(format!(
            "commit {commit} does not install `{}` from a tarball, so there is no release to fetch",
            tc.name
        ));
    }
    // A pin that is not the recorded digest is refused before anything is downloaded.
    let source = old_plan
        .tarball_source(old_tc, &cell.os, &cell.arch)
        .map_err(|e| format!("commit {commit}: {e}"))?;
    if let Some(pin) = &source.sha256
        && *pin != record.recorded.sha256
    {
        return Err(format!(
            "commit {commit} pins sha256 {pin} for {}-{}, but the baseline run recorded {}",
            cell.os, cell.arch, record.recorded.sha256
        ));
    }
    let installed = crate::install::install(&old_plan, old_tc, &cell.os, &cell.arch, &opts.cache)
        .map_err(|e| e.to_string())?;
    if installed.sha256 != record.recorded.sha256 {
        return Err(format!(
            "commit {commit} pins sha256 {} for {}-{}, but the baseline run recorded {}",
            installed.sha256, cell.os, cell.arch, record.recorded.sha256
        ));
    }
    super::announce_reinstall(&tc.name, &installed, on);
    let probe = tools::probe_in(old_tc, Some(&installed.bin)).map_err(|m| m.to_string())?;
    let subject = crate::install::subject_record(old_tc, &installed, &probe.versions);
    Ok((subject, probe))
}

/// Builds each of the release's timed rows with the previous release as `<row>.prev`, timed on
/// the row's phases and clock; a row that cannot be built is named in the record.
pub(super) fn previous_rows(
    plan: &Plan,
    previous: &mut Previous,
    out: &Path,
    timed: &mut Vec<Timed>,
    on: &mut dyn FnMut(Event),
) {
    let Some(probe) = &previous.probe else { return };
    let rows: Vec<(cell_model::Row, Clock)> = timed
        .iter()
        .filter(|t| t.role == Role::Row)
        .map(|t| (t.row.clone(), t.clock))
        .collect();
    for (row, clock) in rows {
        let name = RowName::from(format!("{}{PREVIOUS_SUFFIX}", row.name).as_str());
        let why = if !cell_schema::ids::is_safe_id(name.as_str()) {
            Some(format!(
                "`{name}` is not an id a record can hold ([A-Za-z0-9._+-], at most {} bytes, no `..`)",
                cell_schema::ids::MAX_ID_LEN
            ))
        } else if plan.rows.contains_key(&name) {
            Some(format!("`{name}` is a row of cell/cell.toml"))
        } else {
            row.tools()
                .into_iter()
                .find(|t| !probe.paths.contains_key(t))
                .map(|t| format!("the previous release has no tool `{t}`"))
        };
        if let Some(why) = why {
            previous.record.not_built.insert(name, why);
            continue;
        }
        let old_row = cell_model::Row {
            name: name.clone(),
            label: format!(
                "{} ({})",
                row.label,
                previous
                    .record
                    .installed
                    .as_ref()
                    .and_then(|s| s.version.clone())
                    .unwrap_or_else(|| "previous".into())
            ),
            ..row.clone()
        };
        on(Event::Building(name.clone()));
        match build_row(plan, &old_row, probe, out) {
            Ok(build) => {
                let mut t = Timed::new(&old_row, Role::Previous, build, probe, plan, clock);
                t.clock = clock;
                timed.push(t);
            }
            Err(f) => {
                previous.record.not_built.insert(name, f.message);
            }
        }
    }
}
