//! Scoring an order computed elsewhere (NetworkX, a notebook, another crawler's log) with the
//! simulator's measures, so that outside policies are compared on the same footing as the
//! simulated ones (`crawlrank score-order`, docs/algorithms.md §4).
//!
//! The order is checked to be a crawl of the graph before it is measured:
//!
//! - `R` is the set of pages reachable from the seeds — the given seeds, or, without any, the
//!   order's first page (its only seed);
//! - every page of `R` is listed exactly once, and nothing else: a duplicate, an id that is
//!   not a page of the graph, or a page outside `R` is an error naming the file and line, and
//!   an order that stops before covering `R` is an error naming a page it misses;
//! - every page but the seeds must be linked from a page listed before it (a crawler cannot
//!   fetch a page before it has seen a link to it); a page that is not is an error naming its
//!   line, unless the caller allows such jumps ([`ScoreOptions::allow_unlinked`]), when they
//!   are counted ([`Scored::unlinked`]).
//!
//! The measures are then exactly those of a simulated crawl with the same order and seeds
//! (the same [`Reference`] and [`measure`]), except Kendall's τ_b: a simulated crawl
//! correlates the policy's final scores with PageRank, while an outside order has no scores,
//! so its τ_b correlates the crawl position (earlier = higher) with PageRank over the pages
//! crawled.

use crate::graph::SimGraph;
use crate::measures::measure;
use crate::policy::SimPolicy;
use crate::reference::{reference_pagerank, Reference};
use crate::report::{PolicyResult, Summary};
use crate::run::PolicyRun;
use crate::seeds::{read_pages, SeedChoice};
use anyhow::{bail, ensure, Result};
use crawlrank_frontier::PageId;
use crawlrank_graph::BvWebGraph;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// How to score an outside order.
#[derive(Debug, Clone)]
pub struct ScoreOptions {
    /// The order file: one page per line, as a seeds file ([`read_pages`]).
    pub order: PathBuf,
    /// The seeds of the crawl that produced the order; `None`: the order's first page.
    pub seeds: Option<SeedChoice>,
    /// The order's name in the table and outputs (no comma, not empty).
    pub name: String,
    /// Whether pages listed before any page listed earlier links to them are allowed (and
    /// counted) rather than an error.
    pub allow_unlinked: bool,
    /// The percentages the table reports ([`TABLE_PERCENTS`](crate::checkpoints::TABLE_PERCENTS)).
    pub percents: Vec<usize>,
    /// Recorded in the summary (the seed generator's seed when the seeds are random).
    pub rng_seed: u64,
}

/// A scored order: the summary (one result) and how many pages were listed before a link to
/// them was seen.
#[derive(Debug, Clone)]
pub struct Scored {
    /// As [`run_experiment`](crate::run_experiment) returns it, with one result named
    /// [`SimPolicy::Outside`].
    pub summary: Summary,
    /// Pages, other than seeds, listed before any page listed earlier links to them (0 unless
    /// [`ScoreOptions::allow_unlinked`]).
    pub unlinked: u64,
}

/// Reads, checks and measures the order `options.order` over `graph` (`csr` is the graph
/// decoded).
pub fn score_order<G: SimGraph>(
    graph: &BvWebGraph,
    csr: &G,
    options: &ScoreOptions,
) -> Result<Scored> {
    let n = csr.node_count();
    let mut buf = Vec::new();
    ensure!(n > 0, "{} is an empty graph", graph.basename().display());
    let name = options.name.trim();
    ensure!(
        !name.is_empty() && !name.contains([',', '\n', '\r', '"']),
        "the order's name '{name}' must be non-empty and hold no comma or quote"
    );
    let path = &options.order;
    let at = |line: usize| format!("{}:{line}", path.display());
    let listed = read_pages(path, graph, "order")?;
    ensure!(
        !listed.is_empty(),
        "the order file {} lists no pages",
        path.display()
    );
    let ids = graph.page_ids()?;

    // Duplicates first: they are an error whatever the seeds.
    let mut line_of = vec![0usize; n];
    for &(page, line) in &listed {
        let first = line_of[page as usize];
        if first != 0 {
            bail!(
                "{}: page {} is listed again (first at line {first})",
                at(line),
                ids.id(page as usize)
            );
        }
        line_of[page as usize] = line;
    }
    drop(line_of);

    let (seeds, seed_source) = match &options.seeds {
        Some(choice) => choice.resolve(graph, csr)?,
        None => (
            vec![listed[0].0],
            format!("the order's first page, {}", ids.id(listed[0].0 as usize)),
        ),
    };
    let pagerank = Arc::new(reference_pagerank(graph, csr)?);
    let reference = Reference::new(csr, pagerank, &seeds)?;

    // Replay the order as a crawl: which pages a crawler had seen links to when it fetched
    // each one, and how large its frontier was.
    let mut seen = vec![false; n];
    let mut crawled = vec![false; n];
    let mut pending = 0usize;
    for &s in &seeds {
        if !seen[s as usize] {
            seen[s as usize] = true;
            pending += 1;
        }
    }
    let (mut peak_frontier, mut arcs, mut unlinked) = (pending, 0u64, 0u64);
    for &(page, line) in &listed {
        let p = page as usize;
        if reference.hot_rank[p] == u32::MAX {
            bail!(
                "{}: page {} is not reachable from the seeds ({seed_source}), so no crawl from them lists it",
                at(line),
                ids.id(p)
            );
        }
        if seen[p] {
            pending -= 1;
        } else if options.allow_unlinked {
            unlinked += 1;
            seen[p] = true;
        } else {
            bail!(
                "{}: page {} is listed before any page listed earlier links to it, and it is not a seed \
                 (a crawl of the graph cannot reach it yet; --allow-unlinked scores such orders anyway)",
                at(line),
                ids.id(p)
            );
        }
        crawled[p] = true;
        let links = csr.successors_in(p, &mut buf);
        arcs += links.len() as u64;
        for &u in links {
            if !seen[u as usize] {
                seen[u as usize] = true;
                pending += 1;
            }
        }
        peak_frontier = peak_frontier.max(pending);
    }
    if (listed.len() as u64) < reference.reachable {
        let missing = (0..n)
            .find(|&v| reference.hot_rank[v] != u32::MAX && !crawled[v])
            .expect("fewer pages listed than reachable, all of them reachable");
        bail!(
            "{} lists {} pages, but R = {} pages are reachable from the seeds ({seed_source}); \
             page {} is one it misses (a crawl ends when it has fetched every page it can reach)",
            path.display(),
            listed.len(),
            reference.reachable,
            ids.id(missing)
        );
    }

    let order: Vec<PageId> = listed.iter().map(|&(p, _)| p).collect();
    // An outside order has no scores: its position stands for one (earlier = higher).
    let final_scores = (0..order.len()).map(|i| -(i as f64)).collect();
    // `SimPolicy` is `Copy` with `'static` names; one short name per scored order is leaked.
    let policy = SimPolicy::Outside(Box::leak(name.to_string().into_boxed_str()));
    let run = PolicyRun {
        policy,
        order,
        final_scores,
        batch: 0,
        crawl_time: Duration::ZERO,
        arcs,
        peak_frontier,
        peak_rss_bytes: None,
    };
    let measures = measure(&run, &reference)?;
    Ok(Scored {
        summary: Summary {
            graph: graph.basename().display().to_string(),
            nodes: n as u64,
            arcs: csr.arc_count(),
            seeds: seeds.len(),
            seed_source,
            rng_seed: options.rng_seed,
            reachable: reference.reachable,
            results: vec![PolicyResult { run, measures }],
            percents: options.percents.clone(),
            parameters: Vec::new(),
            impact_column: None,
        },
        unlinked,
    })
}

/// The default name of the order in `path`: its file name without the extension.
pub fn default_name(path: &Path) -> String {
    path.file_stem()
        .map_or_else(|| "order".into(), |s| s.to_string_lossy().into_owned())
}
