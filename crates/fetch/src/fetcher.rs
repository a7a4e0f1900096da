//! Fetching for a crawl whose frontier lives elsewhere: a crawl worker
//! (`crawlrank crawl --frontier`, the `crawlrank-worker` crate) asks a frontier service which
//! URLs to fetch, and fetches them with exactly the engine's HTTP code — the same connector
//! (socket cap, proxy, TLS roots, refusal of non-public addresses), the same robots.txt and
//! page requests, the same link extraction and WARC records — behind this small API, which
//! keeps none of a crawl's state (no URL table, no frontier, no scheduler: the service holds
//! those). The engine itself does not use it: it has its own pool of kept connections and a
//! thread of its own (the crawler's `in_flight`), built from [`crate::connections`].

use crate::addresses::AddressGuard;
use crate::fetch::{self, FetchConfig, PageFetch, RobotsFetch, SitemapFetch};
use crate::http::{Connection, Connector};
use anyhow::Result;
use std::sync::Arc;
use std::time::Duration;

/// Makes requests for a worker: at most `max_open` sockets open at once.
pub struct Fetcher {
    connector: Connector,
    cfg: Arc<FetchConfig>,
}

/// One host's connection, kept between the requests of one task (robots.txt, then the page,
/// then its retries) and closed when dropped.
#[derive(Default)]
pub struct HostConnection(Option<Connection>);

impl Fetcher {
    /// A fetcher for `cfg` (an error names a bad proxy URL or CA file), connecting only to the
    /// addresses `guard` allows, with at most `max_open` sockets open at once.
    pub fn new(cfg: &FetchConfig, guard: AddressGuard, max_open: usize) -> Result<Self> {
        let connector = Connector::new(
            cfg.proxy.as_deref(),
            &cfg.ca_certs,
            cfg.connect_timeout,
            max_open.max(1),
            guard,
        )?
        .with_dns(cfg.dns.clone());
        Ok(Self {
            connector,
            cfg: Arc::new(cfg.clone()),
        })
    }

    /// How requests are made.
    pub fn config(&self) -> &FetchConfig {
        &self.cfg
    }

    /// Fetches `origin/robots.txt` (`origin` as [`crate::links::origin_key`] writes it), its
    /// redirects followed `hop_delay` apart (the host's politeness delay), within the fetch
    /// timeout plus those delays, on `conn` if it is open.
    pub async fn robots(
        &self,
        conn: &mut HostConnection,
        origin: &str,
        hop_delay: Duration,
    ) -> RobotsFetch {
        let fetch = fetch::fetch_robots(&self.connector, &mut conn.0, &self.cfg, origin, hop_delay);
        let timeout = self.cfg.timeout + hop_delay * fetch::ROBOTS_MAX_REDIRECTS;
        match tokio::time::timeout(timeout, fetch).await {
            Ok(f) => f,
            Err(_) => {
                conn.close().await;
                RobotsFetch::timed_out()
            }
        }
    }

    /// Fetches one page once within the fetch timeout, on `conn` if it is open: its outcome,
    /// out-links and WARC records (never an error: failures are outcomes).
    pub async fn page(&self, conn: &mut HostConnection, url: &str) -> PageFetch {
        let fetch = fetch::fetch_page(&self.connector, &mut conn.0, &self.cfg, url);
        match tokio::time::timeout(self.cfg.timeout, fetch).await {
            Ok(f) => f,
            Err(_) => {
                conn.close().await;
                PageFetch::timed_out()
            }
        }
    }
}

impl Fetcher {
    /// Fetches one sitemap file once within the fetch timeout, on `conn` if it is open: what
    /// it lists (an index's sitemaps or its entries), a redirect's target, its WARC records
    /// (never an error: failures are outcomes).
    pub async fn sitemap(&self, conn: &mut HostConnection, url: &str) -> SitemapFetch {
        let fetch = fetch::fetch_sitemap(&self.connector, &mut conn.0, &self.cfg, url);
        match tokio::time::timeout(self.cfg.timeout, fetch).await {
            Ok(f) => f,
            Err(_) => {
                conn.close().await;
                SitemapFetch::timed_out()
            }
        }
    }
}

impl HostConnection {
    /// Closes the connection, if open, and returns once its socket is closed (so that the
    /// host's next request cannot meet it still open).
    async fn close(&mut self) {
        if let Some(c) = self.0.take() {
            c.close().await;
        }
    }
}
