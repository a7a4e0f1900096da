//! What a crawl state can be turned into: its link graph as a BVGraph (so a real crawl feeds
//! `crawlrank simulate` and `rank`), the policy's current ranking of every URL, and a status
//! summary. All of them read the state without changing it.
//!
//! The graph: nodes are all discovered URLs (ids in discovery order, which is the `.urls`
//! line order), arcs are the out-links of the crawled pages as reported to the policy
//! (redirects contribute their target). Pages not crawled have no out-links.

use crate::state;
use crate::stats::Stats;
use crate::store::{Event, Loaded, StateConfig, Store};
use anyhow::{Context, Result};
use crawlrank_graph::atomic::StagedBasename;
use std::collections::BTreeMap;
use std::fmt;
use std::io::Write;
use std::path::Path;
use webgraph::graphs::vec_graph::VecGraph;

fn load(dir: &Path) -> Result<Loaded> {
    let (_, loaded) = Store::open(dir, false)?;
    Ok(loaded)
}

fn config(dir: &Path, loaded: &Loaded) -> Result<StateConfig> {
    loaded
        .config
        .clone()
        .with_context(|| format!("{} holds no crawl configuration yet", dir.display()))
}

/// Numbers of an export.
#[derive(Debug, Clone, Copy)]
pub struct GraphExport {
    pub nodes: usize,
    pub arcs: u64,
    pub crawled: u64,
}

/// Writes the crawl's link graph as a BVGraph at `out` (`.graph`, `.offsets`,
/// `.properties`) with `out.urls`, atomically.
pub fn export_graph(dir: &Path, out: &Path) -> Result<GraphExport> {
    let loaded = load(dir)?;
    let n = loaded.urls.len();
    let mut arcs: Vec<(usize, usize)> = Vec::new();
    let mut crawled = 0;
    for e in &loaded.events {
        if let Event::Crawled { id, links, .. } = e {
            crawled += 1;
            arcs.extend(links.iter().map(|&l| (*id as usize, l as usize)));
        }
    }
    arcs.sort_unstable();
    arcs.dedup();
    let mut g = VecGraph::empty(n);
    g.add_arcs(arcs.iter().copied());
    let staged = StagedBasename::new(out)?;
    let base = staged.basename();
    crawlrank_graph::bv::write_bvgraph(&g, &base)?;
    crawlrank_graph::urls::write_urls(&staged.path(".urls"), &loaded.urls)?;
    staged.commit()?;
    Ok(GraphExport {
        nodes: n,
        arcs: arcs.len() as u64,
        crawled,
    })
}

/// Writes `score\turl` for every URL the policy scores, by decreasing score (ties by
/// discovery order), atomically. Returns (scored, unscored) counts; unscored URLs (those the
/// policy has no score for, e.g. pages a FIFO policy never ranks) are left out.
pub fn export_ranking(dir: &Path, out: &Path) -> Result<(usize, usize)> {
    let loaded = load(dir)?;
    let cfg = config(dir, &loaded)?;
    let replayed = state::replay(&cfg, &loaded.events)?;
    let mut scored: Vec<(f64, u32)> = (0..loaded.urls.len() as u32)
        .filter_map(|id| {
            replayed
                .frontier
                .score(id)
                .filter(|s| !s.is_nan())
                .map(|s| (s, id))
        })
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    crawlrank_graph::atomic::write_file(out, |w| {
        for &(s, id) in &scored {
            writeln!(w, "{s}\t{}", loaded.urls[id as usize])
                .with_context(|| format!("cannot write {}", out.display()))?;
        }
        Ok(())
    })?;
    Ok((scored.len(), loaded.urls.len() - scored.len()))
}

/// A summary of a crawl state.
#[derive(Debug, Clone)]
pub struct Status {
    pub config: Option<StateConfig>,
    pub discovered: usize,
    pub popped: u64,
    pub crawled: u64,
    /// Popped, not finished: fetched first when the crawl resumes.
    pub pending: u64,
    /// Discovered, never popped.
    pub frontier: u64,
    pub outcomes: BTreeMap<&'static str, u64>,
    pub hosts: usize,
    pub warc_files: u32,
    pub stats: Stats,
}

/// Reads the status of the crawl in `dir`.
pub fn status(dir: &Path) -> Result<Status> {
    let loaded = load(dir)?;
    let (mut popped, mut crawled) = (0, 0);
    let mut outcomes = BTreeMap::new();
    for e in &loaded.events {
        match e {
            Event::Popped(_) => popped += 1,
            Event::Crawled { outcome, .. } => {
                crawled += 1;
                *outcomes.entry(outcome.name()).or_insert(0) += 1;
            }
            Event::Seed(_) => {}
        }
    }
    let hosts: std::collections::HashSet<String> = loaded
        .urls
        .iter()
        .filter_map(|u| crate::links::host_key(u))
        .collect();
    Ok(Status {
        config: loaded.config.clone(),
        discovered: loaded.urls.len(),
        popped,
        crawled,
        pending: popped - crawled,
        frontier: (loaded.urls.len() as u64).saturating_sub(popped),
        outcomes,
        hosts: hosts.len(),
        warc_files: if loaded.warc == Default::default() && crawled == 0 {
            0
        } else {
            loaded.warc.file + 1
        },
        stats: Stats::decode(&loaded.stats),
    })
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(c) = &self.config {
            writeln!(
                f,
                "policy {} (K = {}, expected pages {}, total pages {}, rng seed {})",
                c.policy, c.batch, c.expected_pages, c.total_pages, c.rng_seed
            )?;
        }
        writeln!(f, "discovered URLs   {}", self.discovered)?;
        writeln!(f, "pages finished    {}", self.crawled)?;
        writeln!(
            f,
            "in flight at stop {} (fetched first on resume)",
            self.pending
        )?;
        writeln!(f, "frontier          {}", self.frontier)?;
        writeln!(f, "hosts             {}", self.hosts)?;
        writeln!(f, "WARC files        {}", self.warc_files)?;
        for (k, v) in &self.outcomes {
            writeln!(f, "  {k:<20} {v}")?;
        }
        write!(f, "counters:\n{}", self.stats)
    }
}

/// The URLs of the pages popped so far, in pop order (the crawl order the policy chose;
/// with one request slot it is also the fetch order).
pub fn crawl_order(dir: &Path) -> Result<Vec<String>> {
    let loaded = load(dir)?;
    Ok(loaded
        .events
        .iter()
        .filter_map(|e| match e {
            Event::Popped(id) => loaded.urls.get(*id as usize).cloned(),
            _ => None,
        })
        .collect())
}
