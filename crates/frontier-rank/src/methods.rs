//! The methods that rank the frontier (docs/algorithms.md §6), each a score per frontier page
//! computed from what a crawler knows — the known graph and the impacts of downloaded pages —
//! and the tuning of RW-EG's `ω` on the training part.
//!
//! `random` (a seeded uniform score), `indegree` (in-links within `V`), `pagerank` (of the known
//! graph, `α = 0.85`, uniform teleport, dangling pages spread uniformly), `rw` (`ω = 1`), `rw-eg`
//! (the given or tuned `ω`) and `rw-virtual` (`ω = 0`) of `crawlrank_rank::random_walk`, with
//! frontier pages at impact 0. A ranking sorts by score, highest first, ties to the smaller
//! original id ([`rank_order`]).

use crate::known::KnownGraph;
use crate::measures::mean_over_1_to_10;
use anyhow::{bail, Result};
use crawlrank_rank::{random_walk, PageRankConfig, RwConfig};
use crawlrank_rng::Xoshiro256StarStar;

/// A frontier ranking method.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// Uniformly random scores (seeded).
    Random,
    /// In-degree in the known graph.
    Indegree,
    /// PageRank of the known graph.
    PageRank,
    /// RW (`ω = 1`).
    Rw,
    /// RW-EG (`0 ≤ ω ≤ 1`, given or tuned).
    RwEg,
    /// RW-virtual (`ω = 0`).
    RwVirtual,
    /// A regression model over the other methods' scores, fitted on the training part
    /// ([`crate::learned`]).
    Learned,
}

impl Method {
    /// Every method, in report order.
    pub const ALL: [Method; 7] = [
        Method::Random,
        Method::Indegree,
        Method::PageRank,
        Method::Rw,
        Method::RwEg,
        Method::RwVirtual,
        Method::Learned,
    ];

    /// The method's name on the command line and in outputs.
    pub fn name(self) -> &'static str {
        match self {
            Method::Random => "random",
            Method::Indegree => "indegree",
            Method::PageRank => "pagerank",
            Method::Rw => "rw",
            Method::RwEg => "rw-eg",
            Method::RwVirtual => "rw-virtual",
            Method::Learned => "learned",
        }
    }

    /// Parses one name.
    pub fn parse(name: &str) -> Result<Self> {
        let name = name.trim();
        match Self::ALL.iter().find(|m| m.name() == name) {
            Some(&m) => Ok(m),
            None => bail!(
                "unknown method '{name}' (expected {})",
                Self::ALL.map(Method::name).join(", ")
            ),
        }
    }

    /// Parses a comma-separated list (`all` for every method); repeats are kept once.
    pub fn parse_list(list: &str) -> Result<Vec<Self>> {
        if list.trim() == "all" {
            return Ok(Self::ALL.to_vec());
        }
        let mut out = Vec::new();
        for name in list.split(',').filter(|s| !s.trim().is_empty()) {
            let m = Self::parse(name)?;
            if !out.contains(&m) {
                out.push(m);
            }
        }
        if out.is_empty() {
            bail!("no method given");
        }
        Ok(out)
    }
}

/// The scores of `method` over `V` (compact ids) and the iterations its solver took (0 for
/// `random` and `indegree`). `observed` is the impact of each page of `V` (0 on `F`); `omega`
/// is used by `rw-eg` only. `learned` needs the training part: [`crate::evaluate`] computes it
/// with [`crate::learned`], and here it is an error.
pub fn scores(
    method: Method,
    known: &KnownGraph,
    observed: &[f64],
    rw: &RwConfig,
    omega: f64,
    rng_seed: u64,
) -> Result<(Vec<f64>, usize)> {
    let walk = |omega: f64| -> Result<(Vec<f64>, usize)> {
        let config = RwConfig {
            omega,
            ..rw.clone()
        };
        let r = random_walk(&known.graph, &known.transpose, observed, &config)?;
        Ok((r.scores, r.iterations))
    };
    match method {
        Method::Random => {
            let mut rng = Xoshiro256StarStar::new(rng_seed ^ 0x7261_6e64_6f6d);
            Ok((
                (0..known.len())
                    .map(|_| (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64)
                    .collect(),
                0,
            ))
        }
        Method::Indegree => Ok((
            (0..known.len())
                .map(|v| known.transpose.outdegree(v) as f64)
                .collect(),
            0,
        )),
        Method::PageRank => {
            let r = crawlrank_rank::pagerank(&known.graph, &PageRankConfig::default())?;
            Ok((r.scores, r.iterations))
        }
        Method::Rw => walk(1.0),
        Method::RwEg => walk(omega),
        Method::RwVirtual => walk(0.0),
        Method::Learned => bail!("learned scores need a training part (evaluate computes them)"),
    }
}

/// `items` (indices into `scores`) ordered by score, highest first, ties to the smaller index
/// (NaN below every number).
pub fn rank_order(items: &[usize], scores: &[f64]) -> Vec<usize> {
    let mut order = items.to_vec();
    order.sort_unstable_by(|&a, &b| {
        let (x, y) = (scores[a], scores[b]);
        match (x.is_nan(), y.is_nan()) {
            (true, false) => std::cmp::Ordering::Greater,
            (false, true) => std::cmp::Ordering::Less,
            _ => y.partial_cmp(&x).unwrap_or(std::cmp::Ordering::Equal),
        }
        .then(a.cmp(&b))
    });
    order
}

/// The values of `ω` tried by [`tune_omega`]: 0, 0.1, …, 1.
pub const OMEGAS: [f64; 11] = [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0];

/// Tunes `ω` on the `train` pages (indices into `truth`, over `V`): for each `ω` of [`OMEGAS`],
/// `score(ω)` ranks them and the criterion is the mean impact relative to the ideal over
/// `x = 1..10%` of the training part. With `bootstrap = B > 0` the criterion is the mean of that
/// over `B` bootstrap resamples of the training pages (drawn with replacement, xoshiro256**
/// seeded with `rng_seed`; the same resamples for every `ω`, so the curve compares like with
/// like); with 0, it is computed once on the training part itself. Returns the best `ω` (ties to
/// the larger `ω`; NaN criteria never win; 0.8, the §6 fallback, when every criterion is NaN)
/// and the curve `(ω, criterion)`.
pub fn tune_omega(
    train: &[usize],
    truth: &[f64],
    bootstrap: usize,
    rng_seed: u64,
    mut score: impl FnMut(f64) -> Result<Vec<f64>>,
) -> Result<(f64, Vec<(f64, f64)>)> {
    let samples: Vec<Vec<usize>> = if bootstrap == 0 {
        vec![train.to_vec()]
    } else {
        let mut rng = Xoshiro256StarStar::new(rng_seed ^ 0x626f_6f74_7374_7270);
        (0..bootstrap)
            .map(|_| {
                (0..train.len())
                    .map(|_| train[rng.below(train.len().max(1) as u64) as usize])
                    .collect()
            })
            .collect()
    };
    let mut curve = Vec::with_capacity(OMEGAS.len());
    for omega in OMEGAS {
        let s = score(omega)?;
        let values: Vec<f64> = samples
            .iter()
            .map(|sample| mean_over_1_to_10(&rank_order(sample, &s), truth))
            .filter(|v| !v.is_nan())
            .collect();
        let criterion = if values.is_empty() {
            f64::NAN
        } else {
            values.iter().sum::<f64>() / values.len() as f64
        };
        curve.push((omega, criterion));
    }
    let best = curve
        .iter()
        .filter(|(_, c)| !c.is_nan())
        .fold(None::<(f64, f64)>, |best, &(w, c)| match best {
            Some((_, bc)) if bc > c => best,
            _ => Some((w, c)),
        })
        .map_or(0.8, |(w, _)| w);
    Ok((best, curve))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crawlrank_graph::Csr;

    #[test]
    fn names_and_lists() {
        for m in Method::ALL {
            assert_eq!(Method::parse(m.name()).unwrap(), m);
        }
        assert_eq!(
            Method::parse_list("rw, rw-eg,rw").unwrap(),
            vec![Method::Rw, Method::RwEg]
        );
        assert_eq!(Method::parse_list("all").unwrap(), Method::ALL.to_vec());
        assert!(Method::parse_list("rw,learnt")
            .unwrap_err()
            .to_string()
            .contains("unknown method 'learnt'"));
        assert!(Method::parse_list(",").is_err());
    }

    #[test]
    fn ranking_ties_go_to_the_smaller_id() {
        let s = [1.0, 3.0, 3.0, f64::NAN, 2.0, 3.0];
        assert_eq!(rank_order(&[0, 1, 2, 3, 4, 5], &s), vec![1, 2, 5, 4, 0, 3]);
        assert_eq!(rank_order(&[5, 4, 2], &s), vec![2, 5, 4]);
    }

    #[test]
    fn tuning_picks_the_known_best_omega() {
        // A made-up score whose quality peaks at ω = 0.3: the right order (by truth) is taken
        // for ω = 0.3, a reversed one elsewhere.
        let truth: Vec<f64> = (0..100).map(|i| (100 - i) as f64).collect();
        let train: Vec<usize> = (0..100).collect();
        let peak = |w: f64| {
            Ok(if (w - 0.3).abs() < 1e-9 {
                truth.clone()
            } else {
                truth.iter().map(|t| -t).collect()
            })
        };
        let (best, curve) = tune_omega(&train, &truth, 0, 1, peak).unwrap();
        assert_eq!(best, 0.3);
        assert_eq!(curve.len(), 11);
        assert_eq!(curve[3], (0.3, 1.0));
        // With a bootstrap: the right order is perfect on every resample; the same seed gives
        // the same curve, another seed another one.
        let (best, boot) = tune_omega(&train, &truth, 30, 1, peak).unwrap();
        assert_eq!(best, 0.3);
        assert_eq!(boot[3], (0.3, 1.0));
        assert!(boot[0].1 < 0.2);
        assert_eq!(tune_omega(&train, &truth, 30, 1, peak).unwrap().1, boot);
        assert_ne!(tune_omega(&train, &truth, 30, 2, peak).unwrap().1, boot);
        // All tied: the largest ω.
        let (best, _) = tune_omega(&train, &truth, 0, 1, |_| Ok(truth.clone())).unwrap();
        assert_eq!(best, 1.0);
        // Nothing measurable: the fallback.
        let (best, _) = tune_omega(&train, &[0.0; 100], 5, 1, |_| Ok(truth.clone())).unwrap();
        assert_eq!(best, 0.8);
    }

    /// A constructed crawl where real arcs point to the impact and virtual arcs away from it:
    /// h (impact) links to the good frontier pages t₀..t₉; z (no impact) links to h and to poor
    /// pages s₀..s₉, which are therefore co-cited with h. RW (ω = 1) ranks every t first; the
    /// virtual walk (ω = 0) passes h's score to the s pages. Tuning picks ω = 1.
    #[test]
    fn tuning_on_a_walk_picks_real_arcs_when_virtual_ones_mislead() {
        // Compact ids: h = 0, z = 1, t = 2..12, s = 12..22.
        let mut arcs = vec![(1u32, 0u32)];
        for i in 0..10 {
            arcs.push((0, 2 + i));
            arcs.push((1, 12 + i));
        }
        let known = KnownGraph::compact(Csr::from_arcs(22, &arcs), 2);
        let mut observed = vec![0.0; 22];
        observed[0] = 100.0;
        let truth: Vec<f64> = (0..22)
            .map(|v| match v {
                2..=11 => 20.0,
                12.. => 1.0,
                _ => 0.0,
            })
            .collect();
        let train: Vec<usize> = (2..22).collect();
        let rw = RwConfig::default();
        let (best, curve) = tune_omega(&train, &truth, 20, 0, |w| {
            Ok(scores(Method::RwEg, &known, &observed, &rw, w, 0)?.0)
        })
        .unwrap();
        assert_eq!(best, 1.0, "{curve:?}");
        assert_eq!(curve[10].1, 1.0);
        assert!(curve[0].1 < 0.1, "{curve:?}");
    }
}
