//! Seed sets for a crawl, and how good they are (docs/algorithms.md §5).
//!
//! A crawl that starts from one hub in each of many dense web communities reaches good pages of
//! different communities in few steps: that is the community-seeds paper's claim, and this crate
//! makes it testable. It holds
//!
//! - [`prune`]: the host-pruned graph the paper runs HITS on (arcs within a host dropped);
//! - [`cores`]: one bipartite core from HITS scores, by fixed cover density (Fig. 2) or fixed
//!   size (Fig. 1);
//! - [`extract`]: Extract-Seeds (Fig. 3), round after round of HITS (warm-started, with the pages
//!   of earlier cores masked out), core, seed;
//! - [`baseline`]: the seed sets a user compares against — uniformly random pages and the top
//!   pages by PageRank;
//! - [`method`]: the methods by name (the cores, and the baselines) and the one dispatch the
//!   command line and Python share;
//! - [`file`]: the seeds file (`id` or `id<TAB>url` per line) and its `.cores.json` record;
//! - [`eval`]: the paper's evaluation — BFS by depth from a seed set (pages and mean PageRank per
//!   depth) and the distances between cores beside the graph's average distance.
//!
//! Everything works on the in-memory [`Csr`](crawlrank_graph::Csr) and its transpose; nothing here
//! copies a graph but the pruning, which the paper's own setting needs once.

#![warn(missing_docs)]

pub mod baseline;
pub mod cores;
pub mod eval;
pub mod extract;
pub mod file;
pub mod method;
pub mod prune;
pub mod work_graph;

pub use baseline::{random_seeds, top_pagerank_seeds};
pub use cores::{Core, CoreBuilder, CoreRule};
pub use eval::{
    average_distance, bfs_by_depth, check_cores, core_distances, evaluate,
    report::{write_outputs, write_table},
    AverageDistance, CoreDistances, DepthStats, EvalConfig, Evaluation, Step,
};
pub use extract::{
    extract_seeds, prepare, Extraction, Prepared, Pruning, Round, SeedsConfig, StopReason,
};
pub use file::{
    cores_path, read_cores_json, write_cores_json, write_seeds_file, CoreEntry, CoresRecord,
};
pub use method::{Chosen, CoreParams, Event, Method, MethodError, RuleError};
pub use prune::prune_same_host;
pub use work_graph::WorkGraph;
