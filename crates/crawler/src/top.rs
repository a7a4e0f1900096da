//! The best-scored pages of a running crawl, for a live view (`CrawlConfig::report_top`):
//! the top of the frontier and the top of the pages already popped (the ranking so far).
//!
//! Why a module of its own: the frontier has no ordered iterator (each policy keeps its own
//! queue), so the top is found the way the ranking snapshot finds its scores — one pass over
//! every page id asking the policy for its score — keeping only the `k` best in a small heap.
//! That is O(pages · log k) with no allocation per page; the engine does it at most once a
//! second, and only when a front end asked for it.

use crawlrank_frontier::{Frontier, PageId};
use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;
use std::sync::Arc;
use std::time::Instant;

/// The lists a crawl last reported, with their URLs, and when they were taken.
#[derive(Debug, Default)]
pub(crate) struct TopLists {
    /// When [`best_scored`] was last run; `None`: never, or to be retaken now.
    pub taken: Option<Instant>,
    /// The best-scored URLs still in the frontier, best first.
    pub frontier: Vec<(Arc<str>, f64)>,
    /// The best-scored URLs popped (the ranking so far), best first.
    pub ranking: Vec<(Arc<str>, f64)>,
}

/// A page and its policy score, ordered by score (then by the smaller id first, so that ties
/// come out in discovery-independent but stable order).
#[derive(Debug, Clone, Copy)]
struct Scored(f64, PageId);

impl PartialEq for Scored {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Scored {}
impl PartialOrd for Scored {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Scored {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.total_cmp(&other.0).then(other.1.cmp(&self.1))
    }
}

/// The `k` largest items offered so far: a min-heap of at most `k` entries.
struct Best {
    k: usize,
    heap: BinaryHeap<Reverse<Scored>>,
}

impl Best {
    fn new(k: usize) -> Self {
        Self {
            k,
            heap: BinaryHeap::with_capacity(k + 1),
        }
    }

    fn offer(&mut self, s: Scored) {
        if self.heap.len() < self.k {
            self.heap.push(Reverse(s));
        } else if self.heap.peek().is_some_and(|Reverse(min)| s > *min) {
            self.heap.pop();
            self.heap.push(Reverse(s));
        }
    }

    /// Best first.
    fn into_sorted(self) -> Ranked {
        let mut v: Vec<Scored> = self.heap.into_iter().map(|Reverse(s)| s).collect();
        v.sort_by(|a, b| b.cmp(a));
        v.into_iter().map(|Scored(s, id)| (id, s)).collect()
    }
}

/// Pages with their scores, best first.
type Ranked = Vec<(PageId, f64)>;

/// The `k` best-scored pages among ids `0..ids` still in the frontier (known, not popped),
/// and the `k` best-scored popped pages (crawled or in flight), each best first. Pages the
/// policy has no (finite) score for are left out.
pub(crate) fn best_scored(frontier: &Frontier, ids: usize, k: usize) -> (Ranked, Ranked) {
    let (mut queued, mut popped) = (Best::new(k), Best::new(k));
    if k == 0 {
        return (Vec::new(), Vec::new());
    }
    let pages = frontier.pages();
    for id in 0..ids as PageId {
        let Some(score) = frontier.score(id).filter(|s| s.is_finite()) else {
            continue;
        };
        if pages.is_popped(id) {
            popped.offer(Scored(score, id));
        } else if pages.is_known(id) {
            queued.offer(Scored(score, id));
        }
    }
    (queued.into_sorted(), popped.into_sorted())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crawlrank_frontier::{PolicyConfig, PolicyKind};

    #[test]
    fn keeps_the_k_best_best_first() {
        let mut b = Best::new(3);
        for (i, s) in [0.5, 2.0, -1.0, 7.0, 2.0, 0.1].into_iter().enumerate() {
            b.offer(Scored(s, i as PageId));
        }
        assert_eq!(b.into_sorted(), vec![(3, 7.0), (1, 2.0), (4, 2.0)]);
        assert!(Best::new(0).into_sorted().is_empty());
    }

    #[test]
    fn splits_the_frontier_from_the_popped_pages() {
        let config = PolicyConfig::for_crawl(100, 100);
        let mut f = Frontier::with_policy(PolicyKind::parse("backlink").unwrap(), &config).unwrap();
        f.seed(&[0]);
        let p = f.pop().unwrap();
        f.on_crawled(p, &[1, 2, 3]);
        let (queued, popped) = best_scored(&f, 4, 10);
        let queued_ids: Vec<PageId> = queued.iter().map(|&(id, _)| id).collect();
        assert_eq!(queued_ids.len(), 3, "{queued:?}");
        assert!(queued_ids.iter().all(|id| [1, 2, 3].contains(id)));
        assert!(popped.iter().all(|&(id, _)| id == 0), "{popped:?}");
        let (q1, _) = best_scored(&f, 4, 1);
        assert_eq!(q1.len(), 1);
    }
}
