//! The crawl-order simulator: replay a crawl over a known graph and score the order.
//!
//! A real crawl of the web cannot be repeated, so policies are compared on graphs we know
//! whole (LAW's crawls, generated webs). For each policy the simulator runs the frontier's
//! crawl loop ([`crawlrank_frontier::drive`]) with the very
//! [`Frontier`](crawlrank_frontier::Frontier) the crawler uses, records the crawl order, and
//! measures it against the PageRank of the full graph (docs/algorithms.md §4):
//!
//! - [`experiment`]: one call that runs a whole experiment ([`run_experiment`]);
//! - [`graph`]: the graph it runs on, in memory or compressed ([`SimGraph`]);
//! - [`seeds`]: random seeds or a seeds file;
//! - [`policy`]: the policies the simulator runs — the crawl policies and `omniscient`;
//! - [`omniscient`]: the reference line that needs the whole graph;
//! - [`reference`](mod@reference): the reachable set `R`, the hot-page ranking, PageRank
//!   mass, and the cached PageRank of the full graph;
//! - [`run`]: one instrumented crawl (time, peak frontier, peak memory);
//! - [`measures`]: throughput, PageRank mass, mean PageRank per window, Kendall's τ_b, and,
//!   given impacts, the impact crawled relative to the ideal order;
//! - [`repeat`]: the same experiment over several random seed sets, with intervals and
//!   paired comparisons; `crawlrank_stats`: the statistics they use;
//! - [`report`]: the table, `summary.json`/`.csv`, crawl orders and SVG plots;
//! - [`score`]: an order computed elsewhere, checked as a crawl and measured the same way
//!   ([`score_order`], `crawlrank score-order`).
//!
//! Entry points, all at the crate root: [`run_experiment`] runs an [`Experiment`] (seeds from
//! a [`SeedChoice`], [`SimPolicy`]s, a [`SimConfig`]) and returns a [`Summary`], which
//! [`write_table`] prints and [`write_outputs`] saves. Piece by piece: [`random_seeds`] or
//! [`read_seeds`], [`reference_pagerank`] and [`Reference::new`], [`simulate`] (one crawl, a
//! [`PolicyRun`]; [`simulate_policy`] for a policy the caller builds), [`measure`] (its [`Measures`]). Over several random seed sets:
//! [`run_repeated`] (one [`Summary`] per rng seed), then [`write_repeat_table`], [`paired`]
//! and [`write_repeat_outputs`].

#![warn(missing_docs)]

pub mod checkpoints;
pub mod compare;
pub mod experiment;
pub mod graph;
pub mod measures;
pub mod omniscient;
pub mod policy;
pub mod reference;
pub mod repeat;
pub mod report;
pub mod run;
pub mod score;
pub mod seeds;

pub use checkpoints::POINTS;
pub use compare::{write_comparison, write_comparison_csv, COMPARE_PERCENTS};
pub use experiment::{run_experiment, run_with_pagerank, Experiment, ExperimentEvent};
pub use graph::SimGraph;
pub use measures::{measure, Measures};
pub use policy::SimPolicy;
pub use reference::{reference_pagerank, ImpactReference, Reference};
pub use repeat::{
    paired, run_repeated, write_paired_headline, write_repeat_outputs, write_repeat_table, Paired,
};
pub use report::{write_outputs, write_table, PolicyResult, Summary, TABLE_PERCENTS};
pub use run::{simulate, simulate_policy, PolicyRun, SimConfig};
pub use score::{score_order, ScoreOptions, Scored};
pub use seeds::{random_seeds, read_pages, read_seeds, SeedChoice};
