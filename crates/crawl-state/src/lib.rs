//! A crawl's state, kept once for every way crawlrank crawls: the URL table (a dense page id
//! per URL, the seen-set on disk with a Bloom filter and a bounded cache in memory), the
//! crawl's hosts and the caps on them. It does no I/O to the web and no fetching: the
//! crawler's engine (`crawlrank crawl`) and the frontier service (`crawlrank frontier
//! serve`, whose workers fetch) build on it, so that what one admits the other admits too.
//!
//! | module | job |
//! |---|---|
//! | `caps` | the crawl's origins and registrable domains with their URL counts, and the caps new URLs are admitted within ([`HostCaps`], [`UrlLimits`]) |
//! | `seen` | the seen-set: URL keys → page ids in a table of the crawl's store, with a Bloom filter and a bounded cache in memory ([`SeenSet`], [`SeenDisk`]) |
//! | `urls` | the URL table: URL → page id through the seen-set, page → host, the bound on ids ([`UrlTable`]) |
//!
//! The modules import each other one way: `seen` and `caps` import none, `urls` both.

#![warn(missing_docs)]

mod caps;
mod seen;
mod urls;

pub use caps::{CapRefusal, HostCaps, OriginId, UrlLimits, MAX_URLS};
/// The origin (`scheme://host:port`) a URL is counted under by the caps and the seen-set.
pub use crawlrank_graph::hosts::origin_key;
pub use seen::{SeenCounts, SeenDisk, SeenKey, SeenSet, DEFAULT_CACHE_ENTRIES};
pub use urls::{fingerprint, Interned, UnsavedUrls, UrlTable};
