//! Extract-Seeds (docs/algorithms.md §5; the paper's Fig. 3): round after round, HITS on what is
//! left of the graph, one core from its scores, the core's best hub as a seed, and the core's
//! pages removed with all their arcs — until enough seeds or no arc is left.
//!
//! Removal is a mask ([`hits_masked`]): a removed page keeps score 0, which is the same as
//! deleting it with its arcs, so a round costs HITS's iterations over the arcs and the degrees of
//! the new core, never a copy of the graph.
//!
//! The rounds run on a **working copy** of the graph made once ([`WorkGraph`]): only the pages
//! with an arc, renumbered by decreasing degree. HITS is bound by random reads of the score
//! vectors (one per arc, 120 passes a round); on a web of 10^7 pages they are 80 MB each and miss
//! the cache on nearly every arc, while in degree order the pages most arcs touch share a few
//! megabytes. Every tie is still broken by the original id (the working copy keeps the map), and
//! each successor list keeps ascending order, so the cores are the same as on the original
//! numbering.
//!
//! Each round's HITS starts from the last round's hub vector (a warm start, as the spec asks):
//! the removed pages are zeroed, the rest rescaled to unit norm, and every remaining page gets a
//! floor of [`WARM_FLOOR`]`/√n`. The floor is our choice: without it a community whose scores
//! decayed to 0 in floating point in an earlier round (they shrink like `(λ₂/λ₁)^(2·iterations)`)
//! could never come back, and with it the start is still within `10⁻⁶` of the warm vector.

use crate::cores::{Core, CoreBuilder, CoreRule};
use crate::work_graph::WorkGraph;
use anyhow::{ensure, Context, Result};
use crawlrank_graph::{Csr, Hosts};
use crawlrank_rank::{hits_masked, HitsConfig};
use rayon::prelude::*;
use std::borrow::Cow;
use std::time::{Duration, Instant};

/// The uniform floor (in L2 norm) added to a warm start.
pub const WARM_FLOOR: f64 = 1e-6;

/// What Extract-Seeds needs.
#[derive(Debug, Clone, PartialEq)]
pub struct SeedsConfig {
    /// `SeedCount`: how many seeds to extract.
    pub count: usize,
    /// How each core grows.
    pub rule: CoreRule,
    /// HITS iterations per round (the paper's `HITSIterationCount`, 60).
    pub hits: HitsConfig,
}

impl SeedsConfig {
    /// Checks the parameters, with errors naming the option a user sets.
    pub fn validate(&self) -> Result<()> {
        ensure!(self.count > 0, "--count must be at least 1");
        match self.rule {
            CoreRule::CoverDensity {
                min_density,
                max_hubs,
            } => {
                ensure!(
                    min_density > 0.0 && min_density <= 100.0,
                    "--cover-density must be in (0, 100], got {min_density}"
                );
                ensure!(max_hubs > 0, "--max-hubs must be at least 1");
            }
            CoreRule::FixedSize { size, new_members } => {
                ensure!(size >= 2, "--core-size must be at least 2, got {size}");
                ensure!(new_members > 0, "--new-members must be at least 1");
            }
        }
        ensure!(
            self.hits.iterations > 0,
            "--hits-iterations must be at least 1"
        );
        if let Some(t) = self.hits.tolerance {
            ensure!(
                t.is_finite() && t >= 0.0,
                "--hits-tolerance must be a non-negative number, got {t}"
            );
        }
        Ok(())
    }
}

/// One round of Extract-Seeds: its core and what it cost.
#[derive(Debug, Clone, PartialEq)]
pub struct Round {
    /// 1 for the first round.
    pub round: usize,
    /// The core found (its seed, if it has a hub).
    pub core: Core,
    /// HITS iterations run this round.
    pub hits_iterations: usize,
    /// Time in HITS.
    pub hits_time: Duration,
    /// Time growing the core and removing it.
    pub core_time: Duration,
}

/// Why the extraction stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopReason {
    /// As many seeds as asked for.
    CountReached,
    /// No arc was left between the pages not yet removed.
    NoArcsLeft,
}

/// The seeds and the rounds that produced them.
#[derive(Debug, Clone, PartialEq)]
pub struct Extraction {
    /// The seeds, one per round that found a core with a hub, in round order.
    pub seeds: Vec<u32>,
    /// Every round, including those whose core had no hub.
    pub rounds: Vec<Round>,
    /// Why it stopped.
    pub stop: StopReason,
}

/// Extract-Seeds on `graph` (already pruned, if pruning is wanted). Calls `on_round` after each
/// round (for progress).
pub fn extract_seeds(
    graph: &Csr,
    config: &SeedsConfig,
    on_round: &mut dyn FnMut(&Round),
) -> Result<Extraction> {
    config.validate()?;
    let n = graph.num_nodes();
    ensure!(
        graph.num_arcs() > 0,
        "the graph has no arcs{}: there is no community to find",
        if n > 0 {
            " (after pruning, if pruned)"
        } else {
            ""
        }
    );
    let work = WorkGraph::new(graph)?;
    let m = work.global.len();
    let mut removed = vec![false; m];
    let mut builder = CoreBuilder::new(m);
    let mut start = vec![1.0; m];
    let mut seeds = Vec::new();
    let mut rounds = Vec::new();
    let stop = loop {
        if seeds.len() >= config.count {
            break StopReason::CountReached;
        }
        let t0 = Instant::now();
        let scores = hits_masked(
            &work.graph,
            &work.transpose,
            &config.hits,
            Some(&removed),
            start,
        )?;
        let hits_time = t0.elapsed();
        let t1 = Instant::now();
        let Some(best) = best_live(&scores.authorities, &removed, &work.global) else {
            break StopReason::NoArcsLeft;
        };
        let local = builder.extract(
            &work,
            &removed,
            &scores.hubs,
            &scores.authorities,
            best,
            config.rule,
        );
        for p in local.pages() {
            removed[p as usize] = true;
        }
        let core = to_global(&work, local);
        if let Some(s) = core.seed {
            seeds.push(s);
        }
        start = warm_start(scores.hubs, &removed);
        let round = Round {
            round: rounds.len() + 1,
            core,
            hits_iterations: scores.iterations,
            hits_time,
            core_time: t1.elapsed(),
        };
        on_round(&round);
        rounds.push(round);
    };
    Ok(Extraction {
        seeds,
        rounds,
        stop,
    })
}

/// `core` (in `work`'s numbering) in original ids.
fn to_global(work: &WorkGraph, mut core: Core) -> Core {
    let g = |p: &mut u32| *p = work.global[*p as usize];
    core.hubs.iter_mut().for_each(g);
    core.authorities.iter_mut().for_each(g);
    core.seed = core.seed.map(|p| work.global[p as usize]);
    core
}

/// The page of highest positive score that is not removed (ties: smaller original id), or
/// `None` when every score is 0 — no arc is left among the remaining pages.
fn best_live(scores: &[f64], removed: &[bool], global: &[u32]) -> Option<u32> {
    let (best, score) = scores
        .par_iter()
        .zip(removed.par_iter())
        .enumerate()
        .with_min_len(4096)
        .filter(|(_, (_, &gone))| !gone)
        .map(|(i, (&s, _))| (i, s))
        .reduce(
            || (usize::MAX, f64::NEG_INFINITY),
            |a, b| match a.1.total_cmp(&b.1) {
                std::cmp::Ordering::Greater => a,
                std::cmp::Ordering::Less => b,
                std::cmp::Ordering::Equal => {
                    if b.0 == usize::MAX || (a.0 != usize::MAX && global[a.0] < global[b.0]) {
                        a
                    } else {
                        b
                    }
                }
            },
        );
    (best != usize::MAX && score > 0.0).then_some(best as u32)
}

/// The next round's starting hubs: `hubs` without the removed pages, at unit norm, plus the
/// floor on every remaining page.
fn warm_start(mut hubs: Vec<f64>, removed: &[bool]) -> Vec<f64> {
    let live = removed.iter().filter(|&&r| !r).count().max(1);
    let floor = WARM_FLOOR / (live as f64).sqrt();
    // Summed in fixed chunks, so the start does not depend on the number of threads.
    let partial: Vec<f64> = hubs
        .par_chunks(4096)
        .zip(removed.par_chunks(4096))
        .map(|(h, r)| {
            h.iter()
                .zip(r)
                .map(|(&h, &r)| if r { 0.0 } else { h * h })
                .sum::<f64>()
        })
        .collect();
    let norm = partial.iter().sum::<f64>().sqrt();
    let scale = if norm > 0.0 { 1.0 / norm } else { 0.0 };
    hubs.par_iter_mut()
        .zip(removed.par_iter())
        .for_each(|(h, &r)| *h = if r { 0.0 } else { *h * scale + floor });
    hubs
}

/// Whether to drop the arcs within a host before HITS.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pruning {
    /// Prune when the graph has URLs (the paper's setting), otherwise not.
    Auto,
    /// Prune; an error if the graph has no URLs.
    SameHost,
    /// Keep every arc.
    None,
}

/// The graph HITS runs on, after pruning.
#[derive(Debug)]
pub struct Prepared<'a> {
    /// The (pruned) graph: borrowed when nothing was pruned, so no copy is made.
    pub graph: Cow<'a, Csr>,
    /// Whether arcs within a host were dropped.
    pub pruned: bool,
}

/// Prepares `csr` (the graph `graph` decoded) for the extraction: pruned as `pruning` asks. A
/// caller that has read the graph's URLs already passes them as `urls`, so they are not read
/// again for the hosts.
pub fn prepare<'a>(
    graph: &crawlrank_graph::BvWebGraph,
    csr: &'a Csr,
    pruning: Pruning,
    urls: Option<&[String]>,
) -> Result<Prepared<'a>> {
    let hosts_of_graph = || -> Result<Option<Hosts>> {
        Ok(match urls {
            Some(u) => Some(Hosts::from_urls(u)),
            None => graph.hosts()?,
        })
    };
    let hosts = match pruning {
        Pruning::None => None,
        Pruning::Auto => hosts_of_graph()?,
        Pruning::SameHost => Some(hosts_of_graph()?.with_context(|| {
            format!(
                "host pruning needs the pages' URLs, and {} has none (no .urls file); \
                 use --no-prune",
                graph.basename().display()
            )
        })?),
    };
    let pruned = match &hosts {
        Some(h) => Cow::Owned(crate::prune::prune_same_host(csr, h.host_of())?),
        None => Cow::Borrowed(csr),
    };
    Ok(Prepared {
        graph: pruned,
        pruned: hosts.is_some(),
    })
}
