//! The run's artifact store, with the semantics of `actions/upload-artifact@v4`+ and
//! `actions/download-artifact@v4`+ (the versions whose artifacts are immutable zips):
//!
//! - upload: `path` is lines of globs (`!` excludes), relative to the workspace; the files
//!   are stored relative to the least common ancestor of the patterns' search paths (the part
//!   before the first wildcard; a single file's own directory); hidden files are left out
//!   unless `include-hidden-files`; `if-no-files-found` is `warn` (default), `error` or
//!   `ignore`; a name is unique per run, across attempts, so a second upload of one name fails
//!   unless `overwrite: true`. Every file is zipped with mode 0644: the exec bit is lost, as on
//!   GitHub.
//! - download: `name` (into `path` itself), else every artifact or those whose name matches
//!   `pattern`, each into `path/<name>/` unless `merge-multiple`. Every artifact of the run is
//!   visible, earlier attempts' too.
//!
//! The zips are real files under the store's directory; the API stand-in serves them.

use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::glob;

/// One stored artifact.
#[derive(Clone, Debug)]
pub struct Artifact {
    pub id: u64,
    pub name: String,
    /// The attempt that uploaded it.
    pub attempt: u32,
    pub zip: PathBuf,
    pub size: u64,
    /// The zip's SHA-256, hex.
    pub digest: String,
    pub created_at: String,
}

/// Every artifact of one run.
pub struct Store {
    dir: PathBuf,
    arts: Mutex<Vec<Artifact>>,
    next_id: std::sync::atomic::AtomicU64,
}

/// An upload's step outputs and its warning (no files found, `warn`).
pub type Uploaded = (Vec<(String, String)>, Option<String>);

/// What an upload or download step's `with:` says, by key.
pub type With = std::collections::BTreeMap<String, String>;

fn flag(with: &With, key: &str) -> bool {
    with.get(key).is_some_and(|v| v.trim() == "true")
}

fn hidden(rel: &Path) -> bool {
    rel.components()
        .any(|c| c.as_os_str().to_string_lossy().starts_with('.'))
}

/// The common ancestor directory of `paths`.
fn common_ancestor(paths: &[PathBuf]) -> PathBuf {
    let mut root = paths[0].clone();
    for p in &paths[1..] {
        while !p.starts_with(&root) {
            root.pop();
        }
    }
    root
}

impl Store {
    pub fn new(dir: &Path) -> Self {
        Self::with_first_id(dir, 7001)
    }

    /// A store whose artifact ids count from `first` (ids are unique across a repository's
    /// runs, so two runs' stores shown by one API must not share any).
    pub fn with_first_id(dir: &Path, first: u64) -> Self {
        std::fs::create_dir_all(dir).unwrap();
        Self {
            dir: dir.to_path_buf(),
            arts: Mutex::new(Vec::new()),
            next_id: std::sync::atomic::AtomicU64::new(first),
        }
    }

    /// Every artifact so far, in upload order.
    pub fn list(&self) -> Vec<Artifact> {
        self.arts.lock().unwrap().clone()
    }

    /// The files an upload of `with` takes, each with its name in the zip.
    fn gather(ws: &Path, with: &With) -> Vec<(PathBuf, String)> {
        let lines: Vec<&str> = with
            .get("path")
            .map(|p| p.lines().map(str::trim).filter(|l| !l.is_empty()).collect())
            .unwrap_or_default();
        let abs = |l: &str| {
            let l = l.trim_start_matches("./");
            if Path::new(l).is_absolute() {
                l.to_owned()
            } else {
                format!("{}/{l}", ws.display())
            }
        };
        let (excl, incl): (Vec<&str>, Vec<&str>) = lines.iter().partition(|l| l.starts_with('!'));
        let excl: Vec<String> = excl.iter().map(|l| abs(&l[1..])).collect();
        let mut roots = Vec::new();
        let mut files = Vec::new();
        for l in &incl {
            let pat = abs(l);
            let root = PathBuf::from(glob::search_root(&pat));
            roots.push(if root.is_file() {
                root.parent().unwrap().to_path_buf()
            } else {
                root
            });
            files.extend(glob::expand(ws, &pat));
        }
        files.sort();
        files.dedup();
        files.retain(|f| !excl.iter().any(|e| glob::matches(e, &f.to_string_lossy())));
        if files.is_empty() {
            return Vec::new();
        }
        let root = common_ancestor(&roots);
        let keep_hidden = flag(with, "include-hidden-files");
        files
            .into_iter()
            .filter_map(|f| {
                let rel = f.strip_prefix(&root).ok()?.to_path_buf();
                (keep_hidden || !hidden(&rel)).then(|| (f, rel.to_string_lossy().into_owned()))
            })
            .collect()
    }

    /// `actions/upload-artifact`: the step's outputs, a warning, or why the step fails.
    pub fn upload(&self, ws: &Path, with: &With, attempt: u32) -> Result<Uploaded, String> {
        let name = with.get("name").map_or("artifact", String::as_str).trim();
        let files = Self::gather(ws, with);
        if files.is_empty() {
            let msg = format!(
                "No files were found with the provided path: {:?}",
                with.get("path")
            );
            return match with.get("if-no-files-found").map_or("warn", |s| s.trim()) {
                "error" => Err(msg),
                "ignore" => Ok((Vec::new(), None)),
                _ => Ok((Vec::new(), Some(msg))),
            };
        }
        let mut arts = self.arts.lock().unwrap();
        if let Some(i) = arts.iter().position(|a| a.name == name) {
            if !flag(with, "overwrite") {
                return Err(format!(
                    "Failed to CreateArtifact: Received non-retryable error: Failed request: (409) Conflict: an artifact with this name already exists on the workflow run ({name})"
                ));
            }
            let _ = std::fs::remove_file(&arts[i].zip);
            arts.remove(i);
        }
        let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        let opts = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated)
            .unix_permissions(0o644);
        for (path, rel) in &files {
            let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
            zip.start_file(rel.as_str(), opts)
                .map_err(|e| e.to_string())?;
            zip.write_all(&bytes).map_err(|e| e.to_string())?;
        }
        let bytes = zip.finish().map_err(|e| e.to_string())?.into_inner();
        let id = self
            .next_id
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let path = self.dir.join(format!("{id}.zip"));
        std::fs::write(&path, &bytes).unwrap();
        let digest = crate::sha256(&bytes).to_string();
        arts.push(Artifact {
            id,
            name: name.to_owned(),
            attempt,
            zip: path,
            size: bytes.len() as u64,
            digest: digest.clone(),
            created_at: cell_schema::time::format_utc(cell_schema::time::now_secs()),
        });
        let outputs = vec![
            ("artifact-id".into(), id.to_string()),
            (
                "artifact-url".into(),
                format!("https://github.com/o/r/actions/runs/0/artifacts/{id}"),
            ),
            ("artifact-digest".into(), digest),
        ];
        Ok((outputs, None))
    }

    /// Artifact `name`'s zip replaced by `bytes` (its size and digest made to match): a
    /// hostile archive, served as GitHub would serve an upload of it.
    pub fn replace_zip(&self, name: &str, bytes: &[u8]) {
        let mut arts = self.arts.lock().unwrap();
        let a = arts.iter_mut().find(|a| a.name == name).unwrap();
        std::fs::write(&a.zip, bytes).unwrap();
        a.size = bytes.len() as u64;
        a.digest = crate::sha256(bytes).to_string();
    }

    /// `actions/download-artifact`: the step's outputs or why it fails.
    pub fn download(&self, ws: &Path, with: &With) -> Result<Vec<(String, String)>, String> {
        if with.get("run-id").is_some_and(|r| !r.trim().is_empty()) {
            return Err(
                "the walk serves only this run's artifacts (run-id is not supported)".into(),
            );
        }
        let dest = match with.get("path").map(|p| p.trim()) {
            None | Some("") => ws.to_path_buf(),
            Some(p) if p.starts_with('/') => PathBuf::from(p),
            Some(p) => ws.join(p),
        };
        let arts = self.list();
        let name = with.get("name").map(|n| n.trim()).filter(|n| !n.is_empty());
        let chosen: Vec<&Artifact> = if let Some(n) = name {
            let a = arts.iter().find(|a| a.name == n).ok_or_else(|| {
                format!("Unable to download artifact(s): Artifact not found for name: {n}")
            })?;
            vec![a]
        } else {
            let pattern = with
                .get("pattern")
                .map(|p| p.trim())
                .filter(|p| !p.is_empty());
            arts.iter()
                .filter(|a| pattern.is_none_or(|p| glob::matches(p, &a.name)))
                .collect()
        };
        let merge = flag(with, "merge-multiple");
        for a in &chosen {
            let into = if name.is_some() || merge {
                dest.clone()
            } else {
                dest.join(&a.name)
            };
            unzip(&a.zip, &into)?;
        }
        Ok(vec![("download-path".into(), dest.display().to_string())])
    }
}

/// Unpacks a stored zip into `into`; files get mode 0644, as the runner's unzip leaves them.
pub fn unzip(zip: &Path, into: &Path) -> Result<(), String> {
    let file = std::fs::File::open(zip).map_err(|e| format!("{}: {e}", zip.display()))?;
    let mut archive = zip::ZipArchive::new(file).map_err(|e| e.to_string())?;
    for i in 0..archive.len() {
        let mut entry = archive.by_index(i).map_err(|e| e.to_string())?;
        let rel = entry
            .enclosed_name()
            .ok_or_else(|| format!("{}: unsafe entry {}", zip.display(), entry.name()))?;
        let out = into.join(rel);
        if entry.is_dir() {
            std::fs::create_dir_all(&out).map_err(|e| e.to_string())?;
            continue;
        }
        std::fs::create_dir_all(out.parent().unwrap()).map_err(|e| e.to_string())?;
        let mut bytes = Vec::new();
        entry.read_to_end(&mut bytes).map_err(|e| e.to_string())?;
        std::fs::write(&out, bytes).map_err(|e| format!("{}: {e}", out.display()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(pairs: &[(&str, &str)]) -> With {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[cfg(unix)]
    #[test]
    fn upload_roots_names_conflicts_and_the_lost_exec_bit() {
        use std::os::unix::fs::PermissionsExt as _;
        let tmp = tempfile::tempdir().unwrap();
        let ws = tmp.path().join("ws");
        std::fs::create_dir_all(ws.join("job/a1/.hid")).unwrap();
        std::fs::write(ws.join("job/a1/results.json"), "{}").unwrap();
        std::fs::write(ws.join("job/a1/.hid/x"), "h").unwrap();
        std::fs::write(ws.join("job/a1/run.sh"), "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(
            ws.join("job/a1/run.sh"),
            std::fs::Permissions::from_mode(0o755),
        )
        .unwrap();
        let store = Store::new(&tmp.path().join("store"));
        let w = with(&[
            ("name", "art"),
            ("path", "job/*/results.json\njob/*/run.sh\njob/**/x"),
        ]);
        store.upload(&ws, &w, 1).unwrap();
        let err = store.upload(&ws, &w, 2).unwrap_err();
        assert!(err.contains("Conflict"), "{err}");
        store
            .upload(
                &ws,
                &with(&[("name", "art"), ("path", "job"), ("overwrite", "true")]),
                2,
            )
            .unwrap();
        assert_eq!(store.list().len(), 1);
        let none = with(&[
            ("name", "n"),
            ("path", "nope/*"),
            ("if-no-files-found", "error"),
        ]);
        assert!(store.upload(&ws, &none, 1).is_err());

        let dl = tmp.path().join("dl");
        store.download(&dl, &with(&[("name", "art")])).unwrap();
        assert_eq!(crate::tree(&dl), ["a1", "a1/results.json", "a1/run.sh"]);
        assert!(!crate::is_executable(&dl.join("a1/run.sh")));
        let all = tmp.path().join("all");
        store.download(&all, &with(&[("pattern", "a*")])).unwrap();
        assert!(all.join("art/a1/results.json").is_file());
    }
}
