//! `learned` in the crawl loop (the RW paper, docs/algorithms.md §6): the frontier ordered by a
//! regression model's predicted impact, refitted at every reorder on the pages crawled so far.
//!
//! At every reorder the policy computes crawlrank-learn's features of every known page (in-degree,
//! PageRank, RW, RW-EG at `ω`, RW-virtual of the known graph, the walks seeing crawled pages'
//! impacts) and keeps them. A page crawled later becomes a training example with the features it
//! had at the last reorder before it was crawled — what the crawler knew when it chose it — and
//! its impact from the search log; pages crawled before any reorder (seeds, the first batch) have
//! no features and train nothing. The next reorder fits the model (a random forest, seeded with
//! `--rng-seed`) on those examples, predicts every frontier page from its current features and
//! sorts the frontier by the prediction, ties to the page found first. Pages found between
//! reorders are appended in discovery order; before the first reorder the queue is FIFO.
//!
//! Two choices the paper leaves open, written down in docs/algorithms.md §6:
//! - until a training example has a positive impact there is nothing to learn, and the frontier
//!   is ordered by its RW-EG feature instead;
//! - a fit uses at most [`MAX_TRAINING_PAGES`] examples, a seeded uniform sample when there are
//!   more, so a reorder costs the same late in a long crawl as early (smartcore fits on one
//!   thread).
//!
//! Final score (for τ): the model fitted on every example, on the features of the whole known
//! graph at the end of the crawl.

use super::impact::ImpactQueue;
use super::PolicyConfig;
use crate::{BatchClock, Link, PageId, PageTable, Policy};
use crawlrank_learn::{fit, impact_features, sample_rows, Features, Model};
use crawlrank_rank::RwConfig;

/// The most training examples one fit uses (a seeded sample when there are more).
pub const MAX_TRAINING_PAGES: usize = 20_000;

/// The column of the RW-EG feature (the order before anything can be learned).
const RW_EG_COLUMN: usize = 3;

/// `learned`'s constructor (registry).
pub fn learned(c: &PolicyConfig) -> Box<dyn Policy> {
    Box::new(Learned::new(c))
}

/// The `learned` policy (see the [module documentation](self)).
#[derive(Debug)]
pub struct Learned {
    walk: RwConfig,
    omega: f64,
    seed: u64,
    /// The known graph, its impacts, the queue and the last prediction (or RW-EG fallback).
    state: ImpactQueue,
    /// Features of the pages known at the last reorder, by sequence number.
    snapshot: Features,
    /// Training examples: features when chosen, and impact.
    train_x: Features,
    train_y: Vec<f64>,
    reorders: u64,
}

impl Learned {
    /// The policy with `c`'s impacts, `ω`, `γ`, walk threshold and rng seed.
    pub fn new(c: &PolicyConfig) -> Self {
        let width = crawlrank_learn::feature_names(1).len();
        Self {
            walk: RwConfig {
                gamma: c.gamma,
                threshold: c.batch_pagerank_threshold,
                ..RwConfig::default()
            },
            omega: c.omega,
            seed: c.rng_seed,
            state: ImpactQueue::new(c),
            snapshot: Features::new(width),
            train_x: Features::new(width),
            train_y: Vec::new(),
            reorders: 0,
        }
    }

    /// The features of every known page, walks to L1 change `threshold`.
    fn features(&mut self, pages: &PageTable, threshold: f64) -> Features {
        let rw = RwConfig {
            threshold,
            ..self.walk.clone()
        };
        let omega = self.omega;
        let (graph, transpose, impact) = self.state.known_graph(pages);
        impact_features(&graph, &transpose, &[impact], &rw, omega)
            .expect("the walks of a consistent graph with checked parameters")
            .0
    }

    /// The model fitted on (a sample of at most [`MAX_TRAINING_PAGES`] of) the examples, `None`
    /// while no example has a positive impact.
    fn fit(&self, round: u64) -> Option<crawlrank_learn::Fitted> {
        if !self.train_y.iter().any(|&y| y > 0.0) {
            return None;
        }
        let rows = self.train_y.len();
        let (x, y) = if rows <= MAX_TRAINING_PAGES {
            (self.train_x.clone(), self.train_y.clone())
        } else {
            let idx = sample_rows(rows, MAX_TRAINING_PAGES, self.seed, round);
            let y = idx.iter().map(|&i| self.train_y[i]).collect();
            (self.train_x.select(&idx), y)
        };
        Some(
            fit(Model::Forest, &x, &y, self.seed)
                .expect("a non-empty training set of finite features"),
        )
    }
}

impl Policy for Learned {
    fn name(&self) -> &'static str {
        "learned"
    }
    fn push_seed(&mut self, page: PageId, pages: &PageTable) {
        self.state.push_seed(page, pages);
    }
    fn pop(&mut self, _: &PageTable) -> Option<PageId> {
        self.state.pop()
    }
    fn crawled(&mut self, page: PageId, links: &[Link], pages: &PageTable, _: &BatchClock) {
        let (ps, impact) = self.state.crawled(page, links, pages);
        if ps < self.snapshot.rows() {
            self.train_x.push(self.snapshot.row(ps));
            self.train_y.push(impact);
        }
    }
    fn observe_impact(&mut self, page: PageId, impact: f64) {
        self.state.observe_impact(page, impact);
    }
    fn reorder(&mut self, pages: &PageTable, _: &BatchClock) {
        let features = self.features(pages, self.walk.threshold);
        let round = self.reorders;
        self.reorders += 1;
        let seqs = self.state.queued_seqs(pages);
        match self.fit(round) {
            Some(model) => {
                let predicted = model
                    .predict(&features.select(&seqs))
                    .expect("a prediction over rows of the training width");
                for (&s, v) in seqs.iter().zip(predicted) {
                    self.state.set_score(s, v);
                }
            }
            None => {
                for &s in &seqs {
                    self.state.set_score(s, features.row(s)[RW_EG_COLUMN]);
                }
            }
        }
        self.state.sort(pages);
        self.snapshot = features;
    }
    fn score(&self, page: PageId, pages: &PageTable) -> Option<f64> {
        self.state.score(page, pages)
    }
    fn len(&self) -> usize {
        self.state.len()
    }
    /// The model fitted on every example (sampled as at a reorder) on the final known graph's
    /// features, walks to 1e-10; RW-EG when nothing could be learned.
    fn final_scores(&mut self, order: &[PageId], pages: &PageTable) -> Vec<f64> {
        let features = self.features(pages, RwConfig::default().threshold);
        let rows: Vec<usize> = order.iter().map(|&p| pages.seq(p) as usize).collect();
        match self.fit(self.reorders) {
            Some(model) => model
                .predict(&features.select(&rows))
                .expect("a prediction over rows of the training width"),
            None => rows
                .iter()
                .map(|&s| features.row(s)[RW_EG_COLUMN])
                .collect(),
        }
    }
}
