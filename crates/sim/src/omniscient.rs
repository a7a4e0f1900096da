//! `omniscient`: the frontier page with the highest *true* PageRank of the full graph.
//!
//! No real crawler can do this — it needs the graph it has not crawled yet — but it draws the
//! line every real policy is measured against in the simulator's plots. It is therefore not
//! in the frontier's registry (a crawl cannot even name it) but here, beside the reference
//! PageRank it needs, as a [`Policy`] the simulator's frontier runs like any other.

use crawlrank_frontier::{Clock, IndexedHeap, Link, PageId, PageTable, Policy, Target};
use std::sync::Arc;

/// The frontier page with the highest true PageRank first.
#[derive(Debug)]
pub struct Omniscient {
    heap: IndexedHeap,
    pagerank: Arc<Vec<f64>>,
}

impl Omniscient {
    /// Orders by `pagerank`, the full graph's PageRank (one score per page).
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
            .push_or_update(page, -self.pr(page), pages.seq(page));
    }
    fn pop(&mut self, _: &PageTable) -> Option<PageId> {
        self.heap.pop().map(|(p, _)| p)
    }
    fn crawled(&mut self, _: PageId, links: &[Link], pages: &PageTable, _: &Clock) {
        for l in links.iter().filter(|l| l.target == Target::New) {
            self.heap
                .push_or_update(l.page, -self.pr(l.page), pages.seq(l.page));
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
