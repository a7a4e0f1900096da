//! What the frontier's test modules share: a deterministic random graph to crawl and the
//! policies' configuration.

use crawlrank_frontier::{Impacts, PolicyConfig};
use crawlrank_graph::Csr;

/// Every policy's configuration for a crawl of `n` pages in batches of `batch`.
pub fn config(batch: u64, n: u64) -> PolicyConfig {
    PolicyConfig {
        batch,
        expected_pages: n,
        total_pages: n,
        rng_seed: 7,
        // A synthetic search log for rw and rw-eg (the other policies ignore it): every
        // fifth page has an impact.
        impact: Some(Impacts::new(
            (0..n)
                .map(|v| if v % 5 == 0 { (v % 7) as f64 } else { 0.0 })
                .collect(),
        )),
        ..PolicyConfig::default()
    }
}

/// A deterministic random graph with `n` nodes and about `n·d` arcs, skewed in-degrees.
pub fn random_graph(n: usize, d: usize, seed: u64) -> Csr {
    let mut rng = crawlrank_rng::XorShift64::new(seed | 1);
    let mut next = || rng.next_u64();
    let mut arcs = Vec::new();
    for v in 0..n {
        let k = (next() % (2 * d as u64 + 1)) as usize;
        for _ in 0..k {
            // Skewed targets, so in-degrees differ.
            let t = (next() % n as u64) * (next() % n as u64) / n as u64;
            arcs.push((v as u32, t as u32));
        }
    }
    Csr::from_arcs(n, &arcs)
}
