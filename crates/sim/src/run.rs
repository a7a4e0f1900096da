//! The instrumented crawl loop: SPEC §2's loop with timing and memory accounting.

use crate::reference::Reference;
use anyhow::{ensure, Result};
use crawlrank_frontier::{Frontier, PageId, PolicyConfig, PolicyKind};
use crawlrank_graph::Csr;
use std::time::{Duration, Instant};

/// How to simulate.
#[derive(Debug, Clone)]
pub struct SimConfig {
    /// `K`; `None` means `ceil(R / 72)`.
    pub batch: Option<u64>,
    /// Seed of the `random` policy.
    pub rng_seed: u64,
    /// L1 threshold of the batch policies' PageRanks.
    pub batch_pagerank_threshold: f64,
}

impl Default for SimConfig {
    fn default() -> Self {
        Self {
            batch: None,
            rng_seed: 0,
            batch_pagerank_threshold: PolicyConfig::default().batch_pagerank_threshold,
        }
    }
}

/// One policy's simulated crawl.
#[derive(Debug, Clone)]
pub struct PolicyRun {
    pub policy: PolicyKind,
    /// Crawled pages, in crawl order.
    pub order: Vec<PageId>,
    /// The policy's final score of each crawled page, in crawl order (SPEC §4).
    pub final_scores: Vec<f64>,
    /// `K`.
    pub batch: u64,
    /// Time of the crawl loop (seeding to an empty frontier).
    pub crawl_time: Duration,
    /// Arcs scanned by the crawl loop (the out-links of every crawled page).
    pub arcs: u64,
    /// The largest the frontier was.
    pub peak_frontier: usize,
    /// The process's peak resident memory during this run (Linux only; `None` elsewhere).
    pub peak_rss_bytes: Option<u64>,
}

/// Crawls `graph` from `seeds` with `kind` until the frontier is empty. `progress` is called
/// with the number of pages crawled every 65,536 pages.
pub fn simulate(
    graph: &Csr,
    seeds: &[PageId],
    kind: PolicyKind,
    reference: &Reference,
    config: &SimConfig,
    progress: &mut dyn FnMut(u64),
) -> Result<PolicyRun> {
    let batch = config.batch.unwrap_or_else(|| reference.default_batch());
    ensure!(batch >= 1, "the batch size K must be at least 1");
    let policy_config = PolicyConfig {
        batch,
        expected_pages: reference.reachable,
        total_pages: graph.num_nodes() as u64,
        rng_seed: config.rng_seed,
        batch_pagerank_threshold: config.batch_pagerank_threshold,
        true_pagerank: kind
            .needs_true_pagerank()
            .then(|| reference.pagerank.clone()),
        ..PolicyConfig::default()
    };
    reset_peak_rss();
    let mut frontier = Frontier::with_policy(kind, &policy_config)?;
    let mut order = Vec::with_capacity(reference.reachable as usize);
    let mut arcs = 0u64;
    let start = Instant::now();
    frontier.seed(seeds);
    while let Some(p) = frontier.pop() {
        order.push(p);
        let links = graph.successors(p as usize);
        arcs += links.len() as u64;
        frontier.on_crawled(p, links);
        if order.len() & 0xFFFF == 0 {
            progress(order.len() as u64);
        }
    }
    let crawl_time = start.elapsed();
    progress(order.len() as u64);
    let final_scores = frontier.final_scores(&order);
    Ok(PolicyRun {
        policy: kind,
        order,
        final_scores,
        batch,
        crawl_time,
        arcs,
        peak_frontier: frontier.peak_len(),
        peak_rss_bytes: peak_rss(),
    })
}

/// Resets the kernel's resident-set high-water mark (`/proc/self/clear_refs`, Linux ≥ 4.0),
/// so that each policy's peak is its own.
fn reset_peak_rss() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// The resident-set high-water mark (`VmHWM`), in bytes.
pub fn peak_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}
