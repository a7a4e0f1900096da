//! Times an RW and an RW-EG iteration (docs/algorithms.md §6) on a large graph: the benchmark of
//! the promise that RW-EG never materialises the virtual graph. Impacts are synthetic here — 1% of the
//! pages, drawn with a fixed seed, get a heavy-tailed impact — because only the cost is measured.
//! With `--hub K`, page 0 is given K more out-links (to pages spread over the graph), to show
//! that a page whose out-links would make K² virtual arcs costs nothing special.
//!
//! ```text
//! cargo run --release -p crawlrank-rank --example rw_scale -- \
//!     --graph BASENAME [--iterations 10] [--hub K] [--cache DIR]
//! /usr/bin/time -v target/release/examples/rw_scale --graph web-1e7   # peak memory
//! ```

use anyhow::{bail, Context, Result};
use crawlrank_graph::{BvWebGraph, Cache, Csr};
use crawlrank_rank::{random_walk, RwConfig};
use crawlrank_rng::Xoshiro256StarStar;
use std::path::PathBuf;
use std::time::Instant;

fn main() -> Result<()> {
    let (mut graph, mut iterations, mut hub, mut cache) = (None, 10usize, 0usize, None);
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().with_context(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--graph" => graph = Some(PathBuf::from(value()?)),
            "--iterations" => iterations = value()?.parse().context("--iterations")?,
            "--hub" => hub = value()?.parse().context("--hub")?,
            "--cache" => cache = Some(Cache::new(value()?)),
            other => bail!("unknown option {other}"),
        }
    }
    let graph = graph.context("--graph BASENAME is required")?;
    let cache = cache.unwrap_or_else(Cache::from_env);
    let t0 = Instant::now();
    let g = BvWebGraph::open(&graph, &cache)?.to_csr()?;
    let g = if hub > 0 { with_hub(&g, hub)? } else { g };
    let t = g.transpose();
    let n = g.num_nodes();
    let max_out = (0..n).map(|i| g.outdegree(i)).max().unwrap_or(0);
    println!(
        "{}: {n} pages, {} arcs, largest out-degree {max_out} (loaded in {:.1?})",
        graph.display(),
        g.num_arcs(),
        t0.elapsed()
    );
    let mut rng = Xoshiro256StarStar::new(1);
    let impact: Vec<f64> = (0..n)
        .map(|_| {
            if rng.below(100) == 0 {
                // Pareto-like: 1 / u², u uniform in (0, 1].
                let u = (rng.below(1 << 20) + 1) as f64 / (1u64 << 20) as f64;
                1.0 / (u * u)
            } else {
                0.0
            }
        })
        .collect();
    let mut per_iteration = Vec::new();
    for (name, omega) in [("rw", 1.0), ("rw-eg", 0.8), ("rw-virtual", 0.0)] {
        let config = RwConfig {
            omega,
            threshold: 0.0,
            max_iterations: iterations,
            ..RwConfig::default()
        };
        let t = {
            let start = Instant::now();
            let r = random_walk(&g, &t, &impact, &config)?;
            std::hint::black_box(&r.scores);
            start.elapsed().as_secs_f64() / r.iterations as f64
        };
        println!(
            "{name:<11} {:.3} s an iteration ({iterations} iterations)",
            t
        );
        per_iteration.push(t);
    }
    println!(
        "rw-eg / rw: {:.2}×, rw-virtual / rw: {:.2}×",
        per_iteration[1] / per_iteration[0],
        per_iteration[2] / per_iteration[0]
    );
    Ok(())
}

/// `g` with `k` more out-links from page 0, spread evenly over the graph.
fn with_hub(g: &Csr, k: usize) -> Result<Csr> {
    let n = g.num_nodes();
    let step = (n / (k + 1)).max(1);
    let mut first: Vec<u32> = (1..=k).map(|i| ((i * step) % n) as u32).collect();
    first.extend_from_slice(g.successors(0));
    first.sort_unstable();
    first.dedup();
    let mut offsets = Vec::with_capacity(n + 1);
    let mut succ = Vec::with_capacity(g.num_arcs() as usize + first.len());
    offsets.push(0u64);
    succ.extend_from_slice(&first);
    offsets.push(succ.len() as u64);
    for i in 1..n {
        succ.extend_from_slice(g.successors(i));
        offsets.push(succ.len() as u64);
    }
    Csr::from_parts(offsets, succ)
}
