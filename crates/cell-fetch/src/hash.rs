//! The one way bytes are hashed on their way to disk: a writer that computes the SHA-256 of
//! what passes through, counts it, and stops past a cap. `cell fetch`, the artifact download
//! of `cell collect` and the binaries a job builds all go through it.

use std::io::{self, Write};
use std::path::Path;

use cell_schema::Sha256;
use sha2::Digest as _;

/// What [`HashingWriter`] returns, inside an [`io::Error`], when a write would pass its cap.
#[derive(Debug, thiserror::Error)]
#[error("more than {limit} bytes")]
pub struct CapExceeded {
    /// The cap in bytes.
    pub limit: u64,
}

impl CapExceeded {
    /// The cap, when `e` is this error.
    pub fn of(e: &io::Error) -> Option<u64> {
        e.get_ref()
            .and_then(|inner| inner.downcast_ref::<Self>())
            .map(|c| c.limit)
    }
}

/// Hashes and counts everything written to `inner`; a write that would take the total past
/// `cap` bytes fails with [`CapExceeded`] and writes nothing.
#[derive(Debug)]
pub struct HashingWriter<W> {
    inner: W,
    hasher: sha2::Sha256,
    bytes: u64,
    cap: u64,
}

impl<W: Write> HashingWriter<W> {
    /// A writer into `inner` that accepts at most `cap` bytes.
    pub fn new(inner: W, cap: u64) -> Self {
        Self {
            inner,
            hasher: sha2::Sha256::new(),
            bytes: 0,
            cap,
        }
    }

    /// Bytes written so far.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Flushes `inner` and returns it with the digest and the byte count.
    pub fn finish(mut self) -> io::Result<(W, Sha256, u64)> {
        self.inner.flush()?;
        Ok((
            self.inner,
            Sha256::from_bytes(&self.hasher.finalize()),
            self.bytes,
        ))
    }
}

impl<W: Write> Write for HashingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.bytes.saturating_add(buf.len() as u64) > self.cap {
            return Err(io::Error::other(CapExceeded { limit: self.cap }));
        }
        let n = self.inner.write(buf)?;
        self.hasher.update(&buf[..n]);
        self.bytes += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// SHA-256 of bytes already in memory (a file read once, so what is hashed is what is parsed).
pub fn hash_bytes(bytes: &[u8]) -> Sha256 {
    let mut w = HashingWriter::new(io::sink(), u64::MAX);
    w.write_all(bytes)
        .expect("a sink without a cap takes every byte");
    w.finish().expect("a sink always flushes").1
}

/// Size and SHA-256 of a file.
pub fn hash_file(path: &Path) -> io::Result<(u64, Sha256)> {
    let mut f = std::fs::File::open(path)?;
    let mut w = HashingWriter::new(io::sink(), u64::MAX);
    io::copy(&mut f, &mut w)?;
    let (_, sha, bytes) = w.finish()?;
    Ok((bytes, sha))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_counts_and_stops_at_the_cap() {
        let mut w = HashingWriter::new(Vec::new(), 5);
        w.write_all(b"abc").unwrap();
        let err = w.write_all(b"def").unwrap_err();
        assert_eq!(CapExceeded::of(&err), Some(5));
        assert_eq!(w.bytes(), 3, "the refused write wrote nothing");
        let (bytes, sha, n) = w.finish().unwrap();
        assert_eq!((bytes.as_slice(), n), (&b"abc"[..], 3));
        // sha256("abc")
        assert_eq!(
            sha.as_str(),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(hash_bytes(b"abc"), sha);
    }
}
