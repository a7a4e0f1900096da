//! The priority queue every priority policy keeps: [`PageHeap`], the in-memory
//! [`IndexedHeap`] (the default) or the [`SpillingHeap`] whose cold part lives on disk (issue
//! 17), chosen by [`PolicyConfig::spill`](crate::PolicyConfig::spill).
//!
//! Both pop in exactly the same `(key, seq)` order, so a crawl's order does not depend on the
//! choice. An enum rather than a trait object or a type parameter: the default path costs one
//! predictable branch per call, and policies keep one concrete type.

use crate::spill::{SpillConfig, SpillStatus, SpillingHeap};
use crate::{IndexedHeap, PageId};

/// A min-heap of pages keyed by `(f64, u32)`, in memory or spilling to disk.
#[derive(Debug)]
pub enum PageHeap {
    /// Every entry in memory.
    InMemory(IndexedHeap),
    /// Entries beyond a bounded hot part in sorted runs on disk (boxed: it is large and rare).
    Spilling(Box<SpillingHeap>),
}

impl Default for PageHeap {
    fn default() -> Self {
        PageHeap::InMemory(IndexedHeap::new())
    }
}

impl PageHeap {
    /// An empty heap: spilling as `spill` says, or in memory without it.
    pub fn new(spill: Option<&SpillConfig>) -> Self {
        match spill {
            None => Self::default(),
            Some(c) => PageHeap::Spilling(Box::new(SpillingHeap::new(c.clone()))),
        }
    }

    /// Number of pages in the heap.
    #[inline]
    pub fn len(&self) -> usize {
        match self {
            PageHeap::InMemory(h) => h.len(),
            PageHeap::Spilling(h) => h.len(),
        }
    }

    /// Whether the heap is empty.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Inserts `page`, or changes its key if already queued (a queued page keeps its `seq`).
    #[inline]
    pub fn push_or_update(&mut self, page: PageId, key: f64, seq: u32) {
        match self {
            PageHeap::InMemory(h) => h.push_or_update(page, key, seq),
            PageHeap::Spilling(h) => h.push_or_update(page, key, seq),
        }
    }

    /// Removes and returns the page with the smallest key.
    #[inline]
    pub fn pop(&mut self) -> Option<(PageId, f64)> {
        match self {
            PageHeap::InMemory(h) => h.pop(),
            PageHeap::Spilling(h) => h.pop(),
        }
    }

    /// Replaces every key at once (`key_of(page)`).
    pub fn rekey_all(&mut self, key_of: impl FnMut(PageId) -> f64) {
        match self {
            PageHeap::InMemory(h) => h.rekey_all(key_of),
            PageHeap::Spilling(h) => h.rekey_all(key_of),
        }
    }

    /// The spilling heap's sizes and write failures; `None` in memory.
    pub fn spill_status(&self) -> Option<SpillStatus> {
        match self {
            PageHeap::InMemory(_) => None,
            PageHeap::Spilling(h) => Some(h.status()),
        }
    }
}
