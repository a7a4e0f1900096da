//! HITS hubs and authorities (docs/algorithms.md §5), the ranking the community-seeds method extracts
//! bipartite cores from.
//!
//! Each iteration computes `h = A·a` (a hub is as good as the authorities it links to) and
//! then `a = Aᵀ·h` with the new hubs (an authority is as good as the hubs linking to it), and
//! normalises each vector to unit **L2** norm, as in Kleinberg's original formulation: the
//! iteration is the power method on `AAᵀ` and `AᵀA`, and L2 normalisation is what makes the
//! limit their principal unit eigenvectors. Only the order of the scores matters to the seed
//! extraction, and it is the same under any normalisation. The authority vector starts
//! uniform.
//!
//! Both products are computed by pulling — `h` over the graph's successor lists, `a` over the
//! transpose's — so each page is written by one thread only and no atomics are needed.
//!
//! A page of a graph without arcs has hub and authority 0 (the products vanish and the
//! normalisation leaves the zero vector alone).

use anyhow::{ensure, Result};
use crawlrank_graph::Csr;
use rayon::prelude::*;

/// Pages per parallel task: enough work to amortise scheduling.
const GRAIN: usize = 4096;

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

/// HITS of `graph`, whose transpose is `transpose`.
pub fn hits(graph: &Csr, transpose: &Csr, config: &HitsConfig) -> Result<HitsResult> {
    let n = graph.num_nodes();
    ensure!(
        transpose.num_nodes() == n && transpose.num_arcs() == graph.num_arcs(),
        "the transpose has {} pages and {} arcs but the graph {n} and {}",
        transpose.num_nodes(),
        transpose.num_arcs(),
        graph.num_arcs()
    );
    if let Some(t) = config.tolerance {
        ensure!(t >= 0.0, "the HITS tolerance must be non-negative, got {t}");
    }
    let mut hubs = vec![0.0; n];
    let mut authorities = if n == 0 {
        Vec::new()
    } else {
        vec![1.0 / (n as f64).sqrt(); n]
    };
    let mut next_hubs = vec![0.0; n];
    let mut next_auth = vec![0.0; n];
    let mut iterations = 0;
    let mut l1_change = 0.0;
    while iterations < config.iterations {
        multiply(graph, &authorities, &mut next_hubs);
        multiply(transpose, &next_hubs, &mut next_auth);
        let dh = l1_distance(&hubs, &next_hubs);
        let da = l1_distance(&authorities, &next_auth);
        std::mem::swap(&mut hubs, &mut next_hubs);
        std::mem::swap(&mut authorities, &mut next_auth);
        iterations += 1;
        l1_change = dh.max(da);
        if config.tolerance.is_some_and(|t| l1_change < t) {
            break;
        }
    }
    Ok(HitsResult {
        hubs,
        authorities,
        iterations,
        l1_change,
    })
}

/// `out[i] = Σ_{j ∈ successors(i)} x[j]`, then `out` scaled to unit L2 norm.
fn multiply(g: &Csr, x: &[f64], out: &mut [f64]) {
    out.par_iter_mut()
        .enumerate()
        .with_min_len(GRAIN)
        .for_each(|(i, o)| *o = g.successors(i).iter().map(|&j| x[j as usize]).sum());
    let norm = out
        .par_iter()
        .with_min_len(GRAIN)
        .map(|v| v * v)
        .sum::<f64>()
        .sqrt();
    if norm > 0.0 {
        let inv = 1.0 / norm;
        out.par_iter_mut()
            .with_min_len(GRAIN)
            .for_each(|v| *v *= inv);
    }
}

fn l1_distance(a: &[f64], b: &[f64]) -> f64 {
    a.par_iter()
        .zip(b.par_iter())
        .with_min_len(GRAIN)
        .map(|(x, y)| (x - y).abs())
        .sum()
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
}
