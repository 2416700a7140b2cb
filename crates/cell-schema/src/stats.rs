//! A row's figures on one phase, held per metric: the summary of each metric's measured runs
//! ([`ClockStats`]) and its ratio to the reference ([`Ratios`]). Each is a sorted map keyed by
//! [`Metric`], written under the metric's name in key order (`cpu`, `wall`, `user`), one line
//! each; its reader and its JSON Schema come from the metric table, so a metric added there is
//! written, read and described here without a line of this file changing. A metric a file
//! lacks is absent from the map: [`ClockStats::on`] and [`Ratios::on`] say `None`, never
//! another metric's figure.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::marker::PhantomData;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::de::{self, IgnoredAny, MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::metric::{Metric, MetricInfo};
use crate::write::one_line;

/// Order statistics of one clock over the measured runs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Summary {
    /// Number of measured runs.
    pub n: u32,
    /// Fastest, seconds.
    pub min: f64,
    /// Median, seconds.
    pub median: f64,
    /// Slowest, seconds.
    pub max: f64,
    /// Median absolute deviation from the median, seconds (unscaled).
    pub mad: f64,
}

/// Every metric's summary over the measured runs: each required metric's, and an optional
/// one's where the job wrote it (a verdict of the job reads it).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ClockStats {
    /// The summaries, by metric.
    pub clocks: BTreeMap<Metric, Summary>,
    /// System time (files of version 1; version 2's samples hold every system time).
    pub sys: Option<Summary>,
}

impl ClockStats {
    /// The summary of `metric`; `None` when the file did not record it.
    pub fn on(&self, metric: Metric) -> Option<&Summary> {
        self.clocks.get(&metric)
    }
}

/// The median of per-round ratios with its distribution-free confidence interval.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RatioCi {
    /// Number of per-round ratios.
    pub n: u32,
    /// Their median.
    pub median: f64,
    /// Lower bound of the interval.
    pub lo: f64,
    /// Upper bound of the interval.
    pub hi: f64,
    /// The coverage the order statistics actually give (below nominal for very few rounds).
    pub level: f64,
}

impl RatioCi {
    /// What the interval resolves ([`resolution`]).
    pub fn resolution(&self) -> f64 {
        resolution(self.median, self.lo, self.hi)
    }
}

/// What an interval `[lo, hi]` around `median` resolves: half its width relative to its
/// median (0.012: ±1.2%); 0 for a median that is not positive.
pub fn resolution(median: f64, lo: f64, hi: f64) -> f64 {
    if median > 0.0 {
        (hi - lo) / 2.0 / median
    } else {
        0.0
    }
}

/// A fraction as a percentage, as every verdict and table writes a resolution or a band:
/// one decimal (`1.5`), two below 1% (`0.42`), so a resolution never reads as `0.0`.
pub fn percent(fraction: f64) -> String {
    let p = fraction * 100.0;
    if p.abs() < 1.0 {
        format!("{p:.2}")
    } else {
        format!("{p:.1}")
    }
}

/// Every metric's ratio to the reference: each required metric's, and an optional one's where
/// the job wrote it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Ratios {
    /// The ratios, by metric.
    pub clocks: BTreeMap<Metric, RatioCi>,
}

impl Ratios {
    /// The ratio on `metric`; `None` when the file did not record it.
    pub fn on(&self, metric: Metric) -> Option<&RatioCi> {
        self.clocks.get(&metric)
    }
}

/// A value written on one line ([`one_line`]).
struct OneLine<'a, T>(&'a T);

impl<T: Serialize> Serialize for OneLine<'_, T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        one_line(self.0, s)
    }
}

/// Writes `by` under each metric's name in key order, then `extra` (a key of its own).
fn write_per_metric<S: Serializer, T: Serialize>(
    s: S,
    by: &BTreeMap<Metric, T>,
    extra: Option<(&str, &T)>,
) -> Result<S::Ok, S::Error> {
    let mut m = s.serialize_map(Some(by.len() + usize::from(extra.is_some())))?;
    for (metric, v) in by {
        m.serialize_entry(metric.name(), &OneLine(v))?;
    }
    if let Some((key, v)) = extra {
        m.serialize_entry(key, &OneLine(v))?;
    }
    m.end()
}

/// What [`read_per_metric`] read: the figures by metric, and the one of `extra`.
type PerMetric<T> = (BTreeMap<Metric, T>, Option<T>);

/// Reads an object of figures keyed by metric name (and `extra`): a required metric must be
/// there and not `null`; an optional one may be `null` or absent; a key given twice is
/// refused; any other key is ignored, as the derived readers did.
struct PerMetricVisitor<T> {
    what: &'static str,
    extra: Option<&'static str>,
    of: PhantomData<T>,
}

impl<'de, T: Deserialize<'de>> Visitor<'de> for PerMetricVisitor<T> {
    type Value = PerMetric<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "struct {}", self.what)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<PerMetric<T>, A::Error> {
        let mut by = BTreeMap::new();
        let mut extra: Option<Option<T>> = None;
        // Every key read, whatever it held: an optional metric given `null` is not in `by`,
        // so `by` alone would let a second `"user"` through after a `"user": null`.
        let mut seen = BTreeSet::new();
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            if !seen.insert(key.clone().into_owned()) {
                return Err(de::Error::custom(format_args!("duplicate field `{key}`")));
            }
            if let Ok(metric) = Metric::parse(&key) {
                if metric.required() {
                    by.insert(metric, map.next_value::<T>()?);
                } else if let Some(v) = map.next_value::<Option<T>>()? {
                    by.insert(metric, v);
                }
            } else if self.extra.is_some_and(|e| e == key) {
                extra = Some(map.next_value()?);
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        if let Some(missing) = Metric::ALL
            .into_iter()
            .find(|m| m.required() && !by.contains_key(m))
        {
            return Err(de::Error::missing_field(missing.name()));
        }
        Ok((by, extra.flatten()))
    }
}

fn read_per_metric<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
    d: D,
    what: &'static str,
    extra: Option<&'static str>,
) -> Result<PerMetric<T>, D::Error> {
    d.deserialize_map(PerMetricVisitor {
        what,
        extra,
        of: PhantomData,
    })
}

/// The schema of an object of `T` per metric: each metric's key described by `doc`, required
/// where the metric is, then `extra` (an optional `T` of its own key).
fn per_metric_schema<T: JsonSchema>(
    g: &mut SchemaGenerator,
    description: &str,
    doc: fn(&MetricInfo) -> &'static str,
    extra: Option<(&str, &str)>,
) -> Schema {
    let mut properties = serde_json::Map::new();
    let mut required = Vec::new();
    let described = |text: &str, sub: Schema| {
        let mut o = serde_json::Map::new();
        o.insert("description".into(), text.into());
        if let Some(sub) = sub.as_object() {
            o.extend(sub.clone());
        }
        serde_json::Value::Object(o)
    };
    for m in Metric::ALL {
        let sub = if m.required() {
            required.push(m.name());
            g.subschema_for::<T>()
        } else {
            g.subschema_for::<Option<T>>()
        };
        properties.insert(m.name().into(), described(doc(m.info()), sub));
    }
    if let Some((key, text)) = extra {
        let sub = g.subschema_for::<Option<T>>();
        properties.insert(key.into(), described(text, sub));
    }
    json_schema!({
        "description": description,
        "type": "object",
        "properties": properties,
        "required": required,
    })
}

const SYS: &str = "sys";
const SYS_DOC: &str =
    "System time (files of version 1; version 2's samples hold every system time).";

impl Serialize for ClockStats {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        write_per_metric(s, &self.clocks, self.sys.as_ref().map(|v| (SYS, v)))
    }
}

impl<'de> Deserialize<'de> for ClockStats {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let (clocks, sys) = read_per_metric(d, "ClockStats", Some(SYS))?;
        Ok(Self { clocks, sys })
    }
}

impl JsonSchema for ClockStats {
    fn schema_name() -> Cow<'static, str> {
        "ClockStats".into()
    }

    fn json_schema(g: &mut SchemaGenerator) -> Schema {
        per_metric_schema::<Summary>(
            g,
            "Both clocks' summaries.",
            |m| m.summary_doc,
            Some((SYS, SYS_DOC)),
        )
    }
}

impl Serialize for Ratios {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        write_per_metric(s, &self.clocks, None)
    }
}

impl<'de> Deserialize<'de> for Ratios {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let (clocks, _) = read_per_metric::<_, RatioCi>(d, "Ratios", None)?;
        Ok(Self { clocks })
    }
}

impl JsonSchema for Ratios {
    fn schema_name() -> Cow<'static, str> {
        "Ratios".into()
    }

    fn json_schema(g: &mut SchemaGenerator) -> Schema {
        per_metric_schema::<RatioCi>(
            g,
            "Ratios to the reference on both clocks.",
            |m| m.ratio_doc,
            None,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(median: f64) -> Summary {
        Summary {
            n: 3,
            min: median,
            median,
            max: median,
            mad: 0.0,
        }
    }

    #[test]
    fn summaries_are_written_under_each_metric_in_key_order_and_read_back() {
        let stats = ClockStats {
            clocks: [
                (Metric::User, summary(0.3)),
                (Metric::Wall, summary(0.2)),
                (Metric::Cpu, summary(0.1)),
            ]
            .into(),
            sys: Some(summary(0.01)),
        };
        let text = crate::to_json(&stats);
        let keys: Vec<&str> = text
            .lines()
            .filter_map(|l| l.trim().strip_prefix('"')?.split('"').next())
            .collect();
        assert_eq!(keys, ["cpu", "wall", "user", "sys"], "{text}");
        assert!(
            text.contains("\"cpu\": {\"n\":3,\"min\":0.1,\"median\":0.1,\"max\":0.1,\"mad\":0.0}"),
            "{text}"
        );
        let back: ClockStats = serde_json::from_str(&text).unwrap();
        assert_eq!(back, stats);
    }

    /// `ClockStats::on(User)` returned the CPU figure of a file without user time: a verdict on
    /// user time then silently read CPU time. A metric a file lacks is `None`.
    #[test]
    fn a_metric_a_file_lacks_is_none_never_another_metrics_figure() {
        let text = r#"{"cpu": {"n":3,"min":1,"median":1,"max":1,"mad":0},
            "wall": {"n":3,"min":2,"median":2,"max":2,"mad":0}, "user": null}"#;
        let stats: ClockStats = serde_json::from_str(text).unwrap();
        assert_eq!(stats.on(Metric::User), None);
        assert_eq!(stats.on(Metric::Cpu).map(|s| s.median), Some(1.0));
        let ratios: Ratios = serde_json::from_str(
            r#"{"cpu": {"n":3,"median":1,"lo":1,"hi":1,"level":0.75},
                "wall": {"n":3,"median":2,"lo":2,"hi":2,"level":0.75}}"#,
        )
        .unwrap();
        assert_eq!(ratios.on(Metric::User), None);
    }

    #[test]
    fn a_required_metric_missing_or_given_twice_is_refused_by_name() {
        let e = serde_json::from_str::<Ratios>(
            r#"{"cpu": {"n":3,"median":1,"lo":1,"hi":1,"level":0.75}}"#,
        )
        .unwrap_err();
        assert!(e.to_string().contains("missing field `wall`"), "{e}");
        let one = r#"{"n":3,"median":1,"lo":1,"hi":1,"level":0.75}"#;
        let e = crate::read::from_str_unique::<Ratios>(&format!(
            r#"{{"cpu": {one}, "wall": {one}, "cpu": {one}}}"#
        ))
        .unwrap_err();
        assert!(e.to_string().contains("duplicate key \"cpu\""), "{e}");
        let e = serde_json::from_str::<Ratios>(&format!(
            r#"{{"cpu": {one}, "wall": {one}, "cpu": {one}}}"#
        ))
        .unwrap_err();
        assert!(e.to_string().contains("duplicate field `cpu`"), "{e}");
        let e = serde_json::from_str::<Ratios>(&format!(r#"{{"cpu": null, "wall": {one}}}"#))
            .unwrap_err();
        assert!(e.to_string().contains("null"), "{e}");
    }

    /// `"user": null, "user": {…}` was read as the second `user`: a `null` was never put in
    /// the map, so the duplicate went unseen (the derived reader refused it).
    #[test]
    fn an_optional_metric_given_null_then_again_is_refused_as_a_duplicate() {
        let one = r#"{"n":3,"median":1,"lo":1,"hi":1,"level":0.75}"#;
        let e = serde_json::from_str::<Ratios>(&format!(
            r#"{{"cpu": {one}, "wall": {one}, "user": null, "user": {one}}}"#
        ))
        .unwrap_err();
        assert!(e.to_string().contains("duplicate field `user`"), "{e}");
        let s = r#"{"n":3,"min":1,"median":1,"max":1,"mad":0}"#;
        for twice in [
            format!(r#"{{"cpu": {s}, "wall": {s}, "user": null, "user": {s}}}"#),
            format!(r#"{{"cpu": {s}, "wall": {s}, "sys": null, "sys": {s}}}"#),
            format!(r#"{{"cpu": {s}, "wall": {s}, "other": 1, "other": 2}}"#),
        ] {
            let e = serde_json::from_str::<ClockStats>(&twice).unwrap_err();
            assert!(e.to_string().contains("duplicate field `"), "{twice}: {e}");
        }
    }
}
