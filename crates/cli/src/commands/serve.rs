//! `crawlrank serve`: serve a graph as a local test web for the crawler.
//!
//! The crawler must be run, measured and debugged against something reproducible that never
//! leaves the machine; this command puts `crawlrank-testweb` behind a command line so a crawl
//! can be watched by hand (`curl -x http://127.0.0.1:PORT http://h0.crawlrank.test/p0.html`;
//! with `--tls --ca-out ca.pem`, `curl -x http://127.0.0.1:PORT --cacert ca.pem https://…`)
//! and benchmarked from another process. All behaviour lives in the library; this module only
//! turns arguments into a `TestWebConfig` and waits for Ctrl-C.
//!
//! What it prints is for a person or a test harness watching; if whoever reads its output
//! goes away (a closed pipe), the server keeps serving rather than dying on the write.

use anyhow::{bail, Context, Result};
use crawlrank_graph::{open_graph, Cache};
use crawlrank_testweb::{robots_rules_from_arg, TestWeb, TestWebConfig, TEST_DOMAIN};
use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The graph: a BVGraph basename or an arc-list file. Its URLs are used when it has them,
    /// else the page of id v is http://h{v/K}.crawlrank.test/p{v}.html (K = --pages-per-host;
    /// the ids are the graph's own: those of an imported arc list, else 0..n).
    #[arg(long)]
    pub graph: PathBuf,

    /// Address to listen on: a loopback address; port 0 picks a free port. Every host is
    /// served on this one port: use it as an HTTP proxy, or send a Host header.
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub addr: String,

    /// Milliseconds slept (without blocking) before every response.
    #[arg(long, default_value_t = 0, value_name = "MS")]
    pub latency: u64,

    /// Probability in [0, 1] that a page request gets a 500 or 503, drawn per (URL, attempt)
    /// so retries can succeed.
    #[arg(long, default_value_t = 0.0, value_name = "P")]
    pub error_rate: f64,

    /// robots.txt rules for every host: a file, or the rules themselves
    /// ('Disallow: /private/\nCrawl-delay: 1'). Default: allow all.
    #[arg(long, value_name = "RULES")]
    pub robots: Option<String>,

    /// Seed of the error draws.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,

    /// Also serve the trap catalogue on http://traps.crawlrank.test/ (redirects, loops, spider
    /// traps, a huge and a slow page, non-HTML, broken HTML, nofollow, canonical, ...).
    #[arg(long)]
    pub traps: bool,

    /// With --traps: the graph pages that link to the trap index (comma-separated ids; default:
    /// the first page).
    #[arg(long, value_delimiter = ',', value_name = "IDS")]
    pub trap_links: Vec<String>,

    /// Pages per generated host (graphs without URLs).
    #[arg(long, default_value_t = 8, value_name = "K")]
    pub pages_per_host: u32,

    /// Ignore the graph's URLs and serve the generated ones.
    #[arg(long)]
    pub no_urls: bool,

    /// Serve the graph's pages over HTTPS (their URLs become https://): CONNECT tunnels
    /// through this address speak TLS with certificates from a CA made at start-up.
    /// Needs --ca-out.
    #[arg(long, requires = "ca_out")]
    pub tls: bool,

    /// With --tls: write the CA certificate (PEM) that clients must trust to FILE, e.g. for
    /// `crawlrank crawl --ca-cert FILE`.
    #[arg(long, value_name = "FILE", requires = "tls")]
    pub ca_out: Option<PathBuf>,

    /// Serve sitemaps on every host of the graph: /sitemap.xml (an index naming
    /// /sitemap-pages.xml.gz, a gzipped list of the host's pages) and a robots.txt
    /// `Sitemap: /sitemap-robots.xml` (the same list). Pages no link reaches are listed too.
    #[arg(long)]
    pub sitemaps: bool,

    /// Write the request log (TSV: times in µs since start, host, path, status, bytes, ...)
    /// to FILE on exit. Without it, requests are not recorded.
    #[arg(long, value_name = "FILE")]
    pub log: Option<PathBuf>,
}

pub fn run(args: Args, cache: &Cache) -> Result<()> {
    let addr: SocketAddr = args.addr.parse().with_context(|| {
        format!(
            "bad --addr '{}': expected IP:PORT, e.g. 127.0.0.1:8080",
            args.addr
        )
    })?;
    let robots = args
        .robots
        .as_deref()
        .map(robots_rules_from_arg)
        .transpose()?;
    let cfg = TestWebConfig {
        latency: Duration::from_millis(args.latency),
        error_rate: args.error_rate,
        seed: args.seed,
        robots,
        pages_per_host: args.pages_per_host,
        traps: args.traps,
        // Set once the graph and its ids are known.
        trap_link_nodes: Vec::new(),
        record_log: args.log.is_some(),
        tls: args.tls,
        sitemaps: args.sitemaps,
        ..TestWebConfig::default()
    };
    // Argument errors before the (possibly long) graph load.
    cfg.validate()?;
    let graph = open_graph(&args.graph, cache)?;
    let ids = graph.page_ids()?;
    let mut urls = if args.no_urls { None } else { graph.urls()? };
    if urls.is_none() && !ids.is_dense() {
        // Generated URLs name the pages by the graph's own ids.
        let k = args.pages_per_host.max(1) as u64;
        urls = Some(
            (0..ids.len())
                .map(|v| {
                    let id = ids.id(v);
                    format!("http://h{}.{TEST_DOMAIN}/p{id}.html", id / k)
                })
                .collect(),
        );
    }
    let csr = Arc::new(graph.to_csr()?);
    let mut cfg = cfg;
    if args.traps {
        cfg.trap_link_nodes = if args.trap_links.is_empty() {
            vec![0]
        } else {
            args.trap_links
                .iter()
                .map(|t| ids.parse(t, "--trap-links").map(|v| v as u32))
                .collect::<Result<_>>()?
        };
        if csr.num_nodes() == 0 {
            bail!("--traps: the graph has no pages to link to the trap index");
        }
    }
    let web = TestWeb::start_blocking(csr, urls, addr, cfg)?;
    if let Some(path) = &args.ca_out {
        if let Err(e) = web.write_ca_pem(path) {
            web.shutdown_blocking();
            return Err(e);
        }
    }
    say(format_args!(
        "serving {} pages on {} hosts at http://{} (use it as an HTTP proxy, or send a Host header)",
        web.num_nodes(),
        web.num_hosts(),
        web.addr()
    ));
    if web.num_nodes() > 0 {
        say(format_args!("first page: {}", web.url(0)));
    }
    if let Some(path) = &args.ca_out {
        say(format_args!(
            "HTTPS through CONNECT; clients must trust the CA in {} (crawl --ca-cert {0})",
            path.display()
        ));
    }
    if let Some(t) = web.traps_url() {
        say(format_args!("traps: {t}"));
    }
    if web.num_fallback_urls() > 0 {
        say(format_args!(
            "{} pages without a usable URL get generated ones",
            web.num_fallback_urls()
        ));
    }
    say(format_args!("Ctrl-C stops"));
    crawlrank_testweb::wait_for_ctrl_c()?;
    web.shutdown_blocking();
    say(format_args!("served {} requests", web.num_requests()));
    if let Some(path) = &args.log {
        web.write_log(path)?;
        say(format_args!("request log: {}", path.display()));
    }
    Ok(())
}

/// Prints a line and flushes it (a harness waits for these lines); a closed or full stdout
/// is ignored, where `println!` would panic.
fn say(line: std::fmt::Arguments<'_>) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}
