//! A crawl's state, kept once for every way crawlrank crawls: the URL table (a dense page id
//! per URL, the seen-set on disk with a Bloom filter and a bounded cache in memory), the
//! crawl's hosts and the caps on them, each URL's hops from the seeds with their limits, and the
//! rule of which host queue serves next. It does no I/O to the web and no fetching: the
//! crawler's engine (`crawlrank crawl`) and the frontier service (`crawlrank frontier
//! serve`, whose workers fetch) build on it, so that what one admits the other admits too.
//!
//! | module | job |
//! |---|---|
//! | `caps` | the crawl's origins and registrable domains with their URL counts, and the caps new URLs are admitted within ([`HostCaps`], [`UrlLimits`]) |
//! | `hops` | each URL's link hops and redirect hops from the seeds, and the limits on both ([`Hops`], [`HopLimits`]) |
//! | `ready` | which queue serves next: those that may serve now by their first page's pop number, the others by time ([`ReadyQueues`]) |
//! | `seen` | the seen-set: URL keys → page ids in a table of the crawl's store, with a Bloom filter and a bounded cache in memory ([`SeenSet`], [`SeenDisk`]) |
//! | `urls` | the URL table: URL → page id through the seen-set, page → host, the bound on ids ([`UrlTable`]) |
//!
//! The modules import each other one way: `seen`, `caps`, `hops` and `ready` import none, `urls`
//! imports `seen` and `caps`.

#![warn(missing_docs)]

mod caps;
mod hops;
mod ready;
mod seen;
mod urls;

/// The bounds on the URLs a crawl takes in (docs/crawler.md, A hostile web): the caps on
/// hosts and the limits on hops, for `crawlrank crawl` and `crawlrank frontier serve` alike.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CrawlLimits {
    /// New ids per host, per registrable domain and in all (`--max-pages-per-host`,
    /// `--max-hosts-per-domain`, `--max-urls-per-domain`, `--max-urls`).
    pub urls: UrlLimits,
    /// `--max-hops` and `--max-redirects`.
    pub hops: HopLimits,
}

impl CrawlLimits {
    /// No bound but the width of the ids: what a frontier state written before it had bounds
    /// admits.
    pub const UNBOUNDED: Self = Self {
        urls: UrlLimits::UNBOUNDED,
        hops: HopLimits {
            max_hops: None,
            max_redirects: u32::MAX,
        },
    };
}

pub use caps::{CapRefusal, HostCaps, OriginId, UrlLimits, MAX_URLS};
/// The origin (`scheme://host:port`) a URL is counted under by the caps and the seen-set.
pub use crawlrank_util::hosts::origin_key;
pub use hops::{BeyondLimit, Distance, HopLimits, Hops, DEFAULT_MAX_REDIRECTS};
pub use ready::{Listing, ReadyQueues};
pub use seen::{SeenCounts, SeenDisk, SeenKey, SeenSet, DEFAULT_CACHE_ENTRIES};
pub use urls::{fingerprint, Interned, UnsavedUrls, UrlTable};
