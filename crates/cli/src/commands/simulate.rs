//! `crawlrank simulate`: replay crawls of a known graph with each policy and score them.

use crate::progress;
use anyhow::{bail, ensure, Context, Result};
use crawlrank_frontier::policies::simple::Xoshiro;
use crawlrank_frontier::{PageId, PolicyKind};
use crawlrank_graph::{source, BvWebGraph, Cache, Csr};
use crawlrank_sim::measures::measure;
use crawlrank_sim::report::{self, PolicyResult, Summary};
use crawlrank_sim::{simulate, Reference, SimConfig};
use std::path::{Path, PathBuf};
use std::sync::Arc;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The graph: a BVGraph basename or an arc-list file.
    #[arg(long)]
    pub graph: PathBuf,
    /// Policies, comma-separated, or `all`.
    #[arg(long, default_value = "all")]
    pub policy: String,
    /// Number of random seed pages (drawn with --rng-seed).
    #[arg(
        long,
        value_name = "N",
        default_value_t = 100,
        conflicts_with = "seeds_file"
    )]
    pub seeds: usize,
    /// Seed pages, one per line: node ids, or URLs when the graph has them.
    #[arg(long, value_name = "FILE")]
    pub seeds_file: Option<PathBuf>,
    /// Seed of the random generator (random seeds, the `random` policy).
    #[arg(long, default_value_t = 42)]
    pub rng_seed: u64,
    /// Batch size K (default ceil(R/72), R = pages reachable from the seeds).
    #[arg(long, value_name = "K")]
    pub batch: Option<u64>,
    /// L1 threshold of the PageRank the batch policies compute at every reorder.
    #[arg(long, value_name = "L1", default_value_t = crawlrank_frontier::PolicyConfig::default().batch_pagerank_threshold)]
    pub batch_pagerank_threshold: f64,
    /// Write summary.json, summary.csv, throughput.svg and mass.svg into DIR.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Also write DIR/<policy>.order: the crawled ids, one per line, in crawl order.
    #[arg(long, requires = "out")]
    pub save_orders: bool,
}

pub fn run(args: Args, cache: &Cache) -> Result<()> {
    let kinds = PolicyKind::parse_list(&args.policy)?;
    if args.batch == Some(0) {
        bail!("--batch must be at least 1");
    }
    let graph = source::open_graph(&args.graph, cache)?;
    let csr = graph.to_csr()?;
    ensure!(
        csr.num_nodes() > 0,
        "{} is an empty graph",
        args.graph.display()
    );
    let (seeds, seed_source) = match &args.seeds_file {
        Some(f) => (read_seeds(f, &graph)?, f.display().to_string()),
        None => {
            ensure!(args.seeds > 0, "--seeds must be at least 1");
            (
                random_seeds(csr.num_nodes(), args.seeds, args.rng_seed),
                format!("{} random, rng seed {}", args.seeds, args.rng_seed),
            )
        }
    };
    let config = SimConfig {
        batch: args.batch,
        rng_seed: args.rng_seed,
        batch_pagerank_threshold: args.batch_pagerank_threshold,
    };
    let summary = simulate_policies(&graph, &csr, &seeds, seed_source, &kinds, &config)?;
    report::write_table(&summary, &mut std::io::stdout().lock())?;
    if let Some(dir) = &args.out {
        report::write_outputs(&summary, dir, args.save_orders)?;
        println!(
            "wrote {}/summary.json, summary.csv, throughput.svg, mass.svg",
            dir.display()
        );
    }
    Ok(())
}

/// Simulates every policy of `kinds` on `csr` (the decoded `graph`) from `seeds`, with a
/// progress bar per policy, and measures each crawl.
pub fn simulate_policies(
    graph: &BvWebGraph,
    csr: &Csr,
    seeds: &[PageId],
    seed_source: String,
    kinds: &[PolicyKind],
    config: &SimConfig,
) -> Result<Summary> {
    let pagerank = Arc::new(reference_pagerank(graph, csr)?);
    let reference = Reference::new(csr, pagerank, seeds)?;
    eprintln!(
        "{}: {} pages, {} arcs, {} seeds, R = {}, K = {}",
        graph.basename().display(),
        csr.num_nodes(),
        csr.num_arcs(),
        seeds.len(),
        reference.reachable,
        config.batch.unwrap_or_else(|| reference.default_batch())
    );
    let mut results = Vec::new();
    for &kind in kinds {
        let bar = progress::bar(Some(reference.reachable), "pages");
        bar.set_prefix(kind.name());
        let run = simulate(csr, seeds, kind, &reference, config, &mut |done| {
            bar.set_position(done)
        })?;
        bar.finish_and_clear();
        let measures = measure(&run, &reference)?;
        eprintln!("  {:<17} {:.2?}", kind.name(), run.crawl_time);
        results.push(PolicyResult { run, measures });
    }
    Ok(Summary {
        graph: graph.basename().display().to_string(),
        nodes: csr.num_nodes() as u64,
        arcs: csr.num_arcs(),
        seeds: seeds.len(),
        seed_source,
        rng_seed: config.rng_seed,
        reachable: reference.reachable,
        results,
    })
}

/// `n` distinct random pages (or all pages, if the graph has fewer), in draw order.
pub fn random_seeds(nodes: usize, n: usize, rng_seed: u64) -> Vec<PageId> {
    let mut rng = Xoshiro::new(rng_seed);
    let want = n.min(nodes);
    let mut chosen = std::collections::HashSet::with_capacity(want);
    let mut seeds = Vec::with_capacity(want);
    while seeds.len() < want {
        let p = rng.below(nodes as u64) as PageId;
        if chosen.insert(p) {
            seeds.push(p);
        }
    }
    seeds
}

/// Reads a seeds file: ids, or URLs looked up in the graph's `.urls`.
fn read_seeds(path: &Path, graph: &BvWebGraph) -> Result<Vec<PageId>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read the seeds file {}", path.display()))?;
    let n = graph.num_nodes();
    let mut url_index: Option<std::collections::HashMap<String, PageId>> = None;
    let mut seeds = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let at = || format!("{}:{}", path.display(), i + 1);
        let id = if let Ok(id) = line.parse::<u64>() {
            ensure!(
                (id as usize) < n,
                "{}: seed {id} is not a page of the graph (it has {n} pages)",
                at()
            );
            id as PageId
        } else {
            if url_index.is_none() {
                let urls = graph.urls()?.with_context(|| {
                    format!(
                        "{}: '{line}' is not a page id, and the graph has no URLs",
                        at()
                    )
                })?;
                url_index = Some(
                    urls.into_iter()
                        .enumerate()
                        .map(|(i, u)| (u, i as PageId))
                        .collect(),
                );
            }
            let url = crawlrank_graph::urls::normalize_url(line).with_context(at)?;
            *url_index
                .as_ref()
                .expect("built above")
                .get(&url)
                .with_context(|| format!("{}: {url} is not a page of the graph", at()))?
        };
        seeds.push(id);
    }
    ensure!(
        !seeds.is_empty(),
        "the seeds file {} holds no seeds",
        path.display()
    );
    Ok(seeds)
}

/// The PageRank of the whole graph (SPEC §4), cached in the graph's cache directory.
fn reference_pagerank(graph: &BvWebGraph, csr: &Csr) -> Result<Vec<f64>> {
    let path = graph.cache_dir().join("pagerank-0.85-1e-10.f64");
    if let Ok(bytes) = std::fs::read(&path) {
        if bytes.len() == csr.num_nodes() * 8 {
            return Ok(bytes
                .chunks_exact(8)
                .map(|c| f64::from_le_bytes(c.try_into().expect("8 bytes")))
                .collect());
        }
    }
    let pr = crawlrank_rank::pagerank(csr, &Default::default())?.scores;
    crawlrank_graph::atomic::write_file(&path, |w| {
        use std::io::Write;
        for x in &pr {
            w.write_all(&x.to_le_bytes())?;
        }
        Ok(())
    })?;
    Ok(pr)
}
