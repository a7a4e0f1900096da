//! Crawl frontiers: every crawl-ordering policy of the papers behind one abstraction.
//!
//! A crawler keeps a *frontier*: the pages it knows of but has not fetched. The order in which
//! it empties the frontier decides which pages it gets before it must stop. This crate holds
//! that order, once, for the simulator (which replays crawls over a known graph), the real
//! crawler (which fetches over HTTP) and anything else that orders a crawl: what the simulator
//! measures is what the crawler does.
//!
//! The crawl loop (docs/algorithms.md §2) is [`drive`]:
//!
//! ```text
//! frontier.seed(seeds)
//! while let Some(p) = frontier.pop() {          // p is now popped (crawled or in flight)
//!     frontier.on_crawled(p, &out_links(p));    // reorders itself every K pages
//! }
//! ```
//!
//! The simulator and the tests call [`drive`]; the crawler makes the same three calls in the
//! same order, with fetches in flight between `pop` and `on_crawled`, and records them in a
//! log that [`LogReplay`] turns back into the same frontier after a restart.
//!
//! Pages are dense ids (`u32`); the crawler maps URLs to ids, the simulator uses the graph's.
//! The id space grows on demand, so a crawler need not know how many pages it will meet.
//!
//! [`Frontier`] owns what every policy shares — which pages are unseen, queued or popped, the
//! first-discovery order that breaks ties, the crawl counter and the batch clock — and hands a
//! [`Policy`] the events it orders by: a seed, and each crawled page's links, every link
//! marked [`Target::New`], [`Target::Queued`] or [`Target::Popped`]. A policy is one file in
//! [`policies`] and one line in its registry ([`PolicyKind`]).
//!
//! Entry points, all at the crate root: a [`PolicySpec`] ([`PolicyKind`] with its
//! [`PolicyConfig`]; [`default_batch`]) builds a [`Frontier`] ([`Frontier::from_spec`]);
//! [`drive`] and [`crawl_order`] run the crawl loop over a known graph; [`LogReplay`] rebuilds
//! a frontier from a log of [`Logged`] calls. A new policy implements [`Policy`] over the
//! [`PageTable`], with [`PageHeap`] for its priority queue: an [`IndexedHeap`] in memory, or,
//! when [`PolicyConfig::spill`] asks for it ([`SpillConfig`]), a [`SpillingHeap`] that keeps
//! its cold part on disk with the same pop order.
//!
//! A reorder that takes long (`learned`'s refit) may run on a thread of its own while the
//! crawler goes on receiving pages ([`Frontier::set_background_reorders`], `reorder.rs`): the
//! frontier pops nothing until the reorder is applied, so the crawl order is the same.

#![warn(missing_docs)]

mod drive;
mod heap;
mod offer;
mod page_heap;
mod pages;
pub mod policies;
mod reorder;
mod replay;
mod spill;

pub use drive::{crawl_order, drive};
pub use heap::IndexedHeap;
pub use offer::{CashLedger, Offer};
pub use page_heap::PageHeap;
pub use pages::PageTable;
pub use policies::{default_batch, Impacts, PolicyConfig, PolicyKind, PolicySpec};
pub use reorder::{ReorderJob, ReorderOutput, ReorderStats};
pub use replay::{LogReplay, Logged, Replayed};
pub use spill::{SpillConfig, SpillStatus, SpillingHeap};

/// Entries a spilling frontier keeps in memory by default (16 bytes each: 64 MiB) before
/// its cold part spills to disk, for `crawlrank crawl` and `crawlrank frontier serve` alike
/// (`--frontier-hot`): a crawl of a few million URLs never spills.
pub const DEFAULT_FRONTIER_HOT: usize = 1 << 22;

/// A page: a dense id.
pub type PageId = u32;

/// The batch clock of a crawl, as policies see it when a page has just been crawled: it counts
/// crawled pages and batches of `K`, not seconds (the frontier service's wall time is its
/// `TimeSource`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BatchClock {
    /// Pages crawled so far, including the one being processed.
    pub crawled: u64,
    /// The batch size `K`.
    pub batch: u64,
    /// `t = crawled div K` (FICA's and IECA's time).
    pub t: u64,
    /// Whether `crawled` is a multiple of `K`: the batch policies reorder now, and IECA's δ
    /// is recomputed (before the children of the page are processed, docs/algorithms.md §2).
    pub boundary: bool,
}

/// What a link of a crawled page pointed at when the frontier saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// A page seen for the first time: the frontier has just recorded it (its discovery
    /// sequence number is the next one); the policy decides whether and where it is queued.
    New,
    /// A page already known and not yet popped: it waits in the frontier.
    Queued,
    /// A page already popped (crawled, or in flight in a real crawler). Most policies ignore
    /// such links; OPIC still pays it cash and the PageRank policies keep the arc.
    Popped,
}

/// One out-link of a crawled page, as handed to [`Policy::crawled`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Link {
    /// The linked page.
    pub page: PageId,
    /// What it was when the link was seen.
    pub target: Target,
}

impl Link {
    /// Whether the linked page is still waiting to be crawled (new or queued).
    #[inline]
    pub fn is_pending(&self) -> bool {
        self.target != Target::Popped
    }

    /// The pages first seen through `links` (those marked [`Target::New`]), in link order:
    /// what a queue-based policy appends to its queue when a page is crawled.
    pub fn new_pages(links: &[Link]) -> impl Iterator<Item = PageId> + '_ {
        links
            .iter()
            .filter(|l| l.target == Target::New)
            .map(|l| l.page)
    }
}

/// A crawled page as [`Policy::crawled_split`] is told of it.
#[derive(Debug, Clone, Copy)]
pub struct Crawled<'a> {
    /// The crawled page.
    pub page: PageId,
    /// Its out-links this frontier holds, in the order the crawler saw them, each marked as
    /// the frontier found it (new pages are already recorded).
    pub links: &'a [Link],
    /// How many more out-links of the page other frontiers hold (0 for a frontier of its own).
    pub remote: usize,
    /// The batch clock after this page.
    pub clock: BatchClock,
}

impl Crawled<'_> {
    /// `O(p)`: the page's out-links, local and remote.
    pub fn outdegree(&self) -> usize {
        self.links.len() + self.remote
    }

    /// The local links to pages still waiting to be crawled ([`Link::is_pending`]).
    pub fn pending(&self) -> impl Iterator<Item = Link> + '_ {
        self.links.iter().copied().filter(Link::is_pending)
    }
}

/// A crawl ordering. Implementations live in [`policies`]; [`Frontier`] drives them and owns
/// the page bookkeeping they read ([`PageTable`]).
pub trait Policy: Send {
    /// The policy's name, as on the command line.
    fn name(&self) -> &'static str;
    /// A page enters the frontier as a seed (it is new; `pages` already records it).
    fn push_seed(&mut self, page: PageId, pages: &PageTable);
    /// Removes and returns the next page to crawl.
    fn pop(&mut self, pages: &PageTable) -> Option<PageId>;
    /// `page` was crawled and has these out-links (its outdegree `O(p)` is their number), in
    /// the order the crawler saw them. New pages are already recorded in `pages`.
    ///
    /// A policy implements this or [`crawled_split`](Self::crawled_split), whichever says its
    /// logic: each one's default calls the other (implementing neither recurses without end).
    /// This default is `crawled_split` with no remote links, its offer dropped.
    fn crawled(&mut self, page: PageId, links: &[Link], pages: &PageTable, clock: &BatchClock) {
        let crawled = Crawled {
            page,
            links,
            remote: 0,
            clock: *clock,
        };
        self.crawled_split(&crawled, pages);
    }
    /// [`crawled`](Self::crawled) when [`Crawled::remote`] more out-links of the page are held
    /// by other frontiers (nodes of a cluster, `offer.rs`): they count in `O(p)`, and the
    /// policy returns what it passes along each of them, for [`receive`](Self::receive) where
    /// they are held. The default, for a policy that implements `crawled` instead, ignores
    /// `remote` and returns `None`: the policy passes nothing along a link that another
    /// frontier could apply, and those links enter there as seeds.
    fn crawled_split(&mut self, crawled: &Crawled<'_>, pages: &PageTable) -> Option<Offer> {
        self.crawled(crawled.page, crawled.links, pages, &crawled.clock);
        None
    }
    /// Applies an [`Offer`] a page held by another frontier passed along its link to
    /// `link.page` (already recorded in `pages` when new), as [`crawled`](Self::crawled)
    /// would have applied it to a link of its own. The default, for policies whose
    /// [`crawled_split`](Self::crawled_split) returns `None`: a new page enters as a seed.
    fn receive(&mut self, link: Link, _offer: &Offer, pages: &PageTable) {
        if link.target == Target::New {
            self.push_seed(link.page, pages);
        }
    }
    /// OPIC's cash over the pages `0..pages` ([`CashLedger`]); `None` for policies that hold
    /// no cash.
    fn cash(&self, _pages: u32) -> Option<CashLedger> {
        None
    }
    /// The search log says `page` has `impact` (docs/algorithms.md §6): the crawler reports it
    /// when it discovers the page, before the page can be crawled. Only the impact-aware
    /// policies keep it.
    fn observe_impact(&mut self, _page: PageId, _impact: f64) {}
    /// Called after [`crawled`](Self::crawled) when `clock.boundary` holds: batch policies
    /// recompute their ranking and reorder the frontier.
    fn reorder(&mut self, _pages: &PageTable, _clock: &BatchClock) {}
    /// Starts the reorder of a boundary; what [`Frontier`] calls instead of
    /// [`reorder`](Self::reorder). A policy whose reorder is long may split it: here it copies
    /// what the reorder reads and returns the long part as a [`ReorderJob`] (which the frontier
    /// may run on another thread), and [`finish_reorder`](Self::finish_reorder) applies the
    /// job's output. Until then the policy is only told of crawled pages, seeds and impacts
    /// (never popped), and must end up as if the reorder had happened before them. The
    /// default reorders at once and returns `None`.
    fn begin_reorder(&mut self, pages: &PageTable, clock: &BatchClock) -> Option<ReorderJob> {
        self.reorder(pages, clock);
        None
    }
    /// Applies the output of the job [`begin_reorder`](Self::begin_reorder) returned (only
    /// called for such a job, with its output).
    fn finish_reorder(&mut self, _output: ReorderOutput, _pages: &PageTable) {}
    /// The current score of a known page, higher meaning more important (the ranking while
    /// crawling); `None` for pages the policy has no score for.
    fn score(&self, page: PageId, pages: &PageTable) -> Option<f64>;
    /// Pages in the frontier.
    fn len(&self) -> usize;
    /// Whether the frontier is empty.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The policy's final score of every crawled page, in crawl order, which the simulator
    /// correlates with PageRank (Kendall's τ, docs/algorithms.md §4). The default, for
    /// policies with no score of their own, is `−(crawl position)`.
    fn final_scores(&mut self, crawl_order: &[PageId], _pages: &PageTable) -> Vec<f64> {
        crawl_position_scores(crawl_order)
    }
    /// The state of the policy's spilling priority queue ([`PolicyConfig::spill`]); `None`
    /// when it does not spill (the default, and every policy without a priority queue).
    fn spill_status(&self) -> Option<SpillStatus> {
        None
    }
}

/// `−(crawl position)`: the final score of policies that have no score of their own.
pub fn crawl_position_scores(order: &[PageId]) -> Vec<f64> {
    (0..order.len()).map(|i| -(i as f64)).collect()
}

/// A crawl frontier: page bookkeeping shared by all policies, plus one [`Policy`].
pub struct Frontier {
    pages: PageTable,
    policy: Box<dyn Policy>,
    /// The links of the page being reported, classified; kept to reuse its allocation.
    links: Vec<Link>,
    crawled: u64,
    /// Pages other frontiers of the same crawl have crawled, as last told
    /// ([`set_crawled_elsewhere`](Frontier::set_crawled_elsewhere)): the batch clock counts them.
    elsewhere: u64,
    /// The batch clock's `t` at the last crawled page: a boundary is where `t` moves on.
    last_t: u64,
    batch: u64,
    peak: usize,
    /// Where split reorders run: inline, or on a thread of the frontier's own.
    reorders: reorder::Reorders,
}

impl Frontier {
    /// A frontier ordered by `policy`, reordering every `batch` (K ≥ 1) crawled pages.
    pub fn new(policy: Box<dyn Policy>, batch: u64) -> Self {
        Self {
            pages: PageTable::default(),
            policy,
            links: Vec::new(),
            crawled: 0,
            elsewhere: 0,
            last_t: 0,
            batch: batch.max(1),
            peak: 0,
            reorders: reorder::Reorders::default(),
        }
    }

    /// Runs the long part of the policy's reorders (a policy that splits them,
    /// [`Policy::begin_reorder`]: `learned`) on a thread of the frontier's own, so that the
    /// caller can go on with other work — receiving fetched pages, reporting them with
    /// [`on_crawled`](Self::on_crawled) — meanwhile. The order is unchanged: [`pop`](Self::pop)
    /// waits for a reorder still running; [`reorder_pending`](Self::reorder_pending) says
    /// whether it would. `false` (the default) runs every reorder inline. An error if the
    /// thread cannot be started.
    pub fn set_background_reorders(&mut self, on: bool) -> anyhow::Result<()> {
        self.settle();
        self.reorders.set_background(on)
    }

    /// Whether a reorder is still running on the frontier's thread (then [`pop`](Self::pop)
    /// would wait for it). A reorder found finished is applied here.
    pub fn reorder_pending(&mut self) -> bool {
        self.reorders.poll(self.policy.as_mut(), &self.pages)
    }

    /// Waits for a reorder still running and applies it.
    pub fn settle(&mut self) {
        self.reorders.wait(self.policy.as_mut(), &self.pages);
    }

    /// What the reorders run on the frontier's thread cost and overlapped (all zero when
    /// every reorder runs inline).
    pub fn reorder_stats(&self) -> ReorderStats {
        self.reorders.stats()
    }

    /// The frontier of a registered policy (see [`PolicyKind`]).
    pub fn with_policy(kind: PolicyKind, config: &PolicyConfig) -> anyhow::Result<Self> {
        Ok(Self::new(kind.build(config)?, config.batch))
    }

    /// The frontier a [`PolicySpec`] describes.
    pub fn from_spec(spec: &PolicySpec) -> anyhow::Result<Self> {
        Self::with_policy(spec.kind, &spec.config)
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

    /// The next page to crawl; it counts as popped from now on (a real crawler has it in
    /// flight), so links to it found meanwhile are [`Target::Popped`].
    pub fn pop(&mut self) -> Option<PageId> {
        self.settle();
        let p = self.policy.pop(&self.pages)?;
        self.pages.mark_popped(p);
        Some(p)
    }

    /// Reports the out-links of a crawled page (as the crawler saw them, no duplicates).
    /// New pages are recorded in link order, so first-discovery order is the same whatever
    /// the policy. Every `K` pages the policy reorders the frontier (a reorder still running
    /// from the last boundary is waited for first).
    pub fn on_crawled(&mut self, page: PageId, links: &[PageId]) {
        self.on_crawled_split(page, links, 0);
    }

    /// [`on_crawled`](Self::on_crawled) for a page of which `remote` more out-links are held
    /// by other frontiers (nodes of a cluster): they count in the page's out-degree, and what
    /// the policy passes along each of them is returned, to be handed to
    /// [`receive`](Self::receive) where they are held (`None`: the policy passes nothing
    /// along; they enter there as seeds, [`Policy::crawled_split`]).
    pub fn on_crawled_split(
        &mut self,
        page: PageId,
        links: &[PageId],
        remote: usize,
    ) -> Option<Offer> {
        self.reorders.count_crawled();
        self.crawled += 1;
        let total = self.crawled + self.elsewhere;
        let t = total / self.batch;
        // One frontier: `t` moves on exactly at the multiples of K. With the pages crawled
        // elsewhere counted, the total may jump past one; the boundary is still taken once.
        let boundary = t > self.last_t;
        self.last_t = self.last_t.max(t);
        let clock = BatchClock {
            crawled: total,
            batch: self.batch,
            t,
            boundary,
        };
        let pages = &mut self.pages;
        self.links.clear();
        // One `extend` of an exact-size iterator: reserved once, no capacity check per link.
        self.links.extend(links.iter().map(|&u| Link {
            page: u,
            target: pages.classify(u),
        }));
        let crawled = Crawled {
            page,
            links: &self.links,
            remote,
            clock,
        };
        let offer = self.policy.crawled_split(&crawled, &self.pages);
        self.peak = self.peak.max(self.policy.len());
        if clock.boundary {
            self.settle();
            if let Some(job) = self.policy.begin_reorder(&self.pages, &clock) {
                self.reorders.start(job, self.policy.as_mut(), &self.pages);
            }
        }
        offer
    }

    /// Applies what a page crawled by another frontier passed along its link to `page`
    /// ([`on_crawled_split`](Self::on_crawled_split)'s offer): a page not seen yet is recorded
    /// (its discovery comes now) and queued by the offer, not as a seed.
    pub fn receive(&mut self, page: PageId, offer: &Offer) {
        let link = Link {
            page,
            target: self.pages.classify(page),
        };
        self.policy.receive(link, offer, &self.pages);
        self.peak = self.peak.max(self.policy.len());
    }

    /// Tells the frontier how many pages of the same crawl other frontiers (the other nodes
    /// of a cluster) have crawled: the batch clock (`t = crawled div K`, the batch policies'
    /// reorders) counts the crawl's total from the next crawled page on. It must come from
    /// the caller's log to be replayed the same; 0 for a frontier of its own.
    pub fn set_crawled_elsewhere(&mut self, pages: u64) {
        self.elsewhere = pages;
    }

    /// Pages other frontiers have crawled, as last told.
    pub fn crawled_elsewhere(&self) -> u64 {
        self.elsewhere
    }

    /// OPIC's cash over the pages `0..pages` ([`CashLedger`]); `None` for another policy.
    pub fn cash(&self, pages: u32) -> Option<CashLedger> {
        self.policy.cash(pages)
    }

    /// Reports the impact of `page` from the search log (docs/algorithms.md §6), for the
    /// impact-aware policies; a crawler calls it when the page is discovered, before it is
    /// crawled. The simulator gives the whole vector in [`PolicyConfig::impact`] instead.
    pub fn set_impact(&mut self, page: PageId, impact: f64) {
        self.policy.observe_impact(page, impact);
    }

    /// The current score of a page (higher is more important), if the policy has one; while a
    /// reorder runs in the background, the score before it.
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

    /// The state of the frontier's spilling priority queue, if it spills
    /// ([`PolicyConfig::spill`]): its sizes and how many writes to the spill directory failed.
    /// A failed write keeps its entries in memory (the crawl order is unchanged, memory grows),
    /// so a crawler should report `write_failures` when it rises.
    pub fn spill_status(&self) -> Option<SpillStatus> {
        self.policy.spill_status()
    }

    /// The page bookkeeping (states and discovery order).
    pub fn pages(&self) -> &PageTable {
        &self.pages
    }

    /// Ends the crawl, returning the policy and the page bookkeeping: what the simulator
    /// needs for [`Policy::final_scores`].
    pub fn into_parts(mut self) -> (Box<dyn Policy>, PageTable) {
        self.settle();
        (self.policy, self.pages)
    }
}
