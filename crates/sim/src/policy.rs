//! What the simulator can run: every crawl policy of the frontier's registry, plus the
//! `omniscient` reference line, which needs the whole graph and so exists only here.

use crate::omniscient::Omniscient;
use anyhow::{bail, ensure, Result};
use crawlrank_frontier::{Policy, PolicyConfig, PolicyKind};
use std::sync::Arc;

/// A policy the simulator runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SimPolicy {
    /// A policy a real crawl can run.
    Crawl(PolicyKind),
    /// The frontier page with the highest true PageRank (docs/algorithms.md §3.9).
    Omniscient,
    /// An order computed elsewhere and scored by [`score_order`](crate::score_order), under
    /// the name its user gave it; not a policy the simulator can run.
    Outside(&'static str),
    /// A policy its caller built and ran with [`simulate_policy`](crate::simulate_policy)
    /// (a library user's own ordering, e.g. one written in Python), under its name.
    Given(&'static str),
}

impl SimPolicy {
    /// Every policy, in the order tables and plots list them: the registry's, then
    /// `omniscient`.
    pub fn all() -> Vec<SimPolicy> {
        let crawl = PolicyKind::ALL.iter().map(|&k| SimPolicy::Crawl(k));
        crawl.chain([SimPolicy::Omniscient]).collect()
    }

    /// The command-line name.
    pub fn name(self) -> &'static str {
        match self {
            SimPolicy::Crawl(k) => k.name(),
            SimPolicy::Omniscient => "omniscient",
            SimPolicy::Outside(name) | SimPolicy::Given(name) => name,
        }
    }

    /// Parses a name; the error lists the valid ones.
    pub fn parse(name: &str) -> Result<Self> {
        match Self::all().into_iter().find(|k| k.name() == name.trim()) {
            Some(k) => {
                k.check_available()?;
                Ok(k)
            }
            None => bail!(
                "unknown policy '{name}'; valid policies: {}, or all",
                Self::names()
            ),
        }
    }

    fn names() -> String {
        let names: Vec<_> = Self::all()
            .iter()
            .map(|k| match k.available() {
                true => k.name().to_string(),
                false => format!("{k} (not in this build)"),
            })
            .collect();
        names.join(", ")
    }

    /// Whether this build can run the policy (`learned` needs the feature `learned`,
    /// [`PolicyKind::available`]).
    pub fn available(self) -> bool {
        !matches!(self, SimPolicy::Crawl(k) if !k.available())
    }

    /// [`available`](Self::available), as an error that says how to get the policy.
    pub fn check_available(self) -> Result<()> {
        match self {
            SimPolicy::Crawl(k) => k.check_available(),
            _ => Ok(()),
        }
    }

    /// Whether the policy needs a per-page impact vector (`rw`, `rw-eg`: `simulate --impact`).
    pub fn needs_impact(self) -> bool {
        matches!(self, SimPolicy::Crawl(k) if k.needs_impact())
    }

    /// Parses a comma-separated list of policies that run without impacts: `all` means every
    /// policy but those that [need impacts](Self::needs_impact), and naming one of those is an
    /// error. Repeats are dropped.
    pub fn parse_list(list: &str) -> Result<Vec<Self>> {
        Self::parse_list_with(list, false)
    }

    /// Parses a comma-separated list, where `all` means every policy that can run — with
    /// `impacts`, also `rw`, `rw-eg` and (in a build with it) `learned`; without, naming those
    /// is an error. Repeats are dropped.
    pub fn parse_list_with(list: &str, impacts: bool) -> Result<Vec<Self>> {
        let mut out = Vec::new();
        for name in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let kinds = if name == "all" {
                Self::all()
                    .into_iter()
                    .filter(|k| k.available() && (impacts || !k.needs_impact()))
                    .collect()
            } else {
                let k = Self::parse(name)?;
                ensure!(
                    impacts || !k.needs_impact(),
                    "the policy {k} needs the impact of each page: give --impact FILE"
                );
                vec![k]
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
            Self::names()
        );
        Ok(out)
    }

    /// Builds the policy; `pagerank` is the full graph's (only `omniscient` reads it).
    pub fn build(self, config: &PolicyConfig, pagerank: &Arc<Vec<f64>>) -> Result<Box<dyn Policy>> {
        match self {
            SimPolicy::Crawl(k) => k.build(config),
            SimPolicy::Omniscient => {
                config.check()?;
                Ok(Box::new(Omniscient::with_spill(
                    pagerank.clone(),
                    config.spill.as_ref(),
                )))
            }
            SimPolicy::Outside(name) => {
                bail!("{name} is an order scored from a file, not a policy the simulator runs")
            }
            SimPolicy::Given(name) => {
                bail!("{name} is built by its caller: run it with simulate_policy")
            }
        }
    }
}

impl std::fmt::Display for SimPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl From<PolicyKind> for SimPolicy {
    fn from(k: PolicyKind) -> Self {
        SimPolicy::Crawl(k)
    }
}
