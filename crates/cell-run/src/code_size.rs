//! The size of a binary's executable code section, read from its headers: the machine code a
//! compiler emitted, without the symbols, debug info, data and runtime tables its file size
//! also counts. ELF `.text`, Mach-O `__TEXT,__text`, PE `.text`; any other format, or a file
//! its headers do not describe, has none, and that is never an error.

use std::io::Read as _;
use std::path::Path;

use object::{BinaryFormat, Object as _, ObjectSection as _};

/// Binaries past this size are not read: far beyond any row's binary, and it keeps a file
/// that is not a binary from being read whole into memory.
const MAX_BYTES: u64 = 1 << 30;

/// Bytes of the code section of the binary at `path`, or `None` when it cannot be read or
/// its format is not one of the three.
pub fn text_bytes(path: &Path) -> Option<u64> {
    let file = std::fs::File::open(path).ok()?;
    if file.metadata().ok()?.len() > MAX_BYTES {
        return None;
    }
    let mut data = Vec::new();
    file.take(MAX_BYTES).read_to_end(&mut data).ok()?;
    text_bytes_of(&data)
}

/// Bytes of the code section of a binary held in memory; `None` for anything else, and for
/// a truncated file whose code section lies (partly) past its end.
pub fn text_bytes_of(data: &[u8]) -> Option<u64> {
    let file = object::File::parse(data).ok()?;
    let (segment, name) = match file.format() {
        BinaryFormat::Elf | BinaryFormat::Pe => (None, ".text"),
        BinaryFormat::MachO => (Some("__TEXT"), "__text"),
        _ => return None,
    };
    let section = file.sections().find(|s| {
        s.name().ok() == Some(name)
            && (segment.is_none() || s.segment_name().ok().flatten() == segment)
    })?;
    // Headers can claim anything: the section must be bytes of this file. A PE section's
    // virtual size past its raw data is zero fill, not code.
    let (offset, len) = section.file_range()?;
    let end = offset.checked_add(len)?;
    (end <= data.len() as u64).then(|| section.size().min(len))
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};
    use std::process::Command;

    use super::*;

    const HELLO_C: &str = "#include <stdio.h>\nint main(void) { puts(\"hello\"); return 0; }\n";
    const HELLO_ZIG: &str = "pub fn main() void {}\n";

    /// Builds `hello.c` with the first C compiler found; a machine that builds cell has one.
    fn elf(dir: &Path) -> PathBuf {
        std::fs::write(dir.join("hello.c"), HELLO_C).unwrap();
        let out = dir.join("hello");
        let cc = ["cc", "clang", "gcc"]
            .into_iter()
            .find(|cc| {
                Command::new(cc)
                    .arg("-O2")
                    .arg("-o")
                    .arg(&out)
                    .arg(dir.join("hello.c"))
                    .status()
                    .is_ok_and(|s| s.success())
            })
            .expect("a C compiler (cc, clang or gcc) to build the ELF test binary");
        assert!(out.is_file(), "{cc} wrote no binary");
        out
    }

    /// A Zig program cross-built for `target`, its caches in `dir`; `None` (with the reason
    /// printed) when zig is missing or cannot build for it.
    fn zig_cross(dir: &Path, target: &str, file: &str) -> Option<PathBuf> {
        std::fs::write(dir.join("hello.zig"), HELLO_ZIG).unwrap();
        let out = dir.join(file);
        let built = Command::new("zig")
            .args(["build-exe", "-target", target, "-O", "ReleaseSmall"])
            // No compiler-rt: a second instead of several, and the program needs none.
            .arg("-fno-compiler-rt")
            .arg("--cache-dir")
            .arg(dir.join("zig-cache"))
            .arg("--global-cache-dir")
            .arg(dir.join("zig-global-cache"))
            .arg(format!("-femit-bin={}", out.display()))
            .arg(dir.join("hello.zig"))
            .output();
        match built {
            Ok(o) if o.status.success() && out.is_file() => Some(out),
            Ok(o) => {
                println!(
                    "skipped: zig build-exe -target {target} failed: {}",
                    String::from_utf8_lossy(&o.stderr).trim()
                );
                None
            }
            Err(e) => {
                println!("skipped: zig is not runnable here ({e}), so no {target} binary");
                None
            }
        }
    }

    /// What binutils' `size -A` says the section is, when `size` is installed.
    fn size_a(bin: &Path, section: &str) -> Option<u64> {
        let out = Command::new("size").arg("-A").arg(bin).output().ok()?;
        String::from_utf8_lossy(&out.stdout).lines().find_map(|l| {
            let mut f = l.split_whitespace();
            (f.next()? == section).then(|| f.next()?.parse().ok())?
        })
    }

    #[test]
    fn an_elf_binary_has_a_text_section_smaller_than_the_file() {
        let tmp = tempfile::tempdir().unwrap();
        let bin = elf(tmp.path());
        let file = std::fs::metadata(&bin).unwrap().len();
        let text = text_bytes(&bin).expect("an ELF binary has .text");
        assert!(text > 0 && text < file, "text {text}, file {file}");
        match size_a(&bin, ".text") {
            Some(by_binutils) => assert_eq!(text, by_binutils),
            None => println!("not cross-checked: binutils' size is not installed"),
        }
    }

    #[test]
    fn a_mach_o_binary_has_a_text_section() {
        let tmp = tempfile::tempdir().unwrap();
        let Some(bin) = zig_cross(tmp.path(), "aarch64-macos", "hello-macos") else {
            return;
        };
        let data = std::fs::read(&bin).unwrap();
        assert_eq!(&data[..4], &[0xcf, 0xfa, 0xed, 0xfe], "a 64-bit Mach-O");
        let text = text_bytes_of(&data).expect("a Mach-O binary has __TEXT,__text");
        assert!(text > 0 && text < data.len() as u64, "text {text}");
    }

    #[test]
    fn a_pe_binary_has_a_text_section() {
        let tmp = tempfile::tempdir().unwrap();
        let Some(bin) = zig_cross(tmp.path(), "x86_64-windows", "hello.exe") else {
            return;
        };
        let data = std::fs::read(&bin).unwrap();
        assert_eq!(&data[..2], b"MZ", "a PE binary");
        let text = text_bytes_of(&data).expect("a PE binary has .text");
        assert!(text > 0 && text < data.len() as u64, "text {text}");
        if let Some(by_binutils) = size_a(&bin, ".text") {
            assert_eq!(text, by_binutils);
        }
    }

    #[test]
    fn what_is_not_a_binary_has_no_text_section_and_never_panics() {
        assert_eq!(text_bytes_of(b""), None);
        assert_eq!(text_bytes_of(b"#!/bin/sh\necho hi\n"), None);
        assert_eq!(text_bytes_of(b"\x7fELF"), None);
        assert_eq!(text_bytes_of(&[0xcf, 0xfa, 0xed, 0xfe, 0, 0]), None);
        assert_eq!(text_bytes_of(b"MZ\0\0"), None);
        // Bytes from a fixed-seed generator: no header, no section.
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let noise: Vec<u8> = (0..64 * 1024)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x.to_le_bytes()[0]
            })
            .collect();
        assert_eq!(text_bytes_of(&noise), None);
        let tmp = tempfile::tempdir().unwrap();
        assert_eq!(text_bytes(&tmp.path().join("missing")), None);
        assert_eq!(text_bytes(tmp.path()), None, "a directory");
    }

    #[test]
    fn a_truncated_or_damaged_binary_gives_none_or_a_size_within_it() {
        let tmp = tempfile::tempdir().unwrap();
        let data = std::fs::read(elf(tmp.path())).unwrap();
        // ELF keeps its section headers at the end: any cut loses them.
        assert_eq!(text_bytes_of(&data[..data.len() / 2]), None);
        let step = (data.len() / 499).max(1);
        for len in (0..data.len()).step_by(step) {
            if let Some(t) = text_bytes_of(&data[..len]) {
                assert!(t <= len as u64, "cut at {len}: text {t}");
            }
        }
        // Every header byte flipped in turn: a size, if any, still lies within the file.
        for i in 0..data.len().min(256) {
            let mut bad = data.clone();
            bad[i] ^= 0xff;
            if let Some(t) = text_bytes_of(&bad) {
                assert!(t <= bad.len() as u64, "byte {i} flipped: text {t}");
            }
        }
    }
}
