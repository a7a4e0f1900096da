//! The ways a seed set is chosen, by name, and what each needs: the one list `crawlrank seeds
//! --method` and Python's `crawlrank.seeds(method=…)` both read, so that a name, its rule and
//! its errors are the same from either.
//!
//! Why here and not in each front end: the two used to hold their own copies of the names and
//! of which core rule a method takes, and copies drift. What stays in a front end is how it
//! names its options in an error (`--core-size` or `core_size`), which [`RuleError`] leaves to
//! it, and how it reports progress.

use crate::{
    extract_seeds, prepare, random_seeds, top_pagerank_seeds, CoreRule, Extraction, Pruning, Round,
    SeedsConfig,
};
use anyhow::Result;
use crawlrank_graph::{BvWebGraph, Csr};
use crawlrank_rank::HitsConfig;
use std::time::{Duration, Instant};

/// How a seed set is chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// Cores of a fixed cover density (the paper's Fig. 2, its choice).
    CoverDensity,
    /// Cores of a fixed size (the paper's Fig. 1).
    FixedSize,
    /// Uniformly random pages (the paper's baseline).
    Random,
    /// The pages of highest PageRank.
    TopPagerank,
}

/// A method's parameters that do not fit it, for its caller to word in its own option names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuleError {
    /// `fixed-size` without a core size.
    NeedsCoreSize,
    /// A core size for a method other than `fixed-size`.
    CoreSizeOnlyForFixedSize,
}

/// The parameters of the core methods, as the user gave them.
#[derive(Debug, Clone)]
pub struct CoreParams {
    /// cover-density: the lowest cover density of a core, in (0, 100].
    pub cover_density: f64,
    /// cover-density: the most hubs a core may have.
    pub max_hubs: usize,
    /// fixed-size: the size of each core (hubs and authorities).
    pub core_size: Option<usize>,
    /// fixed-size: hubs, then authorities, added per step.
    pub new_members: usize,
    /// HITS iterations per round, and the L1 change below which a round stops early.
    pub hits: HitsConfig,
}

impl Method {
    /// Every method, as the help lists them.
    pub const ALL: [Method; 4] = [
        Method::CoverDensity,
        Method::FixedSize,
        Method::Random,
        Method::TopPagerank,
    ];

    /// The method's name on the command line and in Python.
    pub fn name(self) -> &'static str {
        match self {
            Method::CoverDensity => "cover-density",
            Method::FixedSize => "fixed-size",
            Method::Random => "random",
            Method::TopPagerank => "top-pagerank",
        }
    }

    /// One line saying how it chooses.
    pub fn about(self) -> &'static str {
        match self {
            Method::CoverDensity => {
                "Cores of a fixed cover density (the paper's Fig. 2, its choice)"
            }
            Method::FixedSize => "Cores of a fixed size (the paper's Fig. 1)",
            Method::Random => "Uniformly random pages (the paper's baseline)",
            Method::TopPagerank => "The pages of highest PageRank",
        }
    }

    /// The method named `name`; the error lists the names.
    pub fn parse(name: &str) -> Result<Self> {
        Self::ALL
            .into_iter()
            .find(|m| m.name() == name)
            .ok_or_else(|| {
                anyhow::anyhow!(
                    "unknown seeds method {name:?}: cover-density, fixed-size, random or \
                     top-pagerank"
                )
            })
    }

    /// Whether it extracts cores from the graph (which must then be held in memory, to be
    /// pruned and masked); the others are baselines.
    pub fn extracts_cores(self) -> bool {
        matches!(self, Method::CoverDensity | Method::FixedSize)
    }

    /// The configuration of `count` seeds by this method: its core rule from `p` (the
    /// baselines take the cover-density rule, which they do not read), checked.
    pub fn config(self, count: usize, p: &CoreParams) -> Result<SeedsConfig, MethodError> {
        let rule = match (self, p.core_size) {
            (Method::FixedSize, Some(size)) => CoreRule::FixedSize {
                size,
                new_members: p.new_members,
            },
            (Method::FixedSize, None) => return Err(MethodError::Rule(RuleError::NeedsCoreSize)),
            (_, Some(_)) => return Err(MethodError::Rule(RuleError::CoreSizeOnlyForFixedSize)),
            (_, None) => CoreRule::CoverDensity {
                min_density: p.cover_density,
                max_hubs: p.max_hubs,
            },
        };
        let config = SeedsConfig {
            count,
            rule,
            hits: p.hits.clone(),
        };
        config.validate().map_err(MethodError::Invalid)?;
        Ok(config)
    }

    /// The seed set of `config` by this method on `graph` (decoded as `csr`): random pages
    /// drawn with `rng_seed`, the top pages by the PageRank `pagerank` computes, or the seeds
    /// of Extract-Seeds, whose steps `on_event` sees as they end.
    ///
    /// `urls` are the graph's URLs when the caller has read them already (`crawlrank seeds`
    /// does, for its files): host pruning takes its hosts from them rather than reading every
    /// URL a second time, which on a large web would hold two copies of them through the whole
    /// extraction. With `None`, pruning reads them itself, and only when it prunes.
    #[allow(clippy::too_many_arguments)]
    pub fn choose(
        self,
        graph: &BvWebGraph,
        csr: Option<&Csr>,
        urls: Option<&[String]>,
        config: &SeedsConfig,
        rng_seed: u64,
        pruning: Pruning,
        pagerank: impl FnOnce() -> Result<Vec<f64>>,
        on_event: &mut dyn FnMut(Event<'_>),
    ) -> Result<Chosen> {
        Ok(match self {
            Method::Random => {
                Chosen::Baseline(random_seeds(graph.num_nodes(), config.count, rng_seed))
            }
            Method::TopPagerank => Chosen::Baseline(top_pagerank_seeds(&pagerank()?, config.count)),
            Method::CoverDensity | Method::FixedSize => {
                let csr = csr.ok_or_else(|| {
                    anyhow::anyhow!("the {} method needs the graph in memory", self.name())
                })?;
                let t0 = Instant::now();
                let prepared = prepare(graph, csr, pruning, urls)?;
                let (pruned, arcs) = (prepared.pruned, prepared.graph.num_arcs());
                on_event(Event::Prepared {
                    pruned,
                    arcs,
                    time: t0.elapsed(),
                });
                let extraction =
                    extract_seeds(&prepared.graph, config, &mut |r| on_event(Event::Round(r)))?;
                Chosen::Cores {
                    extraction,
                    pruned,
                    arcs,
                }
            }
        })
    }
}

/// A step of a core method, as it ends.
#[derive(Debug)]
pub enum Event<'a> {
    /// The graph HITS runs on is ready: pruned of the arcs within a host or not, its arcs,
    /// and the time it took.
    Prepared {
        /// Whether the arcs within a host were dropped.
        pruned: bool,
        /// Its arcs.
        arcs: u64,
        /// The time it took.
        time: Duration,
    },
    /// A round of Extract-Seeds.
    Round(&'a Round),
}

/// A method's configuration that does not hold.
#[derive(Debug)]
pub enum MethodError {
    /// Parameters that do not fit the method.
    Rule(RuleError),
    /// Parameters out of their range (`SeedsConfig::validate`'s message).
    Invalid(anyhow::Error),
}

/// What [`Method::choose`] chose.
#[derive(Debug)]
pub enum Chosen {
    /// A baseline's pages.
    Baseline(Vec<u32>),
    /// Extract-Seeds' run: its seeds, rounds and stop, on the graph pruned or not, of `arcs`
    /// arcs.
    Cores {
        /// The run.
        extraction: Extraction,
        /// Whether the arcs within a host were dropped.
        pruned: bool,
        /// The arcs of the graph HITS ran on.
        arcs: u64,
    },
}

impl Chosen {
    /// The seeds, in the order chosen.
    pub fn seeds(&self) -> &[u32] {
        match self {
            Chosen::Baseline(seeds) => seeds,
            Chosen::Cores { extraction, .. } => &extraction.seeds,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(core_size: Option<usize>) -> CoreParams {
        CoreParams {
            cover_density: 100.0,
            max_hubs: 999,
            core_size,
            new_members: 1,
            hits: HitsConfig::default(),
        }
    }

    #[test]
    fn every_name_parses_back_and_an_unknown_one_is_named() {
        for m in Method::ALL {
            assert_eq!(Method::parse(m.name()).unwrap(), m);
        }
        let e = Method::parse("hubs").unwrap_err().to_string();
        assert!(e.contains("\"hubs\"") && e.contains("top-pagerank"), "{e}");
    }

    #[test]
    fn the_core_size_goes_with_fixed_size_only() {
        let fixed = Method::FixedSize.config(5, &params(Some(8))).unwrap();
        assert!(matches!(fixed.rule, CoreRule::FixedSize { size: 8, .. }));
        assert!(matches!(
            Method::FixedSize.config(5, &params(None)),
            Err(MethodError::Rule(RuleError::NeedsCoreSize))
        ));
        for m in [Method::CoverDensity, Method::Random, Method::TopPagerank] {
            assert!(matches!(
                m.config(5, &params(Some(8))),
                Err(MethodError::Rule(RuleError::CoreSizeOnlyForFixedSize))
            ));
            let c = m.config(5, &params(None)).unwrap();
            assert!(matches!(c.rule, CoreRule::CoverDensity { .. }));
        }
        let mut bad = params(None);
        bad.cover_density = 0.0;
        assert!(matches!(
            Method::CoverDensity.config(5, &bad),
            Err(MethodError::Invalid(_))
        ));
        assert!(Method::CoverDensity.extracts_cores() && !Method::Random.extracts_cores());
    }

    /// K_{3,3} (hubs 0–2, authorities 3–5), K_{2,2} (hubs 6, 7, authorities 8, 9) and a stray
    /// arc 10 → 3, as an arc list opened like `--graph` opens one: two communities, so the core
    /// methods run two rounds.
    fn two_communities(dir: &std::path::Path) -> BvWebGraph {
        let mut arcs: Vec<(u32, u32)> = (0..3).flat_map(|h| (3..6).map(move |a| (h, a))).collect();
        arcs.extend([(6, 8), (6, 9), (7, 8), (7, 9), (10, 3)]);
        let file = crawlrank_testkit::SmallGraph::new(11, arcs).write_arc_list(dir, "g");
        crawlrank_graph::open_graph(&file, &crawlrank_graph::Cache::new(dir.join("cache"))).unwrap()
    }

    #[test]
    fn each_method_calls_its_own_function() {
        let dir = tempfile::tempdir().unwrap();
        let graph = two_communities(dir.path());
        let csr = graph.to_csr().unwrap();
        let n = graph.num_nodes();
        let no_pagerank = || -> Result<Vec<f64>> { panic!("only top-pagerank reads a PageRank") };
        let quiet = &mut |_: Event<'_>| panic!("only the core methods report steps");
        type PageRank = Box<dyn FnOnce() -> Result<Vec<f64>>>;
        let choose =
            |m: Method, p: &CoreParams, pagerank: PageRank, events: &mut dyn FnMut(Event<'_>)| {
                let config = m.config(2, p).unwrap();
                m.choose(
                    &graph,
                    Some(&csr),
                    None,
                    &config,
                    7,
                    Pruning::Auto,
                    pagerank,
                    events,
                )
                .unwrap()
            };

        let chosen = choose(Method::Random, &params(None), Box::new(no_pagerank), quiet);
        assert!(matches!(&chosen, Chosen::Baseline(s) if *s == random_seeds(n, 2, 7)));

        let pagerank: Vec<f64> = (0..n).map(|p| ((p * 7) % n) as f64).collect();
        let given = pagerank.clone();
        let chosen = choose(
            Method::TopPagerank,
            &params(None),
            Box::new(move || Ok(given)),
            quiet,
        );
        assert!(matches!(&chosen, Chosen::Baseline(s) if *s == top_pagerank_seeds(&pagerank, 2)));

        for (m, p) in [
            (Method::CoverDensity, params(None)),
            (Method::FixedSize, params(Some(4))),
        ] {
            let direct = extract_seeds(&csr, &m.config(2, &p).unwrap(), &mut |_| {}).unwrap();
            let mut heard = Vec::new();
            let chosen = choose(m, &p, Box::new(no_pagerank), &mut |e| {
                heard.push(match e {
                    Event::Prepared { pruned, arcs, .. } => format!("{pruned} {arcs}"),
                    Event::Round(r) => format!("round {}", r.round),
                })
            });
            assert_eq!(heard, ["false 14", "round 1", "round 2"], "{}", m.name());
            let Chosen::Cores {
                extraction,
                pruned: false,
                arcs: 14,
            } = chosen
            else {
                panic!("{} extracts cores from the graph unpruned", m.name());
            };
            // The same run as Extract-Seeds' own (but for the timings).
            assert_eq!(extraction.seeds, direct.seeds, "{}", m.name());
            assert_eq!(extraction.stop, direct.stop, "{}", m.name());
            let cores =
                |x: &Extraction| x.rounds.iter().map(|r| r.core.clone()).collect::<Vec<_>>();
            assert_eq!(cores(&extraction), cores(&direct), "{}", m.name());
            assert_eq!(extraction.seeds.len(), 2, "{}", m.name());

            // Without the graph decoded, a core method says so by name.
            let config = m.config(2, &p).unwrap();
            let e = m
                .choose(
                    &graph,
                    None,
                    None,
                    &config,
                    7,
                    Pruning::Auto,
                    no_pagerank,
                    quiet,
                )
                .unwrap_err();
            assert!(e.to_string().contains(m.name()), "{e}");
        }
    }

    #[test]
    fn the_callers_urls_give_the_hosts_to_prune() {
        // The arc list has no URLs; the caller's put pages 0–5 (the K_{3,3}) on one host and
        // every other page on a host of its own, so pruning drops exactly the K_{3,3}'s 9 arcs.
        let dir = tempfile::tempdir().unwrap();
        let graph = two_communities(dir.path());
        let csr = graph.to_csr().unwrap();
        let ids = graph.page_ids().unwrap();
        let urls: Vec<String> = (0..graph.num_nodes())
            .map(|v| match ids.id(v) {
                id @ 0..=5 => format!("http://big.example/{id}"),
                id => format!("http://host{id}.example/"),
            })
            .collect();
        let config = Method::CoverDensity.config(2, &params(None)).unwrap();
        let mut prepared = None;
        let chosen = Method::CoverDensity
            .choose(
                &graph,
                Some(&csr),
                Some(&urls),
                &config,
                7,
                Pruning::SameHost,
                || unreachable!(),
                &mut |e| {
                    if let Event::Prepared { pruned, arcs, .. } = e {
                        prepared = Some((pruned, arcs));
                    }
                },
            )
            .unwrap();
        assert_eq!(prepared, Some((true, 5)));
        // With the K_{3,3}'s arcs pruned, a hub of the K_{2,2} comes first, then page 10, whose
        // arc to page 3 crosses hosts and stays.
        let seeds: Vec<u64> = chosen.seeds().iter().map(|&s| ids.id(s as usize)).collect();
        assert!(matches!(seeds[..], [6 | 7, 10]), "{seeds:?}");
        // Without them, the graph has no hosts to prune by.
        let e = Method::CoverDensity
            .choose(
                &graph,
                Some(&csr),
                None,
                &config,
                7,
                Pruning::SameHost,
                || unreachable!(),
                &mut |_| {},
            )
            .unwrap_err();
        assert!(e.to_string().contains("has none"), "{e}");
    }
}
