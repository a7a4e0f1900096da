//! The requests in flight: page, robots.txt and sitemap fetches started as tokio tasks on the I/O
//! runtime, whose results come back to the engine thread over a channel ([`InFlight`]), each
//! on its host's kept connection from [`Connections`] if it has one, else on a new one from
//! the [`Connector`], which counts every socket until it is closed.
//!
//! Why a module of its own: this is the one place that knows how a fetch is run — the HTTP
//! clients and their connections, the runtime, the channel — and how many are under way. The
//! engine decides *what* to fetch and when; which connections stay open, and how many
//! requests may be under way when file descriptors run short, are decided here. The
//! connector's sockets are at most `concurrency + idle`: requests in flight hold one
//! connection each, the pool at most `idle`, and a connection being closed keeps its count
//! until its socket is.
//!
//! Running out of file descriptors ([`crawlrank_fetch::fds`]) is a transient shortage: the engine
//! reports it ([`InFlight::fd_shortage`]), which closes every idle connection and halves the
//! requests allowed in flight (at most once per [`SHORTAGE_EVERY`]); each result after
//! [`SHORTAGE_CALM`] without a shortage allows one more, back up to `--concurrency`.
//!
//! Every fetch task answers exactly once, whatever happens to it: its result goes back through
//! a [`Reply`], which, if the task ends without sending one (a panic in the fetch code or in a
//! dependency outside the CPU pool, or the runtime dropping the task), sends a failed fetch of
//! the same request instead. So a fetch's slot is always freed and its page always handled;
//! without it, each such task would hold a slot for ever and leave its page popped, and after
//! `--concurrency` of them the crawl would idle with nothing under way.

use anyhow::{bail, Result};
use crawlrank_crawl_state::OriginId;
use crawlrank_fetch::addresses::AddressGuard;
use crawlrank_fetch::connections::Connections;
use crawlrank_fetch::fetch::{self, FetchConfig, PageFetch, RetryHint, RobotsFetch, SitemapFetch};
use crawlrank_fetch::http::{Connection, Connector};
use crawlrank_frontier::PageId;
use std::future::Future;
use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Shortages closer than this halve the requests in flight once.
pub const SHORTAGE_EVERY: Duration = Duration::from_millis(250);

/// After this long without a shortage, requests in flight grow back (one per result).
pub const SHORTAGE_CALM: Duration = Duration::from_secs(1);

/// What the engine needs back with a page's fetch result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageTicket {
    /// The page fetched.
    pub page: PageId,
    /// Its host (the politeness key), whose slot the fetch holds.
    pub host: OriginId,
    /// The page's pop sequence number (its place in its host's queue, kept by a retry).
    pub seq: u64,
    /// Failed attempts before this one.
    pub attempts: u32,
}

/// A host's connection lent to a fetch and given back with its result (`None`: it had
/// none, or the fetch closed it); [`InFlight::checkin`] takes it back.
#[must_use = "a kept connection goes back to the pool"]
pub struct KeptConnection(pub Option<Connection>);

/// A finished fetch, with its host's connection to give back ([`InFlight::checkin`]).
pub enum Done {
    /// A page's fetch attempt ended.
    Page {
        /// What the fetch was started with.
        ticket: PageTicket,
        /// How it ended.
        fetch: Box<PageFetch>,
        kept: KeptConnection,
    },
    /// A host's robots.txt fetch ended.
    Robots {
        /// The host.
        host: OriginId,
        /// How it ended.
        fetch: RobotsFetch,
        kept: KeptConnection,
    },
    /// A host's sitemap fetch ended (crawlrank_fetch::sitemap: a side request, not a page).
    Sitemap {
        /// The host.
        host: OriginId,
        /// How it ended.
        fetch: Box<SitemapFetch>,
        kept: KeptConnection,
    },
}

/// Where a fetch task sends its one result. Dropped without [`Reply::send`] (the task
/// panicked, or was dropped), it sends the failed fetch it was made with, so the engine frees
/// the slot and counts the page's fetch as an error rather than waiting for it for ever.
struct Reply {
    tx: mpsc::Sender<Done>,
    failed: Option<Done>,
}

impl Reply {
    fn send(mut self, done: Done) {
        self.failed = None;
        let _ = self.tx.send(done);
    }
}

impl Drop for Reply {
    fn drop(&mut self) {
        if let Some(failed) = self.failed.take() {
            let _ = self.tx.send(failed);
        }
    }
}

/// A page fetch whose task ended without a result (a panic): a fetch error, not retried (the
/// same bug would most likely strike again), no connection given back.
fn page_panicked(ticket: PageTicket) -> Done {
    Done::Page {
        ticket,
        fetch: Box::new(PageFetch {
            outcome: Some(crawlrank_fetch::page::Outcome::FetchError),
            retry: RetryHint::default(),
            failure: Some(crawlrank_fetch::page::TransportFailure::Other),
            ..PageFetch::default()
        }),
        kept: KeptConnection(None),
    }
}

/// Runs `fetch` on the host's connection `conn` within `timeout`; past it, `timed_out()`,
/// with the connection closed before the result is reported: the host's next request
/// cannot meet this one's connection still open.
async fn fetch_within<T>(
    timeout: Duration,
    conn: &mut Option<Connection>,
    fetch: impl AsyncFnOnce(&mut Option<Connection>) -> T,
    timed_out: fn() -> T,
) -> T {
    let fetched = tokio::time::timeout(timeout, fetch(&mut *conn)).await;
    match fetched {
        Ok(f) => f,
        Err(_) => {
            if let Some(c) = conn.take() {
                c.close().await;
            }
            timed_out()
        }
    }
}

/// How many requests may be under way: `max`, halved on a shortage of file descriptors and
/// grown back one by one.
#[derive(Debug)]
struct Throttle {
    max: usize,
    limit: usize,
    last_shortage: Option<Instant>,
    last_cut: Option<Instant>,
}

impl Throttle {
    fn shortage(&mut self, now: Instant) {
        if self
            .last_cut
            .is_none_or(|t| now.duration_since(t) >= SHORTAGE_EVERY)
        {
            self.limit = (self.limit / 2).max(1);
            self.last_cut = Some(now);
        }
        self.last_shortage = Some(now);
    }

    fn result(&mut self, now: Instant) {
        if self.limit < self.max
            && self
                .last_shortage
                .is_none_or(|t| now.duration_since(t) >= SHORTAGE_CALM)
        {
            self.limit += 1;
        }
    }
}

/// Fetches under way, and the means to start more.
pub struct InFlight {
    connector: Arc<Connector>,
    conns: Connections,
    cfg: Arc<FetchConfig>,
    rt: tokio::runtime::Handle,
    tx: mpsc::Sender<Done>,
    rx: mpsc::Receiver<Done>,
    /// Started and not yet received.
    count: usize,
    throttle: Throttle,
}

impl InFlight {
    /// Sets up connecting for `cfg` (an error names a bad CA file or proxy), to the
    /// addresses `guard` allows; at most `concurrency` fetches will run at once, on `rt`, and
    /// at most `idle` idle connections stay open.
    pub fn new(
        cfg: &FetchConfig,
        guard: AddressGuard,
        rt: tokio::runtime::Handle,
        concurrency: usize,
        idle: usize,
    ) -> Result<Self> {
        let connector = Connector::new(
            cfg.proxy.as_deref(),
            &cfg.ca_certs,
            cfg.connect_timeout,
            concurrency + idle,
            guard,
        )?
        .with_dns(cfg.dns.clone());
        let connector = Arc::new(connector);
        let (tx, rx) = mpsc::channel();
        Ok(Self {
            connector,
            conns: Connections::new(idle),
            cfg: Arc::new(cfg.clone()),
            rt,
            tx,
            rx,
            count: 0,
            throttle: Throttle {
                max: concurrency,
                limit: concurrency,
                last_shortage: None,
                last_cut: None,
            },
        })
    }

    /// Fetches under way.
    pub fn len(&self) -> usize {
        self.count
    }

    /// Whether no fetch is under way.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Whether another fetch may start: fewer than `concurrency` are under way, or fewer
    /// than a shortage of file descriptors left allowed.
    pub fn has_room(&self) -> bool {
        self.count < self.throttle.limit
    }

    /// Fetches allowed at once now.
    pub fn limit(&self) -> usize {
        self.throttle.limit
    }

    /// Idle connections kept open.
    pub fn idle(&self) -> usize {
        self.conns.idle()
    }

    /// Runs `task` on the I/O runtime as one fetch under way; its result comes back through
    /// [`InFlight::wait`], or `failed` does if the task ends without one (see [`Reply`]).
    fn spawn(&mut self, failed: Done, task: impl Future<Output = Done> + Send + 'static) {
        self.count += 1;
        let reply = Reply {
            tx: self.tx.clone(),
            failed: Some(failed),
        };
        self.rt.spawn(async move {
            let done = task.await;
            reply.send(done);
        });
    }

    /// Starts fetching a page, within the fetch timeout.
    pub fn fetch_page(&mut self, ticket: PageTicket, url: Arc<str>) {
        let mut conn = self.conns.checkout(ticket.host);
        let (connector, cfg) = (self.connector.clone(), self.cfg.clone());
        self.spawn(page_panicked(ticket), async move {
            let fetch = fetch_within(
                cfg.timeout,
                &mut conn,
                async |conn| fetch::fetch_page(&connector, conn, &cfg, &url).await,
                PageFetch::timed_out,
            )
            .await;
            Done::Page {
                ticket,
                fetch: Box::new(fetch),
                kept: KeptConnection(conn),
            }
        });
    }

    /// Starts fetching `origin/robots.txt` for `host`, its redirects followed `delay` apart
    /// (the host's politeness delay), within the fetch timeout plus those delays.
    pub fn fetch_robots(&mut self, host: OriginId, origin: String, delay: Duration) {
        let mut conn = self.conns.checkout(host);
        let (connector, cfg) = (self.connector.clone(), self.cfg.clone());
        let timeout = cfg.timeout + delay * fetch::ROBOTS_MAX_REDIRECTS;
        // A panicked robots.txt fetch reads as unreachable, as a failed one does.
        let failed = Done::Robots {
            host,
            fetch: RobotsFetch {
                timed_out: false,
                ..RobotsFetch::timed_out()
            },
            kept: KeptConnection(None),
        };
        self.spawn(failed, async move {
            let fetch = fetch_within(
                timeout,
                &mut conn,
                async |conn| fetch::fetch_robots(&connector, conn, &cfg, &origin, delay).await,
                RobotsFetch::timed_out,
            )
            .await;
            Done::Robots {
                host,
                fetch,
                kept: KeptConnection(conn),
            }
        });
    }

    /// Starts fetching `url`, a sitemap of `host`, within the fetch timeout.
    pub fn fetch_sitemap(&mut self, host: OriginId, url: String) {
        let mut conn = self.conns.checkout(host);
        let (connector, cfg) = (self.connector.clone(), self.cfg.clone());
        // A panicked sitemap fetch reads as a failed one, not retried.
        let failed = Done::Sitemap {
            host,
            fetch: Box::new(SitemapFetch {
                failure: Some(crawlrank_fetch::page::TransportFailure::Other),
                ..SitemapFetch::default()
            }),
            kept: KeptConnection(None),
        };
        self.spawn(failed, async move {
            let fetch = fetch::fetch_sitemap(&connector, &mut conn, &cfg, &url);
            let fetch = match tokio::time::timeout(cfg.timeout, fetch).await {
                Ok(f) => f,
                Err(_) => {
                    conn = None;
                    SitemapFetch::timed_out()
                }
            };
            Done::Sitemap {
                host,
                fetch: Box::new(fetch),
                kept: KeptConnection(conn),
            }
        });
    }

    /// Takes back `host`'s connection after its result was handled, keeping it open until
    /// `until`, `wanted` if the host has pages waiting (see [`Connections::checkin`]). Also
    /// closes the connections whose time is up.
    pub fn checkin(
        &mut self,
        host: OriginId,
        kept: KeptConnection,
        until: Instant,
        wanted: bool,
        now: Instant,
    ) {
        self.conns.checkin(host, kept.0, until, wanted, now);
        self.conns.expire(now);
    }

    /// Closes the idle connections whose time is up.
    pub fn expire(&mut self, now: Instant) {
        self.conns.expire(now);
    }

    /// A fetch (or a file) failed for want of file descriptors at `now`: closes every idle
    /// connection and cuts the fetches allowed at once.
    pub fn fd_shortage(&mut self, now: Instant) {
        self.conns.close_idle();
        self.throttle.shortage(now);
    }

    /// A fetch ended other than by a shortage of file descriptors.
    pub fn fetch_ended(&mut self, now: Instant) {
        self.throttle.result(now);
    }

    /// The next finished fetch, waiting at most `timeout` for one.
    pub fn wait(&mut self, timeout: Duration) -> Result<Option<Done>> {
        match self.rx.recv_timeout(timeout) {
            Ok(done) => {
                self.count -= 1;
                Ok(Some(done))
            }
            Err(mpsc::RecvTimeoutError::Timeout) => Ok(None),
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                bail!("the fetch tasks stopped unexpectedly")
            }
        }
    }

    /// A finished fetch if one is there, without waiting.
    pub fn try_next(&mut self) -> Option<Done> {
        let done = self.rx.try_recv().ok()?;
        self.count -= 1;
        Some(done)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panicking_fetch_task_frees_its_slot_as_a_counted_fetch_error() {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let cfg = FetchConfig::default();
        let mut in_flight =
            InFlight::new(&cfg, AddressGuard::default(), rt.handle().clone(), 1, 0).unwrap();
        let ticket = PageTicket {
            page: 7,
            host: 3,
            seq: 11,
            attempts: 0,
        };
        in_flight.spawn(page_panicked(ticket), async {
            panic!("a bug in the fetch code");
        });
        assert!(!in_flight.has_room(), "the fetch holds the one slot");
        let done = in_flight
            .wait(Duration::from_secs(30))
            .unwrap()
            .expect("the panicked fetch answers");
        let Done::Page {
            ticket: t,
            fetch,
            kept,
        } = done
        else {
            panic!("not a page's result");
        };
        assert_eq!(t, ticket);
        assert_eq!(
            fetch.outcome,
            Some(crawlrank_fetch::page::Outcome::FetchError)
        );
        assert!(!fetch.retry.retryable);
        assert!(kept.0.is_none());
        assert!(
            in_flight.is_empty() && in_flight.has_room(),
            "the slot is free again"
        );
    }

    #[test]
    fn shortages_halve_the_limit_and_calm_grows_it_back() {
        let t0 = Instant::now();
        let mut t = Throttle {
            max: 16,
            limit: 16,
            last_shortage: None,
            last_cut: None,
        };
        t.shortage(t0);
        t.shortage(t0 + Duration::from_millis(10)); // the same burst: one cut
        assert_eq!(t.limit, 8);
        t.shortage(t0 + SHORTAGE_EVERY);
        assert_eq!(t.limit, 4);
        t.result(t0 + SHORTAGE_EVERY + Duration::from_millis(500));
        assert_eq!(t.limit, 4, "not calm yet");
        let calm = t0 + SHORTAGE_EVERY + SHORTAGE_CALM;
        for _ in 0..20 {
            t.result(calm);
        }
        assert_eq!(t.limit, 16, "back up to the maximum, not past it");
        for i in 0..10 {
            t.shortage(calm + SHORTAGE_EVERY * (i + 1));
        }
        assert_eq!(t.limit, 1, "never below one");
    }
}
