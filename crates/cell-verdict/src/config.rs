//! What every judgement reads from the checked-in configuration, built in one place from the
//! resolved plan. A job judging itself, `cell local` and `cell gate` all take this value, so
//! they cannot judge with different thresholds; nothing here comes from the results judged.

use std::collections::BTreeMap;
use std::path::PathBuf;

use cell_model::{Plan, Settings};
use cell_schema::{Calibration, CellId, Phase, RowName, SoakConfig, ToolchainName};

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
    /// `cell calibrate` results per cell id, when the repository has them.
    pub calibration: BTreeMap<String, Calibration>,
    /// Judge runs of the scripted test executor too (tests only; off from the plan).
    pub allow_scripted: bool,
}

/// A configuration that cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// A calibration file that cannot be read or is not one.
    #[error("{}: {msg} (rerun cell calibrate)", path.display())]
    Calibration {
        /// The calibration file.
        path: PathBuf,
        /// Why it cannot be read or parsed.
        msg: String,
    },
}

impl GateConfig {
    /// The judgement's view of the plan: thresholds from `versions.env`, rows and the tooth
    /// from `cell/cell.toml`, `baseline` (a command line's) over `BASELINE`, and the
    /// calibration of each of `cells` that has one.
    pub fn from_plan<'a>(
        plan: &Plan,
        baseline: Option<String>,
        cells: impl IntoIterator<Item = &'a CellId>,
    ) -> Result<Self, ConfigError> {
        let s = &plan.settings;
        let mut calibration = BTreeMap::new();
        for id in cells {
            if let Some(c) = calibration_of(plan, id)? {
                calibration.insert(id.to_string(), c);
            }
        }
        Ok(Self {
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
            allow_scripted: false,
        })
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

/// `cell/calibration/<cell-id>.json`, when the repository has one.
pub fn calibration_of(plan: &Plan, id: &CellId) -> Result<Option<Calibration>, ConfigError> {
    let path = plan.calibration_path(id);
    if !path.is_file() {
        return Ok(None);
    }
    let bad = |msg: String| ConfigError::Calibration {
        path: path.clone(),
        msg,
    };
    let text = std::fs::read_to_string(&path).map_err(|e| bad(e.to_string()))?;
    cell_schema::read::from_str_unique(&text)
        .map(Some)
        .map_err(|e| bad(format!("not a calibration file: {e}")))
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
