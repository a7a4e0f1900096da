//! `crawlrank generate`: a synthetic crawled web of any size.

use anyhow::Result;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Number of pages.
    #[arg(long)]
    pub pages: u64,
    /// Output basename (BASENAME.graph, .offsets, .properties, .ef, .urls).
    #[arg(long, value_name = "BASENAME")]
    pub out: PathBuf,
    /// Number of hosts (default: chosen from the number of pages).
    #[arg(long)]
    pub hosts: Option<u64>,
    /// Mean outdegree.
    #[arg(long)]
    pub outdegree: Option<f64>,
    /// Random seed: the same seed gives the same graph.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

pub fn run(args: Args) -> Result<()> {
    let cfg = config(&args);
    let report = crawlrank_gen::generate(&cfg, &args.out)?;
    println!("{report}");
    Ok(())
}

pub fn config(args: &Args) -> crawlrank_gen::GenConfig {
    let mut cfg = crawlrank_gen::GenConfig {
        pages: args.pages,
        hosts: args.hosts,
        seed: args.seed,
        ..Default::default()
    };
    if let Some(d) = args.outdegree {
        cfg.outdegree = d;
    }
    cfg
}
