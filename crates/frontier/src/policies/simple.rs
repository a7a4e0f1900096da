//! `bfs` (FICA Alg. 2 with no reordering) and `random` (the RW paper's baseline).

use super::PolicyConfig;
use crate::{BatchClock, Link, PageId, PageTable, Policy};
use crawlrank_rng::Xoshiro256StarStar;
use std::collections::VecDeque;

/// `bfs`'s constructor (registry).
pub fn bfs(_: &PolicyConfig) -> Box<dyn Policy> {
    Box::new(Bfs::default())
}

/// `random`'s constructor (registry): seeded by `rng_seed`.
pub fn random(c: &PolicyConfig) -> Box<dyn Policy> {
    Box::new(RandomOrder::new(c.rng_seed))
}

/// Breadth-first: pages in first-discovery order.
#[derive(Debug, Default)]
pub struct Bfs {
    pub(crate) queue: VecDeque<PageId>,
}

impl Policy for Bfs {
    fn name(&self) -> &'static str {
        "bfs"
    }
    fn push_seed(&mut self, page: PageId, _: &PageTable) {
        self.queue.push_back(page);
    }
    fn pop(&mut self, _: &PageTable) -> Option<PageId> {
        self.queue.pop_front()
    }
    fn crawled(&mut self, _: PageId, links: &[Link], _: &PageTable, _: &BatchClock) {
        self.queue.extend(Link::new_pages(links));
    }
    /// Earlier discovered is more important: `−(discovery sequence)`.
    fn score(&self, page: PageId, pages: &PageTable) -> Option<f64> {
        pages.is_known(page).then(|| -(pages.seq(page) as f64))
    }
    fn len(&self) -> usize {
        self.queue.len()
    }
}

/// Uniformly random among the frontier, from a seeded generator (xoshiro256**), so a crawl is
/// reproducible given `--rng-seed`.
#[derive(Debug)]
pub struct RandomOrder {
    pool: Vec<PageId>,
    rng: Xoshiro256StarStar,
}

impl RandomOrder {
    /// An empty `random` frontier drawing from a generator seeded with `seed`.
    pub fn new(seed: u64) -> Self {
        Self {
            pool: Vec::new(),
            rng: Xoshiro256StarStar::new(seed),
        }
    }
}

impl Policy for RandomOrder {
    fn name(&self) -> &'static str {
        "random"
    }
    fn push_seed(&mut self, page: PageId, _: &PageTable) {
        self.pool.push(page);
    }
    fn pop(&mut self, _: &PageTable) -> Option<PageId> {
        if self.pool.is_empty() {
            return None;
        }
        let i = self.rng.below(self.pool.len() as u64) as usize;
        Some(self.pool.swap_remove(i))
    }
    fn crawled(&mut self, _: PageId, links: &[Link], _: &PageTable, _: &BatchClock) {
        self.pool.extend(Link::new_pages(links));
    }
    fn score(&self, _: PageId, _: &PageTable) -> Option<f64> {
        None
    }
    fn len(&self) -> usize {
        self.pool.len()
    }
}
