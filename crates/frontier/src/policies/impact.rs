//! The search log the impact-aware policies (`rw`, `rw-eg`, `learned`; docs/algorithms.md §6)
//! read: the impact of each page, known to the crawl once the page is downloaded.
//!
//! It comes one of two ways, and the policies do not care which: the simulator hands the whole
//! vector by page id up front ([`PolicyConfig::impact`](super::PolicyConfig::impact)); the
//! crawler, whose page ids are assigned as URLs are discovered, reports each page's impact when
//! it interns the URL ([`Frontier::set_impact`](crate::Frontier::set_impact)), before the page
//! can be crawled. Only pages with a positive impact need reporting.

use super::known::{sort_by_score, KnownGraph};
use super::PolicyConfig;
use crate::{Link, PageId, PageTable};
use crawlrank_graph::Csr;
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

/// Impact by page id: the configured vector, then the reported values.
#[derive(Debug, Default)]
pub struct ImpactLog {
    by_id: Arc<Vec<f64>>,
    reported: HashMap<PageId, f64>,
}

impl ImpactLog {
    /// The log of `c`'s impact vector (empty without one).
    pub fn new(c: &PolicyConfig) -> Self {
        Self {
            by_id: c
                .impact
                .as_ref()
                .map_or_else(|| Arc::new(Vec::new()), |i| i.0.clone()),
            reported: HashMap::new(),
        }
    }

    /// Records the impact of `page` (a reported value replaces the configured one).
    pub fn report(&mut self, page: PageId, impact: f64) {
        self.reported.insert(page, impact);
    }

    /// The impact of `page` (0 when nothing says otherwise).
    pub fn of(&self, page: PageId) -> f64 {
        if let Some(&v) = self.reported.get(&page) {
            return v;
        }
        self.by_id.get(page as usize).copied().unwrap_or(0.0)
    }
}

/// What the impact-aware batch policies (`rw`, `rw-eg`, `learned`) share: the search log; the
/// graph known so far with the crawled pages' impacts by sequence number (0 for frontier
/// pages); the queue, appended to in discovery order and sorted by the last scores at each
/// reorder; and those scores. Each policy only says how it scores the known graph.
#[derive(Debug, Default)]
pub struct ImpactQueue {
    impact: ImpactLog,
    known: KnownGraph,
    /// Impact by sequence number: the page's impact once crawled, 0 while in the frontier.
    known_impact: Vec<f64>,
    /// The last scores, by sequence number (0 for pages found since).
    score: Vec<f64>,
    queue: VecDeque<PageId>,
}

impl ImpactQueue {
    /// An empty queue reading `c`'s impacts.
    pub fn new(c: &PolicyConfig) -> Self {
        Self {
            impact: ImpactLog::new(c),
            ..Self::default()
        }
    }

    fn grow(&mut self, known: usize) {
        if self.known_impact.len() < known {
            self.known_impact.resize(known, 0.0);
            self.score.resize(known, 0.0);
        }
    }

    /// A seed enters the queue.
    pub fn push_seed(&mut self, page: PageId, pages: &PageTable) {
        self.grow(pages.num_known());
        self.queue.push_back(page);
    }

    /// The next page, in queue order.
    pub fn pop(&mut self) -> Option<PageId> {
        self.queue.pop_front()
    }

    /// `page` was crawled: its out-links join the known graph, the new ones the queue, and its
    /// impact is known from now on. Returns its sequence number and impact.
    pub fn crawled(&mut self, page: PageId, links: &[Link], pages: &PageTable) -> (usize, f64) {
        self.known.record(page, links, pages);
        self.queue.extend(Link::new_pages(links));
        self.grow(pages.num_known());
        let ps = pages.seq(page) as usize;
        let impact = self.impact.of(page);
        self.known_impact[ps] = impact;
        (ps, impact)
    }

    /// The search log says `page` has `impact`.
    pub fn observe_impact(&mut self, page: PageId, impact: f64) {
        self.impact.report(page, impact);
    }

    /// The known graph on every known page, its transpose, and the impacts over it.
    pub fn known_graph(&mut self, pages: &PageTable) -> (Csr, Csr, &[f64]) {
        let n = pages.num_known();
        self.grow(n);
        let graph = self.known.csr(n);
        let transpose = graph.transpose();
        (graph, transpose, &self.known_impact[..n])
    }

    #[cfg(feature = "learned")] // learned's only
    /// The known graph on every known page and a copy of the impacts over it: what a reorder
    /// on another thread reads.
    pub fn known_graph_copy(&mut self, pages: &PageTable) -> (Csr, Vec<f64>) {
        let n = pages.num_known();
        self.grow(n);
        (self.known.csr(n), self.known_impact[..n].to_vec())
    }

    #[cfg(feature = "learned")] // learned's only
    /// The pages waiting, by sequence number, in queue order.
    pub fn queued_seqs(&self, pages: &PageTable) -> Vec<usize> {
        self.queue.iter().map(|&p| pages.seq(p) as usize).collect()
    }

    /// Sets the score of the page with sequence number `seq` (known pages only).
    pub fn set_score(&mut self, seq: usize, score: f64) {
        self.score[seq] = score;
    }

    /// Sorts the queue by score, highest first, ties to the page found first.
    pub fn sort(&mut self, pages: &PageTable) {
        sort_by_score(&mut self.queue, &self.score, pages);
    }

    #[cfg(feature = "learned")] // learned's only
    /// Sorts the first `len` pages of the queue by score, as [`sort`](Self::sort) does; pages
    /// queued after them stay behind them in their order.
    pub fn sort_front(&mut self, len: usize, pages: &PageTable) {
        super::known::sort_front_by_score(&mut self.queue, len, &self.score, pages);
    }

    /// The last score of a known page.
    pub fn score(&self, page: PageId, pages: &PageTable) -> Option<f64> {
        if !pages.is_known(page) {
            return None;
        }
        self.score.get(pages.seq(page) as usize).copied()
    }

    /// Pages waiting.
    pub fn len(&self) -> usize {
        self.queue.len()
    }
}
