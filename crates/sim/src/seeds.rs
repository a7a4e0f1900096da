//! Where a simulated crawl starts: `N` uniformly random pages, or a file of page ids or URLs.

use anyhow::{ensure, Context, Result};
use crawlrank_frontier::PageId;
use crawlrank_graph::BvWebGraph;
use crawlrank_rng::Xoshiro256StarStar;
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
    /// A file of seeds, one per line: page ids, or URLs when the graph has them (`#` starts a
    /// comment line).
    File(PathBuf),
    /// These pages.
    Pages(Vec<PageId>),
}

impl SeedChoice {
    /// The seeds for `graph`, with a description for reports.
    pub fn resolve(&self, graph: &BvWebGraph) -> Result<(Vec<PageId>, String)> {
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
        })
    }
}

/// `n` distinct random pages of a graph of `nodes` pages (or all of them, if it has fewer),
/// in draw order.
pub fn random_seeds(nodes: usize, n: usize, rng_seed: u64) -> Vec<PageId> {
    let mut rng = Xoshiro256StarStar::new(rng_seed);
    let want = n.min(nodes);
    let mut chosen = std::collections::HashSet::with_capacity(want);
    let mut seeds = Vec::with_capacity(want);
    while seeds.len() < want {
        let p = rng.below(nodes as u64) as PageId;
        if chosen.insert(p) {
            seeds.push(p);
        }
    }
    seeds
}

/// Reads a seeds file: ids, or URLs looked up in the graph's `.urls`. Errors name the file
/// and line.
pub fn read_seeds(path: &Path, graph: &BvWebGraph) -> Result<Vec<PageId>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read the seeds file {}", path.display()))?;
    let n = graph.num_nodes();
    let mut url_index: Option<HashMap<String, PageId>> = None;
    let mut seeds = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let at = || format!("{}:{}", path.display(), i + 1);
        let id = if let Ok(id) = line.parse::<u64>() {
            ensure!(
                (id as usize) < n,
                "{}: seed {id} is not a page of the graph (it has {n} pages)",
                at()
            );
            id as PageId
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
        seeds.push(id);
    }
    ensure!(
        !seeds.is_empty(),
        "the seeds file {} holds no seeds",
        path.display()
    );
    Ok(seeds)
}
