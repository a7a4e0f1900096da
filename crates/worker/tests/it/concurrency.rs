//! A worker uses its `concurrency`: on a web of many hosts, where one request per host at a
//! time still leaves plenty to fetch at once, a worker at concurrency N keeps several
//! requests in flight, and never more than N, as the served web sees them (the test web's
//! log of each request's arrival and finish). A worker that takes in one ended fetch per
//! `GetURLs` round trip leases, fetches and reports about one page per round trip whatever
//! its concurrency: it passes every other test and crawls at a fraction of its speed.

use crate::common::{start_service_with, start_web_with, worker_config};
use crawlrank_testweb::{max_in_flight_per_host, LogEntry, TestWebConfig};
use crawlrank_worker::WorkerStop;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

/// Requests in flight on average, from the first request's arrival to the last one's finish:
/// the time the requests took together over the time the crawl took.
fn mean_in_flight(log: &[LogEntry]) -> f64 {
    let (Some(first), Some(last)) = (
        log.iter().map(|e| e.arrival).min(),
        log.iter().map(|e| e.finish).max(),
    ) else {
        return 0.0;
    };
    let busy: Duration = log
        .iter()
        .map(|e| e.finish.saturating_duration_since(e.arrival))
        .sum();
    busy.as_secs_f64()
        / last
            .saturating_duration_since(first)
            .as_secs_f64()
            .max(1e-9)
}

/// The most requests in flight at once to the whole web, from its log.
fn max_in_flight(log: &[LogEntry]) -> usize {
    let mut events: Vec<(Instant, i32)> = log
        .iter()
        .flat_map(|e| [(e.arrival, 1), (e.finish, -1)])
        .collect();
    // At equal instants a finish comes first: back-to-back requests do not overlap.
    events.sort_unstable();
    let (mut cur, mut max) = (0i32, 0i32);
    for (_, d) in events {
        cur += d;
        max = max.max(cur);
    }
    max as usize
}

#[test]
fn a_worker_keeps_its_concurrency_busy_on_a_web_of_many_hosts() {
    // 600 pages, one host each: every out-link is another host's page, so the crawl soon has
    // more hosts to fetch from than the worker has slots.
    let g = crawlrank_testkit::ring_with_chords(600, &[(2, 0), (3, 1), (7, 3)]).csr();
    let latency = Duration::from_millis(100);
    let web = start_web_with(
        &g,
        TestWebConfig {
            latency,
            pages_per_host: 1,
            ..TestWebConfig::default()
        },
    );
    // Every changing call (GetURLs, ReportPage) answered after a 100 ms commit window: a
    // round trip as long as a fetch, so a worker fetching one page per round trip has about
    // one request in flight.
    let service = start_service_with("fica", g.num_nodes() as u64, Some(latency));
    let mut c = worker_config(&web, &service.server, web.seed_urls(&[0]));
    c.concurrency = 16;
    c.max_pages = Some(96);
    let report = crawlrank_worker::run(&c, &AtomicBool::new(false), &mut |_| {}).unwrap();
    assert_eq!(report.stop, WorkerStop::MaxPages, "{report:?}");
    assert_eq!(report.counts.fetched, 96, "{report:?}");
    let log = web.log();
    assert!(
        max_in_flight_per_host(&log).values().all(|&m| m <= 1),
        "still one request at a time per host"
    );
    // The URLs leased ahead wait for a fetch slot: never more fetches than the concurrency.
    let most = max_in_flight(&log);
    assert!(
        most <= c.concurrency,
        "{most} requests at once at concurrency {}",
        c.concurrency
    );
    // Each request, report and GetURLs takes about 100 ms. 16 fetch slots, each given the
    // next leased URL as soon as it is free, keep about 7 requests in flight (the start,
    // while the crawl knows fewer hosts than slots, counted in); a worker that leased,
    // fetched and reported a page per GetURLs round trip kept about 2.
    let mean = mean_in_flight(&log);
    assert!(
        mean >= 3.0,
        "{mean:.2} requests in flight on average at concurrency {} ({} requests in {:.1} s)",
        c.concurrency,
        log.len(),
        report.elapsed
    );
    service.shutdown();
    web.shutdown_blocking();
}
