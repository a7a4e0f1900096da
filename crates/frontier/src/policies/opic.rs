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
use crate::{BatchClock, Link, PageHeap, PageId, PageTable, Policy, SpillStatus};

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
        }
    }

    fn grow(&mut self, page: PageId) {
        let need = page as usize + 1;
        if need > self.cash.len() {
            let len = need.max(self.cash.len() * 3 / 2);
            self.cash.resize(len, self.initial);
            self.history.resize(len, 0.0);
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
    fn crawled(&mut self, page: PageId, links: &[Link], pages: &PageTable, _: &BatchClock) {
        self.grow(page);
        let c = std::mem::take(&mut self.cash[page as usize]);
        self.history[page as usize] += c;
        if links.is_empty() {
            self.virtual_cash += c;
            return;
        }
        let share = c / links.len() as f64;
        for l in links {
            let u = l.page;
            self.grow(u);
            self.cash[u as usize] += share;
            if l.is_pending() {
                self.heap
                    .push_or_update(u, -self.cash[u as usize], pages.seq(u));
            }
        }
    }
    fn score(&self, page: PageId, _: &PageTable) -> Option<f64> {
        Some(self.history(page) + self.cash(page))
    }
    fn len(&self) -> usize {
        self.heap.len()
    }
    fn spill_status(&self) -> Option<SpillStatus> {
        self.heap.spill_status()
    }
    fn final_scores(&mut self, order: &[PageId], _: &PageTable) -> Vec<f64> {
        order
            .iter()
            .map(|&p| self.history(p) + self.cash(p))
            .collect()
    }
}
