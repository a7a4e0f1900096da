//! `crawlrank demo`: the main job on a built-in default, with nothing to download.
//!
//! Generates a synthetic crawled web into the cache (once per size and seed), prints its
//! statistics and ranks it by PageRank; serves it on loopback and crawls it for real with
//! FICA's order; replays crawls of it with several ordering policies in the simulator and
//! prints how fast each finds the important pages, with plots — and how the real crawl
//! compares with the simulated one.

use crate::output;
use anyhow::{Context, Result};
use crawlrank_crawler::{CrawlConfig, FetchConfig, PolicySettings, Politeness, Resources};
use crawlrank_frontier::PolicyKind;
use crawlrank_graph::{is_bvgraph, BvWebGraph, Cache, Csr, GraphStats};
use crawlrank_sim::{Experiment, SeedChoice, SimConfig, SimPolicy};
use crawlrank_testweb::{TestWeb, TestWebConfig};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

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
    /// Pages the real crawl of step 4 fetches.
    #[arg(long, default_value_t = 20_000)]
    pub crawl_pages: u64,
    /// Where to write the simulation's summary and plots (and the demo crawl's state).
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
    let pr = crawlrank_rank::pagerank(&csr, &Default::default())?;
    println!("{} iterations in {:.2?}", pr.iterations, t.elapsed());
    let urls = graph.urls()?;
    let ids = graph.page_ids()?;
    output::print_top(&pr.scores, args.top, urls.as_deref(), &ids, "pagerank");

    let indeg = crawlrank_rank::indegree(&csr);
    let tau = crawlrank_rank::kendall_tau_b(&pr.scores, &indeg)?;
    println!("\nKendall's tau_b between PageRank and in-degree: {tau:.4}");

    let seeds = crawlrank_sim::random_seeds(csr.num_nodes(), 100, 42);
    println!(
        "\n== 4. serve it on loopback and crawl {} pages for real in FICA's order (crawlrank serve, crawlrank crawl)",
        args.crawl_pages
    );
    let csr = Arc::new(csr);
    let crawled = demo_crawl(
        &csr,
        urls,
        &seeds,
        args.crawl_pages,
        &args.out.join("crawl-state"),
    )?;

    let policies = SimPolicy::parse_list(&args.policy)?;
    println!(
        "\n== 5. replay crawls from the same 100 seeds with {} policies (crawlrank simulate)",
        policies.len()
    );
    let experiment = Experiment {
        seeds: SeedChoice::Random {
            count: 100,
            rng_seed: 42,
        },
        policies,
        config: SimConfig {
            rng_seed: 42,
            ..Default::default()
        },
    };
    let summary = super::simulate::run_with_progress(&graph, &*csr, &experiment)?;
    crawlrank_sim::write_table(&summary, &mut std::io::stdout().lock())?;
    crawlrank_sim::write_outputs(&summary, &args.out, false, &ids)?;
    let mut provenance = crate::provenance::Provenance::new(&basename)?;
    provenance.seeds(&seeds, &ids);
    crate::provenance::stamp_json(&args.out.join("summary.json"), &provenance)?;
    if let Some(fica) = summary
        .results
        .iter()
        .find(|r| r.run.policy == SimPolicy::Crawl(PolicyKind::Fica))
    {
        let mass = |pages: &[u32]| pages.iter().map(|&p| pr.scores[p as usize]).sum::<f64>();
        let k = crawled.len().min(fica.run.order.len());
        println!(
            "\nthe real crawl's first {k} pages hold {:.1}% of the PageRank mass; the simulated FICA crawl's first {k}, {:.1}%",
            100.0 * mass(&crawled[..k]),
            100.0 * mass(&fica.run.order[..k])
        );
    }
    println!(
        "\nhot@k%: fraction of the k% most important pages (by PageRank) found in the first k% crawled;\n\
         mass@k%: fraction of the PageRank mass crawled. Plots: {0}/throughput.svg, {0}/mass.svg",
        args.out.display()
    );
    Ok(())
}

/// Serves `graph` on a loopback port and crawls `pages` pages of it with the real crawler in
/// FICA's order (persistent state in `state_dir`, started afresh), returning the crawled
/// pages in crawl order.
fn demo_crawl(
    graph: &Arc<Csr>,
    urls: Option<Vec<String>>,
    seeds: &[u32],
    pages: u64,
    state_dir: &Path,
) -> Result<Vec<u32>> {
    let addr = "127.0.0.1:0".parse().expect("a socket address");
    let web_config = TestWebConfig {
        record_log: false,
        ..TestWebConfig::default()
    };
    let web = TestWeb::start_blocking(graph.clone(), urls, addr, web_config)?;
    println!(
        "test web: {} pages on {} hosts at {}",
        web.num_nodes(),
        web.num_hosts(),
        web.proxy_url()
    );
    if state_dir.exists() {
        std::fs::remove_dir_all(state_dir)
            .with_context(|| format!("cannot clear {}", state_dir.display()))?;
    }
    let n = graph.num_nodes() as u64;
    let config = CrawlConfig {
        state_dir: state_dir.to_path_buf(),
        seeds: web.seed_urls(seeds),
        max_pages: Some(pages),
        fetch: FetchConfig {
            proxy: Some(web.proxy_url()),
            ..FetchConfig::default()
        },
        policy: PolicySettings {
            kind: PolicyKind::Fica,
            expected_pages: Some(n),
            total_pages: Some(n),
            ..PolicySettings::default()
        },
        politeness: Politeness {
            delay: Duration::ZERO,
            ..Politeness::default()
        },
        resources: Resources {
            concurrency: 32,
            ..Resources::default()
        },
        ..CrawlConfig::default()
    };
    let report = crawlrank_crawler::crawl(&config, &AtomicBool::new(false), &mut |_| {});
    web.shutdown_blocking();
    let report = report?;
    println!(
        "crawled {} pages in {:.2?} ({:.0} pages/s, concurrency 32, one request per host at a time), {} URLs discovered, {} hosts; state in {}",
        report.crawled,
        report.elapsed,
        report.crawled as f64 / report.elapsed.as_secs_f64().max(1e-9),
        report.discovered,
        report.hosts,
        state_dir.display()
    );
    let order = crawlrank_crawler::crawl_order(state_dir)?;
    Ok(order.iter().filter_map(|u| web.node_of(u)).collect())
}
