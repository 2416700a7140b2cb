//! What `--strip-components` leaves of an entry, counted as GNU tar counts, and the files and
//! links it leaves out, which an unpack reports instead of dropping unsaid.

use super::unpack::Rel;

/// How many names [`Dropped`] keeps.
const DROPPED_NAMED: usize = 5;

/// The entries `strip_components` left out that are not directories: files and links at a
/// level above the one stripped to (a `README` beside a tarball's top directory).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Dropped {
    /// How many.
    pub count: usize,
    /// The first few (at most five), named as the archive names them.
    pub first: Vec<String>,
}

impl Dropped {
    pub(crate) fn push(&mut self, name: &str) {
        self.count += 1;
        if self.first.len() < DROPPED_NAMED {
            self.first.push(name.to_owned());
        }
    }

    /// Nothing was left out.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }
}

impl std::fmt::Display for Dropped {
    /// ``2 entries above the stripped level were left out: `./c`, `./d` ``, the names cut
    /// at five with `…`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (n, verb) = if self.count == 1 {
            ("entry", "was")
        } else {
            ("entries", "were")
        };
        write!(
            f,
            "{} {n} above the stripped level {verb} left out: ",
            self.count
        )?;
        let names: Vec<String> = self.first.iter().map(|e| format!("`{e}`")).collect();
        f.write_str(&names.join(", "))?;
        if self.count > self.first.len() {
            f.write_str(", …")?;
        }
        Ok(())
    }
}

/// What an unpack did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Unpacked {
    /// Entries unpacked: files, directories and links (those `strip_components` skipped do
    /// not count).
    pub entries: usize,
    /// Files and links `strip_components` left out.
    pub dropped: Dropped,
}

/// What `strip` leading components leave of `name`, counted as GNU tar counts them: every
/// `/`-separated part, `.` included, a run of `/` being one separator; `None` when nothing
/// is left. (`tar --strip-components=1` of `./a/b` and `./c` writes `a/b` and `c`.) The
/// `.` parts left are dropped, as the unpack's own reading of names drops them; `name` has
/// passed that reading, so it holds no `..` and is not absolute.
pub(crate) fn stripped(name: &str, strip: usize) -> Option<Rel> {
    let parts: Vec<&str> = name.split('/').filter(|p| !p.is_empty()).collect();
    let rel: Rel = parts
        .get(strip..)?
        .iter()
        .filter(|p| **p != ".")
        .map(|p| (*p).to_owned())
        .collect();
    (!rel.is_empty()).then_some(rel)
}
