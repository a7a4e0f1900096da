//! `crawlrank score-order`: score a crawl order computed elsewhere (NetworkX, a notebook,
//! another crawler's log) with the simulator's measures, so that it can be compared with the
//! simulated policies on the same footing (docs/algorithms.md §4).

use super::held::OnGraph;
use super::simulate::{parse_percents, Percents};
use crate::provenance::{file_digest, stamp_json, Provenance};
use anyhow::Result;
use crawlrank_graph::{open_graph, BvWebGraph, Cache};
use crawlrank_sim::score::{default_name, Scored};
use crawlrank_sim::{score_order, write_outputs, write_table, ScoreOptions, SeedChoice, SimGraph};
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    pub graph: super::held::GraphArgs,
    /// The order: one page per line, first crawled first — page ids (the graph's own ids:
    /// those of an imported arc list, else 0..n) or URLs when the graph has them; empty and
    /// `#` lines are skipped. It must list every page reachable from the seeds once, each
    /// after a page that links to it (or be a seed).
    #[arg(long, value_name = "FILE")]
    pub order: PathBuf,
    /// The crawl's seeds: N random pages drawn with --rng-seed, as `simulate --seeds N` draws
    /// them. Without --seeds or --seeds-file, the order's first page is the only seed.
    #[arg(long, value_name = "N", conflicts_with = "seeds_file")]
    pub seeds: Option<usize>,
    /// The crawl's seeds, one per line, as `simulate --seeds-file` reads them.
    #[arg(long, value_name = "FILE")]
    pub seeds_file: Option<PathBuf>,
    /// Seed of the generator that draws --seeds N.
    #[arg(long, default_value_t = 42)]
    pub rng_seed: u64,
    /// The order's name in the table and outputs (default: the file's name without its
    /// extension).
    #[arg(long)]
    pub name: Option<String>,
    /// Score an order that lists pages before any page listed earlier links to them (they are
    /// counted) instead of rejecting it.
    #[arg(long)]
    pub allow_unlinked: bool,
    /// The percentages of R crawled the table reports, comma-separated, each in 1..=100.
    #[arg(long, value_name = "P,P,…", default_value = "5,10,15,25,45", value_parser = parse_percents)]
    pub checkpoints: Percents,
    /// Write summary.json, summary.csv, throughput.svg and mass.svg into DIR.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

/// The scoring, run where the graph is held.
struct Scoring<'a>(&'a BvWebGraph, &'a ScoreOptions);

impl OnGraph for Scoring<'_> {
    type Output = Scored;
    fn on<G: SimGraph>(self, csr: &G) -> Result<Scored> {
        score_order(self.0, csr, self.1)
    }
}

pub fn run(args: Args, cache: &Cache) -> Result<()> {
    let seeds = match (&args.seeds_file, args.seeds) {
        (Some(f), _) => Some(SeedChoice::File(f.clone())),
        (None, Some(count)) => {
            anyhow::ensure!(count > 0, "--seeds must be at least 1");
            Some(SeedChoice::Random {
                count,
                rng_seed: args.rng_seed,
            })
        }
        (None, None) => None,
    };
    let graph = open_graph(&args.graph.path, cache)?;
    let ids = graph.page_ids()?;
    let options = ScoreOptions {
        name: args
            .name
            .clone()
            .unwrap_or_else(|| default_name(&args.order)),
        order: args.order.clone(),
        seeds,
        allow_unlinked: args.allow_unlinked,
        percents: args.checkpoints.0.clone(),
        rng_seed: args.rng_seed,
    };
    let mut scored = args.graph.run(&graph, Scoring(&graph, &options))?;
    // Outputs name the graph as the user did (an arc list, not its imported copy in the cache).
    scored.summary.graph = args.graph.path.display().to_string();
    if scored.unlinked > 0 {
        eprintln!(
            "{} pages of {} were listed before any page listed earlier links to them",
            scored.unlinked,
            args.order.display()
        );
    }
    write_table(&scored.summary, &mut std::io::stdout().lock())?;
    if let Some(dir) = &args.out {
        write_outputs(&scored.summary, dir, false, &ids)?;
        let mut provenance = Provenance::new(&args.graph.path)?;
        provenance.set("order_file", file_digest(&args.order)?);
        if let Some(f) = &args.seeds_file {
            provenance.set("seeds_file", file_digest(f)?);
        }
        stamp_json(&dir.join("summary.json"), &provenance)?;
        println!(
            "wrote {}/summary.json, summary.csv, throughput.svg, mass.svg",
            dir.display()
        );
    }
    Ok(())
}
