//! The frontier's tests: every policy's order on hand graphs, a crawl split between frontiers
//! that pass offers along their links, and the frontier's cold part spilled to disk and read
//! back.
//!
//! One test binary for the crate, a module per area (each was a binary of its own: one link
//! instead of 2).

mod common;
mod offers;
mod policies;
mod spill;
