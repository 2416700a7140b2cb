//! UTC timestamps as the wire writes them (`YYYY-MM-DDTHH:MM:SSZ`), without a time-zone
//! database: run directories are named by the UTC date of the run.

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

/// Parses `YYYY-MM-DDTHH:MM:SS` followed by `Z` or `+00:00` (fractions ignored).
#[expect(
    clippy::many_single_char_names,
    reason = "y, d, h… read as the fields they are"
)]
pub fn parse_utc(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    if b.len() < 20
        || b[4] != b'-'
        || b[7] != b'-'
        || b[10] != b'T'
        || b[13] != b':'
        || b[16] != b':'
    {
        return None;
    }
    let num = |r: std::ops::Range<usize>| s.get(r)?.parse::<i64>().ok();
    let (y, mo, d, h, mi, se) = (
        num(0..4)?,
        num(5..7)?,
        num(8..10)?,
        num(11..13)?,
        num(14..16)?,
        num(17..19)?,
    );
    let tail = s[19..].trim_start_matches(|c: char| c == '.' || c.is_ascii_digit());
    if !(tail == "Z" || tail == "+00:00")
        || !(1..=12).contains(&mo)
        || !(1..=31).contains(&d)
        || h > 23
        || mi > 59
        || se > 60
    {
        return None;
    }
    Some(
        days_from_civil(y, u32::try_from(mo).ok()?, u32::try_from(d).ok()?) * 86_400
            + h * 3600
            + mi * 60
            + se,
    )
}

/// The `YYYY-MM-DD` part of a timestamp this module wrote or parsed.
pub fn date_of(ts: &str) -> Option<&str> {
    parse_utc(ts).and(ts.get(..10))
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
        assert_eq!(date_of("2020-01-22T19:33:08Z"), Some("2020-01-22"));
        assert!(parse_utc("2020-01-22 19:33:08").is_none());
        assert!(parse_utc("2020-13-22T19:33:08Z").is_none());
    }
}
