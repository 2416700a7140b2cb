//! The runs of one row on one phase as columns (schema version 2): one array per field, each
//! written on one line, so a 30-round row costs a dozen lines instead of 400 and a diff of a
//! re-run still shows which column moved.
//!
//! Times are whole microseconds (`wall_us`, `user_us`, `sys_us`); CPU time is `user + sys`,
//! written as `cpu_us` only where a run's CPU time is not that sum (a file of version 1 that
//! did not record the two apart). Version 1 wrote one object per run (`runs`); both read into
//! the same [`Run`] list, and both forms are checked here, at the boundary, so no negative,
//! non-finite or ragged value reaches a statistic.

use std::fmt;

use schemars::JsonSchema;
use serde::de::{self, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::Run;
use crate::write::{one_line, one_line_opt};

/// Every run of a row on one phase, one array per field; entry `i` of each is run `i`, in
/// the order the runs were timed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Samples {
    /// Round of each run; absent when run `i` is of round `i` (a row runs once a round; the
    /// reference, which may run more than once a round, writes it).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "one_line_opt"
    )]
    pub round: Option<Vec<u32>>,
    /// Position of each run in its round's order: one value per run, so its length is the
    /// number of runs.
    #[serde(serialize_with = "one_line")]
    pub seq: Vec<u32>,
    /// The first this many runs are warm-up (excluded from statistics), the rest measured:
    /// how every job records them. Absent when `warmup` lists them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup_runs: Option<u32>,
    /// Whether each run was warm-up, when the warm-up runs are not the first ones.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "one_line_opt"
    )]
    pub warmup: Option<Vec<bool>>,
    /// Wall microseconds, spawn to reap.
    #[serde(serialize_with = "one_line")]
    pub wall_us: Vec<u64>,
    /// User CPU microseconds (absent when no run recorded them apart).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "one_line_opt"
    )]
    pub user_us: Option<Vec<Option<u64>>>,
    /// System CPU microseconds.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "one_line_opt"
    )]
    pub sys_us: Option<Vec<Option<u64>>>,
    /// CPU microseconds, user + system: written only when some run's is not `user_us +
    /// sys_us` (or either is missing); otherwise read as that sum.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "one_line_opt"
    )]
    pub cpu_us: Option<Vec<u64>>,
    /// Microseconds the hypervisor stole from the CPUs each run ran on, where the kernel
    /// reports it (`null` where it does not); absent when no run lost any.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "one_line_opt"
    )]
    pub steal_us: Option<Vec<Option<u64>>>,
    /// Peak resident set of each run, KiB.
    #[serde(serialize_with = "one_line")]
    pub maxrss_kib: Vec<u64>,
    /// Whether each run printed the expected answer and exited 0; absent when every one did.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "one_line_opt"
    )]
    pub ok: Option<Vec<bool>>,
    /// Position (`seq`) of the reference run each run's ratio pairs with; absent when no run
    /// pairs (the reference's own runs).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "one_line_opt"
    )]
    pub paired_with: Option<Vec<Option<u32>>>,
}

/// Seconds as whole microseconds. Every time reaching here was checked finite and not
/// negative (by the timing engine or by [`check_seconds`]); the cast saturates regardless.
#[expect(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    reason = "a checked, non-negative time far below 2^64 µs"
)]
fn micros(seconds: f64) -> u64 {
    (seconds * 1e6).round().max(0.0) as u64
}

#[expect(clippy::cast_precision_loss, reason = "microseconds below 2^53")]
fn seconds(us: u64) -> f64 {
    us as f64 / 1e6
}

/// A time as the record holds it, whole microseconds: what a reader of the written file gets
/// back, to the bit. A job computes its figures from times so written, so a figure recomputed
/// from its file is the figure it wrote.
pub fn as_written(seconds_: f64) -> f64 {
    seconds(micros(seconds_))
}

impl Samples {
    /// The columns of `runs`.
    pub fn of(runs: &[Run]) -> Self {
        let col = |f: fn(&Run) -> Option<f64>| -> Option<Vec<Option<u64>>> {
            runs.iter()
                .any(|r| f(r).is_some())
                .then(|| runs.iter().map(|r| f(r).map(micros)).collect())
        };
        let user_us = col(|r| r.user_s);
        let sys_us = col(|r| r.sys_s);
        let derived = runs.iter().all(|r| match (r.user_s, r.sys_s) {
            (Some(u), Some(s)) => micros(u) + micros(s) == micros(r.cpu_s),
            _ => false,
        });
        let paired = runs.iter().any(|r| r.paired_with.is_some());
        let in_order = runs
            .iter()
            .enumerate()
            .all(|(i, r)| u32::try_from(i) == Ok(r.round));
        let leading = runs.iter().take_while(|r| r.warmup).count();
        let prefix = runs[leading..].iter().all(|r| !r.warmup);
        let all_ok = runs.iter().all(|r| r.ok);
        Self {
            round: (!in_order).then(|| runs.iter().map(|r| r.round).collect()),
            seq: runs.iter().map(|r| r.seq).collect(),
            warmup_runs: prefix.then(|| u32::try_from(leading).unwrap_or(u32::MAX)),
            warmup: (!prefix).then(|| runs.iter().map(|r| r.warmup).collect()),
            wall_us: runs.iter().map(|r| micros(r.wall_s)).collect(),
            user_us,
            sys_us,
            cpu_us: (!derived).then(|| runs.iter().map(|r| micros(r.cpu_s)).collect()),
            // Nothing tells a steal of 0 from none reported; a column of zeros was 3% of a
            // file.
            steal_us: runs
                .iter()
                .any(|r| r.steal_s.is_some_and(|s| micros(s) > 0))
                .then(|| runs.iter().map(|r| r.steal_s.map(micros)).collect()),
            maxrss_kib: runs.iter().map(|r| r.maxrss_kib).collect(),
            ok: (!all_ok).then(|| runs.iter().map(|r| r.ok).collect()),
            paired_with: paired.then(|| runs.iter().map(|r| r.paired_with).collect()),
        }
    }

    /// The runs, every column checked to hold one value per run and every run to have a CPU
    /// time (its own `cpu_us`, or `user_us` and `sys_us`).
    pub fn runs(&self) -> Result<Vec<Run>, String> {
        let n = self.seq.len();
        let lengths = [
            ("round", self.round.as_ref().map(Vec::len)),
            ("warmup", self.warmup.as_ref().map(Vec::len)),
            ("wall_us", Some(self.wall_us.len())),
            ("user_us", self.user_us.as_ref().map(Vec::len)),
            ("sys_us", self.sys_us.as_ref().map(Vec::len)),
            ("cpu_us", self.cpu_us.as_ref().map(Vec::len)),
            ("steal_us", self.steal_us.as_ref().map(Vec::len)),
            ("maxrss_kib", Some(self.maxrss_kib.len())),
            ("ok", self.ok.as_ref().map(Vec::len)),
            ("paired_with", self.paired_with.as_ref().map(Vec::len)),
        ];
        if let Some((name, Some(len))) = lengths.iter().find(|(_, l)| l.is_some_and(|l| l != n)) {
            return Err(format!(
                "samples: `{name}` holds {len} values and `seq` {n}: every column holds one value per run"
            ));
        }
        let warmup_runs = match (self.warmup_runs, &self.warmup) {
            (Some(k), None) if usize::try_from(k).is_ok_and(|k| k <= n) => k,
            (None, Some(_)) => 0,
            (Some(k), None) => {
                return Err(format!(
                    "samples: `warmup_runs` is {k}, more than the {n} runs"
                ));
            }
            _ => {
                return Err("samples: give exactly one of `warmup_runs` and `warmup`".to_owned());
            }
        };
        let at = |c: &Option<Vec<Option<u64>>>, i: usize| c.as_ref().and_then(|v| v[i]);
        (0..n)
            .map(|i| {
                let (user, sys) = (at(&self.user_us, i), at(&self.sys_us, i));
                let cpu = match (&self.cpu_us, user, sys) {
                    (Some(c), _, _) => c[i],
                    (None, Some(u), Some(s)) => u.checked_add(s).ok_or_else(|| "samples: cpu time overflows".to_owned())?,
                    _ => {
                        return Err(format!(
                            "samples: run {i} has no CPU time: give `cpu_us`, or `user_us` and `sys_us`"
                        ));
                    }
                };
                let index = u32::try_from(i).map_err(|_| "samples: too many runs".to_owned())?;
                Ok(Run {
                    round: self.round.as_ref().map_or(index, |r| r[i]),
                    seq: self.seq[i],
                    warmup: self
                        .warmup
                        .as_ref()
                        .map_or(index < warmup_runs, |w| w[i]),
                    wall_s: seconds(self.wall_us[i]),
                    cpu_s: seconds(cpu),
                    user_s: user.map(seconds),
                    sys_s: sys.map(seconds),
                    steal_s: at(&self.steal_us, i).map(seconds),
                    maxrss_kib: self.maxrss_kib[i],
                    ok: self.ok.as_ref().is_none_or(|o| o[i]),
                    paired_with: self.paired_with.as_ref().and_then(|p| p[i]),
                })
            })
            .collect()
    }
}

/// A time of a version-1 run: finite, not negative, and below 10^12 s (so it writes back as
/// whole microseconds in a `u64`).
fn check_seconds(what: &str, i: usize, v: f64) -> Result<(), String> {
    if v.is_finite() && (0.0..1e12).contains(&v) {
        Ok(())
    } else {
        Err(format!(
            "runs[{i}].{what} is {v}: a time is a finite number of seconds, never negative"
        ))
    }
}

/// `PhaseResult::runs` on the wire: written as [`Samples`] (`samples`), read from that or
/// from version 1's list of run objects (`runs`).
pub mod runs {
    use super::{
        Deserialize, Deserializer, MapAccess, Run, Samples, SeqAccess, Serialize, Serializer,
        Visitor, check_seconds, de, fmt,
    };

    /// Writes the columns.
    pub fn serialize<S: Serializer>(runs: &[Run], s: S) -> Result<S::Ok, S::Error> {
        Samples::of(runs).serialize(s)
    }

    /// Reads either form.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Run>, D::Error> {
        d.deserialize_any(RunsVisitor)
    }

    struct RunsVisitor;

    impl<'de> Visitor<'de> for RunsVisitor {
        type Value = Vec<Run>;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("the samples of a row (columns), or a list of runs (version 1)")
        }

        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<Run>, A::Error> {
            let mut runs = Vec::new();
            while let Some(run) = seq.next_element::<Run>()? {
                let i = runs.len();
                for (what, v) in [("wall_s", Some(run.wall_s)), ("cpu_s", Some(run.cpu_s))]
                    .into_iter()
                    .chain([
                        ("user_s", run.user_s),
                        ("sys_s", run.sys_s),
                        ("steal_s", run.steal_s),
                    ])
                {
                    if let Some(v) = v {
                        check_seconds(what, i, v).map_err(de::Error::custom)?;
                    }
                }
                runs.push(run);
            }
            Ok(runs)
        }

        fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Vec<Run>, A::Error> {
            let samples = Samples::deserialize(de::value::MapAccessDeserializer::new(map))?;
            samples.runs().map_err(de::Error::custom)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(round: u32, seq: u32, wall: f64, user: f64, sys: f64) -> Run {
        Run {
            round,
            seq,
            warmup: round == 0,
            wall_s: wall,
            cpu_s: user + sys,
            user_s: Some(user),
            sys_s: Some(sys),
            steal_s: None,
            maxrss_kib: 1_400,
            ok: true,
            paired_with: (seq > 0).then_some(0),
        }
    }

    #[derive(Serialize, Deserialize, PartialEq, Debug)]
    struct Holder {
        #[serde(rename = "samples", alias = "runs", with = "runs")]
        runs: Vec<Run>,
    }

    #[test]
    fn columns_are_one_line_each_and_cpu_is_derived() {
        let mut second = run(0, 1, 0.5, 0.49, 0.001);
        second.warmup = false;
        let h = Holder {
            runs: vec![run(0, 0, 0.412_345, 0.41, 0.002), second],
        };
        let text = crate::to_json(&h);
        assert_eq!(
            text,
            "{\n  \"samples\": {\n    \"round\": [0,0],\n    \"seq\": [0,1],\n    \"warmup_runs\": 1,\n    \"wall_us\": [412345,500000],\n    \"user_us\": [410000,490000],\n    \"sys_us\": [2000,1000],\n    \"maxrss_kib\": [1400,1400],\n    \"paired_with\": [null,0]\n  }\n}\n"
        );
        let back: Holder = crate::read::from_str_unique(&text).unwrap();
        assert_eq!(back, h);
        assert_eq!(
            crate::to_json(&back),
            text,
            "a second write is the same bytes"
        );
    }

    #[test]
    fn a_cpu_time_that_is_not_the_sum_is_written_out() {
        let mut r = run(1, 0, 0.3, 0.2, 0.1);
        r.cpu_s = 0.31;
        let mut old = run(1, 1, 0.3, 0.2, 0.1);
        (old.user_s, old.sys_s) = (None, None);
        let s = Samples::of(&[r, old]);
        assert_eq!(s.cpu_us, Some(vec![310_000, 300_000]));
        assert_eq!(s.user_us, Some(vec![Some(200_000), None]));
        let back = s.runs().unwrap();
        assert!((back[0].cpu_s - 0.31).abs() < 1e-12);
        assert_eq!(back[1].user_s, None);
    }

    #[test]
    fn rounds_warm_up_and_answers_are_written_only_where_they_say_something() {
        let mut runs: Vec<Run> = (0..4).map(|i| run(i, 0, 0.1, 0.1, 0.0)).collect();
        let s = Samples::of(&runs);
        assert_eq!(
            (s.round.as_ref(), s.warmup_runs, s.ok.as_ref()),
            (None, Some(1), None)
        );
        runs[2].warmup = true;
        runs[3].ok = false;
        let s = Samples::of(&runs);
        assert_eq!(s.warmup, Some(vec![true, false, true, false]));
        assert_eq!(s.warmup_runs, None);
        assert_eq!(s.ok, Some(vec![true, true, true, false]));
        assert_eq!(s.runs().unwrap(), runs);
    }

    #[test]
    fn version_one_runs_read_into_the_same_list() {
        let v1 = r#"{"runs": [{"round": 0, "seq": 0, "warmup": true, "wall_s": 0.5, "cpu_s": 0.4,
            "maxrss_kib": 9, "ok": true, "paired_with": null}]}"#;
        let h: Holder = serde_json::from_str(v1).unwrap();
        assert!((h.runs[0].cpu_s - 0.4).abs() < 1e-12);
        assert_eq!(h.runs[0].user_s, None);
        let v2 = crate::to_json(&h);
        assert!(v2.contains("\"cpu_us\": [400000]"), "{v2}");
        let again: Holder = serde_json::from_str(&v2).unwrap();
        assert_eq!(again, h);
    }

    #[test]
    fn bad_samples_are_refused_naming_the_column() {
        let ragged = r#"{"samples": {"seq": [0, 1], "warmup_runs": 1,
            "wall_us": [1, 2], "cpu_us": [1], "maxrss_kib": [1, 1]}}"#;
        let e = serde_json::from_str::<Holder>(ragged)
            .unwrap_err()
            .to_string();
        assert!(e.contains("`cpu_us` holds 1 values and `seq` 2"), "{e}");
        let both = r#"{"samples": {"seq": [0], "warmup_runs": 1, "warmup": [true],
            "wall_us": [1], "cpu_us": [1], "maxrss_kib": [1]}}"#;
        let e = serde_json::from_str::<Holder>(both)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("exactly one of `warmup_runs` and `warmup`"),
            "{e}"
        );
        let too_many = r#"{"samples": {"seq": [0], "warmup_runs": 2,
            "wall_us": [1], "cpu_us": [1], "maxrss_kib": [1]}}"#;
        let e = serde_json::from_str::<Holder>(too_many)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("`warmup_runs` is 2, more than the 1 runs"),
            "{e}"
        );
        let no_cpu = r#"{"samples": {"seq": [0], "warmup_runs": 1,
            "wall_us": [1], "maxrss_kib": [1]}}"#;
        let e = serde_json::from_str::<Holder>(no_cpu)
            .unwrap_err()
            .to_string();
        assert!(e.contains("run 0 has no CPU time"), "{e}");
        let negative = r#"{"samples": {"seq": [0], "warmup_runs": 1,
            "wall_us": [-5], "cpu_us": [1], "maxrss_kib": [1]}}"#;
        assert!(serde_json::from_str::<Holder>(negative).is_err());
        let unknown = r#"{"samples": {"seq": [], "warmup_runs": 0, "wall_us": [],
            "maxrss_kib": [], "wall_s": []}}"#;
        let e = serde_json::from_str::<Holder>(unknown)
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown field `wall_s`"), "{e}");
        let v1_negative = r#"{"runs": [{"round": 0, "seq": 0, "warmup": true, "wall_s": -0.5,
            "cpu_s": 0.4, "maxrss_kib": 9, "ok": true, "paired_with": null}]}"#;
        let e = serde_json::from_str::<Holder>(v1_negative)
            .unwrap_err()
            .to_string();
        assert!(e.contains("runs[0].wall_s is -0.5"), "{e}");
    }
}
