//! Graph access as small capabilities, so that one algorithm runs on a graph in memory or on
//! the compressed graph on disk.
//!
//! A graph of 10^9 arcs decoded into a [`Csr`] takes about 4 GB (and as much again for its
//! transpose); LAW's larger crawls do not fit a machine's memory that way, but their
//! BVGraphs (a few bits an arc) do, memory-mapped. The simulator, the rankings and the visits
//! therefore ask only for what they use:
//!
//! - [`GraphSize`]: the numbers of nodes and arcs;
//! - [`Successors`]: the successors and outdegree of any one node (random access: the
//!   simulator's crawl, breadth-first searches);
//! - [`SequentialSuccessors`]: the successors of every node of a range, in node order
//!   (PageRank's and HITS's sweeps; on a BVGraph this decodes the range sequentially, which is
//!   several times faster than random access);
//! - [`Transpose`]: the graph with every arc reversed (in-links), built once.
//!
//! [`Csr`] and [`BvWebGraph`] implement them all, so the algorithms are generic and give the
//! same results, bit for bit, on both: successor lists come in the same (increasing) order,
//! and the algorithms visit them in the same order whatever the implementation.
//!
//! [`InMemory`] is the user's choice between the two (`--in-memory auto|always|never`) and
//! [`InMemory::decide`] the rule `auto` follows.

use crate::bv::BvWebGraph;
use crate::csr::Csr;
use anyhow::{Context, Result};
use lender::prelude::*;
use std::ops::Range;
use webgraph::prelude::*;

/// The numbers of nodes and arcs of a graph.
pub trait GraphSize {
    /// Number of nodes; they are `0..num_nodes()`.
    fn node_count(&self) -> usize;
    /// Number of arcs.
    fn arc_count(&self) -> u64;
}

/// Random access to successor lists.
pub trait Successors: GraphSize + Sync {
    /// The outdegree of `v`.
    fn degree(&self, v: usize) -> usize;
    /// The successors of `v`, in increasing order; `buf` is scratch space an implementation
    /// may decode into (a [`Csr`] returns its own slice and leaves it alone).
    fn successors_in<'a>(&'a self, v: usize, buf: &'a mut Vec<u32>) -> &'a [u32];
}

/// Sequential access to the successor lists of a range of nodes.
pub trait SequentialSuccessors: GraphSize + Sync {
    /// Calls `f(v, successors of v)` for every `v` in `range`, in increasing order of `v`.
    fn for_each_in(&self, range: Range<usize>, f: impl FnMut(usize, &[u32]));
}

/// A graph whose transpose can be had (built, or found in the cache).
pub trait Transpose {
    /// The type of the transpose.
    type Transposed: Successors + SequentialSuccessors;
    /// The graph with every arc reversed; predecessor lists in increasing order.
    fn transposed(&self) -> Result<Self::Transposed>;
}

/// Implements [`GraphSize`] for graph types whose own `num_nodes` and `num_arcs` say it.
macro_rules! graph_size_from_own_counts {
    ($($graph:ty),+) => {$(
        impl GraphSize for $graph {
            #[inline]
            fn node_count(&self) -> usize {
                self.num_nodes()
            }
            #[inline]
            fn arc_count(&self) -> u64 {
                self.num_arcs()
            }
        }
    )+};
}

graph_size_from_own_counts!(Csr, BvWebGraph);

impl Successors for Csr {
    #[inline]
    fn degree(&self, v: usize) -> usize {
        self.outdegree(v)
    }
    #[inline]
    fn successors_in<'a>(&'a self, v: usize, _buf: &'a mut Vec<u32>) -> &'a [u32] {
        self.successors(v)
    }
}

impl SequentialSuccessors for Csr {
    #[inline]
    fn for_each_in(&self, range: Range<usize>, mut f: impl FnMut(usize, &[u32])) {
        for v in range {
            f(v, self.successors(v));
        }
    }
}

impl Transpose for Csr {
    type Transposed = Csr;
    fn transposed(&self) -> Result<Csr> {
        Ok(self.transpose())
    }
}

impl Successors for BvWebGraph {
    #[inline]
    fn degree(&self, v: usize) -> usize {
        self.bv().outdegree(v)
    }
    #[inline]
    fn successors_in<'a>(&'a self, v: usize, buf: &'a mut Vec<u32>) -> &'a [u32] {
        buf.clear();
        buf.extend(self.bv().successors(v).map(|x| x as u32));
        buf
    }
}

impl SequentialSuccessors for BvWebGraph {
    fn for_each_in(&self, range: Range<usize>, mut f: impl FnMut(usize, &[u32])) {
        if range.is_empty() {
            return;
        }
        let mut it = self.bv().iter_from(range.start);
        let mut buf = Vec::new();
        for v in range {
            let Some((node, succ)) = it.next() else {
                // A graph checked when opened yields every node; stop rather than panic.
                return;
            };
            debug_assert_eq!(node, v);
            buf.clear();
            buf.extend(succ.into_iter().map(|x| x as u32));
            f(v, &buf);
        }
    }
}

impl Transpose for BvWebGraph {
    type Transposed = BvWebGraph;
    /// The transpose as a BVGraph: LAW's `BASENAME-t` beside the graph, or one built in the
    /// cache (once, with webgraph's external-memory sort) and memory-mapped.
    fn transposed(&self) -> Result<BvWebGraph> {
        self.open_transpose(&self.cache())
            .with_context(|| format!("cannot open the transpose of {}", self.basename().display()))
    }
}

/// The outdegree of every node, read sequentially.
pub fn outdegrees_of<G: SequentialSuccessors>(graph: &G) -> Vec<u32> {
    let mut out = Vec::with_capacity(graph.node_count());
    graph.for_each_in(0..graph.node_count(), |_, s| out.push(s.len() as u32));
    out
}

/// The in-degree of every node, read sequentially.
pub fn indegrees_of<G: SequentialSuccessors>(graph: &G) -> Vec<u32> {
    let mut deg = vec![0u32; graph.node_count()];
    graph.for_each_in(0..graph.node_count(), |_, s| {
        for &d in s {
            deg[d as usize] += 1;
        }
    });
    deg
}

/// Where a command keeps the graph while it works (`--in-memory`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum InMemory {
    /// The CSR when it fits [`AUTO_MEMORY_SHARE`] of the memory available, else the
    /// compressed graph.
    #[default]
    Auto,
    /// Always decode into a [`Csr`] (fastest; 4 bytes an arc and 8 a node, per direction).
    Always,
    /// Never decode: run on the memory-mapped BVGraph (and its transpose when in-links are
    /// needed), a few bits an arc, paged in by the kernel as needed.
    Never,
}

/// The share of the memory available (`MemAvailable` of `/proc/meminfo`) the CSRs a command
/// needs may take for `--in-memory auto` to choose them.
pub const AUTO_MEMORY_SHARE: f64 = 0.5;

/// What [`InMemory::decide`] chose, and why (for the command to say).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    /// Whether to decode into CSRs.
    pub csr: bool,
    /// One line for the user: which path and why.
    pub reason: String,
}

impl InMemory {
    /// The bytes the CSR of `graph` takes (8 per node plus 4 per arc), times `directions`
    /// (2 when the command also needs the transpose).
    pub fn csr_bytes(graph: &impl GraphSize, directions: u64) -> u64 {
        directions * (8 * (graph.node_count() as u64 + 1) + 4 * graph.arc_count())
    }

    /// Whether to decode `graph` into CSRs (`directions` of them: 1, or 2 with the transpose).
    pub fn decide(self, graph: &impl GraphSize, directions: u64) -> Decision {
        let need = Self::csr_bytes(graph, directions);
        let gib = |b: u64| b as f64 / (1u64 << 30) as f64;
        match self {
            InMemory::Always => Decision {
                csr: true,
                reason: format!(
                    "in memory (--in-memory always): {:.2} GiB of CSR",
                    gib(need)
                ),
            },
            InMemory::Never => Decision {
                csr: false,
                reason: "compressed, memory-mapped (--in-memory never)".into(),
            },
            InMemory::Auto => match mem_available() {
                Some(avail) if (need as f64) <= AUTO_MEMORY_SHARE * avail as f64 => Decision {
                    csr: true,
                    reason: format!(
                        "in memory (--in-memory auto): {:.2} GiB of CSR fits half of the {:.2} \
                         GiB available",
                        gib(need),
                        gib(avail)
                    ),
                },
                Some(avail) => Decision {
                    csr: false,
                    reason: format!(
                        "compressed, memory-mapped (--in-memory auto): {:.2} GiB of CSR would \
                         exceed half of the {:.2} GiB available",
                        gib(need),
                        gib(avail)
                    ),
                },
                None => Decision {
                    csr: true,
                    reason: "in memory (--in-memory auto; the memory available is unknown here)"
                        .into(),
                },
            },
        }
    }
}

/// `MemAvailable` of `/proc/meminfo`, in bytes (Linux; `None` elsewhere).
pub fn mem_available() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

impl std::str::FromStr for InMemory {
    type Err = anyhow::Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "auto" => Ok(InMemory::Auto),
            "always" => Ok(InMemory::Always),
            "never" => Ok(InMemory::Never),
            _ => anyhow::bail!("--in-memory takes auto, always or never, not {s:?}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csr_access_is_its_own_lists() {
        let g = Csr::from_arcs(4, &[(0, 1), (0, 2), (2, 0), (3, 3)]);
        let mut buf = Vec::new();
        assert_eq!(g.successors_in(0, &mut buf), &[1, 2]);
        assert_eq!(Successors::degree(&g, 2), 1);
        let mut seen = Vec::new();
        g.for_each_in(1..4, |v, s| seen.push((v, s.to_vec())));
        assert_eq!(seen, vec![(1, vec![]), (2, vec![0]), (3, vec![3])]);
        assert_eq!(outdegrees_of(&g), vec![2, 0, 1, 1]);
        assert_eq!(indegrees_of(&g), g.indegrees());
    }

    #[test]
    fn always_and_never_are_obeyed() {
        let g = Csr::from_arcs(2, &[(0, 1)]);
        assert!(InMemory::Always.decide(&g, 2).csr);
        assert!(!InMemory::Never.decide(&g, 1).csr);
        assert_eq!(InMemory::csr_bytes(&g, 2), 2 * (8 * 3 + 4));
        assert!("sometimes".parse::<InMemory>().is_err());
    }
}
