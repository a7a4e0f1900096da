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
//! - [`proto`]: the messages, server and client generated from `proto/urlfrontier.proto`
//!   (crawlrank's own copy of the API, same package, names and numbers) by `build.rs`, with
//!   protox (no `protoc` needed);
//! - `crawl`: one crawl — its URLs, queues, leases and frontier — as plain deterministic
//!   code taking the time as an argument;
//! - `state`: every crawl, the calls that change them ([`Call`], [`LoggedCall`]) and
//!   [`FrontierState::apply`], used alike by the live service and by the replay;
//! - `store`: the redb state directory (the policy, the log of calls, the checkpoint it is
//!   compacted into);
//! - `checkpoint`: the checkpoint of the whole state the log is compacted into;
//! - `service`: the gRPC service ([`FrontierService`], [`ServiceConfig`]);
//! - `extension`: crawlrank's own service on the same port ([`ext_proto`]: `ReportPage`, a
//!   fetched page with its out-links in one call, and `GetRanking`, the policy's order);
//! - `ranking`: the client side of the ranking export ([`fetch_ranking`], [`write_ranking_tsv`]);
//! - `server`: serving it on a TCP listener ([`spawn`], [`serve_until_ctrl_c`]);
//! - `clock`: the time in seconds ([`Clock`]; manual in tests);
//! - `cluster`: one node of a frontier of N nodes on NATS JetStream ([`Cluster`],
//!   [`ClusterConfig`]): which node owns a queue ([`Nodes`]), items handed to their owner
//!   before they are acknowledged, applied there exactly once.

#![warn(missing_docs)]

mod checkpoint;
mod clock;
mod cluster;
mod crawl;
mod extension;
mod ranking;
mod server;
mod service;
mod state;
mod store;

/// The generated code, one module per protobuf package, nested as the packages are (prost
/// refers to another package's types by relative paths: the extension's to the API's).
#[allow(missing_docs, clippy::all, clippy::pedantic)]
mod generated {
    pub mod urlfrontier {
        tonic::include_proto!("urlfrontier");
    }
    pub mod crawlrank {
        pub mod frontier {
            pub mod v1 {
                tonic::include_proto!("crawlrank.frontier.v1");
            }
        }
        pub mod cluster {
            pub mod v1 {
                tonic::include_proto!("crawlrank.cluster.v1");
            }
        }
    }
}

/// The URLFrontier API (package `urlfrontier`), generated from `proto/urlfrontier.proto` at
/// build time.
pub use generated::urlfrontier as proto;

/// crawlrank's extension service (`crawlrank.frontier.v1.CrawlrankFrontier`: `ReportPage`,
/// `GetRanking`), generated from `proto/crawlrank_frontier.proto` at build time; it reuses
/// [`proto`]'s messages.
pub use generated::crawlrank::frontier::v1 as ext_proto;

pub use clock::Clock;
pub use cluster::{
    java_string_hash, queue_name, Cluster, ClusterConfig, Nodes, CONNECT_TIMEOUT, IDENTITY, STREAM,
};
pub use crawl::{
    normalise_crawl_id, DEFAULT_CRAWL, DEFAULT_LEASE_SECS, DEFAULT_QUEUE_DELAY, MAX_FILTER_LEN,
    MAX_URLS_PER_CALL, PARENT_KEY, SCORE_KEY, STATE_KEY, STORMCRAWLER_PATH_KEY,
};
pub use crawl::{LinkCounts, Ranked};
pub use extension::{DEFAULT_RANKING_LIMIT, MAX_RANKING_LIMIT};
pub use ranking::{fetch_node_stats, fetch_ranking, write_ranking_tsv, RANKING_HEADER};
pub use server::{serve_until_ctrl_c, spawn, RunningServer};
pub use service::{
    policy_spec, FrontierService, ServiceConfig, COMPACT_AFTER_CALLS, DEFAULT_EXPECTED_PAGES,
    DEFAULT_MAX_WAITING, PUT_BATCH, SCAN_STEP,
};
pub use state::{
    Answer, Call, FrontierState, LoggedCall, MAX_METADATA_BYTES, MAX_METADATA_VALUES, MAX_OUTLINKS,
};
pub use store::{db_path, FORMAT};
