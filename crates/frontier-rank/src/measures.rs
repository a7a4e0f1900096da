//! The measures of a frontier ranking (docs/algorithms.md §6, docs/frontier-rank.md), all on the
//! test part of the frontier.
//!
//! - **Impact relative to the ideal** at `x`: the true impact of a ranking's top `k = ⌈x·m⌉`
//!   pages (`m` test pages, at least one page) divided by the impact of the `k` pages of highest
//!   true impact. Undefined (NaN, `null` in JSON) when those `k` ideal pages have no impact.
//! - **Mean-PageRank ratio** at `x`: the PageRank (of the whole original graph) of the same `k`
//!   pages divided by that of the ideal's `k` pages — the ideal order being true impact, highest
//!   first, ties to the smaller original id. Equal `k` on both sides make it the ratio of means.
//! - **Frontier impact ratios** (the paper's eqs. 1–2, Tables 2–3): for a set `X` of downloaded
//!   pages, `r(X→F) = Σ_{p∈F linked from X} I(p) / |X|`, each frontier page counted once however
//!   many pages of `X` link to it; `X` = the pages of `D` with a positive (observed) impact, and
//!   those without. **With virtual arcs**, "linked from `X`" also takes the virtual arcs of §6:
//!   `x` and `p` are joined when they share an in-linker (`w_xp = |L⁻_x ∩ L⁻_p| > 0`, `x ≠ p`),
//!   so the pages reached are `{p ∈ F : x→p, x ∈ X} ∪ {p ∈ F : u→p, u→x, x ∈ X}` — the frontier
//!   pages linked from `X` or from an in-linker of `X`. Both sets are marked in one pass over the
//!   in-lists of `X` and the out-lists of `X` and its in-linkers: `O(arcs)`, `O(n)` memory.
//!   These use the true impact of the frontier pages of the whole frontier (train and test): the
//!   ratios describe the data set, not a ranking.

use crate::known::KnownGraph;
use serde_json::{json, Value};

/// The values of `x` at which the curves are measured, in per mille of the test frontier:
/// 0.2% to 2% by 0.2%, then 3% to 10% by 1% (1% and 2% belong to both of the paper's grids).
pub const PERMILLES: [u32; 18] = [
    2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 30, 40, 50, 60, 70, 80, 90, 100,
];

/// `k = ⌈permille·m/1000⌉`, at least 1 (0 only when `m = 0`).
pub fn top_count(m: usize, permille: u32) -> usize {
    if m == 0 {
        return 0;
    }
    (m * permille as usize).div_ceil(1000).clamp(1, m)
}

/// `Σ values[order[..k]] / Σ values[ideal[..k]]`; NaN when the denominator is 0.
pub fn relative_to_ideal(order: &[usize], ideal: &[usize], values: &[f64], k: usize) -> f64 {
    let sum = |o: &[usize]| o.iter().take(k).map(|&i| values[i]).sum::<f64>();
    let den = sum(ideal);
    if den > 0.0 {
        sum(order) / den
    } else {
        f64::NAN
    }
}

/// Impact relative to the ideal of a ranking `order` (indices into `truth`, best first) at
/// `permille`/1000 of its pages (see the [module documentation](self)).
pub fn impact_relative_to_ideal(order: &[usize], truth: &[f64], permille: u32) -> f64 {
    let k = top_count(order.len(), permille);
    let mut best: Vec<f64> = order.iter().map(|&i| truth[i]).collect();
    best.sort_unstable_by(|a, b| b.total_cmp(a));
    let den: f64 = best[..k].iter().sum();
    if den > 0.0 {
        order[..k].iter().map(|&i| truth[i]).sum::<f64>() / den
    } else {
        f64::NAN
    }
}

/// The mean of `impact_relative_to_ideal` over `x = 1..10%`, NaN terms skipped (NaN when all
/// are): the criterion `ω` is tuned by.
pub fn mean_over_1_to_10(order: &[usize], truth: &[f64]) -> f64 {
    let vals: Vec<f64> = (1..=10)
        .map(|p| impact_relative_to_ideal(order, truth, p * 10))
        .filter(|v| !v.is_nan())
        .collect();
    if vals.is_empty() {
        f64::NAN
    } else {
        vals.iter().sum::<f64>() / vals.len() as f64
    }
}

/// One point of a method's curve.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    /// `x` in per mille of the test frontier.
    pub permille: u32,
    /// `k`, the pages selected.
    pub pages: usize,
    /// Impact relative to the ideal.
    pub impact: f64,
    /// Mean-PageRank ratio (when the full graph's PageRank was given).
    pub pagerank: Option<f64>,
}

/// The curve of a ranking `order` against the `ideal` order (both indices into `truth` and
/// `pagerank`, best first) at every [`PERMILLES`].
pub fn curve(
    order: &[usize],
    ideal: &[usize],
    truth: &[f64],
    pagerank: Option<&[f64]>,
) -> Vec<Point> {
    PERMILLES
        .iter()
        .map(|&permille| {
            let k = top_count(order.len(), permille);
            Point {
                permille,
                pages: k,
                impact: relative_to_ideal(order, ideal, truth, k),
                pagerank: pagerank.map(|pr| relative_to_ideal(order, ideal, pr, k)),
            }
        })
        .collect()
}

/// `r(X→F)` for one set `X`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Ratio {
    /// `|X|`.
    pub pages: usize,
    /// Frontier pages linked from `X` (each once).
    pub frontier_pages: usize,
    /// Their total true impact.
    pub impact: f64,
    /// `impact / |X|` (NaN when `X` is empty).
    pub ratio: f64,
}

impl Ratio {
    /// As JSON (`null` for NaN).
    pub fn to_json(&self) -> Value {
        json!({"pages": self.pages, "frontier_pages": self.frontier_pages,
               "impact": self.impact, "ratio": num(self.ratio)})
    }
}

/// The frontier impact ratios (see the [module documentation](self)).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FrontierRatios {
    /// `X` = downloaded pages with impact, real arcs.
    pub with_impact: Ratio,
    /// `X` = downloaded pages without impact, real arcs.
    pub without_impact: Ratio,
    /// `X` = downloaded pages with impact, real and virtual arcs.
    pub with_impact_virtual: Ratio,
    /// `X` = downloaded pages without impact, real and virtual arcs.
    pub without_impact_virtual: Ratio,
}

/// The frontier impact ratios of `known`, with `observed[v]` the impact of downloaded page `v`
/// and `truth[v]` the true impact of frontier page `v` (compact ids; the other entries unused).
pub fn frontier_ratios(known: &KnownGraph, observed: &[f64], truth: &[f64]) -> FrontierRatios {
    let d = known.downloaded;
    let mut mark = vec![0u32; known.len()]; // epoch marks: one pass per ratio
    let mut epoch = 0u32;
    let mut ratio = |with: bool, virtual_arcs: bool| {
        epoch += 1;
        let in_x = |v: usize| (observed[v] > 0.0) == with;
        let (mut pages, mut frontier_pages, mut impact) = (0usize, 0usize, 0.0f64);
        let mut reach = |u: usize, mark: &mut [u32]| {
            for &p in known.graph.successors(u) {
                let p = p as usize;
                if p >= d && mark[p] != epoch {
                    mark[p] = epoch;
                    frontier_pages += 1;
                    impact += truth[p];
                }
            }
        };
        // The in-linkers of X already expanded (each once).
        let mut linker_done = if virtual_arcs {
            vec![false; d]
        } else {
            Vec::new()
        };
        for x in (0..d).filter(|&x| in_x(x)) {
            pages += 1;
            reach(x, &mut mark);
            if virtual_arcs {
                for &u in known.transpose.successors(x) {
                    let u = u as usize;
                    if !linker_done[u] {
                        linker_done[u] = true;
                        reach(u, &mut mark);
                    }
                }
            }
        }
        Ratio {
            pages,
            frontier_pages,
            impact,
            ratio: if pages > 0 {
                impact / pages as f64
            } else {
                f64::NAN
            },
        }
    };
    FrontierRatios {
        with_impact: ratio(true, false),
        without_impact: ratio(false, false),
        with_impact_virtual: ratio(true, true),
        without_impact_virtual: ratio(false, true),
    }
}

/// `v` as JSON, `null` when not finite.
pub(crate) fn num(v: f64) -> Value {
    if v.is_finite() {
        json!(v)
    } else {
        Value::Null
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crawlrank_graph::Csr;

    #[test]
    fn impact_relative_to_ideal_on_ten_pages() {
        // Ten frontier pages with impacts 10, 9, …, 1 (page i has 10 − i).
        let truth: Vec<f64> = (0..10).map(|i| (10 - i) as f64).collect();
        let ideal: Vec<usize> = (0..10).collect();
        let reversed: Vec<usize> = (0..10).rev().collect();
        let mixed = vec![3, 0, 9, 1, 2, 4, 5, 6, 7, 8];
        for p in PERMILLES {
            assert_eq!(impact_relative_to_ideal(&ideal, &truth, p), 1.0);
        }
        // k = ⌈x·10⌉: 1 page up to 10%.
        assert_eq!(top_count(10, 100), 1);
        assert_eq!(top_count(10, 101), 2);
        assert_eq!(top_count(1000, 2), 2);
        assert_eq!(top_count(1000, 30), 30);
        assert_eq!(impact_relative_to_ideal(&reversed, &truth, 100), 1.0 / 10.0);
        assert_eq!(impact_relative_to_ideal(&mixed, &truth, 50), 7.0 / 10.0);
        // 30% of 10 pages: 3 pages, 7 + 10 + 1 of 10 + 9 + 8.
        assert_eq!(impact_relative_to_ideal(&mixed, &truth, 300), 18.0 / 27.0);
        let c = curve(&mixed, &ideal, &truth, Some(&[1.0; 10]));
        assert_eq!(c.len(), PERMILLES.len());
        assert!(c
            .iter()
            .all(|p| p.pages == 1 && p.impact == 0.7 && p.pagerank == Some(1.0)));
        // No impact at all among the ideal's k pages: undefined.
        assert!(impact_relative_to_ideal(&ideal, &[0.0; 10], 100).is_nan());
        assert!(mean_over_1_to_10(&ideal, &[0.0; 10]).is_nan());
        // 1000 pages with impact 1 on the first 50 only; a ranking putting them at ranks 26..75.
        let truth: Vec<f64> = (0..1000).map(|i| if i < 50 { 1.0 } else { 0.0 }).collect();
        let order: Vec<usize> = (50..75).chain(0..50).chain(75..1000).collect();
        assert_eq!(impact_relative_to_ideal(&order, &truth, 20), 0.0);
        assert_eq!(impact_relative_to_ideal(&order, &truth, 50), 25.0 / 50.0);
        assert_eq!(impact_relative_to_ideal(&order, &truth, 100), 50.0 / 50.0);
    }

    #[test]
    fn pagerank_ratio_against_the_ideal_order() {
        let truth = [5.0, 4.0, 0.0, 0.0];
        let pr = [0.1, 0.2, 0.3, 0.4];
        let ideal = [0, 1, 2, 3];
        let c = curve(&[3, 2, 1, 0], &ideal, &truth, Some(&pr));
        // 4 pages: k = 1 up to 25%; PR of page 3 over PR of page 0.
        assert_eq!(c[0].pages, 1);
        assert!((c[0].pagerank.unwrap() - 4.0).abs() < 1e-12);
        assert!(c[0].impact == 0.0);
        assert!(curve(&[0], &[0], &[1.0], None)[0].pagerank.is_none());
    }

    #[test]
    fn frontier_ratios_on_a_hand_graph() {
        // D = {0, 1, 2}, F = {3, 4, 5, 6}. 0 has impact, 1 and 2 do not.
        // 0 → 3, 0 → 4; 1 → 4, 1 → 5; 2 → 0, 2 → 6; 1 → 0.
        let arcs = [(0, 3), (0, 4), (1, 4), (1, 5), (2, 0), (2, 6), (1, 0)];
        let known = KnownGraph::compact(Csr::from_arcs(7, &arcs), 3);
        let observed = [2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0];
        let truth = [0.0, 0.0, 0.0, 1.0, 10.0, 100.0, 1000.0];
        let r = frontier_ratios(&known, &observed, &truth);
        // With impact, real: {3, 4} → 11 / 1.
        assert_eq!((r.with_impact.pages, r.with_impact.frontier_pages), (1, 2));
        assert_eq!(r.with_impact.ratio, 11.0);
        // Without, real: 1 → {4, 5}, 2 → {6}: 1110 / 2 (4 once).
        assert_eq!(
            (r.without_impact.pages, r.without_impact.frontier_pages),
            (2, 3)
        );
        assert_eq!(r.without_impact.ratio, 555.0);
        // With impact, virtual: 0's in-linkers 1 and 2 share it: {3, 4} ∪ {4, 5} ∪ {6}.
        assert_eq!(r.with_impact_virtual.frontier_pages, 4);
        assert_eq!(r.with_impact_virtual.ratio, 1111.0);
        // Without, virtual: 1 and 2 have no in-linkers: as real.
        assert_eq!(r.without_impact_virtual.ratio, 555.0);
        // No page with impact: NaN, null in JSON.
        let r = frontier_ratios(&known, &[0.0; 7], &truth);
        assert!(r.with_impact.ratio.is_nan());
        assert_eq!(r.with_impact.to_json()["ratio"], Value::Null);
    }
}
