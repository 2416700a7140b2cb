//! Writing an archive's entries: each name checked to be relative and free of `..`, files
//! created new (never through a link), and symbolic links resolved against each other and
//! created last, so no write goes through a link and no chain of links points outside.

use std::collections::{BTreeMap, VecDeque};
use std::ffi::OsString;
use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::path::{Component, Path, PathBuf};
use std::time::{Duration, SystemTime};

use super::{MAX_LINK_DEPTH, UnpackOptions};
use crate::error::{FetchError, Unsafe};
use crate::strip::{Dropped, Unpacked, stripped};

/// What an entry is, independent of the archive format.
pub(super) enum Kind {
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
pub(super) fn components(name: &str) -> Result<Rel, Unsafe> {
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

pub(super) fn to_path(root: &Path, rel: &[String]) -> PathBuf {
    let mut p = root.to_path_buf();
    p.extend(rel);
    p
}

/// A symbolic link waiting to be created.
pub(super) struct Link {
    pub(super) target: String,
    pub(super) entry: String,
}

/// Why a link target cannot be resolved inside the destination.
pub(super) enum Unresolved {
    Absolute,
    Escapes,
    Loop,
}

/// Resolves `target` lexically from the directory `base`, substituting the archive's own
/// symbolic links met on the way (never the last component: that one is checked on its own).
pub(super) fn resolve(
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
pub(super) struct Extractor<'a> {
    root: &'a Path,
    archive: &'a Path,
    pub(super) opts: &'a UnpackOptions,
    seen: usize,
    written: usize,
    bytes: u64,
    links: BTreeMap<Rel, Link>,
    dropped: Dropped,
}

impl<'a> Extractor<'a> {
    pub(super) fn new(root: &'a Path, archive: &'a Path, opts: &'a UnpackOptions) -> Self {
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

    pub(super) fn corrupt(&self, msg: &dyn ToString) -> FetchError {
        FetchError::Archive {
            path: self.archive.to_owned(),
            msg: msg.to_string(),
        }
    }

    pub(super) fn count(&mut self) -> Result<(), FetchError> {
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

    pub(super) fn entry(
        &mut self,
        name: &str,
        kind: Kind,
        data: &mut dyn Read,
    ) -> Result<(), FetchError> {
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
    pub(super) fn finish(self) -> Result<Unpacked, FetchError> {
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
pub(super) fn resolves_inside(root: &Path, link: &Path) -> bool {
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
pub(super) fn push_front(pending: &mut VecDeque<Option<OsString>>, link: &Path) -> bool {
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

pub(super) fn create_new(path: &Path, executable: bool) -> Result<File, FetchError> {
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
