//! `fica` (FICA Alg. 1) and `fica-plus` (our reconstruction of FICA+).
//!
//! FICA crawls in order of *logarithmic distance* from the seeds: a link out of a page with
//! `O` out-links weighs `log O`, so a link from a page with few links counts as "closer" — the
//! random surfer is more likely to follow it. With reinforcement-learning damping, on popping
//! `p` at distance `d_p`, every uncrawled child `u` gets
//! `D[u] = min(D[u], α·log O(p) + (1−α)·d_p)`, `α = exp(−β·t)`, `t = crawled div K`;
//! the frontier pops the smallest `D` (Dijkstra-like).
//!
//! FICA+'s formula is lost (its fragment is garbled). docs/algorithms.md §3 reconstructs it as FICA's
//! distance traded against the back-link count with IECA's balance δ:
//! `priority(u) = (1−δ)·m(u) − δ·log(1 + b(u))`, smaller first.

use super::backlink::Counts;
use super::log10;
use super::PolicyConfig;
use crate::{BatchClock, Crawled, Link, Offer, PageHeap, PageId, PageTable, Policy};

/// A per-page `f64` that grows with the id space, filled with `fill`.
#[derive(Debug)]
pub(crate) struct PageValues {
    values: Vec<f64>,
    fill: f64,
}

impl PageValues {
    pub(crate) fn new(fill: f64) -> Self {
        Self {
            values: Vec::new(),
            fill,
        }
    }
    #[inline]
    pub(crate) fn get(&self, page: PageId) -> f64 {
        self.values.get(page as usize).copied().unwrap_or(self.fill)
    }
    #[inline]
    pub(crate) fn set(&mut self, page: PageId, v: f64) {
        let i = page as usize;
        if i >= self.values.len() {
            // To the page and no further (see `PageTable::grow`).
            self.values.resize(i + 1, self.fill);
        }
        self.values[i] = v;
    }
    /// `values[page] = min(values[page], v)`; whether it fell.
    #[inline]
    pub(crate) fn lower(&mut self, page: PageId, v: f64) -> bool {
        let fell = v < self.get(page);
        if fell {
            self.set(page, v);
        }
        fell
    }
}

/// FICA's eq. 3: the distance a page crawled with `offer` (at `d_p`, with `O(p)` out-links, at
/// time `t`) hands its children, `α·log O(p) + (1−α)·d_p` with the learning rate
/// `α = exp(−β·t)` (eq. 4).
fn log_distance(beta: f64, offer: &Offer) -> f64 {
    let alpha = (-beta * offer.t as f64).exp();
    alpha * log10(offer.outdegree as f64) + (1.0 - alpha) * offer.distance
}

/// The distance-carrying [`Offer`] of a page crawled at `distance`, shared by FICA, FICA+ and
/// IECA; `None` for a page without out-links (local or remote), which hands its children
/// nothing.
pub(crate) fn distance_offer(crawled: &Crawled<'_>, distance: f64) -> Option<Offer> {
    let offer = Offer {
        outdegree: crawled.outdegree() as u64,
        distance,
        t: crawled.clock.t,
        ..Offer::default()
    };
    (offer.outdegree != 0).then_some(offer)
}

/// FICA's step, shared by `fica` and `fica-plus`: a crawled page hands each pending child its
/// [`log_distance`], here or, through its offer, where the child is held. The two policies
/// differ in what a child makes of the distance ([`take`](Self::take)).
trait LogDistance {
    /// `D[page]`, and the learning-rate decay β.
    fn distance_and_beta(&self, page: PageId) -> (f64, f64);
    /// The pending page `u` is handed distance `d` by one of its parents.
    fn take(&mut self, u: PageId, d: f64, pages: &PageTable);

    /// [`Policy::crawled_split`]: the page's offer, its distance applied to its local children.
    fn pass(&mut self, crawled: &Crawled<'_>, pages: &PageTable) -> Option<Offer> {
        let (distance, beta) = self.distance_and_beta(crawled.page);
        let offer = distance_offer(crawled, distance)?;
        let d = log_distance(beta, &offer);
        for l in crawled.pending() {
            self.take(l.page, d, pages);
        }
        Some(offer)
    }

    /// [`Policy::receive`]: what a parent held elsewhere passed along its link.
    fn take_offer(&mut self, link: Link, offer: &Offer, pages: &PageTable) {
        if link.is_pending() {
            let (_, beta) = self.distance_and_beta(link.page);
            self.take(link.page, log_distance(beta, offer), pages);
        }
    }
}

/// FICA+'s priority `(1−δ)·m(u) − δ·log(1 + b(u))` of a page at distance `m` with `b`
/// back-links (smaller first).
fn trade_off(delta: f64, m: f64, b: u32) -> f64 {
    (1.0 - delta) * m - delta * log10(1.0 + b as f64)
}

/// `fica`'s constructor (registry).
pub fn fica(c: &PolicyConfig) -> Box<dyn Policy> {
    Box::new(Fica {
        heap: PageHeap::new(c.spill.as_ref()),
        ..Fica::new(c.beta)
    })
}

/// `fica-plus`'s constructor (registry).
pub fn fica_plus(c: &PolicyConfig) -> Box<dyn Policy> {
    Box::new(FicaPlus::new(c))
}

/// `fica`: logarithmic distance, smallest first.
#[derive(Debug)]
pub struct Fica {
    heap: PageHeap,
    dist: PageValues,
    beta: f64,
}

impl Fica {
    /// An empty `fica` frontier with learning-rate decay `beta` (`α = exp(−β·t)`).
    pub fn new(beta: f64) -> Self {
        Self {
            heap: PageHeap::default(),
            dist: PageValues::new(f64::INFINITY),
            beta,
        }
    }

    /// `D[page]` (∞ for pages not reached).
    pub fn distance(&self, page: PageId) -> f64 {
        self.dist.get(page)
    }
}

impl LogDistance for Fica {
    fn distance_and_beta(&self, page: PageId) -> (f64, f64) {
        (self.dist.get(page), self.beta)
    }
    /// `D[u] = min(D[u], d)`, queued at its new distance when it falls.
    fn take(&mut self, u: PageId, d: f64, pages: &PageTable) {
        if self.dist.lower(u, d) {
            self.heap.push_or_update(u, d, pages.seq(u));
        }
    }
}

impl Policy for Fica {
    fn name(&self) -> &'static str {
        "fica"
    }
    fn push_seed(&mut self, page: PageId, pages: &PageTable) {
        // A new page's distance is ∞: a seed's falls to 0.
        self.take(page, 0.0, pages);
    }
    fn pop(&mut self, _: &PageTable) -> Option<PageId> {
        self.heap.pop().map(|(p, _)| p)
    }
    fn crawled_split(&mut self, crawled: &Crawled<'_>, pages: &PageTable) -> Option<Offer> {
        self.pass(crawled, pages)
    }
    fn receive(&mut self, link: Link, offer: &Offer, pages: &PageTable) {
        self.take_offer(link, offer, pages);
    }
    distance_scores!();
    heap_frontier!();
}

/// IECA's balance δ (docs/algorithms.md §3): by default 0.35 until the first reorder, then
/// `0.35 − 0.28·crawled/R` (with `crawled/R` capped at 1), recomputed at every batch boundary;
/// [`PolicyConfig::delta_initial`] and [`PolicyConfig::delta_slope`] set the two numbers.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Balance {
    pub(crate) delta: f64,
    initial: f64,
    slope: f64,
    expected: u64,
}

impl Balance {
    /// The schedule `config` sets: `δ = initial − slope·min(1, crawled/expected)`.
    pub(crate) fn new(c: &PolicyConfig) -> Self {
        Self {
            delta: c.delta_initial,
            initial: c.delta_initial,
            slope: c.delta_slope,
            expected: c.expected_pages.max(1),
        }
    }

    /// Updates δ at a batch boundary; returns whether it changed.
    pub(crate) fn tick(&mut self, clock: &BatchClock) -> bool {
        if !clock.boundary {
            return false;
        }
        let fraction = (clock.crawled as f64 / self.expected as f64).min(1.0);
        let delta = self.initial - self.slope * fraction;
        let changed = delta != self.delta;
        self.delta = delta;
        changed
    }
}

/// `fica-plus`: FICA's distance `m` traded against back-links `b` by IECA's δ.
#[derive(Debug)]
pub struct FicaPlus {
    heap: PageHeap,
    dist: PageValues,
    backlinks: Counts,
    /// The priority each page had when it was popped (its final score is the opposite).
    popped: PageValues,
    balance: Balance,
    beta: f64,
}

impl FicaPlus {
    /// An empty `fica-plus` frontier as `c` configures it: learning-rate decay
    /// [`beta`](PolicyConfig::beta), δ's schedule, the heap's [`spill`](PolicyConfig::spill).
    pub fn new(c: &PolicyConfig) -> Self {
        Self {
            heap: PageHeap::new(c.spill.as_ref()),
            dist: PageValues::new(f64::INFINITY),
            backlinks: Counts::default(),
            popped: PageValues::new(f64::INFINITY),
            balance: Balance::new(c),
            beta: c.beta,
        }
    }

    fn priority(&self, page: PageId) -> f64 {
        trade_off(
            self.balance.delta,
            self.dist.get(page),
            self.backlinks.get(page),
        )
    }
}

impl LogDistance for FicaPlus {
    fn distance_and_beta(&self, page: PageId) -> (f64, f64) {
        (self.dist.get(page), self.beta)
    }
    /// One more back-link of `u`, and `D[u] = min(D[u], d)`; queued at its new priority.
    fn take(&mut self, u: PageId, d: f64, pages: &PageTable) {
        self.backlinks.bump(u);
        self.dist.lower(u, d);
        let prio = self.priority(u);
        self.heap.push_or_update(u, prio, pages.seq(u));
    }
}

impl Policy for FicaPlus {
    fn name(&self) -> &'static str {
        "fica-plus"
    }
    fn push_seed(&mut self, page: PageId, pages: &PageTable) {
        self.dist.set(page, 0.0);
        self.heap
            .push_or_update(page, self.priority(page), pages.seq(page));
    }
    fn pop(&mut self, _: &PageTable) -> Option<PageId> {
        let (p, key) = self.heap.pop()?;
        self.popped.set(p, key);
        Some(p)
    }
    fn crawled_split(&mut self, crawled: &Crawled<'_>, pages: &PageTable) -> Option<Offer> {
        if self.balance.tick(&crawled.clock) {
            // δ weighs every queued page's two terms anew.
            let (dist, backlinks, delta) = (&self.dist, &self.backlinks, self.balance.delta);
            self.heap
                .rekey_all(|u| trade_off(delta, dist.get(u), backlinks.get(u)));
        }
        self.pass(crawled, pages)
    }
    fn receive(&mut self, link: Link, offer: &Offer, pages: &PageTable) {
        self.take_offer(link, offer, pages);
    }
    fn score(&self, page: PageId, pages: &PageTable) -> Option<f64> {
        if !pages.is_known(page) {
            return None;
        }
        Some(if pages.is_popped(page) {
            -self.popped.get(page)
        } else {
            -self.priority(page)
        })
    }
    heap_frontier!();
    fn final_scores(&mut self, order: &[PageId], _: &PageTable) -> Vec<f64> {
        order.iter().map(|&p| -self.popped.get(p)).collect()
    }
}
