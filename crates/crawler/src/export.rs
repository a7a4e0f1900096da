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

/// The ranking snapshot a crawl keeps in its state directory, refreshed every `K` crawled
/// pages and when it stops, so the ranking can be read while the crawl holds the state.
pub const RANKING_SNAPSHOT: &str = "ranking.tsv";

/// What [`export_ranking`] wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RankingExport {
    /// URLs written (those the policy scores).
    pub scored: usize,
    /// URLs left out because the policy has no score for them (unknown when read from a
    /// snapshot).
    pub unscored: Option<usize>,
    /// Whether a running crawl held the state, so the latest snapshot was copied instead.
    pub from_snapshot: bool,
}

/// Writes `score\turl` for every URL the policy scores, by decreasing score (ties by
/// discovery order), atomically. Returns (scored, unscored) counts.
pub(crate) fn write_ranking<S: AsRef<str>>(
    out: &Path,
    urls: &[S],
    score: impl Fn(u32) -> Option<f64>,
) -> Result<(usize, usize)> {
    let mut scored: Vec<(f64, u32)> = (0..urls.len() as u32)
        .filter_map(|id| score(id).filter(|s| !s.is_nan()).map(|s| (s, id)))
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    crawlrank_graph::atomic::write_file(out, |w| {
        for &(s, id) in &scored {
            writeln!(w, "{s}\t{}", urls[id as usize].as_ref())
                .with_context(|| format!("cannot write {}", out.display()))?;
        }
        Ok(())
    })?;
    Ok((scored.len(), urls.len() - scored.len()))
}

/// Writes the current ranking of every URL by the policy's score (`score\turl`, best first;
/// URLs the policy has no score for, e.g. pages a FIFO policy never ranks, are left out).
/// While a crawl is running and holds the state, the crawl's latest snapshot
/// ([`RANKING_SNAPSHOT`]) is copied instead.
pub fn export_ranking(dir: &Path, out: &Path) -> Result<RankingExport> {
    let loaded = match load(dir) {
        Ok(loaded) => loaded,
        Err(e) => {
            let snapshot = dir.join(RANKING_SNAPSHOT);
            if !snapshot.is_file() {
                return Err(e);
            }
            let text = std::fs::read(&snapshot)
                .with_context(|| format!("cannot read {}", snapshot.display()))?;
            crawlrank_graph::atomic::write_file(out, |w| {
                w.write_all(&text)
                    .with_context(|| format!("cannot write {}", out.display()))
            })?;
            return Ok(RankingExport {
                scored: text.iter().filter(|&&b| b == b'\n').count(),
                unscored: None,
                from_snapshot: true,
            });
        }
    };
    let cfg = config(dir, &loaded)?;
    let replayed = state::replay(&cfg, &loaded.events)?;
    let (scored, unscored) = write_ranking(out, &loaded.urls, |id| replayed.frontier.score(id))?;
    Ok(RankingExport {
        scored,
        unscored: Some(unscored),
        from_snapshot: false,
    })
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
