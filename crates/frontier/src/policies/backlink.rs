//! Back-link counting: `backlink` (Cho et al., reordered in batches as in FICA Alg. 2) and
//! `indegree` (the same count, kept in order at every discovery, as in the RW paper).
//!
//! Both count a page's in-links *from crawled pages*: the only in-links a crawler can know.

use super::PolicyConfig;
use crate::{BatchClock, Crawled, Link, Offer, PageHeap, PageId, PageTable, Policy, Target};
use std::collections::VecDeque;

/// In-links from crawled pages, per page (grows with the id space).
#[derive(Debug, Default)]
pub(crate) struct Counts(Vec<u32>);

impl Counts {
    #[inline]
    pub(crate) fn bump(&mut self, page: PageId) -> u32 {
        let i = page as usize;
        if i >= self.0.len() {
            // To the page and no further (see `PageTable::grow`).
            self.0.resize(i + 1, 0);
        }
        self.0[i] += 1;
        self.0[i]
    }
    #[inline]
    pub(crate) fn get(&self, page: PageId) -> u32 {
        self.0.get(page as usize).copied().unwrap_or(0)
    }
}

/// What a back-link counting policy passes along each out-link: the link itself is the
/// back-link; the offer carries only the page's out-degree.
fn backlink_offer(crawled: &Crawled<'_>) -> Option<Offer> {
    Some(Offer {
        outdegree: crawled.outdegree() as u64,
        ..Offer::default()
    })
}

/// `backlink`'s constructor (registry).
pub fn backlink(_: &PolicyConfig) -> Box<dyn Policy> {
    Box::new(Backlink::default())
}

/// `indegree`'s constructor (registry).
pub fn indegree(c: &PolicyConfig) -> Box<dyn Policy> {
    Box::new(InDegree {
        heap: PageHeap::new(c.spill.as_ref()),
        ..InDegree::default()
    })
}

/// `backlink`: at each reorder the frontier is sorted by back-link count (descending, ties in
/// discovery order); between reorders newly found pages are appended in discovery order.
#[derive(Debug, Default)]
pub struct Backlink {
    queue: VecDeque<PageId>,
    counts: Counts,
}

impl Backlink {
    /// One more back-link of a pending page; a new one joins the end of the queue.
    fn backlink(&mut self, l: Link) {
        if l.is_pending() {
            if l.target == Target::New {
                self.queue.push_back(l.page);
            }
            self.counts.bump(l.page);
        }
    }
}

impl Policy for Backlink {
    fn name(&self) -> &'static str {
        "backlink"
    }
    fn push_seed(&mut self, page: PageId, _: &PageTable) {
        self.queue.push_back(page);
    }
    fn pop(&mut self, _: &PageTable) -> Option<PageId> {
        self.queue.pop_front()
    }
    fn crawled_split(&mut self, crawled: &Crawled<'_>, _: &PageTable) -> Option<Offer> {
        for &l in crawled.links {
            self.backlink(l);
        }
        backlink_offer(crawled)
    }
    fn receive(&mut self, link: Link, _: &Offer, _: &PageTable) {
        self.backlink(link);
    }
    fn reorder(&mut self, pages: &PageTable, _: &BatchClock) {
        // Keys are computed once per page, packed into one integer (count descending, then
        // discovery order), and sorted with the page beside them: a comparator that looked up
        // both pages' counts and sequence numbers would make O(n log n) random memory reads,
        // which dominated on frontiers of 10^7+ pages.
        let mut v: Vec<(u64, PageId)> = self
            .queue
            .drain(..)
            .map(|p| {
                let key =
                    (u64::from(u32::MAX - self.counts.get(p)) << 32) | u64::from(pages.seq(p));
                (key, p)
            })
            .collect();
        v.sort_unstable();
        self.queue.extend(v.into_iter().map(|(_, p)| p));
    }
    fn score(&self, page: PageId, pages: &PageTable) -> Option<f64> {
        pages.is_known(page).then(|| self.counts.get(page) as f64)
    }
    fn len(&self) -> usize {
        self.queue.len()
    }
    fn final_scores(&mut self, order: &[PageId], _: &PageTable) -> Vec<f64> {
        order.iter().map(|&p| self.counts.get(p) as f64).collect()
    }
}

/// `indegree`: the page with most back-links first, updated at every discovery.
#[derive(Debug, Default)]
pub struct InDegree {
    heap: PageHeap,
    counts: Counts,
}

impl InDegree {
    /// One more back-link of a pending page, requeued by its new count.
    fn backlink(&mut self, l: Link, pages: &PageTable) {
        if l.is_pending() {
            let c = self.counts.bump(l.page);
            self.heap
                .push_or_update(l.page, -(c as f64), pages.seq(l.page));
        }
    }
}

impl Policy for InDegree {
    fn name(&self) -> &'static str {
        "indegree"
    }
    fn push_seed(&mut self, page: PageId, pages: &PageTable) {
        self.heap.push_or_update(page, 0.0, pages.seq(page));
    }
    fn pop(&mut self, _: &PageTable) -> Option<PageId> {
        self.heap.pop().map(|(p, _)| p)
    }
    fn crawled_split(&mut self, crawled: &Crawled<'_>, pages: &PageTable) -> Option<Offer> {
        for &l in crawled.links {
            self.backlink(l, pages);
        }
        backlink_offer(crawled)
    }
    fn receive(&mut self, link: Link, _: &Offer, pages: &PageTable) {
        self.backlink(link, pages);
    }
    fn score(&self, page: PageId, pages: &PageTable) -> Option<f64> {
        pages.is_known(page).then(|| self.counts.get(page) as f64)
    }
    heap_frontier!();
    fn final_scores(&mut self, order: &[PageId], _: &PageTable) -> Vec<f64> {
        order.iter().map(|&p| self.counts.get(p) as f64).collect()
    }
}
