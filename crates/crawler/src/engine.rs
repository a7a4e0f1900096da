//! The crawl engine: one thread that owns the frontier, the URL table, the politeness
//! scheduler and the state store, driving fetch tasks on a tokio runtime.
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

use crate::fetch::{self, FetchConfig, PageFetch, RobotsFetch};
use crate::links;
use crate::page::{Outcome, PageMeta, TransportFailure};
use crate::politeness::{HostId, Scheduler, Waiting};
use crate::robots::{self, robots_rules, RobotsRules, StoredRobots};
use crate::state::{self, default_batch};
use crate::stats::Stats;
use crate::store::{Event, StateConfig, StepWrites, Store};
use crate::warc::WarcWriter;
use anyhow::{bail, Context, Result};
use crawlrank_frontier::{Frontier, PageId};
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Everything a crawl run is told.
#[derive(Debug, Clone)]
pub struct CrawlConfig {
    /// The state directory (created on the first run, resumed after).
    pub state_dir: PathBuf,
    /// Seed URLs (a resumed crawl may add new ones; known ones are ignored).
    pub seeds: Vec<String>,
    /// The policy's command-line name. A resumed crawl must name the same one.
    pub policy: String,
    /// Stop after this many pages popped in total, over all runs.
    pub max_pages: Option<u64>,
    /// Requests in flight at most.
    pub concurrency: usize,
    /// Least delay between two requests to one host (`--delay`).
    pub delay: Duration,
    /// Cap on robots.txt's Crawl-delay.
    pub max_crawl_delay: Duration,
    /// `R` for IECA and FICA+ (and K's default); default `max_pages`, else 100,000.
    pub expected_pages: Option<u64>,
    /// K; default `ceil(expected_pages / 72)`.
    pub batch: Option<u64>,
    /// `n` for OPIC's initial cash; default `expected_pages`.
    pub total_pages: Option<u64>,
    pub rng_seed: u64,
    /// Further tries of a 5xx / timeout / connection failure.
    pub max_retries: u32,
    /// First retry's delay; doubled at each further try.
    pub retry_backoff: Duration,
    /// Most URLs discovered per host (a spider-trap cap).
    pub max_pages_per_host: u64,
    /// Most popped pages waiting for their host; default `max(256, 8 × concurrency)`.
    pub max_waiting: Option<usize>,
    /// WARC files rotate past this size.
    pub warc_max_size: u64,
    /// After a stop request, wait this long for the requests in flight.
    pub stop_grace: Duration,
    /// Tokio worker threads.
    pub io_threads: usize,
    pub fetch: FetchConfig,
}

impl Default for CrawlConfig {
    fn default() -> Self {
        Self {
            state_dir: PathBuf::from("crawl-state"),
            seeds: Vec::new(),
            policy: "fica".into(),
            max_pages: None,
            concurrency: 16,
            delay: Duration::ZERO,
            max_crawl_delay: Duration::from_secs(30),
            expected_pages: None,
            batch: None,
            total_pages: None,
            rng_seed: 0,
            max_retries: 2,
            retry_backoff: Duration::from_secs(1),
            max_pages_per_host: 100_000,
            max_waiting: None,
            warc_max_size: 1 << 30,
            stop_grace: Duration::from_secs(5),
            io_threads: 2,
            fetch: FetchConfig::default(),
        }
    }
}

impl CrawlConfig {
    /// The frontier configuration of a new crawl.
    pub fn state_config(&self) -> StateConfig {
        let expected = self
            .expected_pages
            .or(self.max_pages)
            .unwrap_or(100_000)
            .max(1);
        StateConfig {
            policy: self.policy.trim().to_string(),
            batch: self.batch.unwrap_or_else(|| default_batch(expected)).max(1),
            expected_pages: expected,
            total_pages: self.total_pages.unwrap_or(expected).max(1),
            rng_seed: self.rng_seed,
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
    pub frontier: usize,
    /// Popped pages waiting for their host.
    pub waiting: usize,
    pub in_flight: usize,
    pub hosts: usize,
    pub discovered: usize,
    pub errors: u64,
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

/// What a run did.
#[derive(Debug, Clone)]
pub struct CrawlReport {
    pub stop: StopReason,
    pub stats: Stats,
    pub pages_this_run: u64,
    pub elapsed: Duration,
    pub discovered: usize,
    pub crawled: u64,
    pub frontier: usize,
    /// Pages popped but not finished (fetched first by the next run).
    pub pending: usize,
    pub hosts: usize,
}

enum Msg {
    Page {
        id: PageId,
        host: HostId,
        seq: u64,
        attempts: u32,
        fetch: Box<PageFetch>,
    },
    Robots {
        host: HostId,
        fetch: RobotsFetch,
    },
}

#[derive(Default)]
struct HostInfo {
    origin: String,
    pages: u64,
    robots: Option<RobotsRules>,
    /// When the answer behind `robots` was fetched (seconds since the Unix epoch).
    robots_at: u64,
    robots_attempts: u32,
    /// The host's robots.txt got no answer for a reason a retry would not change (its name
    /// does not resolve, its TLS fails): its pages are given up without a request each.
    failed: Option<TransportFailure>,
}

struct Engine {
    cfg: CrawlConfig,
    store: Store,
    frontier: Frontier,
    sched: Scheduler,
    urls: Vec<Arc<str>>,
    index: HashMap<Arc<str>, PageId>,
    page_host: Vec<HostId>,
    hosts: Vec<HostInfo>,
    host_index: HashMap<String, HostId>,
    /// robots.txt answers stored by earlier runs, by origin, taken when their host is first
    /// needed (if still fresh then).
    robots_cache: HashMap<String, StoredRobots>,
    /// noindex and canonical marks of fetched pages (only pages with any), for the ranking
    /// snapshot's companion.
    page_meta: BTreeMap<PageId, PageMeta>,
    warc: Option<WarcWriter>,
    writes: StepWrites,
    stats: Stats,
    stats_dirty: bool,
    popped: u64,
    crawled: u64,
    /// Pages between two ranking snapshots (the policy's batch size K).
    snapshot_every: u64,
    /// `crawled` when the last ranking snapshot was written, and when.
    last_snapshot: u64,
    last_snapshot_at: Instant,
    pop_seq: u64,
    in_flight: usize,
    pages_this_run: u64,
    max_waiting: usize,
    tx: mpsc::Sender<Msg>,
    client: reqwest::Client,
    fetch_cfg: Arc<FetchConfig>,
    rt: tokio::runtime::Handle,
}

/// Runs (or resumes) a crawl until the frontier is exhausted, `max_pages` is reached or
/// `stop` is set. `progress` is called about four times a second.
pub fn crawl(
    cfg: &CrawlConfig,
    stop: &AtomicBool,
    progress: &mut dyn FnMut(&Progress),
) -> Result<CrawlReport> {
    if cfg.concurrency == 0 {
        bail!("--concurrency must be at least 1");
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(cfg.io_threads.max(1))
        .enable_all()
        .build()
        .context("cannot start the I/O runtime")?;
    let (tx, rx) = mpsc::channel();
    let mut engine = Engine::open(cfg, tx, rt.handle().clone())?;
    let result = engine.run(&rx, stop, progress);
    // Whatever happened, requests still in flight are abandoned: their pages are logged as
    // popped and will be fetched first by the next run.
    rt.shutdown_timeout(Duration::from_millis(200));
    result
}

impl Engine {
    fn open(cfg: &CrawlConfig, tx: mpsc::Sender<Msg>, rt: tokio::runtime::Handle) -> Result<Self> {
        let (store, loaded) = Store::open(&cfg.state_dir, true)?;
        let wanted = cfg.state_config();
        let config = match &loaded.config {
            Some(c) => {
                if c.policy != wanted.policy {
                    bail!(
                        "{} holds a crawl with policy '{}', not '{}'; resume it with --policy {} or use another --state",
                        cfg.state_dir.display(),
                        c.policy,
                        wanted.policy,
                        c.policy
                    );
                }
                c.clone()
            }
            None => {
                // Validate before anything is written, so a typo leaves no state behind.
                state::new_frontier(&wanted)?;
                store.set_config(&wanted)?;
                wanted
            }
        };
        let replayed = state::replay(&config, store.events()?)?;
        let warc = if cfg.fetch.warc {
            Some(WarcWriter::open(
                &cfg.state_dir.join("warc"),
                loaded.warc,
                cfg.warc_max_size,
                &cfg.fetch.user_agent,
            )?)
        } else {
            None
        };
        let fetch_cfg = Arc::new(cfg.fetch.clone());
        let client = fetch::build_client(&fetch_cfg)?;
        let mut e = Self {
            cfg: cfg.clone(),
            store,
            frontier: replayed.frontier,
            sched: Scheduler::default(),
            urls: Vec::with_capacity(loaded.urls.len()),
            index: HashMap::with_capacity(loaded.urls.len()),
            page_host: Vec::with_capacity(loaded.urls.len()),
            hosts: Vec::new(),
            host_index: HashMap::new(),
            robots_cache: loaded.robots.into_iter().collect(),
            page_meta: loaded.pages.into_iter().collect(),
            warc,
            writes: StepWrites::default(),
            stats: Stats::decode(&loaded.stats),
            stats_dirty: false,
            popped: replayed.popped,
            crawled: replayed.crawled,
            snapshot_every: config.batch.max(1),
            last_snapshot: replayed.crawled,
            last_snapshot_at: Instant::now(),
            pop_seq: 0,
            in_flight: 0,
            pages_this_run: 0,
            max_waiting: cfg.max_waiting.unwrap_or((8 * cfg.concurrency).max(256)),
            tx,
            client,
            fetch_cfg,
            rt,
        };
        for u in loaded.urls {
            e.add_url(u);
        }
        // Pages in flight when the last run ended go first, in their pop order.
        let now = Instant::now();
        for p in replayed.pending {
            e.schedule(p, now)?;
        }
        e.seed()?;
        Ok(e)
    }

    fn next_seq(&mut self) -> u64 {
        self.pop_seq += 1;
        self.pop_seq - 1
    }

    /// Queues a freshly popped page (or one in flight at the last stop) behind its host, in
    /// pop order.
    fn schedule(&mut self, p: PageId, now: Instant) -> Result<()> {
        let host = self.host_of(p)?;
        let seq = self.next_seq();
        let waiting = Waiting {
            page: p,
            attempts: 0,
            not_before: None,
        };
        self.sched.push(host, seq, waiting, now);
        Ok(())
    }

    fn host_of(&self, p: PageId) -> Result<HostId> {
        self.page_host
            .get(p as usize)
            .copied()
            .with_context(|| format!("page {p} has no URL in the state"))
    }

    /// Registers a URL already known to be new; returns its id.
    fn add_url(&mut self, url: String) -> PageId {
        let id = self.urls.len() as PageId;
        let origin = links::host_key(&url).unwrap_or_default();
        let host = match self.host_index.get(&origin) {
            Some(&h) => h,
            None => {
                let h = self.hosts.len() as HostId;
                self.hosts.push(HostInfo {
                    origin: origin.clone(),
                    ..HostInfo::default()
                });
                self.sched.set_delay(h, self.cfg.delay);
                self.host_index.insert(origin, h);
                h
            }
        };
        self.hosts[host as usize].pages += 1;
        let url: Arc<str> = url.into();
        self.urls.push(url.clone());
        self.index.insert(url, id);
        self.page_host.push(host);
        id
    }

    /// The id of a URL, assigning a new one (and logging it) when unseen. `None` when the
    /// URL's host already has `max_pages_per_host` URLs (unless `force`).
    fn intern(&mut self, url: String, force: bool) -> Option<PageId> {
        if let Some(&id) = self.index.get(url.as_str()) {
            return Some(id);
        }
        if !force {
            let origin = links::host_key(&url).unwrap_or_default();
            if let Some(&h) = self.host_index.get(&origin) {
                if self.hosts[h as usize].pages >= self.cfg.max_pages_per_host {
                    self.stats.host_cap_links += 1;
                    return None;
                }
            }
        }
        let id = self.add_url(url.clone());
        self.writes.new_urls.push((id, url));
        Some(id)
    }

    fn seed(&mut self) -> Result<()> {
        let mut ids = Vec::new();
        let mut bad = Vec::new();
        for s in self.cfg.seeds.clone() {
            match links::normalize(&s, &self.cfg.fetch.url_rules) {
                Ok(u) => {
                    if let Some(id) = self.intern(u, true) {
                        ids.push(id);
                    }
                }
                Err(_) => bad.push(s),
            }
        }
        if !bad.is_empty() {
            bail!(
                "{} seed(s) are not absolute http(s) URLs, e.g. '{}'",
                bad.len(),
                bad[0]
            );
        }
        let new: Vec<PageId> = ids
            .into_iter()
            .filter(|&id| !self.frontier.pages().is_known(id))
            .collect();
        if !new.is_empty() {
            self.frontier.seed(&new);
            self.writes.events.push(Event::Seed(new));
        }
        if self.popped == 0 && self.frontier.is_empty() {
            bail!("no seeds: give at least one URL to start from");
        }
        self.commit()
    }

    fn commit(&mut self) -> Result<()> {
        if let Some(w) = &self.warc {
            if self
                .writes
                .events
                .iter()
                .any(|e| matches!(e, Event::Crawled { .. }))
                || self.stats_dirty
            {
                self.writes.warc = Some(w.position());
            }
        }
        if self.stats_dirty {
            self.writes.stats = Some(self.stats.encode());
        }
        let writes = std::mem::take(&mut self.writes);
        self.store.commit(&writes)?;
        self.stats_dirty = false;
        Ok(())
    }

    /// Writes the policy's current ranking of every URL to the state's
    /// [`RANKING_SNAPSHOT`](crate::ranking::RANKING_SNAPSHOT), which `export --ranking` reads
    /// while this crawl holds the state.
    fn snapshot_ranking(&mut self) -> Result<()> {
        let path = self.cfg.state_dir.join(crate::ranking::RANKING_SNAPSHOT);
        let frontier = &self.frontier;
        crate::ranking::write_page_marks(
            &self.cfg.state_dir.join(crate::ranking::PAGE_MARKS_SNAPSHOT),
            &self.urls,
            &self.page_meta,
        )?;
        crate::ranking::write_ranking(&path, &self.urls, |id| frontier.score(id))?;
        self.last_snapshot = self.crawled;
        self.last_snapshot_at = Instant::now();
        Ok(())
    }

    fn max_pages_reached(&self) -> bool {
        self.cfg.max_pages.is_some_and(|m| self.popped >= m)
    }

    /// Fills free request slots.
    fn dispatch(&mut self) -> Result<()> {
        let now = Instant::now();
        while self.in_flight < self.cfg.concurrency {
            if let Some((host, seq, w)) = self.sched.next_ready(now) {
                self.start(host, seq, w, now)?;
                continue;
            }
            if self.sched.waiting() >= self.max_waiting || self.max_pages_reached() {
                break;
            }
            let Some(p) = self.frontier.pop() else { break };
            self.writes.events.push(Event::Popped(p));
            self.popped += 1;
            self.schedule(p, now)?;
        }
        Ok(())
    }

    /// Uses `rules` for `host` from now on: its delay becomes the larger of `--delay` and its
    /// (capped) Crawl-delay.
    fn set_robots(&mut self, host: HostId, rules: RobotsRules, fetched_at: u64) {
        let crawl_delay = rules
            .crawl_delay()
            .unwrap_or_default()
            .min(self.cfg.max_crawl_delay);
        self.sched.set_delay(host, self.cfg.delay.max(crawl_delay));
        let info = &mut self.hosts[host as usize];
        info.robots = Some(rules);
        info.robots_at = fetched_at;
    }

    /// Counts a page given up without an HTTP answer.
    fn count_fetch_error(&mut self, failure: Option<TransportFailure>) {
        self.stats.fetch_errors += 1;
        match failure {
            Some(TransportFailure::Dns) => self.stats.dns_errors += 1,
            Some(TransportFailure::Tls) => self.stats.tls_errors += 1,
            _ => {}
        }
    }

    /// Starts the fetch of a page whose host is free (or its robots.txt first).
    fn start(&mut self, host: HostId, seq: u64, w: Waiting, now: Instant) -> Result<()> {
        let unix = robots::unix_now();
        let info = &mut self.hosts[host as usize];
        if info.robots.is_some() && !robots::fresh(info.robots_at, unix) {
            // Too old to be used (a run longer than a day): fetched again, failures included.
            info.robots = None;
            info.failed = None;
            info.robots_attempts = 0;
        }
        if info.robots.is_none() {
            if let Some(stored) = self.robots_cache.remove(&info.origin) {
                if robots::fresh(stored.fetched_at, unix) {
                    let rules = robots_rules(self.fetch_cfg.robots_agent(), &stored.answer);
                    self.stats.robots_cached += 1;
                    self.stats_dirty = true;
                    self.set_robots(host, rules, stored.fetched_at);
                }
            }
        }
        if let Some(failure) = self.hosts[host as usize].failed {
            self.count_fetch_error(Some(failure));
            self.finish_page(w.page, Outcome::FetchError, 0, Vec::new());
            return Ok(());
        }
        let info = &mut self.hosts[host as usize];
        let Some(rules) = info.robots.clone() else {
            // robots.txt first; the page goes back under its own sequence number.
            self.sched.push(host, seq, w, now);
            self.sched.start(host, now);
            self.in_flight += 1;
            self.stats.robots_fetched += 1;
            let (client, cfg, tx, origin) = (
                self.client.clone(),
                self.fetch_cfg.clone(),
                self.tx.clone(),
                info.origin.clone(),
            );
            self.rt.spawn(async move {
                let fetch = fetch::fetch_robots(&client, &cfg, &origin).await;
                let _ = tx.send(Msg::Robots { host, fetch });
            });
            return Ok(());
        };
        let url = self.urls[w.page as usize].clone();
        if !rules.allowed(&url) {
            self.stats.robots_disallowed += 1;
            self.finish_page(w.page, Outcome::RobotsDisallowed, 0, Vec::new());
            return Ok(());
        }
        self.sched.start(host, now);
        self.in_flight += 1;
        let (client, cfg, tx) = (self.client.clone(), self.fetch_cfg.clone(), self.tx.clone());
        let (id, attempts) = (w.page, w.attempts);
        self.rt.spawn(async move {
            let fetch = Box::new(fetch::fetch_page(&client, &cfg, &url).await);
            let _ = tx.send(Msg::Page {
                id,
                host,
                seq,
                attempts,
                fetch,
            });
        });
        Ok(())
    }

    /// Reports a finished page to the frontier and the log.
    fn finish_page(&mut self, id: PageId, outcome: Outcome, status: u16, links: Vec<PageId>) {
        self.frontier.on_crawled(id, &links);
        self.writes.events.push(Event::Crawled {
            id,
            outcome,
            status,
            links,
        });
        self.crawled += 1;
        self.pages_this_run += 1;
        self.stats_dirty = true;
    }

    fn handle(&mut self, msg: Msg) -> Result<()> {
        let now = Instant::now();
        self.in_flight -= 1;
        self.stats_dirty = true;
        match msg {
            Msg::Robots { host, fetch } => {
                self.stats.requests += fetch.requests;
                self.stats.timeouts += u64::from(fetch.timed_out);
                let retryable = fetch.failure.is_none_or(TransportFailure::retryable);
                let info = &mut self.hosts[host as usize];
                let mut backoff = Duration::ZERO;
                match fetch.rules {
                    RobotsRules::Unreachable
                        if retryable && info.robots_attempts < self.cfg.max_retries =>
                    {
                        // Retry later; the host's pages keep waiting meanwhile.
                        backoff =
                            self.cfg.retry_backoff * 2u32.saturating_pow(info.robots_attempts);
                        info.robots_attempts += 1;
                        self.stats.retries += 1;
                    }
                    rules => {
                        info.failed = fetch.failure.filter(|f| !f.retryable());
                        let unix = robots::unix_now();
                        // Only answers are kept for later runs; a failure is asked again.
                        if let Some(answer) = fetch.answer {
                            let stored = StoredRobots {
                                fetched_at: unix,
                                answer,
                            };
                            self.writes.robots.push((info.origin.clone(), stored));
                        }
                        self.set_robots(host, rules, unix);
                    }
                }
                self.sched.finish(host, now);
                if !backoff.is_zero() {
                    self.sched.hold(host, now + backoff, now);
                }
            }
            Msg::Page {
                id,
                host,
                seq,
                attempts,
                fetch,
            } => {
                self.sched.finish(host, now);
                let f = *fetch;
                self.stats.requests += 1;
                self.stats.bytes += f.bytes;
                self.stats.timeouts += u64::from(f.timed_out);
                if let Some(w) = &mut self.warc {
                    w.append(&f.warc)?;
                }
                if f.retryable && attempts < self.cfg.max_retries {
                    self.stats.retries += 1;
                    let not_before = now + self.cfg.retry_backoff * 2u32.saturating_pow(attempts);
                    self.sched.push(
                        host,
                        seq,
                        Waiting {
                            page: id,
                            attempts: attempts + 1,
                            not_before: Some(not_before),
                        },
                        now,
                    );
                    return Ok(());
                }
                let outcome = f.outcome.unwrap_or(Outcome::FetchError);
                match outcome {
                    Outcome::Html => self.stats.pages_html += 1,
                    Outcome::NotHtml => self.stats.pages_not_html += 1,
                    Outcome::HttpError => self.stats.http_errors += 1,
                    Outcome::Redirect => self.stats.redirects += 1,
                    Outcome::FetchError => self.count_fetch_error(f.failure),
                    Outcome::TooLarge => self.stats.too_large += 1,
                    Outcome::RobotsDisallowed => self.stats.robots_disallowed += 1,
                }
                self.stats.nofollow_pages += u64::from(f.nofollow_page);
                self.stats.nofollow_links += u64::from(f.nofollow_links);
                self.stats.invalid_links += u64::from(f.invalid_links);
                self.stats.trap_links += u64::from(f.trap_links);
                self.stats.parse_errors += u64::from(f.parse_error);
                let meta = PageMeta {
                    noindex: f.noindex,
                    canonical: f.canonical,
                };
                self.stats.noindex_pages += u64::from(meta.noindex);
                self.stats.canonical_pages += u64::from(meta.canonical.is_some());
                if !meta.is_empty() {
                    self.writes.pages.push((id, meta.clone()));
                    self.page_meta.insert(id, meta);
                }
                let mut ids = Vec::with_capacity(f.links.len());
                for u in f.links {
                    if let Some(l) = self.intern(u, false) {
                        ids.push(l);
                    }
                }
                self.finish_page(id, outcome, f.status, ids);
            }
        }
        Ok(())
    }

    fn progress(&self, start: Instant) -> Progress {
        let secs = start.elapsed().as_secs_f64().max(1e-9);
        Progress {
            pages_this_run: self.pages_this_run,
            pages_per_sec: self.pages_this_run as f64 / secs,
            pages_total: self.crawled,
            frontier: self.frontier.len(),
            waiting: self.sched.waiting(),
            in_flight: self.in_flight,
            hosts: self.hosts.len(),
            discovered: self.urls.len(),
            errors: self.stats.errors(),
        }
    }

    fn run(
        &mut self,
        rx: &mpsc::Receiver<Msg>,
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
            // `concurrency` fetches are ever uncommitted. The pops of `dispatch` are
            // committed with the next step (a pop lost in a crash is simply replayed).
            self.commit()?;
            // Every K pages, and at least every 30 s while pages are being crawled.
            if self.crawled >= self.last_snapshot + self.snapshot_every
                || (self.crawled > self.last_snapshot
                    && self.last_snapshot_at.elapsed() >= SNAPSHOT_INTERVAL)
            {
                self.snapshot_ranking()?;
            }
            if stopping.is_none() {
                self.dispatch()?;
            }
            if self.in_flight == 0 {
                if stopping.is_some() {
                    break StopReason::Interrupted;
                }
                if self.sched.waiting() == 0 {
                    if self.max_pages_reached() {
                        break StopReason::MaxPages;
                    }
                    if self.frontier.is_empty() {
                        break StopReason::Exhausted;
                    }
                }
            }
            if let Some(t) = stopping {
                if t.elapsed() >= self.cfg.stop_grace {
                    break StopReason::Interrupted;
                }
            }
            let now = Instant::now();
            let mut wait = Duration::from_millis(100);
            if let Some(t) = self.sched.next_timer() {
                wait = wait.min(t.saturating_duration_since(now));
            }
            match rx.recv_timeout(wait) {
                Ok(m) => {
                    self.handle(m)?;
                    while let Ok(m) = rx.try_recv() {
                        self.handle(m)?;
                    }
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    bail!("the fetch tasks stopped unexpectedly")
                }
            }
            if last_progress.elapsed() >= Duration::from_millis(250) {
                last_progress = Instant::now();
                progress(&self.progress(start));
            }
        };
        self.stats_dirty = true;
        self.commit()?;
        self.snapshot_ranking()?;
        progress(&self.progress(start));
        Ok(CrawlReport {
            stop: reason,
            stats: self.stats.clone(),
            pages_this_run: self.pages_this_run,
            elapsed: start.elapsed(),
            discovered: self.urls.len(),
            crawled: self.crawled,
            frontier: self.frontier.len(),
            pending: (self.popped - self.crawled) as usize,
            hosts: self.hosts.len(),
        })
    }
}

/// Longest time between two ranking snapshots while pages are being crawled.
const SNAPSHOT_INTERVAL: Duration = Duration::from_secs(30);
