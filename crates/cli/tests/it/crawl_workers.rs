//! `crawlrank crawl --frontier` workers as processes sharing one crawl of the local test web
//! through a `crawlrank frontier serve` process (loopback only; every wait bounded). One
//! worker is killed with SIGKILL mid-crawl: the URLs it had leased come back after their
//! lease, the other worker finishes the crawl, every page is fetched, each once apart from
//! the killed worker's requests in flight, and never two requests at once to one host. The
//! service itself is SIGKILLed mid-crawl and restarted on its state 2 s later: both workers
//! wait for it (`--frontier-retry`), finish, and every page is fetched.

use crate::common;

use common::serve::Serve;
use crawlrank_testweb::{max_in_flight_per_host, TestWeb, TestWebConfig};
use std::collections::HashMap;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A worker process, SIGKILLed when dropped (so a failing test leaves none behind).
struct Worker(Child);

impl Drop for Worker {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn worker(frontier: &str, web: &TestWeb, seeds: &Path, state: &Path, lease: &str) -> Worker {
    worker_with(frontier, web, seeds, state, lease, &[])
}

fn worker_with(
    frontier: &str,
    web: &TestWeb,
    seeds: &Path,
    state: &Path,
    lease: &str,
    extra: &[&str],
) -> Worker {
    let child = Command::new(env!("CARGO_BIN_EXE_crawlrank"))
        .args(["crawl", "--frontier", frontier, "--seeds"])
        .arg(seeds)
        .arg("--state")
        .arg(state)
        .args([
            "--proxy",
            &web.proxy_url(),
            "--delay",
            "0",
            "--concurrency",
            "2",
        ])
        .args(["--lease", lease, "--idle-exit", "20", "--timeout", "5"])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("cannot start a worker");
    Worker(child)
}

/// Waits (at most `within`) for the worker to end; returns its stdout, panicking with its
/// stderr if it failed.
fn finish(mut w: Worker, within: Duration) -> String {
    let deadline = Instant::now() + within;
    while w.0.try_wait().unwrap().is_none() {
        assert!(
            Instant::now() < deadline,
            "the worker did not end within {within:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let child = std::mem::replace(
        &mut w.0,
        Command::new("true").spawn().expect("cannot run true"),
    );
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "the worker failed: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

#[test]
fn a_worker_killed_mid_crawl_loses_nothing_and_pages_are_fetched_once() {
    let g = crawlrank_testkit::ring_with_chords(300, &[(2, 0), (3, 1), (6, 5)]).csr();
    let web = TestWeb::start_blocking(
        Arc::new(g.clone()),
        None,
        "127.0.0.1:0".parse().unwrap(),
        TestWebConfig {
            // Slow enough that the crawl lasts seconds and a worker has requests in flight.
            latency: Duration::from_millis(30),
            ..TestWebConfig::default()
        },
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let serve = Serve::start(
        &dir.path().join("frontier"),
        &["--policy", "fica", "--expected-pages", "300"],
    );
    let frontier = format!("http://{}", serve.addr);
    let seeds = dir.path().join("seeds.txt");
    std::fs::write(&seeds, web.seed_urls(&[0]).join("\n")).unwrap();
    let lease = 3;
    let start = |name: &str| {
        worker(
            &frontier,
            &web,
            &seeds,
            &dir.path().join(name),
            &lease.to_string(),
        )
    };
    let doomed = start("a");
    let survivor = start("b");
    // Kill the first once a third of the web was fetched.
    let deadline = Instant::now() + Duration::from_secs(60);
    while web.log().iter().filter(|e| e.node.is_some()).count() < 100 {
        assert!(
            Instant::now() < deadline,
            "100 pages not fetched within 60 s"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let killed_at = Instant::now();
    drop(doomed); // SIGKILL
    let out = finish(survivor, Duration::from_secs(90));
    assert!(out.contains("every URL of the crawl is done"), "{out}");

    let log = web.log();
    let mut fetches: HashMap<u32, usize> = HashMap::new();
    for e in &log {
        if let Some(v) = e.node {
            *fetches.entry(v).or_default() += 1;
        }
    }
    assert_eq!(fetches.len(), g.num_nodes(), "every page was fetched");
    let twice: Vec<u32> = fetches
        .iter()
        .filter(|(_, &n)| n > 1)
        .map(|(&v, _)| v)
        .collect();
    // Only the killed worker's requests in flight (concurrency 2) may be fetched again.
    assert!(twice.len() <= 2, "fetched more than once: {twice:?}");
    assert!(fetches.values().all(|&n| n <= 2));
    assert!(
        max_in_flight_per_host(&log).values().all(|&m| m <= 1),
        "one request at a time per host across the workers"
    );
    // A page fetched twice was in flight at the killed worker: served again only once its
    // lease had run out. The service counts whole seconds, so a lease of `lease` seconds
    // taken just before the kill ends at least `lease - 1` seconds after it.
    for &v in &twice {
        let again = log
            .iter()
            .filter(|e| e.node == Some(v))
            .map(|e| e.arrival)
            .max()
            .unwrap();
        assert!(
            again >= killed_at + Duration::from_secs(lease - 1),
            "page {v} was served again {:?} after the kill, before its lease of {lease} s ended",
            again.saturating_duration_since(killed_at)
        );
    }
    // (Usually none: the test web logs a request when it answers, and the killed worker's
    // requests in flight are rarely answered. Those URLs came back too: every page was
    // fetched, and the survivor ended only when no URL was left.)
    serve.kill9();
    web.shutdown_blocking();
}

/// The pages of the test web fetched so far, and how often each.
fn fetch_counts(web: &TestWeb) -> HashMap<u32, usize> {
    let mut fetches: HashMap<u32, usize> = HashMap::new();
    for e in web.log() {
        if let Some(v) = e.node {
            *fetches.entry(v).or_default() += 1;
        }
    }
    fetches
}

#[test]
fn workers_wait_for_a_killed_service_and_finish_the_crawl_when_it_is_back() {
    let g = crawlrank_testkit::ring_with_chords(300, &[(2, 0), (3, 1), (6, 5)]).csr();
    let web = TestWeb::start_blocking(
        Arc::new(g.clone()),
        None,
        "127.0.0.1:0".parse().unwrap(),
        TestWebConfig {
            latency: Duration::from_millis(30),
            ..TestWebConfig::default()
        },
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("frontier");
    let options = ["--policy", "fica", "--expected-pages", "300"];
    let serve = Serve::start(&state, &options);
    let addr = serve.addr.clone();
    let frontier = format!("http://{addr}");
    let seeds = dir.path().join("seeds.txt");
    std::fs::write(&seeds, web.seed_urls(&[0]).join("\n")).unwrap();
    let start = |name: &str| {
        worker_with(
            &frontier,
            &web,
            &seeds,
            &dir.path().join(name),
            "60",
            &["--frontier-retry", "30"],
        )
    };
    let a = start("a");
    let b = start("b");
    let deadline = Instant::now() + Duration::from_secs(60);
    while fetch_counts(&web).len() < 60 {
        assert!(
            Instant::now() < deadline,
            "60 pages not fetched within 60 s"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    serve.kill9();
    std::thread::sleep(Duration::from_secs(2));
    // The same address and state: the workers find it again.
    let serve = Serve::start_at(&state, &addr, &[]);
    let (out_a, out_b) = (
        finish(a, Duration::from_secs(120)),
        finish(b, Duration::from_secs(120)),
    );
    for out in [&out_a, &out_b] {
        assert!(out.contains("every URL of the crawl is done"), "{out}");
    }
    let fetches = fetch_counts(&web);
    assert_eq!(fetches.len(), g.num_nodes(), "every page was fetched");
    // The leases (60 s) outlast the test: a page fetched twice would be one served again
    // by a service that forgot its lease, or one whose report was lost.
    let twice: Vec<u32> = fetches
        .iter()
        .filter(|(_, &n)| n > 1)
        .map(|(&v, _)| v)
        .collect();
    assert!(twice.is_empty(), "fetched more than once: {twice:?}");
    assert!(
        max_in_flight_per_host(&web.log()).values().all(|&m| m <= 1),
        "one request at a time per host across the workers"
    );
    serve.kill9();
    web.shutdown_blocking();
}
