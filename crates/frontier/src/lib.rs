//! Crawl frontiers: every crawl-ordering policy of the papers behind one abstraction.
//!
//! A crawler keeps a *frontier*: the pages it knows of but has not fetched. The order in which
//! it empties the frontier decides which pages it gets before it must stop. This crate holds
//! that order, once, for both the simulator (which replays crawls over a known graph) and the
//! real crawler (which fetches over HTTP): what the simulator measures is what the crawler does.
//!
//! The loop both of them run is SPEC §2's:
//!
//! ```text
//! frontier.seed(seeds)
//! while let Some(p) = frontier.pop() {          // p is now crawled (or in flight)
//!     frontier.on_crawled(p, &out_links(p));    // reorders itself every K pages
//! }
//! ```
//!
//! Pages are dense ids (`u32`); the crawler maps URLs to ids, the simulator uses the graph's.
//! The id space grows on demand, so a crawler need not know how many pages it will meet.
//! [`Frontier`] keeps what every policy shares — which pages are unseen, queued or crawled,
//! the first-discovery order used to break ties, the crawl counter and the batch clock — and
//! delegates the ordering to a [`Policy`].

mod heap;
mod pages;
pub mod policies;

pub use heap::IndexedHeap;
pub use pages::PageTable;
pub use policies::{PolicyConfig, PolicyKind};

/// A page: a dense id.
pub type PageId = u32;

/// The clock of a crawl, as policies see it when a page has just been crawled.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Clock {
    /// Pages crawled so far, including the one being processed.
    pub crawled: u64,
    /// The batch size `K`.
    pub batch: u64,
    /// `t = crawled div K` (FICA's and IECA's time).
    pub t: u64,
    /// Whether `crawled` is a multiple of `K`: the batch policies reorder now, and IECA's δ
    /// is recomputed (before the children of the page are processed, SPEC §2).
    pub boundary: bool,
}

/// A crawl ordering. Implementations live in [`policies`]; [`Frontier`] drives them.
pub trait Policy: Send {
    /// The policy's name, as on the command line.
    fn name(&self) -> &'static str;
    /// A page enters the frontier as a seed (it is new; `pages` already records it).
    fn push_seed(&mut self, page: PageId, pages: &PageTable);
    /// Removes and returns the next page to crawl.
    fn pop(&mut self, pages: &PageTable) -> Option<PageId>;
    /// `page` was crawled and has these out-links (its outdegree `O(p)` is their number).
    /// Children not yet seen must be recorded with [`PageTable::discover`] before queueing.
    fn crawled(&mut self, page: PageId, links: &[PageId], pages: &mut PageTable, clock: &Clock);
    /// Called after [`crawled`](Self::crawled) when `clock.boundary` holds: batch policies
    /// recompute their ranking and reorder the frontier.
    fn reorder(&mut self, _pages: &PageTable, _clock: &Clock) {}
    /// The current score of a known page, higher meaning more important (ranking while
    /// crawling); `None` for pages the policy has no score for.
    fn score(&self, page: PageId, pages: &PageTable) -> Option<f64>;
    /// Pages in the frontier.
    fn len(&self) -> usize;
    /// Whether the frontier is empty.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The policy's final score of every crawled page, in crawl order (SPEC §4, for Kendall's
    /// τ against PageRank).
    fn final_scores(&mut self, crawl_order: &[PageId], pages: &PageTable) -> Vec<f64>;
}

/// A crawl frontier: page bookkeeping shared by all policies, plus one [`Policy`].
pub struct Frontier {
    pages: PageTable,
    policy: Box<dyn Policy>,
    crawled: u64,
    batch: u64,
    peak: usize,
}

impl Frontier {
    /// A frontier ordered by `policy`, reordering every `batch` (K ≥ 1) crawled pages.
    pub fn new(policy: Box<dyn Policy>, batch: u64) -> Self {
        Self {
            pages: PageTable::default(),
            policy,
            crawled: 0,
            batch: batch.max(1),
            peak: 0,
        }
    }

    /// Builds the frontier of a named policy (see [`PolicyKind`]).
    pub fn with_policy(kind: PolicyKind, config: &PolicyConfig) -> anyhow::Result<Self> {
        Ok(Self::new(policies::build(kind, config)?, config.batch))
    }

    /// The policy's name.
    pub fn name(&self) -> &'static str {
        self.policy.name()
    }

    /// Adds seeds in the given order; pages already known are skipped.
    pub fn seed(&mut self, seeds: &[PageId]) {
        for &s in seeds {
            if self.pages.discover(s) {
                self.policy.push_seed(s, &self.pages);
            }
        }
        self.peak = self.peak.max(self.policy.len());
    }

    /// The next page to crawl; it counts as crawled from now on (a real crawler has it in
    /// flight), so links to it found meanwhile are ignored.
    pub fn pop(&mut self) -> Option<PageId> {
        let p = self.policy.pop(&self.pages)?;
        self.pages.mark_crawled(p);
        Some(p)
    }

    /// Reports the out-links of a crawled page (as the crawler saw them, no duplicates).
    /// Every `K` pages the policy reorders the frontier.
    pub fn on_crawled(&mut self, page: PageId, links: &[PageId]) {
        self.crawled += 1;
        let clock = Clock {
            crawled: self.crawled,
            batch: self.batch,
            t: self.crawled / self.batch,
            boundary: self.crawled.is_multiple_of(self.batch),
        };
        self.policy.crawled(page, links, &mut self.pages, &clock);
        self.peak = self.peak.max(self.policy.len());
        if clock.boundary {
            self.policy.reorder(&self.pages, &clock);
        }
    }

    /// The current score of a page (higher is more important), if the policy has one.
    pub fn score(&self, page: PageId) -> Option<f64> {
        self.policy.score(page, &self.pages)
    }

    /// Pages waiting in the frontier.
    pub fn len(&self) -> usize {
        self.policy.len()
    }

    /// Whether no page is waiting.
    pub fn is_empty(&self) -> bool {
        self.policy.is_empty()
    }

    /// The largest the frontier has been.
    pub fn peak_len(&self) -> usize {
        self.peak
    }

    /// Pages crawled (reported through [`on_crawled`](Self::on_crawled)) so far.
    pub fn crawled(&self) -> u64 {
        self.crawled
    }

    /// The page bookkeeping (states and discovery order).
    pub fn pages(&self) -> &PageTable {
        &self.pages
    }

    /// The final score of every crawled page, in crawl order (see [`Policy::final_scores`]).
    pub fn final_scores(&mut self, crawl_order: &[PageId]) -> Vec<f64> {
        self.policy.final_scores(crawl_order, &self.pages)
    }
}

/// Replays SPEC §2's crawl loop over a known graph: seeds, then pop / on-crawled until the
/// frontier is empty. Returns the pages in crawl order. The simulator runs an instrumented
/// copy of this loop; tests use this one.
pub fn replay(
    graph: &crawlrank_graph::Csr,
    frontier: &mut Frontier,
    seeds: &[PageId],
) -> Vec<PageId> {
    frontier.seed(seeds);
    let mut order = Vec::new();
    while let Some(p) = frontier.pop() {
        order.push(p);
        frontier.on_crawled(p, graph.successors(p as usize));
    }
    order
}
