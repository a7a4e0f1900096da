//! The `crawlrank crawl` command's inputs: its options ([`Args`], grouped as the crawler's
//! configuration is — policy, politeness, bounds, resources, requests, scope — plus what the
//! command shows and the worker's own; each group is a section of `--help`) and its seeds file
//! ([`read_seeds`]).
//!
//! Its own module because both ways of running the command read them — the crawl itself
//! ([`crawl`](super::crawl)) and a worker of a frontier service ([`crawl_worker`](super::crawl_worker),
//! `--frontier URL`) — and `crawl` hands its arguments to `crawl_worker`: with the options
//! defined in `crawl`, the two modules imported each other.

use anyhow::{ensure, Context, Result};
use crawlrank_crawler::{FetchConfig, ScopeConfig, ScopeKind};
use std::path::PathBuf;
use std::time::Duration;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Seed URLs, one per line (`#` comments and blank lines ignored). Optional when
    /// resuming: the state remembers its seeds.
    #[arg(long, value_name = "FILE")]
    pub seeds: Option<PathBuf>,
    /// The state directory: created on the first run, resumed by the next ones.
    #[arg(long, value_name = "DIR")]
    pub state: PathBuf,
    /// Stop after this many fetched pages in total (over all runs): pages a server answered,
    /// whatever the status; pages given up (robots.txt, failures) do not count.
    #[arg(long, value_name = "N")]
    pub max_pages: Option<u64>,
    /// The ordering policy and what it is given.
    #[command(flatten)]
    pub ordering: PolicyArgs,
    /// How the crawl treats each host: its delay, retries and refusals.
    #[command(flatten)]
    pub politeness: PolitenessArgs,
    /// The caps on hosts and domains and the limits on hops (docs/crawler.md, A hostile web).
    #[command(flatten)]
    pub limits: LimitArgs,
    /// What the crawl may use of the machine: sockets and memory.
    #[command(flatten)]
    pub resources: ResourceArgs,
    /// How each request is made and what is kept of it.
    #[command(flatten)]
    pub requests: RequestArgs,
    /// Which discovered URLs the crawl keeps.
    #[command(flatten)]
    pub urls: ScopeArgs,
    /// What the crawl shows while it runs.
    #[command(flatten)]
    pub report: ReportArgs,
    /// Crawling as a worker of a frontier service.
    #[command(flatten)]
    pub worker: WorkerArgs,
}

/// The ordering policy and what it is given.
#[derive(clap::Args, Debug)]
#[command(next_help_heading = "Policy")]
pub struct PolicyArgs {
    /// The ordering policy (bfs, random, backlink, indegree, batch-pagerank,
    /// partial-pagerank, opic, fica, fica-plus, ieca; rw, rw-eg and learned with --impact).
    /// A resumed crawl must name its own.
    #[arg(long, default_value = "fica")]
    pub policy: String,
    /// The search log of rw, rw-eg and learned: an impact table keyed by URL
    /// (docs/impact-input.md); each page's impact is known to the policy once the page is
    /// crawled. A resumed crawl must be given the same log.
    #[arg(long, value_name = "FILE")]
    pub impact: Option<PathBuf>,
    /// The impact column: its name in the header or its number (1 = first impact column).
    #[arg(long, value_name = "K", requires = "impact")]
    pub impact_column: Option<String>,
    /// rw-eg's (and learned's RW-EG feature's) weight ω of the real arcs against the virtual
    /// ones, in [0, 1]. Stored: a resumed crawl keeps its own.
    #[arg(long, value_name = "W", default_value_t = crawlrank_frontier::PolicyConfig::OMEGA, value_parser = super::simulate::omega)]
    pub omega: f64,
    /// Exponent γ of the out-degree factor of the walks (≥ 0). Stored: a resumed crawl keeps
    /// its own.
    #[arg(long, value_name = "G", default_value_t = crawlrank_frontier::PolicyConfig::GAMMA)]
    pub gamma: f64,
    /// Pages the crawl is expected to reach (IECA's and FICA+'s R; K = ceil(R/72)).
    /// Default: --max-pages, else 100,000.
    #[arg(long, value_name = "N")]
    pub expected_pages: Option<u64>,
    /// The batch size K (default ceil(expected/72)).
    #[arg(long, value_name = "K")]
    pub batch: Option<u64>,
    /// Seed of the random policy.
    #[arg(long, default_value_t = 0)]
    pub rng_seed: u64,
}

/// How the crawl treats each host: its delay, retries and refusals.
#[derive(clap::Args, Debug)]
#[command(next_help_heading = "Politeness")]
pub struct PolitenessArgs {
    /// Least delay between two requests to one host, in milliseconds (robots.txt's
    /// Crawl-delay, capped at 30 s, applies when larger).
    #[arg(long, value_name = "MS", default_value_t = 1000)]
    pub delay: u64,
    /// Further tries of a 5xx, a timeout or a connection failure.
    #[arg(long, default_value_t = 2)]
    pub max_retries: u32,
    /// Longest Retry-After honoured, in seconds: a 429/503 asking for longer gives its URL
    /// up (counted) and pauses its host this long.
    #[arg(long, value_name = "SECS", default_value_t = crawlrank_fetch::DEFAULT_MAX_RETRY_AFTER.as_secs())]
    pub max_retry_after: u64,
}

/// The caps on hosts and domains and the limits on hops (docs/crawler.md, A hostile web).
#[derive(clap::Args, Debug)]
#[command(next_help_heading = "Bounds on the URLs taken in")]
pub struct LimitArgs {
    /// Most URLs kept per host (spider-trap cap).
    #[arg(long, default_value_t = crawlrank_crawler::UrlLimits::DEFAULT.max_per_host)]
    pub max_pages_per_host: u64,
    /// Most hosts per registrable domain (eTLD+1: a.example.co.uk and b.example.co.uk are one):
    /// a link to a further host of the domain is dropped and counted. A wildcard-DNS site
    /// names a new host with every link, each with its own robots.txt and URL quota.
    #[arg(long, value_name = "N",
          default_value_t = crawlrank_crawler::UrlLimits::DEFAULT.max_hosts_per_domain)]
    pub max_hosts_per_domain: u64,
    /// Most URLs kept per registrable domain, over all its hosts; a new URL past it is dropped
    /// and counted.
    #[arg(long, value_name = "N",
          default_value_t = crawlrank_crawler::UrlLimits::DEFAULT.max_per_domain)]
    pub max_urls_per_domain: u64,
    /// Most URLs discovered in all (seeds included); a new URL past it is refused and
    /// counted. At most, and by default, 2^32 - 1: page ids are 32-bit.
    #[arg(long, value_name = "N", default_value_t = crawlrank_crawler::MAX_URLS,
          value_parser = clap::builder::RangedU64ValueParser::<u64>::new()
              .range(1..=crawlrank_crawler::MAX_URLS))]
    pub max_urls: u64,
    /// Most link hops from a seed (Heritrix's hop limit: calendars and other endless spaces
    /// no URL rule sees). A new URL further away is dropped and counted. Default: no limit.
    #[arg(long, value_name = "N")]
    pub max_hops: Option<u32>,
    /// Most redirects followed in a row; the target of a longer chain is dropped and counted.
    #[arg(long, value_name = "N", default_value_t = crawlrank_crawler::DEFAULT_MAX_REDIRECTS)]
    pub max_redirects: u32,
}

/// What the crawl may use of the machine: sockets and memory.
#[derive(clap::Args, Debug)]
#[command(next_help_heading = "Resources")]
pub struct ResourceArgs {
    /// Requests in flight at most (never more than one per host). With the idle
    /// connections, this bounds the open sockets and the open files needed:
    /// concurrency + idle connections + 64, checked against the open-file limit at start.
    #[arg(long, default_value_t = 16)]
    pub concurrency: usize,
    /// Idle kept-alive connections at most, kept for hosts fetched again soon (default: what
    /// the open-file limit leaves room for, at most 4096, at least --concurrency).
    #[arg(long, value_name = "N")]
    pub max_idle_connections: Option<usize>,
    /// URL keys the seen-set caches in memory (about 28 bytes each); the others are looked up
    /// in the state on disk, behind a Bloom filter (docs/crawler.md, Resources).
    #[arg(long, value_name = "N", default_value_t = crawlrank_crawler::DEFAULT_SEEN_CACHE,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(2..))]
    pub seen_cache: usize,
    /// Frontier entries kept in memory (16 bytes each) by the priority policies; the rest
    /// spill to sorted runs in STATE/spill, the crawl order unchanged. 0 keeps all in memory.
    #[arg(long, value_name = "N", default_value_t = crawlrank_crawler::DEFAULT_FRONTIER_HOT)]
    pub frontier_hot: usize,
}

/// How each request is made and what is kept of it.
#[derive(clap::Args, Debug)]
#[command(next_help_heading = "Requests")]
pub struct RequestArgs {
    /// The User-Agent header; its first word is matched against robots.txt groups.
    #[arg(long)]
    pub user_agent: Option<String>,
    /// Send every request through this HTTP proxy, http://[USER:PASSWORD@]HOST[:PORT]
    /// (e.g. a local test web: http://127.0.0.1:PORT).
    #[arg(long, value_name = "URL")]
    pub proxy: Option<String>,
    /// Also trust the certificate authorities in this PEM file for HTTPS (repeatable), e.g.
    /// the one `crawlrank serve --tls --ca-out FILE` writes.
    #[arg(long, value_name = "FILE")]
    pub ca_cert: Vec<PathBuf>,
    /// Total timeout of one request, in seconds.
    #[arg(long, default_value_t = 30)]
    pub timeout: u64,
    /// Largest body fetched, in bytes.
    #[arg(long, default_value_t = 10 << 20)]
    pub max_body: usize,
    /// Most distinct links kept per HTML page, the first ones in page order; the others are
    /// counted (links over cap). Sitemaps have their own limits (50,000 entries).
    #[arg(long, value_name = "N", default_value_t = 6_000,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub max_links_per_page: usize,
    /// Do not write WARC files.
    #[arg(long)]
    pub no_warc: bool,
    /// What goes into the WARC files: all (every response, non-HTML bodies up to --max-body,
    /// marked WARC-Truncated when cut) or html (HTML pages and sitemaps only).
    #[arg(long, value_name = "all|html", default_value = "all", value_parser = ["all", "html"])]
    pub archive: String,
    /// Do not read sitemaps. By default each seed host's /sitemap.xml and the Sitemap: files
    /// its robots.txt names on that host are fetched, as side requests like robots.txt (not
    /// pages: outside --max-pages and the link graph), and their entries enter the frontier
    /// as seeds do (docs/crawler.md, Sitemaps).
    #[arg(long)]
    pub no_sitemaps: bool,
    /// Connect to loopback, private (10/8, 172.16/12, 192.168/16), shared, link-local,
    /// unique-local, multicast, broadcast and unspecified addresses of any host. By default
    /// only the seeds' own hosts may be at such an address: a link, a redirect or a DNS
    /// answer that leads another host to one is refused, never connected to (counted:
    /// private address refused). Through --proxy only IP-literal URLs can be checked (the
    /// proxy resolves names). Not stored: a resume names it again.
    #[arg(long)]
    pub allow_private_networks: bool,
    /// A name server to resolve host names with, IP:PORT (repeat for more; default: those of
    /// /etc/resolv.conf). Answers are cached for their TTL; a lookup gets --dns-timeout
    /// seconds; a name whose lookups fail 3 times in a row is given up for the run.
    #[arg(long, value_name = "IP:PORT")]
    pub dns_server: Vec<std::net::SocketAddr>,
    /// Seconds a host name's lookup may take, every server and retry included.
    #[arg(long, default_value_t = 5, value_name = "SECONDS")]
    pub dns_timeout: u64,
}

/// Which discovered URLs the crawl keeps.
#[derive(clap::Args, Debug)]
#[command(next_help_heading = "Scope")]
pub struct ScopeArgs {
    /// Which hosts the crawl stays on: any, domain (the seeds' registrable domains) or host
    /// (the seeds' host names). Out-of-scope URLs are counted, never requested.
    #[arg(long, value_name = "any|domain|host", default_value = "any", value_parser = scope_kind)]
    pub scope: ScopeKind,
    /// Keep only URLs matching this regex (repeatable: matching any one is enough).
    #[arg(long, value_name = "REGEX")]
    pub include: Vec<String>,
    /// Drop URLs matching this regex (repeatable).
    #[arg(long, value_name = "REGEX")]
    pub exclude: Vec<String>,
}

/// What the crawl shows while it runs.
#[derive(clap::Args, Debug)]
#[command(next_help_heading = "Dashboard and progress")]
pub struct ReportArgs {
    /// Serve a live dashboard while crawling: a web page at http://ADDR/ that updates itself,
    /// its JSON at /api/status and Prometheus metrics at /metrics (e.g. 127.0.0.1:7070; port
    /// 0: any free port, printed). Loopback only unless --dashboard-public.
    #[arg(long, value_name = "ADDR")]
    pub dashboard: Option<String>,
    /// Allow a non-loopback --dashboard address (the dashboard has no authentication).
    #[arg(long, requires = "dashboard")]
    pub dashboard_public: bool,
    /// Keep serving the dashboard this many seconds after the crawl ends.
    #[arg(long, value_name = "SECS", default_value_t = 0, requires = "dashboard")]
    pub dashboard_linger: u64,
    /// Write the crawl's counters to FILE about once a second and at the end: tab-separated,
    /// a header line first (replaced at each run). For benchmarks and monitors, which cannot
    /// open the state while the crawl holds it and see no progress line when output is piped.
    #[arg(long, value_name = "FILE")]
    pub progress_log: Option<PathBuf>,
}

/// Crawling as a worker of a frontier service.
#[derive(clap::Args, Debug)]
#[command(next_help_heading = "Crawl worker (--frontier)")]
pub struct WorkerArgs {
    /// Crawl as a worker of a frontier service at URL (`crawlrank frontier serve`, or any
    /// URLFrontier server) instead of a frontier kept in --state: URLs are leased from it in
    /// its policy's order and reported back with their out-links; robots.txt, fetching, link
    /// extraction and WARC (in STATE/warc) stay here. Several workers may share one crawl
    /// (docs/frontier-service.md, Workers). The service's policy orders the crawl: the
    /// options that belong to the service (--policy, --seen-cache, …) are refused with it.
    #[arg(long, value_name = "URL")]
    pub frontier: Option<String>,
    /// With --frontier: the crawl id within the service (empty: its default crawl).
    #[arg(long, value_name = "ID", default_value = "", requires = "frontier")]
    pub crawl_id: String,
    /// With --frontier: seconds a leased URL stays this worker's; a killed worker's URLs are
    /// served again after it.
    #[arg(long, value_name = "SECS", default_value_t = 60, requires = "frontier")]
    pub lease: u32,
    /// With --frontier: stop when nothing was served for this long while no URL was leased
    /// by any worker (what is left is blocked or limited).
    #[arg(long, value_name = "SECS", default_value_t = 60, requires = "frontier")]
    pub idle_exit: u64,
    /// With --frontier: report pages with plain URLFrontier `PutURLs` (out-links with
    /// `url.path`, then the page's update) even when the service has crawlrank's `ReportPage`.
    #[arg(long, requires = "frontier")]
    pub plain_urlfrontier: bool,
    /// With --frontier: while the frontier cannot be reached (a node restarting), its calls
    /// are tried again with a doubling pause for up to this many seconds; the fetches in
    /// flight finish and are reported when it is back. Longer: the worker stops with an
    /// error.
    #[arg(long, value_name = "SECS", default_value_t = crawlrank_worker::DEFAULT_FRONTIER_RETRY_SECS, requires = "frontier")]
    pub frontier_retry: u64,
}
impl RequestArgs {
    /// How requests are made, from the options a crawl and a crawl worker share.
    pub(super) fn fetch_config(&self) -> FetchConfig {
        let mut f = FetchConfig::default();
        if let Some(ua) = &self.user_agent {
            f.user_agent = ua.clone();
        }
        f.proxy = self.proxy.clone();
        f.ca_certs = self.ca_cert.clone();
        f.timeout = Duration::from_secs(self.timeout.max(1));
        f.connect_timeout = f.timeout.min(Duration::from_secs(10));
        f.max_body = self.max_body;
        f.url_rules.max_links_per_page = self.max_links_per_page;
        f.warc = !self.no_warc;
        f.sitemaps = !self.no_sitemaps;
        f.archive_all = self.archive == "all";
        f.allow_private_networks = self.allow_private_networks;
        f.dns.servers = self.dns_server.clone();
        f.dns.timeout = Duration::from_secs(self.dns_timeout.max(1));
        f
    }
}

impl ScopeArgs {
    /// Which discovered URLs are kept (`--scope`, `--include`, `--exclude`).
    pub(super) fn scope_config(&self) -> ScopeConfig {
        ScopeConfig {
            kind: self.scope,
            include: self.include.clone(),
            exclude: self.exclude.clone(),
        }
    }
}

fn scope_kind(s: &str) -> Result<ScopeKind, String> {
    ScopeKind::parse(s).map_err(|e| e.to_string())
}

/// Reads the seed URLs: one per line, or `id<TAB>url` as `crawlrank seeds` writes them (the
/// URL is taken); `#` starts a comment line. A bare page id cannot be crawled: the error says
/// how to get URLs.
pub(super) fn read_seeds(path: &PathBuf) -> Result<Vec<String>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read the seeds {}", path.display()))?;
    let mut seeds = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let url = match line.split_once('\t') {
            Some((_, url)) => url.trim(),
            None => line,
        };
        ensure!(
            !url.is_empty() && !url.bytes().all(|b| b.is_ascii_digit()),
            "{}:{}: '{line}' is a page id, not a URL: a crawl starts from URLs (`crawlrank seeds` \
             writes `id<TAB>url` lines for a graph with URLs)",
            path.display(),
            i + 1
        );
        seeds.push(url.to_string());
    }
    Ok(seeds)
}
