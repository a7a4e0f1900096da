//! The fetching crate's integration tests: what one request and its parsing cost and return,
//! on loopback or in memory, without a crawl around them (the crawler's tests drive crawls).
//!
//! One test binary for the crate, a module per area.

mod links;

/// Counts each thread's heap, for the tests that measure what parsing holds
/// (crawlrank_testkit::thread_heap).
#[global_allocator]
static HEAP: crawlrank_testkit::thread_heap::Counting = crawlrank_testkit::thread_heap::Counting;
