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

use super::impact::ImpactLog;
use super::known::{sort_by_score, KnownGraph};
use super::PolicyConfig;
use crate::{Clock, Link, PageId, PageTable, Policy, Target};
use crawlrank_rank::{random_walk, RwConfig};
use std::collections::VecDeque;

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
    /// Impact by page id.
    impact: ImpactLog,
    config: RwConfig,
    known: KnownGraph,
    /// Impact by sequence number: the page's impact once crawled, 0 while in the frontier.
    known_impact: Vec<f64>,
    /// The last walk's `x`, by sequence number (0 for pages found since).
    score: Vec<f64>,
    queue: VecDeque<PageId>,
}

impl ImpactWalk {
    /// The walk with weight `omega` of the real arcs, the impacts and `γ` of `c`; reorders stop
    /// at L1 change [`PolicyConfig::batch_pagerank_threshold`] (as the batch PageRanks do).
    pub fn new(name: &'static str, c: &PolicyConfig, omega: f64) -> Self {
        Self {
            name,
            impact: ImpactLog::new(c),
            config: RwConfig {
                omega,
                gamma: c.gamma,
                threshold: c.batch_pagerank_threshold,
                ..RwConfig::default()
            },
            known: KnownGraph::default(),
            known_impact: Vec::new(),
            score: Vec::new(),
            queue: VecDeque::new(),
        }
    }

    fn grow(&mut self, known: usize) {
        if self.known_impact.len() < known {
            self.known_impact.resize(known, 0.0);
            self.score.resize(known, 0.0);
        }
    }

    /// The walk's `x` on the known graph, by sequence number, to L1 change `threshold`.
    fn walk(&mut self, pages: &PageTable, threshold: f64) -> Vec<f64> {
        let n = pages.num_known();
        self.grow(n);
        let graph = self.known.csr(n);
        let transpose = graph.transpose();
        let config = RwConfig {
            threshold,
            ..self.config.clone()
        };
        random_walk(&graph, &transpose, &self.known_impact[..n], &config)
            .expect("the walk of a consistent graph with checked parameters")
            .scores
    }
}

impl Policy for ImpactWalk {
    fn name(&self) -> &'static str {
        self.name
    }
    fn push_seed(&mut self, page: PageId, pages: &PageTable) {
        self.grow(pages.num_known());
        self.queue.push_back(page);
    }
    fn pop(&mut self, _: &PageTable) -> Option<PageId> {
        self.queue.pop_front()
    }
    fn crawled(&mut self, page: PageId, links: &[Link], pages: &PageTable, _: &Clock) {
        self.known.record(page, links, pages);
        self.queue.extend(
            links
                .iter()
                .filter(|l| l.target == Target::New)
                .map(|l| l.page),
        );
        self.grow(pages.num_known());
        let ps = pages.seq(page) as usize;
        self.known_impact[ps] = self.impact.of(page);
    }
    fn observe_impact(&mut self, page: PageId, impact: f64) {
        self.impact.report(page, impact);
    }
    fn reorder(&mut self, pages: &PageTable, _: &Clock) {
        let x = self.walk(pages, self.config.threshold);
        self.score[..x.len()].copy_from_slice(&x);
        sort_by_score(&mut self.queue, &self.score, pages);
    }
    fn score(&self, page: PageId, pages: &PageTable) -> Option<f64> {
        if !pages.is_known(page) {
            return None;
        }
        self.score.get(pages.seq(page) as usize).copied()
    }
    fn len(&self) -> usize {
        self.queue.len()
    }
    /// The walk on the whole known graph at the end of the crawl, to 1e-10.
    fn final_scores(&mut self, order: &[PageId], pages: &PageTable) -> Vec<f64> {
        let x = self.walk(pages, RwConfig::default().threshold);
        order.iter().map(|&p| x[pages.seq(p) as usize]).collect()
    }
}
