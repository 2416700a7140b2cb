//! The tables and the JSON of a `--gate` run, both from the same verdicts.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::Path;

use anyhow::{Context as _, Result};
use cell_schema::GateStatus;
use cell_verdict::unit_level;
use serde::Serialize;

use super::host::Host;
use super::plan::Plan;
use super::{Comparison, RepeatRun, Rule, Verdict};
use crate::report::{Load, Workload};

/// The settings of a run, as the header states them and the JSON keeps them.
#[derive(Clone, Debug, Serialize)]
pub struct Setup {
    /// Always `gate`: which mode of the bench wrote the file.
    pub mode: &'static str,
    /// The host at the start.
    pub host: Host,
    /// Repeats per load.
    pub repeats: u32,
    /// Loads.
    pub loads: Vec<Load>,
    /// Phases.
    pub phases: Vec<Workload>,
    /// Seed of the blocks' order.
    pub seed: u64,
    /// `TOLERANCE`.
    pub tolerance: f64,
    /// `CI_LEVEL`.
    pub ci_level: f64,
    /// K: judged (row, phase) units per run.
    pub judged_units: usize,
    /// The new rule's and hyperfine's level per unit: `1 − (1 − CI_LEVEL)/K`.
    pub unit_level: f64,
    /// The level the new rule reads a job's control at: `1 − (1 − CI_LEVEL)/phases`.
    pub control_level: f64,
    /// Warm-up rounds (`DROP`).
    pub warmup: u32,
    /// Measured rounds a job starts with (`REPS − DROP`).
    pub min_rounds: u32,
    /// Measured rounds it may reach (`REPS_MAX − DROP`).
    pub max_rounds: u32,
    /// `REPS_STEP`.
    pub step: u32,
    /// `CI_TARGET`.
    pub ci_target: f64,
    /// `FUTILITY_MARGIN`.
    pub futility_margin: f64,
    /// `ROWS_PER_REFERENCE`.
    pub rows_per_reference: u32,
    /// hyperfine's version line.
    pub hyperfine: String,
    /// The compiler flags of each candidate.
    pub knobs: BTreeMap<&'static str, [&'static str; 2]>,
    /// The duration estimated before timing, seconds: low and high.
    pub estimate_s: [f64; 2],
}

impl Setup {
    /// Of the plan, the settings of versions.env, the host and hyperfine.
    pub(super) fn new(
        plan: &Plan,
        s: &cell_model::Settings,
        host: Host,
        hyperfine: String,
        estimate_s: [f64; 2],
    ) -> Self {
        let k = plan.judged_units();
        Self {
            mode: "gate",
            host,
            repeats: plan.repeats,
            loads: plan.loads.clone(),
            phases: plan.phases.clone(),
            seed: plan.seed,
            tolerance: s.tolerance,
            ci_level: s.ci_level,
            judged_units: k,
            unit_level: unit_level(s.ci_level, k),
            control_level: unit_level(s.ci_level, plan.phases.len()),
            warmup: s.drop,
            min_rounds: s.min_rounds(),
            max_rounds: s.max_rounds(),
            step: s.reps_step,
            ci_target: s.ci_target,
            futility_margin: s.futility_margin,
            rows_per_reference: s.rows_per_reference,
            hyperfine,
            knobs: BTreeMap::from([
                ("+3%", [crate::MIX_PLUS_3, crate::SIEVE_PLUS_3]),
                ("+10%", [crate::MIX_PLUS_10, crate::SIEVE_PLUS_10]),
            ]),
            estimate_s,
        }
    }

    /// The header: the host, then the run's settings.
    pub fn header(&self) -> String {
        let loads: Vec<&str> = self.loads.iter().map(|l| l.label()).collect();
        let phases: Vec<&str> = self.phases.iter().map(|p| p.arg()).collect();
        format!(
            "gate: {}\n\
             gate: {} repeats under {} on {}; tolerance ±{}; CI_LEVEL {}; K = {} judged units (new rule and hyperfine at {:.6} each, the control at {:.6}); rounds {}–{} (+{}, {} warm-up, ROWS_PER_REFERENCE {}, CI_TARGET {}, FUTILITY_MARGIN {}); seed {}; {}",
            self.host.line(),
            self.repeats,
            loads.join(","),
            phases.join(","),
            self.tolerance,
            self.ci_level,
            self.judged_units,
            self.unit_level,
            self.control_level,
            self.min_rounds,
            self.max_rounds,
            self.step,
            self.warmup,
            self.rows_per_reference,
            self.ci_target,
            self.futility_margin,
            self.seed,
            self.hyperfine,
        )
    }
}

/// One line of the first table.
#[derive(Clone, Debug, Serialize)]
pub struct Line {
    /// Phase.
    pub phase: Workload,
    /// Load.
    pub load: Load,
    /// A/A, +3% or +10%.
    pub comparison: Comparison,
    /// Rule.
    pub rule: Rule,
    /// Verdicts.
    pub n: usize,
    /// PASS.
    pub pass: usize,
    /// FAIL.
    pub fail: usize,
    /// INCONCLUSIVE, not judged included.
    pub inconclusive: usize,
    /// Of them, not judged (a control off, no ratio).
    pub not_judged: usize,
    /// Median resolution (fraction), over the verdicts that have one.
    pub median_resolution: Option<f64>,
    /// Median measured rounds of the unit in the baseline and the new job (hyperfine's `-r`).
    pub median_rounds: [f64; 2],
}

fn count(vs: &[&Verdict], status: GateStatus) -> usize {
    vs.iter().filter(|v| v.judgement.status == status).count()
}

fn median_of(xs: &[f64]) -> Option<f64> {
    (!xs.is_empty()).then(|| cell_stats::median(xs))
}

fn median_resolution(vs: &[&Verdict]) -> Option<f64> {
    let xs: Vec<f64> = vs
        .iter()
        .filter_map(|v| v.judgement.resolution)
        .filter(|r| r.is_finite())
        .collect();
    median_of(&xs)
}

fn resolution(r: Option<f64>) -> String {
    r.map_or_else(|| "—".into(), |r| format!("±{:.2}%", r * 100.0))
}

fn of(x: usize, n: usize) -> String {
    format!("{x}/{n}")
}

/// Every verdict grouped by phase, load, comparison and rule.
fn grouped(runs: &[RepeatRun]) -> BTreeMap<(Workload, Load, Comparison, Rule), Vec<&Verdict>> {
    let mut out: BTreeMap<_, Vec<&Verdict>> = BTreeMap::new();
    for v in runs.iter().flat_map(|r| &r.verdicts) {
        out.entry((v.phase, v.load, v.comparison, v.rule))
            .or_default()
            .push(v);
    }
    out
}

/// The first table's lines.
pub fn lines(runs: &[RepeatRun]) -> Vec<Line> {
    grouped(runs)
        .into_iter()
        .map(|((phase, load, comparison, rule), vs)| {
            let rounds = |i: usize| {
                let xs: Vec<f64> = vs.iter().map(|v| f64::from(v.rounds[i])).collect();
                median_of(&xs).unwrap_or(f64::NAN)
            };
            Line {
                phase,
                load,
                comparison,
                rule,
                n: vs.len(),
                pass: count(&vs, GateStatus::Pass),
                fail: count(&vs, GateStatus::Fail),
                inconclusive: count(&vs, GateStatus::Inconclusive),
                not_judged: vs.iter().filter(|v| v.judgement.why.is_some()).count(),
                median_resolution: median_resolution(&vs),
                median_rounds: [rounds(0), rounds(1)],
            }
        })
        .collect()
}

/// Table 1: per phase × load × comparison × rule.
fn verdict_table(lines: &[Line]) -> String {
    let mut out = String::from(
        "| phase | load | comparison | rule | verdicts | PASS | FAIL | INCONCLUSIVE | median resolution | median rounds (baseline · new) |\n\
         |---|---|---|---|---:|---:|---:|---:|---:|---:|\n",
    );
    for l in lines {
        let inconclusive = if l.not_judged > 0 {
            format!("{} ({} not judged)", l.inconclusive, l.not_judged)
        } else {
            l.inconclusive.to_string()
        };
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | {inconclusive} | {} | {} · {} |",
            l.phase.arg(),
            l.load.label(),
            l.comparison.label(),
            l.rule.label(),
            l.n,
            l.pass,
            l.fail,
            resolution(l.median_resolution),
            l.median_rounds[0],
            l.median_rounds[1],
        );
    }
    out
}

/// The verdicts of one rule and load on one comparison (on one phase, when given).
fn select(
    runs: &[RepeatRun],
    rule: Rule,
    load: Load,
    cmp: Comparison,
    phase: Option<Workload>,
) -> Vec<&Verdict> {
    runs.iter()
        .flat_map(|r| &r.verdicts)
        .filter(|v| (v.rule, v.load, v.comparison) == (rule, load, cmp))
        .filter(|v| phase.is_none_or(|p| v.phase == p))
        .collect()
}

/// FAILs per run: the repeats where any of `vs` is a FAIL, of the repeats they are of.
fn failed_runs(vs: &[&Verdict]) -> (usize, usize) {
    let all: BTreeSet<u32> = vs.iter().map(|v| v.repeat).collect();
    let failed: BTreeSet<u32> = vs
        .iter()
        .filter(|v| v.judgement.status == GateStatus::Fail)
        .map(|v| v.repeat)
        .collect();
    (failed.len(), all.len())
}

/// Table 2: false alarms per rule and load, per unit, per run and per phase.
fn false_alarm_table(setup: &Setup, runs: &[RepeatRun]) -> String {
    let mut out =
        String::from("| rule | load | A/A FAIL, units | A/A FAIL, runs | A/A PASS, units |");
    for p in &setup.phases {
        let _ = write!(out, " A/A FAIL on {} |", p.arg());
    }
    out.push_str("\n|---|---|---:|---:|---:|");
    out.push_str(&"---:|".repeat(setup.phases.len()));
    out.push('\n');
    for rule in Rule::ALL {
        for &load in &setup.loads {
            let aa = select(runs, rule, load, Comparison::Aa, None);
            let (failed, judged) = failed_runs(&aa);
            let _ = write!(
                out,
                "| {} | {} | {} | {} | {} |",
                rule.label(),
                load.label(),
                of(count(&aa, GateStatus::Fail), aa.len()),
                of(failed, judged),
                of(count(&aa, GateStatus::Pass), aa.len()),
            );
            for &p in &setup.phases {
                let on = select(runs, rule, load, Comparison::Aa, Some(p));
                let _ = write!(out, " {} |", of(count(&on, GateStatus::Fail), on.len()));
            }
            out.push('\n');
        }
    }
    out
}

/// Table 3: detections of the candidates per phase, load and rule.
fn detection_table(setup: &Setup, runs: &[RepeatRun]) -> String {
    let mut out = String::from(
        "| phase | load | rule | +3% FAIL | +3% PASS | +3% INCONCLUSIVE | share of +3% detected | +10% FAIL | +10% PASS | +10% INCONCLUSIVE |\n\
         |---|---|---|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for &phase in setup.phases.iter().filter(|&&p| p != Workload::Fib) {
        for &load in &setup.loads {
            for rule in Rule::ALL {
                let p3 = select(runs, rule, load, Comparison::Plus3, Some(phase));
                let p10 = select(runs, rule, load, Comparison::Plus10, Some(phase));
                let share = if p3.is_empty() {
                    "—".into()
                } else {
                    format!(
                        "{:.0}%",
                        count(&p3, GateStatus::Fail) as f64 / p3.len() as f64 * 100.0
                    )
                };
                let c = |vs: &[&Verdict], s| of(count(vs, s), vs.len());
                let _ = writeln!(
                    out,
                    "| {} | {} | {} | {} | {} | {} | {share} | {} | {} | {} |",
                    phase.arg(),
                    load.label(),
                    rule.label(),
                    c(&p3, GateStatus::Fail),
                    c(&p3, GateStatus::Pass),
                    c(&p3, GateStatus::Inconclusive),
                    c(&p10, GateStatus::Fail),
                    c(&p10, GateStatus::Pass),
                    c(&p10, GateStatus::Inconclusive),
                );
            }
        }
    }
    out
}

/// Table 4: the median resolution per phase and load, every comparison pooled, per rule.
fn resolution_table(setup: &Setup, runs: &[RepeatRun]) -> String {
    let mut out = String::from("| phase | load |");
    for rule in Rule::ALL {
        let _ = write!(out, " {} |", rule.label());
    }
    out.push_str("\n|---|---|---:|---:|---:|\n");
    for &phase in &setup.phases {
        for &load in &setup.loads {
            let _ = write!(out, "| {} | {} |", phase.arg(), load.label());
            for rule in Rule::ALL {
                let vs: Vec<&Verdict> = Comparison::ALL
                    .into_iter()
                    .flat_map(|c| select(runs, rule, load, c, Some(phase)))
                    .collect();
                let _ = write!(out, " {} |", resolution(median_resolution(&vs)));
            }
            out.push('\n');
        }
    }
    out
}

/// The acceptance figures for the new rule, each with whether it was met.
fn acceptance(setup: &Setup, runs: &[RepeatRun]) -> String {
    let met = |ok: bool| if ok { "met" } else { "NOT met" };
    let mut aa = Vec::new();
    let mut aa_ok = true;
    let mut p10 = Vec::new();
    let mut p10_ok = true;
    let (mut p3_pass, mut p3_n) = (0, 0);
    for &phase in &setup.phases {
        for &load in &setup.loads {
            let at = format!("{} {}", phase.arg(), load.label());
            let vs = select(runs, Rule::New, load, Comparison::Aa, Some(phase));
            let (failed, judged) = failed_runs(&vs);
            aa_ok &= failed * 20 <= judged;
            aa.push(format!("{at} {}", of(failed, judged)));
            if phase == Workload::Fib {
                continue;
            }
            let vs = select(runs, Rule::New, load, Comparison::Plus10, Some(phase));
            let fails = count(&vs, GateStatus::Fail);
            p10_ok &= fails * 20 >= vs.len() * 19;
            p10.push(format!("{at} {}", of(fails, vs.len())));
            let vs = select(runs, Rule::New, load, Comparison::Plus3, Some(phase));
            p3_pass += count(&vs, GateStatus::Pass);
            p3_n += vs.len();
        }
    }
    let mut out = String::from("Acceptance, new rule:\n");
    let _ = writeln!(
        out,
        "- A/A false FAIL at most 1 in 20 runs per phase and load: {} — {}",
        aa.join(", "),
        met(aa_ok)
    );
    if !p10.is_empty() {
        let _ = writeln!(
            out,
            "- +10% FAIL at least 19 in 20 on mix and primes: {} — {}",
            p10.join(", "),
            met(p10_ok)
        );
        let _ = writeln!(
            out,
            "- +3% never PASS: {} PASS — {}",
            of(p3_pass, p3_n),
            met(p3_pass == 0)
        );
    }
    out
}

/// Every table, in order, with a blank line between.
pub fn tables(setup: &Setup, runs: &[RepeatRun]) -> String {
    [
        verdict_table(&lines(runs)),
        false_alarm_table(setup, runs),
        detection_table(setup, runs),
        resolution_table(setup, runs),
        acceptance(setup, runs),
    ]
    .into_iter()
    .filter(|t| t.lines().count() > 2 || t.starts_with("Acceptance"))
    .collect::<Vec<_>>()
    .join("\n")
}

/// The JSON file: the settings, the first table's lines, every repeat with its jobs'
/// per-round ratios, its hyperfine runs and every verdict.
#[derive(Serialize)]
struct GateJson<'a> {
    #[serde(flatten)]
    setup: &'a Setup,
    lines: Vec<Line>,
    runs: &'a [RepeatRun],
    /// Seconds so far.
    seconds: f64,
    /// Whether every repeat ran (the file is written after each).
    finished: bool,
}

/// Writes the JSON to `path`.
pub fn write_json(
    path: &Path,
    setup: &Setup,
    runs: &[RepeatRun],
    seconds: f64,
    finished: bool,
) -> Result<()> {
    let json = GateJson {
        setup,
        lines: lines(runs),
        runs,
        seconds,
        finished,
    };
    std::fs::write(path, cell_schema::to_json(&json))
        .with_context(|| format!("writing {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::super::judge::{Interval, Judgement};
    use super::*;

    fn verdict(repeat: u32, phase: Workload, cmp: Comparison, status: GateStatus) -> Verdict {
        Verdict {
            load: Load::None,
            repeat,
            phase,
            comparison: cmp,
            rule: Rule::New,
            rounds: [10, 15],
            judgement: Judgement {
                status,
                interval: Some(Interval {
                    change: 1.0,
                    lo: 0.99,
                    hi: 1.01,
                }),
                resolution: Some(0.001 * f64::from(repeat + 1)),
                why: None,
            },
        }
    }

    fn run(repeat: u32, verdicts: Vec<Verdict>) -> RepeatRun {
        RepeatRun {
            load: Load::None,
            repeat,
            order: Vec::new(),
            seconds: 1.0,
            jobs: Vec::new(),
            hyperfine: Vec::new(),
            verdicts,
        }
    }

    #[test]
    fn false_alarms_are_counted_per_unit_and_per_run() {
        use Comparison::Aa;
        use GateStatus::{Fail, Pass};
        use Workload::{Fib, Mix};
        // Repeat 0 FAILs on both phases, repeat 1 on none: 2 of 4 units, 1 of 2 runs.
        let runs = [
            run(
                0,
                vec![verdict(0, Mix, Aa, Fail), verdict(0, Fib, Aa, Fail)],
            ),
            run(
                1,
                vec![verdict(1, Mix, Aa, Pass), verdict(1, Fib, Aa, Pass)],
            ),
        ];
        let vs = select(&runs, Rule::New, Load::None, Aa, None);
        assert_eq!(failed_runs(&vs), (1, 2));
        let l = lines(&runs);
        assert_eq!((l[0].n, l[0].fail, l[0].pass), (2, 1, 1));
        // Resolutions 0.1% and 0.2%: median 0.15%.
        assert_eq!(resolution(l[0].median_resolution), "±0.15%");
        assert_eq!(l[0].median_rounds.map(|r| r.to_string()), ["10", "15"]);
        let setup = Setup::new(
            &Plan::new(&[Mix, Fib], &[Load::None], 2, 1, None),
            &cell_model::Settings::default(),
            Host::now(),
            "hyperfine 1".into(),
            [1.0, 2.0],
        );
        let t = false_alarm_table(&setup, &runs);
        assert!(
            t.contains("| new | none | 2/4 | 1/2 | 2/4 | 1/2 | 1/2 |"),
            "{t}"
        );
        let a = acceptance(&setup, &runs);
        assert!(a.contains("mix none 1/2, fib none 1/2 — NOT met"), "{a}");
    }
}
