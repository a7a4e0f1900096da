//! `bfs` (FICA Alg. 2 with no reordering) and `random` (the RW paper's baseline).

use super::PolicyConfig;
use crate::{Clock, Link, PageId, PageTable, Policy, Target};
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
    queue: VecDeque<PageId>,
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
    fn crawled(&mut self, _: PageId, links: &[Link], _: &PageTable, _: &Clock) {
        let new = links.iter().filter(|l| l.target == Target::New);
        self.queue.extend(new.map(|l| l.page));
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
    rng: Xoshiro,
}

impl RandomOrder {
    /// An empty `random` frontier drawing from a generator seeded with `seed`.
    pub fn new(seed: u64) -> Self {
        Self {
            pool: Vec::new(),
            rng: Xoshiro::new(seed),
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
    fn crawled(&mut self, _: PageId, links: &[Link], _: &PageTable, _: &Clock) {
        let new = links.iter().filter(|l| l.target == Target::New);
        self.pool.extend(new.map(|l| l.page));
    }
    fn score(&self, _: PageId, _: &PageTable) -> Option<f64> {
        None
    }
    fn len(&self) -> usize {
        self.pool.len()
    }
}

/// xoshiro256** seeded through SplitMix64: small, fast, and the same on every platform.
#[derive(Debug, Clone)]
pub struct Xoshiro([u64; 4]);

impl Xoshiro {
    /// A generator whose state is filled by SplitMix64 from `seed` (any value, 0 included).
    pub fn new(seed: u64) -> Self {
        let mut z = seed;
        let mut next = || {
            z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut x = z;
            x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            x ^ (x >> 31)
        };
        Self([next(), next(), next(), next()])
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.0;
        let result = s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }

    /// Uniform in `0..n` (Lemire's multiply-shift; the bias is below 2^-32 for n < 2^32).
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }
}
