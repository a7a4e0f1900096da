//! HITS hubs and authorities (docs/algorithms.md §5 and §7.2), the ranking the community-seeds
//! method extracts bipartite cores from.
//!
//! Kleinberg's order: each iteration computes `a = Aᵀ·h` (an authority is as good as the hubs
//! linking to it), then `h = A·a` with the new authorities (a hub is as good as the authorities it
//! links to), and normalises each vector to unit **L2** norm: the iteration is the power method on
//! `AᵀA` and `AAᵀ`, and L2 normalisation is what makes the limits their principal unit
//! eigenvectors. The hub vector starts at `h = 1` (scaled to unit norm).
//!
//! [`hits_masked`] serves the seed extraction, which removes pages round after round: a removed
//! page keeps score 0, which is exactly removing it with all its arcs (an arc from a removed hub
//! adds `h = 0`, an arc into a removed authority adds `a = 0`), so the graph is never rebuilt. It
//! also starts from given vectors (a warm start from the last round).
//!
//! Both products are computed by pulling — `a` over the transpose's successor lists, `h` over the
//! graph's — so each page is written by one thread only and no atomics are needed.
//!
//! Each product applies the previous vector's normalisation as it sums and accumulates its own
//! sum of squares (in a fixed order: results do not depend on the number of threads), so an
//! iteration costs two passes over the arcs and nothing more; the vectors are scaled to unit norm
//! once, at the end.
//!
//! A page of a graph without arcs has hub and authority 0 (the products vanish and the
//! normalisation leaves the zero vector alone). Values below [`FLUSH_BELOW`] are set to 0: they
//! carry no ranking information a double can use, and subnormal arithmetic is a hundred times
//! slower.

use anyhow::{ensure, Result};
use crawlrank_graph::access::SequentialSuccessors;
#[cfg(any(doc, test))]
use crawlrank_graph::Csr;
use rayon::prelude::*;

/// Pages per parallel task: enough work to amortise scheduling. Sums over a vector are summed
/// chunk by chunk in chunk order, which is what lets HITS across processes (each owning whole
/// chunks) reproduce these scores bit for bit.
pub(crate) const GRAIN: usize = 4096;

/// Scores below this (after normalisation to unit norm) are flushed to 0.
pub const FLUSH_BELOW: f64 = 1e-280;

/// How long to iterate.
#[derive(Debug, Clone, PartialEq)]
pub struct HitsConfig {
    /// Number of iterations (the paper's `HITSIterationCount`, 60 by default).
    pub iterations: usize,
    /// Stop early when both vectors change by less than this in L1 norm in one iteration.
    pub tolerance: Option<f64>,
}

impl Default for HitsConfig {
    fn default() -> Self {
        Self {
            iterations: 60,
            tolerance: None,
        }
    }
}

/// Hub and authority scores, each of unit L2 norm (or all 0).
#[derive(Debug, Clone, PartialEq)]
pub struct HitsResult {
    /// Hub score of every page.
    pub hubs: Vec<f64>,
    /// Authority score of every page.
    pub authorities: Vec<f64>,
    /// Iterations performed.
    pub iterations: usize,
    /// L1 change of the larger-changing vector in the last iteration.
    pub l1_change: f64,
}

/// HITS of `graph`, whose transpose is `transpose`, from `h = 1`.
///
/// `graph` and `transpose` are [`Csr`]s in memory or compressed graphs
/// ([`SequentialSuccessors`]); the scores are the same bit for bit.
pub fn hits<G: SequentialSuccessors, T: SequentialSuccessors>(
    graph: &G,
    transpose: &T,
    config: &HitsConfig,
) -> Result<HitsResult> {
    let n = graph.node_count();
    let start = vec![1.0; n];
    hits_masked(graph, transpose, config, None, start)
}

/// HITS of `graph` without the pages marked in `removed` (and their arcs), starting from the hub
/// vector `hubs` (any non-negative scale; removed pages are zeroed). Used warm, with the last
/// round's hubs, by the seed extraction.
pub fn hits_masked<G: SequentialSuccessors, T: SequentialSuccessors>(
    graph: &G,
    transpose: &T,
    config: &HitsConfig,
    removed: Option<&[bool]>,
    mut hubs: Vec<f64>,
) -> Result<HitsResult> {
    let n = graph.node_count();
    crate::ensure_transpose_fits(graph, transpose)?;
    ensure!(
        hubs.len() == n,
        "the starting hub vector has {} entries for {n} pages",
        hubs.len()
    );
    if let Some(r) = removed {
        ensure!(
            r.len() == n,
            "the removal mask has {} entries for {n} pages",
            r.len()
        );
    }
    if let Some(t) = config.tolerance {
        ensure!(t >= 0.0, "the HITS tolerance must be non-negative, got {t}");
    }
    ensure!(
        hubs.iter().all(|v| v.is_finite() && *v >= 0.0),
        "the starting hub vector must be finite and non-negative"
    );
    if let Some(r) = removed {
        hubs.par_iter_mut()
            .zip(r.par_iter())
            .with_min_len(GRAIN)
            .for_each(|(h, &gone)| {
                if gone {
                    *h = 0.0
                }
            });
    }
    let mut v = Vectors::start(hubs);
    let mut iterations = 0;
    let mut l1_change = 0.0;
    while iterations < config.iterations {
        let auth_scale = inverse_norm(multiply(
            transpose,
            &v.hubs,
            v.hub_scale,
            removed,
            &mut v.next_auth,
        ));
        let hub_scale = inverse_norm(multiply(
            graph,
            &v.next_auth,
            auth_scale,
            removed,
            &mut v.next_hubs,
        ));
        // The change is measured when it can stop the loop, and in the last iteration.
        if config.tolerance.is_some() || iterations + 1 == config.iterations {
            let (dh, da) = v.changes(0..n, hub_scale, auth_scale);
            l1_change = dh.iter().sum::<f64>().max(da.iter().sum());
        }
        v.advance(hub_scale, auth_scale);
        iterations += 1;
        if config.tolerance.is_some_and(|t| l1_change < t) {
            break;
        }
    }
    if iterations == 0 {
        // No iteration asked for: the authorities of the starting hubs, so both vectors agree.
        v.auth_scale = inverse_norm(multiply(
            transpose,
            &v.hubs,
            v.hub_scale,
            removed,
            &mut v.authorities,
        ));
    }
    Ok(v.finish(iterations, l1_change))
}

/// HITS's vectors between products (those of one process's pages, across processes). They are
/// kept unscaled: `hubs · hub_scale` is the unit hub vector. Each product applies the last
/// scale while it sums and returns its own sum of squares, so an iteration is two passes over
/// the arcs and no pass of its own for normalisation.
pub(crate) struct Vectors {
    pub(crate) hubs: Vec<f64>,
    pub(crate) authorities: Vec<f64>,
    pub(crate) hub_scale: f64,
    pub(crate) auth_scale: f64,
    /// The products being computed.
    pub(crate) next_hubs: Vec<f64>,
    pub(crate) next_auth: Vec<f64>,
}

impl Vectors {
    /// From the starting hubs (any non-negative scale), without authorities yet.
    pub(crate) fn start(hubs: Vec<f64>) -> Self {
        let n = hubs.len();
        Vectors {
            hub_scale: inverse_norm(sum_of_squares(&hubs)),
            hubs,
            authorities: vec![0.0; n],
            auth_scale: 0.0,
            next_hubs: vec![0.0; n],
            next_auth: vec![0.0; n],
        }
    }

    /// The L1 changes the next vectors (scaled by `hub_scale` and `auth_scale`) make to the
    /// hubs and the authorities over `pages` (whole [`GRAIN`]-page chunks from a multiple of
    /// it), chunk by chunk in chunk order.
    pub(crate) fn changes(
        &self,
        pages: std::ops::Range<usize>,
        hub_scale: f64,
        auth_scale: f64,
    ) -> (Vec<f64>, Vec<f64>) {
        let hubs = l1_chunks(
            &self.hubs[pages.clone()],
            self.hub_scale,
            &self.next_hubs[pages.clone()],
            hub_scale,
        );
        let auth = l1_chunks(
            &self.authorities[pages.clone()],
            self.auth_scale,
            &self.next_auth[pages],
            auth_scale,
        );
        (hubs, auth)
    }

    /// Makes the next vectors, scaled by `hub_scale` and `auth_scale`, the current ones.
    pub(crate) fn advance(&mut self, hub_scale: f64, auth_scale: f64) {
        std::mem::swap(&mut self.hubs, &mut self.next_hubs);
        std::mem::swap(&mut self.authorities, &mut self.next_auth);
        (self.hub_scale, self.auth_scale) = (hub_scale, auth_scale);
    }

    /// The unit vectors, after `iterations` with `l1_change` in the last.
    pub(crate) fn finish(mut self, iterations: usize, l1_change: f64) -> HitsResult {
        scale(&mut self.hubs, self.hub_scale);
        scale(&mut self.authorities, self.auth_scale);
        HitsResult {
            hubs: self.hubs,
            authorities: self.authorities,
            iterations,
            l1_change,
        }
    }
}

/// `out[i] = factor · Σ_{j ∈ successors(i)} x[j]` (0 for removed pages; values below
/// [`FLUSH_BELOW`] flushed to 0); returns `Σ out[i]²`, summed in a fixed order so that the result
/// does not depend on the number of threads.
fn multiply<G: SequentialSuccessors>(
    g: &G,
    x: &[f64],
    factor: f64,
    removed: Option<&[bool]>,
    out: &mut [f64],
) -> f64 {
    multiply_chunks(g, x, factor, removed, 0, out).iter().sum()
}

/// [`multiply`] for the pages `first..first + out.len()` only (`first` a multiple of
/// [`GRAIN`]), returning the sum of squares of each [`GRAIN`]-page chunk, in chunk order.
pub(crate) fn multiply_chunks<G: SequentialSuccessors>(
    g: &G,
    x: &[f64],
    factor: f64,
    removed: Option<&[bool]>,
    first: usize,
    out: &mut [f64],
) -> Vec<f64> {
    debug_assert!(first.is_multiple_of(GRAIN));
    out.par_chunks_mut(GRAIN)
        .enumerate()
        .map(|(c, chunk)| {
            let base = first + c * GRAIN;
            let mut squares = 0.0;
            g.for_each_in(base..base + chunk.len(), |i, succ| {
                let v = if removed.is_some_and(|r| r[i]) {
                    0.0
                } else {
                    factor * succ.iter().map(|&j| x[j as usize]).sum::<f64>()
                };
                let v = if v < FLUSH_BELOW { 0.0 } else { v };
                chunk[i - base] = v;
                squares += v * v;
            });
            squares
        })
        .collect()
}

/// `Σ v[i]²` in a fixed order.
pub(crate) fn sum_of_squares(v: &[f64]) -> f64 {
    let partial: Vec<f64> = v
        .par_chunks(GRAIN)
        .map(|c| c.iter().map(|x| x * x).sum::<f64>())
        .collect();
    partial.iter().sum()
}

/// `1/√squares`, or 0 for the zero vector (which stays zero).
pub(crate) fn inverse_norm(squares: f64) -> f64 {
    if squares > 0.0 {
        1.0 / squares.sqrt()
    } else {
        0.0
    }
}

/// `v · factor`, with values below [`FLUSH_BELOW`] flushed to 0.
fn scale(v: &mut [f64], factor: f64) {
    v.par_iter_mut().with_min_len(GRAIN).for_each(|x| {
        *x *= factor;
        if *x < FLUSH_BELOW {
            *x = 0.0;
        }
    });
}

/// `‖a·sa − b·sb‖₁` by [`GRAIN`]-page chunk, in chunk order.
fn l1_chunks(a: &[f64], sa: f64, b: &[f64], sb: f64) -> Vec<f64> {
    a.par_chunks(GRAIN)
        .zip(b.par_chunks(GRAIN))
        .map(|(x, y)| {
            x.iter()
                .zip(y)
                .map(|(x, y)| (x * sa - y * sb).abs())
                .sum::<f64>()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crawlrank_testkit::{star, SmallGraph};

    fn run(g: &SmallGraph) -> HitsResult {
        let g = g.csr();
        hits(&g, &g.transpose(), &HitsConfig::default()).unwrap()
    }

    #[test]
    fn star_hub_points_to_authorities() {
        let r = run(&star(3));
        assert!((r.hubs[0] - 1.0).abs() < 1e-12);
        for i in 1..4 {
            assert!(r.hubs[i].abs() < 1e-12);
            assert!((r.authorities[i] - 1.0 / 3f64.sqrt()).abs() < 1e-12);
        }
        assert!(r.authorities[0].abs() < 1e-12);
        assert_eq!(r.iterations, 60);
    }

    #[test]
    fn larger_core_takes_all_the_weight() {
        // K_{2,3} (hubs 0, 1; authorities 2, 3, 4; eigenvalue 6) beside a single arc 5 → 6
        // (eigenvalue 1): after 60 iterations the small component's share is (1/6)^60.
        let mut arcs = vec![(5, 6)];
        for h in 0..2 {
            for a in 2..5 {
                arcs.push((h, a));
            }
        }
        let r = run(&SmallGraph::new(7, arcs));
        for h in 0..2 {
            assert!((r.hubs[h] - 0.5f64.sqrt()).abs() < 1e-12);
        }
        for a in 2..5 {
            assert!((r.authorities[a] - 1.0 / 3f64.sqrt()).abs() < 1e-12);
        }
        assert!(r.hubs[5] < 1e-30 && r.authorities[6] < 1e-30);
        assert!(r.hubs[2..].iter().take(3).all(|&h| h == 0.0));
    }

    #[test]
    fn tolerance_stops_early_and_empty_graphs_work() {
        let g = star(2).csr();
        let cfg = HitsConfig {
            iterations: 60,
            tolerance: Some(1e-12),
        };
        let r = hits(&g, &g.transpose(), &cfg).unwrap();
        assert!(r.iterations < 60);
        let empty = Csr::from_arcs(0, &[]);
        let r = hits(&empty, &empty, &HitsConfig::default()).unwrap();
        assert!(r.hubs.is_empty() && r.authorities.is_empty());
        let arcless = Csr::from_arcs(3, &[]);
        let r = hits(&arcless, &arcless, &HitsConfig::default()).unwrap();
        assert_eq!(r.hubs, vec![0.0; 3]);
        assert!(hits(&g, &arcless, &HitsConfig::default()).is_err());
    }
    #[test]
    fn masking_a_page_removes_it_with_its_arcs() {
        // K_{2,3} (hubs 0, 1; authorities 2, 3, 4) beside K_{1,2} (hub 5; authorities 6, 7):
        // with hub 0 and hub 1 removed, the small core is all that is left.
        let mut arcs = vec![(5, 6), (5, 7)];
        for h in 0..2 {
            for a in 2..5 {
                arcs.push((h, a));
            }
        }
        let g = SmallGraph::new(8, arcs).csr();
        let t = g.transpose();
        let mut removed = vec![false; 8];
        removed[0] = true;
        removed[1] = true;
        let r = hits_masked(&g, &t, &HitsConfig::default(), Some(&removed), vec![1.0; 8]).unwrap();
        assert_eq!(&r.hubs[..5], &[0.0; 5]);
        assert_eq!(&r.authorities[..5], &[0.0; 5]);
        assert!((r.hubs[5] - 1.0).abs() < 1e-12);
        assert!((r.authorities[6] - 0.5f64.sqrt()).abs() < 1e-12);
        // The same as HITS of the graph rebuilt without them.
        let rebuilt = SmallGraph::new(8, vec![(5, 6), (5, 7)]).csr();
        let plain = hits(&rebuilt, &rebuilt.transpose(), &HitsConfig::default()).unwrap();
        assert_eq!(plain.hubs, r.hubs);
        assert_eq!(plain.authorities, r.authorities);
        // A warm start from the answer stays there; a bad start is an error.
        let warm = hits_masked(
            &g,
            &t,
            &HitsConfig::default(),
            Some(&removed),
            r.hubs.clone(),
        );
        assert_eq!(warm.unwrap().hubs, r.hubs);
        assert!(hits_masked(&g, &t, &HitsConfig::default(), None, vec![1.0; 3]).is_err());
        assert!(hits_masked(&g, &t, &HitsConfig::default(), None, vec![-1.0; 8]).is_err());
    }

    #[test]
    fn kleinberg_order_updates_authorities_first() {
        // One iteration from h = 1 on 0 → 1, 0 → 2, 3 → 2: a = Aᵀh = (0, 1, 2, 0)/√5, then
        // h = A·a = (3, 0, 0, 2)/√13.
        let g = SmallGraph::new(4, vec![(0, 1), (0, 2), (3, 2)]).csr();
        let cfg = HitsConfig {
            iterations: 1,
            tolerance: None,
        };
        let r = hits(&g, &g.transpose(), &cfg).unwrap();
        let s5 = 5f64.sqrt();
        let s13 = 13f64.sqrt();
        let close = |x: &[f64], y: &[f64]| x.iter().zip(y).all(|(a, b)| (a - b).abs() < 1e-15);
        assert!(close(&r.authorities, &[0.0, 1.0 / s5, 2.0 / s5, 0.0]));
        assert!(close(&r.hubs, &[3.0 / s13, 0.0, 0.0, 2.0 / s13]));
    }
}
