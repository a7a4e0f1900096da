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
//! - `store`: the redb state directory (the policy, the log of calls);
//! - `service`: the gRPC service ([`FrontierService`], [`ServiceConfig`]);
//! - `server`: serving it on a TCP listener ([`spawn`], [`serve_until_ctrl_c`]);
//! - `clock`: the time in seconds ([`Clock`]; manual in tests).

#![warn(missing_docs)]

mod clock;
mod crawl;
mod server;
mod service;
mod state;
mod store;

/// The URLFrontier API, generated from `proto/urlfrontier.proto` at build time.
#[allow(missing_docs, clippy::all, clippy::pedantic)]
pub mod proto {
    tonic::include_proto!("urlfrontier");
}

pub use clock::Clock;
pub use crawl::{
    normalise_crawl_id, DEFAULT_CRAWL, DEFAULT_LEASE_SECS, DEFAULT_QUEUE_DELAY, MAX_URLS_PER_CALL,
    PARENT_KEY, SCORE_KEY, STATE_KEY, STORMCRAWLER_PATH_KEY,
};
pub use server::{serve_until_ctrl_c, spawn, RunningServer};
pub use service::{
    policy_spec, FrontierService, ServiceConfig, DEFAULT_EXPECTED_PAGES, DEFAULT_MAX_WAITING,
    PUT_BATCH,
};
pub use state::{Answer, Call, FrontierState, LoggedCall};
pub use store::{db_path, FORMAT};
