//! Crawl throughput on the local test web (loopback only), with persistence and WARC on:
//! `cargo run --release -p crawlrank-crawler --example bench_crawl -- [PAGES] [CONCURRENCY]
//! [SPIDER_BINARY]`. Serves a synthetic web of PAGES pages (8 per host), crawls all of it
//! with policy fica, no delay, and prints pages/s (`CRAWLRANK_BENCH_IDLE=N` sets the idle
//! connections kept, default the concurrency; `CRAWLRANK_BENCH_SOCKETS=1` also samples the
//! sockets the crawler holds, which costs the timed crawl a tenth of the CPU); with
//! SPIDER_BINARY (see `bench-spider/`), the `spider` crate then crawls the same web through
//! the same server and the ratio is printed. Last, crawlrank crawls the same web served over HTTPS (TLS
//! tunnels through the same kind of server, its CA trusted), to show what TLS costs. Run by
//! `scripts/bench-crawl.sh`.

use crawlrank_crawler::{
    crawl, CrawlConfig, CrawlLimits, PolicySettings, Politeness, Resources, UrlLimits,
};
use crawlrank_graph::Csr;
use crawlrank_rng::XorShift64;
use crawlrank_testweb::{TestWeb, TestWebConfig};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A deterministic web with skewed out-degrees (mean about 8), preferential to low ids, and
/// a path through every page so all of it is reachable from page 0.
fn graph(n: u32) -> Csr {
    let mut rng = XorShift64::new(0x9e3779b97f4a7c15);
    let mut next = move || rng.next_u64();
    let mut arcs = Vec::new();
    for v in 0..n {
        arcs.push((v, (v + 1) % n));
        for _ in 0..(next() % 15) {
            let r = next();
            let w = if r % 3 == 0 {
                (r >> 8) as u32 % (n / 100).max(1)
            } else {
                (r >> 8) as u32 % n
            };
            arcs.push((v, w));
        }
    }
    arcs.sort_unstable();
    arcs.dedup();
    Csr::from_arcs(n as usize, &arcs)
}

/// Writes `g` as an arc list, atomically (the project's `atomic::write_file`).
fn write_graph(g: &Csr, out: &std::path::Path) -> anyhow::Result<()> {
    use std::io::Write;
    crawlrank_graph::atomic::write_file(out, |w| {
        for v in 0..g.num_nodes() {
            for &dst in g.successors(v) {
                writeln!(w, "{v}\t{dst}")?;
            }
        }
        Ok(())
    })
}

/// This process's open TCP sockets whose remote port is `port`: the crawler's side of its
/// connections to the test web (which runs in this process too, so its own sockets are left
/// out), from `/proc` (Linux; 0 elsewhere).
fn crawler_sockets(port: u16) -> usize {
    crawlrank_testkit::open_sockets("/proc/self", port).map_or(0, |(_, connections)| connections)
}

/// Crawls with `c` while a thread of its own samples the crawler's sockets to `port` four
/// times a second, unless `sample` is false; returns the report and the most sockets seen.
/// Reading `/proc/self/net/tcp` costs tens of milliseconds once the loopback holds tens of
/// thousands of TIME_WAIT sockets (every connection of this and the last runs): done in the
/// progress callback it would stall the crawl's engine thread, and even on a thread of its
/// own it takes about a tenth of the 2 cores from the crawl it measures — so the crawls
/// compared with spider (which is not sampled either) are not sampled by default.
fn crawl_sampled(
    c: &CrawlConfig,
    port: u16,
    sample: bool,
) -> anyhow::Result<(crawlrank_crawler::CrawlReport, Option<usize>)> {
    if !sample {
        return Ok((crawl(c, &AtomicBool::new(false), &mut |_| {})?, None));
    }
    let done = Arc::new(AtomicBool::new(false));
    let sampler = {
        let done = done.clone();
        std::thread::spawn(move || {
            let mut max = 0;
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                max = max.max(crawler_sockets(port));
                std::thread::sleep(Duration::from_millis(250));
            }
            max
        })
    };
    let report = crawl(c, &AtomicBool::new(false), &mut |_| {});
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    let max = sampler.join().unwrap_or(0);
    Ok((report?, Some(max)))
}

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    // `bench_crawl --write-graph PAGES FILE`: only write the benchmark's web as an arc list
    // (`SRC<TAB>DST`), for `crawlrank serve --graph FILE` in scripts/bench-vs-spider.sh.
    if args.get(1).is_some_and(|a| a == "--write-graph") {
        let (Some(pages), Some(out)) = (args.get(2), args.get(3)) else {
            anyhow::bail!("usage: bench_crawl --write-graph PAGES FILE");
        };
        return write_graph(&graph(pages.parse()?), std::path::Path::new(out));
    }
    let pages: u32 = args.get(1).map_or(Ok(20_000), |s| s.parse())?;
    let conc: usize = args.get(2).map_or(Ok(64), |s| s.parse())?;
    let g = graph(pages);
    let cfg = TestWebConfig {
        record_log: false,
        ..TestWebConfig::default()
    };
    let web = TestWeb::start_blocking(Arc::new(g), None, "127.0.0.1:0".parse()?, cfg)?;
    let dir = tempfile::tempdir()?;
    let mut c = CrawlConfig {
        state_dir: dir.path().join("state"),
        seeds: web.seed_urls(&[0]),
        policy: PolicySettings {
            kind: crawlrank_frontier::PolicyKind::Fica,
            expected_pages: Some(u64::from(pages)),
            ..PolicySettings::default()
        },
        politeness: Politeness {
            delay: Duration::ZERO,
            ..Politeness::default()
        },
        resources: Resources {
            concurrency: conc,
            // CRAWLRANK_BENCH_IDLE: the idle connections kept (default: the concurrency).
            max_idle_connections: std::env::var("CRAWLRANK_BENCH_IDLE")
                .ok()
                .and_then(|v| v.parse().ok()),
            ..Resources::default()
        },
        limits: CrawlLimits {
            urls: UrlLimits {
                // The test web's hosts all share one registrable domain (crawlrank.test).
                max_hosts_per_domain: u64::MAX,
                max_per_domain: u64::MAX,
                ..UrlLimits::DEFAULT
            },
            ..CrawlLimits::default()
        },
        ..CrawlConfig::default()
    };
    c.fetch.proxy = Some(web.proxy_url());
    // CRAWLRANK_BENCH_ONLY=warc: only the first crawl (redb + WARC), e.g. under a profiler;
    // CRAWLRANK_BENCH_ONLY=lean: only that crawl without WARC (to see what running first costs).
    let only = std::env::var("CRAWLRANK_BENCH_ONLY").unwrap_or_default();
    let only_first = only == "warc" || only == "lean";
    if only == "lean" {
        c.fetch.warc = false;
    }
    let start = Instant::now();
    let sample = std::env::var("CRAWLRANK_BENCH_SOCKETS").is_ok_and(|v| v == "1");
    let (report, sockets) = crawl_sampled(&c, web.addr().port(), sample)?;
    let sockets = sockets.map_or(String::new(), |n| format!("; at most {n} sockets open"));
    let secs = start.elapsed().as_secs_f64();
    let ours = report.pages_this_run as f64 / secs;
    println!(
        "crawlrank: {} pages ({} hosts, {} requests) in {secs:.2} s = {ours:.0} pages/s (concurrency {conc}, redb + WARC on){sockets}",
        report.pages_this_run, report.hosts, report.stats.requests
    );
    if only_first {
        web.shutdown_blocking();
        return Ok(());
    }
    // The same crawl without WARC, its state on a RAM disk when there is one (/dev/shm):
    // crawlrank's nearest to spider's in-memory crawl (its event log is still committed).
    let mut lean = c.clone();
    let shm = std::path::Path::new("/dev/shm");
    let lean_dir = if shm.is_dir() {
        tempfile::tempdir_in(shm)?
    } else {
        tempfile::tempdir()?
    };
    lean.state_dir = lean_dir.path().join("state");
    lean.fetch.warc = false;
    let start = Instant::now();
    // Not sampled: spider is not either, and the sockets were shown by the first crawl.
    let lean_report = crawl(&lean, &AtomicBool::new(false), &mut |_| {})?;
    let lean_secs = start.elapsed().as_secs_f64();
    let lean_rate = lean_report.pages_this_run as f64 / lean_secs;
    println!(
        "crawlrank --no-warc (state in {}): {} pages in {lean_secs:.2} s = {lean_rate:.0} pages/s",
        lean_dir.path().display(),
        lean_report.pages_this_run
    );
    if let Some(spider) = args.get(3) {
        for mode in ["robots", "no-robots"] {
            let out = std::process::Command::new(spider)
                .args([
                    web.proxy_url(),
                    web.url(0).to_string(),
                    pages.to_string(),
                    conc.to_string(),
                    mode.to_string(),
                ])
                .output()?;
            let text = String::from_utf8_lossy(&out.stdout);
            let mut it = text.split_whitespace();
            let (n, s): (f64, f64) = (
                it.next().unwrap_or("0").parse()?,
                it.next().unwrap_or("1").parse()?,
            );
            let theirs = n / s.max(1e-9);
            println!(
                "spider ({mode}): {n} pages in {s:.2} s = {theirs:.0} pages/s (concurrency {conc}, in memory)"
            );
            println!(
                "  ratio crawlrank / spider ({mode}) = {:.2} with redb + WARC, {:.2} with --no-warc",
                ours / theirs.max(1e-9),
                lean_rate / theirs.max(1e-9)
            );
        }
    }
    web.shutdown_blocking();

    let g = web.graph().clone();
    let cfg = TestWebConfig {
        record_log: false,
        tls: true,
        ..TestWebConfig::default()
    };
    let web = TestWeb::start_blocking(g, None, "127.0.0.1:0".parse()?, cfg)?;
    let ca = dir.path().join("test-ca.pem");
    web.write_ca_pem(&ca)?;
    c.state_dir = dir.path().join("state-https");
    c.seeds = web.seed_urls(&[0]);
    c.fetch.proxy = Some(web.proxy_url());
    c.fetch.ca_certs = vec![ca];
    let start = Instant::now();
    let (report, sockets) = crawl_sampled(&c, web.addr().port(), true)?;
    let sockets = sockets.unwrap_or(0);
    let secs = start.elapsed().as_secs_f64();
    let (tunnels, _) = web.tunnels();
    println!(
        "crawlrank over HTTPS: {} pages in {secs:.2} s = {:.0} pages/s ({tunnels} TLS tunnels, at most {sockets} sockets open; {:.2} of plain HTTP)",
        report.pages_this_run,
        report.pages_this_run as f64 / secs,
        report.pages_this_run as f64 / secs / ours
    );
    web.shutdown_blocking();
    Ok(())
}
