//! The unpacker on generated hostile archives: whatever the bytes, it never panics, never
//! writes outside its destination, and a refused archive leaves nothing behind.

use cell_fetch::{ArchiveKind, UnpackOptions, unpack};
use cell_testkit::archive::{Entry, tar_gz, zip};
use proptest::prelude::*;

/// Entry names a hostile archive would use.
fn hostile_path() -> impl Strategy<Value = String> {
    let pieces = prop::sample::select(vec![
        "a", "b/", "../", "/", "./", "..", "c.txt", "\\", "x/../",
    ]);
    prop::collection::vec(pieces, 1..6).prop_map(|v| v.concat())
}

fn outside(tmp: &std::path::Path, dest: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![tmp.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.starts_with(dest) {
                continue;
            }
            if p.is_dir() && !p.is_symlink() {
                todo.push(p.clone());
            }
            out.push(p);
        }
    }
    out.sort();
    out
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 200,
        rng_seed: proptest::test_runner::RngSeed::Fixed(0x00ce_11ed),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn random_bytes_never_panic_and_leave_nothing(bytes in prop::collection::vec(any::<u8>(), 0..2048), kind in 0usize..3) {
        let tmp = tempfile::tempdir().unwrap();
        let (name, kind) = [("a.tar.gz", ArchiveKind::TarGz), ("a.tar.xz", ArchiveKind::TarXz), ("a.zip", ArchiveKind::Zip)][kind];
        let archive = tmp.path().join(name);
        std::fs::write(&archive, &bytes).unwrap();
        let dest = tmp.path().join("out");
        if unpack(&archive, kind, &dest, &UnpackOptions::default()).is_err() {
            prop_assert!(!dest.exists());
        }
    }

    #[test]
    fn hostile_names_and_links_never_land_outside(
        name in hostile_path(),
        target in hostile_path(),
        link in any::<bool>(),
        as_zip in any::<bool>(),
    ) {
        let tmp = tempfile::tempdir().unwrap();
        let entries = if link {
            vec![Entry::Symlink(&name, &target), Entry::File("ok.txt", b"x", 0o644)]
        } else {
            vec![Entry::File(&name, b"payload", 0o644)]
        };
        let (file, kind, bytes) = if as_zip {
            ("a.zip", ArchiveKind::Zip, zip(&entries))
        } else {
            ("a.tar.gz", ArchiveKind::TarGz, tar_gz(&entries))
        };
        let archive = tmp.path().join(file);
        std::fs::write(&archive, bytes).unwrap();
        let before = outside(tmp.path(), &tmp.path().join("out"));
        let dest = tmp.path().join("out");
        let ok = unpack(&archive, kind, &dest, &UnpackOptions::default()).is_ok();
        prop_assert_eq!(outside(tmp.path(), &dest), before, "wrote outside for {:?} -> {:?}", name, target);
        if !ok {
            prop_assert!(!dest.exists());
        }
    }
}
