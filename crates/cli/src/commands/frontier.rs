//! `crawlrank frontier serve --state DIR [--addr 127.0.0.1:7071] [--policy fica]`: serves a
//! persistent, policy-ordered frontier over the URLFrontier gRPC API (crawlrank-frontier-service,
//! docs/frontier-service.md) until Ctrl-C.
//!
//! `crawlrank frontier ranking --addr URL [--crawl ID] [--limit N] [--out FILE]`: exports a
//! running service's ranking (crawlrank's `GetRanking`) as TSV, to stdout or atomically to a
//! file, through the API's client (`crawlrank-urlfrontier`).
//!
//! Loopback only unless `--public`: the API has no authentication, and anyone who reaches
//! it can read, reorder and delete the crawls.

use anyhow::{bail, Context, Result};
use crawlrank_frontier_service::{
    policy_spec, serve_until_ctrl_c, ClusterConfig, FrontierService, Nodes, ServiceConfig,
    DEFAULT_COMMIT_INTERVAL_MS, DEFAULT_MAX_WAITING,
};
// The export is a client's job: it reads through the API's crate, not the service's.
use crawlrank_crawler::{CrawlLimits, HopLimits, UrlLimits, MAX_URLS};
use crawlrank_urlfrontier::{fetch_ranking, write_ranking_tsv};
use std::io::Write;
use std::net::{SocketAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::time::Duration;

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(subcommand)]
    pub command: FrontierCommand,
}

#[derive(clap::Subcommand, Debug)]
pub enum FrontierCommand {
    /// Serve a persistent frontier over the URLFrontier gRPC API (2.6) until Ctrl-C.
    Serve(ServeArgs),
    /// Export a running service's ranking (the policy's order, with scores) as TSV.
    Ranking(RankingArgs),
}

#[derive(clap::Args, Debug)]
pub struct RankingArgs {
    /// The service (`http://127.0.0.1:7071` or `127.0.0.1:7071`).
    #[arg(long, value_name = "URL", default_value = "127.0.0.1:7071")]
    pub addr: String,
    /// The crawl id (default: the default crawl).
    #[arg(long, value_name = "ID", default_value = "")]
    pub crawl: String,
    /// Most URLs (0: the service's default, 1000; at most 1,000,000).
    #[arg(long, value_name = "N", default_value_t = 1000)]
    pub limit: u32,
    /// Write the TSV to this file (atomically) instead of stdout.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Seconds to wait for the whole answer.
    #[arg(long, value_name = "SECS", default_value_t = 60)]
    pub timeout: u64,
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
    /// The group-commit window, in milliseconds: changing calls that arrive within it are
    /// written in one transaction and one fsync, and each is acknowledged only once that
    /// commit is durable (an ack always means the call survives a crash). 0: commit each
    /// call at once (calls arriving during a commit still share the next).
    #[arg(long, value_name = "MS", default_value_t = DEFAULT_COMMIT_INTERVAL_MS)]
    pub commit_interval: u64,
    /// Frontier entries each crawl keeps in memory (16 bytes each) when its policy keeps a
    /// priority queue; the rest spill to sorted runs in STATE/spill, the order unchanged, as
    /// `crawlrank crawl --frontier-hot` does (whose default is 4,194,304: a node is meant for
    /// more URLs). 0 keeps all in memory.
    #[arg(long, value_name = "N", default_value_t = crawlrank_frontier_service::DEFAULT_NODE_FRONTIER_HOT)]
    pub frontier_hot: usize,
    /// Most URLs kept per host (spider-trap cap), as `crawlrank crawl`: an out-link (a URL put
    /// with a parent, or a link of ReportPage) past it is skipped and counted; a URL put without
    /// a parent is a seed and passes this cap and the two per-domain ones. Default 100,000.
    /// These bounds (caps and hops) are fixed when the state is created.
    #[arg(long, value_name = "N")]
    pub max_pages_per_host: Option<u64>,
    /// Most hosts per registrable domain (eTLD+1), as `crawlrank crawl`. Default 10,000.
    #[arg(long, value_name = "N")]
    pub max_hosts_per_domain: Option<u64>,
    /// Most URLs kept per registrable domain, as `crawlrank crawl`. Default 1,000,000.
    #[arg(long, value_name = "N")]
    pub max_urls_per_domain: Option<u64>,
    /// Most URLs per crawl, seeds included. Default and at most 2^32 - 1.
    #[arg(long, value_name = "N")]
    pub max_urls: Option<u64>,
    /// Most link hops from a seed, as `crawlrank crawl`: an out-link further away is skipped and
    /// counted (a URL already known is kept). Default: no limit.
    #[arg(long, value_name = "N")]
    pub max_hops: Option<u32>,
    /// Most redirects followed in a row, as `crawlrank crawl`: a worker reports a redirect's
    /// target as the page's one link, with the outcome `redirect`. Default 20.
    #[arg(long, value_name = "N")]
    pub max_redirects: Option<u32>,
    /// Run as one node of a frontier cluster on this NATS server with JetStream
    /// (`nats://127.0.0.1:4222`; docs/scaling.md). Needs --nodes.
    #[arg(long, value_name = "URL", requires = "nodes")]
    pub nats: Option<String>,
    /// Every node's address (HOST:PORT, comma-separated), --addr being one of them; the same
    /// list on every node. Needs --nats.
    #[arg(long, value_name = "A1,A2,…", value_delimiter = ',', requires = "nats")]
    pub nodes: Vec<String>,
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
        FrontierCommand::Ranking(a) => ranking(a),
    }
}

fn ranking(args: RankingArgs) -> Result<()> {
    let ranked = fetch_ranking(
        &args.addr,
        &args.crawl,
        args.limit,
        Duration::from_secs(args.timeout.max(1)),
    )?;
    match &args.out {
        Some(path) => {
            crawlrank_graph::atomic::write_file(path, |w| write_ranking_tsv(w, &ranked))?;
            eprintln!(
                "frontier: {} ranked URLs written to {}",
                ranked.len(),
                path.display()
            );
        }
        None => {
            let stdout = std::io::stdout();
            let mut out = stdout.lock();
            write_ranking_tsv(&mut out, &ranked)?;
            out.flush().context("cannot write the ranking to stdout")?;
        }
    }
    Ok(())
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
    let d = CrawlLimits::default();
    let asked = args.max_pages_per_host.is_some()
        || args.max_hosts_per_domain.is_some()
        || args.max_urls_per_domain.is_some()
        || args.max_urls.is_some()
        || args.max_hops.is_some()
        || args.max_redirects.is_some();
    let limits = asked.then(|| CrawlLimits {
        urls: UrlLimits {
            max_urls: args.max_urls.unwrap_or(d.urls.max_urls).min(MAX_URLS),
            max_per_host: args.max_pages_per_host.unwrap_or(d.urls.max_per_host),
            max_hosts_per_domain: args
                .max_hosts_per_domain
                .unwrap_or(d.urls.max_hosts_per_domain),
            max_per_domain: args.max_urls_per_domain.unwrap_or(d.urls.max_per_domain),
        },
        hops: HopLimits {
            max_hops: args.max_hops.or(d.hops.max_hops),
            max_redirects: args.max_redirects.unwrap_or(d.hops.max_redirects),
        },
    });
    let config = ServiceConfig {
        policy,
        limits,
        max_waiting: args.max_waiting,
        commit_interval: Duration::from_millis(args.commit_interval),
        frontier_hot: args.frontier_hot,
        ..ServiceConfig::new(&args.state)
    };
    let cluster = args.nats.as_ref().map(|nats| ClusterConfig {
        nats: nats.clone(),
        nodes: args.nodes.clone(),
        me: args.addr.clone(),
    });
    if let Some(c) = &cluster {
        // Checked before the state is opened: a wrong list is the likelier mistake.
        Nodes::new(&c.nodes, &c.me)?;
        anyhow::ensure!(
            addr.port() != 0,
            "a cluster node needs a fixed port in --addr (the other nodes reach it there)"
        );
    }
    let service = FrontierService::open(config)?;
    let policy = service.policy();
    serve_until_ctrl_c(service, addr, cluster.as_ref(), |bound| {
        let role = match &cluster {
            Some(c) => format!(", node of {} on {}", c.nodes.len(), c.nats),
            None => String::new(),
        };
        eprintln!(
            "frontier: URLFrontier API on {bound} (policy {}, state {}{role}); Ctrl-C or SIGTERM stops",
            policy.kind,
            args.state.display()
        );
    })
}
