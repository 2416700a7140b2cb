//! Archives built in memory: tar (plain, gzip, xz) and zip, of files with modes, directories,
//! symlinks, hard links and fifos. Tar names are written into the raw header as given, so
//! hostile archives (`../evil`, `/abs/path`, links out of the tree) can be built as easily as
//! good ones; the `tar` crate's own path checks would refuse them.

use std::io::Write as _;

/// One archive entry; names are `/`-separated and taken as given.
#[derive(Clone, Copy, Debug)]
pub enum Entry<'a> {
    /// A regular file: name, contents, mode.
    File(&'a str, &'a [u8], u32),
    /// A directory (mode 0755); by convention its name ends in `/`.
    Dir(&'a str),
    /// A symbolic link: name, target.
    Symlink(&'a str, &'a str),
    /// A hard link: name, the archive entry it links to.
    HardLink(&'a str, &'a str),
    /// A named pipe (tar only).
    Fifo(&'a str),
}

/// A modification time for every entry, so that an archive's bytes do not depend on the clock.
const MTIME: u64 = 1_700_000_000;

/// A plain tar stream of `entries` with GNU headers. Panics on a name over 100 bytes.
pub fn tar(entries: &[Entry<'_>]) -> Vec<u8> {
    let mut builder = tar::Builder::new(Vec::new());
    for entry in entries {
        let mut header = tar::Header::new_gnu();
        header.set_mtime(MTIME);
        let (name, data, kind, mode): (&str, &[u8], _, u32) = match *entry {
            Entry::File(name, data, mode) => (name, data, tar::EntryType::Regular, mode),
            Entry::Dir(name) => (name, &[], tar::EntryType::Directory, 0o755),
            Entry::Symlink(name, target) => {
                header.set_link_name(target).unwrap();
                (name, &[], tar::EntryType::Symlink, 0o777)
            }
            Entry::HardLink(name, target) => {
                header.set_link_name(target).unwrap();
                (name, &[], tar::EntryType::Link, 0o644)
            }
            Entry::Fifo(name) => (name, &[], tar::EntryType::Fifo, 0o644),
        };
        header.set_entry_type(kind);
        header.set_mode(mode);
        header.set_size(data.len() as u64);
        // Straight into the header's name field: `set_path` would refuse `..` and absolute
        // names, which is what the refusal tests need to send.
        let slot = &mut header.as_gnu_mut().unwrap().name;
        assert!(name.len() <= slot.len(), "tar name over 100 bytes: {name}");
        slot.fill(0);
        slot[..name.len()].copy_from_slice(name.as_bytes());
        header.set_cksum();
        builder.append(&header, data).unwrap();
    }
    builder.into_inner().unwrap()
}

/// [`tar`], gzipped.
pub fn tar_gz(entries: &[Entry<'_>]) -> Vec<u8> {
    gz(&tar(entries))
}

/// [`tar`], xz-compressed.
pub fn tar_xz(entries: &[Entry<'_>]) -> Vec<u8> {
    xz(&tar(entries))
}

/// `bytes`, gzipped.
pub fn gz(bytes: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(bytes).unwrap();
    enc.finish().unwrap()
}

/// `bytes`, xz-compressed.
pub fn xz(bytes: &[u8]) -> Vec<u8> {
    let mut enc = xz2::write::XzEncoder::new(Vec::new(), 1);
    enc.write_all(bytes).unwrap();
    enc.finish().unwrap()
}

/// A zip of `entries`, deflated, with Unix modes. Zip has no hard links or fifos: either
/// panics.
pub fn zip(entries: &[Entry<'_>]) -> Vec<u8> {
    use zip::write::SimpleFileOptions;
    let options = SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for entry in entries {
        match *entry {
            Entry::File(name, data, mode) => {
                zip.start_file(name, options.unix_permissions(mode))
                    .unwrap();
                zip.write_all(data).unwrap();
            }
            Entry::Dir(name) => zip.add_directory(name, options).unwrap(),
            Entry::Symlink(name, target) => zip.add_symlink(name, target, options).unwrap(),
            Entry::HardLink(name, _) | Entry::Fifo(name) => {
                panic!("zip cannot hold `{name}`: no hard links or fifos")
            }
        }
    }
    zip.finish().unwrap().into_inner()
}

#[cfg(test)]
mod tests {
    use std::io::Read as _;

    use tar::EntryType as T;

    use super::*;

    #[test]
    fn tar_keeps_names_kinds_modes_and_links_as_given() {
        let bytes = tar_xz(&[
            Entry::Dir("d/"),
            Entry::File("d/x", b"hi", 0o755),
            Entry::File("../evil", b"", 0o644),
            Entry::File("/abs/path", b"", 0o600),
            Entry::Symlink("l", "../../out"),
            Entry::HardLink("h", "d/x"),
            Entry::Fifo("p"),
        ]);
        let mut raw = Vec::new();
        xz2::read::XzDecoder::new(&bytes[..])
            .read_to_end(&mut raw)
            .unwrap();
        let mut archive = tar::Archive::new(&raw[..]);
        let seen: Vec<(String, tar::EntryType, u32, Option<String>)> = archive
            .entries()
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                let h = e.header();
                (
                    String::from_utf8(h.path_bytes().into_owned()).unwrap(),
                    h.entry_type(),
                    h.mode().unwrap(),
                    h.link_name()
                        .unwrap()
                        .map(|l| l.to_string_lossy().into_owned()),
                )
            })
            .collect();
        let want = [
            ("d/", T::Directory, 0o755, None),
            ("d/x", T::Regular, 0o755, None),
            ("../evil", T::Regular, 0o644, None),
            ("/abs/path", T::Regular, 0o600, None),
            ("l", T::Symlink, 0o777, Some("../../out")),
            ("h", T::Link, 0o644, Some("d/x")),
            ("p", T::Fifo, 0o644, None),
        ];
        let want: Vec<_> = want
            .into_iter()
            .map(|(n, t, m, l)| (n.to_owned(), t, m, l.map(str::to_owned)))
            .collect();
        assert_eq!(seen, want);
        // gzip holds the same stream.
        let mut gunzipped = Vec::new();
        flate2::read::GzDecoder::new(&tar_gz(&[Entry::Dir("d/")])[..])
            .read_to_end(&mut gunzipped)
            .unwrap();
        assert_eq!(gunzipped, tar(&[Entry::Dir("d/")]));
    }

    #[test]
    fn zip_keeps_modes_directories_and_symlinks() {
        let bytes = zip(&[
            Entry::Dir("a/"),
            Entry::File("a/run", b"#!/bin/sh\n", 0o755),
            Entry::File("../evil", b"x", 0o644),
            Entry::Symlink("a/link", "run"),
        ]);
        let mut z = zip::ZipArchive::new(std::io::Cursor::new(bytes)).unwrap();
        let mut seen = Vec::new();
        for i in 0..z.len() {
            let mut f = z.by_index(i).unwrap();
            let mut data = String::new();
            f.read_to_string(&mut data).unwrap();
            seen.push((
                f.name().to_owned(),
                f.unix_mode().unwrap() & 0o170_777,
                data,
            ));
        }
        let want = [
            ("a/", 0o040_755, ""),
            ("a/run", 0o100_755, "#!/bin/sh\n"),
            ("../evil", 0o100_644, "x"),
            ("a/link", 0o120_777, "run"),
        ];
        let want: Vec<_> = want
            .into_iter()
            .map(|(n, m, d)| (n.to_owned(), m, d.to_owned()))
            .collect();
        assert_eq!(seen, want);
    }

    #[test]
    #[should_panic(expected = "no hard links or fifos")]
    fn zip_refuses_a_hard_link() {
        zip(&[Entry::HardLink("h", "x")]);
    }
}
