//! What every crawl order is measured against: the pages reachable from the seeds, ranked by
//! the PageRank of the full graph.

use anyhow::{ensure, Result};
use crawlrank_frontier::PageId;
use crawlrank_graph::Csr;
use std::sync::Arc;

/// The reachable set `R` and its PageRank ranking.
#[derive(Debug, Clone)]
pub struct Reference {
    /// PageRank of the full graph (SPEC §4), one score per node.
    pub pagerank: Arc<Vec<f64>>,
    /// `hot_rank[v]`: the position of `v` among reachable pages sorted by PageRank
    /// (descending, ties by smaller id), so `hot_k = {v : hot_rank[v] < k}`; `u32::MAX` for
    /// pages not reachable from the seeds.
    pub hot_rank: Vec<u32>,
    /// `|R|`.
    pub reachable: u64,
    /// `Σ PR` over `R`.
    pub reachable_mass: f64,
}

impl Reference {
    /// The reference for crawls of `graph` from `seeds`, given the graph's PageRank.
    pub fn new(graph: &Csr, pagerank: Arc<Vec<f64>>, seeds: &[PageId]) -> Result<Self> {
        let n = graph.num_nodes();
        ensure!(
            pagerank.len() == n,
            "the PageRank has {} entries for {n} pages",
            pagerank.len()
        );
        let reach = reachable_from(graph, seeds)?;
        let mut ranked: Vec<u32> = (0..n as u32).filter(|&v| reach[v as usize]).collect();
        ranked.sort_unstable_by(|&a, &b| {
            pagerank[b as usize]
                .total_cmp(&pagerank[a as usize])
                .then(a.cmp(&b))
        });
        let mut hot_rank = vec![u32::MAX; n];
        for (i, &v) in ranked.iter().enumerate() {
            hot_rank[v as usize] = i as u32;
        }
        let reachable_mass = ranked.iter().map(|&v| pagerank[v as usize]).sum();
        Ok(Self {
            pagerank,
            hot_rank,
            reachable: ranked.len() as u64,
            reachable_mass,
        })
    }

    /// SPEC §2's default batch size: `ceil(R / 72)` (the FICA paper's 18M pages / 250,000).
    pub fn default_batch(&self) -> u64 {
        self.reachable.div_ceil(72).max(1)
    }
}

/// Which pages a crawl from `seeds` can reach (a BFS over out-links). Fails on an empty seed
/// set or a seed that is not a node.
pub fn reachable_from(graph: &Csr, seeds: &[PageId]) -> Result<Vec<bool>> {
    let n = graph.num_nodes();
    ensure!(!seeds.is_empty(), "the seed set is empty");
    if let Some(&bad) = seeds.iter().find(|&&s| s as usize >= n) {
        anyhow::bail!(
            "seed {bad} is not a page of the graph (it has {n} pages: 0..{})",
            n.saturating_sub(1)
        );
    }
    let mut seen = vec![false; n];
    let mut queue: Vec<PageId> = Vec::with_capacity(seeds.len());
    for &s in seeds {
        if !std::mem::replace(&mut seen[s as usize], true) {
            queue.push(s);
        }
    }
    let mut head = 0;
    while head < queue.len() {
        let v = queue[head];
        head += 1;
        for &w in graph.successors(v as usize) {
            if !std::mem::replace(&mut seen[w as usize], true) {
                queue.push(w);
            }
        }
    }
    Ok(seen)
}
