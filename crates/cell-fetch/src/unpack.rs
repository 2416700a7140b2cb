//! Unpacking `.tar.gz`, `.tar.xz` and `.zip` archives without trusting them.
//!
//! Everything is written into a temporary directory next to the destination and renamed into
//! place at the end, so a refused archive leaves nothing behind. Entries that are absolute,
//! have a `..` component, are devices or fifos, or are links whose target resolves outside the
//! destination are refused. Symbolic links are created last, after every one of them has been
//! checked against all the others, so no write ever goes through a link and a chain of links
//! (`a -> .`, `b -> a/..`) cannot be used to point outside.
//!
//! This module reads the archive formats; `extract` writes their entries and resolves the
//! links.

use std::fs::{self, File};
use std::io::{self, BufReader, Read};
use std::path::{Path, PathBuf};

use super::error::{FetchError, Unsafe};
use super::strip::Unpacked;

mod extract;

pub(crate) use extract::Rel;
use extract::{Extractor, Kind};

/// The default cap on the total size of unpacked files: 8 GiB.
pub const DEFAULT_MAX_UNPACKED_BYTES: u64 = 8 << 30;
/// The default cap on the number of archive entries.
pub const DEFAULT_MAX_ENTRIES: usize = 200_000;

/// How many symbolic links may be followed while resolving one link target.
const MAX_LINK_DEPTH: u32 = 40;
/// The longest symbolic-link target read from a zip entry.
const MAX_ZIP_LINK_TARGET: u64 = 4096;

/// The archive formats `cell fetch` unpacks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArchiveKind {
    /// `.tar.gz` or `.tgz`.
    TarGz,
    /// `.tar.xz` or `.txz`.
    TarXz,
    /// `.zip`.
    Zip,
}

impl ArchiveKind {
    /// Tells the format from a file name (case-insensitive).
    pub fn from_file_name(name: &str) -> Result<Self, FetchError> {
        const SUFFIXES: [(&str, ArchiveKind); 5] = [
            (".tar.gz", ArchiveKind::TarGz),
            (".tgz", ArchiveKind::TarGz),
            (".tar.xz", ArchiveKind::TarXz),
            (".txz", ArchiveKind::TarXz),
            (".zip", ArchiveKind::Zip),
        ];
        let lower = name.to_ascii_lowercase();
        SUFFIXES
            .iter()
            .find(|(suffix, _)| lower.ends_with(suffix))
            .map(|&(_, kind)| kind)
            .ok_or_else(|| FetchError::UnknownArchive {
                name: name.to_owned(),
            })
    }
}

/// Limits and shaping of an unpack.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnpackOptions {
    /// Leading path components dropped from every entry, counted as GNU tar's
    /// `--strip-components` counts them (a leading `.` is one: `./a/b` less one is `a/b`);
    /// entries with no more components than this are skipped, and those that are not
    /// directories are listed in [`Unpacked::dropped`].
    pub strip_components: usize,
    /// Cap on the total bytes of unpacked files.
    pub max_unpacked_bytes: u64,
    /// Cap on the number of entries in the archive.
    pub max_entries: usize,
    /// Cap on the unpacked bytes as a multiple of the archive's own size (0: none), never
    /// below `ratio_floor` and never above `max_unpacked_bytes`: results JSON compresses about
    /// 13×, a toolchain tarball 3–10×, a zip bomb thousands of times.
    pub max_ratio: u64,
    /// The unpacked bytes the ratio always allows, however small the archive.
    pub ratio_floor: u64,
}

/// [`UnpackOptions::max_ratio`] by default.
pub const DEFAULT_MAX_RATIO: u64 = 20;
/// [`UnpackOptions::ratio_floor`] by default: 64 MiB.
pub const DEFAULT_RATIO_FLOOR: u64 = 64 << 20;

impl Default for UnpackOptions {
    fn default() -> Self {
        Self {
            strip_components: 0,
            max_unpacked_bytes: DEFAULT_MAX_UNPACKED_BYTES,
            max_entries: DEFAULT_MAX_ENTRIES,
            max_ratio: DEFAULT_MAX_RATIO,
            ratio_floor: DEFAULT_RATIO_FLOOR,
        }
    }
}

impl UnpackOptions {
    /// The cap on unpacked bytes for an archive of `archive_bytes`: the ratio's, at least the
    /// floor, at most the absolute ceiling.
    pub fn cap_for(&self, archive_bytes: u64) -> u64 {
        if self.max_ratio == 0 {
            return self.max_unpacked_bytes;
        }
        archive_bytes
            .saturating_mul(self.max_ratio)
            .max(self.ratio_floor)
            .min(self.max_unpacked_bytes)
    }
}

/// Unpacks `archive` into `into`, which must not exist or be an empty directory.
///
/// The archive is unpacked into a temporary directory created next to `into` and renamed into
/// place when every entry has been written; on any error the temporary directory is removed and
/// `into` is left as it was.
pub fn unpack(
    archive: &Path,
    kind: ArchiveKind,
    into: &Path,
    opts: &UnpackOptions,
) -> Result<Unpacked, FetchError> {
    check_destination(into)?;
    let parent = parent_dir(into);
    // Parents we create are removed again if the unpack fails (when still empty).
    let missing: Vec<PathBuf> = parent
        .ancestors()
        .take_while(|a| !a.as_os_str().is_empty() && !a.exists())
        .map(Path::to_path_buf)
        .collect();
    fs::create_dir_all(parent).map_err(|e| FetchError::io("creating", parent, e))?;
    let size = fs::metadata(archive)
        .map_err(|e| FetchError::io("reading", archive, e))?
        .len();
    let opts = &UnpackOptions {
        max_unpacked_bytes: opts.cap_for(size),
        max_ratio: 0,
        ..opts.clone()
    };
    let result = unpack_next_to(archive, kind, into, parent, opts);
    if result.is_err() {
        for dir in &missing {
            let _ = fs::remove_dir(dir);
        }
    }
    result
}

fn unpack_next_to(
    archive: &Path,
    kind: ArchiveKind,
    into: &Path,
    parent: &Path,
    opts: &UnpackOptions,
) -> Result<Unpacked, FetchError> {
    let (staging, _registered) = crate::cleanup::create(
        || {
            tempfile::Builder::new()
                .prefix(".cell-unpack-")
                .tempdir_in(parent)
        },
        tempfile::TempDir::path,
    )
    .map_err(|e| FetchError::io("creating a temporary directory in", parent, e))?;
    let root = staging.path().join("root");
    fs::create_dir(&root).map_err(|e| FetchError::io("creating", &root, e))?;

    let file = File::open(archive).map_err(|e| FetchError::io("opening", archive, e))?;
    let mut out = Extractor::new(&root, archive, opts);
    match kind {
        ArchiveKind::TarGz => {
            unpack_tar(
                flate2::read::MultiGzDecoder::new(BufReader::new(file)),
                &mut out,
            )?;
        }
        ArchiveKind::TarXz => {
            unpack_tar(
                xz2::read::XzDecoder::new_multi_decoder(BufReader::new(file)),
                &mut out,
            )?;
        }
        ArchiveKind::Zip => unpack_zip(file, &mut out)?,
    }
    let unpacked = out.finish()?;

    check_destination(into)?;
    move_into_place(&root, into)?;
    // The staging directory is empty now; dropping it removes it.
    drop(staging);
    Ok(unpacked)
}

/// `into` must not exist, or be an empty directory (not a link to one).
pub(crate) fn check_destination(into: &Path) -> Result<(), FetchError> {
    match fs::symlink_metadata(into) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(FetchError::io("inspecting", into, e)),
        Ok(meta) if meta.is_dir() => {
            let mut listing = fs::read_dir(into).map_err(|e| FetchError::io("listing", into, e))?;
            if listing.next().is_none() {
                Ok(())
            } else {
                Err(FetchError::DestinationNotEmpty {
                    path: into.to_owned(),
                })
            }
        }
        Ok(_) => Err(FetchError::DestinationNotEmpty {
            path: into.to_owned(),
        }),
    }
}

/// The directory holding `path` (`.` for a bare relative name).
pub(crate) fn parent_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

fn move_into_place(root: &Path, into: &Path) -> Result<(), FetchError> {
    match fs::rename(root, into) {
        Ok(()) => Ok(()),
        Err(first) => {
            // Where rename cannot replace an empty directory, remove it first.
            let empty_dir = fs::symlink_metadata(into).is_ok_and(|m| m.is_dir())
                && fs::read_dir(into).is_ok_and(|mut d| d.next().is_none());
            if !empty_dir {
                return Err(FetchError::io("moving the unpacked tree to", into, first));
            }
            fs::remove_dir(into).map_err(|e| FetchError::io("replacing", into, e))?;
            fs::rename(root, into)
                .map_err(|e| FetchError::io("moving the unpacked tree to", into, e))
        }
    }
}

fn unpack_tar<R: Read>(reader: R, out: &mut Extractor<'_>) -> Result<(), FetchError> {
    let mut archive = tar::Archive::new(reader);
    let entries = archive.entries().map_err(|e| out.corrupt(&e))?;
    for entry in entries {
        let mut entry = entry.map_err(|e| out.corrupt(&e))?;
        let ty = entry.header().entry_type();
        if ty.is_pax_global_extensions() {
            continue;
        }
        out.count()?;
        let name = utf8_name(&entry.path_bytes())?;
        let kind = match ty {
            tar::EntryType::Regular | tar::EntryType::Continuous | tar::EntryType::GNUSparse => {
                let mode = entry.header().mode().unwrap_or(0o644);
                let mtime = entry.header().mtime().ok();
                Kind::File {
                    executable: mode & 0o111 != 0,
                    mtime,
                }
            }
            tar::EntryType::Directory => Kind::Dir,
            tar::EntryType::Symlink | tar::EntryType::Link => {
                let Some(target) = entry.link_name_bytes() else {
                    return Err(out.corrupt(&format!("link `{name}` has no target")));
                };
                let target = utf8_name(&target).map_err(|_| FetchError::Unsafe {
                    entry: name.clone(),
                    why: Unsafe::NotUtf8,
                })?;
                if ty == tar::EntryType::Symlink {
                    Kind::Symlink(target)
                } else {
                    Kind::HardLink(target)
                }
            }
            other => {
                return Err(FetchError::Unsafe {
                    entry: name,
                    why: special(other),
                });
            }
        };
        out.entry(&name, kind, &mut entry)?;
    }
    Ok(())
}

fn special(ty: tar::EntryType) -> Unsafe {
    let kind = match ty {
        tar::EntryType::Char => "character device".to_owned(),
        tar::EntryType::Block => "block device".to_owned(),
        tar::EntryType::Fifo => "fifo".to_owned(),
        other => format!("tar type {:?}", other.as_byte() as char),
    };
    Unsafe::Special { kind }
}

fn unpack_zip(file: File, out: &mut Extractor<'_>) -> Result<(), FetchError> {
    let mut zip = zip::ZipArchive::new(file).map_err(|e| out.corrupt(&e))?;
    if zip.len() > out.opts.max_entries {
        return Err(FetchError::TooManyEntries {
            limit: out.opts.max_entries,
        });
    }
    for i in 0..zip.len() {
        let mut entry = zip.by_index(i).map_err(|e| out.corrupt(&e))?;
        out.count()?;
        let name = entry.name().to_owned();
        let mode = entry.unix_mode();
        let kind = match mode.map(|m| m & 0o170_000) {
            Some(0o120_000) => {
                let mut target = Vec::new();
                (&mut entry)
                    .take(MAX_ZIP_LINK_TARGET + 1)
                    .read_to_end(&mut target)
                    .map_err(|e| out.corrupt(&e))?;
                if target.len() as u64 > MAX_ZIP_LINK_TARGET {
                    return Err(out.corrupt(&format!("link `{name}` has an over-long target")));
                }
                let target = utf8_name(&target).map_err(|_| FetchError::Unsafe {
                    entry: name.clone(),
                    why: Unsafe::NotUtf8,
                })?;
                Kind::Symlink(target)
            }
            Some(0o040_000) => Kind::Dir,
            None | Some(0 | 0o100_000) => {
                if name.ends_with('/') {
                    Kind::Dir
                } else {
                    Kind::File {
                        executable: mode.is_some_and(|m| m & 0o111 != 0),
                        mtime: None,
                    }
                }
            }
            Some(other) => {
                let kind = match other {
                    0o010_000 => "fifo".to_owned(),
                    0o020_000 => "character device".to_owned(),
                    0o060_000 => "block device".to_owned(),
                    0o140_000 => "socket".to_owned(),
                    t => format!("unix file type {t:o}"),
                };
                return Err(FetchError::Unsafe {
                    entry: name,
                    why: Unsafe::Special { kind },
                });
            }
        };
        out.entry(&name, kind, &mut entry)?;
    }
    Ok(())
}

/// An archive name as UTF-8, or a refusal naming it.
fn utf8_name(bytes: &[u8]) -> Result<String, FetchError> {
    String::from_utf8(bytes.to_vec()).map_err(|_| FetchError::Unsafe {
        entry: String::from_utf8_lossy(bytes).into_owned(),
        why: Unsafe::NotUtf8,
    })
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::extract::{Link, Unresolved, components, resolve, resolves_inside};
    use super::*;

    fn links(pairs: &[(&str, &str)]) -> BTreeMap<Rel, Link> {
        pairs
            .iter()
            .map(|(p, t)| {
                let rel = components(p).unwrap();
                (
                    rel,
                    Link {
                        target: (*t).to_owned(),
                        entry: (*p).to_owned(),
                    },
                )
            })
            .collect()
    }

    #[test]
    fn components_refuse_absolute_and_parent() {
        assert_eq!(components("./a/b/").unwrap(), vec!["a", "b"]);
        assert_eq!(components("/etc/passwd"), Err(Unsafe::Absolute));
        assert_eq!(components("a/../../b"), Err(Unsafe::ParentDir));
        assert_eq!(components("..").unwrap_err(), Unsafe::ParentDir);
    }

    #[test]
    fn resolve_is_relative_to_the_links_directory() {
        let none = BTreeMap::new();
        let base = vec!["a".to_owned(), "b".to_owned()];
        assert!(resolve(&none, base.clone(), "../../x", 0).is_ok());
        assert!(matches!(
            resolve(&none, base, "../../../x", 0),
            Err(Unresolved::Escapes)
        ));
    }

    #[test]
    fn resolve_follows_the_archives_own_links() {
        // `a -> .` then `b -> a/..`: lexically inside, physically the parent of the root.
        let set = links(&[("a", ".")]);
        assert!(matches!(
            resolve(&set, vec![], "a/..", 0),
            Err(Unresolved::Escapes)
        ));
        let set = links(&[("lib64", "lib")]);
        assert_eq!(
            resolve(&set, vec!["bin".into()], "../lib64/x", 0).ok(),
            Some(vec!["lib".to_owned(), "x".to_owned()])
        );
        let set = links(&[("a", "b/x"), ("b", "a/x")]);
        assert!(matches!(
            resolve(&set, vec![], "a/y", 0),
            Err(Unresolved::Loop)
        ));
    }

    #[cfg(unix)]
    #[test]
    fn resolves_inside_asks_the_file_system() {
        use std::os::unix::fs::symlink;
        let tmp = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(tmp.path()).unwrap().join("root");
        fs::create_dir_all(root.join("lib")).unwrap();
        symlink("lib", root.join("lib64")).unwrap();
        symlink("../lib64/x", root.join("lib/up")).unwrap();
        symlink("missing/../lib", root.join("dangling")).unwrap();
        symlink(".", root.join("a")).unwrap();
        symlink("a/..", root.join("b")).unwrap();
        symlink("../outside", root.join("out")).unwrap();
        symlink("loop2", root.join("loop1")).unwrap();
        symlink("loop1", root.join("loop2")).unwrap();
        for inside in ["lib64", "lib/up", "dangling", "a"] {
            assert!(resolves_inside(&root, &root.join(inside)), "{inside}");
        }
        for outside in ["b", "out", "loop1"] {
            assert!(!resolves_inside(&root, &root.join(outside)), "{outside}");
        }
    }

    #[test]
    fn kind_from_name() {
        assert_eq!(
            ArchiveKind::from_file_name("x-1.0.TGZ").unwrap(),
            ArchiveKind::TarGz
        );
        assert_eq!(
            ArchiveKind::from_file_name("x.tar.xz").unwrap(),
            ArchiveKind::TarXz
        );
        assert_eq!(
            ArchiveKind::from_file_name("x.zip").unwrap(),
            ArchiveKind::Zip
        );
        assert!(ArchiveKind::from_file_name("x.tar.bz2").is_err());
    }
}
