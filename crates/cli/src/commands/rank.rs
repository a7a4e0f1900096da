//! `crawlrank rank`: PageRank, HITS or in-degree of every page.

use crate::output;
use anyhow::{Context, Result};
use crawlrank_graph::{open_graph, Cache};
use std::path::PathBuf;
use std::time::Instant;

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Algo {
    Pagerank,
    Hits,
    Indegree,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum HitsScore {
    Authority,
    Hub,
}

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The graph: a BVGraph basename or an arc-list file.
    #[arg(long)]
    pub graph: PathBuf,
    /// The ranking to compute.
    #[arg(long, value_enum, default_value_t = Algo::Pagerank)]
    pub algo: Algo,
    /// Write one score per line, in node order, to FILE.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Print the N best pages (id, URL when known, score).
    #[arg(long, value_name = "N")]
    pub top: Option<usize>,
    /// PageRank damping factor.
    #[arg(long, default_value_t = 0.85)]
    pub damping: f64,
    /// PageRank stops when the L1 change between iterations is below this.
    #[arg(long, default_value_t = 1e-10)]
    pub threshold: f64,
    /// PageRank's maximum number of iterations.
    #[arg(long, default_value_t = 1000)]
    pub max_iter: usize,
    /// PageRank preference (teleport) vector: one non-negative value per line, summing to 1.
    #[arg(long, value_name = "FILE")]
    pub preference: Option<PathBuf>,
    /// HITS iterations.
    #[arg(long, default_value_t = 60)]
    pub hits_iterations: usize,
    /// Which HITS score to write and print.
    #[arg(long, value_enum, default_value_t = HitsScore::Authority)]
    pub hits_score: HitsScore,
}

pub fn run(args: Args, cache: &Cache) -> Result<()> {
    let t0 = Instant::now();
    let graph = open_graph(&args.graph, cache)?;
    let csr = graph.to_csr()?;
    let loaded = t0.elapsed();
    let t1 = Instant::now();
    let (scores, label, note) = match args.algo {
        Algo::Pagerank => {
            let preference = args.preference.as_deref().map(read_vector).transpose()?;
            let cfg = crawlrank_rank::PageRankConfig {
                damping: args.damping,
                threshold: args.threshold,
                max_iterations: args.max_iter,
                preference,
            };
            let r = crawlrank_rank::pagerank(&csr, &cfg)?;
            let note = format!("{} iterations, L1 change {:.3e}", r.iterations, r.l1_change);
            (r.scores, "pagerank", note)
        }
        Algo::Hits => {
            let t = csr.transpose();
            let cfg = crawlrank_rank::HitsConfig {
                iterations: args.hits_iterations,
                ..Default::default()
            };
            let r = crawlrank_rank::hits(&csr, &t, &cfg)?;
            let note = format!("{} iterations", r.iterations);
            match args.hits_score {
                HitsScore::Authority => (r.authorities, "authority", note),
                HitsScore::Hub => (r.hubs, "hub", note),
            }
        }
        Algo::Indegree => (crawlrank_rank::indegree(&csr), "indegree", String::new()),
    };
    eprintln!(
        "{}: {} nodes, {} arcs; loaded in {:.2?}, ranked in {:.2?} {}",
        graph.basename().display(),
        csr.num_nodes(),
        csr.num_arcs(),
        loaded,
        t1.elapsed(),
        note
    );
    if let Some(out) = &args.out {
        output::write_scores(out, &scores)?;
        eprintln!("wrote {} scores to {}", scores.len(), out.display());
    }
    if let Some(k) = args.top {
        let urls = graph.urls()?;
        output::print_top(&scores, k, urls.as_deref(), label);
    }
    Ok(())
}

/// Reads one number per line (blank lines and `#` comments skipped).
fn read_vector(path: &std::path::Path) -> Result<Vec<f64>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read the preference vector {}", path.display()))?;
    let mut v = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let x: f64 = line.parse().with_context(|| {
            format!(
                "{}:{}: expected a number, found {line:?}",
                path.display(),
                i + 1
            )
        })?;
        v.push(x);
    }
    Ok(v)
}
