//! The tables and the JSON of a run, both from the same lines.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use cell_schema::GateStatus;
use serde::Serialize;

use crate::protocols::{ClockKind, Verdict};

/// The host counts as quiet enough to read the cell/hyperfine ratios when hyperfine's own A/A
/// 3σ is under this (percent).
pub const QUIET_PCT: f64 = 10.0;

/// The workload phases with their A/B knob.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, clap::ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Workload {
    /// An integer hash loop (a 3% longer candidate: `-DMIX_ITERS`).
    Mix,
    /// A sieve, memory-bound (a 3% longer candidate: `-DSIEVE_LIMIT`).
    Primes,
    /// Recursive calls (A/A only).
    Fib,
}

impl Workload {
    /// The binaries' argument.
    pub fn arg(self) -> &'static str {
        match self {
            Self::Mix => "mix",
            Self::Primes => "primes",
            Self::Fib => "fib",
        }
    }
}

/// An added load.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, clap::ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Load {
    /// Nothing added.
    None,
    /// A busy loop on another CPU than the timed one.
    Other,
    /// A busy loop on the timed CPU.
    Same,
}

impl Load {
    /// Its name in the tables.
    pub fn label(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Other => "other",
            Self::Same => "same",
        }
    }
}

/// A comparison: the A/A copy or the A/B candidate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub enum Comparison {
    /// The byte-identical copy.
    #[serde(rename = "A/A")]
    Aa,
    /// The candidate doing 3% more work.
    #[serde(rename = "A/B +3%")]
    Ab,
}

impl Comparison {
    /// Its name in the tables.
    pub fn label(self) -> &'static str {
        match self {
            Self::Aa => "A/A",
            Self::Ab => "A/B +3%",
        }
    }
}

/// Where a line sits: sorted so the tables come out phase by phase, load by load, and in the
/// order `--protocols` gave.
pub type Key = (Workload, Load, Comparison, usize);

/// One verdict of a line.
#[derive(Clone, Debug, Serialize)]
pub struct Record {
    /// The repeat it belongs to (0-based).
    pub repeat: u32,
    /// Its place in that repeat's seeded order.
    pub position: u32,
    /// Candidate over reference.
    pub ratio: f64,
    /// The protocol's own interval, `[lo, hi]`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interval: Option<[f64; 2]>,
    /// Process runs, warm-ups included.
    pub runs: u32,
    /// The verdict on each clock, from the same runs.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub clocks: BTreeMap<ClockKind, f64>,
}

impl Record {
    /// The record of `v`, the `position`th trial of `repeat`.
    pub fn new(repeat: u32, position: u32, v: Verdict) -> Self {
        Self {
            repeat,
            position,
            ratio: v.ratio,
            interval: v.interval.map(|(lo, hi)| [lo, hi]),
            runs: v.runs,
            clocks: v.clocks,
        }
    }
}

/// Every verdict of one protocol on one comparison.
#[derive(Clone, Debug)]
pub struct Line {
    /// Protocol name.
    pub protocol: &'static str,
    /// Its verdicts in repeat order.
    pub records: Vec<Record>,
}

/// Three standard deviations of `xs` as a percentage of its mean; none (NaN) for fewer than
/// two values, which have no spread to tell.
pub fn three_sigma_pct(xs: &[f64]) -> f64 {
    if xs.len() < 2 {
        return f64::NAN;
    }
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    3.0 * var.sqrt() / mean * 100.0
}

/// A 3σ as the tables print it; "—" when there is none (one verdict, or a clock that read 0
/// on average).
fn pct(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.2}%")
    } else {
        "—".into()
    }
}

/// The three-way gate at `tolerance` against a baseline of exactly 1.0.
fn fails(lo: f64, hi: f64, tolerance: f64) -> bool {
    cell_verdict::three_way(1.0, lo, hi, tolerance) == GateStatus::Fail
}

/// What a line's verdicts add up to.
#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    /// Verdicts.
    pub n: usize,
    /// Mean process runs per verdict.
    pub runs_per_verdict: f64,
    /// Mean ratio.
    pub mean: f64,
    /// 3σ of the verdict, percent of the mean.
    pub three_sigma_pct: f64,
    /// gate FAILs by the protocol's own interval, or by its point estimate when it has none.
    pub fails: usize,
    /// gate FAILs by the point estimate alone.
    pub fails_point: usize,
    /// Whether the protocol gives an interval.
    pub has_interval: bool,
    /// Per clock, from the same runs.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub clocks: BTreeMap<ClockKind, ClockSummary>,
}

/// One clock's verdicts of a line.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct ClockSummary {
    /// 3σ of the verdict on this clock, percent of its mean (none when the mean is 0).
    pub three_sigma_pct: f64,
    /// Verdicts this clock could be read on (a clock reading 0 on every reference run gives none).
    pub n: usize,
}

impl Line {
    /// Its summary at `tolerance`.
    pub fn summary(&self, tolerance: f64) -> Summary {
        let ratios: Vec<f64> = self.records.iter().map(|r| r.ratio).collect();
        let n = ratios.len();
        let by_own = |r: &Record| {
            let [lo, hi] = r.interval.unwrap_or([r.ratio, r.ratio]);
            fails(lo, hi, tolerance)
        };
        let clocks = ClockKind::ALL
            .into_iter()
            .filter_map(|k| {
                let xs: Vec<f64> = self
                    .records
                    .iter()
                    .filter_map(|r| r.clocks.get(&k).copied())
                    .collect();
                (!xs.is_empty()).then(|| {
                    let c = ClockSummary {
                        three_sigma_pct: three_sigma_pct(&xs),
                        n: xs.len(),
                    };
                    (k, c)
                })
            })
            .collect();
        Summary {
            n,
            runs_per_verdict: self.records.iter().map(|r| f64::from(r.runs)).sum::<f64>()
                / n as f64,
            mean: ratios.iter().sum::<f64>() / n as f64,
            three_sigma_pct: three_sigma_pct(&ratios),
            fails: self.records.iter().filter(|r| by_own(r)).count(),
            fails_point: ratios.iter().filter(|&&x| fails(x, x, tolerance)).count(),
            has_interval: self.records.iter().any(|r| r.interval.is_some()),
            clocks,
        }
    }
}

/// The first table: one line per phase × load × comparison × protocol.
pub fn verdict_table(lines: &BTreeMap<Key, Line>, tolerance: f64) -> String {
    let mut out = String::from(
        "| phase | load | comparison | protocol | process runs per verdict | verdicts | mean ratio | 3σ of the verdict | gate FAIL | FAIL by point estimate |\n\
         |---|---|---|---|---:|---:|---:|---:|---:|---:|\n",
    );
    for ((phase, load, cmp, _), line) in lines {
        let s = line.summary(tolerance);
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {:.0} | {} | {:.4} | {} | {}/{} | {}/{} |",
            phase.arg(),
            load.label(),
            cmp.label(),
            line.protocol,
            s.runs_per_verdict,
            s.n,
            s.mean,
            pct(s.three_sigma_pct),
            s.fails,
            s.n,
            s.fails_point,
            s.n,
        );
    }
    out
}

/// A FAIL count: by the protocol's own rule, and by its point estimate when that differs.
fn fail_cell(s: Option<&Summary>) -> String {
    match s {
        None => "—".into(),
        Some(s) if s.has_interval => {
            format!("{}/{} (point {}/{})", s.fails, s.n, s.fails_point, s.n)
        }
        Some(s) => format!("{}/{}", s.fails, s.n),
    }
}

fn pct_cell(s: Option<&Summary>) -> String {
    s.map_or_else(|| "—".into(), |s| pct(s.three_sigma_pct))
}

/// cell's 3σ over this protocol's.
fn ratio_cell(cell: Option<&Summary>, this: Option<&Summary>, is_cell: bool) -> String {
    match (cell, this) {
        (Some(c), Some(t)) if !is_cell && t.three_sigma_pct > 0.0 => {
            format!("{:.2}", c.three_sigma_pct / t.three_sigma_pct)
        }
        _ => "—".into(),
    }
}

/// The second table: per phase and load, each protocol's 3σ against cell's, its false alarms
/// (A/A FAIL) and detections (A/B FAIL); then hyperfine's own A/A 3σ, which says whether the
/// host was quiet enough to read the ratios.
pub fn against_cell_table(lines: &BTreeMap<Key, Line>, tolerance: f64) -> String {
    let mut out = String::from(
        "| phase | load | protocol | A/A 3σ | A/B 3σ | cell ÷ it, A/A 3σ | cell ÷ it, A/B 3σ | false alarms (A/A FAIL) | detections (A/B FAIL) |\n\
         |---|---|---|---:|---:|---:|---:|---:|---:|\n",
    );
    let summaries: BTreeMap<Key, (&str, Summary)> = lines
        .iter()
        .map(|(k, l)| (*k, (l.protocol, l.summary(tolerance))))
        .collect();
    let find = |phase, load, cmp, protocol: &str| {
        summaries
            .iter()
            .find(|((p, l, c, _), (name, _))| {
                (*p, *l, *c) == (phase, load, cmp) && *name == protocol
            })
            .map(|(_, (_, s))| s)
    };
    let mut notes = String::new();
    let seen: BTreeSet<(Workload, Load, usize, &str)> = summaries
        .iter()
        .map(|((p, l, _, i), (name, _))| (*p, *l, *i, *name))
        .collect();
    for (phase, load, _, protocol) in seen {
        let aa = find(phase, load, Comparison::Aa, protocol);
        let ab = find(phase, load, Comparison::Ab, protocol);
        let is_cell = protocol == "cell";
        let _ = writeln!(
            out,
            "| {} | {} | {protocol} | {} | {} | {} | {} | {} | {} |",
            phase.arg(),
            load.label(),
            pct_cell(aa),
            pct_cell(ab),
            ratio_cell(find(phase, load, Comparison::Aa, "cell"), aa, is_cell),
            ratio_cell(find(phase, load, Comparison::Ab, "cell"), ab, is_cell),
            fail_cell(aa),
            fail_cell(ab),
        );
        if protocol == "hyperfine"
            && let Some(s) = aa
        {
            let reading = if s.three_sigma_pct.is_nan() {
                "one verdict: no spread to read"
            } else if s.three_sigma_pct < QUIET_PCT {
                "under 10%: quiet enough to read the ratios"
            } else {
                "10% or more: too noisy to read the ratios"
            };
            let _ = writeln!(
                notes,
                "- hyperfine's own A/A 3σ, {} under load {}: {} ({reading})",
                phase.arg(),
                load.label(),
                pct(s.three_sigma_pct)
            );
        }
    }
    if !notes.is_empty() {
        out.push('\n');
        out.push_str(&notes);
    }
    out
}

/// The third table: 3σ of cell's verdicts on each clock, from the same runs, and the
/// quietest clock (among those every verdict could be read on).
pub fn clock_table(lines: &BTreeMap<Key, Line>, tolerance: f64) -> String {
    let mut out = String::from("| phase | load | comparison | protocol |");
    for k in ClockKind::ALL {
        let _ = write!(out, " {} |", k.label());
    }
    out.push_str(" quietest |\n|---|---|---|---|---:|---:|---:|---:|---|\n");
    for ((phase, load, cmp, _), line) in lines {
        let s = line.summary(tolerance);
        if s.clocks.is_empty() {
            continue;
        }
        let _ = write!(
            out,
            "| {} | {} | {} | {} |",
            phase.arg(),
            load.label(),
            cmp.label(),
            line.protocol
        );
        for k in ClockKind::ALL {
            let cell = match s.clocks.get(&k) {
                Some(c) if c.n == s.n => format!(" {} |", pct(c.three_sigma_pct)),
                Some(c) => format!(" {} ({} of {}) |", pct(c.three_sigma_pct), c.n, s.n),
                None => " — |".into(),
            };
            out.push_str(&cell);
        }
        let quietest = s
            .clocks
            .iter()
            .filter(|(_, c)| c.n == s.n && c.three_sigma_pct.is_finite())
            .min_by(|a, b| a.1.three_sigma_pct.total_cmp(&b.1.three_sigma_pct))
            .map_or("—", |(k, _)| k.label());
        let _ = writeln!(out, " {quietest} |");
    }
    out
}

/// One line of the JSON: where it sits, its summary, every verdict.
#[derive(Serialize)]
pub struct LineJson<'a> {
    /// Workload phase.
    pub phase: Workload,
    /// Added load.
    pub load: Load,
    /// A/A or A/B +3%.
    pub comparison: Comparison,
    /// Protocol name.
    pub protocol: &'a str,
    /// The ratios alone, in repeat order (the field older files have).
    pub verdicts: Vec<f64>,
    /// What they add up to.
    #[serde(flatten)]
    pub summary: Summary,
    /// Every verdict with its interval, order and clocks.
    pub records: &'a [Record],
}

/// The JSON lines of a run.
pub fn json_lines(lines: &BTreeMap<Key, Line>, tolerance: f64) -> Vec<LineJson<'_>> {
    lines
        .iter()
        .map(|((phase, load, cmp, _), line)| LineJson {
            phase: *phase,
            load: *load,
            comparison: *cmp,
            protocol: line.protocol,
            verdicts: line.records.iter().map(|r| r.ratio).collect(),
            summary: line.summary(tolerance),
            records: &line.records,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(ratio: f64, interval: Option<[f64; 2]>) -> Record {
        Record {
            repeat: 0,
            position: 0,
            ratio,
            interval,
            runs: 14,
            clocks: BTreeMap::new(),
        }
    }

    #[test]
    fn a_protocol_with_an_interval_fails_by_it_and_its_point_is_counted_apart() {
        let line = Line {
            protocol: "hyperfine",
            records: vec![
                // Point outside the ±1.5% band, interval reaching into it: FAIL by point only.
                record(1.02, Some([1.01, 1.03])),
                // Wholly outside: FAIL both ways.
                record(1.03, Some([1.025, 1.035])),
                record(1.0, Some([0.99, 1.01])),
            ],
        };
        let s = line.summary(0.015);
        assert_eq!((s.fails, s.fails_point, s.n), (1, 2, 3));
        assert!(s.has_interval);
        let plain = Line {
            protocol: "plain",
            records: vec![record(1.02, None), record(1.0, None)],
        };
        let p = plain.summary(0.015);
        assert_eq!((p.fails, p.fails_point, p.has_interval), (1, 1, false));
        // One verdict has no spread: the tables print "—", not 0%.
        let one = Line {
            protocol: "plain",
            records: vec![record(1.0, None)],
        };
        assert!(
            verdict_table(
                &BTreeMap::from([((Workload::Fib, Load::None, Comparison::Aa, 0), one)]),
                0.015
            )
            .contains("| 1 | 1.0000 | — | 0/1 | 0/1 |")
        );
    }

    #[test]
    fn the_second_table_divides_cells_3_sigma_by_each_protocols() {
        let mut lines = BTreeMap::new();
        let spread = |xs: &[f64]| xs.iter().map(|&x| record(x, None)).collect::<Vec<_>>();
        for (i, name, xs) in [
            (0, "plain", [0.97, 1.0, 1.03]),
            (1, "cell", [0.99, 1.0, 1.01]),
            (2, "hyperfine", [0.94, 1.0, 1.06]),
        ] {
            lines.insert(
                (Workload::Mix, Load::None, Comparison::Aa, i),
                Line {
                    protocol: name,
                    records: spread(&xs),
                },
            );
        }
        let t = against_cell_table(&lines, 0.015);
        assert!(
            t.contains("| mix | none | plain | 9.00% | — | 0.33 | — |"),
            "{t}"
        );
        assert!(
            t.contains("| mix | none | hyperfine | 18.00% | — | 0.17 | — |"),
            "{t}"
        );
        assert!(
            t.contains("| mix | none | cell | 3.00% | — | — | — |"),
            "{t}"
        );
        assert!(
            t.contains("hyperfine's own A/A 3σ, mix under load none: 18.00% (10% or more"),
            "{t}"
        );
    }

    #[test]
    fn the_quietest_clock_is_one_every_verdict_was_read_on() {
        let with = |user: f64, sys: Option<f64>| {
            let mut r = record(1.0, Some([0.99, 1.01]));
            r.clocks.insert(ClockKind::User, user);
            // A clock that read 0 on every candidate run: no 3σ, never the quietest.
            r.clocks.insert(ClockKind::Wall, 0.0);
            if let Some(s) = sys {
                r.clocks.insert(ClockKind::Sys, s);
            }
            r
        };
        let mut lines = BTreeMap::new();
        lines.insert(
            (Workload::Primes, Load::None, Comparison::Aa, 0),
            Line {
                protocol: "cell",
                // sys has the smaller spread but is missing from one verdict.
                records: vec![
                    with(0.98, Some(1.0)),
                    with(1.02, Some(1.0)),
                    with(1.0, None),
                ],
            },
        );
        let t = clock_table(&lines, 0.015);
        assert!(
            t.contains("| 6.00% | 0.00% (2 of 3) | — | — | user |\n"),
            "{t}"
        );
    }
}
