//! `crawlrank demo`: the main job on a built-in default, with nothing to download.
//!
//! Generates a synthetic crawled web into the cache (once per size and seed), prints its
//! statistics, ranks it by PageRank, then replays crawls of it with several ordering policies
//! and prints how fast each finds the important pages, with plots.

use crate::output;
use anyhow::Result;
use crawlrank_graph::{bv::is_bvgraph, stats::GraphStats, BvWebGraph, Cache};
use std::path::PathBuf;
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
    /// Policies to simulate (comma-separated, or `all`).
    #[arg(
        long,
        default_value = "bfs,backlink,partial-pagerank,opic,fica,ieca,omniscient"
    )]
    pub policy: String,
    /// Where to write the simulation's summary and plots.
    #[arg(long, value_name = "DIR", default_value = "crawlrank-demo")]
    pub out: PathBuf,
}

pub fn run(args: Args, cache: &Cache) -> Result<()> {
    let dir = cache.root().join("demo");
    let basename = dir.join(format!("web-{}-{}", args.pages, args.seed));
    println!(
        "== 1. generate a synthetic web of {} pages (seed {})",
        args.pages, args.seed
    );
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
        println!("{report}\ngenerated in {:.2?}", t.elapsed());
    }
    let graph = BvWebGraph::open(&basename, cache)?;
    let hosts = graph.hosts()?;

    println!(
        "\n== 2. its statistics (crawlrank info --graph {})",
        basename.display()
    );
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

    let kinds = crawlrank_frontier::PolicyKind::parse_list(&args.policy)?;
    println!(
        "\n== 4. replay crawls from 100 random seeds with {} policies (crawlrank simulate)",
        kinds.len()
    );
    let seeds = super::simulate::random_seeds(csr.num_nodes(), 100, 42);
    let config = crawlrank_sim::SimConfig {
        rng_seed: 42,
        ..Default::default()
    };
    let summary = super::simulate::simulate_policies(
        &graph,
        &csr,
        &seeds,
        "100 random, rng seed 42".into(),
        &kinds,
        &config,
    )?;
    crawlrank_sim::report::write_table(&summary, &mut std::io::stdout().lock())?;
    crawlrank_sim::report::write_outputs(&summary, &args.out, false)?;
    println!(
        "\nhot@k%: fraction of the k% most important pages (by PageRank) found in the first k% crawled;\n\
         mass@k%: fraction of the PageRank mass crawled. Plots: {0}/throughput.svg, {0}/mass.svg",
        args.out.display()
    );
    Ok(())
}
