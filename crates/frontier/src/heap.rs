//! An indexed binary min-heap of pages with decrease- and increase-key.
//!
//! Every priority policy (FICA, IECA, OPIC, in-degree, partial PageRank, …) keeps the frontier
//! in one of these. Keys are `(priority, discovery sequence)`, so equal priorities pop in
//! first-discovery order (docs/algorithms.md §2) and every crawl is deterministic. `pos[page]` locates a
//! page in the heap, which makes changing a queued page's priority O(log n) instead of a
//! search. An entry is 16 bytes (priority, sequence, page), and a queued page costs one entry
//! plus its 4-byte position: the frontier's share of a crawl's memory per URL
//! (docs/crawler.md, Resources).

use crate::PageId;

const ABSENT: u32 = u32::MAX;

/// A queued page with its key; shared with the spilling heap's hot part
/// ([`SpillingHeap`](crate::SpillingHeap)), which orders the same way.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Entry {
    pub(crate) key: f64,
    pub(crate) seq: u32,
    pub(crate) page: PageId,
}

impl Entry {
    #[inline]
    pub(crate) fn before(&self, other: &Entry) -> bool {
        // Priorities are never NaN (policies guard against it), so `<` is a total order here.
        self.key < other.key || (self.key == other.key && self.seq < other.seq)
    }
}

/// A min-heap of pages keyed by `(f64, u32)`.
#[derive(Debug, Default, Clone)]
pub struct IndexedHeap {
    heap: Vec<Entry>,
    pos: Vec<u32>,
}

impl IndexedHeap {
    /// An empty heap.
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of pages in the heap.
    #[inline]
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// Whether the heap is empty.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// Whether `page` is in the heap.
    #[inline]
    pub fn contains(&self, page: PageId) -> bool {
        self.pos.get(page as usize).is_some_and(|&p| p != ABSENT)
    }

    /// The key of `page`, if queued.
    #[inline]
    pub fn key(&self, page: PageId) -> Option<f64> {
        let p = *self.pos.get(page as usize)?;
        (p != ABSENT).then(|| self.heap[p as usize].key)
    }

    /// Inserts `page`, or changes its key if already queued (the sequence number of a queued
    /// page never changes: it records when the page was discovered).
    pub fn push_or_update(&mut self, page: PageId, key: f64, seq: u32) {
        debug_assert!(!key.is_nan(), "NaN priority for page {page}");
        if page as usize >= self.pos.len() {
            self.pos.resize(page as usize + 1, ABSENT);
        }
        let p = self.pos[page as usize];
        if p == ABSENT {
            let i = self.heap.len();
            self.heap.push(Entry { key, seq, page });
            self.pos[page as usize] = i as u32;
            self.sift_up(i);
        } else {
            rekey_at(&mut self.heap, &mut self.pos, p as usize, key);
        }
    }

    /// The page with the smallest key, without removing it.
    pub fn peek(&self) -> Option<(PageId, f64)> {
        self.heap.first().map(|e| (e.page, e.key))
    }

    /// Removes and returns the page with the smallest key.
    pub fn pop(&mut self) -> Option<(PageId, f64)> {
        let top = pop_root(&mut self.heap, &mut self.pos, ABSENT)?;
        Some((top.page, top.key))
    }

    /// Every queued page with its key (in heap order).
    pub fn iter(&self) -> impl Iterator<Item = (PageId, f64)> + '_ {
        self.heap.iter().map(|e| (e.page, e.key))
    }

    /// Replaces every key at once (`key_of(page)`) and restores the heap in O(n).
    pub fn rekey_all(&mut self, mut key_of: impl FnMut(PageId) -> f64) {
        for e in &mut self.heap {
            e.key = key_of(e.page);
        }
        for i in (0..self.heap.len() / 2).rev() {
            self.sift_down(i);
        }
    }

    fn sift_up(&mut self, i: usize) {
        sift_up(&mut self.heap, &mut self.pos, i);
    }

    fn sift_down(&mut self, i: usize) {
        sift_down(&mut self.heap, &mut self.pos, i);
    }
}

/// Removes and returns the first entry of `heap`, marking its page `absent` in `pos`; the last
/// entry takes its place and sifts down. The one pop of both heaps that order [`Entry`]s.
#[inline]
pub(crate) fn pop_root(heap: &mut Vec<Entry>, pos: &mut [u32], absent: u32) -> Option<Entry> {
    let top = *heap.first()?;
    let last = heap.pop().expect("non-empty");
    pos[top.page as usize] = absent;
    if !heap.is_empty() {
        heap[0] = last;
        pos[last.page as usize] = 0;
        sift_down(heap, pos, 0);
    }
    Some(top)
}

/// Gives `heap[i]` the key `key` and moves it up or down to its place (both heaps' update of
/// a queued page).
#[inline]
pub(crate) fn rekey_at(heap: &mut [Entry], pos: &mut [u32], i: usize, key: f64) {
    let old = heap[i].key;
    heap[i].key = key;
    if key < old {
        sift_up(heap, pos, i);
    } else if key > old {
        sift_down(heap, pos, i);
    }
}

/// Moves `heap[i]` up to its place, keeping `pos[page]` = each moved entry's index: the one
/// sift of both heaps that order [`Entry`]s ([`IndexedHeap`] and the spilling heap's hot part).
#[inline]
pub(crate) fn sift_up(heap: &mut [Entry], pos: &mut [u32], mut i: usize) {
    let e = heap[i];
    while i > 0 {
        let parent = (i - 1) / 2;
        if !e.before(&heap[parent]) {
            break;
        }
        place(heap, pos, i, heap[parent]);
        i = parent;
    }
    place(heap, pos, i, e);
}

/// Puts `e` at `heap[i]` and records that slot in `pos`: every move a sift makes, so that the
/// two never disagree.
#[inline]
fn place(heap: &mut [Entry], pos: &mut [u32], i: usize, e: Entry) {
    heap[i] = e;
    pos[e.page as usize] = i as u32;
}

/// Moves `heap[i]` down to its place, keeping `pos` as [`sift_up`] does.
#[inline]
pub(crate) fn sift_down(heap: &mut [Entry], pos: &mut [u32], mut i: usize) {
    let n = heap.len();
    let e = heap[i];
    loop {
        let l = 2 * i + 1;
        if l >= n {
            break;
        }
        let r = l + 1;
        let c = if r < n && heap[r].before(&heap[l]) {
            r
        } else {
            l
        };
        if !heap[c].before(&e) {
            break;
        }
        place(heap, pos, i, heap[c]);
        i = c;
    }
    place(heap, pos, i, e);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_is_16_bytes() {
        assert_eq!(std::mem::size_of::<Entry>(), 16);
    }

    #[test]
    fn pops_by_key_then_sequence_with_updates_both_ways() {
        let mut h = IndexedHeap::new();
        h.push_or_update(5, 3.0, 0);
        h.push_or_update(1, 1.0, 1);
        h.push_or_update(9, 1.0, 2);
        h.push_or_update(2, 2.0, 3);
        h.push_or_update(5, 0.5, 0); // decrease
        h.push_or_update(1, 4.0, 1); // increase
        assert_eq!(h.len(), 4);
        assert_eq!(h.key(1), Some(4.0));
        let order: Vec<_> = std::iter::from_fn(|| h.pop().map(|(p, _)| p)).collect();
        assert_eq!(order, vec![5, 9, 2, 1]);
        assert!(!h.contains(5));
    }

    #[test]
    fn matches_a_sorted_reference_under_random_updates() {
        let mut h = IndexedHeap::new();
        let mut keys = vec![None; 200];
        let mut x = 12345u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for step in 0..5000u32 {
            let page = (next() % 200) as u32;
            if next() % 5 == 0 {
                let expect = keys
                    .iter()
                    .enumerate()
                    .filter_map(|(p, k): (usize, &Option<(f64, u32)>)| k.map(|(k, s)| (k, s, p)))
                    .min_by(|a, b| a.partial_cmp(b).unwrap());
                let got = h.pop();
                assert_eq!(got.map(|(p, _)| p as usize), expect.map(|e| e.2));
                if let Some((p, _)) = got {
                    keys[p as usize] = None;
                }
            } else {
                let k = (next() % 50) as f64;
                let seq = keys[page as usize].map_or(step, |(_, s)| s);
                keys[page as usize] = Some((k, seq));
                h.push_or_update(page, k, seq);
            }
        }
    }
}
