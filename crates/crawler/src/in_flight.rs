//! The requests in flight: page and robots.txt fetches started as tokio tasks on the I/O
//! runtime, whose results come back to the engine thread over a channel ([`InFlight`]).
//!
//! Why a module of its own: this is the one place that knows how a fetch is run — the HTTP
//! client, the runtime, the channel — and how many are under way. The engine decides *what*
//! to fetch and when; limits on connections (a bounded pool, per-host connections) belong
//! here and change nothing else.

use crate::fetch::{self, FetchConfig, PageFetch, RobotsFetch};
use crate::urls::HostId;
use anyhow::{bail, Result};
use crawlrank_frontier::PageId;
use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;

/// What the engine needs back with a page's fetch result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageTicket {
    /// The page fetched.
    pub page: PageId,
    /// Its host (the politeness key), whose slot the fetch holds.
    pub host: HostId,
    /// The page's pop sequence number (its place in its host's queue, kept by a retry).
    pub seq: u64,
    /// Failed attempts before this one.
    pub attempts: u32,
}

/// A finished fetch.
#[derive(Debug)]
pub enum Done {
    /// A page's fetch attempt ended.
    Page {
        /// What the fetch was started with.
        ticket: PageTicket,
        /// How it ended.
        fetch: Box<PageFetch>,
    },
    /// A host's robots.txt fetch ended.
    Robots {
        /// The host.
        host: HostId,
        /// How it ended.
        fetch: RobotsFetch,
    },
}

/// Fetches under way, and the means to start more.
pub struct InFlight {
    client: reqwest::Client,
    cfg: Arc<FetchConfig>,
    rt: tokio::runtime::Handle,
    tx: mpsc::Sender<Done>,
    rx: mpsc::Receiver<Done>,
    /// Started and not yet received.
    count: usize,
}

impl InFlight {
    /// Builds the HTTP client for `cfg` (an error names a bad CA file or proxy); fetches will
    /// run on `rt`.
    pub fn new(cfg: &FetchConfig, rt: tokio::runtime::Handle) -> Result<Self> {
        let cfg = Arc::new(cfg.clone());
        let client = fetch::build_client(&cfg)?;
        let (tx, rx) = mpsc::channel();
        Ok(Self {
            client,
            cfg,
            rt,
            tx,
            rx,
            count: 0,
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

    /// Starts fetching a page.
    pub fn fetch_page(&mut self, ticket: PageTicket, url: Arc<str>) {
        self.count += 1;
        let (client, cfg, tx) = (self.client.clone(), self.cfg.clone(), self.tx.clone());
        self.rt.spawn(async move {
            let fetch = Box::new(fetch::fetch_page(&client, &cfg, &url).await);
            let _ = tx.send(Done::Page { ticket, fetch });
        });
    }

    /// Starts fetching `origin/robots.txt` for `host`.
    pub fn fetch_robots(&mut self, host: HostId, origin: String) {
        self.count += 1;
        let (client, cfg, tx) = (self.client.clone(), self.cfg.clone(), self.tx.clone());
        self.rt.spawn(async move {
            let fetch = fetch::fetch_robots(&client, &cfg, &origin).await;
            let _ = tx.send(Done::Robots { host, fetch });
        });
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
