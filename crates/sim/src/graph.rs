//! The graph the simulator runs on: in memory or compressed, through one trait.
//!
//! Every step of an experiment — the reachable set, the reference PageRank, the crawls and
//! their measures — asks the graph only for successor lists, sequentially or one page at a
//! time ([`crawlrank_graph::access`]). [`SimGraph`] gathers those capabilities, so
//! [`run_experiment`](crate::run_experiment) and [`simulate`](crate::simulate) run the same
//! code on a [`Csr`] (`--in-memory always`) and on the memory-mapped [`BvWebGraph`]
//! (`--in-memory never`), with the same orders and numbers bit for bit. Community seeds
//! are the exception: their extraction prunes and masks arcs of a graph it holds in memory,
//! so it needs the [`Csr`] ([`SimGraph::as_csr`]).

use crawlrank_graph::access::{SequentialSuccessors, Successors, Transpose};
use crawlrank_graph::{BvWebGraph, Csr};

/// What the simulator needs of a graph.
pub trait SimGraph: Successors + SequentialSuccessors + Transpose {
    /// The graph as a [`Csr`], when it is one (community seeds need it).
    fn as_csr(&self) -> Option<&Csr>;
}

impl SimGraph for Csr {
    fn as_csr(&self) -> Option<&Csr> {
        Some(self)
    }
}

impl SimGraph for BvWebGraph {
    fn as_csr(&self) -> Option<&Csr> {
        None
    }
}
