//! `crawlrank simulate`: replay crawls of a known graph with each policy and score them.

use crate::progress;
use anyhow::{ensure, Result};
use crawlrank_frontier::PolicyConfig;
use crawlrank_graph::{open_graph, BvWebGraph, Cache, Csr};
use crawlrank_sim::{
    run_experiment, write_outputs, write_table, Experiment, ExperimentEvent, SeedChoice, SimConfig,
    SimPolicy, Summary,
};
use std::path::PathBuf;

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
    #[arg(long, value_name = "L1", default_value_t = PolicyConfig::BATCH_PAGERANK_THRESHOLD)]
    pub batch_pagerank_threshold: f64,
    /// Write summary.json, summary.csv, throughput.svg and mass.svg into DIR.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Also write DIR/<policy>.order: the crawled ids, one per line, in crawl order.
    #[arg(long, requires = "out")]
    pub save_orders: bool,
}

pub fn run(args: Args, cache: &Cache) -> Result<()> {
    let policies = SimPolicy::parse_list(&args.policy)?;
    ensure!(args.seeds > 0, "--seeds must be at least 1");
    ensure!(args.batch != Some(0), "--batch must be at least 1");
    let seeds = match args.seeds_file {
        Some(f) => SeedChoice::File(f),
        None => SeedChoice::Random {
            count: args.seeds,
            rng_seed: args.rng_seed,
        },
    };
    let experiment = Experiment {
        seeds,
        policies,
        config: SimConfig {
            batch: args.batch,
            rng_seed: args.rng_seed,
            batch_pagerank_threshold: args.batch_pagerank_threshold,
        },
    };
    let graph = open_graph(&args.graph, cache)?;
    let csr = graph.to_csr()?;
    let summary = run_with_progress(&graph, &csr, &experiment)?;
    write_table(&summary, &mut std::io::stdout().lock())?;
    if let Some(dir) = &args.out {
        write_outputs(&summary, dir, args.save_orders)?;
        println!(
            "wrote {}/summary.json, summary.csv, throughput.svg, mass.svg",
            dir.display()
        );
    }
    Ok(())
}

/// Runs an experiment with a progress bar per policy and a line per finished policy on
/// stderr.
pub fn run_with_progress(
    graph: &BvWebGraph,
    csr: &Csr,
    experiment: &Experiment,
) -> Result<Summary> {
    let mut reachable = 0;
    let mut bar: Option<indicatif::ProgressBar> = None;
    let summary = run_experiment(graph, csr, experiment, &mut |event| match event {
        ExperimentEvent::Ready {
            seeds,
            reachable: r,
            batch,
        } => {
            reachable = r;
            eprintln!(
                "{}: {} pages, {} arcs, {seeds} seeds, R = {r}, K = {batch}",
                graph.basename().display(),
                csr.num_nodes(),
                csr.num_arcs(),
            );
        }
        ExperimentEvent::PolicyStarted(policy) => {
            let b = progress::bar(Some(reachable), "pages");
            b.set_prefix(policy.name());
            bar = Some(b);
        }
        ExperimentEvent::Crawled(_, done) => {
            if let Some(b) = &bar {
                b.set_position(done);
            }
        }
        ExperimentEvent::PolicyDone(run) => {
            if let Some(b) = bar.take() {
                b.finish_and_clear();
            }
            eprintln!("  {:<17} {:.2?}", run.policy.name(), run.crawl_time);
        }
    });
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    summary
}
