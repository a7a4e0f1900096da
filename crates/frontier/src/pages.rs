//! Which pages a frontier has seen, in what order, and which it has popped.
//!
//! The frontier owns this table (policies only read it): discovery is the same for every
//! policy, so it is done once, in [`crate::Frontier`], and not in each policy.

use crate::{PageId, Target};

const UNSEEN: u32 = u32::MAX;

/// Per-page bookkeeping shared by every policy: the first-discovery sequence number (which
/// breaks priority ties, docs/algorithms.md §2, and doubles as a dense local id for the known graph) and
/// whether the page has been popped (crawled, or in flight in a real crawler). Grows on demand
/// as ids appear.
#[derive(Debug, Default, Clone)]
pub struct PageTable {
    seq: Vec<u32>,
    popped: Vec<bool>,
    /// Pages discovered so far (the next sequence number).
    known: u32,
}

impl PageTable {
    fn grow(&mut self, page: PageId) {
        let need = page as usize + 1;
        if need > self.seq.len() {
            // To the page and no further: the vectors' own growth reserves the room ahead
            // without writing it, so it costs no resident memory, where filling it ahead
            // (half as much again) cost a quarter more on average.
            self.seq.resize(need, UNSEEN);
            self.popped.resize(need, false);
        }
    }

    /// Records `page` as discovered now; returns `false` if it was already known.
    #[inline]
    pub fn discover(&mut self, page: PageId) -> bool {
        self.grow(page);
        if self.seq[page as usize] != UNSEEN {
            return false;
        }
        self.seq[page as usize] = self.known;
        self.known += 1;
        true
    }

    /// What a link to `page` points at, recording the page as discovered now if it is new:
    /// the one classification [`crate::Frontier`] hands policies.
    #[inline]
    pub fn classify(&mut self, page: PageId) -> Target {
        if self.is_popped(page) {
            Target::Popped
        } else if self.discover(page) {
            Target::New
        } else {
            Target::Queued
        }
    }

    /// Whether `page` has been discovered (queued or popped).
    #[inline]
    pub fn is_known(&self, page: PageId) -> bool {
        self.seq.get(page as usize).is_some_and(|&s| s != UNSEEN)
    }

    /// Whether `page` has been popped from the frontier (crawled, or being crawled).
    #[inline]
    pub fn is_popped(&self, page: PageId) -> bool {
        self.popped.get(page as usize).copied().unwrap_or(false)
    }

    /// Marks `page` popped.
    #[inline]
    pub fn mark_popped(&mut self, page: PageId) {
        self.grow(page);
        self.popped[page as usize] = true;
    }

    /// The discovery sequence number of a known page (0 for the first seed).
    #[inline]
    pub fn seq(&self, page: PageId) -> u32 {
        let s = self.seq[page as usize];
        debug_assert!(s != UNSEEN, "page {page} is not known");
        s
    }

    /// Number of pages discovered.
    #[inline]
    pub fn num_known(&self) -> usize {
        self.known as usize
    }
}
