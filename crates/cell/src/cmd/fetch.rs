//! `cell fetch`.

use clap::Args;

use crate::cli::Cli;
use crate::exit::Exit;

/// `cell fetch --url URL (--sha256 HEX | --sha256-url URL) --into DIR`.
#[derive(Debug, Args)]
pub struct FetchArgs {}

/// Runs `cell fetch`.
pub fn run(_args: &FetchArgs, _cli: &Cli) -> anyhow::Result<Exit> {
    anyhow::bail!("not written yet")
}
