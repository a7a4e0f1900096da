//! What the batch policies share: the graph known so far — the out-links of the crawled pages,
//! by discovery sequence number — and the reorder that sorts their FIFO queue by a score.
//! `batch-pagerank`, `partial-pagerank`, `rw` and `rw-eg` all rank this graph at every reorder.

use crate::{Link, PageId, PageTable};
use crawlrank_graph::Csr;
use std::collections::VecDeque;

/// The out-links of the crawled pages, numbered by sequence number.
#[derive(Debug, Default)]
pub struct KnownGraph {
    /// By the crawled page's sequence number: `(start, len)` into `targets`.
    lists: Vec<(u64, u32)>,
    /// Sequence numbers of the link targets.
    targets: Vec<u32>,
}

impl KnownGraph {
    /// Records the out-links of the crawled `page`.
    pub fn record(&mut self, page: PageId, links: &[Link], pages: &PageTable) {
        let start = self.targets.len() as u64;
        self.targets.extend(links.iter().map(|l| pages.seq(l.page)));
        let ps = pages.seq(page) as usize;
        if self.lists.len() <= ps {
            self.lists.resize(ps + 1, (0, 0));
        }
        self.lists[ps] = (start, links.len() as u32);
    }

    /// The known graph on the first `n` sequence numbers (pages not crawled have no arcs).
    pub fn csr(&self, n: usize) -> Csr {
        let mut offsets = Vec::with_capacity(n + 1);
        let mut succ = Vec::with_capacity(self.targets.len());
        offsets.push(0u64);
        for i in 0..n {
            let (start, len) = self.lists.get(i).copied().unwrap_or((0, 0));
            succ.extend_from_slice(&self.targets[start as usize..start as usize + len as usize]);
            offsets.push(succ.len() as u64);
        }
        Csr::from_parts(offsets, succ).expect("the known graph is consistent")
    }
}

/// Sorts `queue` by `score` (by sequence number), highest first, ties to the page found first.
pub fn sort_by_score(queue: &mut VecDeque<PageId>, score: &[f64], pages: &PageTable) {
    sort_front_by_score(queue, queue.len(), score, pages);
}

/// Sorts the first `len` pages of `queue` as [`sort_by_score`] does; the rest stay as they are.
pub fn sort_front_by_score(
    queue: &mut VecDeque<PageId>,
    len: usize,
    score: &[f64],
    pages: &PageTable,
) {
    queue.make_contiguous()[..len].sort_unstable_by(|&a, &b| {
        let (sa, sb) = (pages.seq(a), pages.seq(b));
        score[sb as usize]
            .total_cmp(&score[sa as usize])
            .then(sa.cmp(&sb))
    });
}
