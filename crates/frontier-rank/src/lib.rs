//! Impact-aware frontier ranking, offline (docs/algorithms.md §6, docs/frontier-rank.md): how well
//! each method orders the frontier of a crawl by the impact users will give its pages.
//!
//! A crawl has downloaded the pages `D` ([`bfs_downloaded`] makes such a set from random seeds);
//! [`KnownGraph`] builds its frontier `F` and the graph the crawler knows over `V = D ∪ F`.
//! [`split`] cuts `F` into a training and a test part; [`evaluate`] ranks `F` by every
//! [`Method`] (random, in-degree, PageRank, RW, RW-EG, RW-virtual, and `learned`, a regression
//! model over the others fitted on the training part: [`learned`]), tunes `ω` on the training
//! part when asked ([`tune_omega`]), and measures the rankings on the test part ([`measures`]):
//! impact relative to the ideal order, the mean-PageRank ratio, and the frontier impact ratios
//! of the paper's Tables 2–3. [`report`] prints the table and writes `scores.tsv`,
//! `summary.json`, `summary.csv` and SVG plots; [`repeat`] the same over many rng seeds (splits
//! and seed sets), with intervals and paired tests.
//!
//! Entry points: [`evaluate`], [`Config`], [`Evaluation`], [`KnownGraph`], [`bfs_downloaded`],
//! [`split()`], [`tune_omega`], [`measures::impact_relative_to_ideal`],
//! [`measures::frontier_ratios`], [`report::write_table`], [`report::write_outputs`], [`repeat::paired`],
//! [`repeat::write_repeat_table`], [`repeat::write_repeat_outputs`].
#![warn(missing_docs)]

pub mod evaluate;
pub mod known;
pub mod learned;
pub mod measures;
pub mod methods;
pub mod repeat;
pub mod report;
pub mod split;

pub use evaluate::{
    evaluate, evaluate_with, Config, Evaluation, MethodResult, OmegaChoice, Step, DEFAULT_MAX_TRAIN,
};
pub use known::{bfs_downloaded, KnownGraph};
pub use learned::Model;
pub use measures::{FrontierRatios, Point, PERMILLES};
pub use methods::{rank_order, tune_omega, Method, OMEGAS};
pub use split::split;
