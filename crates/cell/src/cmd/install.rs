//! `cell install`: a tarball toolchain for one cell, verified and cached where `cell run`
//! finds it (the workflow's install step; `cell run` does the same on its own).

use std::io::Write as _;

use clap::Args;

use crate::cli::{Cli, Format};
use crate::exit::Exit;

/// `cell install --cell LABEL --toolchain NAME`.
#[derive(Debug, Args)]
pub struct InstallArgs {
    /// Cell label from cell/cell.toml, or `local` (its OS and architecture pick the keys).
    #[arg(long, default_value = cell_model::LOCAL_LABEL)]
    pub cell: String,
    /// A toolchain installed from a tarball.
    #[arg(long)]
    pub toolchain: String,
}

/// Exit 0 installed or found in the cache, 1 a digest that is not the release's (nothing
/// unpacked), 2 anything else.
pub fn run(args: &InstallArgs, cli: &Cli) -> anyhow::Result<Exit> {
    let plan = super::load_plan(cli)?;
    let cell = plan.cell(&args.cell).map_err(anyhow::Error::msg)?;
    let tc = plan
        .toolchain(&args.toolchain)
        .map_err(anyhow::Error::msg)?;
    let cache = cell_run::install::cache_dir();
    let done = match cell_run::install::install(&plan, tc, &cell.os, &cell.arch, &cache) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("Error: {}", cell_schema::escape::terminal(&e.to_string()));
            return Ok(if e.is_integrity() {
                Exit::Gate
            } else {
                Exit::Infra
            });
        }
    };
    if cli.format == Format::Json {
        let v = serde_json::json!({
            "toolchain": tc.name,
            "dir": done.dir.display().to_string(),
            "bin": done.bin.display().to_string(),
            "sha256": done.sha256.to_string(),
            "url": done.url,
            "cached": done.cached,
            "dropped": { "count": done.dropped.count, "first": done.dropped.first },
        });
        print!("{}", cell_schema::to_json(&v));
    } else if !cli.quiet {
        let how = done.source.verification().phrase();
        let from = if done.cached {
            "the cache"
        } else {
            done.url.as_str()
        };
        let _ = writeln!(
            std::io::stderr(),
            "{} {}: sha256 {} ({how}) from {from}, in {}",
            tc.name,
            done.source.version.as_deref().unwrap_or(&done.source.tag),
            done.sha256,
            done.bin.display()
        );
        if !done.dropped.is_empty() {
            let _ = writeln!(
                std::io::stderr(),
                "{} strip {}: {}",
                tc.name,
                done.source.strip,
                cell_schema::escape::terminal(&done.dropped.to_string())
            );
        }
    }
    Ok(Exit::Ok)
}
