//! The `learned` method (docs/algorithms.md §6, docs/frontier-rank.md): a regression model over
//! per-page features, fitted on the training part of the frontier only, whose prediction for a
//! page is its score.
//!
//! Features of a page of `V` ([`features`]): in-degree and PageRank of the known graph, then RW,
//! RW-EG (at the `ω` in use) and RW-virtual for each impact type the crawler observes (one set per
//! impact column of the table; every walk sees downloaded pages' impacts only). The target is
//! `ln(1 + I(p))` of the true impact: impacts are heavy-tailed, and a squared-error fit on raw
//! values is driven by a handful of pages. Trees split on the order of a feature, so no feature
//! is scaled. The model ([`Model`]) is smartcore's regression tree or random forest, seeded from
//! `--rng-seed`; smartcore fits on one thread, so the scores do not depend on the machine's cores.

use crate::known::KnownGraph;
use crate::methods::{scores, Method};
use anyhow::{anyhow, ensure, Result};
use crawlrank_rank::RwConfig;
use smartcore::ensemble::random_forest_regressor::{
    RandomForestRegressor, RandomForestRegressorParameters,
};
use smartcore::linalg::basic::matrix::DenseMatrix;
use smartcore::tree::decision_tree_regressor::{
    DecisionTreeRegressor, DecisionTreeRegressorParameters,
};

/// Mixed into `--rng-seed` to seed the model.
const MODEL_KEY: u64 = 0x6c65_6172_6e65_6421;

/// The model family of `learned`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Model {
    /// One regression tree (smartcore `DecisionTreeRegressor`, depth ≤ 8, ≥ 20 pages per leaf).
    Tree,
    /// A random forest (smartcore `RandomForestRegressor`: 100 trees, depth ≤ 12, ≥ 5 pages
    /// per leaf, bootstrap samples, `⌈√features⌉` features per split).
    Forest,
}

impl Model {
    /// Every model, the default first.
    pub const ALL: [Model; 2] = [Model::Forest, Model::Tree];

    /// The name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Model::Tree => "tree",
            Model::Forest => "forest",
        }
    }

    /// Parses a name.
    pub fn parse(name: &str) -> Result<Self> {
        Self::ALL
            .into_iter()
            .find(|m| m.name() == name.trim())
            .ok_or_else(|| anyhow!("unknown model '{name}' (expected forest or tree)"))
    }
}

/// The features of every page of `V`, one row per page: in-degree, PageRank, then RW, RW-EG at
/// `omega` and RW-virtual for each of `observed` (one impact vector over `V` per impact type, 0 on
/// `F`). Also returns the solver iterations spent.
pub fn features(
    known: &KnownGraph,
    observed: &[&[f64]],
    rw: &RwConfig,
    omega: f64,
) -> Result<(Vec<Vec<f64>>, usize)> {
    let mut columns = Vec::new();
    let mut iterations = 0;
    for method in [Method::Indegree, Method::PageRank] {
        let (s, it) = scores(method, known, observed[0], rw, omega, 0)?;
        columns.push(s);
        iterations += it;
    }
    for obs in observed {
        for method in [Method::Rw, Method::RwEg, Method::RwVirtual] {
            let (s, it) = scores(method, known, obs, rw, omega, 0)?;
            columns.push(s);
            iterations += it;
        }
    }
    let rows = (0..known.len())
        .map(|v| columns.iter().map(|c| c[v]).collect())
        .collect();
    Ok((rows, iterations))
}

/// Fits `model` on the rows `train` of `features` with targets `ln(1 + truth)`, and predicts
/// every row of `predict`. Deterministic per `seed`.
pub fn fit_predict(
    model: Model,
    features: &[Vec<f64>],
    truth: &[f64],
    train: &[usize],
    predict: &[usize],
    seed: u64,
) -> Result<Vec<f64>> {
    ensure!(!train.is_empty(), "learned: the training part is empty");
    let rows = |idx: &[usize]| -> Result<DenseMatrix<f64>> {
        let r: Vec<Vec<f64>> = idx.iter().map(|&i| features[i].clone()).collect();
        DenseMatrix::from_2d_vec(&r).map_err(|e| anyhow!("learned: {e}"))
    };
    let x = rows(train)?;
    let y: Vec<f64> = train.iter().map(|&i| truth[i].ln_1p()).collect();
    if predict.is_empty() {
        return Ok(Vec::new());
    }
    let xp = rows(predict)?;
    let seed = seed ^ MODEL_KEY;
    let fail = |e: smartcore::error::Failed| anyhow!("learned ({}): {e}", model.name());
    match model {
        Model::Tree => {
            let params = DecisionTreeRegressorParameters {
                max_depth: Some(8),
                min_samples_leaf: 20,
                min_samples_split: 40,
                seed: Some(seed),
            };
            let m = DecisionTreeRegressor::fit(&x, &y, params).map_err(fail)?;
            m.predict(&xp).map_err(fail)
        }
        Model::Forest => {
            let m = (features[0].len() as f64).sqrt().ceil() as usize;
            let params = RandomForestRegressorParameters {
                max_depth: Some(12),
                min_samples_leaf: 5,
                min_samples_split: 10,
                n_trees: 100,
                m: Some(m),
                keep_samples: false,
                seed,
            };
            let f = RandomForestRegressor::fit(&x, &y, params).map_err(fail)?;
            f.predict(&xp).map_err(fail)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 400 pages with three features; the truth is a steep function of the second one.
    fn data() -> (Vec<Vec<f64>>, Vec<f64>) {
        let mut f = Vec::new();
        let mut t = Vec::new();
        for i in 0..400u64 {
            let a = ((i * 7919) % 400) as f64;
            let b = ((i * 104_729) % 397) as f64;
            let c = (i % 13) as f64;
            f.push(vec![a, b, c]);
            t.push((b / 40.0).exp());
        }
        (f, t)
    }

    #[test]
    fn predictions_follow_the_feature_and_repeat_per_seed() {
        let (f, t) = data();
        let train: Vec<usize> = (0..400).filter(|i| i % 3 != 0).collect();
        let test: Vec<usize> = (0..400).filter(|i| i % 3 == 0).collect();
        for model in Model::ALL {
            let p = fit_predict(model, &f, &t, &train, &test, 7).unwrap();
            // The predicted order agrees with the truth on nearly every pair.
            let (mut agree, mut all) = (0, 0);
            for a in 0..test.len() {
                for b in a + 1..test.len() {
                    let (ta, tb) = (t[test[a]], t[test[b]]);
                    if (ta - tb).abs() > 1.0 {
                        all += 1;
                        agree += usize::from((ta > tb) == (p[a] > p[b]));
                    }
                }
            }
            assert!(agree as f64 > 0.9 * all as f64, "{model:?}: {agree}/{all}");
            assert_eq!(fit_predict(model, &f, &t, &train, &test, 7).unwrap(), p);
        }
        assert_eq!(Model::parse("tree").unwrap(), Model::Tree);
        assert!(Model::parse("svm").is_err());
    }

    #[test]
    fn test_targets_never_reach_the_model() {
        let (f, t) = data();
        let train: Vec<usize> = (0..300).collect();
        let test: Vec<usize> = (300..400).collect();
        let mut absurd = t.clone();
        absurd[300..].iter_mut().for_each(|v| *v = 1e300);
        for model in Model::ALL {
            assert_eq!(
                fit_predict(model, &f, &t, &train, &test, 1).unwrap(),
                fit_predict(model, &f, &absurd, &train, &test, 1).unwrap()
            );
        }
    }
}
