//! A crawl worker: `crawlrank crawl --frontier URL`. The frontier — which URLs exist, which
//! come next, which host may be asked when — lives in a URLFrontier service (crawlrank's own
//! `crawlrank frontier serve`, policy-ordered and persistent, or any other URLFrontier
//! server); the worker does the rest locally, with the crawler's own code
//! (`crawlrank_fetch::fetcher`): robots.txt, the HTTP requests, link extraction, WARC.
//!
//! Why the pieces are where they are:
//! - **Politeness across workers** is the service's: the worker leases one URL per queue
//!   (`max_urls_per_queue = 1`; queues are keyed by host), so while a worker holds a host's
//!   URL no other worker gets one of that host, and the queue's delay (`SetDelay`, from
//!   `--delay` and robots.txt's Crawl-delay) runs between two answers of a queue. A host's
//!   robots.txt is fetched under the lease of one of its URLs, so it too is one request at a
//!   time per host.
//! - **Speed**: a `GetURLs` or a report waits for the service's durable commit, often longer
//!   than a fetch, so the worker never waits for one between two fetches: it keeps the next
//!   URLs leased, ready for a fetch slot (`concurrency` of them) as soon as one is free, and
//!   a fetched page's slot is free while its report is under way (the host's URL stays
//!   leased until the report is applied, so the host still waits for it). Ended fetches are
//!   taken in all at once, never one per `GetURLs` round trip.
//! - **No page fetched twice**: a leased URL is served to no one else until its lease ends;
//!   the worker reports every URL it leased (fetched, or given up) as done for good, so it is
//!   never served again. A worker killed with URLs leased loses nothing: their leases run out
//!   (`--lease`, seconds) and the service serves them again.
//! - **The policy's order**: each report gives the service the page with its out-links
//!   (`ReportPage`, or plain `PutURLs` elsewhere, see [`FrontierClient`], from
//!   `crawlrank-urlfrontier`, the API's crate), and in its metadata its outcome, HTTP status
//!   and the marks `crawl` records ([`NOINDEX_KEY`], [`CANONICAL_KEY`]); with one worker at
//!   concurrency 1 the fetches follow the service's policy exactly as `crawlrank crawl` and
//!   `crawlrank simulate` do (tested against the simulator).
//! - **When to stop**: when the crawl has no URL left that is not done (`GetStats` size 0;
//!   a worker that neither put seeds nor leased a URL yet takes an empty crawl for one not
//!   started, and waits as when idle), or when nothing was served for `idle_exit` while no URL was leased by anyone (what is
//!   left is blocked, limited or waits on a long delay), or at `--max-pages` fetched pages
//!   of this worker, or on a stop request (the fetches in flight are finished and reported
//!   first; the URLs leased ahead and not started are left to their leases' end).
//!
//! - **A host that refuses** (`429`, `503`) holds its queue for every worker, as the engine
//!   holds the host: the wait is the engine's (`Retry-After` in either form, else the host's
//!   doubling back-off, `crawlrank_fetch::backoff`), and the worker tells the service
//!   `BlockQueueUntil` its end, so no worker is served the host's URLs before then. The
//!   refused URL is tried again after the wait under its lease when the lease outlasts the
//!   wait and a fetch; else it goes back to the frontier as a retry (below), due when the
//!   hold ends, its refusals counted in its attempts. After `max_retries` refusals and
//!   failures, or a `Retry-After` beyond
//!   `max_retry_after`, the URL is reported as it was answered. Each other answer of the host
//!   halves its back-off, and while some is left its queue is held that long after the
//!   answer, as the engine spaces the requests of a host that backs off.
//!
//! - **Every node**: the worker asks the service for its nodes (`ListNodes`) and leases
//!   from each of them (one `GetURLs` per node, at once, the free slots shared among
//!   them); a page is reported to the node that served it. A service that lists one node
//!   or none is reached at the address given.
//! - **A frontier that restarts**: a call the frontier cannot answer (connection refused
//!   or reset, timed out) is tried again with a doubling pause for up to `frontier_retry`;
//!   meanwhile the fetches in flight finish and wait to be reported, and the leases the
//!   service recorded are still this worker's when it is back (they are in its state).
//!   Only when the frontier stays away longer does the worker stop with an error; its
//!   unreported URLs then come back when their leases run out.
//!
//! The caps on hosts and the limits on hops are the service's: it admits the links a worker
//! reports within the crawler's bounds (`crawlrank frontier serve --max-pages-per-host`,
//! `--max-redirects`, …), a redirect being reported as the page's one link with the outcome
//! `redirect`.
//!
//! - **Sitemaps**: the seed hosts' sitemaps are read as the engine reads them, under the
//!   lease of a URL of the host, before it (`read_sitemaps`); their entries are put into
//!   the crawl marked as a sitemap's, which the service admits within the caps on hosts.
//!
//! - **Retries**: a page whose fetch failed in a way a retry may mend (a 5xx other than 503,
//!   a timeout, a connection failure) goes back to the frontier, reported with the outcome
//!   `retry`, its count of attempts and a refetch date at the end of its back-off (doubling
//!   from `retry_backoff`); crawlrank's service keeps it in the policy's order and serves it
//!   again from that date, to this worker or another, in this run or a later one, its host
//!   serving its other URLs meanwhile — the engine's retry schedule, kept in the frontier.
//!
//! What a worker keeps in its state directory (`--state`): its WARC files, the robots.txt
//! answers it fetched (`STATE/robots/`) and its hosts' back-offs after refusals
//! (`STATE/backoffs/`), which its next runs and other workers given the same directory use,
//! as `crawlrank crawl` uses those of its store (the holds the back-offs set are the
//! service's too, through `BlockQueueUntil`).
//! docs/frontier-service.md, "Workers", has the details.

#![warn(missing_docs)]

mod archive;

use anyhow::{Context, Result};
use archive::Archive;
use crawlrank_fetch::fds::FD_RETRY;
use crawlrank_fetch::fetch::SitemapStep;
use crawlrank_fetch::robots::{self, StoredRobots};
use crawlrank_fetch::robots_table::{AfterFetch, HostRobots, RobotsTable};
use crawlrank_fetch::sitemap::SitemapQueue;
use crawlrank_fetch::TransportFailure;
use crawlrank_fetch::{
    normalize, origin_key, AddressGuard, Backoffs, FetchConfig, Fetcher, HostConnection, HostPause,
    Outcome, PageNext, Refusal, Retries, RetryAfter, RobotsRules, Scope, ScopeConfig, Stats,
    WarcPosition,
};
use crawlrank_urlfrontier::proto::UrlInfo;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};
use tokio::task::JoinSet;

pub use crawlrank_urlfrontier::{CrawlCounts, FrontierClient};

use crawlrank_urlfrontier::{ATTEMPTS_KEY, RETRY_OUTCOME};
/// The metadata keys a worker's report gives a page's outcome ([`Outcome::name`]), HTTP
/// status, `noindex` and canonical URL in: the API crate's, which the service reads too.
pub use crawlrank_urlfrontier::{CANONICAL_KEY, HTTP_STATUS_KEY, NOINDEX_KEY, OUTCOME_KEY};
/// The first pause between two `GetURLs` that found nothing; it doubles up to
/// [`MAX_POLL`], and is back at this as soon as something was served.
pub const MIN_POLL: Duration = Duration::from_millis(20);
/// The longest pause between two `GetURLs` that found nothing.
pub const MAX_POLL: Duration = Duration::from_secs(1);

/// Everything a worker is told.
#[derive(Debug, Clone)]
pub struct WorkerConfig {
    /// The frontier service, `http://HOST:PORT`.
    pub frontier: String,
    /// The crawl id within the service (empty: its default crawl).
    pub crawl_id: String,
    /// URLs put into the crawl at start (normalised as the crawler does; known ones are
    /// ignored by the service). Their hosts may have non-public addresses.
    pub seeds: Vec<String>,
    /// Fetches at once. Up to four times as many URLs are leased at once (waiting for a
    /// fetch slot, fetched, or being reported); at concurrency 1, one.
    pub concurrency: usize,
    /// If set, the crawl's queue delay (`SetDelay` on every queue without one of its own),
    /// in whole seconds.
    pub delay_secs: Option<u32>,
    /// Cap on robots.txt's Crawl-delay, which becomes its host queue's delay when longer.
    pub max_crawl_delay: Duration,
    /// Seconds a leased URL stays this worker's before the service may serve it again.
    pub lease_secs: u32,
    /// Stop after this many fetched pages (an HTTP answer, any status) of this worker.
    pub max_pages: Option<u64>,
    /// Further tries of a page or robots.txt after a 5xx, a timeout or a connection failure.
    pub max_retries: u32,
    /// The first retry's pause; doubled at each further try.
    pub retry_backoff: Duration,
    /// A `Retry-After` longer than this gives the URL up (the host's queue is held this long).
    pub max_retry_after: Duration,
    /// Stop when nothing was served for this long while nothing was leased by anyone.
    pub idle_exit: Duration,
    /// The WARC files go to a new directory `warc/worker-<time>-<pid>-<n>` in this one, if set
    /// (and `fetch.warc`).
    pub state_dir: Option<PathBuf>,
    /// WARC files rotate past this size.
    pub warc_max_size: u64,
    /// How each request is made (the crawler's settings; `sitemaps`: read the seed hosts'
    /// sitemaps).
    pub fetch: FetchConfig,
    /// Which out-links are reported (`--scope`, `--include`, `--exclude`; `domain` and `host`
    /// scopes need seeds).
    pub scope: ScopeConfig,
    /// Tokio worker threads.
    pub io_threads: usize,
    /// Report pages with plain `PutURLs` (out-links as discovered URLs with `url.path`, then
    /// the page's known update) even to a server that has crawlrank's `ReportPage`.
    pub plain_api: bool,
    /// How long a frontier that cannot be reached (restarting, say) is asked again, with a
    /// doubling pause, before the worker gives up with an error.
    pub frontier_retry: Duration,
}

/// The default [`WorkerConfig::frontier_retry`], in seconds.
pub const DEFAULT_FRONTIER_RETRY_SECS: u64 = 60;
/// The first pause before a call the frontier could not answer is tried again; it doubles
/// up to [`MAX_RETRY_PAUSE`].
const FIRST_RETRY_PAUSE: Duration = Duration::from_millis(100);
/// The longest pause between two tries of a call the frontier could not answer.
const MAX_RETRY_PAUSE: Duration = Duration::from_secs(2);

impl WorkerConfig {
    /// How a failed or refused request is tried again (the engine's rule).
    pub fn retries(&self) -> Retries {
        Retries {
            max_retries: self.max_retries,
            retry_backoff: self.retry_backoff,
        }
    }
}

impl Default for WorkerConfig {
    fn default() -> Self {
        Self {
            frontier: "http://127.0.0.1:7071".into(),
            crawl_id: String::new(),
            seeds: Vec::new(),
            concurrency: 16,
            delay_secs: None,
            max_crawl_delay: Duration::from_secs(30),
            lease_secs: 60,
            max_pages: None,
            max_retries: 2,
            retry_backoff: Duration::from_secs(1),
            max_retry_after: crawlrank_fetch::DEFAULT_MAX_RETRY_AFTER,
            idle_exit: Duration::from_secs(60),
            state_dir: None,
            warc_max_size: 1 << 30,
            fetch: FetchConfig::default(),
            scope: ScopeConfig::default(),
            io_threads: 2,
            plain_api: false,
            frontier_retry: Duration::from_secs(DEFAULT_FRONTIER_RETRY_SECS),
        }
    }
}

/// Why a worker stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorkerStop {
    /// Every URL of the crawl is done.
    Exhausted,
    /// Nothing was served for `idle_exit` while nothing was leased.
    Idle,
    /// `max_pages` fetched pages.
    MaxPages,
    /// A stop request.
    Stopped,
}

/// What a worker did, also reported while it runs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WorkerCounts {
    /// Pages fetched (an HTTP answer, any status).
    pub fetched: u64,
    /// URLs leased and given up: robots.txt disallowed or unreachable, no answer after the
    /// retries.
    pub given_up: u64,
    /// Out-links reported.
    pub links: u64,
    /// Out-links new to the crawl (the service's count).
    pub discovered: u64,
    /// URLs under way: leased and not yet reported (waiting for a fetch slot, fetched, or
    /// being reported).
    pub in_flight: u64,
    /// Refused URLs given back to the frontier, due when their host's hold ends (the wait
    /// outlasted their lease), and URLs whose lease the host's sitemaps took, left to its end.
    pub deferred: u64,
    /// The run counted as `crawl` counts a crawl ([`Stats`], with the same calls): its
    /// requests, pages by outcome (robots.txt disallowed among them), what their parse
    /// dropped (out of scope among them), their marks, robots.txt, sitemaps and their
    /// entries, retries, refusals. What the service decides is the service's to count (caps
    /// and hop limits: `crawlrank status --frontier`).
    pub stats: Stats,
}

/// A worker's end.
#[derive(Debug, Clone)]
pub struct WorkerReport {
    /// Why it stopped.
    pub stop: WorkerStop,
    /// What it did.
    pub counts: WorkerCounts,
    /// The pages were reported with plain `PutURLs` (the frontier is not crawlrank's).
    pub plain_api: bool,
    /// Where its WARC files are, if it wrote any.
    pub warc_dir: Option<PathBuf>,
    /// Seconds it ran.
    pub elapsed: f64,
}

/// The robots.txt state of the origins this worker fetched from: the engine's table
/// ([`RobotsTable`]), its origins numbered in the order they came.
struct Robots {
    table: RobotsTable,
    ids: HashMap<String, u32>,
}

/// What a worker keeps in its state directory for its next runs, and for other workers given
/// the same directory, one small file per origin or queue key in a folder of its own: the
/// robots.txt answers (`STATE/robots/`, as `StoredRobots::encode` writes them), used while
/// fresh (24 hours) rather than asking the host again, and the hosts' back-offs after
/// refusals (`STATE/backoffs/`, as `HostPause::encode` writes them), so that a host that
/// refused keeps its back-off across runs — as `crawl` keeps both in its store. A file holds
/// its key on its first line, then the bytes. They are written whole (a temporary file
/// synced, then renamed); a file that does not read back, or names another key, is not used.
struct Kept {
    dir: PathBuf,
    /// What the files hold, for the warning when one cannot be written.
    what: &'static str,
}

impl Kept {
    /// The file of `key`: its characters other than letters and digits as `_`, so that every
    /// key has a plain file name (two keys sharing one are told apart by the key inside).
    fn path(&self, key: &str) -> PathBuf {
        let name: String = key
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        self.dir.join(name)
    }

    /// The bytes kept for `key`, if any.
    fn read(&self, key: &str) -> Option<Vec<u8>> {
        let mut bytes = std::fs::read(self.path(key)).ok()?;
        let line = bytes.iter().position(|&b| b == b'\n')?;
        (&bytes[..line] == key.as_bytes()).then(|| bytes.split_off(line + 1))
    }

    /// Removes the temporary files a run killed in the middle of a write left here (never
    /// read, but they would pile up).
    fn sweep(&self) {
        let stale = Duration::from_secs(60);
        if let Err(e) = crawlrank_util::atomic::remove_stale_temporaries(&self.dir, stale) {
            tracing::warn!("{e:#}");
        }
    }

    fn write(&self, key: &str, bytes: &[u8]) {
        let written = crawlrank_util::atomic::write_file(&self.path(key), |w| {
            w.write_all(key.as_bytes())?;
            w.write_all(b"\n")?;
            w.write_all(bytes)?;
            Ok(())
        });
        if let Err(e) = written {
            tracing::warn!("{} of {key} not kept for the next runs: {e:#}", self.what);
        }
    }

    /// Forgets what is kept for `key` (nothing kept: nothing to do).
    fn remove(&self, key: &str) {
        let path = self.path(key);
        match std::fs::remove_file(&path) {
            Ok(()) => {
                let _ = crawlrank_util::atomic::sync_dir(&self.dir);
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => tracing::warn!("{} of {key} not forgotten: {e}", self.what),
        }
    }
}

/// The hosts' back-offs after refusals, by a hash of their queue key, and which queues' kept
/// back-offs were read in already (each once a run, when the queue first answers).
struct HostBackoffs {
    table: Backoffs<u64>,
    read_in: HashSet<u64>,
}

/// The sitemaps of the seeds' hosts still to read, as the engine keeps them: a host's
/// `/sitemap.xml`, then its robots.txt `Sitemap:` files, then those indexes name and
/// redirects lead to on the host (`SitemapQueue`'s bounds and dedup).
struct Sitemaps {
    /// The seeds' origins, each with its number in `queue`.
    hosts: HashMap<String, u32>,
    queue: SitemapQueue,
}

/// When this worker's last request to each host ended and the host's delay then, by a hash
/// of its queue key: a host's next lease waits that delay after the request's end, as `crawl`
/// spaces a host's requests (the service spaces its answers of a queue in whole seconds from
/// when it served them, which a request's length and the rounding shorten). Entries whose
/// delay is over are dropped as more come.
#[derive(Default)]
struct LastRequests {
    ends: HashMap<u64, (Instant, Duration)>,
    /// The entries at which the next sweep of those over is made.
    sweep_at: usize,
}

impl LastRequests {
    /// How long a request to the host of `key` must wait from `now`.
    fn wait(&self, key: u64, now: Instant) -> Duration {
        self.ends.get(&key).map_or(Duration::ZERO, |&(end, delay)| {
            (end + delay).saturating_duration_since(now)
        })
    }

    /// A request to the host of `key`, whose delay is `delay`, ended at `end`.
    fn ended(&mut self, key: u64, end: Instant, delay: Duration) {
        if self.ends.len() >= self.sweep_at {
            self.ends.retain(|_, &mut (e, d)| e + d > end);
            self.sweep_at = (2 * self.ends.len()).max(1024);
        }
        self.ends.insert(key, (end, delay));
    }
}

/// What the fetch tasks share.
struct Shared {
    cfg: WorkerConfig,
    fetcher: Fetcher,
    scope: Scope,
    robots: Mutex<Robots>,
    /// The robots.txt answers kept for the next runs, when the worker has a state directory.
    kept_robots: Option<Kept>,
    /// The hosts' back-offs kept for the next runs, when the worker has a state directory.
    kept_backoffs: Option<Kept>,
    sitemaps: Mutex<Sitemaps>,
    /// The run's WARC files: a page's records on the disk before its report.
    warc: Option<Archive>,
    /// Hosts' back-offs after refusals.
    backoffs: Mutex<HostBackoffs>,
    /// When the last request to each host ended.
    last_requests: Mutex<LastRequests>,
    /// One permit per fetch at once (`concurrency`): a leased URL is fetched under one.
    fetch_slots: tokio::sync::Semaphore,
}

/// What one leased URL came to.
#[derive(Debug, Default)]
struct Done {
    fetched: bool,
    given_up: bool,
    links: u64,
    discovered: u64,
    deferred: bool,
    /// Where the page's WARC records end: on the disk before it is reported.
    archived: Option<WarcPosition>,
    /// What `crawl` counts of this URL's requests ([`Stats`]).
    stats: Stats,
    /// The host's delay, once its robots.txt is known: the host's next request waits that
    /// long after this URL's last.
    delay: Option<Duration>,
}

/// Runs `call` (a call of the frontier) until it succeeds; while it fails because the
/// frontier cannot be reached ([`crawlrank_urlfrontier::is_unreachable`]) it is tried again
/// after a doubling pause, for at most `limit` after the first failure. Any other error is
/// returned at once.
async fn retrying<T, F, Fut>(limit: Duration, mut call: F) -> Result<T>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T>>,
{
    let mut pause = FIRST_RETRY_PAUSE;
    let mut failing_since: Option<Instant> = None;
    loop {
        match call().await {
            Ok(v) => return Ok(v),
            Err(e) if crawlrank_urlfrontier::is_unreachable(&e) => {
                let since = *failing_since.get_or_insert_with(Instant::now);
                let left = limit.saturating_sub(since.elapsed());
                if left.is_zero() {
                    return Err(e.context(format!(
                        "the frontier could not be reached for {:.0} s (--frontier-retry)",
                        limit.as_secs_f64()
                    )));
                }
                tokio::time::sleep(pause.min(left)).await;
                pause = (pause * 2).min(MAX_RETRY_PAUSE);
            }
            Err(e) => return Err(e),
        }
    }
}

/// Connects to the frontier at `addr`, trying again while it cannot be reached (for at
/// most `limit`).
async fn connect(cfg: &WorkerConfig, addr: &str, limit: Duration) -> Result<FrontierClient> {
    retrying(limit, || {
        FrontierClient::connect(addr, &cfg.crawl_id, cfg.plain_api)
    })
    .await
}

/// The address of a node as `ListNodes` gives it (`HOST:PORT`, or a URL), reachable from
/// here: a node listening on every interface (`0.0.0.0`, `[::]`) is reached at the host of
/// the address the worker was given.
fn node_url(node: &str, given: &str) -> String {
    let node = if node.contains("://") {
        node.to_string()
    } else {
        format!("http://{node}")
    };
    let given = if given.contains("://") {
        given.to_string()
    } else {
        format!("http://{given}")
    };
    let (Ok(mut n), Ok(g)) = (url::Url::parse(&node), url::Url::parse(&given)) else {
        return node;
    };
    let unspecified = match n.host() {
        Some(url::Host::Ipv4(ip)) => ip.is_unspecified(),
        Some(url::Host::Ipv6(ip)) => ip.is_unspecified(),
        _ => false,
    };
    if unspecified {
        if let Some(host) = g.host_str() {
            if n.set_host(Some(host)).is_err() {
                return node;
            }
        }
    }
    n.as_str().trim_end_matches('/').to_string()
}

/// A client of every node of the frontier (`ListNodes`), the one at the given address
/// first. A frontier that lists one node or none, or has no `ListNodes`, is the given
/// address alone: it was reached there, whatever name it gives itself.
async fn node_clients(cfg: &WorkerConfig, given: FrontierClient) -> Result<Vec<FrontierClient>> {
    let listed = match retrying(cfg.frontier_retry, || {
        let mut c = given.clone();
        async move { c.list_nodes().await }
    })
    .await
    {
        Ok(nodes) => nodes,
        Err(e) if crawlrank_urlfrontier::is_unreachable(&e) => return Err(e),
        // A server without `ListNodes`: the one node it is.
        Err(_) => Vec::new(),
    };
    if listed.len() <= 1 {
        return Ok(vec![given]);
    }
    let mut urls: Vec<String> = listed.iter().map(|n| node_url(n, &cfg.frontier)).collect();
    urls.sort();
    urls.dedup();
    let mut clients = vec![given.clone()];
    for url in urls {
        if url == given.addr() {
            continue;
        }
        clients.push(
            connect(cfg, &url, cfg.frontier_retry)
                .await
                .with_context(|| format!("the frontier lists the node {url}"))?,
        );
    }
    Ok(clients)
}

/// How many URLs a worker at `concurrency` holds leased at once: besides those being
/// fetched, the next ones, ready for a fetch slot as soon as one is free (a `GetURLs` round
/// trip waits for a durable commit, longer than a fetch on a fast network), and those being
/// reported. At concurrency 1 a single one, so that each `GetURLs` sees every report before
/// it and the fetches follow the service's policy exactly.
fn max_leased(concurrency: usize) -> usize {
    if concurrency <= 1 {
        1
    } else {
        concurrency.saturating_mul(LEASES_PER_SLOT)
    }
}

/// URLs leased at once per fetch slot (above concurrency 1, see [`max_leased`]).
const LEASES_PER_SLOT: usize = 4;

/// Runs a worker until the crawl is done, it is idle, it reached `max_pages`, or `stop` is
/// set; `progress` is called about once a second with its counts.
pub fn run(
    cfg: &WorkerConfig,
    stop: &AtomicBool,
    progress: &mut dyn FnMut(&WorkerCounts),
) -> Result<WorkerReport> {
    anyhow::ensure!(cfg.concurrency > 0, "the concurrency must be at least 1");
    anyhow::ensure!(cfg.lease_secs > 0, "the lease must be at least 1 second");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(cfg.io_threads.max(1))
        .enable_all()
        .build()
        .context("cannot start the I/O runtime")?;
    rt.block_on(run_async(cfg, stop, progress))
}

/// The seeds normalised as the crawler normalises links (a seed it refuses is an error).
fn normalised_seeds(cfg: &WorkerConfig) -> Result<Vec<String>> {
    cfg.seeds
        .iter()
        .map(|s| {
            normalize(s, &cfg.fetch.url_rules)
                .map_err(|e| anyhow::anyhow!("the seed '{s}' is not a URL to crawl: {e:?}"))
        })
        .collect()
}

/// The hosts a worker may reach on any address (its own network's included): those of its
/// seeds and, with a state directory, of the seeds its earlier runs were given
/// (`STATE/seed-hosts`, one a line), as `crawl` keeps its seeds' hosts in its state: a worker
/// started again without `--seeds` still crawls them.
fn seed_hosts(state: Option<&std::path::Path>, seeds: &[String]) -> Result<BTreeSet<String>> {
    let mut hosts: BTreeSet<String> = seeds
        .iter()
        .filter_map(|s| crawlrank_util::hosts::host_name(s))
        .collect();
    let Some(state) = state else {
        return Ok(hosts);
    };
    let path = state.join("seed-hosts");
    let kept: BTreeSet<String> = match std::fs::read_to_string(&path) {
        Ok(text) => text
            .lines()
            .filter(|l| !l.is_empty())
            .map(String::from)
            .collect(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => BTreeSet::new(),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    if !hosts.is_subset(&kept) {
        hosts.extend(kept);
        crawlrank_util::atomic::write_file(&path, |w| {
            for h in &hosts {
                writeln!(w, "{h}")?;
            }
            Ok(())
        })?;
        return Ok(hosts);
    }
    Ok(kept)
}

/// This run's WARC files (with WARC on and a state directory), the earlier runs' files
/// mended first ([`archive::repair`]), each mended one said.
fn open_warc(cfg: &WorkerConfig) -> Result<Option<Archive>> {
    let Some(state) = cfg.state_dir.as_ref().filter(|_| cfg.fetch.warc) else {
        return Ok(None);
    };
    let (archive, repaired) = Archive::open(state, cfg.warc_max_size, &cfg.fetch.user_agent)?;
    for r in repaired {
        tracing::warn!(
            "{} ended with a part of a record (an earlier run stopped while writing it): cut back from {} to {} bytes",
            r.path.display(),
            r.found,
            r.kept
        );
    }
    Ok(Some(archive))
}

async fn run_async(
    cfg: &WorkerConfig,
    stop: &AtomicBool,
    progress: &mut dyn FnMut(&WorkerCounts),
) -> Result<WorkerReport> {
    let start = Instant::now();
    let seeds = normalised_seeds(cfg)?;
    let mut scope = Scope::new(&cfg.scope)?;
    if !scope.is_any() {
        anyhow::ensure!(
            !seeds.is_empty(),
            "a worker with a scope other than `any` needs seeds: the scope is theirs"
        );
        for s in &seeds {
            scope.add_seed(s);
        }
    }
    let guard = AddressGuard {
        allow_private: cfg.fetch.allow_private_networks,
        named_hosts: seed_hosts(cfg.state_dir.as_deref(), &seeds)?
            .into_iter()
            .collect(),
    };
    let fetcher = Fetcher::new(&cfg.fetch, guard, cfg.concurrency)?;
    let limit = cfg.frontier_retry;
    let frontier = connect(cfg, &cfg.frontier, limit).await?;
    let nodes = node_clients(cfg, frontier.clone()).await?;
    if let Some(secs) = cfg.delay_secs {
        // The crawl's delay on every node (setting it twice changes nothing).
        for node in &nodes {
            retrying(limit, || {
                let mut c = node.clone();
                async move { c.set_delay("", secs).await }
            })
            .await?;
        }
    }
    if !seeds.is_empty() {
        retrying(limit, || {
            let mut c = frontier.clone();
            let seeds = &seeds;
            async move { c.put_seeds(seeds).await }
        })
        .await?;
    }
    let warc = open_warc(cfg)?;
    let warc_dir = warc.as_ref().map(|a| a.dir().to_path_buf());
    let mut sitemaps = Sitemaps {
        hosts: HashMap::new(),
        queue: SitemapQueue::default(),
    };
    if cfg.fetch.sitemaps {
        // Each seed host's /sitemap.xml, queued with the seeds as the engine queues it.
        for origin in seeds.iter().filter_map(|s| origin_key(s)) {
            let next = sitemaps.hosts.len() as u32;
            let host = *sitemaps.hosts.entry(origin.clone()).or_insert(next);
            // On its host, and the host's first (or known already, when two seeds share
            // the host): never dropped, nothing to count.
            let _ = sitemaps.queue.push(host, &format!("{origin}/sitemap.xml"));
        }
    }
    let shared = Arc::new(Shared {
        cfg: cfg.clone(),
        fetcher,
        scope,
        robots: Mutex::new(Robots {
            table: RobotsTable::new(cfg.fetch.robots_agent(), cfg.max_retries),
            ids: HashMap::new(),
        }),
        kept_robots: cfg.state_dir.as_ref().map(|s| Kept {
            dir: s.join("robots"),
            what: "robots.txt",
        }),
        kept_backoffs: cfg.state_dir.as_ref().map(|s| Kept {
            dir: s.join("backoffs"),
            what: "the back-off",
        }),
        sitemaps: Mutex::new(sitemaps),
        warc,
        backoffs: Mutex::new(HostBackoffs {
            table: Backoffs::new(cfg.max_retry_after),
            read_in: HashSet::new(),
        }),
        last_requests: Mutex::new(LastRequests::default()),
        fetch_slots: tokio::sync::Semaphore::new(cfg.concurrency),
    });
    for kept in [&shared.kept_robots, &shared.kept_backoffs]
        .into_iter()
        .flatten()
    {
        kept.sweep();
    }
    let max_leased = max_leased(cfg.concurrency) as u64;
    let mut counts = WorkerCounts::default();
    let mut tasks: JoinSet<Result<Done>> = JoinSet::new();
    let mut next_ask = Instant::now();
    let mut poll = MIN_POLL;
    let mut idle_since: Option<Instant> = None;
    // Whether this worker put seeds or leased URLs: until then an empty crawl is one that
    // has not started, not one that is done.
    let mut took_part = !seeds.is_empty();
    let mut last_progress = Instant::now();
    // The node asked first next time (the free slots go round the nodes), and how many
    // nodes in a row served nothing.
    let mut turn = 0usize;
    let mut empty_nodes = 0usize;
    let stop_reason = loop {
        let now = Instant::now();
        if last_progress.elapsed() >= Duration::from_secs(1) {
            counts.in_flight = tasks.len() as u64;
            progress(&counts);
            last_progress = now;
        }
        if stop.load(Ordering::SeqCst) {
            // The URLs leased ahead and not started are left to their leases' end.
            shared.fetch_slots.close();
            break WorkerStop::Stopped;
        }
        // Every fetch that ended frees its slot now. A `JoinSet` counts its ended tasks
        // until they are joined, and the wait below joins one per turn of this loop — a
        // turn that is a `GetURLs` round trip whenever a slot is free — so without this the
        // ended fetches would wait for round trips one by one and hold their slots: one
        // page leased, fetched and reported per round trip, whatever the concurrency.
        while let Some(joined) = tasks.try_join_next() {
            add(&mut counts, joined.context("a fetch task failed")??);
            next_ask = now;
            poll = MIN_POLL;
        }
        let in_flight = tasks.len() as u64;
        let budget = cfg
            .max_pages
            .map_or(u64::MAX, |m| m.saturating_sub(counts.fetched + in_flight));
        if budget == 0 && tasks.is_empty() {
            break WorkerStop::MaxPages;
        }
        let room = (max_leased - in_flight.min(max_leased)).min(budget);
        if room > 0 && now >= next_ask {
            // One GetURLs per node at once, the free slots shared among them.
            let asked = nodes.len().min(room as usize);
            let mut asks = JoinSet::new();
            for i in 0..asked {
                let node = (turn + i) % nodes.len();
                let share = room as usize / asked + usize::from(i < room as usize % asked);
                let client = nodes[node].clone();
                let lease = cfg.lease_secs;
                asks.spawn(async move {
                    let leased = retrying(limit, || {
                        let mut c = client.clone();
                        async move { c.get_urls(share, lease).await }
                    })
                    .await;
                    (node, leased)
                });
            }
            turn = (turn + asked) % nodes.len();
            let mut served = 0usize;
            while let Some(joined) = asks.join_next().await {
                let (node, leased) = joined.context("a GetURLs task failed")?;
                let leased = leased?;
                served += leased.len();
                for info in leased {
                    tasks.spawn(fetch_guarded(shared.clone(), nodes[node].clone(), info));
                }
            }
            if served > 0 {
                took_part = true;
                poll = MIN_POLL;
                idle_since = None;
                empty_nodes = 0;
                continue;
            }
            empty_nodes += asked;
            if empty_nodes < nodes.len() {
                // Nodes not asked this round may have something.
                continue;
            }
            empty_nodes = 0;
            if tasks.is_empty() {
                // A cluster's GetStats counts every node.
                let c = retrying(limit, || {
                    let mut c = frontier.clone();
                    async move { c.counts().await }
                })
                .await?;
                // An empty crawl this worker had no part in may not have started yet
                // (its seeds are another worker's): it waits, as when idle.
                if c.size == 0 && took_part {
                    break WorkerStop::Exhausted;
                }
                if c.in_process == 0 {
                    let since = *idle_since.get_or_insert(now);
                    if since.elapsed() >= cfg.idle_exit {
                        break WorkerStop::Idle;
                    }
                } else {
                    idle_since = None;
                }
            }
            next_ask = Instant::now() + poll;
            poll = (poll * 2).min(MAX_POLL);
        }
        let wake = next_ask
            .max(Instant::now())
            .min(Instant::now() + Duration::from_millis(100));
        tokio::select! {
            Some(joined) = tasks.join_next(), if !tasks.is_empty() => {
                add(&mut counts, joined.context("a fetch task failed")??);
                // A slot is free, and the report may have made URLs servable.
                next_ask = Instant::now();
                poll = MIN_POLL;
            }
            _ = tokio::time::sleep_until(wake.into()) => {}
        }
    };
    while let Some(joined) = tasks.join_next().await {
        add(&mut counts, joined.context("a fetch task failed")??);
    }
    if let Some(a) = &shared.warc {
        a.close()?;
    }
    counts.in_flight = 0;
    progress(&counts);
    Ok(WorkerReport {
        stop: stop_reason,
        counts,
        plain_api: nodes.iter().any(FrontierClient::is_plain),
        warc_dir,
        elapsed: start.elapsed().as_secs_f64(),
    })
}

fn add(c: &mut WorkerCounts, d: Done) {
    c.fetched += u64::from(d.fetched);
    c.given_up += u64::from(d.given_up);
    c.links += d.links;
    c.discovered += d.discovered;
    c.deferred += u64::from(d.deferred);
    c.stats.add(&d.stats);
}

/// A queue key's hash, the key of its back-off.
fn queue_hash(key: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    key.hash(&mut h);
    h.finish()
}

/// The hosts' back-off table, with `queue`'s back-off kept by an earlier run read in first
/// (once a run, the file read with the table unlocked), and `queue`'s key in it.
fn backoffs_of<'a>(
    shared: &'a Shared,
    queue: &str,
) -> Result<(u64, std::sync::MutexGuard<'a, HostBackoffs>)> {
    let key = queue_hash(queue);
    let table = lock(&shared.backoffs, "back-off table")?;
    let Some(kept) = shared
        .kept_backoffs
        .as_ref()
        .filter(|_| !table.read_in.contains(&key))
    else {
        return Ok((key, table));
    };
    drop(table);
    let pause = kept.read(queue).and_then(|b| HostPause::decode(&b));
    let mut table = lock(&shared.backoffs, "back-off table")?;
    if table.read_in.insert(key) && table.table.get(key).is_none() {
        if let Some(pause) = pause {
            table.table.restore(key, pause);
        }
    }
    Ok((key, table))
}

/// After a page's answer: a refusal (429, 503) backs its host off and holds its queue for
/// every worker until the wait is over (`BlockQueueUntil`), and is returned; any other answer
/// lets the host's back-off come down, and while some of it is left the host's queue is held
/// that long after the answer, as the engine spaces a backed-off host's requests.
async fn note_refusal(
    shared: &Shared,
    frontier: &FrontierClient,
    queue: &str,
    status: u16,
    retry_after: Option<RetryAfter>,
    done: &mut Done,
) -> Result<Option<Refusal>> {
    let now = SystemTime::now();
    let after = {
        let (key, mut backoffs) = backoffs_of(shared, queue)?;
        backoffs.table.answer(key, status, retry_after, now)
    };
    done.stats.count_back_off(&after);
    // Kept for the next runs with the table unlocked (the file is synced).
    if let (Some(change), Some(k)) = (after.changed, &shared.kept_backoffs) {
        match change {
            Some(pause) => k.write(queue, &pause.encode()),
            None => k.remove(queue),
        }
    }
    let refusal = after.refusal;
    let Some(hold_until) = after.hold_until else {
        return Ok(refusal);
    };
    // Whole seconds, rounded up: the hold never ends before the host asked.
    let until = epoch_secs_up(hold_until);
    retrying(shared.cfg.frontier_retry, || {
        let mut c = frontier.clone();
        async move { c.block_queue_until(queue, until).await }
    })
    .await?;
    Ok(refusal)
}

/// Whether a request begun after `wait` could outlast the lease ending at `lease_end` (a whole
/// fetch timeout must be left in it): a worker's requests never outlast their URL's lease.
fn outlasts_lease(cfg: &WorkerConfig, wait: Duration, lease_end: Instant) -> bool {
    Instant::now() + wait + cfg.fetch.timeout > lease_end
}

/// `t` in whole seconds since the epoch, rounded up: the frontier's dates, which must not
/// come before `t`.
fn epoch_secs_up(t: SystemTime) -> u64 {
    t.duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() + u64::from(d.subsec_nanos() > 0))
}

/// The pause before retry number `attempt` (0-based): the backoff, doubled each time.
fn backoff(cfg: &WorkerConfig, attempt: u32) -> Duration {
    cfg.retries().backoff(attempt)
}

/// Fetches `origin`'s robots.txt for the table (`host` there), a failure tried again after
/// the back-off as the table says; an answer worth keeping is kept for the next runs.
async fn fetch_robots(
    shared: &Shared,
    frontier: &FrontierClient,
    conn: &mut HostConnection,
    (origin, queue): (&str, &str),
    host: u32,
    lease_end: Instant,
    done: &mut Done,
) -> Result<Option<RobotsRules>> {
    let cfg = &shared.cfg;
    loop {
        // The queue's delay, when the crawl sets one, spaces robots.txt's redirects too.
        let hop_delay = Duration::from_secs(cfg.delay_secs.unwrap_or(0).into());
        let f = shared.fetcher.robots(conn, origin, hop_delay).await;
        if f.failure == Some(TransportFailure::FdLimit) {
            // No descriptor was free: asked again soon, as if not asked (no failed attempt).
            done.stats.fd_shortages += 1;
            if outlasts_lease(cfg, FD_RETRY, lease_end) {
                return Ok(None);
            }
            tokio::time::sleep(FD_RETRY).await;
            continue;
        }
        // Counted as the engine counts a robots.txt fetch: one file, its requests.
        done.stats.robots_fetched += 1;
        done.stats.count_robots(&f);
        let after = lock(&shared.robots, "robots.txt table")?.table.fetched(
            host,
            f.rules,
            f.answer,
            f.failure,
            robots::unix_now(),
        );
        match after {
            AfterFetch::Retry { attempt } => {
                done.stats.retries += 1;
                let wait = backoff(cfg, attempt);
                if outlasts_lease(cfg, wait, lease_end) {
                    // Not under this lease: the host's queue is held for every worker until
                    // the back-off is over, and robots.txt asked again under its next lease.
                    let until = epoch_secs_up(SystemTime::now() + wait);
                    retrying(cfg.frontier_retry, || {
                        let mut c = frontier.clone();
                        async move { c.block_queue_until(queue, until).await }
                    })
                    .await?;
                    return Ok(None);
                }
                tokio::time::sleep(wait).await;
            }
            AfterFetch::Settled { rules, keep } => {
                // Written with the table unlocked: the file is synced, and the other fetch
                // tasks need not wait for it.
                if let (Some(answer), Some(kept)) = (keep, &shared.kept_robots) {
                    kept.write(origin, &answer.encode());
                }
                return Ok(Some(rules));
            }
        }
    }
}

/// What a leased URL's host's robots.txt came to ([`robots_rules`]).
enum HostRules {
    /// These rules are in force.
    Rules(RobotsRules),
    /// The origin is given up for this failure (one a retry cannot mend: nothing of it may
    /// be fetched).
    GiveUp(TransportFailure),
    /// robots.txt is asked again after a back-off that outlasts the lease.
    Held,
}

/// `origin`'s robots.txt rules, as the engine has them ([`RobotsTable`]): known and fresh,
/// or fetched now, a failure tried again after the back-off as the table says (under the
/// lease, which ends at `lease_end`, or the next); the failure when the table gives the
/// origin up. robots.txt that stays unreachable disallows everything, as in the engine.
async fn robots_rules(
    shared: &Shared,
    frontier: &FrontierClient,
    conn: &mut HostConnection,
    (origin, queue): (&str, &str),
    lease_end: Instant,
    done: &mut Done,
) -> Result<HostRules> {
    // What the table has for the host, and whether it is an answer an earlier run kept.
    let known = |host: u32| -> Result<(Option<Result<RobotsRules, TransportFailure>>, bool)> {
        let now = robots::unix_now();
        // A kept answer is read with the table unlocked, and only when the table asks for it.
        let consults = lock(&shared.robots, "robots.txt table")?
            .table
            .consults_store(host, now);
        let kept = shared
            .kept_robots
            .as_ref()
            .filter(|_| consults)
            .and_then(|k| StoredRobots::decode(&k.read(origin)?).ok());
        let mut robots = lock(&shared.robots, "robots.txt table")?;
        Ok(match robots.table.lookup(host, now, || kept) {
            HostRobots::Rules(rules) => (Some(Ok(rules)), false),
            HostRobots::StoredRules(rules) => (Some(Ok(rules)), true),
            HostRobots::GiveUp(failure) => (Some(Err(failure)), false),
            HostRobots::Unknown => (None, false),
        })
    };
    let host = {
        let mut robots = lock(&shared.robots, "robots.txt table")?;
        let next = u32::try_from(robots.ids.len()).context("too many origins")?;
        *robots.ids.entry(origin.to_string()).or_insert(next)
    };
    let cfg = &shared.cfg;
    let rules = match known(host)? {
        // Kept by an earlier run: read as if fetched now (its sitemaps, its delay), and
        // counted as `crawl` counts an answer its store kept.
        (Some(Ok(rules)), true) => {
            done.stats.robots_cached += 1;
            rules
        }
        (Some(Ok(rules)), false) => return Ok(HostRules::Rules(rules)),
        (Some(Err(failure)), _) => return Ok(HostRules::GiveUp(failure)),
        (None, _) => {
            let fetched = fetch_robots(
                shared,
                frontier,
                conn,
                (origin, queue),
                host,
                lease_end,
                done,
            );
            match fetched.await? {
                Some(rules) => rules,
                None => return Ok(HostRules::Held),
            }
        }
    };
    if let RobotsRules::Rules(robot) = &rules {
        if cfg.fetch.sitemaps {
            // A seed host's `Sitemap:` files, behind its /sitemap.xml.
            let mut sitemaps = lock(&shared.sitemaps, "sitemap table")?;
            if let Some(&host) = sitemaps.hosts.get(origin) {
                let (listed, rules) = (&robot.sitemaps, &cfg.fetch.url_rules);
                let stats = &mut done.stats;
                sitemaps
                    .queue
                    .queue_listed(host, origin, listed, rules, stats);
            }
        }
    }
    if let Some(delay) = rules.crawl_delay() {
        // The host asks for more time between requests than the crawl's delay: its queue
        // gets it, for every worker (whole seconds, rounded up, capped).
        let secs = delay.min(cfg.max_crawl_delay).as_secs_f64().ceil() as u32;
        if secs > cfg.delay_secs.unwrap_or(0) {
            retrying(cfg.frontier_retry, || {
                let mut c = frontier.clone();
                async move { c.set_delay(queue, secs).await }
            })
            .await?;
        }
    }
    // As the table now has them: a failure that gives the origin up is an error.
    Ok(match known(host)?.0.unwrap_or(Ok(rules)) {
        Ok(rules) => HostRules::Rules(rules),
        Err(failure) => HostRules::GiveUp(failure),
    })
}

/// Locks one of the tables the fetch tasks share (`what` names it in the error of a
/// poisoned one).
fn lock<'a, T>(m: &'a Mutex<T>, what: &str) -> Result<std::sync::MutexGuard<'a, T>> {
    m.lock()
        .map_err(|_| anyhow::anyhow!("the {what} was poisoned"))
}

/// Reads the sitemaps of the leased URL's host, a seed host, that are still to read, one after the
/// other on the host's connection, as the engine does before a host's first page: each
/// after the host's delay since its last request; an index's sitemaps and a redirect's
/// target on the host are queued behind them; a retryable failure is tried again after the
/// back-off, `max_retries` times; the entries of each sitemap, within the scope, are put into
/// the crawl at once as found in a sitemap ([`FrontierClient::put_listed`]: no link, within
/// the caps). A refusal (429, 503) holds the host for every worker as a page's does, and the
/// sitemap is asked again after the wait. All under the lease of one URL of the host, each
/// request with a whole fetch timeout left in it: the sitemaps it has no time for are read
/// under the host's next lease.
async fn read_sitemaps(
    shared: &Shared,
    frontier: &FrontierClient,
    conn: &mut HostConnection,
    leased: &UrlInfo,
    rules: &RobotsRules,
    lease_end: Instant,
    done: &mut Done,
) -> Result<SitemapsRead> {
    let cfg = &shared.cfg;
    let Some(origin) = origin_key(&leased.url) else {
        return Ok(SitemapsRead::None);
    };
    let origin = origin.as_str();
    let Some(host) = lock(&shared.sitemaps, "sitemap table")?
        .hosts
        .get(origin)
        .copied()
    else {
        return Ok(SitemapsRead::None);
    };
    let delay = host_delay(cfg, rules);
    let mut requested = false;
    // A retry's back-off, waited before the sitemap is asked again.
    let mut retry_wait = Duration::ZERO;
    loop {
        let next = lock(&shared.sitemaps, "sitemap table")?
            .queue
            .next(host)
            .map(|q| q.url.clone());
        let Some(url) = next else { break };
        if !rules.allowed(&url) {
            lock(&shared.sitemaps, "sitemap table")?.queue.pop(host);
            done.stats.sitemaps_disallowed += 1;
            continue;
        }
        if requested || done.stats.robots_fetched > 0 {
            // After another request of this lease: the host's delay first, and the request,
            // like a page's, never outlasts the lease. One that would is asked under the
            // host's next lease, before its pages (the URL waits for it).
            let pause = pause_before_next(shared, &leased.key, delay)?;
            let pause = pause.max(std::mem::take(&mut retry_wait));
            if outlasts_lease(cfg, pause, lease_end) {
                return Ok(SitemapsRead::Held);
            }
            tokio::time::sleep(pause).await;
        }
        let mut f = shared.fetcher.sitemap(conn, &url).await;
        requested = true;
        if f.failure == Some(TransportFailure::FdLimit) {
            // No descriptor was free: asked again soon, as if not asked (no failed attempt).
            done.stats.fd_shortages += 1;
            retry_wait = FD_RETRY;
            continue;
        }
        done.stats.sitemaps_fetched += 1;
        done.stats.count_answer(f.bytes, f.timed_out);
        let archived = archive(shared, &f.warc)?;
        // A refusal holds the host for every worker (`BlockQueueUntil`); then the answer is
        // followed by the engine's rule (`follow`): a refused or failed sitemap is asked again
        // while retries are left, once the hold and the back-off are over, else counted.
        let refusal =
            note_refusal(shared, frontier, &leased.key, f.status, f.retry_after, done).await?;
        let step = f.follow(
            &mut lock(&shared.sitemaps, "sitemap table")?.queue,
            host,
            origin,
            cfg.max_retries,
            &mut done.stats,
        );
        let entries = match step {
            SitemapStep::Retry { attempt } => {
                done.stats.retries += 1;
                let wait = backoff(cfg, attempt).max(refusal.map_or(Duration::ZERO, |r| r.wait));
                if outlasts_lease(cfg, wait, lease_end) {
                    // The host is held beyond the lease: the URL goes back to the service,
                    // the sitemap is asked again under the host's next lease.
                    return Ok(SitemapsRead::Held);
                }
                // Waited at the top of the loop, with the host's delay (the longer of them).
                retry_wait = wait;
                continue;
            }
            SitemapStep::Settled { entries, .. } => entries,
        };
        put_listed(shared, frontier, &url, entries, archived, done).await?;
    }
    Ok(if requested {
        SitemapsRead::Requested
    } else {
        SitemapsRead::None
    })
}

/// Puts a sitemap's entries into the crawl as found without a link
/// ([`FrontierClient::put_listed`], `sitemap` the file or page that listed them): those the
/// scope admits (the others counted as `crawl` counts them), once the WARC records that hold
/// them (up to `archived`) are on the disk.
async fn put_listed(
    shared: &Shared,
    frontier: &FrontierClient,
    sitemap: &str,
    mut entries: Vec<String>,
    archived: Option<WarcPosition>,
    done: &mut Done,
) -> Result<()> {
    entries.retain(|l| shared.scope.admits(l, &mut done.stats));
    if entries.is_empty() {
        return Ok(());
    }
    on_disk(shared, archived).await?;
    retrying(shared.cfg.frontier_retry, || {
        let mut c = frontier.clone();
        let entries = &entries;
        async move { c.put_listed(sitemap, entries).await }
    })
    .await?;
    Ok(())
}

/// What reading a host's sitemaps under a URL's lease came to.
enum SitemapsRead {
    /// No sitemap was asked for.
    None,
    /// Sitemaps were asked for: the URL waits the host's delay.
    Requested,
    /// A sitemap is to be asked after a wait (the host's delay, its hold after a refusal, or
    /// a failure's back-off) that outlasts the lease: the URL is left to its lease's end.
    Held,
}

/// The pause between two requests of a host within one lease: the crawl's delay, or the
/// host's robots.txt Crawl-delay when longer (capped), as its queue in the service has.
fn host_delay(cfg: &WorkerConfig, rules: &RobotsRules) -> Duration {
    let crawl = Duration::from_secs(cfg.delay_secs.unwrap_or(0).into());
    rules.host_delay(crawl, cfg.max_crawl_delay)
}

/// The pause before a host's next request within one lease: its `delay`, or longer while the
/// host backs off after refusals (its back-off, halved at each answer, and any hold left),
/// as the engine spaces a backed-off host's requests.
fn pause_before_next(shared: &Shared, queue: &str, delay: Duration) -> Result<Duration> {
    let now = SystemTime::now();
    let (key, backoffs) = backoffs_of(shared, queue)?;
    let pause = backoffs.table.get(key);
    Ok(pause.map_or(delay, |p| {
        let held = p.until.duration_since(now).unwrap_or_default();
        delay.max(p.backoff).max(held)
    }))
}

/// Appends WARC records to the worker's files (with WARC on): where they end, to be on the
/// disk ([`on_disk`]) before what they archive is reported.
fn archive(shared: &Shared, records: &[u8]) -> Result<Option<WarcPosition>> {
    match &shared.warc {
        Some(a) => a.append(records),
        None => Ok(None),
    }
}

/// Returns once the WARC records up to `upto` are on the disk (with WARC on).
async fn on_disk(shared: &Shared, upto: Option<WarcPosition>) -> Result<()> {
    match &shared.warc {
        Some(a) => a.on_disk(upto).await,
        None => Ok(()),
    }
}

/// Reports a page to `frontier` ([`FrontierClient::report`]), tried again while the
/// frontier cannot be reached. A report tried again after the service applied it but before
/// its answer came changes nothing more: the page is done already.
async fn report_page(
    frontier: &FrontierClient,
    limit: Duration,
    leased: &UrlInfo,
    metadata: Vec<(String, String)>,
    links: Vec<String>,
) -> Result<u64> {
    retrying(limit, || {
        let mut c = frontier.clone();
        let (metadata, links) = (metadata.clone(), links.clone());
        async move { c.report(leased, metadata, links).await }
    })
    .await
}

/// The metadata of a page's report: its outcome and HTTP status (0: no response).
fn report_metadata(outcome: &str, status: u16) -> Vec<(String, String)> {
    vec![
        (OUTCOME_KEY.to_string(), outcome.to_string()),
        (HTTP_STATUS_KEY.to_string(), status.to_string()),
    ]
}

/// What a leased URL's fetch ends in: a report to make (a page, or a URL given up), a
/// retry to schedule, or nothing, for a refused URL left to its lease's end.
enum Fetched {
    Report {
        done: Done,
        metadata: Vec<(String, String)>,
        links: Vec<String>,
        /// A sitemap's entries, put into the crawl after the report.
        listed: Vec<String>,
    },
    /// A failure a retry may mend: the URL goes back to the frontier, to be served again from
    /// `at` (seconds since the epoch) after `attempts` failed fetches.
    Retry {
        done: Done,
        metadata: Vec<(String, String)>,
        attempts: u32,
        at: u64,
    },
    Deferred(Done),
}

impl Fetched {
    /// The URL goes back to the frontier after `attempts` failed fetches (the last answered
    /// `status`), due in `wait` (whole seconds, rounded up).
    fn retry(done: Done, status: u16, attempts: u32, wait: Duration) -> Self {
        Fetched::Retry {
            done,
            metadata: report_metadata(RETRY_OUTCOME, status),
            attempts,
            at: epoch_secs_up(SystemTime::now() + wait),
        }
    }
}

/// A URL given up without a fetch (`outcome`, status 0, no links): one the worker cannot or
/// may not fetch (a fetch error's kind in `failure`, counted as `crawl` counts it).
fn given_up(outcome: Outcome, failure: Option<TransportFailure>, mut done: Done) -> Fetched {
    done.given_up = true;
    done.stats.count_outcome(outcome, failure);
    Fetched::Report {
        done,
        metadata: report_metadata(outcome.name(), 0),
        links: Vec::new(),
        listed: Vec::new(),
    }
}

/// [`fetch_one`], a panic in it (a bug met on this URL's answer, say) taken as the URL's fetch
/// error: reported given up and counted as `crawl` counts a page whose fetch task panicked,
/// so that one URL cannot stop every worker it is served to in turn.
async fn fetch_guarded(
    shared: Arc<Shared>,
    frontier: FrontierClient,
    leased: UrlInfo,
) -> Result<Done> {
    let task = tokio::spawn(fetch_one(shared.clone(), frontier.clone(), leased.clone()));
    let why = match caught(task).await {
        Ok(done) => return done,
        Err(why) => why,
    };
    tracing::error!(
        "the fetch of {} failed with a bug ({why}): given up",
        leased.url
    );
    let mut done = Done {
        given_up: true,
        ..Done::default()
    };
    done.stats.count_outcome(Outcome::FetchError, None);
    let metadata = report_metadata(Outcome::FetchError.name(), 0);
    let limit = shared.cfg.frontier_retry;
    report_page(&frontier, limit, &leased, metadata, Vec::new()).await?;
    Ok(done)
}

/// What a spawned task came to: its output, or why it has none (the text of its panic).
async fn caught<T>(task: tokio::task::JoinHandle<T>) -> Result<T, String> {
    task.await.map_err(|e| match e.try_into_panic() {
        Ok(panic) => panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic".to_string()),
        Err(e) => e.to_string(),
    })
}

/// Fetches one leased URL, once a fetch slot is free, and reports it. The slot (and the
/// host's connection) is given back before the report: a report waits for the service's
/// durable commit, milliseconds in which the slot can fetch another page. The host is not
/// served to anyone meanwhile — its URL stays leased until the report is applied.
async fn fetch_one(shared: Arc<Shared>, frontier: FrontierClient, leased: UrlInfo) -> Result<Done> {
    // The lease started at most now: a retry must be over before this.
    let lease_end = Instant::now() + Duration::from_secs(shared.cfg.lease_secs.into());
    // The host's delay after this worker's last request to it, waited without a fetch slot.
    let host = queue_hash(&leased.key);
    let wait = lock(&shared.last_requests, "last requests")?.wait(host, Instant::now());
    if !wait.is_zero() {
        if outlasts_lease(&shared.cfg, wait, lease_end) {
            // Left to its lease's end: the service serves it again after.
            return Ok(Done {
                deferred: true,
                ..Done::default()
            });
        }
        tokio::time::sleep(wait).await;
    }
    let fetched = {
        let Ok(_slot) = shared.fetch_slots.acquire().await else {
            // The worker is stopping: the URL was not started; the service serves it again
            // when its lease runs out.
            return Ok(Done::default());
        };
        fetch_leased(&shared, &frontier, &leased, lease_end).await?
    };
    let done = match &fetched {
        Fetched::Deferred(done) | Fetched::Retry { done, .. } | Fetched::Report { done, .. } => {
            done
        }
    };
    if let (Some(delay), true) = (done.delay, done.stats.requests > 0) {
        lock(&shared.last_requests, "last requests")?.ended(host, Instant::now(), delay);
    }
    match fetched {
        Fetched::Deferred(done) => Ok(done),
        Fetched::Retry {
            done,
            metadata,
            attempts,
            at,
        } => {
            retrying(shared.cfg.frontier_retry, || {
                let mut c = frontier.clone();
                let metadata = metadata.clone();
                let leased = &leased;
                async move { c.retry_at(leased, metadata, attempts, at).await }
            })
            .await?;
            Ok(done)
        }
        Fetched::Report {
            mut done,
            metadata,
            links,
            listed,
        } => {
            // Its records on the disk before the service takes it as done for good (the
            // slot is free meanwhile: other fetches go on while one sync serves many).
            on_disk(&shared, done.archived).await?;
            done.discovered = report_page(
                &frontier,
                shared.cfg.frontier_retry,
                &leased,
                metadata,
                links,
            )
            .await?;
            let archived = done.archived;
            put_listed(&shared, &frontier, &leased.url, listed, archived, &mut done).await?;
            Ok(done)
        }
    }
}

/// Fetches one leased URL (robots.txt first when its host's is not known) on a connection
/// of its own, closed when this returns: what to report.
async fn fetch_leased(
    shared: &Shared,
    frontier: &FrontierClient,
    leased: &UrlInfo,
    lease_end: Instant,
) -> Result<Fetched> {
    let cfg = &shared.cfg;
    let mut done = Done::default();
    let mut conn = HostConnection::default();
    let Some(origin) = origin_key(&leased.url) else {
        // The service accepted it, the crawler cannot fetch it (not http(s)…): given up.
        return Ok(given_up(Outcome::FetchError, None, done));
    };
    let keys = (origin.as_str(), leased.key.as_str());
    let rules = robots_rules(shared, frontier, &mut conn, keys, lease_end, &mut done).await?;
    let rules = match rules {
        HostRules::Rules(rules) => rules,
        // Its robots.txt could not be asked for a reason a retry would not change (a name
        // that does not resolve, an address the crawl refuses): given up, as the engine
        // gives up every page of such a host, without a request, counted by its kind.
        HostRules::GiveUp(failure) => {
            return Ok(given_up(Outcome::FetchError, Some(failure), done))
        }
        // Its robots.txt is asked again once the host's hold is over, under its next lease.
        HostRules::Held => {
            done.deferred = true;
            return Ok(Fetched::Deferred(done));
        }
    };
    let delay = host_delay(cfg, &rules);
    done.delay = Some(delay);
    // Whether a request went to the host under this lease (its robots.txt, its sitemaps):
    // the page then waits the host's delay after it, as the engine spaces them.
    let mut asked = done.stats.robots_fetched > 0;
    if cfg.fetch.sitemaps {
        let read = read_sitemaps(
            shared, frontier, &mut conn, leased, &rules, lease_end, &mut done,
        )
        .await?;
        match read {
            SitemapsRead::Held => {
                done.deferred = true;
                return Ok(Fetched::Deferred(done));
            }
            SitemapsRead::Requested => asked = true,
            SitemapsRead::None => {}
        }
    }
    if !rules.allowed(&leased.url) {
        return Ok(given_up(Outcome::RobotsDisallowed, None, done));
    }
    let pause = match asked {
        true => pause_before_next(shared, &leased.key, delay)?,
        false => Duration::ZERO,
    };
    if !pause.is_zero() {
        if outlasts_lease(cfg, pause, lease_end) {
            // The host's other requests took the lease's time: the URL goes back to the
            // service when its lease runs out, and is fetched under the next one.
            done.deferred = true;
            return Ok(Fetched::Deferred(done));
        }
        tokio::time::sleep(pause).await;
    }
    // Failed fetches and refusals of the URL so far, by any worker (its retries' metadata).
    let mut attempt = leased
        .metadata
        .get(ATTEMPTS_KEY)
        .and_then(|v| v.values.last())
        .and_then(|a| a.parse::<u32>().ok())
        .unwrap_or(0);
    let fetch = loop {
        let f = shared.fetcher.page(&mut conn, &leased.url).await;
        if f.failure == Some(TransportFailure::FdLimit) {
            // No descriptor was free: fetched again soon, as if not fetched (no failed
            // attempt), or under the next lease.
            done.stats.fd_shortages += 1;
            if outlasts_lease(cfg, FD_RETRY, lease_end) {
                done.deferred = true;
                return Ok(Fetched::Deferred(done));
            }
            tokio::time::sleep(FD_RETRY).await;
            continue;
        }
        done.stats.count_answer(f.body.bytes, f.retry.timed_out);
        // Every attempt's records, as `crawl` archives them: a refusal or a failure tried
        // again is in the archive too.
        done.archived = archive(shared, &f.warc)?.or(done.archived);
        let refusal = note_refusal(
            shared,
            frontier,
            &leased.key,
            f.status,
            f.retry.after,
            &mut done,
        )
        .await?;
        match cfg
            .retries()
            .after_page(refusal, f.retry.retryable, attempt)
        {
            PageNext::Finish {
                retry_after_too_long,
            } => {
                done.stats.retry_after_too_long += u64::from(retry_after_too_long);
                break f;
            }
            PageNext::Retry {
                wait,
                refused: true,
            } => {
                attempt += 1;
                done.stats.retries += 1;
                // The host's hold, and at least its delay after this answer.
                let wait = pause_before_next(shared, &leased.key, delay)?.max(wait);
                if outlasts_lease(cfg, wait, lease_end) {
                    // The wait outlasts the lease: the URL goes back to the frontier, due
                    // when the hold ends, with its attempts.
                    done.deferred = true;
                    return Ok(Fetched::retry(done, f.status, attempt, wait));
                }
                tokio::time::sleep(wait).await;
            }
            PageNext::Retry {
                wait,
                refused: false,
            } => {
                // Tried again after the back-off, as the engine does, but not under this
                // lease: the URL goes back to the frontier, due at the back-off's end, and
                // its host serves its other URLs meanwhile; the attempts go with it, to this
                // worker or another, this run or the next.
                done.stats.retries += 1;
                return Ok(Fetched::retry(done, f.status, attempt + 1, wait));
            }
        }
    };
    let outcome = fetch.outcome.unwrap_or(Outcome::FetchError);
    done.stats.count_outcome(outcome, fetch.failure);
    done.stats.count_page(&fetch);
    // Fetched as `crawl` counts pages answered (`--max-pages` too): a body that failed after
    // its status line is a fetch error, given up.
    done.fetched = outcome != Outcome::FetchError;
    done.given_up = !done.fetched;
    let mut links = fetch.links;
    // A page that turned out to be a sitemap has no out-links: its entries enter the crawl
    // as found without a link, after the page is reported (as `crawl` gives them).
    let listed = match outcome {
        Outcome::Sitemap => std::mem::take(&mut links),
        _ => Vec::new(),
    };
    links.retain(|l| shared.scope.admits(l, &mut done.stats));
    done.links = links.len() as u64;
    let mut metadata = report_metadata(outcome.name(), fetch.status);
    // The page's marks, recorded as the engine records them (its `pages` table), not acted
    // upon: a noindex page's links are followed, a canonical URL is not crawled.
    let marks = fetch.directives;
    if marks.noindex {
        metadata.push((NOINDEX_KEY.to_string(), "1".to_string()));
    }
    if let Some(canonical) = marks.canonical {
        metadata.push((CANONICAL_KEY.to_string(), canonical));
    }
    Ok(Fetched::Report {
        done,
        metadata,
        links,
        listed,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_hosts_are_kept_for_the_next_runs() {
        let dir = tempfile::tempdir().unwrap();
        let state = Some(dir.path());
        let seeds = |urls: &[&str]| urls.iter().map(|u| u.to_string()).collect::<Vec<_>>();
        let hosts = |h: &[&str]| h.iter().map(|h| h.to_string()).collect::<BTreeSet<_>>();
        let first = seed_hosts(
            state,
            &seeds(&["http://127.0.0.1:8080/", "http://a.test/x"]),
        );
        assert_eq!(first.unwrap(), hosts(&["127.0.0.1", "a.test"]));
        // A run without seeds, then one with another: the earlier runs' hosts are kept.
        assert_eq!(
            seed_hosts(state, &[]).unwrap(),
            hosts(&["127.0.0.1", "a.test"])
        );
        let more = seed_hosts(state, &seeds(&["http://10.0.0.1/"])).unwrap();
        assert_eq!(more, hosts(&["10.0.0.1", "127.0.0.1", "a.test"]));
        assert_eq!(seed_hosts(state, &[]).unwrap(), more);
        // Without a state, the run's own only.
        assert_eq!(seed_hosts(None, &[]).unwrap(), hosts(&[]));
    }

    #[test]
    fn a_panicking_task_is_caught_with_its_text() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        rt.block_on(async {
            let ok = caught(tokio::spawn(async { 7 })).await;
            assert_eq!(ok, Ok(7));
            let text = caught(tokio::spawn(async { panic!("a bug met on one URL") })).await;
            assert_eq!(text, Err::<(), _>("a bug met on one URL".to_string()));
            let n = 3;
            let formatted = caught(tokio::spawn(async move { panic!("bug {n}") })).await;
            assert_eq!(formatted, Err::<(), _>("bug 3".to_string()));
        });
    }

    #[test]
    fn kept_files_read_back_under_their_own_key_only_and_are_forgotten() {
        let dir = tempfile::tempdir().unwrap();
        let kept = Kept {
            dir: dir.path().join("backoffs"),
            what: "the back-off",
        };
        assert_eq!(kept.read("a.example"), None);
        kept.write("a.example", b"\x01\n\x02");
        assert_eq!(kept.read("a.example").as_deref(), Some(&b"\x01\n\x02"[..]));
        // `a-example` shares the file name: told apart by the key inside.
        assert_eq!(kept.path("a-example"), kept.path("a.example"));
        assert_eq!(kept.read("a-example"), None);
        kept.remove("a.example");
        assert_eq!(kept.read("a.example"), None);
        kept.remove("a.example");
        std::fs::write(kept.path("b"), b"no key line").unwrap();
        assert_eq!(kept.read("b"), None);
        // What a run killed in the middle of a write left: swept by the next run.
        let left = dir.path().join("backoffs").join(".crawlrank-x1");
        std::fs::write(&left, b"a.example\n").unwrap();
        let hour_ago = SystemTime::now() - Duration::from_secs(3600);
        let file = std::fs::File::options().write(true).open(&left).unwrap();
        file.set_modified(hour_ago).unwrap();
        kept.sweep();
        assert!(!left.exists());
        assert_eq!(kept.read("b"), None);
        assert!(kept.path("b").exists(), "a kept file is not swept");
    }

    #[test]
    fn a_node_on_every_interface_is_reached_at_the_given_host() {
        assert_eq!(
            node_url("0.0.0.0:7072", "http://frontier.example:7071"),
            "http://frontier.example:7072"
        );
        assert_eq!(
            node_url("[::]:7072", "10.0.0.5:7071"),
            "http://10.0.0.5:7072"
        );
        assert_eq!(
            node_url("10.0.0.6:7071", "http://10.0.0.5:7071"),
            "http://10.0.0.6:7071"
        );
        assert_eq!(
            node_url("http://b.example:7071", "http://a.example:7071"),
            "http://b.example:7071"
        );
    }

    #[test]
    fn retrying_gives_up_after_its_limit_and_not_on_other_errors() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            // Nothing listens on a port just released: connection refused, tried again
            // until the limit.
            let port = std::net::TcpListener::bind("127.0.0.1:0")
                .unwrap()
                .local_addr()
                .unwrap()
                .port();
            let cfg = WorkerConfig::default();
            let started = Instant::now();
            let err = connect(
                &cfg,
                &format!("http://127.0.0.1:{port}"),
                Duration::from_millis(700),
            )
            .await
            .err()
            .expect("nothing listens there");
            let took = started.elapsed();
            assert!(took >= Duration::from_millis(700), "{took:?}");
            assert!(took < Duration::from_secs(5), "{took:?}");
            assert!(format!("{err:#}").contains("--frontier-retry"), "{err:#}");

            let mut calls = 0;
            let err = retrying(Duration::from_secs(60), || {
                calls += 1;
                async { Err::<(), _>(anyhow::anyhow!("a refused call")) }
            })
            .await
            .unwrap_err();
            assert_eq!(calls, 1, "{err:#}: not tried again");
        });
    }
}
