//! How wire values are written: stable key order, one scalar per line, rounded floats.

use serde::Serialize;

/// Rounds seconds to 0.1 µs, the resolution every time is written at.
pub fn round_time(seconds: f64) -> f64 {
    (seconds * 1e7).round() / 1e7
}

/// Rounds a ratio to 4 decimals.
pub fn round_ratio(ratio: f64) -> f64 {
    (ratio * 1e4).round() / 1e4
}

/// Pretty JSON with a trailing newline: the only way results files are written.
pub fn to_json<T: Serialize>(value: &T) -> String {
    let mut s = serde_json::to_string_pretty(value).expect("wire types always serialise");
    s.push('\n');
    s
}

/// Writes a file through a temporary sibling and a rename, so no reader ever sees half of it
/// and a failure leaves the old file (or none) in place.
pub fn write_atomic(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(std::path::Path::new("."));
    std::fs::create_dir_all(dir)?;
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    std::io::Write::write_all(&mut tmp, bytes)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding() {
        assert!((round_time(0.123_456_789) - 0.123_456_8).abs() < 1e-12);
        assert!((round_ratio(1.234_56) - 1.2346).abs() < 1e-12);
    }
}
