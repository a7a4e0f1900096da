//! Where a simulated crawl starts: `N` uniformly random pages, a file of page ids or URLs (as
//! `crawlrank seeds` writes them), or seeds extracted from the graph's communities on the spot
//! (docs/algorithms.md §5).

use crate::graph::SimGraph;
use anyhow::{ensure, Context, Result};
use crawlrank_frontier::PageId;
use crawlrank_graph::page_ids::looks_numeric;
use crawlrank_graph::BvWebGraph;
pub use crawlrank_seeds::random_seeds;
use crawlrank_seeds::{extract_seeds, prepare, Pruning, SeedsConfig};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// How to choose the seeds of an experiment.
#[derive(Debug, Clone, PartialEq)]
pub enum SeedChoice {
    /// `count` distinct pages drawn uniformly with generator seed `rng_seed`.
    Random {
        /// How many seeds (at least 1; a graph with fewer pages gives all of them).
        count: usize,
        /// Seed of the generator that draws them.
        rng_seed: u64,
    },
    /// A file of seeds, one per line: page ids (the user's, see [`read_seeds`]), or URLs when
    /// the graph has them (`#` starts a comment line).
    File(PathBuf),
    /// These pages.
    Pages(Vec<PageId>),
    /// Seeds extracted from the graph's bipartite cores (Extract-Seeds, docs/algorithms.md §5).
    Community {
        /// How many seeds, how cores grow, HITS iterations.
        config: SeedsConfig,
        /// Whether arcs within a host are dropped first.
        pruning: Pruning,
    },
}

impl SeedChoice {
    /// The seeds for `graph` (`csr` is the graph decoded, or the compressed graph itself:
    /// community seeds need the decoded graph), with a description for reports.
    pub fn resolve<G: SimGraph>(
        &self,
        graph: &BvWebGraph,
        csr: &G,
    ) -> Result<(Vec<PageId>, String)> {
        let n = graph.num_nodes();
        Ok(match self {
            SeedChoice::Random { count, rng_seed } => {
                ensure!(*count > 0, "the number of random seeds must be at least 1");
                (
                    random_seeds(n, *count, *rng_seed),
                    format!("{count} random, rng seed {rng_seed}"),
                )
            }
            SeedChoice::File(path) => (read_seeds(path, graph)?, path.display().to_string()),
            SeedChoice::Pages(pages) => {
                ensure!(!pages.is_empty(), "the seed set is empty");
                if let Some(&bad) = pages.iter().find(|&&p| p as usize >= n) {
                    anyhow::bail!("seed {bad} is not a page of the graph (it has {n} pages)");
                }
                (pages.clone(), format!("{} given", pages.len()))
            }
            SeedChoice::Community { config, pruning } => {
                let csr = csr.as_csr().context(
                    "community seeds extract cores from the graph held in memory (they prune \
                     and mask its arcs): run with --in-memory always (or auto), or extract them \
                     once with `crawlrank seeds` and pass --seeds-file",
                )?;
                let prepared = prepare(graph, csr, *pruning, None)?;
                let x = extract_seeds(&prepared.graph, config, &mut |_| {})?;
                ensure!(
                    !x.seeds.is_empty(),
                    "no community seeds: the graph's cores have no hubs"
                );
                let found = x.seeds.len();
                let asked = config.count;
                let note = if found < asked {
                    format!(" ({found} of {asked} asked: no arcs left)")
                } else {
                    String::new()
                };
                (
                    x.seeds,
                    format!(
                        "{found} community seeds{note}{}",
                        if prepared.pruned { ", host-pruned" } else { "" }
                    ),
                )
            }
        })
    }
}

/// Reads a seeds file: page ids, URLs looked up in the graph's `.urls`, or `id<TAB>url` lines
/// as `crawlrank seeds` writes them (the id is taken, and must be the page of that URL when the
/// graph has URLs). Ids are the user's ([`PageIds`](crawlrank_graph::PageIds): an imported
/// arc list's own ids), each read by [`PageIds::parse`](crawlrank_graph::PageIds::parse): an id
/// that is not a page of the graph, a negative or a non-integer id is an error naming the file
/// and line.
pub fn read_seeds(path: &Path, graph: &BvWebGraph) -> Result<Vec<PageId>> {
    let seeds = read_pages(path, graph, "seeds")?;
    ensure!(
        !seeds.is_empty(),
        "the seeds file {} holds no seeds",
        path.display()
    );
    Ok(seeds.into_iter().map(|(page, _)| page).collect())
}

/// Reads a file of pages as [`read_seeds`] does (`what` names the file in errors: "seeds",
/// "order"), each page with the number of its line (from 1). Empty and `#` lines are
/// skipped; the list may be empty.
pub fn read_pages(path: &Path, graph: &BvWebGraph, what: &str) -> Result<Vec<(PageId, usize)>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read the {what} file {}", path.display()))?;
    let ids = graph.page_ids()?;
    let mut url_index: Option<HashMap<String, PageId>> = None;
    let url_list: std::cell::OnceCell<Option<Vec<String>>> = std::cell::OnceCell::new();
    let mut seeds = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let at = || format!("{}:{}", path.display(), i + 1);
        let (line, url_beside) = match line.split_once('\t') {
            Some((id, url)) => (id.trim(), Some(url.trim())),
            None => (line, None),
        };
        let page = if url_beside.is_some() || looks_numeric(line) {
            let page = ids.parse(line, at())?;
            if let (Some(url), Some(urls)) = (
                url_beside,
                url_list.get_or_init(|| graph.urls().ok().flatten()),
            ) {
                ensure!(
                    urls[page] == url,
                    "{}: page {line} of the graph is {}, not {url}: the seeds were made for another graph",
                    at(),
                    urls[page]
                );
            }
            page as PageId
        } else {
            if url_index.is_none() {
                let urls = graph.urls()?.with_context(|| {
                    format!(
                        "{}: '{line}' is not a page id, and the graph has no URLs",
                        at()
                    )
                })?;
                url_index = Some(
                    urls.into_iter()
                        .enumerate()
                        .map(|(i, u)| (u, i as PageId))
                        .collect(),
                );
            }
            let url = crawlrank_graph::urls::normalize_url(line).with_context(at)?;
            *url_index
                .as_ref()
                .expect("built above")
                .get(&url)
                .with_context(|| format!("{}: {url} is not a page of the graph", at()))?
        };
        seeds.push((page, i + 1));
    }
    Ok(seeds)
}
