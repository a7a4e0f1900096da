//! `crawlrank convert`: any graph as a text arc list (`src<TAB>dst`, or URL pairs), for
//! NetworkX and friends.

use anyhow::Result;
use crawlrank_graph::{arclist, Cache};
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The graph: a BVGraph basename or an arc-list file.
    #[arg(long)]
    pub graph: PathBuf,
    /// Write the arcs to this file: one `src<TAB>dst` line per arc, the pages' ids (an arc
    /// list's own ids, through its .ids; 0..n for a graph without .ids).
    #[arg(long, value_name = "FILE")]
    pub arcs: PathBuf,
    /// Name the nodes by URL (`src_url<TAB>dst_url`), from the graph's .urls.
    #[arg(long)]
    pub urls: bool,
}

pub fn run(args: Args, cache: &Cache) -> Result<()> {
    let w = arclist::convert(&args.graph, cache, args.urls, &args.arcs)?;
    println!(
        "{}: {} arcs ({} nodes) -> {}",
        args.graph.display(),
        w.arcs,
        w.nodes,
        args.arcs.display()
    );
    Ok(())
}
