//! What every judgement reads from the checked-in configuration, built in one place from the
//! resolved plan. A job judging itself, `cell local` and `cell gate` all take this value, so
//! they cannot judge with different thresholds; nothing here comes from the results judged.

use std::collections::BTreeMap;
use std::io::Read as _;
use std::path::Path;

use cell_model::{Plan, Settings};
use cell_schema::{
    Calibration, CellId, ConcurrencyModel, Phase, RowName, ServerName, SoakConfig, ToolchainName,
    WorkloadName,
};

/// The thresholds and expectations a judgement reads.
#[derive(Clone, Debug)]
pub struct GateConfig {
    /// `TOLERANCE`.
    pub tolerance: f64,
    /// `HTTP_TOLERANCE`.
    pub http_tolerance: f64,
    /// `HEALTH_THRESHOLD`.
    pub health_threshold: f64,
    /// The tooth's slow row, fast row and phase.
    pub tooth: (RowName, RowName, Phase),
    /// `versions.env`'s settings: the rules keyed by architecture (`TOOTH_MIN_<ARCH>`) and
    /// `CONTENTION_MAX` read them here.
    pub settings: Settings,
    /// `[soak]`'s drift rule and `fail_on_drift`, when the repository has a soak suite.
    pub soak: Option<SoakConfig>,
    /// `[expect]`: the answer every row must print on each phase.
    pub expect: BTreeMap<Phase, String>,
    /// Rows each toolchain is expected to produce.
    pub rows: BTreeMap<ToolchainName, Vec<RowName>>,
    /// Pinned digests: `versions.env` keys holding a SHA-256 and their values.
    pub digests: BTreeMap<String, String>,
    /// The release under test and its pinned digest per platform (`<os>-<arch>`), when one
    /// is declared.
    pub subject: Option<(
        cell_schema::ToolchainName,
        BTreeMap<String, cell_schema::Sha256>,
    )>,
    /// A run name (`<date>-<run-id>`) to compare against instead of the newest.
    pub baseline: Option<String>,
    /// `cell calibrate` results per cell id, when the repository has them and they can be
    /// used.
    pub calibration: BTreeMap<String, Calibration>,
    /// Per cell id, the notice of a calibration file that cannot be used and is ignored.
    pub calibration_ignored: BTreeMap<String, String>,
    /// Judge runs of the scripted test executor too (tests only; off from the plan).
    pub allow_scripted: bool,
    /// What `[http.servers]` says of each server: a job's `model`, `not_served` and
    /// `shapes_left_out` are held to it.
    pub http_servers: BTreeMap<ServerName, ServerTerms>,
}

/// A server as its config states it: the workloads it serves, its concurrency model, and
/// whether the release under test builds it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ServerTerms {
    /// The workloads it serves.
    pub workloads: Vec<WorkloadName>,
    /// Its concurrency model, when stated.
    pub model: Option<ConcurrencyModel>,
    /// Its toolchain is the release under test (installed from its tarball).
    pub by_release: bool,
}

impl GateConfig {
    /// The judgement's view of the plan: thresholds from `versions.env`, rows and the tooth
    /// from `cell/cell.toml`, `baseline` (a command line's) over `BASELINE`, and the
    /// calibration of each of `cells` that has one.
    pub fn from_plan<'a>(
        plan: &Plan,
        baseline: Option<String>,
        cells: impl IntoIterator<Item = &'a CellId>,
    ) -> Self {
        let s = &plan.settings;
        let mut calibration = BTreeMap::new();
        let mut calibration_ignored = BTreeMap::new();
        for id in cells {
            match calibration_of(plan, id) {
                CalibrationFile::Absent => {}
                CalibrationFile::Usable(c) => {
                    calibration.insert(id.to_string(), *c);
                }
                CalibrationFile::Ignored(notice) => {
                    calibration_ignored.insert(id.to_string(), notice);
                }
            }
        }
        Self {
            tolerance: s.tolerance,
            http_tolerance: s.http_tolerance,
            health_threshold: s.health_threshold,
            tooth: (
                plan.tooth.slow.clone(),
                plan.tooth.fast.clone(),
                s.tooth_phase.clone(),
            ),
            settings: s.clone(),
            soak: plan.soak.as_ref().map(|d| d.config.clone()),
            expect: plan.expect.clone(),
            rows: plan
                .toolchains
                .values()
                .map(|t| (t.name.clone(), t.rows.clone()))
                .collect(),
            digests: plan
                .env
                .entries
                .iter()
                .filter(|(k, _)| k.contains("SHA256"))
                .map(|(k, e)| (k.clone(), e.value.clone()))
                .collect(),
            subject: subject_pins(plan),
            baseline: baseline.or_else(|| s.baseline.clone()),
            calibration,
            calibration_ignored,
            allow_scripted: false,
            http_servers: plan
                .http
                .iter()
                .flat_map(|h| h.servers.values())
                .map(|s| {
                    let terms = ServerTerms {
                        workloads: s.workloads.keys().cloned().collect(),
                        model: s.model,
                        by_release: cell_model::built_by_release(plan, s),
                    };
                    (s.name.clone(), terms)
                })
                .collect(),
        }
    }

    /// The pinned digest of the release under test on a platform, when one is pinned there.
    pub fn subject_pin(&self, os: &str, arch: &str) -> Option<&cell_schema::Sha256> {
        self.subject.as_ref()?.1.get(&format!("{os}-{arch}"))
    }

    /// The tooth floor on an architecture: `TOOTH_MIN_<ARCH>`, else `TOOTH_MIN`.
    pub fn floor(&self, arch: &str) -> f64 {
        self.settings.tooth_min(arch)
    }
}

/// What `cell/calibration/<cell-id>.json` gives a cell.
#[derive(Clone, Debug)]
pub enum CalibrationFile {
    /// No such file: the cell was never calibrated.
    Absent,
    /// A file `cell calibrate` could have written.
    Usable(Box<Calibration>),
    /// A file that cannot be used (unreadable, not a calibration, from a newer cell, or
    /// holding values `cell calibrate` cannot write): every reader goes on as if there were
    /// none, and says so with this notice, which names the file and why.
    Ignored(String),
}

impl CalibrationFile {
    /// The calibration, when it can be used.
    pub fn usable(&self) -> Option<&Calibration> {
        match self {
            Self::Usable(c) => Some(c),
            Self::Absent | Self::Ignored(_) => None,
        }
    }
}

/// The largest calibration file read: one of 64 phases on every clock and protocol is under
/// 200 KB.
const MAX_CALIBRATION_BYTES: u64 = 1 << 20;

/// `cell/calibration/<cell-id>.json`, read and checked ([`cell_schema::validate::calibration`])
/// once for every reader: the gate, `cell local`, and a job's `CLOCK=auto` and
/// `PROTOCOL=auto`. A bad file is a notice, not an error: a calibration sets no threshold, it
/// only picks among documented defaults and adds a notice, so ignoring it judges nothing more
/// leniently, and a job (which cannot stop over it) and the gate take the same view of it.
pub fn calibration_of(plan: &Plan, id: &CellId) -> CalibrationFile {
    let path = plan.calibration_path(id);
    match read_calibration(&path, id) {
        Ok(None) => CalibrationFile::Absent,
        Ok(Some(c)) => CalibrationFile::Usable(Box::new(c)),
        Err(why) => CalibrationFile::Ignored(format!(
            "{} is ignored: {why}; rerun cell calibrate",
            path.strip_prefix(&plan.root).unwrap_or(&path).display()
        )),
    }
}

/// The file at `path`, when there is one, or why it cannot be used.
fn read_calibration(path: &Path, id: &CellId) -> Result<Option<Calibration>, String> {
    let file = match std::fs::File::open(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("it cannot be read ({e})")),
        Ok(f) => f,
    };
    let mut text = String::new();
    file.take(MAX_CALIBRATION_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|e| format!("it cannot be read ({e})"))?;
    if text.len() as u64 > MAX_CALIBRATION_BYTES {
        return Err(format!(
            "larger than {} KiB, which no calibration is",
            MAX_CALIBRATION_BYTES >> 10
        ));
    }
    let cal: Calibration = cell_schema::read::from_str_unique(&text)
        .map_err(|e| format!("not a calibration file ({e})"))?;
    if cal.schema_version > cell_schema::SCHEMA_VERSION {
        return Err(format!(
            "written by a newer cell (schema_version {}; this cell reads up to {}; upgrade cell)",
            cal.schema_version,
            cell_schema::SCHEMA_VERSION
        ));
    }
    let problems = cell_schema::validate::calibration(&cal, id);
    if let Some(first) = problems.first() {
        let more = match problems.len() {
            1 => String::new(),
            n => format!(" (and {} more)", n - 1),
        };
        return Err(format!("{first}{more}"));
    }
    Ok(Some(cal))
}

/// The subject's pin on every platform the plan's cells (and this machine) run on.
fn subject_pins(
    plan: &Plan,
) -> Option<(
    cell_schema::ToolchainName,
    BTreeMap<String, cell_schema::Sha256>,
)> {
    let tc = plan.subject()?;
    let mut platforms: Vec<(String, String)> = plan
        .cells
        .values()
        .map(|c| (c.os.clone(), c.arch.clone()))
        .collect();
    let here = cell_model::Cell::local();
    platforms.push((here.os, here.arch));
    let pins = platforms
        .into_iter()
        .filter_map(|(os, arch)| {
            let pin = plan.tarball_source(tc, &os, &arch).ok()?.sha256?;
            Some((format!("{os}-{arch}"), pin))
        })
        .collect();
    Some((tc.name.clone(), pins))
}
