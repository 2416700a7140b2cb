//! `samples.csv` (when asked for): every timed process of every run of the window, one line
//! each; `footprint.csv`: every row of every run of the window with its compile seconds, binary and text bytes and its toolchain's
//! installed size. RFC 4180 (CRLF line ends; a field holding `,`, `"`, CR or LF is quoted,
//! its quotes doubled); a figure a results file lacks is an empty field.
//!
//! Every CSV file the tool writes is made of [`Field`]s by [`record`]: a text field (a name, a
//! date, a version, a commit, a reason) goes through [`text`], the one rule for text a
//! spreadsheet must never evaluate; a figure is a [`Figure`] this tool formatted, written bare.

use cell_schema::Clock;

use super::model::{FootprintRecord, Report, Sample, role_name};
use super::{Exporter, FOOTPRINT_CSV, Output, RAW_CSV, SAMPLES_CSV, SUMMARY_CSV};

/// Writes `samples.csv` (when the report kept the samples), `footprint.csv`, and `raw.csv`
/// and `summary.csv` (when the window has suites).
#[derive(Clone, Copy, Debug, Default)]
pub struct CsvExporter;

/// The header line's fields: the run's place, a column per metric (its per-run key, in
/// [`Clock::COLUMNS`] order: `wall_s`, `cpu_s`, `user_s`; empty where a run did not record it),
/// then its peak RSS and answer.
pub fn samples_header() -> Vec<&'static str> {
    let mut h = vec![
        "run", "date", "cell", "job", "row", "role", "phase", "round", "seq", "warmup",
    ];
    h.extend(Clock::COLUMNS.map(|m| m.info().run_key));
    h.extend(["maxrss_kib", "ok"]);
    h
}

/// The header line's fields of `footprint.csv`.
pub const FOOTPRINT_HEADER: [&str; 15] = [
    "run",
    "date",
    "cell",
    "job",
    "row",
    "role",
    "toolchain",
    "compile_s",
    "builds",
    "compile_runs_s",
    "binary_bytes",
    "text_bytes",
    "reproducible",
    "installed_bytes",
    "installed_method",
];

impl Exporter for CsvExporter {
    fn export(&self, report: &Report) -> Vec<Output> {
        let mut out: Vec<Output> = report
            .samples
            .iter()
            .map(|s| Output::new(SAMPLES_CSV, render(s).into_bytes()))
            .collect();
        out.push(Output::new(
            FOOTPRINT_CSV,
            render_footprint(&report.footprint).into_bytes(),
        ));
        // The suites' files when a run of the history has suites, as their charts.
        if !report.suites.is_empty() {
            out.push(Output::new(
                RAW_CSV,
                super::suite_csv::render_raw(report).into_bytes(),
            ));
            out.push(Output::new(
                SUMMARY_CSV,
                super::suite_csv::render_summary(report).into_bytes(),
            ));
        }
        out
    }
}

/// One field of a record: text, written by [`text`], or a figure, written bare. A figure can
/// only be made from a number or a flag ([`Figure`]), so no text reaches a numeric column
/// unescaped, and no number (`-1.5`) is turned into text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Field(Kind);

#[derive(Clone, Debug, PartialEq, Eq)]
enum Kind {
    Text(String),
    Figure(String),
}

/// A number or a flag as this tool formats it: its `Display` is digits, a sign, a point, or
/// `true`/`false`, which no spreadsheet reads as a formula.
pub trait Figure: Copy + std::fmt::Display + figure::Sealed {}

mod figure {
    /// Only the types below are figures.
    pub trait Sealed {}
}

macro_rules! figures {
    ($($t:ty),*) => {$(
        impl figure::Sealed for $t {}
        impl Figure for $t {}
    )*};
}
// Display of f64 is the shortest form that reads back exactly, never exponent.
figures!(u32, u64, usize, f64, bool);

impl Field {
    /// A text field: whatever it holds, a spreadsheet shows it as text.
    pub fn text(s: impl Into<String>) -> Self {
        Self(Kind::Text(s.into()))
    }

    /// A figure, bare.
    pub fn figure(v: impl Figure) -> Self {
        Self(Kind::Figure(v.to_string()))
    }

    /// A figure, or an empty field when there is none.
    pub fn opt(v: Option<impl Figure>) -> Self {
        Self(Kind::Figure(v.map_or_else(String::new, |v| v.to_string())))
    }

    /// Several figures in one field, separated by `;`.
    pub fn figures(vs: &[f64]) -> Self {
        let all: Vec<String> = vs.iter().map(f64::to_string).collect();
        Self(Kind::Figure(all.join(";")))
    }

    /// The field as it is written in a record.
    fn written(&self) -> String {
        match &self.0 {
            Kind::Text(s) => text(s),
            Kind::Figure(s) => s.clone(),
        }
    }
}

/// Header fields, as text.
pub fn header(names: &[&str]) -> Vec<Field> {
    names.iter().map(|n| Field::text(*n)).collect()
}

/// `footprint.csv`: the header, then one record per row of each cell of each run. Every
/// build's seconds are one field, separated by `;`.
pub fn render_footprint(records: &[FootprintRecord]) -> String {
    let mut out = record(&header(&FOOTPRINT_HEADER));
    for f in records {
        let r = &f.row;
        let installed = f.installed.as_ref();
        out.push_str(&record(&[
            Field::text(&f.run),
            Field::text(&f.date),
            Field::text(f.cell.as_str()),
            Field::text(r.job.as_str()),
            Field::text(r.row.as_str()),
            Field::text(role_name(r.role)),
            Field::text(r.toolchain.as_str()),
            Field::figure(r.compile_s),
            Field::opt((!r.compile_runs_s.is_empty()).then_some(r.compile_runs_s.len())),
            Field::figures(&r.compile_runs_s),
            Field::figure(r.binary_bytes),
            Field::opt(r.text_bytes),
            Field::opt(r.reproducible),
            Field::opt(installed.and_then(|i| i.bytes)),
            Field::text(installed.map_or("", |i| crate::footprint::method_name(i.method))),
        ]));
    }
    out
}

/// The characters that make a spreadsheet (Excel, `LibreOffice`, Google Sheets) read a field
/// as a formula when they begin it: OWASP's list for CSV injection.
const FORMULA_START: [char; 6] = ['=', '+', '-', '@', '\t', '\r'];

/// A text field as every CSV file of the tool writes it. One that begins with a character of
/// [`FORMULA_START`] gets a `'` before it, inside quotes, so a spreadsheet shows it as text
/// (`+SUM+A1` → `"'+SUM+A1"`); so does one that begins with a `'` of its own, so a program
/// reading the file drops the first `'` of every value that has one and gets the value back.
/// One holding `,`, `"`, CR or LF is quoted, its quotes doubled (RFC 4180), and so is one
/// holding `;` or a tab, which a spreadsheet in another locale may take for the separator and
/// so begin a cell inside it.
pub fn text(s: &str) -> String {
    if s.starts_with(FORMULA_START) || s.starts_with('\'') {
        format!("\"'{}\"", s.replace('"', "\"\""))
    } else if s.contains([',', '"', '\r', '\n', ';', '\t']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_owned()
    }
}

/// One record, CRLF-terminated.
pub fn record(fields: &[Field]) -> String {
    let mut line = fields
        .iter()
        .map(Field::written)
        .collect::<Vec<_>>()
        .join(",");
    line.push_str("\r\n");
    line
}

/// The whole file: the header, then one record per sample.
pub fn render(samples: &[Sample]) -> String {
    let mut out = record(&header(&samples_header()));
    for s in samples {
        let mut fields = vec![
            Field::text(&s.run),
            Field::text(&s.date),
            Field::text(s.cell.as_str()),
            Field::text(s.job.as_str()),
            Field::text(s.row.as_str()),
            Field::text(role_name(s.role)),
            Field::text(s.phase.as_str()),
            Field::figure(s.round),
            Field::figure(s.seq),
            Field::figure(s.warmup),
        ];
        fields.extend(Clock::COLUMNS.map(|m| Field::opt(s.figures.get(&m).copied())));
        fields.extend([Field::figure(s.maxrss_kib), Field::figure(s.ok)]);
        out.push_str(&record(&fields));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_quoted_only_when_rfc_4180_requires_it() {
        assert_eq!(text("c-O2"), "c-O2");
        assert_eq!(text(""), "");
        assert_eq!(text("a,b"), "\"a,b\"");
        assert_eq!(text("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(text("two\nlines"), "\"two\nlines\"");
        assert_eq!(text("cr\r"), "\"cr\r\"");
        let fields = [Field::text("a"), Field::text("b,c"), Field::figure(1.5)];
        assert_eq!(record(&fields), "a,\"b,c\",1.5\r\n");
    }

    #[test]
    fn text_a_spreadsheet_would_evaluate_is_quoted_after_an_apostrophe() {
        // `+SUM+A1` as a row name was a bare field: a spreadsheet ran it as a formula.
        for (raw, written) in [
            ("+SUM+A1", "\"'+SUM+A1\""),
            ("=1+1", "\"'=1+1\""),
            ("-2+3", "\"'-2+3\""),
            ("@SUM(A1)", "\"'@SUM(A1)\""),
            ("\t=1", "\"'\t=1\""),
            ("\r=1", "\"'\r=1\""),
            ("=HYPERLINK(\"x\")", "\"'=HYPERLINK(\"\"x\"\")\""),
        ] {
            assert_eq!(text(raw), written, "{raw:?}");
        }
        // A value's own leading `'` gets one more: dropping the first gives it back.
        assert_eq!(text("'=1"), "\"''=1\"");
        assert_eq!(text("'quoted'"), "\"''quoted'\"");
        // Where another locale's separator would begin a cell with a formula.
        assert_eq!(text("a;=1+1"), "\"a;=1+1\"");
        assert_eq!(text("a\t=1+1"), "\"a\t=1+1\"");
        // Inside a name, the characters are harmless.
        assert_eq!(text("c-O2+lto"), "c-O2+lto");
    }

    #[test]
    fn a_negative_figure_stays_a_bare_number() {
        assert_eq!(Field::figure(-1.5).written(), "-1.5");
        assert_eq!(Field::opt(None::<u64>).written(), "");
        assert_eq!(Field::figures(&[0.5, 1.25]).written(), "0.5;1.25");
        assert_eq!(Field::text("-1.5").written(), "\"'-1.5\"");
    }

    #[test]
    fn times_are_plain_decimals() {
        assert_eq!(1e-7_f64.to_string(), "0.0000001");
        assert_eq!(0.020_757_f64.to_string(), "0.020757");
    }
}
