//! UTC timestamps as the wire writes them (`YYYY-MM-DDTHH:MM:SSZ`), without a time-zone
//! database: run directories are named by the UTC date of the run. [`Date`] is the one
//! calendar check: every date a run dir is named by, read from a flag or from a file, is a
//! day the calendar has.

use std::fmt;
use std::time::{SystemTime, UNIX_EPOCH};

/// Seconds since the Unix epoch, now.
pub fn now_secs() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(0))
}

/// `YYYY-MM-DDTHH:MM:SSZ` of a Unix time.
pub fn format_utc(secs: i64) -> String {
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// A day of the proleptic Gregorian calendar in the years 0000–9999, written `YYYY-MM-DD`.
/// Only a day the calendar has is one: no `2026-02-31`, no `2026-13-01`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Date {
    /// Days since 1970-01-01.
    days: i64,
}

impl Date {
    /// Exactly `YYYY-MM-DD` (ten bytes, nothing before or after) of a day the calendar has.
    pub fn parse(s: &str) -> Option<Self> {
        let bytes = s.as_bytes();
        if bytes.len() != 10 || bytes[4] != b'-' || bytes[7] != b'-' {
            return None;
        }
        let digits = |r: std::ops::Range<usize>| {
            let part = s.get(r)?;
            part.bytes()
                .all(|c| c.is_ascii_digit())
                .then(|| part.parse::<u32>().ok())?
        };
        let (y, m, d) = (digits(0..4)?, digits(5..7)?, digits(8..10)?);
        if !(1..=12).contains(&m) || d == 0 || d > days_in_month(i64::from(y), m) {
            return None;
        }
        Some(Self {
            days: days_from_civil(i64::from(y), m, d),
        })
    }

    /// The UTC day of a Unix time, when it falls in the years 0000–9999.
    pub fn of_unix(secs: i64) -> Option<Self> {
        let days = secs.div_euclid(86_400);
        let (y, _, _) = civil_from_days(days);
        (0..=9999).contains(&y).then_some(Self { days })
    }

    /// The UTC date of `s`: a date alone (`YYYY-MM-DD`), or a date and time that says its
    /// zone ([`parse_utc`]), converted to UTC before its date is taken. A time without a zone
    /// names no UTC day, and anything after the date that is not a time is refused.
    pub fn of_timestamp(s: &str) -> Option<Self> {
        Self::parse(s).or_else(|| Self::of_unix(parse_utc(s)?))
    }
}

impl fmt::Display for Date {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (y, m, d) = civil_from_days(self.days);
        write!(f, "{y:04}-{m:02}-{d:02}")
    }
}

/// Days in month `m` (1–12) of year `y`.
fn days_in_month(y: i64, m: u32) -> u32 {
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    match m {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Parses `YYYY-MM-DDTHH:MM:SS` (a space for the `T` too), an optional fraction (ignored), and
/// its zone: `Z`, ` UTC`, or an offset `±HH:MM` / `±HHMM`; the result is seconds since the
/// epoch in UTC (an offset is subtracted: `23:30-05:00` is `04:30Z` the next day). The date
/// must be a day the calendar has.
pub fn parse_utc(s: &str) -> Option<i64> {
    let date = Date::parse(s.get(..10)?)?;
    if !matches!(s.as_bytes().get(10), Some(b'T' | b' ')) {
        return None;
    }
    let (clock, zone) = split_zone(s.get(11..)?)?;
    let (clock, fraction) = clock.split_once('.').unwrap_or((clock, "0"));
    if fraction.is_empty() || !fraction.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let [h, mi, se] = two_digit_fields(clock)?;
    if h > 23 || mi > 59 || se > 60 {
        return None;
    }
    Some(date.days * 86_400 + h * 3600 + mi * 60 + se - zone)
}

/// `HH:MM:SS…` and its zone's offset from UTC in seconds.
fn split_zone(s: &str) -> Option<(&str, i64)> {
    if let Some(clock) = s.strip_suffix('Z').or_else(|| s.strip_suffix(" UTC")) {
        return Some((clock, 0));
    }
    let at = s.rfind(['+', '-'])?;
    let (clock, offset) = s.split_at(at);
    let sign = if offset.starts_with('-') { -1 } else { 1 };
    let digits = &offset[1..];
    let hhmm = match digits.len() {
        5 => digits.to_owned(),
        4 => format!("{}:{}", digits.get(..2)?, digits.get(2..)?),
        _ => return None,
    };
    let [oh, om] = two_digit_fields(&hhmm)?;
    (oh <= 23 && om <= 59).then_some((clock, sign * (oh * 3600 + om * 60)))
}

/// `N` fields of two digits each, separated by `:`.
fn two_digit_fields<const N: usize>(s: &str) -> Option<[i64; N]> {
    let mut out = [0; N];
    let mut parts = s.split(':');
    for slot in &mut out {
        let p = parts.next()?;
        if p.len() != 2 || !p.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        *slot = p.parse().ok()?;
    }
    parts.next().is_none().then_some(out)
}

/// The UTC date of a timestamp [`parse_utc`] reads.
pub fn date_of(ts: &str) -> Option<Date> {
    Date::of_unix(parse_utc(ts)?)
}

/// Days since 1970-01-01 → proleptic Gregorian (year, month, day), by 400-year eras.
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = u32::try_from(doy - (153 * mp + 2) / 5 + 1).unwrap_or(1);
    let m = u32::try_from(if mp < 10 { mp + 3 } else { mp - 9 }).unwrap_or(1);
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// (year, month, day) → days since 1970-01-01; the inverse of [`civil_from_days`].
pub fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = i64::from((m + 9) % 12);
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_dates_both_ways() {
        for (days, ymd) in [
            (0, (1970, 1, 1)),
            (11_016, (2000, 2, 29)),
            (20_786, (2026, 11, 29)),
            (-1, (1969, 12, 31)),
        ] {
            assert_eq!(civil_from_days(days), ymd);
            assert_eq!(days_from_civil(ymd.0, ymd.1, ymd.2), days);
        }
    }

    #[test]
    fn timestamps_round_trip() {
        let t = parse_utc("2020-01-22T19:33:08Z").unwrap();
        assert_eq!(format_utc(t), "2020-01-22T19:33:08Z");
        assert_eq!(parse_utc("2020-01-22T19:33:08.123+00:00"), Some(t));
        assert_eq!(parse_utc("2020-01-22 19:33:08 UTC"), Some(t));
        assert_eq!(
            date_of("2020-01-22T19:33:08Z").unwrap().to_string(),
            "2020-01-22"
        );
        assert!(
            parse_utc("2020-01-22 19:33:08").is_none(),
            "no zone: no UTC day"
        );
        assert!(parse_utc("2020-13-22T19:33:08Z").is_none());
    }

    /// A time with an offset is filed under its UTC date, not the date it was written with.
    #[test]
    fn an_offset_is_converted_to_utc_before_the_date_is_taken() {
        let utc = parse_utc("2026-09-14T04:30:00Z").unwrap();
        for local in [
            "2026-09-13T23:30:00-05:00",
            "2026-09-13T23:30:00-0500",
            "2026-09-14T06:30:00.5+02:00",
        ] {
            assert_eq!(parse_utc(local), Some(utc), "{local}");
            assert_eq!(Date::of_timestamp(local).unwrap().to_string(), "2026-09-14");
        }
    }

    /// `2026-02-31` used to pass as a date (every day 1–31 did), and `2026-09-13/../../x` was
    /// read as 2026-09-13: a date is a day the calendar has, and nothing but a time follows it.
    #[test]
    fn only_a_day_the_calendar_has_is_a_date() {
        for ok in [
            "2026-02-28",
            "2024-02-29",
            "2000-02-29",
            "2026-12-31",
            "0000-01-01",
        ] {
            assert_eq!(Date::parse(ok).unwrap().to_string(), ok);
            assert_eq!(Date::of_timestamp(ok).unwrap().to_string(), ok);
        }
        for bad in [
            "2026-02-29",
            "1900-02-29",
            "2026-02-31",
            "2026-04-31",
            "2026-13-01",
            "2026-00-10",
            "2026-01-00",
            "26-01-01",
            "2026-1-01",
            "+026-01-01",
            "2026-01-01x",
            "2026-09-13/../../x",
            "2026-09-13T",
            "2026-09-13T21:11:02",
            "2026-09-13T21:11Z",
            "2026-09-13T24:00:00Z",
            "2026-09-13T21:11:02.Z",
            "2026-09-13T21:11:02+5:00",
            "2026-09-13T21:11:02+24:00",
            "2026-09-13T21:11:02Z/../x",
            "2026-02-31T00:00:00Z",
            "２０２６-01-01",
            "",
        ] {
            assert!(Date::of_timestamp(bad).is_none(), "{bad}");
            assert!(parse_utc(bad).is_none(), "{bad}");
        }
    }
}
