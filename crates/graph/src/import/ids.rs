//! Mapping original node ids to dense ids `0..n` in the order of the original ids.
//!
//! Ids below 2^32 are collected in a bitmap (one bit per possible id up to the largest seen,
//! at most 512 MiB) and mapped by rank (a popcount plus a cumulative count per 64-bit word,
//! 1.5 bits per possible id in all); as soon as an id of 2^32 or more appears the set switches
//! to a sorted vector of the distinct ids (8 bytes per node, ids looked up by binary search).

use anyhow::{bail, Result};
use std::io::Write;

/// Most nodes a crawlrank graph may have (ids are `u32`, and `u32::MAX` is reserved).
pub(crate) const MAX_NODES: u64 = u32::MAX as u64 - 1;

const BITMAP_LIMIT: u64 = 1 << 32;

/// The set of original ids seen in an input.
pub(crate) struct IdCollector {
    mode: Mode,
    max: Option<u64>,
}

enum Mode {
    Bitmap { words: Vec<u64>, count: u64 },
    Sparse { sorted: Vec<u64>, pending: Vec<u64> },
}

impl IdCollector {
    pub(crate) fn new() -> Self {
        Self {
            mode: Mode::Bitmap {
                words: Vec::new(),
                count: 0,
            },
            max: None,
        }
    }

    #[inline]
    pub(crate) fn insert(&mut self, id: u64) {
        self.max = Some(self.max.map_or(id, |m| m.max(id)));
        match &mut self.mode {
            Mode::Bitmap { words, count } if id < BITMAP_LIMIT => {
                let w = (id >> 6) as usize;
                if w >= words.len() {
                    words.resize(w + 1, 0);
                }
                let bit = 1u64 << (id & 63);
                if words[w] & bit == 0 {
                    words[w] |= bit;
                    *count += 1;
                }
            }
            Mode::Bitmap { words, .. } => {
                let sorted = bitmap_ids(words).collect();
                self.mode = Mode::Sparse {
                    sorted,
                    pending: vec![id],
                };
            }
            Mode::Sparse { sorted, pending } => {
                pending.push(id);
                if pending.len() >= (sorted.len()).max(1 << 22) {
                    compact(sorted, pending);
                }
            }
        }
    }

    /// The dense numbering: by increasing original id, or, with `keep_ids`, the original ids
    /// themselves (the graph then has `max + 1` nodes).
    pub(crate) fn finish(self, keep_ids: bool) -> Result<NodeIds> {
        let Some(max) = self.max else {
            return Ok(NodeIds::Identity(0));
        };
        if keep_ids {
            if max >= MAX_NODES {
                bail!(
                    "the largest id is {max}, so keeping the original ids would need {} nodes; \
                     crawlrank supports at most {MAX_NODES} (drop the keep-ids option to \
                     renumber the nodes densely)",
                    max as u128 + 1
                );
            }
            return Ok(NodeIds::Identity(max as usize + 1));
        }
        match self.mode {
            Mode::Bitmap { words, count } => {
                check_count(count)?;
                if count == max + 1 {
                    return Ok(NodeIds::Identity(count as usize));
                }
                let mut cum = Vec::with_capacity(words.len());
                let mut acc = 0u32;
                for &w in &words {
                    cum.push(acc);
                    acc += w.count_ones();
                }
                Ok(NodeIds::Rank {
                    words,
                    cum,
                    n: count as usize,
                })
            }
            Mode::Sparse {
                mut sorted,
                mut pending,
            } => {
                compact(&mut sorted, &mut pending);
                check_count(sorted.len() as u64)?;
                Ok(NodeIds::from_sorted_unique(sorted))
            }
        }
    }
}

fn check_count(n: u64) -> Result<()> {
    if n > MAX_NODES {
        bail!("the input has {n} distinct node ids; crawlrank supports at most {MAX_NODES} nodes");
    }
    Ok(())
}

fn bitmap_ids(words: &[u64]) -> impl Iterator<Item = u64> + '_ {
    words.iter().enumerate().flat_map(|(i, &w)| {
        let mut w = w;
        std::iter::from_fn(move || {
            if w == 0 {
                return None;
            }
            let b = w.trailing_zeros() as u64;
            w &= w - 1;
            Some(((i as u64) << 6) | b)
        })
    })
}

/// Merges the sorted, deduplicated `pending` ids into `sorted`.
fn compact(sorted: &mut Vec<u64>, pending: &mut Vec<u64>) {
    pending.sort_unstable();
    pending.dedup();
    let mut merged = Vec::with_capacity(sorted.len() + pending.len());
    let (mut i, mut j) = (0, 0);
    while i < sorted.len() && j < pending.len() {
        let (a, b) = (sorted[i], pending[j]);
        if a <= b {
            merged.push(a);
            i += 1;
            if a == b {
                j += 1;
            }
        } else {
            merged.push(b);
            j += 1;
        }
    }
    merged.extend_from_slice(&sorted[i..]);
    merged.extend_from_slice(&pending[j..]);
    *sorted = merged;
    pending.clear();
}

/// How original ids map to dense node ids.
pub(crate) enum NodeIds {
    /// Node `i` is original id `i`.
    Identity(usize),
    /// Node `i` is the `i`-th set bit.
    Rank {
        words: Vec<u64>,
        cum: Vec<u32>,
        n: usize,
    },
    /// Node `i` is `ids[i]` (sorted, distinct).
    Sorted(Vec<u64>),
}

impl NodeIds {
    /// The numbering of a sorted list of distinct ids.
    pub(crate) fn from_sorted_unique(ids: Vec<u64>) -> Self {
        if ids.iter().enumerate().all(|(i, &id)| id == i as u64) {
            NodeIds::Identity(ids.len())
        } else {
            NodeIds::Sorted(ids)
        }
    }

    pub(crate) fn num_nodes(&self) -> usize {
        match self {
            NodeIds::Identity(n) => *n,
            NodeIds::Rank { n, .. } => *n,
            NodeIds::Sorted(v) => v.len(),
        }
    }

    /// Whether node ids are the original ids (no `.ids` file needed).
    pub(crate) fn is_identity(&self) -> bool {
        matches!(self, NodeIds::Identity(_))
    }

    /// The node of original id `id`, if `id` is one of the ids.
    #[inline]
    pub(crate) fn get(&self, id: u64) -> Option<usize> {
        match self {
            NodeIds::Identity(n) => (id < *n as u64).then_some(id as usize),
            NodeIds::Rank { words, cum, .. } => {
                let w = (id >> 6) as usize;
                let word = *words.get(w)?;
                let bit = 1u64 << (id & 63);
                (word & bit != 0)
                    .then(|| cum[w] as usize + (word & (bit - 1)).count_ones() as usize)
            }
            NodeIds::Sorted(v) => v.binary_search(&id).ok(),
        }
    }

    /// Writes the original id of every node, one per line (the `.ids` format).
    pub(crate) fn write_ids(&self, w: &mut impl Write) -> std::io::Result<()> {
        match self {
            NodeIds::Identity(n) => (0..*n as u64).try_for_each(|id| writeln!(w, "{id}")),
            NodeIds::Rank { words, .. } => bitmap_ids(words).try_for_each(|id| writeln!(w, "{id}")),
            NodeIds::Sorted(v) => v.iter().try_for_each(|id| writeln!(w, "{id}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collect(ids: &[u64]) -> NodeIds {
        let mut c = IdCollector::new();
        for &id in ids {
            c.insert(id);
        }
        c.finish(false).unwrap()
    }

    #[test]
    fn numberings() {
        let m = collect(&[2, 0, 1, 2]);
        assert!(m.is_identity());
        assert_eq!(m.num_nodes(), 3);

        let m = collect(&[5, 1, 300, 64, 5]);
        assert!(!m.is_identity());
        assert_eq!(m.num_nodes(), 4);
        let got: Vec<_> = [1, 5, 64, 300, 2, 1000].iter().map(|&i| m.get(i)).collect();
        assert_eq!(got, [Some(0), Some(1), Some(2), Some(3), None, None]);
        let mut out = Vec::new();
        m.write_ids(&mut out).unwrap();
        assert_eq!(out, b"1\n5\n64\n300\n");

        // Huge ids switch to the sparse representation.
        let big = 1u64 << 40;
        let m = collect(&[7, big + 3, 7, big, 3]);
        assert!(matches!(m, NodeIds::Sorted(_)));
        assert_eq!(m.get(3), Some(0));
        assert_eq!(m.get(big + 3), Some(3));

        let mut c = IdCollector::new();
        c.insert(4);
        c.insert(1);
        let m = c.finish(true).unwrap();
        assert!(m.is_identity());
        assert_eq!(m.num_nodes(), 5);
    }
}
