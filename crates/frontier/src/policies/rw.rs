//! `rw` and `rw-eg` (the RW paper, docs/algorithms.md §6): the frontier ordered by the
//! impact-weighted random walk of the graph known so far, recomputed every `K` pages.
//!
//! The crawl plays the paper's setting at every reorder: `D` = the pages crawled so far, each
//! with its impact from the search log ([`PolicyConfig::impact`], indexed by page id); `F` =
//! the frontier; the known graph `V = D ∪ F` has the out-links of crawled pages as arcs (as
//! `batch-pagerank`'s, numbered by discovery order). [`crawlrank_rank::random_walk`] runs on
//! it — `ω = 1` for `rw`, [`PolicyConfig::omega`] (0.8 by default) for `rw-eg` — and the
//! frontier is sorted by the walk's `x`, descending, ties to the page found first. Pages found
//! between reorders are appended in discovery order; before the first reorder the queue is
//! FIFO, like `bfs`.
//!
//! Final score (for τ): the walk on the whole known graph at the end of the crawl, to the
//! walk's default precision (1e-10).

use super::impact::ImpactQueue;
use super::PolicyConfig;
use crate::{BatchClock, Link, PageId, PageTable, Policy};
use crawlrank_rank::{random_walk, RwConfig};

/// `rw`'s constructor (registry): `ω = 1`.
pub fn rw(c: &PolicyConfig) -> Box<dyn Policy> {
    Box::new(ImpactWalk::new("rw", c, 1.0))
}

/// `rw-eg`'s constructor (registry): `ω` = [`PolicyConfig::omega`].
pub fn rw_eg(c: &PolicyConfig) -> Box<dyn Policy> {
    Box::new(ImpactWalk::new("rw-eg", c, c.omega))
}

/// `rw` and `rw-eg`: the impact-weighted walk of the known graph.
#[derive(Debug)]
pub struct ImpactWalk {
    name: &'static str,
    config: RwConfig,
    /// The known graph, its impacts, the queue and the last walk's `x`.
    state: ImpactQueue,
}

impl ImpactWalk {
    /// The walk with weight `omega` of the real arcs, the impacts and `γ` of `c`; reorders stop
    /// at L1 change [`PolicyConfig::batch_pagerank_threshold`] (as the batch PageRanks do).
    pub fn new(name: &'static str, c: &PolicyConfig, omega: f64) -> Self {
        Self {
            name,
            config: RwConfig {
                omega,
                gamma: c.gamma,
                threshold: c.batch_pagerank_threshold,
                ..RwConfig::default()
            },
            state: ImpactQueue::new(c),
        }
    }

    /// The walk's `x` on the known graph, by sequence number, to L1 change `threshold`.
    fn walk(&mut self, pages: &PageTable, threshold: f64) -> Vec<f64> {
        let config = RwConfig {
            threshold,
            ..self.config.clone()
        };
        let (graph, transpose, impact) = self.state.known_graph(pages);
        random_walk(&graph, &transpose, impact, &config)
            .expect("the walk of a consistent graph with checked parameters")
            .scores
    }
}

impl Policy for ImpactWalk {
    fn name(&self) -> &'static str {
        self.name
    }
    fn push_seed(&mut self, page: PageId, pages: &PageTable) {
        self.state.push_seed(page, pages);
    }
    fn pop(&mut self, _: &PageTable) -> Option<PageId> {
        self.state.pop()
    }
    fn crawled(&mut self, page: PageId, links: &[Link], pages: &PageTable, _: &BatchClock) {
        self.state.crawled(page, links, pages);
    }
    fn observe_impact(&mut self, page: PageId, impact: f64) {
        self.state.observe_impact(page, impact);
    }
    fn reorder(&mut self, pages: &PageTable, _: &BatchClock) {
        let x = self.walk(pages, self.config.threshold);
        for (seq, v) in x.into_iter().enumerate() {
            self.state.set_score(seq, v);
        }
        self.state.sort(pages);
    }
    fn score(&self, page: PageId, pages: &PageTable) -> Option<f64> {
        self.state.score(page, pages)
    }
    fn len(&self) -> usize {
        self.state.len()
    }
    /// The walk on the whole known graph at the end of the crawl, to 1e-10.
    fn final_scores(&mut self, order: &[PageId], pages: &PageTable) -> Vec<f64> {
        let x = self.walk(pages, RwConfig::default().threshold);
        order.iter().map(|&p| x[pages.seq(p) as usize]).collect()
    }
}
