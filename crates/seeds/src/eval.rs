//! The evaluation of a seed set (docs/algorithms.md §5; the community-seeds paper's §3.5), always
//! on the **original** graph: not pruned, nothing removed.
//!
//! The paper's claim is that seeds taken from many dense communities reach good pages in few
//! steps. Three measures test it, each a breadth-first search from
//! [`crawlrank_graph::visit::Bfs`]:
//!
//! - [`bfs_by_depth`]: a BFS crawl from the seeds, and one from as many uniformly random pages —
//!   the pages and the mean PageRank at each depth (the paper's Figs. 7–12);
//! - [`core_distances`]: `d(Ci→Cj)`, the length of the shortest directed path from any page of
//!   core `Ci` to any page of core `Cj` — close cores mean a crawl from one community soon
//!   reaches the others (the paper reports a mean of 7.15 between 56 cores of UK-2002) …
//! - [`average_distance`]: … against the graph's average connected distance (14.9 there),
//!   estimated by BFS from a seeded random sample of sources.
//!
//! [`evaluate`] runs all of them for one seed set and returns an [`Evaluation`], which
//! [`report`] prints and writes (`summary.json`, `summary.csv`, SVG plots).
//!
//! The many-source measures (one BFS per core, one per sampled source) run on rayon's threads,
//! each thread with one `Bfs` of its own: 8 bytes per page of the graph per thread.

use crate::baseline::{distinct_pages, random_seeds};
use anyhow::{ensure, Result};
use crawlrank_graph::access::Successors;
use crawlrank_graph::visit::Bfs;
use crawlrank_rng::SplitMix64;
use rayon::prelude::*;
use std::collections::{HashMap, HashSet};
use std::ops::ControlFlow;

pub mod report;

/// One depth of a BFS crawl from a seed set.
#[derive(Debug, Clone, PartialEq)]
pub struct DepthStats {
    /// Distance from the nearest seed: 0 for the seeds themselves.
    pub depth: u32,
    /// Pages first reached at this depth.
    pub pages: u64,
    /// Their mean PageRank (the sum of their scores over `pages`).
    pub mean_pagerank: f64,
    /// Pages reached at this depth or before.
    pub cumulative_pages: u64,
}

/// A BFS crawl from `sources` (repeats count once): for each depth, from 0 (the seeds) to the
/// last depth that reaches a page, how many pages are first reached there and their mean
/// `pagerank`.
///
/// Panics if a source is not a page of `graph` or `pagerank` has fewer scores than it has pages
/// ([`evaluate`] checks both).
pub fn bfs_by_depth<G: Successors>(
    graph: &G,
    sources: &[u32],
    pagerank: &[f64],
) -> Vec<DepthStats> {
    // (pages, sum of PageRank) per depth; the BFS reports depths in order.
    let mut levels: Vec<(u64, f64)> = Vec::new();
    Bfs::new(graph.node_count()).visit(graph, sources, |v, d| {
        if d as usize == levels.len() {
            levels.push((0, 0.0));
        }
        let level = &mut levels[d as usize];
        level.0 += 1;
        level.1 += pagerank[v as usize];
    });
    let mut cumulative = 0;
    levels
        .into_iter()
        .enumerate()
        .map(|(d, (pages, sum))| {
            cumulative += pages;
            DepthStats {
                depth: d as u32,
                pages,
                mean_pagerank: sum / pages as f64,
                cumulative_pages: cumulative,
            }
        })
        .collect()
}

/// The directed distances between cores, and their summary over ordered pairs `i ≠ j`.
#[derive(Debug, Clone, PartialEq)]
pub struct CoreDistances {
    /// Pages of each core.
    pub sizes: Vec<usize>,
    /// `matrix[i][j]` = `d(Ci→Cj)`: the length of the shortest directed path from a page of
    /// core `i` to a page of core `j`; `None` when no path exists; `Some(0)` on the diagonal
    /// (which the summary leaves out).
    pub matrix: Vec<Vec<Option<u32>>>,
    /// Ordered pairs `i ≠ j` with a path.
    pub reachable_pairs: u64,
    /// Ordered pairs `i ≠ j` without one.
    pub unreachable_pairs: u64,
    /// The smallest distance over the reachable pairs (`None` without any).
    pub min: Option<u32>,
    /// The mean distance over the reachable pairs.
    pub mean: Option<f64>,
    /// The largest distance over the reachable pairs.
    pub max: Option<u32>,
}

/// Checks that `cores` can be measured on a graph of `nodes` pages: every page id is below
/// `nodes`, and no page is in two cores (as Extract-Seeds makes them). Errors name the core,
/// counted from 1 like the rounds of a `.cores.json`.
pub fn check_cores(cores: &[Vec<u32>], nodes: usize) -> Result<()> {
    let mut owner: HashMap<u32, usize> = HashMap::new();
    for (i, core) in cores.iter().enumerate() {
        for &p in core {
            ensure!(
                (p as usize) < nodes,
                "core {} holds page {p}, which is not a page of the graph (it has {nodes} pages)",
                i + 1
            );
            if let Some(&other) = owner.get(&p) {
                ensure!(
                    other == i,
                    "page {p} is in core {} and in core {}; cores must be disjoint",
                    other + 1,
                    i + 1
                );
            }
            owner.insert(p, i);
        }
    }
    Ok(())
}

/// The distance from every core to every other: one multi-source BFS from all the pages of
/// each core (its hubs and authorities), stopped as soon as it has reached every other
/// non-empty core. The BFSs run in parallel.
///
/// `cores` must pass [`check_cores`] (disjoint, ids in range): a page id out of range panics,
/// and a page in two cores is seen as a page of the later one only.
pub fn core_distances<G: Successors>(graph: &G, cores: &[Vec<u32>]) -> CoreDistances {
    const NO_CORE: u32 = u32::MAX;
    let k = cores.len();
    let mut core_of = vec![NO_CORE; graph.node_count()];
    for (i, core) in cores.iter().enumerate() {
        for &p in core {
            core_of[p as usize] = i as u32;
        }
    }
    let targets = cores.iter().filter(|c| !c.is_empty()).count();
    let rows: Vec<usize> = (0..k).collect();
    let matrix = with_bfs(graph, &rows, |bfs, &i| {
        distances_from(graph, bfs, cores, &core_of, targets, i).0
    });
    let off_diagonal = || {
        matrix
            .iter()
            .enumerate()
            .flat_map(|(i, row)| row.iter().enumerate().filter(move |&(j, _)| j != i))
            .map(|(_, d)| *d)
    };
    let reached: Vec<u32> = off_diagonal().flatten().collect();
    let pairs = (k * k.saturating_sub(1)) as u64;
    let sum: u64 = reached.iter().map(|&d| d as u64).sum();
    CoreDistances {
        sizes: cores.iter().map(Vec::len).collect(),
        reachable_pairs: reached.len() as u64,
        unreachable_pairs: pairs - reached.len() as u64,
        min: reached.iter().copied().min(),
        mean: (!reached.is_empty()).then(|| sum as f64 / reached.len() as f64),
        max: reached.iter().copied().max(),
        matrix,
    }
}

/// Row `i` of the distance matrix (see [`core_distances`]: `core_of` maps each page to its core
/// or `u32::MAX`, `targets` counts the non-empty cores), and the pages the BFS visited.
fn distances_from<G: Successors>(
    graph: &G,
    bfs: &mut Bfs,
    cores: &[Vec<u32>],
    core_of: &[u32],
    targets: usize,
    i: usize,
) -> (Vec<Option<u32>>, u64) {
    let mut row = vec![None; cores.len()];
    row[i] = Some(0);
    if cores[i].is_empty() || targets < 2 {
        return (row, 0);
    }
    let mut left = targets - 1;
    let visited = bfs.visit_until(graph, &cores[i], |v, d| {
        let j = core_of[v as usize] as usize;
        if j < row.len() && row[j].is_none() {
            row[j] = Some(d);
            left -= 1;
            if left == 0 {
                return ControlFlow::Break(());
            }
        }
        ControlFlow::Continue(())
    });
    (row, visited)
}

/// The graph's average connected distance, estimated from a sample of sources.
#[derive(Debug, Clone, PartialEq)]
pub struct AverageDistance {
    /// Sources a BFS ran from (every page when the sample asked for at least as many).
    pub sources: usize,
    /// Ordered pairs `(u, v)`, `u ≠ v`, `u` a source and `v` reachable from it.
    pub pairs: u64,
    /// The mean shortest-path length over those pairs (`None` without any).
    pub mean: Option<f64>,
    /// The longest of those shortest paths (0 without any).
    pub max: u32,
}

/// The mean shortest-path length over ordered pairs `(u, v)`, `u ≠ v`, with `v` reachable from
/// `u`, estimated by a BFS from each of `samples` distinct pages drawn uniformly by a SplitMix64
/// generator seeded with `rng_seed` (so the same seed gives the same estimate everywhere); with
/// `samples` at least the number of pages, every page is a source and the value is exact. The
/// BFSs run in parallel; the sums are integers, so the result does not depend on the threads.
pub fn average_distance<G: Successors>(
    graph: &G,
    samples: usize,
    rng_seed: u64,
) -> AverageDistance {
    let n = graph.node_count();
    let sources: Vec<u32> = if samples >= n {
        (0..n as u32).collect()
    } else {
        let mut rng = SplitMix64::new(rng_seed);
        distinct_pages(n, samples, |k| rng.below(k))
    };
    // (sum of distances, pairs, longest) per source.
    let per_source = with_bfs(graph, &sources, |bfs, &s| {
        let (mut sum, mut max) = (0u64, 0u32);
        let reached = bfs.visit(graph, &[s], |_, d| {
            sum += d as u64;
            max = max.max(d);
        });
        (sum, reached - 1, max)
    });
    let sum: u64 = per_source.iter().map(|r| r.0).sum();
    let pairs: u64 = per_source.iter().map(|r| r.1).sum();
    AverageDistance {
        sources: sources.len(),
        pairs,
        mean: (pairs > 0).then(|| sum as f64 / pairs as f64),
        max: per_source.iter().map(|r| r.2).max().unwrap_or(0),
    }
}

/// Runs `job` on each of `jobs` in parallel, one [`Bfs`] per worker, results in `jobs`' order.
fn with_bfs<G: Successors, J: Sync, T: Send>(
    graph: &G,
    jobs: &[J],
    job: impl Fn(&mut Bfs, &J) -> T + Sync,
) -> Vec<T> {
    if jobs.is_empty() {
        return Vec::new();
    }
    let workers = rayon::current_num_threads().clamp(1, jobs.len());
    jobs.par_chunks(jobs.len().div_ceil(workers))
        .flat_map_iter(|chunk| {
            let mut bfs = Bfs::new(graph.node_count());
            chunk.iter().map(|j| job(&mut bfs, j)).collect::<Vec<_>>()
        })
        .collect()
}

/// The parameters of an evaluation.
#[derive(Debug, Clone, PartialEq)]
pub struct EvalConfig {
    /// Seed of the random seed set ([`random_seeds`], the generator `crawlrank simulate
    /// --rng-seed` draws its random seeds with) and of the distance sample.
    pub rng_seed: u64,
    /// Sources of the average-distance estimate; 0 skips it.
    pub distance_samples: usize,
}

impl Default for EvalConfig {
    /// `rng_seed` 42, 100 distance samples (`crawlrank seeds-eval`'s defaults).
    fn default() -> Self {
        Self {
            rng_seed: 42,
            distance_samples: 100,
        }
    }
}

/// The step [`evaluate`] is about to take, for a progress display.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// The BFS crawl from the seeds (this many distinct seeds).
    SeedsBfs(usize),
    /// The BFS crawl from as many random pages.
    RandomBfs(usize),
    /// The distances between this many cores.
    CoreDistances(usize),
    /// The average distance, from this many sources at most.
    AverageDistance(usize),
}

impl std::fmt::Display for Step {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Step::SeedsBfs(n) => write!(f, "BFS by depth from the {n} seeds"),
            Step::RandomBfs(n) => write!(f, "BFS by depth from {n} random pages"),
            Step::CoreDistances(k) => write!(f, "distances between {k} cores"),
            Step::AverageDistance(s) => write!(f, "average distance from {s} sampled sources"),
        }
    }
}

/// Everything measured about one seed set.
#[derive(Debug, Clone, PartialEq)]
pub struct Evaluation {
    /// The graph's name, for reports.
    pub graph: String,
    /// Pages of the graph.
    pub nodes: u64,
    /// Arcs of the graph.
    pub arcs: u64,
    /// The seeds, repeats dropped, in their order.
    pub seeds: Vec<u32>,
    /// As many uniformly random pages: [`random_seeds`]`(nodes, seeds.len(), rng_seed)`.
    pub random: Vec<u32>,
    /// The generator seed of `random` and of the distance sample.
    pub rng_seed: u64,
    /// The BFS crawl from `seeds`, depth by depth.
    pub seeds_by_depth: Vec<DepthStats>,
    /// The BFS crawl from `random`, depth by depth.
    pub random_by_depth: Vec<DepthStats>,
    /// The distances between the cores the seeds came from, when they were given.
    pub cores: Option<CoreDistances>,
    /// The graph's average connected distance (`None` when `distance_samples` was 0).
    pub average: Option<AverageDistance>,
}

/// Evaluates `seeds` on `graph` (the original graph) with its `pagerank`: BFS crawls by depth
/// from the seeds and from as many random pages, the distances between `cores` (each core's
/// pages, e.g. [`CoreEntry::pages`](crate::file::CoreEntry::pages)) when given, and the
/// average distance. `name` labels the reports; `on_step` hears of each step before it starts.
///
/// Errors: an empty seed set, a seed or core page outside the graph, overlapping cores, or a
/// PageRank vector of the wrong length.
pub fn evaluate<G: Successors>(
    name: &str,
    graph: &G,
    pagerank: &[f64],
    seeds: &[u32],
    cores: Option<&[Vec<u32>]>,
    config: &EvalConfig,
    on_step: &mut dyn FnMut(Step),
) -> Result<Evaluation> {
    let n = graph.node_count();
    ensure!(
        pagerank.len() == n,
        "the PageRank vector has {} scores for a graph of {n} pages",
        pagerank.len()
    );
    ensure!(!seeds.is_empty(), "the seed set is empty");
    if let Some(&bad) = seeds.iter().find(|&&s| s as usize >= n) {
        anyhow::bail!("seed {bad} is not a page of the graph (it has {n} pages)");
    }
    if let Some(cores) = cores {
        check_cores(cores, n)?;
    }
    let mut seen = HashSet::with_capacity(seeds.len());
    let seeds: Vec<u32> = seeds.iter().copied().filter(|&s| seen.insert(s)).collect();
    on_step(Step::SeedsBfs(seeds.len()));
    let seeds_by_depth = bfs_by_depth(graph, &seeds, pagerank);
    let random = random_seeds(n, seeds.len(), config.rng_seed);
    on_step(Step::RandomBfs(random.len()));
    let random_by_depth = bfs_by_depth(graph, &random, pagerank);
    let cores = cores.map(|cores| {
        on_step(Step::CoreDistances(cores.len()));
        core_distances(graph, cores)
    });
    let average = (config.distance_samples > 0).then(|| {
        on_step(Step::AverageDistance(config.distance_samples.min(n)));
        average_distance(graph, config.distance_samples, config.rng_seed)
    });
    Ok(Evaluation {
        graph: name.to_string(),
        nodes: n as u64,
        arcs: graph.arc_count(),
        seeds,
        random,
        rng_seed: config.rng_seed,
        seeds_by_depth,
        random_by_depth,
        cores,
        average,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crawlrank_graph::Csr;

    /// Two cores joined by a path: core A = {0 (hub), 1, 2 (authorities)}, core B = {6 (hub),
    /// 7 (authority)}, the path 2 → 3 → 4 → 5 → 6, and page 8 linking into A, reached by
    /// nothing. Page 9 stands alone as a core C of one page.
    fn two_cores() -> Csr {
        Csr::from_arcs(
            10,
            &[
                (0, 1),
                (0, 2),
                (2, 3),
                (3, 4),
                (4, 5),
                (5, 6),
                (6, 7),
                (7, 0),
                (8, 0),
            ],
        )
    }

    #[test]
    fn bfs_by_depth_counts_pages_and_mean_pagerank() {
        let g = two_cores();
        let pr: Vec<f64> = (0..10).map(|p| p as f64).collect();
        // From 4 (given twice, counted once): 4 | 5 | 6 | 7 | 0 | 1, 2 | 3.
        let rows = bfs_by_depth(&g, &[4, 4], &pr);
        let got: Vec<(u32, u64, f64, u64)> = rows
            .iter()
            .map(|r| (r.depth, r.pages, r.mean_pagerank, r.cumulative_pages))
            .collect();
        assert_eq!(
            got,
            vec![
                (0, 1, 4.0, 1),
                (1, 1, 5.0, 2),
                (2, 1, 6.0, 3),
                (3, 1, 7.0, 4),
                (4, 1, 0.0, 5),
                (5, 2, 1.5, 7),
                (6, 1, 3.0, 8),
            ]
        );
        // Two sources at depth 0; 8 and 9 are never reached.
        let rows = bfs_by_depth(&g, &[8, 9], &pr);
        assert_eq!((rows[0].pages, rows[0].mean_pagerank), (2, 8.5));
        assert_eq!(rows.last().unwrap().cumulative_pages, 10);
    }

    #[test]
    fn core_distances_are_exact_with_unreachable_pairs() {
        let g = two_cores();
        let cores = vec![vec![0, 1, 2], vec![6, 7], vec![9]];
        check_cores(&cores, 10).unwrap();
        let d = core_distances(&g, &cores);
        // A → B: 2 → 3 → 4 → 5 → 6 (4 arcs); B → A: 7 → 0 (1 arc, from 7 at depth 0).
        assert_eq!(
            d.matrix,
            vec![
                vec![Some(0), Some(4), None],
                vec![Some(1), Some(0), None],
                vec![None, None, Some(0)],
            ]
        );
        assert_eq!(d.sizes, vec![3, 2, 1]);
        assert_eq!((d.reachable_pairs, d.unreachable_pairs), (2, 4));
        assert_eq!((d.min, d.mean, d.max), (Some(1), Some(2.5), Some(4)));
    }

    #[test]
    fn core_distance_bfs_stops_once_every_core_is_reached() {
        // A long tail after the two cores: the BFS from core 0 must not walk it.
        let mut arcs = vec![(0, 1), (1, 2), (2, 3)];
        arcs.extend((3..1000).map(|v| (v, v + 1)));
        let g = Csr::from_arcs(1001, &arcs);
        let cores = vec![vec![0], vec![2]];
        let mut core_of = vec![u32::MAX; 1001];
        (core_of[0], core_of[2]) = (0, 1);
        let mut bfs = Bfs::new(g.num_nodes());
        let (row, visited) = distances_from(&g, &mut bfs, &cores, &core_of, 2, 0);
        assert_eq!((row, visited), (vec![Some(0), Some(2)], 3));
        // From core 1 nothing is found: the whole tail is walked.
        let (row, visited) = distances_from(&g, &mut bfs, &cores, &core_of, 2, 1);
        assert_eq!((row, visited), (vec![None, Some(0)], 999));
        let d = core_distances(&g, &cores);
        assert_eq!(d.matrix, vec![vec![Some(0), Some(2)], vec![None, Some(0)]]);
        // Without other cores, no BFS at all; an empty core is neither source nor target.
        let one = core_distances(&g, &[vec![5], vec![]]);
        assert_eq!(one.matrix, vec![vec![Some(0), None], vec![None, Some(0)]]);
        assert_eq!((one.reachable_pairs, one.unreachable_pairs), (0, 2));
        assert_eq!((one.min, one.mean, one.max), (None, None, None));
    }

    #[test]
    fn bad_cores_are_errors_naming_the_core() {
        let e = check_cores(&[vec![0], vec![10]], 10)
            .unwrap_err()
            .to_string();
        assert!(e.contains("core 2") && e.contains("page 10"), "{e}");
        let e = check_cores(&[vec![0, 1], vec![2, 1]], 10)
            .unwrap_err()
            .to_string();
        assert!(e.contains("core 1 and in core 2"), "{e}");
        check_cores(&[vec![0, 0]], 10).unwrap();
    }

    #[test]
    fn average_distance_of_a_cycle_is_exact_with_every_source() {
        // On a directed 5-cycle every page reaches the 4 others at distances 1, 2, 3, 4.
        let g = crawlrank_testkit::cycle(5).csr();
        let a = average_distance(&g, 100, 7);
        assert_eq!(a.sources, 5);
        assert_eq!(a.pairs, 20);
        assert_eq!(a.mean, Some(2.5));
        assert_eq!(a.max, 4);
        // A sample: the same from any source, and reproducible.
        let s = average_distance(&g, 2, 7);
        assert_eq!((s.sources, s.pairs, s.mean), (2, 8, Some(2.5)));
        // A path 0 → 1 → 2: pairs (0,1), (0,2), (1,2) at 1, 2, 1.
        let p = average_distance(&crawlrank_testkit::path(3).csr(), 3, 1);
        assert_eq!((p.pairs, p.mean, p.max), (3, Some(4.0 / 3.0), 2));
        // No arcs: no pairs.
        let none = average_distance(&Csr::from_arcs(3, &[]), 10, 1);
        assert_eq!((none.pairs, none.mean), (0, None));
    }

    #[test]
    fn a_sampled_average_is_reproducible() {
        let g = crawlrank_testkit::ring_with_chords(200, &[(7, 3)]).csr();
        let a = average_distance(&g, 10, 5);
        assert_eq!(a, average_distance(&g, 10, 5));
        assert_eq!(a.sources, 10);
        assert_eq!(a.pairs, 10 * 199);
    }

    #[test]
    fn evaluate_bundles_everything_and_checks_its_input() {
        let g = two_cores();
        let pr = vec![0.1; 10];
        let cores = vec![vec![0, 1, 2], vec![6, 7]];
        let mut steps = Vec::new();
        let e = evaluate(
            "g",
            &g,
            &pr,
            &[0, 6, 0],
            Some(&cores),
            &EvalConfig::default(),
            &mut |s| steps.push(s),
        )
        .unwrap();
        assert_eq!(e.seeds, vec![0, 6]);
        assert_eq!(e.random, random_seeds(10, 2, 42));
        assert_eq!(e.seeds_by_depth[0].pages, 2);
        assert_eq!(e.cores.as_ref().unwrap().matrix[0][1], Some(4));
        assert_eq!(e.average.as_ref().unwrap().sources, 10);
        assert_eq!(
            steps,
            vec![
                Step::SeedsBfs(2),
                Step::RandomBfs(2),
                Step::CoreDistances(2),
                Step::AverageDistance(10)
            ]
        );
        let run = |seeds: &[u32], cores: Option<&[Vec<u32>]>, pr: &[f64]| {
            evaluate(
                "g",
                &g,
                pr,
                seeds,
                cores,
                &EvalConfig::default(),
                &mut |_| {},
            )
            .unwrap_err()
            .to_string()
        };
        assert!(run(&[], None, &pr).contains("empty"));
        assert!(run(&[3, 10], None, &pr).contains("seed 10"));
        assert!(run(&[3], Some(&[vec![11]]), &pr).contains("core 1"));
        assert!(run(&[3], None, &pr[..9]).contains("9 scores"));
    }
}
