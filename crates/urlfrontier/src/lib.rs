//! The URLFrontier gRPC API (version 2.6) as crawlrank speaks it: the `.proto` files, the
//! messages, servers and clients generated from them, the metadata keys and crawl-id rule
//! every party must agree on, and [`FrontierClient`], a typed async client for crawl workers
//! and tools.
//!
//! [URLFrontier](https://github.com/crawler-commons/url-frontier) is the frontier API
//! StormCrawler, a Scrapy scheduler and other crawlers already speak; crawlrank's own
//! service (`crawlrank-frontier-service`) serves it, together with crawlrank's extension
//! (`crawlrank.frontier.v1`: `ReportPage`, `GetRanking`). docs/frontier-service.md is the
//! user's guide.
//!
//! Why a crate of its own: a client needs the wire format, not the server. The frontier
//! service brings a redb store, the policies' frontier and a tonic server; a crawl worker,
//! the CLI's `frontier ranking` or any other client of some URLFrontier service needs none
//! of them, and should build and link without them. The service depends on this crate for
//! its server traits, so server and clients can never disagree on the API.
//!
//! The pieces:
//!
//! - [`proto`]: the API's messages, server and client, generated from
//!   `proto/urlfrontier.proto` (crawlrank's own copy of the API, same package, names and
//!   numbers) by `examples/codegen.rs`, with protox (no `protoc` needed), and committed in
//!   `src/generated/`;
//! - [`ext_proto`]: crawlrank's extension service, generated from
//!   `proto/crawlrank_frontier.proto`, reusing [`proto`]'s messages;
//! - the shared constants: the metadata keys ([`PARENT_KEY`], [`STORMCRAWLER_PATH_KEY`],
//!   [`SCORE_KEY`], [`STATE_KEY`]), the default crawl ([`DEFAULT_CRAWL`],
//!   [`normalise_crawl_id`]) and the extension's ranking limits;
//! - `client`: [`FrontierClient`], the calls a crawl worker makes, each with a timeout and
//!   an error naming the call and the service;
//! - `ranking`: the ranking export ([`fetch_ranking`], [`write_ranking_tsv`]) of
//!   `crawlrank frontier ranking`.

#![warn(missing_docs)]

mod client;
mod ranking;

/// The generated code, one module per protobuf package, nested as the packages are (prost
/// refers to another package's types by relative paths: the extension's to the API's).
/// Written by `examples/codegen.rs` from `proto/` and committed (see there why).
#[allow(missing_docs, clippy::all, clippy::pedantic)]
mod generated {
    pub mod urlfrontier {
        include!("generated/urlfrontier.rs");
    }
    pub mod crawlrank {
        pub mod frontier {
            pub mod v1 {
                include!("generated/crawlrank.frontier.v1.rs");
            }
        }
        pub mod cluster {
            pub mod v1 {
                include!("generated/crawlrank.cluster.v1.rs");
            }
        }
    }
}

/// The URLFrontier API (package `urlfrontier`), generated from `proto/urlfrontier.proto`.
pub use generated::urlfrontier as proto;

/// crawlrank's extension service (`crawlrank.frontier.v1.CrawlrankFrontier`: `ReportPage`,
/// `GetRanking`), generated from `proto/crawlrank_frontier.proto`; it reuses
/// [`proto`]'s messages.
pub use generated::crawlrank::frontier::v1 as ext_proto;

/// What the nodes of a frontier cluster hand each other through NATS JetStream
/// (`crawlrank.cluster.v1.Forwarded`), generated from `proto/crawlrank_cluster.proto`;
/// internal to the cluster, never served over gRPC (crawlrank-frontier-service's `cluster`).
pub use generated::crawlrank::cluster::v1 as cluster_proto;

pub use client::{is_unreachable, CrawlCounts, FrontierClient};
pub use ranking::{fetch_node_stats, fetch_ranking, write_ranking_tsv, RANKING_HEADER};

/// The crawl id of the default crawl; an empty crawl id means it too.
pub const DEFAULT_CRAWL: &str = "DEFAULT";

/// The metadata key a worker's report gives a page's outcome in (`html`, `redirect`,
/// `robots-disallowed`…): a `redirect` reports its target as the page's one out-link, which
/// the service counts as one more redirect in a row (`--max-redirects`).
pub const OUTCOME_KEY: &str = "crawlrank.outcome";
/// The [`OUTCOME_KEY`] of a page that answered with a redirect.
pub const REDIRECT_OUTCOME: &str = "redirect";
/// The [`OUTCOME_KEY`] of a page whose fetch failed in a way a retry may mend (a 5xx, a
/// timeout, a connection failure), reported with the date it may be tried again: crawlrank's
/// service keeps it in the policy's order, unreported, and serves it again from that date
/// (another server refetches it then).
pub const RETRY_OUTCOME: &str = "retry";
/// The metadata key of the number of failed fetches of a page that is tried again
/// ([`RETRY_OUTCOME`]), so that whichever worker is served it next knows how many are left.
pub const ATTEMPTS_KEY: &str = "crawlrank.attempts";
/// The metadata key of a reported page's HTTP status (0: no answer).
pub const HTTP_STATUS_KEY: &str = "crawlrank.http_status";
/// The metadata key of a reported page that said `noindex` (meta robots or `X-Robots-Tag`),
/// its value `1`: recorded, not acted upon, as `crawlrank crawl` records it.
pub const NOINDEX_KEY: &str = "crawlrank.noindex";
/// The metadata key of a reported page's canonical URL (`link rel=canonical`), when it names
/// a URL other than the page's own: recorded, not crawled, as `crawlrank crawl` records it.
pub const CANONICAL_KEY: &str = "crawlrank.canonical";

/// Metadata key naming the page a discovered URL was found on (crawlrank's own; wins over
/// `url.path`).
pub const PARENT_KEY: &str = "crawlrank.parent";
/// StormCrawler's metadata key: the path of pages from a seed to the URL; its last value is
/// the page the URL was found on.
pub const STORMCRAWLER_PATH_KEY: &str = "url.path";
/// Metadata key of a URL found in a sitemap, its value the sitemap's URL: a URL found
/// without a link, as a seed is, but one the caps on hosts admit as they admit a link (a
/// seed passes them), with no hops, as `crawlrank crawl` takes a sitemap's entries.
pub const SITEMAP_KEY: &str = "crawlrank.sitemap";
/// Metadata key of the policy's score in `GetURLStatus` and `ListURLs` answers.
pub const SCORE_KEY: &str = "crawlrank.score";
/// Metadata key of the URL's state in the service, in `GetURLStatus` and `ListURLs` answers.
pub const STATE_KEY: &str = "crawlrank.state";

/// `GetRanking` returns this many URLs when the request says 0.
pub const DEFAULT_RANKING_LIMIT: u32 = 1000;
/// The most URLs one `GetRanking` returns; a larger limit is refused.
pub const MAX_RANKING_LIMIT: u32 = 1_000_000;

/// The crawl id a request names: empty means the default crawl.
pub fn normalise_crawl_id(id: &str) -> &str {
    if id.is_empty() {
        DEFAULT_CRAWL
    } else {
        id
    }
}

/// The `.proto` files `src/generated/` is made from, relative to the crate, in the order the
/// generator (`examples/codegen.rs`) compiles and [`protos_digest`] reads them.
#[doc(hidden)]
pub const PROTOS: [&str; 3] = [
    "proto/urlfrontier.proto",
    "proto/crawlrank_frontier.proto",
    "proto/crawlrank_cluster.proto",
];

/// A digest (64-bit FNV-1a) of the crate's `.proto` files under `crate_root`: the code
/// generator records it beside the generated code, and a test recomputes it, so a `.proto`
/// edited without regenerating fails the tests instead of shipping stale code.
#[doc(hidden)]
pub fn protos_digest(crate_root: &std::path::Path) -> std::io::Result<u64> {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for name in PROTOS {
        let path = crate_root.join(name);
        let bytes = std::fs::read(&path).map_err(|e| {
            std::io::Error::new(e.kind(), format!("cannot read {}: {e}", path.display()))
        })?;
        // The name and length first, so moving text between files changes the digest.
        let len = (bytes.len() as u64).to_le_bytes();
        for b in name.bytes().chain(len).chain(bytes) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    Ok(h)
}

#[cfg(test)]
mod tests {
    /// The committed generated code was made from the `.proto` files as they are: after
    /// editing one, run `cargo run -p crawlrank-urlfrontier --features codegen --example
    /// codegen`.
    #[test]
    fn generated_code_matches_the_protos() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let recorded = include_str!("generated/protos.hash").trim();
        let now = format!("{:016x}", super::protos_digest(root).unwrap());
        assert_eq!(
            recorded, now,
            "src/generated/ is stale: a .proto changed since it was generated; run \
             `cargo run -p crawlrank-urlfrontier --features codegen --example codegen`"
        );
    }
}
