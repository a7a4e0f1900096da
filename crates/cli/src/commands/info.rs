//! `crawlrank info`: what a graph is made of.

use anyhow::Result;
use crawlrank_graph::{source, stats::GraphStats, Cache};
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The graph: a BVGraph basename or an arc-list file.
    #[arg(long)]
    pub graph: PathBuf,
}

pub fn run(args: Args, cache: &Cache) -> Result<()> {
    let graph = source::open_graph(&args.graph, cache)?;
    let hosts = graph.hosts()?;
    let stats = GraphStats::compute(graph.bv(), hosts.as_ref().map(|h| h.host_of()))?;
    println!("graph: {}", graph.basename().display());
    print!("{stats}");
    Ok(())
}
