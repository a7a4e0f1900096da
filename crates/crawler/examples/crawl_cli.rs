//! The `crawl`, `export` and `status` subcommands of the `crawlrank` CLI, built from the
//! CLI's own command files, so they can be run (and benchmarked) before the CLI wires them:
//! `cargo run --release -p crawlrank-crawler --example crawl_cli -- crawl --seeds F --state D`.

#[path = "../../cli/src/progress.rs"]
#[allow(dead_code)]
mod progress;

#[path = "../../cli/src/commands/crawl.rs"]
mod crawl;
#[path = "../../cli/src/commands/export.rs"]
mod export;
#[path = "../../cli/src/commands/status.rs"]
mod status;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    Crawl(crawl::Args),
    Export(export::Args),
    Status(status::Args),
}

fn main() -> ExitCode {
    let r = match Cli::parse().command {
        Command::Crawl(a) => crawl::run(a),
        Command::Export(a) => export::run(a),
        Command::Status(a) => status::run(a),
    };
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("crawlrank: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
