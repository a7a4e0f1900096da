//! A typed client of a URLFrontier service: the few calls a crawl worker (and the CLI's
//! ranking export) makes, each with a timeout and an error that names the call and the
//! service, and the choice between crawlrank's `ReportPage` extension and plain `PutURLs`
//! for reporting a fetched page.
//!
//! Named `FrontierClient`, not `Frontier`: in crawlrank "frontier" is the crawl frontier
//! itself (`crawlrank_frontier::Frontier`); this is a connection to a service holding one.
//!
//! Reporting a page is the one call that differs between servers. crawlrank's service takes
//! the page and its out-links in one logged call (`ReportPage`), so the policy sees the page
//! crawled with all its links at once, exactly as the simulator does. Any other URLFrontier
//! server gets what its API defines: the out-links as discovered URLs naming the page as
//! their parent (StormCrawler's `url.path` metadata, which crawlrank's service reads too),
//! then the page's known update. Which one a frontier speaks is learned from the first
//! report: `Unimplemented` switches the worker to plain `PutURLs` for good.

use crate::ext_proto::{
    crawlrank_frontier_client::CrawlrankFrontierClient, PageReport, RankedUrl, RankingParams,
};
use crate::proto::{
    ack_message::Status as AckStatus, get_params, url_frontier_client::UrlFrontierClient, url_item,
    BlockQueueParams, DiscoveredUrlItem, GetParams, KnownUrlItem, QueueDelayParams,
    QueueWithinCrawlParams, StringList, UrlInfo, UrlItem,
};
use crate::STORMCRAWLER_PATH_KEY;
use anyhow::{bail, Context, Result};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tonic::transport::{Channel, Endpoint};

/// Longest wait for one call's answer.
const CALL_TIMEOUT: Duration = Duration::from_secs(30);

/// A connection to a URLFrontier service for one crawl, cheap to clone (one HTTP/2 channel
/// shared).
#[derive(Clone)]
pub struct FrontierClient {
    addr: Arc<str>,
    crawl_id: Arc<str>,
    api: UrlFrontierClient<Channel>,
    ext: CrawlrankFrontierClient<Channel>,
    /// The server answered `ReportPage` with `Unimplemented`: report with `PutURLs`.
    plain: Arc<AtomicBool>,
}

/// What the crawl's `GetStats` says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CrawlCounts {
    /// URLs not completed (queued, leased or due again).
    pub size: u64,
    /// URLs leased now, by any worker.
    pub in_process: u64,
}

impl FrontierClient {
    /// Connects to the frontier at `addr` (`http://HOST:PORT`; a bare `HOST:PORT` is taken
    /// as `http://`) for crawl `crawl_id` (empty: the default crawl).
    ///
    /// With `plain`, pages are reported with plain `PutURLs` from the start, as to a server
    /// without crawlrank's extension.
    pub async fn connect(addr: &str, crawl_id: &str, plain: bool) -> Result<Self> {
        let url = if addr.contains("://") {
            addr.to_string()
        } else {
            format!("http://{addr}")
        };
        let endpoint = Endpoint::from_shared(url.clone())
            .with_context(|| format!("bad frontier address '{addr}'"))?
            .connect_timeout(Duration::from_secs(10))
            .timeout(CALL_TIMEOUT);
        let channel = endpoint
            .connect()
            .await
            .with_context(|| format!("cannot connect to the frontier at {url}"))?;
        Ok(Self {
            addr: url.into(),
            crawl_id: crawl_id.into(),
            api: UrlFrontierClient::new(channel.clone()),
            ext: CrawlrankFrontierClient::new(channel),
            plain: Arc::new(AtomicBool::new(plain)),
        })
    }

    /// The frontier's address, as connected to.
    pub fn addr(&self) -> &str {
        &self.addr
    }

    /// Whether pages are reported with plain `PutURLs` (the frontier has no `ReportPage`).
    pub fn is_plain(&self) -> bool {
        self.plain.load(Ordering::Relaxed)
    }

    fn info(&self, url: String, key: String) -> UrlInfo {
        UrlInfo {
            url,
            key,
            metadata: Default::default(),
            crawl_id: self.crawl_id.to_string(),
        }
    }

    /// The leased URL as its known update names it: its metadata as leased, with `metadata`
    /// set over it.
    fn updated(&self, leased: &UrlInfo, metadata: Vec<(String, String)>) -> UrlInfo {
        let mut page = self.info(leased.url.clone(), leased.key.clone());
        page.metadata = leased.metadata.clone();
        for (k, v) in metadata {
            page.metadata.insert(k, StringList { values: vec![v] });
        }
        page
    }

    /// Leases at most `max_queues` URLs, one per queue, for `lease` seconds: the queues that
    /// may serve now, in the frontier's order.
    pub async fn get_urls(&mut self, max_queues: usize, lease: u32) -> Result<Vec<UrlInfo>> {
        let params = GetParams {
            max_urls_per_queue: 1,
            max_queues: u32::try_from(max_queues.max(1)).unwrap_or(u32::MAX),
            key: String::new(),
            delay_requestable: lease,
            item: Some(get_params::Item::CrawlId(self.crawl_id.to_string())),
        };
        let mut stream = self
            .api
            .get_ur_ls(params)
            .await
            .with_context(|| format!("GetURLs at {} failed", self.addr))?
            .into_inner();
        let mut out = Vec::new();
        while let Some(info) = stream
            .message()
            .await
            .with_context(|| format!("GetURLs at {} broke off", self.addr))?
        {
            out.push(info);
        }
        Ok(out)
    }

    /// Streams `items` on one `PutURLs` call; returns how many were acked `OK`, and fails
    /// when an item was acked `FAIL` or an ack is missing.
    async fn put(&mut self, items: Vec<UrlItem>, what: &str) -> Result<usize> {
        let n = items.len();
        let mut acks = self
            .api
            .put_ur_ls(futures_util::stream::iter(items))
            .await
            .with_context(|| format!("PutURLs ({what}) at {} failed", self.addr))?
            .into_inner();
        let (mut received, mut ok) = (0, 0);
        while let Some(ack) = acks
            .message()
            .await
            .with_context(|| format!("PutURLs ({what}) at {} broke off", self.addr))?
        {
            received += 1;
            match ack.status() {
                AckStatus::Ok => ok += 1,
                AckStatus::Skipped => {}
                AckStatus::Fail => bail!(
                    "the frontier at {} could not store an item ({what}, ack id '{}')",
                    self.addr,
                    ack.id
                ),
            }
        }
        if received != n {
            bail!(
                "the frontier at {} acked {received} of {n} items ({what})",
                self.addr
            );
        }
        Ok(ok)
    }

    /// Puts the seeds as discovered URLs with no parent; returns how many were new.
    pub async fn put_seeds(&mut self, seeds: &[String]) -> Result<usize> {
        let items = seeds
            .iter()
            .map(|s| discovered(self.info(s.clone(), String::new())))
            .collect();
        self.put(items, "seeds").await
    }

    /// Puts the entries of the sitemap at `sitemap` as discovered URLs with no parent, marked
    /// as its entries ([`crate::SITEMAP_KEY`]): crawlrank's service admits them within the
    /// caps on hosts; returns how many were new.
    pub async fn put_listed(&mut self, sitemap: &str, entries: &[String]) -> Result<usize> {
        let mut items = Vec::with_capacity(entries.len());
        for e in entries {
            let mut info = self.info(e.clone(), String::new());
            info.metadata.insert(
                crate::SITEMAP_KEY.to_string(),
                StringList {
                    values: vec![sitemap.to_string()],
                },
            );
            items.push(discovered(info));
        }
        self.put(items, "sitemap entries").await
    }

    /// Reports a fetched (or given-up) page: done for good, with its `metadata` and its
    /// out-links. Returns the out-links new to the crawl.
    pub async fn report(
        &mut self,
        leased: &UrlInfo,
        metadata: Vec<(String, String)>,
        links: Vec<String>,
    ) -> Result<u64> {
        let page = self.updated(leased, metadata);
        if !self.is_plain() {
            let report = PageReport {
                page: Some(KnownUrlItem {
                    info: Some(page.clone()),
                    refetchable_from_date: 0,
                }),
                outlinks: links.clone(),
            };
            match self.ext.report_page(report).await {
                Ok(ack) => return Ok(ack.into_inner().discovered.into()),
                Err(s) if s.code() == tonic::Code::Unimplemented => {
                    self.plain.store(true, Ordering::Relaxed);
                }
                Err(s) => {
                    return Err(s).with_context(|| {
                        format!("ReportPage of {} at {} failed", leased.url, self.addr)
                    })
                }
            }
        }
        // A plain URLFrontier server: the links first, naming their parent, then the page.
        let parent = StringList {
            values: vec![leased.url.clone()],
        };
        let items: Vec<UrlItem> = links
            .into_iter()
            .map(|l| {
                let mut info = self.info(l, String::new());
                info.metadata
                    .insert(STORMCRAWLER_PATH_KEY.to_string(), parent.clone());
                discovered(info)
            })
            .collect();
        let new = if items.is_empty() {
            0
        } else {
            self.put(items, "out-links").await?
        };
        self.put(vec![known(page, 0)], "a page's update").await?;
        Ok(new as u64)
    }

    /// Reports a page whose fetch is to be tried again from `at` (seconds since the epoch)
    /// after `attempts` failed fetches, with `metadata` (its outcome [`crate::RETRY_OUTCOME`]
    /// among them): its lease ends, and the frontier serves it again from `at` to whichever
    /// worker asks, this one restarted included.
    pub async fn retry_at(
        &mut self,
        leased: &UrlInfo,
        metadata: Vec<(String, String)>,
        attempts: u32,
        at: u64,
    ) -> Result<()> {
        let attempts = (crate::ATTEMPTS_KEY.to_string(), attempts.to_string());
        let page = self.updated(leased, metadata.into_iter().chain([attempts]).collect());
        self.put(vec![known(page, at)], "a page's retry").await?;
        Ok(())
    }

    /// Sets the delay between two answers of queue `key` (empty: the crawl's default), in
    /// whole seconds.
    pub async fn set_delay(&mut self, key: &str, secs: u32) -> Result<()> {
        self.api
            .set_delay(QueueDelayParams {
                key: key.to_string(),
                delay_requestable: secs,
                crawl_id: self.crawl_id.to_string(),
                local: false,
            })
            .await
            .with_context(|| format!("SetDelay at {} failed", self.addr))?;
        Ok(())
    }

    /// Holds queue `key`: none of its URLs is served to any worker before `until` (seconds
    /// since the epoch).
    pub async fn block_queue_until(&mut self, key: &str, until: u64) -> Result<()> {
        self.api
            .block_queue_until(BlockQueueParams {
                key: key.to_string(),
                time: until,
                crawl_id: self.crawl_id.to_string(),
                local: false,
            })
            .await
            .with_context(|| format!("BlockQueueUntil of '{key}' at {} failed", self.addr))?;
        Ok(())
    }

    /// The policy's ranking of the crawl (crawlrank's `GetRanking`): at most `limit` URLs
    /// (0: the service's default), best first. Fails on a service without the extension.
    pub async fn ranking(&mut self, limit: u32) -> Result<Vec<RankedUrl>> {
        // A status's own Display is verbose (details, metadata); code and message say it all.
        let brief = |s: tonic::Status| anyhow::anyhow!("{}: {}", s.code(), s.message());
        let mut stream = self
            .ext
            .get_ranking(RankingParams {
                crawl_id: self.crawl_id.to_string(),
                limit,
            })
            .await
            .map_err(brief)
            .with_context(|| format!("GetRanking at {} failed", self.addr))?
            .into_inner();
        let mut out = Vec::new();
        while let Some(url) = stream
            .message()
            .await
            .map_err(brief)
            .with_context(|| format!("the ranking stream from {} broke off", self.addr))?
        {
            out.push(url);
        }
        Ok(out)
    }

    /// The service's nodes (`ListNodes`): their addresses as the nodes give them, empty
    /// when the server lists none.
    pub async fn list_nodes(&mut self) -> Result<Vec<String>> {
        let nodes = self
            .api
            .list_nodes(crate::proto::Empty {})
            .await
            .with_context(|| format!("ListNodes at {} failed", self.addr))?
            .into_inner();
        Ok(nodes.values)
    }

    /// The crawl's counts.
    pub async fn counts(&mut self) -> Result<CrawlCounts> {
        let stats = self
            .api
            .get_stats(QueueWithinCrawlParams {
                key: String::new(),
                crawl_id: self.crawl_id.to_string(),
                local: false,
            })
            .await
            .with_context(|| format!("GetStats at {} failed", self.addr))?
            .into_inner();
        Ok(CrawlCounts {
            size: stats.size,
            in_process: stats.in_process.into(),
        })
    }
}

/// Whether `err` (from a call of a [`FrontierClient`]) says the frontier could not be
/// reached or went away mid-call — refused or reset connections, a call timed out, a stream
/// broken off, a service refusing calls until it restarts — rather than that it refused the
/// call itself: the call may succeed when tried again later.
pub fn is_unreachable(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        if cause.downcast_ref::<tonic::transport::Error>().is_some() {
            return true;
        }
        let Some(status) = cause.downcast_ref::<tonic::Status>() else {
            return false;
        };
        match status.code() {
            tonic::Code::Unavailable
            | tonic::Code::Unknown
            | tonic::Code::Cancelled
            | tonic::Code::DeadlineExceeded => true,
            // A connection reset under a call in progress.
            tonic::Code::Internal => status.message().contains("h2 protocol error"),
            _ => false,
        }
    })
}

/// A known URL's update: done for good (`refetch` 0) or due again from `refetch`.
fn known(info: UrlInfo, refetch: u64) -> UrlItem {
    UrlItem {
        item: Some(url_item::Item::Known(KnownUrlItem {
            info: Some(info),
            refetchable_from_date: refetch,
        })),
        ..Default::default()
    }
}

fn discovered(info: UrlInfo) -> UrlItem {
    UrlItem {
        item: Some(url_item::Item::Discovered(DiscoveredUrlItem {
            info: Some(info),
        })),
        ..Default::default()
    }
}
