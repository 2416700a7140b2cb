//! Histories built from one real run dir: the run copied under N names, one a day going back
//! from its own date, each copy's JSON saying which run it is.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result, bail, ensure};
use cell_schema::store::{GATE_JSON, RESULTS_JSON, RunDirName};
use cell_schema::time::{civil_from_days, days_from_civil};
use serde::Serialize;
use serde_json::Value;

/// The first run id of a built history; ids grow by one a day, so the copies sort as days.
const FIRST_ID: u64 = 100_000;

/// `date` (`YYYY-MM-DD`) moved back `days` days.
pub fn days_before(date: &str, days: u32) -> Result<String> {
    let bad = || format!("`{date}` is not a date (YYYY-MM-DD)");
    let part = |r: std::ops::Range<usize>| date.get(r).and_then(|s| s.parse::<u32>().ok());
    let (y, m, d) = (part(0..4), part(5..7), part(8..10));
    let (Some(y), Some(m), Some(d)) = (y, m, d) else {
        bail!(bad());
    };
    let day = days_from_civil(i64::from(y), m, d);
    ensure!(
        civil_from_days(day) == (i64::from(y), m, d),
        "{}: no such day",
        bad()
    );
    let (y, m, d) = civil_from_days(day - i64::from(days));
    Ok(format!("{y:04}-{m:02}-{d:02}"))
}

/// The names of a history of `n` runs whose newest is on `newest_date`, oldest first.
pub fn names(newest_date: &str, n: usize) -> Result<Vec<RunDirName>> {
    (0..n)
        .map(|i| {
            let back = u32::try_from(n - 1 - i).context("too many runs")?;
            let date = days_before(newest_date, back)?;
            Ok(RunDirName::new(&date, &(FIRST_ID + i as u64).to_string())?)
        })
        .collect()
}

/// Sets `id` and `date` of every object that names the run `old` to those of `new`; how many.
fn set_run(v: &mut Value, old: &RunDirName, new: &RunDirName) -> usize {
    match v {
        Value::Object(m) => {
            let own = m.get("id").and_then(Value::as_str) == Some(old.id())
                && m.get("date").and_then(Value::as_str) == Some(old.date());
            if own {
                m.insert("id".into(), new.id().into());
                m.insert("date".into(), new.date().into());
            }
            usize::from(own) + m.values_mut().map(|x| set_run(x, old, new)).sum::<usize>()
        }
        Value::Array(a) => a.iter_mut().map(|x| set_run(x, old, new)).sum(),
        _ => 0,
    }
}

/// The JSON text of `file` as the run `new`: the run's quoted id and date replaced in the
/// text, so the bytes stay as the writer wrote them. Checked by parsing: the result must be
/// the file with exactly its run objects' `id` and `date` changed. `None` when the file
/// names no run.
fn rewrite(text: &str, old: &RunDirName, new: &RunDirName, file: &Path) -> Result<Option<String>> {
    let parse = |t: &str| -> Result<Value> {
        serde_json::from_str(t).with_context(|| format!("{}: not JSON", file.display()))
    };
    let mut expected = parse(text)?;
    if set_run(&mut expected, old, new) == 0 {
        return Ok(None);
    }
    let quoted = |s: &str| format!("\"{s}\"");
    let out = text
        .replace(&quoted(old.id()), &quoted(new.id()))
        .replace(&quoted(old.date()), &quoted(new.date()));
    ensure!(
        parse(&out)? == expected,
        "{}: the run's id `{}` or date `{}` also appears outside its run fields, so a textual \
         rewrite would change other values",
        file.display(),
        old.id(),
        old.date()
    );
    Ok(Some(out))
}

/// A file of the source run: linked into every copy, or its text rewritten for each.
enum Entry {
    Link(PathBuf),
    Rewrite(String),
}

/// The bytes of one run dir as committed, and gzip -6 of each file (what git would store).
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct RunSize {
    /// Every file of the run dir (gate.json left out).
    pub dir_bytes: u64,
    /// The same, each file gzipped at level 6.
    pub dir_gzip_bytes: u64,
    /// The `<cell-id>/results.json` files.
    pub results_bytes: u64,
    /// The same, gzipped.
    pub results_gzip_bytes: u64,
    /// How many `results.json` files.
    pub results_files: usize,
}

/// A real run dir, read once.
pub struct Source {
    /// The run dir.
    pub dir: PathBuf,
    /// Its name.
    pub name: RunDirName,
    /// Its size.
    pub size: RunSize,
    entries: Vec<(PathBuf, Entry)>,
}

/// Every file under `dir`, as paths relative to it, sorted.
pub fn files(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut todo = vec![PathBuf::new()];
    while let Some(rel) = todo.pop() {
        let here = dir.join(&rel);
        for e in std::fs::read_dir(&here).with_context(|| format!("{}", here.display()))? {
            let e = e.with_context(|| format!("{}", here.display()))?;
            let path = rel.join(e.file_name());
            if e.file_type()?.is_dir() {
                todo.push(path);
            } else {
                out.push(path);
            }
        }
    }
    out.sort();
    Ok(out)
}

fn gzip_len(bytes: &[u8]) -> Result<u64> {
    let mut z = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::new(6));
    z.write_all(bytes)?;
    Ok(z.finish()?.len() as u64)
}

impl Source {
    /// Reads the run dir `dir` (`<YYYY-MM-DD>-<run-id>/<cell-id>/results.json`, …).
    pub fn read(dir: &Path) -> Result<Self> {
        let base = dir.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        let name = RunDirName::parse(base).with_context(|| format!("{}", dir.display()))?;
        // A probe name of another length: the rewrite is checked once, here.
        let probe = RunDirName::new("2000-01-01", "1")?;
        let (mut size, mut entries) = (RunSize::default(), Vec::new());
        for rel in files(dir)? {
            if rel == Path::new(GATE_JSON) {
                continue;
            }
            let path = dir.join(&rel);
            let bytes = std::fs::read(&path).with_context(|| format!("{}", path.display()))?;
            let (n, gz) = (bytes.len() as u64, gzip_len(&bytes)?);
            size.dir_bytes += n;
            size.dir_gzip_bytes += gz;
            if rel.file_name().is_some_and(|f| f == RESULTS_JSON) {
                size.results_bytes += n;
                size.results_gzip_bytes += gz;
                size.results_files += 1;
            }
            let entry = if rel.extension().is_some_and(|e| e == "json") {
                let text = String::from_utf8(bytes)
                    .with_context(|| format!("{}: not UTF-8", path.display()))?;
                match rewrite(&text, &name, &probe, &path)? {
                    Some(_) => Entry::Rewrite(text),
                    None => Entry::Link(path),
                }
            } else {
                Entry::Link(path)
            };
            entries.push((rel, entry));
        }
        ensure!(
            size.results_files > 0,
            "{}: no <cell-id>/{RESULTS_JSON} under it: is it a run dir?",
            dir.display()
        );
        ensure!(
            entries.iter().any(|(_, e)| matches!(e, Entry::Rewrite(_))),
            "{}: no JSON file names the run (id `{}`, date `{}`)",
            dir.display(),
            name.id(),
            name.date()
        );
        Ok(Self {
            dir: dir.to_owned(),
            name,
            size,
            entries,
        })
    }

    /// Writes the run as `new` under `history`: rewritten JSON, the other files hard-linked
    /// (copied where a link cannot be made). gate.json is left out.
    fn write_as(&self, new: &RunDirName, history: &Path) -> Result<()> {
        let dir = history.join(new.to_string());
        for (rel, entry) in &self.entries {
            let to = dir.join(rel);
            let parent = to.parent().unwrap_or(&dir);
            std::fs::create_dir_all(parent).with_context(|| format!("{}", parent.display()))?;
            match entry {
                Entry::Rewrite(text) => {
                    let out = rewrite(text, &self.name, new, &self.dir.join(rel))?
                        .expect("checked when read");
                    std::fs::write(&to, out)
                }
                Entry::Link(from) => {
                    std::fs::hard_link(from, &to).or_else(|_| std::fs::copy(from, &to).map(drop))
                }
            }
            .with_context(|| format!("{}", to.display()))?;
        }
        Ok(())
    }
}

/// A built history.
pub struct History {
    /// The dir holding the run dirs.
    pub dir: PathBuf,
    /// How many runs.
    pub runs: usize,
    /// The newest run dir, the one the gate judges.
    pub newest: PathBuf,
    /// The run before it, the gate's baseline.
    pub previous: Option<RunDirName>,
}

/// `n` copies of `source` under `dir`, one a day back from its date.
pub fn build(source: &Source, n: usize, dir: &Path) -> Result<History> {
    let names = names(source.name.date(), n)?;
    for name in &names {
        source.write_as(name, dir)?;
    }
    let newest = names.last().context("a history of no runs")?;
    Ok(History {
        dir: dir.to_owned(),
        runs: n,
        newest: dir.join(newest.to_string()),
        previous: names.len().checked_sub(2).map(|i| names[i].clone()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_back_across_months_years_and_leap_days() {
        assert_eq!(days_before("2026-12-02", 0).unwrap(), "2026-12-02");
        assert_eq!(days_before("2026-12-01", 1).unwrap(), "2026-11-30");
        assert_eq!(days_before("2026-01-01", 1).unwrap(), "2025-12-31");
        assert_eq!(days_before("2024-03-01", 1).unwrap(), "2024-02-29");
        assert_eq!(days_before("2100-03-01", 1).unwrap(), "2100-02-28");
        assert_eq!(days_before("2026-12-02", 1599).unwrap(), "2022-07-17");
        assert!(days_before("2026-02-30", 1).is_err());
        assert!(days_before("2026-1x-01", 1).is_err());
    }

    #[test]
    fn names_sort_as_days_oldest_first() {
        let n = names("2026-01-02", 4).unwrap();
        let shown: Vec<String> = n.iter().map(ToString::to_string).collect();
        assert_eq!(
            shown,
            [
                "2025-12-30-100000",
                "2025-12-31-100001",
                "2026-01-01-100002",
                "2026-01-02-100003"
            ]
        );
        let mut sorted = n.clone();
        sorted.sort();
        assert_eq!(sorted, n);
    }

    #[test]
    fn the_rewrite_changes_the_run_fields_only_and_keeps_the_bytes() {
        let old = RunDirName::parse("2026-12-01-local-093940").unwrap();
        let new = RunDirName::parse("2026-11-30-100003").unwrap();
        let f = Path::new("x/results.json");
        let text = "{\n  \"schema_version\": 1,\n  \"run\": {\n    \"id\": \"local-093940\",\n    \
                    \"date\": \"2026-12-01\",\n    \"started\": \"2026-12-01T09:39:40Z\"\n  },\n  \
                    \"cell\": {\"id\": \"linux-x86_64-local\", \"x\": 1.50}\n}\n";
        let out = rewrite(text, &old, &new, f).unwrap().unwrap();
        assert_eq!(
            out,
            text.replace("\"local-093940\"", "\"100003\"")
                .replace("\"2026-12-01\"", "\"2026-11-30\"")
        );
        assert!(out.contains("\"started\": \"2026-12-01T09:39:40Z\""));
        assert!(out.contains("1.50"), "bytes kept as written");
        // A file that names no run is left alone.
        assert!(
            rewrite("{\"id\": \"clang\"}", &old, &new, f)
                .unwrap()
                .is_none()
        );
        // The run's date as another field's value: refused, naming the file.
        let other = "{\"run\": {\"id\": \"local-093940\", \"date\": \"2026-12-01\"}, \
                     \"built\": \"2026-12-01\"}";
        let e = rewrite(other, &old, &new, f).unwrap_err().to_string();
        assert!(e.starts_with("x/results.json: "), "{e}");
    }

    #[test]
    fn a_history_of_the_fixture_run() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../crates/cell-testkit/fixtures/workload/history/2026-12-01-local-093940");
        let source = Source::read(&src).unwrap();
        assert_eq!(source.size.results_files, 1);
        let tmp = tempfile::tempdir().unwrap();
        let h = build(&source, 3, tmp.path()).unwrap();
        assert_eq!(h.newest, tmp.path().join("2026-12-01-100002"));
        assert_eq!(h.previous.unwrap().to_string(), "2026-11-30-100001");
        let cell = tmp.path().join("2026-11-29-100000/linux-x86_64-local");
        let v: Value =
            serde_json::from_str(&std::fs::read_to_string(cell.join(RESULTS_JSON)).unwrap())
                .unwrap();
        assert_eq!(v["run"]["id"], "100000");
        assert_eq!(v["run"]["date"], "2026-11-29");
        assert!(cell.join("facts/clang.json").is_file());
    }
}
