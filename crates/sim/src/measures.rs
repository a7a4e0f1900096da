//! The measures of a crawl order (docs/algorithms.md §4).

use crate::checkpoints::{checkpoints, POINTS};
use crate::reference::Reference;
use crate::run::PolicyRun;
use anyhow::Result;

/// One policy's curves and correlation.
#[derive(Debug, Clone, PartialEq)]
pub struct Measures {
    /// `k_j = ceil(j·R/100)`, `j = 1..=100`.
    pub checkpoints: Vec<u64>,
    /// `|first k crawled ∩ hot_k| / k` at each checkpoint (FICA §4's throughput).
    pub throughput: Vec<f64>,
    /// `Σ PR(first k crawled) / Σ PR(R)` at each checkpoint (RankMass-style coverage).
    pub mass: Vec<f64>,
    /// Mean PR of the pages crawled in each 1% window (Najork–Wiener).
    pub mean_pagerank: Vec<f64>,
    /// Kendall's τ_b between the policy's final scores and PR, over all crawled pages.
    pub kendall_tau: f64,
    /// With impacts ([`Reference::with_impact`]): `Σ impact(first k crawled) / Σ impact(the k
    /// pages of R with most impact)` at each checkpoint — the impact crawled relative to the
    /// ideal order (the RW paper's measure, docs/algorithms.md §6).
    pub impact: Option<Vec<f64>>,
}

impl Measures {
    /// The value of `curve` at `percent` crawled (`percent` in 1..=100).
    pub fn at(curve: &[f64], percent: usize) -> f64 {
        curve[percent.clamp(1, POINTS) - 1]
    }
}

/// Measures a crawl order against the reference.
pub fn measure(run: &PolicyRun, reference: &Reference) -> Result<Measures> {
    let order = &run.order;
    let r = reference.reachable;
    anyhow::ensure!(
        order.len() as u64 == r,
        "{} crawled {} pages but {r} are reachable",
        run.policy,
        order.len()
    );
    let ks = checkpoints(r);
    let pr = &reference.pagerank;

    // hits(k) = |{i < k : hot_rank(order[i]) < k}| grows by at most two as k grows by one:
    // the page crawled k-th if its hot rank is ≤ k, and the page of hot rank k if it was
    // crawled before position k. `pos_of_rank` gives the latter in O(1).
    let mut pos_of_rank = vec![0u32; r as usize];
    for (i, &p) in order.iter().enumerate() {
        pos_of_rank[reference.hot_rank[p as usize] as usize] = i as u32;
    }
    let mut throughput = Vec::with_capacity(POINTS);
    let mut mass = Vec::with_capacity(POINTS);
    let mut mean_pagerank = Vec::with_capacity(POINTS);
    let (mut hits, mut k, mut prefix, mut window_sum, mut window_start) =
        (0u64, 0u64, 0.0f64, 0.0f64, 0u64);
    let mut impact = reference
        .impact
        .as_ref()
        .map(|i| (i, 0.0f64, Vec::with_capacity(POINTS)));
    for (j, &target) in ks.iter().enumerate() {
        while k < target {
            let p = order[k as usize];
            if u64::from(reference.hot_rank[p as usize]) <= k {
                hits += 1;
            }
            if u64::from(pos_of_rank[k as usize]) < k {
                hits += 1;
            }
            prefix += pr[p as usize];
            window_sum += pr[p as usize];
            if let Some((i, gathered, _)) = &mut impact {
                *gathered += i.of(p);
            }
            k += 1;
        }
        if let Some((i, gathered, curve)) = &mut impact {
            let ideal = i.ideal[j];
            curve.push(if ideal > 0.0 { *gathered / ideal } else { 0.0 });
        }
        throughput.push(if k == 0 { 0.0 } else { hits as f64 / k as f64 });
        mass.push(if reference.reachable_mass > 0.0 {
            prefix / reference.reachable_mass
        } else {
            0.0
        });
        let width = k - window_start;
        mean_pagerank.push(if width == 0 {
            0.0
        } else {
            window_sum / width as f64
        });
        window_sum = 0.0;
        window_start = k;
    }
    let truth: Vec<f64> = order.iter().map(|&p| pr[p as usize]).collect();
    let kendall_tau = crawlrank_rank::kendall_tau_b(&run.final_scores, &truth)?;
    Ok(Measures {
        checkpoints: ks,
        throughput,
        mass,
        mean_pagerank,
        kendall_tau,
        impact: impact.map(|(_, _, curve)| curve),
    })
}
