//! `ieca`: IECA Alg. 1 with the gaps docs/algorithms.md §3 fills.
//!
//! IECA extends FICA's logarithmic distance with the parent–child (P-C) coefficient, which
//! rewards a queued page for each further parent found, and a balance δ that shifts weight from
//! link structure (early, when the crawler knows little) to accumulated distance (later):
//!
//! - seeds enter at distance 0.3; δ = 0.35 until the first reorder, then
//!   `δ = 0.35 − 0.28·crawled/R` at every batch boundary, before the page's children;
//! - a new child: `D[u] = (1−δ)·d_p + log O(p)`;
//! - a queued child, always replaced (up or down):
//!   `D[u] = (1−δ)·[(1−α)·D[u] + α·(log O(p) + (1−δ)·d_p)] − δ·log f(D[u], d_p)`,
//!   with `f(dj, di) = dj/di` for equal signs, `(dj − di)/|di|` otherwise (eq. 8), and the
//!   `log f` term taken as 0 where `di = 0`, `f ≤ 0` or the value is not finite.

use super::fica::{distance_offer, Balance, PageValues};
use super::log10;
use super::PolicyConfig;
use crate::{Crawled, Link, Offer, PageHeap, PageId, PageTable, Policy, Target};

/// The distance seeds start with (IECA Alg. 1: "a small number, like 0.3").
pub const SEED_DISTANCE: f64 = 0.3;

/// `ieca`'s constructor (registry): β and δ's schedule from `c`.
pub fn ieca(c: &PolicyConfig) -> Box<dyn Policy> {
    Box::new(Ieca::new(c))
}

/// `ieca`: smallest IECA distance first.
#[derive(Debug)]
pub struct Ieca {
    heap: PageHeap,
    dist: PageValues,
    balance: Balance,
    beta: f64,
}

/// `log f(dj, di)` of IECA eq. 8, or 0 where it is undefined.
pub fn log_pc_coefficient(dj: f64, di: f64) -> f64 {
    if di == 0.0 {
        return 0.0;
    }
    let f = if (dj >= 0.0) == (di >= 0.0) {
        dj / di
    } else {
        (dj - di) / di.abs()
    };
    if f > 0.0 && f.is_finite() {
        let l = log10(f);
        if l.is_finite() {
            return l;
        }
    }
    0.0
}

impl Ieca {
    /// An empty `ieca` frontier as `c` configures it: learning-rate decay
    /// [`beta`](PolicyConfig::beta), δ's schedule, the heap's [`spill`](PolicyConfig::spill).
    pub fn new(c: &PolicyConfig) -> Self {
        Self {
            heap: PageHeap::new(c.spill.as_ref()),
            dist: PageValues::new(f64::INFINITY),
            balance: Balance::new(c),
            beta: c.beta,
        }
    }

    /// The current balance δ.
    pub fn delta(&self) -> f64 {
        self.balance.delta
    }

    /// `D[page]` (∞ for pages not reached).
    pub fn distance(&self, page: PageId) -> f64 {
        self.dist.get(page)
    }

    /// The pending child `link.page` of a page crawled with `offer` (its distance, out-degree,
    /// `t` and δ): a new child at `(1−δ)·d_p + log O(p)`, a queued one replaced by eq. 8's
    /// update.
    fn offer(&mut self, link: Link, offer: &Offer, pages: &PageTable) {
        let (delta, dp) = (offer.delta, offer.distance);
        let alpha = (-self.beta * offer.t as f64).exp();
        let weight = log10(offer.outdegree as f64);
        let u = link.page;
        let du = if link.target == Target::New {
            (1.0 - delta) * dp + weight
        } else {
            let old = self.dist.get(u);
            (1.0 - delta) * ((1.0 - alpha) * old + alpha * (weight + (1.0 - delta) * dp))
                - delta * log_pc_coefficient(old, dp)
        };
        self.dist.set(u, du);
        self.heap.push_or_update(u, du, pages.seq(u));
    }
}

impl Policy for Ieca {
    fn name(&self) -> &'static str {
        "ieca"
    }
    fn push_seed(&mut self, page: PageId, pages: &PageTable) {
        self.dist.set(page, SEED_DISTANCE);
        self.heap
            .push_or_update(page, SEED_DISTANCE, pages.seq(page));
    }
    fn pop(&mut self, _: &PageTable) -> Option<PageId> {
        self.heap.pop().map(|(p, _)| p)
    }
    fn crawled_split(&mut self, crawled: &Crawled<'_>, pages: &PageTable) -> Option<Offer> {
        self.balance.tick(&crawled.clock);
        let offer = Offer {
            delta: self.balance.delta,
            ..distance_offer(crawled, self.dist.get(crawled.page))?
        };
        for l in crawled.pending() {
            self.offer(l, &offer, pages);
        }
        Some(offer)
    }
    fn receive(&mut self, link: Link, offer: &Offer, pages: &PageTable) {
        if link.is_pending() {
            self.offer(link, offer, pages);
        }
    }
    distance_scores!();
    heap_frontier!();
}
