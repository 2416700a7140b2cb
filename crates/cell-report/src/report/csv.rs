//! `samples.csv` (when asked for): every timed process of every run of the window, one line
//! each; `footprint.csv`: every row of every run of the window with its compile seconds, binary and text bytes and its toolchain's
//! installed size. RFC 4180 (CRLF line ends; a field holding `,`, `"`, CR or LF is quoted,
//! its quotes doubled); a figure a results file lacks is an empty field.

use super::model::{FootprintRecord, Report, Sample, role_name};
use super::{Exporter, FOOTPRINT_CSV, Output, RAW_CSV, SAMPLES_CSV, SUMMARY_CSV};

/// Writes `samples.csv` (when the report kept the samples), `footprint.csv`, and `raw.csv`
/// and `summary.csv` (when the window has suites).
#[derive(Clone, Copy, Debug, Default)]
pub struct CsvExporter;

/// The header line's fields.
pub const HEADER: [&str; 14] = [
    "run",
    "date",
    "cell",
    "job",
    "row",
    "role",
    "phase",
    "round",
    "seq",
    "warmup",
    "wall_s",
    "cpu_s",
    "maxrss_kib",
    "ok",
];

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

/// A figure, or an empty field when there is none.
fn opt<T: ToString>(v: Option<T>) -> String {
    v.map_or_else(String::new, |v| v.to_string())
}

/// `footprint.csv`: the header, then one record per row of each cell of each run. Every
/// build's seconds are one field, separated by `;`.
pub fn render_footprint(records: &[FootprintRecord]) -> String {
    let mut out = record(&FOOTPRINT_HEADER);
    for f in records {
        let r = &f.row;
        let runs: Vec<String> = r.compile_runs_s.iter().map(f64::to_string).collect();
        let installed = f.installed.as_ref();
        out.push_str(&record(&[
            f.run.clone(),
            f.date.clone(),
            f.cell.to_string(),
            r.job.to_string(),
            r.row.to_string(),
            role_name(r.role).to_owned(),
            r.toolchain.to_string(),
            r.compile_s.to_string(),
            opt((!runs.is_empty()).then_some(runs.len())),
            runs.join(";"),
            r.binary_bytes.to_string(),
            opt(r.text_bytes),
            opt(r.reproducible),
            opt(installed.and_then(|i| i.bytes)),
            opt(installed.map(|i| crate::footprint::method_name(i.method))),
        ]));
    }
    out
}

/// One field, quoted when RFC 4180 requires it.
pub fn field(s: &str) -> String {
    if s.contains([',', '"', '\r', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_owned()
    }
}

/// One record, CRLF-terminated.
pub fn record<S: AsRef<str>>(fields: &[S]) -> String {
    let mut line = fields
        .iter()
        .map(|f| field(f.as_ref()))
        .collect::<Vec<_>>()
        .join(",");
    line.push_str("\r\n");
    line
}

/// The whole file: the header, then one record per sample.
pub fn render(samples: &[Sample]) -> String {
    let mut out = record(&HEADER);
    for s in samples {
        out.push_str(&record(&[
            s.run.clone(),
            s.date.clone(),
            s.cell.to_string(),
            s.job.to_string(),
            s.row.to_string(),
            role_name(s.role).to_owned(),
            s.phase.to_string(),
            s.round.to_string(),
            s.seq.to_string(),
            s.warmup.to_string(),
            // Display of f64 is the shortest form that reads back exactly, never exponent.
            s.wall_s.to_string(),
            s.cpu_s.to_string(),
            s.maxrss_kib.to_string(),
            s.ok.to_string(),
        ]));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_quoted_only_when_rfc_4180_requires_it() {
        assert_eq!(field("c-O2"), "c-O2");
        assert_eq!(field(""), "");
        assert_eq!(field("a,b"), "\"a,b\"");
        assert_eq!(field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(field("two\nlines"), "\"two\nlines\"");
        assert_eq!(field("cr\r"), "\"cr\r\"");
        assert_eq!(record(&["a", "b,c", "d"]), "a,\"b,c\",d\r\n");
    }

    #[test]
    fn times_are_plain_decimals() {
        assert_eq!(1e-7_f64.to_string(), "0.0000001");
        assert_eq!(0.020_757_f64.to_string(), "0.020757");
    }
}
