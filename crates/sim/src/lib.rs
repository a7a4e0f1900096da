//! The crawl-order simulator: replay a crawl over a known web graph and score the order.
//!
//! A real crawl of the web cannot be repeated, so policies are compared on graphs we know
//! whole (LAW's crawls, generated webs). For each policy the simulator runs SPEC §2's loop with
//! the very [`Frontier`](crawlrank_frontier::Frontier) the crawler uses, records the crawl
//! order, and measures it against the PageRank of the full graph (SPEC §4):
//!
//! - [`reference`]: the reachable set `R`, the hot-page ranking and PageRank mass;
//! - [`run`]: the instrumented crawl loop (time, peak frontier, peak memory);
//! - [`measures`]: throughput, PageRank mass, mean PageRank per window, Kendall's τ_b.
//! - [`report`]: the table, `summary.json`/`.csv`, crawl orders and SVG plots.

pub mod measures;
pub mod reference;
pub mod report;
pub mod run;

pub use measures::{Measures, POINTS};
pub use reference::Reference;
pub use run::{simulate, PolicyRun, SimConfig};
