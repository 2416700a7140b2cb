//! `validate::calibration`: a file `cell calibrate` wrote passes, and each value it cannot
//! write is named by its path in the file (issue 24: a negative half-width silenced the
//! gate's noise notice, `1e308` printed `±inf%`, another cell's file spoke for this machine).

use std::path::Path;

use cell_schema::{Calibration, CellId, Clock, validate};

/// A calibration `cell calibrate --rounds 30` wrote on a two-CPU VM (both protocols).
fn recorded() -> Calibration {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../cell-testkit/fixtures/calibration/linux-x86_64-local.json");
    cell_schema::read::from_str_unique(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn problems(cal: &Calibration) -> Vec<String> {
    validate::calibration(cal, &CellId::new("linux-x86_64-local"))
        .iter()
        .map(ToString::to_string)
        .collect()
}

fn mix_cpu(cal: &mut Calibration) -> &mut cell_schema::Noise {
    cal.phases
        .get_mut("mix")
        .unwrap()
        .get_mut(&Clock::Cpu)
        .unwrap()
}

#[test]
fn a_calibration_cell_calibrate_wrote_holds_no_impossible_value() {
    assert_eq!(problems(&recorded()), Vec::<String>::new());
}

#[test]
fn each_value_cell_calibrate_cannot_write_is_named_by_its_path_in_the_file() {
    type Edit = fn(&mut Calibration);
    let cases: [(&str, Edit, &str); 12] = [
        (
            "a negative half-width",
            |c| mix_cpu(c).half_width = -0.1,
            "phases.mix.cpu.half_width is -0.1: negative or not finite",
        ),
        (
            "an absurd half-width",
            |c| mix_cpu(c).half_width = 1e308,
            "phases.mix.cpu.half_width is 1e308, beyond 10 (±1000%)",
        ),
        (
            "a negative MAD",
            |c| mix_cpu(c).mad = -1.0,
            "phases.mix.cpu.mad is -1: negative or not finite",
        ),
        (
            "lo above hi",
            |c| {
                let r = &mut mix_cpu(c).ratio;
                (r.lo, r.hi) = (r.hi + 0.1, r.lo);
            },
            "phases.mix.cpu.ratio is 0.9998 with interval",
        ),
        (
            "a ratio of 0",
            |c| mix_cpu(c).ratio.median = 0.0,
            "phases.mix.cpu.ratio is 0 (impossible)",
        ),
        (
            "a level of 7",
            |c| mix_cpu(c).ratio.level = 7.0,
            "phases.mix.cpu.ratio.level is 7: a coverage is from 0 to 1",
        ),
        (
            "more ratios than rounds",
            |c| mix_cpu(c).ratio.n = 31,
            "phases.mix.cpu.ratio.n is 31: none, or more ratios than the file's 30 rounds",
        ),
        (
            "a duet figure",
            |c| {
                let duet = c.duet.as_mut().unwrap();
                duet.get_mut("fib")
                    .unwrap()
                    .get_mut(&Clock::Wall)
                    .unwrap()
                    .half_width = -0.5;
            },
            "duet.fib.wall.half_width is -0.5",
        ),
        (
            "another cell's id",
            |c| c.cell.id = CellId::new("macos-aarch64-local"),
            "cell.id is `macos-aarch64-local`, not the cell `linux-x86_64-local` the file is named for",
        ),
        (
            "no rounds",
            |c| c.rounds = 0,
            "rounds is 0: cell calibrate measures at least 2",
        ),
        (
            "a day the calendar lacks",
            |c| c.measured_at = "2026-02-31T20:29:33Z".into(),
            "measured_at `2026-02-31T20:29:33Z` is no time",
        ),
        (
            "a duet protocol never measured",
            |c| {
                c.duet = None;
                c.quieter_protocol = Some(cell_schema::ProtocolMode::Duet);
            },
            "quieter_protocol is duet, but the file holds no duet noise",
        ),
    ];
    for (what, edit, needle) in cases {
        let mut cal = recorded();
        edit(&mut cal);
        let got = problems(&cal);
        assert!(
            got.iter().any(|p| p.contains(needle)),
            "{what}: no `{needle}` in {got:#?}"
        );
    }
}
