//! `omniscient`: the frontier page with the highest *true* PageRank of the full graph.
//!
//! No real crawler can do this — it needs the graph it has not crawled yet — but it draws the
//! line every real policy is measured against in the simulator's plots.

use crate::{Clock, IndexedHeap, PageId, PageTable, Policy};
use std::sync::Arc;

#[derive(Debug)]
pub struct Omniscient {
    heap: IndexedHeap,
    pagerank: Arc<Vec<f64>>,
}

impl Omniscient {
    pub fn new(pagerank: Arc<Vec<f64>>) -> Self {
        Self {
            heap: IndexedHeap::new(),
            pagerank,
        }
    }
    fn pr(&self, page: PageId) -> f64 {
        self.pagerank.get(page as usize).copied().unwrap_or(0.0)
    }
}

impl Policy for Omniscient {
    fn name(&self) -> &'static str {
        "omniscient"
    }
    fn push_seed(&mut self, page: PageId, pages: &PageTable) {
        self.heap
            .push_or_update(page, -self.pr(page), pages.seq(page) as u64);
    }
    fn pop(&mut self, _: &PageTable) -> Option<PageId> {
        self.heap.pop().map(|(p, _)| p)
    }
    fn crawled(&mut self, _: PageId, links: &[PageId], pages: &mut PageTable, _: &Clock) {
        for &u in links {
            if pages.discover(u) {
                self.heap
                    .push_or_update(u, -self.pr(u), pages.seq(u) as u64);
            }
        }
    }
    fn score(&self, page: PageId, _: &PageTable) -> Option<f64> {
        Some(self.pr(page))
    }
    fn len(&self) -> usize {
        self.heap.len()
    }
    fn final_scores(&mut self, order: &[PageId], _: &PageTable) -> Vec<f64> {
        order.iter().map(|&p| self.pr(p)).collect()
    }
}
