//! HTTPS end to end: the test web serves its pages over TLS (CONNECT tunnels through its
//! proxy port, certificates from a CA it makes at start-up) and the crawler fetches them in
//! the simulator's order when told to trust that CA — and fetches nothing, without stopping
//! or failing, when it does not trust it.

use crawlrank_crawler::engine::{crawl, CrawlConfig, StopReason};
use crawlrank_crawler::export;
use crawlrank_frontier::{replay, Frontier, PolicyConfig, PolicyKind};
use crawlrank_graph::Csr;
use crawlrank_testweb::{TestWeb, TestWebConfig};
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

/// A small web of 60 pages on 8 hosts, every page reachable from 0: a ring plus chords.
fn graph() -> Csr {
    let n = 60u32;
    let mut arcs = Vec::new();
    for v in 0..n {
        arcs.push((v, (v + 1) % n));
        if v % 3 == 0 {
            arcs.push((v, (v * 7 + 11) % n));
        }
        if v % 4 == 1 {
            arcs.push((v, (v * 13 + 5) % n));
        }
    }
    Csr::from_arcs(n as usize, &arcs)
}

fn start_tls_web(g: &Csr) -> TestWeb {
    let cfg = TestWebConfig {
        tls: true,
        ..TestWebConfig::default()
    };
    TestWeb::start_blocking(
        Arc::new(g.clone()),
        None,
        "127.0.0.1:0".parse().unwrap(),
        cfg,
    )
    .unwrap()
}

fn config(web: &TestWeb, state: &Path, policy: &str) -> CrawlConfig {
    let mut c = CrawlConfig {
        state_dir: state.to_path_buf(),
        seeds: web.seed_urls(&[0]),
        policy: policy.into(),
        concurrency: 1,
        delay: Duration::ZERO,
        max_retries: 0,
        ..CrawlConfig::default()
    };
    c.fetch.proxy = Some(web.proxy_url());
    c.fetch.timeout = Duration::from_secs(5);
    c
}

#[test]
fn crawls_https_in_policy_order_when_the_ca_is_trusted() {
    let g = graph();
    let web = start_tls_web(&g);
    assert!(web.url(0).starts_with("https://"));
    let dir = tempfile::tempdir().unwrap();
    let ca = dir.path().join("test-ca.pem");
    web.write_ca_pem(&ca).unwrap();

    let n = g.num_nodes() as u64;
    let policy = PolicyConfig {
        batch: 1,
        expected_pages: n,
        total_pages: n,
        ..PolicyConfig::default()
    };
    let mut frontier = Frontier::with_policy(PolicyKind::parse("fica").unwrap(), &policy).unwrap();
    let expected = replay(&g, &mut frontier, &[0]);

    let state = dir.path().join("state");
    let mut c = config(&web, &state, "fica");
    c.batch = Some(1);
    c.expected_pages = Some(n);
    c.total_pages = Some(n);
    c.fetch.ca_certs = vec![ca];
    let report = crawl(&c, &AtomicBool::new(false), &mut |_| {}).unwrap();
    assert_eq!(report.stop, StopReason::Exhausted);
    assert_eq!(report.stats.pages_html, n);
    assert_eq!(report.stats.fetch_errors, 0);

    // The simulator's order, every URL https, every request (robots.txt too) over TLS.
    let order = export::crawl_order(&state).unwrap();
    assert!(order.iter().all(|u| u.starts_with("https://")));
    let order: Vec<u32> = order.iter().map(|u| web.node_of(u).unwrap()).collect();
    assert_eq!(order, expected);
    let log = web.log();
    assert!(log.iter().all(|e| e.tls), "a request left the tunnels");
    let robots = log.iter().filter(|e| e.path == "/robots.txt").count();
    assert_eq!(robots, web.num_hosts(), "one robots.txt per host");
    let (tunnels, failed) = web.tunnels();
    assert!(tunnels >= web.num_hosts() as u64 && failed == 0);

    // The WARC records name the https URLs.
    let mut text = String::new();
    for e in std::fs::read_dir(state.join("warc")).unwrap() {
        let bytes = std::fs::read(e.unwrap().path()).unwrap();
        std::io::Read::read_to_string(
            &mut flate2::read::MultiGzDecoder::new(&bytes[..]),
            &mut text,
        )
        .unwrap();
    }
    assert!(text.contains(&format!("WARC-Target-URI: {}", web.url(0))));
    web.shutdown_blocking();
}

#[test]
fn an_untrusted_certificate_fetches_nothing_and_does_not_stop_the_crawl() {
    let g = graph();
    let web = start_tls_web(&g);
    let dir = tempfile::tempdir().unwrap();
    let report = crawl(
        &config(&web, dir.path(), "bfs"),
        &AtomicBool::new(false),
        &mut |_| {},
    )
    .unwrap();
    assert_eq!(report.stop, StopReason::Exhausted);
    assert_eq!(report.stats.pages_answered(), 0);
    // The seed's host fails at its robots.txt: its pages are given up as TLS failures, once.
    assert_eq!(report.stats.tls_errors, 1);
    assert_eq!(report.stats.fetch_errors, 1);
    assert_eq!(report.stats.retries, 0);
    assert!(
        web.log().is_empty(),
        "no request got through a failed handshake"
    );
    assert!(web.tunnels().1 >= 1);
    web.shutdown_blocking();
}

#[test]
fn a_bad_ca_file_is_a_clear_error() {
    let g = graph();
    let web = start_tls_web(&g);
    let dir = tempfile::tempdir().unwrap();
    let mut c = config(&web, &dir.path().join("state"), "bfs");
    let missing = dir.path().join("missing.pem");
    c.fetch.ca_certs = vec![missing.clone()];
    let err = crawl(&c, &AtomicBool::new(false), &mut |_| {}).unwrap_err();
    let msg = format!("{err:#}");
    assert!(msg.contains("missing.pem"), "{msg}");
    let junk = dir.path().join("junk.pem");
    std::fs::write(&junk, "not a certificate\n").unwrap();
    c.fetch.ca_certs = vec![junk];
    let msg = format!(
        "{:#}",
        crawl(&c, &AtomicBool::new(false), &mut |_| {}).unwrap_err()
    );
    assert!(
        msg.contains("junk.pem") && msg.contains("no certificate"),
        "{msg}"
    );
    assert!(web.log().is_empty());
    web.shutdown_blocking();
}
