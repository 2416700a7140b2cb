//! One module per subcommand; each returns the exit it ends with.

pub mod fetch;
pub mod local;
pub mod run;

use anyhow::Context as _;

use crate::cli::{Cli, Command, SchemaKind};
use crate::exit::Exit;

/// Runs the chosen subcommand.
pub fn dispatch(cli: &Cli) -> anyhow::Result<Exit> {
    match &cli.command {
        Command::Fetch(args) => fetch::run(args, cli),
        Command::Run(args) => run::run(args, cli),
        Command::Local(args) => local::run(args, cli),
        Command::Schema(args) => {
            let schema = match args.kind {
                SchemaKind::Results => cell_schema::results_schema(),
                SchemaKind::Facts => cell_schema::facts_schema(),
            };
            print!("{}", cell_schema::to_json(&schema));
            Ok(Exit::Ok)
        }
    }
}

/// Loads and resolves the plan under `--root`.
pub fn load_plan(cli: &Cli) -> anyhow::Result<cell_model::Plan> {
    cell_model::Plan::load(&cli.root)
        .with_context(|| format!("loading the cell definition under {}", cli.root.display()))
}
