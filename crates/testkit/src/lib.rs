//! `crawlrank-testkit`: what the tests of several crawlrank crates used to write by hand,
//! written once — the small graphs whose ranking or crawl order a test works out by hand or
//! checks against a formula, the few file helpers those tests need, the count of a
//! process's sockets that the crawler's tests and benchmark share, a tiny DNS server on
//! loopback ([`DnsServer`]) for the crawls that resolve names themselves, a real `nats-server`
//! with JetStream on loopback ([`NatsServer`]) for the frontier cluster, and an allocator that
//! counts each thread's heap ([`thread_heap`]).
//!
//! A graph here is a [`SmallGraph`]: a node count and an arc list, which a test turns into
//! whatever it feeds the code under test — a [`Csr`](crawlrank_graph::Csr)
//! ([`SmallGraph::csr`]), or an arc-list file ([`SmallGraph::write_arc_list`]) for importers
//! and the command line. Keeping the arcs (not only a `Csr`) lets the graph crate's own unit
//! tests use these graphs too: there, this crate's `Csr` is not the crate-under-test's `Csr`,
//! so they build theirs from [`SmallGraph::nodes`] and [`SmallGraph::arcs`].
//!
//! Only a dev-dependency: nothing here is fast, general or stable, and every helper panics on
//! misuse or I/O errors, as a test should.

#![warn(missing_docs)]

mod dns;
mod files;
mod graphs;
mod nats;
mod sockets;
pub mod thread_heap;

pub use dns::{DnsAnswer, DnsServer, TTL_SECS};
pub use files::{file_names, write_file};
pub use graphs::{
    cycle, five_pages, modular_chords, path, reachable_from, ring_with_chords, star, SmallGraph,
    FIVE_PAGES_PAGERANK,
};
pub use nats::{free_port, NatsServer};
pub use sockets::open_sockets;
