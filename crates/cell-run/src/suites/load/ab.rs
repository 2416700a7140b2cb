//! `ApacheBench` (`ab`): its command line, its text summary read strictly, and the CSV of
//! percentiles it writes.
//!
//! ab times every request in microseconds but prints its percentile table in whole
//! milliseconds (`99%  0`); `-e FILE` writes the same order statistics with three decimals,
//! one row per whole percent from 0 to 100, and the latencies come from that file. It has no
//! 99.9th percentile: `p99_9` is the 100th, the slowest request, which bounds it from above.
//! ab speaks HTTP/1.0 (`Connection: Keep-Alive` with `-k`) and runs one thread.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::Path;

use cell_schema::{Latency, LoadReport};

use super::{
    Effective, LoadDriver, LoadError, LoadSpec, Method, Parsed, excerpt, read_capped, write_body,
};

/// The `ab` driver.
pub(super) struct Ab;

impl LoadDriver for Ab {
    fn name(&self) -> &'static str {
        "ab"
    }

    fn version_args(&self) -> &'static [&'static str] {
        &["-V"]
    }

    fn effective(&self, spec: &LoadSpec) -> Result<Effective, LoadError> {
        check_concurrency(spec.connections)?;
        Ok(Effective {
            connections: spec.connections,
            threads: None,
        })
    }

    fn argv(
        &self,
        out: &mut Vec<OsString>,
        spec: &LoadSpec,
        counts: Effective,
        scratch: &Path,
    ) -> Result<(), LoadError> {
        argv(out, spec, counts, scratch)
    }

    fn parse(&self, stdout: &str, scratch: &Path) -> Result<Parsed, LoadError> {
        parse(stdout, scratch)
    }

    /// What ab counted, and it must have counted keep-alive requests exactly when it was
    /// asked to keep connections alive.
    fn record(&self, report: &mut LoadReport, spec: &LoadSpec) -> Result<(), LoadError> {
        if spec.keep_alive != report.keep_alive_requests.is_some() {
            return Err(LoadError::BadReport {
                tool: "ab",
                detail: format!(
                    "`Keep-Alive requests:` is {} though -k was {}",
                    if report.keep_alive_requests.is_some() {
                        "there"
                    } else {
                        "missing"
                    },
                    if spec.keep_alive {
                        "given"
                    } else {
                        "not given"
                    },
                ),
                excerpt: String::new(),
            });
        }
        report.keep_alive = Some(report.keep_alive == Some(true));
        Ok(())
    }
}

/// File name of ab's percentile CSV inside the scratch directory.
pub(super) const CSV_NAME: &str = "ab-percentiles.csv";

/// The bound on requests (`-n`) of a timed ab run. ab allocates one 32-byte record per
/// request it may make before it starts (`calloc(n, 32)`), and `-t` alone would stop a run
/// at 50,000 requests, which a loopback server passes in under a second. 4,000,000 records
/// are 128 MB at most (pages are touched only as requests complete), 40 s at 100,000 req/s,
/// more than one ab thread sustains here. A run that reaches the bound ends early: the
/// report says so (`request_cap_hit`) and its duration is the shorter one ab measured.
pub(super) const REQUEST_CAP: u32 = 4_000_000;

/// ab's own bound on `-c` (`MAX_CONCURRENCY` of the ab in httpd 2.4).
const MAX_CONCURRENCY: u32 = 20_000;

/// Most bytes of the CSV read: its 102 lines take about 1 KB.
const CSV_CAP: u64 = 64 << 10;

/// The header line of ab's CSV.
const CSV_HEADER: &str = "Percentage served,Time in ms";

/// The summary lines read, by label; every other line ab prints is left alone.
const LABELS: [&str; 6] = [
    TIME_TAKEN,
    COMPLETE,
    FAILED,
    "Write errors",
    "Non-2xx responses",
    "Keep-Alive requests",
];
const TIME_TAKEN: &str = "Time taken for tests";
const COMPLETE: &str = "Complete requests";
const FAILED: &str = "Failed requests";

/// The kinds of `(Connect: a, Receive: b, Length: c, Exceptions: d)`, in ab's order.
const BREAKDOWN: [&str; 4] = ["Connect", "Receive", "Length", "Exceptions"];

/// `-c` within ab's bounds: its own limit, and no more than the requests it may make (ab
/// refuses a concurrency above `-n`).
fn check_concurrency(connections: u32) -> Result<(), LoadError> {
    let limit = MAX_CONCURRENCY.min(REQUEST_CAP);
    if connections > limit {
        return Err(LoadError::Unsupported {
            tool: "ab",
            what: format!("hold {connections} connections: at most {limit}"),
        });
    }
    Ok(())
}

/// ab's arguments after the program. `-t` comes before `-n` because `-t` resets the bound to
/// 50,000. `-r` makes a receive error a counted failure, as wrk and oha count theirs,
/// rather than the end of the run. `-q` drops the progress lines. The body goes in a file
/// (`-p` for POST, `-u` for PUT) with its type on `-T`; `-i` sends HEAD.
fn argv(
    out: &mut Vec<OsString>,
    spec: &LoadSpec,
    counts: Effective,
    scratch: &Path,
) -> Result<(), LoadError> {
    // Whole seconds: the table's rule, checked before.
    let (duration, timeout) = (spec.duration.as_secs(), spec.timeout.as_secs());
    let csv = scratch.join(CSV_NAME);
    match std::fs::remove_file(&csv) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            return Err(LoadError::Scratch {
                what: "remove the older",
                path: csv,
                source: e,
            });
        }
        _ => {}
    }
    let request = spec.request;
    let body = request
        .body
        .as_deref()
        .map(|b| write_body(scratch, b))
        .transpose()?;
    let mut push = |a: &str| out.push(a.into());
    push("-c");
    push(&counts.connections.to_string());
    if spec.keep_alive {
        push("-k");
    }
    push("-t");
    push(&duration.to_string());
    push("-n");
    push(&REQUEST_CAP.to_string());
    push("-s");
    push(&timeout.to_string());
    push("-r");
    push("-q");
    out.push("-e".into());
    out.push(csv.into());
    if request.method == Method::Head {
        out.push("-i".into());
    }
    if let Some(file) = body {
        out.push(
            if request.method == Method::Put {
                "-u"
            } else {
                "-p"
            }
            .into(),
        );
        out.push(file.into());
        out.push("-T".into());
        out.push(request.content_type().unwrap_or_default().into());
    }
    for (name, value) in &request.headers {
        if request.body.is_some() && name.eq_ignore_ascii_case("content-type") {
            continue;
        }
        out.push("-H".into());
        out.push(format!("{name}: {value}").into());
    }
    out.push(spec.url.into());
    Ok(())
}

/// Reads ab's stdout and, when a request completed, the CSV in `scratch` (ab writes none
/// otherwise).
///
/// `Complete requests` are responses of any status, a `Length` failure among them: ab
/// counts a response whose body length differs from the first response's as failed, though
/// it did answer. The other failures (`Connect`, `Receive`, `Exceptions`, and `Write
/// errors`) got no response. ab also counts a response head it cannot parse as failed and
/// non-2xx, outside its breakdown: that rest is `unclassified`.
fn parse(stdout: &str, scratch: &Path) -> Result<Parsed, LoadError> {
    let s = summary(stdout)?;
    let latency_ms = if s.complete == 0 {
        Latency::default()
    } else {
        let rows = percentiles(&scratch.join(CSV_NAME))?;
        Latency {
            p50: rows[50],
            p90: rows[90],
            p99: rows[99],
            p99_9: rows[100],
            max: rows[100],
        }
    };
    let classified: u64 = s.breakdown.iter().sum();
    let kinds = BREAKDOWN
        .iter()
        .map(|k| k.to_ascii_lowercase())
        .zip(s.breakdown)
        .chain([
            ("write".to_owned(), s.write_errors),
            ("unclassified".to_owned(), s.failed - classified),
        ]);
    Ok(Parsed {
        duration_s: s.time_s,
        requests: s.complete,
        errors: kinds.filter(|&(_, n)| n > 0).collect(),
        non_2xx: s.non_2xx,
        latency_ms,
        keep_alive_requests: s.keep_alive,
        request_cap_hit: Some(s.complete == u64::from(REQUEST_CAP)),
    })
}

/// ab's summary, every figure checked.
struct Summary {
    time_s: f64,
    complete: u64,
    failed: u64,
    breakdown: [u64; 4],
    write_errors: u64,
    non_2xx: u64,
    keep_alive: Option<u64>,
}

fn summary(stdout: &str) -> Result<Summary, LoadError> {
    // The excerpt of an error starts at the summary, past ab's banner.
    let report = stdout
        .find("Concurrency Level:")
        .map_or(stdout, |i| &stdout[i..]);
    let bad = |detail: String| LoadError::BadReport {
        tool: "ab",
        detail,
        excerpt: excerpt(report),
    };
    let (values, breakdown_line) = lines(stdout).map_err(bad)?;
    let Some(complete) = values.get(COMPLETE) else {
        return Err(LoadError::NoReport {
            tool: "ab",
            why: "no `Complete requests:` line",
            excerpt: excerpt(stdout),
        });
    };
    let required = |label: &str| {
        values
            .get(label)
            .copied()
            .ok_or_else(|| bad(format!("no `{label}:` line")))
    };
    let counted = |label: &str, v: &str| count(v).ok_or_else(|| bad(format!("`{label}:` {v}")));
    let optional = |label: &str| values.get(label).map(|v| counted(label, v)).transpose();
    let complete = counted(COMPLETE, complete)?;
    let failed = counted(FAILED, required(FAILED)?)?;
    let time = required(TIME_TAKEN)?;
    let time_s = seconds(time).ok_or_else(|| bad(format!("`{TIME_TAKEN}:` {time}")))?;
    let breakdown = match (failed, breakdown_line) {
        (0, None) => [0; 4],
        (0, Some(_)) => return Err(bad("a failure breakdown of 0 failed requests".into())),
        (_, None) => {
            return Err(bad(format!(
                "{failed} failed requests and no `(Connect: …)` breakdown after them"
            )));
        }
        (_, Some(line)) => breakdown(line).map_err(bad)?,
    };
    if breakdown.iter().sum::<u64>() > failed {
        return Err(bad(format!(
            "the breakdown {breakdown:?} adds up to more than {failed} failed requests"
        )));
    }
    let keep_alive = optional("Keep-Alive requests")?;
    if keep_alive.is_some_and(|k| k > complete) {
        return Err(bad("more keep-alive requests than complete ones".into()));
    }
    if complete > u64::from(REQUEST_CAP) {
        return Err(bad(format!(
            "{complete} complete requests, more than the bound of {REQUEST_CAP} given to -n"
        )));
    }
    Ok(Summary {
        time_s,
        complete,
        failed,
        breakdown,
        write_errors: optional("Write errors")?.unwrap_or(0),
        non_2xx: optional("Non-2xx responses")?.unwrap_or(0),
        keep_alive,
    })
}

/// The values of the [`LABELS`] lines, each at most once, and the breakdown line, which must
/// come right after `Failed requests:`.
fn lines(stdout: &str) -> Result<(BTreeMap<&str, &str>, Option<&str>), String> {
    let mut values = BTreeMap::new();
    let mut breakdown = None;
    let mut after_failed = false;
    for line in stdout.lines().map(str::trim) {
        if line.starts_with("(Connect:") {
            if !after_failed || breakdown.is_some() {
                return Err(format!("`{line}` not right after `Failed requests:`"));
            }
            breakdown = Some(line);
        } else if let Some((label, value)) = line.split_once(':')
            && LABELS.contains(&label)
            && values.insert(label, value.trim()).is_some()
        {
            return Err(format!("`{label}:` twice"));
        }
        after_failed = line.starts_with("Failed requests:");
    }
    Ok((values, breakdown))
}

/// `(Connect: a, Receive: b, Length: c, Exceptions: d)`, exactly.
fn breakdown(line: &str) -> Result<[u64; 4], String> {
    let wrong = || format!("`{line}` is not `(Connect: N, Receive: N, Length: N, Exceptions: N)`");
    let inner = line
        .strip_prefix('(')
        .and_then(|l| l.strip_suffix(')'))
        .ok_or_else(wrong)?;
    let mut parts = inner.split(", ");
    let mut out = [0; 4];
    for (slot, kind) in out.iter_mut().zip(BREAKDOWN) {
        *slot = parts
            .next()
            .and_then(|p| p.strip_prefix(kind))
            .and_then(|p| p.strip_prefix(": "))
            .and_then(count)
            .ok_or_else(wrong)?;
    }
    if parts.next().is_some() {
        return Err(wrong());
    }
    Ok(out)
}

/// A count as ab prints it: decimal digits only.
fn count(s: &str) -> Option<u64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// `1.000 seconds`: digits, a point, digits.
fn seconds(s: &str) -> Option<f64> {
    decimal(s.strip_suffix(" seconds")?, None)
}

/// A decimal number as ab prints one (`%.3f`): digits, a point and digits (exactly
/// `places` of them when given).
fn decimal(s: &str, places: Option<usize>) -> Option<f64> {
    let (whole, frac) = s.split_once('.')?;
    let digits = |p: &str| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit());
    if !digits(whole) || !digits(frac) || places.is_some_and(|n| frac.len() != n) {
        return None;
    }
    s.parse().ok().filter(|v: &f64| v.is_finite())
}

/// The 101 rows of ab's CSV (milliseconds at 0 %, 1 %, … 100 %), checked: the header, every
/// row in order with three decimals, nothing after, and no row below the one before it.
/// ab reads past its samples for the top rows when 50 requests or fewer completed, which
/// shows as a row below the one before it.
fn percentiles(path: &Path) -> Result<[f64; 101], LoadError> {
    let bad = |detail: String, line: &str| LoadError::BadReport {
        tool: "ab",
        detail: format!("{}: {detail}", path.display()),
        excerpt: excerpt(line),
    };
    if !path.exists() {
        return Err(bad(
            "missing (ab writes it with -e once a request completed)".into(),
            "",
        ));
    }
    let text = read_capped(path, CSV_CAP, "read ab's percentiles")?
        .ok_or_else(|| bad(format!("larger than {CSV_CAP} bytes"), ""))?;
    let mut lines = text.lines();
    let header = lines.next().unwrap_or_default();
    if header != CSV_HEADER {
        return Err(bad(format!("the first line is not `{CSV_HEADER}`"), header));
    }
    let mut rows = [0.0; 101];
    for i in 0..rows.len() {
        let line = lines.next().ok_or_else(|| bad(format!("no row {i}"), ""))?;
        let ms = line
            .split_once(',')
            .filter(|(p, _)| *p == i.to_string())
            .and_then(|(_, ms)| decimal(ms, Some(3)))
            .ok_or_else(|| bad(format!("row {i} is not `{i},<ms with 3 decimals>`"), line))?;
        if i > 0 && ms < rows[i - 1] {
            return Err(bad(
                format!(
                    "row {i} ({ms} ms) is below row {} ({} ms)",
                    i - 1,
                    rows[i - 1]
                ),
                line,
            ));
        }
        rows[i] = ms;
    }
    if let Some(extra) = lines.find(|l| !l.is_empty()) {
        return Err(bad("a line after row 100".into(), extra));
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::super::{LoadRequest, LoadTool, parse as parse_report, record};
    use super::*;

    /// The tool of the table named `name`.
    fn named(name: &str) -> LoadTool {
        LoadTool::parse(name).expect(name)
    }

    /// A captured run: ab's stdout and the CSV it wrote, each from
    /// `ab -c 4 [-k] -t 1 -n 4000000 -s 2 -r -q -e ab-percentiles.csv URL` (ab 2.3 of Debian's
    /// apache2-utils 2.4.71) against a loopback server.
    struct Capture {
        stdout: &'static str,
        csv: &'static str,
    }

    /// The C server of bench/http, `-k`.
    const KEEP_ALIVE: Capture = Capture {
        stdout: include_str!("testdata/keep-alive.out"),
        csv: include_str!("testdata/keep-alive.csv"),
    };
    /// The C server of bench/http, without `-k`: a connection per request.
    const NO_KEEP_ALIVE: Capture = Capture {
        stdout: include_str!("testdata/no-keep-alive.out"),
        csv: include_str!("testdata/no-keep-alive.csv"),
    };
    /// A server answering 500 to every third request, `-k`.
    const NON_2XX: Capture = Capture {
        stdout: include_str!("testdata/non-2xx.out"),
        csv: include_str!("testdata/non-2xx.csv"),
    };
    /// A server whose every fifth body is `hi\n` rather than `hello, world\n`.
    const LENGTH: Capture = Capture {
        stdout: include_str!("testdata/length.out"),
        csv: include_str!("testdata/length.csv"),
    };
    /// A server resetting (`SO_LINGER` 0) every fiftieth connection-request, `-k`.
    const RESET: Capture = Capture {
        stdout: include_str!("testdata/reset.out"),
        csv: include_str!("testdata/reset.csv"),
    };

    const VERSION: &str = "This is ApacheBench, Version 2.3 <$Revision$>";

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    /// Parses `stdout` with `csv` (when given) as the run's CSV.
    fn read(stdout: &str, csv: Option<&str>) -> Result<cell_schema::LoadReport, LoadError> {
        let dir = tempfile::tempdir().expect("tempdir");
        if let Some(csv) = csv {
            std::fs::write(dir.path().join(CSV_NAME), csv).expect("write csv");
        }
        parse_report(named("ab"), stdout, dir.path(), VERSION)
    }

    fn ok(c: &Capture) -> cell_schema::LoadReport {
        read(c.stdout, Some(c.csv)).expect("parse")
    }

    fn spec(keep_alive: bool) -> LoadSpec<'static> {
        LoadSpec {
            url: "http://127.0.0.1:8080/",
            connections: 4,
            threads: 2,
            duration: Duration::from_secs(1),
            keep_alive,
            rate: None,
            timeout: Duration::from_secs(2),
            request: LoadRequest::get(),
        }
    }

    #[test]
    fn keep_alive_run() {
        let r = ok(&KEEP_ALIVE);
        assert_eq!(r.tool, "ab");
        assert_eq!(r.version, VERSION);
        assert!(close(r.duration_s, 1.001));
        assert_eq!(r.requests, 13_726);
        assert!(r.errors.is_empty(), "{r:?}");
        assert_eq!(r.non_2xx, 0);
        assert!(close(r.rps, 13_726.0 / 1.001));
        // The CSV's rows, not the whole milliseconds of the printed table (all 0 up to 99 %).
        let l = &r.latency_ms;
        assert!(close(l.p50, 0.041) && close(l.p90, 0.076) && close(l.p99, 7.981));
        assert!(close(l.p99_9, 16.269) && close(l.max, 16.269));
        assert_eq!(r.keep_alive_requests, Some(13_726));
        assert_eq!(r.keep_alive, Some(true));
        assert_eq!(r.request_cap_hit, Some(false));
        let r = record(r, named("ab"), &spec(true), &[]).expect("record");
        assert_eq!(r.keep_alive, Some(true));
        assert_eq!((r.connections, r.threads), (Some(4), None));
    }

    #[test]
    fn run_without_keep_alive() {
        let r = ok(&NO_KEEP_ALIVE);
        assert_eq!(r.requests, 5_113);
        assert!(r.errors.is_empty() && r.non_2xx == 0, "{r:?}");
        assert_eq!(r.keep_alive_requests, None);
        let r = record(r, named("ab"), &spec(false), &[]).expect("record");
        assert_eq!(r.keep_alive, Some(false));
        // The same report cannot be a -k run: ab prints the keep-alive count with -k.
        let err = record(ok(&NO_KEEP_ALIVE), named("ab"), &spec(true), &[]).expect_err("-k");
        assert!(
            err.to_string()
                .contains("`Keep-Alive requests:` is missing"),
            "{err}"
        );
    }

    #[test]
    fn non_2xx_are_responses() {
        let r = ok(&NON_2XX);
        assert_eq!(r.requests, 8_832);
        assert_eq!(r.non_2xx, 2_944);
        assert!(r.errors.is_empty(), "{r:?}");
        assert_eq!(r.keep_alive, Some(true));
    }

    #[test]
    fn length_failures_are_counted_responses() {
        let r = ok(&LENGTH);
        assert_eq!(r.requests, 1_547);
        assert_eq!(r.errors, BTreeMap::from([("length".to_owned(), 309)]));
        assert_eq!(r.non_2xx, 0);
    }

    #[test]
    fn resets_are_failures_by_kind_and_mixed_keep_alive_is_false() {
        let r = ok(&RESET);
        let want = BTreeMap::from([
            ("exceptions".to_owned(), 291),
            ("length".to_owned(), 291),
            ("receive".to_owned(), 291),
        ]);
        assert_eq!(r.errors, want);
        // 14,288 of 14,579 went over kept-alive connections: not every one, so false.
        assert_eq!(r.keep_alive_requests, Some(14_288));
        assert_eq!(r.keep_alive, Some(false));
        let r = record(r, named("ab"), &spec(true), &[]).expect("record");
        assert_eq!(r.keep_alive, Some(false));
    }

    #[test]
    fn failures_outside_the_breakdown_are_unclassified() {
        let out = RESET
            .stdout
            .replace("Failed requests:        873", "Failed requests:        880")
            .replace(
                "Complete requests",
                "Write errors:           2\nComplete requests",
            );
        let r = read(&out, Some(RESET.csv)).expect("parse");
        assert_eq!(r.errors.get("unclassified"), Some(&7));
        assert_eq!(r.errors.get("write"), Some(&2));
    }

    #[test]
    fn the_cap_is_reported() {
        let out = KEEP_ALIVE.stdout.replace("13726", &REQUEST_CAP.to_string());
        let r = read(&out, Some(KEEP_ALIVE.csv)).expect("parse");
        assert_eq!(r.request_cap_hit, Some(true));
        let over = KEEP_ALIVE.stdout.replace("13726", "4000001");
        let err = read(&over, Some(KEEP_ALIVE.csv)).expect_err("over the cap");
        assert!(err.to_string().contains("more than the bound"), "{err}");
    }

    #[test]
    fn no_response_needs_no_csv() {
        let out = NO_KEEP_ALIVE
            .stdout
            .replace("Complete requests:      5113", "Complete requests:      0");
        let r = read(&out, None).expect("parse");
        assert_eq!(r.requests, 0);
        assert!(close(r.rps, 0.0) && close(r.latency_ms.max, 0.0));
    }

    #[test]
    fn truncated_output_is_refused() {
        let err = read("", None).expect_err("empty");
        assert!(matches!(err, LoadError::NoReport { .. }), "{err:?}");
        assert!(
            err.to_string()
                .starts_with("ab printed no report (no `Complete requests:` line)")
        );
        let cut = &KEEP_ALIVE.stdout[..KEEP_ALIVE.stdout.find("Failed").expect("Failed")];
        let err = read(cut, Some(KEEP_ALIVE.csv)).expect_err("cut");
        assert!(
            err.to_string().contains("no `Failed requests:` line"),
            "{err}"
        );
        let cut = &RESET.stdout[..RESET.stdout.find("   (Connect").expect("breakdown")];
        let err = read(cut, Some(RESET.csv)).expect_err("no breakdown");
        assert!(
            err.to_string().contains("873 failed requests and no"),
            "{err}"
        );
    }

    #[test]
    fn hostile_output_is_refused() {
        let cases = [
            (
                "Complete requests:      13726",
                "Complete requests:      -5",
                "`Complete requests:` -5",
            ),
            (
                "Complete requests:      13726",
                "Complete requests:      99999999999999999999999",
                "`Complete requests:` 9999",
            ),
            (
                "1.001 seconds",
                "NaN seconds",
                "`Time taken for tests:` NaN",
            ),
            (
                "1.001 seconds",
                "1e3 seconds",
                "`Time taken for tests:` 1e3",
            ),
            (
                "Keep-Alive requests:    13726",
                "Keep-Alive requests:    13727",
                "more keep-alive",
            ),
            (
                "Failed requests:        0",
                "Failed requests:        0\nFailed requests:        0",
                "`Failed requests:` twice",
            ),
            (
                "Failed requests:        0",
                "Failed requests:        0\n   (Connect: 0, Receive: 0, Length: 0, Exceptions: 0)",
                "breakdown of 0",
            ),
            (
                "Failed requests:        0",
                "Failed requests:        2\n   (Connect: 1, Receive: 1, Length: 1, Exceptions: 0)",
                "adds up to more",
            ),
            (
                "Failed requests:        0",
                "Failed requests:        2\n   (Connect: 1, Receive: 1)",
                "is not `(Connect",
            ),
            (
                "Failed requests:        0",
                "Failed requests:        2\n   (Connect: 1, Receive: 1, Length: 0, Exceptions: 0, More: 1)",
                "is not `(Connect",
            ),
            (
                "Failed requests:        0",
                "Failed requests:        2\n\n   (Connect: 2, Receive: 0, Length: 0, Exceptions: 0)",
                "not right after",
            ),
        ];
        for (from, to, want) in cases {
            let out = KEEP_ALIVE.stdout.replacen(from, to, 1);
            assert_ne!(out, KEEP_ALIVE.stdout, "{from}");
            let err = read(&out, Some(KEEP_ALIVE.csv)).expect_err(to);
            assert!(matches!(err, LoadError::BadReport { .. }), "{err:?}");
            assert!(err.to_string().contains(want), "{want}: {err}");
        }
    }

    #[test]
    fn a_bad_csv_is_refused_naming_the_file() {
        let err = read(KEEP_ALIVE.stdout, None).expect_err("no csv");
        let msg = err.to_string();
        assert!(msg.contains(CSV_NAME) && msg.contains("missing"), "{msg}");
        let cases = [
            (
                KEEP_ALIVE.csv.replacen(CSV_HEADER, "Percent,ms", 1),
                "the first line",
            ),
            (
                KEEP_ALIVE.csv.replacen("\n50,", "\n51,", 1),
                "row 50 is not",
            ),
            (
                KEEP_ALIVE.csv.replacen("\n50,0.041", "\n50,0.04", 1),
                "row 50 is not",
            ),
            (
                KEEP_ALIVE.csv.replacen("\n50,0.041", "\n50,inf", 1),
                "row 50 is not",
            ),
            (
                KEEP_ALIVE.csv.replacen("\n99,7.981", "\n99,0.000", 1),
                "row 99 (0 ms) is below row 98",
            ),
            (
                KEEP_ALIVE.csv.replacen("\n100,16.269\n", "\n", 1),
                "no row 100",
            ),
            (
                format!("{}101,9.000\n", KEEP_ALIVE.csv),
                "a line after row 100",
            ),
            ("x".repeat(70_000), "larger than"),
        ];
        for (csv, want) in cases {
            let err = read(KEEP_ALIVE.stdout, Some(&csv)).expect_err(want);
            let msg = err.to_string();
            assert!(matches!(err, LoadError::BadReport { .. }), "{err:?}");
            assert!(
                msg.contains(CSV_NAME) && msg.contains(want),
                "{want}: {msg}"
            );
        }
    }
}
