//! The crawl-ordering policies of docs/algorithms.md §3, one module each, and their registry.
//!
//! Adding a policy means one file here implementing [`Policy`] with a
//! `fn(&PolicyConfig) -> Box<dyn Policy>` constructor, and one line in the `registry!` call
//! below: that line gives it its [`PolicyKind`] variant, its command-line name, its one-line
//! description and its constructor, and every command, table and stored crawl state picks it
//! up from there.
//!
//! The simulator's reference line `omniscient`, which needs the whole graph, is not a policy a
//! crawl can run and lives in the simulator crate.

/// The [`Policy`](crate::Policy) methods of a policy whose frontier is the
/// [`PageHeap`](crate::PageHeap) in its field `heap`: the frontier's length and the heap's spill
/// state.
macro_rules! heap_frontier {
    () => {
        fn len(&self) -> usize {
            self.heap.len()
        }
        fn spill_status(&self) -> Option<crate::SpillStatus> {
            self.heap.spill_status()
        }
    };
}

/// The [`Policy`](crate::Policy) scores of a policy that crawls the smallest distance `D` (its
/// field `dist`, a `PageValues`) first: a known page's score, and a crawled page's final
/// score, is `−D`.
macro_rules! distance_scores {
    () => {
        fn score(&self, page: PageId, pages: &PageTable) -> Option<f64> {
            pages.is_known(page).then(|| -self.dist.get(page))
        }
        fn final_scores(&mut self, order: &[PageId], _: &PageTable) -> Vec<f64> {
            order.iter().map(|&p| -self.dist.get(p)).collect()
        }
    };
}

pub mod backlink;
pub mod fica;
pub mod ieca;
mod impact;
mod known;
#[cfg(feature = "learned")]
pub mod learned;
#[cfg(not(feature = "learned"))]
mod learned {
    //! A build without the feature `learned`: the policy's name stays known, so that a command
    //! line or a stored crawl state naming it gets [`PolicyKind::build`]'s clear error.

    use super::{PolicyConfig, PolicyKind};
    use crate::Policy;

    /// Never called: [`PolicyKind::build`] refuses the policy first.
    pub fn learned(_: &PolicyConfig) -> Box<dyn Policy> {
        unreachable!("{}", super::unavailable(PolicyKind::Learned))
    }
}
pub mod opic;
pub mod pagerank;
pub mod rw;
pub mod simple;

use crate::{Policy, SpillConfig};
use anyhow::{bail, ensure, Context, Result};
use std::sync::Arc;

/// `log` in every formula is base 10 (FICA Definition 1, docs/algorithms.md §1).
#[inline]
pub(crate) fn log10(x: f64) -> f64 {
    x.log10()
}

/// Declares [`PolicyKind`] from one line per policy: variant, name, description, constructor.
macro_rules! registry {
    ($($variant:ident => $name:literal, $about:literal, $build:path;)+) => {
        /// The policies a crawl can run, by command-line name.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum PolicyKind {
            $(#[doc = $about] $variant,)+
        }

        impl PolicyKind {
            /// Every policy, in the order tables and plots list them.
            pub const ALL: &'static [PolicyKind] = &[$(PolicyKind::$variant,)+];

            /// The command-line name.
            pub fn name(self) -> &'static str {
                match self {
                    $(PolicyKind::$variant => $name,)+
                }
            }

            /// One line saying how the policy orders the frontier.
            pub fn about(self) -> &'static str {
                match self {
                    $(PolicyKind::$variant => $about,)+
                }
            }

            fn constructor(self) -> fn(&PolicyConfig) -> Box<dyn Policy> {
                match self {
                    $(PolicyKind::$variant => $build,)+
                }
            }
        }
    };
}

registry! {
    Bfs => "bfs", "first-discovery order (FIFO)", simple::bfs;
    Random => "random", "uniformly random among the frontier (seeded)", simple::random;
    Backlink => "backlink", "most in-links from crawled pages, re-sorted every K pages", backlink::backlink;
    Indegree => "indegree", "most in-links from crawled pages, kept in order at every link", backlink::indegree;
    BatchPagerank => "batch-pagerank", "PageRank of the known graph, re-sorted every K pages", pagerank::batch;
    PartialPagerank => "partial-pagerank", "PageRank every K pages, shares of crawled parents' scores between", pagerank::partial;
    Opic => "opic", "most OPIC cash (on-line page importance)", opic::opic;
    Fica => "fica", "smallest logarithmic distance from the seeds (FICA)", fica::fica;
    FicaPlus => "fica-plus", "FICA's distance traded against in-links (our FICA+ reconstruction)", fica::fica_plus;
    Ieca => "ieca", "smallest IECA distance (FICA with the parent-child coefficient)", ieca::ieca;
    Rw => "rw", "impact-weighted random walk of the known graph, re-sorted every K pages (needs impacts)", rw::rw;
    RwEg => "rw-eg", "RW over real and virtual (co-cited) arcs, weight ω, re-sorted every K pages (needs impacts)", rw::rw_eg;
    Learned => "learned", "a random forest over in-degree, PageRank and the walks, refitted on crawled pages' impacts every K pages (needs impacts)", learned::learned;
}

impl PolicyKind {
    /// The policy with this command-line name; the error lists the valid ones, or says that
    /// this build lacks the policy ([`available`](Self::available)).
    pub fn parse(name: &str) -> Result<Self> {
        match Self::ALL.iter().find(|k| k.name() == name.trim()) {
            Some(k) => {
                k.check_available()?;
                Ok(*k)
            }
            None => bail!("unknown policy '{name}'; valid policies: {}", Self::names()),
        }
    }

    /// Every name, comma-separated (for messages and help); a policy this build lacks says so.
    pub fn names() -> String {
        Self::ALL
            .iter()
            .map(|k| match k.available() {
                true => k.name().to_string(),
                false => format!("{} (not in this build)", k.name()),
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Whether this build has the policy: `learned` needs the crate feature `learned` (its
    /// model links smartcore); every other policy is always there.
    pub fn available(self) -> bool {
        self != PolicyKind::Learned || cfg!(feature = "learned")
    }

    /// [`available`](Self::available), as an error that says how to get the policy.
    pub fn check_available(self) -> Result<()> {
        ensure!(self.available(), "{}", unavailable(self));
        Ok(())
    }

    /// Whether the policy needs the pages' impacts ([`PolicyConfig::impact`] or
    /// [`Frontier::set_impact`](crate::Frontier::set_impact)): `rw`, `rw-eg` and `learned`
    /// (docs/algorithms.md §6).
    pub fn needs_impact(self) -> bool {
        matches!(
            self,
            PolicyKind::Rw | PolicyKind::RwEg | PolicyKind::Learned
        )
    }

    /// Builds the policy; a policy this build lacks ([`available`](Self::available)), or one
    /// that [needs impacts](Self::needs_impact) without them, is an error.
    pub fn build(self, config: &PolicyConfig) -> Result<Box<dyn Policy>> {
        self.check_available()?;
        config.check()?;
        ensure!(
            !self.needs_impact() || config.impact.is_some(),
            "the policy {} needs the pages' impacts (simulate --impact FILE, crawl --impact FILE)",
            self.name()
        );
        Ok(self.constructor()(config))
    }
}

/// The error of a policy this build lacks.
fn unavailable(kind: PolicyKind) -> String {
    format!(
        "this build has no {0} policy; build with feature `{0}`",
        kind.name()
    )
}

impl std::fmt::Display for PolicyKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The default batch size `K` for a crawl expected to reach `expected_pages` pages:
/// `ceil(expected / 72)`, the FICA paper's 18M pages over 250,000 reorders
/// (docs/algorithms.md §2). The simulator's `expected_pages` is `R`, the reachable pages.
pub fn default_batch(expected_pages: u64) -> u64 {
    expected_pages.div_ceil(72).max(1)
}

/// A per-page impact vector (the RW paper's search log, docs/algorithms.md §6), indexed by
/// page id: clicks, views or any signal ≥ 0; pages beyond its end have impact 0. Shared, so
/// that cloning a [`PolicyConfig`] does not copy it.
#[derive(Clone, PartialEq)]
pub struct Impacts(pub Arc<Vec<f64>>);

impl Impacts {
    /// Wraps a vector.
    pub fn new(values: Vec<f64>) -> Self {
        Self(Arc::new(values))
    }

    /// The values, by page id.
    pub fn values(&self) -> &[f64] {
        &self.0
    }
}

impl std::fmt::Debug for Impacts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Impacts({} pages)", self.0.len())
    }
}

/// What policies need to know about the crawl they order.
#[derive(Debug, Clone, PartialEq)]
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
    /// IECA's (and `fica-plus`'s) balance δ until the first reorder: the start of the
    /// schedule `δ = delta_initial − delta_slope·min(1, crawled/R)` (docs/algorithms.md §3).
    pub delta_initial: f64,
    /// How far δ falls over the crawl (see [`delta_initial`](Self::delta_initial)).
    pub delta_slope: f64,
    /// L1 threshold of the PageRanks (and of `rw`'s and `rw-eg`'s walks) the batch policies
    /// compute at each reorder.
    pub batch_pagerank_threshold: f64,
    /// The impact of each page by id, for `rw`, `rw-eg` and `learned` (which cannot run
    /// without it; a crawler may start from an empty vector and report impacts as it
    /// discovers pages, [`Frontier::set_impact`](crate::Frontier::set_impact)). Not part of the
    /// stored [`PolicySpec`]: [`impact_digest`](Self::impact_digest) identifies it there.
    pub impact: Option<Impacts>,
    /// A digest of the impact file a crawl reads (stored, so that a resumed crawl can check it
    /// is given the same search log); `None` in the simulator.
    pub impact_digest: Option<u64>,
    /// `rw-eg`'s weight ω of the real arcs against the virtual ones, in [0, 1] (`rw` is ω = 1).
    pub omega: f64,
    /// Exponent γ of the out-degree factor of `rw`'s and `rw-eg`'s walks (≥ 0).
    pub gamma: f64,
    /// Whether the priority policies' queue keeps its cold part on disk, and where
    /// ([`SpillConfig`]); `None`, the default, keeps it in memory. The crawl order
    /// is the same either way, so this is not part of the stored [`PolicySpec`]: a resumed
    /// crawl may choose differently.
    pub spill: Option<SpillConfig>,
}

impl PolicyConfig {
    /// β's default, as in both papers.
    pub const BETA: f64 = 0.1;
    /// δ's default start, IECA's 0.35.
    pub const DELTA_INITIAL: f64 = 0.35;
    /// δ's default fall, 0.28 (from 0.35 to IECA's 0.07 at the end of the crawl).
    pub const DELTA_SLOPE: f64 = 0.28;
    /// The batch PageRank's default L1 threshold (docs/algorithms.md §3.3: orders agree with
    /// 1e-10 and it is several times faster).
    pub const BATCH_PAGERANK_THRESHOLD: f64 = 1e-6;
    /// `rw-eg`'s default ω (docs/algorithms.md §6: the fallback when not tuned).
    pub const OMEGA: f64 = 0.8;
    /// The walks' default γ (docs/algorithms.md §6).
    pub const GAMMA: f64 = 0.0;

    /// The defaults for a crawl expected to reach `expected_pages` pages of a web of
    /// `total_pages`: `K` = [`default_batch`]`(expected_pages)`, β = 0.1, rng seed 0.
    pub fn for_crawl(expected_pages: u64, total_pages: u64) -> Self {
        let expected_pages = expected_pages.max(1);
        Self {
            batch: default_batch(expected_pages),
            expected_pages,
            total_pages: total_pages.max(1),
            rng_seed: 0,
            beta: Self::BETA,
            delta_initial: Self::DELTA_INITIAL,
            delta_slope: Self::DELTA_SLOPE,
            batch_pagerank_threshold: Self::BATCH_PAGERANK_THRESHOLD,
            impact: None,
            impact_digest: None,
            omega: Self::OMEGA,
            gamma: Self::GAMMA,
            spill: None,
        }
    }

    /// Checks the values a policy relies on.
    pub fn check(&self) -> Result<()> {
        ensure!(self.batch >= 1, "the batch size K must be at least 1");
        ensure!(
            self.beta.is_finite() && self.beta >= 0.0,
            "β must be a finite number ≥ 0, not {}",
            self.beta
        );
        let end = self.delta_initial - self.delta_slope;
        ensure!(
            (0.0..=1.0).contains(&self.delta_initial) && (0.0..=1.0).contains(&end),
            "δ must stay in [0, 1]: it starts at {} and ends at {} − {} = {end}",
            self.delta_initial,
            self.delta_initial,
            self.delta_slope
        );
        ensure!(
            self.batch_pagerank_threshold.is_finite() && self.batch_pagerank_threshold > 0.0,
            "the batch PageRank threshold must be a positive number, not {}",
            self.batch_pagerank_threshold
        );
        ensure!(
            (0.0..=1.0).contains(&self.omega),
            "ω must be in [0, 1], not {}",
            self.omega
        );
        ensure!(
            self.gamma.is_finite() && self.gamma >= 0.0,
            "γ must be a finite number ≥ 0, not {}",
            self.gamma
        );
        if let Some(impact) = &self.impact {
            if let Some(bad) = impact
                .values()
                .iter()
                .position(|v| !v.is_finite() || *v < 0.0)
            {
                bail!(
                    "the impact of page {bad} is {}: impacts must be finite and ≥ 0",
                    impact.values()[bad]
                );
            }
        }
        Ok(())
    }
}

impl Default for PolicyConfig {
    fn default() -> Self {
        Self::for_crawl(1, 1)
    }
}

/// A policy with its configuration: everything needed to build a frontier, and to build the
/// same one again when a crawl resumes. [`encode`](Self::encode) is the one stored form.
#[derive(Debug, Clone, PartialEq)]
pub struct PolicySpec {
    /// Which policy.
    pub kind: PolicyKind,
    /// What it is told about the crawl.
    pub config: PolicyConfig,
}

impl PolicySpec {
    /// `key=value` lines. Floats are written in Rust's shortest round-trip form, so decoding
    /// gives back the same bits.
    pub fn encode(&self) -> String {
        let c = &self.config;
        let mut digest = c
            .impact_digest
            .map(|d| format!("impact_digest={d:016x}\n"))
            .unwrap_or_default();
        // δ's schedule is stored only when it is not the default, so that the stored form of
        // a default crawl is what it always was.
        if (c.delta_initial, c.delta_slope)
            != (PolicyConfig::DELTA_INITIAL, PolicyConfig::DELTA_SLOPE)
        {
            digest += &format!(
                "delta_initial={:?}\ndelta_slope={:?}\n",
                c.delta_initial, c.delta_slope
            );
        }
        format!(
            "policy={}\nbatch={}\nexpected_pages={}\ntotal_pages={}\nrng_seed={}\nbeta={:?}\nbatch_pagerank_threshold={:?}\nomega={:?}\ngamma={:?}\n{digest}",
            self.kind.name(),
            c.batch,
            c.expected_pages,
            c.total_pages,
            c.rng_seed,
            c.beta,
            c.batch_pagerank_threshold,
            c.omega,
            c.gamma
        )
    }

    /// Reads [`encode`](Self::encode)'s form (the impact vector is not stored: it is `None`).
    /// `beta`, `batch_pagerank_threshold`, `omega` and `gamma` may be missing (states written before they were stored), meaning the defaults those crawls
    /// ran with; any other missing key, an unknown key or a bad value is an error.
    pub fn decode(text: &str) -> Result<Self> {
        let mut values = std::collections::BTreeMap::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() {
                continue;
            }
            let (k, v) = line
                .split_once('=')
                .with_context(|| format!("line {}: '{line}' is not key=value", i + 1))?;
            ensure!(
                values.insert(k.trim(), v.trim()).is_none(),
                "line {}: '{k}' given twice",
                i + 1
            );
        }
        let mut take = |key: &str| values.remove(key);
        let kind = PolicyKind::parse(take("policy").context("no policy")?)?;
        fn num<T: std::str::FromStr>(key: &str, v: Option<&str>) -> Result<T>
        where
            T::Err: std::error::Error + Send + Sync + 'static,
        {
            let v = v.with_context(|| format!("no {key}"))?;
            v.parse().with_context(|| format!("{key}: bad value '{v}'"))
        }
        let config = PolicyConfig {
            batch: num("batch", take("batch"))?,
            expected_pages: num("expected_pages", take("expected_pages"))?,
            total_pages: num("total_pages", take("total_pages"))?,
            rng_seed: num("rng_seed", take("rng_seed"))?,
            beta: num("beta", Some(take("beta").unwrap_or("0.1")))?,
            delta_initial: num(
                "delta_initial",
                Some(take("delta_initial").unwrap_or("0.35")),
            )?,
            delta_slope: num("delta_slope", Some(take("delta_slope").unwrap_or("0.28")))?,
            batch_pagerank_threshold: num(
                "batch_pagerank_threshold",
                Some(take("batch_pagerank_threshold").unwrap_or("1e-6")),
            )?,
            impact: None,
            impact_digest: match take("impact_digest") {
                None => None,
                Some(v) => Some(
                    u64::from_str_radix(v, 16)
                        .with_context(|| format!("impact_digest: bad value '{v}'"))?,
                ),
            },
            omega: num("omega", Some(take("omega").unwrap_or("0.8")))?,
            gamma: num("gamma", Some(take("gamma").unwrap_or("0")))?,
            spill: None,
        };
        if let Some(k) = values.keys().next() {
            bail!("unknown key '{k}'");
        }
        config.check()?;
        Ok(Self { kind, config })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_round_trip_and_old_ones_read() {
        for &kind in PolicyKind::ALL.iter().filter(|k| k.available()) {
            let spec = PolicySpec {
                kind,
                config: PolicyConfig {
                    beta: 0.3,
                    // Half the specs keep δ's default schedule (not stored), half not.
                    delta_initial: if kind.needs_impact() { 0.35 } else { 0.6 },
                    delta_slope: if kind.needs_impact() { 0.28 } else { 0.5 },
                    batch_pagerank_threshold: 1.5e-7,
                    rng_seed: u64::MAX,
                    omega: 0.3,
                    gamma: 1.0,
                    impact_digest: kind.needs_impact().then_some(0xfeed_beef_0123_4567),
                    ..PolicyConfig::for_crawl(12_345, 99)
                },
            };
            assert_eq!(PolicySpec::decode(&spec.encode()).unwrap(), spec);
        }
        let default = PolicySpec {
            kind: PolicyKind::Ieca,
            config: PolicyConfig::for_crawl(100, 100),
        };
        assert!(!default.encode().contains("delta"), "{}", default.encode());
        // As crawl states stored it before β and the threshold were part of it.
        let old = "policy=ieca\nbatch=7\nexpected_pages=500\ntotal_pages=600\nrng_seed=3\n";
        let spec = PolicySpec::decode(old).unwrap();
        assert_eq!(spec.kind, PolicyKind::Ieca);
        assert_eq!(spec.config.beta, PolicyConfig::BETA);
        assert_eq!(spec.config.batch, 7);
        assert_eq!(spec.config.omega, PolicyConfig::OMEGA);
        assert_eq!(spec.config.gamma, PolicyConfig::GAMMA);
        for bad in [
            "policy=omniscient\nbatch=1\nexpected_pages=1\ntotal_pages=1\nrng_seed=0\n",
            "policy=fica\nbatch=0\nexpected_pages=1\ntotal_pages=1\nrng_seed=0\n",
            "policy=fica\nbatch=1\nexpected_pages=1\ntotal_pages=1\n",
            "policy=fica\nbatch=x\nexpected_pages=1\ntotal_pages=1\nrng_seed=0\n",
            "policy=fica\nbatch=1\nexpected_pages=1\ntotal_pages=1\nrng_seed=0\ncolour=red\n",
            "policy=fica\npolicy=bfs\n",
            "policy=rw-eg\nbatch=1\nexpected_pages=1\ntotal_pages=1\nrng_seed=0\nomega=1.5\n",
            "nonsense",
        ] {
            assert!(PolicySpec::decode(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn the_default_batch_is_the_papers_ratio() {
        assert_eq!(default_batch(0), 1);
        assert_eq!(default_batch(72), 1);
        assert_eq!(default_batch(73), 2);
        assert_eq!(PolicyConfig::for_crawl(7_200, 1).batch, 100);
    }
}
