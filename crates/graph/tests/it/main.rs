//! The graph crate's tests: arc lists, BVGraphs opened and verified, and every import format.
//!
//! One test binary for the crate, a module per area (each was a binary of its own: one link
//! instead of 3).

mod arclist;
mod bv_open;
mod env;
mod import;
