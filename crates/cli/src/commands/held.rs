//! The graph of a command that reads arcs, and where it is held (`--graph`, `--in-memory`):
//! one pair of options, with one help text, for `simulate`, `frontier-rank`, `seeds-eval` and
//! `score-order`, and the one place that decides, from them, whether the command runs on the
//! decoded CSR or on the compressed graph. (`rank`, `info` and `seeds` say what they decode
//! themselves.)

use anyhow::Result;
use crawlrank_graph::{BvWebGraph, InMemory};
use crawlrank_sim::reference::has_reference_pagerank;
use crawlrank_sim::SimGraph;
use std::path::PathBuf;

/// `--graph` and `--in-memory`, flattened into a command's arguments.
#[derive(clap::Args, Debug)]
pub struct GraphArgs {
    /// The graph: a BVGraph basename or an arc-list file.
    #[arg(long = "graph", id = "graph", value_name = "GRAPH")]
    pub path: PathBuf,
    /// Where the graph is held: `always` decodes it into memory (4 bytes an arc, fastest),
    /// `never` reads the memory-mapped compressed graph (a few bits an arc), `auto` decodes
    /// it when it takes at most half of the memory available. The results are the same.
    #[arg(long, value_name = "auto|always|never", default_value = "auto")]
    pub in_memory: InMemory,
}

/// A command's work on its graph, wherever the graph is held: [`GraphArgs::run`] hands it
/// the decoded CSR or the compressed graph itself (the results are the same).
pub trait OnGraph {
    /// What the work gives.
    type Output;
    /// Does the work on `graph`.
    fn on<G: SimGraph>(self, graph: &G) -> Result<Self::Output>;
}

impl GraphArgs {
    /// Runs `work` on `graph` decoded into a CSR, or on `graph` itself, as `--in-memory`
    /// decides (said on stderr). The transpose counts only when the graph's reference
    /// PageRank, computed once per graph and cached, is not there yet.
    pub fn run<W: OnGraph>(&self, graph: &BvWebGraph, work: W) -> Result<W::Output> {
        let directions = if has_reference_pagerank(graph) { 1 } else { 2 };
        let decision = self.in_memory.decide(graph, directions);
        eprintln!("{}: {}", graph.basename().display(), decision.reason);
        if decision.csr {
            work.on(&graph.to_csr()?)
        } else {
            work.on(graph)
        }
    }
}
