//! One simulated crawl: the frontier's crawl loop (`crawlrank_frontier::drive`, written out) over a known graph, with timing
//! and memory accounting.

use crate::policy::SimPolicy;
use crate::reference::Reference;
use anyhow::{ensure, Result};
use crawlrank_frontier::{Frontier, Impacts, PageId, Policy, PolicyConfig};
use crawlrank_graph::access::Successors;
use std::ops::ControlFlow;
use std::time::{Duration, Instant};

/// How to simulate.
#[derive(Debug, Clone)]
pub struct SimConfig {
    /// `K`; `None` means `ceil(R / 72)`.
    pub batch: Option<u64>,
    /// Seed of the `random` policy.
    pub rng_seed: u64,
    /// L1 threshold of the batch policies' PageRanks (and of `rw`'s and `rw-eg`'s walks).
    pub batch_pagerank_threshold: f64,
    /// The impact of each page (the search log of docs/algorithms.md §6): `rw` and `rw-eg`
    /// need it, and with it every policy is also measured by the impact it crawls.
    pub impact: Option<Impacts>,
    /// `rw-eg`'s ω.
    pub omega: f64,
    /// The walks' γ.
    pub gamma: f64,
    /// FICA's (and IECA's, `fica-plus`'s) β in `α = exp(−β·t)`.
    pub beta: f64,
    /// IECA's (and `fica-plus`'s) δ before the first reorder.
    pub delta_initial: f64,
    /// How far δ falls over the crawl: `δ = delta_initial − delta_slope·min(1, crawled/R)`.
    pub delta_slope: f64,
    /// The percentages of `R` crawled the table and `summary.json`'s `*_at` report.
    pub percents: Vec<usize>,
}

impl Default for SimConfig {
    fn default() -> Self {
        Self {
            batch: None,
            rng_seed: 0,
            batch_pagerank_threshold: PolicyConfig::BATCH_PAGERANK_THRESHOLD,
            impact: None,
            omega: PolicyConfig::OMEGA,
            gamma: PolicyConfig::GAMMA,
            beta: PolicyConfig::BETA,
            delta_initial: PolicyConfig::DELTA_INITIAL,
            delta_slope: PolicyConfig::DELTA_SLOPE,
            percents: crate::checkpoints::TABLE_PERCENTS.to_vec(),
        }
    }
}

impl SimConfig {
    /// The policies' parameters as `summary.json` records them.
    pub fn parameters(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("beta", self.beta),
            ("delta_initial", self.delta_initial),
            ("delta_slope", self.delta_slope),
        ]
    }
}

/// One policy's simulated crawl.
#[derive(Debug, Clone)]
pub struct PolicyRun {
    /// The policy that crawled.
    pub policy: SimPolicy,
    /// Crawled pages, in crawl order.
    pub order: Vec<PageId>,
    /// The policy's final score of each crawled page, in crawl order (docs/algorithms.md §4).
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

/// Crawls `graph` from `seeds` with `policy` until the frontier is empty. `progress` is called
/// with the number of pages crawled every 65,536 pages and at the end.
///
/// `graph` is a [`Csr`](crawlrank_graph::Csr) or the compressed graph: the loop is the
/// frontier's crawl loop (`crawlrank_frontier::drive`: seed, then pop and `on_crawled` until
/// the frontier is empty), written out here because a compressed graph decodes each page's
/// links into a buffer rather than lending a slice.
pub fn simulate<G: Successors>(
    graph: &G,
    seeds: &[PageId],
    policy: SimPolicy,
    reference: &Reference,
    config: &SimConfig,
    progress: &mut dyn FnMut(u64),
) -> Result<PolicyRun> {
    simulate_policy(
        graph,
        seeds,
        policy,
        &mut |c| policy.build(c, &reference.pagerank),
        reference,
        config,
        &mut |done| {
            progress(done);
            ControlFlow::Continue(())
        },
    )
}

/// [`simulate`] with a policy its caller builds: `build` gets the [`PolicyConfig`] the
/// simulator would give a built-in policy (`K`, `R`, rng seed, β, …) and returns the policy,
/// which then crawls under the name `name` (usually [`SimPolicy::Given`]). This is how a
/// library embeds orderings of its own (the Python package's policies written in Python)
/// and measures them beside the built-in ones.
///
/// `progress` is called with the number of pages crawled every 65,536 pages and at the end;
/// when it breaks, the crawl stops and the run is an error. A policy whose `pop` returns
/// `None` early ends the crawl there: the run's order is then shorter than `R`, which
/// [`measure`](crate::measure) refuses.
pub fn simulate_policy<G: Successors>(
    graph: &G,
    seeds: &[PageId],
    name: SimPolicy,
    build: &mut dyn FnMut(&PolicyConfig) -> Result<Box<dyn Policy>>,
    reference: &Reference,
    config: &SimConfig,
    progress: &mut dyn FnMut(u64) -> ControlFlow<()>,
) -> Result<PolicyRun> {
    let batch = config.batch.unwrap_or_else(|| reference.default_batch());
    ensure!(batch >= 1, "the batch size K must be at least 1");
    let policy_config = PolicyConfig {
        batch,
        rng_seed: config.rng_seed,
        batch_pagerank_threshold: config.batch_pagerank_threshold,
        impact: config.impact.clone(),
        omega: config.omega,
        gamma: config.gamma,
        beta: config.beta,
        delta_initial: config.delta_initial,
        delta_slope: config.delta_slope,
        ..PolicyConfig::for_crawl(reference.reachable, graph.node_count() as u64)
    };
    reset_peak_rss();
    let mut frontier = Frontier::new(build(&policy_config)?, batch);
    let mut order = Vec::with_capacity(reference.reachable as usize);
    let mut arcs = 0u64;
    let mut stopped = false;
    let start = Instant::now();
    let mut buf = Vec::new();
    frontier.seed(seeds);
    while let Some(p) = frontier.pop() {
        let links = graph.successors_in(p as usize, &mut buf);
        frontier.on_crawled(p, links);
        order.push(p);
        arcs += links.len() as u64;
        if order.len() & 0xFFFF == 0 && progress(order.len() as u64).is_break() {
            stopped = true;
            break;
        }
    }
    let crawl_time = start.elapsed();
    ensure!(
        !stopped,
        "the crawl with {name} was stopped after {} pages",
        order.len()
    );
    ensure!(
        progress(order.len() as u64).is_continue(),
        "the crawl with {name} was stopped after {} pages",
        order.len()
    );
    let peak_frontier = frontier.peak_len();
    let (mut policy_state, pages) = frontier.into_parts();
    let final_scores = policy_state.final_scores(&order, &pages);
    Ok(PolicyRun {
        policy: name,
        order,
        final_scores,
        batch,
        crawl_time,
        arcs,
        peak_frontier,
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
