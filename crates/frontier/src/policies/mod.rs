//! The crawl-ordering policies of SPEC §3, one module each.
//!
//! | name | module |
//! |---|---|
//! | `bfs`, `random` | [`simple`] |
//! | `backlink`, `indegree` | [`backlink`] |
//! | `batch-pagerank`, `partial-pagerank` | [`pagerank`] |
//! | `opic` | [`opic`] |
//! | `fica`, `fica-plus` | [`fica`] |
//! | `ieca` | [`ieca`] |
//! | `omniscient` | [`omniscient`] |

pub mod backlink;
pub mod fica;
pub mod ieca;
pub mod omniscient;
pub mod opic;
pub mod pagerank;
pub mod simple;

use crate::Policy;
use anyhow::{bail, ensure, Result};
use std::sync::Arc;

/// `log` in every formula is base 10 (FICA Definition 1, SPEC §1).
#[inline]
pub(crate) fn log10(x: f64) -> f64 {
    x.log10()
}

/// The policies, by command-line name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PolicyKind {
    Bfs,
    Random,
    Backlink,
    Indegree,
    BatchPagerank,
    PartialPagerank,
    Opic,
    Fica,
    FicaPlus,
    Ieca,
    Omniscient,
}

impl PolicyKind {
    /// Every policy, in the order tables and plots list them.
    pub const ALL: [PolicyKind; 11] = [
        PolicyKind::Bfs,
        PolicyKind::Random,
        PolicyKind::Backlink,
        PolicyKind::Indegree,
        PolicyKind::BatchPagerank,
        PolicyKind::PartialPagerank,
        PolicyKind::Opic,
        PolicyKind::Fica,
        PolicyKind::FicaPlus,
        PolicyKind::Ieca,
        PolicyKind::Omniscient,
    ];

    /// The command-line name.
    pub fn name(self) -> &'static str {
        match self {
            PolicyKind::Bfs => "bfs",
            PolicyKind::Random => "random",
            PolicyKind::Backlink => "backlink",
            PolicyKind::Indegree => "indegree",
            PolicyKind::BatchPagerank => "batch-pagerank",
            PolicyKind::PartialPagerank => "partial-pagerank",
            PolicyKind::Opic => "opic",
            PolicyKind::Fica => "fica",
            PolicyKind::FicaPlus => "fica-plus",
            PolicyKind::Ieca => "ieca",
            PolicyKind::Omniscient => "omniscient",
        }
    }

    /// Parses a name; the error lists the valid ones.
    pub fn parse(name: &str) -> Result<Self> {
        match Self::ALL.iter().find(|k| k.name() == name.trim()) {
            Some(k) => Ok(*k),
            None => bail!(
                "unknown policy '{name}'; valid policies: {}, or all",
                Self::ALL.map(|k| k.name()).join(", ")
            ),
        }
    }

    /// Parses a comma-separated list, where `all` means every policy.
    pub fn parse_list(list: &str) -> Result<Vec<Self>> {
        let mut out = Vec::new();
        for name in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let kinds = if name == "all" {
                Self::ALL.to_vec()
            } else {
                vec![Self::parse(name)?]
            };
            for k in kinds {
                if !out.contains(&k) {
                    out.push(k);
                }
            }
        }
        ensure!(
            !out.is_empty(),
            "no policy given; valid policies: {}, or all",
            Self::ALL.map(|k| k.name()).join(", ")
        );
        Ok(out)
    }

    /// Whether the policy needs the true PageRank of the whole graph (simulator only).
    pub fn needs_true_pagerank(self) -> bool {
        self == PolicyKind::Omniscient
    }
}

impl std::fmt::Display for PolicyKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// What policies need to know about the crawl they order.
#[derive(Debug, Clone)]
pub struct PolicyConfig {
    /// The batch size `K`: batch policies reorder, and FICA's/IECA's `t` ticks, every K pages.
    pub batch: u64,
    /// `R`: the pages the crawl is expected to reach (reachable pages in the simulator, the
    /// user's `--expected-pages` in a real crawl). IECA's δ falls with `crawled / R`.
    pub expected_pages: u64,
    /// `n`: the number of pages of the web; OPIC gives every page `1/n` cash to start with.
    pub total_pages: u64,
    /// Seed of the `random` policy's generator.
    pub rng_seed: u64,
    /// FICA's and IECA's β in `α = exp(−β·t)`.
    pub beta: f64,
    /// L1 threshold of the PageRanks the batch policies compute at each reorder.
    pub batch_pagerank_threshold: f64,
    /// The true PageRank of the whole graph (`omniscient` only).
    pub true_pagerank: Option<Arc<Vec<f64>>>,
}

impl Default for PolicyConfig {
    fn default() -> Self {
        Self {
            batch: 1,
            expected_pages: 1,
            total_pages: 1,
            rng_seed: 0,
            beta: 0.1,
            batch_pagerank_threshold: 1e-6,
            true_pagerank: None,
        }
    }
}

/// Builds a policy.
pub fn build(kind: PolicyKind, c: &PolicyConfig) -> Result<Box<dyn Policy>> {
    ensure!(c.batch >= 1, "the batch size K must be at least 1");
    Ok(match kind {
        PolicyKind::Bfs => Box::new(simple::Bfs::default()),
        PolicyKind::Random => Box::new(simple::RandomOrder::new(c.rng_seed)),
        PolicyKind::Backlink => Box::new(backlink::Backlink::default()),
        PolicyKind::Indegree => Box::new(backlink::InDegree::default()),
        PolicyKind::BatchPagerank => Box::new(pagerank::KnownGraphPageRank::batch(
            c.batch_pagerank_threshold,
        )),
        PolicyKind::PartialPagerank => Box::new(pagerank::KnownGraphPageRank::partial(
            c.batch_pagerank_threshold,
        )),
        PolicyKind::Opic => Box::new(opic::Opic::new(c.total_pages)),
        PolicyKind::Fica => Box::new(fica::Fica::new(c.beta)),
        PolicyKind::FicaPlus => Box::new(fica::FicaPlus::new(c.beta, c.expected_pages)),
        PolicyKind::Ieca => Box::new(ieca::Ieca::new(c.beta, c.expected_pages)),
        PolicyKind::Omniscient => match &c.true_pagerank {
            Some(pr) => Box::new(omniscient::Omniscient::new(pr.clone())),
            None => bail!("the omniscient policy needs the true PageRank (simulator only)"),
        },
    })
}
