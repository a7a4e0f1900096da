//! The crawl loop: one thread that owns the frontier, the URL table (`crawlrank_crawl_state::UrlTable`), the
//! robots.txt table ([`crawlrank_fetch::robots`]), the politeness scheduler (`crate::politeness`), the
//! requests in flight (`crate::in_flight`) and the state store, and drives them.
//!
//! Why one owner thread: the frontier's policy updates (a batch PageRank every K pages) and
//! the store's commits are CPU and disk work that must not stall the async I/O threads, and
//! a single owner needs no locks and makes the order of frontier calls — which the event log
//! records and a restart replays — the order in which this thread made them.
//!
//! One step of the loop: wait for fetch results (or a timer); handle all that arrived
//! (intern links, `on_crawled`, WARC append, retries); commit the step's events, new URLs,
//! WARC position and counters in one durable transaction; only then fill the free request
//! slots (pop, queue by host, start fetches that politeness allows). Because a slot is
//! reused only after its page's result is committed, a `kill -9` can only lose the pages of
//! the `--concurrency` slots in flight, and those were logged as popped: the next run
//! fetches them again, first. The WARC files are cut back to the committed position, so no
//! record of an uncommitted fetch stays behind either.

use crate::in_flight::{Done, InFlight, PageTicket};
use crate::politeness::{Scheduler, Waiting};
use crate::ranking::{
    merge_marks, SnapshotJob, SnapshotSchedule, PAGE_MARKS_SNAPSHOT, RANKING_SNAPSHOT,
};
use crate::resume;
use crate::search_log::SearchLog;
use crate::store::{Event, Loaded, SeenReader, StepWrites, Store};
use anyhow::{bail, ensure, Context, Result};
use crawlrank_crawl_state::{BeyondLimit, CrawlLimits, Hops};
use crawlrank_crawl_state::{Interned, OriginId, UrlTable};
use crawlrank_crawl_state::{SeenCounts, DEFAULT_CACHE_ENTRIES as SEEN_CACHE_ENTRIES};
use crawlrank_fetch::addresses::AddressGuard;
use crawlrank_fetch::backoff::{Backoffs, PageNext, Retries, RetryAfter};
use crawlrank_fetch::connections::IDLE_GRACE;
use crawlrank_fetch::fds::{self, FdBudget, FD_RETRY};
use crawlrank_fetch::fetch::{FetchConfig, PageFetch, RobotsFetch, SitemapFetch, SitemapStep};
use crawlrank_fetch::links;
use crawlrank_fetch::page::{Outcome, PageMeta, TransportFailure};
use crawlrank_fetch::robots::{self, RobotsRules};
use crawlrank_fetch::robots_table::{AfterFetch, HostRobots, RobotsTable};
use crawlrank_fetch::scope::{Scope, ScopeConfig};
use crawlrank_fetch::sitemap::SitemapQueue;
use crawlrank_fetch::warc::{WarcPosition, WarcWriter};
use crawlrank_fetch::Stats;
use crawlrank_frontier::{
    Frontier, Impacts, PageId, PolicyConfig, PolicyKind, PolicySpec, ReorderStats, SpillConfig,
    SpillStatus,
};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Everything a crawl run is told: where and from which seeds, and its parts — the policy
/// ([`PolicySettings`]), the politeness towards each host ([`Politeness`]), the bounds on what
/// it takes in ([`CrawlLimits`]), the machine's resources it may use ([`Resources`]) and how
/// each request is made ([`FetchConfig`]). Each part has its own `Default`, the library's.
#[derive(Debug, Clone)]
pub struct CrawlConfig {
    /// The state directory (created on the first run, resumed after).
    pub state_dir: PathBuf,
    /// Seed URLs (a resumed crawl may add new ones; known ones are ignored).
    pub seeds: Vec<String>,
    /// Stop after this many fetched pages (answered by a server, any status) in total, over
    /// all runs; pages given up (robots.txt, failures) do not count.
    pub max_pages: Option<u64>,
    /// The ordering policy and what it is given.
    pub policy: PolicySettings,
    /// How the crawl treats each host: delays, retries, back-off.
    pub politeness: Politeness,
    /// The bounds on the URLs the crawl takes in (spider-trap caps, hops, redirects).
    pub limits: CrawlLimits,
    /// What the crawl may use of the machine: connections, memory, threads, disk.
    pub resources: Resources,
    /// How each request is made: user agent, timeouts, body cap, proxy, CAs, URL rules, WARC.
    pub fetch: FetchConfig,
    /// Which discovered URLs may enter the frontier (`--scope`, `--include`, `--exclude`).
    pub scope: ScopeConfig,
    /// Report this many best-scored pages of the frontier and of the crawled pages in
    /// [`Progress`] (a live dashboard's tables); 0, the default, computes nothing. Found by
    /// one pass over the pages' scores at most once a second (`crate::top`).
    pub report_top: usize,
}

impl Default for CrawlConfig {
    fn default() -> Self {
        Self {
            state_dir: PathBuf::from("crawl-state"),
            seeds: Vec::new(),
            max_pages: None,
            policy: PolicySettings::default(),
            politeness: Politeness::default(),
            limits: CrawlLimits::default(),
            resources: Resources::default(),
            fetch: FetchConfig::default(),
            scope: ScopeConfig::default(),
            report_top: 0,
        }
    }
}

/// The ordering policy of a crawl and what it is given; [`CrawlConfig::policy_spec`] turns
/// it into the frontier's [`PolicySpec`], which the state keeps.
#[derive(Debug, Clone)]
pub struct PolicySettings {
    /// The ordering policy. A resumed crawl must name the same one.
    pub kind: PolicyKind,
    /// `R` for IECA and FICA+ (and K's default); default `max_pages`, else 100,000.
    pub expected_pages: Option<u64>,
    /// K; default `ceil(expected_pages / 72)`.
    pub batch: Option<u64>,
    /// `n` for OPIC's initial cash; default `expected_pages`.
    pub total_pages: Option<u64>,
    /// Seed of the `random` policy's generator.
    pub rng_seed: u64,
    /// The search log of `rw`, `rw-eg` and `learned` (`--impact FILE`), which need one; the
    /// other policies take none.
    pub impacts: Option<Arc<SearchLog>>,
    /// `rw-eg`'s and `learned`'s ω (`--omega`).
    pub omega: f64,
    /// The walks' γ (`--gamma`).
    pub gamma: f64,
}

impl Default for PolicySettings {
    fn default() -> Self {
        Self {
            kind: PolicyKind::Fica,
            expected_pages: None,
            batch: None,
            total_pages: None,
            rng_seed: 0,
            impacts: None,
            omega: PolicyConfig::OMEGA,
            gamma: PolicyConfig::GAMMA,
        }
    }
}

impl From<PolicyKind> for PolicySettings {
    /// The policy `kind` with the default settings.
    fn from(kind: PolicyKind) -> Self {
        Self {
            kind,
            ..Self::default()
        }
    }
}

/// How a crawl treats each host: the least delay between its requests, the retries of a
/// failed one and how long a host may make it wait.
#[derive(Debug, Clone)]
pub struct Politeness {
    /// Least delay between two requests to one host (`--delay`).
    pub delay: Duration,
    /// Cap on robots.txt's Crawl-delay.
    pub max_crawl_delay: Duration,
    /// Further tries of a 5xx / timeout / connection failure.
    pub max_retries: u32,
    /// First retry's delay; doubled at each further try.
    pub retry_backoff: Duration,
    /// `--max-retry-after`: a longer `Retry-After` gives its URL up (crawlrank_fetch::backoff).
    pub max_retry_after: Duration,
}

impl Politeness {
    /// How a failed or refused request is tried again.
    pub fn retries(&self) -> Retries {
        Retries {
            max_retries: self.max_retries,
            retry_backoff: self.retry_backoff,
        }
    }
}

impl Default for Politeness {
    fn default() -> Self {
        Self {
            delay: Duration::ZERO,
            max_crawl_delay: Duration::from_secs(30),
            max_retries: 2,
            retry_backoff: Duration::from_secs(1),
            max_retry_after: crawlrank_fetch::backoff::DEFAULT_MAX_RETRY_AFTER,
        }
    }
}

/// What a crawl may use of the machine (docs/crawler.md, Resources).
#[derive(Debug, Clone)]
pub struct Resources {
    /// Requests in flight at most (one connection each).
    pub concurrency: usize,
    /// Idle kept-alive connections at most; default: what the open-file limit leaves room
    /// for, up to [`DEFAULT_MAX_IDLE_CONNECTIONS`] ([`Resources::idle_connections`]). Open
    /// sockets stay at most `concurrency` + this ([`Resources::fd_budget`]).
    pub max_idle_connections: Option<usize>,
    /// Most popped pages waiting for their host; default `max(256, 8 × concurrency)`.
    pub max_waiting: Option<usize>,
    /// Most URL keys the seen-set caches in memory (crawlrank_crawl_state::SeenSet); the others are read from
    /// the state. Default [`crawlrank_crawl_state::DEFAULT_CACHE_ENTRIES`].
    pub seen_cache: usize,
    /// Frontier entries the priority policies keep in memory; the rest spill to sorted runs
    /// in `STATE/spill` (crawlrank_frontier::SpillingHeap), the order unchanged. 0 keeps them
    /// all in memory. Default [`DEFAULT_FRONTIER_HOT`].
    pub frontier_hot: usize,
    /// Tokio worker threads.
    pub io_threads: usize,
    /// WARC files rotate past this size.
    pub warc_max_size: u64,
    /// After a stop request, wait this long for the requests in flight.
    pub stop_grace: Duration,
}

impl Default for Resources {
    fn default() -> Self {
        Self {
            concurrency: 16,
            max_idle_connections: None,
            max_waiting: None,
            seen_cache: SEEN_CACHE_ENTRIES,
            frontier_hot: DEFAULT_FRONTIER_HOT,
            io_threads: 2,
            warc_max_size: 1 << 30,
            stop_grace: Duration::from_secs(5),
        }
    }
}

impl Resources {
    /// Idle kept-alive connections at most, under an open-file limit of `open_files`:
    /// `max_idle_connections`; else the room the limit leaves beside `concurrency`
    /// connections in flight and [`fds::RESERVED_FDS`], at most
    /// [`DEFAULT_MAX_IDLE_CONNECTIONS`] and at least `concurrency` (a limit too low for that
    /// is the error of [`fds::check_open_file_limit`]).
    pub fn idle_connections(&self, open_files: u64) -> usize {
        self.max_idle_connections.unwrap_or_else(|| {
            let room = open_files.saturating_sub(fds::RESERVED_FDS + self.concurrency as u64);
            let room = usize::try_from(room).unwrap_or(usize::MAX);
            room.min(DEFAULT_MAX_IDLE_CONNECTIONS).max(self.concurrency)
        })
    }

    /// The file descriptors this crawl may hold at once under an open-file limit of
    /// `open_files`: `concurrency` connections in flight,
    /// [`idle_connections`](Self::idle_connections) idle ones, and [`fds::RESERVED_FDS`] for
    /// the rest (docs/crawler.md, Connections).
    pub fn fd_budget(&self, open_files: u64) -> FdBudget {
        FdBudget::new(self.concurrency, self.idle_connections(open_files))
    }
}

impl CrawlConfig {
    /// The policy and frontier configuration of a new crawl: `R` is `--expected-pages`, else
    /// `--max-pages`, else 100,000; `n` is `--total-pages`, else `R`; `K` is `--batch`, else
    /// its default for `R`.
    pub fn policy_spec(&self) -> PolicySpec {
        let p = &self.policy;
        let expected = p.expected_pages.or(self.max_pages).unwrap_or(100_000);
        let defaults = PolicyConfig::for_crawl(expected, p.total_pages.unwrap_or(expected));
        PolicySpec {
            kind: p.kind,
            config: PolicyConfig {
                batch: p.batch.unwrap_or(defaults.batch),
                rng_seed: p.rng_seed,
                impact: p.impacts.as_ref().map(|_| Impacts::new(Vec::new())),
                impact_digest: p.impacts.as_ref().map(|l| l.digest),
                omega: p.omega,
                gamma: p.gamma,
                ..defaults
            },
        }
    }
}

/// A snapshot for the progress line.
#[derive(Debug, Clone, Default)]
pub struct Progress {
    /// Pages fetched (any outcome) in this run.
    pub pages_this_run: u64,
    /// Pages per second in this run.
    pub pages_per_sec: f64,
    /// Pages finished over all runs.
    pub pages_total: u64,
    /// Pages in the frontier: discovered, not yet popped.
    pub frontier: usize,
    /// Popped pages waiting for their host.
    pub waiting: usize,
    /// Requests in flight (pages, robots.txt files and sitemaps).
    pub in_flight: usize,
    /// Hosts discovered (distinct scheme, host and port).
    pub hosts: usize,
    /// Hosts the politeness scheduler holds state for: pages queued, a request in flight or
    /// a delay still running (the others are forgotten, see docs/crawler.md, Resources).
    pub hosts_active: usize,
    /// URLs discovered over all runs.
    pub discovered: usize,
    /// Pages that ended in an HTTP error, a fetch error or an over-size body, over all runs.
    pub errors: u64,
    /// Idle kept-alive connections open.
    pub idle_connections: usize,
    /// Fetches allowed at once now: `concurrency`, less for a while after file descriptors
    /// ran short.
    pub fetch_limit: usize,
    /// Shortages of file descriptors over all runs ([`Stats::fd_shortages`]).
    pub fd_shortages: u64,
    /// The crawl's counters, over all runs (what the final summary prints).
    pub stats: Stats,
    /// The best-scored URLs still in the frontier with their policy scores, best first: at
    /// most [`CrawlConfig::report_top`], refreshed at most once a second; empty when 0.
    pub frontier_top: Vec<(Arc<str>, f64)>,
    /// The best-scored URLs popped so far (crawled or in flight): the ranking so far, as
    /// [`frontier_top`](Self::frontier_top).
    pub ranking_top: Vec<(Arc<str>, f64)>,
}

/// Why a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopReason {
    /// The frontier is empty and nothing waits.
    Exhausted,
    /// `--max-pages` reached.
    MaxPages,
    /// A stop was requested (Ctrl-C).
    Interrupted,
}

/// What a resumed crawl found wrong with its WARC output, and repaired (crawlrank_fetch::warc).
#[derive(Debug, Clone, Default)]
pub struct WarcRecovery {
    /// Files past the one the state committed, removed: a rotation the state never recorded.
    pub removed: Vec<PathBuf>,
    /// The committed file, found shorter than the state's position for it.
    pub damage: Option<WarcDamage>,
}

/// A WARC file found shorter than the state's position for it: cut back to its last whole
/// record, the pages whose records it lost fetched again for the archive.
#[derive(Debug, Clone)]
pub struct WarcDamage {
    /// The file.
    pub path: PathBuf,
    /// The length the state committed for it.
    pub committed: u64,
    /// Its length as found.
    pub found: u64,
    /// The length kept: the end of its last whole record.
    pub kept: u64,
    /// Crawled pages whose records are gone, now fetched again for the archive.
    pub lost_pages: u64,
}

/// What a run did.
#[derive(Debug, Clone)]
pub struct CrawlReport {
    /// What opening the WARC output found and repaired (nothing, after a clean stop).
    pub warc_recovery: WarcRecovery,
    /// Why the run ended.
    pub stop: StopReason,
    /// The crawl's counters, over all runs.
    pub stats: Stats,
    /// Pages finished (any outcome) in this run.
    pub pages_this_run: u64,
    /// Wall-clock time of this run.
    pub elapsed: Duration,
    /// URLs discovered over all runs.
    pub discovered: usize,
    /// Pages finished (any outcome) over all runs.
    pub crawled: u64,
    /// Pages left in the frontier: discovered, never popped.
    pub frontier: usize,
    /// Pages popped but not finished (fetched first by the next run).
    pub pending: usize,
    /// Hosts discovered (distinct scheme, host and port).
    pub hosts: usize,
    /// Where this run's seen-set lookups were answered: the Bloom filter, memory, the state.
    pub seen: SeenCounts,
    /// The frontier's cold part on disk, when its policy keeps a priority queue and
    /// spilling is on: how much is where, and whether writes failed.
    pub spill: Option<SpillStatus>,
    /// This run's reorders on the frontier's thread (`learned`'s): their time, the time the
    /// crawl waited for them, the pages it took in meanwhile.
    pub reorders: ReorderStats,
}

/// A crawl run: the one owner of the crawl's parts (see the module docs), driving them from
/// one thread.
struct Engine {
    cfg: CrawlConfig,
    store: Store,
    /// What the current step will commit ([`commit`](Self::commit)).
    writes: StepWrites,
    /// The counters changed since the last commit.
    stats_dirty: bool,
    stats: Stats,
    frontier: Frontier,
    urls: UrlTable<SeenReader>,
    /// Which links may enter the frontier.
    scope: Scope,
    /// The hosts of the crawl's seeds: their robots.txt `Sitemap:` files are read.
    seed_hosts: std::collections::HashSet<OriginId>,
    /// The sitemap files queued, fetched as side requests of their host (crawlrank_fetch::sitemap).
    sitemaps: SitemapQueue,
    robots: RobotsTable,
    sched: Scheduler,
    /// Each page's link and redirect hops from the seeds.
    hops: Hops,
    /// Hosts slowed down by their 429/503 answers.
    backoffs: Backoffs<OriginId>,
    in_flight: InFlight,
    /// The WARC output and what repairing it left to do.
    archive: Archive,
    /// The ranking snapshots of the running crawl.
    snapshots: Snapshots,
    /// How far the crawl has got.
    counts: Counts,
    /// Stop popping while this many pages wait for their host.
    max_waiting: usize,
    /// The last [`CrawlConfig::report_top`] lists.
    top: crate::top::TopLists,
}

/// How far a crawl has got: pops and finished pages over all runs, pages finished in this
/// run, and the next pop's sequence number.
#[derive(Debug, Default)]
struct Counts {
    /// Pages popped over all runs.
    popped: u64,
    /// Pages finished over all runs.
    crawled: u64,
    /// Pages finished in this run.
    pages_this_run: u64,
    /// The next pop sequence number (a page's place in its host's queue).
    pop_seq: u64,
}

/// The crawl's WARC output: its writer (none when WARC is off), the pages whose records a
/// damaged file lost, and what opening it found.
struct Archive {
    writer: Option<WarcWriter>,
    /// Pages crawled whose WARC records a damaged file lost: fetched again for the archive
    /// only (the frontier and the log never hear of it), then taken off (crawlrank_fetch::warc).
    refetch: BTreeSet<PageId>,
    /// What opening the WARC output found and repaired, for the report.
    recovery: WarcRecovery,
}

/// The ranking snapshots of a running crawl: when the next is due, the one being written,
/// and the wait after one failed for want of file descriptors.
struct Snapshots {
    schedule: SnapshotSchedule,
    /// The ranking snapshot being written, if any.
    job: Option<SnapshotJob>,
    /// No snapshot is tried before this time (after one failed for want of file
    /// descriptors).
    not_before: Instant,
}

/// How often the progress callback is called.
const PROGRESS_INTERVAL: Duration = Duration::from_millis(250);

/// How often the [`CrawlConfig::report_top`] lists are retaken at most.
const TOP_INTERVAL: Duration = Duration::from_secs(1);

/// Longest wait for a fetch result before the loop looks at its timers and the stop flag.
const POLL_INTERVAL: Duration = Duration::from_millis(100);

/// How often the loop looks whether a reorder running on the frontier's thread is done.
const REORDER_POLL: Duration = Duration::from_millis(2);

/// The most idle connections kept by default (`--max-idle-connections`): enough to keep one
/// to every host fetched in the last second or so of a fast crawl, where a cap of
/// `--concurrency` made six of seven requests open a new connection on a web of 2,500 hosts
/// crawled in priority order (docs/performance.md, "Against spider"); each costs a socket
/// and tens of KB, for at most its host's delay plus a second ([`IDLE_GRACE`]).
pub const DEFAULT_MAX_IDLE_CONNECTIONS: usize = 4096;

/// How long the end of a run (its last commit and snapshot) waits for file descriptors.
const FD_WAIT_AT_END: Duration = Duration::from_secs(30);

/// Runs (or resumes) a crawl until the frontier is exhausted, `max_pages` is reached or
/// `stop` is set. `progress` is called about four times a second.
pub fn crawl(
    cfg: &CrawlConfig,
    stop: &AtomicBool,
    progress: &mut dyn FnMut(&Progress),
) -> Result<CrawlReport> {
    if cfg.resources.concurrency == 0 {
        bail!("--concurrency must be at least 1");
    }
    let limit = fds::raise_open_file_limit()
        .map_err(|e| anyhow::anyhow!("cannot read the open-file limit (RLIMIT_NOFILE): {e}"))?;
    let budget = cfg.resources.fd_budget(limit.soft);
    fds::check_open_file_limit(budget, limit, cfg.resources.concurrency)?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(cfg.resources.io_threads.max(1))
        .enable_all()
        .build()
        .context("cannot start the I/O runtime")?;
    // The connection pool keeps the idle cap the budget was checked with.
    let mut engine = Engine::open(cfg, budget.idle as usize, rt.handle().clone())?;
    let result = engine.run(stop, progress);
    // Whatever happened, requests still in flight are abandoned: their pages are logged as
    // popped and will be fetched first by the next run.
    rt.shutdown_timeout(Duration::from_millis(200));
    result
}

pub use crawlrank_frontier::DEFAULT_FRONTIER_HOT;

/// The scratch directory of the frontier's cold part, inside the state (see
/// [`Resources::frontier_hot`]).
pub fn spill_dir(state_dir: &Path) -> PathBuf {
    state_dir.join("spill")
}

/// `spec` with the frontier's cold part spilled to [`spill_dir`] unless `--frontier-hot 0`.
/// The state is ours (its database is locked), so whatever an earlier run left in the spill
/// directory — its runs, if it was killed — is scratch and removed first: the frontier is
/// rebuilt from the log, never from them.
fn with_spill(mut spec: PolicySpec, cfg: &CrawlConfig) -> Result<PolicySpec> {
    spec.config.spill =
        SpillConfig::for_crawl(spill_dir(&cfg.state_dir), cfg.resources.frontier_hot)?;
    Ok(spec)
}

/// The frontier configuration of the crawl in `store`: the stored one, which a resumed crawl
/// must not contradict (its policy, and its search log's digest); else `cfg`'s, validated
/// (before anything is written, so a typo leaves no state behind) and stored. A policy that
/// needs impacts is given an empty vector: the engine reports each page's impact as it
/// discovers the page.
fn frontier_config(cfg: &CrawlConfig, store: &Store, loaded: &Loaded) -> Result<PolicySpec> {
    let wanted = cfg.policy_spec();
    let log = cfg.policy.impacts.as_deref();
    if let Some(c) = &loaded.config {
        if c.kind != wanted.kind {
            bail!(
                "{} holds a crawl with policy '{}', not '{}'; resume it with --policy {} or use another --state",
                cfg.state_dir.display(),
                c.kind,
                wanted.kind,
                c.kind
            );
        }
        if let Some(stored) = c.config.impact_digest {
            match log {
                None => bail!(
                    "{} holds a {} crawl, which reads a search log: resume it with the same --impact FILE",
                    cfg.state_dir.display(),
                    c.kind
                ),
                Some(l) if l.digest != stored => bail!(
                    "{} is not the search log the crawl in {} started with (its pages or impacts differ): \
                     resume with the same --impact FILE and --impact-column",
                    l.path.display(),
                    cfg.state_dir.display()
                ),
                Some(_) => {}
            }
        }
        let mut c = c.clone();
        if c.kind.needs_impact() {
            c.config.impact = Some(Impacts::new(Vec::new()));
        }
        return Ok(c);
    }
    if wanted.kind.needs_impact() && log.is_none() {
        bail!(
            "the policy {} orders the crawl by the impact of pages: give a search log, --impact FILE \
             (docs/impact-input.md)",
            wanted.kind
        );
    }
    if !wanted.kind.needs_impact() && log.is_some() {
        bail!(
            "--impact is read by the policies rw, rw-eg and learned only, not by {}",
            wanted.kind
        );
    }
    wanted.config.check()?;
    store.set_config(&wanted)?;
    Ok(wanted)
}

/// Gives the pages of one logged event their hops: seeds none, a crawled page's links theirs
/// (a redirect's one link is its target).
fn apply_hops(hops: &mut Hops, event: &Event) {
    match event {
        Event::Seed(ids) => ids.iter().for_each(|&id| hops.seed(id)),
        Event::Popped(_) => {}
        Event::Crawled {
            id, outcome, links, ..
        } => {
            let d = hops.of_links(*id, *outcome == Outcome::Redirect);
            for &l in links {
                hops.reach(l, d);
            }
        }
    }
}

/// Hands the allocator's free pages back to the system. glibc keeps what its per-thread
/// arenas freed — a snapshot's buffers, the bodies and link lists the I/O threads allocated
/// and this thread freed — resident until it is reused; trimmed after each snapshot (every
/// 30 s or more), the crawl's RSS follows what it holds (docs/crawler.md, Resources).
fn release_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only walks the allocator's own free lists; it takes no pointer.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// The URL of page `id`: `unsaved` when discovered since the last commit, else what `stored`
/// reads from the store; a page with neither is an error (the state lost it).
fn url_of(
    id: PageId,
    unsaved: Option<&Arc<str>>,
    stored: impl FnOnce(PageId) -> Result<Option<String>>,
) -> Result<Arc<str>> {
    if let Some(u) = unsaved {
        return Ok(u.clone());
    }
    stored(id)?
        .map(Arc::from)
        .with_context(|| format!("page {id} has no URL in the state"))
}

/// The URL table of the URLs in the store (read one at a time: none is kept), which gives
/// new ids within the crawl's limits from now on (`--max-pages-per-host`,
/// `--max-hosts-per-domain`, `--max-urls-per-domain`, `--max-urls`), over the store's
/// seen-set (built first if the state lacks it).
fn load_urls(
    store: &mut Store,
    loaded: &Loaded,
    cfg: &CrawlConfig,
) -> Result<UrlTable<SeenReader>> {
    store.ensure_seen_index(loaded.urls)?;
    let reader = store.seen_reader()?;
    let mut table = UrlTable::new(cfg.limits.urls, reader, cfg.resources.seen_cache);
    for row in store.urls()? {
        let (id, url) = row?;
        table
            .load(&url)
            .with_context(|| format!("{}: URL {id}", store.path().display()))?;
    }
    ensure!(
        table.len() as u64 == loaded.urls,
        "the crawl state {} lists {} URLs but holds {}",
        store.path().display(),
        loaded.urls,
        table.len()
    );
    Ok(table)
}

/// What the connector may connect to (crawlrank_fetch::addresses): any address with
/// `--allow-private-networks`, else public ones, and any address of the hosts the user named
/// in seeds — this run's and earlier runs' (kept in the state, so that a resume without
/// `--seeds` still reaches them). A state written before they were kept gives the hosts of
/// its seed events instead.
fn address_guard(cfg: &CrawlConfig, store: &Store, seeded: &[PageId]) -> Result<AddressGuard> {
    let host_of = |url: &str| url::Url::parse(url).ok()?.host_str().map(String::from);
    let kept = store.seed_hosts()?;
    let mut hosts = std::collections::BTreeSet::new();
    match &kept {
        Some(h) => hosts.extend(h.iter().cloned()),
        None => {
            for &id in seeded {
                hosts.extend(store.url(id)?.as_deref().and_then(host_of));
            }
        }
    }
    for s in &cfg.seeds {
        if let Ok(u) = links::normalize(s, &cfg.fetch.url_rules) {
            hosts.extend(host_of(&u));
        }
    }
    let hosts: Vec<String> = hosts.into_iter().collect();
    if kept.as_ref() != Some(&hosts) {
        store.set_seed_hosts(&hosts)?;
    }
    Ok(AddressGuard {
        allow_private: cfg.fetch.allow_private_networks,
        named_hosts: hosts.into_iter().collect(),
    })
}

/// The WARC writer, cut back to the last committed position `at` (crawlrank_fetch::warc:
/// [`WarcWriter::resume`]), unless WARC is off; with what it found.
fn open_warc(
    cfg: &CrawlConfig,
    at: WarcPosition,
) -> Result<(Option<WarcWriter>, crawlrank_fetch::warc::Recovery)> {
    if !cfg.fetch.warc {
        return Ok((None, Default::default()));
    }
    let dir = cfg.state_dir.join("warc");
    let (w, recovery) =
        WarcWriter::resume(&dir, at, cfg.resources.warc_max_size, &cfg.fetch.user_agent)?;
    Ok((Some(w), recovery))
}

/// The pages crawled from event `first` on that were answered (status other than 0: those
/// that may have records) and whose URL has no `response` record among `kept`: those whose
/// records a damaged WARC file lost.
fn lost_pages(
    store: &Store,
    first: u64,
    kept: &std::collections::HashSet<String>,
) -> Result<Vec<PageId>> {
    let reader = store.url_reader()?;
    let mut lost = Vec::new();
    for event in store.events()? {
        let (i, event) = event?;
        if i < first {
            continue;
        }
        if let Event::Crawled { id, status, .. } = event {
            if status != 0 {
                let url = reader
                    .get(id)?
                    .with_context(|| format!("page {id} has no URL in the state"))?;
                if !kept.contains(&url) {
                    lost.push(id);
                }
            }
        }
    }
    Ok(lost)
}

impl Engine {
    /// Opens (or creates) the state, rebuilds the frontier from its log, queues the pages
    /// that were in flight and adds the seeds; at most `idle_connections` are kept idle.
    fn open(
        cfg: &CrawlConfig,
        idle_connections: usize,
        rt: tokio::runtime::Handle,
    ) -> Result<Self> {
        // A malformed filter is refused before the state is touched.
        let mut scope = Scope::new(&cfg.scope)?;
        let (mut store, loaded) = Store::open(&cfg.state_dir, true)?;
        let config = with_spill(frontier_config(cfg, &store, &loaded)?, cfg)?;
        // The seeds of earlier runs define the scope too (a resume may name none).
        let mut seeded = Vec::new();
        let mut hops = Hops::default();
        let events = store.events()?.inspect(|e| {
            if let Ok((_, event)) = e {
                apply_hops(&mut hops, event);
                if let Event::Seed(ids) = event {
                    seeded.extend_from_slice(ids);
                }
            }
        });
        let replayed = resume::replay(&config, loaded.urls, &store.impacts()?, events)?;
        if !scope.is_any() {
            for &id in &seeded {
                if let Some(url) = store.url(id)? {
                    scope.add_seed(&url);
                }
            }
        }
        let urls = load_urls(&mut store, &loaded, cfg)?;
        let seed_hosts = seeded.iter().filter_map(|&id| urls.origin_of(id)).collect();
        let guard = address_guard(cfg, &store, &seeded)?;
        let (warc, recovery) = open_warc(cfg, loaded.warc)?;
        let mut refetch: BTreeSet<PageId> = loaded.warc_refetch.iter().copied().collect();
        let mut stats = Stats::decode(&loaded.stats);
        let mut writes = StepWrites::default();
        let mut warc_recovery = WarcRecovery {
            removed: recovery.removed,
            damage: None,
        };
        if let (Some(d), Some(w)) = (recovery.damage, &warc) {
            // The state vouches for records the file lost: their pages are fetched again for
            // the archive, and the file's kept length is what the state says from now on.
            let lost = lost_pages(&store, loaded.warc_first_event, &d.responses)?;
            let before = refetch.len();
            refetch.extend(lost.iter().copied());
            stats.warc_damaged_pages += (refetch.len() - before) as u64;
            writes.warc = Some(w.position());
            writes.warc_refetch = Some(refetch.iter().copied().collect());
            warc_recovery.damage = Some(WarcDamage {
                path: d.path,
                committed: d.committed,
                found: d.found,
                kept: d.kept,
                lost_pages: lost.len() as u64,
            });
        }
        let in_flight = InFlight::new(
            &cfg.fetch,
            guard,
            rt,
            cfg.resources.concurrency,
            idle_connections,
        )?;
        let robots_agent = cfg.fetch.robots_agent();
        let pauses = store.host_pauses()?;
        let mut sitemaps = SitemapQueue::default();
        for (seq, state, url) in store.sitemaps()? {
            // A sitemap is queued for a seed host, whose seed has an id: its host is known.
            let host = links::origin_key(&url).and_then(|o| urls.origin_id(&o));
            let host = host.with_context(|| {
                format!(
                    "the crawl state {} queued the sitemap {url}, of a host it does not know",
                    cfg.state_dir.display()
                )
            })?;
            sitemaps.restore(seq, state, url, host);
        }
        // A long reorder (learned's refit) runs on the frontier's own thread while this one
        // keeps receiving pages; nothing is popped until it is applied (docs/crawler.md).
        let mut frontier = replayed.frontier;
        frontier.set_background_reorders(true)?;
        let mut e = Self {
            cfg: cfg.clone(),
            store,
            writes,
            stats_dirty: warc_recovery.damage.is_some(),
            stats,
            frontier,
            urls,
            scope,
            seed_hosts,
            sitemaps,
            robots: RobotsTable::new(robots_agent, cfg.politeness.max_retries),
            sched: Scheduler::new(cfg.politeness.delay),
            hops,
            backoffs: Backoffs::new(cfg.politeness.max_retry_after),
            in_flight,
            archive: Archive {
                writer: warc,
                refetch,
                recovery: warc_recovery,
            },
            snapshots: Snapshots {
                schedule: SnapshotSchedule::new(config.config.batch, replayed.crawled),
                job: None,
                not_before: Instant::now(),
            },
            counts: Counts {
                popped: replayed.popped,
                crawled: replayed.crawled,
                ..Counts::default()
            },
            max_waiting: cfg
                .resources
                .max_waiting
                .unwrap_or((8 * cfg.resources.concurrency).max(256)),
            top: Default::default(),
        };
        // Hosts paused when the last run ended stay paused for the time they asked.
        let now = Instant::now();
        let wall = std::time::SystemTime::now();
        for (origin, pause) in pauses {
            if let Some(host) = e.urls.origin_id(&origin) {
                e.backoffs.restore(host, pause);
                let left = pause.until.duration_since(wall).unwrap_or(Duration::ZERO);
                e.sched.hold(host, now + left, now);
            }
        }
        // Pages in flight when the last run ended go first, in their pop order; then those
        // whose WARC records were lost.
        for p in replayed.pending {
            e.schedule(p, now)?;
        }
        for p in e.archive.refetch.clone() {
            e.schedule(p, now)?;
        }
        e.seed()?;
        Ok(e)
    }

    /// Queues a freshly popped page (or one in flight at the last stop) behind its host, in
    /// pop order.
    fn schedule(&mut self, p: PageId, now: Instant) -> Result<()> {
        let host = self
            .urls
            .origin_of(p)
            .with_context(|| format!("page {p} has no URL in the state"))?;
        let seq = self.counts.pop_seq;
        self.counts.pop_seq += 1;
        let waiting = Waiting {
            page: p,
            attempts: 0,
            not_before: None,
        };
        self.sched.push(host, seq, waiting, now);
        Ok(())
    }

    /// The id of a URL, assigning a new one (and logging it) when unseen. `None` (counted)
    /// when the URL is new and its host or registrable domain is at its cap (unless `force`),
    /// or the crawl has `max_urls` URLs. An error is the store's, failing to read the seen-set.
    fn intern(
        &mut self,
        url: String,
        force: bool,
        beyond: Option<BeyondLimit>,
    ) -> Result<Option<PageId>> {
        if !force && !self.scope.admits(&url, &mut self.stats) {
            return Ok(None);
        }
        // Past a hop limit only a URL already known is kept (it costs no request).
        if let Some(limit) = beyond {
            if !self.urls.contains(&url)? {
                match limit {
                    BeyondLimit::Hops => self.stats.hop_limit_links += 1,
                    BeyondLimit::Redirects => self.stats.redirect_chain_too_long += 1,
                }
                return Ok(None);
            }
        }
        Ok(match self.urls.intern(&url, force)? {
            Interned::Known(id) => Some(id),
            Interned::New(id) => {
                if let Some(log) = &self.cfg.policy.impacts {
                    if let Some(v) = log.impact(crawlrank_crawl_state::fingerprint(&url)) {
                        self.frontier.set_impact(id, v);
                        self.writes.impacts.push((id, v));
                    }
                }
                self.writes.new_urls.push((id, url));
                Some(id)
            }
            Interned::Capped => {
                self.stats.host_cap_links += 1;
                None
            }
            Interned::DomainHostsCapped => {
                self.stats.domain_host_cap_links += 1;
                None
            }
            Interned::DomainCapped => {
                self.stats.domain_cap_links += 1;
                None
            }
            Interned::NoIdLeft => {
                self.stats.url_limit_links += 1;
                None
            }
        })
    }

    /// Interns the seeds and gives the frontier those it does not know yet; with
    /// `--sitemaps`, queues each seed host's `/sitemap.xml` (crawlrank_fetch::sitemap).
    fn seed(&mut self) -> Result<()> {
        let mut ids = Vec::new();
        let mut bad = Vec::new();
        for s in self.cfg.seeds.clone() {
            match links::normalize(&s, &self.cfg.fetch.url_rules) {
                Ok(u) => {
                    self.scope.add_seed(&u);
                    ids.extend(self.intern(u, true, None)?)
                }
                Err(_) => bad.push(s),
            }
        }
        for &id in &ids {
            if let Some(h) = self.urls.origin_of(id) {
                self.seed_hosts.insert(h);
                if self.cfg.fetch.sitemaps {
                    let url = format!("{}/sitemap.xml", self.urls.origin(h));
                    self.queue_sitemap_of(h, &url);
                }
            }
        }
        if !bad.is_empty() {
            bail!(
                "{} seed(s) are not absolute http(s) URLs, e.g. '{}'",
                bad.len(),
                bad[0]
            );
        }
        // A URL named twice is one id; the frontier skips a repeat, as replay does.
        let new: Vec<PageId> = ids
            .into_iter()
            .filter(|&id| !self.frontier.pages().is_known(id))
            .collect();
        if !new.is_empty() {
            self.frontier.seed(&new);
            self.log(Event::Seed(new));
        }
        if self.counts.popped == 0 && self.frontier.is_empty() {
            bail!("no seeds: give at least one URL to start from");
        }
        self.commit_waiting()
    }

    /// Commits the step's writes, with the WARC position when pages were finished and the
    /// counters when they changed, in one durable transaction. `Ok(false)` when it failed for
    /// want of file descriptors: the writes are kept for the next try (redb's commit opens no
    /// file, so this is not expected, but it is a shortage like any other, never the end of
    /// the crawl); any other failure (a full disk) is an error, the state left as it was at
    /// the last commit.
    fn commit(&mut self) -> Result<bool> {
        if let Some(w) = &mut self.archive.writer {
            let finished = self
                .writes
                .events
                .iter()
                .any(|e| matches!(e, Event::Crawled { .. }));
            if finished || self.stats_dirty || self.writes.warc.is_some() {
                // On the disk before the state says so: a power cut after the commit must
                // not leave a file shorter than the position it records.
                w.sync()?;
                self.writes.warc = Some(w.position());
            } else {
                w.flush()?;
            }
        }
        if self.stats_dirty {
            self.writes.stats = Some(self.stats.encode());
        }
        match self.store.commit(&self.writes) {
            Ok(()) => {
                self.writes = StepWrites::default();
                self.urls.saved(self.store.seen_reader()?);
                self.stats_dirty = false;
                self.rotate_warc()?;
                Ok(true)
            }
            Err(e) if fds::is_exhaustion_anyhow(&e) => {
                self.fd_shortage(Instant::now());
                Ok(false)
            }
            Err(e) => Err(e),
        }
    }

    /// Starts the next WARC file when this one is full, between two commits, so that the
    /// records of each commit's pages are in one file; the next commit records it, with the
    /// first event whose page may be archived there (what a damaged file is checked against).
    fn rotate_warc(&mut self) -> Result<()> {
        if let Some(w) = &mut self.archive.writer {
            if w.rotate_if_full()? {
                self.writes.warc = Some(w.position());
                self.writes.warc_first_event = Some(self.store.next_event());
            }
        }
        Ok(())
    }

    /// [`commit`](Self::commit), tried again while file descriptors are short, for at most
    /// [`FD_WAIT_AT_END`] (no fetch is running then, so they are held by someone else).
    fn commit_waiting(&mut self) -> Result<()> {
        let deadline = Instant::now() + FD_WAIT_AT_END;
        while !self.commit()? {
            if Instant::now() >= deadline {
                bail!(
                    "cannot commit to the crawl state {}: no file descriptor free for {} s",
                    self.cfg.state_dir.display(),
                    FD_WAIT_AT_END.as_secs()
                );
            }
            std::thread::sleep(FD_RETRY);
        }
        Ok(())
    }

    /// Counts a shortage of file descriptors at `now` and slows fetching down.
    fn fd_shortage(&mut self, now: Instant) {
        self.stats.fd_shortages += 1;
        self.stats_dirty = true;
        self.in_flight.fd_shortage(now);
    }

    /// Collects the ranking snapshot's thread if it is done (with `wait`, waits for it). A
    /// success moves the snapshot schedule; a failure for want of file descriptors is counted,
    /// the next snapshot tried [`FD_RETRY`] later, and returned; another failure ends the
    /// crawl.
    fn collect_snapshot(&mut self, wait: bool) -> Result<Option<anyhow::Error>> {
        let Some(job) = self.snapshots.job.take_if(|j| wait || j.is_finished()) else {
            return Ok(None);
        };
        let (res, crawled, started) = job.join();
        match res {
            Ok(()) => {
                self.snapshots.schedule.written(crawled, started);
                release_free_memory();
                Ok(None)
            }
            Err(e) if fds::is_exhaustion_anyhow(&e) => {
                let now = Instant::now();
                self.fd_shortage(now);
                self.snapshots.not_before = now + FD_RETRY;
                Ok(Some(e))
            }
            Err(e) => Err(e),
        }
    }

    /// Starts a ranking snapshot when one is due and none is being written.
    fn snapshot_if_due(&mut self) -> Result<()> {
        self.collect_snapshot(false)?;
        if self.snapshots.job.is_none()
            && self.snapshots.schedule.due(self.counts.crawled)
            && Instant::now() >= self.snapshots.not_before
            && !self.frontier.reorder_pending()
        {
            self.start_snapshot()?;
        }
        Ok(())
    }

    /// The last snapshot of a run, waited for; tried again while file descriptors are short,
    /// for at most [`FD_WAIT_AT_END`].
    fn final_snapshot(&mut self) -> Result<()> {
        self.collect_snapshot(true)?;
        let deadline = Instant::now() + FD_WAIT_AT_END;
        loop {
            self.start_snapshot()?;
            match self.collect_snapshot(true)? {
                None => return Ok(()),
                Some(e) if Instant::now() >= deadline => return Err(e),
                Some(_) => std::thread::sleep(FD_RETRY),
            }
        }
    }

    /// Starts writing the policy's current ranking of every URL, and the page marks, to the
    /// state's snapshots ([`RANKING_SNAPSHOT`], [`PAGE_MARKS_SNAPSHOT`]), which
    /// `export --ranking` reads while this crawl holds the state. This thread only takes
    /// each page's score (one pass); sorting, the URLs' lookups in the store and the writing
    /// happen on the snapshot's own thread, while the crawl goes on.
    fn start_snapshot(&mut self) -> Result<()> {
        self.frontier.settle(); // the scores of the last reorder
        let dir = &self.cfg.state_dir;
        let reader = self.store.url_reader()?;
        let unsaved = self.urls.unsaved();
        let url_of = move |id: PageId| url_of(id, unsaved.get(id), |id| reader.get(id));
        let scores = (0..self.urls.len() as PageId)
            .map(|id| self.frontier.score(id).unwrap_or(f64::NAN))
            .collect();
        // The marks are read from the state by the snapshot's thread, with this step's not
        // committed yet: the crawl keeps none of them.
        let marks = merge_marks(self.store.marks()?, self.writes.pages.clone());
        self.snapshots.job = Some(SnapshotJob::spawn(
            dir.join(RANKING_SNAPSHOT),
            dir.join(PAGE_MARKS_SNAPSHOT),
            scores,
            marks,
            self.counts.crawled,
            url_of,
        ));
        Ok(())
    }

    /// The URL of page `id`: from the URL table when discovered since the last commit, else
    /// from the store.
    fn url_of(&self, id: PageId) -> Result<Arc<str>> {
        url_of(id, self.urls.unsaved_url(id), |id| self.store.url(id))
    }

    /// Whether no more page may be popped under `--max-pages`: the budget counts *fetched*
    /// pages — those a server answered, whatever the status (`Stats::pages_answered`) — so a
    /// page given up (robots.txt, a failure) frees its place. Pages popped and not finished
    /// (waiting for their host or in flight) may all still be fetched, so they hold their
    /// place: a crawl stops with exactly `--max-pages` fetched pages when the web has them.
    fn max_pages_reached(&self) -> bool {
        self.cfg.max_pages.is_some_and(|m| {
            let outstanding = self.counts.popped.saturating_sub(self.stats.pages_done());
            self.stats.pages_answered() + outstanding >= m
        })
    }

    /// Fills free request slots: with the earliest-popped page that politeness lets go,
    /// else with a new pop, until the slots are full, too many pages wait for their host or
    /// `max_pages` were popped.
    fn dispatch(&mut self) -> Result<()> {
        let now = Instant::now();
        while self.in_flight.has_room() {
            if let Some((host, seq, w)) = self.sched.next_ready(now) {
                self.start(host, seq, w, now)?;
                continue;
            }
            if self.sched.waiting() >= self.max_waiting || self.max_pages_reached() {
                break;
            }
            // With one request slot, a page popped ahead of one that waits only for its host's
            // delay would be chosen without that page's links. A crawl at --concurrency 1
            // waits instead, and so fetches in the policy's order (the simulator's) whatever
            // the delay, at the cost of idling through it; a longer hold (a back-off,
            // Retry-After) does not stall it. Above one slot, answers arrive out of pop order
            // anyway, and popping ahead keeps the slots busy.
            if self.cfg.resources.concurrency == 1 && self.sched.waits_only_for_delay(now) {
                break;
            }
            // While a reorder runs, popping would wait for it: requests in flight or pages
            // waiting for their host are served meanwhile, and the pop comes after.
            if self.frontier.reorder_pending()
                && (!self.in_flight.is_empty() || self.sched.waiting() > 0)
            {
                break;
            }
            let Some(p) = self.frontier.pop() else { break };
            self.writes.events.push(Event::Popped(p));
            self.counts.popped += 1;
            self.schedule(p, now)?;
        }
        Ok(())
    }

    /// Uses `rules`' Crawl-delay for `host` from now on: its delay becomes the larger of
    /// `--delay` and the (capped) Crawl-delay.
    fn apply_crawl_delay(&mut self, host: OriginId, rules: &RobotsRules) {
        let p = &self.cfg.politeness;
        let delay = rules.host_delay(p.delay, p.max_crawl_delay);
        self.sched.set_delay(host, delay, Instant::now());
    }

    /// Where `host` stands with its robots.txt; rules an earlier run stored are counted, and
    /// their Crawl-delay applied, when first taken.
    fn robots_of(&mut self, host: OriginId) -> HostRobots {
        let now = robots::unix_now();
        let (store, origin) = (&self.store, self.urls.origin(host));
        // The answers are a cache: one the store cannot give means a fetch, never a failure.
        let stored = || store.robots(origin).ok().flatten();
        let lookup = self.robots.lookup(host, now, stored);
        if let HostRobots::StoredRules(rules) = &lookup {
            self.stats.robots_cached += 1;
            self.stats_dirty = true;
            self.apply_crawl_delay(host, rules);
        }
        lookup
    }

    /// Starts what a page whose host is free needs next: its host's robots.txt, else the
    /// page's own fetch. A page robots.txt disallows, or whose host cannot be reached, ends
    /// here without a request.
    fn start(&mut self, host: OriginId, seq: u64, w: Waiting, now: Instant) -> Result<()> {
        let rules = match self.robots_of(host) {
            HostRobots::Rules(rules) | HostRobots::StoredRules(rules) => rules,
            HostRobots::GiveUp(failure) => {
                if !self.refetch_done(w.page, false) {
                    self.stats.count_outcome(Outcome::FetchError, Some(failure));
                    self.finish_page(w.page, Outcome::FetchError, 0, Vec::new());
                }
                return Ok(());
            }
            HostRobots::Unknown => {
                // robots.txt first; the page goes back under its own sequence number.
                self.sched.push(host, seq, w, now);
                self.sched.start(host, now);
                self.stats.robots_fetched += 1;
                let origin = self.urls.origin(host).to_string();
                self.in_flight
                    .fetch_robots(host, origin, self.sched.delay(host));
                return Ok(());
            }
        };
        // The host's sitemaps first, one at a time; the page goes back under its own sequence
        // number (crawlrank_fetch::sitemap). A run with --no-sitemaps leaves those queued by an earlier
        // run for the next that reads them.
        if self.cfg.fetch.sitemaps && self.start_sitemap(host, &rules, now) {
            self.sched.push(host, seq, w, now);
            return Ok(());
        }
        let url = self.url_of(w.page)?;
        if !rules.allowed(&url) {
            if !self.refetch_done(w.page, false) {
                self.stats.count_outcome(Outcome::RobotsDisallowed, None);
                self.finish_page(w.page, Outcome::RobotsDisallowed, 0, Vec::new());
            }
            return Ok(());
        }
        self.sched.start(host, now);
        let ticket = PageTicket {
            page: w.page,
            host,
            seq,
            attempts: w.attempts,
        };
        self.in_flight.fetch_page(ticket, url);
        Ok(())
    }

    /// When `page` was fetched again only to replace its lost WARC records (crawlrank_fetch::warc),
    /// takes it off that list — `archived`: its records were written — and returns `true`:
    /// the crawl already counted and logged it once.
    fn refetch_done(&mut self, page: PageId, archived: bool) -> bool {
        if !self.archive.refetch.remove(&page) {
            return false;
        }
        if archived {
            self.stats.warc_refetched += 1;
        } else {
            self.stats.warc_refetch_failed += 1;
        }
        self.stats_dirty = true;
        self.writes.warc_refetch = Some(self.archive.refetch.iter().copied().collect());
        true
    }

    /// Reports a finished page to the frontier and the log.
    fn finish_page(&mut self, id: PageId, outcome: Outcome, status: u16, links: Vec<PageId>) {
        self.frontier.on_crawled(id, &links);
        self.log(Event::Crawled {
            id,
            outcome,
            status,
            links,
        });
        self.counts.crawled += 1;
        self.counts.pages_this_run += 1;
        self.stats_dirty = true;
    }

    /// Records a frontier call that changes which pages are known (a seed, a crawled page's
    /// links) for the next commit, and gives the new pages their hops (the replay of a
    /// resumed crawl does the same over the log).
    fn log(&mut self, event: Event) {
        apply_hops(&mut self.hops, &event);
        self.writes.events.push(event);
    }

    /// The delay before a retry after `attempt` failed tries: doubled at each.
    fn backoff(&self, attempt: u32) -> Duration {
        self.cfg.politeness.retries().backoff(attempt)
    }

    /// Acts on a finished fetch, then gives its host's client back: its connection stays
    /// open while the host may be fetched again soon — its politeness delay plus
    /// [`IDLE_GRACE`] if it has pages waiting, else [`IDLE_GRACE`] — unless file descriptors
    /// ran short.
    fn handle(&mut self, done: Done) -> Result<()> {
        let now = Instant::now();
        self.stats_dirty = true;
        let (host, kept, failure) = match done {
            Done::Robots { host, fetch, kept } => {
                let failure = fetch.failure;
                self.handle_robots(host, fetch, now)?;
                (host, kept, failure)
            }
            Done::Sitemap { host, fetch, kept } => {
                let failure = fetch.failure;
                self.handle_sitemap(host, *fetch, now)?;
                (host, kept, failure)
            }
            Done::Page {
                ticket,
                fetch,
                kept,
            } => {
                let failure = fetch.failure;
                self.handle_page(ticket, *fetch, now)?;
                (ticket.host, kept, failure)
            }
        };
        if failure == Some(TransportFailure::FdLimit) {
            return Ok(()); // the connection is dropped: none is kept while descriptors are short
        }
        self.in_flight.fetch_ended(now);
        let wanted = self.sched.has_waiting(host);
        let keep = if wanted {
            self.sched.delay(host) + IDLE_GRACE
        } else {
            IDLE_GRACE
        };
        self.in_flight.checkin(host, kept, now + keep, wanted, now);
        Ok(())
    }

    /// A robots.txt fetch ended: retry it later, or use (and keep) what it said. One that
    /// found no file descriptor free is tried again soon, as if it had not been made.
    fn handle_robots(&mut self, host: OriginId, fetch: RobotsFetch, now: Instant) -> Result<()> {
        if fetch.failure == Some(TransportFailure::FdLimit) {
            self.fd_shortage(now);
            // Not a request: asked again soon, as if not asked.
            self.stats.robots_fetched = self.stats.robots_fetched.saturating_sub(1);
            self.sched.finish(host, now);
            self.sched.hold(host, now + FD_RETRY, now);
            return Ok(());
        }
        self.stats.count_robots(&fetch);
        let unix = robots::unix_now();
        let mut backoff = Duration::ZERO;
        match self
            .robots
            .fetched(host, fetch.rules, fetch.answer, fetch.failure, unix)
        {
            AfterFetch::Retry { attempt } => {
                self.stats.retries += 1;
                backoff = self.backoff(attempt);
            }
            AfterFetch::Settled { rules, keep } => {
                if let Some(stored) = keep {
                    let origin = self.urls.origin(host).to_string();
                    self.writes.robots.push((origin, stored));
                }
                self.apply_crawl_delay(host, &rules);
                self.seed_robots_sitemaps(host, &rules)?;
            }
        }
        self.sched.finish(host, now);
        if !backoff.is_zero() {
            self.sched.hold(host, now + backoff, now);
        }
        Ok(())
    }

    /// With `--sitemaps`, queues the `Sitemap:` files a seed host's robots.txt names on that
    /// host (crawlrank_fetch::sitemap); one on another host is dropped and counted.
    fn seed_robots_sitemaps(&mut self, host: OriginId, rules: &RobotsRules) -> Result<()> {
        if !self.cfg.fetch.sitemaps || !self.seed_hosts.contains(&host) {
            return Ok(());
        }
        let RobotsRules::Rules(robot) = rules else {
            return Ok(());
        };
        let queued = self.sitemaps.queue_listed(
            host,
            self.urls.origin(host),
            &robot.sitemaps,
            &self.cfg.fetch.url_rules,
            &mut self.stats,
        );
        self.sitemaps_queued(queued);
        Ok(())
    }

    /// Queues `url`, a sitemap file of `host`, behind the host's others when it is on that
    /// host, and records it in the state; one queued before is not queued again, one of
    /// another host or past the host's cap is counted dropped.
    fn queue_sitemap_of(&mut self, host: OriginId, url: &str) {
        let origin = self.urls.origin(host);
        let seq = self.sitemaps.queue(host, origin, url, &mut self.stats);
        self.sitemaps_queued(seq.map(|seq| (seq, url.to_string())));
    }

    /// Records sitemaps just queued (with their row numbers) in the state.
    fn sitemaps_queued(&mut self, queued: impl IntoIterator<Item = (u64, String)>) {
        for (seq, url) in queued {
            let row = (seq, crawlrank_fetch::sitemap::PENDING, url);
            self.writes.sitemaps.push(row);
        }
        self.stats_dirty = true;
    }

    /// Starts `host`'s next sitemap fetch, if it has one its robots.txt `rules` allow (those
    /// disallowed are counted and dropped); `false` when none is left.
    fn start_sitemap(&mut self, host: OriginId, rules: &RobotsRules, now: Instant) -> bool {
        while let Some(next) = self.sitemaps.next(host) {
            let url = next.url.clone();
            if !rules.allowed(&url) {
                self.stats.sitemaps_disallowed += 1;
                self.sitemap_done(host);
                continue;
            }
            self.sched.start(host, now);
            self.stats.sitemaps_fetched += 1;
            self.stats_dirty = true;
            self.in_flight.fetch_sitemap(host, url);
            return true;
        }
        false
    }

    /// Takes `host`'s next sitemap off its queue and records it fetched.
    fn sitemap_done(&mut self, host: OriginId) {
        if let Some(q) = self.sitemaps.pop(host) {
            self.writes
                .sitemaps
                .push((q.seq, crawlrank_fetch::sitemap::DONE, q.url));
        }
        self.stats_dirty = true;
    }

    /// Counts a request that got through (a page's or a sitemap's: robots.txt has its own
    /// counters) and archives its WARC records.
    fn count_answer(&mut self, bytes: u64, timed_out: bool, warc: &[u8]) -> Result<()> {
        self.stats.count_answer(bytes, timed_out);
        if let Some(w) = &mut self.archive.writer {
            w.append(warc)?;
        }
        Ok(())
    }

    /// A sitemap fetch of `host` ended: retry it later, or take what it said — an index's
    /// sitemaps and a redirect's target are queued, a sitemap's entries given to the frontier
    /// (crawlrank_fetch::sitemap) — and count it. One that found no file descriptor free is tried again
    /// soon, as if it had not been made.
    fn handle_sitemap(&mut self, host: OriginId, mut f: SitemapFetch, now: Instant) -> Result<()> {
        self.sched.finish(host, now);
        if f.failure == Some(TransportFailure::FdLimit) {
            self.fd_shortage(now);
            self.stats.sitemaps_fetched = self.stats.sitemaps_fetched.saturating_sub(1);
            self.sched.hold(host, now + FD_RETRY, now);
            return Ok(());
        }
        self.count_answer(f.bytes, f.timed_out, &f.warc)?;
        // A refusal holds the host (Retry-After or its back-off) as a page's does; the
        // sitemap's own retries below wait at least that long.
        self.note_refusal(host, f.status, f.retry_after, now);
        let max_retries = self.cfg.politeness.max_retries;
        let origin = self.urls.origin(host);
        match f.follow(
            &mut self.sitemaps,
            host,
            origin,
            max_retries,
            &mut self.stats,
        ) {
            SitemapStep::Retry { attempt } => {
                self.stats.retries += 1;
                let backoff = self.backoff(attempt);
                self.sched.hold(host, now + backoff, now);
                Ok(())
            }
            SitemapStep::Settled {
                done,
                queued,
                entries,
            } => {
                if let Some(q) = done {
                    self.writes
                        .sitemaps
                        .push((q.seq, crawlrank_fetch::sitemap::DONE, q.url));
                }
                self.sitemaps_queued(queued);
                self.give_entries(entries)
            }
        }
    }

    /// Gives a sitemap's entries to the frontier as URLs found without a link, in file order
    /// (`Frontier::seed`, logged as a seed event): each passes the scope, filters and
    /// per-host cap as a link does; one the frontier knows already is not given again.
    fn give_entries(&mut self, entries: Vec<String>) -> Result<()> {
        self.stats_dirty = true;
        // The entries of one sitemap are distinct URLs (crawlrank_fetch::sitemap), hence distinct ids.
        let mut new = Vec::new();
        for u in entries {
            if let Some(id) = self.intern(u, false, None)? {
                if !self.frontier.pages().is_known(id) {
                    new.push(id);
                }
            }
        }
        if !new.is_empty() {
            self.frontier.seed(&new);
            self.log(Event::Seed(new));
        }
        Ok(())
    }

    /// A page's fetch ended: archive it, then retry it later or finish it (count it, keep
    /// its marks, intern its links, report it to the frontier). One that found no file
    /// descriptor free goes back to its host's queue as it was, its attempts unchanged.
    fn handle_page(&mut self, t: PageTicket, f: PageFetch, now: Instant) -> Result<()> {
        self.sched.finish(t.host, now);
        if f.failure == Some(TransportFailure::FdLimit) {
            self.fd_shortage(now);
            let waiting = Waiting {
                page: t.page,
                attempts: t.attempts,
                not_before: Some(now + FD_RETRY),
            };
            self.sched.push(t.host, t.seq, waiting, now);
            return Ok(());
        }
        self.count_answer(f.body.bytes, f.retry.timed_out, &f.warc)?;
        let refusal = self.note_refusal(t.host, f.status, f.retry.after, now);
        // A refused page waits as long as its host: Retry-After or the back-off.
        let retries = self.cfg.politeness.retries();
        match retries.after_page(refusal, f.retry.retryable, t.attempts) {
            PageNext::Retry { wait, .. } => {
                self.retry(t, now + wait, now);
                return Ok(());
            }
            PageNext::Finish {
                retry_after_too_long,
            } => self.stats.retry_after_too_long += u64::from(retry_after_too_long),
        }
        if self.refetch_done(t.page, self.archive.writer.is_some() && !f.warc.is_empty()) {
            return Ok(());
        }
        let outcome = f.outcome.unwrap_or(Outcome::FetchError);
        self.stats.count_outcome(outcome, f.failure);
        self.stats.count_page(&f);
        let meta = PageMeta {
            noindex: f.directives.noindex,
            canonical: f.directives.canonical,
        };
        self.keep_marks(t.page, meta);
        // A page that turned out to be a sitemap has no out-links: its entries enter the
        // frontier as found without a link (crawlrank_fetch::sitemap), after the page is reported.
        if outcome == Outcome::Sitemap {
            self.finish_page(t.page, outcome, f.status, Vec::new());
            return self.give_entries(f.links);
        }
        let beyond = (self.cfg.limits.hops)
            .exceeded(self.hops.of_links(t.page, outcome == Outcome::Redirect));
        let mut links = Vec::with_capacity(f.links.len());
        for u in f.links {
            links.extend(self.intern(u, false, beyond)?);
        }
        self.finish_page(t.page, outcome, f.status, links);
        Ok(())
    }

    /// Puts a page whose fetch failed transiently back in its host's queue, under its own
    /// sequence number (so it keeps its place), not to be fetched before `at`.
    fn retry(&mut self, t: PageTicket, at: Instant, now: Instant) {
        self.stats.retries += 1;
        let waiting = Waiting {
            page: t.page,
            attempts: t.attempts + 1,
            not_before: Some(at),
        };
        self.sched.push(t.host, t.seq, waiting, now);
    }

    /// Slows `host` down after a refusal (429, 503: crawlrank_fetch::backoff) of a page or a
    /// sitemap, `after` its `Retry-After`, and returns what it means for the request; after
    /// any other answer, lets its back-off come down. Either way a changed pause is stored,
    /// so a restart keeps it.
    fn note_refusal(
        &mut self,
        host: OriginId,
        status: u16,
        after: Option<RetryAfter>,
        now: Instant,
    ) -> Option<crawlrank_fetch::backoff::Refusal> {
        let wall = std::time::SystemTime::now();
        let after = self.backoffs.answer(host, status, after, wall);
        self.stats.count_back_off(&after);
        if let Some(until) = after.hold_until {
            let wait = until.duration_since(wall).unwrap_or_default();
            self.sched.hold(host, now + wait, now);
        }
        if let Some(change) = after.changed {
            let origin = self.urls.origin(host).to_string();
            self.writes.hosts.push((origin, change));
        }
        after.refusal
    }

    /// Has the step store a page's noindex and canonical marks when it has any (the snapshots
    /// read them from there; [`Stats::count_page`] counts them).
    fn keep_marks(&mut self, id: PageId, meta: PageMeta) {
        if !meta.is_empty() {
            self.writes.pages.push((id, meta));
        }
    }

    /// Retakes the [`CrawlConfig::report_top`] lists when asked for and a second old.
    /// Informative only: a URL the store cannot give is left out.
    fn refresh_top(&mut self) {
        let k = self.cfg.report_top;
        if k == 0 || self.top.taken.is_some_and(|t| t.elapsed() < TOP_INTERVAL) {
            return;
        }
        let (queued, popped) = crate::top::best_scored(&self.frontier, self.urls.len(), k);
        let with_urls = |list: Vec<(PageId, f64)>| -> Vec<(Arc<str>, f64)> {
            let url = |(id, s)| self.url_of(id).ok().map(|u| (u, s));
            list.into_iter().filter_map(url).collect()
        };
        self.top = crate::top::TopLists {
            taken: Some(Instant::now()),
            frontier: with_urls(queued),
            ranking: with_urls(popped),
        };
    }

    fn progress(&mut self, start: Instant) -> Progress {
        self.refresh_top();
        let secs = start.elapsed().as_secs_f64().max(1e-9);
        Progress {
            pages_this_run: self.counts.pages_this_run,
            pages_per_sec: self.counts.pages_this_run as f64 / secs,
            pages_total: self.counts.crawled,
            frontier: self.frontier.len(),
            waiting: self.sched.waiting(),
            in_flight: self.in_flight.len(),
            hosts: self.urls.hosts(),
            hosts_active: self.sched.hosts_tracked(),
            discovered: self.urls.len(),
            errors: self.stats.errors(),
            idle_connections: self.in_flight.idle(),
            fetch_limit: self.in_flight.limit(),
            fd_shortages: self.stats.fd_shortages,
            stats: self.stats.clone(),
            frontier_top: self.top.frontier.clone(),
            ranking_top: self.top.ranking.clone(),
        }
    }

    /// Why the run ends now, if it does: nothing in flight and nothing left to do, or a stop
    /// requested at `stopping` whose requests in flight are done or had their grace time.
    fn stop_reason(&self, stopping: Option<Instant>) -> Option<StopReason> {
        if self.in_flight.is_empty() {
            if stopping.is_some() {
                return Some(StopReason::Interrupted);
            }
            if self.sched.waiting() == 0 {
                if self.max_pages_reached() {
                    return Some(StopReason::MaxPages);
                }
                if self.frontier.is_empty() {
                    return Some(StopReason::Exhausted);
                }
            }
        }
        stopping
            .is_some_and(|t| t.elapsed() >= self.cfg.resources.stop_grace)
            .then_some(StopReason::Interrupted)
    }

    /// Waits for fetch results, at most until the scheduler's next timer, and handles all
    /// that arrived.
    fn receive(&mut self) -> Result<()> {
        let mut wait = POLL_INTERVAL;
        if let Some(t) = self.sched.next_timer() {
            wait = wait.min(t.saturating_duration_since(Instant::now()));
        }
        if self.frontier.reorder_pending() {
            wait = wait.min(REORDER_POLL); // pops resume soon after the reorder ends
        }
        if let Some(done) = self.in_flight.wait(wait)? {
            self.handle(done)?;
            while let Some(done) = self.in_flight.try_next() {
                self.handle(done)?;
            }
        }
        self.in_flight.expire(Instant::now());
        Ok(())
    }

    /// The loop: commit, snapshot, dispatch, receive, until the crawl ends or is stopped.
    fn run(
        &mut self,
        stop: &AtomicBool,
        progress: &mut dyn FnMut(&Progress),
    ) -> Result<CrawlReport> {
        let start = Instant::now();
        let mut last_progress = start;
        let mut stopping: Option<Instant> = None;
        let reason = loop {
            if stopping.is_none() && stop.load(Ordering::Relaxed) {
                stopping = Some(Instant::now());
            }
            // Commit the results handled so far *before* their slots are reused: at most
            // `concurrency` fetches are ever uncommitted (a commit that found no file
            // descriptor free starts nothing new until the next one succeeds). The pops of
            // `dispatch` are committed with the next step (a pop lost in a crash is simply
            // replayed).
            let committed = self.commit()?;
            self.snapshot_if_due()?;
            if stopping.is_none() && committed {
                self.dispatch()?;
            }
            // Hosts gone idle let go of their robots.txt rules (the store keeps the answer).
            for host in self.sched.take_retired() {
                self.robots.forget(host);
            }
            if !committed {
                std::thread::sleep(FD_RETRY);
            }
            if let Some(reason) = self.stop_reason(stopping) {
                break reason;
            }
            self.receive()?;
            if last_progress.elapsed() >= PROGRESS_INTERVAL {
                last_progress = Instant::now();
                progress(&self.progress(start));
            }
        };
        self.stats_dirty = true;
        self.commit_waiting()?;
        self.final_snapshot()?;
        self.commit_waiting()?; // the shortages the snapshot may have counted
        self.top.taken = None; // the last report shows the lists as the run ends
        progress(&self.progress(start));
        Ok(self.report(reason, start))
    }

    fn report(&self, stop: StopReason, start: Instant) -> CrawlReport {
        CrawlReport {
            warc_recovery: self.archive.recovery.clone(),
            stop,
            stats: self.stats.clone(),
            pages_this_run: self.counts.pages_this_run,
            elapsed: start.elapsed(),
            discovered: self.urls.len(),
            crawled: self.counts.crawled,
            frontier: self.frontier.len(),
            pending: (self.counts.popped - self.counts.crawled) as usize,
            hosts: self.urls.hosts(),
            seen: self.urls.seen_counts(),
            spill: self.frontier.spill_status(),
            reorders: self.frontier.reorder_stats(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_idle_cap_fills_the_open_file_limit_up_to_its_default() {
        let c = Resources {
            concurrency: 32,
            ..Resources::default()
        };
        // The room beside 32 in flight and 64 reserved: 256 - 96.
        assert_eq!(c.idle_connections(256), 160);
        assert_eq!(c.fd_budget(256).total(), 256);
        // A generous limit: the default cap.
        assert_eq!(c.idle_connections(1 << 20), DEFAULT_MAX_IDLE_CONNECTIONS);
        // A limit too low: never below the concurrency (the start-up check then refuses).
        assert_eq!(c.idle_connections(100), 32);
        assert!(c.fd_budget(100).total() > 100);
        // Asked for: as asked, whatever the limit.
        let asked = Resources {
            max_idle_connections: Some(7),
            ..c
        };
        assert_eq!(asked.idle_connections(1 << 20), 7);
        assert_eq!(asked.idle_connections(100), 7);
    }
}
