//! One crawl of the service: its URLs, its queues (politeness, leases, refetch dates) and the
//! crawlrank [`Frontier`] that orders its never-fetched URLs.
//!
//! Why a crawl is split this way: the policy code is the crawler's and the simulator's
//! (`crawlrank_frontier`), driven by the same three calls — `seed`, `pop`, `on_crawled` —
//! and the queues add what URLFrontier asks of a service on top of it, the way the crawler's
//! host queues (`crates/crawler/src/politeness.rs`) sit on top of the frontier:
//!
//! - a URL **discovered** without a parent is a seed (`Frontier::seed`); one discovered with
//!   a parent the frontier still waits for (queued or leased, not yet reported fetched) is
//!   an out-link of that parent, held back (*deferred*) until the parent's **known** update
//!   reports it fetched (`Frontier::on_crawled(parent, out-links)`); a link learned after
//!   that comes too late for the policy's bookkeeping, so its URL enters as a seed;
//! - `GetURLs` takes pages from the frontier in the policy's order (`Frontier::pop`) into a
//!   buffer of popped pages, and serves, among the queues allowed to serve now, the earliest
//!   popped first, popping further while the buffer of unserved pages is under
//!   `max_waiting` — exactly how the crawler's engine fills its host queues;
//! - a fetched URL with a refetch date is due again from that date; due URLs are served
//!   before never-fetched ones, oldest date first (the order of the reference service).
//!
//! Everything here is a deterministic function of the calls and the `now` each is given
//! (no clock, no hash-map iteration order reaches a result), so replaying the logged calls
//! rebuilds the crawl exactly (`crate::state`), as does its checkpoint
//! ([`Crawl::checkpoint`], [`Crawl::from_checkpoint`]: its fields, and its frontier rebuilt from
//! the frontier calls it lists).

use crate::checkpoint::{
    CheckpointPart, CrawlCheckpoint, PageCheckpoint, PartSource, QueueCheckpoint,
};
use crate::page_text::{Metadata, PageText, TextHome, TextRef};
use crate::proto::{
    self, ack_message::Status as AckStatus, url_item, DiscoveredUrlItem, KnownUrlItem, StringList,
    UrlInfo, UrlItem,
};
use crawlrank_crawl_state::{
    origin_key, BeyondLimit, CapRefusal, CrawlLimits, Distance, HopLimits, Hops, HostCaps, Listing,
    OriginId, ReadyQueues,
};
use crawlrank_frontier::{CashLedger, Frontier, Offer, PageId, PolicySpec};
use crawlrank_urlfrontier::{
    OUTCOME_KEY, PARENT_KEY, REDIRECT_OUTCOME, RETRY_OUTCOME, SCORE_KEY, SITEMAP_KEY, STATE_KEY,
    STORMCRAWLER_PATH_KEY,
};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::Arc;

/// The longest queue key accepted (the reference service's bound).
pub const MAX_KEY_LEN: usize = 255;
/// The most URLs one `GetURLs` call returns, whatever its limits say, so that an answer's
/// size stays bounded.
pub const MAX_URLS_PER_CALL: usize = 10_000;
/// Seconds a served URL is leased when the request says 0 (the reference service's value).
pub const DEFAULT_LEASE_SECS: u64 = 30;
/// Seconds between two answers of a queue when neither the queue nor its crawl set a delay
/// (the reference service's default).
pub const DEFAULT_QUEUE_DELAY: u32 = 1;

/// Where a page stands with the policy's frontier.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mark {
    /// The frontier has not heard of it: a deferred out-link, or a URL only ever sent as
    /// known.
    Outside,
    /// Waiting in the frontier.
    Queued,
    /// Popped, with its pop number (its rank in the policy's order); not reported fetched.
    Popped(u64),
    /// Reported fetched (`on_crawled`) with its out-links.
    Reported,
}

/// Whether and when a page was fetched, as its known updates say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fetch {
    /// Never fetched: served when the policy ranks it.
    Never,
    /// Fetched; due again from this date (seconds since the epoch).
    Due(u64),
    /// Fetched, never to be fetched again (completed).
    Done,
}

/// One URL of the crawl, in 28 bytes: its text (URL and metadata) is in the crawl's
/// [`PageText`] (a deleted page has none: [`TextRef::NONE`]), the out-links learned for it
/// in [`Crawl::deferred`], its lease in its queue's [`Queue::leased`], and its marks and dates
/// are packed in 4 bytes each (`Mark` and `Fetch` as enums take 16 bytes each; dates are
/// seconds since the epoch, which 32 bits hold until 2106: a later date is kept as the last
/// they hold, see [`date32`]).
#[derive(Debug)]
struct Page {
    /// Its URL and metadata.
    text: TextRef,
    /// Its queue's key, by its index among the crawl's keys ([`QueueKeys`]); `KeyId::MAX`
    /// once deleted.
    queue: KeyId,
    mark: PackedMark,
    fetch: PackedFetch,
    /// Its origin among the crawl's hosts (the caps count its URL there until deleted).
    host: OriginId,
    /// When it was created, in seconds since the epoch (the service's clock, which a
    /// 32-bit count holds until 2106; later dates are kept as the last it holds).
    created: u32,
}

// A node holds one per URL: keep it at 28 bytes.
const _: () = assert!(std::mem::size_of::<Page>() == 28);

/// A queue's key as its queue and the crawl's indexes share it.
type QueueKey = Arc<String>;

/// A queue key's index among the crawl's keys ([`QueueKeys`]): a page names its queue in 4
/// bytes.
type KeyId = u32;

/// Every queue key the crawl has seen, each once, by index ([`KeyId`]), in the order they
/// came (so that replaying the calls gives the same indexes). A key is kept when its queue
/// is deleted, and the queue gets its index back if the key comes again: keys are as many
/// as the queues ever made, which their URLs outnumber.
#[derive(Debug, Default)]
struct QueueKeys {
    keys: Vec<QueueKey>,
    ids: HashMap<Box<str>, KeyId>,
}

impl QueueKeys {
    /// The index of `key`, given one if new.
    fn id(&mut self, key: &str) -> KeyId {
        if let Some(&id) = self.ids.get(key) {
            return id;
        }
        let id = KeyId::try_from(self.keys.len()).expect("fewer queue keys than page ids");
        self.keys.push(Arc::new(key.to_string()));
        self.ids.insert(key.into(), id);
        id
    }

    /// The key of index `id`.
    fn key(&self, id: KeyId) -> &QueueKey {
        &self.keys[id as usize]
    }
}

/// The crawl's queues by the index of their key ([`QueueKeys`]): a page's queue, and the
/// queues `GetURLs`' indexes list, are one step away, not a search by key string (which
/// took about a tenth of a busy node's time, in string comparisons and copies).
#[derive(Debug, Default)]
struct Queues {
    keys: QueueKeys,
    /// By key index; `None` where the key's queue was deleted (or never made).
    slots: Vec<Option<Queue>>,
    /// Queues that exist.
    live: usize,
}

impl Queues {
    /// The key of index `id`.
    fn key(&self, id: KeyId) -> &QueueKey {
        self.keys.key(id)
    }

    /// The queue of index `id`, if it exists.
    fn at(&self, id: KeyId) -> Option<&Queue> {
        self.slots.get(id as usize)?.as_ref()
    }

    fn at_mut(&mut self, id: KeyId) -> Option<&mut Queue> {
        self.slots.get_mut(id as usize)?.as_mut()
    }

    /// The index of the queue of `key`, if it exists.
    fn id(&self, key: &str) -> Option<KeyId> {
        let id = *self.keys.ids.get(key)?;
        self.at(id).is_some().then_some(id)
    }

    /// The queue of `key`, if it exists.
    fn get(&self, key: &str) -> Option<&Queue> {
        self.at(self.id(key)?)
    }

    fn get_mut(&mut self, key: &str) -> Option<&mut Queue> {
        let id = self.id(key)?;
        self.at_mut(id)
    }

    /// The queue of `key`, made if new, and whether it was.
    fn of(&mut self, key: &str) -> (&mut Queue, bool) {
        let id = self.keys.id(key);
        let i = id as usize;
        if self.slots.len() <= i {
            self.slots.resize_with(i + 1, || None);
        }
        let made = self.slots[i].is_none();
        if made {
            self.live += 1;
        }
        let q = self.slots[i].get_or_insert_with(|| Queue {
            id,
            ..Queue::default()
        });
        (q, made)
    }

    fn remove(&mut self, id: KeyId) -> Option<Queue> {
        let q = self.slots.get_mut(id as usize)?.take();
        self.live -= usize::from(q.is_some());
        q
    }

    fn len(&self) -> usize {
        self.live
    }

    /// Every queue, in no particular order.
    fn values(&self) -> impl Iterator<Item = &Queue> {
        self.slots.iter().flatten()
    }

    /// Every queue with its key, in key order (as `ListQueues` and the checkpoint list them).
    fn sorted(&self) -> Vec<(&str, &Queue)> {
        let mut v: Vec<(&str, &Queue)> = self
            .values()
            .map(|q| (self.keys.key(q.id).as_str(), q))
            .collect();
        v.sort_unstable_by(|a, b| a.0.cmp(b.0));
        v
    }
}

/// A [`Mark`] in 4 bytes: a pop number, or one of the three values no pop number reaches
/// (a page is popped once, and page ids are 32-bit: a crawl pops fewer than 2^32 - 3 pages).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct PackedMark(u32);

impl PackedMark {
    const OUTSIDE: u32 = u32::MAX;
    const QUEUED: u32 = u32::MAX - 1;
    const REPORTED: u32 = u32::MAX - 2;

    fn get(self) -> Mark {
        match self.0 {
            Self::OUTSIDE => Mark::Outside,
            Self::QUEUED => Mark::Queued,
            Self::REPORTED => Mark::Reported,
            seq => Mark::Popped(u64::from(seq)),
        }
    }
}

impl From<Mark> for PackedMark {
    fn from(mark: Mark) -> Self {
        Self(match mark {
            Mark::Outside => Self::OUTSIDE,
            Mark::Queued => Self::QUEUED,
            Mark::Reported => Self::REPORTED,
            Mark::Popped(seq) => {
                u32::try_from(seq).map_or(Self::REPORTED - 1, |s| s.min(Self::REPORTED - 1))
            }
        })
    }
}

/// A [`Fetch`] in 4 bytes: a due date ([`date32`]), or one of two values past every date it
/// keeps (refetch dates beyond 2106 are taken as the latest, 7 February 2106).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct PackedFetch(u32);

impl PackedFetch {
    const NEVER: u32 = u32::MAX;
    const DONE: u32 = u32::MAX - 1;
    /// The latest due date kept.
    const LATEST: u64 = u32::MAX as u64 - 2;

    fn get(self) -> Fetch {
        match self.0 {
            Self::NEVER => Fetch::Never,
            Self::DONE => Fetch::Done,
            date => Fetch::Due(u64::from(date)),
        }
    }
}

impl From<Fetch> for PackedFetch {
    fn from(fetch: Fetch) -> Self {
        Self(match fetch {
            Fetch::Never => Self::NEVER,
            Fetch::Done => Self::DONE,
            Fetch::Due(date) => date32(date.min(Self::LATEST)),
        })
    }
}

impl Page {
    fn mark(&self) -> Mark {
        self.mark.get()
    }

    fn set_mark(&mut self, mark: Mark) {
        self.mark = mark.into();
    }

    fn fetch(&self) -> Fetch {
        self.fetch.get()
    }

    fn is_deleted(&self) -> bool {
        self.text == TextRef::NONE
    }
}

/// A date (seconds since the epoch) in the 32 bits a page keeps it in: until 2106, later dates
/// kept as the last they hold.
fn date32(secs: u64) -> u32 {
    u32::try_from(secs).unwrap_or(u32::MAX)
}

/// The out-links learned for pages not yet reported to the frontier, each page's in the order
/// learned: lists of 8-byte nodes in one pool, freed nodes reused. A page with one deferred
/// link costs about 24 bytes here, where a map of vectors took about 70.
#[derive(Debug)]
struct Deferred {
    /// A page's list: its first and last nodes.
    lists: HashMap<PageId, (u32, u32)>,
    /// A link and the next node of its list ([`Deferred::END`] at the end; in the free list,
    /// the next free node).
    nodes: Vec<(PageId, u32)>,
    /// The first free node ([`Deferred::END`]: none).
    free: u32,
}

impl Default for Deferred {
    fn default() -> Self {
        Self {
            lists: HashMap::new(),
            nodes: Vec::new(),
            free: Self::END,
        }
    }
}

impl Deferred {
    const END: u32 = u32::MAX;

    /// `page`'s deferred links, in the order learned.
    fn links(&self, page: PageId) -> impl Iterator<Item = PageId> + '_ {
        let mut at = self.lists.get(&page).map_or(Self::END, |&(first, _)| first);
        std::iter::from_fn(move || {
            let (link, next) = *self.nodes.get(at as usize)?;
            at = next;
            Some(link)
        })
    }

    /// Appends `link` to `page`'s list.
    fn push(&mut self, page: PageId, link: PageId) {
        let node = if self.free != Self::END {
            let node = self.free;
            self.free = self.nodes[node as usize].1;
            self.nodes[node as usize] = (link, Self::END);
            node
        } else {
            self.nodes.push((link, Self::END));
            u32::try_from(self.nodes.len() - 1).expect("fewer than 2^32 deferred links")
        };
        match self.lists.get_mut(&page) {
            Some((_, last)) => {
                self.nodes[*last as usize].1 = node;
                *last = node;
            }
            None => {
                self.lists.insert(page, (node, node));
            }
        }
    }

    /// Removes `page`'s list and gives its links, in order.
    fn take(&mut self, page: PageId) -> Vec<PageId> {
        let Some((first, _)) = self.lists.remove(&page) else {
            return Vec::new();
        };
        let mut links = Vec::new();
        let mut at = first;
        while at != Self::END {
            let (link, next) = self.nodes[at as usize];
            links.push(link);
            self.nodes[at as usize].1 = self.free;
            self.free = at;
            at = next;
        }
        links
    }
}

/// Live URL → page id: a table of 4-byte ids keyed by each URL's hash, the hashes kept
/// beside it (4 bytes a page) so that growing the table and telling candidates apart read
/// no URL; a URL is read (from the page text, on disk for a served state) only to confirm
/// a candidate whose hash matches, which is almost always the URL itself.
#[derive(Default)]
struct UrlIndex {
    table: hashbrown::HashTable<PageId>,
    /// Each page's 32-bit URL hash, by page id (deleted pages included).
    hashes: Vec<u32>,
    hasher: std::hash::RandomState,
}

impl UrlIndex {
    fn hash(&self, url: &str) -> u32 {
        std::hash::BuildHasher::hash_one(&self.hasher, url) as u32
    }

    /// The table's 64-bit hash of a 32-bit one: spread over the high bits, which the
    /// table's tags are taken from.
    fn wide(h: u32) -> u64 {
        u64::from(h).wrapping_mul(0x9E37_79B9_7F4A_7C15)
    }

    /// The live page whose URL is `url`.
    fn get(&self, pages: &[Page], text: &PageText, url: &str) -> Option<PageId> {
        let h = self.hash(url);
        self.table
            .find(Self::wide(h), |&p| {
                self.hashes[p as usize] == h && text.url(pages[p as usize].text) == url
            })
            .copied()
    }

    /// Records the URL of page `id`, the next page; indexes it unless `deleted`.
    fn push(&mut self, id: PageId, url: &str, deleted: bool) {
        debug_assert_eq!(id as usize, self.hashes.len());
        let h = if deleted { 0 } else { self.hash(url) };
        self.hashes.push(h);
        if !deleted {
            let hashes = &self.hashes;
            self.table
                .insert_unique(Self::wide(h), id, |&p| Self::wide(hashes[p as usize]));
        }
    }

    /// Drops page `id` from the index.
    fn remove(&mut self, id: PageId) {
        let h = Self::wide(self.hashes[id as usize]);
        if let Ok(entry) = self.table.find_entry(h, |&p| p == id) {
            entry.remove();
        }
    }
}

/// One queue of the crawl: its URLs and what holds it back.
#[derive(Debug, Default)]
struct Queue {
    /// The index its pages name it by, of its key among the crawl's ([`QueueKeys`]).
    id: KeyId,
    /// How many of the crawl's live pages are its own (they name it, [`Page::queue`]: a
    /// queue keeps no set of its pages, which would cost a node about 10 bytes a URL; the
    /// rare calls that want them, deleting and purging, look through the pages).
    live: u64,
    /// Seconds between two answers; `None`: the crawl's default.
    delay: Option<u32>,
    /// Not served before this time (0: not blocked).
    blocked_until: u64,
    /// Not served once this many of its pages were fetched or are leased; 0: no limit.
    limit: u32,
    /// When it last returned URLs.
    last_served: Option<u64>,
    /// Fetched pages due again, by date.
    due: BTreeSet<(u64, PageId)>,
    /// Pages leased, with the end of their lease (expired entries linger until the page is
    /// updated or served again; only entries past `now` count).
    leased: BTreeMap<PageId, u64>,
    /// Pages with a known update.
    fetched: u64,
    /// Pages done for good.
    completed: u64,
    /// Pop numbers of its popped, never-fetched pages not leased now (its part of the
    /// crawl's `ready` buffer that it may serve).
    unheld: BTreeSet<u64>,
    /// Its entry in the crawl's `by_time` index: when it may serve next, as last indexed.
    time_key: u64,
    /// Its entry in the crawl's `listed` index, if it has unheld pages (see
    /// [`Crawl::reindex`]): on a timer, at the time it may serve next, or ready, by the pop
    /// number of its first unheld page.
    head_entry: Option<Listing<u64>>,
}

impl Queue {
    fn in_process(&self, now: u64) -> usize {
        self.leased.values().filter(|&&until| until > now).count()
    }

    fn active(&self) -> u64 {
        self.live - self.completed
    }

    fn is_blocked(&self, now: u64) -> bool {
        now < self.blocked_until
    }

    /// The first time it may serve: not blocked, and its delay passed since it last served.
    fn serves_from(&self, delay: u64) -> u64 {
        let after_delay = self.last_served.map_or(0, |l| l.saturating_add(delay));
        self.blocked_until.max(after_delay)
    }
}

/// What a `GetURLs` call asks of one crawl.
#[derive(Debug, Clone, Copy)]
pub struct Take<'a> {
    /// Most queues to serve from (`usize::MAX`: no limit).
    pub max_queues: usize,
    /// Most URLs in flight per queue, counting those already leased (`usize::MAX`: none).
    pub max_per_queue: usize,
    /// Only this queue.
    pub key: Option<&'a str>,
    /// Seconds each served URL is leased.
    pub lease_secs: u64,
    /// Most popped pages left unserved in the buffer before popping stops.
    pub max_waiting: usize,
    /// Most URLs to return.
    pub max_urls: usize,
}

/// The counts `GetStats` reports.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Counts {
    /// OPIC's cash over the crawl's pages (`None` for another policy), and the pages.
    pub cash: Option<(CashLedger, u64)>,
    /// URLs not completed.
    pub size: u64,
    /// URLs leased now.
    pub in_process: u64,
    /// URLs never to be fetched again.
    pub completed: u64,
    /// Queues holding active or leased URLs.
    pub active_queues: u64,
    /// Queues.
    pub queues: u64,
    /// URLs with a known update.
    pub fetched: u64,
    /// URLs waiting in the policy's frontier.
    pub frontier: u64,
    /// Out-links skipped by the caps on hosts, by cap (crawl-wide: a queue's counts have
    /// none).
    pub capped: Capped,
}

/// Out-links skipped by the caps on hosts ([`crawlrank_crawl_state::HostCaps`]), by the cap
/// that refused them: the crawler's `host_cap_links`, `domain_host_cap_links`,
/// `domain_cap_links` and `url_limit_links`.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Capped {
    /// Their host had the most URLs allowed (`--max-pages-per-host`).
    pub host: u64,
    /// A new host of a registrable domain that had the most hosts allowed
    /// (`--max-hosts-per-domain`).
    pub domain_hosts: u64,
    /// Their registrable domain had the most URLs allowed (`--max-urls-per-domain`).
    pub domain: u64,
    /// The crawl had the most URLs allowed (`--max-urls`).
    pub urls: u64,
    /// More link hops from a seed than `--max-hops`.
    pub hops: u64,
    /// More redirects in a row than `--max-redirects`.
    pub redirects: u64,
}

/// How a new URL came to a crawl, which decides the bounds it is admitted within.
#[derive(Debug, Clone, Copy)]
enum Arrival {
    /// Put without a parent, or reported fetched: a seed, past the caps on hosts (not
    /// `--max-urls`), with no hops.
    Seed,
    /// A link of a page, this far from the seeds: within every bound.
    Link(Distance),
    /// A link from a page another cluster node crawled: within the caps; its hops are not
    /// known here, so they start again at 0.
    Offered,
    /// An entry of a sitemap (put with `crawlrank.sitemap`, no parent): found without a
    /// link, as a seed is, with no hops, but within the caps, as the crawler takes it.
    Listed,
}

impl Capped {
    fn count_beyond(&mut self, why: BeyondLimit) {
        match why {
            BeyondLimit::Hops => self.hops += 1,
            BeyondLimit::Redirects => self.redirects += 1,
        }
    }

    fn count(&mut self, why: CapRefusal) {
        match why {
            CapRefusal::Host => self.host += 1,
            CapRefusal::DomainHosts => self.domain_hosts += 1,
            CapRefusal::Domain => self.domain += 1,
        }
    }

    /// The `GetStats` keys of [`Capped::counts`], in order: the crawler's names of these
    /// counters, under crawlrank's prefix.
    pub const KEYS: [&'static str; 6] = [
        "crawlrank.host_cap_links",
        "crawlrank.domain_host_cap_links",
        "crawlrank.domain_cap_links",
        "crawlrank.url_limit_links",
        "crawlrank.hop_limit_links",
        "crawlrank.redirect_chain_too_long",
    ];

    /// The counts, in the order of [`Capped::KEYS`] (a checkpoint's order too).
    pub fn counts(self) -> [u64; 6] {
        [
            self.host,
            self.domain_hosts,
            self.domain,
            self.urls,
            self.hops,
            self.redirects,
        ]
    }

    fn from_slice(v: &[u64]) -> Self {
        let at = |i: usize| v.get(i).copied().unwrap_or(0);
        Self {
            host: at(0),
            domain_hosts: at(1),
            domain: at(2),
            urls: at(3),
            hops: at(4),
            redirects: at(5),
        }
    }
}

/// The longest `filter` `ListURLs` and `CountURLs` accept, in bytes: far longer than any URL
/// a crawl keeps, short enough that matching it stays cheap.
pub const MAX_FILTER_LEN: usize = 8192;

/// Which URLs a listing or a count covers, prepared once per call: the filter's text is
/// lowercased once (not once per URL) and searched for with a precomputed substring finder,
/// so a call costs about the URLs' lengths, not URLs × filter length.
#[derive(Debug, Clone)]
pub struct UrlFilter {
    /// Only this queue.
    key: Option<String>,
    /// Only URLs containing this text (lowercased when `ignore_case`); `None`: every URL.
    finder: Option<memchr::memmem::Finder<'static>>,
    /// Whether the URLs are lowercased before the search.
    ignore_case: bool,
}

impl UrlFilter {
    /// The filter of a request: queue `key` (empty: every queue), URLs containing `text`
    /// (none or empty: every URL), ignoring case if asked. `Err` names why a filter is
    /// refused (longer than [`MAX_FILTER_LEN`]).
    pub fn new(key: &str, text: Option<&str>, ignore_case: bool) -> Result<Self, String> {
        let text = text.unwrap_or("");
        if text.len() > MAX_FILTER_LEN {
            return Err(format!(
                "the filter is {} bytes long, more than the {MAX_FILTER_LEN} allowed",
                text.len()
            ));
        }
        let finder = (!text.is_empty()).then(|| {
            let needle = if ignore_case {
                text.to_lowercase()
            } else {
                text.to_string()
            };
            memchr::memmem::Finder::new(needle.as_bytes()).into_owned()
        });
        Ok(Self {
            key: (!key.is_empty()).then(|| key.to_string()),
            finder,
            ignore_case,
        })
    }

    /// Whether it looks at the URLs' text (else every URL of its queue matches, and no URL
    /// need be read: a page's text may be on disk).
    fn reads_urls(&self) -> bool {
        self.finder.is_some()
    }

    fn matches(&self, url: &str) -> bool {
        let Some(finder) = &self.finder else {
            return true;
        };
        if finder.needle().len() > url.len() && !self.ignore_case {
            return false;
        }
        if self.ignore_case {
            finder.find(url.to_lowercase().as_bytes()).is_some()
        } else {
            finder.find(url.as_bytes()).is_some()
        }
    }
}

/// Where a scan of a crawl's URLs stopped ([`Crawl::scan_urls`]): the last page looked at.
pub type ScanCursor = PageId;

/// One call made on a crawl's frontier, kept so that a copy of the frontier can be rebuilt
/// (the frontier cannot be cloned) to look down the policy's order without popping the live
/// one ([`Crawl::ranking`]).
#[derive(Debug, Clone, Copy)]
enum Traced<'a> {
    Seed(PageId),
    Pop,
    Crawled(PageId, &'a [PageId]),
    /// A page reported by a cluster node with its local links, the number of its links other
    /// nodes hold, and the pages the other nodes had crawled (the batch clock's count).
    Split(PageId, &'a [PageId], u64, u64),
    /// An offer received along a link held here from a page another node crawled.
    Offer(PageId, Offer),
}

impl Traced<'_> {
    /// Makes this call on `frontier`.
    fn apply(self, frontier: &mut Frontier) {
        match self {
            Traced::Seed(p) => frontier.seed(&[p]),
            Traced::Pop => {
                frontier.pop();
            }
            Traced::Crawled(p, links) => frontier.on_crawled(p, links),
            Traced::Split(p, links, remote, elsewhere) => {
                frontier.set_crawled_elsewhere(elsewhere);
                frontier.on_crawled_split(p, links, usize::try_from(remote).unwrap_or(usize::MAX));
            }
            Traced::Offer(p, offer) => frontier.receive(p, &offer),
        }
    }

    /// Appends this call to `out` as a checkpoint writes it (`CrawlCheckpoint::trace`).
    fn encode(&self, out: &mut Vec<u64>) {
        let id = |p: PageId| u64::from(p);
        match *self {
            Traced::Seed(p) => out.extend([0, id(p)]),
            Traced::Pop => out.push(1),
            Traced::Crawled(p, links) => {
                out.extend([2, id(p), links.len() as u64]);
                out.extend(links.iter().map(|&l| id(l)));
            }
            Traced::Split(p, links, remote, elsewhere) => {
                out.extend([3, id(p), links.len() as u64]);
                out.extend(links.iter().map(|&l| id(l)));
                out.extend([remote, elsewhere]);
            }
            Traced::Offer(p, o) => out.extend([
                4,
                id(p),
                o.outdegree,
                o.distance.to_bits(),
                o.t,
                o.delta.to_bits(),
                o.cash.to_bits(),
            ]),
        }
    }
}

/// Every call made on a crawl's frontier, in order, as one stream of 32-bit words: `0 page` a
/// seed, `5 page n` the seeds `page`, `page + 1`, … `page + n - 1` one after the other, `1` a
/// pop, `2 page n link…` a report, `3 page n link… remote elsewhere` a cluster node's report
/// and `4 page outdegree distance t delta cash` an offer, each 64-bit value as two words (low,
/// high). A pop costs 4 bytes and a lone seed 8, where a list of the calls as an enum cost 48
/// bytes each; the seeds a client puts one after the other, new URLs with consecutive ids,
/// cost nothing more than their run's 12 bytes.
#[derive(Debug, Default)]
struct Trace {
    words: Vec<u32>,
    /// Where the last call starts in `words`.
    last: usize,
}

impl Trace {
    fn push(&mut self, call: Traced<'_>) {
        if let Traced::Seed(p) = call {
            // The next seed of a run, or of a lone seed that starts one.
            let start = self.last.min(self.words.len());
            let last = &mut self.words[start..];
            match *last {
                [5, first, ref mut n] if first.checked_add(*n) == Some(p) && *n < u32::MAX => {
                    *n += 1;
                    return;
                }
                [0, q] if q.checked_add(1) == Some(p) => {
                    last.copy_from_slice(&[5, q]);
                    self.words.push(2);
                    return;
                }
                _ => {}
            }
        }
        self.last = self.words.len();
        let w = &mut self.words;
        let wide = |w: &mut Vec<u32>, v: u64| w.extend([v as u32, (v >> 32) as u32]);
        match call {
            Traced::Seed(p) => w.extend([0, p]),
            Traced::Pop => w.push(1),
            Traced::Crawled(p, links) | Traced::Split(p, links, ..) => {
                let tag = if matches!(call, Traced::Split(..)) {
                    3
                } else {
                    2
                };
                w.extend([tag, p, links.len() as u32]);
                w.extend_from_slice(links);
                if let Traced::Split(_, _, remote, elsewhere) = call {
                    wide(w, remote);
                    wide(w, elsewhere);
                }
            }
            Traced::Offer(p, o) => {
                w.extend([4, p]);
                for v in [
                    o.outdegree,
                    o.distance.to_bits(),
                    o.t,
                    o.delta.to_bits(),
                    o.cash.to_bits(),
                ] {
                    wide(w, v);
                }
            }
        }
    }

    /// The calls, in order (the stream is this type's own: it is well formed).
    fn iter(&self) -> impl Iterator<Item = Traced<'_>> {
        let w = &self.words;
        let mut i = 0;
        // The rest of the run of seeds being read: the next page and how many are left.
        let mut run: (PageId, u32) = (0, 0);
        std::iter::from_fn(move || {
            if run.1 > 0 {
                let p = run.0;
                run = (p.wrapping_add(1), run.1 - 1);
                return Some(Traced::Seed(p));
            }
            let wide = |at: usize| u64::from(w[at]) | (u64::from(w[at + 1]) << 32);
            let call = match *w.get(i)? {
                0 => {
                    i += 2;
                    Traced::Seed(w[i - 1])
                }
                5 => {
                    let (first, n) = (w[i + 1], w[i + 2]);
                    i += 3;
                    run = (first.wrapping_add(1), n - 1);
                    Traced::Seed(first)
                }
                1 => {
                    i += 1;
                    Traced::Pop
                }
                tag @ (2 | 3) => {
                    let (p, n) = (w[i + 1], w[i + 2] as usize);
                    let links = &w[i + 3..i + 3 + n];
                    i += 3 + n;
                    if tag == 2 {
                        Traced::Crawled(p, links)
                    } else {
                        i += 4;
                        Traced::Split(p, links, wide(i - 4), wide(i - 2))
                    }
                }
                _ => {
                    let p = w[i + 1];
                    let at = i + 2;
                    i += 12;
                    Traced::Offer(
                        p,
                        Offer {
                            outdegree: wide(at),
                            distance: f64::from_bits(wide(at + 2)),
                            t: wide(at + 4),
                            delta: f64::from_bits(wide(at + 6)),
                            cash: f64::from_bits(wide(at + 8)),
                        },
                    )
                }
            };
            Some(call)
        })
    }
}

/// What [`Crawl::report_page`] did with a page's out-links.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct LinkCounts {
    /// New to the crawl: discovered as children of the page.
    pub discovered: u32,
    /// Already known: recorded as links of the page when the policy can still use them.
    pub known: u32,
    /// Not URLs with a host (or with an over-long key): ignored.
    pub invalid: u32,
}

/// One URL of a [`Crawl::ranking`].
#[derive(Debug, Clone, PartialEq)]
pub struct Ranked {
    /// The URL.
    pub url: String,
    /// Its queue.
    pub key: String,
    /// The policy's current score, if it has one.
    pub score: Option<f64>,
    /// `leased`, `waiting` (popped, waiting for its queue) or `queued`.
    pub state: &'static str,
}

/// One crawl: URL table, queues, the buffer of popped pages, and the policy's frontier.
pub struct Crawl {
    id: String,
    spec: PolicySpec,
    frontier: Frontier,
    /// Every call made on `frontier`, in order.
    trace: Trace,
    pages: Vec<Page>,
    /// The pages' URLs and metadata.
    text: PageText,
    /// Out-links learned for a page (from discovered URLs naming it as parent), not yet
    /// reported to the frontier; no duplicates. Only pages with such links have an entry.
    deferred: Deferred,
    /// Live URL → page id.
    ids: UrlIndex,
    /// The queues, by the index of their key the pages name them by.
    queues: Queues,
    /// Popped from the frontier, never fetched, not deleted: pop number → page (leased ones
    /// included), served in this order.
    ready: BTreeMap<u64, PageId>,
    pops: u64,
    /// The crawl's queue delay (SetDelay with an empty key).
    default_delay: Option<u32>,
    // Indexes that let `GetURLs` look only at the queues and pages that can matter now,
    // instead of every queue and every popped page (kept in step by `reindex`):
    /// Every queue by the time it may serve next (`Queue::serves_from`).
    by_time: BTreeSet<(u64, KeyId)>,
    /// Queues with unheld popped pages: ready, those that could serve at the last
    /// `GetURLs`, by the pop number of their first unheld page; on a timer, the others, by the
    /// time they may serve next (the rule `crawl`'s host queues follow too).
    listed: ReadyQueues<KeyId, u64>,
    /// Leased popped pages, by the end of their lease.
    ready_leases: BTreeSet<(u64, PageId)>,
    /// Fetched pages due again, by date, across the queues.
    due: BTreeSet<(u64, PageId)>,
    /// Unheld popped pages across the queues (the sum of `Queue::unheld`'s sizes).
    unheld: usize,
    /// For the report being applied by [`Crawl::report_split`]: the page's links other nodes
    /// hold, and the pages the other nodes have crawled.
    split: Option<(u64, u64)>,
    /// What that report's page passed along its links held elsewhere: `Some(None)` when the
    /// page was reported to the frontier and its policy passes nothing along.
    offered: Option<Option<Offer>>,
    /// The crawl's hosts, and the caps its out-links are admitted within.
    caps: HostCaps,
    /// Out-links the caps or the hop limits skipped.
    capped: Capped,
    /// The limits on hops from the seeds.
    hop_limits: HopLimits,
    /// Each page's hops from the seeds.
    hops: Hops,
}

/// The queue key of `url` when the client gives none: its host. `None` for a URL that does
/// not parse or has no host.
pub fn host_key(url: &str) -> Option<String> {
    if url.trim().len() == url.len() {
        // Sliced when the URL is in the usual form, else parsed: the same host either way.
        return crawlrank_util::hosts::host_name(url);
    }
    let parsed = url::Url::parse(url).ok()?;
    let host = parsed.host_str()?;
    (!host.is_empty()).then(|| host.to_string())
}

/// The page a discovered URL was found on, from its metadata.
fn parent_url(metadata: &Metadata) -> Option<&str> {
    [PARENT_KEY, STORMCRAWLER_PATH_KEY]
        .iter()
        .find_map(|k| metadata.get(*k).and_then(|v| v.last()))
        .map(String::as_str)
        .filter(|p| !p.is_empty())
}

fn metadata_of(info: &UrlInfo) -> Metadata {
    info.metadata
        .iter()
        .map(|(k, v)| (k.clone(), v.values.clone()))
        .collect()
}

impl Crawl {
    /// An empty crawl ordered by `spec`'s policy, its page text in memory; fails if it
    /// cannot build a frontier.
    pub fn new(id: &str, spec: &PolicySpec) -> anyhow::Result<Self> {
        Self::new_in(id, spec, &TextHome::Memory)
    }

    /// An empty crawl ordered by `spec`'s policy, its page text kept where `home` says;
    /// fails if it cannot build a frontier or create its text file.
    pub fn new_in(id: &str, spec: &PolicySpec, home: &TextHome) -> anyhow::Result<Self> {
        let text = PageText::new(home)
            .map_err(|e| anyhow::anyhow!("cannot create the page text of crawl '{id}': {e}"))?;
        Ok(Self {
            id: id.to_string(),
            spec: spec.clone(),
            frontier: Frontier::from_spec(spec)?,
            trace: Trace::default(),
            pages: Vec::new(),
            text,
            deferred: Deferred::default(),
            ids: UrlIndex::default(),
            queues: Queues::default(),
            ready: BTreeMap::new(),
            pops: 0,
            default_delay: None,
            by_time: BTreeSet::new(),
            listed: ReadyQueues::default(),
            ready_leases: BTreeSet::new(),
            due: BTreeSet::new(),
            unheld: 0,
            split: None,
            offered: None,
            caps: HostCaps::new(CrawlLimits::UNBOUNDED.urls),
            capped: Capped::default(),
            hop_limits: CrawlLimits::UNBOUNDED.hops,
            hops: Hops::default(),
        })
    }

    /// Admits the crawl's URLs within `limits` from now on (those it holds stay).
    pub fn set_limits(&mut self, limits: CrawlLimits) {
        self.caps.set_limits(limits.urls);
        self.hop_limits = limits.hops;
    }

    /// Whether the crawl holds no queue.
    pub fn is_empty(&self) -> bool {
        self.queues.len() == 0
    }

    /// Whether nothing was ever put into the crawl nor set on it.
    pub fn is_pristine(&self) -> bool {
        self.pages.is_empty() && self.default_delay.is_none()
    }

    /// The URL's queue key and whether the URL is acceptable: `Err(SKIPPED)` for a
    /// malformed URL or an over-long key.
    fn key_of(info: &UrlInfo) -> Result<String, AckStatus> {
        let host = host_key(&info.url).ok_or(AckStatus::Skipped)?;
        let key = if info.key.is_empty() {
            host
        } else {
            info.key.clone()
        };
        if key.len() > MAX_KEY_LEN {
            return Err(AckStatus::Skipped);
        }
        Ok(key)
    }

    /// A new page (the caller has checked the URL is unknown), admitted within the crawl's
    /// bounds as `arrival` says: `Err(SKIPPED)` (counted) past one, `Err(FAIL)` when the crawl
    /// has no page id left.
    fn create(
        &mut self,
        url: &str,
        key: String,
        metadata: Metadata,
        now: u64,
        arrival: Arrival,
    ) -> Result<PageId, AckStatus> {
        if let Arrival::Link(d) = arrival {
            if let Some(why) = self.hop_limits.exceeded(d) {
                self.capped.count_beyond(why);
                return Err(AckStatus::Skipped);
            }
        }
        let force = matches!(arrival, Arrival::Seed);
        let id = PageId::try_from(self.pages.len())
            .ok()
            .filter(|&id| id != PageId::MAX)
            .ok_or(AckStatus::Fail)?;
        if u64::from(id) >= self.caps.limits().max_urls {
            self.capped.urls += 1;
            return Err(AckStatus::Skipped);
        }
        let origin = origin_key(url).unwrap_or_default();
        let host = self.caps.admit(&origin, force).map_err(|why| {
            self.capped.count(why);
            AckStatus::Skipped
        })?;
        let (queue, made) = self.queues.of(&key);
        queue.live += 1;
        let queue = queue.id;
        if made {
            self.by_time.insert((0, queue));
        }
        let text = self.text.push(url, &metadata);
        self.pages.push(Page {
            text,
            queue,
            mark: Mark::Outside.into(),
            fetch: Fetch::Never.into(),
            host,
            created: date32(now),
        });
        self.ids.push(id, url, false);
        match arrival {
            Arrival::Link(d) => {
                self.hops.reach(id, d);
            }
            Arrival::Seed | Arrival::Offered | Arrival::Listed => self.hops.seed(id),
        }
        Ok(id)
    }

    /// Rewrites the pages' text into a fresh arena once the records left behind (by new
    /// metadata, by deleted pages) outweigh the live ones.
    fn compact_text(&mut self) {
        if self.text.wants_compaction() {
            self.text
                .compact(self.pages.iter_mut().map(|p| &mut p.text));
        }
    }

    /// Whether a page still collects out-links for the frontier: it is in the frontier and
    /// not yet reported fetched.
    fn collects_links(&self, page: PageId) -> bool {
        let p = &self.pages[page as usize];
        !p.is_deleted() && matches!(p.mark(), Mark::Queued | Mark::Popped(_))
    }

    fn seed(&mut self, page: PageId) {
        self.frontier.seed(&[page]);
        self.trace.push(Traced::Seed(page));
        self.pages[page as usize].set_mark(Mark::Queued);
    }

    /// A discovered URL: created unless known (then only its link from its parent is
    /// learned). Returns the ack and whether anything changed.
    pub fn put_discovered(&mut self, info: &UrlInfo, now: u64) -> (AckStatus, bool) {
        self.discover(info, now, false)
    }

    /// [`Crawl::put_discovered`], the parent's one link being its redirect's target when
    /// `redirect`.
    fn discover(&mut self, info: &UrlInfo, now: u64, redirect: bool) -> (AckStatus, bool) {
        let key = match Self::key_of(info) {
            Ok(k) => k,
            Err(status) => return (status, false),
        };
        let metadata = metadata_of(info);
        // A URL found on a page is a link, as far from the seeds as the page's links are (a
        // parent the crawl does not know counts as a seed); one without a parent is a seed.
        let named = parent_url(&metadata).map(|p| self.ids.get(&self.pages, &self.text, p));
        let from = named.map(|parent| match parent {
            Some(p) => self.hops.of_links(p, redirect),
            None => Distance {
                hops: 1,
                redirects: 0,
            },
        });
        // A page naming itself as parent links to itself: a self-loop counts in its
        // out-degree, as it does in the crawler and the simulator.
        let parent = named.flatten().filter(|&p| self.collects_links(p));
        if let Some(known) = self.ids.get(&self.pages, &self.text, &info.url) {
            // Known: ignored, but reached by a shorter way it gets the shorter hops, and the
            // parent links to it.
            let nearer = from.is_some_and(|d| self.hops.reach(known, d));
            let Some(parent) = parent else {
                return (AckStatus::Skipped, nearer);
            };
            if self.deferred.links(parent).any(|l| l == known) {
                return (AckStatus::Skipped, nearer);
            }
            self.deferred.push(parent, known);
            return (AckStatus::Skipped, true);
        }
        let listed = metadata.contains_key(SITEMAP_KEY);
        let arrival = match from {
            Some(d) => Arrival::Link(d),
            None if listed => Arrival::Listed,
            None => Arrival::Seed,
        };
        let page = match self.create(&info.url, key, metadata, now, arrival) {
            Ok(p) => p,
            // A skipped link changed the crawl's counts of skipped links.
            Err(status) => return (status, status == AckStatus::Skipped),
        };
        match parent {
            Some(parent) => self.deferred.push(parent, page),
            None => self.seed(page),
        }
        // The tests' stand-in for a bug that strikes after a call changed memory.
        #[cfg(test)]
        if info.url.ends_with(tests::PANIC_AFTER_CHANGE) {
            panic!("a bug struck after a change");
        }
        (AckStatus::Ok, true)
    }

    /// A known URL's update: the URL was fetched; done for good (`refetch == 0`) or due
    /// again from `refetch`. Ends its lease and, the first time, reports it to the frontier
    /// with the out-links learned for it.
    ///
    /// A popped page whose update says its fetch is to be tried again (outcome
    /// [`RETRY_OUTCOME`], a refetch date) is not reported: it keeps its place in the policy's
    /// order and the links it collects, as a failed fetch does in the crawler's engine, and
    /// is due again from that date, its queue free to serve its other pages meanwhile.
    pub fn put_known(&mut self, info: &UrlInfo, refetch: u64, now: u64) -> (AckStatus, bool) {
        let retry = refetch > 0
            && info
                .metadata
                .get(OUTCOME_KEY)
                .and_then(|v| v.values.last())
                .is_some_and(|o| o == RETRY_OUTCOME);
        // The latest date a page keeps (`PackedFetch`), so that the due indexes hold the
        // page's own date.
        let refetch = refetch.min(PackedFetch::LATEST);
        let key = match Self::key_of(info) {
            Ok(k) => k,
            Err(status) => return (status, false),
        };
        let page = match self.ids.get(&self.pages, &self.text, &info.url) {
            Some(p) => p,
            None => match self.create(&info.url, key, BTreeMap::new(), now, Arrival::Seed) {
                Ok(p) => p,
                Err(status) => return (status, false),
            },
        };
        let held = self.held_until(page);
        let p = &mut self.pages[page as usize];
        p.text = self.text.replace_metadata(p.text, &metadata_of(info));
        let before = p.fetch();
        p.fetch = if refetch == 0 {
            Fetch::Done
        } else {
            Fetch::Due(refetch)
        }
        .into();
        let mark = p.mark();
        let queue = self
            .queues
            .at_mut(p.queue)
            .expect("a live page's queue exists");
        queue.leased.remove(&page);
        match before {
            Fetch::Never => queue.fetched += 1,
            Fetch::Due(d) => {
                queue.due.remove(&(d, page));
                self.due.remove(&(d, page));
            }
            Fetch::Done => queue.completed -= 1,
        }
        match refetch {
            0 => queue.completed += 1,
            d => {
                queue.due.insert((d, page));
                self.due.insert((d, page));
            }
        }
        if let Mark::Popped(seq) = mark {
            self.leave_ready(page, seq, held, self.pages[page as usize].queue);
            if !retry {
                self.report(page);
            }
        }
        self.compact_text();
        (AckStatus::Ok, true)
    }

    /// A fetched page reported with its out-links in one call (`ReportPage`): each out-link
    /// is put as a discovered URL whose parent is the page (new ones become its children,
    /// known ones its links while the page still collects them), then the page's known
    /// update reports it fetched with all of them. The caller has checked the page's URL
    /// and key ([`Crawl::check_url`]). Returns what became of the links and the page's ack.
    pub fn report_page(
        &mut self,
        page: &UrlInfo,
        refetch: u64,
        links: &[String],
        now: u64,
    ) -> (LinkCounts, AckStatus) {
        let mut counts = LinkCounts::default();
        let mut seen: HashSet<&str> = HashSet::new();
        // A redirect reports its target as its one link: one more redirect in a row, no hop.
        let redirect = page
            .metadata
            .get(OUTCOME_KEY)
            .and_then(|v| v.values.last())
            .is_some_and(|o| o == REDIRECT_OUTCOME);
        for link in links {
            if !seen.insert(link.as_str()) {
                continue;
            }
            let info = UrlInfo {
                url: link.clone(),
                key: String::new(),
                metadata: [(
                    PARENT_KEY.to_string(),
                    StringList {
                        values: vec![page.url.clone()],
                    },
                )]
                .into(),
                crawl_id: self.id.clone(),
            };
            match self.discover(&info, now, redirect).0 {
                AckStatus::Ok => counts.discovered += 1,
                _ if self.ids.get(&self.pages, &self.text, link).is_some() => counts.known += 1,
                _ => counts.invalid += 1,
            }
        }
        let (status, _) = self.put_known(page, refetch, now);
        (counts, status)
    }

    /// [`Crawl::report_page`] on a cluster node: `remote` more out-links of the page are
    /// held by other nodes and `elsewhere` pages were crawled there (the batch clock counts
    /// them). Also returns what the page passes along each remote link, if it was reported
    /// to the frontier now (`Some(None)`: its policy passes nothing along; `None`: the page
    /// was not waiting for its report, and its links are news for no one's policy).
    pub fn report_split(
        &mut self,
        page: &UrlInfo,
        refetch: u64,
        links: &[String],
        remote: u64,
        elsewhere: u64,
        now: u64,
    ) -> (LinkCounts, AckStatus, Option<Option<Offer>>) {
        self.split = Some((remote, elsewhere));
        self.offered = None;
        let (counts, status) = self.report_page(page, refetch, links, now);
        self.split = None;
        (counts, status, self.offered.take())
    }

    /// A discovered URL a page crawled at another node links to, with what that page passed
    /// along the link: created unless known, and the offer applied to it either way, as the
    /// policy applies a crawled page's link of its own (a new URL enters the frontier by the
    /// offer, not as a seed). Returns the ack (`SKIPPED` for a known URL) and whether
    /// anything changed.
    pub fn put_offered(&mut self, info: &UrlInfo, offer: &Offer, now: u64) -> (AckStatus, bool) {
        let key = match Self::key_of(info) {
            Ok(k) => k,
            Err(status) => return (status, false),
        };
        let (page, status) = match self.ids.get(&self.pages, &self.text, &info.url) {
            Some(p) => (p, AckStatus::Skipped),
            None => match self.create(&info.url, key, metadata_of(info), now, Arrival::Offered) {
                Ok(p) => (p, AckStatus::Ok),
                Err(status) => return (status, status == AckStatus::Skipped),
            },
        };
        self.frontier.receive(page, offer);
        self.trace.push(Traced::Offer(page, *offer));
        let p = &mut self.pages[page as usize];
        if p.mark() == Mark::Outside {
            p.set_mark(Mark::Queued);
        }
        (status, true)
    }

    /// Whether a page URL is acceptable (a URL with a host, a key of at most 255 bytes);
    /// the reason when it is not.
    pub fn check_url(info: &UrlInfo) -> Result<(), String> {
        if Self::key_of(info).is_ok() {
            return Ok(());
        }
        Err(if host_key(&info.url).is_none() {
            format!("'{}' is not a URL with a host", info.url)
        } else {
            format!(
                "the queue key of '{}' is over {MAX_KEY_LEN} bytes",
                info.url
            )
        })
    }

    /// The crawl's never-fetched URLs in the policy's order, at most `limit`: the popped
    /// ones (leased, or waiting for their queue) in pop order, then the frontier's in the
    /// order it would pop them now — computed on a copy of the frontier rebuilt from the
    /// trace of its calls, so the live one is left untouched. Pages the live crawl would
    /// skip when popped (deleted, or fetched meanwhile: then reported, as `pop` does) are
    /// handled the same way in the copy, so its order is the one `GetURLs` would follow.
    pub fn ranking(&self, limit: usize, now: u64) -> anyhow::Result<Vec<Ranked>> {
        let ranked = |page: PageId, state: &'static str| {
            let p = &self.pages[page as usize];
            Ranked {
                url: self.text.url(p.text).to_string(),
                key: self.queues.key(p.queue).to_string(),
                score: self.frontier.score(page),
                state,
            }
        };
        let mut out: Vec<Ranked> = self
            .ready
            .values()
            .take(limit)
            .map(|&page| {
                let leased = self.held_until(page) > now;
                ranked(page, if leased { "leased" } else { "waiting" })
            })
            .collect();
        if out.len() >= limit || self.frontier.is_empty() {
            return Ok(out);
        }
        let mut copy = Frontier::from_spec(&self.spec)?;
        for call in self.trace.iter() {
            call.apply(&mut copy);
        }
        while out.len() < limit {
            let Some(page) = copy.pop() else { break };
            let p = &self.pages[page as usize];
            if p.is_deleted() {
                continue;
            }
            if p.fetch() != Fetch::Never {
                let links: Vec<PageId> = self
                    .deferred
                    .links(page)
                    .filter(|&l| !self.pages[l as usize].is_deleted())
                    .collect();
                copy.on_crawled(page, &links);
                continue;
            }
            out.push(ranked(page, "queued"));
        }
        Ok(out)
    }

    /// `on_crawled(page, its out-links)`: the links' pages now wait in the frontier.
    fn report(&mut self, page: PageId) {
        let mut links = self.deferred.take(page);
        links.retain(|&l| !self.pages[l as usize].is_deleted());
        match self.split.take() {
            Some((remote, elsewhere)) => {
                self.frontier.set_crawled_elsewhere(elsewhere);
                let offer = self.frontier.on_crawled_split(
                    page,
                    &links,
                    usize::try_from(remote).unwrap_or(usize::MAX),
                );
                self.offered = Some(offer);
                self.trace
                    .push(Traced::Split(page, &links, remote, elsewhere));
            }
            None => {
                self.frontier.on_crawled(page, &links);
                self.trace.push(Traced::Crawled(page, &links));
            }
        }
        self.pages[page as usize].set_mark(Mark::Reported);
        for &l in &links {
            let p = &mut self.pages[l as usize];
            if p.mark() == Mark::Outside {
                p.set_mark(Mark::Queued);
            }
        }
    }

    /// The frontier's next page, handled: `Some(Some(p))` when `p` is to be served,
    /// `Some(None)` when the popped page needs no serving (deleted, or already fetched: it
    /// is reported now), `None` when the frontier is empty.
    fn pop(&mut self) -> Option<Option<PageId>> {
        let page = self.frontier.pop()?;
        self.trace.push(Traced::Pop);
        let seq = self.pops;
        self.pops += 1;
        let p = &mut self.pages[page as usize];
        p.set_mark(Mark::Popped(seq));
        if p.is_deleted() {
            return Some(None);
        }
        if p.fetch() != Fetch::Never {
            self.report(page);
            return Some(None);
        }
        self.ready.insert(seq, page);
        let queue = self.pages[page as usize].queue;
        if let Some(q) = self.queues.at_mut(queue) {
            if q.unheld.insert(seq) {
                self.unheld += 1;
            }
        }
        self.reindex(queue);
        Some(Some(page))
    }

    /// A popped page leaves the buffer (fetched or deleted): out of `ready`, of the lease
    /// index (`held_until`: its lease's end, if any) and of its queue's unheld pages.
    fn leave_ready(&mut self, page: PageId, seq: u64, held_until: u64, queue: KeyId) {
        if self.ready.remove(&seq).is_none() {
            return;
        }
        self.ready_leases.remove(&(held_until, page));
        if let Some(q) = self.queues.at_mut(queue) {
            if q.unheld.remove(&seq) {
                self.unheld -= 1;
            }
        }
        self.reindex(queue);
    }

    /// Puts queue `id` back in step with the indexes after a change to when it may serve or
    /// to its unheld pages: in `by_time` at the time it may serve next, and in `waiting` (not
    /// `heads`: only [`Crawl::drain`] moves a queue there, once its time has come) if it has
    /// unheld pages.
    fn reindex(&mut self, id: KeyId) {
        let default_delay = self.default_delay;
        let Some(q) = self.queues.at_mut(id) else {
            return;
        };
        let delay = q.delay.or(default_delay).unwrap_or(DEFAULT_QUEUE_DELAY);
        let t = q.serves_from(delay.into());
        if q.time_key != t {
            self.by_time.remove(&(q.time_key, id));
            self.by_time.insert((t, id));
            q.time_key = t;
        }
        let to = (!q.unheld.is_empty()).then_some(Listing::Timer(t));
        q.head_entry = self.listed.relist(id, q.head_entry, to);
    }

    /// At the start of a `GetURLs`: the popped pages whose lease ended are unheld again, and
    /// the queues with unheld pages whose time has come move from `waiting` to `heads`.
    fn drain(&mut self, now: u64) {
        while let Some(&(until, page)) = self.ready_leases.first() {
            if until > now {
                break;
            }
            self.ready_leases.pop_first();
            let p = &self.pages[page as usize];
            let Mark::Popped(seq) = p.mark() else {
                continue;
            };
            if p.is_deleted() || p.fetch() != Fetch::Never || self.held_until(page) != until {
                continue;
            }
            if !self.ready.contains_key(&seq) {
                continue;
            }
            let queue = p.queue;
            if let Some(q) = self.queues.at_mut(queue) {
                if q.unheld.insert(seq) {
                    self.unheld += 1;
                }
            }
            self.reindex(queue);
        }
        while let Some((t, id)) = self.listed.first_timer() {
            if t > now {
                break;
            }
            let to = self.queues.at(id).and_then(|q| q.unheld.first());
            let head_entry =
                self.listed
                    .relist(id, Some(Listing::Timer(t)), to.map(|&h| Listing::Ready(h)));
            if let Some(q) = self.queues.at_mut(id) {
                q.head_entry = head_entry;
            }
        }
    }

    fn delay_of(&self, queue: &Queue) -> u64 {
        queue
            .delay
            .or(self.default_delay)
            .unwrap_or(DEFAULT_QUEUE_DELAY)
            .into()
    }

    /// How many URLs `queue` may give now (0: it may not serve).
    fn budget(&self, queue: &Queue, take: &Take<'_>, now: u64) -> usize {
        if queue.is_blocked(now) {
            return 0;
        }
        if let Some(last) = queue.last_served {
            if now < last.saturating_add(self.delay_of(queue)) {
                return 0;
            }
        }
        let in_process = queue.in_process(now);
        let mut budget = take.max_per_queue.saturating_sub(in_process);
        if queue.limit > 0 {
            let used = queue.fetched.saturating_add(in_process as u64);
            let left = u64::from(queue.limit).saturating_sub(used);
            budget = budget.min(usize::try_from(left).unwrap_or(usize::MAX));
        }
        budget
    }

    /// Serves URLs for a `GetURLs` call into `out`: due refetches first (oldest date first),
    /// then never-fetched pages in the policy's order, from the queues allowed to serve.
    /// Returns whether anything changed (pages popped or leased).
    ///
    /// What it serves is defined by the plain loops of `take_urls_scan` (kept for the tests):
    /// open every queue that may serve now, take due pages, then every unheld popped page in
    /// pop order, then pop. This does the same without looking at every queue and every
    /// popped page: a queue's budget is worked out when one of its pages comes up, popped
    /// pages are merged from the queues that could serve at the call's start (`heads`) in pop
    /// order, and whether some queue could still serve is found by walking the queues by the
    /// time they may serve (`by_time`) from where the last answer left off. A call costs about
    /// the pages it serves and pops, plus the queues it passes over that may not serve (those
    /// at their lease or crawl limit), instead of every queue and every popped page.
    pub fn take_urls(&mut self, take: &Take<'_>, now: u64, out: &mut Vec<UrlInfo>) -> bool {
        self.drain(now);
        let mut selection = Selection::new(take.max_queues);
        let start = out.len();
        let mut changed = false;
        // Refetches due now, oldest first, from the queues that may serve.
        let due: Vec<PageId> = self
            .due
            .iter()
            .take_while(|(d, _)| *d <= now)
            .map(|&(_, p)| p)
            .collect();
        // The queue `take.key` names, looked up once (`Some(None)`: there is none).
        let only = take.key.map(|k| self.queues.id(k));
        for page in due {
            if out.len() - start >= take.max_urls {
                break;
            }
            let queue = self.pages[page as usize].queue;
            if self.held_until(page) > now || only.is_some_and(|id| id != Some(queue)) {
                continue;
            }
            self.open_queue(&mut selection, queue, take, now);
            if selection.try_take(queue) {
                self.lease(page, take, now, out);
                changed = true;
            }
        }
        // Never-fetched pages already popped, in pop order across the queues that may serve:
        // the served queues' next pages (`cursors`) merged with the queues not yet served
        // (`heads`, walked in order from `floor`).
        let unheld_at_start = self.unheld;
        let mut taken = 0usize;
        let mut cursors: BTreeSet<(u64, KeyId)> = BTreeSet::new();
        let mut candidates: Vec<KeyId> = selection.served.iter().copied().collect();
        if let Some(id) = take.key.and_then(|k| self.queues.id(k)) {
            self.open_queue(&mut selection, id, take, now);
            candidates.push(id);
        }
        for id in candidates {
            if selection.budget(id) > 0 {
                if let Some(&head) = self.queues.at(id).and_then(|q| q.unheld.first()) {
                    cursors.insert((head, id));
                }
            }
        }
        let mut floor: Option<(u64, KeyId)> = None;
        loop {
            if out.len() - start >= take.max_urls {
                break;
            }
            let head = if take.key.is_none() && selection.served.len() < take.max_queues {
                self.next_head(floor.as_ref(), &selection)
            } else {
                None
            };
            let from_head = match (&head, cursors.first()) {
                (None, None) => break,
                (Some(h), Some(c)) => h < c,
                (Some(_), None) => true,
                (None, Some(_)) => false,
            };
            let (seq, id) = if from_head {
                let h = head.unwrap_or_default();
                floor = Some(h);
                self.open_queue(&mut selection, h.1, take, now);
                h
            } else {
                match cursors.pop_first() {
                    Some(c) => c,
                    None => break,
                }
            };
            let Some(&page) = self.ready.get(&seq) else {
                continue;
            };
            if !selection.try_take(id) {
                continue;
            }
            self.lease(page, take, now, out);
            taken += 1;
            changed = true;
            if selection.budget(id) > 0 {
                if let Some(&next) = self.queues.at(id).and_then(|q| q.unheld.first()) {
                    cursors.insert((next, id));
                }
            }
        }
        let mut unserved = unheld_at_start - taken;
        // Then further down the policy's order, while a queue may still serve.
        let mut scan: Option<(u64, KeyId)> = None;
        while unserved < take.max_waiting
            && out.len() - start < take.max_urls
            && self.any_open(&mut selection, &mut scan, take, now)
        {
            let Some(popped) = self.pop() else { break };
            changed = true;
            let Some(page) = popped else { continue };
            let queue = self.pages[page as usize].queue;
            self.open_queue(&mut selection, queue, take, now);
            if selection.try_take(queue) {
                self.lease(page, take, now, out);
            } else {
                unserved += 1;
            }
        }
        self.mark_served(&selection, now);
        for &id in &selection.served {
            self.reindex(id);
        }
        changed
    }

    /// Works out queue `id`'s budget for this call, once.
    fn open_queue(&self, selection: &mut Selection, id: KeyId, take: &Take<'_>, now: u64) {
        if selection.budgets.contains_key(&id) {
            return;
        }
        let budget = self
            .queues
            .at(id)
            .filter(|_| take.key.is_none_or(|k| k == self.queues.key(id).as_str()))
            .map_or(0, |q| self.budget(q, take, now));
        selection.open(id, budget);
    }

    /// The first entry of `heads` after `floor` whose queue was not served yet in this call.
    fn next_head(
        &self,
        floor: Option<&(u64, KeyId)>,
        selection: &Selection,
    ) -> Option<(u64, KeyId)> {
        self.listed
            .ready_after(floor.copied())
            .find(|(_, id)| !selection.served.contains(id))
    }

    /// Whether some queue may still give a URL in this call: a served one with budget left,
    /// or, while fewer than `max_queues` served, one not served yet that may serve now —
    /// looked for by walking `by_time` from `scan`, where the last answer was found.
    fn any_open(
        &self,
        selection: &mut Selection,
        scan: &mut Option<(u64, KeyId)>,
        take: &Take<'_>,
        now: u64,
    ) -> bool {
        use std::ops::Bound::{Excluded, Unbounded};
        if selection.open_served > 0 {
            return true;
        }
        if selection.served.len() >= take.max_queues {
            return false;
        }
        if let Some(k) = take.key {
            let Some(id) = self.queues.id(k) else {
                return false;
            };
            self.open_queue(selection, id, take, now);
            return !selection.served.contains(&id) && selection.budget(id) > 0;
        }
        loop {
            let next = match *scan {
                None => self.by_time.first(),
                Some(s) => self.by_time.range((Excluded(s), Unbounded)).next(),
            };
            let Some(&(t, id)) = next else {
                return false;
            };
            if t > now {
                return false;
            }
            if !selection.served.contains(&id) {
                self.open_queue(selection, id, take, now);
                if selection.budget(id) > 0 {
                    return true;
                }
            }
            *scan = Some((t, id));
        }
    }

    #[cfg(test)]
    /// The first implementation of [`Crawl::take_urls`], which looks at every queue and every
    /// popped page on each call: kept as the reference the indexed one must equal
    /// (`tests::the_indexed_get_urls_equals_the_scan`).
    ///
    /// Serves URLs for a `GetURLs` call into `out`: due refetches first (oldest date first),
    /// then never-fetched pages in the policy's order, from the queues allowed to serve.
    /// Returns whether anything changed (pages popped or leased).
    fn take_urls_scan(&mut self, take: &Take<'_>, now: u64, out: &mut Vec<UrlInfo>) -> bool {
        let mut selection = Selection::new(take.max_queues);
        for (key, queue) in self.queues.sorted() {
            if take.key.is_some_and(|k| k != key) {
                continue;
            }
            let budget = self.budget(queue, take, now);
            if budget > 0 {
                selection.open(queue.id, budget);
            }
        }
        let start = out.len();
        let mut changed = false;
        // Refetches due now, oldest first across the open queues.
        let mut due: Vec<(u64, PageId)> = Vec::new();
        for (&id, budget) in &selection.budgets {
            let queue = self.queues.at(id).expect("an open queue exists");
            due.extend(
                queue
                    .due
                    .iter()
                    .take_while(|(d, _)| *d <= now)
                    .filter(|&&(_, p)| self.held_until(p) <= now)
                    .take(*budget),
            );
        }
        due.sort_unstable();
        for (_, page) in due {
            if out.len() - start >= take.max_urls {
                break;
            }
            if selection.try_take(self.pages[page as usize].queue) {
                self.lease(page, take, now, out);
                changed = true;
            }
        }
        // Never-fetched pages already popped, in pop order.
        let mut unserved = 0usize;
        let popped: Vec<PageId> = self.ready.values().copied().collect();
        for page in popped {
            if self.held_until(page) > now {
                continue;
            }
            if out.len() - start < take.max_urls
                && selection.try_take(self.pages[page as usize].queue)
            {
                self.lease(page, take, now, out);
                changed = true;
            } else {
                unserved += 1;
            }
        }
        // Then further down the policy's order, while a queue may still serve.
        while selection.any_open()
            && unserved < take.max_waiting
            && out.len() - start < take.max_urls
        {
            let Some(popped) = self.pop() else { break };
            changed = true;
            let Some(page) = popped else { continue };
            if selection.try_take(self.pages[page as usize].queue) {
                self.lease(page, take, now, out);
            } else {
                unserved += 1;
            }
        }
        self.mark_served(&selection, now);
        changed
    }

    /// The end of page `page`'s last lease (seconds since the epoch; 0: never leased since
    /// its last update, or deleted), as its queue keeps it ([`Queue::leased`], the one record
    /// of a lease: a page keeps none of its own).
    fn held_until(&self, page: PageId) -> u64 {
        let p = &self.pages[page as usize];
        self.queues
            .at(p.queue)
            .and_then(|q| q.leased.get(&page))
            .copied()
            .unwrap_or(0)
    }

    /// Records `now` as the last time each queue that served in this call did: their delays
    /// run from it.
    fn mark_served(&mut self, selection: &Selection, now: u64) {
        for &id in &selection.served {
            if let Some(q) = self.queues.at_mut(id) {
                q.last_served = Some(now);
            }
        }
    }

    fn lease(&mut self, page: PageId, take: &Take<'_>, now: u64, out: &mut Vec<UrlInfo>) {
        // The lease's end as the page keeps it ([`date32`]), in its indexes too.
        let until = u64::from(date32(now.saturating_add(take.lease_secs)));
        let p = &self.pages[page as usize];
        let mut unheld_changed = false;
        if let Some(q) = self.queues.at_mut(p.queue) {
            q.leased.insert(page, until);
            if let Mark::Popped(seq) = p.mark() {
                if q.unheld.remove(&seq) {
                    self.unheld -= 1;
                    self.ready_leases.insert((until, page));
                    unheld_changed = true;
                }
            }
        }
        if unheld_changed {
            self.reindex(p.queue);
        }
        let p = &self.pages[page as usize];
        out.push(UrlInfo {
            url: self.text.url(p.text).to_string(),
            key: self.queues.key(p.queue).to_string(),
            metadata: self.wire_metadata(p.text).collect(),
            crawl_id: self.id.clone(),
        });
    }

    /// Deletes a page; its deferred out-links become seeds (no other parent will report
    /// them). Returns whether it was active (not completed).
    fn delete_page(&mut self, page: PageId) -> bool {
        if self.pages[page as usize].is_deleted() {
            return false;
        }
        self.ids.remove(page);
        let p = &mut self.pages[page as usize];
        self.caps.release(p.host);
        self.text
            .free(std::mem::replace(&mut p.text, TextRef::NONE));
        let queue = p.queue;
        let (mark, fetch) = (p.mark(), p.fetch());
        let held = self.held_until(page);
        self.pages[page as usize].queue = KeyId::MAX;
        self.compact_text();
        let links = self.deferred.take(page);
        if let Mark::Popped(seq) = mark {
            self.leave_ready(page, seq, held, queue);
        }
        let mut active = true;
        if let Some(q) = self.queues.at_mut(queue) {
            q.live -= 1;
            q.leased.remove(&page);
            match fetch {
                Fetch::Never => {}
                Fetch::Due(d) => {
                    q.due.remove(&(d, page));
                    self.due.remove(&(d, page));
                    q.fetched -= 1;
                }
                Fetch::Done => {
                    q.fetched -= 1;
                    q.completed -= 1;
                    active = false;
                }
            }
        }
        for l in links {
            let c = &self.pages[l as usize];
            if !c.is_deleted() && c.mark() == Mark::Outside && c.fetch() == Fetch::Never {
                self.seed(l);
            }
        }
        active
    }

    /// The live pages of the queue of index `queue`, or of every queue, in id order: a look
    /// through every page (a queue keeps no set of its own).
    fn pages_of(&self, queue: Option<KeyId>) -> Vec<PageId> {
        (0..)
            .zip(&self.pages)
            .filter(|(_, p)| !p.is_deleted() && queue.is_none_or(|q| q == p.queue))
            .map(|(id, _)| id)
            .collect()
    }

    /// Deletes a queue and its URLs; returns the number of its active URLs, `None` if there
    /// is no such queue.
    pub fn delete_queue(&mut self, key: &str) -> Option<u64> {
        let id = self.queues.id(key)?;
        let active = self.queues.at(id)?.active();
        let pages = self.pages_of(Some(id));
        for p in pages {
            self.delete_page(p);
        }
        if let Some(q) = self.queues.remove(id) {
            self.by_time.remove(&(q.time_key, id));
            self.listed.relist(id, q.head_entry, None);
        }
        Some(active)
    }

    /// Deletes the URLs first stored before `cutoff` (of one queue, or all); returns how many.
    pub fn purge(&mut self, key: Option<&str>, cutoff: u64) -> u64 {
        let queue = match key {
            Some(k) => match self.queues.id(k) {
                Some(id) => Some(id),
                None => return 0,
            },
            None => None,
        };
        let mut doomed = self.pages_of(queue);
        doomed.retain(|&p| u64::from(self.pages[p as usize].created) < cutoff);
        // The queues stay, with their settings, even when emptied.
        for &p in &doomed {
            self.delete_page(p);
        }
        doomed.len() as u64
    }

    /// Blocks a queue until `until` (0 unblocks); false if there is no such queue.
    pub fn block(&mut self, key: &str, until: u64) -> bool {
        let Some(id) = self.queues.id(key) else {
            return false;
        };
        if let Some(q) = self.queues.at_mut(id) {
            q.blocked_until = until;
        }
        self.reindex(id);
        true
    }

    /// Sets a queue's delay, or the crawl's default (`key` empty); false if there is no
    /// such queue.
    pub fn set_delay(&mut self, key: &str, delay: u32) -> bool {
        if key.is_empty() {
            self.default_delay = Some(delay);
            let ids: Vec<KeyId> = self.queues.values().map(|q| q.id).collect();
            for id in ids {
                self.reindex(id);
            }
            return true;
        }
        let Some(id) = self.queues.id(key) else {
            return false;
        };
        if let Some(q) = self.queues.at_mut(id) {
            q.delay = Some(delay);
        }
        self.reindex(id);
        true
    }

    /// Sets a queue's crawl limit (0: none); false if there is no such queue.
    pub fn set_limit(&mut self, key: &str, limit: u32) -> bool {
        self.queues.get_mut(key).map(|q| q.limit = limit).is_some()
    }

    /// `GetStats`' counts of one queue or of the crawl (`None` if the queue is unknown).
    pub fn counts(&self, key: Option<&str>, now: u64) -> Option<Counts> {
        let mut c = Counts::default();
        let mut add = |q: &Queue| {
            let in_process = q.in_process(now) as u64;
            c.size += q.active();
            c.in_process += in_process;
            c.completed += q.completed;
            c.fetched += q.fetched;
            c.queues += 1;
            if q.active() > 0 || in_process > 0 {
                c.active_queues += 1;
            }
        };
        match key {
            Some(k) => add(self.queues.get(k)?),
            None => self.queues.values().for_each(add),
        }
        c.frontier = self.frontier.len() as u64;
        if key.is_none() {
            c.capped = self.capped;
        }
        let pages = u32::try_from(self.pages.len()).unwrap_or(u32::MAX);
        c.cash = self.frontier.cash(pages).map(|l| (l, u64::from(pages)));
        Some(c)
    }

    /// The queue keys `ListQueues` lists, in key order: active ones only unless
    /// `include_inactive`.
    pub fn queue_keys(&self, include_inactive: bool, now: u64) -> impl Iterator<Item = &str> {
        self.queues
            .sorted()
            .into_iter()
            .filter(move |(_, q)| include_inactive || (!q.is_blocked(now) && q.active() > 0))
            .map(|(k, _)| k)
    }

    fn state_name(&self, page: PageId, now: u64) -> &'static str {
        if self.held_until(page) > now {
            return "leased";
        }
        let page = &self.pages[page as usize];
        match (page.fetch(), page.mark()) {
            (Fetch::Never, Mark::Outside) => "deferred",
            (Fetch::Never, _) => "queued",
            (Fetch::Due(_), _) => "scheduled",
            (Fetch::Done, _) => "done",
        }
    }

    /// A page's metadata as the API's messages (and the checkpoint's) carry it.
    fn wire_metadata(&self, text: TextRef) -> impl Iterator<Item = (String, StringList)> {
        let metadata = self.text.metadata(text);
        metadata
            .into_iter()
            .map(|(k, values)| (k, StringList { values }))
    }

    /// A page as `GetURLStatus` and `ListURLs` show it: discovered if never fetched, else
    /// known with its refetch date; its metadata plus the policy's score and its state.
    fn item(&self, page: PageId, now: u64) -> UrlItem {
        let p = &self.pages[page as usize];
        let mut metadata: HashMap<String, StringList> = self.wire_metadata(p.text).collect();
        if p.mark() != Mark::Outside {
            if let Some(score) = self.frontier.score(page) {
                metadata.insert(
                    SCORE_KEY.to_string(),
                    StringList {
                        values: vec![score.to_string()],
                    },
                );
            }
        }
        metadata.insert(
            STATE_KEY.to_string(),
            StringList {
                values: vec![self.state_name(page, now).to_string()],
            },
        );
        let info = UrlInfo {
            url: self.text.url(p.text).to_string(),
            key: self.queues.key(p.queue).to_string(),
            metadata,
            crawl_id: self.id.clone(),
        };
        let item = match p.fetch() {
            Fetch::Never => url_item::Item::Discovered(DiscoveredUrlItem { info: Some(info) }),
            Fetch::Due(d) => url_item::Item::Known(KnownUrlItem {
                info: Some(info),
                refetchable_from_date: d,
            }),
            Fetch::Done => url_item::Item::Known(KnownUrlItem {
                info: Some(info),
                refetchable_from_date: 0,
            }),
        };
        UrlItem {
            item: Some(item),
            id: String::new(),
            creation_date: u64::from(p.created),
        }
    }

    /// `GetURLStatus`: the URL's item, if the crawl holds it (in queue `key` when given).
    pub fn url_status(&self, url: &str, key: Option<&str>, now: u64) -> Option<UrlItem> {
        let page = self.ids.get(&self.pages, &self.text, url)?;
        if key.is_some_and(|k| k != self.queues.key(self.pages[page as usize].queue).as_str()) {
            return None;
        }
        Some(self.item(page, now))
    }

    /// Looks at the URLs `filter` covers, in discovery order (page ids) across the queues,
    /// from after `from`, calling `visit` on each that matches until it returns false;
    /// stops after looking at `budget` pages. Returns where to go on, `None` when done. The
    /// service scans in such bounded steps, letting other calls in between, so that one
    /// listing of a large crawl does not hold the state for its whole length; a scan resumed
    /// after changes sees each URL at most once (ids are never reused), and the URLs added
    /// since it started too. A scan of one queue looks through every page (a queue keeps no
    /// set of its pages), without reading their URLs.
    pub fn scan_urls(
        &self,
        filter: &UrlFilter,
        from: Option<&ScanCursor>,
        budget: usize,
        mut visit: impl FnMut(&Crawl, PageId) -> bool,
    ) -> Option<ScanCursor> {
        let queue = match &filter.key {
            Some(k) => match self.queues.get(k.as_str()) {
                Some(q) => Some(q.id),
                None => return None,
            },
            None => None,
        };
        let start = from.map_or(0, |&last| last as usize + 1);
        let mut looked = 0usize;
        for (id, p) in (0..).zip(&self.pages).skip(start) {
            if !p.is_deleted()
                && queue.is_none_or(|q| q == p.queue)
                && (!filter.reads_urls() || filter.matches(&self.text.url(p.text)))
                && !visit(self, id)
            {
                return None;
            }
            looked += 1;
            if looked >= budget {
                return Some(id);
            }
        }
        None
    }

    /// A URL as `ListURLs` shows it (see `Crawl::item`).
    pub fn list_item(&self, page: PageId, now: u64) -> UrlItem {
        self.item(page, now)
    }

    /// The crawl's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Pages reported crawled to the frontier here.
    pub fn crawled(&self) -> u64 {
        self.frontier.crawled()
    }

    /// Pages created, deleted ones included.
    pub fn pages(&self) -> usize {
        self.pages.len()
    }

    /// The crawl's checkpoint (`crate::checkpoint`) in one message: every page in `pages`,
    /// every frontier call in `trace`.
    pub fn checkpoint(&self) -> CrawlCheckpoint {
        let mut c = self.checkpoint_header();
        c.parted_pages = 0;
        let collect = |part: CheckpointPart| -> Result<(), std::convert::Infallible> {
            c.pages.extend(part.pages);
            c.trace.extend(part.trace);
            Ok(())
        };
        let Ok(()) = self.checkpoint_parts(usize::MAX, usize::MAX, collect);
        c
    }

    /// The crawl's checkpoint but its pages and frontier calls, which
    /// [`checkpoint_parts`](Self::checkpoint_parts) gives.
    pub fn checkpoint_header(&self) -> CrawlCheckpoint {
        let id = |p: PageId| u64::from(p);
        let queues = self
            .queues
            .sorted()
            .into_iter()
            .map(|(key, q)| {
                let (head_kind, head) = match q.head_entry {
                    None => (0, 0),
                    Some(Listing::Timer(t)) => (1, t),
                    Some(Listing::Ready(h)) => (2, h),
                };
                QueueCheckpoint {
                    key: key.to_string(),
                    delay: q.delay,
                    blocked_until: q.blocked_until,
                    limit: q.limit,
                    last_served: q.last_served,
                    fetched: q.fetched,
                    completed: q.completed,
                    leased: q.leased.iter().flat_map(|(&p, &u)| [id(p), u]).collect(),
                    unheld: q.unheld.iter().copied().collect(),
                    time_key: q.time_key,
                    head_kind,
                    head,
                }
            })
            .collect();
        CrawlCheckpoint {
            id: self.id.clone(),
            default_delay: self.default_delay,
            pops: self.pops,
            pages: Vec::new(),
            queues,
            trace: Vec::new(),
            ready: self.ready.iter().flat_map(|(&s, &p)| [s, id(p)]).collect(),
            ready_leases: self
                .ready_leases
                .iter()
                .flat_map(|&(u, p)| [u, id(p)])
                .collect(),
            capped: self.capped.counts().to_vec(),
            hops: self.hops.to_packed(),
            parted_pages: self.pages.len() as u64,
        }
    }

    /// Gives `each` the crawl's pages and frontier calls as parts, in order, each built when
    /// asked: at most `max_pages` pages a part, and frontier calls until a part holds
    /// `max_words` words or more (whole calls).
    pub fn checkpoint_parts<E>(
        &self,
        max_pages: usize,
        max_words: usize,
        mut each: impl FnMut(CheckpointPart) -> Result<(), E>,
    ) -> Result<(), E> {
        let mut calls = self.trace.iter();
        let mut next_page: usize = 0;
        loop {
            let mut part = CheckpointPart::default();
            let end = next_page.saturating_add(max_pages).min(self.pages.len());
            part.pages = (next_page..end)
                .map(|i| self.page_checkpoint(i as PageId))
                .collect();
            next_page = end;
            while part.trace.len() < max_words {
                let Some(call) = calls.next() else { break };
                call.encode(&mut part.trace);
            }
            if part.pages.is_empty() && part.trace.is_empty() {
                return Ok(());
            }
            each(part)?;
        }
    }

    /// One page as a checkpoint holds it.
    fn page_checkpoint(&self, i: PageId) -> PageCheckpoint {
        let p = &self.pages[i as usize];
        let (mark, pop) = match p.mark() {
            Mark::Outside => (0, 0),
            Mark::Queued => (1, 0),
            Mark::Popped(seq) => (2, seq),
            Mark::Reported => (3, 0),
        };
        let (fetch, due) = match p.fetch() {
            Fetch::Never => (0, 0),
            Fetch::Due(d) => (1, d),
            Fetch::Done => (2, 0),
        };
        PageCheckpoint {
            url: self.text.url(p.text).to_string(),
            queue: if p.is_deleted() {
                String::new()
            } else {
                self.queues.key(p.queue).to_string()
            },
            metadata: self.wire_metadata(p.text).collect(),
            created: u64::from(p.created),
            mark,
            pop,
            fetch,
            due,
            held_until: self.held_until(i),
            links: self.deferred.links(i).map(u64::from).collect(),
            deleted: p.is_deleted(),
        }
    }

    /// The crawl a checkpoint in one message holds ([`checkpoint`](Self::checkpoint)); see
    /// [`from_checkpoint_parts`](Self::from_checkpoint_parts).
    pub fn from_checkpoint(
        c: CrawlCheckpoint,
        spec: &PolicySpec,
        home: &TextHome,
    ) -> anyhow::Result<Self> {
        Self::from_checkpoint_parts(c, spec, home, &mut |_| Ok(()))
    }

    /// The crawl a checkpoint holds, ordered by `spec`'s policy: its frontier rebuilt by
    /// replaying the frontier calls it lists, its indexes from its pages and queues; the pages
    /// and calls of `c` first, then those of the parts `parts` gives its callback, in order.
    /// `Err` names what in the checkpoint does not fit.
    pub fn from_checkpoint_parts(
        mut c: CrawlCheckpoint,
        spec: &PolicySpec,
        home: &TextHome,
        parts: PartSource<'_>,
    ) -> anyhow::Result<Self> {
        use anyhow::bail;
        let mut crawl = Crawl::new_in(&c.id, spec, home)?;
        crawl.capped = Capped::from_slice(&c.capped);
        crawl.hops = Hops::from_packed(&c.hops);
        let n = c.pages.len() as u64 + c.parted_pages;
        let page = |v: u64| page_in(v, n, &c.id);
        let mut loaded = 0;
        let inline = CheckpointPart {
            pages: std::mem::take(&mut c.pages),
            trace: std::mem::take(&mut c.trace),
        };
        crawl.load_part(inline, n, &c.id, &mut loaded)?;
        parts(&mut |part| crawl.load_part(part, n, &c.id, &mut loaded))?;
        if loaded != n {
            bail!(
                "the checkpoint of crawl '{}' holds {loaded} of its {n} pages",
                c.id
            );
        }
        for qc in c.queues {
            let (q, _) = crawl.queues.of(&qc.key);
            q.delay = qc.delay;
            q.blocked_until = qc.blocked_until;
            q.limit = qc.limit;
            q.last_served = qc.last_served;
            q.fetched = qc.fetched;
            q.completed = qc.completed;
            for pair in qc.leased.chunks_exact(2) {
                q.leased.insert(page(pair[0])?, pair[1]);
            }
            q.unheld = qc.unheld.into_iter().collect();
            crawl.unheld += q.unheld.len();
            q.time_key = qc.time_key;
            let id = q.id;
            crawl.by_time.insert((qc.time_key, id));
            let listing = match qc.head_kind {
                0 => None,
                1 => Some(Listing::Timer(qc.head)),
                2 => Some(Listing::Ready(qc.head)),
                other => bail!(
                    "queue '{}' of crawl '{}' has an unknown index {other}",
                    qc.key,
                    c.id
                ),
            };
            q.head_entry = crawl.listed.relist(id, None, listing);
        }
        if crawl.by_time.len() != crawl.queues.len() {
            bail!(
                "crawl '{}' has pages in queues its checkpoint does not list",
                c.id
            );
        }
        for pair in c.ready.chunks_exact(2) {
            crawl.ready.insert(pair[0], page(pair[1])?);
        }
        for pair in c.ready_leases.chunks_exact(2) {
            crawl.ready_leases.insert((pair[0], page(pair[1])?));
        }
        crawl.pops = c.pops;
        crawl.default_delay = c.default_delay;
        Ok(crawl)
    }

    /// Rebuilds what one part of a checkpoint holds: its frontier calls replayed on the
    /// frontier, its pages added after the `loaded` ones (of `n` in all).
    fn load_part(
        &mut self,
        part: CheckpointPart,
        n: u64,
        crawl_id: &str,
        loaded: &mut u64,
    ) -> anyhow::Result<()> {
        use anyhow::{bail, Context};
        let page = |v: u64| page_in(v, n, crawl_id);
        let mut it = part.trace.iter().copied();
        let mut links: Vec<PageId> = Vec::new();
        while let Some(op) = it.next() {
            let mut next = || {
                it.next()
                    .with_context(|| format!("the frontier calls of crawl '{crawl_id}' are cut"))
            };
            let call = match op {
                0 => Traced::Seed(page(next()?)?),
                1 => Traced::Pop,
                2 | 3 => {
                    let p = page(next()?)?;
                    let len = next()?;
                    links.clear();
                    for _ in 0..len {
                        links.push(page(next()?)?);
                    }
                    if op == 2 {
                        Traced::Crawled(p, &links)
                    } else {
                        let (remote, elsewhere) = (next()?, next()?);
                        usize::try_from(remote)?;
                        Traced::Split(p, &links, remote, elsewhere)
                    }
                }
                4 => {
                    let p = page(next()?)?;
                    let offer = Offer {
                        outdegree: next()?,
                        distance: f64::from_bits(next()?),
                        t: next()?,
                        delta: f64::from_bits(next()?),
                        cash: f64::from_bits(next()?),
                    };
                    Traced::Offer(p, offer)
                }
                other => bail!("unknown frontier call {other} in crawl '{crawl_id}'"),
            };
            call.apply(&mut self.frontier);
            self.trace.push(call);
        }
        for p in part.pages {
            let i = *loaded;
            if i >= n {
                bail!("the checkpoint of crawl '{crawl_id}' holds more than its {n} pages");
            }
            *loaded += 1;
            let id = PageId::try_from(i).context("a page id out of range")?;
            let mark = match p.mark {
                0 => Mark::Outside,
                1 => Mark::Queued,
                2 => Mark::Popped(p.pop),
                3 => Mark::Reported,
                other => bail!("page {i} of crawl '{crawl_id}' has an unknown mark {other}"),
            };
            let fetch = match p.fetch {
                0 => Fetch::Never,
                1 => Fetch::Due(p.due),
                2 => Fetch::Done,
                other => bail!("page {i} of crawl '{crawl_id}' has an unknown fetch {other}"),
            };
            // Every live page is held under the caps again (as it was admitted once; a deleted
            // one was released), so the caps' counts are those of the live crawl.
            let host = if p.deleted {
                0
            } else {
                let origin = origin_key(&p.url).unwrap_or_default();
                self.caps
                    .admit(&origin, true)
                    .expect("no cap refuses a forced URL")
            };
            let mut queue = KeyId::MAX;
            if !p.deleted {
                let (q, _) = self.queues.of(&p.queue);
                q.live += 1;
                if let Fetch::Due(d) = fetch {
                    q.due.insert((d, id));
                    self.due.insert((d, id));
                }
                queue = q.id;
            }
            for link in p.links {
                self.deferred.push(id, page(link)?);
            }
            let text = if p.deleted {
                TextRef::NONE
            } else {
                let metadata: Metadata =
                    p.metadata.into_iter().map(|(k, v)| (k, v.values)).collect();
                self.text.push(&p.url, &metadata)
            };
            self.ids.push(id, &p.url, p.deleted);
            self.pages.push(Page {
                text,
                queue,
                mark: mark.into(),
                fetch: fetch.into(),
                host,
                created: date32(p.created),
            });
        }
        Ok(())
    }
}

/// Page `v` of a crawl of `n` pages, or an error naming the crawl.
fn page_in(v: u64, n: u64, crawl_id: &str) -> anyhow::Result<PageId> {
    if v >= n {
        anyhow::bail!("page {v} of the checkpoint of crawl '{crawl_id}' is past its {n} pages");
    }
    PageId::try_from(v).map_err(|_| anyhow::anyhow!("a page id out of range"))
}

/// The queues one `GetURLs` call may still take URLs from, and which it took from.
struct Selection {
    max_queues: usize,
    budgets: BTreeMap<KeyId, usize>,
    served: BTreeSet<KeyId>,
    /// Queues not yet served with budget left, and served ones with budget left.
    open_unserved: usize,
    open_served: usize,
}

impl Selection {
    fn new(max_queues: usize) -> Self {
        Self {
            max_queues,
            budgets: BTreeMap::new(),
            served: BTreeSet::new(),
            open_unserved: 0,
            open_served: 0,
        }
    }

    /// Records queue `id`'s budget for the call (0: it may not serve).
    fn open(&mut self, id: KeyId, budget: usize) {
        self.budgets.insert(id, budget);
        if budget > 0 {
            self.open_unserved += 1;
        }
    }

    /// Queue `id`'s budget left (0 if not worked out).
    fn budget(&self, id: KeyId) -> usize {
        self.budgets.get(&id).copied().unwrap_or(0)
    }

    #[cfg(test)]
    fn any_open(&self) -> bool {
        self.open_served > 0 || (self.served.len() < self.max_queues && self.open_unserved > 0)
    }

    /// Takes one URL of queue `id` if it may give one.
    fn try_take(&mut self, id: KeyId) -> bool {
        let Some(budget) = self.budgets.get_mut(&id) else {
            return false;
        };
        if *budget == 0 {
            return false;
        }
        let first = !self.served.contains(&id);
        if first {
            if self.served.len() >= self.max_queues {
                return false;
            }
            self.served.insert(id);
            self.open_unserved -= 1;
            self.open_served += 1;
        }
        *budget -= 1;
        if *budget == 0 {
            self.open_served -= 1;
        }
        true
    }
}

/// Converts a `GetParams` request's limits (0: none) into a [`Take`].
pub fn take_of<'a>(params: &'a proto::GetParams, max_waiting: usize) -> Take<'a> {
    let unlimited = |v: u32| {
        if v == 0 {
            usize::MAX
        } else {
            v as usize
        }
    };
    Take {
        max_queues: unlimited(params.max_queues),
        max_per_queue: unlimited(params.max_urls_per_queue),
        key: (!params.key.is_empty()).then_some(params.key.as_str()),
        lease_secs: match params.delay_requestable {
            0 => DEFAULT_LEASE_SECS,
            d => d.into(),
        },
        max_waiting,
        max_urls: MAX_URLS_PER_CALL,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// The outcome of a fetch to be tried again, as a worker reports it.
    pub(crate) fn retry() -> StringList {
        StringList {
            values: vec![RETRY_OUTCOME.to_string()],
        }
    }

    /// A discovered URL ending so panics once it changed the crawl (a bug's stand-in).
    pub(crate) const PANIC_AFTER_CHANGE: &str = "/panics-after-a-change";

    /// Deferred links come back per page in the order pushed, whatever other pages' lists
    /// were taken meanwhile (their nodes reused).
    #[test]
    fn deferred_links_keep_each_pages_order() {
        let mut rng = Lcg(9);
        let mut deferred = Deferred::default();
        let mut model: BTreeMap<PageId, Vec<PageId>> = BTreeMap::new();
        for step in 0..20_000u32 {
            let page = rng.below(50) as PageId;
            if rng.below(5) == 0 {
                assert_eq!(deferred.take(page), model.remove(&page).unwrap_or_default());
            } else {
                deferred.push(page, step);
                model.entry(page).or_default().push(step);
            }
            let probe = rng.below(50) as PageId;
            let listed: Vec<PageId> = deferred.links(probe).collect();
            assert_eq!(listed, model.get(&probe).cloned().unwrap_or_default());
        }
        assert!(deferred.nodes.len() < 20_000, "freed nodes are reused");
    }

    /// The trace gives back the calls pushed, in order, whatever runs of seeds it packed.
    #[test]
    fn the_trace_reads_back_its_calls() {
        #[derive(Debug, PartialEq)]
        enum Call {
            Seed(PageId),
            Pop,
            Crawled(PageId, Vec<PageId>),
        }
        let mut rng = Lcg(5);
        let mut trace = Trace::default();
        let mut pushed = Vec::new();
        let mut next: PageId = 0;
        for _ in 0..5_000 {
            match rng.below(10) {
                // Mostly the next page, sometimes another, sometimes the one before again.
                0..=5 => {
                    let p = match rng.below(6) {
                        0 => rng.below(1_000) as PageId,
                        1 => next.saturating_sub(1),
                        _ => next,
                    };
                    next = p + 1;
                    trace.push(Traced::Seed(p));
                    pushed.push(Call::Seed(p));
                }
                6 | 7 => {
                    trace.push(Traced::Pop);
                    pushed.push(Call::Pop);
                }
                _ => {
                    let links: Vec<PageId> = (0..rng.below(4)).map(|i| next + i as u32).collect();
                    trace.push(Traced::Crawled(7, &links));
                    pushed.push(Call::Crawled(7, links));
                }
            }
        }
        trace.push(Traced::Seed(u32::MAX));
        pushed.push(Call::Seed(u32::MAX));
        let read: Vec<Call> = trace
            .iter()
            .map(|c| match c {
                Traced::Seed(p) => Call::Seed(p),
                Traced::Pop => Call::Pop,
                Traced::Crawled(p, l) => Call::Crawled(p, l.to_vec()),
                other => panic!("{other:?} was never pushed"),
            })
            .collect();
        assert_eq!(read, pushed);
        assert!(
            trace.words.len() < 2 * pushed.len(),
            "runs packed: {} words for {} calls",
            trace.words.len(),
            pushed.len()
        );
    }

    /// A small deterministic generator (the tests' own, so that this crate needs no other).
    struct Lcg(u64);

    impl Lcg {
        fn below(&mut self, n: u64) -> u64 {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (self.0 >> 33) % n
        }
    }

    fn info(url: &str, parent: Option<&str>) -> UrlInfo {
        let mut metadata = HashMap::new();
        if let Some(p) = parent {
            metadata.insert(
                PARENT_KEY.to_string(),
                StringList {
                    values: vec![p.to_string()],
                },
            );
        }
        UrlInfo {
            url: url.to_string(),
            key: String::new(),
            metadata,
            crawl_id: String::new(),
        }
    }

    /// Random calls on two crawls, one serving `GetURLs` with the indexed `take_urls`, the
    /// other with the plain scan it replaced: every answer and every count must be equal.
    #[test]
    fn the_indexed_get_urls_equals_the_scan() {
        for (round, policy) in ["fica", "bfs", "opic", "random"]
            .iter()
            .cycle()
            .take(24)
            .enumerate()
        {
            let spec = crate::service::policy_spec(policy, Some(500), Some(3), 7).unwrap();
            let mut indexed = Crawl::new("c", &spec).unwrap();
            let mut scan = Crawl::new("c", &spec).unwrap();
            let mut rng = Lcg(round as u64 + 1);
            let hosts = 2 + rng.below(7);
            let urls: Vec<String> = (0..80)
                .map(|i| format!("http://h{}.test/p{i}", rng.below(hosts)))
                .collect();
            let mut now = 1_000u64;
            for step in 0..600 {
                let url = &urls[rng.below(urls.len() as u64) as usize];
                let host = format!("h{}.test", rng.below(hosts));
                let what = rng.below(100);
                let ctx = format!("round {round} ({policy}), step {step}, op {what}");
                match what {
                    0..=29 => {
                        let parent = (rng.below(3) > 0)
                            .then(|| urls[rng.below(urls.len() as u64) as usize].as_str());
                        let i = info(url, parent);
                        assert_eq!(
                            indexed.put_discovered(&i, now),
                            scan.put_discovered(&i, now),
                            "{ctx}"
                        );
                    }
                    30..=49 => {
                        let refetch = match rng.below(4) {
                            0 => now + rng.below(5),
                            _ => 0,
                        };
                        let mut i = info(url, None);
                        if refetch > 0 && rng.below(2) == 0 {
                            i.metadata.insert(OUTCOME_KEY.to_string(), retry());
                        }
                        assert_eq!(
                            indexed.put_known(&i, refetch, now),
                            scan.put_known(&i, refetch, now),
                            "{ctx}"
                        );
                    }
                    50..=79 => {
                        let limit = |rng: &mut Lcg, n: u64| match rng.below(n + 1) {
                            0 => usize::MAX,
                            v => v as usize,
                        };
                        let key = (rng.below(8) == 0).then_some(host.as_str());
                        let take = Take {
                            max_queues: limit(&mut rng, 4),
                            max_per_queue: limit(&mut rng, 3),
                            key,
                            lease_secs: 1 + rng.below(4),
                            max_waiting: 1 + rng.below(12) as usize,
                            max_urls: 1 + rng.below(12) as usize,
                        };
                        let (mut a, mut b) = (Vec::new(), Vec::new());
                        let changed_a = indexed.take_urls(&take, now, &mut a);
                        let changed_b = scan.take_urls_scan(&take, now, &mut b);
                        let urls_of =
                            |v: &[UrlInfo]| v.iter().map(|i| i.url.clone()).collect::<Vec<_>>();
                        assert_eq!(urls_of(&a), urls_of(&b), "{ctx}: {take:?}");
                        assert_eq!(changed_a, changed_b, "{ctx}");
                    }
                    80..=85 => {
                        let key = if rng.below(4) == 0 { "" } else { host.as_str() };
                        let d = rng.below(3) as u32;
                        assert_eq!(indexed.set_delay(key, d), scan.set_delay(key, d), "{ctx}");
                    }
                    86..=89 => {
                        let until = if rng.below(2) == 0 {
                            0
                        } else {
                            now + rng.below(4)
                        };
                        assert_eq!(
                            indexed.block(&host, until),
                            scan.block(&host, until),
                            "{ctx}"
                        );
                    }
                    90..=92 => {
                        let l = rng.below(6) as u32;
                        assert_eq!(
                            indexed.set_limit(&host, l),
                            scan.set_limit(&host, l),
                            "{ctx}"
                        );
                    }
                    93 => assert_eq!(
                        indexed.delete_queue(&host),
                        scan.delete_queue(&host),
                        "{ctx}"
                    ),
                    94 => {
                        let cutoff = now - rng.below(20);
                        assert_eq!(
                            indexed.purge(Some(&host), cutoff),
                            scan.purge(Some(&host), cutoff),
                            "{ctx}"
                        );
                    }
                    _ => now += rng.below(3),
                }
                assert_eq!(indexed.counts(None, now), scan.counts(None, now), "{ctx}");
            }
        }
    }
}

#[cfg(test)]
mod checkpoint_tests {
    use super::tests::{retry, PANIC_AFTER_CHANGE};
    use super::*;
    use crawlrank_crawl_state::UrlLimits;
    use prost::Message;

    fn lcg(x: &mut u64, n: u64) -> u64 {
        *x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (*x >> 33) % n
    }

    fn info(url: &str, parent: Option<&str>, meta: u64) -> UrlInfo {
        let mut metadata = HashMap::new();
        if let Some(p) = parent {
            metadata.insert(
                PARENT_KEY.to_string(),
                StringList {
                    values: vec![p.to_string()],
                },
            );
        }
        if meta > 0 {
            metadata.insert(
                "m".to_string(),
                StringList {
                    values: vec![meta.to_string(); meta as usize],
                },
            );
        }
        UrlInfo {
            url: url.to_string(),
            key: String::new(),
            metadata,
            crawl_id: String::new(),
        }
    }

    /// Through its encoded bytes, as the store keeps it: in one message (the store's format
    /// 4), or, with `parts` = (pages, words), as a header and parts of at most that many pages
    /// and about that many words of frontier calls (the store's format since).
    fn round_trip(crawl: &Crawl, spec: &PolicySpec, parts: Option<(usize, usize)>) -> Crawl {
        let (header, parts) = match parts {
            None => (crawl.checkpoint(), Vec::new()),
            Some((pages, words)) => {
                let mut encoded = Vec::new();
                let collect = |p: CheckpointPart| -> anyhow::Result<()> {
                    encoded.push(p.encode_to_vec());
                    Ok(())
                };
                crawl.checkpoint_parts(pages, words, collect).unwrap();
                (crawl.checkpoint_header(), encoded)
            }
        };
        let bytes = header.encode_to_vec();
        let mut copy = Crawl::from_checkpoint_parts(
            CrawlCheckpoint::decode(bytes.as_slice()).unwrap(),
            spec,
            &TextHome::Memory,
            &mut |f| {
                for p in &parts {
                    f(CheckpointPart::decode(p.as_slice())?)?;
                }
                Ok(())
            },
        )
        .unwrap();
        copy.set_limits(CrawlLimits {
            urls: crawl.caps.limits(),
            hops: crawl.hop_limits,
        });
        copy
    }

    /// Random calls on a crawl and on a copy rebuilt from its checkpoint every few steps:
    /// every answer, count, listing and ranking must be equal, as must the checkpoints.
    #[test]
    fn a_crawl_rebuilt_from_its_checkpoint_behaves_as_the_original() {
        let mut hit = Capped::default();
        let mut rewrites = 0;
        let dir = tempfile::tempdir().unwrap();
        let home = TextHome::prepare(dir.path().join("text")).unwrap();
        for (round, policy) in ["fica", "bfs", "opic", "random", "ieca"]
            .iter()
            .cycle()
            .take(20)
            .enumerate()
        {
            let spec = crate::service::policy_spec(policy, Some(500), Some(3), 7).unwrap();
            let mut live = Crawl::new("c", &spec).unwrap();
            let mut copy = Crawl::new("c", &spec).unwrap();
            // Caps that out-links hit (about ten URLs a host), and the crawl's cap on URLs in
            // every other round: what they skip must be skipped alike after a checkpoint.
            let limits = CrawlLimits {
                urls: UrlLimits {
                    max_per_host: 6,
                    max_urls: if round % 2 == 0 { 60 } else { u64::MAX },
                    ..UrlLimits::UNBOUNDED
                },
                hops: HopLimits {
                    max_hops: (round % 3 == 0).then_some(1),
                    max_redirects: 20,
                },
            };
            live.set_limits(limits);
            copy.set_limits(limits);
            // The live crawl keeps its pages' text in a file and rewrites it whenever it can,
            // the copy keeps it in memory and never rewrites it: neither must change anything.
            live.text = PageText::eager(&home);
            let mut x = round as u64 + 17;
            let hosts = 2 + lcg(&mut x, 6);
            let urls: Vec<String> = (0..80)
                .map(|i| format!("http://h{}.test/p{i}", lcg(&mut x, hosts)))
                .filter(|u| !u.ends_with(PANIC_AFTER_CHANGE))
                .collect();
            let mut now = 1_000u64;
            for step in 0..500 {
                if step % 37 == 0 {
                    // In one message, or in parts of a few pages and calls each.
                    let parts = (step % 74 == 37).then_some((1 + round % 5, 1 + 3 * round));
                    copy = round_trip(&copy, &spec, parts);
                    assert!(
                        live.checkpoint() == copy.checkpoint(),
                        "round {round} step {step}"
                    );
                }
                let url = &urls[lcg(&mut x, urls.len() as u64) as usize];
                let host = format!("h{}.test", lcg(&mut x, hosts));
                let what = lcg(&mut x, 100);
                let ctx = format!("round {round} ({policy}), step {step}, op {what}");
                match what {
                    0..=29 => {
                        let parent = (lcg(&mut x, 3) > 0)
                            .then(|| urls[lcg(&mut x, urls.len() as u64) as usize].as_str());
                        let i = info(url, parent, lcg(&mut x, 3));
                        assert_eq!(live.put_discovered(&i, now), copy.put_discovered(&i, now));
                    }
                    30..=44 => {
                        let refetch = match lcg(&mut x, 4) {
                            0 => now + lcg(&mut x, 5),
                            _ => 0,
                        };
                        let mut i = info(url, None, lcg(&mut x, 2));
                        if refetch > 0 && lcg(&mut x, 2) == 0 {
                            i.metadata.insert(OUTCOME_KEY.to_string(), retry());
                        }
                        assert_eq!(
                            live.put_known(&i, refetch, now),
                            copy.put_known(&i, refetch, now),
                            "{ctx}"
                        );
                    }
                    45..=47 => {
                        let links: Vec<String> = (0..lcg(&mut x, 4))
                            .map(|_| urls[lcg(&mut x, urls.len() as u64) as usize].clone())
                            .collect();
                        let i = info(url, None, 0);
                        assert_eq!(
                            live.report_page(&i, 0, &links, now),
                            copy.report_page(&i, 0, &links, now),
                            "{ctx}"
                        );
                    }
                    // As a cluster node: a report with links held elsewhere, an offer received.
                    48 => {
                        let links: Vec<String> = (0..lcg(&mut x, 4))
                            .map(|_| urls[lcg(&mut x, urls.len() as u64) as usize].clone())
                            .collect();
                        let (remote, elsewhere) = (lcg(&mut x, 4), lcg(&mut x, 50));
                        let i = info(url, None, 0);
                        assert_eq!(
                            live.report_split(&i, 0, &links, remote, elsewhere, now),
                            copy.report_split(&i, 0, &links, remote, elsewhere, now),
                            "{ctx}"
                        );
                    }
                    49 => {
                        let parent = &urls[lcg(&mut x, urls.len() as u64) as usize];
                        let offer = Offer {
                            outdegree: 1 + lcg(&mut x, 5),
                            distance: lcg(&mut x, 100) as f64 / 37.0,
                            t: lcg(&mut x, 4),
                            delta: 0.3,
                            cash: 1.0 / (1 + lcg(&mut x, 9)) as f64,
                        };
                        let i = info(url, Some(parent), 0);
                        assert_eq!(
                            live.put_offered(&i, &offer, now),
                            copy.put_offered(&i, &offer, now),
                            "{ctx}"
                        );
                    }
                    50..=79 => {
                        let take = Take {
                            max_queues: 1 + lcg(&mut x, 4) as usize,
                            max_per_queue: 1 + lcg(&mut x, 3) as usize,
                            key: (lcg(&mut x, 8) == 0).then_some(host.as_str()),
                            lease_secs: 1 + lcg(&mut x, 4),
                            max_waiting: 1 + lcg(&mut x, 12) as usize,
                            max_urls: 1 + lcg(&mut x, 12) as usize,
                        };
                        let (mut a, mut b) = (Vec::new(), Vec::new());
                        assert_eq!(
                            live.take_urls(&take, now, &mut a),
                            copy.take_urls(&take, now, &mut b),
                            "{ctx}"
                        );
                        assert_eq!(a, b, "{ctx}");
                    }
                    80..=85 => {
                        let key = if lcg(&mut x, 4) == 0 {
                            ""
                        } else {
                            host.as_str()
                        };
                        let d = lcg(&mut x, 3) as u32;
                        assert_eq!(live.set_delay(key, d), copy.set_delay(key, d), "{ctx}");
                    }
                    86..=89 => {
                        let until = now + lcg(&mut x, 4);
                        assert_eq!(live.block(&host, until), copy.block(&host, until));
                    }
                    90..=91 => {
                        let l = lcg(&mut x, 6) as u32;
                        assert_eq!(live.set_limit(&host, l), copy.set_limit(&host, l));
                    }
                    92 => assert_eq!(live.delete_queue(&host), copy.delete_queue(&host)),
                    93 => {
                        let cutoff = now - lcg(&mut x, 20);
                        assert_eq!(
                            live.purge(Some(&host), cutoff),
                            copy.purge(Some(&host), cutoff),
                            "{ctx}"
                        );
                    }
                    _ => now += lcg(&mut x, 3),
                }
                assert_eq!(live.counts(None, now), copy.counts(None, now), "{ctx}");
                assert_eq!(
                    live.ranking(20, now).unwrap(),
                    copy.ranking(20, now).unwrap(),
                    "{ctx}"
                );
            }
            let all = UrlFilter::new("", None, false).unwrap();
            let list = |c: &Crawl| {
                let mut out = Vec::new();
                c.scan_urls(&all, None, usize::MAX, |c, p| {
                    out.push(c.list_item(p, now));
                    true
                });
                out
            };
            assert_eq!(list(&live), list(&copy), "round {round}");
            let c = live.counts(None, now).unwrap().capped;
            hit.host += c.host;
            hit.urls += c.urls;
            hit.hops += c.hops;
            rewrites += live.text.rewrites;
        }
        assert!(
            hit.host > 0 && hit.urls > 0 && hit.hops > 0,
            "the caps skipped out-links: {hit:?}"
        );
        assert!(
            rewrites > 20,
            "the live crawls rewrote their text {rewrites} times"
        );
    }

    /// A page keeps its refetch date in 8 bytes with two values set aside: a date past the
    /// latest it keeps is indexed as the latest, so that moving it later finds it.
    #[test]
    fn a_refetch_date_past_the_latest_is_indexed_as_kept() {
        let spec = crate::service::policy_spec("fica", None, None, 0).unwrap();
        let mut c = Crawl::new("c", &spec).unwrap();
        let i = info("http://a.test/", None, 0);
        assert_eq!(c.put_known(&i, u64::MAX, 1_000).0, AckStatus::Ok);
        assert_eq!(c.pages[0].fetch(), Fetch::Due(PackedFetch::LATEST));
        assert_eq!(c.put_known(&i, 5_000, 1_000).0, AckStatus::Ok);
        assert_eq!(c.due.iter().collect::<Vec<_>>(), [&(5_000, 0)]);
        assert_eq!(c.queues.get("a.test").unwrap().due.len(), 1);
    }

    /// Out-links are admitted within the caps on hosts, seeds and fetched pages whatever
    /// the caps; a deleted URL frees its place.
    #[test]
    fn out_links_are_capped_per_host_and_seeds_are_not() {
        let spec = crate::service::policy_spec("bfs", Some(100), None, 0).unwrap();
        let mut crawl = Crawl::new("c", &spec).unwrap();
        crawl.set_limits(CrawlLimits {
            urls: UrlLimits {
                max_per_host: 3,
                ..UrlLimits::UNBOUNDED
            },
            hops: CrawlLimits::UNBOUNDED.hops,
        });
        let seed = "http://a.test/";
        assert_eq!(
            crawl.put_discovered(&info(seed, None, 0), 1).0,
            AckStatus::Ok
        );
        let links: Vec<String> = (0..5).map(|i| format!("http://a.test/{i}")).collect();
        let (counts, ack) = crawl.report_page(&info(seed, None, 0), 0, &links, 1);
        assert_eq!(ack, AckStatus::Ok);
        assert_eq!(
            (counts.discovered, counts.invalid),
            (2, 3),
            "3 URLs a host: the seed and two"
        );
        let c = crawl.counts(None, 1).unwrap();
        assert_eq!(
            (c.capped.host, c.size),
            (3, 2),
            "the seed completed, two links queued"
        );
        // A seed passes the cap, and so does a page a client reports fetched.
        let more = "http://a.test/seed-2";
        assert_eq!(
            crawl.put_discovered(&info(more, None, 0), 1).0,
            AckStatus::Ok
        );
        assert_eq!(
            crawl
                .put_known(&info("http://a.test/fetched", None, 0), 0, 1)
                .0,
            AckStatus::Ok
        );
        // An out-link is still skipped; once a URL is deleted, one more is admitted.
        let child = info("http://a.test/child", Some(more), 0);
        assert_eq!(crawl.put_discovered(&child, 1), (AckStatus::Skipped, true));
        assert_eq!(
            crawl.delete_queue("a.test"),
            Some(3),
            "the two links and seed-2"
        );
        assert_eq!(crawl.put_discovered(&child, 1).0, AckStatus::Ok);
        assert_eq!(crawl.counts(None, 1).unwrap().capped.host, 4);
    }

    /// A popped page reported with the outcome `retry` and a date is not reported to the
    /// policy: it is due again from that date, keeps the links found for it meanwhile, and
    /// its queue serves its other pages while it waits; reported fetched, it passes them on.
    #[test]
    fn a_page_to_retry_is_due_again_and_keeps_its_links() {
        let spec = crate::service::policy_spec("bfs", Some(100), None, 0).unwrap();
        let mut crawl = Crawl::new("c", &spec).unwrap();
        crawl.set_delay("", 0);
        let (a, b, c) = ("http://a.test/", "http://a.test/b", "http://a.test/c");
        for seed in [a, b] {
            crawl.put_discovered(&info(seed, None, 0), 1);
        }
        let take = Take {
            max_queues: usize::MAX,
            max_per_queue: 1,
            key: None,
            lease_secs: 30,
            max_waiting: 10,
            max_urls: 10,
        };
        let served = |crawl: &mut Crawl, now: u64| {
            let mut out = Vec::new();
            crawl.take_urls(&take, now, &mut out);
            out.into_iter().map(|i| i.url).collect::<Vec<_>>()
        };
        assert_eq!(served(&mut crawl, 1), [a]);
        // A link found on `a` while it is leased waits for `a`'s report.
        crawl.put_discovered(&info(c, Some(a), 0), 1);
        let mut failed = info(a, None, 0);
        failed.metadata.insert(OUTCOME_KEY.to_string(), retry());
        assert_eq!(crawl.put_known(&failed, 5, 2), (AckStatus::Ok, true));
        assert!(matches!(crawl.pages[0].mark(), Mark::Popped(_)));
        assert_eq!(
            crawl.pages[2].mark(),
            Mark::Outside,
            "c waits for a's report"
        );
        // Its queue serves `b` meanwhile, and `a` again from its date, before `c`.
        assert_eq!(served(&mut crawl, 3), [b]);
        crawl.put_known(&info(b, None, 0), 0, 3);
        assert!(served(&mut crawl, 4).is_empty(), "a is not due before 5");
        assert_eq!(served(&mut crawl, 5), [a]);
        crawl.put_known(&info(a, None, 0), 0, 5);
        assert_eq!(crawl.pages[0].mark(), Mark::Reported);
        assert_eq!(served(&mut crawl, 6), [c]);
    }

    /// A sitemap's entry (no parent, `crawlrank.sitemap` in its metadata) is found without a
    /// link as a seed is — the frontier seeds it, with no hops — but within the caps on hosts,
    /// as the crawler admits it; a seed on the same full host passes.
    #[test]
    fn sitemap_entries_are_seeds_within_the_caps() {
        let spec = crate::service::policy_spec("bfs", Some(100), None, 0).unwrap();
        let mut crawl = Crawl::new("c", &spec).unwrap();
        crawl.set_limits(CrawlLimits {
            urls: UrlLimits {
                max_per_host: 2,
                ..UrlLimits::UNBOUNDED
            },
            hops: HopLimits {
                max_hops: Some(0),
                max_redirects: 20,
            },
        });
        let entry = |url: &str| {
            let mut i = info(url, None, 0);
            i.metadata.insert(
                SITEMAP_KEY.to_string(),
                StringList {
                    values: vec!["http://a.test/sitemap.xml".to_string()],
                },
            );
            i
        };
        let ack = |crawl: &mut Crawl, i: &UrlInfo| crawl.put_discovered(i, 1).0;
        assert_eq!(ack(&mut crawl, &entry("http://a.test/1")), AckStatus::Ok);
        assert_eq!(ack(&mut crawl, &entry("http://a.test/2")), AckStatus::Ok);
        // No hop from the seeds (a hop limit of 0 admits it), queued in the frontier.
        assert_eq!(crawl.pages[1].mark(), Mark::Queued);
        assert_eq!(
            ack(&mut crawl, &entry("http://a.test/3")),
            AckStatus::Skipped
        );
        assert_eq!(crawl.counts(None, 1).unwrap().capped.host, 1);
        assert_eq!(
            ack(&mut crawl, &info("http://a.test/seed", None, 0)),
            AckStatus::Ok
        );
    }

    /// Links are admitted within the limits on hops, the crawler's rule: a link adds a hop, a
    /// redirect's target (a page reported with the outcome `redirect`) one more redirect in a
    /// row; a known URL reached by a shorter way gets the shorter counts.
    #[test]
    fn links_are_admitted_within_the_limits_on_hops() {
        let spec = crate::service::policy_spec("bfs", Some(100), None, 0).unwrap();
        let mut crawl = Crawl::new("c", &spec).unwrap();
        crawl.set_limits(CrawlLimits {
            urls: UrlLimits::UNBOUNDED,
            hops: HopLimits {
                max_hops: Some(2),
                max_redirects: 2,
            },
        });
        let report = |crawl: &mut Crawl, url: &str, redirect: bool, links: &[&str]| {
            let mut page = info(url, None, 0);
            if redirect {
                page.metadata.insert(
                    OUTCOME_KEY.to_string(),
                    StringList {
                        values: vec![REDIRECT_OUTCOME.to_string()],
                    },
                );
            }
            let links: Vec<String> = links.iter().map(|l| l.to_string()).collect();
            crawl.report_page(&page, 0, &links, 1).0.discovered
        };
        crawl.put_discovered(&info("http://s.test/", None, 0), 1);
        assert_eq!(
            report(&mut crawl, "http://s.test/", false, &["http://a.test/1"]),
            1
        );
        assert_eq!(
            report(&mut crawl, "http://a.test/1", false, &["http://b.test/2"]),
            1
        );
        assert_eq!(
            report(&mut crawl, "http://b.test/2", false, &["http://c.test/3"]),
            0,
            "three hops from the seed"
        );
        // A cross-host redirect chain: two redirects in a row pass, the third does not.
        assert_eq!(
            report(&mut crawl, "http://s.test/", true, &["http://r1.test/"]),
            1
        );
        assert_eq!(
            report(&mut crawl, "http://r1.test/", true, &["http://r2.test/"]),
            1
        );
        assert_eq!(
            report(&mut crawl, "http://r2.test/", true, &["http://r3.test/"]),
            0,
            "a third redirect in a row"
        );
        let c = crawl.counts(None, 1).unwrap().capped;
        assert_eq!((c.hops, c.redirects), (1, 1));
        // The counts survive a checkpoint.
        let copy = round_trip(&crawl, &spec, Some((2, 5)));
        assert_eq!(copy.hops.to_packed(), crawl.hops.to_packed());
        assert_eq!(copy.counts(None, 1), crawl.counts(None, 1));
    }

    #[test]
    fn filters_are_bounded_and_scans_resume_where_they_stopped() {
        let refused = UrlFilter::new("", Some(&"x".repeat(MAX_FILTER_LEN + 1)), true);
        assert!(refused.unwrap_err().contains("more than the 8192"));
        let spec = crate::service::policy_spec("bfs", Some(100), None, 0).unwrap();
        let mut crawl = Crawl::new("c", &spec).unwrap();
        for i in 0..50 {
            let url = format!("http://h{}.test/Page{i}", i % 3);
            crawl.put_discovered(&info(&url, None, 0), 1);
        }
        let upper = UrlFilter::new("", Some("PAGE1"), true).unwrap();
        let exact = UrlFilter::new("", Some("PAGE1"), false).unwrap();
        let count = |c: &Crawl, f: &UrlFilter, step: usize| {
            let (mut n, mut cursor, mut steps) = (0, None, 0);
            loop {
                steps += 1;
                cursor = c.scan_urls(f, cursor.as_ref(), step, |_, _| {
                    n += 1;
                    true
                });
                if cursor.is_none() {
                    return (n, steps);
                }
            }
        };
        // Page1, Page10..Page19.
        assert_eq!(count(&crawl, &upper, usize::MAX), (11, 1));
        assert_eq!(count(&crawl, &upper, 7).0, 11);
        assert!(count(&crawl, &upper, 7).1 >= 50 / 7);
        assert_eq!(count(&crawl, &exact, 7).0, 0);
        // A scan resumed after URLs were added and a queue deleted sees each URL once.
        let all = UrlFilter::new("", None, false).unwrap();
        let mut seen = Vec::new();
        let cursor = crawl.scan_urls(&all, None, 20, |_, p| {
            seen.push(p);
            true
        });
        crawl.put_discovered(&info("http://h9.test/late", None, 0), 2);
        crawl.delete_queue("h2.test");
        let mut cursor = cursor;
        while cursor.is_some() {
            cursor = crawl.scan_urls(&all, cursor.as_ref(), 20, |_, p| {
                seen.push(p);
                true
            });
        }
        let mut dedup = seen.clone();
        dedup.sort_unstable();
        dedup.dedup();
        assert_eq!(dedup.len(), seen.len(), "each URL once: {seen:?}");
        assert!(
            seen.contains(&50),
            "the late URL, in a queue after the cursor, is seen"
        );
    }
}
