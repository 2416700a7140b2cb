//! Unpacking `.tar.gz`, `.tar.xz` and `.zip` archives without trusting them.
//!
//! Everything is written into a temporary directory next to the destination and renamed into
//! place at the end, so a refused archive leaves nothing behind. Entries that are absolute,
//! have a `..` component, are devices or fifos, or are links whose target resolves outside the
//! destination are refused. Symbolic links are created last, after every one of them has been
//! checked against all the others, so no write ever goes through a link and a chain of links
//! (`a -> .`, `b -> a/..`) cannot be used to point outside.

use std::collections::{BTreeMap, VecDeque};
use std::ffi::OsString;
use std::fs::{self, File};
use std::io::{self, BufReader, Read, Write};
use std::path::{Component, Path, PathBuf};
use std::time::{Duration, SystemTime};

use super::error::{FetchError, Unsafe};
use super::strip::{Dropped, Unpacked, stripped};

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

/// What an entry is, independent of the archive format.
enum Kind {
    File {
        executable: bool,
        mtime: Option<u64>,
    },
    Dir,
    Symlink(String),
    HardLink(String),
}

/// A relative path inside the destination, one string per component.
pub(crate) type Rel = Vec<String>;

/// The components of an entry name or link target: `Err` if it is absolute or has `..`.
fn components(name: &str) -> Result<Rel, Unsafe> {
    if name.starts_with('/') || name.starts_with('\\') {
        return Err(Unsafe::Absolute);
    }
    let mut out = Vec::new();
    for c in Path::new(name).components() {
        match c {
            Component::Prefix(_) | Component::RootDir => return Err(Unsafe::Absolute),
            Component::ParentDir => return Err(Unsafe::ParentDir),
            Component::CurDir => {}
            Component::Normal(s) => out.push(s.to_string_lossy().into_owned()),
        }
    }
    Ok(out)
}

fn to_path(root: &Path, rel: &[String]) -> PathBuf {
    let mut p = root.to_path_buf();
    p.extend(rel);
    p
}

/// A symbolic link waiting to be created.
struct Link {
    target: String,
    entry: String,
}

/// Why a link target cannot be resolved inside the destination.
enum Unresolved {
    Absolute,
    Escapes,
    Loop,
}

/// Resolves `target` lexically from the directory `base`, substituting the archive's own
/// symbolic links met on the way (never the last component: that one is checked on its own).
fn resolve(
    links: &BTreeMap<Rel, Link>,
    base: Rel,
    target: &str,
    depth: u32,
) -> Result<Rel, Unresolved> {
    if depth > MAX_LINK_DEPTH {
        return Err(Unresolved::Loop);
    }
    if target.starts_with('/') || target.starts_with('\\') {
        return Err(Unresolved::Absolute);
    }
    let parts: Vec<Component<'_>> = Path::new(target).components().collect();
    let mut cur = base;
    for (i, part) in parts.iter().enumerate() {
        match part {
            Component::Prefix(_) | Component::RootDir => return Err(Unresolved::Absolute),
            Component::CurDir => {}
            Component::ParentDir => {
                if cur.pop().is_none() {
                    return Err(Unresolved::Escapes);
                }
            }
            Component::Normal(s) => {
                cur.push(s.to_string_lossy().into_owned());
                let more = i + 1 < parts.len();
                if let Some(link) = links.get(&cur).filter(|_| more) {
                    cur.pop();
                    cur = resolve(links, cur, &link.target, depth + 1)?;
                }
            }
        }
    }
    Ok(cur)
}

/// Writes entries under `root`, enforcing the caps and the safety rules.
struct Extractor<'a> {
    root: &'a Path,
    archive: &'a Path,
    opts: &'a UnpackOptions,
    seen: usize,
    written: usize,
    bytes: u64,
    links: BTreeMap<Rel, Link>,
    dropped: Dropped,
}

impl<'a> Extractor<'a> {
    fn new(root: &'a Path, archive: &'a Path, opts: &'a UnpackOptions) -> Self {
        Self {
            root,
            archive,
            opts,
            seen: 0,
            written: 0,
            bytes: 0,
            links: BTreeMap::new(),
            dropped: Dropped::default(),
        }
    }

    fn corrupt(&self, msg: &dyn ToString) -> FetchError {
        FetchError::Archive {
            path: self.archive.to_owned(),
            msg: msg.to_string(),
        }
    }

    fn count(&mut self) -> Result<(), FetchError> {
        // A stopping process removes the stage: no entry may start writing into it after.
        crate::cleanup::checkpoint();
        self.seen += 1;
        if self.seen > self.opts.max_entries {
            return Err(FetchError::TooManyEntries {
                limit: self.opts.max_entries,
            });
        }
        Ok(())
    }

    fn refuse(entry: &str, why: Unsafe) -> FetchError {
        FetchError::Unsafe {
            entry: entry.to_owned(),
            why,
        }
    }

    /// The entry's place after `--strip-components`, or `None` to skip it.
    fn place(&self, name: &str) -> Result<Option<Rel>, FetchError> {
        components(name).map_err(|why| Self::refuse(name, why))?;
        let Some(rel) = stripped(name, self.opts.strip_components) else {
            return Ok(None);
        };
        self.not_through_links(name, &rel)?;
        Ok(Some(rel))
    }

    /// No strict prefix of `rel` may be one of the archive's symbolic links.
    fn not_through_links(&self, name: &str, rel: &[String]) -> Result<(), FetchError> {
        for n in 1..rel.len() {
            if self.links.contains_key(&rel[..n]) {
                return Err(Self::refuse(
                    name,
                    Unsafe::ThroughSymlink {
                        link: rel[..n].join("/"),
                    },
                ));
            }
        }
        Ok(())
    }

    fn entry(&mut self, name: &str, kind: Kind, data: &mut dyn Read) -> Result<(), FetchError> {
        let Some(rel) = self.place(name)? else {
            if !matches!(kind, Kind::Dir) {
                self.dropped.push(name);
            }
            return Ok(());
        };
        match kind {
            Kind::Dir => self.dir(&rel)?,
            Kind::File { executable, mtime } => self.file(name, &rel, data, executable, mtime)?,
            Kind::Symlink(target) => self.symlink(name, rel, target)?,
            Kind::HardLink(target) => self.hard_link(name, &rel, &target)?,
        }
        self.written += 1;
        Ok(())
    }

    fn dir(&mut self, rel: &Rel) -> Result<(), FetchError> {
        self.links.remove(rel);
        let path = to_path(self.root, rel);
        if fs::symlink_metadata(&path).is_ok_and(|m| !m.is_dir()) {
            fs::remove_file(&path).map_err(|e| FetchError::io("replacing", &path, e))?;
        }
        fs::create_dir_all(&path).map_err(|e| FetchError::io("creating", &path, e))
    }

    /// Makes room for a new file or link at `rel`: its parents exist, nothing is in the way.
    fn clear(&mut self, rel: &Rel) -> Result<PathBuf, FetchError> {
        self.links.remove(rel);
        let path = to_path(self.root, rel);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).map_err(|e| FetchError::io("creating", parent, e))?;
        }
        match fs::symlink_metadata(&path) {
            Ok(m) if m.is_dir() => {
                fs::remove_dir(&path).map_err(|e| FetchError::io("replacing", &path, e))?;
            }
            Ok(_) => fs::remove_file(&path).map_err(|e| FetchError::io("replacing", &path, e))?,
            Err(_) => {}
        }
        Ok(path)
    }

    fn file(
        &mut self,
        name: &str,
        rel: &Rel,
        data: &mut dyn Read,
        executable: bool,
        mtime: Option<u64>,
    ) -> Result<(), FetchError> {
        let path = self.clear(rel)?;
        let mut file = create_new(&path, executable)?;
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            let n = match data.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(self.corrupt(&format!("reading `{name}`: {e}"))),
            };
            self.bytes += n as u64;
            if self.bytes > self.opts.max_unpacked_bytes {
                return Err(FetchError::UnpackedTooLarge {
                    entry: name.to_owned(),
                    limit: self.opts.max_unpacked_bytes,
                });
            }
            file.write_all(&buf[..n])
                .map_err(|e| FetchError::io("writing", &path, e))?;
        }
        if let Some(secs) = mtime {
            let when = SystemTime::UNIX_EPOCH + Duration::from_secs(secs);
            // A file system without settable times is no reason to fail.
            let _ = file.set_modified(when);
        }
        Ok(())
    }

    fn symlink(&mut self, name: &str, rel: Rel, target: String) -> Result<(), FetchError> {
        let path = to_path(self.root, &rel);
        let under_it = self
            .links
            .keys()
            .any(|k| k.len() > rel.len() && k.starts_with(&rel));
        if under_it || fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir()) {
            return Err(Self::refuse(name, Unsafe::LinkOverDirectory));
        }
        self.check_link(name, &rel, &target)?;
        if fs::symlink_metadata(&path).is_ok() {
            fs::remove_file(&path).map_err(|e| FetchError::io("replacing", &path, e))?;
        }
        self.links.insert(
            rel,
            Link {
                target,
                entry: name.to_owned(),
            },
        );
        Ok(())
    }

    /// The link at `rel` must resolve inside the destination, given the links known so far.
    fn check_link(&self, name: &str, rel: &Rel, target: &str) -> Result<(), FetchError> {
        let base = rel[..rel.len() - 1].to_vec();
        match resolve(&self.links, base, target, 0) {
            Ok(_) => Ok(()),
            Err(Unresolved::Absolute) => Err(Self::refuse(
                name,
                Unsafe::AbsoluteLink {
                    target: target.to_owned(),
                },
            )),
            Err(Unresolved::Escapes) => Err(Self::refuse(
                name,
                Unsafe::LinkEscapes {
                    target: target.to_owned(),
                },
            )),
            Err(Unresolved::Loop) => Err(Self::refuse(
                name,
                Unsafe::LinkLoop {
                    target: target.to_owned(),
                },
            )),
        }
    }

    /// A tar hard link: its target is named from the archive root, like any entry.
    fn hard_link(&mut self, name: &str, rel: &Rel, target: &str) -> Result<(), FetchError> {
        let refuse_target = |why: Unsafe| {
            let why = match why {
                Unsafe::Absolute => Unsafe::AbsoluteLink {
                    target: target.to_owned(),
                },
                Unsafe::ParentDir => Unsafe::LinkEscapes {
                    target: target.to_owned(),
                },
                other => other,
            };
            Self::refuse(name, why)
        };
        components(target).map_err(refuse_target)?;
        let Some(to) = stripped(target, self.opts.strip_components) else {
            return Err(Self::refuse(
                name,
                Unsafe::HardLinkTarget {
                    target: target.to_owned(),
                },
            ));
        };
        self.not_through_links(name, &to)?;
        let from = to_path(self.root, &to);
        let is_file = !self.links.contains_key(&to)
            && fs::symlink_metadata(&from).is_ok_and(|m| m.file_type().is_file());
        if !is_file {
            return Err(Self::refuse(
                name,
                Unsafe::HardLinkTarget {
                    target: target.to_owned(),
                },
            ));
        }
        if to == *rel {
            return Ok(());
        }
        let path = self.clear(rel)?;
        if fs::hard_link(&from, &path).is_err() {
            fs::copy(&from, &path).map_err(|e| FetchError::io("creating", &path, e))?;
        }
        Ok(())
    }

    /// Checks every symbolic link against all the others, creates them, and says what was
    /// unpacked.
    fn finish(self) -> Result<Unpacked, FetchError> {
        for (rel, link) in &self.links {
            self.not_through_links(&link.entry, rel)?;
            self.check_link(&link.entry, rel, &link.target)?;
        }
        for rel in self.links.keys() {
            let parent = to_path(self.root, &rel[..rel.len() - 1]);
            fs::create_dir_all(&parent).map_err(|e| FetchError::io("creating", &parent, e))?;
        }
        // The checks above compare names; a file system that folds case or normalizes Unicode
        // can make two different names one file. So look at what the file system says too:
        // nothing is created through a link, and every link resolves inside.
        let root =
            fs::canonicalize(self.root).map_err(|e| FetchError::io("resolving", self.root, e))?;
        for (rel, link) in &self.links {
            for n in 1..rel.len() {
                let prefix = to_path(&root, &rel[..n]);
                if fs::symlink_metadata(&prefix).is_ok_and(|m| m.file_type().is_symlink()) {
                    let why = Unsafe::ThroughSymlink {
                        link: rel[..n].join("/"),
                    };
                    return Err(Self::refuse(&link.entry, why));
                }
            }
            make_symlink(&link.target, &to_path(&root, rel))?;
        }
        for (rel, link) in &self.links {
            if !resolves_inside(&root, &to_path(&root, rel)) {
                let why = Unsafe::LinkEscapes {
                    target: link.target.clone(),
                };
                return Err(Self::refuse(&link.entry, why));
            }
        }
        Ok(Unpacked {
            entries: self.written,
            dropped: self.dropped,
        })
    }
}

/// Whether the symbolic link `link` (under the canonical directory `root`) resolves inside
/// `root`, following links the way the file system does. Components that do not exist are
/// taken as plain directories.
fn resolves_inside(root: &Path, link: &Path) -> bool {
    let Some(mut cur) = link.parent().map(Path::to_path_buf) else {
        return false;
    };
    let mut pending = VecDeque::new();
    if !push_front(&mut pending, link) {
        return false;
    }
    let mut hops = 0;
    while let Some(part) = pending.pop_front() {
        match part {
            // `cur` never holds a link, so dropping its last component is what `..` does.
            None => {
                cur.pop();
            }
            Some(name) => {
                let next = cur.join(name);
                if fs::symlink_metadata(&next).is_ok_and(|m| m.file_type().is_symlink()) {
                    hops += 1;
                    if hops > MAX_LINK_DEPTH || !push_front(&mut pending, &next) {
                        return false;
                    }
                } else {
                    cur = next;
                }
            }
        }
        if !cur.starts_with(root) {
            return false;
        }
    }
    true
}

/// Puts the components of `link`'s target in front of `pending` (`None` for `..`); `false`
/// if it cannot be read or is absolute.
fn push_front(pending: &mut VecDeque<Option<OsString>>, link: &Path) -> bool {
    let Ok(target) = fs::read_link(link) else {
        return false;
    };
    let mut parts = Vec::new();
    for c in target.components() {
        match c {
            Component::Prefix(_) | Component::RootDir => return false,
            Component::CurDir => {}
            Component::ParentDir => parts.push(None),
            Component::Normal(n) => parts.push(Some(n.to_os_string())),
        }
    }
    for part in parts.into_iter().rev() {
        pending.push_front(part);
    }
    true
}

fn create_new(path: &Path, executable: bool) -> Result<File, FetchError> {
    let mut options = fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.mode(if executable { 0o777 } else { 0o666 });
    }
    #[cfg(not(unix))]
    let _ = executable;
    options
        .open(path)
        .map_err(|e| FetchError::io("creating", path, e))
}

#[cfg(unix)]
fn make_symlink(target: &str, path: &Path) -> Result<(), FetchError> {
    std::os::unix::fs::symlink(target, path).map_err(|e| FetchError::io("creating link", path, e))
}

#[cfg(windows)]
fn make_symlink(target: &str, path: &Path) -> Result<(), FetchError> {
    let resolved = path.parent().unwrap_or(Path::new(".")).join(target);
    let made = if resolved.is_dir() {
        std::os::windows::fs::symlink_dir(target, path)
    } else {
        std::os::windows::fs::symlink_file(target, path)
    };
    made.map_err(|e| FetchError::io("creating link", path, e))
}

#[cfg(not(any(unix, windows)))]
fn make_symlink(_target: &str, path: &Path) -> Result<(), FetchError> {
    Err(FetchError::io(
        "creating link",
        path,
        io::Error::new(
            io::ErrorKind::Unsupported,
            "symbolic links are not supported here",
        ),
    ))
}

#[cfg(test)]
mod tests {
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
