//! `batch-pagerank` (Cho et al.; IECA's Batch PageRank) and `partial-pagerank` (Baeza-Yates
//! et al. via IECA): PageRank of the graph known so far, recomputed every `K` pages.
//!
//! The *known graph* has the pages crawled or queued as nodes and the out-links of crawled
//! pages as arcs; queued pages are dangling in it. Its nodes are numbered by discovery order
//! (the frontier's sequence numbers), so it grows by appending and each reorder reuses the
//! previous PageRank as a warm start: the graph changed by one batch, so the old vector is
//! close and few sweeps are needed.
//!
//! - `batch-pagerank` sorts the frontier by the new PageRank at each reorder and appends pages
//!   found between reorders in discovery order.
//! - `partial-pagerank` keeps a priority queue on a score that, between reorders, grows as
//!   pages are crawled: crawling `p` adds `score(p)/O(p)` to each queued child (p's score is its
//!   last PageRank, or the temporary score it gathered if it had none).

use super::known::{sort_by_score, KnownGraph};
use super::PolicyConfig;
use crate::{BatchClock, Link, PageHeap, PageId, PageTable, Policy, SpillStatus};
use crawlrank_rank::pagerank::{pagerank_from, PageRankConfig};
use std::collections::VecDeque;

/// `batch-pagerank`'s constructor (registry).
pub fn batch(c: &PolicyConfig) -> Box<dyn Policy> {
    Box::new(KnownGraphPageRank::batch(c.batch_pagerank_threshold))
}

/// `partial-pagerank`'s constructor (registry).
pub fn partial(c: &PolicyConfig) -> Box<dyn Policy> {
    Box::new(KnownGraphPageRank {
        heap: PageHeap::new(c.spill.as_ref()),
        ..KnownGraphPageRank::partial(c.batch_pagerank_threshold)
    })
}

/// `batch-pagerank` and `partial-pagerank`: PageRank of the known graph.
#[derive(Debug)]
pub struct KnownGraphPageRank {
    partial: bool,
    config: PageRankConfig,
    known: KnownGraph,
    /// Score by sequence number: the last PageRank, or (partial) the temporary score.
    score: Vec<f64>,
    /// The last PageRank, for warm starts.
    last_pagerank: Vec<f64>,
    queue: VecDeque<PageId>,
    heap: PageHeap,
}

impl KnownGraphPageRank {
    fn new(partial: bool, threshold: f64) -> Self {
        Self {
            partial,
            config: PageRankConfig {
                threshold,
                ..PageRankConfig::default()
            },
            known: KnownGraph::default(),
            score: Vec::new(),
            last_pagerank: Vec::new(),
            queue: VecDeque::new(),
            heap: PageHeap::default(),
        }
    }

    /// `batch-pagerank`, with PageRanks computed to L1 change `threshold`.
    pub fn batch(threshold: f64) -> Self {
        Self::new(false, threshold)
    }

    /// `partial-pagerank`, with PageRanks computed to L1 change `threshold`.
    pub fn partial(threshold: f64) -> Self {
        Self::new(true, threshold)
    }

    fn grow(&mut self, known: usize) {
        if self.score.len() < known {
            self.score.resize(known, 0.0);
        }
    }

    /// PageRank of the known graph to L1 change `threshold`, warm-started from the previous one.
    fn known_pagerank(&mut self, pages: &PageTable, threshold: f64) -> Vec<f64> {
        let n = pages.num_known();
        self.grow(n);
        let graph = self.known.csr(n);
        let mut initial = std::mem::take(&mut self.last_pagerank);
        let warm = !initial.is_empty();
        initial.resize(n, 1.0 / n as f64);
        let config = PageRankConfig {
            threshold,
            ..self.config.clone()
        };
        let result = pagerank_from(&graph, &config, warm.then_some(&initial[..]))
            .expect("PageRank of a consistent graph with default parameters");
        result.scores
    }
}

impl Policy for KnownGraphPageRank {
    fn name(&self) -> &'static str {
        if self.partial {
            "partial-pagerank"
        } else {
            "batch-pagerank"
        }
    }
    fn push_seed(&mut self, page: PageId, pages: &PageTable) {
        self.grow(pages.num_known());
        if self.partial {
            self.heap.push_or_update(page, 0.0, pages.seq(page));
        } else {
            self.queue.push_back(page);
        }
    }
    fn pop(&mut self, _: &PageTable) -> Option<PageId> {
        if self.partial {
            self.heap.pop().map(|(p, _)| p)
        } else {
            self.queue.pop_front()
        }
    }
    fn crawled(&mut self, page: PageId, links: &[Link], pages: &PageTable, _: &BatchClock) {
        self.known.record(page, links, pages);
        if !self.partial {
            self.queue.extend(Link::new_pages(links));
        }
        self.grow(pages.num_known());
        let ps = pages.seq(page) as usize;
        if self.partial && !links.is_empty() {
            let share = self.score[ps] / links.len() as f64;
            for l in links.iter().filter(|l| l.is_pending()) {
                let u = l.page;
                let us = pages.seq(u);
                self.score[us as usize] += share;
                self.heap.push_or_update(u, -self.score[us as usize], us);
            }
        }
    }
    fn reorder(&mut self, pages: &PageTable, _: &BatchClock) {
        let pr = self.known_pagerank(pages, self.config.threshold);
        self.score[..pr.len()].copy_from_slice(&pr);
        self.last_pagerank = pr;
        let score = &self.score;
        if self.partial {
            self.heap.rekey_all(|u| -score[pages.seq(u) as usize]);
        } else {
            sort_by_score(&mut self.queue, score, pages);
        }
    }
    fn score(&self, page: PageId, pages: &PageTable) -> Option<f64> {
        if !pages.is_known(page) {
            return None;
        }
        self.score.get(pages.seq(page) as usize).copied()
    }
    fn spill_status(&self) -> Option<SpillStatus> {
        self.heap.spill_status()
    }
    fn len(&self) -> usize {
        if self.partial {
            self.heap.len()
        } else {
            self.queue.len()
        }
    }
    /// PageRank of the whole known graph at the end of the crawl (docs/algorithms.md §4), to the reference
    /// PageRank's precision.
    fn final_scores(&mut self, order: &[PageId], pages: &PageTable) -> Vec<f64> {
        let pr = self.known_pagerank(pages, PageRankConfig::default().threshold);
        order.iter().map(|&p| pr[pages.seq(p) as usize]).collect()
    }
}
