//! PageRank as docs/algorithms.md §4 defines it, computed fast enough to be re-run on every crawl batch.
//!
//! The simulator ranks the full graph once per run (the `PR` every measure is judged
//! against) and the batch policies re-rank a growing graph up to 72 times, so this is the
//! hottest kernel of crawlrank. The vector computed is the one of docs/algorithms.md §4:
//!
//! > x = α·Pᵀx + α·(Σ_{d dangling} x_d)·u + (1 − α)·v
//!
//! with `P` the row-normalised adjacency matrix, `v` the teleport (preference) vector,
//! uniform by default, and `u` the uniform distribution: dangling pages spread their mass
//! uniformly even when a preference vector is given ("weakly preferential", as in LAW's
//! Java implementation). Scores sum to 1.
//!
//! # How it is computed
//!
//! The iteration *pulls* over the transpose: a page's new score is the sum of its
//! predecessors' scores divided by their outdegrees. Two choices make it fast:
//!
//! - the vector kept between sweeps is not `x` but `z_j = x_j / outdeg(j)` (`x_j` for a
//!   dangling page, which is never anyone's predecessor), so each arc costs one load and one
//!   add instead of a load, a load of `1/outdeg` and a multiply;
//! - updates are **Gauss–Seidel** (in place) within blocks of [`BLOCK`] consecutive pages:
//!   a page reads the new value of a predecessor in its own block. Blocks are processed in
//!   parallel with rayon in two phases, the even-numbered blocks, then the odd-numbered
//!   ones; a block reads pages of other blocks as last published, so an odd block sees the
//!   fresh values of its even neighbours. Web graphs in URL order keep most arcs inside a
//!   host, hence inside a block or between neighbouring blocks, so this converges in as
//!   few sweeps as a sequential Gauss–Seidel (64 on cnr-2000 at L1 change 1e-10, where
//!   NetworKit's power method needs 116) — and, unlike a Gauss–Seidel on a vector shared
//!   by racing threads, the result does not depend on thread timing: it is bit-for-bit the
//!   same whatever the number of threads. A self-loop is solved for exactly (the page's own
//!   term moved to the left-hand side), which matters on crawled graphs where many pages
//!   link to themselves.
//!
//! The dangling mass `Σ x_d` a phase uses is the one published before it.
//!
//! # Stopping rule
//!
//! After sweep `t` the iteration computes `‖x_t − x_{t−1}‖₁`, the L1 change between the
//! vectors before and after the whole sweep, and stops as soon as it is below
//! [`PageRankConfig::threshold`] or after [`PageRankConfig::max_iterations`] sweeps. The
//! result is then renormalised to sum exactly 1 (a Gauss–Seidel iterate is not exactly
//! stochastic before convergence). Note that webgraph-algo's `L1Norm` predicate instead tests
//! `α/(1−α)·‖x_t − x_{t−1}‖₁`, which is 5.67 times stricter at α = 0.85.

use anyhow::{bail, ensure, Context, Result};
use crawlrank_graph::access::{outdegrees_of, SequentialSuccessors, Transpose};
use crawlrank_graph::Csr;
use rayon::prelude::*;

/// Pages per Gauss–Seidel block. Fixed (not derived from the thread count) so that results
/// are the same on every machine; small enough to balance the load of two to dozens of
/// threads on graphs of a few hundred thousand pages, large enough that most arcs of a
/// URL-ordered web graph stay inside a block.
pub const BLOCK: usize = 4096;

/// What to compute and when to stop.
#[derive(Debug, Clone, PartialEq)]
pub struct PageRankConfig {
    /// The damping factor α, in `[0, 1)`.
    pub damping: f64,
    /// Stop when `‖x_t − x_{t−1}‖₁` falls below this.
    pub threshold: f64,
    /// Stop after this many sweeps even if the threshold was not reached (at least 1).
    pub max_iterations: usize,
    /// The teleport distribution `v` (non-negative, summing to 1, one entry per page);
    /// `None` means uniform. Dangling pages spread their mass uniformly either way.
    pub preference: Option<Vec<f64>>,
}

impl Default for PageRankConfig {
    fn default() -> Self {
        Self {
            damping: 0.85,
            threshold: 1e-10,
            max_iterations: 1000,
            preference: None,
        }
    }
}

/// The scores and how they were reached.
#[derive(Debug, Clone, PartialEq)]
pub struct PageRankResult {
    /// One score per page, summing to 1.
    pub scores: Vec<f64>,
    /// Sweeps performed.
    pub iterations: usize,
    /// `‖x_t − x_{t−1}‖₁` of the last sweep (0 for an empty graph).
    pub l1_change: f64,
    /// Whether `l1_change` fell below the threshold (rather than hitting the sweep limit).
    pub converged: bool,
}

/// A PageRank solver bound to one graph, given by its transpose. Build it once and call
/// [`run`](Self::run) as often as needed (different damping, preferences, warm starts).
///
/// The transpose is a [`Csr`] in memory or any other [`SequentialSuccessors`] (the
/// memory-mapped BVGraph of the transpose): each block of the sweep reads the predecessor
/// lists of its pages in order, and sums them in the same order either way, so the scores are
/// the same bit for bit.
#[derive(Clone)]
pub struct PageRank<'a, T = Csr> {
    transpose: &'a T,
    /// `1/outdeg(j)`, 0 for dangling pages.
    inv_outdeg: Vec<f64>,
    /// Whether page `i` links to itself.
    self_loop: Vec<bool>,
    dangling: usize,
}

impl<T: SequentialSuccessors> std::fmt::Debug for PageRank<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Not the per-page vectors: a solver is debug-printed inside errors and logs.
        f.debug_struct("PageRank")
            .field("nodes", &self.num_nodes())
            .field("arcs", &self.transpose.arc_count())
            .field("dangling", &self.dangling)
            .finish_non_exhaustive()
    }
}

impl<'a> PageRank<'a, Csr> {
    /// A solver for the graph whose transpose is `transpose`, counting the outdegrees from
    /// it (they are the transpose's in-degrees).
    pub fn from_transpose(transpose: &'a Csr) -> Self {
        Self::build(transpose, &transpose.indegrees())
    }
}

impl<'a, T: SequentialSuccessors> PageRank<'a, T> {
    /// A solver for the graph whose **transpose** is `transpose` (the successors of `i` in
    /// `transpose` are the pages linking to `i`) and whose outdegrees are `outdegrees`.
    /// Fails when the lengths or the arc counts disagree.
    pub fn new(transpose: &'a T, outdegrees: &[u32]) -> Result<Self> {
        let n = transpose.node_count();
        ensure!(
            outdegrees.len() == n,
            "{} outdegrees given for a transpose with {n} pages",
            outdegrees.len()
        );
        let total: u64 = outdegrees.iter().map(|&d| u64::from(d)).sum();
        ensure!(
            total == transpose.arc_count(),
            "the outdegrees sum to {total} but the transpose has {} arcs: they are not of the \
             same graph",
            transpose.arc_count()
        );
        Ok(Self::build(transpose, outdegrees))
    }

    fn build(transpose: &'a T, outdegrees: &[u32]) -> Self {
        let inv_outdeg: Vec<f64> = outdegrees
            .par_iter()
            .map(|&d| if d == 0 { 0.0 } else { 1.0 / f64::from(d) })
            .collect();
        let n = transpose.node_count();
        let self_loop: Vec<bool> = (0..n.div_ceil(BLOCK))
            .into_par_iter()
            .flat_map_iter(|b| {
                let mut block = Vec::with_capacity(BLOCK);
                transpose.for_each_in(b * BLOCK..n.min((b + 1) * BLOCK), |i, preds| {
                    block.push(preds.contains(&(i as u32)))
                });
                block
            })
            .collect();
        let dangling = outdegrees.iter().filter(|&&d| d == 0).count();
        Self {
            transpose,
            inv_outdeg,
            self_loop,
            dangling,
        }
    }

    /// Number of pages.
    pub fn num_nodes(&self) -> usize {
        self.transpose.node_count()
    }

    /// Number of dangling pages (outdegree 0).
    pub fn num_dangling(&self) -> usize {
        self.dangling
    }

    /// Computes PageRank, starting from `initial` when given (a warm start, e.g. the scores
    /// of a smaller graph padded with zeros; it is rescaled to sum 1), else from the
    /// teleport vector.
    pub fn run(&self, config: &PageRankConfig, initial: Option<&[f64]>) -> Result<PageRankResult> {
        let n = self.num_nodes();
        let alpha = config.damping;
        ensure!(
            (0.0..1.0).contains(&alpha),
            "the damping factor must be in [0, 1), got {alpha}"
        );
        ensure!(
            config.threshold >= 0.0,
            "the threshold must be a non-negative number, got {}",
            config.threshold
        );
        ensure!(
            config.max_iterations >= 1,
            "PageRank needs at least one iteration"
        );
        let preference = config.preference.as_deref();
        if let Some(v) = preference {
            check_distribution(v, n).context("invalid preference vector")?;
        }
        if n == 0 {
            if let Some(init) = initial {
                ensure!(
                    init.is_empty(),
                    "the initial vector has {} entries for 0 pages",
                    init.len()
                );
            }
            return Ok(PageRankResult {
                scores: Vec::new(),
                iterations: 0,
                l1_change: 0.0,
                converged: true,
            });
        }

        let inv_n = 1.0 / n as f64;
        let mut x: Vec<f64> = match initial {
            Some(init) => normalised(init, n).context("invalid initial vector")?,
            None => match preference {
                Some(v) => v.to_vec(),
                None => vec![inv_n; n],
            },
        };
        // From here on the working vector is z (see the module documentation).
        x.par_iter_mut()
            .zip(self.inv_outdeg.par_iter())
            .with_min_len(BLOCK)
            .for_each(|(x, &inv)| {
                if inv != 0.0 {
                    *x *= inv;
                }
            });
        // `published` holds the latest value of every page that other blocks may read;
        // `work` is where a block updates its own pages. They agree outside a phase.
        let mut published = x;
        let mut work = published.clone();
        let num_blocks = n.div_ceil(BLOCK);
        let mut block_dangling: Vec<f64> = published
            .par_chunks(BLOCK)
            .zip(self.inv_outdeg.par_chunks(BLOCK))
            .map(|(z, inv)| {
                z.iter()
                    .zip(inv)
                    .filter(|(_, &inv)| inv == 0.0)
                    .map(|(z, _)| z)
                    .sum()
            })
            .collect();
        let mut block_change = vec![0.0; num_blocks];

        let mut iterations = 0;
        let mut l1_change = f64::INFINITY;
        while iterations < config.max_iterations {
            // Even blocks first, then odd ones: an odd block reads the fresh values of its
            // even neighbours, so most arcs crossing a block boundary see an updated score, as
            // in a sequential sweep.
            for parity in 0..2 {
                // Summed in block order so that the result does not depend on scheduling.
                let dangling_mass: f64 = block_dangling.iter().sum();
                let sweep = Sweep::new(
                    self.transpose,
                    &self.inv_outdeg,
                    &self.self_loop,
                    preference,
                    alpha,
                    dangling_mass,
                    &published,
                );
                work.par_chunks_mut(BLOCK)
                    .zip(block_change.par_iter_mut())
                    .zip(block_dangling.par_iter_mut())
                    .enumerate()
                    .filter(|(b, _)| b % 2 == parity)
                    .for_each(|(b, ((block, change), dangling))| {
                        (*change, *dangling) = sweep.block(b * BLOCK, block);
                    });
                published
                    .par_chunks_mut(BLOCK)
                    .zip(work.par_chunks(BLOCK))
                    .enumerate()
                    .filter(|(b, _)| b % 2 == parity)
                    .for_each(|(_, (to, from))| to.copy_from_slice(from));
            }
            l1_change = block_change.iter().sum();
            iterations += 1;
            if converged(l1_change, iterations, config.threshold)? {
                break;
            }
        }

        finish(
            published,
            &self.inv_outdeg,
            iterations,
            l1_change,
            config.threshold,
        )
    }
}

/// The scores from the working vector `z` (see the module documentation): `x = z·outdeg`,
/// renormalised to sum exactly 1 (summed in page order).
pub(crate) fn finish(
    mut scores: Vec<f64>,
    inv_outdeg: &[f64],
    iterations: usize,
    l1_change: f64,
    threshold: f64,
) -> Result<PageRankResult> {
    scores
        .par_iter_mut()
        .zip(inv_outdeg.par_iter())
        .with_min_len(BLOCK)
        .for_each(|(z, &inv)| {
            if inv != 0.0 {
                *z /= inv;
            }
        });
    let sum: f64 = scores.iter().sum();
    ensure!(sum > 0.0, "PageRank produced a zero vector");
    let inv_sum = 1.0 / sum;
    scores
        .par_iter_mut()
        .with_min_len(BLOCK)
        .for_each(|s| *s *= inv_sum);
    Ok(PageRankResult {
        scores,
        iterations,
        l1_change,
        converged: l1_change < threshold,
    })
}

/// The read-only state of one sweep, shared by the blocks (and by the processes of
/// `distributed` (with the feature of that name), which run the very same block update).
pub(crate) struct Sweep<'s, T> {
    pub(crate) transpose: &'s T,
    pub(crate) inv_outdeg: &'s [f64],
    pub(crate) self_loop: &'s [bool],
    pub(crate) preference: Option<&'s [f64]>,
    pub(crate) alpha: f64,
    pub(crate) shared: f64,
    pub(crate) dangling_share: f64,
    pub(crate) published: &'s [f64],
}

impl<'s, T: SequentialSuccessors> Sweep<'s, T> {
    /// The sweep of one phase, given the dangling mass published before it.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        transpose: &'s T,
        inv_outdeg: &'s [f64],
        self_loop: &'s [bool],
        preference: Option<&'s [f64]>,
        alpha: f64,
        dangling_mass: f64,
        published: &'s [f64],
    ) -> Self {
        let inv_n = 1.0 / transpose.node_count() as f64;
        Sweep {
            transpose,
            inv_outdeg,
            self_loop,
            preference,
            alpha,
            // The uniform dangling share plus, without a preference vector, the teleport
            // share: the same for every page.
            shared: alpha * dangling_mass * inv_n + (1.0 - alpha) * inv_n,
            dangling_share: alpha * dangling_mass * inv_n,
            published,
        }
    }

    /// Updates the block of pages `lo..lo + block.len()` in place (Gauss–Seidel), reading
    /// other blocks' pages from `published`, and returns the block's share of the L1 change
    /// and of the new dangling mass.
    #[inline(never)]
    pub(crate) fn block(&self, lo: usize, block: &mut [f64]) -> (f64, f64) {
        let len = block.len();
        let published = self.published;
        let alpha = self.alpha;
        let mut change = 0.0;
        let mut dangling = 0.0;
        self.transpose.for_each_in(lo..lo + len, |i, preds| {
            let k = i - lo;
            let mut sigma = 0.0;
            for &j in preds {
                let j = j as usize;
                let local = j.wrapping_sub(lo);
                sigma += if local < len {
                    block[local]
                } else {
                    published[j]
                };
            }
            let inv = self.inv_outdeg[i];
            let z_old = block[k];
            let base = match self.preference {
                None => self.shared,
                Some(v) => self.dangling_share + (1.0 - alpha) * v[i],
            };
            let x_new = if self.self_loop[i] {
                // x = base + α·(σ' + x/outdeg), σ' without the loop: solve for x.
                (base + alpha * (sigma - z_old)) / (1.0 - alpha * inv)
            } else {
                base + alpha * sigma
            };
            if inv == 0.0 {
                change += (x_new - z_old).abs();
                dangling += x_new;
                block[k] = x_new;
            } else {
                change += (x_new - z_old / inv).abs();
                block[k] = x_new * inv;
            }
        });
        (change, dangling)
    }
}

/// Checks that `v` is a probability distribution over `n` pages.
pub(crate) fn check_distribution(v: &[f64], n: usize) -> Result<()> {
    let sum = checked_sum(v, n)?;
    ensure!(
        (sum - 1.0).abs() <= 1e-6,
        "its entries sum to {sum}, not 1 (tolerance 1e-6)"
    );
    Ok(())
}

/// `v` rescaled to sum 1, after checking it has `n` finite non-negative entries, not all 0.
/// Whether PageRank has converged after `iterations` sweeps, the last with the L1 change
/// `l1_change`: below `threshold`. A change that is not finite is an error (the scores
/// diverged), never a plausible wrong answer.
pub(crate) fn converged(l1_change: f64, iterations: usize, threshold: f64) -> Result<bool> {
    if !l1_change.is_finite() {
        bail!("PageRank diverged after {iterations} iterations (non-finite L1 change)");
    }
    Ok(l1_change < threshold)
}

fn normalised(v: &[f64], n: usize) -> Result<Vec<f64>> {
    let sum = checked_sum(v, n)?;
    ensure!(sum > 0.0, "all its entries are 0");
    Ok(v.iter().map(|x| x / sum).collect())
}

/// The sum of `v`, after checking it has `n` entries, all finite and non-negative.
fn checked_sum(v: &[f64], n: usize) -> Result<f64> {
    ensure!(
        v.len() == n,
        "it has {} entries but the graph has {n} pages",
        v.len()
    );
    if let Some(i) = v.iter().position(|x| !(x.is_finite() && *x >= 0.0)) {
        bail!(
            "entry {i} is {}: entries must be finite and non-negative",
            v[i]
        );
    }
    Ok(v.iter().sum())
}

/// The outdegree of every page of `graph`.
pub fn outdegrees(graph: &Csr) -> Vec<u32> {
    (0..graph.num_nodes())
        .map(|v| graph.outdegree(v) as u32)
        .collect()
}

/// [`pagerank_from`] on any graph that can give its transpose: a [`Csr`] (the transpose built
/// in memory) or the compressed graph (the transpose's BVGraph from the cache,
/// memory-mapped). The same scores, bit for bit, either way.
pub fn pagerank_of<G>(
    graph: &G,
    config: &PageRankConfig,
    initial: Option<&[f64]>,
) -> Result<PageRankResult>
where
    G: SequentialSuccessors + Transpose,
{
    let outdeg = outdegrees_of(graph);
    let transpose = graph.transposed()?;
    PageRank::new(&transpose, &outdeg)?.run(config, initial)
}

/// PageRank of `graph` (docs/algorithms.md §4), building its transpose. A caller that already holds the
/// transpose should use [`PageRank::new`] instead.
pub fn pagerank(graph: &Csr, config: &PageRankConfig) -> Result<PageRankResult> {
    pagerank_from(graph, config, None)
}

/// [`pagerank`] with a warm start (see [`PageRank::run`]).
pub fn pagerank_from(
    graph: &Csr,
    config: &PageRankConfig,
    initial: Option<&[f64]>,
) -> Result<PageRankResult> {
    let transpose = graph.transpose();
    PageRank::new(&transpose, &outdegrees(graph))?.run(config, initial)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crawlrank_testkit::{five_pages, FIVE_PAGES_PAGERANK};

    /// Plain power iteration, the textbook definition, as an oracle.
    fn power_iteration(g: &Csr, alpha: f64, v: &[f64]) -> Vec<f64> {
        let n = g.num_nodes();
        let mut x = v.to_vec();
        for _ in 0..3000 {
            let dangling: f64 = (0..n).filter(|&i| g.outdegree(i) == 0).map(|i| x[i]).sum();
            let mut y: Vec<f64> = (0..n)
                .map(|i| alpha * dangling / n as f64 + (1.0 - alpha) * v[i])
                .collect();
            for (i, xi) in x.iter().enumerate() {
                for &j in g.successors(i) {
                    y[j as usize] += alpha * xi / g.outdegree(i) as f64;
                }
            }
            x = y;
        }
        x
    }

    #[test]
    fn matches_reference_values() {
        let r = pagerank(&five_pages().csr(), &PageRankConfig::default()).unwrap();
        for (s, e) in r.scores.iter().zip(FIVE_PAGES_PAGERANK) {
            assert!(
                (s - e).abs() < 1e-6,
                "{:?} vs {FIVE_PAGES_PAGERANK:?}",
                r.scores
            );
        }
        assert!((r.scores.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        assert!(r.converged && r.l1_change < 1e-10 && r.iterations > 1);
    }

    #[test]
    fn preference_is_weakly_preferential() {
        let g = five_pages().csr();
        let v = vec![0.5, 0.1, 0.1, 0.2, 0.1];
        let cfg = PageRankConfig {
            preference: Some(v.clone()),
            threshold: 1e-14,
            ..Default::default()
        };
        let r = pagerank(&g, &cfg).unwrap();
        let oracle = power_iteration(&g, 0.85, &v);
        for (a, b) in r.scores.iter().zip(&oracle) {
            assert!((a - b).abs() < 1e-12, "{:?} vs {oracle:?}", r.scores);
        }
    }

    #[test]
    fn blocks_and_self_loops_agree_with_power_iteration() {
        // Larger than one block, with arcs crossing blocks, self-loops and dangling pages.
        let n = 3 * BLOCK + 17;
        let mut arcs = Vec::new();
        let mut s = 12345u64;
        for i in 0..n as u32 {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let deg = (s >> 60) as u32 % 5;
            for k in 0..deg {
                s = s
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let far = (s >> 33) as u32 % n as u32;
                let near = (i + k) % n as u32;
                arcs.push((i, if k % 2 == 0 { near } else { far }));
            }
        }
        let g = Csr::from_arcs(n, &arcs);
        let cfg = PageRankConfig {
            threshold: 1e-15,
            ..Default::default()
        };
        let r = pagerank(&g, &cfg).unwrap();
        let oracle = power_iteration(&g, 0.85, &vec![1.0 / n as f64; n]);
        let l1: f64 = r
            .scores
            .iter()
            .zip(&oracle)
            .map(|(a, b)| (a - b).abs())
            .sum();
        assert!(l1 < 1e-12, "L1 distance {l1}");
    }
}
