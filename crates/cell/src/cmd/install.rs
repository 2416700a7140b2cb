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
    /// Give up on each download (the checksum file, the tarball from one URL) after this many
    /// seconds in all (exit 2, naming the URL; nothing is left in the cache). Default:
    /// `FETCH_TIMEOUT_S` of versions.env.
    #[arg(long, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub timeout: Option<u64>,
}

/// Exit 0 installed or found in the cache, 1 a digest that is not the release's (nothing
/// unpacked), 2 anything else.
pub fn run(args: &InstallArgs, cli: &Cli) -> anyhow::Result<Exit> {
    let mut plan = super::load_plan(cli)?;
    if let Some(s) = args.timeout {
        plan.settings.fetch_timeout_s = s;
    }
    let cell = plan.cell(&args.cell).map_err(anyhow::Error::msg)?;
    let tc = plan
        .toolchain(&args.toolchain)
        .map_err(anyhow::Error::msg)?;
    let cache = cell_run::cache::Cache::from_env()?;
    if cache.is_private() {
        // A tree installed for this process alone would be gone before anything used it.
        anyhow::bail!(
            "cell install has no cache to install into: none of CELL_CACHE, RUNNER_TEMP, XDG_CACHE_HOME or HOME is set; set CELL_CACHE to a directory of your own"
        );
    }
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
    if let Some(why) = &done.replaced {
        eprintln!(
            "{}",
            cell_schema::escape::terminal(&format!(
                "the cached tree of {} ({}) differs from its manifest: {why}; removed and installed again",
                tc.name,
                done.dir.display()
            ))
        );
    }
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
