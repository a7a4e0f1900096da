//! The rank crate's tests: PageRank, HITS and the walks on hand graphs and on LAW cnr-2000 (skipped
//! with a message when the shared data is absent), Kendall's τ_b against hand counts.
//!
//! One test binary for the crate, a module per area (each was a binary of its own: one link
//! instead of 3).

mod cnr2000;
mod kendall;
mod pagerank;
