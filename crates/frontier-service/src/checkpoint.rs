//! A checkpoint of the whole service state, the form the log is compacted into.
//!
//! Why: the state is a function of the changing calls (`crate::state`), but replaying every
//! call ever made grows with the crawl's history — every lease, every refetch, every URL
//! deleted since. A checkpoint holds what the calls left behind instead: each crawl's URLs
//! with their metadata, marks and leases, its queues with their settings, its buffer of
//! popped pages, and its policy frontier as the list of the `seed`, `pop` and `on_crawled`
//! calls made on it (page ids only: the frontier's policies keep no state of their own that
//! could be written, and those three calls rebuild it exactly, as the crawler's resume does).
//! A restart reads the checkpoint and replays only the calls logged after it
//! (`crate::store`). The messages are prost's, like the log's records; every page id is
//! written as a `uint64`.
//!
//! Why in parts: a node holds 10^8 URLs and more, and one message holding them all would need
//! several times the state's memory to build or read (and past 4 GiB could not be stored in
//! one value). The store therefore keeps each crawl's pages and frontier calls as a sequence
//! of [`CheckpointPart`]s, built and read one at a time, beside a [`CrawlCheckpoint`] holding
//! the rest, its `parted_pages` saying how many pages its parts hold. A checkpoint in one
//! message (every page in `pages`, every call in `trace`: the store's format 4, and the tests'
//! round trips) is read by the same code.

use crate::proto::StringList;
use std::collections::BTreeMap;

/// The whole state at one point of the log.
#[derive(Clone, PartialEq, prost::Message)]
pub struct StateCheckpoint {
    /// Whether the service serves (`SetActive`).
    #[prost(bool, tag = "1")]
    pub active: bool,
    /// Every crawl, in id order.
    #[prost(message, repeated, tag = "2")]
    pub crawls: Vec<CrawlCheckpoint>,
}

/// One crawl (`crate::crawl::Crawl`); the indexes derived from these fields are rebuilt.
#[derive(Clone, PartialEq, prost::Message)]
pub struct CrawlCheckpoint {
    /// The crawl id.
    #[prost(string, tag = "1")]
    pub id: String,
    /// The crawl's default queue delay, if set.
    #[prost(uint32, optional, tag = "2")]
    pub default_delay: Option<u32>,
    /// Pages popped from the frontier so far.
    #[prost(uint64, tag = "3")]
    pub pops: u64,
    /// Every page ever created, by id (deleted ones without URL nor queue).
    #[prost(message, repeated, tag = "4")]
    pub pages: Vec<PageCheckpoint>,
    /// Every queue, in key order.
    #[prost(message, repeated, tag = "5")]
    pub queues: Vec<QueueCheckpoint>,
    /// The calls made on the frontier, flattened: `0 page` a seed, `1` a pop, `2 page n
    /// link…` a page reported with its `n` links; on a cluster node, `3 page n link… remote
    /// elsewhere` a page reported with its `n` local links, `remote` links other nodes hold
    /// and `elsewhere` pages crawled by the others, and `4 page outdegree distance t delta
    /// cash` an offer received along a link (the floats as their IEEE bits).
    #[prost(uint64, repeated, tag = "6")]
    pub trace: Vec<u64>,
    /// The buffer of popped pages, as `pop number, page` pairs.
    #[prost(uint64, repeated, tag = "7")]
    pub ready: Vec<u64>,
    /// The leases of popped pages not yet looked at, as `end, page` pairs.
    #[prost(uint64, repeated, tag = "8")]
    pub ready_leases: Vec<u64>,
    /// Out-links the bounds skipped: by the host cap, the domain's hosts cap, the domain cap,
    /// the crawl's cap on URLs, the hop limit and the redirect limit (absent in a checkpoint
    /// written before the bounds: none). The caps' counts of URLs held are rebuilt from the live pages.
    #[prost(uint64, repeated, tag = "9")]
    pub capped: Vec<u64>,
    /// Each page's hops from the seeds by id: link hops in the high bits, redirects in a row in
    /// the low 8, `u32::MAX` for none known (`crawlrank_crawl_state::Hops::to_packed`).
    #[prost(uint32, repeated, tag = "10")]
    pub hops: Vec<u32>,
    /// Pages held by the crawl's [`CheckpointPart`]s, after those in `pages`.
    #[prost(uint64, tag = "11")]
    pub parted_pages: u64,
}

/// One page of a crawl.
#[derive(Clone, PartialEq, prost::Message)]
pub struct PageCheckpoint {
    /// Its URL (empty once deleted).
    #[prost(string, tag = "1")]
    pub url: String,
    /// Its queue key (empty once deleted).
    #[prost(string, tag = "2")]
    pub queue: String,
    /// Its metadata.
    #[prost(btree_map = "string, message", tag = "3")]
    pub metadata: BTreeMap<String, StringList>,
    /// When it was first stored.
    #[prost(uint64, tag = "4")]
    pub created: u64,
    /// Where it stands with the frontier: 0 outside, 1 queued, 2 popped, 3 reported.
    #[prost(uint32, tag = "5")]
    pub mark: u32,
    /// Its pop number, when popped.
    #[prost(uint64, tag = "6")]
    pub pop: u64,
    /// 0 never fetched, 1 due again from `due`, 2 done.
    #[prost(uint32, tag = "7")]
    pub fetch: u32,
    /// Its refetch date, when due again.
    #[prost(uint64, tag = "8")]
    pub due: u64,
    /// The end of its last lease.
    #[prost(uint64, tag = "9")]
    pub held_until: u64,
    /// Out-links learned for it, not yet reported.
    #[prost(uint64, repeated, tag = "10")]
    pub links: Vec<u64>,
    /// Whether it was deleted.
    #[prost(bool, tag = "11")]
    pub deleted: bool,
}

/// One queue of a crawl.
#[derive(Clone, PartialEq, prost::Message)]
pub struct QueueCheckpoint {
    /// Its key.
    #[prost(string, tag = "1")]
    pub key: String,
    /// Its delay, if set.
    #[prost(uint32, optional, tag = "2")]
    pub delay: Option<u32>,
    /// Blocked until then.
    #[prost(uint64, tag = "3")]
    pub blocked_until: u64,
    /// Its crawl limit.
    #[prost(uint32, tag = "4")]
    pub limit: u32,
    /// When it last served, if ever.
    #[prost(uint64, optional, tag = "5")]
    pub last_served: Option<u64>,
    /// Pages with a known update.
    #[prost(uint64, tag = "6")]
    pub fetched: u64,
    /// Pages done for good.
    #[prost(uint64, tag = "7")]
    pub completed: u64,
    /// Leases, as `page, end` pairs.
    #[prost(uint64, repeated, tag = "8")]
    pub leased: Vec<u64>,
    /// Pop numbers of its unheld popped pages.
    #[prost(uint64, repeated, tag = "9")]
    pub unheld: Vec<u64>,
    /// When it may serve next, as last indexed.
    #[prost(uint64, tag = "10")]
    pub time_key: u64,
    /// 0: not indexed by its popped pages; 1: waiting until `head`; 2: eligible from pop
    /// number `head`.
    #[prost(uint32, tag = "11")]
    pub head_kind: u32,
    /// See `head_kind`.
    #[prost(uint64, tag = "12")]
    pub head: u64,
}

/// A slice of one crawl's checkpoint, in order: the next pages (ids go on from the previous
/// part's) and the next frontier calls (whole calls, as words of `CrawlCheckpoint::trace`).
#[derive(Clone, PartialEq, prost::Message)]
pub struct CheckpointPart {
    /// The next pages.
    #[prost(message, repeated, tag = "1")]
    pub pages: Vec<PageCheckpoint>,
    /// The next frontier calls.
    #[prost(uint64, repeated, tag = "2")]
    pub trace: Vec<u64>,
}

/// Where one crawl's checkpoint parts come from: called with a callback, it gives it each part
/// of the crawl, in order, and returns the first error either met.
pub type PartSource<'a> =
    &'a mut dyn FnMut(&mut dyn FnMut(CheckpointPart) -> anyhow::Result<()>) -> anyhow::Result<()>;

/// Where a state's checkpoint parts come from: as [`PartSource`], for the crawl of the index
/// given (its place in [`StateCheckpoint::crawls`]).
pub type PartReader<'a> = &'a mut dyn FnMut(
    u32,
    &mut dyn FnMut(CheckpointPart) -> anyhow::Result<()>,
) -> anyhow::Result<()>;
