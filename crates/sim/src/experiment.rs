//! A whole experiment in one call: open the reference, run every policy from the same seeds,
//! measure each crawl. The command line and the demo are thin front ends over
//! [`run_experiment`]; a library user gets the same [`Summary`] they print.

use crate::graph::SimGraph;
use crate::measures::measure;
use crate::policy::SimPolicy;
use crate::reference::{reference_pagerank, Reference};
use crate::report::{PolicyResult, Summary};
use crate::run::{simulate, PolicyRun, SimConfig};
use crate::seeds::SeedChoice;
use anyhow::{ensure, Result};
use crawlrank_graph::BvWebGraph;
use std::sync::Arc;

/// What to simulate.
#[derive(Debug, Clone)]
pub struct Experiment {
    /// Where the crawls start.
    pub seeds: SeedChoice,
    /// The policies, in report order.
    pub policies: Vec<SimPolicy>,
    /// Batch size, rng seed, thresholds.
    pub config: SimConfig,
}

/// What an experiment reports while it runs, for progress bars and logs.
#[derive(Debug)]
pub enum ExperimentEvent<'a> {
    /// The reference is ready: the seeds and the pages they reach.
    Ready {
        /// Seeds in use.
        seeds: usize,
        /// `R`.
        reachable: u64,
        /// `K` in use.
        batch: u64,
    },
    /// A policy starts crawling.
    PolicyStarted(SimPolicy),
    /// Pages crawled so far by the running policy (every 65,536 pages).
    Crawled(SimPolicy, u64),
    /// A policy's crawl is done and measured.
    PolicyDone(&'a PolicyRun),
}

/// Runs `experiment` on `graph` (`csr` is the graph decoded into a
/// [`Csr`](crawlrank_graph::Csr), or the compressed `graph` itself), reporting to `progress`.
pub fn run_experiment<G: SimGraph>(
    graph: &BvWebGraph,
    csr: &G,
    experiment: &Experiment,
    progress: &mut dyn FnMut(ExperimentEvent<'_>),
) -> Result<Summary> {
    ensure!(
        csr.node_count() > 0,
        "{} is an empty graph",
        graph.basename().display()
    );
    ensure!(
        experiment.config.batch != Some(0),
        "the batch size K must be at least 1"
    );
    let pagerank = Arc::new(reference_pagerank(graph, csr)?);
    run_with_pagerank(graph, csr, experiment, pagerank, progress)
}

/// [`run_experiment`] with the reference PageRank of the full graph already computed
/// ([`reference_pagerank`]), so that repeated experiments share it.
pub fn run_with_pagerank<G: SimGraph>(
    graph: &BvWebGraph,
    csr: &G,
    experiment: &Experiment,
    pagerank: Arc<Vec<f64>>,
    progress: &mut dyn FnMut(ExperimentEvent<'_>),
) -> Result<Summary> {
    ensure!(
        experiment.config.batch != Some(0),
        "the batch size K must be at least 1"
    );
    let (seeds, seed_source) = experiment.seeds.resolve(graph, csr)?;
    let mut reference = Reference::new(csr, pagerank, &seeds)?;
    if let Some(impact) = &experiment.config.impact {
        reference = reference.with_impact(impact.clone())?;
    }
    let config = &experiment.config;
    progress(ExperimentEvent::Ready {
        seeds: seeds.len(),
        reachable: reference.reachable,
        batch: config.batch.unwrap_or_else(|| reference.default_batch()),
    });
    let mut results = Vec::new();
    for &policy in &experiment.policies {
        progress(ExperimentEvent::PolicyStarted(policy));
        let run = simulate(csr, &seeds, policy, &reference, config, &mut |done| {
            progress(ExperimentEvent::Crawled(policy, done))
        })?;
        let measures = measure(&run, &reference)?;
        progress(ExperimentEvent::PolicyDone(&run));
        results.push(PolicyResult { run, measures });
    }
    Ok(Summary::new(
        graph.basename().display().to_string(),
        csr,
        seeds.len(),
        seed_source,
        &reference,
        config,
        results,
    ))
}
