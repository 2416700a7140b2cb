//! The results.json reader on generated hostile input: it never panics, and a file it accepts
//! never carries an identifier outside the safe set, wherever in the file the name sits.

use cell_schema::ids::is_safe_id;
use cell_schema::{AnyJob, read_results};
use proptest::prelude::*;

fn job_text() -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(
        "../cell-testkit/fixtures/workload/jobs/2026-12-01-local-093937/cell-linux-x86_64-local-gcc-a1/results.json",
    );
    std::fs::read_to_string(path).unwrap()
}

/// Names a hostile job would try: paths, workflow commands, markup, control characters.
fn hostile_name() -> impl Strategy<Value = String> {
    let pieces = prop::sample::select(vec![
        "a",
        "-",
        ".",
        "..",
        "/",
        "\\",
        "\n",
        "\r",
        "::warning::",
        "|",
        "`",
        "<b>",
        "\u{1b}[31m",
        "%",
        " ",
        "\0",
        "é",
        "x_1",
        "+",
    ]);
    prop::collection::vec(pieces, 0..8).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 500,
        rng_seed: proptest::test_runner::RngSeed::Fixed(0x00ce_11ed),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn a_cut_or_flipped_file_never_panics(cut in 0usize..20_000, flip in 0usize..20_000, byte in any::<u8>()) {
        let mut bytes = job_text().into_bytes();
        let n = bytes.len();
        bytes[flip % n] = byte;
        bytes.truncate(cut % (n + 1));
        if let Ok(text) = String::from_utf8(bytes) {
            let _ = read_results(&text);
        }
    }

    #[test]
    fn an_accepted_file_never_carries_an_unsafe_name(name in hostile_name(), field in 0usize..4) {
        let mut v: serde_json::Value = serde_json::from_str(&job_text()).unwrap();
        match field {
            0 => v["toolchain"] = name.clone().into(),
            1 => v["cell"]["id"] = name.clone().into(),
            2 => {
                let rows = v["rows"].as_object_mut().unwrap();
                let (k, row) = rows.iter().next().map(|(k, r)| (k.clone(), r.clone())).unwrap();
                rows.remove(&k);
                rows.insert(name.clone(), row);
            }
            _ => v["cell"]["label"] = name.clone().into(),
        }
        let text = serde_json::to_string(&v).unwrap();
        match read_results(&text).ok().and_then(AnyJob::from_file) {
            Some(job) => {
                prop_assert!(is_safe_id(&name), "accepted {name:?}");
                prop_assert!(is_safe_id(job.cell().id.as_str()));
                prop_assert!(is_safe_id(job.name().as_str()));
            }
            None => prop_assert!(!is_safe_id(&name) || field == 2, "refused the safe {name:?}"),
        }
    }
}
