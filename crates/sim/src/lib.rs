//! The crawl-order simulator: replay a crawl over a known graph and score the order.
//!
//! A real crawl of the web cannot be repeated, so policies are compared on graphs we know
//! whole (LAW's crawls, generated webs). For each policy the simulator runs the frontier's
//! crawl loop ([`crawlrank_frontier::drive`]) with the very
//! [`Frontier`](crawlrank_frontier::Frontier) the crawler uses, records the crawl order, and
//! measures it against the PageRank of the full graph (docs/algorithms.md §4):
//!
//! - [`experiment`]: one call that runs a whole experiment ([`run_experiment`]);
//! - [`seeds`]: random seeds or a seeds file;
//! - [`policy`]: the policies the simulator runs — the crawl policies and `omniscient`;
//! - [`omniscient`]: the reference line that needs the whole graph;
//! - [`reference`]: the reachable set `R`, the hot-page ranking, PageRank mass, and the
//!   cached PageRank of the full graph;
//! - [`run`]: one instrumented crawl (time, peak frontier, peak memory);
//! - [`measures`]: throughput, PageRank mass, mean PageRank per window, Kendall's τ_b;
//! - [`report`]: the table, `summary.json`/`.csv`, crawl orders and SVG plots.

#![warn(missing_docs)]

pub mod experiment;
pub mod measures;
pub mod omniscient;
pub mod policy;
pub mod reference;
pub mod report;
pub mod run;
pub mod seeds;

pub use experiment::{run_experiment, Experiment, ExperimentEvent};
pub use measures::{Measures, POINTS};
pub use policy::SimPolicy;
pub use reference::Reference;
pub use report::{PolicyResult, Summary};
pub use run::{simulate, PolicyRun, SimConfig};
pub use seeds::SeedChoice;
