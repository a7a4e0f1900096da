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
//!
//! A reorder is split ([`Policy::begin_reorder`]): the policy copies the known graph, the
//! impacts, the training sample and the queue's pages, and the walks, the fit and the
//! predictions run as a job that the crawler puts on a thread of its own
//! ([`Frontier::set_background_reorders`](crate::Frontier::set_background_reorders)) while it
//! goes on receiving pages. Pages crawled meanwhile become training examples once the job's
//! features are in (they were crawled after the reorder, so those are the features they had
//! when chosen), and the queue's pages found meanwhile stay behind the sorted ones: the same
//! order as with the reorder done at once, as the simulator does it.

use super::impact::ImpactQueue;
use super::PolicyConfig;
use crate::{BatchClock, Link, PageId, PageTable, Policy, ReorderJob, ReorderOutput};
use crawlrank_graph::Csr;
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
    /// While a reorder's job runs: the pages crawled since, as (sequence number, impact), to
    /// become training examples with the features the job computes.
    crawled_during: Option<Vec<(usize, f64)>>,
}

/// What a reorder's job computes: every known page's features, and the score of each queued
/// page (in queue order).
struct Reordered {
    features: Features,
    scores: Vec<f64>,
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
            crawled_during: None,
        }
    }

    /// The walks' configuration to L1 change `threshold`.
    fn walk_to(&self, threshold: f64) -> RwConfig {
        RwConfig {
            threshold,
            ..self.walk.clone()
        }
    }

    /// The training set of a fit: (a sample of at most [`MAX_TRAINING_PAGES`] of) the
    /// examples, `None` while no example has a positive impact.
    fn training_set(&self, round: u64) -> Option<(Features, Vec<f64>)> {
        if !self.train_y.iter().any(|&y| y > 0.0) {
            return None;
        }
        let rows = self.train_y.len();
        Some(if rows <= MAX_TRAINING_PAGES {
            (self.train_x.clone(), self.train_y.clone())
        } else {
            let idx = sample_rows(rows, MAX_TRAINING_PAGES, self.seed, round);
            let y = idx.iter().map(|&i| self.train_y[i]).collect();
            (self.train_x.select(&idx), y)
        })
    }

    /// Adds the example of a page crawled: the features it had at the last reorder (none if
    /// it was found after it).
    fn add_example(&mut self, seq: usize, impact: f64) {
        if seq < self.snapshot.rows() {
            self.train_x.push(self.snapshot.row(seq));
            self.train_y.push(impact);
        }
    }
}

/// The features of every page of the known `graph` with `impact`, walks by `rw`, RW-EG's at
/// `omega`.
fn features(graph: &Csr, impact: &[f64], rw: &RwConfig, omega: f64) -> Features {
    let transpose = graph.transpose();
    impact_features(graph, &transpose, &[impact], rw, omega)
        .expect("the walks of a consistent graph with checked parameters")
        .0
}

/// The scores of the pages of sequence numbers `rows`: the model fitted on `training` (with
/// `seed`) applied to their features, or their RW-EG feature when there is nothing to learn.
fn predict(
    features: &Features,
    training: Option<(Features, Vec<f64>)>,
    seed: u64,
    rows: &[usize],
) -> Vec<f64> {
    match training {
        Some((x, y)) => fit(Model::Forest, &x, &y, seed)
            .expect("a non-empty training set of finite features")
            .predict(&features.select(rows))
            .expect("a prediction over rows of the training width"),
        None => rows
            .iter()
            .map(|&s| features.row(s)[RW_EG_COLUMN])
            .collect(),
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
        match &mut self.crawled_during {
            Some(during) => during.push((ps, impact)),
            None => self.add_example(ps, impact),
        }
    }
    fn observe_impact(&mut self, page: PageId, impact: f64) {
        self.state.observe_impact(page, impact);
    }
    fn reorder(&mut self, pages: &PageTable, clock: &BatchClock) {
        if let Some(job) = self.begin_reorder(pages, clock) {
            self.finish_reorder(job(), pages);
        }
    }
    /// Copies the known graph, its impacts, the training sample and the queue; the job
    /// computes the features, fits and predicts.
    fn begin_reorder(&mut self, pages: &PageTable, _: &BatchClock) -> Option<ReorderJob> {
        let round = self.reorders;
        self.reorders += 1;
        let (graph, impact) = self.state.known_graph_copy(pages);
        let seqs = self.state.queued_seqs(pages);
        let training = self.training_set(round);
        let (rw, omega, seed) = (self.walk_to(self.walk.threshold), self.omega, self.seed);
        self.crawled_during = Some(Vec::new());
        Some(Box::new(move || {
            let features = features(&graph, &impact, &rw, omega);
            let scores = predict(&features, training, seed, &seqs);
            Box::new(Reordered { features, scores }) as ReorderOutput
        }))
    }
    /// Sorts the queue's pages that were there at the boundary by the predictions, keeps the
    /// new features, and turns the pages crawled meanwhile into examples.
    fn finish_reorder(&mut self, output: ReorderOutput, pages: &PageTable) {
        let Reordered { features, scores } = *output
            .downcast::<Reordered>()
            .expect("learned's reorder job gives learned's output");
        let seqs = self.state.queued_seqs(pages);
        for (&s, v) in seqs.iter().zip(&scores) {
            self.state.set_score(s, *v);
        }
        self.state.sort_front(scores.len(), pages);
        self.snapshot = features;
        for (seq, impact) in self.crawled_during.take().unwrap_or_default() {
            self.add_example(seq, impact);
        }
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
        let (graph, impact) = self.state.known_graph_copy(pages);
        let rw = self.walk_to(RwConfig::default().threshold);
        let features = features(&graph, &impact, &rw, self.omega);
        let rows: Vec<usize> = order.iter().map(|&p| pages.seq(p) as usize).collect();
        predict(
            &features,
            self.training_set(self.reorders),
            self.seed,
            &rows,
        )
    }
}
