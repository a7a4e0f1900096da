//! The `learned` frontier ranking of the RW paper (docs/algorithms.md §6): per-page features of
//! the graph a crawler knows, and a regression model over them that predicts a page's impact.
//!
//! Two users share it, so that the method measured offline is the one that orders a crawl:
//! `crawlrank frontier-rank` (crawlrank-frontier-rank: fitted on the training part of one
//! frontier, scored on the test part) and the `learned` crawl policy (crawlrank-frontier: refitted
//! at every reorder on the pages crawled so far, scored on the frontier).
//!
//! Features of a page ([`impact_features`]): in-degree and PageRank of the known graph, then RW,
//! RW-EG (at the `ω` in use) and RW-virtual for each impact type observed (every walk sees the
//! downloaded pages' impacts only). The target is `ln(1 + I(p))` of the true impact: impacts are
//! heavy-tailed, and a squared-error fit on raw values is driven by a handful of pages. Trees split
//! on the order of a feature, so no feature is scaled. The model ([`Model`]) is smartcore's
//! regression tree or random forest, seeded; smartcore fits on one thread, so the predictions do
//! not depend on the machine's cores. docs/frontier-rank.md says why the forest is the default.

#![warn(missing_docs)]

use anyhow::{anyhow, ensure, Result};
use crawlrank_graph::Csr;
use crawlrank_rank::{outdegrees, random_walk, PageRank, PageRankConfig, RwConfig};
use crawlrank_rng::{stream_key, Xoshiro256StarStar};
use smartcore::ensemble::random_forest_regressor::{
    RandomForestRegressor, RandomForestRegressorParameters,
};
use smartcore::linalg::basic::matrix::DenseMatrix;
use smartcore::tree::decision_tree_regressor::{
    DecisionTreeRegressor, DecisionTreeRegressorParameters,
};

/// Mixed into the caller's seed to seed the model.
const MODEL_KEY: u64 = 0x6c65_6172_6e65_6421;

/// Mixed into the caller's seed for the training samples ([`sample_rows`]).
const SAMPLE_KEY: u64 = 0x6c65_6172_6e5f_7331;

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

/// A feature matrix: one row of [`width`](Self::width) values per page, row-major.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Features {
    width: usize,
    values: Vec<f64>,
}

impl Features {
    /// An empty matrix of rows `width` wide.
    pub fn new(width: usize) -> Self {
        Self {
            width,
            values: Vec::new(),
        }
    }

    /// The matrix whose column `c` is `columns[c]` (all of one length).
    pub fn from_columns(columns: &[Vec<f64>]) -> Self {
        let width = columns.len();
        let rows = columns.first().map_or(0, Vec::len);
        let mut values = Vec::with_capacity(rows * width);
        for r in 0..rows {
            values.extend(columns.iter().map(|c| c[r]));
        }
        Self { width, values }
    }

    /// Values per row.
    pub fn width(&self) -> usize {
        self.width
    }

    /// Number of rows.
    pub fn rows(&self) -> usize {
        self.values.len().checked_div(self.width).unwrap_or(0)
    }

    /// Row `r`.
    pub fn row(&self, r: usize) -> &[f64] {
        &self.values[r * self.width..(r + 1) * self.width]
    }

    /// Appends a row (of [`width`](Self::width) values).
    pub fn push(&mut self, row: &[f64]) {
        debug_assert_eq!(row.len(), self.width);
        self.values.extend_from_slice(row);
    }

    /// The rows `idx`, in that order.
    pub fn select(&self, idx: &[usize]) -> Features {
        let mut out = Features::new(self.width);
        out.values.reserve(idx.len() * self.width);
        for &i in idx {
            out.push(self.row(i));
        }
        out
    }

    fn matrix(&self) -> Result<DenseMatrix<f64>> {
        DenseMatrix::new(self.rows(), self.width, self.values.clone(), false)
            .map_err(|e| anyhow!("learned: {e}"))
    }
}

/// The names of [`impact_features`]' columns for `types` impact types.
pub fn feature_names(types: usize) -> Vec<String> {
    let mut names = vec!["indegree".to_owned(), "pagerank".to_owned()];
    for t in 0..types {
        let suffix = if types == 1 {
            String::new()
        } else {
            format!("[{t}]")
        };
        for m in ["rw", "rw-eg", "rw-virtual"] {
            names.push(format!("{m}{suffix}"));
        }
    }
    names
}

/// The features of every page of the known graph `graph` (with its `transpose`): in-degree,
/// PageRank (α = 0.85, uniform teleport, to 1e-10), then RW (ω = 1), RW-EG (`omega`) and
/// RW-virtual (ω = 0) of `rw`'s walk for each impact vector of `observed` (over the pages of
/// `graph`; 0 where the impact is not known). Also returns the solver iterations spent.
pub fn impact_features(
    graph: &Csr,
    transpose: &Csr,
    observed: &[&[f64]],
    rw: &RwConfig,
    omega: f64,
) -> Result<(Features, usize)> {
    ensure!(!observed.is_empty(), "learned: no impact vector to walk");
    let n = graph.num_nodes();
    let mut columns = Vec::with_capacity(2 + 3 * observed.len());
    columns.push((0..n).map(|v| transpose.outdegree(v) as f64).collect());
    let pr = PageRank::new(transpose, &outdegrees(graph))?.run(&PageRankConfig::default(), None)?;
    let mut iterations = pr.iterations;
    columns.push(pr.scores);
    for obs in observed {
        for w in [1.0, omega, 0.0] {
            let config = RwConfig {
                omega: w,
                ..rw.clone()
            };
            let r = random_walk(graph, transpose, obs, &config)?;
            iterations += r.iterations;
            columns.push(r.scores);
        }
    }
    Ok((Features::from_columns(&columns), iterations))
}

/// A fitted model.
pub enum Fitted {
    /// A fitted tree.
    Tree(DecisionTreeRegressor<f64, f64, DenseMatrix<f64>, Vec<f64>>),
    /// A fitted forest.
    Forest(RandomForestRegressor<f64, f64, DenseMatrix<f64>, Vec<f64>>),
}

impl std::fmt::Debug for Fitted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Fitted::Tree(_) => "Fitted::Tree",
            Fitted::Forest(_) => "Fitted::Forest",
        })
    }
}

/// Fits `model` on the rows `x` with targets `ln(1 + impact)` of `impact` (one per row).
/// Deterministic per `seed`.
pub fn fit(model: Model, x: &Features, impact: &[f64], seed: u64) -> Result<Fitted> {
    ensure!(x.rows() > 0, "learned: the training set is empty");
    ensure!(
        x.rows() == impact.len(),
        "learned: {} training rows and {} impacts",
        x.rows(),
        impact.len()
    );
    let xm = x.matrix()?;
    let y: Vec<f64> = impact.iter().map(|v| v.ln_1p()).collect();
    let seed = seed ^ MODEL_KEY;
    let fail = |e: smartcore::error::Failed| anyhow!("learned ({}): {e}", model.name());
    Ok(match model {
        Model::Tree => {
            let params = DecisionTreeRegressorParameters {
                max_depth: Some(8),
                min_samples_leaf: 20,
                min_samples_split: 40,
                seed: Some(seed),
            };
            Fitted::Tree(DecisionTreeRegressor::fit(&xm, &y, params).map_err(fail)?)
        }
        Model::Forest => {
            let m = (x.width() as f64).sqrt().ceil() as usize;
            let params = RandomForestRegressorParameters {
                max_depth: Some(12),
                min_samples_leaf: 5,
                min_samples_split: 10,
                n_trees: 100,
                m: Some(m),
                keep_samples: false,
                seed,
            };
            Fitted::Forest(RandomForestRegressor::fit(&xm, &y, params).map_err(fail)?)
        }
    })
}

impl Fitted {
    /// The predicted `ln(1 + impact)` of every row of `x`.
    pub fn predict(&self, x: &Features) -> Result<Vec<f64>> {
        if x.rows() == 0 {
            return Ok(Vec::new());
        }
        let xm = x.matrix()?;
        match self {
            Fitted::Tree(m) => m.predict(&xm),
            Fitted::Forest(m) => m.predict(&xm),
        }
        .map_err(|e| anyhow!("learned: {e}"))
    }
}

/// A uniform sample of `max` of the indices `0..rows` without repeats, in increasing order
/// (a partial Fisher–Yates shuffle, xoshiro256** seeded from `seed` and `round`); all of them
/// when `rows ≤ max`. Fits cap their training set with it: smartcore fits on one thread, and
/// a forest on millions of rows takes hours.
pub fn sample_rows(rows: usize, max: usize, seed: u64, round: u64) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..rows).collect();
    if rows <= max {
        return idx;
    }
    let mut rng = Xoshiro256StarStar::new(stream_key(seed, SAMPLE_KEY, round));
    for i in 0..max {
        let j = i + rng.below((rows - i) as u64) as usize;
        idx.swap(i, j);
    }
    idx.truncate(max);
    idx.sort_unstable();
    idx
}

/// Fits `model` on the rows `train` of `features` with the impacts `truth` (indexed like the
/// rows), and predicts every row of `predict`. Deterministic per `seed`.
pub fn fit_predict(
    model: Model,
    features: &Features,
    truth: &[f64],
    train: &[usize],
    predict: &[usize],
    seed: u64,
) -> Result<Vec<f64>> {
    ensure!(!train.is_empty(), "learned: the training part is empty");
    let y: Vec<f64> = train.iter().map(|&i| truth[i]).collect();
    let fitted = fit(model, &features.select(train), &y, seed)?;
    fitted.predict(&features.select(predict))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 400 pages with three features; the truth is a steep function of the second one.
    fn data() -> (Features, Vec<f64>) {
        let mut f = Features::new(3);
        let mut t = Vec::new();
        for i in 0..400u64 {
            let a = ((i * 7919) % 400) as f64;
            let b = ((i * 104_729) % 397) as f64;
            let c = (i % 13) as f64;
            f.push(&[a, b, c]);
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

    #[test]
    fn samples_are_uniform_without_repeats_and_repeat_per_seed() {
        assert_eq!(sample_rows(5, 10, 1, 0), [0, 1, 2, 3, 4]);
        let s = sample_rows(1000, 100, 1, 0);
        assert_eq!(s.len(), 100);
        assert!(s.windows(2).all(|w| w[0] < w[1]) && s[99] < 1000);
        assert_eq!(sample_rows(1000, 100, 1, 0), s);
        assert_ne!(sample_rows(1000, 100, 1, 1), s);
        assert_ne!(sample_rows(1000, 100, 2, 0), s);
        // Every index is about as likely: 10,000 draws of 100 of 1,000, counts per tenth.
        let mut tenths = [0usize; 10];
        for round in 0..100 {
            for i in sample_rows(1000, 100, 7, round) {
                tenths[i / 100] += 1;
            }
        }
        assert!(
            tenths.iter().all(|&c| (800..1200).contains(&c)),
            "{tenths:?}"
        );
    }

    #[test]
    fn features_are_the_rankings_of_the_known_graph() {
        // 0 → 1, 0 → 2, 1 → 2; page 0 has impact.
        let g = Csr::from_arcs(3, &[(0, 1), (0, 2), (1, 2)]);
        let t = g.transpose();
        let obs = [5.0, 0.0, 0.0];
        let rw = RwConfig::default();
        let (f, _) = impact_features(&g, &t, &[&obs], &rw, 0.5).unwrap();
        assert_eq!((f.rows(), f.width()), (3, 5));
        assert_eq!(feature_names(1).len(), 5);
        assert_eq!(feature_names(2)[5], "rw[1]");
        assert_eq!([f.row(0)[0], f.row(1)[0], f.row(2)[0]], [0.0, 1.0, 2.0]);
        let pr = crawlrank_rank::pagerank(&g, &PageRankConfig::default()).unwrap();
        assert_eq!(f.row(2)[1], pr.scores[2]);
        for (col, w) in [(2, 1.0), (3, 0.5), (4, 0.0)] {
            let r = random_walk(
                &g,
                &t,
                &obs,
                &RwConfig {
                    omega: w,
                    ..rw.clone()
                },
            )
            .unwrap();
            assert_eq!(f.row(1)[col], r.scores[1], "column {col}");
        }
        assert!(impact_features(&g, &t, &[], &rw, 0.5).is_err());
        assert!(fit(Model::Tree, &Features::new(5), &[], 0).is_err());
    }
}
