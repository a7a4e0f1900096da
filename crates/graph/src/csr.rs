//! A compact in-memory adjacency structure for the algorithms that sweep a graph many times.
//!
//! PageRank, HITS and the crawl simulator visit every arc tens to hundreds of times; decoding a
//! BVGraph on each sweep would cost more than the arithmetic. [`Csr`] stores successor lists
//! as `u32` ids behind `u64` offsets — 4 bytes per arc and 8 per node, so a 10^9-arc graph
//! takes about 4 GB — and hands them out as plain slices.

use anyhow::{ensure, Result};
use lender::prelude::*;
use webgraph::prelude::SequentialGraph;

/// A directed graph in compressed-sparse-row form. Successor lists keep the order they were
/// given in (sorted, for graphs read from BVGraph or built by [`Csr::from_arcs`]).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Csr {
    offsets: Vec<u64>,
    succ: Vec<u32>,
}

impl Csr {
    /// A graph with `n` nodes and the given arcs; duplicates are removed and successor lists
    /// sorted. Panics if an arc names a node `>= n` (for tests and hand-made graphs).
    pub fn from_arcs(n: usize, arcs: &[(u32, u32)]) -> Self {
        let mut lists = vec![Vec::new(); n];
        for &(s, d) in arcs {
            assert!(
                (s as usize) < n && (d as usize) < n,
                "arc ({s}, {d}) outside 0..{n}"
            );
            lists[s as usize].push(d);
        }
        for l in &mut lists {
            l.sort_unstable();
            l.dedup();
        }
        Self::from_lists(lists)
    }

    /// A graph from per-node successor lists, kept as given.
    pub fn from_lists(lists: Vec<Vec<u32>>) -> Self {
        let mut offsets = Vec::with_capacity(lists.len() + 1);
        let mut succ = Vec::with_capacity(lists.iter().map(Vec::len).sum());
        offsets.push(0);
        for l in lists {
            succ.extend_from_slice(&l);
            offsets.push(succ.len() as u64);
        }
        Self { offsets, succ }
    }

    /// A graph from raw CSR arrays: `offsets` has one entry per node plus one, starts at 0
    /// and never decreases; its last entry is `succ.len()`; every successor is a node.
    pub fn from_parts(offsets: Vec<u64>, succ: Vec<u32>) -> Result<Self> {
        ensure!(
            !offsets.is_empty() && offsets[0] == 0,
            "CSR offsets must start with 0"
        );
        ensure!(
            offsets.windows(2).all(|w| w[0] <= w[1]),
            "CSR offsets must not decrease"
        );
        ensure!(
            *offsets.last().unwrap() == succ.len() as u64,
            "the last CSR offset must equal the number of arcs"
        );
        let n = offsets.len() - 1;
        ensure!(
            succ.iter().all(|&s| (s as usize) < n),
            "a successor lies outside 0..{n}"
        );
        Ok(Self { offsets, succ })
    }

    /// Decodes any `webgraph` sequential graph.
    pub fn from_sequential(g: &impl SequentialGraph) -> Result<Self> {
        let n = g.num_nodes();
        ensure!(n < u32::MAX as usize, "{n} nodes do not fit 32-bit ids");
        let mut offsets = Vec::with_capacity(n + 1);
        let mut succ = Vec::with_capacity(g.get_num_arcs().unwrap_or(0) as usize);
        offsets.push(0);
        let mut it = g.iter();
        while let Some((_, s)) = it.next() {
            succ.extend(s.into_iter().map(|x| x as u32));
            offsets.push(succ.len() as u64);
        }
        ensure!(
            offsets.len() == n + 1,
            "the graph yielded {} nodes, expected {n}",
            offsets.len() - 1
        );
        Ok(Self { offsets, succ })
    }

    /// Number of nodes.
    #[inline]
    pub fn num_nodes(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    /// Number of arcs.
    #[inline]
    pub fn num_arcs(&self) -> u64 {
        self.succ.len() as u64
    }

    /// The successors of `v`.
    #[inline]
    pub fn successors(&self, v: usize) -> &[u32] {
        &self.succ[self.offsets[v] as usize..self.offsets[v + 1] as usize]
    }

    /// The raw arrays: `offsets` (one per node plus one; node `v`'s successors are
    /// `successors[offsets[v]..offsets[v + 1]]`) and every successor list end to end, for
    /// callers that hand the graph to other libraries without copying it (SciPy's CSR).
    pub fn parts(&self) -> (&[u64], &[u32]) {
        (&self.offsets, &self.succ)
    }

    /// The outdegree of `v`.
    #[inline]
    pub fn outdegree(&self, v: usize) -> usize {
        (self.offsets[v + 1] - self.offsets[v]) as usize
    }

    /// Every arc `(src, dst)` in node order.
    pub fn arcs(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        (0..self.num_nodes())
            .flat_map(move |v| self.successors(v).iter().map(move |&d| (v as u32, d)))
    }

    /// The in-degree of every node.
    pub fn indegrees(&self) -> Vec<u32> {
        let mut deg = vec![0u32; self.num_nodes()];
        for &d in &self.succ {
            deg[d as usize] += 1;
        }
        deg
    }

    /// The transpose, by a counting sort in O(n + m): predecessor lists come out sorted.
    pub fn transpose(&self) -> Csr {
        let n = self.num_nodes();
        let mut offsets = vec![0u64; n + 1];
        for &d in &self.succ {
            offsets[d as usize + 1] += 1;
        }
        for i in 0..n {
            offsets[i + 1] += offsets[i];
        }
        let mut fill: Vec<u64> = offsets[..n].to_vec();
        let mut succ = vec![0u32; self.succ.len()];
        for v in 0..n {
            for &d in self.successors(v) {
                let slot = &mut fill[d as usize];
                succ[*slot as usize] = v as u32;
                *slot += 1;
            }
        }
        Csr { offsets, succ }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transpose_reverses_every_arc() {
        let g = Csr::from_arcs(4, &[(0, 1), (0, 2), (2, 0), (3, 0), (3, 3), (0, 1)]);
        assert_eq!(g.num_arcs(), 5);
        let t = g.transpose();
        assert_eq!(t.successors(0), &[2, 3]);
        assert_eq!(t.successors(1), &[0]);
        assert_eq!(t.successors(3), &[3]);
        let mut back: Vec<_> = t.transpose().arcs().collect();
        back.sort_unstable();
        assert_eq!(back, g.arcs().collect::<Vec<_>>());
        assert_eq!(g.indegrees(), vec![2, 1, 1, 1]);
    }
}
