//! `--gate`: gate verdicts between two runs (README.md, "Gate verdicts between runs").
//!
//! In each repeat and under each load, cell times a baseline job and then a new job of the
//! same units with the real protocol of cell-run, the new one judged against the baseline's
//! per-round ratios as `cell run` judges a row against the baseline the gate will use. Units:
//! the reference, its A/A control (a copy, not judged), an A/A row (a copy in both jobs), and
//! on mix and primes a +3% and a +10% row (a copy of the reference in the baseline, the build
//! with both work knobs raised in the new job). The old rule, the new rule and hyperfine at
//! the same budget judge every (row, phase) between the two runs, on the same samples.

mod host;
mod judge;
mod means;
mod old;
mod plan;
mod report;

use std::path::Path;
use std::time::Instant;

use anyhow::{Context as _, Result, bail};
use cell_run::protocol::{self, Params, Unit};
use cell_run::timing::EngineOptions;
use cell_schema::{Clock, Phase, ProtocolMode, Stopped};
use cell_stats::{SplitMix64, shuffle};
use cell_verdict::unit_level;
use serde::Serialize;

use crate::report::{Load, Workload};
use crate::{Args, Busy};
use judge::Judgement;
use means::{MeanRatio, Means};
use plan::{Bins, Plan, duration, estimate};

/// What a judged row compares between the two runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub enum Comparison {
    /// The same copy of the reference in both runs.
    #[serde(rename = "A/A")]
    Aa,
    /// A copy of the reference, then the build doing 3% more work.
    #[serde(rename = "+3%")]
    Plus3,
    /// A copy of the reference, then the build doing 10% more work.
    #[serde(rename = "+10%")]
    Plus10,
}

impl Comparison {
    /// Every comparison, in the order the tables print them.
    pub const ALL: [Self; 3] = [Self::Aa, Self::Plus3, Self::Plus10];

    /// Its name in the tables.
    pub fn label(self) -> &'static str {
        match self {
            Self::Aa => "A/A",
            Self::Plus3 => "+3%",
            Self::Plus10 => "+10%",
        }
    }

    /// Whether its row is timed on `phase`: A/A on every phase, a candidate where a work knob
    /// exists (fib has none).
    fn on(self, phase: Workload) -> bool {
        self == Self::Aa || phase != Workload::Fib
    }
}

/// A rule judging one unit between two runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Rule {
    /// The gate's rule before this change ([`old`]).
    Old,
    /// The gate's rule now (cell-verdict's [`cell_verdict::change`]).
    New,
    /// hyperfine's ratio of means, run by run, at the same budget ([`means`]).
    Hyperfine,
}

impl Rule {
    /// Every rule, in the order the tables print them.
    pub const ALL: [Self; 3] = [Self::Old, Self::New, Self::Hyperfine];

    /// Its name in the tables.
    pub fn label(self) -> &'static str {
        match self {
            Self::Old => "old",
            Self::New => "new",
            Self::Hyperfine => "hyperfine",
        }
    }
}

/// Which of a repeat's two runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    /// The first: no baseline to judge against.
    Baseline,
    /// The second, judged against the first.
    New,
}

impl Side {
    fn label(self) -> &'static str {
        match self {
            Self::Baseline => "baseline",
            Self::New => "new",
        }
    }
}

/// A timed block of a repeat: a cell job, or hyperfine on every judged unit of one side.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Block {
    Cell(Side),
    Hyperfine(Side),
}

impl Block {
    fn label(self) -> String {
        match self {
            Self::Cell(s) => format!("cell {}", s.label()),
            Self::Hyperfine(s) => format!("hyperfine {}", s.label()),
        }
    }
}

/// Every order a repeat's four blocks may run in: cell's baseline job before its new one (the
/// new job is judged against the baseline's ratios), and each hyperfine block after the cell
/// job whose measured rounds it takes as its `-r`. One is drawn per repeat and load.
const ORDERS: [[Block; 4]; 3] = {
    use Block::{Cell, Hyperfine};
    use Side::{Baseline, New};
    [
        [
            Cell(Baseline),
            Hyperfine(Baseline),
            Cell(New),
            Hyperfine(New),
        ],
        [
            Cell(Baseline),
            Cell(New),
            Hyperfine(Baseline),
            Hyperfine(New),
        ],
        [
            Cell(Baseline),
            Cell(New),
            Hyperfine(New),
            Hyperfine(Baseline),
        ],
    ]
};

/// The unit of the A/A control; the reference is unit 0, the judged rows follow.
const CONTROL: usize = 1;

/// One (unit, phase) of a cell job as recorded.
#[derive(Clone, Debug, Serialize)]
pub struct UnitRun {
    /// `control`, or the comparison of a judged row.
    pub row: &'static str,
    /// Its index in the job (0 is the reference).
    pub unit: usize,
    /// The phase.
    pub phase: Workload,
    /// The binary timed.
    pub binary: String,
    /// Why its rounds on the phase stopped.
    pub stopped: Option<Stopped>,
    /// Its per-round CPU-time ratios to the reference, warm-up excluded: one per measured
    /// round, the samples every rule judges.
    pub ratios: Vec<f64>,
}

/// One cell job as recorded.
#[derive(Clone, Debug, Serialize)]
pub struct JobRun {
    /// Baseline or new.
    pub side: Side,
    /// The seed of its order.
    pub seed: u64,
    /// Seconds it took.
    pub seconds: f64,
    /// Its measured rounds (the longest unit's).
    pub measured_rounds: u32,
    /// Why it stopped.
    pub stopped: Stopped,
    /// Process runs, warm-up included.
    pub process_runs: usize,
    /// The control and every judged row on every phase.
    pub units: Vec<UnitRun>,
}

impl JobRun {
    fn ratios(&self, unit: usize, phase: Workload) -> &[f64] {
        self.units
            .iter()
            .find(|u| u.unit == unit && u.phase == phase)
            .map_or(&[], |u| &u.ratios)
    }
}

/// One hyperfine run of the reference and a row on a phase.
#[derive(Clone, Debug, Serialize)]
pub struct HyperfineRun {
    /// The cell job whose rounds it matched.
    pub side: Side,
    /// The row's comparison.
    pub comparison: Comparison,
    /// The phase.
    pub phase: Workload,
    /// `-r`: the row's measured rounds in that job.
    pub runs: u32,
    /// The reference's figures.
    pub reference: Means,
    /// The row's.
    pub candidate: Means,
    /// Seconds it took.
    pub seconds: f64,
}

/// One rule's verdict on one unit of one repeat.
#[derive(Clone, Debug, Serialize)]
pub struct Verdict {
    /// The load it ran under.
    pub load: Load,
    /// The repeat (0-based).
    pub repeat: u32,
    /// The phase.
    pub phase: Workload,
    /// A/A, +3% or +10%.
    pub comparison: Comparison,
    /// The rule.
    pub rule: Rule,
    /// The unit's measured rounds in the baseline and the new job (hyperfine's `-r`).
    pub rounds: [u32; 2],
    /// What the rule said.
    #[serde(flatten)]
    pub judgement: Judgement,
}

/// One repeat under one load.
#[derive(Clone, Debug, Serialize)]
pub struct RepeatRun {
    /// The load.
    pub load: Load,
    /// The repeat (0-based).
    pub repeat: u32,
    /// The blocks in the order they ran, hyperfine's units in theirs.
    pub order: Vec<String>,
    /// Seconds it took.
    pub seconds: f64,
    /// The baseline job and the new one.
    pub jobs: Vec<JobRun>,
    /// Every hyperfine run, in the order run.
    pub hyperfine: Vec<HyperfineRun>,
    /// Every rule's verdict on every unit.
    pub verdicts: Vec<Verdict>,
}

/// What a run shares.
struct Gate<'a> {
    plan: &'a Plan,
    settings: &'a cell_model::Settings,
    bins: &'a Bins,
    dir: &'a Path,
    rng: SplitMix64,
}

impl Gate<'_> {
    /// The adaptive budget of versions.env, sequential; the new job's rows settle at the
    /// level of the run's family of K judged units, as `cell run`'s do.
    fn params(&self, seed: u64) -> Params {
        let s = self.settings;
        Params {
            phases: self
                .plan
                .phases
                .iter()
                .map(|p| Phase::from(p.arg()))
                .collect(),
            warmup: s.drop,
            min_rounds: s.min_rounds(),
            max_rounds: s.max_rounds(),
            step: s.reps_step,
            ci_target: s.ci_target,
            ci_level: s.ci_level,
            rows_per_reference: s.rows_per_reference,
            time_cap_s: s.time_cap_s,
            seed,
            mode: ProtocolMode::Sequential,
            futility_margin: s.futility_margin,
            tolerance: s.tolerance,
            settle_level: unit_level(s.ci_level, self.plan.judged_units()),
            fail_level: s.ci_level,
        }
        .normalized()
    }

    /// One cell job of `side`; the new one's judged rows carry the baseline's ratios.
    fn cell_job(&self, side: Side, repeat: u32, baseline: Option<&JobRun>) -> Result<JobRun> {
        let t0 = Instant::now();
        let phase = |p: Workload| Phase::from(p.arg());
        let all: Vec<Phase> = self.plan.phases.iter().map(|&p| phase(p)).collect();
        let mut units = vec![
            Unit::new(all.clone(), Clock::Cpu, false),
            Unit::new(all, Clock::Cpu, false),
        ];
        let mut bins = vec![self.bins.reference.as_str(), self.bins.control.as_str()];
        for (u, (cmp, phases)) in (2..).zip(&self.plan.rows) {
            let mut unit = Unit::new(phases.iter().map(|&p| phase(p)).collect(), Clock::Cpu, true);
            if let Some(b) = baseline {
                unit.against = phases
                    .iter()
                    .map(|&p| (phase(p), b.ratios(u, p).to_vec()))
                    .collect();
            }
            units.push(unit);
            bins.push(self.bins.row(*cmp, side));
        }
        let seed = 1000 + 2 * u64::from(repeat) + u64::from(side == Side::New);
        let params = self.params(seed);
        let options = EngineOptions::from_settings(self.settings);
        let out = crate::protocols::job(&bins, &units, &params, self.dir, &options)
            .with_context(|| format!("cell's {} job", side.label()))?;
        let mut recorded = Vec::new();
        let rows = std::iter::once((CONTROL, "control", self.plan.phases.clone())).chain(
            (2..)
                .zip(&self.plan.rows)
                .map(|(u, (c, ps))| (u, c.label(), ps.clone())),
        );
        for (u, row, phases) in rows {
            for p in phases {
                let ph = phase(p);
                recorded.push(UnitRun {
                    row,
                    unit: u,
                    phase: p,
                    binary: bins[u].to_owned(),
                    stopped: out.stops.get(&(u, ph.clone())).map(|s| s.reason),
                    ratios: protocol::ratios(&out.runs, out.warmup, u, &ph, Clock::Cpu, out.mode),
                });
            }
        }
        Ok(JobRun {
            side,
            seed,
            seconds: t0.elapsed().as_secs_f64(),
            measured_rounds: out.measured_rounds,
            stopped: out.stopped,
            process_runs: out.runs.len(),
            units: recorded,
        })
    }

    /// hyperfine on every judged unit of `job`, in a seeded random order, each with `-r` the
    /// unit's measured rounds there, unpinned as a user runs it.
    fn hyperfine_block(&mut self, job: &JobRun) -> Result<Vec<HyperfineRun>> {
        let mut units = self.plan.judged();
        shuffle(&mut units, &mut self.rng);
        let mut out = Vec::new();
        for (u, cmp, phase) in units {
            let t0 = Instant::now();
            let runs = u32::try_from(job.ratios(u, phase).len()).unwrap_or(u32::MAX);
            if runs == 0 {
                bail!(
                    "cell's {} job has no ratio of {} on {}: nothing to match hyperfine's runs to",
                    job.side.label(),
                    cmp.label(),
                    phase.arg()
                );
            }
            let candidate = self.bins.row(cmp, job.side);
            let [r, c] = crate::hyperfine::time(
                &self.bins.reference,
                candidate,
                phase.arg(),
                runs,
                self.dir,
            )
            .with_context(|| format!("hyperfine on {} {}", phase.arg(), cmp.label()))?;
            out.push(HyperfineRun {
                side: job.side,
                comparison: cmp,
                phase,
                runs,
                reference: Means::of(&r),
                candidate: Means::of(&c),
                seconds: t0.elapsed().as_secs_f64(),
            });
        }
        Ok(out)
    }

    /// One repeat under the load already running: the four blocks in a drawn order, then
    /// every rule on every unit.
    fn repeat(&mut self, load: Load, repeat: u32) -> Result<RepeatRun> {
        let t0 = Instant::now();
        let order = ORDERS[usize::try_from(self.rng.below(ORDERS.len() as u64)).unwrap_or(0)];
        let (mut baseline, mut new) = (None, None);
        let mut hyperfine = Vec::new();
        let mut labels = Vec::new();
        for block in order {
            labels.push(block.label());
            match block {
                Block::Cell(Side::Baseline) => {
                    baseline = Some(self.cell_job(Side::Baseline, repeat, None)?);
                }
                Block::Cell(Side::New) => {
                    let b = baseline.as_ref().context("the baseline job runs first")?;
                    new = Some(self.cell_job(Side::New, repeat, Some(b))?);
                }
                Block::Hyperfine(side) => {
                    let job = match side {
                        Side::Baseline => baseline.as_ref(),
                        Side::New => new.as_ref(),
                    };
                    let job = job.context("a hyperfine block runs after its cell job")?;
                    let runs = self.hyperfine_block(job)?;
                    labels.extend(runs.iter().map(|h| {
                        format!(
                            "  hyperfine {} {} {}",
                            side.label(),
                            h.phase.arg(),
                            h.comparison.label()
                        )
                    }));
                    hyperfine.extend(runs);
                }
            }
        }
        let (Some(baseline), Some(new)) = (baseline, new) else {
            bail!("a repeat runs both cell jobs");
        };
        let verdicts = self.verdicts(load, repeat, [&baseline, &new], &hyperfine);
        Ok(RepeatRun {
            load,
            repeat,
            order: labels,
            seconds: t0.elapsed().as_secs_f64(),
            jobs: vec![baseline, new],
            hyperfine,
            verdicts,
        })
    }

    /// Every rule on every judged unit, from the same samples.
    fn verdicts(
        &self,
        load: Load,
        repeat: u32,
        jobs: [&JobRun; 2],
        hyperfine: &[HyperfineRun],
    ) -> Vec<Verdict> {
        let s = self.settings;
        let control_level = unit_level(s.ci_level, self.plan.phases.len());
        let level = unit_level(s.ci_level, self.plan.judged_units());
        let mut out = Vec::new();
        for (u, comparison, phase) in self.plan.judged() {
            let [base, new] = jobs.map(|j| j.ratios(u, phase));
            let controls = jobs.map(|j| j.ratios(CONTROL, phase));
            let rounds = [base, new].map(|r| u32::try_from(r.len()).unwrap_or(u32::MAX));
            let hf = |side| {
                hyperfine
                    .iter()
                    .find(|h| (h.side, h.comparison, h.phase) == (side, comparison, phase))
                    .map(|h| MeanRatio::of(&h.reference, &h.candidate))
            };
            let by_hyperfine = match (hf(Side::Baseline), hf(Side::New)) {
                (Some(o), Some(n)) => means::judge(o, n, level, s.tolerance),
                _ => Judgement::not_judged("hyperfine did not run".into(), None, None),
            };
            for (rule, judgement) in [
                (
                    Rule::Old,
                    old::judge(controls, base, new, s.ci_level, s.tolerance),
                ),
                (
                    Rule::New,
                    judge::new_rule(controls, base, new, (control_level, level), s.tolerance),
                ),
                (Rule::Hyperfine, by_hyperfine.clone()),
            ] {
                out.push(Verdict {
                    load,
                    repeat,
                    phase,
                    comparison,
                    rule,
                    rounds,
                    judgement,
                });
            }
        }
        out
    }
}

/// The `--gate` mode: header, estimate, every repeat under every load, the tables, the JSON.
pub fn run(a: &Args) -> Result<()> {
    let plan = Plan::of(a);
    let host = host::Host::now();
    let version = crate::hyperfine::version()?;
    let cell_plan =
        cell_model::Plan::load(&a.root).context("run from the repository root (or pass --root)")?;
    let s = &cell_plan.settings;
    let dir = tempfile::tempdir().context("a temp dir for the binaries")?;
    let bins = Bins::build(dir.path(), &a.root)?;
    let (low, high) = estimate(&plan, s);
    let setup = report::Setup::new(&plan, s, host, version, [low, high]);
    println!("{}", setup.header());
    eprintln!(
        "gate: estimated {} to {} ({low:.0} s if every unit stops at its first look, {high:.0} s if every one runs to REPS_MAX)",
        duration(low),
        duration(high),
    );
    let started = Instant::now();
    let mut gate = Gate {
        plan: &plan,
        settings: s,
        bins: &bins,
        dir: dir.path(),
        rng: SplitMix64::new(plan.seed),
    };
    let mut runs: Vec<RepeatRun> = Vec::new();
    let total = plan.repeats as usize * plan.loads.len();
    for repeat in 0..plan.repeats {
        for &load in &plan.loads {
            let busy = Busy::of(load);
            let r = gate.repeat(load, repeat)?;
            drop(busy);
            let so_far = started.elapsed().as_secs_f64();
            let left = so_far / (runs.len() + 1) as f64 * (total - runs.len() - 1) as f64;
            eprintln!(
                "gate: load {} · repeat {}/{} in {:.0} s ({so_far:.0} s in all, about {left:.0} s left; {})",
                load.label(),
                repeat + 1,
                plan.repeats,
                r.seconds,
                r.order
                    .iter()
                    .filter(|l| !l.starts_with(' '))
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            runs.push(r);
            if let Some(path) = &plan.json {
                report::write_json(path, &setup, &runs, so_far, false)?;
            }
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    println!();
    print!("{}", report::tables(&setup, &runs));
    println!("took {seconds:.0} s ({:.1} min)", seconds / 60.0);
    if let Some(path) = &plan.json {
        report::write_json(path, &setup, &runs, seconds, true)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_order_runs_each_hyperfine_block_after_its_cell_job_and_baseline_first() {
        for order in ORDERS {
            let at = |b| order.iter().position(|&x| x == b).unwrap();
            assert_eq!(at(Block::Cell(Side::Baseline)), 0);
            for side in [Side::Baseline, Side::New] {
                assert!(at(Block::Cell(side)) < at(Block::Hyperfine(side)));
            }
        }
    }
}
