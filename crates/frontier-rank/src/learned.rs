//! The `learned` method (docs/algorithms.md §6, docs/frontier-rank.md): a regression model over
//! per-page features, fitted on the training part of the frontier only, whose prediction for a
//! page is its score. The features and the model are crawlrank-learn's, the same ones the
//! `learned` crawl policy refits at every reorder; this module applies them to a [`KnownGraph`].

use crate::known::KnownGraph;
use anyhow::Result;
pub use crawlrank_learn::{fit_predict, Features, Model};
use crawlrank_rank::RwConfig;

/// The features of every page of `V`, one row per page (crawlrank-learn's
/// [`impact_features`](crawlrank_learn::impact_features) of the known graph): in-degree,
/// PageRank, then RW, RW-EG at `omega` and RW-virtual for each of `observed` (one impact vector
/// over `V` per impact type, 0 on `F`). Also returns the solver iterations spent.
pub fn features(
    known: &KnownGraph,
    observed: &[&[f64]],
    rw: &RwConfig,
    omega: f64,
) -> Result<(Features, usize)> {
    crawlrank_learn::impact_features(&known.graph, &known.transpose, observed, rw, omega)
}
