//! Workers crawling the local test web (`crawlrank-testweb`) through crawlrank's frontier
//! service, everything real and on loopback: the service on 127.0.0.1:0 in this process,
//! the worker's HTTP through the test web's proxy. One worker at concurrency 1 with no delay
//! fetches in exactly the simulator's order, for every policy the service runs (the service's
//! policy is the simulator's code);
//! two workers at once fetch every page once, one request at a time per host.

use crate::common::{run_two, start_service, start_web, start_web_with, worker_config};
use crawlrank_frontier::PolicyKind;
use crawlrank_graph::Csr;
use crawlrank_sim::{simulate, Reference, SimConfig, SimPolicy};
use crawlrank_testweb::{max_in_flight_per_host, TestWebConfig};
use crawlrank_worker::WorkerStop;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A web where every page is reachable from every page (a ring) and some pages are linked
/// far more than others (chords `2v` and `3v+1` mod 300 land on few pages).
fn web_graph() -> Csr {
    crawlrank_testkit::ring_with_chords(300, &[(2, 0), (3, 1), (6, 5)]).csr()
}

/// The simulator's order from `seeds` with `policy`, its batch the service's default for
/// a crawl expected to reach every page (`R` = `n` = the graph's size).
fn simulator_order(g: &Csr, seeds: &[u32], policy: &str) -> Vec<u32> {
    let pagerank = Arc::new(
        crawlrank_rank::pagerank(g, &Default::default())
            .unwrap()
            .scores,
    );
    let reference = Reference::new(g, pagerank, seeds).unwrap();
    let config = SimConfig::default();
    let policy = SimPolicy::Crawl(PolicyKind::parse(policy).unwrap());
    simulate(g, seeds, policy, &reference, &config, &mut |_| {})
        .unwrap()
        .order
}

#[test]
fn one_worker_fetches_in_the_simulators_order() {
    let g = web_graph();
    let seeds = [0u32, 17];
    // Every policy the service runs (rw, rw-eg and learned need a search log, which a
    // service cannot be given): the crawler's own tests hold its order to the simulator's for
    // each of them too (crates/crawler/tests/it/e2e.rs), so a worker and `crawl` agree. The
    // crawls wait mostly on round trips and commits: three at a time, each with a web and a
    // service of its own.
    let policies: Vec<&str> = PolicyKind::ALL
        .iter()
        .filter(|k| !k.needs_impact() && k.available())
        .map(|k| k.name())
        .collect();
    for group in policies.chunks(3) {
        std::thread::scope(|s| {
            for &policy in group {
                let g = &g;
                s.spawn(move || {
                    let expected = simulator_order(g, &seeds, policy);
                    assert_eq!(expected.len(), g.num_nodes());
                    let web = start_web(g);
                    let service = start_service(policy, g.num_nodes() as u64);
                    let c = worker_config(&web, &service.server, web.seed_urls(&seeds));
                    let report =
                        crawlrank_worker::run(&c, &AtomicBool::new(false), &mut |_| {}).unwrap();
                    assert_eq!(report.stop, WorkerStop::Exhausted, "{policy}");
                    assert_eq!(report.counts.fetched, g.num_nodes() as u64, "{policy}");
                    assert!(!report.plain_api, "crawlrank's service has ReportPage");
                    let fetched: Vec<u32> = web.log().iter().filter_map(|e| e.node).collect();
                    assert_eq!(
                        fetched, expected,
                        "{policy}: the worker's order is the simulator's"
                    );
                    service.shutdown();
                    web.shutdown_blocking();
                });
            }
        });
    }
}

/// Reporting as to any URLFrontier server (out-links as discovered URLs naming their parent
/// in `url.path`, then the page's known update) gives the service the same links: the order
/// is still the simulator's.
#[test]
fn plain_put_urls_reports_give_the_same_order() {
    let g = web_graph();
    let seeds = [3u32];
    let web = start_web(&g);
    let expected = simulator_order(&g, &seeds, "fica");
    let service = start_service("fica", g.num_nodes() as u64);
    let mut c = worker_config(&web, &service.server, web.seed_urls(&seeds));
    c.plain_api = true;
    let report = crawlrank_worker::run(&c, &AtomicBool::new(false), &mut |_| {}).unwrap();
    assert_eq!(report.stop, WorkerStop::Exhausted);
    assert!(report.plain_api);
    let fetched: Vec<u32> = web.log().iter().filter_map(|e| e.node).collect();
    assert_eq!(fetched, expected);
    service.shutdown();
    web.shutdown_blocking();
}

#[test]
fn two_workers_share_a_crawl_and_fetch_each_page_once() {
    let g = web_graph();
    // 10 ms an answer: the crawl lasts long enough for the worker without seeds, which
    // polls the empty crawl until the other's seeds arrive, to take its share.
    let web = start_web_with(
        &g,
        TestWebConfig {
            latency: Duration::from_millis(10),
            ..TestWebConfig::default()
        },
    );
    let service = start_service("fica", g.num_nodes() as u64);
    let state = tempfile::tempdir().unwrap();
    let mut c = worker_config(&web, &service.server, web.seed_urls(&[0]));
    c.concurrency = 4;
    c.fetch.warc = true;
    c.state_dir = Some(state.path().to_path_buf());
    let mut second = c.clone();
    second.seeds.clear();
    let (a, b) = run_two(&c, &second);
    assert_eq!(a.stop, WorkerStop::Exhausted);
    assert_eq!(b.stop, WorkerStop::Exhausted);
    assert_eq!(
        a.counts.fetched + b.counts.fetched,
        g.num_nodes() as u64,
        "together they fetched every page"
    );
    assert!(
        a.counts.fetched > 0 && b.counts.fetched > 0,
        "both worked: {a:?} {b:?}"
    );
    let log = web.log();
    let mut per_page: HashMap<u32, usize> = HashMap::new();
    for e in &log {
        if let Some(v) = e.node {
            *per_page.entry(v).or_default() += 1;
        }
    }
    assert_eq!(per_page.len(), g.num_nodes());
    assert!(per_page.values().all(|&n| n == 1), "no page fetched twice");
    assert!(
        max_in_flight_per_host(&log).values().all(|&m| m <= 1),
        "one request at a time per host across both workers"
    );
    // Each wrote its own WARC directory.
    let dirs = std::fs::read_dir(state.path().join("warc"))
        .unwrap()
        .count();
    assert_eq!(dirs, 2);
    service.shutdown();
    web.shutdown_blocking();
}

/// A small web with the trap hosts on, their refusals asking for `retry_after` seconds.
fn trap_web(retry_after: u64) -> crawlrank_testweb::TestWeb {
    let g = crawlrank_testkit::ring_with_chords(4, &[]).csr();
    start_web_with(
        &g,
        TestWebConfig {
            traps: true,
            retry_after_secs: retry_after,
            ..TestWebConfig::default()
        },
    )
}

/// A host that answers 429 with `Retry-After: 3` holds its queue for every worker: two
/// workers, leases of 2 s (shorter than the wait, so the refused URL goes back to the
/// service and is served again only when the hold is over), and no request reaches the host
/// within 3 s of a refusal, whoever makes it. Every page of the host is fetched in the end.
#[test]
fn a_refusal_holds_the_hosts_queue_for_every_worker_until_retry_after() {
    let web = trap_web(3);
    let service = start_service("bfs", 16);
    let host = "retry-after.traps.crawlrank.test";
    let mut c = worker_config(&web, &service.server, vec![format!("http://{host}/")]);
    c.concurrency = 2;
    c.lease_secs = 2;
    c.max_retries = 4;
    let mut second = c.clone();
    second.seeds.clear();
    let (a, b) = run_two(&c, &second);
    assert_eq!(a.stop, WorkerStop::Exhausted, "{a:?}");
    let mut log: Vec<_> = web
        .log()
        .into_iter()
        .filter(|e| e.host == host && e.path != "/robots.txt")
        .collect();
    log.sort_by_key(|e| e.arrival);
    let ok: std::collections::BTreeSet<&str> = log
        .iter()
        .filter(|e| e.status == 200)
        .map(|e| e.path.as_str())
        .collect();
    assert_eq!(ok, ["/", "/p1", "/p2", "/p3", "/p4"].into(), "{log:?}");
    let refusals = log.iter().filter(|e| e.status == 429).count();
    assert_eq!(refusals, 2, "{log:?}");
    for w in log.windows(2).filter(|w| w[0].status == 429) {
        let waited = w[1].arrival.saturating_duration_since(w[0].finish);
        assert!(
            waited >= Duration::from_secs(3),
            "a request {waited:?} after a 429 asking for 3 s: {log:?}"
        );
    }
    let (k, l) = (&a.counts, &b.counts);
    assert_eq!(
        k.stats.rate_limited + l.stats.rate_limited,
        2,
        "{k:?} {l:?}"
    );
    assert_eq!(
        k.deferred + l.deferred,
        2,
        "the waits outlast the leases: {k:?} {l:?}"
    );
    assert_eq!(
        k.stats.retries + l.stats.retries,
        2,
        "each refusal a retry, as `crawl` counts it: {k:?} {l:?}"
    );
    service.shutdown();
    web.shutdown_blocking();
}

/// The text of the response records of every WARC file under `dir`.
fn warc_responses(dir: &std::path::Path) -> Vec<String> {
    let mut records = Vec::new();
    for entry in walk(dir) {
        if !entry.to_string_lossy().ends_with(".warc.gz") {
            continue;
        }
        let gz = std::fs::read(&entry).unwrap();
        let mut text = String::new();
        std::io::Read::read_to_string(&mut flate2::read::MultiGzDecoder::new(&gz[..]), &mut text)
            .unwrap();
        records.extend(
            text.split("WARC/1.1\r\n")
                .filter(|r| r.contains("WARC-Type: response"))
                .map(str::to_string),
        );
    }
    records
}

/// Every file under `dir`.
fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let path = e.unwrap().path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else {
            files.push(path);
        }
    }
    files
}

/// A page whose fetch fails in a way a retry may mend (a 500) is tried again after the
/// back-off, but not under its lease: it goes back to the service with its count of attempts,
/// its host serves its other pages meanwhile, and a worker started after the first one
/// stopped makes the attempts that are left, no more. Every attempt's answer is in the
/// workers' WARC files, as `crawl` archives them.
#[test]
fn a_retry_goes_back_to_the_service_and_outlives_its_worker() {
    let web = trap_web(2);
    let service = start_service("bfs", 16);
    let host = "flaky.traps.crawlrank.test";
    let state = tempfile::tempdir().unwrap();
    let mut first = worker_config(&web, &service.server, vec![format!("http://{host}/")]);
    first.retry_backoff = Duration::from_secs(1);
    first.fetch.warc = true;
    first.state_dir = Some(state.path().to_path_buf());
    let asked_p1 = || web.log().iter().any(|e| e.host == host && e.path == "/p1");
    // The first worker is stopped once it asked for /p1: it reports what it fetched first.
    let stop = AtomicBool::new(false);
    let a = std::thread::scope(|s| {
        let w = s.spawn(|| crawlrank_worker::run(&first, &stop, &mut |_| {}).unwrap());
        let start = Instant::now();
        while !asked_p1() && start.elapsed() < Duration::from_secs(30) {
            std::thread::sleep(Duration::from_millis(5));
        }
        stop.store(true, Ordering::SeqCst);
        w.join().unwrap()
    });
    assert!(asked_p1(), "the first worker asked for /p1: {a:?}");
    assert_eq!(a.stop, WorkerStop::Stopped, "{a:?}");
    assert_eq!(a.counts.stats.retries, 1, "one retry scheduled: {a:?}");
    let mut second = first.clone();
    second.seeds.clear();
    let b = crawlrank_worker::run(&second, &AtomicBool::new(false), &mut |_| {}).unwrap();
    assert_eq!(b.stop, WorkerStop::Exhausted, "{b:?}");
    assert_eq!(
        b.counts.stats.retries, 1,
        "the second retry, then no more: {b:?}"
    );
    let mut log: Vec<_> = web
        .log()
        .into_iter()
        .filter(|e| e.host == host && e.path != "/robots.txt")
        .collect();
    log.sort_by_key(|e| e.arrival);
    let p1: Vec<usize> = (0..log.len()).filter(|&i| log[i].path == "/p1").collect();
    assert_eq!(p1.len(), 3, "1 + --max-retries requests: {log:?}");
    assert!(p1.iter().all(|&i| log[i].status == 500), "{log:?}");
    let after = |k: usize| {
        log[p1[k + 1]]
            .arrival
            .saturating_duration_since(log[p1[k]].finish)
    };
    assert!(
        after(0) >= Duration::from_secs(1),
        "{:?}: {log:?}",
        after(0)
    );
    assert!(
        after(1) >= Duration::from_secs(2),
        "{:?}: {log:?}",
        after(1)
    );
    assert!(
        log[p1[0] + 1..p1[2]].iter().any(|e| e.path != "/p1"),
        "the host's other pages are fetched during the back-off: {log:?}"
    );
    let mut ok: Vec<&str> = log
        .iter()
        .filter(|e| e.status == 200)
        .map(|e| e.path.as_str())
        .collect();
    ok.sort_unstable();
    assert_eq!(ok, ["/", "/p2", "/p3", "/p4"], "each once: {log:?}");
    let target = format!("WARC-Target-URI: http://{host}/p1\r\n");
    let p1_answers = warc_responses(state.path())
        .iter()
        .filter(|r| r.contains(&target))
        .count();
    assert_eq!(p1_answers, 3, "each attempt archived");
    service.shutdown();
    web.shutdown_blocking();
}

/// A robots.txt answered 500 is asked again after the back-off (2 s, then 4 s), as `crawl`
/// asks it, even when the back-off outlasts the lease (2 s): the host's queue is held for
/// the wait and robots.txt asked under the next lease, never by two fetches at once or
/// before the wait is over; after `--max-retries` (2) the host is taken as disallowing
/// everything and its page given up once.
#[test]
fn a_robots_txt_retry_longer_than_the_lease_waits_for_the_next_lease() {
    let web = trap_web(2);
    let service = start_service("bfs", 16);
    let host = "robots-500.traps.crawlrank.test";
    let mut c = worker_config(&web, &service.server, vec![format!("http://{host}/")]);
    c.lease_secs = 2;
    c.max_retries = 2;
    c.retry_backoff = Duration::from_secs(2);
    c.concurrency = 2;
    let report = crawlrank_worker::run(&c, &AtomicBool::new(false), &mut |_| {}).unwrap();
    assert_eq!(report.stop, WorkerStop::Exhausted, "{report:?}");
    let mut log: Vec<_> = web.log().into_iter().filter(|e| e.host == host).collect();
    log.sort_by_key(|e| e.arrival);
    let paths: Vec<&str> = log.iter().map(|e| e.path.as_str()).collect();
    assert_eq!(paths, ["/robots.txt"; 3], "{log:?}");
    let waits: Vec<Duration> = log
        .windows(2)
        .map(|w| w[1].arrival.saturating_duration_since(w[0].finish))
        .collect();
    assert!(waits[0] >= Duration::from_secs(2), "{waits:?}");
    assert!(waits[1] >= Duration::from_secs(4), "{waits:?}");
    let k = &report.counts;
    assert_eq!((k.given_up, k.stats.robots_disallowed), (1, 1), "{k:?}");
    assert_eq!(k.stats.retries, 2, "{k:?}");
    service.shutdown();
    web.shutdown_blocking();
}
