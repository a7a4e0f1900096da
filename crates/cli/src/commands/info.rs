//! `crawlrank info`: what a graph is made of.

use anyhow::Result;
use crawlrank_graph::{open_graph, Cache, GraphStats, InMemory};
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The graph: a BVGraph basename or an arc-list file.
    #[arg(long)]
    pub graph: PathBuf,
    /// Also measure reachability: a BFS from each of N random start pages.
    #[arg(long, value_name = "N")]
    pub reachability: Option<usize>,
    /// Also count strongly connected components (iterative Tarjan).
    #[arg(long)]
    pub scc: bool,
    /// Seed of the random start pages.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// Where the graph is held for --reachability and --scc: `always` decodes it into memory,
    /// `never` visits the memory-mapped compressed graph, `auto` decodes it when it takes at
    /// most half of the memory available. The statistics are the same.
    #[arg(long, value_name = "auto|always|never", default_value = "auto")]
    pub in_memory: InMemory,
}

pub fn run(args: Args, cache: &Cache) -> Result<()> {
    let graph = open_graph(&args.graph, cache)?;
    let ids = graph.page_ids()?;
    let hosts = graph.hosts()?;
    let mut stats = GraphStats::compute(graph.bv(), hosts.as_ref().map(|h| h.host_of()))?;
    // The pages of largest degree, named by the ids the user knows them by.
    for d in [&mut stats.outdegree, &mut stats.indegree] {
        if d.count > 0 {
            d.argmax = ids.id(d.argmax as usize);
        }
    }
    if args.reachability.is_some() || args.scc {
        let decision = args.in_memory.decide(&graph, 1);
        eprintln!("{}: {}", graph.basename().display(), decision.reason);
        let csr = if decision.csr {
            Some(graph.to_csr()?)
        } else {
            None
        };
        if let Some(n) = args.reachability {
            stats = match &csr {
                Some(csr) => stats.with_reachability(csr, n, args.seed),
                None => stats.with_reachability(&graph, n, args.seed),
            };
        }
        if args.scc {
            stats = match &csr {
                Some(csr) => stats.with_scc(csr),
                None => stats.with_scc(&graph),
            };
        }
    }
    println!("graph: {}", graph.basename().display());
    if !ids.is_dense() {
        println!(
            "{:<18}the graph's own, {} to {} with gaps ({} pages; {})",
            "ids",
            ids.id(0),
            ids.id(ids.len() - 1),
            ids.len(),
            crawlrank_graph::with_ext(graph.basename(), "ids").display()
        );
    }
    print!("{stats}");
    Ok(())
}
