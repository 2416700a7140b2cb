//! Figures and names as every output writes them: Markdown, terminal text and the charts'
//! captions share these, so a figure reads the same wherever it is printed.

use cell_schema::{Drift, SoakConfig, Status, ToolVersion};

/// A figure, or `–` where the results do not record one (an older file), never 0.
pub(crate) fn or_dash<T: ToString>(v: Option<T>) -> String {
    v.map_or_else(|| "–".to_owned(), |v| v.to_string())
}

/// At most `decimals` decimals, trailing zeros dropped: `10`, `0.5`, `2.25`; never `-0`.
pub(crate) fn short(v: f64, decimals: usize) -> String {
    let s = format!("{v:.decimals$}");
    let s = if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        s
    };
    if s == "-0" { "0".into() } else { s }
}

/// A signed figure with fixed decimals; zero has no sign.
pub(crate) fn signed(v: f64, decimals: usize) -> String {
    let s = format!("{v:+.decimals$}");
    if s[1..].bytes().all(|b| b == b'0' || b == b'.') {
        s[1..].to_owned()
    } else {
        s
    }
}

/// A figure with its sign always written and fixed decimals: `+0.0`, `-3.2`; a value that
/// rounds to zero is `+0.0`, never `-0.0`.
pub(crate) fn plus(v: f64, decimals: usize) -> String {
    let s = format!("{v:+.decimals$}");
    if s[1..].bytes().all(|b| b == b'0' || b == b'.') {
        format!("+{}", &s[1..])
    } else {
        s
    }
}

/// Seconds as a duration: `10 s`, `0.5 s`.
pub(crate) fn dur(s: f64) -> String {
    format!("{} s", short(s, 3))
}

/// KiB as MiB with one decimal.
pub(crate) fn mib_kib(k: u64) -> String {
    format!("{:.1}", k as f64 / 1024.0)
}

/// A count with thousands separators: `1,234,567`.
pub(crate) fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The connections (and wrk threads) a tool really used in a combination's runs, e.g. `96
/// (16 threads)`; `–` when its runs do not say.
pub(crate) fn connections_used(t: &cell_schema::HttpToolResult) -> String {
    let Some(first) = t.runs.first() else {
        return "–".to_owned();
    };
    match (first.load.connections, first.load.threads) {
        (Some(c), Some(th)) => format!("{c} ({})", plural(u64::from(th), "thread", "threads")),
        (Some(c), None) => c.to_string(),
        _ => "–".to_owned(),
    }
}

/// `1 run`, `3 runs`.
pub(crate) fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// A verdict as `RESULTS.md` and the terminal write it: `ok`, `noisy (inconclusive)`,
/// `FAILED`.
pub(crate) fn status_name(s: Status) -> &'static str {
    match s {
        Status::Ok => "ok",
        Status::Noisy => "noisy (inconclusive)",
        Status::Failed => "FAILED",
    }
}

/// A job's verdict with what each phase resolved and the phases it could not judge: `ok
/// (mix ±0.42%, primes ±3.1%, fib ±0.95%)`, `ok on mix ±0.42%, primes ±3.1%; fib
/// inconclusive (A/A control biased)`, `noisy (inconclusive)`, `FAILED`.
pub fn verdict_name(v: &cell_schema::Verdict) -> String {
    let name = status_name(v.status);
    let judged: Vec<String> = v
        .judged
        .iter()
        .map(|p| match v.resolution.get(p) {
            Some(r) => format!("{p} ±{}%", cell_schema::percent(*r)),
            None => p.to_string(),
        })
        .collect();
    if v.status == Status::Ok && !v.inconclusive.is_empty() {
        return format!(
            "{name} on {}; {} (A/A control biased)",
            judged.join(", "),
            inconclusive_phrase(&v.inconclusive)
        );
    }
    if v.status == Status::Ok && !v.resolution.is_empty() {
        return format!("{name} ({})", judged.join(", "));
    }
    name.to_owned()
}

/// `fib, primes inconclusive`: the phases a job could not judge.
pub(crate) fn inconclusive_phrase(phases: &[cell_schema::Phase]) -> String {
    let names: Vec<&str> = phases.iter().map(cell_schema::Phase::as_str).collect();
    format!("{} inconclusive", names.join(", "))
}

/// Why a row's rounds stopped early: the widest projection, in one sentence.
pub(crate) fn futility_line(f: &cell_schema::Futility) -> String {
    let (row, phase, clock) = (&f.row, &f.phase, f.clock.name());
    match &f.against {
        None => format!(
            "Stopped by futility after {} of {} rounds: the widest interval, {row} on {phase} ({clock} time), was ±{:.2}% and projected ±{:.2}% at {} rounds, beyond CI_TARGET ±{:.2}% × {}.",
            f.rounds,
            f.max_rounds,
            f.half_width * 100.0,
            f.projected * 100.0,
            f.max_rounds,
            f.target * 100.0,
            f.margin
        ),
        Some(base) => format!(
            "Stopped by futility after {} of {} rounds: the widest, {row} on {phase} ({clock} time), resolved its change against {base} to ±{:.2}%, projected ±{:.2}% at {} rounds, beyond {} × the {:.2}% between its change and the edge of the tolerance band: no budget settles it.",
            f.rounds,
            f.max_rounds,
            f.half_width * 100.0,
            f.projected * 100.0,
            f.max_rounds,
            f.margin,
            f.target * 100.0
        ),
    }
}

/// `flat`, `drifted`, `unknown`.
pub fn drift_name(d: Drift) -> &'static str {
    match d {
        Drift::Flat => "flat",
        Drift::Drifted => "drifted",
        Drift::Unknown => "unknown",
    }
}

/// The shape of a soak's load: `keep-alive`, or `churn (no keep-alive)` (a new connection per
/// request).
pub fn soak_shape(c: &SoakConfig) -> &'static str {
    if c.keep_alive {
        "keep-alive"
    } else {
        "churn (no keep-alive)"
    }
}

/// Where a process was pinned: `pinned to CPU 3`, `pinned to CPUs 2, 3`, `unpinned`; `set` as
/// the results record it, `first` the single CPU an older file records instead.
pub(crate) fn pinned(set: &[u32], first: Option<u32>) -> String {
    match (set, first) {
        ([], None) => "unpinned".to_owned(),
        ([], Some(c)) | (&[c], _) => format!("pinned to CPU {c}"),
        (many, _) => format!(
            "pinned to CPUs {}",
            many.iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// The first line a tool printed for its version, trimmed.
pub(crate) fn version_line(v: &ToolVersion) -> &str {
    v.printed.lines().next().unwrap_or("").trim()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_have_fixed_decimals_and_no_negative_zero() {
        assert_eq!(short(10.0, 3), "10");
        assert_eq!(short(0.5, 3), "0.5");
        assert_eq!(short(-0.0001, 3), "0");
        assert_eq!(signed(12.34, 1), "+12.3");
        assert_eq!(signed(-0.01, 1), "0.0");
        assert_eq!(signed(-3.0, 0), "-3");
        assert_eq!(mib_kib(30_208), "29.5");
        assert_eq!(plus(0.0, 1), "+0.0");
        assert_eq!(plus(-0.04, 1), "+0.0");
        assert_eq!(plus(-3.25, 1), "-3.2");
        assert_eq!(plus(48_187.0, 1), "+48187.0");
    }

    #[test]
    fn pins_name_one_cpu_or_several() {
        assert_eq!(pinned(&[], None), "unpinned");
        assert_eq!(pinned(&[], Some(3)), "pinned to CPU 3");
        assert_eq!(pinned(&[3], Some(3)), "pinned to CPU 3");
        assert_eq!(pinned(&[2, 3], Some(2)), "pinned to CPUs 2, 3");
    }
}
