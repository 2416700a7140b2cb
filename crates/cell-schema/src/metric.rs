//! The metrics a run is measured on, as data: one [`MetricInfo`] per [`Metric`] says its
//! name, unit, how it prints, whether `CLOCK=auto` may choose it, its per-run key and whether
//! a file must hold it. Every layer reads this table — the one parser ([`Metric::parse`]) for
//! `versions.env`, a row's `clock =` and the files; the statistics and ratios held per metric
//! ([`crate::ClockStats`], [`crate::Ratios`]) and their keys on the wire; `validate`, the
//! report's columns and calibration — so a metric added here reaches all of them.

use std::fmt;
use std::str::FromStr;

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize, de};

use crate::Run;

// Read through `Clock::parse` (the `Deserialize` below, not derived, so the table's names
// are the only ones); `rename_all` serves the writer and the JSON Schema. (A doc comment
// here would be the schema's description.)
/// Which clock a verdict is read from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Clock {
    /// User + system CPU time of the process (`wait4` rusage).
    Cpu,
    /// Monotonic wall time from spawn to reap.
    Wall,
    /// User CPU time alone: the system time a memory-bound phase pays in page faults left
    /// out.
    User,
}

/// A measured figure of a run a verdict may read: today the three clocks.
pub type Metric = Clock;

/// What the rest of the tool knows of one metric.
#[derive(Debug, PartialEq, Eq)]
pub struct MetricInfo {
    /// The name every file, message, table and setting spells it with (`cpu`).
    pub name: &'static str,
    /// Its unit (`s`).
    pub unit: &'static str,
    /// How a message names one of its figures (`cpu time`).
    pub label: &'static str,
    /// `CLOCK=auto` may choose it (the quieter in a calibration).
    pub auto: bool,
    /// The key of a run's figure in a job's JSON (version 1's run objects) and in
    /// `samples.csv` (`cpu_s`).
    pub run_key: &'static str,
    /// Every file holds its summary and ratio; a file without is refused. An optional metric
    /// is written only where a verdict of the job reads it, and a file lacking it reads as
    /// `None`.
    pub required: bool,
    /// The JSON Schema description of its summary (`ClockStats`).
    pub summary_doc: &'static str,
    /// The JSON Schema description of its ratio (`Ratios`).
    pub ratio_doc: &'static str,
}

const CPU: MetricInfo = MetricInfo {
    name: "cpu",
    unit: "s",
    label: "cpu time",
    auto: true,
    run_key: "cpu_s",
    required: true,
    summary_doc: "CPU time.",
    ratio_doc: "CPU time ratio.",
};

const WALL: MetricInfo = MetricInfo {
    name: "wall",
    unit: "s",
    label: "wall time",
    auto: true,
    run_key: "wall_s",
    required: true,
    summary_doc: "Wall time.",
    ratio_doc: "Wall time ratio.",
};

const USER: MetricInfo = MetricInfo {
    name: "user",
    unit: "s",
    label: "user time",
    auto: true,
    run_key: "user_s",
    required: false,
    summary_doc: "User time: written where a verdict of the job reads the user clock (absent in older\nfiles, and in jobs judged on CPU or wall time alone).",
    ratio_doc: "User time ratio: written where a verdict of the job reads the user clock (absent in\nolder files, and in jobs judged on CPU or wall time alone).",
};

/// A name that is no metric, with the names that are.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("`{given}` is no clock: write {}", Clock::names())]
pub struct UnknownMetric {
    /// What was given (cut to 64 characters, on one line).
    pub given: String,
}

impl Clock {
    /// Every metric, in key order: the order files write them and tables show them.
    pub const ALL: [Self; 3] = [Self::Cpu, Self::Wall, Self::User];

    /// The order a run's figures are listed, in `samples.csv`'s columns and `validate`'s
    /// checks of each run: wall first, as those columns have always stood. A metric added to
    /// [`Self::ALL`] goes at the end here too (a test holds the two to the same metrics).
    pub const COLUMNS: [Self; 3] = [Self::Wall, Self::Cpu, Self::User];

    /// Its row of the table.
    pub fn info(self) -> &'static MetricInfo {
        match self {
            Self::Cpu => &CPU,
            Self::Wall => &WALL,
            Self::User => &USER,
        }
    }

    /// Its name in the table ([`MetricInfo::name`]: `cpu`, `wall`, `user`, …), as every
    /// message, table and setting names a clock.
    pub fn name(self) -> &'static str {
        self.info().name
    }

    /// Whether every file holds its figures ([`MetricInfo::required`]).
    pub fn required(self) -> bool {
        self.info().required
    }

    /// The one parser of a metric's name, for `versions.env`, a row's `clock =`, the command
    /// line and the files; the error lists the names there are.
    pub fn parse(s: &str) -> Result<Self, UnknownMetric> {
        Self::ALL
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| UnknownMetric {
                given: crate::escape::one_line(&s.chars().take(64).collect::<String>()),
            })
    }

    /// The valid names, for an error: `cpu, wall or user`.
    pub fn names() -> String {
        Self::names_with(&[])
    }

    /// The valid names followed by `more` (a setting's own words, such as `auto`), for an
    /// error: `cpu, wall, user or auto`.
    pub fn names_with(more: &[&str]) -> String {
        let names: Vec<&str> = Self::ALL
            .iter()
            .map(|m| m.name())
            .chain(more.iter().copied())
            .collect();
        match names.split_last() {
            Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
            _ => names.concat(),
        }
    }

    /// What a run measured on this metric; `None` when the run has no figure on it (a user
    /// time a file did not record apart).
    pub fn of_run(self, run: &Run) -> Option<f64> {
        match self {
            Self::Cpu => Some(run.cpu_s),
            Self::Wall => Some(run.wall_s),
            Self::User => run.user_s,
        }
    }

    /// The metrics a job writes the summaries and ratios of, when its verdicts read
    /// `judged`: every required one, and each optional one a verdict reads.
    pub fn written(judged: impl IntoIterator<Item = Self>) -> Vec<Self> {
        let judged: Vec<Self> = judged.into_iter().collect();
        Self::ALL
            .into_iter()
            .filter(|m| m.required() || judged.contains(m))
            .collect()
    }

    /// The clock a verdict does not read, shown beside it.
    #[must_use]
    pub fn other(self) -> Self {
        match self {
            Self::Cpu | Self::User => Self::Wall,
            Self::Wall => Self::Cpu,
        }
    }
}

impl FromStr for Clock {
    type Err = UnknownMetric;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

impl<'de> Deserialize<'de> for Clock {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Name;
        impl de::Visitor<'_> for Name {
            type Value = Clock;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "a clock: {}", Clock::names())
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Clock, E> {
                Clock::parse(s).map_err(E::custom)
            }
        }
        d.deserialize_str(Name)
    }
}

impl fmt::Display for Clock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_metric_parses_back_from_its_name_and_its_wire_form() {
        for m in Clock::ALL {
            assert_eq!(Clock::parse(m.name()), Ok(m));
            assert_eq!(m.to_string().parse::<Clock>(), Ok(m));
            let wire = serde_json::to_string(&m).unwrap();
            assert_eq!(wire, format!("\"{}\"", m.name()));
            assert_eq!(serde_json::from_str::<Clock>(&wire).unwrap(), m);
        }
    }

    /// The columns once named only two clocks: a metric added to the table must be listed in
    /// both orders.
    #[test]
    fn columns_list_every_metric_once() {
        let mut columns = Clock::COLUMNS.to_vec();
        columns.sort();
        assert_eq!(columns, Clock::ALL.to_vec());
        let mut sorted = Clock::ALL.to_vec();
        sorted.sort();
        assert_eq!(sorted, Clock::ALL.to_vec(), "ALL is in key order");
    }

    #[test]
    fn an_unknown_name_is_refused_listing_the_valid_ones() {
        let e = Clock::parse("fast").unwrap_err();
        assert_eq!(e.to_string(), "`fast` is no clock: write cpu, wall or user");
        assert!(Clock::parse("CPU").is_err(), "names are lower case");
    }

    /// The derived reader was a second parser of clock names beside [`Clock::parse`]: a
    /// metric renamed in the table would still have been read by its old name in the files.
    #[test]
    fn the_files_read_a_clock_through_the_one_parser_naming_the_valid_ones() {
        for m in Clock::ALL {
            let wire = format!("\"{}\"", m.name());
            assert_eq!(serde_json::from_str::<Clock>(&wire).unwrap(), m);
        }
        let e = serde_json::from_str::<Clock>("\"fast\"").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("`fast` is no clock: write cpu, wall or user"),
            "{e}"
        );
        let e = serde_json::from_str::<Clock>("\"Cpu\"").unwrap_err();
        assert!(e.to_string().contains("is no clock"), "{e}");
        let e = serde_json::from_str::<Clock>("3").unwrap_err();
        assert!(e.to_string().contains("a clock: cpu, wall or user"), "{e}");
        let by: std::collections::BTreeMap<Clock, u8> =
            serde_json::from_str(r#"{"user": 1, "cpu": 2}"#).unwrap();
        assert_eq!(
            by.keys().copied().collect::<Vec<_>>(),
            [Clock::Cpu, Clock::User]
        );
    }

    #[test]
    fn only_optional_metrics_a_verdict_reads_are_written() {
        assert_eq!(Clock::written([Clock::Wall]), [Clock::Cpu, Clock::Wall]);
        assert_eq!(Clock::written([Clock::User]), Clock::ALL);
    }
}
