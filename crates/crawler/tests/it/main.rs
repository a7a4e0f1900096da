//! The crawler's end-to-end tests: crawls of the local test web and of servers written in the
//! tests, on loopback — the crawl equal to the simulator's order, resume, WARC, politeness, a
//! hostile web, crashes, DNS.
//!
//! One test binary for the crate, a module per area (each was a binary of its own: one link
//! instead of 3).

mod common;
mod direct;
mod e2e;
mod hostile;

/// Counts each thread's heap, for the tests that measure what a step holds
/// (crawlrank_testkit::thread_heap).
#[global_allocator]
static HEAP: crawlrank_testkit::thread_heap::Counting = crawlrank_testkit::thread_heap::Counting;
