//! The manifest of a cached tree: every directory, file and link in it with its mode, size and
//! SHA-256 (a link's target), written by the install that verified the tarball, before the
//! tree is renamed into place, and checked before any program of the tree runs. Files are
//! hashed by `cell_fetch`'s [`HashingWriter`], the one way bytes are hashed.

use std::collections::BTreeMap;
use std::fs::{self, File, Metadata, OpenOptions, Permissions};
use std::io::{self, Read as _, Write as _};
use std::os::unix::fs::{MetadataExt as _, OpenOptionsExt as _, PermissionsExt as _};
use std::path::{Component, Path};

use cell_fetch::{CapExceeded, HashingWriter};
use cell_schema::Sha256;
use serde::{Deserialize, Serialize};

use super::{CacheError, Tree, io_at, trusted};

/// The manifest's file, at the top of the tree (the marker that the tree is whole).
pub const MANIFEST: &str = ".cell-installed.json";

/// The most a manifest may hold: zig's tree of about 20,000 files takes 4 MB.
const MAX_MANIFEST_BYTES: u64 = 64 << 20;

/// What the tree holds, by path inside it (`/`-separated).
#[derive(Debug, Serialize, Deserialize)]
struct Manifest {
    /// The URL the verified tarball came from.
    url: String,
    /// The tarball's digest (the tree's name).
    sha256: Sha256,
    /// Every entry but the manifest itself.
    entries: BTreeMap<String, Node>,
}

/// One entry of a tree.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Node {
    /// A directory and its permission bits.
    Dir { mode: u32 },
    /// A regular file.
    File {
        mode: u32,
        bytes: u64,
        sha256: Sha256,
    },
    /// A symbolic link and what it points to.
    Link { target: String },
}

/// What sealing a tree recorded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sealed {
    /// Regular files.
    pub files: usize,
    /// Their bytes.
    pub bytes: u64,
}

/// Makes a freshly verified tree safe to keep (no entry writable by group or others) and
/// writes its manifest.
pub fn seal(tree: &Path, url: &str, sha256: &Sha256) -> Result<Sealed, CacheError> {
    strip_shared_write(tree, &fs::symlink_metadata(tree).map_err(io_at(tree))?)?;
    let mut entries = BTreeMap::new();
    let mut sealed = Sealed { files: 0, bytes: 0 };
    walk(tree, &mut |path, rel, meta| {
        let rel = rel.ok_or_else(|| not_utf8(path))?;
        let node = if meta.file_type().is_symlink() {
            Node::Link {
                target: link_target(path).map_err(io_at(path))?,
            }
        } else {
            let mode = strip_shared_write(path, meta)?;
            if meta.is_dir() {
                Node::Dir { mode }
            } else if meta.is_file() {
                sealed.files += 1;
                sealed.bytes += meta.len();
                Node::File {
                    mode,
                    bytes: meta.len(),
                    sha256: digest(path, meta).map_err(io_at(path))?,
                }
            } else {
                return Err(io_at(path)(io::Error::other(
                    "not a file, a directory or a link",
                )));
            }
        };
        entries.insert(rel.to_owned(), node);
        Ok(())
    })?;
    let manifest = Manifest {
        url: url.to_owned(),
        sha256: sha256.clone(),
        entries,
    };
    let path = tree.join(MANIFEST);
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o644)
        .open(&path)
        .map_err(io_at(&path))?;
    file.write_all(cell_schema::to_json(&manifest).as_bytes())
        .and_then(|()| file.sync_all())
        .map_err(io_at(&path))?;
    Ok(sealed)
}

/// Checks a tree against its manifest: every entry this user's (or root's) alone, else an
/// error; then the first difference, if any.
pub(super) fn check(tree: &Path, sha256: &Sha256) -> Result<Tree, CacheError> {
    let manifest = read(tree, sha256)?;
    let expected = manifest.as_ref().ok().map(|m| &m.entries);
    let mut first: Option<String> = None;
    let mut matched = 0usize;
    walk(tree, &mut |path, rel, meta| {
        trusted(path, meta)?;
        let (Some(expected), None) = (expected, &first) else {
            return Ok(());
        };
        match rel.map(|r| (r, compare(path, meta, expected.get(r)))) {
            Some((_, Ok(()))) => matched += 1,
            Some((r, Err(why))) => first = Some(format!("`{r}`: {why}")),
            None => first = Some(format!("`{}`: a name that is not UTF-8", path.display())),
        }
        Ok(())
    })?;
    let manifest = match manifest {
        Ok(m) => m,
        Err(why) => return Ok(Tree::Differs(why)),
    };
    if first.is_none() && matched < manifest.entries.len() {
        // Every entry walked is in the manifest, so those not walked are not on disk.
        first = manifest
            .entries
            .keys()
            .find(|k| fs::symlink_metadata(tree.join(k)).is_err())
            .map(|k| format!("`{k}`: in the manifest, missing from the tree"));
    }
    Ok(first.map_or(Tree::Holds { url: manifest.url }, Tree::Differs))
}

/// The manifest of `tree`, or why there is none that can be used (an error when the file
/// is not this user's alone).
fn read(tree: &Path, sha256: &Sha256) -> Result<Result<Manifest, String>, CacheError> {
    let path = tree.join(MANIFEST);
    let mut file = match open_no_follow(&path) {
        Ok(f) => f,
        Err(e) => return Ok(Err(format!("no readable manifest `{MANIFEST}`: {e}"))),
    };
    let meta = file.metadata().map_err(io_at(&path))?;
    trusted(&path, &meta)?;
    if !meta.is_file() {
        return Ok(Err(format!("`{MANIFEST}` is not a file")));
    }
    let mut text = String::new();
    if let Err(e) = (&mut file)
        .take(MAX_MANIFEST_BYTES + 1)
        .read_to_string(&mut text)
    {
        return Ok(Err(format!("`{MANIFEST}` cannot be read: {e}")));
    }
    if text.len() as u64 > MAX_MANIFEST_BYTES {
        return Ok(Err(format!(
            "`{MANIFEST}` is over {MAX_MANIFEST_BYTES} bytes"
        )));
    }
    let manifest: Manifest = match cell_schema::read::from_str_unique(&text) {
        Ok(m) => m,
        Err(e) => {
            return Ok(Err(format!(
                "`{MANIFEST}` is not a manifest of this cell: {e}"
            )));
        }
    };
    if manifest.sha256 != *sha256 {
        return Ok(Err(format!(
            "`{MANIFEST}` is the manifest of {}, not of {sha256}",
            manifest.sha256
        )));
    }
    if let Some(bad) = manifest.entries.keys().find(|k| !inside(k)) {
        return Ok(Err(format!(
            "`{MANIFEST}` names `{bad}`, which is not a path inside the tree"
        )));
    }
    Ok(Ok(manifest))
}

/// How an entry on disk differs from what the manifest has for it.
fn compare(path: &Path, meta: &Metadata, want: Option<&Node>) -> Result<(), String> {
    let Some(want) = want else {
        return Err(format!("{} not in the manifest", kind(meta)));
    };
    let got_mode = meta.mode() & 0o7777;
    let mode_differs = |mode: u32| {
        (got_mode != mode).then(|| format!("mode {got_mode:04o} where the manifest has {mode:04o}"))
    };
    let differs = match want {
        Node::Link { target } if meta.file_type().is_symlink() => match link_target(path) {
            Ok(t) if t == *target => None,
            Ok(t) => Some(format!("a link to `{t}` where the manifest has `{target}`")),
            Err(e) => Some(format!("an unreadable link: {e}")),
        },
        Node::Dir { mode } if meta.is_dir() => mode_differs(*mode),
        Node::File {
            mode,
            bytes,
            sha256,
        } if meta.is_file() => mode_differs(*mode)
            .or_else(|| {
                (meta.len() != *bytes)
                    .then(|| format!("{} bytes where the manifest has {bytes}", meta.len()))
            })
            .or_else(|| match digest(path, meta) {
                Ok(d) if d == *sha256 => None,
                Ok(d) => Some(format!("sha256 {d} where the manifest has {sha256}")),
                Err(e) => Some(format!("cannot be read: {e}")),
            }),
        other => Some(format!(
            "{} where the manifest has {}",
            kind(meta),
            match other {
                Node::Dir { .. } => "a directory",
                Node::File { .. } => "a file",
                Node::Link { .. } => "a link",
            }
        )),
    };
    differs.map_or(Ok(()), Err)
}

fn kind(meta: &Metadata) -> &'static str {
    let t = meta.file_type();
    if t.is_symlink() {
        "a link"
    } else if t.is_dir() {
        "a directory"
    } else if t.is_file() {
        "a file"
    } else {
        "a special file"
    }
}

/// What [`walk`] calls for each entry: its path, its name inside the tree, its `lstat`.
type Visit<'a> = dyn FnMut(&Path, Option<&str>, &Metadata) -> Result<(), CacheError> + 'a;

/// Visits every entry under `tree` but the manifest (whose owner is checked all the same),
/// each directory's entries in name order and then its subdirectories, so the first difference
/// named is the same on every run; `rel` is `None` for a name that is not UTF-8.
fn walk(tree: &Path, visit: &mut Visit<'_>) -> Result<(), CacheError> {
    let mut stack = vec![(tree.to_owned(), Some(String::new()))];
    while let Some((dir, rel)) = stack.pop() {
        let mut names: Vec<std::ffi::OsString> = fs::read_dir(&dir)
            .and_then(|d| d.map(|e| e.map(|e| e.file_name())).collect())
            .map_err(io_at(&dir))?;
        names.sort_unstable();
        let mut below = Vec::new();
        for name in names {
            let path = dir.join(&name);
            let meta = fs::symlink_metadata(&path).map_err(io_at(&path))?;
            let child = rel.as_deref().zip(name.to_str()).map(|(r, n)| {
                if r.is_empty() {
                    n.to_owned()
                } else {
                    format!("{r}/{n}")
                }
            });
            if child.as_deref() == Some(MANIFEST) {
                trusted(&path, &meta)?;
                continue;
            }
            visit(&path, child.as_deref(), &meta)?;
            if meta.is_dir() {
                below.push((path, child));
            }
        }
        // Reversed onto the stack, so the directories come off it in name order.
        stack.extend(below.into_iter().rev());
    }
    Ok(())
}

/// A key of the manifest that names a path inside the tree.
fn inside(key: &str) -> bool {
    !key.is_empty()
        && Path::new(key)
            .components()
            .all(|c| matches!(c, Component::Normal(_)))
}

/// Takes away group and other write from what is not a link; returns the bits it keeps.
fn strip_shared_write(path: &Path, meta: &Metadata) -> Result<u32, CacheError> {
    let mode = meta.mode() & 0o7777;
    let kept = mode & !0o022;
    if kept != mode {
        fs::set_permissions(path, Permissions::from_mode(kept)).map_err(io_at(path))?;
    }
    Ok(kept)
}

fn link_target(path: &Path) -> io::Result<String> {
    fs::read_link(path)?
        .into_os_string()
        .into_string()
        .map_err(|_| io::Error::other("a link target that is not UTF-8"))
}

fn not_utf8(path: &Path) -> CacheError {
    io_at(path)(io::Error::other(
        "a name that is not UTF-8 cannot be recorded in the manifest",
    ))
}

/// Opens without following a link, and without waiting on a fifo put in a file's place.
fn open_no_follow(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
}

/// The SHA-256 of the regular file `meta` describes, read no further than its size: a file
/// swapped or grown while it is read is an error, not a digest.
fn digest(path: &Path, meta: &Metadata) -> io::Result<Sha256> {
    let mut file = open_no_follow(path)?;
    let opened = file.metadata()?;
    if (opened.dev(), opened.ino()) != (meta.dev(), meta.ino()) {
        return Err(io::Error::other("replaced while it was checked"));
    }
    let mut w = HashingWriter::new(io::sink(), meta.len());
    io::copy(&mut file, &mut w).map_err(|e| match CapExceeded::of(&e) {
        Some(_) => io::Error::other("grew while it was checked"),
        None => e,
    })?;
    let (_, sha, bytes) = w.finish()?;
    if bytes != meta.len() {
        return Err(io::Error::other("shrank while it was checked"));
    }
    Ok(sha)
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::symlink;

    use super::*;

    fn digest_of(s: &str) -> Sha256 {
        cell_fetch::hash_bytes(s.as_bytes())
    }

    /// A sealed tree: `bin/tcc`, `README`, `lib/libx.so -> libx.so.1`, `lib/libx.so.1`.
    fn sealed() -> (tempfile::TempDir, std::path::PathBuf, Sha256) {
        let tmp = tempfile::tempdir().unwrap();
        let tree = tmp.path().join("tree");
        fs::create_dir_all(tree.join("bin")).unwrap();
        fs::create_dir_all(tree.join("lib")).unwrap();
        fs::write(tree.join("bin/tcc"), "#!/bin/sh\necho tcc\n").unwrap();
        fs::set_permissions(tree.join("bin/tcc"), Permissions::from_mode(0o775)).unwrap();
        fs::write(tree.join("README"), "Tiny C Compiler\n").unwrap();
        fs::write(tree.join("lib/libx.so.1"), "ELF").unwrap();
        symlink("libx.so.1", tree.join("lib/libx.so")).unwrap();
        let sha = digest_of("the tarball");
        let s = seal(&tree, "http://127.0.0.1/t.tar.gz", &sha).unwrap();
        assert_eq!(s.files, 3);
        (tmp, tree, sha)
    }

    fn differs(tree: &Path, sha: &Sha256) -> String {
        match check(tree, sha).unwrap() {
            Tree::Differs(why) => why,
            other => panic!("expected a difference: {other:?}"),
        }
    }

    #[test]
    fn a_sealed_tree_holds_and_loses_its_shared_write_bits() {
        let (_tmp, tree, sha) = sealed();
        match check(&tree, &sha).unwrap() {
            Tree::Holds { url } => assert_eq!(url, "http://127.0.0.1/t.tar.gz"),
            other => panic!("{other:?}"),
        }
        let mode = fs::metadata(tree.join("bin/tcc")).unwrap().mode() & 0o7777;
        assert_eq!(mode, 0o755, "group write taken away before the manifest");
    }

    /// Regression: a cached tree was trusted because its marker parsed; a byte changed in one
    /// of its programs ran as the release.
    #[test]
    fn a_changed_byte_is_named_with_both_digests() {
        let (_tmp, tree, sha) = sealed();
        let before = fs::read(tree.join("bin/tcc")).unwrap();
        let mut after = before.clone();
        after[3] ^= 1;
        fs::write(tree.join("bin/tcc"), &after).unwrap();
        let why = differs(&tree, &sha);
        assert!(
            why.starts_with("`bin/tcc`: sha256 ")
                && why.contains(&cell_fetch::hash_bytes(&after).to_string())
                && why.contains(&cell_fetch::hash_bytes(&before).to_string()),
            "{why}"
        );
    }

    #[test]
    fn a_file_added_removed_resized_or_remoded_and_a_link_moved_are_each_named() {
        type Change = fn(&Path);
        let cases: [(Change, &str); 6] = [
            (
                |t| {
                    fs::write(t.join("bin/gcc"), "x").unwrap();
                    fs::set_permissions(t.join("bin/gcc"), Permissions::from_mode(0o755)).unwrap();
                },
                "`bin/gcc`: a file not in the manifest",
            ),
            (
                |t| fs::remove_file(t.join("README")).unwrap(),
                "`README`: in the manifest, missing from the tree",
            ),
            (
                |t| fs::write(t.join("README"), "Tiny\n").unwrap(),
                "`README`: 5 bytes where the manifest has 16",
            ),
            (
                |t| {
                    fs::set_permissions(t.join("README"), Permissions::from_mode(0o4755)).unwrap();
                },
                "`README`: mode 4755 where the manifest has 0644",
            ),
            (
                |t| {
                    fs::remove_file(t.join("lib/libx.so")).unwrap();
                    symlink("/bin/sh", t.join("lib/libx.so")).unwrap();
                },
                "`lib/libx.so`: a link to `/bin/sh` where the manifest has `libx.so.1`",
            ),
            (
                |t| {
                    fs::remove_file(t.join("README")).unwrap();
                    fs::create_dir(t.join("README")).unwrap();
                    fs::set_permissions(t.join("README"), Permissions::from_mode(0o755)).unwrap();
                },
                "`README`: a directory where the manifest has a file",
            ),
        ];
        for (change, want) in cases {
            let (_tmp, tree, sha) = sealed();
            change(&tree);
            assert_eq!(differs(&tree, &sha), want);
        }
    }

    #[test]
    fn no_readable_manifest_or_another_digests_manifest_differs() {
        let (_tmp, tree, sha) = sealed();
        let other = digest_of("another tarball");
        assert!(differs(&tree, &other).contains("is the manifest of"));
        let text = fs::read_to_string(tree.join(MANIFEST)).unwrap();
        fs::write(
            tree.join(MANIFEST),
            text.replace("\"README\"", "\"../../etc/passwd\""),
        )
        .unwrap();
        assert!(differs(&tree, &sha).contains("not a path inside the tree"));
        // The marker of an older cell: a URL and a digest, no entries.
        let old = serde_json::json!({ "url": "u", "sha256": sha.to_string() });
        fs::write(tree.join(MANIFEST), old.to_string()).unwrap();
        assert!(differs(&tree, &sha).contains("not a manifest of this cell"));
        fs::remove_file(tree.join(MANIFEST)).unwrap();
        symlink("/etc/hostname", tree.join(MANIFEST)).unwrap();
        assert!(differs(&tree, &sha).starts_with("no readable manifest"));
    }

    #[test]
    fn an_entry_others_can_write_to_is_refused_not_reinstalled() {
        let (_tmp, tree, sha) = sealed();
        fs::set_permissions(tree.join("lib/libx.so.1"), Permissions::from_mode(0o666)).unwrap();
        let err = check(&tree, &sha).unwrap_err().to_string();
        assert!(
            err.contains("lib/libx.so.1") && err.contains("writable by group or others"),
            "{err}"
        );
    }

    #[test]
    fn a_file_that_grows_while_it_is_hashed_is_not_a_digest() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("f");
        fs::write(&path, "abc").unwrap();
        let meta = fs::symlink_metadata(&path).unwrap();
        fs::write(&path, "abcdef").unwrap();
        let err = digest(&path, &meta).unwrap_err();
        assert!(err.to_string().contains("grew"), "{err}");
        // Another file renamed into its place (both exist at once, so the inodes differ).
        fs::write(tmp.path().join("g"), "abc").unwrap();
        fs::rename(tmp.path().join("g"), &path).unwrap();
        let err = digest(&path, &meta).unwrap_err();
        assert!(err.to_string().contains("replaced"), "{err}");
    }

    /// The cost of the check on the largest tree there is, zig's (installed by pip): sealing
    /// and checking a copy of it, printed as figures. `cargo test -p cell-run --lib -- --ignored
    /// zigs_tree --nocapture`.
    #[test]
    #[ignore = "copies and hashes zig's 360 MB tree; a figure for the docs, not a check"]
    fn sealing_and_checking_zigs_tree() {
        let found = std::process::Command::new("python3")
            .args([
                "-c",
                "import ziglang,os;print(os.path.dirname(ziglang.__file__))",
            ])
            .output();
        let Some(zig) = found
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        else {
            println!("skipped: python3 -m pip's ziglang is not installed");
            return;
        };
        let tmp = tempfile::tempdir().unwrap();
        let tree = tmp.path().join("zig");
        let copied = std::process::Command::new("cp")
            .args(["-a", &zig])
            .arg(&tree)
            .status()
            .unwrap();
        assert!(copied.success());
        let sha = digest_of("zig");
        let t = std::time::Instant::now();
        let sealed = seal(&tree, "http://127.0.0.1/zig.tar.xz", &sha).unwrap();
        let seal_s = t.elapsed().as_secs_f64();
        let manifest_bytes = fs::metadata(tree.join(MANIFEST)).unwrap().len();
        let t = std::time::Instant::now();
        assert!(matches!(check(&tree, &sha).unwrap(), Tree::Holds { .. }));
        let check_s = t.elapsed().as_secs_f64();
        println!(
            "zig tree: {} files, {} bytes; manifest {manifest_bytes} bytes; sealed in {seal_s:.2} s, checked in {check_s:.2} s",
            sealed.files, sealed.bytes
        );
        let exe = tree.join("zig");
        let mut bytes = fs::read(&exe).unwrap();
        let mid = bytes.len() / 2;
        bytes[mid] ^= 1;
        fs::write(&exe, bytes).unwrap();
        assert!(differs(&tree, &sha).starts_with("`zig`: sha256"));
    }
}
