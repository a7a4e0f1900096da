//! `crawlrank rank`: PageRank, HITS or in-degree of every page.

use crate::output;
use anyhow::{bail, ensure, Context, Result};
use crawlrank_graph::access::{SequentialSuccessors, Transpose};
use crawlrank_graph::{open_graph, Cache, InMemory, PageIds};
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
    /// Where the graph is held: `always` decodes it (and its transpose, for PageRank and HITS)
    /// into memory, `never` ranks the memory-mapped compressed graph and its transpose (built
    /// once in the cache), `auto` decodes when that takes at most half of the memory
    /// available. The scores are the same bit for bit.
    #[arg(long, value_name = "auto|always|never", default_value = "auto")]
    pub in_memory: InMemory,
    /// Write the scores to FILE: one per line in node order when the pages' ids are 0..n (every
    /// BVGraph without .ids), else `id<TAB>score` lines, the graph's own ids (an arc list with
    /// gaps in its ids, or not starting at 0), in increasing order of id.
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
    /// PageRank preference (teleport) vector, summing to 1: one non-negative value per line in
    /// node order (pages with ids 0..n only), or `id<TAB>value` lines, as --out writes them
    /// (pages not named get 0).
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
    let ids = graph.page_ids()?;
    let directions = if args.algo == Algo::Indegree { 1 } else { 2 };
    let decision = args.in_memory.decide(&graph, directions);
    eprintln!("{}: {}", graph.basename().display(), decision.reason);
    let (scores, label, note, loaded, ranked) = if decision.csr {
        let csr = graph.to_csr()?;
        rank_on(&args, &csr, &ids, t0)?
    } else {
        rank_on(&args, &graph, &ids, t0)?
    };
    eprintln!(
        "{}: {} nodes, {} arcs; loaded in {:.2?}, ranked in {:.2?} {}",
        graph.basename().display(),
        graph.num_nodes(),
        graph.num_arcs(),
        loaded,
        ranked,
        note
    );
    if let Some(out) = &args.out {
        output::write_scores(out, &scores, &ids)?;
        eprintln!(
            "wrote {} scores to {}{}",
            scores.len(),
            out.display(),
            if ids.is_dense() {
                ""
            } else {
                " (id<TAB>score: the graph's ids are not 0..n)"
            }
        );
    }
    if let Some(k) = args.top {
        let urls = graph.urls()?;
        output::print_top(&scores, k, urls.as_deref(), &ids, label);
    }
    Ok(())
}

/// The scores of `graph` (decoded, or compressed), their label, a note on the iterations, the
/// time to load (from `t0`, including the transpose) and the time to rank.
type Ranked = (Vec<f64>, &'static str, String, std::time::Duration, std::time::Duration);

fn rank_on<G: SequentialSuccessors + Transpose>(
    args: &Args,
    graph: &G,
    ids: &PageIds,
    t0: Instant,
) -> Result<Ranked> {
    let transpose = match args.algo {
        Algo::Indegree => None,
        _ => Some(graph.transposed()?),
    };
    let loaded = t0.elapsed();
    let t1 = Instant::now();
    let (scores, label, note) = match args.algo {
        Algo::Pagerank => {
            let preference = args
                .preference
                .as_deref()
                .map(|p| read_vector(p, ids))
                .transpose()?;
            let cfg = crawlrank_rank::PageRankConfig {
                damping: args.damping,
                threshold: args.threshold,
                max_iterations: args.max_iter,
                preference,
            };
            let outdeg = crawlrank_graph::access::outdegrees_of(graph);
            let t = transpose.as_ref().expect("built for PageRank");
            let r = crawlrank_rank::PageRank::new(t, &outdeg)?.run(&cfg, None)?;
            let note = format!("{} iterations, L1 change {:.3e}", r.iterations, r.l1_change);
            (r.scores, "pagerank", note)
        }
        Algo::Hits => {
            let t = transpose.as_ref().expect("built for HITS");
            let cfg = crawlrank_rank::HitsConfig {
                iterations: args.hits_iterations,
                ..Default::default()
            };
            let r = crawlrank_rank::hits(graph, t, &cfg)?;
            let note = format!("{} iterations", r.iterations);
            match args.hits_score {
                HitsScore::Authority => (r.authorities, "authority", note),
                HitsScore::Hub => (r.hubs, "hub", note),
            }
        }
        Algo::Indegree => (crawlrank_rank::indegree(graph), "indegree", String::new()),
    };
    Ok((scores, label, note, loaded, t1.elapsed()))
}

/// Reads a preference vector: one number per line in node order, or `id<TAB>value` lines
/// naming pages by their ids (blank lines and `#` comments skipped; one form per file).
fn read_vector(path: &std::path::Path, ids: &PageIds) -> Result<Vec<f64>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read the preference vector {}", path.display()))?;
    let mut plain = Vec::new();
    let mut by_id: Option<Vec<f64>> = None;
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let at = format!("{}:{}", path.display(), i + 1);
        let fields: Vec<&str> = line.split_whitespace().collect();
        let value = fields[fields.len() - 1];
        let x: f64 = value
            .parse()
            .ok()
            .filter(|x: &f64| !x.is_nan())
            .with_context(|| format!("{at}: expected a number, found {value:?}"))?;
        match fields.len() {
            1 => {
                ensure!(
                    by_id.is_none(),
                    "{at}: a value without an id, after `id<TAB>value` lines"
                );
                ensure!(
                    ids.is_dense(),
                    "{at}: a value without an id: the pages of this graph have their own ids \
                     (not 0..n), so write `id<TAB>value` lines"
                );
                plain.push(x);
            }
            2 => {
                ensure!(
                    plain.is_empty(),
                    "{at}: an `id<TAB>value` line after lines of values alone"
                );
                let node = ids.parse(fields[0], &at)?;
                let v = by_id.get_or_insert_with(|| vec![f64::NAN; ids.len()]);
                ensure!(v[node].is_nan(), "{at}: page {} is named twice", fields[0]);
                v[node] = x;
            }
            n => bail!("{at}: {n} fields; expected a value or `id<TAB>value`"),
        }
    }
    Ok(match by_id {
        // Pages not named prefer nothing.
        Some(v) => v
            .into_iter()
            .map(|x| if x.is_nan() { 0.0 } else { x })
            .collect(),
        None => plain,
    })
}
