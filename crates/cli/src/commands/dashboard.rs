//! `crawlrank dashboard --state DIR`: serves the dashboard of a crawl read from its state
//! directory (finished, stopped or running), refreshed every few seconds, until Ctrl-C; and
//! the helpers `crawl --dashboard ADDR` shares with it (the address, the server's start). The
//! crawl's numbers are put in the dashboard's own view by the crawler's `dashboard_numbers`.
//!
//! `crawlrank dashboard --frontier URL`: the same page for a crawl a frontier service orders
//! (its workers have no dashboard of their own): every node of a cluster counted, with the
//! numbers `crawlrank status --frontier` prints (one function reads them for both,
//! `status::frontier_summary`), and the top of the frontier from `GetRanking`, merged over
//! the nodes as `crawlrank frontier ranking` merges it (`crawlrank_urlfrontier::fetch_ranking`).
//!
//! A running crawl holds its state (the store is opened by one process at a time), so while
//! one runs only its ranking snapshot (`ranking.tsv`, rewritten every K pages) can be read
//! here: the page says so, and the live numbers are on that crawl's own `--dashboard`.

use anyhow::{Context, Result};
use crawlrank_crawler::RANKING_SNAPSHOT;
use crawlrank_dashboard::{
    Access, Counter, CrawlNumbers, DashboardHandle, DashboardState, ScoredUrl, Snapshot,
};
use std::net::{SocketAddr, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// URLs shown in each of the dashboard's tables.
pub const TOP_URLS: usize = 20;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The crawl's state directory.
    #[arg(
        long,
        value_name = "DIR",
        required_unless_present = "frontier",
        conflicts_with = "frontier"
    )]
    pub state: Option<PathBuf>,
    /// A frontier service (`http://127.0.0.1:7071`), or any node of a cluster: its crawl,
    /// every node counted.
    #[arg(long, value_name = "URL")]
    pub frontier: Option<String>,
    /// The crawl id at the frontier (default: the default crawl).
    #[arg(long, value_name = "ID", default_value = "", requires = "frontier")]
    pub crawl: String,
    /// Where to serve the page, /api/status and /metrics (port 0: any free port).
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:7070")]
    pub addr: String,
    /// Allow a non-loopback --addr (the dashboard has no authentication).
    #[arg(long)]
    pub public: bool,
    /// Seconds between two reads of the state.
    #[arg(long, value_name = "SECS", default_value_t = 5)]
    pub refresh: u64,
}

/// The socket address of `addr` (`127.0.0.1:7070`, `[::1]:0`, `localhost:7070`).
pub fn parse_addr(addr: &str) -> Result<SocketAddr> {
    addr.to_socket_addrs()
        .with_context(|| {
            format!("'{addr}' is not an address to serve the dashboard on (e.g. 127.0.0.1:7070)")
        })?
        .next()
        .with_context(|| format!("'{addr}' names no address"))
}

/// Binds `addr` and serves `state` there, printing the page's URL to stderr.
pub fn start(addr: &str, public: bool, state: DashboardState) -> Result<DashboardHandle> {
    let access = if public {
        Access::Public
    } else {
        Access::LoopbackOnly
    };
    let handle = crawlrank_dashboard::serve(parse_addr(addr)?, access, state)?;
    eprintln!("dashboard: {}", handle.url());
    Ok(handle)
}

/// Reads the state into `dash`. `Err` only when nothing at all can be shown (no state, no
/// snapshot): later refreshes report such a failure on the page instead.
fn refresh(dash: &DashboardState, dir: &Path) -> Result<()> {
    let snapshot = dir.join(RANKING_SNAPSHOT);
    match crawlrank_crawler::status(dir) {
        Ok(st) => {
            dash.record(&st.dashboard_numbers());
            dash.set_running(false);
            dash.set_note(None);
        }
        Err(e) if snapshot.is_file() => {
            dash.set_running(true);
            dash.set_note(Some(format!(
                "The state cannot be read now, most likely because a crawl is running on it \
                 ({e:#}). Shown: its ranking snapshot; its live numbers are on that crawl's \
                 own --dashboard."
            )));
        }
        Err(e) => return Err(e),
    }
    if snapshot.is_file() {
        let top = crawlrank_dashboard::read_ranking_top(&snapshot, TOP_URLS)?;
        dash.set_ranking(
            top,
            format!(
                "{}: every discovered URL by the policy's score",
                RANKING_SNAPSHOT
            ),
        );
    }
    Ok(())
}

/// Reads the frontier service at `url` into `dash`: the nodes' counts summed, and the top of
/// the frontier over the nodes. `GetRanking` replays the crawl's frontier on each node, so
/// --refresh should stay at a few seconds on a large crawl.
fn refresh_frontier(dash: &DashboardState, url: &str, crawl: &str) -> Result<()> {
    let summary = super::status::frontier_summary(url, crawl)?;
    let top =
        crawlrank_urlfrontier::fetch_ranking(url, crawl, TOP_URLS as u32, Duration::from_secs(30))?;
    let [left, in_process, fetched, _, queues, _] = summary.total;
    let counters = super::status::FRONTIER_COLUMNS
        .iter()
        .zip(summary.total)
        .map(|(&(name, help), value)| Counter { name, value, help })
        .collect();
    dash.record(&CrawlNumbers {
        snapshot: Snapshot {
            pages_total: fetched,
            frontier: left,
            in_flight: in_process,
            hosts_active: queues,
            ..Snapshot::default()
        },
        counters,
        // A policy without scores (`random`) shows none.
        frontier_top: top
            .into_iter()
            .filter_map(|r| {
                Some(ScoredUrl {
                    score: r.score?,
                    url: r.url,
                })
            })
            .collect(),
        ..CrawlNumbers::default()
    });
    dash.set_running(true);
    let n = summary.nodes.len();
    let nodes = if n == 1 {
        "1 node".to_string()
    } else {
        format!("{n} nodes, counted together")
    };
    dash.set_note(Some(match &summary.cash {
        Some(cash) => format!("{nodes}; {}", cash.line()),
        None => nodes,
    }));
    Ok(())
}

/// What reads the crawl into the dashboard, each refresh.
type Reader = dyn Fn(&DashboardState) -> Result<()>;

pub fn run(args: Args) -> Result<()> {
    let (dash, read): (DashboardState, Box<Reader>) = match (&args.state, &args.frontier) {
        (Some(state), _) => {
            let state = state.clone();
            (
                DashboardState::new(format!("crawl state {}", state.display())),
                Box::new(move |d| refresh(d, &state)),
            )
        }
        (None, Some(url)) => {
            let (url, crawl) = (url.clone(), args.crawl.clone());
            (
                DashboardState::new(format!("frontier {url}")),
                Box::new(move |d| refresh_frontier(d, &url, &crawl)),
            )
        }
        (None, None) => anyhow::bail!("give --state DIR or --frontier URL"),
    };
    // Read once before serving: a wrong --state or --frontier is an error, not an empty page.
    read(&dash)?;
    let server = start(&args.addr, args.public, dash.clone())?;
    let stop = Arc::new(AtomicBool::new(false));
    stop_on_signal(stop.clone())?;
    let every = Duration::from_secs(args.refresh.max(1));
    let mut last = Instant::now();
    while !stop.load(Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(200));
        if last.elapsed() >= every {
            last = Instant::now();
            if let Err(e) = read(&dash) {
                dash.set_note(Some(format!("cannot read the crawl now: {e:#}")));
            }
        }
    }
    server.shutdown()
}

/// Sets `stop` at the first Ctrl-C or SIGTERM (nothing to finish here: the server stops at
/// once).
fn stop_on_signal(stop: Arc<AtomicBool>) -> Result<()> {
    let mut signals = crawlrank_crawler::StopSignals::listen()?;
    std::thread::Builder::new()
        .name("crawlrank-signals".into())
        .spawn(move || {
            if signals.wait() {
                stop.store(true, Ordering::SeqCst);
            }
        })
        .context("cannot start the signal thread")?;
    Ok(())
}
