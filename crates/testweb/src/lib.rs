//! `crawlrank-testweb`: a deterministic web on loopback for testing and benchmarking the crawler.
//!
//! A crawler cannot be tested against the real web (not reproducible, not allowed here), so
//! this crate serves every page of a graph over HTTP on one loopback port: the page of node
//! `v` is a small HTML document whose links are `v`'s successors in graph order. A crawl of
//! the test web can then be compared arc for arc with the graph, and faults (latency, 5xx
//! errors, traps) are injected deterministically so every failure is reproducible.
//!
//! # URLs
//! Node `v` is served at the graph's URL for `v` (normalised with
//! [`crawlrank_graph::urls::normalize_url`]); a graph without URLs — or a node whose URL is
//! missing, invalid, not `http(s)` or a duplicate — uses the generated
//! `http://h{v / pages_per_host}.crawlrank.test/p{v}.html` ([`generated_url`]; 8 pages per
//! host by default: hosts are blocks of consecutive ids). [`TestWeb::url`] and
//! [`TestWeb::node_of`] convert both ways. Every graph page is served under one scheme: `http://`
//! by default, `https://` with [`TestWebConfig::tls`] (a graph URL's own scheme is replaced);
//! lookups ignore scheme and port. The trap host stays on `http://`.
//!
//! # Routing many hosts to one port
//! The server routes by the requested host, taken from
//! - the **absolute URI** of a proxy-style request (`GET http://h3.crawlrank.test/p25.html
//!   HTTP/1.1`): the simplest way for a crawler to send every host to one port is to use the
//!   server as its HTTP proxy, e.g. `reqwest::Client::builder().proxy(reqwest::Proxy::all(
//!   web.proxy_url())?)` — every URL then goes to the test web, whatever its host, and nothing
//!   leaves loopback (`Proxy::all` rather than `Proxy::http`: an `https://` URL found anywhere
//!   becomes a `CONNECT` to the test web instead of a real DNS lookup);
//! - else the **`Host` header** (`GET /p25.html` + `Host: h3.crawlrank.test[:port]`), for
//!   clients that connect to [`TestWeb::addr`] themselves.
//!
//! Only `GET` and `HEAD` are served (others: 405); an unknown host or path is 404.
//!
//! # HTTPS
//! With [`TestWebConfig::tls`], a `CONNECT host:port` is answered 200 and the tunnel speaks
//! TLS (rustls) with a certificate for the name the client sends (SNI), signed by a CA the
//! server makes at start-up; the client must trust [`TestWeb::ca_pem`] (written to a file by
//! [`TestWeb::write_ca_pem`], `crawlrank serve --tls --ca-out FILE`). Inside the tunnel the
//! same pages are served and logged with [`LogEntry::tls`] set; `CONNECT`s themselves are not
//! logged, [`TestWeb::tunnels`] counts them and the failed handshakes. Without `tls`, a
//! `CONNECT` is 405.
//!
//! # Pages
//! - a node's page: 200, `text/html; charset=utf-8`, `<title>crawlrank test page {v}</title>`,
//!   and one `<a href>` per successor in graph order and nothing else (plus a link to the trap
//!   index after them on the pages of [`TestWebConfig::trap_link_nodes`], when traps are on).
//!   Hrefs mix absolute, protocol-relative (`//h/p`), root-relative (`/p`) and
//!   directory-relative (`p`, `./p`) forms, `"` and `'` quotes, `&amp;` escapes —
//!   deterministically per (page, position), every form resolving to the successor's URL.
//! - `/robots.txt` on every host: [`TestWebConfig::robots`] (`User-agent: *` prepended when
//!   the rules name no agent), else an allow-all `User-agent: *` / `Disallow:` (404 on hosts
//!   the graph does not have).
//! - [`TestWebConfig::latency`] is slept (asynchronously) before every response.
//! - [`TestWebConfig::error_rate`] `P`: a graph page answers 500 or 503 (empty-ish HTML body)
//!   with probability `P`, decided by a hash of (seed, node, attempt) where `attempt` counts
//!   earlier requests for that node — so a retry can succeed, and [`TestWeb::error_status`]
//!   predicts every outcome. Robots and trap pages never get injected errors.
//!
//! # Traps
//! With [`TestWebConfig::traps`], the host [`TRAPS_HOST`] serves the catalogue documented in
//! [`traps`] (redirects, a redirect loop, spider traps, a huge body, a slow response, a PDF,
//! invalid UTF-8, malformed HTML, `<base href>`, `rel=nofollow`, meta-robots nofollow,
//! canonical links, a robots-disallowed page, a flaky page); [`TestWeb::trap_expectations`]
//! lists what a correct crawler must and must not fetch after starting at [`TestWeb::traps_url`].
//! Hosts of their own ([`trap_hosts`]) serve rate limits, a cross-host redirect chain, the
//! cases of RFC 9309, and answers broken at the HTTP level, written by hand on the raw
//! connection ([`broken`]: an endless head, a bad status line, bad chunking, a short body, a
//! reset, a cut head, an endless body, a kept-alive connection closed unanswered).
//!
//! # Sitemaps
//! With [`TestWebConfig::sitemaps`], every graph host serves sitemaps listing its pages; with
//! [`TestWebConfig::sitemap_hosts`], the hosts of [`sitemap_hosts`] serve bad or unusual ones
//! (a 404, a 503, an HTML page, 100,000 entries, entries of other hosts, an index with a redirect
//! and a loop, broken XML).
//!
//! # Log
//! Every request is recorded ([`LogEntry`]: arrival and finish `Instant`, host, path, status,
//! bytes); [`TestWeb::log`] returns them, [`max_in_flight_per_host`] and [`min_gap_per_host`]
//! measure politeness, [`TestWeb::write_log`] writes them as TSV.
//!
//! # Use
//! ```no_run
//! # async fn f() -> anyhow::Result<()> {
//! use crawlrank_testweb::{TestWeb, TestWebConfig};
//! use std::sync::Arc;
//! let graph = Arc::new(crawlrank_graph::Csr::from_arcs(3, &[(0, 1), (0, 2), (1, 2)]));
//! let web = TestWeb::start(graph, None, "127.0.0.1:0".parse()?, TestWebConfig::default()).await?;
//! let client = reqwest::Client::builder().proxy(reqwest::Proxy::all(web.proxy_url())?).build()?;
//! let html = client.get(web.url(0)).send().await?.text().await?;
//! assert!(html.contains("/p1.html"));
//! web.shutdown().await;
//! # Ok(()) }
//! ```
//! Outside async code, [`TestWeb::start_blocking`] runs the server on a thread of its own
//! (a single-threaded runtime: about one core) and [`TestWeb::shutdown_blocking`] stops it.

#![warn(missing_docs)]

// The crate's modules import one another along a DAG: `config`, `log`, `reply`, `site` and
// `tls` import no other module; `pages` imports `reply` and `site`; `trap_hosts` imports
// `config`, `pages` and `reply`; `traps` imports `config`, `pages`, `reply`, `site` and
// `trap_hosts`; `sitemap_hosts` imports `pages` and `reply`; `broken` imports `log`, `site` and
// `trap_hosts`; `server` imports all of those; this file imports the modules and is imported by
// none of them.
pub mod broken;
mod config;
mod log;
mod pages;
mod reply;
mod server;
mod site;
pub mod sitemap_hosts;
mod tls;
pub mod trap_hosts;
pub mod traps;

pub use config::{injected_error, robots_rules_from_arg, TestWebConfig};
pub use log::{max_in_flight_per_host, min_gap_per_host, write_log, LogEntry};
pub use site::{generated_url, TEST_DOMAIN};
pub use traps::{
    oversize_links_within, TrapExpectations, BIG_BIN_BYTES, OVERSIZE_BLOCK_BYTES,
    OVERSIZE_HTML_BYTES, TRAPS_HOST,
};

use anyhow::{bail, Context, Result};
use crawlrank_graph::Csr;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;

/// A running test web. Dropping it stops the server (without waiting).
pub struct TestWeb {
    inner: server::Handle,
}

impl TestWeb {
    /// Starts serving `graph` on `addr` (port 0: any free port) on the current tokio runtime
    /// and returns once listening. `urls`, when given, has one URL per node. Only loopback
    /// addresses are accepted: this server exists for tests.
    pub async fn start(
        graph: Arc<Csr>,
        urls: Option<Vec<String>>,
        addr: SocketAddr,
        cfg: TestWebConfig,
    ) -> Result<TestWeb> {
        Ok(TestWeb {
            inner: server::Handle::start(server::Spec {
                graph,
                urls,
                addr,
                cfg,
            })
            .await?,
        })
    }

    /// Like [`start`](Self::start), for code without a runtime: the server runs on a thread
    /// of its own with a single-threaded tokio runtime. Stop it with
    /// [`shutdown_blocking`](Self::shutdown_blocking).
    pub fn start_blocking(
        graph: Arc<Csr>,
        urls: Option<Vec<String>>,
        addr: SocketAddr,
        cfg: TestWebConfig,
    ) -> Result<TestWeb> {
        Ok(TestWeb {
            inner: server::Handle::start_blocking(server::Spec {
                graph,
                urls,
                addr,
                cfg,
            })?,
        })
    }

    /// The address listened on.
    pub fn addr(&self) -> SocketAddr {
        self.inner.addr
    }

    /// `http://{addr}`: the proxy URL that sends every `http://` URL to this server.
    pub fn proxy_url(&self) -> String {
        format!("http://{}", self.inner.addr)
    }

    /// With [`TestWebConfig::tls`], the PEM certificate of the CA that signs the test web's
    /// host certificates: what a client must trust (e.g. reqwest's `add_root_certificate`,
    /// `crawlrank crawl --ca-cert`).
    pub fn ca_pem(&self) -> Option<&str> {
        self.inner.shared.tls.as_ref().map(|(ca, _)| ca.ca_pem())
    }

    /// Writes [`ca_pem`](Self::ca_pem) to `path` (atomically); an error without TLS.
    pub fn write_ca_pem(&self, path: &Path) -> Result<()> {
        let Some(pem) = self.ca_pem() else {
            bail!("the test web does not serve HTTPS (TestWebConfig::tls is off): it has no CA");
        };
        crawlrank_graph::atomic::write_file(path, |w| {
            use std::io::Write as _;
            w.write_all(pem.as_bytes())?;
            Ok(())
        })
        .with_context(|| {
            format!(
                "cannot write the test web's CA certificate to {}",
                path.display()
            )
        })
    }

    /// `CONNECT` tunnels opened so far, and the TLS handshakes that failed in them (a client
    /// that does not trust the CA fails its handshake).
    pub fn tunnels(&self) -> (u64, u64) {
        let s = &self.inner.shared;
        (
            s.tunnels_opened.load(std::sync::atomic::Ordering::Relaxed),
            s.handshake_failures
                .load(std::sync::atomic::Ordering::Relaxed),
        )
    }

    /// The graph served.
    pub fn graph(&self) -> &Arc<Csr> {
        self.inner.shared.site.graph()
    }

    /// Number of graph pages served.
    pub fn num_nodes(&self) -> usize {
        self.inner.shared.site.num_nodes()
    }

    /// Number of distinct hosts of the graph's pages (the trap host not counted).
    pub fn num_hosts(&self) -> usize {
        self.inner.shared.site.num_hosts()
    }

    /// How many nodes were given their generated URL because the graph's was missing,
    /// invalid or a duplicate.
    pub fn num_fallback_urls(&self) -> usize {
        self.inner.shared.site.fallbacks
    }

    /// The URL node `node` is served at (panics when `node >= num_nodes()`).
    pub fn url(&self, node: u32) -> &str {
        self.inner.shared.site.url(node)
    }

    /// The node served at `url` (scheme, port and fragment ignored; host case-insensitive).
    pub fn node_of(&self, url: &str) -> Option<u32> {
        self.inner.shared.site.node_of(url)
    }

    /// The URLs of `nodes`, in order: seeds for a crawl.
    pub fn seed_urls(&self, nodes: &[u32]) -> Vec<String> {
        nodes.iter().map(|&v| self.url(v).to_owned()).collect()
    }

    /// `http://traps.crawlrank.test/`, the trap index, when traps are on.
    pub fn traps_url(&self) -> Option<String> {
        self.inner
            .shared
            .cfg
            .traps
            .then(|| format!("http://{TRAPS_HOST}/"))
    }

    /// What a correct crawler started at [`traps_url`](Self::traps_url) must fetch, must never
    /// fetch, and must fetch only finitely often (see [`traps`]).
    pub fn trap_expectations(&self) -> TrapExpectations {
        traps::expectations(&self.inner.shared.site)
    }

    /// The error this server injects for `node`'s request number `attempt` (0-based), if any.
    pub fn error_status(&self, node: u32, attempt: u32) -> Option<u16> {
        let cfg = &self.inner.shared.cfg;
        injected_error(cfg.seed, cfg.error_rate, node, attempt)
    }

    /// The configuration served.
    pub fn config(&self) -> &TestWebConfig {
        &self.inner.shared.cfg
    }

    /// Every request finished so far, by arrival time. A request still being answered
    /// appears once its response is finished or abandoned.
    pub fn log(&self) -> Vec<LogEntry> {
        let mut log = self
            .inner
            .shared
            .log
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        log.sort_by_key(|e| e.arrival);
        log
    }

    /// Requests received so far (counted even with `record_log` off).
    pub fn num_requests(&self) -> u64 {
        self.inner
            .shared
            .requests
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Empties the log (and nothing else: attempt counters keep counting).
    pub fn clear_log(&self) {
        self.inner
            .shared
            .log
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
    }

    /// Writes [`log`](Self::log) as TSV (times in µs since the server started).
    pub fn write_log(&self, path: &Path) -> Result<()> {
        write_log(&self.log(), self.inner.shared.started, path)
    }

    /// Stops accepting, lets open responses finish for `shutdown_grace`, then cuts the rest.
    /// Idempotent; the log stays readable afterwards.
    pub async fn shutdown(&self) {
        self.inner.shutdown().await
    }

    /// [`shutdown`](Self::shutdown) for code outside a runtime (either way of starting).
    pub fn shutdown_blocking(&self) {
        self.inner.shutdown_blocking()
    }
}

/// Blocks until Ctrl-C (SIGINT), for the command line.
pub fn wait_for_ctrl_c() -> Result<()> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(tokio::signal::ctrl_c())
        .context("cannot listen for Ctrl-C")
}
