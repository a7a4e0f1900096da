//! What every crawl order is measured against: the pages reachable from the seeds, ranked by
//! the PageRank of the full graph (docs/algorithms.md §4), which is computed once per graph and
//! kept in the graph's cache directory.

use anyhow::{ensure, Context, Result};
use crawlrank_frontier::{Impacts, PageId};
use crawlrank_graph::access::{SequentialSuccessors, Successors, Transpose};
use crawlrank_graph::BvWebGraph;
use std::sync::Arc;

/// The reachable set `R` and its PageRank ranking.
#[derive(Debug, Clone)]
pub struct Reference {
    /// PageRank of the full graph (docs/algorithms.md §4), one score per node.
    pub pagerank: Arc<Vec<f64>>,
    /// `hot_rank[v]`: the position of `v` among reachable pages sorted by PageRank
    /// (descending, ties by smaller id), so `hot_k = {v : hot_rank[v] < k}`; `u32::MAX` for
    /// pages not reachable from the seeds.
    pub hot_rank: Vec<u32>,
    /// `|R|`.
    pub reachable: u64,
    /// `Σ PR` over `R`.
    pub reachable_mass: f64,
    /// The impact of each page and its ideal, when the crawls are also measured by impact
    /// ([`with_impact`](Self::with_impact)).
    pub impact: Option<ImpactReference>,
}

/// What the impact measure compares a crawl with: the impact of each page, and at each
/// checkpoint `k` the most impact `k` pages of `R` can hold (docs/algorithms.md §6).
#[derive(Debug, Clone)]
pub struct ImpactReference {
    /// The impact of each page, by id (0 beyond its end).
    pub values: Impacts,
    /// `ideal[j]` = `Σ` of the `k_j` largest impacts in `R`, `k_j` = [`crate::checkpoints::checkpoints`]`(R)[j]`.
    pub ideal: Vec<f64>,
}

impl ImpactReference {
    /// The impact of `page` (0 if the vector does not reach it).
    #[inline]
    pub fn of(&self, page: PageId) -> f64 {
        self.values
            .values()
            .get(page as usize)
            .copied()
            .unwrap_or(0.0)
    }
}

impl Reference {
    /// The reference for crawls of `graph` from `seeds`, given the graph's PageRank.
    pub fn new<G: Successors>(
        graph: &G,
        pagerank: Arc<Vec<f64>>,
        seeds: &[PageId],
    ) -> Result<Self> {
        let n = graph.node_count();
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
            impact: None,
        })
    }

    /// Also measures crawls by the impact they gather (`impact`: by page id, values ≥ 0).
    /// An error when no page of `R` has impact (the measure would be 0/0).
    pub fn with_impact(mut self, impact: Impacts) -> Result<Self> {
        let mut values: Vec<f64> = self
            .hot_rank
            .iter()
            .enumerate()
            .filter(|(_, &r)| r != u32::MAX)
            .map(|(v, _)| impact.values().get(v).copied().unwrap_or(0.0))
            .collect();
        if let Some(bad) = values.iter().find(|v| !v.is_finite() || **v < 0.0) {
            anyhow::bail!("impacts must be finite and ≥ 0, not {bad}");
        }
        ensure!(
            values.iter().any(|&v| v > 0.0),
            "no page reachable from the seeds has a positive impact: the impact measure is undefined"
        );
        values.sort_unstable_by(|a, b| b.total_cmp(a));
        let mut ideal = Vec::with_capacity(crate::checkpoints::POINTS);
        let (mut sum, mut k) = (0.0, 0usize);
        for target in crate::checkpoints::checkpoints(self.reachable) {
            while (k as u64) < target {
                sum += values[k];
                k += 1;
            }
            ideal.push(sum);
        }
        self.impact = Some(ImpactReference {
            values: impact,
            ideal,
        });
        Ok(self)
    }

    /// The default batch size for crawls of `R` pages (docs/algorithms.md §2).
    pub fn default_batch(&self) -> u64 {
        crawlrank_frontier::default_batch(self.reachable)
    }
}

/// Which pages a crawl from `seeds` can reach (a BFS over out-links). Fails on an empty seed
/// set or a seed that is not a node.
pub fn reachable_from<G: Successors>(graph: &G, seeds: &[PageId]) -> Result<Vec<bool>> {
    let n = graph.node_count();
    ensure!(!seeds.is_empty(), "the seed set is empty");
    if let Some(&bad) = seeds.iter().find(|&&s| s as usize >= n) {
        anyhow::bail!(
            "seed {bad} is not a page of the graph (it has {n} pages: 0..{})",
            n.saturating_sub(1)
        );
    }
    Ok(crawlrank_graph::visit::reachable_from(graph, seeds))
}

/// The file the reference PageRank of `graph` is cached in.
fn reference_pagerank_path(graph: &BvWebGraph) -> std::path::PathBuf {
    graph.cache_dir().join("pagerank-0.85-1e-10.f64")
}

/// Whether the reference PageRank of `graph` is in its cache directory already (then a run
/// needs no transpose).
pub fn has_reference_pagerank(graph: &BvWebGraph) -> bool {
    std::fs::metadata(reference_pagerank_path(graph))
        .is_ok_and(|m| m.len() == graph.num_nodes() as u64 * 8)
}

/// The PageRank of the whole of `graph` (`csr` is it decoded, or the compressed graph
/// itself; docs/algorithms.md §4: damping 0.85, L1 change below 1e-10), read from the graph's
/// cache directory when an earlier run left it there, else computed and cached (written
/// atomically). Both forms compute the same vector bit for bit, so they share the cache.
pub fn reference_pagerank<G>(graph: &BvWebGraph, csr: &G) -> Result<Vec<f64>>
where
    G: SequentialSuccessors + Transpose,
{
    let path = reference_pagerank_path(graph);
    if let Ok(bytes) = std::fs::read(&path) {
        if bytes.len() == csr.node_count() * 8 {
            return Ok(bytes
                .chunks_exact(8)
                .map(|c| f64::from_le_bytes(c.try_into().expect("8 bytes")))
                .collect());
        }
    }
    let pr = crawlrank_rank::pagerank_of(csr, &Default::default(), None)
        .with_context(|| format!("PageRank of {}", graph.basename().display()))?
        .scores;
    crawlrank_graph::atomic::write_file(&path, |w| {
        use std::io::Write;
        for x in &pr {
            w.write_all(&x.to_le_bytes())?;
        }
        Ok(())
    })?;
    Ok(pr)
}
