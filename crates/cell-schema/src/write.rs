//! How wire values are written: stable key order, one value per line (a figure computed as
//! one, such as a ratio with its interval, on one line), rounded floats.

use serde::Serialize;

/// Rounds seconds to 0.1 µs, the resolution every time is written at.
pub fn round_time(seconds: f64) -> f64 {
    (seconds * 1e7).round() / 1e7
}

/// Rounds a ratio to 4 decimals.
pub fn round_ratio(ratio: f64) -> f64 {
    (ratio * 1e4).round() / 1e4
}

/// Pretty JSON with a trailing newline: the only way results files are written. Floats are
/// written in plain decimal (`0.0000042`, never `4.2e-6`) so a diff reads as numbers.
pub fn to_json<T: Serialize>(value: &T) -> String {
    with_indent(value, b"  ")
}

/// [`to_json`] indented by one space a level: how the record's files (a job dir's and a run
/// dir's JSON) are written, since at the depth of a row's statistics the second space of
/// every level was a quarter of the file (docs/protocol.md, "The record on disk").
pub fn to_record_json<T: Serialize>(value: &T) -> String {
    with_indent(value, b" ")
}

fn with_indent<T: Serialize>(value: &T, indent: &[u8]) -> String {
    let mut out = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(
        &mut out,
        Plain(serde_json::ser::PrettyFormatter::with_indent(indent)),
    );
    value
        .serialize(&mut ser)
        .expect("wire types always serialise");
    let mut s = String::from_utf8(out).expect("serde_json writes UTF-8");
    s.push('\n');
    s
}

/// `serde_json`'s pretty layout with plain-decimal floats.
struct Plain<'a>(serde_json::ser::PrettyFormatter<'a>);

impl serde_json::ser::Formatter for Plain<'_> {
    fn write_f64<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        value: f64,
    ) -> std::io::Result<()> {
        plain_f64(w, value)
    }
    fn begin_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.begin_array(w)
    }
    fn end_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_array(w)
    }
    fn begin_array_value<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.0.begin_array_value(w, first)
    }
    fn end_array_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_array_value(w)
    }
    fn begin_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.begin_object(w)
    }
    fn end_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_object(w)
    }
    fn begin_object_key<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.0.begin_object_key(w, first)
    }
    fn begin_object_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.begin_object_value(w)
    }
    fn end_object_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_object_value(w)
    }
}

/// `value` as compact JSON on one line, as a raw value for the serializer in use:
/// `{"n":30,"median":1.0234,…}` for an object, `[1,2,3]` for an array (no spaces: a cell holds
/// a few hundred such lines, and they were 2% of it). Floats are plain decimals, as in
/// [`to_json`]. For figures computed together (a clock's summary, a ratio with its interval,
/// a column of samples), which a diff or `git blame` then shows as one line.
pub fn one_line<T: Serialize + ?Sized, S: serde::Serializer>(
    value: &T,
    s: S,
) -> Result<S::Ok, S::Error> {
    let mut out = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(&mut out, OneLine);
    value
        .serialize(&mut ser)
        .map_err(serde::ser::Error::custom)?;
    let text = String::from_utf8(out).map_err(serde::ser::Error::custom)?;
    serde_json::value::RawValue::from_string(text)
        .map_err(serde::ser::Error::custom)?
        .serialize(s)
}

/// [`one_line`] of an optional value (`null` when none; the fields using it skip a none).
#[expect(
    clippy::ref_option,
    reason = "the signature serde's `serialize_with` calls"
)]
pub fn one_line_opt<T: Serialize, S: serde::Serializer>(
    value: &Option<T>,
    s: S,
) -> Result<S::Ok, S::Error> {
    match value {
        Some(v) => one_line(v, s),
        None => s.serialize_none(),
    }
}

/// Compact JSON with floats as [`Plain`] writes them.
struct OneLine;

impl serde_json::ser::Formatter for OneLine {
    fn write_f64<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        value: f64,
    ) -> std::io::Result<()> {
        plain_f64(w, value)
    }
}

#[expect(clippy::float_cmp, reason = "an exact test for a whole number")]
fn plain_f64<W: ?Sized + std::io::Write>(w: &mut W, value: f64) -> std::io::Result<()> {
    if value.is_finite() && value == value.trunc() && value.abs() < 1e15 {
        write!(w, "{value:.1}")
    } else {
        // Rust's Display for f64 is the shortest round-trip form, never in exponent form.
        write!(w, "{value}")
    }
}

/// Writes [`SCHEMA_VERSION`](crate::SCHEMA_VERSION) whatever the value holds: a file read as
/// version 1 and written again is in this version's format, so it says this version.
#[expect(
    clippy::trivially_copy_pass_by_ref,
    reason = "the signature serde's `serialize_with` calls"
)]
pub fn current_version<S: serde::Serializer>(_read: &u32, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u32(crate::SCHEMA_VERSION)
}

/// Writes a file through a temporary sibling and a rename, so no reader ever sees half of it
/// and a failure leaves the old file (or none) in place. The file gets the mode any program
/// gives a new file, `0666` less the process umask (`0644` by default), as [`staging`] does.
pub fn write_atomic(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(std::path::Path::new("."));
    std::fs::create_dir_all(dir)?;
    let mut tmp = staging(0o666).tempfile_in(dir)?;
    std::io::Write::write_all(&mut tmp, bytes)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// A builder of temporary files and directories that are outputs once renamed into place:
/// created with `mode` (`0666` a file, `0777` a directory) less the umask, which the kernel
/// applies as it creates them, where `tempfile` alone makes them `0600` and `0700` (a report
/// served by another user could not be read). No process-wide umask is read or changed.
pub(crate) fn staging(mode: u32) -> tempfile::Builder<'static, 'static> {
    let mut b = tempfile::Builder::new();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        b.permissions(std::fs::Permissions::from_mode(mode));
    }
    #[cfg(not(unix))]
    let _ = mode;
    b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_are_plain_decimals_and_parse_back() {
        let v =
            serde_json::json!({"mad": 4.2e-6, "one": 1.0, "big": 123_456.789, "list": [0.1, 2.0]});
        let s = to_json(&v);
        assert_eq!(
            s,
            "{\n  \"mad\": 0.0000042,\n  \"one\": 1.0,\n  \"big\": 123456.789,\n  \"list\": [\n    0.1,\n    2.0\n  ]\n}\n"
        );
        let back: serde_json::Value = serde_json::from_str(&s).unwrap();
        assert_eq!(back, v);
    }

    #[test]
    fn one_line_values_keep_plain_floats() {
        #[derive(Serialize)]
        struct Figure {
            #[serde(serialize_with = "one_line")]
            ci: serde_json::Value,
            #[serde(serialize_with = "one_line")]
            xs: Vec<f64>,
        }
        let f = Figure {
            ci: serde_json::json!({"n": 30, "mad": 4.2e-6, "one": 1.0}),
            xs: vec![0.1, 2.0, 1e-7],
        };
        assert_eq!(
            to_json(&f),
            "{\n  \"ci\": {\"n\":30,\"mad\":0.0000042,\"one\":1.0},\n  \"xs\": [0.1,2.0,0.0000001]\n}\n"
        );
        let value = serde_json::to_value(&f).unwrap();
        assert_eq!(value["ci"]["mad"], 4.2e-6);
    }

    #[test]
    fn rounding() {
        assert!((round_time(0.123_456_789) - 0.123_456_8).abs() < 1e-12);
        assert!((round_ratio(1.234_56) - 1.2346).abs() < 1e-12);
    }
}
