//! `crawlrank frontier serve --state DIR [--addr 127.0.0.1:7071] [--policy fica]`: serves a
//! persistent, policy-ordered frontier over the URLFrontier gRPC API (crawlrank-frontier-service,
//! docs/frontier-service.md) until Ctrl-C.
//!
//! Loopback only unless `--public`: the API has no authentication, and anyone who reaches
//! it can read, reorder and delete the crawls.

use anyhow::{bail, Context, Result};
use crawlrank_frontier_service::{
    policy_spec, serve_until_ctrl_c, FrontierService, ServiceConfig, DEFAULT_MAX_WAITING,
};
use std::net::{SocketAddr, ToSocketAddrs};
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(subcommand)]
    pub command: FrontierCommand,
}

#[derive(clap::Subcommand, Debug)]
pub enum FrontierCommand {
    /// Serve a persistent frontier over the URLFrontier gRPC API (2.6) until Ctrl-C.
    Serve(ServeArgs),
}

#[derive(clap::Args, Debug)]
pub struct ServeArgs {
    /// The state directory: created on the first run, replayed by the next ones.
    #[arg(long, value_name = "DIR")]
    pub state: PathBuf,
    /// Where to listen for gRPC (port 0: any free port).
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:7071")]
    pub addr: String,
    /// Allow a non-loopback --addr (the API has no authentication).
    #[arg(long)]
    pub public: bool,
    /// The ordering policy of every crawl (bfs, random, backlink, indegree, batch-pagerank,
    /// partial-pagerank, opic, fica, fica-plus, ieca). Default: the state's own, fica for a
    /// new state; a state keeps the policy it was created with.
    #[arg(long)]
    pub policy: Option<String>,
    /// Pages a crawl is expected to reach (IECA's and FICA+'s R; K = ceil(R/72)).
    /// Default 100,000.
    #[arg(long, value_name = "N")]
    pub expected_pages: Option<u64>,
    /// The batch size K (default ceil(expected/72)).
    #[arg(long, value_name = "K")]
    pub batch: Option<u64>,
    /// Seed of the random policy.
    #[arg(long, value_name = "S")]
    pub rng_seed: Option<u64>,
    /// Most pages popped from a crawl's frontier and not yet served (they wait for their
    /// queue) before GetURLs stops popping.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_WAITING)]
    pub max_waiting: usize,
}

fn parse_addr(addr: &str, public: bool) -> Result<SocketAddr> {
    let sock = addr
        .to_socket_addrs()
        .with_context(|| {
            format!("'{addr}' is not an address to serve the frontier on (e.g. 127.0.0.1:7071)")
        })?
        .next()
        .with_context(|| format!("'{addr}' names no address"))?;
    if !public && !sock.ip().is_loopback() {
        bail!(
            "{sock} is not a loopback address; the frontier API has no authentication, so \
             serving it beyond this machine needs --public"
        );
    }
    Ok(sock)
}

pub fn run(args: Args) -> Result<()> {
    match args.command {
        FrontierCommand::Serve(a) => serve(a),
    }
}

fn serve(args: ServeArgs) -> Result<()> {
    let addr = parse_addr(&args.addr, args.public)?;
    let asked = args.policy.is_some()
        || args.expected_pages.is_some()
        || args.batch.is_some()
        || args.rng_seed.is_some();
    let policy = if asked {
        Some(policy_spec(
            args.policy.as_deref().unwrap_or("fica"),
            args.expected_pages,
            args.batch,
            args.rng_seed.unwrap_or(0),
        )?)
    } else {
        None
    };
    let config = ServiceConfig {
        policy,
        max_waiting: args.max_waiting,
        ..ServiceConfig::new(&args.state)
    };
    let service = FrontierService::open(config)?;
    let policy = service.policy();
    serve_until_ctrl_c(service, addr, |bound| {
        eprintln!(
            "frontier: URLFrontier API on {bound} (policy {}, state {}); Ctrl-C stops",
            policy.kind,
            args.state.display()
        );
    })
}
