//! crawlrank's end-to-end tests: the `crawlrank` binary driven as users run it, with its
//! default options, on hand-made graphs, the local test web and real servers on loopback.
//!
//! One test binary for the crate, a module per area (each was a binary of its own: one link
//! instead of ten). `common` starts the binary and the servers; the other modules are the
//! areas.

mod common;

mod cli;
mod compressed;
mod crawl_workers;
mod dashboard;
mod frontier_cluster;
mod frontier_rank;
mod frontier_service;
mod impacts;
mod seeds;
mod seeds_eval;
mod simulate_impact;
mod worker_hostile;
mod worker_order;
