//! Where a command that reads arcs holds its graph (`--in-memory`): one option, with one help
//! text, for `simulate`, `frontier-rank`, `seeds-eval` and `score-order`, and the decision those
//! commands take from it. (`rank`, `info` and `seeds` describe what they decode themselves.)

use crawlrank_graph::{BvWebGraph, InMemory};
use crawlrank_sim::reference::has_reference_pagerank;

/// `--in-memory`, flattened into a command's arguments.
#[derive(clap::Args, Debug)]
pub struct Held {
    /// Where the graph is held: `always` decodes it into memory (4 bytes an arc, fastest),
    /// `never` reads the memory-mapped compressed graph (a few bits an arc), `auto` decodes
    /// it when it takes at most half of the memory available. The results are the same.
    #[arg(long, value_name = "auto|always|never", default_value = "auto")]
    pub in_memory: InMemory,
}

impl Held {
    /// Whether to decode `graph` into a CSR (the choice, said on stderr), for a command that
    /// reads the transpose only to compute the graph's reference PageRank, once per graph
    /// (cached).
    pub fn decode(&self, graph: &BvWebGraph) -> bool {
        let directions = if has_reference_pagerank(graph) { 1 } else { 2 };
        let decision = self.in_memory.decide(graph, directions);
        eprintln!("{}: {}", graph.basename().display(), decision.reason);
        decision.csr
    }
}
