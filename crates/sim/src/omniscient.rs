//! `omniscient`: the frontier page with the highest *true* PageRank of the full graph.
//!
//! No real crawler can do this — it needs the graph it has not crawled yet — but it draws the
//! line every real policy is measured against in the simulator's plots. It is therefore not
//! in the frontier's registry (a crawl cannot even name it) but here, beside the reference
//! PageRank it needs, as a [`Policy`] the simulator's frontier runs like any other.

use crawlrank_frontier::{
    BatchClock, Link, PageHeap, PageId, PageTable, Policy, SpillConfig, SpillStatus, Target,
};
use std::sync::Arc;

/// The frontier page with the highest true PageRank first.
#[derive(Debug)]
pub struct Omniscient {
    heap: PageHeap,
    pagerank: Arc<Vec<f64>>,
}

impl Omniscient {
    /// Orders by `pagerank`, the full graph's PageRank (one score per page).
    pub fn new(pagerank: Arc<Vec<f64>>) -> Self {
        Self::with_spill(pagerank, None)
    }

    /// Orders by `pagerank`, with its queue spilling to disk as `spill` says (the order is
    /// the same; [`PolicyConfig::spill`](crawlrank_frontier::PolicyConfig::spill)).
    pub fn with_spill(pagerank: Arc<Vec<f64>>, spill: Option<&SpillConfig>) -> Self {
        Self {
            heap: PageHeap::new(spill),
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
    fn crawled(&mut self, _: PageId, links: &[Link], pages: &PageTable, _: &BatchClock) {
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
    fn spill_status(&self) -> Option<SpillStatus> {
        self.heap.spill_status()
    }
    fn final_scores(&mut self, order: &[PageId], _: &PageTable) -> Vec<f64> {
        order.iter().map(|&p| self.pr(p)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crawlrank_frontier::{crawl_order, Frontier};

    #[test]
    fn spilling_its_queue_does_not_change_the_order() {
        let n = 2_000u32;
        let mut rng = crawlrank_rng::XorShift64::new(5);
        let arcs: Vec<(u32, u32)> = (0..n)
            .flat_map(|v| (0..6).map(move |i| (v, (v * 7 + i * 13 + 1) % n)))
            .collect();
        let g = crawlrank_graph::Csr::from_arcs(n as usize, &arcs);
        // Few distinct scores, so that ties (broken by discovery order) are common.
        let pr = Arc::new(
            (0..n)
                .map(|_| (rng.next_u64() % 50) as f64)
                .collect::<Vec<_>>(),
        );
        let dir = tempfile::tempdir().unwrap();
        let spill = SpillConfig {
            dir: dir.path().to_path_buf(),
            hot_capacity: 8,
            run_records: 16,
            max_runs: 4,
        };
        let mut plain = Frontier::new(Box::new(Omniscient::new(pr.clone())), 10);
        let mut spilling = Frontier::new(Box::new(Omniscient::with_spill(pr, Some(&spill))), 10);
        let want = crawl_order(&g, &mut plain, &[0]);
        assert!(want.len() > 100, "{} pages reached", want.len());
        assert_eq!(crawl_order(&g, &mut spilling, &[0]), want);
        assert_eq!(spilling.spill_status().unwrap().write_failures, 0);
        drop(spilling);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}
