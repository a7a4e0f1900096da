//! Top-k selection: the `hot_k` set of docs/algorithms.md §4 (the `k` pages of highest PageRank) and every
//! "print the best pages" listing.
//!
//! Pages are ordered by score, highest first, ties broken by the smaller id — the rule of docs/algorithms.md §4,
//! which makes `hot_k` well defined on graphs with many equal scores (dangling leaves, pages
//! reached by one arc). A NaN score ranks below every number, so a broken score never
//! displaces a real one. Selection keeps a heap of the `k` best so far: O(n log k) time and
//! O(k) memory, which matters when `k` is a small fraction of a billion-page graph.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// `PartialEq`, `Eq` and `PartialOrd` for each type named, all three from the type's own
/// [`Ord`]: for the ranked entries of a heap ordered by a score and a tie rule that `derive`
/// cannot express (a float score, a reversed id), so that the four can never disagree.
#[macro_export]
macro_rules! comparisons_from_ord {
    ($($ty:ty),+ $(,)?) => {$(
        impl PartialEq for $ty {
            fn eq(&self, other: &Self) -> bool {
                Ord::cmp(self, other) == ::std::cmp::Ordering::Equal
            }
        }
        impl Eq for $ty {}
        impl PartialOrd for $ty {
            fn partial_cmp(&self, other: &Self) -> Option<::std::cmp::Ordering> {
                Some(Ord::cmp(self, other))
            }
        }
    )+};
}

/// A candidate, ordered so that "greater" means "ranks higher".
#[derive(Debug, Clone, Copy)]
struct Entry {
    score: f64,
    id: usize,
}

impl Ord for Entry {
    fn cmp(&self, other: &Self) -> Ordering {
        let by_score = match (self.score.is_nan(), other.score.is_nan()) {
            (true, true) => Ordering::Equal,
            (true, false) => Ordering::Less,
            (false, true) => Ordering::Greater,
            // -0.0 and 0.0 compare equal, as the scores they are.
            (false, false) => self
                .score
                .partial_cmp(&other.score)
                .unwrap_or(Ordering::Equal),
        };
        by_score.then_with(|| other.id.cmp(&self.id))
    }
}

crate::comparisons_from_ord!(Entry);

/// The `k` pages of highest score (all of them if `k >= scores.len()`), as `(id, score)`,
/// best first; ties go to the smaller id.
pub fn top_k(scores: &[f64], k: usize) -> Vec<(usize, f64)> {
    top_k_among(scores, 0..scores.len(), k)
}

/// [`top_k`] restricted to the pages `ids` (e.g. those reachable from the seeds). Ids out of
/// range of `scores` are ignored; an id listed twice may appear twice.
pub fn top_k_among(
    scores: &[f64],
    ids: impl IntoIterator<Item = usize>,
    k: usize,
) -> Vec<(usize, f64)> {
    if k == 0 {
        return Vec::new();
    }
    // A min-heap (by rank) of the best k so far: its top is the one to evict.
    let mut heap: BinaryHeap<std::cmp::Reverse<Entry>> =
        BinaryHeap::with_capacity(k.min(scores.len()) + 1);
    for id in ids {
        let Some(&score) = scores.get(id) else {
            continue;
        };
        let e = Entry { score, id };
        if heap.len() < k {
            heap.push(std::cmp::Reverse(e));
        } else if heap.peek().is_some_and(|worst| e > worst.0) {
            heap.pop();
            heap.push(std::cmp::Reverse(e));
        }
    }
    // Ascending by Reverse<Entry> is descending by rank.
    heap.into_sorted_vec()
        .into_iter()
        .map(|std::cmp::Reverse(e)| (e.id, e.score))
        .collect()
}

/// Every page, best first (ties: smaller id): `ranking(s)[0]` is the top page.
pub fn ranking(scores: &[f64]) -> Vec<usize> {
    let mut ids: Vec<usize> = (0..scores.len()).collect();
    ids.sort_unstable_by(|&a, &b| {
        Entry {
            score: scores[b],
            id: b,
        }
        .cmp(&Entry {
            score: scores[a],
            id: a,
        })
    });
    ids
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders_by_score_then_id() {
        let s = [0.1, 0.5, 0.3, 0.5, f64::NAN, 0.0, -0.0];
        assert_eq!(top_k(&s, 3), vec![(1, 0.5), (3, 0.5), (2, 0.3)]);
        assert_eq!(top_k(&s, 0), vec![]);
        let all: Vec<usize> = top_k(&s, 100).into_iter().map(|p| p.0).collect();
        assert_eq!(all, vec![1, 3, 2, 0, 5, 6, 4]);
        assert_eq!(ranking(&s), all);
        assert_eq!(top_k_among(&s, [0, 2, 5, 99], 2), vec![(2, 0.3), (0, 0.1)]);
        assert!(top_k(&[], 5).is_empty());
    }

    #[test]
    fn agrees_with_a_full_sort() {
        let mut x = 7u64;
        let scores: Vec<f64> = (0..2000)
            .map(|_| {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
                ((x >> 40) % 50) as f64
            })
            .collect();
        let full = ranking(&scores);
        for k in [1, 7, 50, 1999, 2000, 5000] {
            let top: Vec<usize> = top_k(&scores, k).into_iter().map(|p| p.0).collect();
            assert_eq!(top, full[..k.min(2000)]);
        }
    }
}
