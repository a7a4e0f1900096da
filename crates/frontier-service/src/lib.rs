//! crawlrank's frontier as a service: the URLFrontier gRPC API (version 2.6) over the same
//! policy-ordered [`Frontier`](crawlrank_frontier::Frontier) the crawler and the simulator
//! use, persistent across restarts.
//!
//! [URLFrontier](https://github.com/crawler-commons/url-frontier) is the frontier API
//! StormCrawler, a Scrapy scheduler and other crawlers already speak. Its reference service
//! orders a queue by dates only; this one serves, among the queues politeness lets serve now,
//! the URLs the crawl's policy (FICA by default) ranks highest across queues, and keeps
//! delays, blocks, limits, leases and the policy state across restarts. docs/frontier-service.md
//! is the user's guide; the pieces:
//!
//! - the wire format — the URLFrontier messages and server traits, crawlrank's extension,
//!   the metadata keys — comes from `crawlrank-urlfrontier`, the crate clients use without
//!   this one (no server, no store);
//! - `crawl`: one crawl — its URLs, queues, leases and frontier — as plain deterministic
//!   code taking the time as an argument;
//! - `state`: every crawl, the calls that change them ([`Call`], [`LoggedCall`]) and
//!   [`FrontierState::apply`], used alike by the live service and by the replay;
//! - `store`: the redb state directory (the policy, the log of calls, the checkpoint it is
//!   compacted into);
//! - `checkpoint`: the checkpoint of the whole state the log is compacted into;
//! - `service`: the gRPC service ([`FrontierService`], [`ServiceConfig`]);
//! - `extension`: crawlrank's own service on the same port (`ReportPage`, a fetched page
//!   with its out-links in one call, and `GetRanking`, the policy's order);
//! - `server`: serving it on a TCP listener ([`spawn`], [`serve_until_ctrl_c`]);
//! - `cluster`: one node of a frontier of N nodes on NATS JetStream ([`Cluster`],
//!   [`ClusterConfig`]): which node owns a queue ([`Nodes`]), items handed to their owner
//!   before they are acknowledged, applied there exactly once;
//! - `time_source`: where the service reads the time, in seconds ([`TimeSource`]: the
//!   system clock, or a manual one in tests). Not to be confused with a policy's
//!   `crawlrank_frontier::BatchClock`, which counts crawled pages, not seconds.

#![warn(missing_docs)]

mod checkpoint;
mod cluster;
mod crawl;
mod extension;
mod failpoint;
mod page_text;
mod server;
mod service;
mod state;
mod store;
mod time_source;

// The wire format (messages, server traits) comes from the API's own crate, which clients
// use without this one; the service's modules name it as `crate::proto` and `crate::ext_proto`.
use crawlrank_urlfrontier::{ext_proto, proto};

pub use cluster::{
    java_string_hash, queue_name, Cluster, ClusterConfig, Nodes, CONNECT_TIMEOUT, IDENTITY, STREAM,
};
pub use crawl::{Capped, LinkCounts, Ranked};
pub use crawl::{DEFAULT_LEASE_SECS, DEFAULT_QUEUE_DELAY, MAX_FILTER_LEN, MAX_URLS_PER_CALL};
pub use server::{serve_until_ctrl_c, spawn, RunningServer};
pub use service::{
    policy_spec, FrontierService, ServiceConfig, COMPACT_AFTER_CALLS, DEFAULT_COMMIT_INTERVAL_MS,
    DEFAULT_EXPECTED_PAGES, DEFAULT_MAX_WAITING, DEFAULT_NODE_FRONTIER_HOT, OPIC_HELD, OPIC_PAGES,
    OPIC_RECEIVED, OPIC_SENT, OPIC_TOTAL_PAGES, PUT_BATCH, SCAN_STEP,
};
pub use state::{
    Answer, Call, FrontierState, LoggedCall, MAX_METADATA_BYTES, MAX_METADATA_VALUES, MAX_OUTLINKS,
};
pub use store::{db_path, FORMAT};
pub use time_source::TimeSource;
