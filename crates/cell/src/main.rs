//! `cell`: reproducible cross-toolchain benchmarks. The binary only parses arguments, calls
//! the libraries and maps outcomes to exit codes: 0 ok, 1 a gate tripped, 2 usage or
//! infrastructure error.

mod cli;
mod clock;
mod cmd;
#[cfg(test)]
mod commit;
mod exit;
mod progress;
mod signals;
mod version;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    if let Err(e) = signals::install() {
        eprintln!("warning: SIGTERM and SIGINT will not remove temporary files: {e}");
    }
    match cmd::dispatch(&cli) {
        Ok(code) => code.into(),
        Err(err) => {
            eprintln!(
                "Error: {}",
                cell_schema::escape::terminal(&format!("{err:#}"))
            );
            exit::Exit::Infra.into()
        }
    }
}
