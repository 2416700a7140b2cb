//! `cell calibrate`: the A/A noise floor of this machine, per phase and clock.

use std::path::PathBuf;

use anyhow::Context as _;
use cell_report::{Align, Table};
use clap::Args;

use crate::cli::{Cli, Format};
use crate::exit::Exit;
use crate::progress::Progress;

/// `cell calibrate [--rounds N] [--out FILE]`.
#[derive(Debug, Args)]
pub struct CalibrateArgs {
    /// Measured rounds of reference against control.
    // The fewest a calibration file may hold: a file with fewer is one this never wrote.
    #[arg(long, default_value_t = 30, value_parser = clap::value_parser!(u32)
        .range(i64::from(cell_schema::validate::MIN_CALIBRATION_ROUNDS)..))]
    pub rounds: u32,
    /// Where to write the result (default: cell/calibration/<cell-id>.json under --root,
    /// which `cell gate` reads).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Seed of the order (default: from the clock; recorded).
    #[arg(long)]
    pub seed: Option<u64>,
}

/// Runs `cell calibrate`.
pub fn run(args: &CalibrateArgs, cli: &Cli) -> anyhow::Result<Exit> {
    let plan = super::load_plan(cli)?;
    let work = tempfile::tempdir().context("creating a scratch directory")?;
    let seed = args.seed.unwrap_or_else(crate::clock::clock_seed);
    let mut progress = Progress::new(cli, "calibrate");
    let cal = cell_run::calibrate(&plan, work.path(), args.rounds, seed, &mut |e| {
        progress.event(&e);
    })
    .context("cell calibrate")?;
    progress.finish();
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| plan.calibration_path(&cal.cell.id));
    cell_schema::write_atomic(&out, cell_schema::to_json(&cal).as_bytes())
        .with_context(|| format!("writing {}", out.display()))?;
    match cli.format {
        Format::Json => print!("{}", cell_schema::to_json(&cal)),
        Format::Human => {
            println!(
                "A/A noise of {} ({}), {} rounds, reference against its byte-identical copy:",
                cal.cell.id, cal.machine.cpu_model, cal.rounds
            );
            let mut t = Table::new(&[
                ("protocol", Align::Left),
                ("phase", Align::Left),
                ("clock", Align::Left),
                ("control ratio", Align::Right),
                ("CI", Align::Right),
                ("± half-width", Align::Right),
                ("MAD", Align::Right),
            ]);
            let protocols = std::iter::once(("sequential", &cal.phases))
                .chain(cal.duet.as_ref().map(|d| ("duet", d)));
            for (protocol, phases) in protocols {
                for (p, clocks) in phases {
                    for (c, n) in clocks {
                        t.row(vec![
                            protocol.to_owned(),
                            p.to_string(),
                            c.name().to_owned(),
                            format!("{:.4}", n.ratio.median),
                            format!("{:.4}–{:.4}", n.ratio.lo, n.ratio.hi),
                            format!("{:.2}%", n.half_width * 100.0),
                            format!("{:.2}%", n.mad * 100.0),
                        ]);
                    }
                }
            }
            print!("{}", t.text());
            println!(
                "quieter clock: {}; quieter protocol: {}; TOLERANCE ±{} (a change must exceed the half-width to be called)",
                cal.quieter_clock.name(),
                cal.quieter_protocol.map_or(
                    "sequential (one CPU to time on: no duet measured)",
                    cell_schema::ProtocolMode::as_str
                ),
                plan.settings.tolerance
            );
        }
    }
    if !cli.quiet {
        eprintln!("wrote {}", out.display());
    }
    Ok(Exit::Ok)
}
