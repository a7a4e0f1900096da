//! `crawlrank demo`: the main job on a built-in default, with nothing to download.
//!
//! Generates a synthetic crawled web into the cache (once per size and seed), prints its
//! statistics, ranks it by PageRank and shows the most important pages.

use crate::output;
use anyhow::Result;
use crawlrank_graph::{bv::is_bvgraph, stats::GraphStats, BvWebGraph, Cache};
use std::time::Instant;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Pages of the generated web.
    #[arg(long, default_value_t = 200_000)]
    pub pages: u64,
    /// Random seed of the generator.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// How many top pages to show.
    #[arg(long, default_value_t = 10)]
    pub top: usize,
}

pub fn run(args: Args, cache: &Cache) -> Result<()> {
    let dir = cache.root().join("demo");
    let basename = dir.join(format!("web-{}-{}", args.pages, args.seed));
    println!("== 1. generate a synthetic web of {} pages (seed {})", args.pages, args.seed);
    if is_bvgraph(&basename) {
        println!("reusing {}", basename.display());
    } else {
        let t = Instant::now();
        let cfg = crawlrank_gen::GenConfig {
            pages: args.pages,
            seed: args.seed,
            ..Default::default()
        };
        let report = crawlrank_gen::generate(&cfg, &basename)?;
        println!("{report:?}\ngenerated in {:.2?}", t.elapsed());
    }
    let graph = BvWebGraph::open(&basename, cache)?;
    let hosts = graph.hosts()?;

    println!("\n== 2. its statistics (crawlrank info --graph {})", basename.display());
    let stats = GraphStats::compute(graph.bv(), hosts.as_ref().map(|h| h.host_of()))?;
    print!("{stats}");

    println!("\n== 3. PageRank (damping 0.85, L1 change < 1e-10)");
    let csr = graph.to_csr()?;
    let t = Instant::now();
    let pr = crawlrank_rank::pagerank::pagerank(&csr, &Default::default())?;
    println!("{} iterations in {:.2?}", pr.iterations, t.elapsed());
    let urls = graph.urls()?;
    output::print_top(&pr.scores, args.top, urls.as_deref(), "pagerank");

    let indeg = crawlrank_rank::indegree::indegree(&csr);
    let tau = crawlrank_rank::kendall::kendall_tau_b(&pr.scores, &indeg)?;
    println!("\nKendall's tau_b between PageRank and in-degree: {tau:.4}");
    Ok(())
}
