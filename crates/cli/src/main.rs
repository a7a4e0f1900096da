//! `crawlrank`: the command-line front end.
//!
//! A thin layer: it parses arguments, calls the library crates (`crawlrank-graph`,
//! `crawlrank-rank`, `crawlrank-gen`) and is the one place where errors are reported. Library
//! errors carry their context up (which file, which line, why); `main` prints the chain and
//! exits non-zero.

mod commands;
mod output;
mod progress;
mod provenance;

use clap::{CommandFactory, FromArgMatches, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

/// crawlrank: fetch the most important web pages first.
///
/// Graphs are WebGraph BVGraphs named by basename (`DIR/NAME` for `DIR/NAME.graph`,
/// `.properties`, …) or plain arc lists, which are imported on the fly into the cache.
#[derive(clap::Parser, Debug)]
#[command(name = "crawlrank", version = provenance::VERSION_TEXT, about, long_about)]
struct Cli {
    /// Directory for derived files (.ef indices, transposes, imported arc lists).
    /// Default: $CRAWLRANK_CACHE, else $XDG_CACHE_HOME/crawlrank, else ~/.cache/crawlrank.
    #[arg(long, global = true, value_name = "DIR")]
    cache: Option<PathBuf>,

    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Generate a synthetic web graph, rank it and show the top pages (no downloads).
    Demo(commands::demo::Args),
    /// Import an arc list, URL pairs, an id→URL table with arcs, or GML into a BVGraph.
    Import(commands::import::Args),
    /// Generate a synthetic crawled web (BVGraph + URLs) of any size.
    Generate(commands::generate::Args),
    /// Write per-page impacts for impact-aware ranking: real Wikispeedia traffic, or synthetic views and clicks.
    Impacts(commands::impacts::Args),
    /// Rank a crawl's frontier by impact (RW, RW-EG, baselines) and measure it against the truth.
    FrontierRank(commands::frontier_rank::Args),
    /// Rank the pages of a graph: PageRank, HITS or in-degree.
    Rank(commands::rank::Args),
    /// Print the statistics of a graph.
    Info(commands::info::Args),
    /// Replay crawls of a known graph with each ordering policy and score them.
    Simulate(commands::simulate::Args),
    /// Score a crawl order computed elsewhere with the simulator's measures.
    ScoreOrder(commands::score_order::Args),
    /// Extract a crawl's seed set from the graph's communities (or a baseline set).
    Seeds(commands::seeds::Args),
    /// Evaluate a seed set: BFS by depth against random seeds, core-to-core and average distances.
    SeedsEval(commands::seeds_eval::Args),
    /// Crawl the web politely in a policy's order (resumable).
    Crawl(Box<commands::crawl_args::Args>),
    /// Export a crawl's link graph (BVGraph and/or arc list) and/or its ranking.
    Export(commands::export::Args),
    /// Write a graph as a text arc list (ids or URLs), for NetworkX and friends.
    Convert(commands::convert::Args),
    /// Show where a crawl stands.
    Status(commands::status::Args),
    /// Serve the dashboard (web page, /api/status, Prometheus /metrics) of a crawl state, or of a
    /// frontier service's crawl over all its nodes, until Ctrl-C.
    Dashboard(commands::dashboard::Args),
    /// Serve crawlrank's policy-ordered, persistent frontier over the URLFrontier gRPC API.
    Frontier(commands::frontier::Args),
    /// Serve a graph as a local test web for the crawler (loopback only; --traps adds robustness traps).
    Serve(commands::serve::Args),
}

fn main() -> ExitCode {
    let command = Cli::command();
    let matches = command.clone().get_matches();
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(e) => e.exit(),
    };
    // The libraries report what happens while they run (a retry, a message set aside) as
    // `tracing` events, never by printing: here they become plain lines on stderr, warnings
    // and errors only.
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_max_level(tracing::Level::WARN)
        .without_time()
        .with_target(false)
        .with_level(false)
        .with_ansi(false)
        .init();
    provenance::init(
        &command,
        &matches,
        std::env::args_os()
            .map(|a| a.to_string_lossy().into_owned())
            .collect(),
    );
    let cache = match cli.cache {
        Some(dir) => crawlrank_graph::Cache::new(dir),
        None => crawlrank_graph::Cache::from_env(),
    };
    let result = match cli.command {
        Command::Demo(a) => commands::demo::run(a, &cache),
        Command::Import(a) => commands::import::run(a),
        Command::Generate(a) => commands::generate::run(a),
        Command::Impacts(a) => commands::impacts::run(a, &cache),
        Command::FrontierRank(a) => commands::frontier_rank::run(a, &cache),
        Command::Rank(a) => commands::rank::run(a, &cache),
        Command::Info(a) => commands::info::run(a, &cache),
        Command::Simulate(a) => commands::simulate::run(a, &cache),
        Command::ScoreOrder(a) => commands::score_order::run(a, &cache),
        Command::Serve(a) => commands::serve::run(a, &cache),
        Command::Seeds(a) => commands::seeds::run(a, &cache),
        Command::SeedsEval(a) => commands::seeds_eval::run(a, &cache),
        // The command's own matches: which options were given, not defaulted.
        Command::Crawl(a) => match matches.subcommand_matches("crawl") {
            Some(given) => commands::crawl::run(*a, given),
            None => Err(anyhow::anyhow!("clap parsed `crawl` without its matches")),
        },
        Command::Export(a) => commands::export::run(a),
        Command::Convert(a) => commands::convert::run(a, &cache),
        Command::Status(a) => commands::status::run(a),
        Command::Dashboard(a) => commands::dashboard::run(a),
        Command::Frontier(a) => commands::frontier::run(a),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("crawlrank: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
