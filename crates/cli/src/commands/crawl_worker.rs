//! `crawlrank crawl --frontier URL`: the crawl's fetching as a worker of a frontier service
//! (crawlrank_worker), with the `crawl` command's fetch, scope and politeness options.

use super::crawl_args::{read_seeds, Args};
use super::crawl_stop::stop_on_signals;
use anyhow::Result;
use crawlrank_worker::{WorkerConfig, WorkerStop};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

pub fn run(args: Args) -> Result<()> {
    let frontier = args.frontier.clone().unwrap_or_default();
    let mut c = WorkerConfig {
        frontier,
        crawl_id: args.crawl_id.clone(),
        seeds: match &args.seeds {
            Some(p) => read_seeds(p)?,
            None => Vec::new(),
        },
        concurrency: args.concurrency,
        // The service counts whole seconds between two answers of a queue.
        delay_secs: Some(u32::try_from(args.delay.div_ceil(1000)).unwrap_or(u32::MAX)),
        lease_secs: args.lease,
        max_pages: args.max_pages,
        max_retries: args.max_retries,
        max_retry_after: Duration::from_secs(args.max_retry_after),
        idle_exit: Duration::from_secs(args.idle_exit),
        state_dir: Some(args.state.clone()),
        plain_api: args.plain_urlfrontier,
        frontier_retry: Duration::from_secs(args.frontier_retry),
        scope: args.scope_config(),
        fetch: args.fetch_config(),
        ..WorkerConfig::default()
    };
    // A worker reads no sitemaps (docs/frontier-service.md, Workers).
    c.fetch.sitemaps = false;

    let stop = Arc::new(AtomicBool::new(false));
    stop_on_signals(stop.clone())?;
    let pb = crate::progress::bar(None, "pages");
    pb.set_prefix("worker");
    let report = crawlrank_worker::run(&c, &stop, &mut |p| {
        pb.set_position(p.fetched);
        pb.set_prefix(format!(
            "worker: in flight {}, given up {}, links {} ({} new) |",
            p.in_flight, p.given_up, p.links, p.discovered
        ));
    })?;
    pb.finish_and_clear();
    let why = match report.stop {
        WorkerStop::Exhausted => "every URL of the crawl is done",
        WorkerStop::Idle => "nothing to fetch for --idle-exit while nothing was leased",
        WorkerStop::MaxPages => "--max-pages reached",
        WorkerStop::Stopped => "interrupted",
    };
    let k = &report.counts;
    println!(
        "worker stopped: {why}; {} pages fetched in {:.1} s ({:.0} pages/s), {} given up ({} disallowed by robots.txt), {} robots.txt requests, {} retries, {} rate limited ({} left to their lease, {} retry after too long)",
        k.fetched,
        report.elapsed,
        k.fetched as f64 / report.elapsed.max(1e-9),
        k.given_up,
        k.robots_disallowed,
        k.robots_requests,
        k.retries,
        k.rate_limited,
        k.deferred,
        k.retry_after_too_long
    );
    println!(
        "reported {} out-links ({} new to the crawl, {} out of scope) to {}{}",
        k.links,
        k.discovered,
        k.out_of_scope,
        args.frontier.as_deref().unwrap_or(""),
        if report.plain_api {
            " with plain PutURLs (the frontier has no ReportPage)"
        } else {
            ""
        }
    );
    if let Some(dir) = &report.warc_dir {
        println!("WARC files in {}", dir.display());
    }
    Ok(())
}
