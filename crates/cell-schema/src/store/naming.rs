//! The names of the store: its file names, run dir names, chart names, and the typed job
//! and cell dirs with the files each holds.

use std::collections::BTreeMap;
use std::fmt;

use crate::ids::MAX_ID_LEN;
use crate::{AnyJob, CellResult, Facts, ServerName, ToolchainName};

/// A job's or a cell's results.
pub const RESULTS_JSON: &str = "results.json";
/// The committed history under a repository's root.
pub const RESULTS_DIR: &str = "results";
/// A job's machine and tool facts.
pub const FACTS_JSON: &str = "facts.json";
/// The human-readable results beside `results.json`.
pub const RESULTS_MD: &str = "RESULTS.md";
/// The run-level record of a run dir.
pub const RUN_JSON: &str = "run.json";
/// What `cell gate` decided about a run dir.
pub const GATE_JSON: &str = "gate.json";
/// An imported soak of another tool's history, beside the cells of its run dir (the old soak
/// file names no cell).
pub const IMPORTED_SOAK_JSON: &str = "imported-soak.json";
/// A cell dir's folder of per-job facts, `facts/<toolchain>.json`.
pub const FACTS_DIR: &str = "facts";
/// The folder of soak charts beside `RESULTS.md`.
pub const SOAK_CHART_DIR: &str = "soak";
/// Where `cell local` keeps each run's job dirs, beside the run dirs.
pub const JOBS_DIR: &str = "jobs";
/// Where `cell local` writes the report, beside the run dirs.
pub const REPORT_DIR: &str = "report";

/// `cell-<cell-id>-<job>-a<attempt>`: the artifact of one matrix job, and the folder its files
/// sit in. The workflow passes GitHub expressions for the parts; `cell local` passes values.
pub fn job_artifact(cell: &str, job: &str, attempt: &str) -> String {
    format!("cell-{cell}-{job}-a{attempt}")
}

/// The attempt of a [`job_artifact`] name; `None` for any other name.
pub fn artifact_attempt(name: &str) -> Option<u32> {
    let (stem, n) = name.rsplit_once("-a")?;
    stem.starts_with("cell-").then_some(())?;
    if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    n.parse().ok()
}

/// The name of a run dir, `<YYYY-MM-DD>-<run-id>`: the run's own date and its id (a GitHub
/// run id, or `local-<stamp>`). Ordered as runs happened: by date, then numeric ids by value,
/// then local stamps.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RunDirName {
    date: String,
    id: String,
}

/// A string that is not a run dir name.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum BadRunDirName {
    /// Not `YYYY-MM-DD-<id>` of a day the calendar has.
    #[error(
        "`{0}` is not a run directory name: it must be <YYYY-MM-DD>-<run-id>, of a day the calendar has"
    )]
    Shape(String),
    /// The id would not be one path segment.
    #[error(
        "run id `{0}`: use letters, digits, `.`, `_` and `-` only, not starting with `.` or `-`, at most {MAX_ID_LEN} bytes"
    )]
    Id(String),
}

impl RunDirName {
    /// The name of run `id` on `date` (`YYYY-MM-DD`, a day the calendar has). The id is
    /// bounded like every identifier, so the name and its staging sibling fit in a file name.
    pub fn new(date: &str, id: &str) -> Result<Self, BadRunDirName> {
        let shown =
            |s: &str| crate::escape::one_line(&s.chars().take(MAX_ID_LEN).collect::<String>());
        if crate::time::Date::parse(date).is_none() {
            return Err(BadRunDirName::Shape(format!(
                "{}-{}",
                shown(date),
                shown(id)
            )));
        }
        let segment = !id.is_empty()
            && id.len() <= MAX_ID_LEN
            && !id.starts_with(['.', '-'])
            && id
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b));
        if !segment {
            return Err(BadRunDirName::Id(shown(id)));
        }
        Ok(Self {
            date: date.to_owned(),
            id: id.to_owned(),
        })
    }

    /// Splits `<YYYY-MM-DD>-<run-id>`.
    pub fn parse(name: &str) -> Result<Self, BadRunDirName> {
        let shape = || BadRunDirName::Shape(name.to_owned());
        let date = name.get(..10).ok_or_else(shape)?;
        let id = name
            .get(10..)
            .and_then(|r| r.strip_prefix('-'))
            .ok_or_else(shape)?;
        Self::new(date, id)
    }

    /// `YYYY-MM-DD`.
    pub fn date(&self) -> &str {
        &self.date
    }

    /// The run id as written (`4242001`, `local-194158`).
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Date, then numeric ids by value, then other ids (local stamps) by text. Two numeric
    /// ids of one value (`7`, `007`) are told apart by their text, so the order agrees with
    /// equality and a listing of run dirs has one order whatever the file system returns.
    fn order_key(&self) -> (&str, u8, u64, &str) {
        match self.id.parse::<u64>() {
            Ok(n) => (&self.date, 0, n, &self.id),
            Err(_) => (&self.date, 1, 0, &self.id),
        }
    }
}

impl fmt::Display for RunDirName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.date, self.id)
    }
}

impl PartialOrd for RunDirName {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for RunDirName {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.order_key().cmp(&other.order_key())
    }
}

/// A chart beside a `RESULTS.md`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum ChartName {
    /// One soak server's chart, `soak/<server>.svg`.
    Soak(ServerName),
    /// Every soak server's RSS on one chart, `soak/overlay.svg`.
    SoakOverlay,
}

impl ChartName {
    /// Its path, relative to the dir that holds `RESULTS.md`.
    pub fn path(&self) -> String {
        match self {
            Self::Soak(s) => format!("{SOAK_CHART_DIR}/{}.svg", segment(s.as_str())),
            Self::SoakOverlay => format!("{SOAK_CHART_DIR}/overlay.svg"),
        }
    }
}

/// Keeps `[A-Za-z0-9._-]`; anything else (and a leading dot) becomes `_`, so a name is always
/// one safe path segment.
pub fn segment(s: &str) -> String {
    let mut out: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if out.is_empty() || out.starts_with('.') {
        out.replace_range(0..0, "_");
    }
    out
}

/// One file to write: a `/`-separated path relative to a dir, and its bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Output {
    /// Path relative to the dir, `/`-separated.
    pub path: String,
    /// The bytes to write.
    pub bytes: Vec<u8>,
}

impl Output {
    /// A file at `path` (relative, `/`-separated).
    pub fn new(path: impl Into<String>, bytes: Vec<u8>) -> Self {
        Self {
            path: path.into(),
            bytes,
        }
    }
}

/// Everything a job dir holds, the results typed and the rest rendered.
#[derive(Clone, Debug)]
pub struct JobDir<'a> {
    /// The job's result (`results.json`; a workload job's `facts.json` is taken from it).
    pub result: &'a AnyJob,
    /// `RESULTS.md`.
    pub markdown: String,
    /// Charts beside it.
    pub charts: BTreeMap<ChartName, String>,
}

impl JobDir<'_> {
    /// The files, in the order they are written.
    pub fn files(&self) -> Vec<Output> {
        let mut out = vec![Output::new(
            RESULTS_JSON,
            crate::to_record_json(self.result).into_bytes(),
        )];
        if let AnyJob::Workload(j) = self.result {
            out.push(Output::new(
                FACTS_JSON,
                crate::to_record_json(&j.facts()).into_bytes(),
            ));
        }
        out.push(Output::new(RESULTS_MD, self.markdown.clone().into_bytes()));
        out.extend(
            self.charts
                .iter()
                .map(|(c, svg)| Output::new(c.path(), svg.clone().into_bytes())),
        );
        out
    }
}

/// One cell of a run dir.
#[derive(Clone, Debug)]
pub struct CellDir<'a> {
    /// The merged cell (`results.json`).
    pub result: &'a CellResult,
    /// `facts/<toolchain>.json` of each workload job.
    pub facts: &'a BTreeMap<ToolchainName, Facts>,
    /// `RESULTS.md`.
    pub markdown: String,
    /// Charts beside it.
    pub charts: BTreeMap<ChartName, String>,
}

impl CellDir<'_> {
    /// The files, paths relative to the run dir.
    pub fn files(&self) -> Vec<Output> {
        let dir = self.result.cell.id.as_str();
        let mut out = vec![
            Output::new(
                format!("{dir}/{RESULTS_JSON}"),
                crate::to_record_json(self.result).into_bytes(),
            ),
            Output::new(
                format!("{dir}/{RESULTS_MD}"),
                self.markdown.clone().into_bytes(),
            ),
        ];
        out.extend(
            self.charts.iter().map(|(c, svg)| {
                Output::new(format!("{dir}/{}", c.path()), svg.clone().into_bytes())
            }),
        );
        out.extend(self.facts.iter().map(|(tc, f)| {
            Output::new(
                format!("{dir}/{FACTS_DIR}/{tc}.json"),
                crate::to_record_json(f).into_bytes(),
            )
        }));
        out
    }
}
