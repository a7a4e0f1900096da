//! `opic`: On-line Page Importance Computation (Abiteboul et al., as FICA §4 runs it).
//!
//! Every page starts with `1/n` cash. Crawling `p` banks its cash in `history(p)` and hands
//! `cash(p)/O(p)` to each successor, crawled or not; the frontier page holding the most cash
//! goes next. Each page is crawled once (FICA's setting), and a page's importance is
//! `history + cash`.
//!
//! Cash is conserved: a page without out-links has no one to give its cash to, so it goes
//! to a *virtual page* (Abiteboul et al.'s device) that is never crawled. At every moment
//! `Σ cash + virtual = 1` over all `n` pages (history only grows: it records the cash that
//! flowed through a page), which the tests check at every step — unlike implementations
//! that let cash leak away.

use super::PolicyConfig;
use crate::{CashLedger, Crawled, Link, Offer, PageHeap, PageId, PageTable, Policy};

/// `opic`'s constructor (registry): `n` is `total_pages`.
pub fn opic(c: &PolicyConfig) -> Box<dyn Policy> {
    Box::new(Opic {
        heap: PageHeap::new(c.spill.as_ref()),
        ..Opic::new(c.total_pages)
    })
}

/// `opic`: most cash first.
#[derive(Debug)]
pub struct Opic {
    heap: PageHeap,
    initial: f64,
    cash: Vec<f64>,
    history: Vec<f64>,
    virtual_cash: f64,
    /// Cash sent along links held by other frontiers, and received from them (`offer.rs`).
    sent: f64,
    received: f64,
}

impl Opic {
    /// OPIC over a web of `n` pages (the crawler's estimate when unknown).
    pub fn new(n: u64) -> Self {
        Self {
            heap: PageHeap::default(),
            initial: 1.0 / n.max(1) as f64,
            cash: Vec::new(),
            history: Vec::new(),
            virtual_cash: 0.0,
            sent: 0.0,
            received: 0.0,
        }
    }

    fn grow(&mut self, page: PageId) {
        let need = page as usize + 1;
        if need > self.cash.len() {
            // To the page and no further: the vector's own growth reserves the room ahead
            // without writing it, so that room costs no resident memory.
            self.cash.resize(need, self.initial);
            self.history.resize(need, 0.0);
        }
    }

    /// The cash page `page` holds now.
    pub fn cash(&self, page: PageId) -> f64 {
        self.cash
            .get(page as usize)
            .copied()
            .unwrap_or(self.initial)
    }

    /// The cash page `page` has banked by being crawled.
    pub fn history(&self, page: PageId) -> f64 {
        self.history.get(page as usize).copied().unwrap_or(0.0)
    }

    /// Cash given away by pages without out-links.
    pub fn virtual_cash(&self) -> f64 {
        self.virtual_cash
    }

    /// `share` more cash for `u`, requeued at its new cash if it waits.
    fn pay(&mut self, link: Link, share: f64, pages: &PageTable) {
        let u = link.page;
        self.grow(u);
        self.cash[u as usize] += share;
        if link.is_pending() {
            self.heap
                .push_or_update(u, -self.cash[u as usize], pages.seq(u));
        }
    }
}

impl Policy for Opic {
    fn name(&self) -> &'static str {
        "opic"
    }
    fn push_seed(&mut self, page: PageId, pages: &PageTable) {
        self.grow(page);
        self.heap
            .push_or_update(page, -self.cash(page), pages.seq(page));
    }
    fn pop(&mut self, _: &PageTable) -> Option<PageId> {
        self.heap.pop().map(|(p, _)| p)
    }
    fn crawled_split(&mut self, crawled: &Crawled<'_>, pages: &PageTable) -> Option<Offer> {
        let page = crawled.page;
        self.grow(page);
        let c = std::mem::take(&mut self.cash[page as usize]);
        self.history[page as usize] += c;
        let outdegree = crawled.outdegree();
        if outdegree == 0 {
            self.virtual_cash += c;
            return None;
        }
        let share = c / outdegree as f64;
        for &l in crawled.links {
            self.pay(l, share, pages);
        }
        // What the remote links get leaves here now; it is theirs once received.
        self.sent += share * crawled.remote as f64;
        Some(Offer {
            outdegree: outdegree as u64,
            cash: share,
            ..Offer::default()
        })
    }
    fn receive(&mut self, link: Link, offer: &Offer, pages: &PageTable) {
        self.received += offer.cash;
        self.pay(link, offer.cash, pages);
    }
    fn cash(&self, pages: u32) -> Option<CashLedger> {
        let held = (0..pages).map(|p| self.cash(p)).sum::<f64>() + self.virtual_cash;
        Some(CashLedger {
            held,
            sent: self.sent,
            received: self.received,
        })
    }
    fn score(&self, page: PageId, _: &PageTable) -> Option<f64> {
        Some(self.history(page) + self.cash(page))
    }
    heap_frontier!();
    fn final_scores(&mut self, order: &[PageId], _: &PageTable) -> Vec<f64> {
        order
            .iter()
            .map(|&p| self.history(p) + self.cash(p))
            .collect()
    }
}
