//! Bounded capture of what a timed process printed: its output is read back from the scratch
//! file in chunks, compared with the expected answer as it streams, counted and hashed; only
//! a short prefix is ever held, so a program printing a gigabyte costs a few KiB here.

use std::io::{self, Read, Write as _};

use cell_fetch::HashingWriter;
use cell_schema::{Printed, Sha256};

/// How many bytes of an output are kept for the message of a wrong answer or a failed run.
pub const PREFIX: usize = 4096;

/// How much is read at a time.
const CHUNK: usize = 64 * 1024;

/// What a stream held, without holding it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Captured {
    /// Bytes in all.
    pub bytes: u64,
    /// SHA-256 of all of them.
    pub sha256: Sha256,
    /// The first [`PREFIX`] bytes at most.
    pub prefix: Vec<u8>,
    /// The stream was byte for byte the expected answer.
    pub matches: bool,
}

impl Captured {
    /// The whole stream is in [`Captured::prefix`].
    pub fn is_whole(&self) -> bool {
        self.prefix.len() as u64 == self.bytes
    }

    /// Its size and digest, as results record them.
    pub fn printed(&self) -> Printed {
        Printed {
            bytes: self.bytes,
            sha256: self.sha256.clone(),
        }
    }
}

/// Reads `r` to its end in chunks, comparing it with `expected`, counting and hashing it,
/// and keeping its first [`PREFIX`] bytes.
pub fn capture(mut r: impl Read, expected: &[u8]) -> io::Result<Captured> {
    let mut hasher = HashingWriter::new(io::sink(), u64::MAX);
    let mut buf = vec![0u8; CHUNK];
    let mut prefix = Vec::new();
    let mut matches = true;
    let mut pos = 0usize;
    loop {
        let n = match r.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        let chunk = &buf[..n];
        hasher.write_all(chunk)?;
        let keep = PREFIX.saturating_sub(prefix.len()).min(n);
        prefix.extend_from_slice(&chunk[..keep]);
        matches = matches && expected.get(pos..pos + n) == Some(chunk);
        pos = pos.saturating_add(n);
    }
    let (_, sha256, bytes) = hasher.finish()?;
    Ok(Captured {
        bytes,
        sha256,
        prefix,
        matches: matches && pos == expected.len(),
    })
}

/// `"41\n"` for an output kept whole; `1073741824 bytes (sha256 …), starting: "…"` for one
/// that was not.
pub fn describe(c: &Captured) -> String {
    let start = String::from_utf8_lossy(&c.prefix);
    if c.is_whole() {
        format!("{start:?}")
    } else {
        format!(
            "{} bytes (sha256 {}), starting: {start:?}",
            c.bytes, c.sha256
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_expected_answer_matches_and_is_kept_whole() {
        let c = capture(&b"42\n"[..], b"42\n").unwrap();
        assert!(c.matches && c.is_whole());
        assert_eq!(describe(&c), r#""42\n""#);
    }

    #[test]
    fn a_prefix_or_an_extension_of_the_answer_does_not_match() {
        assert!(!capture(&b"42"[..], b"42\n").unwrap().matches);
        assert!(!capture(&b"42\n\n"[..], b"42\n").unwrap().matches);
        assert!(!capture(&b""[..], b"42\n").unwrap().matches);
        assert!(capture(&b""[..], b"").unwrap().matches);
    }

    #[test]
    fn a_long_output_keeps_its_prefix_length_and_digest() {
        let big = vec![b'x'; 3 * CHUNK + 17];
        let c = capture(&big[..], b"42\n").unwrap();
        assert!(!c.matches && !c.is_whole());
        assert_eq!(c.bytes, big.len() as u64);
        assert_eq!(c.prefix.len(), PREFIX);
        let (_, sha, _) = {
            let mut w = HashingWriter::new(io::sink(), u64::MAX);
            w.write_all(&big).unwrap();
            w.finish().unwrap()
        };
        assert_eq!(c.sha256, sha);
        let msg = describe(&c);
        assert!(
            msg.starts_with(&format!(
                "{} bytes (sha256 {sha}), starting: \"xxx",
                big.len()
            )),
            "{msg}"
        );
        assert!(msg.len() < PREFIX + 200);
    }

    #[test]
    fn an_answer_longer_than_a_chunk_is_compared_across_chunks() {
        let want: Vec<u8> = (0..2 * CHUNK + 5).map(|i| (i % 251) as u8).collect();
        assert!(capture(&want[..], &want).unwrap().matches);
        let mut other = want.clone();
        other[CHUNK + 3] ^= 1;
        assert!(!capture(&other[..], &want).unwrap().matches);
    }
}
