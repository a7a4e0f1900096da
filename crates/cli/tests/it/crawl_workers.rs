//! `crawlrank crawl --frontier` workers as processes sharing one crawl of the local test web
//! through a `crawlrank frontier serve` process (loopback only; every wait bounded). One
//! worker is killed with SIGKILL mid-crawl: the URLs it had leased come back after their
//! lease, the other worker finishes the crawl, every page is fetched, each once apart from
//! the killed worker's requests in flight, and never two requests at once to one host. The
//! service itself is SIGKILLed mid-crawl and restarted on its state 2 s later: both workers
//! wait for it (`--frontier-retry`), finish, and every page is fetched. And the service and a
//! worker are SIGKILLed in turn at moments drawn at random: nothing is lost.

use crate::common;

use common::serve::Serve;
use common::workers::{fetch_counts, fetched_twice, ring_web, seeds_file, wait_fetched, Worker};
use crawlrank_graph::Csr;
use crawlrank_testweb::{max_in_flight_per_host, TestWeb, TestWebConfig};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The crawl the workers of a test share: the frontier service's URL, the test web, the
/// seeds file and the scratch folder their states go in.
struct Crawl<'a> {
    frontier: String,
    web: &'a TestWeb,
    seeds: PathBuf,
    dir: &'a Path,
}

impl<'a> Crawl<'a> {
    /// The crawl of `web` through the service at `addr`, its seeds file written in `dir`.
    fn new(dir: &'a Path, web: &'a TestWeb, addr: &str) -> Self {
        Crawl {
            frontier: format!("http://{addr}"),
            web,
            seeds: seeds_file(dir, web),
            dir,
        }
    }

    /// Starts worker `name` (its state in `dir/name`) whose lease is `lease` seconds, with
    /// `extra` options.
    fn worker(&self, name: &str, lease: &str, extra: &[&str]) -> Worker {
        let mut options = vec!["--lease", lease, "--idle-exit", "20"];
        options.extend_from_slice(extra);
        let state = self.dir.join(name);
        Worker::start(&self.frontier, self.web, &self.seeds, &state, &options)
    }
}

/// Waits (at most `within`) for the worker to end; returns its stdout, panicking with its
/// stderr if it failed.
fn finish(w: Worker, within: Duration) -> String {
    let (ok, stdout, stderr) = w.finish(within);
    assert!(ok, "the worker failed: {stdout}\n{stderr}");
    stdout
}

/// A ring of 300 pages with chords, each page served after 30 ms: slow enough that the crawl
/// lasts seconds and a worker has requests in flight.
fn slow_ring() -> (Csr, TestWeb) {
    ring_web(
        300,
        &[(2, 0), (3, 1), (6, 5)],
        TestWebConfig {
            latency: Duration::from_millis(30),
            ..TestWebConfig::default()
        },
    )
}

#[test]
fn a_worker_killed_mid_crawl_loses_nothing_and_pages_are_fetched_once() {
    let (g, web) = slow_ring();
    let dir = tempfile::tempdir().unwrap();
    let serve = Serve::start(
        &dir.path().join("frontier"),
        &["--policy", "fica", "--expected-pages", "300"],
    );
    let crawl = Crawl::new(dir.path(), &web, &serve.addr);
    let lease = 3;
    let start = |name: &str| crawl.worker(name, &lease.to_string(), &[]);
    let doomed = start("a");
    let survivor = start("b");
    // Kill the first once a third of the web was fetched.
    wait_fetched(&web, 100, Duration::from_secs(60));
    let killed_at = Instant::now();
    drop(doomed); // SIGKILL
    let out = finish(survivor, Duration::from_secs(90));
    assert!(out.contains("every URL of the crawl is done"), "{out}");

    let log = web.log();
    let fetches = fetch_counts(&log);
    assert_eq!(fetches.len(), g.num_nodes(), "every page was fetched");
    let twice = fetched_twice(&fetches);
    // Only the killed worker's requests in flight (concurrency 2) may be fetched again.
    assert!(twice.len() <= 2, "fetched more than once: {twice:?}");
    assert!(fetches.values().all(|&n| n <= 2));
    assert!(
        max_in_flight_per_host(&log).values().all(|&m| m <= 1),
        "one request at a time per host across the workers"
    );
    // A page fetched twice was in flight at the killed worker: served again only once its
    // lease had run out. The service counts whole seconds, so a lease of `lease` seconds ends
    // at least `lease - 1` seconds after it was taken; the worker leases ahead (up to 4 URLs a
    // fetch slot) and reads a seed host's sitemap first, so the lease of a page it had fetched
    // may have been taken up to about a second before the kill: served again at least
    // `lease - 2` seconds after the kill (a service that forgot the lease serves it at once).
    for &v in &twice {
        let again = log
            .iter()
            .filter(|e| e.node == Some(v))
            .map(|e| e.arrival)
            .max()
            .unwrap();
        assert!(
            again >= killed_at + Duration::from_secs(lease - 2),
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

#[test]
fn workers_wait_for_a_killed_service_and_finish_the_crawl_when_it_is_back() {
    let (g, web) = slow_ring();
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("frontier");
    let options = ["--policy", "fica", "--expected-pages", "300"];
    let serve = Serve::start(&state, &options);
    let addr = serve.addr.clone();
    let crawl = Crawl::new(dir.path(), &web, &addr);
    let start = |name: &str| crawl.worker(name, "60", &["--frontier-retry", "30"]);
    let a = start("a");
    let b = start("b");
    wait_fetched(&web, 60, Duration::from_secs(60));
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
    let fetches = fetch_counts(&web.log());
    assert_eq!(fetches.len(), g.num_nodes(), "every page was fetched");
    // The leases (60 s) outlast the test: a page fetched twice would be one served again
    // by a service that forgot its lease, or one whose report was lost.
    let twice = fetched_twice(&fetches);
    assert!(twice.is_empty(), "fetched more than once: {twice:?}");
    assert!(
        max_in_flight_per_host(&web.log()).values().all(|&m| m <= 1),
        "one request at a time per host across the workers"
    );
    serve.kill9();
    web.shutdown_blocking();
}

/// The service and a worker SIGKILLed again and again at moments drawn at random (from a
/// fixed seed: 150–750 ms after the previous kill), each restarted at once on its state,
/// while another worker crawls on: the crawl ends with every page fetched, never two
/// requests at once to a host, and a page fetched twice only if a killed worker held it
/// leased (at most its leases, 8 at concurrency 2, per kill). A report or lease the service
/// answered is never lost to its kill: the pages are all done in the restarted service.
#[test]
fn kills_of_the_service_and_a_worker_at_random_moments_lose_nothing() {
    let (g, web) = slow_ring();
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("frontier");
    let mut serve = Serve::start(&state, &["--policy", "fica", "--expected-pages", "300"]);
    let addr = serve.addr.clone();
    let crawl = Crawl::new(dir.path(), &web, &addr);
    let (lease, extra) = ("4", ["--frontier-retry", "30"]);
    let steady = crawl.worker("steady", lease, &extra);
    // The killed worker's runs share one state directory: each mends the WARC files the
    // one before left.
    let mut doomed = crawl.worker("doomed", lease, &extra);
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut draw = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let (mut service_kills, mut worker_kills) = (0, 0);
    for round in 1..=8 {
        std::thread::sleep(Duration::from_millis(150 + draw() % 600));
        if fetch_counts(&web.log()).len() >= g.num_nodes() {
            break;
        }
        if round % 2 == 1 {
            serve.kill9();
            serve = Serve::start_at(&state, &addr, &[]);
            service_kills += 1;
        } else {
            drop(doomed); // SIGKILL
            doomed = crawl.worker("doomed", lease, &extra);
            worker_kills += 1;
        }
    }
    assert!(
        service_kills >= 2 && worker_kills >= 2,
        "the crawl ended before the kills: {service_kills} of the service, {worker_kills} of a worker"
    );
    for w in [steady, doomed] {
        let out = finish(w, Duration::from_secs(120));
        assert!(out.contains("every URL of the crawl is done"), "{out}");
    }
    let log = web.log();
    let fetches = fetch_counts(&log);
    assert_eq!(fetches.len(), g.num_nodes(), "every page was fetched");
    let twice = fetched_twice(&fetches);
    assert!(
        twice.len() <= 8 * worker_kills,
        "fetched more than once: {twice:?} after {worker_kills} kills of a worker"
    );
    assert!(
        max_in_flight_per_host(&log).values().all(|&m| m <= 1),
        "one request at a time per host across the workers and the kills"
    );
    // Every page reported done has its response in a WARC file, and every file holds whole
    // records only: those a kill cut were mended by the next run.
    let mut archived = std::collections::HashSet::new();
    for worker in ["steady", "doomed"] {
        let runs = std::fs::read_dir(dir.path().join(worker).join("warc")).unwrap();
        for run in runs {
            let run = run.unwrap().path();
            let files = crawlrank_fetch::warc::warc_files(&run).unwrap();
            // (A run killed before its first file has nothing to mend.)
            assert!(
                files.is_empty() || run.join("closed").exists(),
                "{} not closed",
                run.display()
            );
            for file in files {
                let (uris, whole) = crawlrank_fetch::warc::responses(&file).unwrap();
                assert!(whole, "{} ends with a part of a record", file.display());
                archived.extend(uris.iter().filter_map(|u| web.node_of(u)));
            }
        }
    }
    assert_eq!(
        archived.len(),
        g.num_nodes(),
        "a page done without its record"
    );
    serve.kill9();
    web.shutdown_blocking();
}

/// `s` as a regex that matches it literally.
fn literal(s: &str) -> String {
    s.chars()
        .flat_map(|c| {
            let special = "\\.+*?()|[]{}^$".contains(c);
            special.then_some('\\').into_iter().chain([c])
        })
        .collect()
}

#[test]
fn a_worker_refuses_the_options_of_the_service_and_takes_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    // Refused before the frontier is asked anything: nothing listens there.
    let nowhere = format!("http://127.0.0.1:{}", crawlrank_testkit::free_port());
    let refused_state = dir.path().join("refused");
    let refused = |options: &[&str], needles: &[&str]| {
        let mut args = vec!["crawl", "--frontier", &nowhere, "--state"];
        args.push(refused_state.to_str().unwrap());
        args.extend_from_slice(options);
        common::fails(&common::crawlrank(&cache, &args), needles);
        assert!(!refused_state.exists(), "a refused worker wrote its state");
    };
    refused(
        &["--policy", "bfs"],
        &[
            "--policy does nothing in a crawl worker (--frontier)",
            "`crawlrank frontier serve --policy`",
        ],
    );
    // An option given at its default value is given all the same: the worker would ignore
    // it just as well.
    refused(
        &["--rng-seed", "0"],
        &[
            "--rng-seed does nothing",
            "`crawlrank frontier serve --rng-seed`",
        ],
    );
    // A cap the service applies to out-links: the message names the option of
    // `frontier serve` that sets it, so that the user can move it there.
    refused(
        &["--max-pages-per-host", "10"],
        &[
            "--max-pages-per-host does nothing in a crawl worker (--frontier)",
            "`crawlrank frontier serve --max-pages-per-host`",
        ],
    );
    refused(
        &[
            "--seen-cache",
            "1000",
            "--frontier-hot",
            "0",
            "--expected-pages",
            "50",
            "--dashboard",
            "127.0.0.1:0",
            "--progress-log",
            "progress.tsv",
            "--impact",
            "impacts.tsv",
            "--max-hops",
            "3",
        ],
        &[
            "these options do nothing in a crawl worker (--frontier):",
            "\n  --seen-cache: ",
            "\n  --frontier-hot: ",
            "`crawlrank frontier serve --frontier-hot`",
            "\n  --expected-pages: ",
            "`crawlrank frontier serve --expected-pages`",
            "\n  --dashboard: ",
            "`crawlrank dashboard --frontier URL`",
            "\n  --progress-log: ",
            "\n  --impact: ",
            "\n  --max-hops: ",
            "`crawlrank frontier serve --max-hops`",
        ],
    );

    // The options a worker takes, some at their defaults, the refused ones left at theirs:
    // the worker crawls, and does what they say (no WARC; no link to the excluded page, so
    // no page behind it on the ring).
    let (_, web) = ring_web(30, &[], TestWebConfig::default());
    let serve = Serve::start(&dir.path().join("frontier"), &["--policy", "bfs"]);
    let crawl = Crawl::new(dir.path(), &web, &serve.addr);
    let excluded = literal(web.url(15));
    let worker = crawl.worker(
        "w",
        "60",
        &[
            "--max-retries",
            "2",
            "--archive",
            "all",
            "--scope",
            "any",
            "--max-links-per-page",
            "6000",
            "--dns-timeout",
            "5",
            "--no-sitemaps",
            "--no-warc",
            "--exclude",
            &excluded,
        ],
    );
    let out = finish(worker, Duration::from_secs(60));
    assert!(out.contains("every URL of the crawl is done"), "{out}");
    let mut fetched: Vec<u32> = fetch_counts(&web.log()).into_keys().collect();
    fetched.sort_unstable();
    assert_eq!(fetched, (0..15).collect::<Vec<u32>>(), "{out}");
    assert!(
        !dir.path().join("w").join("warc").exists(),
        "--no-warc wrote WARC"
    );
    serve.kill9();
    web.shutdown_blocking();
}
