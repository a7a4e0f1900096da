//! crawlrank's fetching: everything the crawler's engine and a crawl worker both need to fetch
//! a page politely and safely — the crawl's own HTTP(S) connections, name resolution, the
//! address guard, robots.txt, sitemaps, link extraction, WARC records, Retry-After and back-off,
//! URL scope — and none of a crawl's state (no URL table, frontier, scheduler or store: those
//! are `crawlrank-crawler`'s, or a frontier service's).
//!
//! Why a crate of its own: a crawl worker (`crawlrank-worker`) fetches with exactly the
//! engine's code, and should not have to depend on the engine, its store and its frontier to
//! do so; and the engine's parts stay private to the crawler.
//!
//! | module | job |
//! |---|---|
//! | [`fetch`] | one HTTP request: a page, an origin's robots.txt or one of its sitemaps; body caps; [`FetchConfig`] |
//! | [`fetcher`] | the same requests for a crawl worker whose frontier is a remote service ([`Fetcher`], [`HostConnection`]) |
//! | [`http`] | the crawl's own HTTP/1.1 connections (hyper, rustls): DNS, TCP, proxy tunnels, TLS; every socket counted until closed; non-public addresses refused |
//! | [`connections`] | kept connections: each origin's idle connection in a pool with an idle timeout and a global cap |
//! | [`dns`] | name resolution (hickory): a stub resolver with a TTL cache and timeouts |
//! | `error` | how a request failed ([`http::HttpError`], by [`http::ErrorKind`]), shared by [`http`] and [`dns`] |
//! | [`addresses`] | which IP addresses a crawl may connect to: loopback, private, link-local… only for the seeds' own hosts |
//! | [`fds`] | file descriptors: the bound a crawl needs, the open-file limit raised and checked, "too many open files" recognised |
//! | `cpu` | the CPU work of fetching (parsing, WARC records) on a pool of one thread per core |
//! | [`robots`] | robots.txt: what a file means for our agent, the answer worth keeping, 24 h freshness |
//! | [`robots_table`] | each origin's robots.txt state in a crawl, the engine's and a worker's: rules and their age, retries, origins given up ([`robots_table::RobotsTable`]) |
//! | [`sitemap`] | sitemaps: parsed, queued per origin and fetched as side requests — never pages |
//! | [`links`] | streaming HTML link extraction (lol_html), URL normalisation, trap limits, [`origin_key`] |
//! | [`scope`] | which URLs a crawl follows: same host or registrable domain as a seed, `--include`/`--exclude` |
//! | [`backoff`] | Retry-After and origins paused by 429/503, with a doubling back-off |
//! | [`page`] | how a page's fetch ended ([`Outcome`], [`TransportFailure`]) and what it said about itself |
//! | [`stats`] | a crawl's counters ([`Stats`]), kept alike by the engine and by a crawl worker |
//! | [`warc`] | WARC/1.1 output, one gzip member per record |
//!
//! The files import each other one way only: [`fds`], [`page`], [`links`], [`addresses`],
//! [`scope`], [`backoff`], [`robots`], `error` and `cpu` import no other; [`warc`] only [`fds`];
//! [`stats`] only [`page`] (and [`fetch`]'s page record, with `net`);
//! [`robots_table`] only [`robots`] and [`page`];
//! [`sitemap`] only [`links`] and [`scope`]; [`dns`] on [`fds`] and `error`; [`http`] on
//! [`addresses`], [`dns`] and `error`; [`connections`] on [`http`]; [`fetch`] on all of those,
//! and [`fetcher`] last, on [`fetch`] and [`http`]. No module prints or exits the process: errors
//! and failures are returned.
//!
//! Words: an *origin* is scheme, host and port (`http://a.test:8080`, [`origin_key`]) — what
//! politeness, robots.txt and kept connections go by; a *host* is the name alone. A *kept
//! connection* is an open connection to an origin between its requests; a *lease* (a crawl
//! worker's) is a URL a frontier service handed out for a while, never a connection.

#![warn(missing_docs)]

pub mod addresses;
pub mod backoff;
#[cfg(feature = "net")]
pub mod connections;
#[cfg(feature = "net")]
mod cpu;
#[cfg(feature = "net")]
pub mod dns;
#[cfg(feature = "net")]
mod error;
pub mod fds;
#[cfg(feature = "net")]
pub mod fetch;
#[cfg(feature = "net")]
pub mod fetcher;
#[cfg(feature = "net")]
pub mod http;
pub mod links;
pub mod page;
pub mod robots;
pub mod robots_table;
pub mod scope;
pub mod sitemap;
pub mod stats;
pub mod warc;

pub use addresses::AddressGuard;
pub use backoff::{
    AfterAnswer, Backoffs, HostPause, PageNext, Refusal, Retries, RetryAfter,
    DEFAULT_MAX_RETRY_AFTER,
};
#[cfg(feature = "net")]
pub use connections::OriginId;
#[cfg(feature = "net")]
pub use fetch::FetchConfig;
#[cfg(feature = "net")]
pub use fetcher::{Fetcher, HostConnection};
pub use links::{normalize, origin_key, UrlRules};
pub use page::{Outcome, TransportFailure};
pub use robots::RobotsRules;
pub use scope::{Scope, ScopeConfig, ScopeKind};
pub use stats::Stats;
pub use warc::{WarcPosition, WarcWriter};
