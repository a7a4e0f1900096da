//! The impact-weighted random walks of the RW paper (docs/algorithms.md §6): RW (eq. 5), and
//! RW-EG (eq. 10) on the graph enriched with virtual arcs between co-cited pages — computed
//! without ever building the virtual graph.
//!
//! The walk runs on the known graph `V = D ∪ F`: downloaded pages carry their out-links and an
//! impact (clicks, views), frontier pages have neither. A page passes its score to the pages it
//! links to in proportion to its impact factor `F_i`, so the frontier pages linked from pages that
//! users search for collect the most:
//!
//! `x(j) = αω·Σ_{i∈L⁻_j} F_i·x(i)/O(i) + α(1−ω)·Σ_{i≠j} F'_i·M'_ij·x(i) + (1−α)/n`
//!
//! with `ω = 1` for RW and `ω = 0` for RW-virtual. There is no dangling redistribution and no
//! renormalisation: the paper's Props. 1–2 show the iteration converges to
//! `(1−α)(I − α·MᵀΛ)⁻¹v` for RW (a test checks it against a dense solve).
//!
//! **Virtual arcs, implicitly.** `w_ij = |L⁻_i ∩ L⁻_j|` (`i ≠ j`) links pages that share an
//! in-linker; a page with 10⁴ out-links would make 10⁸ of them. With `z_i = F'_i·x(i)/s_i` (0 when
//! `s_i = 0`, `s_i = Σ_{p∈L⁻_i} (O(p) − 1)`) and `Z_p = Σ_{i: p→i} z_i`, the virtual term is
//! `y_j = Σ_{p∈L⁻_j} Z_p − indeg(j)·z_j` (the second part removes the pair `i = j`; clamped at 0
//! against rounding). So an RW-EG iteration is two passes over the arcs — `Z` gathered over the
//! out-lists, then one pull over the in-lists that sums the real and the virtual terms together
//! (an in-linker's two values are stored side by side, one random read for both) — against one
//! for RW: O(arcs) time, O(n) memory, and nothing special for a page with many out-links (a test
//! checks the implicit term against the materialised virtual graph).

use anyhow::{ensure, Result};
use crawlrank_graph::Csr;
use rayon::prelude::*;

/// Pages per parallel task.
const GRAIN: usize = 4096;

/// The walk's parameters (docs/algorithms.md §6 defaults).
#[derive(Debug, Clone, PartialEq)]
pub struct RwConfig {
    /// Damping `α` (0.85).
    pub alpha: f64,
    /// Exponent `γ` of the out-degree (and virtual-degree) factor (0; the paper used 1 on
    /// Wikipedia).
    pub gamma: f64,
    /// `ε` added to every impact, so pages without impact still pass a little (0.001).
    pub epsilon: f64,
    /// Weight `ω` of the real arcs against the virtual ones: 1 is RW, 0 is RW-virtual.
    pub omega: f64,
    /// Stop when the L1 change of an iteration is below this (1e-10).
    pub threshold: f64,
    /// Stop after this many iterations (1000).
    pub max_iterations: usize,
}

impl Default for RwConfig {
    fn default() -> Self {
        Self {
            alpha: 0.85,
            gamma: 0.0,
            epsilon: 0.001,
            omega: 1.0,
            threshold: 1e-10,
            max_iterations: 1000,
        }
    }
}

/// The scores of every page of `V` and how the iteration ended.
#[derive(Debug, Clone, PartialEq)]
pub struct RwResult {
    /// `x`, one score per page.
    pub scores: Vec<f64>,
    /// Iterations performed.
    pub iterations: usize,
    /// L1 change of the last iteration.
    pub l1_change: f64,
}

/// The random walk on `graph` (with its `transpose`) weighted by `impact` (one value per page, 0
/// for the frontier).
pub fn random_walk(
    graph: &Csr,
    transpose: &Csr,
    impact: &[f64],
    config: &RwConfig,
) -> Result<RwResult> {
    let n = graph.num_nodes();
    check(graph, transpose, impact, config)?;
    if n == 0 {
        return Ok(RwResult {
            scores: Vec::new(),
            iterations: 0,
            l1_change: 0.0,
        });
    }
    let real = config.omega > 0.0;
    let virtual_arcs = config.omega < 1.0;
    let factors = Factors::new(graph, transpose, impact, config, virtual_arcs);
    let teleport = (1.0 - config.alpha) / n as f64;
    let (a_real, a_virtual) = (
        config.alpha * config.omega,
        config.alpha * (1.0 - config.omega),
    );
    let mut x = vec![1.0 / n as f64; n];
    let mut next = vec![0.0; n];
    // RW: `passed[i] = F_i·x(i)/O(i)`, what page i hands each page it links to.
    // RW-EG: `pairs[p] = [F_p·x(p)/O(p), Z_p]` — the two values an in-linker hands on, side by side
    // so that one random read per arc serves both terms of the pull — and `z[i] = F'_i·x(i)/s_i`.
    let mut passed = if virtual_arcs {
        Vec::new()
    } else {
        vec![0.0; n]
    };
    let mut pairs = if virtual_arcs {
        vec![[0.0f64; 2]; n]
    } else {
        Vec::new()
    };
    let mut z = if virtual_arcs {
        vec![0.0; n]
    } else {
        Vec::new()
    };
    let mut iterations = 0;
    let mut l1_change = f64::INFINITY;
    while iterations < config.max_iterations && l1_change >= config.threshold {
        if !virtual_arcs {
            passed
                .par_iter_mut()
                .zip(x.par_iter().zip(factors.real.par_iter()))
                .with_min_len(GRAIN)
                .for_each(|(p, (&x, &c))| *p = c * x);
            next.par_iter_mut()
                .enumerate()
                .with_min_len(GRAIN)
                .for_each(|(j, v)| {
                    let sum: f64 = transpose
                        .successors(j)
                        .iter()
                        .map(|&i| passed[i as usize])
                        .sum();
                    *v = teleport + a_real * sum;
                });
        } else {
            pairs
                .par_iter_mut()
                .zip(z.par_iter_mut())
                .enumerate()
                .with_min_len(GRAIN)
                .for_each(|(i, (pair, z))| {
                    pair[0] = if real { factors.real[i] * x[i] } else { 0.0 };
                    *z = factors.virtual_[i] * x[i];
                });
            // Z_p = Σ_{i: p→i} z_i: a gather over the out-lists.
            pairs
                .par_iter_mut()
                .enumerate()
                .with_min_len(GRAIN)
                .for_each(|(p, pair)| {
                    pair[1] = graph.successors(p).iter().map(|&i| z[i as usize]).sum()
                });
            next.par_iter_mut()
                .enumerate()
                .with_min_len(GRAIN)
                .for_each(|(j, v)| {
                    let linkers = transpose.successors(j);
                    let (mut real_sum, mut virtual_sum) = (0.0, 0.0);
                    for &p in linkers {
                        let pair = pairs[p as usize];
                        real_sum += pair[0];
                        virtual_sum += pair[1];
                    }
                    let mut value = teleport;
                    if real {
                        value += a_real * real_sum;
                    }
                    // The pair i = j is not a virtual arc: j's own z came back once per linker.
                    let y = virtual_sum - linkers.len() as f64 * z[j];
                    *v = value + a_virtual * y.max(0.0);
                });
        }
        l1_change = l1_distance(&x, &next);
        std::mem::swap(&mut x, &mut next);
        iterations += 1;
    }
    Ok(RwResult {
        scores: x,
        iterations,
        l1_change,
    })
}

fn check(graph: &Csr, transpose: &Csr, impact: &[f64], config: &RwConfig) -> Result<()> {
    let n = graph.num_nodes();
    crate::ensure_transpose_fits(graph, transpose)?;
    ensure!(impact.len() == n, "{} impacts for {n} pages", impact.len());
    if let Some(bad) = impact.iter().position(|v| !v.is_finite() || *v < 0.0) {
        anyhow::bail!(
            "the impact of page {bad} is {}: impacts must be finite and non-negative",
            impact[bad]
        );
    }
    ensure!(
        config.alpha >= 0.0 && config.alpha < 1.0,
        "α must be in [0, 1), got {}",
        config.alpha
    );
    ensure!(
        (0.0..=1.0).contains(&config.omega),
        "ω must be in [0, 1], got {}",
        config.omega
    );
    ensure!(
        config.epsilon > 0.0 && config.epsilon.is_finite(),
        "ε must be positive, got {}",
        config.epsilon
    );
    ensure!(
        config.gamma.is_finite() && config.gamma >= 0.0,
        "γ must be non-negative, got {}",
        config.gamma
    );
    Ok(())
}

/// The per-page multipliers of `x`: `F_i/O(i)` for the real arcs and `F'_i/s_i` for the virtual
/// ones (0 where the page passes nothing).
struct Factors {
    real: Vec<f64>,
    virtual_: Vec<f64>,
}

impl Factors {
    fn new(
        graph: &Csr,
        transpose: &Csr,
        impact: &[f64],
        config: &RwConfig,
        virtual_arcs: bool,
    ) -> Self {
        let n = graph.num_nodes();
        let max_impact = impact.iter().fold(0.0f64, |m, &v| m.max(v)) + config.epsilon;
        let impact_factor = |i: usize| (impact[i] + config.epsilon) / max_impact;
        let degree_factor = |d: f64, max: f64| {
            if config.gamma == 0.0 {
                1.0
            } else if max == 0.0 {
                0.0
            } else {
                (d / max).powf(config.gamma)
            }
        };
        let max_out = (0..n).map(|i| graph.outdegree(i)).max().unwrap_or(0) as f64;
        let real = (0..n)
            .into_par_iter()
            .with_min_len(GRAIN)
            .map(|i| {
                let o = graph.outdegree(i) as f64;
                if o == 0.0 {
                    0.0
                } else {
                    impact_factor(i) * degree_factor(o, max_out) / o
                }
            })
            .collect();
        let virtual_ = if virtual_arcs {
            // s_i = Σ_{p ∈ L⁻_i} (O(p) − 1): how many virtual arcs leave i, with multiplicity.
            let s: Vec<f64> = (0..n)
                .into_par_iter()
                .with_min_len(GRAIN)
                .map(|i| {
                    transpose
                        .successors(i)
                        .iter()
                        .map(|&p| graph.outdegree(p as usize) as f64 - 1.0)
                        .sum()
                })
                .collect();
            let max_s = s.iter().fold(0.0f64, |m, &v| m.max(v));
            (0..n)
                .into_par_iter()
                .with_min_len(GRAIN)
                .map(|i| {
                    if s[i] <= 0.0 {
                        0.0
                    } else {
                        impact_factor(i) * degree_factor(s[i], max_s) / s[i]
                    }
                })
                .collect()
        } else {
            Vec::new()
        };
        Self { real, virtual_ }
    }
}

/// `‖a − b‖₁`, summed in fixed chunks (the same whatever the number of threads).
fn l1_distance(a: &[f64], b: &[f64]) -> f64 {
    let partial: Vec<f64> = a
        .par_chunks(GRAIN)
        .zip(b.par_chunks(GRAIN))
        .map(|(x, y)| x.iter().zip(y).map(|(x, y)| (x - y).abs()).sum::<f64>())
        .collect();
    partial.iter().sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crawlrank_rng::Xoshiro256StarStar;

    fn run(g: &Csr, impact: &[f64], config: &RwConfig) -> RwResult {
        random_walk(g, &g.transpose(), impact, config).unwrap()
    }

    /// Solves `A·x = b` by Gaussian elimination with partial pivoting.
    fn solve(mut a: Vec<Vec<f64>>, mut b: Vec<f64>) -> Vec<f64> {
        let n = b.len();
        for c in 0..n {
            let p = (c..n)
                .max_by(|&i, &j| a[i][c].abs().total_cmp(&a[j][c].abs()))
                .unwrap();
            a.swap(c, p);
            b.swap(c, p);
            let pivot = a[c].clone();
            for r in c + 1..n {
                let f = a[r][c] / pivot[c];
                for (x, p) in a[r][c..].iter_mut().zip(&pivot[c..]) {
                    *x -= f * p;
                }
                b[r] -= f * b[c];
            }
        }
        let mut x = vec![0.0; n];
        for r in (0..n).rev() {
            let s: f64 = (r + 1..n).map(|k| a[r][k] * x[k]).sum();
            x[r] = (b[r] - s) / a[r][r];
        }
        x
    }

    #[test]
    fn rw_equals_the_closed_form() {
        // D = {0, 1, 2, 3} with links and impacts, F = {4, 5}; 2 links to itself.
        let arcs = [
            (0, 1),
            (0, 4),
            (1, 2),
            (1, 5),
            (2, 2),
            (2, 0),
            (2, 4),
            (3, 4),
        ];
        let g = Csr::from_arcs(6, &arcs);
        let impact = [3.0, 0.0, 10.0, 1.0, 0.0, 0.0];
        for gamma in [0.0, 1.0] {
            let config = RwConfig {
                gamma,
                threshold: 1e-15,
                ..RwConfig::default()
            };
            let x = run(&g, &impact, &config).scores;
            // (I − α·MᵀΛ)·x = (1−α)·v, v = 1/n.
            let n = 6;
            let max_i = 10.0 + config.epsilon;
            let max_o = 3.0f64;
            let mut a = vec![vec![0.0; n]; n];
            for (j, row) in a.iter_mut().enumerate() {
                row[j] = 1.0;
            }
            for &(i, j) in &arcs {
                let o = g.outdegree(i as usize) as f64;
                let f = (impact[i as usize] + config.epsilon) / max_i * (o / max_o).powf(gamma);
                a[j as usize][i as usize] -= config.alpha * f / o;
            }
            let expected = solve(a, vec![(1.0 - config.alpha) / n as f64; n]);
            for (got, want) in x.iter().zip(&expected) {
                assert!(
                    (got - want).abs() < 1e-12,
                    "γ {gamma}: {x:?} vs {expected:?}"
                );
            }
        }
    }

    /// RW-EG by the definition: the virtual graph built explicitly, `w_ij = |L⁻_i ∩ L⁻_j|`.
    fn explicit_eg(g: &Csr, impact: &[f64], config: &RwConfig) -> Vec<f64> {
        let n = g.num_nodes();
        let t = g.transpose();
        let linkers: Vec<Vec<u32>> = (0..n).map(|i| t.successors(i).to_vec()).collect();
        let mut w = vec![vec![0.0; n]; n];
        for i in 0..n {
            for j in 0..n {
                if i != j {
                    w[i][j] = linkers[i].iter().filter(|p| linkers[j].contains(p)).count() as f64;
                }
            }
        }
        let s: Vec<f64> = w.iter().map(|r| r.iter().sum()).collect();
        let max_s = s.iter().fold(0.0f64, |m, &v| m.max(v));
        let max_o = (0..n).map(|i| g.outdegree(i)).max().unwrap() as f64;
        let max_i = impact.iter().fold(0.0f64, |m, &v| m.max(v)) + config.epsilon;
        let imp = |i: usize| (impact[i] + config.epsilon) / max_i;
        let f: Vec<f64> = (0..n)
            .map(|i| imp(i) * (g.outdegree(i) as f64 / max_o).powf(config.gamma))
            .collect();
        let f2: Vec<f64> = (0..n)
            .map(|i| {
                if s[i] == 0.0 {
                    0.0
                } else {
                    imp(i) * (s[i] / max_s).powf(config.gamma)
                }
            })
            .collect();
        let mut x = vec![1.0 / n as f64; n];
        for _ in 0..config.max_iterations {
            let mut next = vec![(1.0 - config.alpha) / n as f64; n];
            for i in 0..n {
                let o = g.outdegree(i) as f64;
                for &j in g.successors(i) {
                    next[j as usize] += config.alpha * config.omega * f[i] * x[i] / o;
                }
                if s[i] > 0.0 {
                    for j in 0..n {
                        next[j] +=
                            config.alpha * (1.0 - config.omega) * f2[i] * w[i][j] / s[i] * x[i];
                    }
                }
            }
            let change: f64 = x.iter().zip(&next).map(|(a, b)| (a - b).abs()).sum();
            x = next;
            if change < config.threshold {
                break;
            }
        }
        x
    }

    #[test]
    fn implicit_virtual_arcs_equal_the_materialised_virtual_graph() {
        let mut rng = Xoshiro256StarStar::new(7);
        for round in 0..20 {
            let n = 8 + (round % 5) as u32;
            let mut arcs = std::collections::BTreeSet::new();
            // A hub linking to almost everything, self-loops, and random arcs; the last two
            // pages are frontier pages (no out-links).
            for j in 0..n {
                if j % 4 != 1 {
                    arcs.insert((0, j));
                }
            }
            for _ in 0..3 * n {
                let (i, j) = (rng.below(n as u64 - 2) as u32, rng.below(n as u64) as u32);
                arcs.insert((i, j));
            }
            arcs.insert((2, 2));
            let arcs: Vec<_> = arcs.into_iter().collect();
            let g = Csr::from_arcs(n as usize, &arcs);
            let impact: Vec<f64> = (0..n)
                .map(|i| {
                    if i >= n - 2 || rng.below(3) == 0 {
                        0.0
                    } else {
                        rng.below(100) as f64
                    }
                })
                .collect();
            for (omega, gamma) in [(0.0, 0.0), (0.3, 1.0), (0.8, 0.0), (1.0, 1.0)] {
                let config = RwConfig {
                    omega,
                    gamma,
                    threshold: 1e-15,
                    ..RwConfig::default()
                };
                let implicit = run(&g, &impact, &config).scores;
                let explicit = explicit_eg(&g, &impact, &config);
                for (a, b) in implicit.iter().zip(&explicit) {
                    assert!((a - b).abs() < 1e-12, "ω {omega} γ {gamma}: {a} vs {b}");
                }
            }
        }
    }

    #[test]
    fn bad_parameters_and_impacts_are_errors() {
        let g = Csr::from_arcs(3, &[(0, 1), (1, 2)]);
        let t = g.transpose();
        let ok = RwConfig::default();
        assert!(random_walk(&g, &t, &[1.0, 0.0], &ok).is_err());
        assert!(random_walk(&g, &t, &[1.0, -1.0, 0.0], &ok).is_err());
        assert!(random_walk(&g, &t, &[1.0, f64::NAN, 0.0], &ok).is_err());
        let bad = RwConfig {
            omega: 1.5,
            ..RwConfig::default()
        };
        let e = random_walk(&g, &t, &[1.0, 0.0, 0.0], &bad).unwrap_err();
        assert!(e.to_string().contains("ω must be in [0, 1]"), "{e}");
        let r = random_walk(&Csr::from_arcs(0, &[]), &Csr::from_arcs(0, &[]), &[], &ok).unwrap();
        assert!(r.scores.is_empty());
    }
}
