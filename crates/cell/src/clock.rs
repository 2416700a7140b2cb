//! Clock-derived values of the binary: run-dir stamps and default seeds.

use cell_schema::time;

/// `(YYYY-MM-DD, HHMMSS)` of now, UTC.
pub fn utc_now() -> (String, String) {
    let ts = time::format_utc(time::now_secs());
    (ts[..10].to_owned(), ts[11..19].replace(':', ""))
}

/// A seed from the clock, for runs that do not pass `--seed` (it is recorded either way).
pub fn clock_seed() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| {
            u64::try_from(d.as_nanos() % u128::from(u64::MAX)).unwrap_or(0)
        })
}
