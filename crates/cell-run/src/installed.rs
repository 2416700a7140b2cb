//! How much disk a toolchain's install takes, measured the way it was installed: the files of
//! a directory (a tarball unpacked into it, a setup action's install root), or dpkg's record
//! of an apt package and of the installed packages it depends on (`clang` itself is a
//! metapackage of a few KiB; the compiler is in what it pulls in). What cannot be measured
//! is recorded with the reason, never as 0.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use cell_model::{Install, Toolchain};
use cell_schema::{Installed, SizeMethod};

use crate::tools::Probed;

/// At most this many packages are summed for one apt install: a dependency walk that goes
/// on past it has reached the base system, which no toolchain pulled in.
pub const MAX_PACKAGES: usize = 500;

/// Install roots that many tools share: a tool found under one was put there by a system
/// package manager, and the whole prefix is not its install. (Checked 2026-12: Debian and
/// Ubuntu, Homebrew on macOS and Linux, the ports tree of `/opt/local`, snap.)
const SHARED_ROOTS: &[&str] = &[
    "/",
    "/usr",
    "/usr/local",
    "/usr/sbin",
    "/usr/libexec",
    "/sbin",
    "/opt",
    "/opt/homebrew",
    "/opt/local",
    "/home/linuxbrew/.linuxbrew",
    "/snap",
];

/// Regular files under a directory and their bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TreeSize {
    /// Bytes of every regular file, each hard-linked file once.
    pub bytes: u64,
    /// Regular files counted.
    pub files: u64,
    /// Directories that could not be read (their files are not counted).
    pub unreadable: u64,
}

/// The bytes of every regular file under `root`. Symbolic links are not followed (a link out
/// of the tree counts nothing, a link inside it nothing twice), and a file hard-linked under
/// several names counts once.
pub fn tree_size(root: &Path) -> std::io::Result<TreeSize> {
    let meta = std::fs::symlink_metadata(root)?;
    if !meta.is_dir() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::NotADirectory,
            "not a directory",
        ));
    }
    let mut size = TreeSize {
        bytes: 0,
        files: 0,
        unreadable: 0,
    };
    let mut seen: BTreeSet<(u64, u64)> = BTreeSet::new();
    let mut dirs = vec![root.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            size.unreadable += 1;
            continue;
        };
        for entry in entries.filter_map(Result::ok) {
            // The entry's own metadata: a symbolic link is a link, never what it points to.
            let Ok(m) = entry.metadata() else { continue };
            if m.is_dir() {
                dirs.push(entry.path());
            } else if m.is_file() && (m.nlink() < 2 || seen.insert((m.dev(), m.ino()))) {
                size.bytes += m.len();
                size.files += 1;
            }
        }
    }
    Ok(size)
}

fn unmeasured(how: String) -> Installed {
    Installed {
        bytes: None,
        method: SizeMethod::None,
        how,
        root: None,
        packages: None,
    }
}

/// The installed size of a directory install: a tarball unpacked into `root`, or a tool's
/// install root.
pub fn installed_dir(root: &Path) -> Installed {
    match tree_size(root) {
        Ok(t) => Installed {
            bytes: Some(t.bytes),
            method: SizeMethod::Tree,
            how: format!(
                "files under {} ({} files{})",
                root.display(),
                t.files,
                if t.unreadable > 0 {
                    format!(", {} unreadable directories not counted", t.unreadable)
                } else {
                    String::new()
                }
            ),
            root: Some(root.display().to_string()),
            packages: None,
        },
        Err(e) => unmeasured(format!("{} could not be measured: {e}", root.display())),
    }
}

/// The installed size of a toolchain, measured as its install kind says: an apt package with
/// its dependencies; else, from the tools the job probed, the apt packages that own their
/// files, or their install roots (a setup action's, a tarball's directory).
pub fn installed(tc: &Toolchain, probed: &Probed) -> Installed {
    if let Install::Apt { package, .. } = &tc.install
        && let Ok(db) = dpkg()
        && db.installed(package)
    {
        return db.measure(&[(package.clone(), None)]);
    }
    // Not installed by apt here (a machine with the tool from elsewhere, or no apt at all):
    // measure where the tool is.
    installed_tools(probed)
}

/// An apt package and every installed package it depends on, recursively.
pub fn installed_apt(package: &str) -> Installed {
    match dpkg() {
        Ok(db) if db.installed(package) => db.measure(&[(package.to_owned(), None)]),
        Ok(_) => unmeasured(format!(
            "apt package {package} is not installed (dpkg lists it as no installed package)"
        )),
        Err(why) => unmeasured(why),
    }
}

fn unowned(path: &Path) -> Installed {
    let resolved = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_owned());
    unmeasured(format!(
        "{} was installed by no install step, and no apt package owns it",
        resolved.display()
    ))
}

/// The apt package that owns a tool's file, and that file. dpkg records a file by the path
/// its package shipped, which a merged /usr may have moved: the path as resolved is asked
/// first, then as found.
fn owner(path: &Path) -> Option<(String, Option<PathBuf>)> {
    let resolved = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_owned());
    [resolved.as_path(), path]
        .into_iter()
        .find_map(|p| owner_of(p).map(|o| (o, Some(p.to_owned()))))
}

/// The packages that own the tools' files, measured together.
fn by_packages(owners: &[(String, Option<PathBuf>)]) -> Installed {
    match dpkg() {
        Ok(db) => db.measure(owners),
        Err(why) => unmeasured(why),
    }
}

/// The package `dpkg -S` names as the owner of `path`.
fn owner_of(path: &Path) -> Option<String> {
    let out = Command::new("dpkg-query")
        .arg("-S")
        .arg(path)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    // `pkg1, pkg2: /path`; diversions are reported on lines of their own.
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let line = text.lines().find(|l| !l.starts_with("diversion "))?;
    let (packages, _) = line.split_once(": ")?;
    let first = packages.split(',').next()?.trim();
    Some(bare_name(first).to_owned()).filter(|p| !p.is_empty())
}

/// The tools the job found: by the apt packages that own their files when dpkg knows them
/// (a package manager put them there, whatever the toolchain declares: a local machine's go
/// from apt, for a toolchain CI installs with setup-go), else by their install roots, each
/// once and none inside another, measured as trees.
fn installed_tools(probed: &Probed) -> Installed {
    let mut owners = Vec::new();
    let mut roots: Vec<PathBuf> = Vec::new();
    let mut unplaced: Option<&Path> = None;
    for path in probed.paths.values() {
        if let Some(o) = owner(path) {
            owners.push(o);
        } else if let Some(root) = install_root(path) {
            roots.push(root);
        } else {
            unplaced.get_or_insert(path);
        }
    }
    if !owners.is_empty() {
        return by_packages(&owners);
    }
    roots.sort();
    roots.dedup();
    let outer: Vec<PathBuf> = roots
        .iter()
        .filter(|r| !roots.iter().any(|o| o != *r && r.starts_with(o)))
        .cloned()
        .collect();
    match outer.as_slice() {
        [] => unplaced.map_or_else(
            || unmeasured("the toolchain has no tool to measure".into()),
            unowned,
        ),
        [one] => installed_dir(one),
        many => {
            let each: Vec<Installed> = many.iter().map(|r| installed_dir(r)).collect();
            if let Some(bad) = each.iter().find(|i| i.bytes.is_none()) {
                return bad.clone();
            }
            let names: Vec<String> = many.iter().map(|r| r.display().to_string()).collect();
            Installed {
                bytes: Some(each.iter().filter_map(|i| i.bytes).sum()),
                method: SizeMethod::Tree,
                how: format!(
                    "files under {} install roots: {}",
                    many.len(),
                    names.join(", ")
                ),
                root: None,
                packages: None,
            }
        }
    }
}

/// The directory a tool's toolchain is installed in: for `<root>/bin/<tool>` the `<root>`,
/// else the tool's own directory. A rustup proxy names the toolchain it runs; a tool in a
/// shared prefix (`/usr/bin`) has none.
pub fn install_root(path: &Path) -> Option<PathBuf> {
    let resolved = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_owned());
    let real = rustup_target(path).unwrap_or(resolved);
    let dir = real.parent()?;
    let root = if dir.file_name().is_some_and(|n| n == "bin") {
        dir.parent()?
    } else {
        dir
    };
    (!is_shared(root)).then(|| root.to_owned())
}

/// What a rustup proxy (`~/.cargo/bin/rustc`, a link or a copy of rustup) runs: the binary in
/// the toolchain (`~/.rustup/toolchains/<name>/bin/rustc`), as `rustup which` names it.
fn rustup_target(path: &Path) -> Option<PathBuf> {
    let rustup = path.parent()?.join("rustup");
    let program = path.file_name()?;
    if program == "rustup" || !rustup.is_file() {
        return None;
    }
    let out = Command::new(&rustup)
        .arg("which")
        .arg(program)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let target = PathBuf::from(text.trim());
    (out.status.success() && target.is_absolute() && target.is_file()).then_some(target)
}

fn is_shared(root: &Path) -> bool {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    SHARED_ROOTS.iter().any(|s| root == Path::new(s))
        || home.is_some_and(|h| root == h || root == h.join(".local") || root == h.join(".cargo"))
}

/// `libfoo:amd64` or `python3:any` → `libfoo`, `python3`.
fn bare_name(name: &str) -> &str {
    name.split(':').next().unwrap_or(name).trim()
}

/// One installed package as dpkg lists it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Package {
    kib: u64,
    /// `Depends` and `Pre-Depends`: each a group of alternatives, any one of which will do.
    depends: Vec<Vec<String>>,
}

/// The installed packages of dpkg's database, and which of them provide a virtual package.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Dpkg {
    packages: BTreeMap<String, Package>,
    provides: BTreeMap<String, Vec<String>>,
}

/// dpkg's database, read once per process: a job measures two toolchains, each of which may
/// ask for it twice.
fn dpkg() -> Result<&'static Dpkg, String> {
    static DB: std::sync::OnceLock<Result<Dpkg, String>> = std::sync::OnceLock::new();
    DB.get_or_init(Dpkg::read).as_ref().map_err(Clone::clone)
}

/// The fields `Dpkg::parse` reads, one line per package.
const DPKG_FORMAT: &str = "${Package}\\t${db:Status-Abbrev}\\t${Installed-Size}\\t${Provides}\\t${Depends}\\t${Pre-Depends}\\n";

/// What a dependency walk summed.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Walk {
    kib: u64,
    packages: usize,
    capped: bool,
}

impl Dpkg {
    /// Every installed package, in one `dpkg-query` call.
    fn read() -> Result<Self, String> {
        let out = Command::new("dpkg-query")
            .args(["-W", "-f", DPKG_FORMAT])
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .output()
            .map_err(|e| format!("dpkg-query could not be run ({e}): no apt package to measure"))?;
        if !out.status.success() {
            return Err(format!(
                "dpkg-query -W failed with {}: no apt package to measure",
                out.status
            ));
        }
        Ok(Self::parse(&String::from_utf8_lossy(&out.stdout)))
    }

    fn parse(text: &str) -> Self {
        let mut db = Self::default();
        for line in text.lines() {
            let f: Vec<&str> = line.split('\t').collect();
            let [name, status, kib, provides, depends, pre] = f[..] else {
                continue;
            };
            // The second letter is the package's state: `i` installed.
            if status.chars().nth(1) != Some('i') {
                continue;
            }
            let name = bare_name(name).to_owned();
            for p in list(provides) {
                for alt in p {
                    db.provides.entry(alt).or_default().push(name.clone());
                }
            }
            let mut all = list(pre);
            all.extend(list(depends));
            db.packages.entry(name).or_insert(Package {
                kib: kib.trim().parse().unwrap_or(0),
                depends: all,
            });
        }
        db
    }

    fn installed(&self, package: &str) -> bool {
        self.packages.contains_key(package)
    }

    /// The installed package that satisfies one of `group`: the first alternative installed
    /// by its own name, else the first that an installed package provides.
    fn satisfy<'a>(&'a self, group: &'a [String]) -> Option<&'a str> {
        group
            .iter()
            .find(|a| self.packages.contains_key(a.as_str()))
            .map(String::as_str)
            .or_else(|| {
                group
                    .iter()
                    .find_map(|a| self.provides.get(a)?.first().map(String::as_str))
            })
    }

    /// `roots` and every installed package they depend on, breadth first, at most `cap`.
    fn walk(&self, roots: &[&str], cap: usize) -> Walk {
        let mut seen: BTreeSet<&str> = BTreeSet::new();
        let mut queue: VecDeque<&str> = roots.iter().copied().collect();
        let mut kib = 0;
        while let Some(name) = queue.pop_front() {
            if seen.contains(name) {
                continue;
            }
            let Some((name, p)) = self.packages.get_key_value(name) else {
                continue;
            };
            if seen.len() == cap {
                return Walk {
                    kib,
                    packages: seen.len(),
                    capped: true,
                };
            }
            seen.insert(name);
            kib += p.kib;
            queue.extend(p.depends.iter().filter_map(|g| self.satisfy(g)));
        }
        Walk {
            kib,
            packages: seen.len(),
            capped: false,
        }
    }

    /// The installed size of `packages` with their dependencies; with each, the tool's file
    /// it was found by, when it was found by a file.
    fn measure(&self, packages: &[(String, Option<PathBuf>)]) -> Installed {
        let names: Vec<&str> = packages.iter().map(|(p, _)| p.as_str()).collect();
        let w = self.walk(&names, MAX_PACKAGES);
        let start: Vec<String> = packages
            .iter()
            .map(|(p, file)| match file {
                Some(f) => format!("{p}, which owns {}", f.display()),
                None => p.clone(),
            })
            .collect();
        Installed {
            bytes: Some(w.kib * 1024),
            method: SizeMethod::Dpkg,
            how: format!(
                "dpkg Installed-Size of {} packages ({}, and the installed packages {} on{})",
                w.packages,
                start.join("; "),
                if packages.len() == 1 {
                    "it depends"
                } else {
                    "they depend"
                },
                if w.capped {
                    format!("; the walk stopped at {MAX_PACKAGES}")
                } else {
                    String::new()
                }
            ),
            root: None,
            packages: Some(u32::try_from(w.packages).unwrap_or(u32::MAX)),
        }
    }
}

/// A `Depends`-style field: `a (>= 1), b | c:any` → `[[a], [b, c]]`.
fn list(field: &str) -> Vec<Vec<String>> {
    field
        .split(',')
        .map(|group| {
            group
                .split('|')
                .map(|alt| bare_name(alt.split('(').next().unwrap_or("")).to_owned())
                .filter(|a| !a.is_empty())
                .collect::<Vec<_>>()
        })
        .filter(|g| !g.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A database as `dpkg-query -W -f DPKG_FORMAT` prints it: a metapackage, its compiler,
    /// a shared library everything needs, an alternative only one side of which is installed,
    /// a virtual package, a cycle and a package removed with its configuration kept.
    const DB: &str = "clang\tii \t20\t\tclang-14 (>= 14~)\t\n\
        clang-14\tii \t346\tc-compiler\tlibc6 (>= 2.34), libllvm14, binutils | binutils-multiarch\t\n\
        libllvm14:amd64\tii \t100000\t\tlibc6, libz:any\t\n\
        libc6:amd64\tii \t13001\t\tlibgcc-s1\t\n\
        libgcc-s1:amd64\tii \t140\t\tlibc6 (>= 2.35)\t\n\
        binutils\tii \t500\t\tlibc6\t\n\
        zlib1g\tii \t160\tlibz\tlibc6\t\n\
        old-thing\trc \t999\t\t\t\n\
        cc-wrapper\tii \t4\t\tc-compiler | gcc\told-thing\n";

    #[test]
    fn a_dependency_walk_sums_every_installed_package_once() {
        let db = Dpkg::parse(DB);
        assert!(db.installed("clang") && !db.installed("old-thing"));
        let w = db.walk(&["clang"], MAX_PACKAGES);
        assert_eq!(
            w,
            Walk {
                kib: 20 + 346 + 100_000 + 13_001 + 140 + 500 + 160,
                packages: 7,
                capped: false,
            }
        );
        // A virtual package is satisfied by what provides it; a removed package counts nothing.
        let w = db.walk(&["cc-wrapper"], MAX_PACKAGES);
        assert_eq!(
            w.packages, 7,
            "cc-wrapper and clang-14's six, not the metapackage"
        );
        assert_eq!(
            db.walk(&["clang", "clang-14", "libc6"], MAX_PACKAGES)
                .packages,
            7,
            "several roots share their dependencies"
        );
        let capped = db.walk(&["clang"], 3);
        assert_eq!((capped.packages, capped.capped), (3, true));
        assert_eq!(capped.kib, 20 + 346 + 13_001);
    }

    #[test]
    fn an_apt_size_says_how_many_packages_it_summed() {
        let i = Dpkg::parse(DB).measure(&[("clang".to_owned(), None)]);
        assert_eq!(i.method, SizeMethod::Dpkg);
        assert_eq!(i.packages, Some(7));
        assert_eq!(i.bytes, Some(114_167 * 1024));
        assert!(
            i.how
                .starts_with("dpkg Installed-Size of 7 packages (clang, "),
            "{}",
            i.how
        );
    }

    #[test]
    fn depends_fields_are_split_into_groups_of_alternatives() {
        assert_eq!(
            list("a (>= 1:2), b | c:any (<< 3) ,, d"),
            vec![
                vec!["a".to_owned()],
                vec!["b".to_owned(), "c".to_owned()],
                vec!["d".to_owned()]
            ]
        );
        assert!(list("").is_empty());
    }

    #[test]
    fn a_tree_counts_regular_files_once_and_follows_no_link() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("tc");
        std::fs::create_dir_all(root.join("bin")).unwrap();
        std::fs::create_dir_all(root.join("lib/deep")).unwrap();
        std::fs::write(root.join("bin/tool"), vec![0u8; 1000]).unwrap();
        std::fs::write(root.join("lib/deep/data"), vec![0u8; 234]).unwrap();
        std::fs::hard_link(root.join("bin/tool"), root.join("bin/tool-alias")).unwrap();
        let outside = tmp.path().join("big");
        std::fs::write(&outside, vec![0u8; 1 << 20]).unwrap();
        std::os::unix::fs::symlink(&outside, root.join("lib/link-out")).unwrap();
        std::os::unix::fs::symlink(tmp.path(), root.join("lib/dir-out")).unwrap();
        std::os::unix::fs::symlink(&root, root.join("lib/loop")).unwrap();
        let t = tree_size(&root).unwrap();
        assert_eq!((t.bytes, t.files, t.unreadable), (1234, 2, 0));
        let i = installed_dir(&root);
        assert_eq!(i.bytes, Some(1234));
        assert_eq!(i.method, SizeMethod::Tree);
        assert_eq!(i.root.as_deref(), Some(root.to_str().unwrap()));
        assert!(i.how.contains("(2 files)"), "{}", i.how);
        let none = installed_dir(&tmp.path().join("missing"));
        assert_eq!((none.bytes, none.method), (None, SizeMethod::None));
        assert!(
            tree_size(&root.join("bin/tool")).is_err(),
            "a file is no tree"
        );
    }

    #[test]
    fn an_install_root_is_above_bin_and_never_a_shared_prefix() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("go");
        std::fs::create_dir_all(root.join("bin")).unwrap();
        std::fs::write(root.join("bin/go"), "").unwrap();
        std::fs::write(root.join("zig"), "").unwrap();
        let root = std::fs::canonicalize(&root).unwrap();
        assert_eq!(install_root(&root.join("bin/go")), Some(root.clone()));
        assert_eq!(install_root(&root.join("zig")), Some(root.clone()));
        assert_eq!(install_root(Path::new("/usr/bin/cc-not-here")), None);
        assert_eq!(install_root(Path::new("/usr/local/bin/x")), None);
        assert_eq!(install_root(Path::new("/bin/x")), None);
    }

    #[test]
    fn an_apt_package_is_measured_by_dpkg_where_there_is_one() {
        let Ok(db) = dpkg() else {
            println!("skipped: dpkg-query is not on this machine");
            return;
        };
        let Some(package) = ["libc6", "dpkg"].into_iter().find(|p| db.installed(p)) else {
            println!("skipped: neither libc6 nor dpkg is installed by dpkg here");
            return;
        };
        let i = installed_apt(package);
        assert!(i.bytes.unwrap() > 0, "{i:?}");
        assert!(i.packages.unwrap() >= 1, "{i:?}");
        let missing = installed_apt("no-such-package-of-cell");
        assert_eq!(missing.bytes, None);
        assert!(missing.how.contains("is not installed"), "{}", missing.how);
    }
}
