//! Rankings of web graphs for crawlrank.
//!
//! Entry points, all at the crate root: [`pagerank()`](fn@pagerank) (or [`pagerank_from`] with
//! a warm start, or a reusable [`PageRank`] solver) with a [`PageRankConfig`];
//! [`hits()`](fn@hits) with a [`HitsConfig`]; [`indegree()`](fn@indegree) and [`outdegrees`];
//! [`kendall_tau_b`]; [`top_k`], [`top_k_among`] and [`ranking`].
//!
//! The crawl simulator judges every crawl order against PageRank, the batch policies re-rank
//! the known graph as it grows, the community-seeds method needs HITS, and every comparison
//! ends in a rank correlation or a top-k set. This crate holds those computations, on the
//! in-memory [`Csr`](crawlrank_graph::Csr) or, for PageRank, HITS and in-degree, on any graph
//! with the access traits of [`crawlrank_graph::access`] (the memory-mapped BVGraph):
//!
//! - [`pagerank`](mod@pagerank): docs/algorithms.md §4 PageRank (parallel block Gauss–Seidel, warm starts);
//! - `distributed` (with the feature `distributed`, which the `crawlrank` binary enables): PageRank,
//!   HITS and in-degree across processes on timely dataflow, with checkpoints;
//! - [`hits`](mod@hits): HITS hubs and authorities (docs/algorithms.md §5);
//! - [`rw`]: the impact-weighted random walks RW and RW-EG of the RW paper (docs/algorithms.md §6);
//! - [`indegree`](mod@indegree): in-degree as a score;
//! - [`kendall`]: Kendall's τ_b with ties in O(n log n);
//! - [`top`]: top-k selection with the tie rule of docs/algorithms.md §4.

#![warn(missing_docs)]

#[cfg(feature = "distributed")]
pub mod distributed;
pub mod hits;
pub mod indegree;
pub mod kendall;
pub mod pagerank;
pub mod rw;
pub mod top;

pub use hits::{hits, hits_masked, HitsConfig, HitsResult};
pub use indegree::indegree;
pub use kendall::kendall_tau_b;
pub use pagerank::{
    outdegrees, pagerank, pagerank_from, pagerank_of, PageRank, PageRankConfig, PageRankResult,
};
pub use rw::{random_walk, RwConfig, RwResult};
pub use top::{ranking, top_k, top_k_among};

/// Checks that `transpose` has as many pages and arcs as `graph`, as its transpose must: a graph
/// paired with the wrong transpose file is refused with both sizes instead of ranked into a
/// plausible wrong answer. Every ranking that walks arcs backwards checks this first.
pub(crate) fn ensure_transpose_fits(
    graph: &impl crawlrank_graph::access::GraphSize,
    transpose: &impl crawlrank_graph::access::GraphSize,
) -> anyhow::Result<()> {
    let n = graph.node_count();
    anyhow::ensure!(
        transpose.node_count() == n && transpose.arc_count() == graph.arc_count(),
        "the transpose has {} pages and {} arcs but the graph {n} and {}",
        transpose.node_count(),
        transpose.arc_count(),
        graph.arc_count()
    );
    Ok(())
}
